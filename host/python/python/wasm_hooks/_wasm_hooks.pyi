"""The native module behind `wasm_hooks` (types only)."""

from os import PathLike
from typing import Any, Awaitable, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

_Path = Union[str, PathLike[str]]

VERSION: str

def protocols() -> List[str]: ...

class EventRecord:
    """An event's record, given to a registered function: read like a dict
    (a `collections.abc.Mapping`), never changed; `to_dict()` copies it."""
    def __getitem__(self, key: str) -> Any: ...
    def get(self, key: str, default: Any = None) -> Any: ...
    def __contains__(self, key: object) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def keys(self) -> List[str]: ...
    def values(self) -> List[Any]: ...
    def items(self) -> List[Tuple[str, Any]]: ...
    def to_dict(self) -> Dict[str, Any]: ...

class Outcome:
    decision: str
    reason: Optional[str]
    denied: bool
    approval: Optional[Dict[str, Any]]
    decided_by: Optional[str]
    updated_input: Any
    rewrite_approved: bool
    updated_output: Any
    contexts: List[Dict[str, Any]]
    context_text: List[str]
    user_messages: List[Dict[str, Any]]
    system_messages: List[Dict[str, Any]]
    stop: Optional[Dict[str, Any]]
    suppress_output: bool
    requests: Dict[str, Any]
    trace: List[Dict[str, Any]]
    failures: List[Dict[str, Any]]
    raw: Dict[str, Any]

class Resolved:
    outcome: Outcome
    denied: bool
    approval: Optional[Dict[str, Any]]
    injections: List[Dict[str, Any]]

class Registration:
    name: str
    def unregister(self) -> bool: ...
    def __call__(self) -> bool: ...

class Engine:
    def __init__(
        self,
        files: Optional[Sequence[_Path]] = None,
        *,
        project_dir: Optional[_Path] = None,
        claude_settings: bool = False,
        audit_log: Optional[_Path] = None,
        audit_key: Optional[_Path] = None,
        user_config_dir: Optional[_Path] = None,
        managed_dir: Optional[_Path] = None,
        cache_dir: Optional[_Path] = None,
    ) -> None: ...
    def decide(self, event: Dict[str, Any], agent: Optional[str] = None) -> Outcome: ...
    def decide_async(self, event: Dict[str, Any], agent: Optional[str] = None) -> Awaitable[Outcome]: ...
    def answer(self, event: Dict[str, Any], agent: str) -> Dict[str, Any]: ...
    def answer_async(self, event: Dict[str, Any], agent: str) -> Awaitable[Dict[str, Any]]: ...
    def register(
        self,
        event: str,
        function: Callable[[EventRecord], Any],
        *,
        matcher: Optional[str] = None,
        priority: int = 0,
        name: Optional[str] = None,
        on_failure: str = "block",
    ) -> Registration: ...
    @property
    def warnings(self) -> List[str]: ...
    def hooks(self) -> List[Dict[str, Any]]: ...

class Session:
    def __init__(
        self,
        engine: Engine,
        session_id: str,
        *,
        approve: Optional[Callable[[Dict[str, Any]], Any]] = None,
        display: Optional[Callable[[str, str, Dict[str, Any]], Any]] = None,
        max_injection_bytes: int = 10240,
        turn_budget_tokens: int = 1000,
        approval_timeout: float = 60.0,
    ) -> None: ...
    @property
    def id(self) -> str: ...
    def dispatch(self, event: Dict[str, Any], agent: Optional[str] = None) -> Resolved: ...
    def dispatch_async(self, event: Dict[str, Any], agent: Optional[str] = None) -> Awaitable[Resolved]: ...
    def begin_turn(self) -> None: ...
    def flush_context(self) -> List[Dict[str, Any]]: ...
    def take_stop(self) -> Optional[Dict[str, Any]]: ...

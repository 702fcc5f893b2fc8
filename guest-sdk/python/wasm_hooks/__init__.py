"""wasm-hooks for Python: a hook for AI coding agents, sandboxed.

Write a class named ``Handler`` that derives from :class:`Hook` and
overrides the events it cares about; build it with ``wasm-hooks build``
(componentize-py). Every other event gets :meth:`Outcome.proceed`::

    from wasm_hooks import Hook, Outcome

    class Handler(Hook):
        def pre_tool_use(self, event):
            if "rm -rf" in event.tool_input.get("command", ""):
                return Outcome.deny("no rm -rf here")
            return Outcome.proceed()

An exception raised by a method is a hook failure: the host applies the
hook's ``on_failure`` policy and shows the message. The same class runs
natively under pytest with :mod:`wasm_hooks.testing`.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable, Optional, Sequence, Type, TypeVar

from . import _host

__all__ = [
    "Approval",
    "Event",
    "Hook",
    "HookError",
    "Outcome",
    "config",
    "kv",
    "log",
]

T = TypeVar("T")


class HookError(Exception):
    """A failure with a message for the person: the host applies the hook's
    ``on_failure`` policy. Any other exception is reported the same way."""


class Event:
    """One event from the agent: the common fields, and the whole record as
    the agent sent it (parsed only when asked for)."""

    def __init__(
        self,
        name: str,
        payload: str,
        session_id: str = "",
        timestamp: str = "",
        cwd: Optional[str] = None,
        tool_name: Optional[str] = None,
    ) -> None:
        self.name = name
        self.payload = payload
        self.session_id = session_id
        self.timestamp = timestamp
        self.cwd = cwd
        self.tool_name = tool_name
        self._json: Optional[dict] = None

    @classmethod
    def from_record(cls, record: dict) -> "Event":
        """An event from a record as an agent sends it (Claude Code's field
        names: ``hook_event_name``, ``tool_name``, ``tool_input``…), for tests."""
        return cls(
            name=record.get("hook_event_name", ""),
            payload=json.dumps(record),
            session_id=record.get("session_id", ""),
            timestamp=record.get("timestamp", ""),
            cwd=record.get("cwd"),
            tool_name=record.get("tool_name"),
        )

    @property
    def json(self) -> dict:
        """The whole record, parsed once."""
        if self._json is None:
            parsed = json.loads(self.payload)
            if not isinstance(parsed, dict):
                raise HookError("the event's payload is not a JSON object")
            self._json = parsed
        return self._json

    def field(self, name: str, default: Any = None) -> Any:
        """A top-level field of the record, or ``default``."""
        return self.json.get(name, default)

    @property
    def project_dir(self) -> Optional[str]:
        """The agent's project directory (``project_dir``, which `wasm-hooks
        hook` and `serve` add), else the working directory."""
        return self.field("project_dir") or self.cwd

    @property
    def tool_input(self) -> dict:
        """The tool's input (``{}`` when the event has none)."""
        value = self.field("tool_input")
        return value if isinstance(value, dict) else {}

    @property
    def tool_response(self) -> Any:
        """The tool's output, after it ran (``None`` before)."""
        return self.field("tool_response")

    def tool_input_as(self, cls: Type[T]) -> T:
        """The tool's input as a dataclass ``cls``; fields it does not name
        are left out, a missing field without a default is a
        :class:`HookError`."""
        names = {f.name for f in dataclasses.fields(cls)}
        known = {k: v for k, v in self.tool_input.items() if k in names}
        try:
            return cls(**known)
        except TypeError as e:
            raise HookError(f"the tool input is not a {cls.__name__}: {e}") from None


@dataclasses.dataclass
class Approval:
    """A question for the person before the operation goes on."""

    prompt: str
    options: Sequence[str] = ()
    timeout_ms: Optional[int] = None
    default_allow: bool = False


@dataclasses.dataclass
class Outcome:
    """What the hook wants done. Make one with a class method, then add to
    it with the ``with_`` methods (each returns the outcome)."""

    decision: str = "proceed"
    reason: Optional[str] = None
    approval: Optional[Approval] = None
    rewrite: Any = None
    context: Optional[str] = None
    context_role: str = "system"
    user_message: Optional[str] = None
    user_severity: str = "info"
    system_message: Optional[str] = None
    stop_reason: Optional[str] = None
    suppress_output: bool = False
    metadata: Any = None

    @classmethod
    def proceed(cls) -> "Outcome":
        """No opinion: the next hook, or the agent's default, decides."""
        return cls()

    @classmethod
    def allow(cls, reason: Optional[str] = None) -> "Outcome":
        """Allow, with an optional reason."""
        return cls("allow", reason=reason)

    @classmethod
    def deny(cls, reason: str) -> "Outcome":
        """Block, with a reason the agent (and the model) will see."""
        return cls("deny", reason=reason)

    @classmethod
    def ask(
        cls,
        prompt: str,
        options: Sequence[str] = (),
        timeout_ms: Optional[int] = None,
        default_allow: bool = False,
    ) -> "Outcome":
        """Ask the person before going on."""
        return cls("ask", approval=Approval(prompt, tuple(options), timeout_ms, default_allow))

    @classmethod
    def modify(cls, tool_input: dict) -> "Outcome":
        """Go on with this tool input instead (before the tool runs)."""
        if not isinstance(tool_input, dict):
            raise HookError("modify takes the new tool input as a dict")
        return cls("modify", rewrite=tool_input)

    @classmethod
    def modify_output(cls, output: Any) -> "Outcome":
        """Replace the tool's output (after it ran)."""
        return cls("modify_output", rewrite=output)

    @classmethod
    def stop(cls, reason: str) -> "Outcome":
        """No opinion on the operation, but end the agent's turn."""
        return cls(stop_reason=reason)

    def with_context(self, text: str, role: str = "system") -> "Outcome":
        """Add ``text`` to the agent's context (role: system, user, assistant)."""
        if role not in ("system", "user", "assistant"):
            raise HookError(f"unknown context role {role!r}")
        self.context, self.context_role = text, role
        return self

    def with_user_message(self, text: str, severity: str = "info") -> "Outcome":
        """Show ``text`` to the person, never to the model (info, warning, error)."""
        if severity not in ("info", "warning", "error"):
            raise HookError(f"unknown severity {severity!r}")
        self.user_message, self.user_severity = text, severity
        return self

    def with_system_message(self, text: str) -> "Outcome":
        """A warning shown to the person."""
        self.system_message = text
        return self

    def with_stop(self, reason: str) -> "Outcome":
        """End the agent's turn, with this reason."""
        self.stop_reason = reason
        return self

    def with_suppressed_output(self) -> "Outcome":
        """Hide this hook's own output from the transcript."""
        self.suppress_output = True
        return self

    def with_metadata(self, metadata: Any) -> "Outcome":
        """Free JSON kept in the audit record."""
        self.metadata = metadata
        return self


# The agent's event names and the method that answers each.
_METHODS = {
    "PreToolUse": "pre_tool_use",
    # A shell command run another way (a skill's `!cmd`) is a Bash call
    # to a guard.
    "PreSkillShellCommand": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "PostToolUseFailure": "post_tool_use_failure",
    "UserPromptSubmit": "user_prompt_submit",
    "PermissionRequest": "permission_request",
    "Notification": "notification",
    "Stop": "stop",
    "SubagentStop": "subagent_stop",
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
}


class Hook:
    """A hook plugin: override the methods of the events you care about.
    Each takes an :class:`Event` and returns an :class:`Outcome`; each
    defaults to :meth:`other`, which proceeds. The host makes a fresh
    instance per event: nothing survives from one event to the next but
    :data:`kv`."""

    def dispatch(self, event: Event) -> Outcome:
        """The method for ``event``'s name, or :meth:`other` (what the host
        calls, and what a test calls)."""
        method: Callable[[Event], Outcome] = getattr(self, _METHODS.get(event.name, "other"))
        outcome = method(event)
        if not isinstance(outcome, Outcome):
            raise HookError(
                f"{type(self).__name__}.{method.__name__} returned {type(outcome).__name__}, not an Outcome"
            )
        return outcome

    def other(self, event: Event) -> Outcome:
        """Every event without a method of its own: proceed."""
        return Outcome.proceed()

    def pre_tool_use(self, event: Event) -> Outcome:
        """Before a tool runs: can deny, ask or rewrite its input."""
        return self.other(event)

    def post_tool_use(self, event: Event) -> Outcome:
        """After a tool succeeded: can rewrite its output or add context."""
        return self.other(event)

    def post_tool_use_failure(self, event: Event) -> Outcome:
        """After a tool failed."""
        return self.other(event)

    def user_prompt_submit(self, event: Event) -> Outcome:
        """The person submitted a prompt."""
        return self.other(event)

    def permission_request(self, event: Event) -> Outcome:
        """A permission prompt is about to be shown."""
        return self.other(event)

    def notification(self, event: Event) -> Outcome:
        """The agent notifies the person."""
        return self.other(event)

    def stop(self, event: Event) -> Outcome:
        """The agent finished answering; a deny makes it go on, with the reason."""
        return self.other(event)

    def subagent_stop(self, event: Event) -> Outcome:
        """A subagent finished."""
        return self.other(event)

    def session_start(self, event: Event) -> Outcome:
        """A session begins or resumes."""
        return self.other(event)

    def session_end(self, event: Event) -> Outcome:
        """A session ends."""
        return self.other(event)

    def handle(self, event: Any) -> Any:
        """The WIT export componentize-py calls: converts, dispatches, and
        turns an exception into the hook failure it stands for."""
        if _wit is None:
            raise HookError("handle() is the component's entry point; in a test, call dispatch()")
        return _wit.handle(self, event)


def config() -> Any:
    """The hook's ``config`` from the hook file, parsed (``{}`` when none)."""
    return json.loads(_host.current().config() or "{}")


class _Kv:
    """The plugin's key-value store: per session, bounded by the host."""

    def get(self, key: str) -> Optional[str]:
        """The value stored under ``key``, if any."""
        return _host.current().kv_get(key)

    def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``; :class:`HookError` when refused
        (over the host's budget)."""
        _host.current().kv_set(key, value)


kv = _Kv()


class _Log:
    """Lines for the host's log (capped and escaped by the host)."""

    def trace(self, message: str) -> None:
        _host.current().log("trace", message)

    def debug(self, message: str) -> None:
        _host.current().log("debug", message)

    def info(self, message: str) -> None:
        _host.current().log("info", message)

    def warn(self, message: str) -> None:
        _host.current().log("warn", message)

    def error(self, message: str) -> None:
        _host.current().log("error", message)


log = _Log()


# Inside a component the WIT bindings exist, and are imported here while it
# is built (a component imports nothing later); natively (tests) there are
# none, and a mock host stands in.
try:
    import wit_world  # noqa: F401
except ImportError:
    _wit = None
else:
    from . import _wit

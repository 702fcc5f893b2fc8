"""wasm-hooks for Amplifier (`amplifier-core` 2.x).

Two ways in:

- `mount(coordinator, config)`: an Amplifier hook module (entry point
  `hooks-wasm` of the group `amplifier.modules`). It loads a wasm-hooks
  engine and registers one handler per event on the session's own
  registry, so the session's tool calls, prompts and session events are
  decided by wasm-hooks guards (wasm plugins, inline rules, commands…).
- `HookRegistry`: Amplifier's registry surface (`register(event, handler,
  priority=…, name=…)`, `emit(event, data)` → `HookResult`) backed by a
  wasm-hooks engine: Amplifier handlers, written as for Amplifier, are
  folded with the hook files' hooks by wasm-hooks' rules (a deny
  short-circuits, rewrites chain, a handler that raises denies).

Amplifier's event names are aliases of the catalogue's (`tool:pre` is
PreToolUse); its tool names are mapped to the catalogue's (`bash` is
`Bash`), so one hook file guards Claude Code and Amplifier alike.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional

from . import Engine, Outcome

__amplifier_module_type__ = "hook"

#: Amplifier's events and the catalogue's.
EVENTS: Dict[str, str] = {
    "session:start": "SessionStart",
    "session:resume": "SessionStart",
    "session:end": "SessionEnd",
    "prompt:submit": "UserPromptSubmit",
    "prompt:complete": "Stop",
    "orchestrator:complete": "Stop",
    "tool:pre": "PreToolUse",
    "tool:post": "PostToolUse",
    "tool:error": "PostToolUseFailure",
    "context:pre_compact": "PreCompact",
    "context:post_compact": "PostCompact",
    "approval:required": "PermissionRequest",
    "approval:granted": "PermissionGranted",
    "approval:denied": "PermissionDenied",
    "user:notification": "Notification",
}

#: Amplifier's tools (its standard modules) and the catalogue's names.
TOOLS: Dict[str, str] = {
    "bash": "Bash",
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "glob": "Glob",
    "grep": "Grep",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
    "task": "Task",
}

#: The events `mount` guards unless its config names others.
MOUNTED_EVENTS = ("session:start", "prompt:submit", "tool:pre", "tool:post", "session:end")

#: The events whose operation a failure must not let through.
_GUARDS = {"tool:pre", "prompt:submit", "approval:required"}

#: What `mount`'s config may say of the engine (as `Engine` takes them).
_ENGINE_OPTIONS = ("files", "project_dir", "audit_log", "audit_key", "cache_dir")

_AMPLIFIER = "amplifier_event"
_ORIGINAL_TOOL = "amplifier_tool_name"


@dataclass
class _HookResult:
    """Amplifier's `HookResult`, for when amplifier-core is not installed."""

    action: str = "continue"
    data: Optional[Dict[str, Any]] = None
    reason: Optional[str] = None
    context_injection: Optional[str] = None
    context_injection_role: str = "system"
    ephemeral: bool = False
    approval_prompt: Optional[str] = None
    approval_options: Optional[List[str]] = None
    approval_timeout: float = 300.0
    approval_default: str = "deny"
    suppress_output: bool = False
    user_message: Optional[str] = None
    user_message_level: str = "info"
    user_message_source: Optional[str] = None
    append_to_last_tool_result: bool = False
    context_injections: List[Dict[str, Any]] = field(default_factory=list)

    def model_dump(self, exclude_none: bool = False) -> Dict[str, Any]:
        fields = asdict(self)
        return {k: v for k, v in fields.items() if not (exclude_none and v is None)}


try:  # Amplifier's own class when it is there, so its kernel takes ours.
    from amplifier_core.models import HookResult
except ImportError:  # pragma: no cover - exercised without amplifier-core
    HookResult = _HookResult  # type: ignore[misc,assignment]


def canonical_event(event: str) -> str:
    """The catalogue's name for Amplifier's `event` (itself when it has
    none: the engine knows many aliases and says which it does not)."""
    return EVENTS.get(event, event)


def to_record(event: str, data: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """Amplifier's event data as the canonical record hooks read."""
    record: Dict[str, Any] = dict(data or {})
    record["hook_event_name"] = canonical_event(event)
    record[_AMPLIFIER] = event
    tool = record.get("tool_name")
    if isinstance(tool, str) and tool in TOOLS:
        record[_ORIGINAL_TOOL] = tool
        record["tool_name"] = TOOLS[tool]
    if event == "session:resume":
        record.setdefault("source", "resume")
    if event == "tool:post" and "result" in record:
        record.setdefault("tool_response", record["result"])
    if event == "tool:error" and isinstance(record.get("error"), dict):
        error = record["error"]
        record["error"] = f"{error.get('type', 'Error')}: {error.get('msg', '')}"
    return record


def to_data(record: Mapping[str, Any]) -> Dict[str, Any]:
    """The canonical record as Amplifier's handlers know it."""
    data = {k: v for k, v in record.items() if k not in ("hook_event_name", _AMPLIFIER)}
    original = data.pop(_ORIGINAL_TOOL, None)
    if original is not None:
        data["tool_name"] = original
    return data


def hook_result(event: str, data: Optional[Dict[str, Any]], outcome: Outcome) -> Any:
    """The outcome as Amplifier's `HookResult`, by Amplifier's precedence:
    deny, then ask_user, then inject_context, then modify."""
    data = dict(data or {})
    fields: Dict[str, Any] = {}
    if outcome.denied:
        fields.update(action="deny", reason=outcome.reason)
    elif outcome.approval is not None:
        approval = outcome.approval
        fields.update(
            action="ask_user",
            reason=approval["prompt"],
            approval_prompt=approval["prompt"],
            approval_options=approval["options"] or None,
            approval_default="allow" if approval["default_allow"] else "deny",
        )
        if approval["timeout_ms"] is not None:
            fields["approval_timeout"] = approval["timeout_ms"] / 1000
    elif outcome.contexts:
        fields.update(
            action="inject_context",
            context_injection="\n\n".join(outcome.context_text),
            context_injection_role=outcome.contexts[0]["value"]["role"],
        )
    elif outcome.updated_input is not None and event == "tool:pre":
        fields.update(action="modify", data={**data, "tool_input": outcome.updated_input})
    elif outcome.updated_output is not None and event == "tool:post":
        fields.update(action="modify", data={**data, "result": outcome.updated_output})
    else:
        fields.update(action="continue", data=data)
    if outcome.user_messages:
        message = outcome.user_messages[0]
        fields.update(
            user_message=message["value"]["text"],
            user_message_level=message["value"]["severity"],
            user_message_source=message["hook"],
        )
    elif outcome.system_messages:
        message = outcome.system_messages[0]
        fields.update(
            user_message=message["value"], user_message_level="warning", user_message_source=message["hook"]
        )
    if outcome.suppress_output:
        fields["suppress_output"] = True
    return HookResult(**fields)


def _failure(event: str, error: BaseException) -> Any:
    """What a failure of wasm-hooks itself answers: a deny where the
    operation is guarded, else a warning for the person."""
    message = f"wasm-hooks: {type(error).__name__}: {error}"
    if event in _GUARDS:
        return HookResult(action="deny", reason=message)
    return HookResult(action="continue", user_message=message, user_message_level="warning")


def _answer(event: str, data: Dict[str, Any], result: Any) -> Optional[Dict[str, Any]]:
    """An Amplifier handler's result as a wasm-hooks answer."""
    if result is None:
        return None
    if hasattr(result, "model_dump"):
        result = result.model_dump(exclude_none=True)
    if not isinstance(result, dict):
        raise TypeError(f"a hook handler returned {type(result).__name__}, not a HookResult")
    answer = dict(result)
    if answer.get("action") == "modify" and isinstance(answer.get("data"), dict):
        replaced = answer.pop("data")
        if event == "tool:pre":
            answer["modified_args"] = replaced.get("tool_input", data.get("tool_input"))
        elif event == "tool:post":
            answer["data"] = replaced.get("result", data.get("result"))
    return answer


class HookRegistry:
    """Amplifier's hook registry, backed by a wasm-hooks engine: the
    handlers registered here and the engine's hook files are one set of
    hooks, folded by wasm-hooks' rules."""

    SESSION_START = "session:start"
    SESSION_END = "session:end"
    PROMPT_SUBMIT = "prompt:submit"
    TOOL_PRE = "tool:pre"
    TOOL_POST = "tool:post"
    CONTEXT_PRE_COMPACT = "context:pre_compact"
    ORCHESTRATOR_COMPLETE = "orchestrator:complete"
    USER_NOTIFICATION = "user:notification"

    def __init__(self, engine: Optional[Engine] = None, **engine_options: Any) -> None:
        self.engine = engine if engine is not None else Engine(**engine_options)
        self._registered: Dict[str, List[Any]] = {}
        self._events: Dict[str, str] = {}
        self._defaults: Dict[str, Any] = {}

    def register(
        self, event: str, handler: Callable[..., Any], priority: int = 0, name: Optional[str] = None
    ) -> Callable[[], None]:
        """Run `handler(event, data)` (sync or `async def`, returning a
        `HookResult`, a dict of its fields, or None) on `event`; lower
        `priority` runs first. Returns the function that unregisters it."""
        name = name or f"_auto_{event}_{uuid.uuid4()}"
        if inspect.iscoroutinefunction(handler):

            async def hook(record: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
                data = to_data(record)
                return _answer(event, data, await handler(event, data))

        else:

            def hook(record: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
                data = to_data(record)
                return _answer(event, data, handler(event, data))

        registration = self.engine.register(canonical_event(event), hook, priority=priority, name=name)
        self._registered.setdefault(name, []).append(registration)
        self._events[name] = event

        def unregister() -> None:
            if registration.unregister():
                self._registered[name].remove(registration)

        return unregister

    on = register

    async def emit(self, event: str, data: Optional[Dict[str, Any]] = None) -> Any:
        """Decide `event` with every hook, and answer as Amplifier does."""
        merged = {**self._defaults, **(data or {})}
        outcome = await self.engine.decide_async(to_record(event, merged))
        return hook_result(event, merged, outcome)

    def unregister(self, name: str) -> None:
        """Take back one handler registered as `name` (none: nothing)."""
        registrations = self._registered.get(name)
        if registrations:
            registrations.pop(0).unregister()

    def set_default_fields(self, **fields: Any) -> None:
        """Fields every emitted event carries unless its data says
        otherwise (replacing the previous defaults)."""
        self._defaults = dict(fields)

    def list_handlers(self, event: Optional[str] = None) -> Dict[str, List[str]]:
        """The registered handlers' names, by event."""
        listed: Dict[str, List[str]] = {}
        for name, registrations in self._registered.items():
            at = self._events[name]
            if registrations and (event is None or event == at):
                listed.setdefault(at, []).extend([name] * len(registrations))
        return listed


async def mount(coordinator: Any, config: Optional[Dict[str, Any]] = None) -> Callable[[], None]:
    """Amplifier's module entry point: load a wasm-hooks engine (`config`:
    `files`, `project_dir`, `audit_log`, `audit_key`, `cache_dir`; and
    `events`, `priority` of its handlers) and decide
    the session's events with it. A failure of wasm-hooks itself denies a
    guarded operation (a tool call, a prompt) rather than letting it by.
    Returns the cleanup that unregisters every handler."""
    config = dict(config or {})
    options = {k: config[k] for k in _ENGINE_OPTIONS if k in config}
    engine = await asyncio.get_running_loop().run_in_executor(None, lambda: Engine(**options))
    priority = int(config.get("priority", 0))
    unregisters = []
    for event in config.get("events", MOUNTED_EVENTS):

        async def decide(event_name: str, data: Dict[str, Any]) -> Any:
            try:
                outcome = await engine.decide_async(to_record(event_name, data))
                return hook_result(event_name, data, outcome)
            except Exception as error:  # a guard's failure never lets the call by
                return _failure(event_name, error)

        unregisters.append(
            coordinator.hooks.register(event, decide, priority=priority, name=f"wasm-hooks:{event}")
        )

    def cleanup() -> None:
        for unregister in unregisters:
            unregister()

    return cleanup

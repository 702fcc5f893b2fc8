"""wasm-hooks inside a Python agent.

Load hook files the way the `wasm-hooks` CLI does (or name them), decide
events sync or async with the GIL released, register Python functions as
hooks folded with the files' hooks, and run a session: approvals answered
by a callback, context within its budget, messages, the audit log::

    from wasm_hooks import Engine

    engine = Engine(["hooks.yaml"])
    outcome = engine.decide({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                             "tool_input": {"command": "rm -rf /"}})
    if outcome.denied:
        print("blocked:", outcome.reason)

Events are given in the canonical vocabulary (the catalogue's names:
`PreToolUse`, `tool_name`, `tool_input`…) or, with `agent=`, in an agent's
own dialect (`claude`, `codex`, `gemini`, `copilot`, `cursor`, `opencode`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Callable, Dict, Iterable, List, Optional, Union

from dataclasses import dataclass

from . import _wasm_hooks
from ._wasm_hooks import EventRecord, Outcome, Resolved
from .errors import EventError, HookFileError, Problem, RegistrationError, WasmHooksError

__all__ = [
    "Answer",
    "Engine",
    "EventRecord",
    "Outcome",
    "EventError",
    "HookFileError",
    "Problem",
    "RegistrationError",
    "Resolved",
    "Session",
    "WasmHooksError",
    "PROTOCOLS",
]

__version__ = _wasm_hooks.VERSION

#: The names `agent=` takes.
PROTOCOLS: List[str] = _wasm_hooks.protocols()

PathLike = Union[str, "os.PathLike[str]"]
Event = Dict[str, Any]

# A registered function is given an `EventRecord`: read like a dict, its
# values made Python data only when read (a dict of the whole record is
# most of what a call would cost). `to_dict()` gives a plain dict.
Mapping.register(EventRecord)


@dataclass(frozen=True)
class Answer:
    """An answer in an agent's own dialect: its JSON `body`, lines for
    `stderr`, and the `exit_code` a command hook exits with."""

    body: Any
    stderr: List[str]
    exit_code: int


class Engine:
    """A hooks engine: hook files with their plugins compiled, and the
    Python functions registered on it. Safe to share between threads.

    With `files`, those hook files (they replace the search list); else the
    project's (`project_dir`, default the current directory) and the
    person's, under the organisation's managed layer, with a project's
    hooks run as the person's only once they trusted it (`wasm-hooks
    trust`), as the CLI reads them. Raises `HookFileError` naming every
    problem's file and line.
    """

    def __init__(
        self,
        files: Optional[Iterable[PathLike]] = None,
        *,
        project_dir: Optional[PathLike] = None,
        claude_settings: bool = False,
        audit_log: Optional[PathLike] = None,
        audit_key: Optional[PathLike] = None,
        user_config_dir: Optional[PathLike] = None,
        managed_dir: Optional[PathLike] = None,
        cache_dir: Optional[PathLike] = None,
    ) -> None:
        self._native = _wasm_hooks.Engine(
            None if files is None else [os.fspath(f) for f in files],
            project_dir=project_dir,
            claude_settings=claude_settings,
            audit_log=audit_log,
            audit_key=audit_key,
            user_config_dir=user_config_dir,
            managed_dir=managed_dir,
            cache_dir=cache_dir,
        )

    def decide(self, event: Event, agent: Optional[str] = None) -> Outcome:
        """Run the hooks for `event` and fold their answers: an `Outcome`
        (`decision`, `reason`, `denied`, `decided_by`, `updated_input`,
        `contexts`, `trace`…, each made into Python data when read)."""
        return self._native.decide(event, agent)

    async def decide_async(self, event: Event, agent: Optional[str] = None) -> Outcome:
        """`decide`, leaving the event loop free while the hooks run."""
        return await self._native.decide_async(event, agent)

    def answer(self, payload: Event, agent: str) -> Answer:
        """Decide `agent`'s own payload and answer in its dialect (what its
        command hook would print and exit with)."""
        return Answer(**self._native.answer(payload, agent))

    async def answer_async(self, payload: Event, agent: str) -> Answer:
        """`answer`, leaving the event loop free."""
        return Answer(**(await self._native.answer_async(payload, agent)))

    def register(
        self,
        event: str,
        function: Callable[[EventRecord], Any],
        *,
        matcher: Optional[str] = None,
        priority: int = 0,
        name: Optional[str] = None,
        on_failure: str = "block",
    ) -> Any:
        """Run `function(record)` (sync or `async def`) as a hook on `event`
        (`PreToolUse`, `tool:pre`, `PreToolUse,PostToolUse`, `*`), for the
        tools `matcher` fits, at `priority` (lower runs first). `record` is
        an `EventRecord`, read like a dict (`record["tool_input"]`). It returns
        `None` (no opinion) or a dict in any answer shape hook files know:
        `{"decision": "deny", "reason": …}`, Amplifier's `{"action": …}`,
        Claude Code's `hookSpecificOutput`. A function that raises, or
        answers what does not read, fails: `on_failure` says what that
        does (`block` unless told; `warn`, `ignore`). Returns the
        registration: call it, or its `unregister()`, to take it back.
        """
        return self._native.register(
            event, function, matcher=matcher, priority=priority, name=name, on_failure=on_failure
        )

    def hook(self, event: str, **options: Any) -> Callable[[Callable], Callable]:
        """`register` as a decorator: `@engine.hook("PreToolUse", matcher="Bash")`."""

        def decorate(function: Callable) -> Callable:
            self.register(event, function, **options)
            return function

        return decorate

    @property
    def warnings(self) -> List[str]:
        """What the lints found in the hook files, one line each."""
        return self._native.warnings

    def hooks(self) -> List[Dict[str, Any]]:
        """The hooks that run, in order: name, events, matcher, priority, kind."""
        return self._native.hooks()


class Session:
    """One agent session over an engine: an `ask` goes to `approve(request)`
    (returning an option such as `"Allow once"`, `"allow_always"`,
    `"Deny"`, a bool, or `None` for nobody answered, when the request's
    default applies; without `approve`, every default applies), context is
    kept within `max_injection_bytes` per injection and the turn's
    `turn_budget_tokens` until `flush_context()`, messages go to
    `display(kind, source, payload)` (else stderr), every step to the
    engine's audit log."""

    def __init__(
        self,
        engine: Engine,
        session_id: str,
        *,
        approve: Optional[Callable[[Dict[str, Any]], Any]] = None,
        display: Optional[Callable[[str, str, Dict[str, Any]], Any]] = None,
        max_injection_bytes: int = 10 * 1024,
        turn_budget_tokens: int = 1000,
        approval_timeout: float = 60.0,
    ) -> None:
        self._native = _wasm_hooks.Session(
            engine._native,
            session_id,
            approve=approve,
            display=display,
            max_injection_bytes=max_injection_bytes,
            turn_budget_tokens=turn_budget_tokens,
            approval_timeout=approval_timeout,
        )

    @property
    def id(self) -> str:
        """The id put in every event that has none."""
        return self._native.id

    def dispatch(self, event: Event, agent: Optional[str] = None) -> Resolved:
        """Run the hooks for `event` and route the outcome: a `Resolved`
        (`outcome`, `denied`, `approval`, `injections`)."""
        return self._native.dispatch(event, agent)

    async def dispatch_async(self, event: Event, agent: Optional[str] = None) -> Resolved:
        """`dispatch`, leaving the event loop free (an `async def` approval
        function runs on it)."""
        return await self._native.dispatch_async(event, agent)

    def before_tool(self, tool_name: str, tool_input: Dict[str, Any], **fields: Any) -> Resolved:
        """PreToolUse for a call the agent is about to make: when denied,
        do not run it; run `outcome.updated_input` when a hook rewrote it."""
        return self.dispatch(
            {"hook_event_name": "PreToolUse", "tool_name": tool_name, "tool_input": tool_input, **fields}
        )

    def after_tool(
        self, tool_name: str, tool_input: Dict[str, Any], tool_response: Any, **fields: Any
    ) -> Resolved:
        """PostToolUse for a call that ran: hand the model
        `outcome.updated_output` instead when a hook replaced it."""
        return self.dispatch(
            {
                "hook_event_name": "PostToolUse",
                "tool_name": tool_name,
                "tool_input": tool_input,
                "tool_response": tool_response,
                **fields,
            }
        )

    def prompt_submitted(self, prompt: str) -> Resolved:
        """A new turn: the person's prompt (UserPromptSubmit)."""
        self._native.begin_turn()
        return self.dispatch({"hook_event_name": "UserPromptSubmit", "prompt": prompt})

    def begin_turn(self) -> None:
        """A new turn: the injection budget starts again."""
        self._native.begin_turn()

    def flush_context(self) -> List[Dict[str, Any]]:
        """The context queued since the last call, one message per role
        (`role`, `text`, `sources`): add it before the next model request."""
        return self._native.flush_context()

    def take_stop(self) -> Optional[Dict[str, Any]]:
        """The first request to end the turn since the last call, if any."""
        return self._native.take_stop()

"""Run a plugin's :class:`~wasm_hooks.Hook` natively, under pytest: a mock
host with the hook's config, a key-value store and the log lines written.

    from wasm_hooks.testing import MockHost, bash

    def test_denies_rm():
        with MockHost(config={"words": ["rm"]}):
            outcome = Handler().dispatch(bash("rm -rf /"))
        assert outcome.decision == "deny"
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from . import Event, HookError, _host


class MockHost:
    """The host, in a test: ``config`` as the hook file would give it, a
    ``kv`` dict, and ``logs`` as (level, message) pairs. Use it as a
    context manager."""

    def __init__(self, config: Any = None, kv: Optional[Dict[str, str]] = None) -> None:
        self._config = {} if config is None else config
        self.kv: Dict[str, str] = {} if kv is None else kv
        self.logs: List[Tuple[str, str]] = []
        self._before: Optional[object] = None

    def __enter__(self) -> "MockHost":
        self._before = _host.install(self)
        return self

    def __exit__(self, *_exc: object) -> None:
        _host.install(self._before)

    def config(self) -> str:
        return json.dumps(self._config)

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))

    def kv_get(self, key: str) -> Optional[str]:
        return self.kv.get(key)

    def kv_set(self, key: str, value: str) -> None:
        if not isinstance(value, str):
            raise HookError("kv values are strings")
        self.kv[key] = value


def event(name: str, **fields: Any) -> Event:
    """An event named ``name`` with these record fields."""
    record = {"hook_event_name": name, "session_id": "test-session", "cwd": "/project"}
    record.update(fields)
    return Event.from_record(record)


def bash(command: str) -> Event:
    """Claude Code's PreToolUse for its Bash tool running ``command``."""
    return event("PreToolUse", tool_name="Bash", tool_input={"command": command})

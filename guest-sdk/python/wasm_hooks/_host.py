"""Which host the SDK talks to: the wasm host's imports inside a component,
or a mock installed by :mod:`wasm_hooks.testing`."""

from __future__ import annotations

from typing import Optional


class WitHost:
    """The host's WIT imports (present only inside a component)."""

    def config(self) -> str:
        from wit_world.imports import host

        return host.config()

    def log(self, level: str, message: str) -> None:
        from wit_world.imports import host, types

        host.log(types.Level[level.upper()], message)

    def kv_get(self, key: str) -> Optional[str]:
        from wit_world.imports import kv

        return kv.get(key)

    def kv_set(self, key: str, value: str) -> None:
        from componentize_py_types import Err
        from wit_world.imports import kv

        from . import HookError

        try:
            kv.set(key, value)
        except Err as e:
            raise HookError(f"kv.set({key!r}) refused: {e.value}") from None


_current: Optional[object] = None


def current():
    """The host in use: a test's mock, else the WIT imports."""
    global _current
    if _current is None:
        _current = WitHost()
    return _current


def install(host: Optional[object]) -> Optional[object]:
    """Use ``host`` from now on (``None``: the WIT imports); the one before."""
    global _current
    before, _current = _current, host
    return before

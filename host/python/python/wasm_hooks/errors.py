"""The exceptions of wasm-hooks: each names what to fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional


class WasmHooksError(Exception):
    """Anything the engine refuses."""


@dataclass(frozen=True)
class Problem:
    """One problem in a hook file: where it is, as far as it is known."""

    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    message: str

    def __str__(self) -> str:
        return self.message


class HookFileError(WasmHooksError):
    """Hook files that do not load: every problem, each naming its file,
    line and field. No engine is built from a partly broken setup."""

    def __init__(self, message: str, problems: List[dict]):
        super().__init__(message)
        self.problems = [Problem(**p) for p in problems]


class EventError(WasmHooksError, ValueError):
    """An event that cannot be read (not an object, an unknown event name,
    a field of the wrong type): the message names the field."""


class RegistrationError(WasmHooksError, ValueError):
    """A function registered with an event, matcher or failure policy that
    does not read."""

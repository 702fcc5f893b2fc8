"""Typed answers: the folded outcome of one event, a session's resolved
outcome, and an agent-dialect answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass(frozen=True)
class Approval:
    """What an `ask` asks of the person."""

    prompt: str
    options: List[str]
    timeout_ms: Optional[int]
    default_allow: bool


@dataclass(frozen=True)
class Outcome:
    """Every hook's answer to one event, folded: what the agent should do.

    `decision` is `proceed` (no hook had an opinion), `allow`, `deny` or
    `ask`; the rest is every field the engine can say (the canonical
    outcome of `POST /v1/decide`), and `raw` is that outcome as a dict.
    """

    decision: str
    reason: Optional[str]
    approval: Optional[Approval]
    decided_by: Optional[str]
    updated_input: Any
    rewrite_approved: bool
    updated_output: Any
    contexts: List[Dict[str, Any]]
    user_messages: List[Dict[str, Any]]
    system_messages: List[Dict[str, Any]]
    stop: Optional[Dict[str, Any]]
    suppress_output: bool
    requests: Dict[str, Any]
    trace: List[Dict[str, Any]]
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_dict(cls, raw: Dict[str, Any]) -> "Outcome":
        """The outcome the engine wrote as `raw`."""
        decision = raw["decision"]
        approval = None
        reason = raw.get("reason")
        if decision == "ask":
            approval = Approval(
                raw["prompt"], list(raw["options"]), raw.get("timeout_ms"), raw["default_allow"]
            )
            reason = raw["prompt"]
        return cls(
            decision=decision,
            reason=reason,
            approval=approval,
            decided_by=raw.get("decided_by"),
            updated_input=raw.get("updated_input"),
            rewrite_approved=raw.get("rewrite_approved", False),
            updated_output=raw.get("updated_output"),
            contexts=raw.get("contexts", []),
            user_messages=raw.get("user_messages", []),
            system_messages=raw.get("system_messages", []),
            stop=raw.get("stop"),
            suppress_output=raw.get("suppress_output", False),
            requests=raw.get("requests", {}),
            trace=raw.get("trace", []),
            raw=raw,
        )

    @property
    def denied(self) -> bool:
        """Whether the operation must not happen."""
        return self.decision == "deny"

    @property
    def context_text(self) -> List[str]:
        """The context the hooks added, in hook order."""
        return [c["value"]["text"] for c in self.contexts]

    @property
    def failures(self) -> List[Dict[str, Any]]:
        """The hooks that failed, with their error and the policy applied."""
        return [t for t in self.trace if "failed" in t["status"]]


@dataclass(frozen=True)
class Resolved:
    """A session's outcome: never an `ask` (the approval decided it), the
    approval asked and who decided it, and what became of each hook's
    context (queued, over the turn's budget, or refused)."""

    outcome: Outcome
    approval: Optional[Dict[str, Any]]
    injections: List[Dict[str, Any]]

    @classmethod
    def from_dict(cls, raw: Dict[str, Any]) -> "Resolved":
        """The resolved outcome the session wrote as `raw`."""
        return cls(Outcome.from_dict(raw["outcome"]), raw["approval"], raw["injections"])

    @property
    def denied(self) -> bool:
        """Whether the operation must not happen."""
        return self.outcome.denied


@dataclass(frozen=True)
class Answer:
    """An answer in an agent's own dialect: its JSON `body`, lines for
    `stderr`, and the `exit_code` a command hook exits with."""

    body: Any
    stderr: List[str]
    exit_code: int

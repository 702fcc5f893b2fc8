"""Conversions between the WIT types componentize-py generates and the
SDK's :class:`Event` and :class:`Outcome` (imported only inside a
component)."""

from __future__ import annotations

import json
import traceback

from componentize_py_types import Err
from wit_world.imports import host, kv  # noqa: F401  (imported while built: used by _host)
from wit_world.imports import types as wit

from . import Event, Outcome


def handle(hook, event: "wit.Event") -> "wit.Outcome":
    """Run ``hook`` on ``event``; an exception becomes the ``err`` the host
    reads as a hook failure, with its message (and where it was raised)."""
    try:
        outcome = hook.dispatch(
            Event(
                name=event.name,
                payload=event.payload,
                session_id=event.session_id,
                timestamp=event.timestamp,
                cwd=event.cwd,
                tool_name=event.tool_name,
            )
        )
        return _to_wit(outcome)
    except Exception as e:  # every failure is the hook's, reported
        where = traceback.extract_tb(e.__traceback__)[-1:]
        at = f" (at {where[0].filename}:{where[0].lineno})" if where else ""
        raise Err(f"{type(e).__name__}: {e}{at}") from None


def _decision(o: Outcome):
    if o.decision == "allow":
        return wit.Decision_Allow(o.reason)
    if o.decision == "deny":
        return wit.Decision_Deny(o.reason or "")
    if o.decision == "ask" and o.approval is not None:
        a = o.approval
        return wit.Decision_Ask(
            wit.Approval(a.prompt, list(a.options), a.timeout_ms, a.default_allow)
        )
    if o.decision == "modify":
        return wit.Decision_Modify(json.dumps(o.rewrite))
    if o.decision == "modify_output":
        return wit.Decision_ModifyOutput(json.dumps(o.rewrite))
    return wit.Decision_Proceed()


def _to_wit(o: Outcome) -> "wit.Outcome":
    return wit.Outcome(
        decision=_decision(o),
        context=None
        if o.context is None
        else wit.Context(o.context, wit.Role[o.context_role.upper()]),
        user_message=None
        if o.user_message is None
        else (wit.Severity[o.user_severity.upper()], o.user_message),
        system_message=o.system_message,
        stop=o.stop_reason,
        suppress_output=o.suppress_output,
        metadata=None if o.metadata is None else json.dumps(o.metadata),
    )

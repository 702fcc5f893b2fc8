//! wasm-hooks' own protocol, for a program that is none of the agents
//! (`hook --protocol canonical`, `serve`'s `POST /v1/decide`): the event
//! record in the catalogue's words (`docs/protocol.md`), and the whole
//! [`Outcome`] out — every field the engine can say, not one agent's
//! subset — as `run --json` prints it. A failure is an outcome too: a
//! deny on an event that guards an action (or one that could not be
//! read), else a proceed with the reason among `system_messages`. The
//! answer is always the JSON; the exit code is 0.

use super::facts::AgentFacts;
use serde_json::Value;
use wasm_hooks_core::{Attributed, Event, EventError, EventName, HookId, Outcome};

use super::Answer;

/// Read a canonical event record: an unknown event name is an error that
/// names it (a program speaking the catalogue means one of its events).
pub(super) fn decode(value: Value) -> Result<Event, EventError> {
    Event::from_json(value)
}

/// The outcome, whole.
pub(super) fn encode(outcome: &Outcome) -> Answer {
    Answer {
        body: serde_json::to_value(outcome).expect("an outcome always serializes"),
        stderr: Vec::new(),
        exit_code: 0,
    }
}

/// The hooks' failure as an outcome: a deny for `message` on an event
/// that guards an action or one that could not be read (unless
/// `fail_open`), else a proceed that carries `message` for the person.
pub(super) fn failure(event: Option<EventName>, message: &str, fail_open: bool) -> Answer {
    let message = format!("wasm-hooks: {message}");
    let blocks = !fail_open && event.is_none_or(EventName::guards_action);
    let outcome = if blocks {
        Outcome::denied(message.clone())
    } else {
        let mut outcome = Outcome::proceed();
        outcome.system_messages.push(Attributed {
            hook: HookId::new("wasm-hooks"),
            value: message.clone(),
        });
        outcome
    };
    Answer {
        stderr: vec![message],
        ..encode(&outcome)
    }
}

/// The canonical protocol as [`AgentFacts`]: no agent's, so nothing to
/// install, find or drive.
pub(super) const FACTS: AgentFacts = AgentFacts {
    name: "a program of your own (the canonical protocol)",
    program: "",
    driven: "",
    settings: "",
    local_settings: None,
    user_settings: "",
    user_settings_variable: None,
    events: &[],
    entries_fail_closed: true,
    next_step: ("", ""),
    unguarded: None,
    importable: false,
    http_hooks: false,
    hook_file: None,
};

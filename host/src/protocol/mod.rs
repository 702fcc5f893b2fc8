//! The wire formats of other agents: reading their event JSON into an
//! [`Event`] and writing an [`Outcome`] back as the answer they obey.
//!
//! Claude Code and Codex share one format (Codex adds `turn_id` and
//! `model` to the input and cannot rewrite or pre-approve a tool call);
//! Gemini CLI has its own event and tool names and a flatter answer. Every
//! field of the input reaches the hooks: unknown fields stay in the record.

mod claude;
mod gemini;
mod settings;

pub use settings::{CLAUDE_EVENTS, InstalledHook, SettingsError, install, uninstall};

use serde_json::Value;

use crate::{Event, EventError, Outcome};

/// An agent's hook protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// Claude Code's command and HTTP hooks.
    #[default]
    Claude,
    /// Gemini CLI's command hooks.
    Gemini,
    /// Codex's command hooks (Claude Code's format, with fewer answers).
    Codex,
}

/// What to hand back to the agent: the JSON for stdout (or an HTTP body),
/// lines for stderr, and the process exit code.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The JSON answer.
    pub body: Value,
    /// Lines for stderr (warnings the person should see in logs).
    pub stderr: Vec<String>,
    /// The exit code for a command hook.
    pub exit_code: u8,
}

impl Protocol {
    /// Read the agent's event JSON.
    ///
    /// # Errors
    /// When it is not an event record (see [`Event::from_json`]).
    pub fn decode(self, value: Value) -> Result<Event, EventError> {
        match self {
            Protocol::Claude | Protocol::Codex => Event::from_json(value),
            Protocol::Gemini => gemini::decode(value),
        }
    }

    /// The answer that makes the agent do what `outcome` says for `event`
    /// (as decoded by [`Protocol::decode`]).
    pub fn encode(self, event: &Event, outcome: &Outcome) -> Answer {
        match self {
            Protocol::Claude => claude::encode(event, outcome, claude::Dialect::Claude),
            Protocol::Codex => claude::encode(event, outcome, claude::Dialect::Codex),
            Protocol::Gemini => gemini::encode(event, outcome),
        }
    }

    /// The answer when the hooks could not run at all (the hook files do
    /// not load, the event is not readable): the operation is blocked with
    /// `message` as the reason (exit code 2, `message` on stderr), so that
    /// a broken setup never waves everything through. With `fail_open`,
    /// the agent goes on instead (exit code 1, a non-blocking error).
    pub fn failure(self, message: &str, fail_open: bool) -> Answer {
        Answer {
            body: Value::Null,
            stderr: vec![format!("wasm-hooks: {message}")],
            exit_code: if fail_open { 1 } else { 2 },
        }
    }
}

/// Every context in hook order, one paragraph each.
fn joined_context(outcome: &Outcome) -> Option<String> {
    let parts: Vec<&str> = outcome
        .contexts
        .iter()
        .map(|c| c.value.text.as_str())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// Every message for the person (user messages, then warnings), one line
/// each, naming the hook.
fn joined_messages(outcome: &Outcome) -> Option<String> {
    let lines: Vec<String> = outcome
        .user_messages
        .iter()
        .map(|m| format!("[{}] {}", m.hook, m.value.text))
        .chain(
            outcome
                .system_messages
                .iter()
                .map(|m| format!("[{}] {}", m.hook, m.value)),
        )
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The warnings (hook failures under `warn` among them) for stderr.
fn warnings(outcome: &Outcome) -> Vec<String> {
    outcome
        .system_messages
        .iter()
        .map(|m| format!("wasm-hooks: [{}] {}", m.hook, m.value))
        .collect()
}

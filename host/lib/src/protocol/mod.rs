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

use serde_json::{Map, Value};

use wasm_hooks_core::{Event, EventError, Outcome, Verdict};

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

/// An answer being written: the JSON body, its `hookSpecificOutput` part
/// and lines for stderr. What every agent's answer shares is added here.
struct Draft<'a> {
    outcome: &'a Outcome,
    event: &'a str,
    body: Map<String, Value>,
    specific: Map<String, Value>,
    stderr: Vec<String>,
    /// Context of the host's own, after the hooks'.
    notes: Vec<String>,
}

impl<'a> Draft<'a> {
    /// A draft for `outcome` on the event the agent calls `event`; hook
    /// failures under `warn` are already on stderr.
    fn new(outcome: &'a Outcome, event: &'a str) -> Self {
        let stderr = outcome
            .system_messages
            .iter()
            .map(|m| format!("wasm-hooks: [{}] {}", m.hook, m.value))
            .collect();
        Self {
            outcome,
            event,
            body: Map::new(),
            specific: Map::new(),
            stderr,
            notes: Vec::new(),
        }
    }

    /// Report a deny the event cannot act on.
    fn unblockable(&mut self, reason: &str) {
        self.stderr.push(format!(
            "wasm-hooks: {} cannot be blocked; a hook's deny is only reported: {reason}",
            self.event
        ));
    }

    /// Add context of the host's own (after the hooks' contexts).
    fn note(&mut self, text: String) {
        self.notes.push(text);
    }

    /// Every context, one paragraph each, as `additionalContext` when the
    /// agent reads it on this event; otherwise reported as dropped.
    fn context(&mut self, read: bool) {
        let parts: Vec<&str> = self
            .outcome
            .contexts
            .iter()
            .map(|c| c.value.text.as_str())
            .chain(self.notes.iter().map(String::as_str))
            .collect();
        if parts.is_empty() {
            return;
        }
        let context = parts.join("\n\n");
        if read {
            self.specific
                .insert("additionalContext".into(), context.into());
        } else {
            self.stderr.push(format!(
                "wasm-hooks: {} takes no context; dropped: {context}",
                self.event
            ));
        }
    }

    /// The answer: the `hookSpecificOutput` part named after the event,
    /// `continue: false` + `stopReason`, the messages for the person (one
    /// line each, naming the hook) as `systemMessage`, `suppressOutput`;
    /// exit code 0.
    fn finish(mut self) -> Answer {
        let outcome = self.outcome;
        if !self.specific.is_empty() {
            self.specific
                .insert("hookEventName".into(), self.event.into());
            self.body
                .insert("hookSpecificOutput".into(), Value::Object(self.specific));
        }
        if let Some(stop) = &outcome.stop {
            self.body.insert("continue".into(), false.into());
            self.body
                .insert("stopReason".into(), stop.value.clone().into());
        }
        let messages: Vec<String> = outcome
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
        if !messages.is_empty() {
            self.body
                .insert("systemMessage".into(), messages.join("\n").into());
        }
        if outcome.suppress_output {
            self.body.insert("suppressOutput".into(), true.into());
        }
        Answer {
            body: Value::Object(self.body),
            stderr: self.stderr,
            exit_code: 0,
        }
    }
}

/// The reason to block with: a deny's, or, where `agent` cannot ask, an
/// ask's prompt (blocking is the safe side).
fn blocking_reason(verdict: &Verdict, agent: &str) -> Option<String> {
    match verdict {
        Verdict::Deny { reason } => Some(reason.clone()),
        Verdict::Ask(approval) => Some(format!(
            "needs the person's approval, which {agent} cannot ask for: {}",
            approval.prompt
        )),
        _ => None,
    }
}

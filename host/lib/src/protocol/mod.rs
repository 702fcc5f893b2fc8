//! The wire formats of other agents: reading their event JSON into an
//! [`Event`] and writing an [`Outcome`] back as the answer they obey.
//!
//! Claude Code and Codex share one format (Codex adds `turn_id` and
//! `model` to the input, has events of its own, and takes neither `ask`
//! nor a bare `allow`: `codex`);
//! Gemini CLI, Copilot CLI and Cursor have their own event and tool names
//! and flatter answers, read onto the catalogue and Claude Code's tool
//! names so that one hook file serves every agent. Every field of the
//! input reaches the hooks: unknown fields stay in the record.

mod answer;
mod canonical;
mod claude;
mod codex;
mod copilot;
mod cursor;
mod facts;
mod gemini;
mod import;
mod mcp_names;
mod opencode;
mod settings;
mod text;

pub use facts::{AgentFacts, HookFile, SettingsShape};
pub use text::event_json;

pub(crate) use answer::{
    ClaudeAnswer, ClaudeSpecific, DecisionWord, ElicitationAction, PermissionWord, RequestDecision,
};
pub use import::{Imported, add_hook_groups, take_command_hooks};
pub use settings::{
    AGENT_TIMEOUT_SECS, InstalledHook, SettingsError, TOKEN_VARIABLE, failing_open, install,
    installed_on, installed_programs, uninstall,
};
pub(crate) use settings::{argv_runs_us, runs_us};

use serde_json::Value;

use wasm_hooks_core::{Event, EventError, EventName, Outcome, Verdict, escape_controls};

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
    /// GitHub Copilot CLI's own command hooks (camelCase events).
    Copilot,
    /// Cursor's command hooks.
    Cursor,
    /// OpenCode, through the plugin `install opencode` writes.
    OpenCode,
    /// wasm-hooks' own, for a program that is none of the agents: the
    /// canonical event in, the whole outcome out (`hook --protocol
    /// canonical`, `serve`'s `POST /v1/decide`).
    Canonical,
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
    /// Every protocol: the agents' ([`Protocol::AGENTS`]), then the
    /// canonical one.
    pub const ALL: [Protocol; 7] = {
        let mut all = [Protocol::Canonical; 7];
        let mut i = 0;
        while i < Protocol::AGENTS.len() {
            all[i] = Protocol::AGENTS[i];
            i += 1;
        }
        all
    };

    /// Its one-word name, as `hook --protocol` and the language bindings
    /// take it: `claude`, `codex`, `gemini`, `copilot`, `cursor`,
    /// `opencode`, `canonical`.
    pub fn word(self) -> &'static str {
        match self {
            Protocol::Claude => "claude",
            Protocol::Codex => "codex",
            Protocol::Gemini => "gemini",
            Protocol::Copilot => "copilot",
            Protocol::Cursor => "cursor",
            Protocol::OpenCode => "opencode",
            Protocol::Canonical => "canonical",
        }
    }

    /// The protocol named `word` ([`Protocol::word`], or `none` for
    /// `canonical`), if any.
    pub fn from_word(word: &str) -> Option<Protocol> {
        match word {
            "none" => Some(Protocol::Canonical),
            _ => Protocol::ALL.into_iter().find(|p| p.word() == word),
        }
    }

    /// The agent's own names of the events that guard an action
    /// ([`EventName::guards_action`]) where they are not the catalogue's:
    /// a hook whose answer cannot be had blocks them.
    pub fn agent_guard_events() -> impl Iterator<Item = &'static str> {
        copilot::EVENTS
            .iter()
            .filter(|(_, name)| name.guards_action())
            .map(|(agent, _)| *agent)
            .chain(cursor::GUARD_EVENTS.iter().copied())
            .chain(opencode::GUARD_EVENTS.iter().copied())
    }

    /// The agent that sent `payload` to a hook of this protocol's files,
    /// whose code reads and answers it. Copilot CLI runs Claude Code's
    /// hooks too (`.claude/settings.json`), in its own shape (`sessionId`)
    /// or in Claude's format with a `timestamp`, which Claude Code never
    /// sends (`tests/fixtures/copilot-1.0.102/README.md`): such a payload
    /// is Copilot's. Every other protocol's payloads are its own.
    pub fn sender(self, payload: &Value) -> Protocol {
        match (self, payload) {
            (Protocol::Claude, Value::Object(record))
                if record.contains_key("sessionId") || record.contains_key("timestamp") =>
            {
                Protocol::Copilot
            }
            _ => self,
        }
    }

    /// [`Protocol::decode`] by the agent that sent `payload`
    /// ([`Protocol::sender`]): the event, and the protocol that answers it
    /// ([`Protocol::encode`]).
    ///
    /// # Errors
    /// When it is not an event record.
    pub fn read(self, payload: Value) -> Result<(Protocol, Event), EventError> {
        let sender = self.sender(&payload);
        Ok((sender, sender.decode(payload)?))
    }

    /// Read the agent's event JSON; an event the catalogue does not know
    /// is [`EventName::Unlisted`] (see [`Event::from_agent_json`]).
    ///
    /// # Errors
    /// When it is not an event record.
    pub fn decode(self, value: Value) -> Result<Event, EventError> {
        match self {
            Protocol::Claude => Event::from_agent_json(value),
            Protocol::Codex => codex::decode(value),
            Protocol::Gemini => gemini::decode(value),
            Protocol::Copilot => copilot::decode(value),
            Protocol::Cursor => cursor::decode(value),
            Protocol::OpenCode => opencode::decode(value),
            Protocol::Canonical => canonical::decode(value),
        }
    }

    /// The answer that makes the agent do what `outcome` says for `event`
    /// (as decoded by [`Protocol::decode`]).
    pub fn encode(self, event: &Event, outcome: &Outcome) -> Answer {
        if self == Protocol::Canonical {
            return canonical::encode(outcome);
        }
        if event.name() == EventName::Unlisted {
            return unlisted(event, outcome);
        }
        match self {
            Protocol::Claude => claude::encode(event, outcome, claude::Dialect::Claude),
            Protocol::Codex => codex::encode(event, outcome),
            Protocol::Gemini => gemini::encode(event, outcome),
            Protocol::Copilot => copilot::encode(event, outcome),
            Protocol::Cursor => cursor::encode(event, outcome),
            Protocol::OpenCode => opencode::encode(event, outcome),
            Protocol::Canonical => canonical::encode(outcome),
        }
    }

    /// The answer when the hooks could not run at all (the hook files do
    /// not load, the event is not readable), for `event` when it was read.
    ///
    /// An event that guards an action ([`EventName::guards_action`]), or one
    /// that could not be read, is blocked with `message` as the reason
    /// (exit code 2, `message` on stderr), so that a broken setup never
    /// waves a tool call or a prompt through; with `fail_open` the agent
    /// goes on instead (exit code 1, a non-blocking error). Every other
    /// event goes on (exit code 0), and the person is told why through
    /// `systemMessage`: blocking a Stop or a SessionEnd would only trap the
    /// agent. Where an agent does not block on exit code 2
    /// ([`Protocol::blocks_only_by_answer`]: Copilot CLI's prompts, which
    /// reach Claude-format hooks too), the block is the agent's own deny
    /// in the body, with exit code 0.
    pub fn failure(self, event: Option<EventName>, message: &str, fail_open: bool) -> Answer {
        if self == Protocol::Canonical {
            return canonical::failure(event, message, fail_open);
        }
        let stderr = vec![format!("wasm-hooks: {message}")];
        if let Some(name) = event.filter(|name| !fail_open && self.blocks_only_by_answer(*name)) {
            return Answer {
                body: self.hosts_deny(&self.unread_event(name), message).body,
                stderr,
                exit_code: 0,
            };
        }
        if event.is_none_or(EventName::guards_action) {
            return Answer {
                body: Value::Null,
                stderr,
                exit_code: if fail_open { 1 } else { 2 },
            };
        }
        let told = answer::Common {
            system_message: Some(format!("wasm-hooks: no hooks ran: {message}")),
            ..answer::Common::default()
        };
        Answer {
            body: serde_json::to_value(told).expect("an answer always serializes"),
            stderr,
            exit_code: 0,
        }
    }
}

impl Protocol {
    /// Whether a guard event of this agent is blocked only by the agent's
    /// own deny in the answer, not by exit code 2: Copilot CLI's (exit 2
    /// lets its prompts through; observed), and a prompt on the Claude
    /// format, which Copilot CLI also sends its `.claude/settings.json`
    /// hooks (`decision: "block"` blocks it in Claude Code, Codex and
    /// Copilot CLI alike).
    pub fn blocks_only_by_answer(self, event: EventName) -> bool {
        match self {
            Protocol::Copilot => matches!(
                event,
                EventName::PreToolUse | EventName::PermissionRequest | EventName::UserPromptSubmit
            ),
            Protocol::Claude | Protocol::Codex => event == EventName::UserPromptSubmit,
            Protocol::Gemini | Protocol::Cursor | Protocol::OpenCode => false,
            // The deny is the outcome itself, always.
            Protocol::Canonical => event.guards_action(),
        }
    }

    /// The block of a request whose event cannot be named: a `decision:
    /// "block"` every agent's event takes (a deny on a tool call, a
    /// blocked prompt), or the canonical deny.
    pub fn unnamed_block(self, why: &str) -> Value {
        if self == Protocol::Canonical {
            return self.failure(None, why, false).body;
        }
        serde_json::json!({"decision": "block", "reason": format!("wasm-hooks: {why}")})
    }

    /// [`Protocol::failure`] for an HTTP hook, which has no exit code: an
    /// event that guards an action gets the agent's own deny in the body
    /// (a status other than 2xx, or a dropped connection, lets the agent
    /// go on); any other, the message for the person.
    pub fn failure_over_http(self, event: &Event, message: &str) -> Answer {
        if !event.name().guards_action() {
            return self.failure(Some(event.name()), message, false);
        }
        self.hosts_deny(event, message)
    }

    /// The event `name` as this agent's installed entries send it, for an
    /// answer made without its payload.
    fn unread_event(self, name: EventName) -> Event {
        match self {
            Protocol::Copilot => copilot::own_event(name),
            _ => Event::new(name),
        }
    }

    /// The agent's own deny of `event`, wasm-hooks' own, for `message`.
    fn hosts_deny(self, event: &Event, message: &str) -> Answer {
        self.encode(event, &Outcome::denied(format!("wasm-hooks: {message}")))
    }
}

/// `value` as an object, with the name the agent gave the event; without
/// one, what reading it as Claude Code's record says (`Err`: the error
/// names what is missing).
fn named(
    value: Value,
) -> Result<(serde_json::Map<String, Value>, String), Result<Event, EventError>> {
    let Value::Object(record) = value else {
        return Err(Err(EventError::NotAnObject));
    };
    match record.get("hook_event_name").and_then(Value::as_str) {
        Some(name) => {
            let name = name.to_owned();
            Ok((record, name))
        }
        None => Err(Event::from_agent_json(Value::Object(record))),
    }
}

/// Claude Code's name of an MCP tool (`mcp__<server>__<tool>`), which
/// every decoder gives an agent's MCP tool call, so that one matcher fits
/// it from every agent.
pub(crate) fn mcp_tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// The agent's own name of `event` (`agent_event_name`, kept by the
/// decoders that rename), else its canonical one.
fn agent_name(event: &Event) -> &str {
    event
        .record()
        .get("agent_event_name")
        .and_then(Value::as_str)
        .unwrap_or(event.name().as_str())
}

/// The answer to an event the catalogue does not know: no opinion, always
/// (its answer fields are unknown too); what the `*` hooks said goes to
/// stderr, so that it is not lost.
fn unlisted(event: &Event, outcome: &Outcome) -> Answer {
    let name = event
        .record()
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or("an unknown event");
    let mut draft = Draft::new(outcome, name);
    if let Some(reason) = outcome.verdict.reason() {
        draft.stderr.push(format!(
            "wasm-hooks: {name} is not in the catalogue, so no hook decides it; the hooks said {}: {reason}",
            outcome.verdict.word()
        ));
    }
    draft.context(false);
    Answer {
        body: Value::Null,
        stderr: draft.stderr,
        exit_code: 0,
    }
}

/// An answer being written: what every agent's answer shares, lines for
/// stderr, and context of the host's own. Each format's encoder fills its
/// own serde type ([`answer`]) from it.
struct Draft<'a> {
    outcome: &'a Outcome,
    event: &'a str,
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
            .map(|m| format!("wasm-hooks: [{}] {}", m.hook, escape_controls(&m.value)))
            .collect();
        Self {
            outcome,
            event,
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

    /// Report a hook's request to end the turn, for an agent whose hooks
    /// cannot make it: on stderr, never dropped without a word.
    fn unsaid_stop(&mut self) {
        if let Some(stop) = &self.outcome.stop {
            self.stderr.push(format!(
                "wasm-hooks: {} takes no request to end the turn; [{}] asked for it: {}",
                self.event, stop.hook, stop.value
            ));
        }
    }

    /// Report the hooks' messages for the person, for an agent whose hooks
    /// cannot show them: on stderr.
    fn unsaid_messages(&mut self) {
        let messages: Vec<String> = self
            .outcome
            .user_messages
            .iter()
            .map(|m| {
                format!(
                    "wasm-hooks: [{}] {}",
                    m.hook,
                    escape_controls(&m.value.text)
                )
            })
            .collect();
        self.stderr.extend(messages);
    }

    /// Add context of the host's own (after the hooks' contexts).
    fn note(&mut self, text: String) {
        self.notes.push(text);
    }

    /// Every context, one paragraph each, when the agent reads context on
    /// this event; otherwise reported on stderr as dropped.
    fn context(&mut self, read: bool) -> Option<String> {
        let parts: Vec<&str> = self
            .outcome
            .contexts
            .iter()
            .map(|c| c.value.text.as_str())
            .chain(self.notes.iter().map(String::as_str))
            .collect();
        if parts.is_empty() {
            return None;
        }
        let context = parts.join("\n\n");
        if read {
            return Some(context);
        }
        self.stderr.push(format!(
            "wasm-hooks: {} takes no context; dropped: {context}",
            self.event
        ));
        None
    }

    /// What every answer shares: `continue: false` + `stopReason`, the
    /// messages for the person (one line each, naming the hook) as
    /// `systemMessage`, `suppressOutput`.
    fn common(&self) -> answer::Common {
        let outcome = self.outcome;
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
        answer::Common {
            go_on: outcome.stop.as_ref().map(|_| false),
            stop_reason: outcome.stop.as_ref().map(|s| s.value.clone()),
            suppress_output: outcome.suppress_output.then_some(true),
            system_message: (!messages.is_empty()).then(|| messages.join("\n")),
        }
    }

    /// The answer, with `body` as its JSON; exit code 0.
    fn finish(self, body: &impl serde::Serialize) -> Answer {
        Answer {
            body: serde_json::to_value(body).expect("an answer always serializes"),
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

impl Protocol {
    /// The agents `install` knows, in the order they are listed.
    pub const AGENTS: [Protocol; 6] = [
        Protocol::Claude,
        Protocol::Codex,
        Protocol::Gemini,
        Protocol::Copilot,
        Protocol::Cursor,
        Protocol::OpenCode,
    ];

    /// The agent's facts (the canonical protocol's: a program of the
    /// person's own, with no settings and no events to install).
    pub fn facts(self) -> &'static AgentFacts {
        match self {
            Protocol::Claude => &claude::FACTS,
            Protocol::Codex => &codex::FACTS,
            Protocol::Gemini => &gemini::FACTS,
            Protocol::Copilot => &copilot::FACTS,
            Protocol::Cursor => &cursor::FACTS,
            Protocol::OpenCode => &opencode::FACTS,
            Protocol::Canonical => &canonical::FACTS,
        }
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

impl<'de> serde::Deserialize<'de> for Protocol {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let word = String::deserialize(deserializer)?;
        Protocol::from_word(&word).ok_or_else(|| {
            let known: Vec<&str> = Protocol::ALL.iter().map(|p| p.word()).collect();
            serde::de::Error::custom(format!("`{word}` is none of {}", known.join(", ")))
        })
    }
}

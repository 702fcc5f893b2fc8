//! The event catalogue and the event record.
//!
//! [`EventName`] is every canonical event of `docs/protocol.md`, each with its
//! aliases, defined once in [`CATALOGUE`]; [`Event`] is the record every hook
//! receives (the Claude Code–compatible JSON object). Matching events to
//! hooks is the `matcher` module's job, not this one's.

use std::fmt;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

macro_rules! catalogue {
    ($( $variant:ident => [$($alias:literal),* $(,)?] : $doc:literal ),* $(,)?) => {
        /// A canonical event name (Claude Code's spelling).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum EventName {
            $( #[doc = $doc] $variant, )*
            /// An event the catalogue does not know (an agent newer than
            /// wasm-hooks): only `*` hooks see it, its answer is always "no
            /// opinion", and its record keeps the agent's own name in
            /// `hook_event_name`. Not in [`CATALOGUE`]: no hook file can
            /// name it.
            Unlisted,
        }

        /// Every canonical event with its aliases, in catalogue order.
        pub const CATALOGUE: &[(EventName, &[&str])] = &[
            $( (EventName::$variant, &[$($alias),*]), )*
        ];

        impl EventName {
            /// The canonical spelling, e.g. `"PreToolUse"`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( EventName::$variant => stringify!($variant), )*
                    EventName::Unlisted => "Unlisted",
                }
            }

            /// What the event is, in a sentence (for editors and help).
            pub const fn description(self) -> &'static str {
                match self {
                    $( EventName::$variant => $doc, )*
                    EventName::Unlisted => "An event the catalogue does not know.",
                }
            }
        }
    };
}

catalogue! {
    SessionStart => ["session:start"]: "A session begins or resumes.",
    SessionEnd => ["session:end", "SessionStop"]: "A session ends.",
    UserPromptSubmit => ["PromptSubmit", "prompt:submit", "user:prompt_submit", "BeforeAgent"]:
        "The user submits a prompt.",
    PreToolUse => ["tool:pre", "tool:pre_execute", "BeforeTool"]:
        "Before a tool runs; can block or rewrite it.",
    PostToolUse => ["tool:post", "tool:post_execute", "AfterTool"]: "After a tool succeeded.",
    PostToolUseFailure => ["tool:error"]: "After a tool failed.",
    PermissionRequest => ["permission:prompt", "approval:required"]:
        "A permission prompt is about to be shown.",
    PermissionCheck => ["permission:check"]: "A permission is checked.",
    PermissionGranted => ["permission:granted", "approval:granted"]: "A permission was granted.",
    PermissionDenied => ["permission:denied", "approval:denied"]: "A permission was denied.",
    Notification => ["user:notification"]: "The agent notifies the user.",
    Stop => ["ResponseComplete", "orchestrator:complete", "AfterAgent"]:
        "The agent finished answering.",
    SubagentStart => []: "A subagent starts.",
    SubagentStop => []: "A subagent finishes.",
    PreCompact => ["context:pre_compact", "PreCompress"]: "Context compaction is about to run.",
    PostCompact => ["context:post_compact"]: "Context compaction ran.",
    PreModelRequest => ["llm:pre_request", "BeforeModel"]: "Before an LLM API call.",
    PostModelResponse => ["llm:post_response", "AfterModel"]: "After an LLM response.",
    ModelStreamStart => ["llm:stream_start"]: "Streaming from the model begins.",
    ModelStreamEnd => ["llm:stream_end"]: "Streaming from the model ends.",
    SessionMessage => ["session:message"]: "A message is added to the session.",
    UserInterrupt => ["user:interrupt", "Interrupt"]: "The user interrupts (Ctrl+C).",
    Error => ["error"]: "An error occurred anywhere.",
    Checkpoint => ["checkpoint"]: "Session state was checkpointed.",
    PostModelSwitch => ["model:switch", "ModelSwitch"]: "The active model changed.",
    MemoryUpdate => ["memory:update"]: "A memory file (AGENTS.md, CLAUDE.md…) changed.",
    // Claude Code 2.1.330's events beyond those above.
    PostToolBatch => []: "Every tool call of one model turn ran (`tool_calls`).",
    UserPromptExpansion => []: "A slash command or prompt template is about to be expanded.",
    Setup => []: "Claude Code's setup run (init or maintenance).",
    StopFailure => []: "The turn ended on an error (an API error) instead of stopping.",
    PreModelSwitch => []: "The active model is about to change; can block it.",
    TeammateIdle => []: "A teammate agent is about to go idle.",
    TaskCreated => []: "A task was created.",
    TaskCompleted => []: "A task is about to be marked completed.",
    Elicitation => []: "An MCP server asks the person for input.",
    ElicitationResult => []: "The person answered an MCP server's request for input.",
    ConfigChange => []: "A settings file changed during the session.",
    WorktreeCreate => []: "A git worktree is about to be created; a hook may say where.",
    WorktreeRemove => []: "A git worktree is removed.",
    InstructionsLoaded => []: "An instructions file (CLAUDE.md, rules) was loaded (`file_path`, `memory_type`, `load_reason`).",
    CwdChanged => []: "The working directory changed (`old_cwd`, `new_cwd`).",
    FileChanged => []: "A watched file changed.",
    DirectoryAdded => []: "A directory was added to the session.",
    MessageDisplay => []: "A chunk of an assistant message is displayed (`delta`; fires often).",
    // Claude Code 2.1.332's event beyond those above.
    PreSkillShellCommand => []:
        "Before a skill's or slash command's inline shell command runs (`tool_name: \"Bash\"`, `tool_input.command`, `command_name`); can block it.",
    // Gemini CLI 0.61's event with no Claude Code counterpart.
    BeforeToolSelection => []: "Gemini CLI: before the model is offered its tools.",
}

impl EventName {
    /// Whether the event carries a tool's output that hooks may replace
    /// (`modify_output`): PostToolUse only.
    pub fn has_tool_output(self) -> bool {
        self == EventName::PostToolUse
    }

    /// The field of the record a `modify` replaces, where the event has
    /// one: the tool's input before it runs (PreToolUse, and
    /// PermissionRequest, where the agent runs the new input if allowed),
    /// the text shown of a message (MessageDisplay's `delta`, displayed in
    /// its place), and the answers to an MCP server's question
    /// (Elicitation's `content`, sent with an accept).
    pub fn rewritable_field(self) -> Option<&'static str> {
        match self {
            EventName::PreToolUse
            | EventName::PermissionRequest
            | EventName::PreSkillShellCommand => Some("tool_input"),
            EventName::MessageDisplay => Some("delta"),
            EventName::Elicitation | EventName::ElicitationResult => Some("content"),
            _ => None,
        }
    }

    /// Whether the event is about one tool call (it has `tool_name` and
    /// `tool_input`, and tool matchers apply): PreToolUse, PostToolUse,
    /// PostToolUseFailure, and PreSkillShellCommand (a shell command run
    /// as a `Bash` call).
    pub fn has_tool(self) -> bool {
        matches!(
            self,
            EventName::PreToolUse
                | EventName::PostToolUse
                | EventName::PostToolUseFailure
                | EventName::PreSkillShellCommand
        )
    }

    /// Whether the event is a shell command about to run by another way
    /// than a tool call (a skill's inline `` !`cmd` ``): a PreToolUse hook
    /// whose matcher fits `Bash` sees it too, as a `Bash` call, so that
    /// one guard covers every way a shell command runs.
    pub fn is_other_shell(self) -> bool {
        self == EventName::PreSkillShellCommand
    }

    /// Whether the event asks leave for an action that has not happened
    /// yet (a tool call, a prompt, a permission): the events a broken setup
    /// must block rather than wave through.
    pub fn guards_action(self) -> bool {
        matches!(
            self,
            EventName::PreToolUse
                | EventName::PermissionRequest
                | EventName::UserPromptSubmit
                | EventName::UserPromptExpansion
                | EventName::PreModelSwitch
                | EventName::PreSkillShellCommand
        )
    }

    /// Whether what the event reports already happened, so that a deny
    /// cannot undo it and becomes feedback for the model instead: after a
    /// tool ran, and when the agent stops.
    pub fn already_happened(self) -> bool {
        self.tool_ran() || matches!(self, EventName::Stop | EventName::SubagentStop)
    }

    /// Whether a block of the event makes the agent go on working (Stop,
    /// SubagentStop): not a safer answer, so one an untrusted hook may not
    /// give.
    pub fn block_keeps_working(self) -> bool {
        matches!(self, EventName::Stop | EventName::SubagentStop)
    }

    /// Whether the tool already ran: PostToolUse and PostToolUseFailure,
    /// where a new tool input changes nothing.
    pub fn tool_ran(self) -> bool {
        matches!(self, EventName::PostToolUse | EventName::PostToolUseFailure)
    }

    /// Parse a canonical name or any alias; the error suggests the nearest
    /// known name.
    ///
    /// # Examples
    /// ```
    /// use wasm_hooks_core::EventName;
    /// assert_eq!("tool:pre_execute".parse::<EventName>().unwrap(), EventName::PreToolUse);
    /// assert!("PreToolUze".parse::<EventName>().unwrap_err().to_string().contains("PreToolUse"));
    /// ```
    pub fn parse(name: &str) -> Result<Self, UnknownEvent> {
        CATALOGUE
            .iter()
            .find(|(canonical, aliases)| canonical.as_str() == name || aliases.contains(&name))
            .map(|(canonical, _)| *canonical)
            .ok_or_else(|| UnknownEvent::new(name))
    }
}

impl std::str::FromStr for EventName {
    type Err = UnknownEvent;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for EventName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EventName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EventName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Self::parse(&name).map_err(serde::de::Error::custom)
    }
}

/// An event name that is neither canonical nor an alias.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown event `{name}`{}", suggestion.map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
pub struct UnknownEvent {
    /// The name as written.
    pub name: String,
    /// The nearest known name, when one is close.
    pub suggestion: Option<&'static str>,
}

impl UnknownEvent {
    pub(crate) fn new(name: &str) -> Self {
        let candidates = CATALOGUE
            .iter()
            .flat_map(|(c, aliases)| std::iter::once(c.as_str()).chain(aliases.iter().copied()));
        Self {
            name: name.to_owned(),
            suggestion: crate::suggest::nearest(name, candidates),
        }
    }
}

/// One lifecycle event: its canonical name and its JSON record.
///
/// The record is exactly what a command hook reads on stdin and a wasm hook
/// gets as `payload`: Claude Code's field names, with `hook_event_name`,
/// `session_id`, `timestamp` (RFC 3339) and `cwd` always present.
///
/// # Examples
/// ```
/// use serde_json::json;
/// use wasm_hooks_core::{Event, EventName};
///
/// let event = Event::pre_tool_use("Bash", json!({"command": "ls"}));
/// assert_eq!(event.name(), EventName::PreToolUse);
/// assert_eq!(event.tool_name(), Some("Bash"));
/// assert_eq!(event.record()["hook_event_name"], "PreToolUse");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    name: EventName,
    /// Shared, so a hook that keeps the record (a function of an
    /// embedding language) holds it without a copy; changed copy-on-write.
    record: std::sync::Arc<Map<String, Value>>,
}

/// Why a JSON value is not an event record.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EventError {
    /// The value is not a JSON object.
    #[error("an event must be a JSON object")]
    NotAnObject,
    /// `hook_event_name` is missing and no name was given.
    #[error("the event has no `hook_event_name` field")]
    MissingName,
    /// A field has the wrong JSON type.
    #[error("event field `{field}` must be {expected}")]
    FieldType {
        /// The field.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// The event name is not in the catalogue.
    #[error(transparent)]
    UnknownEvent(#[from] UnknownEvent),
}

impl Event {
    /// A new event with the required fields filled in: an empty session id,
    /// the current time, and the process's working directory.
    pub fn new(name: EventName) -> Self {
        Self::complete(name, Map::new())
    }

    /// `record` as the event `name`, with the required fields it lacks
    /// filled in (computed only when missing: agents send them).
    fn complete(name: EventName, mut record: Map<String, Value>) -> Self {
        if name != EventName::Unlisted {
            record.insert("hook_event_name".into(), name.as_str().into());
        }
        record.entry("session_id").or_insert_with(|| "".into());
        record
            .entry("timestamp")
            .or_insert_with(|| now_rfc3339().into());
        record.entry("cwd").or_insert_with(|| {
            std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default()
                .into()
        });
        Self {
            name,
            record: record.into(),
        }
    }

    /// A `PreToolUse` event for `tool` with this input.
    pub fn pre_tool_use(tool: &str, input: Value) -> Self {
        Self::new(EventName::PreToolUse)
            .with("tool_name", tool)
            .with("tool_input", input)
    }

    /// A `PostToolUse` event: `tool` ran with `input` and answered
    /// `response`.
    pub fn post_tool_use(tool: &str, input: Value, response: Value) -> Self {
        Self::new(EventName::PostToolUse)
            .with("tool_name", tool)
            .with("tool_input", input)
            .with("tool_response", response)
    }

    /// A `PostToolUseFailure` event: `tool` failed with `error`.
    pub fn post_tool_use_failure(tool: &str, input: Value, error: &str) -> Self {
        Self::new(EventName::PostToolUseFailure)
            .with("tool_name", tool)
            .with("tool_input", input)
            .with("error", error)
            .with("is_interrupt", false)
    }

    /// A `UserPromptSubmit` event.
    pub fn user_prompt_submit(prompt: &str) -> Self {
        Self::new(EventName::UserPromptSubmit).with("prompt", prompt)
    }

    /// A `SessionStart` event; `source` is `startup`, `resume`, `clear` or
    /// `compact`.
    pub fn session_start(source: &str) -> Self {
        Self::new(EventName::SessionStart).with("source", source)
    }

    /// A `SessionEnd` event, with the reason the session ended.
    pub fn session_end(reason: &str) -> Self {
        Self::new(EventName::SessionEnd).with("reason", reason)
    }

    /// A `Stop` event; `stop_hook_active` is true when the agent is already
    /// going on because a Stop hook blocked.
    pub fn stop(stop_hook_active: bool) -> Self {
        Self::new(EventName::Stop).with("stop_hook_active", stop_hook_active)
    }

    /// A `Notification` event.
    pub fn notification(message: &str, notification_type: &str) -> Self {
        Self::new(EventName::Notification)
            .with("message", message)
            .with("notification_type", notification_type)
    }

    /// An `Error` event; `severity` is e.g. `warning`, `error`, `fatal`.
    pub fn error(error_type: &str, message: &str, severity: &str) -> Self {
        Self::new(EventName::Error)
            .with("error_type", error_type)
            .with("error_message", message)
            .with("severity", severity)
    }

    /// A `Checkpoint` event.
    pub fn checkpoint(checkpoint_id: &str, checkpoint_type: &str, message_count: u64) -> Self {
        Self::new(EventName::Checkpoint)
            .with("checkpoint_id", checkpoint_id)
            .with("checkpoint_type", checkpoint_type)
            .with("message_count", message_count)
    }

    /// A `PostModelSwitch` event (the seeds' `ModelSwitch`).
    pub fn model_switch(old_model: &str, new_model: &str, reason: &str) -> Self {
        Self::new(EventName::PostModelSwitch)
            .with("old_model", old_model)
            .with("new_model", new_model)
            .with("reason", reason)
    }

    /// A `MemoryUpdate` event; `update_type` is e.g. `created`, `modified`,
    /// `deleted`.
    pub fn memory_update(file_path: &str, update_type: &str) -> Self {
        Self::new(EventName::MemoryUpdate)
            .with("file_path", file_path)
            .with("update_type", update_type)
    }

    /// A `PreCompact` event; `trigger` is `manual` or `auto`.
    pub fn pre_compact(trigger: &str) -> Self {
        Self::new(EventName::PreCompact).with("trigger", trigger)
    }

    /// A `PreModelRequest` event for `model`.
    pub fn pre_model_request(model: &str) -> Self {
        Self::new(EventName::PreModelRequest).with("model", model)
    }

    /// A `PostModelResponse` event for `model`, with the tokens used.
    pub fn post_model_response(model: &str, tokens: u64) -> Self {
        Self::new(EventName::PostModelResponse)
            .with("model", model)
            .with("tokens", tokens)
    }

    /// Read an event record (as captured from Claude Code, say). The name
    /// comes from `hook_event_name` (any alias is accepted and replaced by
    /// the canonical name); missing `session_id`, `timestamp` and `cwd` are
    /// filled in as [`Event::new`] does.
    ///
    /// # Errors
    /// When the value is not an object, has no known event name, or a known
    /// field has the wrong type.
    pub fn from_json(value: Value) -> Result<Self, EventError> {
        Self::read(value, |unknown| Err(unknown.into()))
    }

    /// Read an event record as an agent sent it: like [`Event::from_json`],
    /// but a name the catalogue does not know makes an
    /// [`EventName::Unlisted`] event (its own name kept in the record), for
    /// `*` hooks to see, instead of an error.
    ///
    /// # Errors
    /// When the value is not an object, has no name, or a known field has
    /// the wrong type.
    pub fn from_agent_json(value: Value) -> Result<Self, EventError> {
        Self::read(value, |unknown| {
            tracing::debug!("{unknown}: only `*` hooks see it");
            Ok(EventName::Unlisted)
        })
    }

    /// Read a record, with `unknown` deciding what an unknown name means.
    fn read(
        value: Value,
        unknown: impl FnOnce(UnknownEvent) -> Result<EventName, EventError>,
    ) -> Result<Self, EventError> {
        let Value::Object(record) = value else {
            return Err(EventError::NotAnObject);
        };
        let name = match record.get("hook_event_name") {
            None => return Err(EventError::MissingName),
            Some(Value::String(name)) => EventName::parse(name).or_else(unknown)?,
            Some(_) => {
                return Err(EventError::FieldType {
                    field: "hook_event_name",
                    expected: "a string",
                });
            }
        };
        Self::from_record(name, record)
    }

    /// Like [`Event::from_json`], with the name given (it overrides any
    /// `hook_event_name` in the record).
    ///
    /// # Errors
    /// When a known field has the wrong type.
    pub fn from_record(name: EventName, record: Map<String, Value>) -> Result<Self, EventError> {
        for (field, expected) in [
            ("session_id", "a string"),
            ("timestamp", "a string"),
            ("cwd", "a string"),
            ("tool_name", "a string"),
        ] {
            if record.get(field).is_some_and(|v| !v.is_string()) {
                return Err(EventError::FieldType { field, expected });
            }
        }
        Ok(Self::complete(name, record))
    }

    /// This event with `field` set to `value`.
    pub fn with(mut self, field: &str, value: impl Into<Value>) -> Self {
        self.record_mut().insert(field.to_owned(), value.into());
        self
    }

    /// This event as a hook written for a PreToolUse `Bash` call sees it
    /// when it is a shell command run another way
    /// ([`EventName::is_other_shell`]): named PreToolUse, its own name
    /// kept in `original_event_name`, every other field as it was (its
    /// `tool_name` is `Bash`, its `tool_input.command` the command); any
    /// other event as it is.
    pub fn as_tool_call(&self) -> std::borrow::Cow<'_, Event> {
        if !self.name.is_other_shell() {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut record = Map::clone(&self.record);
        record.insert("original_event_name".into(), self.name.as_str().into());
        record.insert(
            "hook_event_name".into(),
            EventName::PreToolUse.as_str().into(),
        );
        record.entry("tool_name").or_insert_with(|| "Bash".into());
        std::borrow::Cow::Owned(Event {
            name: EventName::PreToolUse,
            record: record.into(),
        })
    }

    /// The canonical event name.
    pub fn name(&self) -> EventName {
        self.name
    }

    /// The whole record.
    pub fn record(&self) -> &Map<String, Value> {
        &self.record
    }

    /// The whole record, shared: what a hook that keeps it holds, without
    /// a copy (a later rewrite of this event does not change it).
    pub fn shared_record(&self) -> &std::sync::Arc<Map<String, Value>> {
        &self.record
    }

    /// The record to change: copied first if a hook still holds it.
    fn record_mut(&mut self) -> &mut Map<String, Value> {
        std::sync::Arc::make_mut(&mut self.record)
    }

    fn str_field(&self, field: &str) -> Option<&str> {
        self.record.get(field).and_then(Value::as_str)
    }

    /// The agent's session identifier.
    pub fn session_id(&self) -> &str {
        self.str_field("session_id").unwrap_or_default()
    }

    /// When the event fired, RFC 3339.
    pub fn timestamp(&self) -> &str {
        self.str_field("timestamp").unwrap_or_default()
    }

    /// The agent's working directory, if known.
    pub fn cwd(&self) -> Option<&str> {
        self.str_field("cwd").filter(|c| !c.is_empty())
    }

    /// The tool concerned, for tool events.
    pub fn tool_name(&self) -> Option<&str> {
        self.str_field("tool_name")
    }

    /// What a hook group's `matcher` is compared with, as Claude Code
    /// 2.1.330 does: the tool name for tool and permission events;
    /// `command_name` for UserPromptExpansion; `source` for SessionStart,
    /// ConfigChange and DirectoryAdded; `reason` for SessionEnd; `trigger`
    /// for Setup and compaction; `to_model` for model switches;
    /// `notification_type`; StopFailure's `error`; a subagent's
    /// `agent_type`; an elicitation's `mcp_server_name`; InstructionsLoaded's
    /// `load_reason`; FileChanged's file name. Other events have none (only
    /// `*` groups match them).
    pub fn subject(&self) -> Option<&str> {
        let field = match self.name {
            EventName::UserPromptExpansion => "command_name",
            EventName::SessionStart | EventName::ConfigChange | EventName::DirectoryAdded => {
                "source"
            }
            EventName::SessionEnd => "reason",
            EventName::Setup | EventName::PreCompact | EventName::PostCompact => "trigger",
            EventName::PreModelSwitch | EventName::PostModelSwitch => "to_model",
            EventName::Notification => "notification_type",
            EventName::StopFailure => "error",
            EventName::SubagentStart | EventName::SubagentStop => "agent_type",
            EventName::Elicitation | EventName::ElicitationResult => "mcp_server_name",
            EventName::InstructionsLoaded => "load_reason",
            EventName::FileChanged => {
                return self
                    .str_field("file_path")
                    .map(|path| path.rsplit('/').next().unwrap_or(path));
            }
            _ => "tool_name",
        };
        self.str_field(field)
    }

    /// The tool's input, for tool events.
    pub fn tool_input(&self) -> Option<&Value> {
        self.record.get("tool_input")
    }

    /// Replace the tool's input (what a `modify` answer does).
    pub fn set_tool_input(&mut self, input: Value) {
        self.set_field("tool_input", input);
    }

    /// Replace one field of the record (what a `modify` answer does to
    /// the event's [`EventName::rewritable_field`]).
    pub fn set_field(&mut self, field: &str, value: Value) {
        self.record_mut().insert(field.to_owned(), value);
    }

    /// Name the agent's project directory in the record as `project_dir`
    /// (hooks then know it, not only the `cwd`), unless the agent did.
    pub fn set_project_dir(&mut self, dir: &std::path::Path) {
        self.record_mut()
            .entry("project_dir")
            .or_insert_with(|| dir.display().to_string().into());
    }

    /// The tool's output, for PostToolUse.
    pub fn tool_response(&self) -> Option<&Value> {
        self.record.get("tool_response")
    }

    /// Replace the tool's output (what a `modify_output` answer does).
    pub fn set_tool_response(&mut self, output: Value) {
        self.record_mut().insert("tool_response".into(), output);
    }

    /// The record as JSON text.
    pub fn to_json_string(&self) -> String {
        // A map of JSON values always serializes.
        serde_json::to_string(&*self.record).unwrap_or_default()
    }
}

impl<'e> From<&'e Event> for std::borrow::Cow<'e, Event> {
    fn from(event: &'e Event) -> Self {
        std::borrow::Cow::Borrowed(event)
    }
}

impl From<Event> for std::borrow::Cow<'_, Event> {
    fn from(event: Event) -> Self {
        std::borrow::Cow::Owned(event)
    }
}

/// The record field a short name in a hook file stands for: `tool` is
/// `tool_name`, `args` and `tool_args` are `tool_input`, `result` is
/// `tool_response`, `user_input` is `prompt`; any other name stands for
/// itself. Templates and inline rules both read fields through this.
///
/// # Examples
/// ```
/// assert_eq!(wasm_hooks_core::record_field("args"), "tool_input");
/// assert_eq!(wasm_hooks_core::record_field("cwd"), "cwd");
/// ```
pub fn record_field(name: &str) -> &str {
    match name {
        "tool" => "tool_name",
        "args" | "tool_args" => "tool_input",
        "result" => "tool_response",
        "user_input" => "prompt",
        other => other,
    }
}

/// A JSON value as a person reads it: a string as it is (not copied),
/// anything else as JSON text.
pub fn plain_text(value: &Value) -> std::borrow::Cow<'_, str> {
    match value {
        Value::String(text) => text.into(),
        other => other.to_string().into(),
    }
}

/// The current time in RFC 3339, to the millisecond (UTC).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// A time given in milliseconds since the Unix epoch (Copilot CLI's
/// `timestamp`), in RFC 3339 with milliseconds.
///
/// # Examples
/// ```
/// assert_eq!(wasm_hooks_core::rfc3339_of_millis(1_795_600_000_123), "2026-11-25T09:46:40.123Z");
/// ```
pub fn rfc3339_of_millis(millis: u64) -> String {
    let time = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(millis);
    humantime::format_rfc3339_millis(time).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_canonical_name_and_alias_parses_to_its_event() {
        for (canonical, aliases) in CATALOGUE {
            assert_eq!(EventName::parse(canonical.as_str()), Ok(*canonical));
            for alias in *aliases {
                assert_eq!(EventName::parse(alias), Ok(*canonical), "{alias}");
            }
        }
    }

    #[test]
    fn names_are_unique_across_the_catalogue() {
        let mut all: Vec<&str> = CATALOGUE
            .iter()
            .flat_map(|(c, a)| std::iter::once(c.as_str()).chain(a.iter().copied()))
            .collect();
        let count = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), count);
    }

    #[test]
    fn unknown_names_suggest_the_nearest() {
        let err = EventName::parse("PreToolUze").unwrap_err();
        assert_eq!(err.suggestion, Some("PreToolUse"));
        assert_eq!(EventName::parse("zzzzzzzzzz").unwrap_err().suggestion, None);
    }

    #[test]
    fn claude_code_fixture_reads_as_an_event() {
        let raw = include_str!("../../../tests/fixtures/claude-code-2.1.197/PreToolUse.json");
        let event = Event::from_json(serde_json::from_str(raw).unwrap()).unwrap();
        assert_eq!(event.name(), EventName::PreToolUse);
        assert_eq!(event.tool_name(), Some("Bash"));
        assert_eq!(
            event.tool_input(),
            Some(&json!({"command": "echo hi", "description": "fake model runs a command"}))
        );
        assert_eq!(event.session_id(), "81b1f0d6-d2d4-450c-a4d0-32866ddeb69d");
        assert_eq!(event.cwd(), Some("/home/dev/project"));
        assert!(
            !event.timestamp().is_empty(),
            "missing timestamp is filled in"
        );
        assert_eq!(
            event.record()["effort"],
            json!({"level": "high"}),
            "unknown fields are kept"
        );
    }

    #[test]
    fn typed_constructors_fill_the_protocol_fields() {
        let e = Event::post_tool_use("Write", json!({"file_path": "a"}), json!({"ok": true}));
        assert_eq!(
            (e.name(), e.subject()),
            (EventName::PostToolUse, Some("Write"))
        );
        assert_eq!(e.record()["tool_response"], json!({"ok": true}));
        assert_eq!(Event::session_start("resume").subject(), Some("resume"));
        assert_eq!(Event::session_end("logout").subject(), Some("logout"));
        assert_eq!(
            Event::notification("hi", "idle_prompt").subject(),
            Some("idle_prompt")
        );
        assert_eq!(Event::pre_compact("auto").subject(), Some("auto"));
        let subject = |name: EventName, field: &str, value: &str| {
            Event::new(name)
                .with(field, value)
                .subject()
                .map(str::to_owned)
        };
        for (name, field) in [
            (EventName::UserPromptExpansion, "command_name"),
            (EventName::ConfigChange, "source"),
            (EventName::Setup, "trigger"),
            (EventName::PreModelSwitch, "to_model"),
            (EventName::StopFailure, "error"),
            (EventName::SubagentStart, "agent_type"),
            (EventName::Elicitation, "mcp_server_name"),
            (EventName::InstructionsLoaded, "load_reason"),
        ] {
            assert_eq!(subject(name, field, "x").as_deref(), Some("x"), "{name}");
        }
        assert_eq!(
            subject(EventName::FileChanged, "file_path", "/p/src/.env").as_deref(),
            Some(".env")
        );
        let e = Event::model_switch("a", "b", "quota");
        assert_eq!(
            (
                e.record()["old_model"].as_str(),
                e.record()["new_model"].as_str()
            ),
            (Some("a"), Some("b"))
        );
        assert_eq!(
            Event::checkpoint("c1", "auto", 12).record()["message_count"],
            12
        );
        assert_eq!(
            Event::memory_update("CLAUDE.md", "modified").record()["file_path"],
            "CLAUDE.md"
        );
        assert_eq!(
            Event::error("io", "disk full", "fatal").record()["error_message"],
            "disk full"
        );
        assert_eq!(Event::post_model_response("m", 42).record()["tokens"], 42);
        assert_eq!(Event::stop(true).record()["stop_hook_active"], true);
        for e in [
            Event::user_prompt_submit("x"),
            Event::pre_model_request("m"),
            Event::stop(false),
        ] {
            for field in ["hook_event_name", "session_id", "timestamp", "cwd"] {
                assert!(e.record().contains_key(field), "{field}");
            }
        }
    }

    #[test]
    fn aliases_in_records_become_canonical() {
        let event = Event::from_json(json!({"hook_event_name": "BeforeTool"})).unwrap();
        assert_eq!(event.record()["hook_event_name"], "PreToolUse");
    }

    #[test]
    fn bad_records_say_what_is_wrong() {
        let future = json!({"hook_event_name": "SomethingNew2099", "session_id": "s"});
        assert!(matches!(
            Event::from_json(future.clone()),
            Err(EventError::UnknownEvent(_))
        ));
        let unlisted = Event::from_agent_json(future).unwrap();
        assert_eq!(unlisted.name(), EventName::Unlisted);
        assert_eq!(unlisted.record()["hook_event_name"], "SomethingNew2099");
        assert!(
            EventName::parse("Unlisted").is_err(),
            "no hook file names it"
        );
        assert_eq!(Event::from_json(json!([])), Err(EventError::NotAnObject));
        assert_eq!(Event::from_json(json!({})), Err(EventError::MissingName));
        let err = Event::from_json(json!({"hook_event_name": "Stop", "cwd": 3})).unwrap_err();
        assert_eq!(err.to_string(), "event field `cwd` must be a string");
    }
}

//! GitHub Copilot CLI's own hook format (camelCase events in
//! `.github/hooks/*.json`, `~/.copilot/hooks/*.json` and the machine's
//! `policy.d`). Its input does not name the event (but `notification`):
//! the installed command says which (`hook --agent-event preToolUse`).
//!
//! Read onto the catalogue: `sessionId` is `session_id`, `timestamp` (ms)
//! becomes RFC 3339 (the original kept in `agent_timestamp`), `toolName`
//! is renamed as Copilot itself renames for Claude-format hooks (`bash` is
//! `Bash`, `view` `Read`, `create` `Write`, `edit` `Edit`) with the
//! original in `agent_tool_name`, `toolArgs` (`toolInput` on
//! `permissionRequest`) is `tool_input`, `toolResult` is `tool_response`;
//! `traceparent` (sent when Copilot's OpenTelemetry is on) stays. Its
//! `agentStop` carries no last assistant message: it is read from the end
//! of the session's `events.jsonl` (`transcriptPath`), where Copilot CLI
//! wrote it before the hook ran.
//!
//! Answers: `permissionDecision` allow / deny / ask with
//! `permissionDecisionReason`, and `modifiedArgs` for a rewrite
//! (`preToolUse`); `behavior` on `permissionRequest`; `decision: "block"`
//! with a `reason` on `userPromptSubmitted` (the prompt is not sent),
//! `agentStop` / `subagentStop` (another turn) and `postToolUse` (the
//! model is told the result was blocked); `modifiedResult` on
//! `postToolUse`; `additionalContext` where Copilot CLI reads it (observed:
//! `preToolUse`, `postToolUse`, `postToolUseFailure`,
//! `userPromptSubmitted`, `sessionStart`, `subagentStart`).

use super::facts::{AgentFacts, HookFile, SettingsShape};
use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value, json};

use wasm_hooks_core::{Event, EventError, EventName, Outcome, Verdict, plain_text};

use super::answer::PermissionWord;
use super::{Answer, Draft, agent_name, blocking_reason, named};

/// Copilot CLI's events and the catalogue's.
pub(super) const EVENTS: &[(&str, EventName)] = &[
    ("sessionStart", EventName::SessionStart),
    ("sessionEnd", EventName::SessionEnd),
    ("userPromptSubmitted", EventName::UserPromptSubmit),
    ("preToolUse", EventName::PreToolUse),
    ("postToolUse", EventName::PostToolUse),
    ("postToolUseFailure", EventName::PostToolUseFailure),
    ("permissionRequest", EventName::PermissionRequest),
    ("agentStop", EventName::Stop),
    ("subagentStart", EventName::SubagentStart),
    ("subagentStop", EventName::SubagentStop),
    ("preCompact", EventName::PreCompact),
    ("errorOccurred", EventName::Error),
    ("notification", EventName::Notification),
];

/// Copilot CLI's tools and the names it gives them for Claude-format hooks.
const TOOLS: &[(&str, &str)] = &[
    ("bash", "Bash"),
    ("powershell", "Bash"),
    ("view", "Read"),
    ("create", "Write"),
    ("edit", "Edit"),
    ("str_replace_editor", "Edit"),
    ("apply_patch", "Edit"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("web_fetch", "WebFetch"),
    ("task", "Task"),
];

/// The fields of Copilot CLI's file tools and the canonical names a guard
/// keyed on Claude Code's tools reads (`protect-paths` on `file_path`):
/// Copilot 1.0.102 sends `create {path, file_text}`, `edit {path, old_str,
/// new_str}`, `view {path}`. Both names are in the input a hook sees; a
/// rewrite goes back to Copilot's ([`as_the_tool_takes_it`]).
const TOOL_FIELDS: &[(&str, &str)] = &[
    ("path", "file_path"),
    ("file_text", "content"),
    ("old_str", "old_string"),
    ("new_str", "new_string"),
];

/// camelCase fields and their Claude Code names.
const FIELDS: &[(&str, &str)] = &[
    ("sessionId", "session_id"),
    ("toolName", "tool_name"),
    ("toolArgs", "tool_input"),
    ("toolInput", "tool_input"),
    ("toolResult", "tool_response"),
    ("transcriptPath", "transcript_path"),
    ("stopReason", "stop_reason"),
    ("agentName", "agent_type"),
    ("customInstructions", "custom_instructions"),
    ("initialPrompt", "initial_prompt"),
];

/// Copilot CLI's answer.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct CopilotAnswer {
    #[serde(skip_serializing_if = "Option::is_none")]
    permission_decision: Option<PermissionWord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    permission_decision_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    modified_args: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    behavior: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decision: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    modified_result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    additional_context: Option<String>,
}

/// Copilot CLI's payload, in its own shape or in Claude's format (from a
/// PascalCase key, or its run of Claude Code's hooks), read onto the
/// catalogue.
pub(super) fn decode(mut value: Value) -> Result<Event, EventError> {
    name_own_shape(&mut value);
    let (mut record, agent) = match named(value) {
        Ok(named) => named,
        Err(read) => return read,
    };
    let own = EVENTS
        .iter()
        .find(|(copilot, _)| *copilot == agent)
        .map(|(_, name)| *name);
    let Some(name) = own.or_else(|| {
        // Copilot's own input under a Claude name (`notification` says
        // `"hook_event_name": "Notification"` beside its camelCase fields).
        record
            .contains_key("sessionId")
            .then(|| EventName::parse(&agent).unwrap_or(EventName::Unlisted))
    }) else {
        return Event::from_agent_json(in_claude_format(record));
    };
    record.insert("agent_event_name".into(), agent.into());
    for (camel, snake) in FIELDS {
        if let Some(value) = record.remove(*camel) {
            record.entry(*snake).or_insert(value);
        }
    }
    if let Some(millis) = record.get("timestamp").and_then(Value::as_u64) {
        record.insert("agent_timestamp".into(), millis.into());
        record.insert(
            "timestamp".into(),
            wasm_hooks_core::rfc3339_of_millis(millis).into(),
        );
    }
    if let Some(Value::String(text)) = record.get("tool_input")
        && let Ok(input) = super::event_json(text)
    {
        record.insert("tool_input".into(), input);
    }
    rename_tool(&mut record);
    if name == EventName::Stop {
        last_assistant_message(&mut record);
    }
    Event::from_record(name, record)
}

/// Copilot CLI's own camelCase input on its Claude path (the repository's
/// `.claude/settings.json`), named: its PermissionRequest (`hookName`) and
/// SubagentStart (`agentName`, no name at all) come that way.
fn name_own_shape(value: &mut Value) {
    let Value::Object(record) = value else {
        return;
    };
    if record.contains_key("hook_event_name") || !record.contains_key("sessionId") {
        return;
    }
    let name = match record.get("hookName").and_then(Value::as_str) {
        Some(name) => name.to_owned(),
        None if record.contains_key("agentName") => "subagentStart".to_owned(),
        None => return,
    };
    record.insert("hook_event_name".into(), name.into());
}

/// Whether `event` is in Copilot CLI's own shape: [`decode`] keeps the
/// name of such an event, and of no other; [`own_event`] makes one.
fn in_own_shape(event: &Event) -> bool {
    event.record().contains_key("agent_event_name")
}

/// The event `name` in Copilot CLI's own shape, as its installed entries
/// send it: for an answer made without a payload (the hooks could not
/// run).
pub(super) fn own_event(name: EventName) -> Event {
    let own = EVENTS
        .iter()
        .find(|(_, catalogue)| *catalogue == name)
        .map_or(name.as_str(), |(own, _)| own);
    let mut record = Map::new();
    record.insert("agent_event_name".into(), own.into());
    Event::from_record(name, record).unwrap_or_else(|_| Event::new(name))
}

/// Copilot CLI's Claude-format payload made whole: its PostToolUse's
/// `tool_result` is also the `tool_response` Claude Code sends, text typed
/// into a shell is a Bash `command`, and its Stop (which has its own
/// `stop_reason`) gets the last assistant message from the transcript.
fn in_claude_format(mut record: Map<String, Value>) -> Value {
    if !record.contains_key("tool_response")
        && let Some(result) = record.get("tool_result").cloned()
    {
        record.insert("tool_response".into(), result);
    }
    typed_into_a_shell(&mut record);
    if record.get("hook_event_name").is_some_and(|n| n == "Stop")
        && record.contains_key("stop_reason")
    {
        last_assistant_message(&mut record);
    }
    Value::Object(record)
}

/// The most of a transcript's end read for its last assistant message.
const TRANSCRIPT_TAIL: u64 = 1 << 20;

/// How often, and how long apart, the transcript is read again while the
/// turn's answer is not in it yet: Copilot CLI writes it as the hook
/// starts, not always before (seen: 3 ms after).
const TRANSCRIPT_TRIES: u32 = 10;
const TRANSCRIPT_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

/// Fill in `last_assistant_message` from the end of Copilot CLI's
/// `events.jsonl` (`transcript_path`): the `data.content` of the last
/// `assistant.message` after the last `user.message`. Nothing when the
/// record has one, or the file cannot be read or holds none (after a few
/// short waits for it to be written).
fn last_assistant_message(record: &mut Map<String, Value>) {
    if record.contains_key("last_assistant_message") {
        return;
    }
    let Some(path) = record.get("transcript_path").and_then(Value::as_str) else {
        return;
    };
    let path = std::path::PathBuf::from(path);
    for attempt in 0..TRANSCRIPT_TRIES {
        match turn_answer(&path) {
            Some(Some(said)) => {
                record.insert("last_assistant_message".into(), said.into());
                return;
            }
            Some(None) if attempt + 1 < TRANSCRIPT_TRIES => std::thread::sleep(TRANSCRIPT_WAIT),
            _ => return,
        }
    }
}

/// The content of the last `assistant.message` after the last
/// `user.message` in the transcript's tail: `None` when it cannot be read,
/// `Some(None)` when the turn's answer (or the file) is not there (yet).
fn turn_answer(path: &std::path::Path) -> Option<Option<String>> {
    use std::io::{Read as _, Seek as _};
    // A regular file only: opening a FIFO or a terminal would wait forever.
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(None),
        _ => return None,
    }
    let mut file = std::fs::File::open(path).ok()?;
    let length = file.metadata().map_or(0, |m| m.len());
    file.seek(std::io::SeekFrom::Start(
        length.saturating_sub(TRANSCRIPT_TAIL),
    ))
    .ok()?;
    let mut bytes = Vec::new();
    file.take(TRANSCRIPT_TAIL).read_to_end(&mut bytes).ok()?;
    // The cut may fall inside a character; only whole lines count.
    let tail = String::from_utf8_lossy(&bytes);
    for line in tail.lines().rev() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match entry["type"].as_str() {
            Some("assistant.message") => {
                return Some(entry["data"]["content"].as_str().map(str::to_owned));
            }
            Some("user.message") => return Some(None),
            _ => {}
        }
    }
    Some(None)
}

fn rename_tool(record: &mut Map<String, Value>) {
    let canonical = record
        .get("tool_name")
        .and_then(Value::as_str)
        .and_then(|tool| TOOLS.iter().find(|(copilot, _)| *copilot == tool));
    if let Some((copilot, canonical)) = canonical {
        record.insert("agent_tool_name".into(), (*copilot).into());
        record.insert("tool_name".into(), (*canonical).into());
        if let Some(Value::Object(input)) = record.get_mut("tool_input") {
            for (own, named) in TOOL_FIELDS {
                if let Some(value) = input.get(*own).cloned() {
                    input.entry(*named).or_insert(value);
                }
            }
        }
    }
    mcp_tool(record);
    named_mcp_tool(record);
    typed_into_a_shell(record);
}

/// An MCP tool in `preToolUse` and `postToolUse`, which Copilot CLI names
/// `<server>-<tool>`: named as Claude Code does, split at a server of
/// Copilot's MCP configuration ([`super::mcp_names::copilot_servers`]).
fn named_mcp_tool(record: &mut Map<String, Value>) {
    if record.contains_key("agent_tool_name") {
        return;
    }
    let Some(tool) = record.get("tool_name").and_then(Value::as_str) else {
        return;
    };
    if !tool.contains('-') {
        return;
    }
    let cwd = record
        .get("cwd")
        .and_then(Value::as_str)
        .map_or_else(|| std::path::PathBuf::from("."), std::path::PathBuf::from);
    let servers = super::mcp_names::copilot_servers(&cwd);
    if let Some(canonical) = super::mcp_names::canonical(tool, '-', &servers) {
        record.insert("agent_tool_name".into(), tool.to_owned().into());
        record.insert("tool_name".into(), canonical.into());
    }
}

/// Name an MCP tool call as Claude Code does (`mcp__<server>__<tool>`),
/// so that a matcher written the Claude Code way fits it: Copilot CLI's
/// `preMcpToolCall` names the server (`serverName`) and the tool apart,
/// with the arguments in `arguments`.
fn mcp_tool(record: &mut Map<String, Value>) {
    let Some(server) = record.get("serverName").and_then(Value::as_str) else {
        return;
    };
    let server = server.to_owned();
    let Some(tool) = record.get("tool_name").and_then(Value::as_str) else {
        return;
    };
    let canonical = super::mcp_tool_name(&server, tool);
    record.insert("agent_tool_name".into(), tool.to_owned().into());
    record.insert("tool_name".into(), canonical.into());
    if let Some(arguments) = record.remove("arguments") {
        record.entry("tool_input").or_insert(arguments);
    }
}

/// Copilot CLI's tools that type text into a shell it started earlier
/// (`{shellId, input}`): a way to run a command no `bash` call shows.
const SHELL_INPUT_TOOLS: &[&str] = &["write_bash", "write_powershell"];

/// Read a call typing into a running shell as the `Bash` call it is, with
/// the text typed as its `command`, so that a Bash guard sees it (the
/// original name stays in `agent_tool_name`, the input's own fields stay).
fn typed_into_a_shell(record: &mut Map<String, Value>) {
    let Some(tool) = record
        .get("tool_name")
        .and_then(Value::as_str)
        .filter(|tool| SHELL_INPUT_TOOLS.contains(tool))
        .map(str::to_owned)
    else {
        return;
    };
    let Some(Value::Object(input)) = record.get_mut("tool_input") else {
        return;
    };
    if let Some(typed) = input.get("input").cloned() {
        input.insert("command".into(), typed);
    }
    record.insert("agent_tool_name".into(), tool.into());
    record.insert("tool_name".into(), "Bash".into());
}

/// A rewritten input as Copilot CLI's tool takes it: for a call typing
/// into a shell, the rewritten `command` is what is typed.
fn as_the_tool_takes_it<'a>(event: &Event, input: &'a Value) -> Cow<'a, Value> {
    let tool = event
        .record()
        .get("agent_tool_name")
        .and_then(Value::as_str);
    let typed = tool.is_some_and(|tool| SHELL_INPUT_TOOLS.contains(&tool));
    let file_tool = tool.is_some_and(|tool| ["create", "edit", "view"].contains(&tool));
    if !typed && !file_tool {
        return Cow::Borrowed(input);
    }
    let mut input = input.clone();
    if let Some(object) = input.as_object_mut() {
        if typed && let Some(command) = object.remove("command") {
            object.insert("input".into(), command);
        }
        if file_tool {
            // The canonical names a hook rewrote go back to Copilot's.
            for (own, named) in TOOL_FIELDS {
                if let Some(value) = object.remove(*named) {
                    object.insert((*own).into(), value);
                }
            }
        }
    }
    Cow::Owned(input)
}

/// Copilot CLI's answer to `event`: in its own shape, or, to its
/// Claude-format payloads, Claude Code's answer with a rewritten input in
/// the tool's own shape.
pub(super) fn encode(event: &Event, outcome: &Outcome) -> Answer {
    if !in_own_shape(event) {
        let rewritten = outcome
            .updated_input
            .as_ref()
            .map(|input| as_the_tool_takes_it(event, input));
        if let Some(Cow::Owned(input)) = rewritten {
            let outcome = Outcome {
                updated_input: Some(input),
                ..outcome.clone()
            };
            return super::claude::encode(event, &outcome, super::claude::Dialect::Claude);
        }
        return super::claude::encode(event, outcome, super::claude::Dialect::Claude);
    }
    let name = event.name();
    let agent = agent_name(event);
    let mut draft = Draft::new(outcome, agent);
    let mut answer = CopilotAnswer::default();
    let blocking = blocking_reason(&outcome.verdict, "Copilot CLI hooks");
    match name {
        EventName::PreToolUse => pre_tool_use(event, outcome, &mut answer),
        EventName::PermissionRequest => match (&outcome.verdict, blocking) {
            (_, Some(reason)) => {
                answer.behavior = Some("deny");
                answer.message = Some(reason);
            }
            (Verdict::Allow { .. }, None) if outcome.updated_input.is_none() => {
                answer.behavior = Some("allow");
            }
            _ => {}
        },
        EventName::Stop
        | EventName::SubagentStop
        | EventName::UserPromptSubmit
        | EventName::PostToolUse
        | EventName::PostToolUseFailure => {
            if let Some(reason) = blocking {
                answer.decision = Some("block");
                answer.reason = Some(reason);
            }
        }
        _ => {
            if let Some(reason) = blocking {
                draft.unblockable(&reason);
            }
        }
    }
    if let Some(output) = &outcome.updated_output {
        answer.modified_result = Some(json!({
            "resultType": "success",
            "textResultForLlm": plain_text(output),
        }));
    }
    answer.additional_context = draft.context(matches!(
        name,
        EventName::PreToolUse
            | EventName::PostToolUse
            | EventName::PostToolUseFailure
            | EventName::UserPromptSubmit
            | EventName::SessionStart
            | EventName::SubagentStart
    ));
    draft.unsaid_stop();
    draft.unsaid_messages();
    draft.finish(&answer)
}

/// `preToolUse`: a deny, an ask, an allow that saw the final input; a
/// rewrite as `modifiedArgs`, with `allow` when a hook approved it.
fn pre_tool_use(event: &Event, outcome: &Outcome, answer: &mut CopilotAnswer) {
    let rewritten = outcome
        .updated_input
        .as_ref()
        .map(|input| as_the_tool_takes_it(event, input).into_owned());
    let (word, reason) = match &outcome.verdict {
        Verdict::Deny { reason } => (PermissionWord::Deny, Some(reason.clone())),
        Verdict::Ask(approval) => (PermissionWord::Ask, Some(approval.prompt.clone())),
        Verdict::Allow { .. } | Verdict::Proceed if rewritten.is_some() => {
            answer.modified_args = rewritten;
            if outcome.rewrite_approved {
                answer.permission_decision = Some(PermissionWord::Allow);
            }
            return;
        }
        Verdict::Allow { reason } => (PermissionWord::Allow, reason.clone()),
        Verdict::Proceed => return,
    };
    answer.permission_decision = Some(word);
    answer.permission_decision_reason = reason;
}

/// Copilot CLI 1.0.102's events, by its own names, but the two that only report (`userPromptTransformed`, `errorOccurred`).
const INSTALLED_EVENTS: &[&str] = &[
    "preToolUse",
    "permissionRequest",
    "postToolUse",
    "postToolUseFailure",
    "userPromptSubmitted",
    "agentStop",
    "subagentStart",
    "subagentStop",
    "sessionStart",
    "sessionEnd",
    "preCompact",
    "notification",
];

/// The command entry `install` writes: no shell, the program and its
/// arguments word by word, told the event (which its input does not name).
fn command_entry(command: &str, event: &str, _guards: bool) -> Vec<(&'static str, Value)> {
    let mut words = shlex::split(command).unwrap_or_default().into_iter();
    let program = words.next().unwrap_or_default();
    let args: Vec<Value> = words
        .chain(["--agent-event".to_owned(), event.to_owned()])
        .map(Value::from)
        .collect();
    vec![
        ("type", "command".into()),
        ("exec", program.into()),
        ("args", args.into()),
        ("timeoutSec", super::settings::AGENT_TIMEOUT_SECS.into()),
    ]
}

/// What wasm-hooks knows of Copilot CLI as a program (see [`AgentFacts`]).
pub(super) const FACTS: AgentFacts = AgentFacts {
    name: "Copilot CLI",
    program: "copilot",
    driven: "1.0.102",
    settings: ".github/hooks/wasm-hooks.json",
    local_settings: Some("wasm-hooks.local.json"),
    user_settings: ".copilot/hooks/wasm-hooks.json",
    user_settings_variable: Some(("COPILOT_HOME", "hooks/wasm-hooks.json")),
    events: INSTALLED_EVENTS,
    entries_fail_closed: true,
    next_step: (
        "next: Copilot CLI reads the repository's hooks when a session starts (in `copilot -p`, only with GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true); note: a hook that times out lets the tool run there, so keep slow hooks under the deadline",
        "next: Copilot CLI reads the hooks when a session starts; note: a hook that times out lets the tool run there, so keep slow hooks under the deadline",
    ),
    unguarded: Some(
        "Copilot CLI's interactive `!command` runs in your shell with no hook, and its HTTP hooks let the tool run when the server fails (this command install blocks instead)",
    ),
    importable: false,
    http_hooks: false,
    hook_file: Some(HookFile {
        shape: SettingsShape::Flat,
        command_entry,
    }),
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Every JSON payload under `tests/fixtures/<dir>`.
    fn payloads(dir: &str) -> Vec<(std::path::PathBuf, Value)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures")
            .join(dir);
        let mut found = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                found.push((path, value));
            }
        }
        assert!(!found.is_empty(), "no payloads in {}", dir.display());
        found
    }

    /// The Claude Code path is read by two agents: each payload goes to its
    /// sender's code, and a Claude Code payload is read as it came.
    #[test]
    fn a_claude_code_event_never_passes_through_copilots_code() {
        use crate::Protocol;
        for version in [
            "claude-code-2.1.197",
            "claude-code-2.1.330",
            "claude-code-2.1.332",
        ] {
            for (path, payload) in payloads(version) {
                let (sender, event) = Protocol::Claude.read(payload.clone()).unwrap();
                assert_eq!(sender, Protocol::Claude, "{}", path.display());
                // As it came, but for the time of reading every event is
                // given.
                let mut read = event.record().clone();
                assert!(read.remove("timestamp").is_some(), "{}", path.display());
                assert_eq!(Some(&read), payload.as_object(), "{}", path.display());
            }
        }
        for (path, payload) in payloads("copilot-1.0.102/claude-format") {
            assert_eq!(
                Protocol::Claude.sender(&payload),
                Protocol::Copilot,
                "{}",
                path.display()
            );
        }
    }

    #[test]
    fn copilots_own_payload_is_read_onto_the_catalogue() {
        let event = decode(json!({"hook_event_name": "preToolUse", "sessionId": "s1",
            "timestamp": 1_795_600_000_123_u64, "cwd": "/p", "toolName": "bash",
            "toolArgs": "{\"command\": \"rm -rf victim\"}", "traceparent": "00-ab-cd-01"}))
        .unwrap();
        assert_eq!(event.name(), EventName::PreToolUse);
        assert_eq!(event.tool_name(), Some("Bash"));
        assert_eq!(event.record()["agent_tool_name"], "bash");
        assert_eq!(
            event.record()["tool_input"],
            json!({"command": "rm -rf victim"})
        );
        assert_eq!(event.session_id(), "s1");
        assert_eq!(event.timestamp(), "2026-11-25T09:46:40.123Z");
        assert_eq!(event.record()["traceparent"], "00-ab-cd-01");
        let deny = Outcome::denied("no");
        assert_eq!(
            encode(&event, &deny).body,
            json!({"permissionDecision": "deny", "permissionDecisionReason": "no"})
        );
        let mut rewritten = Outcome::proceed();
        rewritten.updated_input = Some(json!({"command": "echo rewritten"}));
        assert_eq!(
            encode(&event, &rewritten).body,
            json!({"modifiedArgs": {"command": "echo rewritten"}})
        );
    }

    #[test]
    fn copilots_own_shape_on_its_claude_path_is_read_and_answered_in_that_shape() {
        use crate::Protocol;
        let request = json!({"hookName": "permissionRequest", "sessionId": "s",
            "timestamp": 1_795_629_415_274_u64, "cwd": "/p", "toolName": "bash",
            "toolInput": {"command": "rm -rf victim"}, "permissionSuggestions": []});
        let (protocol, event) = Protocol::Claude.read(request).unwrap();
        assert_eq!(protocol, Protocol::Copilot);
        assert_eq!(event.name(), EventName::PermissionRequest);
        assert_eq!(event.tool_name(), Some("Bash"));
        let deny = Outcome::denied("no");
        assert_eq!(
            protocol.encode(&event, &deny).body,
            json!({"behavior": "deny", "message": "no"})
        );
        let subagent = json!({"sessionId": "s", "timestamp": 1_u64, "cwd": "/p",
            "agentName": "explore", "agent_id": "a1", "agent_type": "explore"});
        let (_, event) = Protocol::Claude.read(subagent).unwrap();
        assert_eq!(event.name(), EventName::SubagentStart);
        let (_, claude) = Protocol::Claude
            .read(
                json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                "timestamp": "2026-11-25T17:56:55.241Z",
                "tool_result": {"result_type": "success", "text_result_for_llm": "hi"}}),
            )
            .unwrap();
        assert_eq!(
            claude.record()["tool_response"]["text_result_for_llm"],
            "hi"
        );
    }

    #[test]
    fn text_typed_into_a_running_shell_is_a_bash_command_a_guard_sees() {
        let typed = decode(json!({"hook_event_name": "preToolUse", "sessionId": "s",
            "toolName": "write_bash", "toolArgs": {"shellId": "7", "input": "rm -rf victim\n"}}))
        .unwrap();
        assert_eq!(typed.tool_name(), Some("Bash"));
        assert_eq!(typed.record()["agent_tool_name"], "write_bash");
        assert_eq!(typed.record()["tool_input"]["command"], "rm -rf victim\n");
        let mut rewritten = Outcome::proceed();
        rewritten.updated_input =
            Some(json!({"shellId": "7", "input": "rm -rf victim\n", "command": "ls\n"}));
        assert_eq!(
            encode(&typed, &rewritten).body,
            json!({"modifiedArgs": {"shellId": "7", "input": "ls\n"}})
        );
        let (protocol, claude_path) = crate::Protocol::Claude
            .read(
                json!({"hook_event_name": "PreToolUse", "tool_name": "write_bash",
                "timestamp": "2026-11-25T17:56:55.241Z",
                "tool_input": {"shellId": "7", "input": "rm -rf victim\n"}}),
            )
            .unwrap();
        assert_eq!(claude_path.tool_name(), Some("Bash"));
        // Answered as Claude Code is, with the rewrite typed into the shell.
        assert_eq!(
            protocol.encode(&claude_path, &rewritten).body["hookSpecificOutput"]["updatedInput"],
            json!({"shellId": "7", "input": "ls\n"})
        );
    }

    #[test]
    fn the_last_assistant_message_is_read_from_the_end_of_the_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let transcript = dir.path().join("events.jsonl");
        std::fs::write(
            &transcript,
            [
                json!({"type": "assistant.message", "data": {"content": "first"}}),
                json!({"type": "assistant.message", "data": {"content": "All done."}}),
                json!({"type": "session.idle", "data": {}}),
            ]
            .map(|l| l.to_string())
            .join("\n"),
        )
        .unwrap();
        let stop = decode(json!({"hook_event_name": "agentStop",
            "transcriptPath": transcript, "stopReason": "end_turn"}))
        .unwrap();
        assert_eq!(stop.record()["last_assistant_message"], "All done.");
        let missing = decode(json!({"hook_event_name": "agentStop",
            "transcriptPath": dir.path().join("gone.jsonl")}))
        .unwrap();
        assert!(missing.record().get("last_assistant_message").is_none());
    }

    #[test]
    fn a_stop_goes_on_a_result_is_rewritten_and_a_prompt_is_blocked() {
        let stop =
            decode(json!({"hook_event_name": "agentStop", "stopReason": "end_turn"})).unwrap();
        assert_eq!(stop.name(), EventName::Stop);
        let block = Outcome::denied("tests fail");
        assert_eq!(
            encode(&stop, &block).body,
            json!({"decision": "block", "reason": "tests fail"})
        );
        let post = decode(json!({"hook_event_name": "postToolUse", "toolName": "view",
            "toolArgs": {"path": "/p/.env"},
            "toolResult": {"resultType": "success", "textResultForLlm": "KEY=1"}}))
        .unwrap();
        assert_eq!(post.tool_name(), Some("Read"));
        let mut masked = Outcome::proceed();
        masked.updated_output = Some(json!("KEY=[hidden]"));
        assert_eq!(
            encode(&post, &masked).body,
            json!({"modifiedResult": {"resultType": "success", "textResultForLlm": "KEY=[hidden]"}})
        );
        let prompt =
            decode(json!({"hook_event_name": "userPromptSubmitted", "prompt": "x"})).unwrap();
        assert_eq!(
            encode(&prompt, &block).body,
            json!({"decision": "block", "reason": "tests fail"})
        );
    }
}

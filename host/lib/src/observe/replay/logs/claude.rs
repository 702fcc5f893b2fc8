//! Claude Code's transcripts (`~/.claude/projects/<project>/<session>.jsonl`,
//! a subagent's in `<session>/subagents/agent-<id>.jsonl`): a `tool_use`
//! in an `assistant` record is a PreToolUse, its `tool_result` (in a
//! `user` record) what became of it: `permissionDecision.decision:
//! "reject"` is a refusal (by a hook, `source: "hook"`, or by Claude
//! Code's permissions), a hook's `ask` the same with `reasonCode:
//! "hook:PreToolUse"` from the configuration. A `user` record of text is
//! a prompt; the first record of a main transcript starts the session;
//! `stop_hook_summary` is a Stop.

use std::path::Path;

use serde_json::{Value, json};

use super::{Out, Pending, Reading, text};
use crate::observe::replay::Happened;
use crate::protocol::Protocol;

/// The record types that hold no event (requests, attachments, costs…).
const NOT_EVENTS: &[&str] = &[
    "attachment",
    "queue-operation",
    "api-request",
    "api-request-shape",
    "api-request-blob",
    "tools-used",
    "last-prompt",
    "cost-state",
    "atis-latch",
    "summary",
    "file-history-snapshot",
    "progress",
];

/// Reading one transcript.
pub(super) struct Transcript {
    path: String,
    started: bool,
    pending: Pending,
}

impl Transcript {
    pub(super) fn new(path: &Path) -> Self {
        Self {
            path: path.display().to_string(),
            started: false,
            pending: Pending::default(),
        }
    }

    /// The fields every hook input has, from `record`.
    fn common(&self, record: &Value, event: &str) -> Value {
        json!({"hook_event_name": event, "session_id": record["sessionId"],
            "cwd": record["cwd"], "transcript_path": self.path})
    }
}

impl Reading for Transcript {
    fn record(&mut self, out: &mut Out<'_>, record: &Value) -> bool {
        let time = text(record, "timestamp");
        let Some(kind) = text(record, "type") else {
            return false;
        };
        if !self.started && record["cwd"].is_string() && record["isSidechain"] == false {
            self.started = true;
            let mut start = self.common(record, "SessionStart");
            start["source"] = json!("startup");
            out.event(Protocol::Claude, start, time, Happened::Ran);
        }
        match kind {
            "assistant" => {
                for call in blocks(record, "tool_use") {
                    let mut payload = self.common(record, "PreToolUse");
                    payload["tool_name"] = call["name"].clone();
                    payload["tool_input"] = call["input"].clone();
                    payload["tool_use_id"] = call["id"].clone();
                    if let (Some(id), Some(recorded)) = (
                        text(call, "id"),
                        out.recorded(Protocol::Claude, payload, time),
                    ) {
                        self.pending.call(out, id, recorded);
                    }
                }
                true
            }
            "user" => {
                let results = blocks(record, "tool_result");
                if results.is_empty() {
                    return record["isMeta"] == true || self.prompt(out, record, time);
                }
                for result in results {
                    let happened = fate(record, result);
                    if let Some(id) = text(result, "tool_use_id") {
                        self.pending.result(out, id, happened);
                    }
                }
                true
            }
            "system" => {
                if text(record, "subtype") == Some("stop_hook_summary") {
                    let mut stop = self.common(record, "Stop");
                    stop["stop_hook_active"] = json!(false);
                    out.event(Protocol::Claude, stop, time, Happened::Ran);
                }
                true
            }
            other => NOT_EVENTS.contains(&other),
        }
    }

    fn end(&mut self, out: &mut Out<'_>) {
        self.pending.end(out);
    }
}

impl Transcript {
    /// A person's prompt (text, as a string or in text blocks).
    fn prompt(&self, out: &mut Out<'_>, record: &Value, time: Option<&str>) -> bool {
        let content = &record["message"]["content"];
        let prompt = match content {
            Value::String(text) => text.clone(),
            Value::Array(_) => blocks(record, "text")
                .iter()
                .filter_map(|b| text(b, "text"))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => return false,
        };
        let mut payload = self.common(record, "UserPromptSubmit");
        payload["prompt"] = json!(prompt);
        out.event(Protocol::Claude, payload, time, Happened::Ran)
    }
}

/// The content blocks of `kind` in a record's message.
fn blocks<'a>(record: &'a Value, kind: &str) -> Vec<&'a Value> {
    record["message"]["content"]
        .as_array()
        .map(|all| all.iter().filter(|b| b["type"] == kind).collect())
        .unwrap_or_default()
}

/// What became of a call, from its result's record.
fn fate(record: &Value, result: &Value) -> Happened {
    let decision = &record["permissionDecision"];
    match decision["decision"].as_str() {
        Some("reject")
            if decision["source"] == "config" && decision["reasonCode"] == "hook:PreToolUse" =>
        {
            Happened::Asked
        }
        Some("reject") => Happened::Denied,
        _ if result["is_error"] == true && record["toolDenialKind"].is_string() => Happened::Denied,
        _ => Happened::Ran,
    }
}

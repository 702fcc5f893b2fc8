//! Codex's rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`):
//! `session_meta` starts the session; a `UserMessage` completed is a
//! prompt; a `function_call` `exec_command` is a Bash call and a
//! `custom_tool_call` `apply_patch` one Write (a file added) or Edit (a
//! file changed) per file of the patch, as a guard on `Write|Edit` sees
//! it; their outputs tell what became of them, in text only (`Command
//! blocked by PreToolUse hook: …`, Codex's own `Rejected(…)`, `patch
//! rejected: …`); `task_complete` is a Stop.

use serde_json::{Value, json};

use super::{Out, Pending, Reading, text};
use crate::observe::replay::Happened;
use crate::protocol::Protocol;

/// How outputs begin when the call did not run.
const REFUSED: &[&str] = &[
    "Command blocked by PreToolUse hook",
    "exec_command failed: CreateProcess { message: \"Rejected",
    "patch rejected",
    "approval policy is Never; reject command",
];

/// Reading one rollout.
#[derive(Default)]
pub(super) struct Rollout {
    session: Value,
    cwd: Value,
    pending: Pending,
}

impl Reading for Rollout {
    fn record(&mut self, out: &mut Out<'_>, record: &Value) -> bool {
        let time = text(record, "timestamp");
        let payload = &record["payload"];
        match (text(record, "type"), text(payload, "type")) {
            (Some("session_meta"), _) => {
                self.session = payload["session_id"].clone();
                self.cwd = payload["cwd"].clone();
                let mut start = self.common("SessionStart");
                start["source"] = json!("startup");
                out.event(Protocol::Codex, start, time, Happened::Ran);
                true
            }
            (Some("event_msg"), Some("item_completed")) => {
                let item = &payload["item"];
                if item["type"] == "UserMessage" {
                    let prompt: Vec<&str> = item["content"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|c| text(c, "text"))
                        .collect();
                    let mut submitted = self.common("UserPromptSubmit");
                    submitted["prompt"] = json!(prompt.join("\n"));
                    out.event(Protocol::Codex, submitted, time, Happened::Ran);
                }
                true
            }
            (Some("event_msg"), Some("task_complete")) => {
                let mut stop = self.common("Stop");
                stop["stop_hook_active"] = json!(false);
                stop["last_assistant_message"] = payload["last_agent_message"].clone();
                out.event(Protocol::Codex, stop, time, Happened::Ran);
                true
            }
            (Some("response_item"), Some("function_call" | "custom_tool_call")) => {
                for (tool, input) in calls(payload, &self.cwd) {
                    let mut call = self.common("PreToolUse");
                    call["tool_name"] = json!(tool);
                    call["tool_input"] = input;
                    call["tool_use_id"] = payload["call_id"].clone();
                    if let (Some(id), Some(recorded)) = (
                        text(payload, "call_id"),
                        out.recorded(Protocol::Codex, call, time),
                    ) {
                        self.pending.call(out, id, recorded);
                    }
                }
                true
            }
            (Some("response_item"), Some("function_call_output" | "custom_tool_call_output")) => {
                let output = text(payload, "output").unwrap_or_default();
                let happened = if REFUSED.iter().any(|r| output.starts_with(r)) {
                    Happened::Denied
                } else {
                    Happened::Ran
                };
                // A patch of several files is several calls of one id.
                if let Some(id) = text(payload, "call_id") {
                    while self.pending.result(out, id, happened) {}
                }
                true
            }
            (
                Some(
                    "response_item" | "event_msg" | "world_state" | "turn_context"
                    | "token_usage_record",
                ),
                _,
            ) => true,
            _ => false,
        }
    }

    fn end(&mut self, out: &mut Out<'_>) {
        self.pending.end(out);
    }
}

impl Rollout {
    fn common(&self, event: &str) -> Value {
        json!({"hook_event_name": event, "session_id": self.session, "cwd": self.cwd})
    }
}

/// The calls a tool call makes, as Claude Code's tool names and inputs:
/// `exec_command` a Bash command, `apply_patch` a Write or an Edit per
/// file (paths relative to `cwd` made absolute); other tools as they are.
fn calls(payload: &Value, cwd: &Value) -> Vec<(String, Value)> {
    let name = text(payload, "name").unwrap_or_default();
    match name {
        "exec_command" | "shell" => {
            let arguments: Value = text(payload, "arguments")
                .and_then(|a| serde_json::from_str(a).ok())
                .unwrap_or_default();
            let command = match &arguments["cmd"] {
                Value::Null => arguments["command"].clone(),
                cmd => cmd.clone(),
            };
            let command = match command {
                Value::Array(words) => json!(
                    words
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                other => other,
            };
            vec![("Bash".to_owned(), json!({"command": command}))]
        }
        "apply_patch" => patch_files(
            text(payload, "input").unwrap_or_default(),
            cwd.as_str().unwrap_or(""),
        ),
        other => vec![(
            other.to_owned(),
            payload.get("arguments").cloned().unwrap_or_default(),
        )],
    }
}

/// Each file a patch adds (a Write, with its content) or changes (an
/// Edit).
fn patch_files(patch: &str, cwd: &str) -> Vec<(String, Value)> {
    let absolute = |path: &str| {
        if path.starts_with('/') || cwd.is_empty() {
            path.to_owned()
        } else {
            format!("{}/{path}", cwd.trim_end_matches('/'))
        }
    };
    let mut files: Vec<(String, Value)> = Vec::new();
    for line in patch.lines() {
        if let Some(path) = line.strip_prefix("*** Add File: ") {
            files.push((
                "Write".to_owned(),
                json!({"file_path": absolute(path.trim()), "content": ""}),
            ));
        } else if let Some(path) = line
            .strip_prefix("*** Update File: ")
            .or_else(|| line.strip_prefix("*** Delete File: "))
        {
            files.push((
                "Edit".to_owned(),
                json!({"file_path": absolute(path.trim())}),
            ));
        } else if let (Some(added), Some((tool, input))) =
            (line.strip_prefix('+'), files.last_mut())
            && tool == "Write"
            && let Some(Value::String(content)) = input.get_mut("content")
        {
            content.push_str(added);
            content.push('\n');
        }
    }
    files
}

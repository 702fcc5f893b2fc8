//! Copilot CLI's session events (`~/.copilot/session-state/<session>/events.jsonl`):
//! `session.start` starts the session (its `context.cwd`), a
//! `user.message` is a prompt, `tool.execution_start` a preToolUse call
//! (written before the hook runs, so not a sign that it ran) whose
//! `tool.execution_complete` tells what became of it (`success`, or an
//! error whose `code` is `denied`: by a hook, `Denied by preToolUse
//! hook: …`, or by Copilot's permissions), and `session.shutdown` ends it.

use serde_json::{Value, json};

use super::{Out, Pending, Reading, text};
use crate::observe::replay::Happened;
use crate::protocol::Protocol;

/// Reading one session's events.
#[derive(Default)]
pub(super) struct Events {
    session: Value,
    cwd: Value,
    pending: Pending,
}

impl Events {
    fn common(&self, event: &str) -> Value {
        json!({"hook_event_name": event, "sessionId": self.session, "cwd": self.cwd})
    }
}

impl Reading for Events {
    fn record(&mut self, out: &mut Out<'_>, record: &Value) -> bool {
        let time = text(record, "timestamp");
        let data = &record["data"];
        let Some(kind) = text(record, "type") else {
            return false;
        };
        match kind {
            "session.start" => {
                self.session = data["sessionId"].clone();
                self.cwd = data["context"]["cwd"].clone();
                let mut start = self.common("sessionStart");
                start["source"] = json!("new");
                out.event(Protocol::Copilot, start, time, Happened::Ran);
            }
            "user.message" => {
                let mut prompt = self.common("userPromptSubmitted");
                prompt["prompt"] = data["content"].clone();
                out.event(Protocol::Copilot, prompt, time, Happened::Ran);
            }
            "tool.execution_start" => {
                let mut call = self.common("preToolUse");
                call["toolName"] = data["toolName"].clone();
                call["toolArgs"] = data["arguments"].clone();
                if let (Some(id), Some(recorded)) = (
                    text(data, "toolCallId"),
                    out.recorded(Protocol::Copilot, call, time),
                ) {
                    self.pending.call(out, id, recorded);
                }
            }
            "tool.execution_complete" => {
                let happened = if data["success"] == true {
                    Happened::Ran
                } else if data["error"]["code"] == "denied" {
                    Happened::Denied
                } else {
                    Happened::Ran
                };
                if let Some(id) = text(data, "toolCallId") {
                    self.pending.result(out, id, happened);
                }
            }
            "session.shutdown" => {
                let mut end = self.common("sessionEnd");
                end["reason"] = json!("complete");
                out.event(Protocol::Copilot, end, time, Happened::Ran);
            }
            other if known(other) => {}
            _ => return false,
        }
        true
    }

    fn end(&mut self, out: &mut Out<'_>) {
        self.pending.end(out);
    }
}

/// The event types that hold no event of their own.
fn known(kind: &str) -> bool {
    [
        "hook.",
        "assistant.",
        "system.",
        "session.",
        "permission.",
        "tool.",
        "notification",
        "subagent.",
    ]
    .iter()
    .any(|prefix| kind.starts_with(prefix))
}

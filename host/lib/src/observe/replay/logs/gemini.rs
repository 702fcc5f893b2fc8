//! Gemini CLI's chat records (`~/.gemini/tmp/<project>/chats/session-*.jsonl`,
//! the project's path in `<project>/.project_root`): the header starts
//! the session; a `user` message of text is a prompt (BeforeAgent); a
//! `gemini` message's `toolCalls` are BeforeTool calls with their fate in
//! place (`status`, and the error's text: `Tool execution blocked: …` is
//! a hook's refusal, `Path not in workspace` Gemini's own). A message is
//! written again as it grows: each call is read once, when it has a
//! final status.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Value, json};

use super::{MAX_PENDING, Out, Reading, text};
use crate::observe::replay::Happened;
use crate::protocol::Protocol;

/// How an error begins when the call did not run.
const REFUSED: &[&str] = &[
    "Tool execution blocked",
    "Path not in workspace",
    "Tool \"",
    "Permission denied",
];

/// Reading one chat record.
pub(super) struct Chat {
    path: String,
    cwd: Value,
    session: Value,
    /// The calls read so far (at most `MAX_PENDING` remembered).
    seen: HashSet<String>,
    /// The messages read so far, for the same bound.
    prompts: HashSet<String>,
}

impl Chat {
    pub(super) fn new(path: &Path) -> Self {
        // `<project>/chats/session-….jsonl` → `<project>/.project_root`.
        let root = path
            .parent()
            .and_then(Path::parent)
            .map(|project| project.join(".project_root"))
            .and_then(|file| std::fs::read_to_string(file).ok())
            .map(|root| root.trim().to_owned());
        Self {
            path: path.display().to_string(),
            cwd: root.map_or(Value::Null, Value::String),
            session: Value::Null,
            seen: HashSet::new(),
            prompts: HashSet::new(),
        }
    }

    fn common(&self, event: &str) -> Value {
        json!({"hook_event_name": event, "session_id": self.session, "cwd": self.cwd,
            "transcript_path": self.path})
    }
}

/// Remember `id` in `set` (bounded); `false` when it was there.
fn first_time(set: &mut HashSet<String>, id: &str) -> bool {
    if set.len() >= MAX_PENDING {
        set.clear();
    }
    set.insert(id.to_owned())
}

impl Reading for Chat {
    fn record(&mut self, out: &mut Out<'_>, record: &Value) -> bool {
        let time = text(record, "timestamp");
        if record.get("$set").is_some() || record.get("$rewindTo").is_some() {
            return true;
        }
        if let (Some(session), Some(start)) = (text(record, "sessionId"), text(record, "startTime"))
        {
            self.session = json!(session);
            let mut begun = self.common("SessionStart");
            begun["source"] = json!("startup");
            out.event(Protocol::Gemini, begun, Some(start), Happened::Ran);
            return true;
        }
        match text(record, "type") {
            Some("user") => {
                let said: Vec<&str> = record["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|part| text(part, "text"))
                    .collect();
                let id = text(record, "id").unwrap_or_default();
                if !said.is_empty() && first_time(&mut self.prompts, id) {
                    let mut prompt = self.common("BeforeAgent");
                    prompt["prompt"] = json!(said.join("\n"));
                    out.event(Protocol::Gemini, prompt, time, Happened::Ran);
                }
                true
            }
            Some("gemini") => {
                for call in record["toolCalls"].as_array().into_iter().flatten() {
                    self.call(out, call, time);
                }
                true
            }
            Some("info" | "error" | "warning") => true,
            _ => false,
        }
    }
}

impl Chat {
    /// One tool call, once it has a final status.
    fn call(&mut self, out: &mut Out<'_>, call: &Value, time: Option<&str>) {
        let happened = match text(call, "status") {
            Some("success") => Happened::Ran,
            Some("error" | "cancelled") => {
                let response = &call["result"][0]["functionResponse"]["response"];
                let error = text(response, "error").unwrap_or_default();
                if REFUSED.iter().any(|r| error.starts_with(r))
                    || text(call, "status") == Some("cancelled")
                {
                    Happened::Denied
                } else {
                    Happened::Ran
                }
            }
            _ => return,
        };
        let Some(id) = text(call, "id") else { return };
        if !first_time(&mut self.seen, id) {
            return;
        }
        let mut payload = self.common("BeforeTool");
        payload["tool_name"] = call["name"].clone();
        payload["tool_input"] = call["args"].clone();
        out.event(Protocol::Gemini, payload, time, happened);
    }
}

//! OpenCode, through the plugin `install opencode` writes
//! (`.opencode/plugin/wasm-hooks.js`): OpenCode has no command hooks, so
//! the plugin hands each of its hooks' arguments over as they are,
//! `{"hook_event_name": "<hook>", "cwd", "input", "output"}` (for the
//! `event` hook, `{"hook_event_name": "<event type>", "cwd", "event"}`),
//! and applies the small answer this module writes.
//!
//! Read onto the catalogue: `tool.execute.before` is PreToolUse, and so
//! is `shell.env` for the session shell (the TUI's `!`, `run -i`), which
//! the plugin sends as a `bash` call with the command it saw in the
//! session's tool part (OpenCode hands `shell.env` no command);
//! `tool.execute.after` PostToolUse (`output` is the `tool_response`),
//! `chat.message` UserPromptSubmit (its text parts are the `prompt`),
//! `session.created` SessionStart, `session.idle` Stop,
//! `session.deleted` SessionEnd, `session.compacted` PostCompact,
//! `session.error` Error (the plugin adds `session.idle`'s
//! `last_assistant_message`, which it asks OpenCode for). Tools get Claude
//! Code's names (`bash` is
//! `Bash`), and their camelCase arguments its snake_case ones (`filePath`
//! is `file_path`), both ways: a rewrite goes back in OpenCode's. An MCP
//! tool (`<server>_<tool>`) is `mcp__<server>__<tool>`, split at one of
//! the servers the plugin sends in `mcp_servers`.
//!
//! The answer: `{"block": reason}` (the plugin throws: the tool does not
//! run, the prompt is not sent; after a tool ran, the model reads the
//! reason as its result), `{"args": {…}}` (the tool runs with
//! these), `{"output": text}` (the model reads this instead),
//! `{"context": text}` (added for the model: a text part of the prompt,
//! the session's first one for `session.created`, or after a tool's
//! output), `{"prompt": text}` (on `session.idle`: the
//! session goes on with this prompt), and `{"messages": […]}` for the
//! person.

use super::facts::AgentFacts;
use serde::Serialize;
use serde_json::{Map, Value};

use wasm_hooks_core::{Event, EventError, EventName, Outcome, plain_text};

use super::{Answer, Draft, agent_name, blocking_reason, named};

/// OpenCode's hooks and events, and the catalogue's.
const EVENTS: &[(&str, EventName)] = &[
    ("tool.execute.before", EventName::PreToolUse),
    ("shell.env", EventName::PreToolUse),
    ("tool.execute.after", EventName::PostToolUse),
    ("chat.message", EventName::UserPromptSubmit),
    ("session.created", EventName::SessionStart),
    ("session.idle", EventName::Stop),
    ("session.deleted", EventName::SessionEnd),
    ("session.compacted", EventName::PostCompact),
    ("session.error", EventName::Error),
];

/// The hooks whose failure must block: a tool call's and a prompt's.
pub(super) const GUARD_EVENTS: &[&str] = &["tool.execute.before", "shell.env", "chat.message"];

/// OpenCode's tools and Claude Code's names for them.
const TOOLS: &[(&str, &str)] = &[
    ("bash", "Bash"),
    ("edit", "Edit"),
    ("write", "Write"),
    ("read", "Read"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("list", "LS"),
    ("webfetch", "WebFetch"),
    ("task", "Task"),
    ("todowrite", "TodoWrite"),
    ("patch", "Edit"),
    ("multiedit", "MultiEdit"),
    ("todoread", "TodoRead"),
];

/// OpenCode's argument names and Claude Code's.
const ARGS: &[(&str, &str)] = &[
    ("filePath", "file_path"),
    ("oldString", "old_string"),
    ("newString", "new_string"),
    ("replaceAll", "replace_all"),
];

/// The answer the plugin applies.
#[derive(Debug, Default, Serialize)]
struct OpenCodeAnswer {
    #[serde(skip_serializing_if = "Option::is_none")]
    block: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    messages: Vec<String>,
}

pub(super) fn decode(value: Value) -> Result<Event, EventError> {
    let (mut record, agent) = match named(value) {
        Ok(named) => named,
        Err(read) => return read,
    };
    let name = EVENTS
        .iter()
        .find(|(opencode, _)| *opencode == agent)
        .map_or(EventName::Unlisted, |(_, name)| *name);
    record.insert("agent_event_name".into(), agent.into());
    let input = take_object(&mut record, "input");
    let output = take_object(&mut record, "output");
    let session = input
        .get("sessionID")
        .or_else(|| record.get("event")?.get("properties")?.get("sessionID"))
        .or_else(|| {
            record
                .get("event")?
                .get("properties")?
                .get("info")?
                .get("id")
        })
        .cloned();
    if let Some(session) = session {
        record.insert("session_id".into(), session);
    }
    match name {
        EventName::PreToolUse | EventName::PostToolUse => {
            tool_call(&mut record, &input);
            let args = if name == EventName::PreToolUse {
                output.get("args")
            } else {
                input.get("args")
            };
            record.insert(
                "tool_input".into(),
                renamed(args.cloned().unwrap_or_default(), ARGS, false),
            );
            if name == EventName::PostToolUse {
                record.insert("tool_response".into(), Value::Object(output));
            }
        }
        EventName::UserPromptSubmit => {
            let text: Vec<&str> = output
                .get("parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|part| part["type"] == "text")
                .filter_map(|part| part["text"].as_str())
                .collect();
            record.insert("prompt".into(), text.join("\n").into());
        }
        EventName::Stop => {
            // The plugin says whether it sent the session on just before.
            record.entry("stop_hook_active").or_insert(false.into());
        }
        _ => {}
    }
    Event::from_record(name, record)
}

/// The object at `field`, taken out of the record (empty when absent).
fn take_object(record: &mut Map<String, Value>, field: &str) -> Map<String, Value> {
    match record.remove(field) {
        Some(Value::Object(object)) => object,
        _ => Map::new(),
    }
}

/// The tool's name (Claude Code's, the original kept) and call id. An
/// MCP tool, which OpenCode names `<server>_<tool>`, is split at one of
/// the servers the plugin sends (`mcp_servers`).
fn tool_call(record: &mut Map<String, Value>, input: &Map<String, Value>) {
    if let Some(tool) = input.get("tool").and_then(Value::as_str) {
        let servers: Vec<String> = record
            .get("mcp_servers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect();
        let canonical = TOOLS
            .iter()
            .find(|(opencode, _)| *opencode == tool)
            .map(|(_, canonical)| (*canonical).to_owned())
            .or_else(|| super::mcp_names::canonical(tool, '_', &servers))
            .unwrap_or_else(|| tool.to_owned());
        record.insert("agent_tool_name".into(), tool.into());
        record.insert("tool_name".into(), canonical.into());
    }
    if let Some(call) = input.get("callID") {
        record.insert("tool_use_id".into(), call.clone());
    }
}

/// `args` with its top-level names renamed from OpenCode's to Claude
/// Code's (`back`: the other way).
fn renamed(args: Value, names: &[(&str, &str)], back: bool) -> Value {
    let Value::Object(args) = args else {
        return args;
    };
    let rename = |key: String| {
        names
            .iter()
            .find(|(opencode, claude)| {
                if back {
                    *claude == key
                } else {
                    *opencode == key
                }
            })
            .map_or(key.clone(), |(opencode, claude)| {
                (if back { *opencode } else { *claude }).to_owned()
            })
    };
    Value::Object(args.into_iter().map(|(k, v)| (rename(k), v)).collect())
}

pub(super) fn encode(event: &Event, outcome: &Outcome) -> Answer {
    let name = event.name();
    let agent = agent_name(event);
    let mut draft = Draft::new(outcome, agent);
    let mut answer = OpenCodeAnswer::default();
    // Never an empty reason: the plugin blocks on a reason it can show.
    let blocking = blocking_reason(&outcome.verdict, "OpenCode").map(|reason| {
        if reason.trim().is_empty() {
            format!("blocked by wasm-hooks on {agent}")
        } else {
            reason
        }
    });
    match name {
        // A PostToolUse block the plugin throws: OpenCode hands the model
        // the reason as the tool's result, in place of its output.
        EventName::PreToolUse | EventName::UserPromptSubmit | EventName::PostToolUse => {
            answer.block = blocking;
        }
        EventName::Stop => answer.prompt = blocking,
        _ => {
            if let Some(reason) = blocking {
                draft.unblockable(&reason);
            }
        }
    }
    if answer.block.is_none() && name == EventName::PreToolUse {
        answer.args = outcome
            .updated_input
            .clone()
            .map(|args| renamed(args, ARGS, true));
    }
    if name == EventName::PostToolUse {
        answer.output = outcome
            .updated_output
            .as_ref()
            .map(|output| match output.get("output") {
                Some(Value::String(text)) => text.clone(),
                _ => plain_text(output).into_owned(),
            });
    }
    // SessionStart's context the plugin adds to the session's first
    // prompt.
    answer.context = draft.context(matches!(
        name,
        EventName::UserPromptSubmit | EventName::PostToolUse | EventName::SessionStart
    ));
    let common = draft.common();
    answer.messages.extend(common.system_message);
    draft.unsaid_stop();
    draft.finish(&answer)
}

/// What wasm-hooks knows of OpenCode as a program (see [`AgentFacts`]).
pub(super) const FACTS: AgentFacts = AgentFacts {
    name: "OpenCode",
    program: "opencode",
    driven: "1.18.33",
    settings: ".opencode/plugin/wasm-hooks.js",
    local_settings: Some("wasm-hooks.local.js"),
    user_settings: ".config/opencode/plugin/wasm-hooks.js",
    user_settings_variable: Some(("XDG_CONFIG_HOME", "opencode/plugin/wasm-hooks.js")),
    events: &[],
    entries_fail_closed: true,
    next_step: (
        "next: OpenCode loads the plugin when it starts; a tool call or prompt wasm-hooks cannot answer is blocked",
        "next: OpenCode loads the plugin when it starts; a tool call or prompt wasm-hooks cannot answer is blocked",
    ),
    unguarded: Some(
        "OpenCode's `!`-commands inside a custom command's template (`` !`cmd` ``) and its terminals (PTY) run with no hook",
    ),
    importable: false,
    http_hooks: false,
    hook_file: None,
};

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_tool_call_is_read_as_claude_code_names_it_and_rewritten_back() {
        let event = decode(
            json!({"hook_event_name": "tool.execute.before", "cwd": "/p",
            "input": {"tool": "edit", "sessionID": "ses_1", "callID": "call_1"},
            "output": {"args": {"filePath": "/p/.env", "oldString": "a", "newString": "b"}}}),
        )
        .unwrap();
        assert_eq!(event.name(), EventName::PreToolUse);
        assert_eq!(event.tool_name(), Some("Edit"));
        assert_eq!(event.session_id(), "ses_1");
        assert_eq!(
            event.record()["tool_input"],
            json!({"file_path": "/p/.env", "old_string": "a", "new_string": "b"})
        );
        assert_eq!(
            encode(&event, &Outcome::denied("no")).body,
            json!({"block": "no"})
        );
        let mut rewritten = Outcome::proceed();
        rewritten.updated_input =
            Some(json!({"file_path": "/p/env.example", "old_string": "a", "new_string": "b"}));
        assert_eq!(
            encode(&event, &rewritten).body,
            json!({"args": {"filePath": "/p/env.example", "oldString": "a", "newString": "b"}})
        );
    }

    #[test]
    fn a_prompt_an_output_and_an_idle_session() {
        let prompt = decode(json!({"hook_event_name": "chat.message",
            "input": {"sessionID": "ses_1"},
            "output": {"parts": [{"type": "text", "text": "deploy it"}]}}))
        .unwrap();
        assert_eq!(prompt.name(), EventName::UserPromptSubmit);
        assert_eq!(prompt.record()["prompt"], "deploy it");
        assert_eq!(
            encode(&prompt, &Outcome::denied("not today")).body,
            json!({"block": "not today"})
        );
        let after = decode(json!({"hook_event_name": "tool.execute.after",
            "input": {"tool": "bash", "sessionID": "ses_1", "callID": "c", "args": {"command": "env"}},
            "output": {"title": "env", "output": "TOKEN=abc\n", "metadata": {}}}))
        .unwrap();
        assert_eq!(after.record()["tool_response"]["output"], "TOKEN=abc\n");
        let mut masked = Outcome::proceed();
        masked.updated_output = Some(json!({"title": "env", "output": "TOKEN=[hidden]\n"}));
        assert_eq!(
            encode(&after, &masked).body,
            json!({"output": "TOKEN=[hidden]\n"})
        );
        let idle = decode(json!({"hook_event_name": "session.idle",
            "event": {"type": "session.idle", "properties": {"sessionID": "ses_1"}}}))
        .unwrap();
        assert_eq!(idle.name(), EventName::Stop);
        assert_eq!(idle.session_id(), "ses_1");
        assert_eq!(
            encode(&idle, &Outcome::denied("run the tests")).body,
            json!({"prompt": "run the tests"})
        );
    }
}

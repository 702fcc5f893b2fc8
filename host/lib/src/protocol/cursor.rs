//! Cursor's hook format, from its published documentation
//! (`tests/fixtures/cursor-docs/`: Cursor cannot be run here).
//!
//! Its events are read onto the catalogue, its shell, MCP and file events
//! as the tool calls they are, so that one guard covers them:
//! `beforeShellExecution` is a PreToolUse `Bash` call (`command`),
//! `beforeMCPExecution` one of `mcp__<server>__<tool>`, `beforeReadFile`
//! one of `Read`, `afterFileEdit` a PostToolUse of `Edit`; `preToolUse`'s
//! own tools are renamed (`Shell` is `Bash`). `conversation_id` is the
//! session, the first workspace root the `cwd` when none is given, and
//! `loop_count` above 0 is `stop_hook_active`. The originals stay in
//! `agent_event_name` / `agent_tool_name`.
//!
//! Answers: `permission` allow / deny / ask with `user_message` and
//! `agent_message` where the event takes one (`updated_input` on
//! `preToolUse` only: a rewrite elsewhere is refused, as Cursor would run
//! the original); `continue: false` on `beforeSubmitPrompt`;
//! `followup_message` on `stop` and `subagentStop` (a block that makes the
//! agent go on); `additional_context` on `sessionStart` and `postToolUse`;
//! exit code 0.

use super::facts::{AgentFacts, HookFile, SettingsShape};
use serde::Serialize;
use serde_json::{Map, Value, json};

use wasm_hooks_core::{Event, EventError, EventName, Outcome, Verdict};

use super::answer::PermissionWord;
use super::{Answer, Draft, agent_name, blocking_reason, named};

/// Cursor's events that guard an action (a block on failure): those read
/// as PreToolUse and UserPromptSubmit.
pub(super) const GUARD_EVENTS: &[&str] = &[
    "preToolUse",
    "beforeShellExecution",
    "beforeMCPExecution",
    "beforeReadFile",
    "beforeSubmitPrompt",
];

/// `preToolUse`'s tool names and their canonical ones.
const TOOLS: &[(&str, &str)] = &[("Shell", "Bash"), ("Read", "Read"), ("Write", "Write")];

/// Cursor's answer.
#[derive(Debug, Default, Serialize)]
struct CursorAnswer {
    #[serde(skip_serializing_if = "Option::is_none")]
    permission: Option<PermissionWord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_input: Option<Value>,
    #[serde(rename = "continue", skip_serializing_if = "Option::is_none")]
    go_on: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    followup_message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    additional_context: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_mcp_tool_output: Option<Value>,
}

pub(super) fn decode(value: Value) -> Result<Event, EventError> {
    let (mut record, agent) = match named(value) {
        Ok(named) => named,
        Err(read) => return read,
    };
    record.insert("agent_event_name".into(), agent.clone().into());
    adopt(&mut record, "conversation_id", "session_id");
    if !record.contains_key("cwd")
        && let Some(root) = record.get("workspace_roots").and_then(|r| r.get(0))
    {
        record.insert("cwd".into(), root.clone());
    }
    let name = match agent.as_str() {
        "beforeShellExecution" | "afterShellExecution" => {
            let input = json!({"command": record.get("command").cloned().unwrap_or_default()});
            call(&mut record, "Bash", input);
            adopt(&mut record, "output", "tool_response");
            tool_event(&agent)
        }
        "beforeMCPExecution" | "afterMCPExecution" => {
            mcp(&mut record);
            adopt(&mut record, "result_json", "tool_response");
            tool_event(&agent)
        }
        "beforeReadFile" => {
            let input = json!({"file_path": record.get("file_path").cloned().unwrap_or_default()});
            call(&mut record, "Read", input);
            EventName::PreToolUse
        }
        "afterFileEdit" => {
            let input = json!({
                "file_path": record.get("file_path").cloned().unwrap_or_default(),
                "edits": record.get("edits").cloned().unwrap_or_default(),
            });
            call(&mut record, "Edit", input);
            EventName::PostToolUse
        }
        "preToolUse" | "postToolUse" | "postToolUseFailure" => {
            rename_tool(&mut record);
            adopt(&mut record, "tool_output", "tool_response");
            tool_event(&agent)
        }
        "beforeSubmitPrompt" => EventName::UserPromptSubmit,
        "stop" | "subagentStop" => {
            let again = record
                .get("loop_count")
                .and_then(Value::as_u64)
                .is_some_and(|n| n > 0);
            record.insert("stop_hook_active".into(), again.into());
            if agent == "stop" {
                EventName::Stop
            } else {
                EventName::SubagentStop
            }
        }
        "subagentStart" => EventName::SubagentStart,
        "sessionStart" => EventName::SessionStart,
        "sessionEnd" => EventName::SessionEnd,
        "preCompact" => EventName::PreCompact,
        _ => EventName::Unlisted,
    };
    Event::from_record(name, record)
}

/// PreToolUse for a `before…`/`pre…` event, else PostToolUse or
/// PostToolUseFailure.
fn tool_event(agent: &str) -> EventName {
    if agent.starts_with("before") || agent.starts_with("pre") {
        EventName::PreToolUse
    } else if agent.ends_with("Failure") {
        EventName::PostToolUseFailure
    } else {
        EventName::PostToolUse
    }
}

/// Copy `from` to `to` when the record has no `to`.
fn adopt(record: &mut Map<String, Value>, from: &str, to: &str) {
    if !record.contains_key(to)
        && let Some(value) = record.get(from)
    {
        record.insert(to.to_owned(), value.clone());
    }
}

/// Make the record a call of `tool` with `input`.
fn call(record: &mut Map<String, Value>, tool: &str, input: Value) {
    record.insert("tool_name".into(), tool.into());
    record.insert("tool_input".into(), input);
}

/// `beforeMCPExecution`'s tool as Claude Code names MCP tools, its input
/// (a JSON text) as an object.
fn mcp(record: &mut Map<String, Value>) {
    let server = record
        .get("mcp_server_name")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    if let Some(tool) = record.get("tool_name").and_then(Value::as_str) {
        let name = format!("mcp__{server}__{tool}");
        record.insert("agent_tool_name".into(), tool.into());
        record.insert("tool_name".into(), name.into());
    }
    if let Some(Value::String(text)) = record.get("tool_input")
        && let Ok(input) = super::event_json(text)
    {
        record.insert("tool_input".into(), input);
    }
}

fn rename_tool(record: &mut Map<String, Value>) {
    let canonical = record
        .get("tool_name")
        .and_then(Value::as_str)
        .and_then(|tool| TOOLS.iter().find(|(cursor, _)| *cursor == tool));
    if let Some((cursor, canonical)) = canonical {
        record.insert("agent_tool_name".into(), (*cursor).into());
        record.insert("tool_name".into(), (*canonical).into());
    }
}

pub(super) fn encode(event: &Event, outcome: &Outcome) -> Answer {
    let agent = agent_name(event);
    let mut draft = Draft::new(outcome, agent);
    let mut answer = CursorAnswer::default();
    let blocking = blocking_reason(&outcome.verdict, "Cursor hooks");
    match agent {
        "preToolUse"
        | "beforeShellExecution"
        | "beforeMCPExecution"
        | "beforeReadFile"
        | "subagentStart" => permission(agent, outcome, &mut answer),
        "beforeSubmitPrompt" => {
            if let Some(reason) = blocking {
                answer.go_on = Some(false);
                answer.user_message = Some(reason);
            }
        }
        "stop" | "subagentStop" => answer.followup_message = blocking,
        _ => {
            if let Some(reason) = blocking {
                draft.unblockable(&reason);
            }
        }
    }
    if let Some(output) = &outcome.updated_output {
        if agent == "postToolUse" && event.tool_name().is_some_and(|t| t.starts_with("mcp__")) {
            answer.updated_mcp_tool_output = Some(output.clone());
        } else {
            draft.stderr.push(format!(
                "wasm-hooks: Cursor replaces only an MCP tool's output, on postToolUse; the rewritten output of {agent} was dropped"
            ));
        }
    }
    answer.additional_context = draft.context(matches!(agent, "sessionStart" | "postToolUse"));
    let common = draft.common();
    if let Some(message) = common
        .system_message
        .filter(|_| answer.user_message.is_none())
    {
        answer.user_message = Some(message);
    }
    draft.unsaid_stop();
    draft.finish(&answer)
}

/// A permission answer: a deny (or an ask where Cursor does not ask:
/// `preToolUse` and `subagentStart` take `ask` as nothing or a deny), an
/// ask, an allow that saw the final input; a rewrite as `updated_input`
/// where the event takes one (`preToolUse`), refused elsewhere.
fn permission(agent: &str, outcome: &Outcome, answer: &mut CursorAnswer) {
    // `beforeReadFile` takes allow or deny only; `preToolUse` and
    // `subagentStart` do not enforce an ask.
    let asks = matches!(agent, "beforeShellExecution" | "beforeMCPExecution");
    let rewritten = outcome.updated_input.as_ref();
    let (word, reason) = match &outcome.verdict {
        Verdict::Deny { reason } => (PermissionWord::Deny, Some(reason.clone())),
        Verdict::Ask(approval) if asks => (PermissionWord::Ask, Some(approval.prompt.clone())),
        Verdict::Ask(_) => (
            PermissionWord::Deny,
            blocking_reason(&outcome.verdict, &format!("Cursor's {agent}")),
        ),
        Verdict::Allow { .. } | Verdict::Proceed
            if rewritten.is_some() && agent != "preToolUse" =>
        {
            (
                PermissionWord::Deny,
                Some(format!(
                    "a hook rewrote this call, and Cursor cannot run a rewritten one on {agent}, so it was stopped"
                )),
            )
        }
        Verdict::Allow { .. } | Verdict::Proceed if rewritten.is_some() => {
            answer.updated_input = rewritten.cloned();
            if outcome.rewrite_approved {
                answer.permission = Some(PermissionWord::Allow);
            }
            return;
        }
        Verdict::Allow { reason } => (PermissionWord::Allow, reason.clone()),
        Verdict::Proceed => return,
    };
    answer.permission = Some(word);
    answer.agent_message.clone_from(&reason);
    answer.user_message = reason;
}

/// Cursor's events (documented), but those that fire per displayed response, thought or Tab edit.
const EVENTS: &[&str] = &[
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "beforeShellExecution",
    "afterShellExecution",
    "beforeMCPExecution",
    "afterMCPExecution",
    "beforeReadFile",
    "afterFileEdit",
    "beforeSubmitPrompt",
    "stop",
    "subagentStart",
    "subagentStop",
    "sessionStart",
    "sessionEnd",
    "preCompact",
];

/// The command entry `install` writes: `failClosed` on a guard event, and
/// its own loop limit on a stop.
fn command_entry(command: &str, event: &str, guards: bool) -> Vec<(&'static str, Value)> {
    let mut fields = vec![
        ("command", command.into()),
        ("timeout", super::settings::AGENT_TIMEOUT_SECS.into()),
    ];
    if guards {
        fields.push(("failClosed", true.into()));
    }
    if matches!(event, "stop" | "subagentStop") {
        fields.push(("loop_limit", crate::DEFAULT_STOP_LOOP_LIMIT.into()));
    }
    fields
}

/// What wasm-hooks knows of Cursor as a program (see [`AgentFacts`]).
pub(super) const FACTS: AgentFacts = AgentFacts {
    name: "Cursor",
    program: "cursor-agent",
    driven: "",
    settings: ".cursor/hooks.json",
    local_settings: None,
    user_settings: ".cursor/hooks.json",
    user_settings_variable: None,
    events: EVENTS,
    entries_fail_closed: true,
    next_step: (
        "next: Cursor runs a project's hooks only in a trusted workspace; its Hooks settings list them",
        "next: Cursor runs a project's hooks only in a trusted workspace; its Hooks settings list them",
    ),
    unguarded: None,
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

    #[test]
    fn a_shell_execution_is_a_bash_call_and_its_deny_is_cursors() {
        let event = decode(json!({"hook_event_name": "beforeShellExecution",
            "conversation_id": "c1", "workspace_roots": ["/p"], "command": "rm -rf /"}))
        .unwrap();
        assert_eq!(event.name(), EventName::PreToolUse);
        assert_eq!(event.tool_name(), Some("Bash"));
        assert_eq!(event.record()["tool_input"], json!({"command": "rm -rf /"}));
        assert_eq!(event.session_id(), "c1");
        assert_eq!(event.cwd(), Some("/p"));
        assert_eq!(
            encode(&event, &Outcome::denied("no")).body,
            json!({"permission": "deny", "user_message": "no", "agent_message": "no"})
        );
        let mut rewritten = Outcome::proceed();
        rewritten.updated_input = Some(json!({"command": "rm -ri /"}));
        assert_eq!(encode(&event, &rewritten).body["permission"], "deny");
        assert_eq!(encode(&event, &Outcome::proceed()).body, json!({}));
    }

    #[test]
    fn pre_tool_use_renames_tools_and_takes_a_rewrite() {
        let event = decode(
            json!({"hook_event_name": "preToolUse", "tool_name": "Shell",
            "tool_input": {"command": "npm install", "working_directory": "/p"}}),
        )
        .unwrap();
        assert_eq!(event.tool_name(), Some("Bash"));
        assert_eq!(event.record()["agent_tool_name"], "Shell");
        let mut rewritten = Outcome::proceed();
        rewritten.updated_input = Some(json!({"command": "npm ci", "working_directory": "/p"}));
        assert_eq!(
            encode(&event, &rewritten).body,
            json!({"updated_input": {"command": "npm ci", "working_directory": "/p"}})
        );
        rewritten.rewrite_approved = true;
        assert_eq!(encode(&event, &rewritten).body["permission"], "allow");
    }

    #[test]
    fn a_prompt_is_blocked_a_stop_goes_on_and_mcp_input_is_read() {
        let prompt =
            decode(json!({"hook_event_name": "beforeSubmitPrompt", "prompt": "x"})).unwrap();
        assert_eq!(prompt.name(), EventName::UserPromptSubmit);
        assert_eq!(
            encode(&prompt, &Outcome::denied("not that")).body,
            json!({"continue": false, "user_message": "not that"})
        );
        let stop =
            decode(json!({"hook_event_name": "stop", "status": "completed", "loop_count": 2}))
                .unwrap();
        assert_eq!(stop.name(), EventName::Stop);
        assert_eq!(stop.record()["stop_hook_active"], true);
        assert_eq!(
            encode(&stop, &Outcome::denied("tests fail")).body,
            json!({"followup_message": "tests fail"})
        );
        let mcp = decode(
            json!({"hook_event_name": "beforeMCPExecution", "tool_name": "read",
            "mcp_server_name": "vault", "tool_input": "{\"path\": \"/s\"}"}),
        )
        .unwrap();
        assert_eq!(mcp.tool_name(), Some("mcp__vault__read"));
        assert_eq!(mcp.record()["tool_input"], json!({"path": "/s"}));
        let mut ended = Outcome::denied("tests fail");
        ended.stop = Some(wasm_hooks_core::Attributed {
            hook: wasm_hooks_core::HookId::new("gate"),
            value: "enough".into(),
        });
        let answer = encode(&stop, &ended);
        assert!(
            answer.stderr.iter().any(
                |l| l.contains("takes no request to end the turn; [gate] asked for it: enough")
            ),
            "never dropped without a word: {:?}",
            answer.stderr
        );
        let thought = decode(json!({"hook_event_name": "afterAgentThought"})).unwrap();
        assert_eq!(thought.name(), EventName::Unlisted);
    }
}

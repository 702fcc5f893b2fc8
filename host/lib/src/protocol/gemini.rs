//! Gemini CLI's hook format.
//!
//! Its events (BeforeTool, AfterTool, BeforeAgent, AfterAgent, BeforeModel,
//! AfterModel, PreCompress, SessionStart, SessionEnd, Notification) are
//! aliases in the catalogue; its built-in tools are renamed to the
//! canonical (Claude Code) names so one hook file serves every agent, and
//! the original names are kept in `agent_event_name` / `agent_tool_name`.
//! Answers are `decision: allow|deny` + `reason`, with
//! `hookSpecificOutput.tool_input` for a rewrite, `tool_output` (text) for
//! a rewritten AfterTool output and `additionalContext` for context, exit
//! code 0.

use super::facts::{AgentFacts, HookFile, SettingsShape};
use serde_json::Value;

use wasm_hooks_core::{Event, EventError, EventName, Outcome, Verdict, plain_text};

use super::answer::{GeminiAnswer, GeminiSpecific, PermissionWord};
use super::{Answer, Draft, blocking_reason};

/// Gemini CLI's built-in tools and their canonical names.
const TOOLS: &[(&str, &str)] = &[
    ("run_shell_command", "Bash"),
    ("write_file", "Write"),
    ("replace", "Edit"),
    ("read_file", "Read"),
    ("glob", "Glob"),
    ("search_file_content", "Grep"),
    ("list_directory", "LS"),
    ("web_fetch", "WebFetch"),
    ("google_web_search", "WebSearch"),
    ("write_todos", "TodoWrite"),
];

/// The canonical name of Gemini CLI's built-in tool `tool`.
pub(super) fn canonical_tool(tool: &str) -> Option<&'static str> {
    TOOLS
        .iter()
        .find(|(gemini, _)| *gemini == tool)
        .map(|(_, canonical)| *canonical)
}

pub(super) fn decode(value: Value) -> Result<Event, EventError> {
    let Value::Object(mut record) = value else {
        return Err(EventError::NotAnObject);
    };
    if let Some(name) = record.get("hook_event_name").cloned() {
        record.insert("agent_event_name".into(), name);
    }
    let canonical = record
        .get("tool_name")
        .and_then(Value::as_str)
        .and_then(|tool| TOOLS.iter().find(|(gemini, _)| *gemini == tool))
        .map(|(gemini, canonical)| (*gemini, *canonical));
    if let Some((gemini, canonical)) = canonical {
        record.insert("agent_tool_name".into(), gemini.into());
        record.insert("tool_name".into(), canonical.into());
    }
    Event::from_agent_json(Value::Object(record))
}

pub(super) fn encode(event: &Event, outcome: &Outcome) -> Answer {
    let name = event.name();
    let agent_name = super::agent_name(event);
    let mut draft = Draft::new(outcome, agent_name);
    let mut answer = GeminiAnswer::default();
    let blockable = matches!(
        name,
        EventName::PreToolUse
            | EventName::PostToolUse
            | EventName::UserPromptSubmit
            | EventName::Stop
            | EventName::PreModelRequest
            | EventName::PostModelResponse
    );
    match (
        blocking_reason(&outcome.verdict, "Gemini CLI hooks"),
        &outcome.verdict,
    ) {
        (Some(reason), _) if blockable => {
            answer.decision = Some(PermissionWord::Deny);
            answer.reason = Some(reason);
        }
        (Some(reason), _) => draft.unblockable(&reason),
        // An allow that did not see a rewritten input as it finally is
        // skips no check of Gemini CLI's.
        (None, Verdict::Allow { reason })
            if name == EventName::PreToolUse
                && (outcome.updated_input.is_none() || outcome.rewrite_approved) =>
        {
            answer.decision = Some(PermissionWord::Allow);
            answer.reason.clone_from(reason);
        }
        _ => {}
    }
    if !outcome.requests.is_empty() {
        draft.stderr.push(format!(
            "wasm-hooks: Gemini CLI takes no session title, watched paths, worktree path or terminal sequence; dropped: {}",
            serde_json::to_string(&outcome.requests).expect("requests serialize")
        ));
    }
    let specific = GeminiSpecific {
        hook_event_name: None,
        tool_input: outcome
            .updated_input
            .clone()
            .filter(|_| name == EventName::PreToolUse),
        tool_output: outcome
            .updated_output
            .as_ref()
            .filter(|_| name.has_tool_output())
            .map(model_text),
        additional_context: draft.context(matches!(
            name,
            EventName::PostToolUse | EventName::UserPromptSubmit | EventName::SessionStart
        )),
    };
    if specific != GeminiSpecific::default() {
        answer.hook_specific_output = Some(GeminiSpecific {
            hook_event_name: Some(agent_name.to_owned()),
            ..specific
        });
    }
    answer.common = draft.common();
    draft.finish(&answer)
}

/// What the model reads of a tool output: Gemini CLI's `llmContent` when
/// the output is its `tool_response` shape, else the output as text.
fn model_text(output: &Value) -> String {
    match output.get("llmContent") {
        Some(Value::String(text)) => text.clone(),
        _ => plain_text(output).into_owned(),
    }
}

/// Gemini CLI 0.61's events, by its own names, but those that fire per model call (`BeforeModel`, `AfterModel`, `BeforeToolSelection`).
const EVENTS: &[&str] = &[
    "BeforeTool",
    "AfterTool",
    "BeforeAgent",
    "AfterAgent",
    "SessionStart",
    "SessionEnd",
    "PreCompress",
    "Notification",
];

/// The command entry `install` writes (its timeout in milliseconds; it
/// blocks a failing guard event by itself).
fn command_entry(command: &str, _event: &str, _guards: bool) -> Vec<(&'static str, Value)> {
    vec![
        ("type", "command".into()),
        ("command", command.into()),
        (
            "timeout",
            (super::settings::AGENT_TIMEOUT_SECS * 1000).into(),
        ),
    ]
}

/// What wasm-hooks knows of Gemini CLI as a program (see [`AgentFacts`]).
pub(super) const FACTS: AgentFacts = AgentFacts {
    name: "Gemini CLI",
    program: "gemini",
    driven: "0.61",
    settings: ".gemini/settings.json",
    local_settings: None,
    user_settings: ".gemini/settings.json",
    user_settings_variable: None,
    events: EVENTS,
    entries_fail_closed: true,
    next_step: (
        "next: Gemini CLI runs hooks only in a trusted folder: trust the folder when Gemini CLI asks, or with `/permissions trust`",
        "next: Gemini CLI runs hooks only in a trusted folder: trust the folder when Gemini CLI asks, or with `/permissions trust`",
    ),
    unguarded: None,
    importable: true,
    http_hooks: false,
    hook_file: Some(HookFile {
        shape: SettingsShape::Grouped {
            tool_events: &["BeforeTool", "AfterTool"],
        },
        command_entry,
    }),
};

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn events_and_tools_are_mapped_and_originals_kept() {
        let event = decode(json!({
            "hook_event_name": "BeforeTool", "session_id": "g1", "cwd": "/p",
            "timestamp": "2026-11-21T10:00:00Z",
            "tool_name": "run_shell_command", "tool_input": {"command": "ls"},
            "mcp_context": {"server": "x"}
        }))
        .unwrap();
        assert_eq!(event.name(), EventName::PreToolUse);
        assert_eq!(event.tool_name(), Some("Bash"));
        assert_eq!(event.record()["agent_tool_name"], "run_shell_command");
        assert_eq!(event.record()["agent_event_name"], "BeforeTool");
        assert_eq!(event.record()["mcp_context"], json!({"server": "x"}));
        let unknown =
            decode(json!({"hook_event_name": "AfterTool", "tool_name": "mcp__a__b"})).unwrap();
        assert_eq!(unknown.tool_name(), Some("mcp__a__b"));
    }

    #[test]
    fn session_settings_gemini_cannot_take_are_reported_not_lost() {
        let event =
            decode(json!({"hook_event_name": "SessionStart", "source": "startup"})).unwrap();
        let mut outcome = Outcome::proceed();
        outcome.requests.session_title = Some("Fix the build".into());
        let answer = encode(&event, &outcome);
        assert!(answer.body.get("sessionTitle").is_none());
        assert!(
            answer
                .stderr
                .iter()
                .any(|l| l.contains("Gemini CLI takes no session title")
                    && l.contains("Fix the build")),
            "{:?}",
            answer.stderr
        );
    }

    #[test]
    fn answers_use_gemini_names() {
        let event =
            decode(json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command"}))
                .unwrap();
        let mut outcome = Outcome::proceed();
        outcome.updated_input = Some(json!({"command": "ls -a"}));
        assert_eq!(
            encode(&event, &outcome).body,
            json!({"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"command": "ls -a"}}})
        );
        outcome.verdict = Verdict::Deny {
            reason: "no".into(),
        };
        assert_eq!(encode(&event, &outcome).body["decision"], "deny");
    }

    #[test]
    fn a_rewritten_output_replaces_what_the_model_reads() {
        let event = decode(
            json!({"hook_event_name": "AfterTool", "tool_name": "read_file",
            "tool_response": {"llmContent": "key=AKIA…", "returnDisplay": "key=AKIA…"}}),
        )
        .unwrap();
        let mut outcome = Outcome::proceed();
        outcome.updated_output =
            Some(json!({"llmContent": "key=[REDACTED]", "returnDisplay": "key=[REDACTED]"}));
        assert_eq!(
            encode(&event, &outcome).body,
            json!({"hookSpecificOutput": {"hookEventName": "AfterTool", "tool_output": "key=[REDACTED]"}})
        );
        outcome.updated_output = Some(json!(["a", 1]));
        assert_eq!(
            encode(&event, &outcome).body["hookSpecificOutput"]["tool_output"],
            r#"["a",1]"#
        );
    }
}

//! GitHub Copilot CLI's own hook format (camelCase events in
//! `.github/hooks/*.json`, `~/.copilot/hooks/*.json` and the machine's
//! `policy.d`). Its input does not name the event (but `notification`):
//! the installed command says which (`hook --agent-event preToolUse`).
//!
//! Read onto the catalogue: `sessionId` is `session_id`, `timestamp` (ms)
//! becomes RFC 3339 (the original kept in `agent_timestamp`), `toolName`
//! is renamed as Copilot itself renames for Claude-format hooks (`bash` is
//! `Bash`, `view` `Read`, `create` `Write`, `edit` `Edit`) with the
//! original in `agent_tool_name`, `toolArgs` (an object, or JSON text) is
//! `tool_input`, `toolResult` is `tool_response`; `traceparent` stays.
//!
//! Answers: `permissionDecision` allow / deny / ask with
//! `permissionDecisionReason`, and `modifiedArgs` for a rewrite
//! (`preToolUse`); `behavior` on `permissionRequest`; `decision: "block"`
//! with a `reason` on `agentStop` / `subagentStop` (another turn);
//! `modifiedResult` and `additionalContext` on `postToolUse`;
//! `additionalContext` on `sessionStart`, `subagentStart` and
//! `notification`. A command hook cannot block a prompt in Copilot CLI
//! (it drops their output): a deny there is reported, not obeyed.

use serde::Serialize;
use serde_json::{Map, Value, json};

use wasm_hooks_core::{Event, EventError, EventName, Outcome, Verdict, plain_text};

use super::answer::PermissionWord;
use super::{Answer, Draft, blocking_reason};

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

/// camelCase fields and their Claude Code names.
const FIELDS: &[(&str, &str)] = &[
    ("sessionId", "session_id"),
    ("toolName", "tool_name"),
    ("toolArgs", "tool_input"),
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

pub(super) fn decode(value: Value) -> Result<Event, EventError> {
    let Value::Object(mut record) = value else {
        return Err(EventError::NotAnObject);
    };
    let Some(agent) = record
        .get("hook_event_name")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return Event::from_agent_json(Value::Object(record));
    };
    let Some(name) = EVENTS
        .iter()
        .find(|(copilot, _)| *copilot == agent)
        .map(|(_, name)| *name)
    else {
        // A Claude-format name (`PreToolUse`, from a PascalCase entry), or
        // one this version does not know.
        return Event::from_agent_json(Value::Object(record));
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
        && let Ok(input) = serde_json::from_str::<Value>(text)
    {
        record.insert("tool_input".into(), input);
    }
    rename_tool(&mut record);
    Event::from_record(name, record)
}

fn rename_tool(record: &mut Map<String, Value>) {
    let canonical = record
        .get("tool_name")
        .and_then(Value::as_str)
        .and_then(|tool| TOOLS.iter().find(|(copilot, _)| *copilot == tool));
    if let Some((copilot, canonical)) = canonical {
        record.insert("agent_tool_name".into(), (*copilot).into());
        record.insert("tool_name".into(), (*canonical).into());
    }
}

pub(super) fn encode(event: &Event, outcome: &Outcome) -> Answer {
    let name = event.name();
    let agent = event
        .record()
        .get("agent_event_name")
        .and_then(Value::as_str)
        .unwrap_or(name.as_str());
    let mut draft = Draft::new(outcome, agent);
    let mut answer = CopilotAnswer::default();
    let blocking = blocking_reason(&outcome.verdict, "Copilot CLI hooks");
    match name {
        EventName::PreToolUse => pre_tool_use(outcome, &mut answer),
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
        EventName::Stop | EventName::SubagentStop => {
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
        EventName::PostToolUse
            | EventName::SessionStart
            | EventName::SubagentStart
            | EventName::Notification
    ));
    draft.finish(&answer)
}

/// `preToolUse`: a deny, an ask, an allow that saw the final input; a
/// rewrite as `modifiedArgs`, with `allow` when a hook approved it.
fn pre_tool_use(outcome: &Outcome, answer: &mut CopilotAnswer) {
    let rewritten = outcome.updated_input.as_ref();
    let (word, reason) = match &outcome.verdict {
        Verdict::Deny { reason } => (PermissionWord::Deny, Some(reason.clone())),
        Verdict::Ask(approval) => (PermissionWord::Ask, Some(approval.prompt.clone())),
        Verdict::Allow { .. } | Verdict::Proceed if rewritten.is_some() => {
            answer.modified_args = rewritten.cloned();
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let deny = Outcome {
            verdict: Verdict::Deny {
                reason: "no".into(),
            },
            ..Outcome::proceed()
        };
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
    fn a_stop_goes_on_a_result_is_rewritten_and_a_prompt_deny_is_reported() {
        let stop =
            decode(json!({"hook_event_name": "agentStop", "stopReason": "end_turn"})).unwrap();
        assert_eq!(stop.name(), EventName::Stop);
        let block = Outcome {
            verdict: Verdict::Deny {
                reason: "tests fail".into(),
            },
            ..Outcome::proceed()
        };
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
        let answer = encode(&prompt, &block);
        assert_eq!(answer.body, json!({}));
        assert!(
            answer.stderr[0].contains("cannot be blocked"),
            "{:?}",
            answer.stderr
        );
    }
}

//! Claude Code's answer format (and Codex's, the same with fewer answers).
//!
//! Always exit 0 with a JSON answer: that is the form Claude Code reads
//! whole (on exit 2 it ignores stdout). Per `docs/protocol.md`'s observed table:
//! - PreToolUse: `hookSpecificOutput.permissionDecision` `deny` (the reason
//!   reaches the model, even in bypass mode), `ask`, or `allow`;
//!   `updatedInput` for a rewrite: with `allow` when a trusted hook
//!   approved the new input, else with no decision, which Claude Code
//!   (2.1.197, .330 and .332) applies and then runs its own permission
//!   check on (`ask` would refuse it in a headless `claude -p`); Codex
//!   0.169 runs a rewrite only with `allow`, and rejects `ask` and a bare
//!   `allow`, so an unapproved rewrite is refused there;
//! - PreSkillShellCommand (Claude Code 2.1.332, a skill's inline shell
//!   command): `permissionDecision` `deny` or `ask` stops it; Claude Code
//!   never applies an `updatedInput` there (any value stops the command),
//!   so a rewrite is answered with a deny that says so; an allow adds
//!   nothing and is left unsaid;
//! - UserPromptSubmit, PostToolUse(Failure), Stop, SubagentStop:
//!   `decision: "block"` + `reason`;
//! - PostToolUse, a rewritten output: `updatedToolOutput` for every tool
//!   (Claude Code 2.1.197 and 2.1.330 both take it, checked against the
//!   tool's output shape), and `updatedMCPToolOutput` too for MCP tools
//!   (`mcp__…`); Codex gets the latter only, and for its own tools the model
//!   is told, in context, to use the rewritten output instead, with a
//!   warning on stderr;
//! - context as `hookSpecificOutput.additionalContext` where Claude Code
//!   reads it; `continue: false` + `stopReason`; `systemMessage`;
//!   `suppressOutput`.

use super::facts::{AgentFacts, HookFile, SettingsShape};
use serde_json::Value;
use wasm_hooks_core::{Event, EventName, Outcome, Requests, Verdict, plain_text};

use super::answer::{
    ClaudeAnswer, ClaudeSpecific, DecisionWord, ElicitationAction, PermissionWord, RequestDecision,
};
use super::{Answer, Draft, blocking_reason};

/// Which agent reads the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    /// Claude Code's.
    Claude,
    /// No `ask` and no bare `allow` on PreToolUse: an ask becomes a deny
    /// (never dropped), an allow without a rewrite is left unsaid.
    Codex,
}

/// Events whose `additionalContext` Claude Code reads (2.1.197 and
/// 2.1.330 alike, for the events each has).
fn reads_context(event: EventName) -> bool {
    matches!(
        event,
        EventName::PreToolUse
            | EventName::PostToolUse
            | EventName::PostToolUseFailure
            | EventName::PostToolBatch
            | EventName::UserPromptSubmit
            | EventName::UserPromptExpansion
            | EventName::SessionStart
            | EventName::Setup
            | EventName::SubagentStart
            | EventName::Stop
            | EventName::SubagentStop
            | EventName::Notification
            | EventName::PostModelSwitch
    )
}

/// Events a `decision: "block"` answer acts on.
fn takes_block(event: EventName) -> bool {
    matches!(
        event,
        EventName::UserPromptSubmit
            | EventName::UserPromptExpansion
            | EventName::PostToolUse
            | EventName::PostToolUseFailure
            | EventName::PostToolBatch
            | EventName::Stop
            | EventName::SubagentStop
            | EventName::StopFailure
            | EventName::TaskCompleted
            | EventName::TeammateIdle
    )
}

pub(super) fn encode(event: &Event, outcome: &Outcome, dialect: Dialect) -> Answer {
    let name = event.name();
    let mut draft = Draft::new(outcome, name.as_str());
    let mut answer = ClaudeAnswer::default();
    let mut specific = ClaudeSpecific::default();
    match name {
        EventName::PreToolUse | EventName::PreModelSwitch => {
            pre_tool_use(outcome, dialect, &mut specific);
        }
        EventName::PreSkillShellCommand => skill_shell_command(outcome, &mut specific),
        EventName::PermissionRequest => permission_request(outcome, &mut specific),
        EventName::PermissionDenied if matches!(outcome.verdict, Verdict::Allow { .. }) => {
            specific.retry = Some(true);
        }
        EventName::Elicitation | EventName::ElicitationResult => {
            elicitation(outcome, &mut specific);
        }
        _ => {
            if let Some(reason) = blocking_reason(&outcome.verdict, "this event") {
                if takes_block(name) {
                    answer.decision = Some(DecisionWord::Deny);
                    answer.reason = Some(reason);
                } else {
                    draft.unblockable(&reason);
                }
            }
        }
    }
    if name == EventName::MessageDisplay {
        specific.display_content = outcome
            .updated_input
            .as_ref()
            .map(|shown| plain_text(shown).into_owned());
    }
    if let Some(output) = &outcome.updated_output {
        rewritten_output(event, output, dialect, &mut specific, &mut draft);
    }
    requests(
        name,
        &outcome.requests,
        dialect,
        &mut answer,
        &mut specific,
        &mut draft,
    );
    specific.additional_context = draft.context(reads_context(name));
    if specific != ClaudeSpecific::default() {
        specific.hook_event_name = Some(name.as_str().to_owned());
        answer.hook_specific_output = Some(specific);
    }
    answer.common = draft.common();
    cap_lengths(&mut answer);
    draft.finish(&answer)
}

/// Claude Code 2.1.330's length caps, in UTF-16 units: it cuts longer text
/// itself, without saying so, so the adapter cuts first and marks the cut.
const REASON_MAX: usize = 2_000;
const SYSTEM_MESSAGE_MAX: usize = 4_000;
const CONTEXT_MAX: usize = 8_000;

/// Cut every text field of `answer` to Claude Code's cap for it.
fn cap_lengths(answer: &mut ClaudeAnswer) {
    cap(&mut answer.reason, REASON_MAX);
    cap(&mut answer.common.stop_reason, REASON_MAX);
    cap(&mut answer.common.system_message, SYSTEM_MESSAGE_MAX);
    if let Some(specific) = &mut answer.hook_specific_output {
        cap(&mut specific.permission_decision_reason, REASON_MAX);
        cap(&mut specific.additional_context, CONTEXT_MAX);
    }
}

/// Cut `text` to at most `max` UTF-16 units, the mark of the cut included.
fn cap(text: &mut Option<String>, max: usize) {
    const MARK: &str = " […cut by wasm-hooks to the agent's limit]";
    let Some(text) = text.as_mut().filter(|t| t.encode_utf16().count() > max) else {
        return;
    };
    let room = max.saturating_sub(MARK.encode_utf16().count());
    let mut units = 0;
    let end = text
        .char_indices()
        .find(|(_, c)| {
            units += c.len_utf16();
            units > room
        })
        .map_or(text.len(), |(at, _)| at);
    text.truncate(end);
    text.push_str(MARK);
}

/// The most of a rewritten output handed to the model as context.
const NOTE_MAX: usize = 10_000;

/// A PostToolUse output rewritten by the hooks. Claude Code (2.1.197 and
/// 2.1.330 alike) replaces any tool's output with `updatedToolOutput`;
/// `updatedMCPToolOutput`, the older field, goes with it for MCP tools,
/// which Codex reads too. Where the agent cannot replace the output (Codex,
/// for its own tools), the model is handed it as context, with a warning.
fn rewritten_output(
    event: &Event,
    output: &Value,
    dialect: Dialect,
    specific: &mut ClaudeSpecific,
    draft: &mut Draft<'_>,
) {
    let tool = event.tool_name().unwrap_or("the tool");
    let mcp = tool.starts_with("mcp__");
    if mcp {
        specific.updated_mcp_tool_output = Some(output.clone());
    }
    if dialect == Dialect::Claude {
        specific.updated_tool_output = Some(output.clone());
    }
    if dialect == Dialect::Claude || mcp {
        return;
    }
    let mut text = plain_text(output).into_owned();
    if text.len() > NOTE_MAX {
        let cut = text.floor_char_boundary(NOTE_MAX);
        let rest = text.len() - cut;
        text.truncate(cut);
        text.push_str(&format!(
            "\n[… {rest} more bytes of the rewritten output left out]"
        ));
    }
    draft.stderr.push(format!(
        "wasm-hooks: hooks rewrote the output of {tool}, which Codex replaces only for MCP tools; the model was told to use the rewritten output instead"
    ));
    draft.note(format!(
        "A hook rewrote the output of this {tool} call, but the agent cannot replace it. Use this rewritten output instead of the original, and do not repeat anything the original had that this one leaves out:\n{text}"
    ));
}

/// PermissionRequest: an allow grants the permission, a rewrite grants it
/// for the new input when a hook approved that input (unapproved, the
/// person decides); a deny refuses it with the reason for the model and,
/// when a hook ended the turn, `interrupt`; an ask leaves the person's own
/// prompt to decide.
fn permission_request(outcome: &Outcome, specific: &mut ClaudeSpecific) {
    let rewritten = outcome.updated_input.clone();
    specific.decision = match &outcome.verdict {
        Verdict::Deny { reason } => Some(RequestDecision::Deny {
            message: Some(reason.clone()),
            interrupt: outcome.stop.as_ref().map(|_| true),
        }),
        Verdict::Allow { .. } | Verdict::Proceed if rewritten.is_some() => {
            outcome.rewrite_approved.then_some(RequestDecision::Allow {
                updated_input: rewritten,
            })
        }
        Verdict::Allow { .. } => Some(RequestDecision::Allow {
            updated_input: None,
        }),
        Verdict::Proceed | Verdict::Ask(_) => None,
    };
}

/// An MCP server's question: a deny declines it (a deny that ends the
/// turn cancels it), an allow or a rewrite of its `content` accepts it
/// with that content; no opinion leaves it to the person.
fn elicitation(outcome: &Outcome, specific: &mut ClaudeSpecific) {
    let answered = outcome.updated_input.clone();
    specific.action = match &outcome.verdict {
        Verdict::Deny { .. } if outcome.stop.is_some() => Some(ElicitationAction::Cancel),
        Verdict::Deny { .. } => Some(ElicitationAction::Decline),
        Verdict::Allow { .. } => Some(ElicitationAction::Accept),
        Verdict::Proceed if answered.is_some() => Some(ElicitationAction::Accept),
        Verdict::Proceed | Verdict::Ask(_) => None,
    };
    if specific.action == Some(ElicitationAction::Accept) {
        specific.content = answered;
    }
}

/// What the hooks ask of the agent, where this event takes it (Claude
/// Code 2.1.330's `hookSpecificOutput`); the rest is reported as dropped.
fn requests(
    name: EventName,
    requests: &Requests,
    dialect: Dialect,
    answer: &mut ClaudeAnswer,
    specific: &mut ClaudeSpecific,
    draft: &mut Draft<'_>,
) {
    let mut dropped = Vec::new();
    let mut offer =
        |field: &'static str, taken: bool, slot: &mut Option<String>, value: &Option<String>| {
            match value {
                Some(v) if taken => *slot = Some(v.clone()),
                Some(_) => dropped.push(field),
                None => {}
            }
        };
    let session_start = name == EventName::SessionStart;
    offer(
        "sessionTitle",
        session_start || name == EventName::UserPromptSubmit,
        &mut specific.session_title,
        &requests.session_title,
    );
    offer(
        "initialUserMessage",
        session_start,
        &mut specific.initial_user_message,
        &requests.initial_user_message,
    );
    offer(
        "worktreePath",
        name == EventName::WorktreeCreate,
        &mut specific.worktree_path,
        &requests.worktree_path,
    );
    offer(
        "terminalSequence",
        dialect == Dialect::Claude,
        &mut answer.terminal_sequence,
        &requests.terminal_sequence,
    );
    if !requests.watch_paths.is_empty() {
        if session_start || matches!(name, EventName::CwdChanged | EventName::FileChanged) {
            specific.watch_paths = Some(requests.watch_paths.clone());
        } else {
            dropped.push("watchPaths");
        }
    }
    if !dropped.is_empty() {
        draft.stderr.push(format!(
            "wasm-hooks: {name} does not take {}; dropped",
            dropped.join(", ")
        ));
    }
}

/// A skill's inline shell command: a deny or an ask stops it, and so does
/// a rewrite, which Claude Code cannot apply there (said in the reason);
/// an allow or no opinion lets Claude Code's own flow go on.
fn skill_shell_command(outcome: &Outcome, specific: &mut ClaudeSpecific) {
    let (decision, reason) = match &outcome.verdict {
        Verdict::Deny { reason } => (PermissionWord::Deny, reason.clone()),
        Verdict::Ask(approval) => (PermissionWord::Ask, approval.prompt.clone()),
        Verdict::Allow { .. } | Verdict::Proceed if outcome.updated_input.is_some() => (
            PermissionWord::Deny,
            "a hook rewrote this skill's shell command, and Claude Code cannot run a rewritten one, so it was stopped".to_owned(),
        ),
        Verdict::Allow { .. } | Verdict::Proceed => return,
    };
    specific.permission_decision = Some(decision);
    specific.permission_decision_reason = Some(reason);
}

fn pre_tool_use(outcome: &Outcome, dialect: Dialect, specific: &mut ClaudeSpecific) {
    let rewritten = outcome.updated_input.as_ref();
    // A rewrite no hook approved as it finally is: the agent's own
    // permission flow decides (Claude Code applies an `updatedInput` sent
    // with no decision and runs its own check on the new input; Codex runs
    // a rewrite only with `allow`, so it is refused).
    let unapproved = rewritten.is_some() && !outcome.rewrite_approved;
    let (decision, reason) = match (&outcome.verdict, dialect) {
        (Verdict::Deny { reason }, _) => (PermissionWord::Deny, Some(reason.clone())),
        (Verdict::Ask(approval), Dialect::Claude) => {
            (PermissionWord::Ask, Some(approval.prompt.clone()))
        }
        (Verdict::Ask(_), Dialect::Codex) => (
            PermissionWord::Deny,
            blocking_reason(&outcome.verdict, "Codex hooks"),
        ),
        (Verdict::Allow { .. } | Verdict::Proceed, Dialect::Claude) if unapproved => {
            specific.updated_input = rewritten.cloned();
            return;
        }
        (Verdict::Allow { .. } | Verdict::Proceed, Dialect::Codex) if unapproved => (
            PermissionWord::Deny,
            Some("a hook rewrote the tool input, and no hook approved the new input; Codex runs a rewritten input only when it is approved".to_owned()),
        ),
        (Verdict::Allow { reason }, Dialect::Claude) => (PermissionWord::Allow, reason.clone()),
        // Both apply `allow` with `updatedInput` as a rewrite (Codex 0.169
        // takes nothing else with it); here a hook approved it.
        (Verdict::Allow { .. } | Verdict::Proceed, _) if rewritten.is_some() => (
            PermissionWord::Allow,
            Some("tool input rewritten by a hook, and approved".to_owned()),
        ),
        // Codex rejects a bare `allow`: saying nothing lets its own check
        // run.
        (Verdict::Allow { .. } | Verdict::Proceed, _) => return,
    };
    specific.permission_decision = Some(decision);
    specific.permission_decision_reason = reason;
    if decision != PermissionWord::Deny {
        specific.updated_input = rewritten.cloned();
    }
}

/// the events a guard or an audit needs, not the ones that fire per displayed chunk or file change.
const EVENTS: &[&str] = &[
    "PreToolUse",
    "PreSkillShellCommand",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "Notification",
    "PreCompact",
];

/// The command entry `install` writes: `onFailure: "block"` on a guard
/// event (Claude Code 2.1.330 on; `tests/fixtures/settings-tolerance.md`).
fn command_entry(command: &str, _event: &str, guards: bool) -> Vec<(&'static str, Value)> {
    let mut fields = vec![
        ("type", "command".into()),
        ("command", command.into()),
        ("timeout", super::settings::AGENT_TIMEOUT_SECS.into()),
    ];
    if guards {
        fields.push(("onFailure", "block".into()));
    }
    fields
}

/// What wasm-hooks knows of Claude Code as a program (see [`AgentFacts`]).
pub(super) const FACTS: AgentFacts = AgentFacts {
    name: "Claude Code",
    program: "claude",
    driven: "2.1.332",
    settings: ".claude/settings.json",
    local_settings: Some("settings.local.json"),
    user_settings: ".claude/settings.json",
    user_settings_variable: None,
    events: EVENTS,
    entries_fail_closed: true,
    next_step: (
        "next: Claude Code reads the hooks when a session starts; `/hooks` in Claude Code lists them",
        "next: Claude Code reads the hooks when a session starts; `/hooks` in Claude Code lists them",
    ),
    unguarded: None,
    importable: true,
    http_hooks: true,
    hook_file: Some(HookFile {
        shape: SettingsShape::Grouped {
            tool_events: &[
                "PreToolUse",
                "PreSkillShellCommand",
                "PermissionRequest",
                "PostToolUse",
                "PostToolUseFailure",
            ],
        },
        command_entry,
    }),
};

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn texts_are_cut_to_claude_codes_caps_in_utf16_units_and_marked() {
        let long = "é".repeat(3_000) + &"😀".repeat(3_000);
        let o = Outcome {
            verdict: Verdict::Deny {
                reason: long.clone(),
            },
            ..Outcome::proceed()
        };
        let answer = encode(&pre(), &o, Dialect::Claude);
        let reason = answer.body["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(reason.encode_utf16().count() <= 2_000, "{}", reason.len());
        assert!(reason.ends_with("limit]"), "{reason}");
        assert!(reason.starts_with("ééé"));
        let mut short = Some("fits".to_owned());
        cap(&mut short, 10);
        assert_eq!(short.as_deref(), Some("fits"));
        let mut emoji = Some("😀".repeat(100));
        cap(&mut emoji, 60);
        let emoji = emoji.unwrap();
        assert!(emoji.encode_utf16().count() <= 60, "{emoji}");
    }
    use wasm_hooks_core::{Approval, Attributed, Context, HookId, Role};

    fn outcome(verdict: Verdict) -> Outcome {
        Outcome {
            verdict,
            ..Outcome::proceed()
        }
    }

    fn pre() -> Event {
        Event::pre_tool_use("Bash", json!({"command": "ls"}))
    }

    #[test]
    fn pre_tool_use_answers() {
        let deny = encode(
            &pre(),
            &outcome(Verdict::Deny {
                reason: "no".into(),
            }),
            Dialect::Claude,
        );
        assert_eq!(
            deny.body,
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}})
        );
        let mut rewritten = Outcome::proceed();
        rewritten.updated_input = Some(json!({"command": "ls -a"}));
        // No hook approved the new input: Claude Code gets it with no
        // decision (it applies it and runs its own permission check), Codex
        // (which runs a rewrite only with allow) refuses it.
        let undecided = encode(&pre(), &rewritten, Dialect::Claude);
        assert_eq!(
            undecided.body,
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "ls -a"}}})
        );
        let refused = encode(&pre(), &rewritten, Dialect::Codex);
        assert_eq!(
            refused.body["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
        rewritten.rewrite_approved = true;
        let answer = encode(&pre(), &rewritten, Dialect::Claude);
        assert_eq!(
            answer.body["hookSpecificOutput"]["updatedInput"],
            json!({"command": "ls -a"})
        );
        assert_eq!(
            answer.body["hookSpecificOutput"]["permissionDecision"],
            "allow"
        );
        let codex = encode(&pre(), &rewritten, Dialect::Codex);
        assert_eq!(
            codex.body["hookSpecificOutput"]["permissionDecision"],
            "allow"
        );
        assert_eq!(
            codex.body["hookSpecificOutput"]["updatedInput"],
            json!({"command": "ls -a"})
        );
        assert_eq!(
            encode(&pre(), &Outcome::proceed(), Dialect::Claude).body,
            json!({})
        );
    }

    #[test]
    fn a_skill_shell_command_is_stopped_by_a_deny_an_ask_or_any_rewrite() {
        let skill = Event::new(EventName::PreSkillShellCommand)
            .with("tool_name", "Bash")
            .with("tool_input", json!({"command": "rm -rf victim"}))
            .with("command_name", "clean");
        let specific = |o: &Outcome| encode(&skill, o, Dialect::Claude).body;
        assert_eq!(
            specific(&outcome(Verdict::Deny {
                reason: "no rm -rf".into()
            })),
            json!({"hookSpecificOutput": {"hookEventName": "PreSkillShellCommand",
                "permissionDecision": "deny", "permissionDecisionReason": "no rm -rf"}})
        );
        let mut rewritten = outcome(Verdict::Allow { reason: None });
        rewritten.updated_input = Some(json!({"command": "rm -ri victim"}));
        rewritten.rewrite_approved = true;
        let stopped = specific(&rewritten);
        assert_eq!(stopped["hookSpecificOutput"]["permissionDecision"], "deny");
        assert!(stopped["hookSpecificOutput"].get("updatedInput").is_none());
        assert!(
            stopped["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .contains("cannot run a rewritten one")
        );
        assert_eq!(
            specific(&outcome(Verdict::Allow { reason: None })),
            json!({})
        );
        assert_eq!(specific(&Outcome::proceed()), json!({}));
    }

    #[test]
    fn a_rewritten_output_replaces_any_tools_output_and_is_context_for_codex() {
        let masked = json!([{"type": "text", "text": "token [REDACTED]"}]);
        let mut o = Outcome::proceed();
        o.updated_output = Some(masked.clone());
        let mcp = Event::post_tool_use("mcp__vault__read", json!({}), json!([]));
        let answer = encode(&mcp, &o, Dialect::Claude);
        assert_eq!(
            answer.body,
            json!({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                "updatedToolOutput": masked, "updatedMCPToolOutput": masked}})
        );
        assert!(answer.stderr.is_empty(), "{:?}", answer.stderr);
        let codex_mcp = encode(&mcp, &o, Dialect::Codex);
        assert_eq!(
            codex_mcp.body,
            json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": masked}})
        );

        let redacted = json!({"stdout": "token [REDACTED]"});
        o.updated_output = Some(redacted.clone());
        let bash = Event::post_tool_use("Bash", json!({}), json!({"stdout": "token ghp_…"}));
        let answer = encode(&bash, &o, Dialect::Claude);
        assert_eq!(
            answer.body,
            json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": redacted}})
        );
        assert!(answer.stderr.is_empty(), "{:?}", answer.stderr);
        {
            let answer = encode(&bash, &o, Dialect::Codex);
            let context = answer.body["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .unwrap();
            assert!(context.contains("token [REDACTED]"), "{context}");
            assert!(context.contains("instead of the original"), "{context}");
            assert!(
                answer.body["hookSpecificOutput"]
                    .get("updatedMCPToolOutput")
                    .is_none()
            );
            assert!(
                answer.stderr[0].contains("only for MCP tools"),
                "{:?}",
                answer.stderr
            );
        }
        o.updated_output = Some(json!("é".repeat(6_000)));
        let long = encode(&bash, &o, Dialect::Codex);
        let context = long.body["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        assert!(context.len() < 10_500, "{}", context.len());
        assert!(context.ends_with("[… 2000 more bytes of the rewritten output left out]"));
    }

    #[test]
    fn a_permission_request_is_granted_refused_or_left_to_the_person() {
        let request = Event::new(EventName::PermissionRequest)
            .with("tool_name", "Bash")
            .with("tool_input", json!({"command": "ls"}));
        let specific =
            |o: &Outcome| encode(&request, o, Dialect::Claude).body["hookSpecificOutput"].clone();
        let mut granted = outcome(Verdict::Allow { reason: None });
        assert_eq!(
            specific(&granted),
            json!({"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}})
        );
        granted.updated_input = Some(json!({"command": "ls -a"}));
        assert_eq!(
            encode(&request, &granted, Dialect::Claude).body,
            json!({}),
            "a rewrite nobody approved: the person decides"
        );
        granted.rewrite_approved = true;
        assert_eq!(
            specific(&granted)["decision"],
            json!({"behavior": "allow", "updatedInput": {"command": "ls -a"}})
        );
        let mut refused = outcome(Verdict::Deny {
            reason: "not here".into(),
        });
        assert_eq!(
            specific(&refused)["decision"],
            json!({"behavior": "deny", "message": "not here"})
        );
        refused.stop = Some(Attributed {
            hook: HookId::new("h"),
            value: "enough".into(),
        });
        assert_eq!(specific(&refused)["decision"]["interrupt"], true);
        let asked = outcome(Verdict::Ask(Approval {
            prompt: "sure?".into(),
            options: vec![],
            timeout_ms: None,
            default_allow: false,
        }));
        assert_eq!(encode(&request, &asked, Dialect::Claude).body, json!({}));
    }

    #[test]
    fn a_retry_after_a_denial_a_shown_text_and_a_model_switch_deny() {
        let denied = Event::new(EventName::PermissionDenied).with("tool_name", "Bash");
        let allow = outcome(Verdict::Allow { reason: None });
        assert_eq!(
            encode(&denied, &allow, Dialect::Claude).body,
            json!({"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": true}})
        );
        let shown = Event::new(EventName::MessageDisplay).with("delta", "AKIA…");
        let mut masked = Outcome::proceed();
        masked.updated_input = Some(json!("[key hidden]"));
        assert_eq!(
            encode(&shown, &masked, Dialect::Claude).body,
            json!({"hookSpecificOutput": {"hookEventName": "MessageDisplay", "displayContent": "[key hidden]"}})
        );
        let switch = Event::new(EventName::PreModelSwitch);
        let deny = outcome(Verdict::Deny {
            reason: "stay".into(),
        });
        assert_eq!(
            encode(&switch, &deny, Dialect::Claude).body["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
    }

    #[test]
    fn an_mcp_servers_question_is_accepted_with_answers_declined_or_left_alone() {
        let asked = Event::new(EventName::Elicitation).with("mcp_server_name", "vault");
        let specific =
            |o: &Outcome| encode(&asked, o, Dialect::Claude).body["hookSpecificOutput"].clone();
        let mut answered = Outcome::proceed();
        answered.updated_input = Some(json!({"environment": "staging"}));
        assert_eq!(
            specific(&answered),
            json!({"hookEventName": "Elicitation", "action": "accept", "content": {"environment": "staging"}})
        );
        let declined = outcome(Verdict::Deny {
            reason: "no".into(),
        });
        assert_eq!(specific(&declined)["action"], "decline");
        assert_eq!(
            encode(&asked, &Outcome::proceed(), Dialect::Claude).body,
            json!({})
        );
    }

    #[test]
    fn requests_go_where_the_event_takes_them_and_the_rest_is_reported() {
        let mut o = Outcome::proceed();
        o.requests = Requests {
            session_title: Some("Fix the build".into()),
            initial_user_message: Some("run the tests".into()),
            watch_paths: vec!["/p/Cargo.toml".into()],
            worktree_path: None,
            terminal_sequence: Some("\u{7}".into()),
        };
        let start = encode(&Event::session_start("startup"), &o, Dialect::Claude);
        assert_eq!(
            start.body,
            json!({"terminalSequence": "\u{7}", "hookSpecificOutput": {"hookEventName": "SessionStart",
                "sessionTitle": "Fix the build", "initialUserMessage": "run the tests",
                "watchPaths": ["/p/Cargo.toml"]}})
        );
        assert!(start.stderr.is_empty(), "{:?}", start.stderr);
        let prompt = encode(&Event::user_prompt_submit("hi"), &o, Dialect::Claude);
        assert_eq!(
            prompt.body["hookSpecificOutput"]["sessionTitle"],
            "Fix the build"
        );
        assert!(
            prompt.stderr[0].contains("does not take initialUserMessage, watchPaths"),
            "{:?}",
            prompt.stderr
        );
        let codex = encode(&Event::session_start("startup"), &o, Dialect::Codex);
        assert!(codex.body.get("terminalSequence").is_none());
        assert!(
            codex.stderr[0].contains("terminalSequence"),
            "{:?}",
            codex.stderr
        );
        let mut made = Outcome::proceed();
        made.requests.worktree_path = Some("/wt/feature".into());
        assert_eq!(
            encode(
                &Event::new(EventName::WorktreeCreate),
                &made,
                Dialect::Claude
            )
            .body["hookSpecificOutput"]["worktreePath"],
            "/wt/feature"
        );
    }

    #[test]
    fn ask_becomes_block_where_it_cannot_be_asked() {
        let ask = outcome(Verdict::Ask(Approval {
            prompt: "sure?".into(),
            options: vec![],
            timeout_ms: None,
            default_allow: false,
        }));
        let answer = encode(&Event::stop(false), &ask, Dialect::Claude);
        assert_eq!(answer.body["decision"], "block");
        assert!(answer.body["reason"].as_str().unwrap().ends_with("sure?"));
    }

    #[test]
    fn context_where_read_and_reported_where_not() {
        let mut o = Outcome::proceed();
        o.contexts.push(Attributed {
            hook: HookId::new("h"),
            value: Context {
                text: "remember".into(),
                role: Role::System,
            },
        });
        let start = encode(&Event::session_start("startup"), &o, Dialect::Claude);
        assert_eq!(
            start.body,
            json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "remember"}})
        );
        let end = encode(&Event::session_end("other"), &o, Dialect::Claude);
        assert_eq!(end.body, json!({}));
        assert!(end.stderr[0].contains("SessionEnd takes no context"));
    }
}

//! What a hook's answer means, as one [`HookResult`]: a JSON answer in any
//! shape of `docs/protocol.md` (command hooks' stdout, HTTP hooks' body), a
//! command hook's plain text, and exit code 2's block. Pure functions: no
//! process, no network here.

use serde::Deserialize;
use serde_json::Value;

use wasm_hooks_core::{
    Approval, Context, Decision, EventName, HookResult, Requests, Role, Severity, UserMessage,
};

use super::action::Action;
use crate::protocol::{
    ClaudeAnswer, ClaudeSpecific, DecisionWord, ElicitationAction, PermissionWord, RequestDecision,
};

/// Why a hook's answer cannot be read: the message names the field and
/// what was wrong (`` `action`: unknown variant … ``), for the hook's
/// failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct AnswerError(String);

impl AnswerError {
    /// An answer that cannot be read, for `why`.
    pub(crate) fn new(why: String) -> Self {
        Self(why)
    }

    /// The same error, said to come from `whence` (`the model's answer`).
    pub(crate) fn within(self, whence: &str) -> Self {
        Self(format!("{whence}: {}", self.0))
    }
}

/// The answer of a hook that exited 0: JSON when stdout starts with `{`,
/// otherwise plain text, which is context for UserPromptSubmit and
/// SessionStart and ignored elsewhere.
///
/// # Errors
/// When stdout starts with `{` but is not a valid answer; the message says
/// why (the parse error, or the unknown value).
pub(crate) fn on_success(event: EventName, stdout: &str) -> Result<HookResult, AnswerError> {
    let text = stdout.trim();
    if text.starts_with('{') {
        let doc = parse(text)
            .map_err(|e| AnswerError(format!("stdout is not a valid JSON answer: {e}")))?;
        return doc.into_result(event);
    }
    let mut result = HookResult::new(Decision::Proceed);
    if !text.is_empty() && matches!(event, EventName::UserPromptSubmit | EventName::SessionStart) {
        result.context = Some(Context {
            text: text.to_owned(),
            role: Role::System,
        });
    }
    Ok(result)
}

/// A JSON answer to an `event`, in any of the protocol's shapes.
///
/// # Errors
/// When the text is not JSON, or names an unknown decision or action.
pub(crate) fn json_answer(event: EventName, text: &str) -> Result<HookResult, AnswerError> {
    let doc = parse(text).map_err(|e| AnswerError(format!("not a valid JSON answer: {e}")))?;
    doc.into_result(event)
}

/// A JSON answer already parsed (an embedding program's function's), in
/// any of the protocol's shapes.
///
/// # Errors
/// When it names an unknown decision or action, or a field has the wrong
/// type; the message names the field.
pub(crate) fn value_answer(event: EventName, answer: Value) -> Result<HookResult, AnswerError> {
    let doc: AnswerDoc = serde_path_to_error::deserialize(answer).map_err(located)?;
    doc.into_result(event)
}

/// The answer's JSON; an error names the field it is about (`action:
/// unknown variant …`).
fn parse(text: &str) -> Result<AnswerDoc, AnswerError> {
    serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(text)).map_err(located)
}

/// A deserialization error, naming the field it is about.
fn located<E: std::fmt::Display>(e: serde_path_to_error::Error<E>) -> AnswerError {
    AnswerError(match e.path().to_string() {
        path if path == "." => e.into_inner().to_string(),
        path => format!("`{path}`: {}", e.into_inner()),
    })
}

/// The answer of a hook that exited 2: block, with stderr as the reason
/// (stdout is ignored, as Claude Code does).
pub(crate) fn on_block(stderr: &str) -> HookResult {
    let reason = match stderr.trim() {
        "" => "blocked by a hook (exit code 2)".to_owned(),
        text => text.to_owned(),
    };
    HookResult::new(Decision::Deny { reason })
}

/// Every JSON answer shape, read leniently (unknown keys are ignored, as
/// agents add their own): Claude Code's, and the `action` shapes of the
/// other agents beside it.
#[derive(Deserialize, Default)]
struct AnswerDoc {
    #[serde(flatten)]
    claude: ClaudeAnswer,
    action: Option<Action>,
    modified_args: Option<Value>,
    message: Option<String>,
    metadata: Option<Value>,
    data: Option<Value>,
    context_injection: Option<String>,
    context_injection_role: Option<Role>,
    user_message: Option<String>,
    user_message_level: Option<Severity>,
    suppress_output: Option<bool>,
    approval_prompt: Option<String>,
    approval_options: Option<Vec<String>>,
    /// Seconds.
    approval_timeout: Option<f64>,
    /// `allow` or `deny`.
    approval_default: Option<String>,
}

impl AnswerDoc {
    fn into_result(mut self, event: EventName) -> Result<HookResult, AnswerError> {
        let mut specific = self.claude.hook_specific_output.take().unwrap_or_default();
        let (request_message, interrupt) = match &specific.decision {
            Some(RequestDecision::Deny { message, interrupt }) => {
                (message.clone(), *interrupt == Some(true))
            }
            _ => (None, false),
        };
        let reason = self
            .claude
            .reason
            .clone()
            .or_else(|| specific.permission_decision_reason.clone())
            .or(request_message)
            .or_else(|| self.message.clone());
        let rewrite = self.rewrite(event, &specific);
        let decision = self.decision(&specific, reason.clone(), &rewrite)?;
        let mut result = HookResult::new(decision);
        result.requests = requests(&mut specific, self.claude.terminal_sequence.take());
        let context = specific.additional_context.or(self.context_injection);
        result.context = context.map(|text| Context {
            text,
            role: self.context_injection_role.unwrap_or_default(),
        });
        let allowed = self.action == Some(Action::Allow);
        result.user_message = self
            .user_message
            .or_else(|| allowed.then_some(self.message).flatten())
            .map(|text| UserMessage {
                severity: self.user_message_level.unwrap_or(Severity::Info),
                text,
            });
        let common = self.claude.common;
        result.system_message = common.system_message;
        // A PermissionRequest deny with `interrupt` ends the turn too.
        if common.go_on == Some(false) || interrupt {
            result.stop = Some(
                common
                    .stop_reason
                    .or(reason.filter(|_| interrupt))
                    .unwrap_or_else(|| "a hook ended the turn".to_owned()),
            );
        }
        result.suppress_output = common
            .suppress_output
            .or(self.suppress_output)
            .unwrap_or(false);
        result.metadata = self.metadata;
        Ok(result)
    }

    /// The replacement the answer carries, if any. On PostToolUse the tool
    /// already ran: a generic `data` replacement is its new output there, as
    /// WIT's `modify` is.
    fn rewrite(&mut self, event: EventName, specific: &ClaudeSpecific) -> Rewrite {
        let granted_input = match &specific.decision {
            Some(RequestDecision::Allow { updated_input }) => updated_input.clone(),
            _ => None,
        };
        let shown = specific.display_content.clone().map(Value::String);
        let updated_input = specific
            .updated_input
            .clone()
            .or(granted_input)
            .or(shown)
            .or_else(|| specific.content.clone());
        let new_output = specific
            .updated_tool_output
            .clone()
            .or_else(|| specific.updated_mcp_tool_output.clone());
        let (modified_args, data) = (self.modified_args.take(), self.data.take());
        if event.has_tool_output() {
            Rewrite {
                event,
                input: modified_args.or(updated_input),
                output: data.or(new_output),
            }
        } else {
            Rewrite {
                event,
                input: modified_args.or(data).or(updated_input),
                output: new_output,
            }
        }
    }

    /// The decision, from the first of `action`, `decision` and
    /// `permissionDecision` the answer gives.
    fn decision(
        &self,
        specific: &ClaudeSpecific,
        reason: Option<String>,
        rewrite: &Rewrite,
    ) -> Result<Decision, AnswerError> {
        let deny = || Decision::Deny {
            reason: reason
                .clone()
                .unwrap_or_else(|| "blocked by a hook".to_owned()),
        };
        let allow = || Decision::Allow {
            reason: reason.clone(),
        };
        let replaced = rewrite.input.is_some() || rewrite.output.is_some();
        // PermissionRequest's and PermissionDenied's own words, as
        // PreToolUse's.
        let granted = match (&specific.decision, specific.action) {
            (Some(RequestDecision::Allow { .. }), _) | (None, Some(ElicitationAction::Accept)) => {
                Some(PermissionWord::Allow)
            }
            (Some(RequestDecision::Deny { .. }), _)
            | (None, Some(ElicitationAction::Decline | ElicitationAction::Cancel)) => {
                Some(PermissionWord::Deny)
            }
            (None, None) => (specific.retry == Some(true)).then_some(PermissionWord::Allow),
        };
        Ok(
            match (
                self.action,
                self.claude.decision,
                specific.permission_decision.or(granted),
            ) {
                (Some(action), _, _) => match action {
                    Action::Allow => allow(),
                    Action::Continue | Action::InjectContext => Decision::Proceed,
                    Action::Deny => deny(),
                    Action::Modify => rewrite.decision()?,
                    Action::Ask => self.ask(reason.as_deref()),
                },
                (None, Some(decision), _) => match decision {
                    DecisionWord::Allow => allow(),
                    DecisionWord::Deny => deny(),
                    DecisionWord::Modify => rewrite.decision()?,
                },
                (None, None, Some(permission)) => match permission {
                    PermissionWord::Allow if replaced => rewrite.decision()?,
                    PermissionWord::Allow => allow(),
                    PermissionWord::Deny => deny(),
                    PermissionWord::Ask | PermissionWord::Defer => self.ask(reason.as_deref()),
                },
                (None, None, None) if replaced => rewrite.decision()?,
                (None, None, None) => Decision::Proceed,
            },
        )
    }

    /// An approval request from the answer's `approval_*` fields.
    fn ask(&self, reason: Option<&str>) -> Decision {
        Decision::Ask(Approval {
            prompt: self
                .approval_prompt
                .as_deref()
                .or(reason)
                .unwrap_or("A hook asks for approval.")
                .to_owned(),
            options: self.approval_options.clone().unwrap_or_default(),
            timeout_ms: self.approval_timeout.map(|s| (s * 1000.0).round() as u32),
            default_allow: self.approval_default.as_deref() == Some("allow"),
        })
    }
}

/// What the answer asks of the agent beyond its decision.
fn requests(
    specific: &mut ClaudeSpecific,
    terminal_sequence: Option<String>,
) -> Option<Box<Requests>> {
    let requests = Requests {
        session_title: specific.session_title.take(),
        initial_user_message: specific.initial_user_message.take(),
        watch_paths: specific.watch_paths.take().unwrap_or_default(),
        worktree_path: specific.worktree_path.take(),
        terminal_sequence,
    };
    (!requests.is_empty()).then(|| Box::new(requests))
}

/// What an answer replaces on `event`: what its `modify` replaces (the
/// tool's input, the text shown), or the tool's output.
struct Rewrite {
    event: EventName,
    input: Option<Value>,
    output: Option<Value>,
}

impl Rewrite {
    /// The rewrite as a decision.
    fn decision(&self) -> Result<Decision, AnswerError> {
        match (&self.input, &self.output) {
            (_, Some(output)) => Ok(Decision::ModifyOutput {
                output: output.clone(),
            }),
            (Some(input), None)
                if input.is_object() || self.event.rewritable_field() == Some("delta") =>
            {
                Ok(Decision::Modify {
                    input: input.clone(),
                })
            }
            (Some(_), None) => Err(AnswerError(
                "the replacement input must be a JSON object".to_owned(),
            )),
            (None, None) => Err(AnswerError(
                "`modify` needs `modified_args`, `data`, `updatedInput` or `updatedToolOutput`"
                    .to_owned(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(json: Value) -> HookResult {
        on_success(EventName::PreToolUse, &json.to_string()).unwrap()
    }

    #[test]
    fn plain_text_is_context_only_for_prompts_and_session_start() {
        let r = on_success(EventName::UserPromptSubmit, "branch: main\n").unwrap();
        assert_eq!(r.context.unwrap().text, "branch: main");
        assert!(
            on_success(EventName::SessionStart, "hello")
                .unwrap()
                .context
                .is_some()
        );
        let r = on_success(EventName::PreToolUse, "just logging").unwrap();
        assert_eq!((r.decision, r.context), (Decision::Proceed, None));
    }

    #[test]
    fn after_the_tool_a_modify_with_data_replaces_its_output() {
        let post = |json: Value| on_success(EventName::PostToolUse, &json.to_string()).unwrap();
        assert_eq!(
            post(json!({"action": "modify", "data": "[hidden]"})).decision,
            Decision::ModifyOutput {
                output: json!("[hidden]")
            }
        );
        // Explicit arguments stay arguments (the engine then refuses them
        // after the tool ran).
        assert_eq!(
            post(json!({"action": "modify", "modified_args": {"command": "ls"}})).decision,
            Decision::Modify {
                input: json!({"command": "ls"})
            }
        );
        assert_eq!(
            answer(json!({"action": "modify", "data": {"command": "ls"}})).decision,
            Decision::Modify {
                input: json!({"command": "ls"})
            },
            "before the tool, `data` is the new input"
        );
    }

    #[test]
    fn an_updated_tool_output_replaces_any_tools_output() {
        let masked = json!({"stdout": "key: [REDACTED]", "stderr": ""});
        let r = answer(json!({"hookSpecificOutput": {
            "hookEventName": "PostToolUse", "updatedToolOutput": masked,
            "updatedMCPToolOutput": "older"}}));
        assert_eq!(r.decision, Decision::ModifyOutput { output: masked });
    }

    #[test]
    fn an_updated_mcp_tool_output_replaces_the_output_unless_denied() {
        let masked = json!([{"type": "text", "text": "key: [REDACTED]"}]);
        let r = answer(json!({"hookSpecificOutput": {
            "hookEventName": "PostToolUse", "updatedMCPToolOutput": masked}}));
        assert_eq!(
            r.decision,
            Decision::ModifyOutput {
                output: masked.clone()
            }
        );
        let r = answer(json!({"decision": "block", "reason": "no",
            "hookSpecificOutput": {"updatedMCPToolOutput": masked}}));
        assert_eq!(
            r.decision,
            Decision::Deny {
                reason: "no".into()
            }
        );
    }

    #[test]
    fn the_answers_of_claude_code_2_1_330s_newer_events_are_read() {
        let on = |event: EventName, json: Value| on_success(event, &json.to_string()).unwrap();
        let granted = on(
            EventName::PermissionRequest,
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow", "updatedInput": {"command": "ls -a"}}}}),
        );
        assert_eq!(
            granted.decision,
            Decision::Modify {
                input: json!({"command": "ls -a"})
            }
        );
        let refused = on(
            EventName::PermissionRequest,
            json!({"hookSpecificOutput": {"decision": {"behavior": "deny", "message": "no", "interrupt": true}}}),
        );
        assert_eq!(
            refused.decision,
            Decision::Deny {
                reason: "no".into()
            }
        );
        assert_eq!(
            refused.stop.as_deref(),
            Some("no"),
            "interrupt ends the turn"
        );
        let retry = on(
            EventName::PermissionDenied,
            json!({"hookSpecificOutput": {"retry": true}}),
        );
        assert_eq!(retry.decision, Decision::Allow { reason: None });
        let shown = on(
            EventName::MessageDisplay,
            json!({"hookSpecificOutput": {"displayContent": "[hidden]"}}),
        );
        assert_eq!(
            shown.decision,
            Decision::Modify {
                input: json!("[hidden]")
            }
        );
        let accepted = on(
            EventName::Elicitation,
            json!({"hookSpecificOutput": {"action": "accept", "content": {"env": "staging"}}}),
        );
        assert_eq!(
            accepted.decision,
            Decision::Modify {
                input: json!({"env": "staging"})
            }
        );
        let declined = on(
            EventName::Elicitation,
            json!({"hookSpecificOutput": {"action": "decline"}}),
        );
        assert!(matches!(declined.decision, Decision::Deny { .. }));
        let deferred = answer(json!({"hookSpecificOutput": {"permissionDecision": "defer"}}));
        assert!(
            matches!(deferred.decision, Decision::Ask(_)),
            "{deferred:?}"
        );
        let start = on(
            EventName::SessionStart,
            json!({"terminalSequence": "\u{1b}]0;t\u{7}", "hookSpecificOutput": {
                "sessionTitle": "T", "initialUserMessage": "go", "watchPaths": ["/a"], "worktreePath": "/w"}}),
        );
        assert_eq!(
            start.requests.as_deref(),
            Some(&Requests {
                session_title: Some("T".into()),
                initial_user_message: Some("go".into()),
                watch_paths: vec!["/a".into()],
                worktree_path: Some("/w".into()),
                terminal_sequence: Some("\u{1b}]0;t\u{7}".into()),
            })
        );
    }

    #[test]
    fn invalid_json_that_starts_with_a_brace_is_a_failure() {
        let err = on_success(EventName::PreToolUse, "{\"decision\": ")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a valid JSON answer"), "{err}");
        let err = on_success(EventName::PreToolUse, r#"{"decision": "maybe"}"#)
            .unwrap_err()
            .to_string();
        // Inside the flattened Claude Code part, serde knows no path.
        assert!(
            err.contains("unknown variant `maybe`, expected one of `allow`, `approve`"),
            "{err}"
        );
    }

    #[test]
    fn exit_2_blocks_with_stderr_as_the_reason() {
        assert_eq!(
            on_block("no sudo\n").decision,
            Decision::Deny {
                reason: "no sudo".into()
            }
        );
        assert!(
            matches!(on_block("").decision, Decision::Deny { ref reason } if reason.contains("exit code 2"))
        );
    }

    #[test]
    fn claude_code_permission_decisions() {
        let deny = answer(
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "not here"}}),
        );
        assert_eq!(
            deny.decision,
            Decision::Deny {
                reason: "not here".into()
            }
        );
        let allow = answer(json!({"hookSpecificOutput": {"permissionDecision": "allow"}}));
        assert_eq!(allow.decision, Decision::Allow { reason: None });
        let ask = answer(
            json!({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "sure?"}}),
        );
        assert!(matches!(ask.decision, Decision::Ask(ref a) if a.prompt == "sure?"));
        let rewrite = answer(
            json!({"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "ls"}}}),
        );
        assert_eq!(
            rewrite.decision,
            Decision::Modify {
                input: json!({"command": "ls"})
            }
        );
        let context = answer(json!({"hookSpecificOutput": {"additionalContext": "remember X"}}));
        assert_eq!(context.context.unwrap().text, "remember X");
    }

    #[test]
    fn claude_code_top_level_fields() {
        let r = answer(
            json!({"decision": "block", "reason": "R", "continue": false, "stopReason": "done", "systemMessage": "warn", "suppressOutput": true}),
        );
        assert_eq!(r.decision, Decision::Deny { reason: "R".into() });
        assert_eq!(r.stop.as_deref(), Some("done"));
        assert_eq!(r.system_message.as_deref(), Some("warn"));
        assert!(r.suppress_output);
        assert_eq!(
            answer(json!({"continue": false})).stop.as_deref(),
            Some("a hook ended the turn")
        );
    }

    #[test]
    fn the_action_shape_of_seed_001() {
        assert_eq!(
            answer(json!({"action": "allow", "message": "fine"}))
                .user_message
                .unwrap()
                .text,
            "fine"
        );
        assert_eq!(
            answer(json!({"action": "block", "message": "nope"})).decision,
            Decision::Deny {
                reason: "nope".into()
            }
        );
        assert_eq!(
            answer(json!({"action": "modify", "modified_args": {"command": "ls"}})).decision,
            Decision::Modify {
                input: json!({"command": "ls"})
            }
        );
    }

    #[test]
    fn the_decision_shape_with_metadata() {
        let r = answer(
            json!({"continue": true, "decision": "approve", "reason": "ok", "metadata": {"k": 1}}),
        );
        assert_eq!(
            (r.decision, r.metadata, r.stop),
            (
                Decision::Allow {
                    reason: Some("ok".into())
                },
                Some(json!({"k": 1})),
                None
            )
        );
        let r = answer(json!({"decision": "modify", "modified_args": {"a": 1}}));
        assert_eq!(
            r.decision,
            Decision::Modify {
                input: json!({"a": 1})
            }
        );
        let err = on_success(EventName::PreToolUse, r#"{"decision": "modify"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs `modified_args`"), "{err}");
    }

    #[test]
    fn the_full_action_shape_of_seeds_000_and_002() {
        let r = answer(
            json!({"action": "inject_context", "context_injection": "facts", "context_injection_role": "user", "user_message": "added", "user_message_level": "warning", "suppress_output": true}),
        );
        assert_eq!(r.decision, Decision::Proceed);
        assert_eq!(
            r.context,
            Some(Context {
                text: "facts".into(),
                role: Role::User
            })
        );
        assert_eq!(
            r.user_message,
            Some(UserMessage {
                severity: Severity::Warning,
                text: "added".into()
            })
        );
        assert!(r.suppress_output);
        let r = answer(
            json!({"action": "ask_user", "approval_prompt": "push?", "approval_options": ["yes", "no"], "approval_timeout": 30, "approval_default": "allow"}),
        );
        assert_eq!(
            r.decision,
            Decision::Ask(Approval {
                prompt: "push?".into(),
                options: vec!["yes".into(), "no".into()],
                timeout_ms: Some(30_000),
                default_allow: true
            })
        );
        assert_eq!(
            answer(json!({"action": "deny", "reason": "R"})).decision,
            Decision::Deny { reason: "R".into() }
        );
        assert_eq!(
            answer(json!({"action": "modify", "data": {"x": 1}})).decision,
            Decision::Modify {
                input: json!({"x": 1})
            }
        );
        assert_eq!(
            answer(json!({"action": "continue"})).decision,
            Decision::Proceed
        );
        assert!(
            on_success(EventName::PreToolUse, r#"{"action": "explode"}"#)
                .unwrap_err()
                .to_string()
                .contains("`action`: unknown variant `explode`")
        );
    }
}

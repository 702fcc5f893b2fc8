//! What a hook answers: a decision plus optional context, messages and a
//! stop request. Start from the [`Outcome`] constructors and chain the
//! `with_*` methods.

use serde_json::Value;

use crate::bindings::wasm_hooks::hook::types as wit;

/// Who injected context speaks as.
pub use wit::Role;
/// Severity of a message for the person.
pub use wit::Severity;

/// A request that the person approve the operation.
#[derive(Debug, Clone)]
pub struct Approval {
    prompt: String,
    options: Vec<String>,
    timeout_ms: Option<u32>,
    default_allow: bool,
}

impl Approval {
    /// Ask this question, with the host's default choices, no timeout of the
    /// hook's own, and deny on timeout.
    pub fn new(prompt: impl Into<String>) -> Self {
        Self {
            prompt: prompt.into(),
            options: Vec::new(),
            timeout_ms: None,
            default_allow: false,
        }
    }

    /// Offer these choices instead of the host's defaults.
    pub fn options<I, S>(mut self, options: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.options = options.into_iter().map(Into::into).collect();
        self
    }

    /// Apply the default after this many milliseconds without an answer.
    pub fn timeout_ms(mut self, timeout_ms: u32) -> Self {
        self.timeout_ms = Some(timeout_ms);
        self
    }

    /// Allow, rather than deny, when the question times out.
    pub fn default_allow(mut self, allow: bool) -> Self {
        self.default_allow = allow;
        self
    }
}

impl<S: Into<String>> From<S> for Approval {
    fn from(prompt: S) -> Self {
        Self::new(prompt)
    }
}

/// A hook's whole answer to one event.
#[derive(Debug, Clone)]
pub struct Outcome {
    inner: wit::Outcome,
}

impl Outcome {
    fn with_decision(decision: wit::Decision) -> Self {
        Self {
            inner: wit::Outcome {
                decision,
                context: None,
                user_message: None,
                system_message: None,
                stop: None,
                suppress_output: false,
                metadata: None,
            },
        }
    }

    /// The decision's name: `proceed`, `allow`, `deny`, `ask`, `modify` or
    /// `modify-output` (for tests and logs).
    pub fn decision(&self) -> &'static str {
        match self.inner.decision {
            wit::Decision::Proceed => "proceed",
            wit::Decision::Allow(_) => "allow",
            wit::Decision::Deny(_) => "deny",
            wit::Decision::Ask(_) => "ask",
            wit::Decision::Modify(_) => "modify",
            wit::Decision::ModifyOutput(_) => "modify-output",
        }
    }

    /// The reason of a deny.
    pub fn deny_reason(&self) -> Option<&str> {
        match &self.inner.decision {
            wit::Decision::Deny(reason) => Some(reason),
            _ => None,
        }
    }

    /// The context added for the agent, if any.
    pub fn context(&self) -> Option<&str> {
        self.inner.context.as_ref().map(|c| c.text.as_str())
    }

    /// No opinion: the other hooks, or the agent's default, decide.
    pub fn proceed() -> Self {
        Self::with_decision(wit::Decision::Proceed)
    }

    /// Allow the operation (it wins over `proceed`, never over `deny`).
    pub fn allow() -> Self {
        Self::with_decision(wit::Decision::Allow(None))
    }

    /// Allow the operation, saying why.
    pub fn allow_because(reason: impl Into<String>) -> Self {
        Self::with_decision(wit::Decision::Allow(Some(reason.into())))
    }

    /// Block the operation; the reason is shown to the agent and the model.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::with_decision(wit::Decision::Deny(reason.into()))
    }

    /// Ask the person first (a prompt, or a full [`Approval`]).
    pub fn ask(approval: impl Into<Approval>) -> Self {
        let a = approval.into();
        Self::with_decision(wit::Decision::Ask(wit::Approval {
            prompt: a.prompt,
            options: a.options,
            timeout_ms: a.timeout_ms,
            default_allow: a.default_allow,
        }))
    }

    /// Go on with this replacement tool input (a JSON object); later hooks
    /// see it too. Before the tool runs (PreToolUse, PermissionRequest).
    pub fn modify(input: Value) -> Self {
        Self::with_decision(wit::Decision::Modify(input.to_string()))
    }

    /// Hand this on instead of the tool's output (any JSON value, usually
    /// `tool_response` with parts changed); later hooks see it too. On
    /// PostToolUse only: elsewhere the host refuses it as the hook's
    /// failure. Keep the tool's output shape (change `tool_response`'s
    /// fields in place): Claude Code keeps the original output when the new
    /// one does not fit it. Where the agent cannot replace a tool's output
    /// (Codex, for its own tools), the model is given the rewritten output
    /// as context instead.
    pub fn modify_output(output: Value) -> Self {
        Self::with_decision(wit::Decision::ModifyOutput(output.to_string()))
    }

    /// No opinion on the operation, but end the agent's turn with a reason.
    pub fn stop(reason: impl Into<String>) -> Self {
        Self::proceed().with_stop(reason)
    }

    /// Add text to the agent's context, as a system message.
    pub fn with_context(self, text: impl Into<String>) -> Self {
        self.with_context_as(Role::System, text)
    }

    /// Add text to the agent's context, speaking as `role`.
    pub fn with_context_as(mut self, role: Role, text: impl Into<String>) -> Self {
        self.inner.context = Some(wit::Context {
            text: text.into(),
            role,
        });
        self
    }

    /// Show a message to the person (never to the model).
    pub fn with_user_message(mut self, severity: Severity, text: impl Into<String>) -> Self {
        self.inner.user_message = Some((severity, text.into()));
        self
    }

    /// Show a warning to the person.
    pub fn with_system_message(mut self, text: impl Into<String>) -> Self {
        self.inner.system_message = Some(text.into());
        self
    }

    /// End the agent's turn after this operation, with a reason.
    pub fn with_stop(mut self, reason: impl Into<String>) -> Self {
        self.inner.stop = Some(reason.into());
        self
    }

    /// Hide this hook's own output from the transcript.
    pub fn with_suppressed_output(mut self) -> Self {
        self.inner.suppress_output = true;
        self
    }

    /// Attach free JSON, kept in the audit record.
    pub fn with_metadata(mut self, metadata: Value) -> Self {
        self.inner.metadata = Some(metadata.to_string());
        self
    }
}

impl From<Outcome> for wit::Outcome {
    fn from(o: Outcome) -> Self {
        o.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders_fill_the_wire_record() {
        let o: wit::Outcome = Outcome::deny("no")
            .with_context("ctx")
            .with_user_message(Severity::Warning, "careful")
            .with_system_message("sys")
            .with_stop("done")
            .with_suppressed_output()
            .with_metadata(serde_json::json!({"k": 1}))
            .into();
        assert!(matches!(o.decision, wit::Decision::Deny(ref r) if r == "no"));
        let ctx = o.context.unwrap();
        assert_eq!((ctx.text.as_str(), ctx.role), ("ctx", Role::System));
        assert_eq!(o.user_message, Some((Severity::Warning, "careful".into())));
        assert_eq!(o.system_message.as_deref(), Some("sys"));
        assert_eq!(o.stop.as_deref(), Some("done"));
        assert!(o.suppress_output);
        assert_eq!(o.metadata.as_deref(), Some(r#"{"k":1}"#));
    }

    #[test]
    fn ask_carries_the_whole_approval() {
        let o: wit::Outcome = Outcome::ask(
            Approval::new("push to main?")
                .options(["yes", "no"])
                .timeout_ms(5000)
                .default_allow(true),
        )
        .into();
        let wit::Decision::Ask(a) = o.decision else {
            panic!("expected ask")
        };
        assert_eq!(a.prompt, "push to main?");
        assert_eq!(a.options, ["yes", "no"]);
        assert_eq!(a.timeout_ms, Some(5000));
        assert!(a.default_allow);
    }

    #[test]
    fn modify_serializes_the_replacement_input() {
        let o: wit::Outcome = Outcome::modify(serde_json::json!({"command": "ls"})).into();
        assert!(matches!(o.decision, wit::Decision::Modify(ref j) if j == r#"{"command":"ls"}"#));
        let s: wit::Outcome = Outcome::stop("enough").into();
        assert!(matches!(s.decision, wit::Decision::Proceed));
        assert_eq!(s.stop.as_deref(), Some("enough"));
    }
}

//! The folded outcome as JavaScript sees it: a native object whose fields
//! are made into JavaScript values when read, so a decision costs no
//! conversion of what the caller does not look at (the trace, above all).

use std::sync::Arc;

use napi_derive::napi;
use serde_json::Value;
use wasm_hooks::{
    Answer as LibAnswer, ApprovalRecord, InjectionReport, Outcome as LibOutcome,
    Resolved as LibResolved, Verdict,
};

/// `value` as JSON.
fn json<T: serde::Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Every hook's answer to one event, folded: what the agent should do.
#[napi]
pub struct Outcome {
    /// Shared with the session's `Resolved`, which hands it out on each read.
    outcome: Arc<LibOutcome>,
}

impl Outcome {
    pub(crate) fn new(outcome: LibOutcome) -> Self {
        Self {
            outcome: Arc::new(outcome),
        }
    }
}

#[napi]
impl Outcome {
    /// `proceed` (no hook had an opinion), `allow`, `deny` or `ask`.
    #[napi(getter)]
    pub fn decision(&self) -> &'static str {
        self.outcome.verdict.word()
    }

    /// The reason given (an ask's prompt).
    #[napi(getter)]
    pub fn reason(&self) -> Option<String> {
        self.outcome.verdict.reason().map(str::to_owned)
    }

    /// Whether the operation must not happen.
    #[napi(getter)]
    pub fn denied(&self) -> bool {
        self.outcome.is_denied()
    }

    /// The hook whose answer set the decision.
    #[napi(getter)]
    pub fn decided_by(&self) -> Option<String> {
        self.outcome.decided_by.as_ref().map(ToString::to_string)
    }

    /// What an `ask` asks: `prompt`, `options`, `timeout_ms`, `default_allow`.
    #[napi(getter)]
    pub fn approval(&self) -> Option<Value> {
        match &self.outcome.verdict {
            Verdict::Ask(approval) => Some(json(approval)),
            _ => None,
        }
    }

    /// The tool input after every rewrite, when a hook changed it.
    #[napi(getter)]
    pub fn updated_input(&self) -> Option<Value> {
        self.outcome.updated_input.clone()
    }

    /// Whether a hook allowed the rewritten input as it finally is.
    #[napi(getter)]
    pub fn rewrite_approved(&self) -> bool {
        self.outcome.rewrite_approved
    }

    /// The tool output a hook put in place of the tool's (PostToolUse).
    #[napi(getter)]
    pub fn updated_output(&self) -> Option<Value> {
        self.outcome.updated_output.clone()
    }

    /// Context to add (`{hook, value: {text, role}}`), in hook order.
    #[napi(getter)]
    pub fn contexts(&self) -> Value {
        json(&self.outcome.contexts)
    }

    /// Messages for the person (`{hook, value: {severity, text}}`).
    #[napi(getter)]
    pub fn user_messages(&self) -> Value {
        json(&self.outcome.user_messages)
    }

    /// Warnings for the person (`{hook, value}`), failures under `warn` too.
    #[napi(getter)]
    pub fn system_messages(&self) -> Value {
        json(&self.outcome.system_messages)
    }

    /// The first request to end the turn (`{hook, value}`).
    #[napi(getter)]
    pub fn stop(&self) -> Option<Value> {
        self.outcome.stop.as_ref().map(json)
    }

    /// Whether some hook asked for its output to be hidden.
    #[napi(getter)]
    pub fn suppress_output(&self) -> bool {
        self.outcome.suppress_output
    }

    /// What the hooks ask of the agent beyond the decision.
    #[napi(getter)]
    pub fn requests(&self) -> Value {
        json(&self.outcome.requests)
    }

    /// Every hook that ran: `{hook, elapsed_us, status, output}`.
    #[napi(getter)]
    pub fn trace(&self) -> Value {
        json(&self.outcome.trace)
    }

    /// The canonical outcome, every field (as `POST /v1/decide` answers).
    #[napi(getter)]
    pub fn raw(&self) -> Value {
        json(&*self.outcome)
    }
}

/// A session's outcome: never an `ask` (the approval decided it).
#[napi]
pub struct Resolved {
    outcome: Arc<LibOutcome>,
    approval: Option<ApprovalRecord>,
    injections: Vec<InjectionReport>,
}

impl From<LibResolved> for Resolved {
    fn from(resolved: LibResolved) -> Self {
        Self {
            outcome: Arc::new(resolved.outcome),
            approval: resolved.approval,
            injections: resolved.injections,
        }
    }
}

#[napi]
impl Resolved {
    /// The outcome after the approval.
    #[napi(getter)]
    pub fn outcome(&self) -> Outcome {
        Outcome {
            outcome: Arc::clone(&self.outcome),
        }
    }

    /// The approval asked (`request`, `choice`, `decided_by`), if any.
    #[napi(getter)]
    pub fn approval(&self) -> Option<Value> {
        self.approval.as_ref().map(json)
    }

    /// What became of each hook's context (`hook`, `bytes`, `tokens`,
    /// `status`).
    #[napi(getter)]
    pub fn injections(&self) -> Value {
        json(&self.injections)
    }
}

/// An answer in an agent's own dialect.
#[napi(object)]
pub struct Answer {
    /// The JSON the agent reads (a command hook's stdout, an HTTP body).
    pub body: Value,
    /// Lines for stderr.
    pub stderr: Vec<String>,
    /// The exit code a command hook exits with.
    pub exit_code: u32,
}

impl From<LibAnswer> for Answer {
    fn from(answer: LibAnswer) -> Self {
        Self {
            body: answer.body,
            stderr: answer.stderr,
            exit_code: answer.exit_code.into(),
        }
    }
}

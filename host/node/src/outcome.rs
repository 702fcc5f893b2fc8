//! The folded outcome as a typed JavaScript object (its `.d.ts` written by
//! napi-rs), with the canonical outcome whole in `raw`.

use napi_derive::napi;
use serde_json::Value;
use wasm_hooks::{Answer as LibAnswer, Outcome as LibOutcome};

/// Every hook's answer to one event, folded: what the agent should do.
#[napi(object)]
pub struct Outcome {
    /// `proceed` (no hook had an opinion), `allow`, `deny` or `ask`.
    pub decision: String,
    /// The reason given (an ask's prompt).
    pub reason: Option<String>,
    /// Whether the operation must not happen.
    pub denied: bool,
    /// The hook whose answer set the decision.
    pub decided_by: Option<String>,
    /// What an `ask` asks: `prompt`, `options`, `timeout_ms`, `default_allow`.
    pub approval: Option<Value>,
    /// The tool input after every rewrite, when a hook changed it.
    pub updated_input: Option<Value>,
    /// Whether a hook allowed the rewritten input as it finally is.
    pub rewrite_approved: bool,
    /// The tool output a hook put in place of the tool's (PostToolUse).
    pub updated_output: Option<Value>,
    /// Context to add (`{hook, value: {text, role}}`), in hook order.
    pub contexts: Vec<Value>,
    /// Messages for the person (`{hook, value: {severity, text}}`).
    pub user_messages: Vec<Value>,
    /// Warnings for the person (`{hook, value}`), failures under `warn` too.
    pub system_messages: Vec<Value>,
    /// The first request to end the turn (`{hook, value}`).
    pub stop: Option<Value>,
    /// Every hook that ran: `{hook, elapsed_us, status, output}`.
    pub trace: Vec<Value>,
    /// The canonical outcome, every field (as `POST /v1/decide` answers).
    pub raw: Value,
}

impl Outcome {
    /// The outcome as JavaScript gets it.
    pub(crate) fn of(outcome: &LibOutcome) -> Self {
        let raw = serde_json::to_value(outcome).unwrap_or(Value::Null);
        let list = |field: &str| raw[field].as_array().cloned().unwrap_or_default();
        let present = |field: &str| Some(raw[field].clone()).filter(|v| !v.is_null());
        let approval = matches!(outcome.verdict, wasm_hooks::Verdict::Ask(_)).then(|| {
            serde_json::json!({
                "prompt": raw["prompt"], "options": raw["options"],
                "timeout_ms": raw["timeout_ms"], "default_allow": raw["default_allow"],
            })
        });
        Self {
            decision: outcome.verdict.word().to_owned(),
            reason: outcome.verdict.reason().map(str::to_owned),
            denied: outcome.is_denied(),
            decided_by: outcome.decided_by.as_ref().map(|h| h.as_str().to_owned()),
            approval,
            updated_input: outcome.updated_input.clone(),
            rewrite_approved: outcome.rewrite_approved,
            updated_output: outcome.updated_output.clone(),
            contexts: list("contexts"),
            user_messages: list("user_messages"),
            system_messages: list("system_messages"),
            stop: present("stop"),
            trace: list("trace"),
            raw,
        }
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

//! The session's host systems written in Python: approvals asked of a
//! callback, messages shown by a callback.

use std::sync::Arc;

use pyo3::prelude::*;
use serde_json::{Value, json};
use wasm_hooks::{
    ApprovalChoice, ApprovalFuture, ApprovalRequest, ApprovalSystem, DisplaySystem, HookId,
    HookOutput, Severity,
};

use crate::calls;

/// Approvals answered by a Python function given the request (a dict:
/// `hook`, `event`, `prompt`, `options`, `timeout_ms`, `default`) and
/// returning an option's text (`"Allow once"`, `"allow_always"`,
/// `"Deny"`…), a bool, or `None` (nobody answered: the request's default
/// applies). One that raises, or returns anything else, denies.
pub(crate) struct PythonApprovals {
    pub(crate) callback: Arc<Py<PyAny>>,
}

impl ApprovalSystem for PythonApprovals {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        Box::pin(async move {
            match calls::start(
                &self.callback,
                |py| Ok(pythonize::pythonize(py, request)?),
                choice,
            )
            .answer()
            .await
            {
                Ok(choice) => choice,
                Err(message) => {
                    tracing::warn!(
                        "the approval callback failed, so the operation is denied: {message}"
                    );
                    Some(ApprovalChoice::Deny)
                }
            }
        })
    }
}

/// What the callback's answer chooses ([`ApprovalChoice::from_answer`]);
/// an answer that is not JSON data denies.
fn choice(answer: &Bound<'_, PyAny>) -> Result<Option<ApprovalChoice>, String> {
    Ok(match pythonize::depythonize::<Value>(answer) {
        Ok(answer) => ApprovalChoice::from_answer(&answer),
        Err(_) => Some(ApprovalChoice::Deny),
    })
}

/// Messages for the person handed to a Python function as
/// `display(kind, source, payload)`: `("message", hook, {"severity",
/// "text"})`, `("hook_output", hook, {"stdout", "stderr", "logs"})`,
/// `("tool_output", tool, {"text"})`. What it raises is logged.
pub(crate) struct PythonDisplay {
    pub(crate) callback: Arc<Py<PyAny>>,
}

impl PythonDisplay {
    fn show(&self, kind: &str, source: &str, payload: Value) {
        Python::attach(|py| {
            let shown = pythonize::pythonize(py, &payload)
                .map_err(PyErr::from)
                .and_then(|payload| self.callback.bind(py).call1((kind, source, payload)));
            if let Err(e) = shown {
                tracing::warn!("the display callback failed: {e}");
            }
        });
    }
}

impl DisplaySystem for PythonDisplay {
    fn message(&self, hook: &HookId, severity: Severity, text: &str) {
        self.show(
            "message",
            hook.as_str(),
            json!({"severity": severity, "text": text}),
        );
    }

    fn hook_output(&self, hook: &HookId, output: &HookOutput) {
        self.show(
            "hook_output",
            hook.as_str(),
            serde_json::to_value(output).unwrap_or(Value::Null),
        );
    }

    fn tool_output(&self, tool: &str, output: &str) {
        self.show("tool_output", tool, json!({"text": output}));
    }
}

//! The session's three host systems written in Python: approvals asked of
//! a callback, messages shown by a callback, and context collected for
//! the program to hand to its model.

use std::sync::{Arc, Mutex, PoisonError};

use pyo3::prelude::*;
use pyo3::types::PyBool;
use serde_json::{Value, json};
use wasm_hooks::{
    ApprovalChoice, ApprovalFuture, ApprovalRequest, ApprovalSystem, ContextMessage, ContextSink,
    DisplaySystem, HookId, HookOutput, Severity,
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
            let asked = serde_json::to_value(request).unwrap_or(Value::Null);
            match calls::call(&self.callback, &asked).await {
                Ok(answer) => Python::attach(|py| choice(answer.bind(py))),
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

/// Approvals nobody answers: each request's default applies at once (a
/// session given no `approve` function).
pub(crate) struct Unanswered;

impl ApprovalSystem for Unanswered {
    fn request<'a>(&'a self, _request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        Box::pin(std::future::ready(None))
    }
}

/// What the callback's answer chooses.
fn choice(answer: &Bound<'_, PyAny>) -> Option<ApprovalChoice> {
    if answer.is_none() {
        return None;
    }
    if let Ok(allowed) = answer.cast::<PyBool>() {
        return Some(if allowed.is_true() {
            ApprovalChoice::AllowOnce
        } else {
            ApprovalChoice::Deny
        });
    }
    Some(match answer.extract::<String>() {
        Ok(text) => ApprovalChoice::from_option(&text.replace('_', " ")),
        Err(_) => ApprovalChoice::Deny,
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

/// Context the session delivers, kept until the program takes it
/// (`Session.flush_context()` returns it).
#[derive(Default)]
pub(crate) struct CollectedContext {
    messages: Mutex<Vec<ContextMessage>>,
}

impl CollectedContext {
    /// Everything delivered since the last call.
    pub(crate) fn take(&self) -> Vec<ContextMessage> {
        std::mem::take(&mut *self.messages.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl ContextSink for CollectedContext {
    fn inject(&self, message: ContextMessage) {
        self.messages
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(message);
    }
}

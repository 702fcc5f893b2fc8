//! The folded outcome as Python sees it: a native object whose fields are
//! made into Python values when read, so a decision costs no conversion
//! of what the caller does not look at (the trace, above all).

use pyo3::prelude::*;
use pythonize::pythonize;
use serde_json::json;
use wasm_hooks::{
    ApprovalRecord, InjectionReport, Outcome as LibOutcome, Resolved as LibResolved, TraceStatus,
    Verdict,
};

/// Every hook's answer to one event, folded: what the agent should do.
/// `decision` is `proceed` (no hook had an opinion), `allow`, `deny` or
/// `ask`; the rest is every field the engine can say, and `raw` is the
/// canonical outcome (as `POST /v1/decide` answers) as a dict.
#[pyclass(frozen, module = "wasm_hooks._wasm_hooks")]
pub(crate) struct Outcome {
    outcome: LibOutcome,
}

impl Outcome {
    pub(crate) fn new(outcome: LibOutcome) -> Self {
        Self { outcome }
    }
}

/// `value` as Python data.
fn py_of<T: serde::Serialize + ?Sized>(py: Python<'_>, value: &T) -> PyResult<Py<PyAny>> {
    Ok(pythonize(py, value)?.unbind())
}

#[pymethods]
impl Outcome {
    /// `proceed`, `allow`, `deny` or `ask`.
    #[getter]
    fn decision(&self) -> &'static str {
        self.outcome.verdict.word()
    }

    /// The reason given (an ask's prompt).
    #[getter]
    fn reason(&self) -> Option<&str> {
        self.outcome.verdict.reason()
    }

    /// Whether the operation must not happen.
    #[getter]
    fn denied(&self) -> bool {
        self.outcome.is_denied()
    }

    /// What an `ask` asks (`prompt`, `options`, `timeout_ms`,
    /// `default_allow`), else None.
    #[getter]
    fn approval(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        match &self.outcome.verdict {
            Verdict::Ask(approval) => py_of(py, approval).map(Some),
            _ => Ok(None),
        }
    }

    /// The hook whose answer set the decision.
    #[getter]
    fn decided_by(&self) -> Option<&str> {
        self.outcome
            .decided_by
            .as_ref()
            .map(wasm_hooks::HookId::as_str)
    }

    /// The tool input after every rewrite, when a hook changed it.
    #[getter]
    fn updated_input(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        py_of(py, &self.outcome.updated_input)
    }

    /// Whether a hook allowed the rewritten input as it finally is.
    #[getter]
    fn rewrite_approved(&self) -> bool {
        self.outcome.rewrite_approved
    }

    /// The tool output a hook put in place of the tool's (PostToolUse).
    #[getter]
    fn updated_output(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        py_of(py, &self.outcome.updated_output)
    }

    /// Context to add (`{"hook", "value": {"text", "role"}}`), in hook order.
    #[getter]
    fn contexts(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        py_of(py, &self.outcome.contexts)
    }

    /// The context's texts, in hook order.
    #[getter]
    fn context_text(&self) -> Vec<&str> {
        self.outcome
            .contexts
            .iter()
            .map(|c| c.value.text.as_str())
            .collect()
    }

    /// Messages for the person (`{"hook", "value": {"severity", "text"}}`).
    #[getter]
    fn user_messages(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        py_of(py, &self.outcome.user_messages)
    }

    /// Warnings for the person (`{"hook", "value"}`), failures under `warn` too.
    #[getter]
    fn system_messages(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        py_of(py, &self.outcome.system_messages)
    }

    /// The first request to end the turn (`{"hook", "value"}`), if any.
    #[getter]
    fn stop(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        py_of(py, &self.outcome.stop)
    }

    /// Whether some hook asked for its output to be hidden.
    #[getter]
    fn suppress_output(&self) -> bool {
        self.outcome.suppress_output
    }

    /// What the hooks ask of the agent beyond the decision.
    #[getter]
    fn requests(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        py_of(py, &self.outcome.requests)
    }

    /// Every hook that ran: `{"hook", "elapsed_us", "status", "output"}`.
    #[getter]
    fn trace(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        py_of(py, &self.outcome.trace)
    }

    /// The hooks that failed (their trace entries).
    #[getter]
    fn failures(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let failed: Vec<_> = self
            .outcome
            .trace
            .iter()
            .filter(|t| matches!(t.status, TraceStatus::Failed { .. }))
            .collect();
        py_of(py, &failed)
    }

    /// The canonical outcome, every field, as a dict.
    #[getter]
    fn raw(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        py_of(py, &self.outcome)
    }

    fn __repr__(&self) -> String {
        format!(
            "<Outcome {} by {:?}: {:?}>",
            self.outcome.verdict.word(),
            self.decided_by(),
            self.reason()
        )
    }
}

/// A session's outcome: never an `ask` (the approval decided it), the
/// approval asked and who decided it, what became of each hook's context.
#[pyclass(frozen, module = "wasm_hooks._wasm_hooks")]
pub(crate) struct Resolved {
    outcome: Py<Outcome>,
    denied: bool,
    approval: Option<ApprovalRecord>,
    injections: Vec<InjectionReport>,
}

impl Resolved {
    pub(crate) fn new(py: Python<'_>, resolved: LibResolved) -> PyResult<Self> {
        Ok(Self {
            denied: resolved.outcome.is_denied(),
            outcome: Py::new(py, Outcome::new(resolved.outcome))?,
            approval: resolved.approval,
            injections: resolved.injections,
        })
    }
}

#[pymethods]
impl Resolved {
    /// The outcome after the approval.
    #[getter]
    fn outcome(&self, py: Python<'_>) -> Py<Outcome> {
        self.outcome.clone_ref(py)
    }

    /// Whether the operation must not happen.
    #[getter]
    fn denied(&self) -> bool {
        self.denied
    }

    /// The approval asked (`request`, `choice`, `decided_by`), if any.
    #[getter]
    fn approval(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        py_of(py, &self.approval)
    }

    /// What became of each hook's context (`hook`, `bytes`, `tokens`, `status`).
    #[getter]
    fn injections(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        py_of(py, &self.injections)
    }

    fn __repr__(&self) -> String {
        format!("<Resolved denied={}>", self.denied)
    }
}

/// An answer in an agent's own dialect as a dict: `body`, `stderr`, `exit_code`.
pub(crate) fn answer_dict(py: Python<'_>, answer: &wasm_hooks::Answer) -> PyResult<Py<PyAny>> {
    let value = json!({
        "body": answer.body,
        "stderr": answer.stderr,
        "exit_code": answer.exit_code,
    });
    py_of(py, &value)
}

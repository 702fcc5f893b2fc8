//! `Session`: the library's session layer for a Python agent: an `ask`
//! handed to the program's approval function, context kept within the
//! injection cap and the turn's budget until the program takes it,
//! messages for the person, every step in the engine's audit log.

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pythonize::pythonize;
use wasm_hooks::{ContextQueue, InjectionLimits, Session as LibSession, Unanswered};

use crate::approvals::{PythonApprovals, PythonDisplay};
use crate::calls::{awaitable, blocking};
use crate::engine::{Engine, read_event};
use crate::outcome::Resolved;

/// One agent session over an engine.
#[pyclass(frozen, module = "wasm_hooks._wasm_hooks")]
pub(crate) struct Session {
    session: LibSession,
    context: Arc<ContextQueue>,
}

#[pymethods]
impl Session {
    /// A session `session_id` on `engine`: `approve` answers approvals
    /// (without it, nobody answers and each request's default applies),
    /// `display` shows messages (without it, they go to stderr).
    #[new]
    #[pyo3(signature = (
        engine, session_id, *, approve = None, display = None,
        max_injection_bytes = 10 * 1024, turn_budget_tokens = 1000, approval_timeout = 60.0,
    ))]
    fn new(
        engine: &Engine,
        session_id: String,
        approve: Option<Py<PyAny>>,
        display: Option<Py<PyAny>>,
        max_injection_bytes: usize,
        turn_budget_tokens: usize,
        approval_timeout: f64,
    ) -> PyResult<Self> {
        let timeout = Duration::try_from_secs_f64(approval_timeout).map_err(|_| {
            pyo3::exceptions::PyValueError::new_err(
                "approval_timeout: expected a number of seconds, 0 or more",
            )
        })?;
        let context = Arc::new(ContextQueue::default());
        let mut builder = LibSession::builder(engine.engine.clone(), session_id)
            .context_sink(Arc::clone(&context) as _)
            .injection_limits(InjectionLimits {
                max_bytes: max_injection_bytes,
                turn_budget_tokens,
            })
            .approval_timeout(timeout);
        builder = match approve {
            Some(callback) => builder.approvals(Arc::new(PythonApprovals {
                callback: Arc::new(callback),
            })),
            None => builder.approvals(Arc::new(Unanswered)),
        };
        if let Some(callback) = display {
            builder = builder.display(Arc::new(PythonDisplay {
                callback: Arc::new(callback),
            }));
        }
        Ok(Self {
            session: builder.build(),
            context,
        })
    }

    /// Dispatch `event` (canonical, or `agent`'s payload) and route its
    /// outcome.
    #[pyo3(signature = (event, agent = None))]
    fn dispatch(
        &self,
        py: Python<'_>,
        event: &Bound<'_, PyAny>,
        agent: Option<&str>,
    ) -> PyResult<Resolved> {
        let (_, event) = read_event(py, event, agent)?;
        let resolved = blocking(py, self.session.dispatch(event))?;
        Resolved::new(py, resolved)
    }

    /// [`Session::dispatch`] as an awaitable.
    #[pyo3(signature = (event, agent = None))]
    fn dispatch_async<'py>(
        &self,
        py: Python<'py>,
        event: &Bound<'_, PyAny>,
        agent: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (_, event) = read_event(py, event, agent)?;
        let session = self.session.clone();
        awaitable(py, async move {
            let resolved = session.dispatch(event).await;
            Python::attach(|py| Resolved::new(py, resolved))
        })
    }

    /// A new turn (the person spoke): the injection budget starts again.
    fn begin_turn(&self) {
        self.session.begin_turn();
    }

    /// The context queued since the last call, batched one message per
    /// role: dicts with `role`, `text` and `sources` (hook, event,
    /// timestamp, bytes). Call it before each model request.
    fn flush_context(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.session.flush_context();
        Ok(pythonize(py, &self.context.take())?.unbind())
    }

    /// The first request to end the turn since the last call (`{"hook",
    /// "value"}`), if a hook made one.
    fn take_stop(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(pythonize(py, &self.session.take_stop())?.unbind())
    }

    /// The session's id, put in every event that has none.
    #[getter]
    fn id(&self) -> &str {
        self.session.id()
    }
}

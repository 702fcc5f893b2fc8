//! Running the engine from Python, and Python from the engine: blocking
//! calls with the GIL released, awaitables on the caller's event loop, and
//! calls into Python functions (sync or `async def`) from the engine's
//! threads.

use std::future::Future;
use std::pin::Pin;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;
use pyo3_async_runtimes::TaskLocals;

use crate::errors::engine_error;

tokio::task_local! {
    /// The event loop of the `_async` call being served, if any: where an
    /// `async def` hook function's coroutine runs. `None` under a blocking
    /// call, whose caller's loop (if any) is blocked.
    static CALLER_LOOP: Option<TaskLocals>;
}

/// The engine's runtime (pyo3-async-runtimes' own, so awaitables and
/// blocking calls share it): made on first use, never at import.
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    pyo3_async_runtimes::tokio::get_runtime()
}

/// Run `work` to its end with the GIL released.
///
/// # Errors
/// When called from one of the engine's own threads (a hook function
/// calling back into a blocking method), which would deadlock.
pub(crate) fn blocking<T: Send>(
    py: Python<'_>,
    work: impl Future<Output = T> + Send,
) -> PyResult<T> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(engine_error(
            py,
            "a blocking call from inside a hook function would wait for itself: \
             use the method's `_async` form there",
        ));
    }
    Ok(py.detach(|| runtime().block_on(CALLER_LOOP.scope(None, work))))
}

/// `work` as an awaitable of the caller's event loop, run on the engine's
/// runtime (the loop stays free).
pub(crate) fn awaitable<'py, T>(
    py: Python<'py>,
    work: impl Future<Output = PyResult<T>> + Send + 'static,
) -> PyResult<Bound<'py, PyAny>>
where
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    let locals = pyo3_async_runtimes::tokio::get_current_locals(py)?;
    pyo3_async_runtimes::tokio::future_into_py(py, CALLER_LOOP.scope(Some(locals), work))
}

/// How a Python function's return value is read (under the GIL).
pub(crate) type Read<T> = fn(&Bound<'_, PyAny>) -> Result<T, String>;

/// A Python call's answer, or the coroutine it returned, on its way.
pub(crate) enum Called<T> {
    /// Its answer read (or what it raised, as `Type: message`).
    Ready(Result<T, String>),
    /// The coroutine it returned, running on the caller's loop, and how to
    /// read what it gives.
    Pending(
        Pin<Box<dyn Future<Output = PyResult<Py<PyAny>>> + Send>>,
        Read<T>,
    ),
}

impl<T: Send + 'static> Called<T> {
    /// Its answer, awaited when it is a coroutine.
    pub(crate) fn answer(self) -> Pin<Box<dyn Future<Output = Result<T, String>> + Send>> {
        match self {
            Called::Ready(answer) => Box::pin(std::future::ready(answer)),
            Called::Pending(coroutine, read) => Box::pin(async move {
                let returned = coroutine.await.map_err(|e| e.to_string())?;
                Python::attach(|py| read(returned.bind(py)))
            }),
        }
    }
}

/// Call `function` with the Python object `argument` makes, now, and read
/// what it returns with `read`, under one taking of the GIL; when it returns a
/// coroutine, that runs on the caller's loop under an `_async` call, else
/// to its end on a loop of its own (`asyncio.run`).
pub(crate) fn start<T>(
    function: &Py<PyAny>,
    argument: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>>,
    read: Read<T>,
) -> Called<T> {
    let caller_loop = CALLER_LOOP.try_with(Clone::clone).ok().flatten();
    Python::attach(|py| -> PyResult<Called<T>> {
        let returned = function.bind(py).call1((argument(py)?,))?;
        // No opinion and an answer (a dict) are read at once: asking
        // asyncio is for anything else.
        if returned.is_none()
            || returned.is_instance_of::<PyDict>()
            || !is_coroutine(py, &returned)?
        {
            return Ok(Called::Ready(read(&returned)));
        }
        Ok(match &caller_loop {
            Some(locals) => Called::Pending(
                Box::pin(pyo3_async_runtimes::into_future_with_locals(
                    locals, returned,
                )?),
                read,
            ),
            None => Called::Ready(read(&asyncio(py)?.call_method1("run", (returned,))?)),
        })
    })
    .unwrap_or_else(|e| Called::Ready(Err(e.to_string())))
}

/// The `asyncio` module, imported once.
fn asyncio(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static ASYNCIO: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    ASYNCIO
        .get_or_try_init(py, || py.import("asyncio").map(Bound::unbind))
        .map(|module| module.bind(py))
}

/// Whether `value` is a coroutine (what an `async def` returns).
fn is_coroutine(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    asyncio(py)?
        .call_method1("iscoroutine", (value,))?
        .extract()
}

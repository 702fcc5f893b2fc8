//! Python functions registered as hooks: each is a library
//! [`CallbackHook`], given the event's record as a dict and answering
//! `None` (no opinion) or a dict in any answer shape hook files know.

use std::sync::Arc;

use pyo3::prelude::*;
use pythonize::depythonize;
use serde_json::Value;
use wasm_hooks::CallbackHook;

use crate::calls::{self, Called};

/// A hook calling `function`, named `label` in traces: called as the
/// engine reaches it, its answer read at once unless it is a coroutine.
pub(crate) fn function_hook(function: Py<PyAny>, label: String) -> CallbackHook {
    let function = Arc::new(function);
    CallbackHook::new(label, move |record| match calls::start(&function, record) {
        Called::Ready(returned) => Box::pin(std::future::ready(returned.and_then(|r| answer(&r)))),
        Called::Pending(future) => Box::pin(async move {
            let returned = future.await.map_err(|e| e.to_string())?;
            answer(&returned)
        }),
    })
}

/// A function's answer: `None` is no opinion; anything else must be JSON
/// data.
fn answer(returned: &Py<PyAny>) -> Result<Option<Value>, String> {
    Python::attach(|py| {
        let returned = returned.bind(py);
        if returned.is_none() {
            return Ok(None);
        }
        depythonize::<Value>(returned)
            .map(Some)
            .map_err(|e| format!("it returned what is not JSON data: {e}"))
    })
}

/// The name a function is known by: its `__qualname__`, else its repr.
pub(crate) fn label_of(function: &Bound<'_, PyAny>) -> String {
    function
        .getattr("__qualname__")
        .and_then(|name| name.extract::<String>())
        .or_else(|_| function.repr().map(|r| r.to_string()))
        .unwrap_or_else(|_| "function".to_owned())
}

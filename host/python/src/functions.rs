//! Python functions registered as hooks: each is a library
//! [`CallbackHook`], given the event's record (an [`EventRecord`], read
//! like a dict) and answering
//! `None` (no opinion) or a dict in any answer shape hook files know.

use pyo3::prelude::*;
use pythonize::depythonize;
use serde_json::Value;
use wasm_hooks::CallbackHook;

use crate::calls;
use crate::record::EventRecord;

/// A hook calling `function`, named `label` in traces: called as the
/// engine reaches it, its answer read at once unless it is a coroutine.
pub(crate) fn function_hook(function: Py<PyAny>, label: String) -> CallbackHook {
    CallbackHook::new(label, move |record| {
        calls::start(
            &function,
            |py| Ok(Bound::new(py, EventRecord::new(record))?.into_any()),
            answer,
        )
        .answer()
    })
}

/// A function's answer: `None` is no opinion; anything else must be JSON
/// data.
fn answer(returned: &Bound<'_, PyAny>) -> Result<Option<Value>, String> {
    if returned.is_none() {
        return Ok(None);
    }
    depythonize::<Value>(returned)
        .map(Some)
        .map_err(|e| format!("it returned what is not JSON data: {e}"))
}

/// The name a function is known by: its `__qualname__`, else its repr.
pub(crate) fn label_of(function: &Bound<'_, PyAny>) -> String {
    function
        .getattr("__qualname__")
        .and_then(|name| name.extract::<String>())
        .or_else(|_| function.repr().map(|r| r.to_string()))
        .unwrap_or_else(|_| "function".to_owned())
}

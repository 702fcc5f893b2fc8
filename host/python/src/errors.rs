//! Errors as the package's own exceptions (`wasm_hooks.errors`): a hook
//! file that does not load names each problem's file, line and field; an
//! event that cannot be read names the field.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use wasm_hooks::LoadError;

/// The exception class `name` of `wasm_hooks.errors`, made with `message`
/// (and `problems`, for a hook file's).
fn raise<'py>(
    py: Python<'py>,
    name: &str,
    message: String,
    problems: Option<Vec<Bound<'py, PyDict>>>,
) -> PyErr {
    let made = py
        .import("wasm_hooks.errors")
        .and_then(|module| module.getattr(name))
        .and_then(|class| match problems {
            Some(problems) => class.call1((message, problems)),
            None => class.call1((message,)),
        });
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

/// `WasmHooksError(message)`: anything else the engine refuses.
pub(crate) fn engine_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, "WasmHooksError", message.into(), None)
}

/// `EventError(message)`: an event record that cannot be read.
pub(crate) fn event_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, "EventError", message.into(), None)
}

/// `RegistrationError(message)`: a function registered with an event,
/// matcher or failure policy that does not read.
pub(crate) fn registration_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, "RegistrationError", message.into(), None)
}

/// `HookFileError(message, problems)`, each problem a dict with `file`,
/// `line`, `column` (None when not known) and `message`.
pub(crate) fn load_error(py: Python<'_>, error: &LoadError) -> PyErr {
    let problems: PyResult<Vec<Bound<'_, PyDict>>> = error
        .errors
        .iter()
        .map(|problem| {
            let dict = PyDict::new(py);
            let (file, line, column) = problem
                .location()
                .map_or((None, None, None), |(f, l, c)| (Some(f), l, c));
            dict.set_item("file", file.map(|f| f.to_string_lossy().into_owned()))?;
            dict.set_item("line", line)?;
            dict.set_item("column", column)?;
            dict.set_item("message", problem.to_string())?;
            Ok(dict)
        })
        .collect();
    match problems {
        Ok(problems) => raise(py, "HookFileError", error.to_string(), Some(problems)),
        Err(e) => e,
    }
}

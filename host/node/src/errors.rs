//! Errors as the package's own classes: the addon throws an `Error` whose
//! message is `wasm-hooks-error:` and a JSON object (`kind`, `message`,
//! `problems`), which `index.js` turns into a `HookFileError`,
//! `EventError`, `RegistrationError` or `WasmHooksError`.

use napi::{Error, Status};
use serde_json::{Value, json};
use wasm_hooks::LoadError;

/// The marker `index.js` recognises.
const MARKER: &str = "wasm-hooks-error:";

fn error(kind: &str, message: impl Into<String>, problems: Value) -> Error {
    let detail = json!({"kind": kind, "message": message.into(), "problems": problems});
    Error::new(Status::InvalidArg, format!("{MARKER}{detail}"))
}

/// `WasmHooksError`: anything else the engine refuses.
pub(crate) fn engine_error(message: impl Into<String>) -> Error {
    error("WasmHooksError", message, json!([]))
}

/// `EventError`: an event that cannot be read.
pub(crate) fn event_error(message: impl Into<String>) -> Error {
    error("EventError", message, json!([]))
}

/// `RegistrationError`: a function registered with an event, matcher or
/// failure policy that does not read.
pub(crate) fn registration_error(message: impl Into<String>) -> Error {
    error("RegistrationError", message, json!([]))
}

/// `HookFileError`, with each problem's `file`, `line`, `column` and
/// `message`.
pub(crate) fn load_error(load: &LoadError) -> Error {
    let problems: Vec<Value> = load
        .errors
        .iter()
        .map(|problem| {
            let (file, line, column) =
                problem.location().map_or((None, None, None), |(f, l, c)| {
                    (Some(f.to_string_lossy()), l, c)
                });
            json!({"file": file, "line": line, "column": column, "message": problem.to_string()})
        })
        .collect();
    error("HookFileError", load.to_string(), Value::Array(problems))
}

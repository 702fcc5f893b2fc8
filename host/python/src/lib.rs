//! Python bindings of the wasm-hooks engine: the native module
//! `wasm_hooks._wasm_hooks` behind the `wasm_hooks` package
//! (`host/python/python/wasm_hooks`), which gives it its Python face
//! (typed outcomes, decorators, Amplifier's hook API).
//!
//! Every call that runs hooks releases the GIL; the `_async` methods run
//! on the engine's tokio runtime and leave the caller's event loop free.
//! No wasmtime engine exists until an [`engine::Engine`] is made (never at
//! import), so a `faulthandler` enabled first stays behind wasmtime's
//! signal handlers.

mod approvals;
mod calls;
mod engine;
mod errors;
mod functions;
mod outcome;
mod record;
mod session;

use pyo3::prelude::*;

/// The native module behind the `wasm_hooks` package.
#[pymodule]
fn _wasm_hooks(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<engine::Engine>()?;
    m.add_class::<engine::Registration>()?;
    m.add_class::<session::Session>()?;
    m.add_class::<outcome::Outcome>()?;
    m.add_class::<outcome::Resolved>()?;
    m.add_class::<record::EventRecord>()?;
    m.add_function(wrap_pyfunction!(engine::protocols, m)?)?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

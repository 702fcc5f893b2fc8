//! Node.js bindings of the wasm-hooks engine: the native addon behind the
//! `wasm-hooks` npm package (`host/node`), whose `index.js` gives it its
//! JavaScript face (error classes, functions made async).
//!
//! Every decision runs on the engine's tokio runtime, so the Node event
//! loop stays free while hooks run; a JavaScript function registered as a
//! hook is called back on the event loop through a thread-safe function.

mod engine;
mod errors;
mod functions;
mod outcome;
mod session;

//! Handler kinds behind one [`Handler`] trait. The engine runs handlers only
//! through this trait; each kind lives in its own module (`wasm`,
//! `command`, `inline`, `http`, `prompt`, `closure`) and turns its native answer into a [`HookResult`] at its own
//! border.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::{Event, HookError, HookId, HookOutput, HookResult};

mod answer;
pub mod closure;
pub mod command;
pub mod http;
pub mod inline;
pub mod prompt;
pub mod wasm;

/// What a handler hands back for one event: its answer or failure, and
/// whatever it wrote besides (captured output, log lines).
#[derive(Debug)]
pub struct Reply {
    /// The answer, or why there is none.
    pub result: Result<HookResult, HookError>,
    /// Captured output and logs.
    pub output: HookOutput,
}

/// The future a [`Handler`] returns.
pub type HandlerFuture<'a> = Pin<Box<dyn Future<Output = Reply> + Send + 'a>>;

/// One kind of hook: given an event, produce an answer within its limits.
///
/// Implementations never panic on bad plugins, bad output or exhausted
/// limits: they return a [`HookError`] naming `hook` instead.
pub trait Handler: Send + Sync + fmt::Debug {
    /// Handle one event on behalf of the hook named `hook`.
    fn handle<'a>(&'a self, hook: &'a HookId, event: &'a Event) -> HandlerFuture<'a>;

    /// Lines describing what the handler runs and may do, for listings
    /// (`wasm-hooks list`); none by default.
    fn details(&self) -> Vec<String> {
        Vec::new()
    }
}

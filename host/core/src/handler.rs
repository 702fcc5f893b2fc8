//! The one [`Handler`] trait every hook kind implements. Dispatch runs
//! handlers only through it; each kind (wasm in `wasm-hooks-wasm`; command,
//! inline, http, prompt in `wasm-hooks`; Rust closures in `closure`) turns
//! its native answer into a [`HookResult`] at its own border.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::error::HookError;
use crate::event::Event;
use crate::id::HookId;
use crate::outcome::{HookOutput, HookResult};

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

/// The future of [`Handler::prepare`].
pub type PrepareFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

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

    /// The rules the handler decides by, in words (`rule 1 (deny: …)`), for
    /// coverage: which no test made decide. None by default (a handler
    /// that is one piece of code).
    fn rules(&self) -> Vec<String> {
        Vec::new()
    }

    /// Which of [`Handler::rules`] (by index) decides `event`, if one does.
    fn deciding_rule(&self, _event: &Event) -> Option<usize> {
        None
    }

    /// Make ready, between events, what the next event of `hook` would
    /// otherwise make on its way to an answer (a wasm plugin's fresh
    /// instance), so the answer waits less; nothing by default. What is
    /// made must answer exactly as what the event would have made.
    fn prepare<'a>(&'a self, _hook: &'a HookId) -> PrepareFuture<'a> {
        Box::pin(std::future::ready(()))
    }
}

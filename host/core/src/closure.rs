//! Hooks written in Rust: a closure over the event, registered from the
//! embedding host with [`HookSpec::from_fn`](crate::HookSpec::from_fn).

use std::fmt;
use std::future::Future;

use crate::error::HookError;
use crate::event::Event;
use crate::handler::{Handler, HandlerFuture, Reply};
use crate::id::HookId;
use crate::outcome::{HookOutput, HookResult};

/// A [`Handler`] that calls a Rust closure. The closure gets its own copy of
/// the event; an `Err` is a hook failure with that message.
pub struct FnHandler<F> {
    f: F,
}

impl<F> FnHandler<F> {
    /// Wrap a closure.
    pub fn new(f: F) -> Self {
        Self { f }
    }
}

impl<F> fmt::Debug for FnHandler<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnHandler")
    }
}

impl<F, Fut> Handler for FnHandler<F>
where
    F: Fn(Event) -> Fut + Send + Sync,
    Fut: Future<Output = Result<HookResult, String>> + Send + 'static,
{
    fn handle<'a>(&'a self, hook: &'a HookId, event: &'a Event) -> HandlerFuture<'a> {
        let answer = (self.f)(event.clone());
        Box::pin(async move {
            Reply {
                result: answer.await.map_err(|message| HookError::Failed {
                    hook: hook.clone(),
                    message,
                }),
                output: HookOutput::default(),
            }
        })
    }
}

//! Hooks that run once per session (`"once": true`, as Claude Code's
//! entries say): the first event of a session that reaches the hook runs
//! it; later ones pass it by, and its trace says so.
//!
//! Which hooks ran is kept in the engine's [`SessionStore`]: its memory,
//! or, for `wasm-hooks hook` (a process per event), a directory where a
//! mark is created exclusively (of two events racing, one runs the hook),
//! or the Redis the replicas of `serve` share.

use std::sync::Arc;

use wasm_hooks_core::{
    Decision, Event, Handler, HandlerFuture, HookId, HookOutput, HookResult, PrepareFuture, Reply,
    SessionStore,
};

/// Which `once` hooks already ran, per session: marks named `name` in a
/// store.
#[derive(Debug)]
pub(crate) struct OnceMarks {
    store: Arc<dyn SessionStore>,
    name: String,
}

impl OnceMarks {
    /// The marks called `name` in `store`.
    pub(crate) fn new(store: Arc<dyn SessionStore>, name: &str) -> Self {
        Self {
            store,
            name: name.to_owned(),
        }
    }

    /// Mark `hook` as run in `session`; whether this was the first time.
    /// When the mark cannot be written the hook runs (and a warning is
    /// logged): a guard that runs twice is better than one that never does.
    pub(crate) fn first(&self, session: &str, hook: &HookId) -> bool {
        let key = format!("{}:{session}:{}", self.name, hook.as_str());
        self.store.set_once(&key).unwrap_or_else(|e| {
            tracing::warn!("once: {e}");
            true
        })
    }
}

/// A hook that runs once per session.
#[derive(Debug)]
pub(crate) struct OnceHook {
    inner: Arc<dyn Handler>,
    marks: Arc<OnceMarks>,
    /// The layer it comes from: its mark is kept under it, so a project's
    /// hook of the same name never uses up the person's (or the other way
    /// round).
    layer: &'static str,
}

impl OnceHook {
    /// `inner` of the layer `layer`, run only the first time each session
    /// reaches it.
    pub(crate) fn new(inner: Arc<dyn Handler>, marks: Arc<OnceMarks>, layer: &'static str) -> Self {
        Self {
            inner,
            marks,
            layer,
        }
    }
}

impl Handler for OnceHook {
    fn handle<'a>(&'a self, hook: &'a HookId, event: &'a Event) -> HandlerFuture<'a> {
        let mark = HookId::new(format!("{}/{hook}", self.layer));
        if self.marks.first(event.session_id(), &mark) {
            return self.inner.handle(hook, event);
        }
        Box::pin(async {
            Reply {
                result: Ok(HookResult::new(Decision::Proceed)),
                output: HookOutput {
                    logs: vec![
                        "not run: a `once` hook that already ran in this session".to_owned(),
                    ],
                    ..HookOutput::default()
                },
            }
        })
    }

    fn prepare<'a>(&'a self, hook: &'a HookId) -> PrepareFuture<'a> {
        self.inner.prepare(hook)
    }

    fn details(&self) -> Vec<String> {
        let mut details = self.inner.details();
        details.push("once per session".to_owned());
        details
    }

    fn rules(&self) -> Vec<String> {
        self.inner.rules()
    }

    fn deciding_rule(&self, event: &Event) -> Option<usize> {
        self.inner.deciding_rule(event)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wasm_hooks_core::FnHandler;

    use super::*;

    async fn runs(hook: &OnceHook, session: &str) -> bool {
        let event = Event::pre_tool_use("Bash", json!({})).with("session_id", session);
        let reply = hook.handle(&HookId::new("greet"), &event).await;
        reply.output.logs.is_empty()
    }

    #[tokio::test]
    async fn a_once_hook_runs_on_the_first_event_of_each_session_in_memory_and_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let stores: [Arc<dyn SessionStore>; 2] = [
            Arc::new(wasm_hooks_core::MemoryStore::new()),
            Arc::new(crate::state::DirectoryStore::new(dir.path())),
        ];
        for (n, store) in stores.into_iter().enumerate() {
            let inner: Arc<dyn Handler> = Arc::new(FnHandler::new(|_| async {
                Ok(HookResult::new(Decision::Proceed))
            }));
            let hook = OnceHook::new(
                inner.clone(),
                Arc::new(OnceMarks::new(Arc::clone(&store), "once")),
                "user",
            );
            assert!(runs(&hook, "s1").await);
            assert!(!runs(&hook, "s1").await);
            assert!(runs(&hook, "s2").await);
            if n == 1 {
                // Another process, reading the same directory, sees the marks.
                let other = Arc::new(crate::state::DirectoryStore::new(dir.path()));
                let again = OnceHook::new(inner, Arc::new(OnceMarks::new(other, "once")), "user");
                assert!(!runs(&again, "s2").await);
            }
        }
    }
}

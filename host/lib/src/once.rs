//! Hooks that run once per session (`"once": true`, as Claude Code's
//! entries say): the first event of a session that reaches the hook runs
//! it; later ones pass it by, and its trace says so.
//!
//! Which hooks ran is kept in memory, or, for `wasm-hooks hook` (a process
//! per event), as one empty file per session and hook in a directory,
//! created exclusively: of two events racing, one runs the hook.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use wasm_hooks_core::{
    Decision, Event, Handler, HandlerFuture, HookId, HookOutput, HookResult, PrepareFuture, Reply,
};

use crate::shared_state::SharedState;
use crate::state_dir;

/// Which `once` hooks already ran, per session.
#[derive(Debug)]
pub(crate) enum OnceMarks {
    /// In memory: for an engine that lives across events.
    Memory(Mutex<HashSet<(String, HookId)>>),
    /// A file per session and hook in this directory.
    Dir(PathBuf),
    /// In a store engines on several hosts share, under this name.
    Shared(Arc<dyn SharedState>, String),
}

impl OnceMarks {
    /// Marks in memory, or in `dir` when given.
    pub(crate) fn new(dir: Option<PathBuf>) -> Self {
        match dir {
            Some(dir) => Self::Dir(dir),
            None => Self::Memory(Mutex::default()),
        }
    }

    /// Mark `hook` as run in `session`; whether this was the first time.
    /// When the mark cannot be written the hook runs (and a warning is
    /// logged): a guard that runs twice is better than one that never does.
    pub(crate) fn first(&self, session: &str, hook: &HookId) -> bool {
        match self {
            Self::Memory(set) => set
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert((session.to_owned(), hook.clone())),
            Self::Dir(dir) => {
                let key = format!("{session}\n{}", hook.as_str());
                let file = dir.join(state_dir::file_name(&key, "once"));
                let created = state_dir::create_private_dir(dir).and_then(|()| {
                    std::fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(&file)
                });
                match created {
                    Ok(_) => true,
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
                    Err(e) => {
                        tracing::warn!("once: {}: {e}", file.display());
                        true
                    }
                }
            }
            // A mark the store cannot take: the hook runs (said by the
            // store's own warning).
            Self::Shared(state, name) => state
                .set_once(&format!("{name}:{session}:{}", hook.as_str()))
                .unwrap_or(true),
        }
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
        for place in [None, Some(dir.path().join("once"))] {
            let inner: Arc<dyn Handler> = Arc::new(FnHandler::new(|_| async {
                Ok(HookResult::new(Decision::Proceed))
            }));
            let hook = OnceHook::new(
                inner.clone(),
                Arc::new(OnceMarks::new(place.clone())),
                "user",
            );
            assert!(runs(&hook, "s1").await);
            assert!(!runs(&hook, "s1").await);
            assert!(runs(&hook, "s2").await);
            if place.is_some() {
                // Another process, reading the same directory, sees the marks.
                let again = OnceHook::new(inner, Arc::new(OnceMarks::new(place)), "user");
                assert!(!runs(&again, "s2").await);
            }
        }
    }
}

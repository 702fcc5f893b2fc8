//! The stop-loop guard: a hook that blocks every Stop (or SubagentStop)
//! would keep the agent working forever, and some agents do not say that a
//! stop was blocked before (headless Gemini CLI sends
//! `stop_hook_active: false` again). So blocked stops in a row are counted
//! per session; past the limit the stop goes through, with a warning that
//! names the hook. A stop that goes through, or a new prompt, starts the
//! count again.
//!
//! The counts live in the engine's [`SessionStore`]: its memory, or, for
//! `wasm-hooks hook` (a process per event), a directory (one small file
//! per session in the middle of a loop, removed when its count starts
//! again), or the Redis the replicas of `serve` share. While the store
//! cannot be reached, they are kept in memory (a loop still ends).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use wasm_hooks_core::{
    Attributed, Event, EventName, HookId, Outcome, Review, SessionStore, Verdict,
};

/// Blocked stops in a row allowed by default before one goes through.
pub const DEFAULT_STOP_LOOP_LIMIT: u32 = 8;

/// Counts blocked stops in a row per session and lets one through past
/// the limit.
#[derive(Debug)]
pub(crate) struct StopLoopGuard {
    limit: u32,
    store: Arc<dyn SessionStore>,
    /// The counts while the store cannot be reached.
    fallback: Mutex<HashMap<String, u32>>,
}

impl StopLoopGuard {
    /// A guard allowing `limit` blocked stops in a row, counting in
    /// `store`.
    pub(crate) fn new(limit: u32, store: Arc<dyn SessionStore>) -> Self {
        Self {
            limit,
            store,
            fallback: Mutex::default(),
        }
    }

    /// Look at the outcome of `event` in `session`: count a blocked stop,
    /// and past the limit turn it into a stop that goes through.
    fn count(&self, event: EventName, session: &str, outcome: &mut Outcome) {
        match event {
            EventName::Stop | EventName::SubagentStop => {}
            EventName::UserPromptSubmit => return self.set(session, 0),
            _ => return,
        }
        if !matches!(outcome.verdict, Verdict::Deny { .. }) {
            return self.set(session, 0);
        }
        let count = self.get(session) + 1;
        if count <= self.limit {
            return self.set(session, count);
        }
        self.set(session, 0);
        let hook = outcome
            .decided_by
            .clone()
            .unwrap_or_else(|| HookId::new("wasm-hooks"));
        outcome.system_messages.push(Attributed {
            value: format!(
                "`{hook}` blocked {count} stops in a row (limit {}): this one goes through",
                self.limit
            ),
            hook,
        });
        outcome.verdict = Verdict::Proceed;
        outcome.decided_by = None;
    }
}

impl Review for StopLoopGuard {
    fn review(&self, event: &Event, outcome: &mut Outcome) {
        self.count(event.name(), event.session_id(), outcome);
    }
}

impl StopLoopGuard {
    fn get(&self, session: &str) -> u32 {
        self.store
            .count(&format!("stops:{session}"))
            .unwrap_or_else(|e| {
                tracing::warn!("stop-loop guard: {e}");
                self.fallback().get(session).copied().unwrap_or(0)
            })
    }

    fn set(&self, session: &str, count: u32) {
        let mut fallback = self.fallback();
        if count == 0 {
            fallback.remove(session);
        } else {
            fallback.insert(session.to_owned(), count);
        }
        if let Err(e) = self.store.set_count(&format!("stops:{session}"), count) {
            tracing::warn!("stop-loop guard: {e} (the count is kept here meanwhile)");
        }
    }

    fn fallback(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.fallback.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use wasm_hooks_core::HookId;

    use super::*;

    fn blocked() -> Outcome {
        Outcome {
            verdict: Verdict::Deny {
                reason: "run the tests".into(),
            },
            decided_by: Some(HookId::new("tests-first")),
            ..Outcome::proceed()
        }
    }

    fn run(guard: &StopLoopGuard, event: EventName, outcome: Outcome) -> Outcome {
        let mut outcome = outcome;
        guard.count(event, "s1", &mut outcome);
        outcome
    }

    #[test]
    fn past_the_limit_a_stop_goes_through_naming_the_hook_then_counts_again() {
        let dir = tempfile::tempdir().unwrap();
        for guard in [
            StopLoopGuard::new(2, Arc::new(wasm_hooks_core::MemoryStore::new())),
            StopLoopGuard::new(2, Arc::new(crate::state::DirectoryStore::new(dir.path()))),
        ] {
            for _ in 0..2 {
                let o = run(&guard, EventName::Stop, blocked());
                assert!(matches!(o.verdict, Verdict::Deny { .. }));
            }
            let third = run(&guard, EventName::SubagentStop, blocked());
            assert_eq!(third.verdict, Verdict::Proceed);
            assert_eq!(third.system_messages[0].hook.as_str(), "tests-first");
            assert!(third.system_messages[0].value.contains("3 stops in a row"));
            // The count started again.
            let o = run(&guard, EventName::Stop, blocked());
            assert!(matches!(o.verdict, Verdict::Deny { .. }));
        }
    }

    #[test]
    fn a_stop_that_goes_through_or_a_new_prompt_starts_the_count_again() {
        let guard = StopLoopGuard::new(1, Arc::new(wasm_hooks_core::MemoryStore::new()));
        run(&guard, EventName::Stop, blocked());
        run(&guard, EventName::Stop, Outcome::proceed());
        let o = run(&guard, EventName::Stop, blocked());
        assert!(matches!(o.verdict, Verdict::Deny { .. }));
        run(&guard, EventName::UserPromptSubmit, Outcome::proceed());
        let o = run(&guard, EventName::Stop, blocked());
        assert!(matches!(o.verdict, Verdict::Deny { .. }));
        // Other events do not count.
        let o = run(&guard, EventName::PreToolUse, blocked());
        assert!(matches!(o.verdict, Verdict::Deny { .. }));
    }
}

//! The stop-loop guard: a hook that blocks every Stop (or SubagentStop)
//! would keep the agent working forever, and some agents do not say that a
//! stop was blocked before (headless Gemini CLI sends
//! `stop_hook_active: false` again). So blocked stops in a row are counted
//! per session; past the limit the stop goes through, with a warning that
//! names the hook. A stop that goes through, or a new prompt, starts the
//! count again.
//!
//! The counts live in memory, or, for `wasm-hooks hook` (a process per
//! event), in a directory: one small file per session in the middle of a
//! loop, removed when its count starts again.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use wasm_hooks_core::{Attributed, Event, EventName, HookId, Outcome, Review, Verdict};

use crate::shared_state::SharedState;
use crate::state_dir::{create_private_dir, file_name};

/// Blocked stops in a row allowed by default before one goes through.
pub const DEFAULT_STOP_LOOP_LIMIT: u32 = 8;

/// Counts blocked stops in a row per session and lets one through past
/// the limit.
#[derive(Debug)]
pub(crate) struct StopLoopGuard {
    limit: u32,
    counts: Counts,
}

#[derive(Debug)]
enum Counts {
    Memory(Mutex<HashMap<String, u32>>),
    Dir(PathBuf),
    /// In a store engines on several hosts share; in memory while it
    /// cannot be reached (a loop still ends).
    Shared(Arc<dyn SharedState>, Mutex<HashMap<String, u32>>),
}

impl StopLoopGuard {
    /// A guard allowing `limit` blocked stops in a row, counting in memory,
    /// or in `dir` when given.
    pub(crate) fn new(limit: u32, dir: Option<PathBuf>) -> Self {
        let counts = match dir {
            Some(dir) => Counts::Dir(dir),
            None => Counts::Memory(Mutex::default()),
        };
        Self { limit, counts }
    }

    /// A guard allowing `limit` blocked stops in a row, counting in
    /// `state`, which engines on several hosts share.
    pub(crate) fn shared(limit: u32, state: Arc<dyn SharedState>) -> Self {
        Self {
            limit,
            counts: Counts::Shared(state, Mutex::default()),
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
        match &self.counts {
            Counts::Memory(map) => map
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(session)
                .copied()
                .unwrap_or(0),
            Counts::Dir(dir) => std::fs::read_to_string(dir.join(file_name(session, "stops")))
                .ok()
                .and_then(|text| text.trim().parse().ok())
                .unwrap_or(0),
            Counts::Shared(state, local) => state
                .count(&format!("stops:{session}"))
                .unwrap_or_else(|_| {
                    local
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .get(session)
                        .copied()
                        .unwrap_or(0)
                }),
        }
    }

    fn set(&self, session: &str, count: u32) {
        match &self.counts {
            Counts::Memory(map) => {
                let mut map = map.lock().unwrap_or_else(PoisonError::into_inner);
                if count == 0 {
                    map.remove(session);
                } else {
                    map.insert(session.to_owned(), count);
                }
            }
            Counts::Dir(dir) => {
                let file = dir.join(file_name(session, "stops"));
                let written = if count == 0 {
                    std::fs::remove_file(&file).or_else(|e| match e.kind() {
                        std::io::ErrorKind::NotFound => Ok(()),
                        _ => Err(e),
                    })
                } else {
                    create_private_dir(dir).and_then(|()| std::fs::write(&file, count.to_string()))
                };
                if let Err(e) = written {
                    tracing::warn!("stop-loop guard: {}: {e}", file.display());
                }
            }
            Counts::Shared(state, local) => {
                let mut local = local.lock().unwrap_or_else(PoisonError::into_inner);
                if count == 0 {
                    local.remove(session);
                } else {
                    local.insert(session.to_owned(), count);
                }
                // A store that fails keeps the count here (see `get`).
                let _ = state.set_count(&format!("stops:{session}"), count);
            }
        }
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
            StopLoopGuard::new(2, None),
            StopLoopGuard::new(2, Some(dir.path().join("stops"))),
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
        let guard = StopLoopGuard::new(1, None);
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

//! Test plugin: counts the calls its instance has answered, in memory, and
//! says the count as context (`call N`), so a test can tell a warm
//! instance (`instance: reuse`) from a fresh one; panics (a trap) when the
//! command is `trap`.

use std::sync::atomic::{AtomicU32, Ordering};

use wasm_hooks_guest::{Event, Hook, Outcome, Result, export_hook};

static CALLS: AtomicU32 = AtomicU32::new(0);

struct Remember;

impl Hook for Remember {
    fn pre_tool_use(event: &Event) -> Result<Outcome> {
        let calls = CALLS.fetch_add(1, Ordering::Relaxed) + 1;
        if event.json()?["tool_input"]["command"] == "trap" {
            panic!("asked to trap after {calls} calls");
        }
        Ok(Outcome::proceed().with_context(format!("call {calls}")))
    }
}

export_hook!(Remember);

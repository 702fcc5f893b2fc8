//! Test plugin: counts the calls its instance has answered, in memory, and
//! says the count as context (`call N`), so a test can tell a warm
//! instance (`instance: reuse`) from a fresh one; panics (a trap) when the
//! command is `trap`; denies, and notes the denial in its `kv`, when it is
//! `deny-and-note`.

use std::sync::atomic::{AtomicU32, Ordering};

use wasm_hooks_guest::{Event, Hook, Outcome, Result, export_hook, kv};

static CALLS: AtomicU32 = AtomicU32::new(0);

struct Remember;

impl Hook for Remember {
    fn pre_tool_use(event: &Event) -> Result<Outcome> {
        let calls = CALLS.fetch_add(1, Ordering::Relaxed) + 1;
        let command = &event.json()?["tool_input"]["command"];
        if command == "trap" {
            panic!("asked to trap after {calls} calls");
        }
        if command == "deny-and-note" {
            kv::set("denied", "yes")?;
            return Ok(Outcome::deny("noted and denied"));
        }
        Ok(Outcome::proceed().with_context(format!("call {calls}")))
    }
}

export_hook!(Remember);

//! Hostile plugin: loops forever on PreToolUse, allocating and freeing a
//! small box on every turn (memory stays flat, so only fuel or the deadline
//! stop it); answers `allow` to every other event.

use wasm_hooks_guest::{Event, Hook, Outcome, Result, export_hook};

struct AllocLoop;

impl Hook for AllocLoop {
    fn pre_tool_use(_: &Event) -> Result<Outcome> {
        let mut n = 0u64;
        loop {
            let b = std::hint::black_box(Box::new([n; 4]));
            n = n.wrapping_add(b[3] | 1);
        }
    }

    fn other(_: &Event) -> Result<Outcome> {
        Ok(Outcome::allow())
    }
}

export_hook!(AllocLoop);

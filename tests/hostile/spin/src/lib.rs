//! Hostile plugin: spins forever on PreToolUse (to be stopped by fuel or the
//! deadline); answers `allow` to every other event.

use wasm_hooks_guest::{Event, Hook, Outcome, Result, export_hook};

struct Spin;

impl Hook for Spin {
    fn pre_tool_use(_: &Event) -> Result<Outcome> {
        let mut n = 0u64;
        loop {
            n = std::hint::black_box(n.wrapping_add(1));
        }
    }

    fn other(_: &Event) -> Result<Outcome> {
        Ok(Outcome::allow())
    }
}

export_hook!(Spin);

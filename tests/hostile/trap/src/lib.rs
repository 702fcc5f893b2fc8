//! Hostile plugin: executes `unreachable` on PreToolUse (a trap with no
//! panic message); answers `allow` to every other event.

use wasm_hooks_guest::{Event, Hook, Outcome, Result, export_hook};

struct Trap;

impl Hook for Trap {
    fn pre_tool_use(_: &Event) -> Result<Outcome> {
        core::arch::wasm32::unreachable()
    }

    fn other(_: &Event) -> Result<Outcome> {
        Ok(Outcome::allow())
    }
}

export_hook!(Trap);

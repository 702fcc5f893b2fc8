//! Hostile plugin: panics on PreToolUse (a trap, with the panic message on
//! stderr); answers `allow` to every other event.

use wasm_hooks_guest::{Event, Hook, Outcome, Result, export_hook};

struct Panic;

impl Hook for Panic {
    fn pre_tool_use(_: &Event) -> Result<Outcome> {
        panic!("boom from the panic plugin");
    }

    fn other(_: &Event) -> Result<Outcome> {
        Ok(Outcome::allow())
    }
}

export_hook!(Panic);

//! Hostile plugin: allocates 1 MiB blocks without end on PreToolUse (to be
//! stopped by the memory cap); answers `allow` to every other event.

use wasm_hooks_guest::{Event, Hook, Outcome, Result, export_hook};

struct GrowMemory;

impl Hook for GrowMemory {
    fn pre_tool_use(_: &Event) -> Result<Outcome> {
        let mut blocks = Vec::new();
        loop {
            blocks.push(std::hint::black_box(vec![1u8; 1 << 20]));
        }
    }

    fn other(_: &Event) -> Result<Outcome> {
        Ok(Outcome::allow())
    }
}

export_hook!(GrowMemory);

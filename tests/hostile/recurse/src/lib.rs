//! Hostile plugin: recurses without end on PreToolUse (to be stopped by the
//! wasm stack limit); answers `allow` to every other event.

use wasm_hooks_guest::{Event, Hook, Outcome, Result, export_hook};

struct Recurse;

/// Each frame keeps a little of the stack busy, so the recursion cannot be
/// turned into a loop.
#[expect(unconditional_recursion, reason = "recursion without end is the test")]
fn deeper(n: u64) -> u64 {
    let frame = std::hint::black_box([n; 16]);
    deeper(n + 1) + frame[(n % 16) as usize]
}

impl Hook for Recurse {
    fn pre_tool_use(_: &Event) -> Result<Outcome> {
        std::hint::black_box(deeper(0));
        Ok(Outcome::proceed())
    }

    fn other(_: &Event) -> Result<Outcome> {
        Ok(Outcome::allow())
    }
}

export_hook!(Recurse);

//! Hostile plugin: writes 200 lines of 1 MiB to the host's log, at warn
//! level (which the host's log shows by default), with an escape sequence
//! in each, then answers `proceed`.

use wasm_hooks_guest::{Event, Hook, Level, Outcome, Result, export_hook, log};

struct LogFlood;

impl Hook for LogFlood {
    fn other(_: &Event) -> Result<Outcome> {
        let line = format!("\u{1b}[2J{}", "x".repeat(1 << 20));
        for _ in 0..200 {
            log(Level::Warn, &line);
        }
        Ok(Outcome::proceed())
    }
}

export_hook!(LogFlood);

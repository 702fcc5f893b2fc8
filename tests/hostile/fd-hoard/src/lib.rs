//! Hostile plugin: opens the file `tool_input.path` (in a granted
//! directory) 20,000 times, keeping every handle, and says in context how
//! many opens succeeded.

use wasm_hooks_guest::{Event, Hook, Outcome, Result, export_hook};

struct FdHoard;

impl Hook for FdHoard {
    fn other(event: &Event) -> Result<Outcome> {
        let path = event.json()?["tool_input"]["path"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        let mut held = Vec::new();
        for _ in 0..20_000 {
            match std::fs::File::open(&path) {
                Ok(file) => held.push(file),
                Err(_) => break,
            }
        }
        Ok(Outcome::proceed().with_context(format!("opened {}", held.len())))
    }
}

export_hook!(FdHoard);

//! `wasm-hooks schema`: print the JSON Schema of hook files, for editors
//! (`"$schema": "./hooks.schema.json"` in `.wasm-hooks/hooks.json`, after
//! `wasm-hooks schema > .wasm-hooks/hooks.schema.json`).

use super::{Exit, report};

pub(crate) fn run() -> anyhow::Result<Exit> {
    let schema = serde_json::to_string_pretty(&wasm_hooks::hook_file_schema())?;
    report::print(&format!("{schema}\n"))?;
    Ok(Exit::GoOn)
}

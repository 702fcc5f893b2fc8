//! `wasm-hooks schema`: print the JSON Schema of hook files, for editors
//! (`"$schema"` in `.wasm-hooks/hooks.json`, its stable `$id`, or a saved
//! copy), or with `--agent-settings` the schema of an agent's settings file
//! as wasm-hooks reads it (its `hooks` key; the agent's other keys left
//! alone).

use clap::Args;

use super::{Exit, report};

/// Arguments of `wasm-hooks schema`.
#[derive(Debug, Args)]
pub(crate) struct SchemaArgs {
    /// The schema of an agent's settings file (`.claude/settings.json`,
    /// `.codex/hooks.json`, `.gemini/settings.json`): its `hooks` checked,
    /// its other keys the agent's.
    #[arg(long)]
    agent_settings: bool,
}

pub(crate) fn run(args: &SchemaArgs) -> anyhow::Result<Exit> {
    let schema = if args.agent_settings {
        wasm_hooks::schema::agent_settings_schema()
    } else {
        wasm_hooks::schema::hook_file_schema()
    };
    report::print(&format!("{}\n", serde_json::to_string_pretty(&schema)?))?;
    Ok(Exit::GoOn)
}

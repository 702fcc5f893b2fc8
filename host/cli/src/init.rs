//! `wasm-hooks init`: a starter hook file for a project (an inline rule
//! that works as it is; plain JSON, which `jq` and every JSON library
//! read), the `.gitignore` line for the local layer, and the next steps:
//! how to add a wasm guard or a command hook, and, when an agent's
//! settings already hold hooks, the command that moves them here.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;

use super::{Exit, report};

/// The starter hook file.
const STARTER: &str = include_str!("../templates/init/hooks.json");

/// The local layer: a person's own hooks, never shared.
const LOCAL_LAYER: &str = ".wasm-hooks/hooks.local.json";

/// Arguments of `wasm-hooks init`.
#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// The project [default: the current directory].
    #[arg(long, value_name = "DIR")]
    project_dir: Option<PathBuf>,
}

pub(crate) fn run(args: InitArgs) -> anyhow::Result<Exit> {
    let project = match args.project_dir {
        Some(dir) => dir,
        None => std::env::current_dir().context("finding the current directory")?,
    };
    let file = project.join(".wasm-hooks/hooks.json");
    if file.exists() {
        bail!(
            "{} already exists; `wasm-hooks validate` checks it, `wasm-hooks explain` shows what it does",
            file.display()
        );
    }
    std::fs::create_dir_all(project.join(".wasm-hooks"))
        .with_context(|| format!("creating {}", project.join(".wasm-hooks").display()))?;
    std::fs::write(&file, STARTER).with_context(|| format!("writing {}", file.display()))?;
    let ignore = project.join(".gitignore");
    let ignored = std::fs::read_to_string(&ignore).unwrap_or_default();
    let mut out = format!("wrote {}\n", file.display());
    if ignored.lines().any(|l| l.trim() == LOCAL_LAYER) {
        let _ = writeln!(out, "{} already ignores {LOCAL_LAYER}", ignore.display());
    } else {
        let mut text = ignored;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "# wasm-hooks: your own hooks, not shared\n{LOCAL_LAYER}\n"
        ));
        std::fs::write(&ignore, text).with_context(|| format!("writing {}", ignore.display()))?;
        let _ = writeln!(out, "added {LOCAL_LAYER} to {}", ignore.display());
    }
    out.push_str(
        "next:\n  \
         wasm-hooks validate                      # check it\n  \
         wasm-hooks run -e PreToolUse -t Bash -i '{\"command\":\"git push -f\"}'\n  \
         wasm-hooks install claude                # make Claude Code run it\n  \
         wasm-hooks new my-guard --lang python    # write a sandboxed guard, then add to the\n  \
         #   list: {\"type\": \"wasm\", \"plugin\": \"../my-guard/build/my_guard.wasm\", \"on_failure\": \"block\"}\n  \
         # a command hook runs with your rights, once the project is trusted:\n  \
         #   {\"type\": \"command\", \"command\": \"./scripts/check.sh\", \"on_failure\": \"block\"}\n",
    );
    for (agent, name, settings) in AGENT_SETTINGS {
        if holds_hooks(&project.join(settings)) {
            let _ = writeln!(
                out,
                "  wasm-hooks import {agent}                 # move {name}'s hooks in {settings} here"
            );
        }
    }
    report::print(&out)?;
    Ok(Exit::GoOn)
}

/// Each agent's project settings that can hold hooks `import` moves: its
/// name for `import`, its own name, the file.
const AGENT_SETTINGS: [(&str, &str, &str); 4] = [
    ("claude", "Claude Code", ".claude/settings.json"),
    ("claude", "Claude Code", ".claude/settings.local.json"),
    ("codex", "Codex", ".codex/hooks.json"),
    ("gemini", "Gemini CLI", ".gemini/settings.json"),
];

/// Whether the JSON (or JSONC) file at `path` has a non-empty `hooks`.
fn holds_hooks(path: &std::path::Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let parsed: Result<serde_json::Value, _> =
        jsonc_parser::parse_to_serde_value(&text, &jsonc_parser::ParseOptions::default());
    matches!(parsed, Ok(value) if value["hooks"].as_object().is_some_and(|h| !h.is_empty()))
}

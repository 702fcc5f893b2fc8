//! `wasm-hooks init`: a starter hook file for a project (an inline rule
//! that works as it is; plain JSON, which `jq` and every JSON library
//! read), the `.gitignore` line for the local layer, and the next steps:
//! how to add a wasm guard or a command hook. When an agent's project
//! settings already hold command hooks, `init` offers to move them here
//! (`wasm-hooks import`, which shows the diff and asks) on a terminal, or
//! with `--import`; elsewhere it names the command.

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;

use super::import::{self, ImportArgs};
use super::install::Agent;
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

    /// Also move the command hooks of Claude Code's, Codex's and Gemini
    /// CLI's project settings here (`wasm-hooks import`), as is offered on
    /// a terminal.
    #[arg(long)]
    import: bool,

    /// With --import: move them without asking.
    #[arg(long, short, requires = "import")]
    yes: bool,
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
    let importable = importable(&project);
    let offered = args.import || std::io::stdin().is_terminal();
    if !offered {
        for agent in &importable {
            let _ = writeln!(
                out,
                "  wasm-hooks import {:<22}# move {}'s hooks in {} here",
                agent.word(),
                agent.name(),
                agent.file_in(Path::new("")).display()
            );
        }
    }
    report::print(&out)?;
    if offered {
        for agent in importable {
            let imported = import::run(ImportArgs::offered_by_init(
                agent,
                project.clone(),
                args.yes,
            ));
            // Asked for (--import), a failed import fails `init`; only
            // offered, it leaves the starter written and says why.
            match imported {
                Err(e) if !args.import => report::print(&format!(
                    "{}'s hooks were not imported: {e:#}; `wasm-hooks import {}` tries again\n",
                    agent.name(),
                    agent.word()
                ))?,
                other => {
                    other?;
                }
            }
        }
    }
    Ok(Exit::GoOn)
}

/// The agents whose project settings (shared or local) hold command hooks
/// `import` would move.
fn importable(project: &Path) -> Vec<Agent> {
    wasm_hooks::Protocol::AGENTS
        .into_iter()
        .filter(|protocol| protocol.facts().importable)
        .map(Agent)
        .filter(|agent| ImportArgs::offered_by_init(*agent, project.to_owned(), false).would_move())
        .collect()
}

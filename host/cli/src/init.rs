//! `wasm-hooks init`: a commented starter hook file for a project (an
//! inline rule that works as it is, a wasm guard and a command hook to fill
//! in), the `.gitignore` line for the local layer, and the next steps.

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
         wasm-hooks new my-guard --lang python    # write a sandboxed guard\n",
    );
    report::print(&out)?;
    Ok(Exit::GoOn)
}

//! `wasm-hooks trust`: show what a project's layers would run, and, once
//! the person agrees, record them as trusted (the sha256 of every hook
//! file, config file, plugin and script, in the user's state directory);
//! `--show` says whether the project is trusted, `--revoke` forgets it.

use std::fmt::Write as _;
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use wasm_hooks::cli_support::Shown;
use wasm_hooks::{
    HookEngine, HookEngineBuilder, HookSource, TrustStatus, TrustStore, UntrustedProjects,
};

use super::hook_files::{CacheArgs, HookFileArgs};
use super::{Exit, compile, plugins, report};

/// Arguments of `wasm-hooks trust`.
#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// The project [default: the current directory].
    #[arg(long, value_name = "DIR")]
    project_dir: Option<PathBuf>,

    /// Also weigh the project's `.claude/settings.json` and
    /// `.claude/settings.local.json`.
    #[arg(long)]
    claude_settings: bool,

    /// Trust without asking.
    #[arg(long, short)]
    yes: bool,

    /// With --yes: trust even what its hooks run that trust cannot pin
    /// (listed by `trust`), which may change without untrusting it.
    #[arg(long, requires = "yes")]
    accept_unpinned: bool,

    /// Only say whether the project is trusted, and what with.
    #[arg(long, conflicts_with_all = ["yes", "revoke"])]
    show: bool,

    /// Forget that the project was trusted.
    #[arg(long, conflicts_with = "yes")]
    revoke: bool,

    #[command(flatten)]
    cache: CacheArgs,
}

pub(crate) fn run(args: TrustArgs) -> anyhow::Result<Exit> {
    let store =
        TrustStore::user().context("no state directory: neither XDG_STATE_HOME nor HOME is set")?;
    let project = match &args.project_dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("finding the current directory")?,
    };
    if args.revoke {
        let message = if store.revoke(&project)? {
            format!("{} is no longer trusted\n", project.display())
        } else {
            format!("{} was not trusted\n", project.display())
        };
        report::print(&message)?;
        return Ok(Exit::GoOn);
    }
    // Its plugins are compiled for this machine as they are loaded (each
    // with a progress line), once: the events after trusting load them.
    let mut options = args.cache.runtime_options();
    compile::ahead(&mut options);
    let mut builder = HookEngineBuilder::new();
    builder
        .project_dir(&project)
        .claude_settings(args.claude_settings)
        .runtime_options(options)
        .untrusted_projects(UntrustedProjects::TrustAll)
        .strict_project(true);
    // Built once: its hooks are what trusting would let run.
    let engine = builder.build()?;
    let Some(trust) = engine.project_trust() else {
        report::print(&format!(
            "{} has no hook files or settings of its own: nothing to trust\n",
            project.display()
        ))?;
        return Ok(Exit::GoOn);
    };
    if args.show {
        return show(&project, &trust.status);
    }
    if !trust.changes.is_empty() {
        let mut since = String::from(
            "Since you trusted it (the version you trusted answers until you accept this):\n",
        );
        for change in &trust.changes {
            since.push_str(&format!("  {change}\n"));
        }
        report::print(&since)?;
    }
    report::print(&what_would_run(&engine, &trust.files, &trust.unpinned))?;
    if args.yes && !args.accept_unpinned && !trust.unpinned.is_empty() {
        bail!(
            "its hooks run code trust cannot pin (above): add --accept-unpinned to trust it anyway"
        );
    }
    if !args.yes
        && !confirmed(
            "Trust them?",
            "no terminal to ask on: add --yes to trust without asking",
        )?
    {
        report::print("not trusted\n")?;
        return Ok(Exit::Failed);
    }
    store.trust_as_read(&project, &trust.files, &trust.read)?;
    report::print(&format!(
        "trusted {} ({} files); this version answers until you trust a change to them\n",
        project.display(),
        trust.files.len()
    ))?;
    prepare(project, &args)?;
    Ok(Exit::GoOn)
}

/// `trust --show`: whether `project` is trusted (exit 0) or not, and why.
fn show(project: &std::path::Path, status: &TrustStatus) -> anyhow::Result<Exit> {
    let said = match status {
        TrustStatus::Trusted => "trusted".to_owned(),
        TrustStatus::Never => "not trusted".to_owned(),
        TrustStatus::Changed(files) => format!(
            "not trusted as it is: changed since it was trusted (the trusted version answers): {}",
            files
                .iter()
                .map(|f| Shown(&f.to_string_lossy()).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    report::print(&format!("{}: {said}\n", project.display()))?;
    Ok(if status.is_trusted() {
        Exit::GoOn
    } else {
        Exit::Failed
    })
}

/// What `project`, just trusted, runs, on this machine and compiled: its
/// locked plugins pulled and every plugin compiled ahead, so that its first
/// event waits for no registry and no compiler.
fn prepare(project: PathBuf, args: &TrustArgs) -> anyhow::Result<()> {
    let files = HookFileArgs::for_project(project, args.claude_settings, args.cache.clone());
    if plugins::pull_for(files.clone())? != Exit::GoOn {
        eprintln!(
            "wasm-hooks: trusted, but what its locks pin could not all be pulled or compiled (above): the first event that needs one tries again, or run `wasm-hooks pull`"
        );
    }
    compile::engine_ahead(&files)
}

/// Each project hook (name, kind details, where), what trust cannot pin,
/// then every file trusting records.
fn what_would_run(engine: &HookEngine, files: &[PathBuf], unpinned: &[String]) -> String {
    let mut out = String::from("The project's hooks would run with your rights:\n");
    for hook in engine.hooks() {
        let HookSource::File { file, .. } = &hook.source else {
            continue;
        };
        if !files.contains(file) {
            continue;
        }
        let events: Vec<&str> = hook
            .events
            .events()
            .map(wasm_hooks::EventName::as_str)
            .collect();
        let _ = writeln!(
            out,
            "  {}  [{}]  from {}",
            hook.id,
            events.join(", "),
            hook.source
        );
        for line in hook.handler.details() {
            let _ = writeln!(out, "      {}", Shown(&line));
        }
    }
    if !unpinned.is_empty() {
        out.push_str(
            "Trust cannot pin what these run: it may change without untrusting the project:\n",
        );
        for what in unpinned {
            let _ = writeln!(out, "  {}", Shown(what));
        }
    }
    out.push_str("Trusting records these files as they are now:\n");
    for file in files {
        let _ = writeln!(out, "  {}", Shown(&file.to_string_lossy()));
    }
    out
}

/// Ask `question` on the terminal; refuse with `no_terminal` when there is
/// none to ask on.
pub(crate) fn confirmed(question: &str, no_terminal: &str) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        bail!("{no_terminal}");
    }
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

//! `wasm-hooks replay`: run a hook file over an agent's past sessions and
//! say, per hook, what it would have done, against what happened (the
//! tool ran, was denied, was asked), with examples. Only hooks that cannot
//! act run (wasm, inline; prompt hooks with `--prompts`), each as a dry
//! run; the engine is built once.

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use wasm_hooks::cli_support::Shown;
use wasm_hooks::observe::LogFormat;
use wasm_hooks::observe::ReplayOptions;
use wasm_hooks::observe::ReplayReport;
use wasm_hooks::observe::Replayer;

use super::stats::LookBack;
use super::{Exit, report};

/// Arguments of `wasm-hooks replay`.
#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// Session logs to read (files or folders); without any, the agents'
    /// own (see --agent) and wasm-hooks' audit log.
    paths: Vec<PathBuf>,

    /// Whose logs: `claude`, `codex`, `gemini`, `copilot` or `audit`
    /// (repeatable) [default: every one found; for PATHS, told from each
    /// path].
    #[arg(long, value_name = "AGENT")]
    agent: Vec<LogFormat>,

    /// Also run prompt hooks (each calls its model once per event).
    #[arg(long)]
    prompts: bool,

    #[command(flatten)]
    look_back: LookBack,
}

pub(crate) fn run(args: ReplayArgs) -> anyhow::Result<Exit> {
    let since = args.look_back.since()?;
    let engine = args.look_back.engine()?;
    let sources = sources(&args, &engine, since)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let mut replayer = Replayer::new(
        &engine,
        ReplayOptions {
            prompts: args.prompts,
        },
    );
    let progress = std::io::stderr().is_terminal().then(|| {
        indicatif::ProgressBar::new(sources.len() as u64).with_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} logs, {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        )
    });
    for (format, path) in &sources {
        // Each event replayed as it is read: a log of any size is held one
        // line at a time.
        let read = wasm_hooks::observe::read_session_log(*format, path, |event| {
            runtime.block_on(replayer.replay(&event));
        });
        replayer.read(read);
        if let Some(bar) = &progress {
            bar.inc(1);
            bar.set_message(format!("{} events", replayer.events()));
        }
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let found = replayer.finish();
    if let Some(path) = last_report() {
        // For `wasm-hooks ui`; a replay that cannot be kept is still shown.
        let kept = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, serde_json::to_vec(&found).unwrap_or_default()));
        if let Err(e) = kept {
            eprintln!(
                "wasm-hooks: could not keep the report in {}: {e}",
                path.display()
            );
        }
    }
    let text = if args.look_back.json {
        serde_json::to_string_pretty(&found)? + "\n"
    } else {
        table(&found)
    };
    report::print(&text)?;
    Ok(Exit::GoOn)
}

/// Where the last replay's report is kept, for `wasm-hooks ui`.
pub(crate) fn last_report() -> Option<PathBuf> {
    wasm_hooks::cli_support::xdg_dir("XDG_STATE_HOME", ".local/state")
        .map(|dir| dir.join("wasm-hooks").join("last-replay.json"))
}

/// The logs to read, each with its format: the paths given (a folder's
/// files of the format), else each agent's own logs under `$HOME` and
/// the engine's audit log.
fn sources(
    args: &ReplayArgs,
    engine: &wasm_hooks::HookEngine,
    since: Option<std::time::SystemTime>,
) -> anyhow::Result<Vec<(LogFormat, PathBuf)>> {
    let mut found = Vec::new();
    if !args.paths.is_empty() {
        for path in &args.paths {
            let format = match args.agent.as_slice() {
                [one] => *one,
                [] => LogFormat::of_path(path).with_context(|| {
                    format!("{}: whose session log is it? say --agent", path.display())
                })?,
                _ => anyhow::bail!("with PATHS, give at most one --agent"),
            };
            if path.is_dir() {
                found.extend(
                    format
                        .files_in(path, since)
                        .into_iter()
                        .map(|p| (format, p)),
                );
            } else {
                found.push((format, path.clone()));
            }
        }
        return Ok(found);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let formats = if args.agent.is_empty() {
        LogFormat::ALL.to_vec()
    } else {
        args.agent.clone()
    };
    for format in formats {
        if format == LogFormat::Audit {
            if let Some(log) = engine.audit_log() {
                found.push((format, log.path().to_owned()));
            }
        } else if let Some(home) = &home {
            found.extend(
                format
                    .default_files(home, since)
                    .into_iter()
                    .map(|p| (format, p)),
            );
        }
    }
    Ok(found)
}

/// The report as a table, one hook a line, then examples, skipped hooks
/// and the logs read.
fn table(found: &ReplayReport) -> String {
    let mut out = String::new();
    let unknown: u64 = found.sources.iter().map(|s| s.unknown).sum();
    let _ = writeln!(
        out,
        "{} events from {} session logs ({unknown} records not events, skipped)",
        found.events,
        found.sources.len()
    );
    let _ = writeln!(
        out,
        "{:<28} {:>6} {:>22} {:>6} {:>8} {:>7}",
        "hook", "seen", "deny (ran/denied/?)", "ask", "rewrite", "failed"
    );
    for (name, hook) in &found.hooks {
        let would = |word: &str| hook.would.get(word).copied().unwrap_or(0);
        let deny = |happened: &str| {
            hook.against
                .get("deny")
                .and_then(|h| h.get(happened))
                .copied()
                .unwrap_or(0)
        };
        let _ = writeln!(
            out,
            "{:<28} {:>6} {:>22} {:>6} {:>8} {:>7}",
            Shown(name).to_string(),
            hook.seen,
            format!(
                "{} ({}/{}/{})",
                would("deny"),
                deny("ran"),
                deny("denied"),
                deny("unknown") + deny("asked")
            ),
            would("ask"),
            would("modify") + would("modify_output"),
            would("failed")
        );
    }
    for (name, hook) in &found.hooks {
        for example in &hook.examples {
            let _ = writeln!(
                out,
                "  {name} would {}, and {}: {} `{}`{} ({})",
                example.would,
                example.happened.said(),
                example.event,
                example.about,
                example
                    .reason
                    .as_deref()
                    .map(|r| format!(": {}", Shown(r)))
                    .unwrap_or_default(),
                example.at
            );
        }
    }
    for skipped in &found.skipped {
        let _ = writeln!(
            out,
            "skipped: {} ({}): {}",
            skipped.hook, skipped.kind, skipped.why
        );
    }
    for source in &found.sources {
        if let Some(error) = &source.error {
            let _ = writeln!(out, "could not read {}: {error}", source.path);
        }
    }
    out
}

//! `wasm-hooks run`: build one event from flags, a file or stdin, dispatch
//! it through the hook files given, and report the outcome.

use std::time::Instant;

use anyhow::Context;
use clap::Args;

use super::audit::AuditLogArg;
use super::event_args::EventArgs;
use super::explain::{self, ProjectChoice};
use super::hook_files::HookFileArgs;
use super::{Exit, report};

/// Arguments of `wasm-hooks run`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    hook_files: HookFileArgs,

    #[command(flatten)]
    audit: AuditLogArg,

    #[command(flatten)]
    event: EventArgs,

    /// Print the outcome as JSON.
    #[arg(long)]
    json: bool,

    /// Also say why each hook ran or not (as `wasm-hooks explain`).
    #[arg(long)]
    explain: bool,
}

pub(crate) fn run(args: RunArgs) -> anyhow::Result<Exit> {
    let event = args.event.event()?;
    let mut builder = args.hook_files.builder(&[])?;
    args.audit.apply(&mut builder);
    let engine = builder.build()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    if args.explain {
        // The run's own report, then why each hook ran or not (with
        // `--json`, the explanation alone: it holds the outcome).
        let place = ProjectChoice::given(&args.hook_files)?;
        let started = Instant::now();
        let explanation = runtime.block_on(engine.explain(event));
        let elapsed = started.elapsed();
        let explained = explain::render(&place, &builder, &explanation, args.json)?;
        let text = if args.json {
            explained
        } else {
            format!(
                "{}\n{explained}",
                report::human(&explanation.outcome, elapsed)
            )
        };
        report::print(&text)?;
        runtime.block_on(engine.wait_for_background());
        return Ok(Exit::of_outcome(&explanation.outcome));
    }
    let started = Instant::now();
    let outcome = runtime.block_on(engine.dispatch(event));
    let elapsed = started.elapsed();
    let text = if args.json {
        report::json(&outcome, elapsed).context("writing the outcome as JSON")?
    } else {
        report::human(&outcome, elapsed)
    };
    report::print(&text)?;
    // Background hooks were not awaited for the outcome, but a CLI run must
    // not end them by exiting.
    runtime.block_on(engine.wait_for_background());
    Ok(Exit::of_outcome(&outcome))
}

//! `wasm-hooks bench`: what a hook costs, every kind measured side by side
//! in one run on the same event, with percentiles and ratios. The cases
//! live in `cases`; this file has the arguments and the report.

mod cases;
mod guests;
mod harness;
mod replay;
mod serve;
mod soak;
mod stats;
mod tiers;

use std::path::PathBuf;

use clap::Args;

use self::stats::Summary;
use super::{Exit, report};

/// Arguments of `wasm-hooks bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// The wasm plugin to measure: a component answering PreToolUse quickly
    /// (e.g. example-plugins/deny-dangerous-commands, built).
    #[arg(long, value_name = "WASM")]
    plugin: PathBuf,

    /// A plugin that spins forever on PreToolUse (tests/hostile/spin,
    /// built), to measure how close to its deadline it is stopped.
    #[arg(long, value_name = "WASM")]
    spin: Option<PathBuf>,

    /// A Python plugin folder, built (`wasm-hooks new --lang python`, then
    /// `wasm-hooks build`), to measure beside its python3 twin.
    #[arg(long, value_name = "DIR")]
    python_plugin: Option<PathBuf>,

    /// A JavaScript plugin folder, built, to measure beside its node twin.
    #[arg(long, value_name = "DIR")]
    js_plugin: Option<PathBuf>,

    /// Events per in-process case.
    #[arg(long, value_name = "N", default_value_t = 5000)]
    events: usize,

    /// Runs per case that starts a process per event.
    #[arg(long, value_name = "N", default_value_t = 200)]
    processes: usize,

    /// Runs per case that compiles a plugin (seconds each for a guest):
    /// the compilers' cases.
    #[arg(long, value_name = "N", default_value_t = 3)]
    compile_runs: usize,

    /// Instead of the cases: soak `serve` with this many events (e.g.
    /// 1000000) from --soak-clients concurrent keep-alive clients, on
    /// loopback; every answer is checked, and serve's memory sampled.
    #[arg(long, value_name = "EVENTS")]
    soak: Option<usize>,

    /// Concurrent clients of --soak.
    #[arg(long, value_name = "N", default_value_t = 64)]
    soak_clients: usize,

    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: BenchArgs) -> anyhow::Result<Exit> {
    let results = match args.soak {
        Some(events) => vec![cases::soak(&args, events)?],
        None => cases::run_all(&args)?,
    };
    if args.json {
        report::print(&(serde_json::to_string_pretty(&results)? + "\n"))?;
    } else {
        report::print(&render(&results))?;
    }
    Ok(Exit::GoOn)
}

/// The table: one line per case, with its ratio to the wasm hook's median.
fn render(results: &[Summary]) -> String {
    use std::fmt::Write as _;
    let wasm = results
        .iter()
        .find(|r| r.name == cases::WASM_CASE)
        .map(|r| r.p50_us);
    let mut out = format!(
        "{:<58} {:>7} {:>11} {:>11} {:>11}  {:>10}  {:>8}  {:>8}\n",
        "case", "n", "p50", "p99", "mean", "p50 / wasm", "faults", "peak MB"
    );
    for r in results {
        let ratio = match wasm {
            Some(w) if w > 0.0 => format!("{:.1}×", r.p50_us / w),
            _ => "-".into(),
        };
        let faults = r
            .faults_per_event
            .map_or_else(|| "-".to_owned(), |f| format!("{f:.1}"));
        let peak = r
            .peak_kb
            .map_or_else(|| "-".to_owned(), |kb| format!("{}", kb / 1024));
        let _ = writeln!(
            out,
            "{:<58} {:>7} {:>11} {:>11} {:>11}  {:>10}  {:>8}  {:>8}",
            r.name,
            r.n,
            stats::human(r.p50_us),
            stats::human(r.p99_us),
            stats::human(r.mean_us),
            ratio,
            faults,
            peak
        );
    }
    out
}

//! `wasm-hooks stats`: what each hook has done, from the audit log: how
//! often it ran, what it decided, what it would have denied as a dry run
//! (`enforcement: dryrun`), its failures, its p50 and p99 time, when it
//! last ran; and the hooks configured that never ran, so that a dead hook
//! shows.

use std::fmt::Write as _;
use std::fs::File;
use std::io::BufReader;
use std::time::{Duration, SystemTime};

use anyhow::{Context, bail};
use clap::Args;
use wasm_hooks::HookSpec;
use wasm_hooks::cli_support::Shown;
use wasm_hooks::observe::AuditStats;
use wasm_hooks::observe::HookStats;

use super::audit::AuditLogArg;
use super::hook_files::HookFileArgs;
use super::{Exit, report};

/// What `stats` and `replay` look back over, how they print, and the
/// hooks they weigh.
#[derive(Debug, Args)]
pub(crate) struct LookBack {
    /// Only what happened this recently: a duration (`7d`, `24h`, `30m`)
    /// or a time (`2026-12-01`, RFC 3339).
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub(crate) json: bool,

    #[command(flatten)]
    audit: AuditLogArg,

    #[command(flatten)]
    hook_files: HookFileArgs,
}

impl LookBack {
    /// `--since`, read.
    pub(crate) fn since(&self) -> anyhow::Result<Option<SystemTime>> {
        self.since.as_deref().map(since).transpose()
    }

    /// The engine of the hook files (its audit log too).
    pub(crate) fn engine(&self) -> anyhow::Result<wasm_hooks::HookEngine> {
        let mut builder = self.hook_files.builder(&[])?;
        self.audit.apply(&mut builder);
        Ok(builder.build()?)
    }
}

/// Arguments of `wasm-hooks stats`.
#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    #[command(flatten)]
    look_back: LookBack,
}

pub(crate) fn run(args: StatsArgs) -> anyhow::Result<Exit> {
    let since = args.look_back.since()?;
    let engine = args.look_back.engine()?;
    let Some(log) = engine.audit_log().map(|log| log.path().to_owned()) else {
        bail!(
            "no audit log to read: give --audit-log FILE, or set `audit_log` in the settings (docs/hook-files.md)"
        );
    };
    let file = File::open(&log).with_context(|| format!("opening {}", log.display()))?;
    let stats = AuditStats::read(BufReader::new(file), since)
        .with_context(|| format!("reading {}", log.display()))?;
    let configured = engine.hooks();
    let never = stats.never_fired(&configured);
    let text = if args.look_back.json {
        let never: Vec<_> = never
            .iter()
            .map(|hook| serde_json::json!({"hook": hook.id, "from": hook.source.to_string()}))
            .collect();
        let shown = serde_json::json!({"log": log, "stats": stats, "never_fired": never});
        serde_json::to_string_pretty(&shown)? + "\n"
    } else {
        table(&log, &stats, &never)
    };
    report::print(&text)?;
    Ok(Exit::GoOn)
}

/// `--since`: a duration back from now, or a time.
pub(crate) fn since(text: &str) -> anyhow::Result<SystemTime> {
    if let Ok(back) = humantime::parse_duration(text) {
        return Ok(SystemTime::now() - back);
    }
    let time = if text.len() == 10 {
        format!("{text}T00:00:00Z")
    } else {
        text.to_owned()
    };
    humantime::parse_rfc3339_weak(&time).with_context(|| {
        format!("--since `{text}`: expected a duration (`7d`, `24h`) or a time (`2026-12-01`, `2026-12-01T09:30:00Z`)")
    })
}

/// The stats as a table, one hook a line, then the hooks that never ran.
fn table(log: &std::path::Path, stats: &AuditStats, never: &[&HookSpec]) -> String {
    let mut out = String::new();
    let span = match (&stats.first, &stats.last) {
        (Some(first), Some(last)) => format!("{first} to {last}"),
        _ => "no records".to_owned(),
    };
    let _ = writeln!(out, "{}: {} events, {span}", log.display(), stats.events);
    let _ = writeln!(
        out,
        "{:<28} {:>6} {:>6} {:>6} {:>7} {:>10} {:>6} {:>8} {:>8}  last seen",
        "hook", "fired", "deny", "ask", "rewrite", "would-deny", "failed", "p50 ms", "p99 ms"
    );
    for (name, hook) in &stats.hooks {
        let label = match hook.enforcement.as_str() {
            "enforce" => name.clone(),
            other => format!("{name} ({other})"),
        };
        let _ = writeln!(
            out,
            "{:<28} {:>6} {:>6} {:>6} {:>7} {:>10} {:>6} {:>8} {:>8}  {}",
            Shown(&label).to_string(),
            hook.fired,
            count(&hook.decided, "deny"),
            count(&hook.decided, "ask"),
            count(&hook.decided, "modify") + count(&hook.decided, "modify_output"),
            count(&hook.would, "deny"),
            hook.failures,
            millis(hook, 0.5),
            millis(hook, 0.99),
            hook.last_seen.as_deref().unwrap_or("-")
        );
    }
    for hook in never {
        let _ = writeln!(
            out,
            "never fired: {} (from {}): check its event and matcher with `wasm-hooks explain`",
            hook.id, hook.source
        );
    }
    if stats.unreadable > 0 {
        let _ = writeln!(out, "{} lines were not records (skipped)", stats.unreadable);
    }
    out
}

fn count(counts: &std::collections::BTreeMap<String, u64>, word: &str) -> u64 {
    counts.get(word).copied().unwrap_or(0)
}

/// A quantile of the hook's time, in milliseconds, or `-`.
fn millis(hook: &HookStats, quantile: f64) -> String {
    hook.elapsed.quantile_us(quantile).map_or_else(
        || "-".to_owned(),
        |us| format!("{:.3}", Duration::from_micros(us).as_secs_f64() * 1000.0),
    )
}

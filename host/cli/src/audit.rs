//! `wasm-hooks audit verify|show`: check an audit log's hash chain, or
//! print it readably; and the `--audit-log` flag of the commands that
//! dispatch.

use std::fmt::Write as _;
use std::fs::File;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde_json::Value;
use wasm_hooks::{
    AuditLine, CheckedLine, EventName, HookEngineBuilder, Verification, escape_controls,
};

use super::{Exit, report};

/// `--audit-log`, for every command that dispatches events.
#[derive(Debug, Args)]
pub(crate) struct AuditLogArg {
    /// Append a tamper-evident record of every dispatch, hook result and
    /// failure to this file (JSON lines, hash-chained) [default: the
    /// settings file's `audit_log`, else none].
    #[arg(long, value_name = "FILE")]
    audit_log: Option<PathBuf>,
}

impl AuditLogArg {
    /// Tell the builder, when the flag was given.
    pub(crate) fn apply(&self, builder: &mut HookEngineBuilder) {
        if let Some(path) = &self.audit_log {
            builder.audit_log(path);
        }
    }
}

/// Arguments of `wasm-hooks audit`.
#[derive(Debug, Args)]
pub(crate) struct AuditArgs {
    #[command(subcommand)]
    command: AuditCommand,
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// Check the hash chain; name the first broken line (exit 1) or count
    /// the intact records (exit 0).
    Verify {
        /// The audit log.
        file: PathBuf,
    },
    /// Print the records readably, one line each.
    Show {
        /// The audit log.
        file: PathBuf,
        /// Only this session's records.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Only this event's records (canonical name or alias).
        #[arg(long, value_name = "NAME")]
        event: Option<String>,
    },
}

pub(crate) fn run(args: AuditArgs) -> anyhow::Result<Exit> {
    match args.command {
        AuditCommand::Verify { file } => {
            let log = File::open(&file).with_context(|| format!("opening {}", file.display()))?;
            let checked = wasm_hooks::verify_audit_log(log)
                .with_context(|| format!("reading {}", file.display()))?;
            let (text, exit) = match checked {
                Verification::Intact { lines } => (
                    format!("{}: intact, {lines} records\n", file.display()),
                    Exit::GoOn,
                ),
                Verification::Broken { line, reason } => (
                    format!("{}: broken at line {line}: {reason}\n", file.display()),
                    Exit::Failed,
                ),
            };
            report::print(&text)?;
            Ok(exit)
        }
        AuditCommand::Show {
            file,
            session,
            event,
        } => {
            let event = event
                .map(|e| EventName::parse(&e))
                .transpose()
                .context("--event")?;
            let log = File::open(&file).with_context(|| format!("opening {}", file.display()))?;
            let lines = wasm_hooks::read_checked_audit_log(log)
                .with_context(|| format!("reading {}", file.display()))?;
            let wanted = |l: &AuditLine| {
                session.as_ref().is_none_or(|s| &l.session == s)
                    && event.is_none_or(|e| l.event.as_deref() == Some(e.as_str()))
            };
            let mut text = String::new();
            let mut doubtful = 0;
            for line in &lines {
                // A line the chain cannot vouch for is always shown.
                let vouched = line.problem.is_none() && line.after_break.is_none();
                if vouched && !line.record.as_ref().is_some_and(wanted) {
                    continue;
                }
                let _ = writeln!(text, "{}", checked(line));
                doubtful += usize::from(!vouched);
            }
            if doubtful > 0 {
                let _ = writeln!(
                    text,
                    "{doubtful} line{} the hash chain cannot vouch for (marked !! and ??); `audit verify` names the first break",
                    if doubtful == 1 { "" } else { "s" }
                );
            }
            report::print(&text)?;
            Ok(if doubtful > 0 {
                Exit::Failed
            } else {
                Exit::GoOn
            })
        }
    }
}

/// A line as `audit show` prints it: readable when intact; marked `!!`
/// with its problem when broken, `??` when it follows a break.
fn checked(line: &CheckedLine) -> String {
    let shown = line.record.as_ref().map_or_else(
        || "(not a record)".to_owned(),
        |record| escape_controls(&readable(record)).into_owned(),
    );
    match (&line.problem, line.after_break) {
        (Some(problem), _) => format!("!! line {}: {problem}: {shown}", line.number),
        (None, Some(at)) => format!("?? {shown} (after the break at line {at}: not vouched for)"),
        (None, None) => shown,
    }
}

/// `#seq time session event kind [hook]: summary`.
fn readable(line: &AuditLine) -> String {
    let mut text = format!(
        "#{} {} {} {} {}",
        line.seq,
        line.time,
        if line.session.is_empty() {
            "-"
        } else {
            &line.session
        },
        line.event.as_deref().unwrap_or("-"),
        line.kind
    );
    if let Some(hook) = &line.hook {
        let _ = write!(text, " [{hook}]");
    }
    let summary = summary(&line.kind, &line.data);
    if !summary.is_empty() {
        let _ = write!(text, ": {summary}");
    }
    text
}

/// The gist of a record's data, by kind.
fn summary(kind: &str, data: &Value) -> String {
    let s = |v: &Value| {
        v.as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| v.to_string())
    };
    let decision = |v: &Value| {
        let word = s(&v["decision"]);
        match v.get("reason").filter(|r| !r.is_null()) {
            Some(reason) => format!("{word} ({})", s(reason)),
            None => word,
        }
    };
    match kind {
        "dispatch" => {
            let record = &data["record"];
            let mut text = decision(&data["verdict"]);
            if let Some(tool) = record.get("tool_name") {
                let _ = write!(text, " tool={}", s(tool));
            }
            if let Some(input) = record.get("tool_input") {
                let _ = write!(text, " input={input}");
            }
            text
        }
        "hook_result" => decision(&data["status"]["answered"]),
        "hook_failure" => {
            let failed = &data["status"]["failed"];
            format!(
                "{} (on_failure = {})",
                s(&failed["error"]["message"]),
                s(&failed["policy"])
            )
        }
        "injection" | "injection_refused" => format!(
            "{} bytes as {}: {}",
            data["report"]["bytes"],
            s(&data["role"]),
            s(&data["text"]).lines().next().unwrap_or_default()
        ),
        "approval_request" => s(&data["prompt"]),
        "approval_decision" => format!("{} by {}", s(&data["choice"]), s(&data["decided_by"])),
        _ => data.to_string(),
    }
}

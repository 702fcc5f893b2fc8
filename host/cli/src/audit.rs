//! `wasm-hooks audit verify|show|key`: check an audit log's hash chain and
//! head, print it readably, or make a key to seal it with; and the
//! `--audit-log` and `--audit-key` flags of the commands that dispatch.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};
use serde_json::Value;
use wasm_hooks::cli_support::AuditLine;
use wasm_hooks::cli_support::CheckedLine;
use wasm_hooks::cli_support::escape_controls;
use wasm_hooks::{AuditKey, EventName, HookEngineBuilder, Verification};

use super::{Exit, report};

/// `--audit-log`, for every command that dispatches events.
#[derive(Debug, Clone, Args)]
pub(crate) struct AuditLogArg {
    /// Append a tamper-evident record of every dispatch, hook result and
    /// failure to this file (JSON lines, hash-chained) [default: the
    /// settings file's `audit_log`, else none].
    #[arg(long, value_name = "FILE")]
    audit_log: Option<PathBuf>,

    /// Seal the audit log with the key in this file (`wasm-hooks audit key
    /// FILE` makes one) [default: the settings file's `audit_key`, else
    /// none].
    #[arg(long, value_name = "FILE")]
    audit_key: Option<PathBuf>,
}

impl AuditLogArg {
    /// Tell the builder, for each flag given.
    pub(crate) fn apply(&self, builder: &mut HookEngineBuilder) {
        if let Some(path) = &self.audit_log {
            builder.audit_log(path);
        }
        if let Some(path) = &self.audit_key {
            builder.audit_key(path);
        }
    }
}

/// `--audit-key` of `audit verify` and `audit show`.
#[derive(Debug, Args)]
struct KeyArg {
    /// The key the log was sealed with, to check its seals.
    #[arg(long, value_name = "FILE")]
    audit_key: Option<PathBuf>,
}

impl KeyArg {
    fn load(&self) -> anyhow::Result<Option<AuditKey>> {
        self.audit_key
            .as_deref()
            .map(AuditKey::load)
            .transpose()
            .context("--audit-key")
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
    /// Check the hash chain and the head record; name the first broken
    /// line (exit 1) or count the intact records (exit 0).
    Verify {
        /// The audit log.
        file: PathBuf,
        #[command(flatten)]
        key: KeyArg,
    },
    /// Print the records readably, one line each, marking what the chain
    /// cannot vouch for.
    Show {
        /// The audit log.
        file: PathBuf,
        #[command(flatten)]
        key: KeyArg,
        /// Only this session's records.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Only this event's records (canonical name or alias).
        #[arg(long, value_name = "NAME")]
        event: Option<String>,
    },
    /// Make a new random key in FILE (mode 0600; never over an existing
    /// file), to seal logs with (`audit_key:` in the user's config, or
    /// `--audit-key`).
    Key {
        /// Where to write the key; keep it outside the log's directory.
        file: PathBuf,
    },
}

pub(crate) fn run(args: AuditArgs) -> anyhow::Result<Exit> {
    match args.command {
        AuditCommand::Verify { file, key } => {
            let checked = wasm_hooks::verify_audit_log(&file, key.load()?.as_ref())
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
        AuditCommand::Key { file } => {
            // `~/.config/wasm-hooks/` may not exist yet: made, private.
            if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
                use std::os::unix::fs::DirBuilderExt as _;
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            let key = AuditKey::generate(&file)
                .with_context(|| format!("writing a key to {}", file.display()))?;
            report::print(&format!(
                "{}: a new audit key ({}); seal logs with it by `audit_key: {}` in the user's config\n",
                file.display(),
                key.id(),
                file.display()
            ))?;
            Ok(Exit::GoOn)
        }
        AuditCommand::Show {
            file,
            key,
            session,
            event,
        } => {
            let event = event
                .map(|e| EventName::parse(&e))
                .transpose()
                .context("--event")?;
            let lines = read_checked(&file, key.load()?.as_ref())?;
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

fn read_checked(file: &Path, key: Option<&AuditKey>) -> anyhow::Result<Vec<CheckedLine>> {
    wasm_hooks::cli_support::read_checked_audit_log(file, key)
        .with_context(|| format!("reading {}", file.display()))
}

/// A line as `audit show` prints it: readable when intact; marked `!!`
/// with its problem when broken (a problem with the end of the log has no
/// record), `??` when it follows a break.
fn checked(line: &CheckedLine) -> String {
    let shown = line
        .record
        .as_ref()
        .map(|record| escape_controls(&readable(record)).into_owned());
    match (&line.problem, shown, line.after_break) {
        (Some(problem), None, _) => format!("!! line {}: {problem}", line.number),
        (Some(problem), Some(shown), _) => format!("!! line {}: {problem}: {shown}", line.number),
        (None, shown, Some(at)) => format!(
            "?? {} (after the break at line {at}: not vouched for)",
            shown.unwrap_or_default()
        ),
        (None, shown, None) => shown.unwrap_or_default(),
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

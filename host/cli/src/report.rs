//! Printing an outcome: for a person (decision, reason, which hook decided,
//! each hook's result and time) or as JSON.

use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Duration;

use serde::Serialize;
use wasm_hooks::cli_support::Shown;
use wasm_hooks::{Outcome, TraceStatus};

/// The outcome for a person.
pub(crate) fn human(outcome: &Outcome, elapsed: Duration) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "decision: {}", outcome.verdict.word());
    if let Some(reason) = outcome.verdict.reason() {
        let _ = writeln!(out, "reason:   {}", Shown(reason));
    }
    if let Some(hook) = &outcome.decided_by {
        let _ = writeln!(out, "decided by: {hook}");
    }
    if let Some(input) = &outcome.updated_input {
        let _ = writeln!(out, "updated input: {}", Shown(&input.to_string()));
    }
    if let Some(output) = &outcome.updated_output {
        let _ = writeln!(out, "updated output: {}", Shown(&output.to_string()));
    }
    for c in &outcome.contexts {
        let _ = writeln!(out, "context ({}): {}", c.hook, Shown(&c.value.text));
    }
    for m in &outcome.user_messages {
        let _ = writeln!(
            out,
            "message ({}, {:?}): {}",
            m.hook,
            m.value.severity,
            Shown(&m.value.text)
        );
    }
    for m in &outcome.system_messages {
        let _ = writeln!(out, "warning ({}): {}", m.hook, Shown(&m.value));
    }
    if let Some(stop) = &outcome.stop {
        let _ = writeln!(out, "stop ({}): {}", stop.hook, Shown(&stop.value));
    }
    let n = outcome.trace.len();
    let _ = writeln!(
        out,
        "{n} hook{} ran in {}",
        if n == 1 { "" } else { "s" },
        millis(elapsed)
    );
    for entry in &outcome.trace {
        let status = match &entry.status {
            TraceStatus::Answered(result) => result.decision.word().to_owned(),
            TraceStatus::Failed { error, .. } => format!("failed: {}", Shown(&error.to_string())),
            TraceStatus::Detached => "started in the background".to_owned(),
        } + entry.enforcement.note();
        let _ = writeln!(
            out,
            "  {:<28} {:>10}  {status}",
            entry.hook,
            millis(entry.elapsed)
        );
        let output = &entry.output;
        for line in output
            .logs
            .iter()
            .map(String::as_str)
            .chain(output.stderr.lines())
        {
            let _ = writeln!(
                out,
                "      | {}",
                wasm_hooks::cli_support::escape_controls(line)
            );
        }
        if output.truncated {
            let _ = writeln!(out, "      | (output cut at the hook's output cap)");
        }
    }
    out
}

fn millis(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// The outcome as one JSON document, with the total time.
pub(crate) fn json(outcome: &Outcome, elapsed: Duration) -> serde_json::Result<String> {
    #[derive(Serialize)]
    struct Report<'a> {
        #[serde(flatten)]
        outcome: &'a Outcome,
        elapsed_us: u128,
    }
    let report = Report {
        outcome,
        elapsed_us: elapsed.as_micros(),
    };
    let mut text = serde_json::to_string_pretty(&report)?;
    text.push('\n');
    Ok(text)
}

/// Print to stdout; a closed pipe (`| head`) is not an error.
pub(crate) fn print(text: &str) -> std::io::Result<()> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

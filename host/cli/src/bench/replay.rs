//! The replay case: an audit log of `n` Bash calls replayed through a
//! wasm guard and an inline rule, reading and deciding on one core, as
//! `wasm-hooks replay` does (the floor: 20,000 events/s).

use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use serde_json::json;
use wasm_hooks::observe::LogFormat;
use wasm_hooks::observe::ReplayOptions;
use wasm_hooks::observe::Replayer;

use super::harness::{engine, hook_file};
use super::stats::Summary;

/// Replay `n` events of an audit log written for the run, through the
/// wasm plugin `plugin` and an inline rule; wall time per event.
pub(super) fn case(dir: &Path, plugin: &Path, cache: &Path, n: usize) -> anyhow::Result<Summary> {
    let file = hook_file(dir, "replayed", json!({"type": "wasm", "plugin": plugin}))?;
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file)?)?;
    let inline = json!({"type": "inline", "name": "no-env", "rules": [{"field": "tool_input.command",
        "operator": "contains", "value": ".env", "action": "deny", "reason": "no .env"}]});
    doc["hooks"]["PreToolUse"][0]["hooks"]
        .as_array_mut()
        .context("the bench's hook file")?
        .push(inline);
    std::fs::write(&file, doc.to_string())?;
    let log = dir.join("replayed-audit.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&log)?);
    for i in 0..n {
        let command = if i % 10 == 0 { "rm -rf /" } else { "ls -la" };
        let record = json!({"seq": i + 1, "time": "2026-12-07T10:00:00.000Z", "session": "s",
            "kind": "dispatch", "event": "PreToolUse", "hook": null, "prev": "x",
            "data": {"record": {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/p",
                "tool_name": "Bash", "tool_input": {"command": command}},
                "verdict": {"decision": "proceed"}}});
        writeln!(out, "{record}")?;
    }
    out.flush()?;
    drop(out);
    let engine = engine(&file, cache)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut replayer = Replayer::new(&engine, ReplayOptions::default());
    let started = Instant::now();
    let read = wasm_hooks::observe::read_session_log(LogFormat::Audit, &log, |event| {
        rt.block_on(replayer.replay(&event));
    });
    let elapsed = started.elapsed();
    anyhow::ensure!(
        read.events == n as u64 && replayer.events() == n as u64,
        "replayed {} of {n} events",
        replayer.events()
    );
    let per_event = elapsed / u32::try_from(n.max(1)).unwrap_or(u32::MAX);
    Ok(Summary::rate(
        "replay: audit log through a wasm guard + an inline rule, one core (wall / event)",
        n,
        per_event,
    ))
}

//! The soak test: 100,000 events across 16 concurrent tasks on one engine,
//! mixing normal and hostile plugins. Every event must get the answer its
//! plugin deserves, and the host's memory must stay within a bound once
//! warm (no leak per event, per failure or per trap). Alone in its test
//! binary, so no other test's memory is counted.

use crate::support;

use serde_json::json;
use support::plugin;
use wasm_hooks::{Event, HookEngine, Verdict};

const EVENTS: usize = 100_000;
const TASKS: usize = 16;
/// Resident memory may grow this much between the warm-up and the end.
const GROWTH_BOUND_MB: u64 = 64;

/// Which hook an event reaches (by its tool name), and the verdict it must
/// get.
const KINDS: [(&str, &str, Expect); 10] = [
    (
        "Bash",
        "rm -rf /",
        Expect::Deny("dangerous pattern `rm -rf /`"),
    ),
    ("Bash", "ls", Expect::Proceed),
    ("Spin", "", Expect::Deny("ran out of fuel")),
    ("Bash", "cargo test", Expect::Proceed),
    ("Panic", "", Expect::Deny("boom from the panic plugin")),
    (
        "Bash",
        "mkfs /dev/sda",
        Expect::Deny("dangerous pattern `mkfs*`"),
    ),
    ("Grow", "", Expect::Deny("exceeded its memory cap")),
    ("Bash", "echo hi", Expect::Proceed),
    (
        "Trap",
        "",
        Expect::Deny("`unreachable` instruction executed"),
    ),
    (
        "Huge",
        "",
        Expect::Deny("over its limit (max_result_kb = 64)"),
    ),
];

#[derive(Debug, Clone, Copy)]
enum Expect {
    Proceed,
    Deny(&'static str),
}

fn resident_mb() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096 / (1 << 20)
}

fn engine() -> (HookEngine, support::HookFile) {
    let hostile = |matcher: &str, package: &str, extra: serde_json::Value| {
        let mut hook = json!({"type": "wasm", "plugin": plugin(package), "on_failure": "block"});
        if let (Some(h), Some(x)) = (hook.as_object_mut(), extra.as_object()) {
            h.extend(x.clone());
        }
        json!({"matcher": matcher, "hooks": [hook]})
    };
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "wasm", "plugin": plugin("deny-dangerous-commands")}]},
        hostile("Spin", "hostile-spin", json!({"limits": {"fuel": 1_000_000}})),
        hostile("Panic", "hostile-panic", json!({})),
        hostile("Grow", "hostile-grow-memory", json!({"limits": {"memory_mb": 8}})),
        hostile("Trap", "hostile-trap", json!({})),
        hostile("Huge", "hostile-bad-answer", json!({
            "config": {"kind": "huge", "bytes": 100_000}, "limits": {"max_result_kb": 64}})),
    ]}}));
    let engine = HookEngine::builder()
        .hook_file(&file.path)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    (engine, file)
}

/// Run events `range` on `TASKS` tasks; panics on any wrong answer.
async fn run(engine: &HookEngine, range: std::ops::Range<usize>) {
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let engine = engine.clone();
            let range = range.clone();
            tokio::spawn(async move {
                let mut answered = 0;
                for i in range.skip(t).step_by(TASKS) {
                    let (tool, command, expect) = KINDS[i % KINDS.len()];
                    let event = Event::pre_tool_use(tool, json!({ "command": command }));
                    let outcome = engine.dispatch(&event).await;
                    match (expect, &outcome.verdict) {
                        (Expect::Proceed, Verdict::Proceed) => {}
                        (Expect::Deny(text), Verdict::Deny { reason }) if reason.contains(text) => {
                        }
                        (_, got) => panic!("event {i} ({tool}): expected {expect:?}, got {got:?}"),
                    }
                    answered += 1;
                }
                answered
            })
        })
        .collect();
    let mut answered = 0;
    for task in tasks {
        answered += task.await.unwrap();
    }
    assert_eq!(answered, range.len(), "every event answered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_mixed_events_keep_memory_flat() {
    let (engine, _file) = engine();
    let warm_up = EVENTS / 10;
    run(&engine, 0..warm_up).await;
    let warm = resident_mb();
    run(&engine, warm_up..EVENTS).await;
    let end = resident_mb();
    assert!(
        end <= warm + GROWTH_BOUND_MB,
        "resident memory grew from {warm} MiB to {end} MiB over {} events",
        EVENTS - warm_up
    );
}

//! The built-in hook templates in `hook-templates/` (shown in the README)
//! load, and do what they say with real tools: an audit line per tool call,
//! `git add` and formatting after writes, a notification on Stop.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use wasm_hooks::{Event, HookEngine, Outcome, TraceStatus};

fn template(name: &str) -> PathBuf {
    support::workspace_root().join("hook-templates").join(name)
}

fn engine(name: &str) -> HookEngine {
    HookEngine::builder()
        .hook_file(template(name))
        .build()
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn in_project(event: Event, dir: &Path) -> Event {
    event.with("cwd", dir.display().to_string())
}

fn assert_answered(outcome: &Outcome) {
    assert_eq!(outcome.trace.len(), 1);
    assert!(
        matches!(
            outcome.trace[0].status,
            TraceStatus::Answered(_) | TraceStatus::Detached
        ),
        "{:?}",
        outcome.trace[0].status
    );
}

#[tokio::test]
async fn audit_log_appends_one_json_line_per_tool_call() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine("audit-log.json");
    let write = Event::post_tool_use("Write", json!({"file_path": "a.txt"}), json!({"ok": true}));
    assert_answered(&engine.dispatch(in_project(write, dir.path())).await);
    let failed = Event::post_tool_use_failure("Bash", json!({"command": "false"}), "exit 1");
    assert_answered(&engine.dispatch(in_project(failed, dir.path())).await);
    let log = std::fs::read_to_string(dir.path().join(".wasm-hooks/audit.jsonl")).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["tool_name"], "Write");
    assert_eq!(lines[1]["hook_event_name"], "PostToolUseFailure");
}

#[tokio::test]
async fn git_add_after_write_stages_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    std::fs::write(dir.path().join("new file.txt"), "hello").unwrap();
    let write = Event::post_tool_use("Write", json!({"file_path": "new file.txt"}), json!({}));
    assert_answered(
        &engine("git-add-after-write.json")
            .dispatch(in_project(write, dir.path()))
            .await,
    );
    assert_eq!(git(&["diff", "--cached", "--name-only"]), "new file.txt\n");
}

#[tokio::test]
async fn format_after_write_formats_rust_with_rustfmt() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lib.rs");
    std::fs::write(&file, "fn  main( ){let x=1;}\n").unwrap();
    let write = Event::post_tool_use("Write", json!({"file_path": file}), json!({}));
    assert_answered(
        &engine("format-after-write.json")
            .dispatch(in_project(write, dir.path()))
            .await,
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "fn main() {\n    let x = 1;\n}\n"
    );
    // Files without a formatter are left alone, and the hook still succeeds.
    let other = Event::post_tool_use("Edit", json!({"file_path": "notes.txt"}), json!({}));
    let outcome = engine("format-after-write.json")
        .dispatch(in_project(other, dir.path()))
        .await;
    assert!(matches!(outcome.trace[0].status, TraceStatus::Answered(_)));
}

#[tokio::test]
async fn notify_on_stop_runs_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine("notify-on-stop.json");
    let outcome = engine
        .dispatch(in_project(Event::stop(false), dir.path()))
        .await;
    assert!(matches!(outcome.trace[0].status, TraceStatus::Detached));
    engine.wait_for_background().await;
}

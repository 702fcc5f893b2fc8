//! `wasm-hooks doctor` (#45): one line per finding, each problem with the
//! command that mends it, exit 1 when a guard could fail open.

use std::path::Path;

use assert_cmd::Command;
use serde_json::{Value, json};

/// `wasm-hooks doctor` in `project`, as a person whose home is `home`:
/// its report and exit code.
fn doctor(home: &Path, project: &Path, args: &[&str]) -> (String, i32) {
    let out = wasm_hooks(home, project, &[&["doctor"], args].concat())
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap(),
    )
}

fn wasm_hooks(home: &Path, project: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::cargo_bin("wasm-hooks").unwrap();
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("PATH", "/usr/bin:/bin")
        .env("WASM_HOOKS_DAEMON", "off")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("CLAUDE_PROJECT_DIR")
        .current_dir(project)
        .args(args);
    cmd
}

#[test]
fn doctor_names_each_entry_that_fails_open_or_is_missing_with_its_fix_and_exits_1() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let (home, project) = (home.path(), project.path());
    wasm_hooks(home, project, &["install", "claude"])
        .assert()
        .success();
    let (said, code) = doctor(home, project, &[]);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("a failing or missing wasm-hooks blocks the action"),
        "{said}"
    );
    assert!(said.contains("0 problems"), "{said}");
    // An entry that no longer fails closed, an event dropped.
    let settings = project.join(".claude/settings.local.json");
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    for group in doc["hooks"]["PreToolUse"].as_array_mut().unwrap() {
        for hook in group["hooks"].as_array_mut().unwrap() {
            hook.as_object_mut().unwrap().remove("onFailure");
        }
    }
    doc["hooks"].as_object_mut().unwrap().remove("Stop");
    std::fs::write(&settings, doc.to_string()).unwrap();
    let (said, code) = doctor(home, project, &[]);
    assert_eq!(code, 1, "{said}");
    let problems: Vec<&str> = said.lines().filter(|l| l.starts_with("problem")).collect();
    assert!(
        problems
            .iter()
            .any(|l| l.contains("lets these through: PreToolUse")
                && l.contains("(fix: `wasm-hooks install claude`)")),
        "{said}"
    );
    assert!(
        problems
            .iter()
            .any(|l| l.contains("not on these events of the agent: Stop")),
        "{said}"
    );
    // A hook file that does not load is a guard that does not answer.
    std::fs::create_dir_all(project.join(".wasm-hooks")).unwrap();
    std::fs::write(
        project.join(".wasm-hooks/hooks.json"),
        r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "wasm"}]}]}}"#,
    )
    .unwrap();
    let (said, _) = doctor(home, project, &[]);
    assert!(
        said.lines()
            .any(|l| l.starts_with("problem") && l.contains("(fix: `wasm-hooks validate`)")),
        "{said}"
    );
}

#[test]
fn doctor_names_a_hook_that_never_fired_in_the_audit_log() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let (home, project) = (home.path(), project.path());
    let hooks = project.join("hooks.json");
    std::fs::write(
        &hooks,
        json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "inline", "name": "fires", "rules": [
                {"field": "tool_input.command", "operator": "contains", "value": "x", "action": "deny", "reason": "x"}]}]},
            {"matcher": "Nothing", "hooks": [{"type": "inline", "name": "silent", "rules": [
                {"field": "tool_input.x", "operator": "exists", "action": "deny", "reason": "x"}]}]}]}})
        .to_string(),
    )
    .unwrap();
    let (hooks, log) = (hooks.to_str().unwrap(), project.join("audit.jsonl"));
    let log = log.to_str().unwrap();
    let out = wasm_hooks(
        home,
        project,
        &[
            "run",
            "--config",
            hooks,
            "--audit-log",
            log,
            "--event",
            "PreToolUse",
            "--tool",
            "Bash",
            "--input",
            r#"{"command": "ls"}"#,
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let (said, code) = doctor(home, project, &["--config", hooks, "--audit-log", log]);
    assert_eq!(
        code, 0,
        "a silent hook is a note, not a guard failing open: {said}"
    );
    assert!(said.contains("hook silent: never fired"), "{said}");
    assert!(!said.contains("hook fires: never fired"), "{said}");
}

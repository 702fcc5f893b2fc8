//! The audit log from the command line: `run --audit-log`, the settings
//! file's `audit_log`, redaction of secrets from the environment, and
//! `audit verify` / `audit show`.

use crate::support;

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::json;

fn wasm_hooks() -> Command {
    let mut cmd = Command::cargo_bin("wasm-hooks").expect("the wasm-hooks binary is built");
    // No user settings from the machine running the tests.
    cmd.env("XDG_CONFIG_HOME", "/nonexistent");
    cmd
}

/// A project whose hook file denies `rm` and passes everything else.
fn project() -> support::HookFile {
    let file = support::write_hook_file(
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "inline", "name": "no-rm", "rules": [
            {"field": "tool_input.command", "operator": "starts_with", "value": "rm",
             "action": "deny", "reason": "no rm"}]}]}]}}),
    );
    std::fs::create_dir_all(file.dir.path().join(".wasm-hooks")).unwrap();
    std::fs::rename(&file.path, file.dir.path().join(".wasm-hooks/hooks.json")).unwrap();
    file
}

fn run_bash(dir: &Path, session: &str, command: &str, extra: &[&str]) {
    wasm_hooks()
        .current_dir(dir)
        .args([
            "run",
            "--event",
            "PreToolUse",
            "--tool",
            "Bash",
            "--session-id",
            session,
        ])
        .arg("--input")
        .arg(json!({ "command": command }).to_string())
        .args(extra)
        .env("DEPLOY_TOKEN", "tok-0123456789abcdef")
        .assert()
        .code(if command.starts_with("rm") { 2 } else { 0 });
}

#[test]
fn run_appends_a_verifiable_log_that_show_filters() {
    let project = project();
    let dir = project.dir.path();
    let log = dir.join("audit.jsonl");
    let flag = ["--audit-log", log.to_str().unwrap()];
    run_bash(dir, "s1", "ls", &flag);
    run_bash(dir, "s2", "rm -rf build", &flag);
    run_bash(dir, "s1", "echo tok-0123456789abcdef", &flag);

    wasm_hooks()
        .args(["audit", "verify"])
        .arg(&log)
        .assert()
        .success()
        .stdout(predicate::str::ends_with(": intact, 6 records\n"));

    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("tok-0123456789abcdef"), "{text}");
    assert!(text.contains("echo [REDACTED]"), "{text}");

    let shown = wasm_hooks()
        .args(["audit", "show"])
        .arg(&log)
        .args(["--session", "s2", "--event", "tool:pre"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let shown = String::from_utf8(shown).unwrap();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 2, "{shown}");
    assert!(lines[0].starts_with("#3 "), "{shown}");
    assert!(
        lines[0].ends_with(r#"s2 PreToolUse dispatch [no-rm]: deny (no rm) tool=Bash input={"command":"rm -rf build"}"#),
        "{shown}"
    );
    assert!(
        lines[1].ends_with("s2 PreToolUse hook_result [no-rm]: deny (no rm)"),
        "{shown}"
    );
}

#[test]
fn verify_names_the_broken_line_and_fails() {
    let project = project();
    let dir = project.dir.path();
    let log = dir.join("audit.jsonl");
    for command in ["ls", "pwd"] {
        run_bash(dir, "s", command, &["--audit-log", log.to_str().unwrap()]);
    }
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(
        &log,
        text.replacen(r#""command":"pwd""#, r#""command":"pwd ""#, 1),
    )
    .unwrap();
    wasm_hooks()
        .args(["audit", "verify"])
        .arg(&log)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "broken at line 3: changed after it was written",
        ));
}

#[test]
fn the_settings_file_turns_the_log_on_and_names_more_secrets() {
    let project = project();
    let dir = project.dir.path();
    std::fs::write(
        dir.join(".wasm-hooks/config.yaml"),
        "audit_log: logs/audit.jsonl\nsecret_env: [RELEASE_PHRASE]\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    let state = tempfile::tempdir().unwrap();
    let run = || {
        wasm_hooks()
            .current_dir(dir)
            .env("XDG_STATE_HOME", state.path())
            .args(["run", "--event", "PreToolUse", "--tool", "Bash", "--input"])
            .arg(json!({"command": "sign --phrase open-sesame-42"}).to_string())
            .env("RELEASE_PHRASE", "open-sesame-42")
            .assert()
            .success();
    };
    run();
    assert!(
        !dir.join("logs/audit.jsonl").exists(),
        "an untrusted project's settings are left out"
    );
    wasm_hooks()
        .current_dir(dir)
        .env("XDG_STATE_HOME", state.path())
        .args(["trust", "--yes"])
        .assert()
        .success();
    run();
    let text = std::fs::read_to_string(dir.join("logs/audit.jsonl")).unwrap();
    assert!(text.contains("sign --phrase [REDACTED]"), "{text}");
}

#[test]
fn a_bad_settings_file_is_an_error_naming_it() {
    let project = project();
    let dir = project.dir.path();
    std::fs::write(dir.join(".wasm-hooks/config.yaml"), "audit: x\n").unwrap();
    wasm_hooks()
        .current_dir(dir)
        .args(["run", "--event", "Stop"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "config.yaml:1:1: unknown field `audit`",
        ));
}

#[test]
fn m8_audit_show_marks_what_the_chain_cannot_vouch_for_and_fails() {
    let project = project();
    let dir = project.dir.path();
    let log = dir.join("audit.jsonl");
    for command in ["ls", "pwd", "whoami"] {
        run_bash(dir, "s", command, &["--audit-log", log.to_str().unwrap()]);
    }
    wasm_hooks()
        .args(["audit", "show"])
        .arg(&log)
        .assert()
        .success()
        .stdout(predicate::str::contains("!!").not());
    let intact = std::fs::read_to_string(&log).unwrap();

    // A forged line appended at the end: shown, marked, and the exit says so.
    let last = intact.lines().last().unwrap().to_owned();
    std::fs::write(
        &log,
        format!("{intact}{}\n", last.replace("whoami", "rm -rf /")),
    )
    .unwrap();
    wasm_hooks()
        .args(["audit", "show"])
        .arg(&log)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("!! line").and(predicate::str::contains("cannot vouch")));

    // An edited line is shown (not dropped), and every line after it is
    // marked as no longer vouched for.
    std::fs::write(
        &log,
        intact.replacen(r#""command":"pwd""#, r#""command":"pwd ""#, 1),
    )
    .unwrap();
    let shown = wasm_hooks()
        .args(["audit", "show"])
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(shown.status.code(), Some(1));
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("changed after it was written"), "{shown}");
    assert!(
        shown.contains("pwd "),
        "the edited record is shown: {shown}"
    );
    assert!(
        shown.contains("?? ") && shown.contains("not vouched for"),
        "{shown}"
    );
}

//! The audit log from the command line: `run --audit-log`, the settings
//! file's `audit_log`, redaction of secrets from the environment, and
//! `audit verify` / `audit show`.

use crate::support;

use std::path::{Path, PathBuf};

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
        // The project is not trusted: its sandboxed rule's reason is marked
        // as the project's (#30).
        lines[0].ends_with(r#"s2 PreToolUse dispatch [no-rm]: deny ([from the untrusted project's hook `no-rm`] no rm) tool=Bash input={"command":"rm -rf build"}"#),
        "{shown}"
    );
    assert!(
        lines[1].ends_with(
            "s2 PreToolUse hook_result [no-rm]: deny ([from the untrusted project's hook `no-rm`] no rm)"
        ),
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
fn a_bad_settings_file_is_left_out_naming_it() {
    // As `hook` does (#30): a project's broken file silences nothing else,
    // and the person is told which file and why.
    let project = project();
    let dir = project.dir.path();
    std::fs::write(dir.join(".wasm-hooks/config.yaml"), "audit: x\n").unwrap();
    wasm_hooks()
        .current_dir(dir)
        .args(["run", "--event", "Stop"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("left out this project's"))
        .stdout(predicate::str::contains(
            "config.yaml:1:1: unknown field `audit`",
        ));
    wasm_hooks()
        .current_dir(dir)
        .args(["validate"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
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

/// `lines` re-chained as a forger without the key would: each line's
/// `prev` and `hash` recomputed with plain SHA-256 (its `key` field
/// dropped), and the head rewritten to the new last line.
fn rechained(log: &Path, lines: &[String]) -> String {
    use sha2::{Digest, Sha256};
    let mut prev = "0".repeat(64);
    let mut out = String::new();
    for line in lines {
        let body = &line[..line.len() - r#","hash":""}"#.len() - 64];
        let body = body[..body.len() - r#""prev":""#.len() - 64 - 1].to_owned();
        let body = match body.find(r#""key":""#) {
            Some(at) => body[..at].to_owned() + &body[at + r#""key":"","#.len() + 16..],
            None => body,
        };
        let unsealed = format!(r#"{body}"prev":"{prev}"}}"#);
        let hash = format!("{:x}", Sha256::digest(unsealed.as_bytes()));
        out.push_str(&format!(
            r#"{},"hash":"{hash}"}}"#,
            &unsealed[..unsealed.len() - 1]
        ));
        out.push('\n');
        prev = hash;
    }
    let seq = lines.len();
    std::fs::write(
        format!("{}.head", log.display()),
        format!(r#"{{"seq":{seq},"hash":"{prev}"}}"#),
    )
    .unwrap();
    out
}

#[test]
fn m7_a_cut_emptied_lengthened_or_rechained_log_is_caught() {
    let project = project();
    let dir = project.dir.path();
    let (_keys, key) = new_key();
    let logs = [
        (dir.join("plain.jsonl"), None),
        (dir.join("sealed.jsonl"), Some(&key)),
    ];
    for (log, key) in &logs {
        let mut extra = vec!["--audit-log", log.to_str().unwrap()];
        if let Some(key) = key {
            extra.extend(["--audit-key", key.to_str().unwrap()]);
        }
        for command in ["ls", "pwd", "whoami", "rm -rf build"] {
            run_bash(dir, "s", command, &extra);
        }
    }
    let verify = |log: &Path, key: Option<&Path>| {
        let mut cmd = wasm_hooks();
        cmd.args(["audit", "verify"]).arg(log);
        if let Some(key) = key {
            cmd.arg("--audit-key").arg(key);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    for (log, key) in &logs {
        let key = key.map(PathBuf::as_path);
        assert_eq!(verify(log, key).0, Some(0), "{}", verify(log, key).1);
        let text = std::fs::read_to_string(log).unwrap();
        let head = std::fs::read_to_string(format!("{}.head", log.display())).unwrap();
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let restore = || {
            std::fs::write(log, &text).unwrap();
            std::fs::write(format!("{}.head", log.display()), &head).unwrap();
        };
        // What anyone with write access can do, head left alone.
        let cut = lines[..lines.len() - 2].join("\n") + "\n";
        let forged_last = lines.last().unwrap().replace("rm -rf build", "ls");
        for (what, tampered) in [
            ("a removed tail", cut),
            ("an emptied file", String::new()),
            ("an appended line", format!("{text}{forged_last}\n")),
        ] {
            std::fs::write(log, tampered).unwrap();
            let (code, said) = verify(log, key);
            assert_eq!(code, Some(1), "{what} went unnoticed: {said}");
            restore();
        }
        // Rewrites re-chained, head and all: caught only under a key.
        // (The forger's tool works: without a key such a rewrite passes,
        // as the README says.)
        let Some(key) = key else {
            let mut edited = lines.clone();
            edited[0] = edited[0].replace("\"ls\"", "\"rm -rf /\"");
            assert_ne!(edited, lines);
            std::fs::write(log, rechained(log, &edited)).unwrap();
            assert_eq!(verify(log, None).0, Some(0), "{}", verify(log, None).1);
            continue;
        };
        let mut deleted = lines.clone();
        deleted.remove(1);
        let mut reordered = lines.clone();
        reordered.swap(1, 2);
        let mut edited = lines.clone();
        edited[0] = edited[0].replace("\"ls\"", "\"rm -rf /\"");
        let mut appended = lines.clone();
        appended.push(forged_last.clone());
        for (what, tampered) in [
            ("a deletion", deleted),
            ("a reordering", reordered),
            ("an edit", edited),
            ("an appended line", appended),
        ] {
            let forged = rechained(log, &tampered);
            std::fs::write(log, forged).unwrap();
            let (code, said) = verify(log, Some(key));
            assert_eq!(code, Some(1), "{what}, re-chained, went unnoticed: {said}");
            assert!(said.contains("broken at line"), "{said}");
            restore();
        }
        // Without the key, a sealed log cannot be vouched for at all.
        let (code, said) = verify(log, None);
        assert_eq!(code, Some(1));
        assert!(said.contains("--audit-key"), "{said}");
    }
}

/// A new key in a directory of its own, made by `audit key`.
fn new_key() -> (tempfile::TempDir, PathBuf) {
    let keys = tempfile::tempdir().unwrap();
    let key = keys.path().join("audit.key");
    wasm_hooks()
        .args(["audit", "key"])
        .arg(&key)
        .assert()
        .success();
    (keys, key)
}

#[test]
fn m7_a_keyed_log_rechained_without_the_key_is_not_sealed_over() {
    let project = project();
    let dir = project.dir.path();
    let (_keys, key) = new_key();
    let log = dir.join("sealed.jsonl");
    let sealed = [
        "--audit-log",
        log.to_str().unwrap(),
        "--audit-key",
        key.to_str().unwrap(),
    ];
    for command in ["ls", "rm -rf build"] {
        run_bash(dir, "s", command, &sealed);
    }
    // Rewritten without the key as a plain chain, head and all, the denial
    // hidden; then the next run under the key appends to it.
    let lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| line.replace("rm -rf build", "ls"))
        .collect();
    std::fs::write(&log, rechained(&log, &lines)).unwrap();
    run_bash(dir, "s", "pwd", &sealed);

    let verified = wasm_hooks()
        .args(["audit", "verify"])
        .arg(&log)
        .arg("--audit-key")
        .arg(&key)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&verified.stdout);
    assert_eq!(verified.status.code(), Some(1), "sealed over: {said}");
    assert!(
        said.contains("broken at line 1: not sealed with the key"),
        "{said}"
    );
    // The writer under the key said what it found, in the log.
    wasm_hooks()
        .args(["audit", "show"])
        .arg(&log)
        .arg("--audit-key")
        .arg(&key)
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("a writer found the log tampered with")
                .and(predicate::str::contains("not sealed with key")),
        );
}

#[test]
fn a_run_without_the_key_does_not_downgrade_a_keyed_log() {
    let project = project();
    let dir = project.dir.path();
    let (_keys, key) = new_key();
    let log = dir.join("sealed.jsonl");
    for command in ["ls", "pwd"] {
        run_bash(
            dir,
            "s",
            command,
            &[
                "--audit-log",
                log.to_str().unwrap(),
                "--audit-key",
                key.to_str().unwrap(),
            ],
        );
    }
    let before = std::fs::read(&log).unwrap();
    // The agent goes on; the log is left as it was, and the person told.
    wasm_hooks()
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .args(["run", "--event", "PreToolUse", "--tool", "Bash"])
        .arg("--audit-log")
        .arg(&log)
        .arg("--input")
        .arg(json!({ "command": "whoami" }).to_string())
        .assert()
        .success()
        .stderr(
            predicate::str::contains(log.to_str().unwrap())
                .and(predicate::str::contains("would downgrade it")),
        );
    assert_eq!(std::fs::read(&log).unwrap(), before);
    wasm_hooks()
        .args(["audit", "verify"])
        .arg(&log)
        .arg("--audit-key")
        .arg(&key)
        .assert()
        .success()
        .stdout(predicate::str::ends_with(": intact, 4 records\n"));
}

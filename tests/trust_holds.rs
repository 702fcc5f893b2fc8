//! A guard holds through every change (#42): until the person accepts a
//! change, the version they trusted keeps answering. Each test is named
//! for an edit that turned a trusted project's guard off before: an
//! append to its script (by the person or by the agent), an unrelated new
//! hook, a typo, a removal, a pending file switching a hook off; and a
//! project never trusted whose file does not load blocks what it guards;
//! an agent that `cd`s into a folder holding a script of the same name.

use crate::support;
use crate::trust::Repository;

use serde_json::{Value, json};

/// A repository whose command hook `guard` (failing closed) runs
/// `scripts/guard.sh`, which denies a force push.
fn guarded_repository() -> Repository {
    let repo = Repository::new(&hook_file(&[guard()]));
    repo.write(
        "scripts/guard.sh",
        "#!/bin/sh\nif grep -q 'push --force'; then echo '{\"decision\": \"block\", \"reason\": \"no force push\"}'; fi\n",
    );
    std::fs::set_permissions(
        repo.path().join("scripts/guard.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    repo
}

/// The guard's entry.
fn guard() -> Value {
    json!({"matcher": "Bash", "hooks": [{"type": "command", "name": "guard",
        "command": "./scripts/guard.sh", "on_failure": "block"}]})
}

/// A hook file with these PreToolUse groups.
fn hook_file(groups: &[Value]) -> Value {
    json!({"hooks": {"PreToolUse": groups}})
}

/// Whether Claude Code's answer denies.
fn denied(answer: &Value) -> bool {
    answer["hookSpecificOutput"]["permissionDecision"] == "deny"
}

const FORCE_PUSH: &str = "git push --force origin main";

/// What the person is told (the answer's system message).
fn told(answer: &Value) -> String {
    answer["systemMessage"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_cd_into_a_folder_with_a_script_of_the_same_name_cannot_swap_the_trusted_guard() {
    for command in [
        "./scripts/guard.sh",
        "scripts/guard.sh",
        "\"$CLAUDE_PROJECT_DIR\"/scripts/guard.sh",
    ] {
        let entry = json!({"matcher": "Bash", "hooks": [{"type": "command", "name": "guard",
            "command": command, "on_failure": "block"}]});
        let repo = guarded_repository();
        repo.write(".wasm-hooks/hooks.json", &hook_file(&[entry]).to_string());
        repo.trust();
        // The agent plants a script that lets everything by, and moves there.
        let planted = repo.write(
            "sub/scripts/guard.sh",
            "#!/bin/sh
exit 0
",
        );
        std::fs::set_permissions(
            &planted,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let answer = repo.claude("PreToolUse", |e| {
            e["tool_input"]["command"] = json!(FORCE_PUSH);
            e["cwd"] = json!(repo.path().join("sub"));
        });
        assert!(
            denied(&answer),
            "{command}: the planted script answered: {answer}"
        );
    }
}

#[test]
fn a_tidy_append_to_a_trusted_guard_script_blocks_instead_of_dropping_the_guard() {
    let repo = guarded_repository();
    repo.trust();
    let answer = repo.bash(FORCE_PUSH);
    assert!(denied(&answer), "{answer}");
    // "Tidy the scripts": the agent itself (or a teammate's commit) can
    // make this edit.
    let script = repo.path().join("scripts/guard.sh");
    let mut text = std::fs::read_to_string(&script).unwrap();
    text.push_str("# tidy\n");
    std::fs::write(&script, text).unwrap();
    let answer = repo.bash(FORCE_PUSH);
    assert!(denied(&answer), "the guard blocks: {answer}");
    let why = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        why.contains("guard.sh changed since you trusted this project"),
        "{why}"
    );
    assert!(
        told(&answer).contains("wasm-hooks trust --project-dir"),
        "{answer}"
    );
    // Every other call too: what changed never runs.
    assert!(denied(&repo.bash("ls")), "on_failure: block");
    // Accepting the change ends it.
    repo.trust();
    assert!(denied(&repo.bash(FORCE_PUSH)));
    assert!(!denied(&repo.bash("ls")));
}

#[test]
fn an_unrelated_edit_of_the_hook_file_keeps_the_trusted_guard_and_holds_the_new_hook() {
    let repo = guarded_repository();
    repo.trust();
    let ran = repo.path().join("formatter-ran");
    let formatter = json!({"matcher": "Bash", "hooks": [{"type": "command", "name": "fmt",
        "command": format!("touch {}", ran.display())}]});
    repo.write(
        ".wasm-hooks/hooks.json",
        &hook_file(&[guard(), formatter]).to_string(),
    );
    let answer = repo.bash(FORCE_PUSH);
    assert!(denied(&answer), "the trusted guard still answers: {answer}");
    assert!(!ran.exists(), "the new command hook waits for trust");
    assert!(
        told(&answer).contains("`fmt`: new"),
        "the person is told what is pending: {answer}"
    );
    let shown = repo.wasm_hooks(&["trust"]).output().unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("Since you trusted it") && shown.contains("+ `fmt`: new"),
        "trust shows the change as hooks: {shown}"
    );
    repo.trust();
    repo.bash("ls");
    assert!(ran.exists(), "trusted now");
}

#[test]
fn a_typo_in_the_hook_file_leaves_the_trusted_version_answering() {
    let repo = guarded_repository();
    repo.trust();
    repo.write(".wasm-hooks/hooks.json", "{ broken");
    let answer = repo.bash(FORCE_PUSH);
    assert!(denied(&answer), "{answer}");
    assert!(
        told(&answer).contains("hooks.json:1"),
        "the file that does not load is named: {answer}"
    );
    assert!(!denied(&repo.bash("ls")), "only the guarded call");

    // `serve`, too: its project's typo is answered by the trusted version.
    let mut command = repo.program("wasm-hooks");
    command
        .args([
            "serve",
            "--no-token",
            "--listen",
            "127.0.0.1:0",
            "--project",
        ])
        .arg(repo.path());
    let served = support::Served::start(command);
    let mut event = support::fixture_of("2.1.330", "PreToolUse");
    event["cwd"] = json!(repo.path());
    event["tool_input"]["command"] = json!(FORCE_PUSH);
    let posted = std::process::Command::new("curl")
        .args(["-s", "-X", "POST", "-H", "content-type: application/json"])
        .args(["--data", &event.to_string()])
        .arg(format!("{}/hook", served.address))
        .output()
        .unwrap();
    let answer: Value = serde_json::from_slice(&posted.stdout).unwrap();
    assert!(denied(&answer), "serve: {answer}");
}

#[test]
fn a_removed_guard_keeps_running_until_the_removal_is_trusted() {
    let repo = guarded_repository();
    repo.trust();
    repo.write(".wasm-hooks/hooks.json", &hook_file(&[]).to_string());
    let answer = repo.bash(FORCE_PUSH);
    assert!(denied(&answer), "{answer}");
    assert!(told(&answer).contains("`guard`: removed"), "{answer}");
    repo.trust();
    assert!(!denied(&repo.bash(FORCE_PUSH)), "the removal, trusted");
}

#[test]
fn a_pending_file_cannot_switch_off_a_trusted_hook() {
    let repo = guarded_repository();
    repo.trust();
    // The uncommitted layer above it, written by the agent: `enabled:
    // false` of the trusted guard.
    repo.write(
        ".wasm-hooks/hooks.local.json",
        &json!({"hooks": {"PreToolUse": [{"hooks": [{"name": "guard", "enabled": false}]}]}})
            .to_string(),
    );
    assert!(denied(&repo.bash(FORCE_PUSH)));
}

#[test]
fn a_never_trusted_project_whose_file_does_not_load_blocks_guard_events_only() {
    let repo = Repository::new(&json!({}));
    repo.write(
        ".wasm-hooks/hooks.json",
        "{ \"hooks\": { \"PreToolUse\": [ oops ] } }",
    );
    // The person's own hook still runs on every event.
    let ran = repo.path().join("users-hook-ran");
    repo.write_users(
        "hooks.json",
        &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command",
            "command": format!("touch {}", ran.display())}]}],
            "PostToolUse": [{"hooks": [{"type": "command",
            "command": format!("touch {}.post", ran.display())}]}]}})
        .to_string(),
    );
    let answer = repo.bash("ls");
    assert!(denied(&answer), "{answer}");
    let why = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        why.contains("hooks.json:1") && why.contains("do not load"),
        "file, line and problem: {why}"
    );
    assert!(ran.exists(), "the person's hook ran");
    // Not an event that guards an action: not blocked.
    let after = repo.claude("PostToolUse", |_| {});
    assert_ne!(after["decision"], "block", "{after}");
    assert!(repo.path().join("users-hook-ran.post").exists());
}

/// What an untrusted project's hook says when it fails reaches the model
/// marked as the project's, like its answers (#42): here the remedy of a
/// plugin it has not built, an instruction to run a command.
#[test]
fn an_untrusted_projects_failure_message_carries_its_marker() {
    let repo = Repository::new(&hook_file(&[json!({"matcher": "Bash", "hooks": [
        {"type": "wasm", "name": "missing", "plugin": "plugin/build/missing.wasm",
         "on_failure": "block"}]})]));
    std::fs::create_dir_all(repo.path().join(".wasm-hooks/plugin")).unwrap();
    std::fs::write(
        repo.path().join(".wasm-hooks/plugin/Cargo.toml"),
        "[package]\nname = \"missing\"\n",
    )
    .unwrap();
    let answer = repo.bash("ls");
    let why = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default();
    assert!(
        why.contains("[from the untrusted project's hook `missing`]")
            && why.contains("wasm-hooks build"),
        "{answer}"
    );
}

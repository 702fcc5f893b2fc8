//! A guard nothing can silence (#30): what a cloned repository does to its
//! own layers never takes the person's or the organisation's hooks with
//! it. Each finding of the issue has a test named for it.

use serde_json::{Value, json};

use crate::support::workspace_root;
use crate::trust::{Repository, command, denied};

/// The shipped audit-log template, as text.
fn audit_log_template() -> String {
    std::fs::read_to_string(workspace_root().join("hook-templates/audit-log.json")).unwrap()
}

/// A command guard on Bash that refuses `rm -rf` (exit 2, the reason on
/// stderr), as a hook file.
fn users_command_guard() -> Value {
    json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [command(
        "grep -q 'rm -rf' && { echo 'the person refuses rm -rf' >&2; exit 2; }; exit 0"
    )]}]}})
}

/// The lines the audit-log template appended in the repository.
fn audit_lines(repo: &Repository) -> usize {
    std::fs::read_to_string(repo.path().join(".wasm-hooks/audit.jsonl"))
        .map(|text| text.lines().filter(|l| !l.trim().is_empty()).count())
        .unwrap_or(0)
}

#[test]
fn a_repository_cannot_silence_the_users_guard_by_copying_it() {
    let repo = Repository::new(&users_command_guard());
    repo.write_users("hooks.json", &users_command_guard().to_string());
    let answer = repo.bash("rm -rf build");
    assert!(
        denied(&answer),
        "the person's guard ran, not the untrusted copy: {answer}"
    );
    assert!(!denied(&repo.bash("ls")));
}

#[test]
fn a_repository_cannot_silence_the_users_audit_log_by_copying_the_template() {
    let repo = Repository::new(&json!({}));
    repo.write(".wasm-hooks/hooks.json", &audit_log_template());
    repo.write_users("hooks.json", &audit_log_template());
    repo.claude("PostToolUse", |_| {});
    assert_eq!(audit_lines(&repo), 1, "the person's audit log ran, once");
}

#[test]
fn a_broken_project_hook_file_does_not_silence_the_users_and_managed_hooks() {
    let repo = Repository::new(&json!({}));
    let broken = repo.write(".wasm-hooks/hooks.json", "{\"hooks\": {\"PreToolUse\": [");
    repo.write_users("hooks.json", &audit_log_template());
    let answer = repo.claude("PostToolUse", |_| {});
    assert_eq!(audit_lines(&repo), 1, "the person's hook ran: {answer}");
    let told = answer["systemMessage"].as_str().unwrap_or_default();
    assert!(
        told.contains("left out") && told.contains(&broken.display().to_string()),
        "the person is told which file was left out: {answer}"
    );
    // The guard events too: the person's guard answers, not a failure.
    repo.write_users("hooks.json", &users_command_guard().to_string());
    assert!(denied(&repo.bash("rm -rf build")));
    assert!(!denied(&repo.bash("ls")), "no blanket block either");
    // `validate` and `list` still refuse the broken file.
    repo.wasm_hooks(&["validate"]).assert().code(1);
    repo.wasm_hooks(&["list"]).assert().code(1);
}

#[test]
fn a_forbidden_project_config_key_does_not_silence_the_users_hooks() {
    let repo = Repository::new(&json!({}));
    repo.write(
        ".wasm-hooks/config.yaml",
        "ceilings:\n  timeout_ms: 999999\n",
    );
    repo.write_users("hooks.json", &audit_log_template());
    let answer = repo.claude("PostToolUse", |_| {});
    assert_eq!(audit_lines(&repo), 1, "the person's hook ran: {answer}");
    let told = answer["systemMessage"].as_str().unwrap_or_default();
    assert!(told.contains("ceilings"), "{answer}");
}

#[test]
fn a_dozen_slow_hooks_cannot_outlast_the_event_deadline() {
    let repo = Repository::new(&json!({}));
    repo.write_users("config.yaml", "limits:\n  event_deadline_ms: 500\n");
    let marks = repo.path().join("finished");
    let slow: Vec<Value> = (0..12)
        .map(|i| command(&format!("sleep 5; echo {i} >> '{}'", marks.display())))
        .collect();
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": slow}]}});
    repo.write_users("hooks.json", &hooks.to_string());
    let answer = repo.bash("ls");
    assert!(
        denied(&answer),
        "past the deadline, a guard event blocks: {answer}"
    );
    let reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("event_deadline_ms = 500"), "{answer}");
    std::thread::sleep(std::time::Duration::from_secs(6));
    assert!(
        !marks.exists(),
        "the hook stopped at the deadline left no process behind"
    );
}

#[test]
fn a_huge_project_hook_file_is_refused_unread_and_the_users_hooks_still_run() {
    let repo = Repository::new(&json!({}));
    let padding = " ".repeat(2 << 20);
    repo.write(
        ".wasm-hooks/hooks.json",
        &format!("{{\"hooks\": {{}}{padding}}}"),
    );
    repo.write_users("hooks.json", &audit_log_template());
    let answer = repo.claude("PostToolUse", |_| {});
    assert_eq!(audit_lines(&repo), 1, "{answer}");
    let told = answer["systemMessage"].as_str().unwrap_or_default();
    assert!(told.contains("MAX_HOOK_FILE_BYTES"), "{answer}");
}

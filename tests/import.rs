//! `wasm-hooks import`: an agent's own command hooks move into a
//! wasm-hooks hook file, shown as a diff first, and behave there as they
//! did (matcher, exit 2 blocking), with wasm-hooks' entry left in the
//! agent's settings.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{Value, json};

use crate::support;

const SETTINGS: &str = r#"{
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}
    ],
    "Stop": [{"hooks": [{"type": "prompt", "prompt": "done? $ARGUMENTS"}]}]
  }
}
"#;

/// `wasm-hooks <args>` in `project`, with no user settings or state.
fn wasm_hooks(project: &Path, state: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("XDG_STATE_HOME", state)
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("CLAUDE_PROJECT_DIR")
        .current_dir(project)
        .args(args)
        .assert()
}

#[test]
fn claude_codes_command_hooks_move_into_the_hook_file_and_still_block() {
    let project = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let dir = project.path();
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    std::fs::write(dir.join(".claude/settings.json"), SETTINGS).unwrap();
    std::fs::write(
        dir.join("guard.sh"),
        "#!/bin/sh\ngrep -q 'rm -rf' && { echo 'no rm -rf' >&2; exit 2; }\nexit 0\n",
    )
    .unwrap();
    Command::new("chmod")
        .args(["+x", "guard.sh"])
        .current_dir(dir)
        .assert()
        .success();
    // Shown, and nothing written, without a terminal or --yes.
    wasm_hooks(dir, state.path(), &["import", "claude", "--dry-run"])
        .success()
        .stdout(
            predicate::str::contains("+            \"command\": \"./guard.sh\",")
                .and(predicate::str::contains("a `prompt` hook stays"))
                .and(predicate::str::contains("nothing written")),
        );
    wasm_hooks(dir, state.path(), &["import", "claude"])
        .code(1)
        .stderr(predicate::str::contains("no terminal to ask on"));
    assert_eq!(
        std::fs::read_to_string(dir.join(".claude/settings.json")).unwrap(),
        SETTINGS
    );
    wasm_hooks(dir, state.path(), &["import", "claude", "--yes"])
        .success()
        .stdout(
            predicate::str::contains("1 command hook moves")
                .and(predicate::str::contains("trusted as they were moved")),
        );
    let hooks = support::read_json(&dir.join(".wasm-hooks/hooks.json"));
    assert_eq!(
        hooks["hooks"]["PreToolUse"],
        json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}])
    );
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".claude/settings.json")).unwrap())
            .unwrap();
    assert_eq!(settings["model"], "opus");
    assert!(settings["hooks"].get("PreToolUse").is_none(), "{settings}");
    // wasm-hooks is not on this test's PATH: its own entry, with the full
    // path, is in the uncommitted settings.
    let local = support::read_json(&dir.join(".claude/settings.local.json"));
    let pre = local["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 1, "{pre:?}");
    assert!(
        pre[0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with("wasm-hooks hook --protocol claude")
    );
    assert_eq!(
        settings["hooks"]["Stop"][0]["hooks"][0]["type"], "prompt",
        "what import does not move stays"
    );
    // Trusted as it was moved (it ran with the person's rights in Claude
    // Code), the moved guard blocks as it did there, with no `trust`.
    let event = |command: &str, tool: &str| {
        json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": dir,
            "tool_name": tool, "tool_input": {"command": command}})
        .to_string()
    };
    let answer = |stdin: String| {
        let out = Command::cargo_bin("wasm-hooks")
            .unwrap()
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .env("XDG_STATE_HOME", state.path())
            .env("WASM_HOOKS_DAEMON", "off")
            .current_dir(dir)
            .args(["hook", "--protocol", "claude"])
            .write_stdin(stdin)
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null)
    };
    let denied = answer(event("rm -rf victim", "Bash"));
    assert_eq!(
        denied["hookSpecificOutput"]["permissionDecision"], "deny",
        "{denied}"
    );
    assert!(
        denied["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("no rm -rf")
    );
    assert_eq!(
        answer(event("rm -rf victim", "Write")),
        json!({}),
        "matcher kept"
    );
    assert_eq!(answer(event("ls", "Bash")), json!({}));
    // Nothing left to import.
    wasm_hooks(dir, state.path(), &["import", "claude", "--yes"])
        .success()
        .stdout(predicate::str::contains("no command hooks to import"));
}

#[test]
fn codex_hooks_move_and_wasm_hooks_is_installed_by_its_absolute_path() {
    let project = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let dir = project.path();
    std::fs::create_dir_all(dir.join(".codex")).unwrap();
    let codex = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}}"#;
    std::fs::write(dir.join(".codex/hooks.json"), codex).unwrap();
    // wasm-hooks is not on this test's PATH, and Codex has no uncommitted
    // file: its own file gets the absolute path, which no PATH changes.
    wasm_hooks(dir, state.path(), &["import", "codex", "--yes"]).success();
    let installed = support::read_json(&dir.join(".codex/hooks.json"));
    let command = installed["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(
        command.starts_with('/') && command.ends_with("wasm-hooks hook --protocol codex"),
        "{installed}"
    );
    let moved = support::read_json(&dir.join(".wasm-hooks/hooks.json"));
    assert_eq!(
        moved["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "./guard.sh"
    );
}

/// The import gap (#42): at no step of `init`, `import` and `trust` is the
/// person's own guard off. Before the import the agent runs it (it is in
/// its settings); from the import on, wasm-hooks does, trusted as moved,
/// while the rest of the project's hook file waits for `trust`.
#[test]
fn a_force_push_is_denied_at_every_step_of_init_import_and_trust() {
    let project = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let dir = project.path();
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    let settings = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "./no-force-push.sh"}]}]}}"#;
    std::fs::write(dir.join(".claude/settings.json"), settings).unwrap();
    std::fs::write(
        dir.join("no-force-push.sh"),
        "#!/bin/sh\ngrep -q 'push --force' && { echo 'no force push' >&2; exit 2; }\nexit 0\n",
    )
    .unwrap();
    Command::new("chmod")
        .args(["+x", "no-force-push.sh"])
        .current_dir(dir)
        .assert()
        .success();
    let ran = dir.join("project-command-ran");
    let force_push_denied = |step: &str| {
        let in_agent = [".claude/settings.json", ".claude/settings.local.json"]
            .iter()
            .any(|f| {
                std::fs::read_to_string(dir.join(f)).is_ok_and(|t| t.contains("no-force-push.sh"))
            });
        if in_agent {
            return; // Claude Code runs it itself.
        }
        let event = json!({"hook_event_name": "PreToolUse", "session_id": step, "cwd": dir,
            "tool_name": "Bash", "tool_input": {"command": "git push --force origin main"}});
        let out = Command::cargo_bin("wasm-hooks")
            .unwrap()
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .env("XDG_STATE_HOME", state.path())
            .env("WASM_HOOKS_DAEMON", "off")
            .current_dir(dir)
            .args(["hook", "--protocol", "claude"])
            .write_stdin(event.to_string())
            .output()
            .unwrap();
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert_eq!(
            answer["hookSpecificOutput"]["permissionDecision"], "deny",
            "{step}: {answer}"
        );
    };
    force_push_denied("before");
    wasm_hooks(dir, state.path(), &["init"]).success();
    force_push_denied("init");
    // A command hook of the project's own, added before the import: not
    // trusted by it.
    let starter = std::fs::read_to_string(dir.join(".wasm-hooks/hooks.json")).unwrap();
    let mut starter: Value = serde_json::from_str(&starter).unwrap();
    starter["hooks"]["PostToolUse"] = json!([{"hooks": [{"type": "command",
        "command": format!("touch {}", ran.display())}]}]);
    std::fs::write(dir.join(".wasm-hooks/hooks.json"), starter.to_string()).unwrap();
    wasm_hooks(dir, state.path(), &["import", "claude", "--yes"]).success();
    force_push_denied("import");
    let post = json!({"hook_event_name": "PostToolUse", "session_id": "post", "cwd": dir,
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {}});
    Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("XDG_STATE_HOME", state.path())
        .env("WASM_HOOKS_DAEMON", "off")
        .current_dir(dir)
        .args(["hook"])
        .write_stdin(post.to_string())
        .assert()
        .success();
    assert!(!ran.exists(), "the import trusted only what it moved");
    wasm_hooks(dir, state.path(), &["trust", "--yes"]).success();
    force_push_denied("trust");
}

#[test]
fn import_refuses_a_settings_file_too_large_to_read() {
    let project = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let dir = project.path();
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    let mut huge = String::from(r#"{"hooks": {}, "padding": ""#);
    huge.push_str(&"x".repeat(5 << 20));
    huge.push_str("\"}");
    std::fs::write(dir.join(".claude/settings.json"), &huge).unwrap();
    wasm_hooks(dir, state.path(), &["import", "claude", "--yes"])
        .code(1)
        .stderr(
            predicate::str::contains(".claude/settings.json")
                .and(predicate::str::contains("more than the limit of 4194304")),
        );
    assert!(!dir.join(".wasm-hooks").exists(), "nothing written");
}

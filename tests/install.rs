//! `wasm-hooks install|uninstall claude` on settings files that already
//! hold hooks and other settings: merged, backed up, idempotent, and
//! reversed exactly.

use crate::support;

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

const SETTINGS: &str = r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"],
    "deny":  ["Read(./.env)"]
  },
  "env": { "FOO": "bar" },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [ { "type": "command", "command": "prettier --write \"$CLAUDE_FILE_PATHS\"" } ]
      }
    ]
  }
}
"#;

fn wasm_hooks(args: &[&str], project: &Path) -> assert_cmd::assert::Assert {
    Command::cargo_bin("wasm-hooks")
        .unwrap()
        .args(args)
        .arg("--project-dir")
        .arg(project)
        .assert()
}

fn settings(project: &Path) -> String {
    std::fs::read_to_string(project.join(".claude/settings.json")).unwrap()
}

#[test]
fn install_merges_backs_up_and_uninstall_restores_the_bytes() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    std::fs::write(project.path().join(".claude/settings.json"), SETTINGS).unwrap();

    wasm_hooks(&["install", "claude"], project.path())
        .success()
        .stdout(predicate::str::contains(
            "installed wasm-hooks on 10 events",
        ));
    let installed = settings(project.path());
    assert_eq!(
        std::fs::read_to_string(project.path().join(".claude/settings.json.bak")).unwrap(),
        SETTINGS
    );
    // Untouched parts survive byte for byte.
    for kept in [
        r#"  "$schema": "https://json.schemastore.org/claude-code-settings.json","#,
        "  \"permissions\": {\n    \"allow\": [\"Bash(npm run test:*)\", \"Read(~/.zshrc)\"],\n    \"deny\":  [\"Read(./.env)\"]\n  },",
        r#"  "env": { "FOO": "bar" },"#,
        r#"        "hooks": [ { "type": "command", "command": "prettier --write \"$CLAUDE_FILE_PATHS\"" } ]"#,
    ] {
        assert!(installed.contains(kept), "{kept}\nin:\n{installed}");
    }
    let value: Value = serde_json::from_str(&installed).unwrap();
    let post = value["hooks"]["PostToolUse"].as_array().unwrap();
    assert_eq!(post.len(), 2, "the existing group is kept, ours added");
    let command = post[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(command.ends_with(" hook --protocol claude"), "{command}");
    assert!(value["hooks"]["SessionStart"][0]["hooks"][0]["command"].is_string());

    // The installed command really works as Claude Code would run it.
    Command::new("sh")
        .args(["-c", command])
        .current_dir(project.path())
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .write_stdin(support::fixture("PreToolUse").to_string())
        .assert()
        .code(0)
        .stdout("{}\n");

    wasm_hooks(&["install", "claude"], project.path())
        .success()
        .stdout(predicate::str::starts_with("already installed"));
    assert_eq!(settings(project.path()), installed, "idempotent");

    wasm_hooks(&["uninstall", "claude"], project.path())
        .success()
        .stdout(predicate::str::contains("removed 10 wasm-hooks entries"));
    assert_eq!(settings(project.path()), SETTINGS);
    wasm_hooks(&["uninstall", "claude"], project.path())
        .success()
        .stdout(predicate::str::starts_with("no wasm-hooks entries"));
}

#[test]
fn http_form_into_a_new_user_settings_file() {
    let home = tempfile::tempdir().unwrap();
    let url = "http://127.0.0.1:8787/hook";
    Command::cargo_bin("wasm-hooks")
        .unwrap()
        .args(["install", "claude", "--user", "--http", url])
        .env("HOME", home.path())
        .assert()
        .success();
    let file = home.path().join(".claude/settings.json");
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(value["hooks"]["PreToolUse"][0]["hooks"][0]["url"], url);
    assert_eq!(value["hooks"]["PreToolUse"][0]["hooks"][0]["type"], "http");
    assert!(
        !home.path().join(".claude/settings.json.bak").exists(),
        "nothing to back up"
    );
    Command::cargo_bin("wasm-hooks")
        .unwrap()
        .args(["uninstall", "claude", "--user", "--http", url])
        .env("HOME", home.path())
        .assert()
        .success();
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(value, serde_json::json!({}));
}

#[test]
fn a_settings_file_of_the_wrong_shape_is_left_alone() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    std::fs::write(
        project.path().join(".claude/settings.json"),
        r#"{"hooks": []}"#,
    )
    .unwrap();
    wasm_hooks(&["install", "claude"], project.path())
        .code(1)
        .stderr(predicate::str::contains(
            "settings.json: `hooks` is not an object",
        ));
    assert_eq!(settings(project.path()), r#"{"hooks": []}"#);
}

#[test]
fn claude_settings_with_comments_and_trailing_commas_are_read() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    let commented = r#"{
  // Claude Code's settings may carry comments; install keeps them.
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [ { "type": "command", "command": "echo checked", }, ] }, /* trailing commas too */
    ],
  },
}
"#;
    std::fs::write(project.path().join(".claude/settings.json"), commented).unwrap();
    Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .args(["list", "--claude-settings", "--project-dir"])
        .arg(project.path())
        .assert()
        .success()
        .stdout(
            predicate::str::contains("echo checked").and(predicate::str::contains("[PreToolUse]")),
        );
    // A real mistake in such a file still names its line.
    std::fs::write(
        project.path().join(".claude/settings.json"),
        "{\n  // a comment\n  \"hooks\": {\n    \"PreToolUse\": [ { \"hooks\": [ ] ]\n  }\n}\n",
    )
    .unwrap();
    Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .args(["validate", "--claude-settings", "--project-dir"])
        .arg(project.path())
        .assert()
        .failure()
        .stdout(predicate::str::contains("settings.json:4:"));
}

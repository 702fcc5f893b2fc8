//! `wasm-hooks install|uninstall claude` on settings files that already
//! hold hooks and other settings: merged, backed up, idempotent, and
//! reversed exactly; every entry runs wasm-hooks by its absolute path
//! (#42: a repository's `PATH` must not choose what answers), in the
//! uncommitted file where the agent has one.

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

/// A directory holding `wasm-hooks`, a link to the binary under test, to
/// put first on `PATH`: there, a bare `wasm-hooks` is this program.
fn bin_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let exe = assert_cmd::cargo::cargo_bin("wasm-hooks");
    std::os::unix::fs::symlink(exe, dir.path().join("wasm-hooks")).unwrap();
    dir
}

/// `PATH` with `dir` first.
fn path_with(dir: &Path) -> std::ffi::OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_owned()).chain(std::env::split_paths(&rest)))
        .unwrap()
}

/// `wasm-hooks <args> --project-dir <project>`, with `wasm-hooks` on PATH.
fn wasm_hooks(args: &[&str], project: &Path) -> assert_cmd::assert::Assert {
    let bin = bin_dir();
    Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("PATH", path_with(bin.path()))
        .env("XDG_CONFIG_HOME", "/nonexistent")
        // No daemon can be used, so the full command is installed.
        .env_remove("XDG_RUNTIME_DIR")
        .args(args)
        .arg("--project-dir")
        .arg(project)
        .assert()
}

/// The same with no `wasm-hooks` on PATH.
fn wasm_hooks_off_path(args: &[&str], project: &Path) -> assert_cmd::assert::Assert {
    Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env_remove("XDG_RUNTIME_DIR")
        .args(args)
        .arg("--project-dir")
        .arg(project)
        .assert()
}

fn settings(project: &Path) -> String {
    std::fs::read_to_string(project.join(".claude/settings.json")).unwrap()
}

/// The uncommitted Claude Code settings, which a project install writes.
fn local_settings(project: &Path) -> String {
    std::fs::read_to_string(project.join(".claude/settings.local.json")).unwrap()
}

/// The command an install writes for `agent`: this wasm-hooks by its
/// absolute path.
fn installed_command(agent: &str) -> String {
    format!(
        "{} hook --protocol {agent}",
        assert_cmd::cargo::cargo_bin("wasm-hooks").display()
    )
}

#[test]
fn install_merges_backs_up_and_uninstall_restores_the_bytes() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    std::fs::write(project.path().join(".claude/settings.local.json"), SETTINGS).unwrap();

    wasm_hooks(&["install", "claude"], project.path())
        .success()
        .stdout(predicate::str::contains(
            "installed wasm-hooks on 12 events",
        ));
    let installed = local_settings(project.path());
    assert_eq!(
        std::fs::read_to_string(project.path().join(".claude/settings.local.json.bak")).unwrap(),
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
    assert_eq!(command, installed_command("claude"), "by its absolute path");
    assert!(value["hooks"]["SessionStart"][0]["hooks"][0]["command"].is_string());

    // The installed command really works as Claude Code would run it, a
    // repository's PATH (another `wasm-hooks` first) changing nothing.
    let planted = tempfile::tempdir().unwrap();
    let fake = planted.path().join("wasm-hooks");
    std::fs::write(&fake, "#!/bin/sh\necho '{\"planted\": true}'\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    Command::new("sh")
        .args(["-c", command])
        .env("PATH", path_with(planted.path()))
        .current_dir(project.path())
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .write_stdin(support::fixture("PreToolUse").to_string())
        .assert()
        .code(0)
        .stdout("{}\n");

    wasm_hooks(&["install", "claude"], project.path())
        .success()
        .stdout(predicate::str::starts_with("already installed"));
    assert_eq!(local_settings(project.path()), installed, "idempotent");

    wasm_hooks(&["uninstall", "claude"], project.path())
        .success()
        .stdout(predicate::str::contains("removed 12 wasm-hooks entries"));
    assert_eq!(local_settings(project.path()), SETTINGS);
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
    let value: Value = support::read_json(&file);
    assert_eq!(value["hooks"]["PreToolUse"][0]["hooks"][0]["url"], url);
    assert_eq!(value["hooks"]["PreToolUse"][0]["hooks"][0]["type"], "http");
    assert_eq!(
        value["hooks"]["PreToolUse"][0]["hooks"][0]["headers"]["Authorization"],
        "Bearer $WASM_HOOKS_TOKEN",
        "serve wants a token, and the entry sends it"
    );
    assert_eq!(
        value["hooks"]["PreToolUse"][0]["hooks"][0]["allowedEnvVars"],
        serde_json::json!(["WASM_HOOKS_TOKEN"])
    );
    // A `serve` that answers with an error or not at all (gone, killed)
    // blocks the guarded action: Claude Code honours `onFailure` for HTTP
    // hooks (2.1.332).
    for guard in ["PreToolUse", "UserPromptSubmit", "PermissionRequest"] {
        assert_eq!(
            value["hooks"][guard][0]["hooks"][0]["onFailure"], "block",
            "{guard}"
        );
    }
    assert!(
        value["hooks"]["Stop"][0]["hooks"][0]
            .get("onFailure")
            .is_none()
    );
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
    let value: Value = support::read_json(&file);
    assert_eq!(value, serde_json::json!({}));
}

#[test]
fn a_settings_file_of_the_wrong_shape_is_left_alone() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    std::fs::write(
        project.path().join(".claude/settings.local.json"),
        r#"{"hooks": []}"#,
    )
    .unwrap();
    wasm_hooks(&["install", "claude"], project.path())
        .code(1)
        .stderr(predicate::str::contains(
            "settings.local.json: `hooks` is not an object",
        ));
    assert_eq!(local_settings(project.path()), r#"{"hooks": []}"#);
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
            predicate::str::contains("echo checked").and(predicate::str::contains(
                "not run: the project is not trusted",
            )),
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

#[test]
fn with_a_runtime_dir_the_small_client_is_installed_in_place_of_the_full_command() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    std::fs::write(project.path().join(".claude/settings.json"), SETTINGS).unwrap();
    // First as before: no $XDG_RUNTIME_DIR, so no daemon and the full command.
    wasm_hooks(&["install", "claude"], project.path()).success();
    let runtime_dir = tempfile::tempdir().unwrap();
    let bin = bin_dir();
    let client = assert_cmd::cargo::cargo_bin("wasm-hooks-hook");
    std::os::unix::fs::symlink(client, bin.path().join("wasm-hooks-hook")).unwrap();
    let with_client = |args: &[&str]| {
        Command::cargo_bin("wasm-hooks")
            .unwrap()
            .env("PATH", path_with(bin.path()))
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .env("XDG_RUNTIME_DIR", runtime_dir.path())
            .args(args)
            .arg("--project-dir")
            .arg(project.path())
            .assert()
    };
    with_client(&["install", "claude"]).success();
    let installed = local_settings(project.path());
    let value: Value = serde_json::from_str(&installed).unwrap();
    let client_command = format!(
        "{} --protocol claude",
        assert_cmd::cargo::cargo_bin("wasm-hooks-hook").display()
    );
    for event in ["PreToolUse", "Stop", "SessionStart"] {
        let ours: Vec<&str> = value["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|group| group["hooks"].as_array().unwrap())
            .filter_map(|entry| entry["command"].as_str())
            .filter(|command| command.contains("wasm-hooks"))
            .collect();
        assert_eq!(
            ours,
            [client_command.as_str()],
            "{event}: the older full command is replaced, not doubled"
        );
    }
    // The installed command answers as the full one does (no daemon here:
    // it hands the event to `wasm-hooks hook`).
    Command::new("sh")
        .args(["-c", &client_command])
        .env("PATH", path_with(bin.path()))
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("WASM_HOOKS_DAEMON", "off")
        .current_dir(project.path())
        .write_stdin(support::fixture("PreToolUse").to_string())
        .assert()
        .code(0)
        .stdout("{}\n");
    with_client(&["uninstall", "claude"])
        .success()
        .stdout(predicate::str::contains("removed 12 wasm-hooks entries"));
    assert_eq!(settings(project.path()), SETTINGS, "never touched");
    let local: Value = serde_json::from_str(&local_settings(project.path())).unwrap();
    assert_eq!(local, serde_json::json!({}));
}

#[test]
fn a_project_install_goes_to_the_uncommitted_claude_settings_by_absolute_path() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    std::fs::write(project.path().join(".claude/settings.json"), SETTINGS).unwrap();
    wasm_hooks_off_path(&["install", "claude"], project.path())
        .success()
        .stdout(
            predicate::str::contains("settings.local.json")
                .and(predicate::str::contains("which a committed file must not")),
        );
    assert_eq!(
        settings(project.path()),
        SETTINGS,
        "the committed file is untouched"
    );
    let local: Value = support::read_json(&project.path().join(".claude/settings.local.json"));
    let command = local["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(
        command.starts_with('/') && command.ends_with("wasm-hooks hook --protocol claude"),
        "{command}"
    );
    wasm_hooks_off_path(&["uninstall", "claude"], project.path())
        .success()
        .stdout(predicate::str::contains("settings.local.json"));
    let local: Value = support::read_json(&project.path().join(".claude/settings.local.json"));
    assert_eq!(local, serde_json::json!({}));
}

#[test]
fn codex_and_gemini_get_their_own_files_events_and_next_steps() {
    let project = tempfile::tempdir().unwrap();
    wasm_hooks(&["install", "codex"], project.path())
        .success()
        .stdout(
            predicate::str::contains(".codex/hooks.json")
                .and(predicate::str::contains("trust the project"))
                .and(predicate::str::contains(
                    "trust the wasm-hooks entries in `/hooks`",
                )),
        );
    let codex: Value = support::read_json(&project.path().join(".codex/hooks.json"));
    assert_eq!(
        codex["hooks"]["PreToolUse"][0],
        serde_json::json!({"matcher": "*", "hooks": [{"type": "command", "command": installed_command("codex"), "timeout": 60}]}),
        "Codex takes no setting that would make a failure block"
    );
    assert!(
        codex["hooks"].get("Notification").is_none(),
        "Codex has none"
    );
    assert_eq!(
        (
            codex["hooks"]["PreModelRequest"][0]["hooks"][0]["command"].as_str(),
            codex["hooks"]["PostModelRequest"][0]["hooks"][0]["command"].as_str(),
        ),
        (
            Some(installed_command("codex").as_str()),
            Some(installed_command("codex").as_str())
        ),
        "Codex 0.171's events around each model request, by its own names"
    );

    wasm_hooks(&["install", "gemini"], project.path())
        .success()
        .stdout(predicate::str::contains("trusted folder"));
    let gemini: Value = support::read_json(&project.path().join(".gemini/settings.json"));
    assert_eq!(
        gemini["hooks"]["BeforeTool"][0]["hooks"][0]["command"],
        installed_command("gemini")
    );
    assert!(
        gemini["hooks"].get("PreToolUse").is_none(),
        "Gemini's own names"
    );

    // Whatever PATH says: the absolute path.
    let other = tempfile::tempdir().unwrap();
    wasm_hooks_off_path(&["install", "gemini"], other.path()).success();
    let gemini: Value = support::read_json(&other.path().join(".gemini/settings.json"));
    assert_eq!(
        gemini["hooks"]["BeforeTool"][0]["hooks"][0]["command"],
        installed_command("gemini")
    );
    let home = tempfile::tempdir().unwrap();
    Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("PATH", "/usr/bin:/bin")
        .env("CODEX_HOME", home.path())
        .args(["install", "codex", "--user"])
        .assert()
        .success();
    let user: Value = support::read_json(&home.path().join("hooks.json"));
    assert!(
        user["hooks"]["Stop"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .starts_with('/'),
        "the user's own file may hold the path"
    );
    wasm_hooks(&["uninstall", "codex"], project.path())
        .success()
        .stdout(predicate::str::contains("removed 13 wasm-hooks entries"));
}

#[test]
fn install_warns_when_the_projects_hook_files_do_not_load() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".wasm-hooks")).unwrap();
    std::fs::write(
        project.path().join(".wasm-hooks/hooks.json"),
        r#"{"hooks": {"PreToolUze": []}}"#,
    )
    .unwrap();
    wasm_hooks(&["install", "claude"], project.path())
        .success()
        .stdout(
            predicate::str::contains("hook files do not load")
                .and(predicate::str::contains("did you mean `PreToolUse`")),
        );
}

#[test]
fn an_older_install_by_bare_name_is_warned_of_and_moved_to_the_absolute_path_once() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".git")).unwrap();
    std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    std::fs::write(project.path().join(".gitignore"), "target").unwrap();
    // What an older wasm-hooks wrote when it was on PATH: the bare name,
    // in the committed file, which a repository's `env.PATH` can turn into
    // its own program.
    let bare =
        wasm_hooks::agents::InstalledHook::Command("wasm-hooks hook --protocol claude".into());
    let older = wasm_hooks::agents::install("{}", wasm_hooks::Protocol::Claude, &bare)
        .unwrap()
        .unwrap();
    std::fs::write(project.path().join(".claude/settings.json"), older).unwrap();
    wasm_hooks(&["validate"], project.path()).stdout(predicate::str::contains(
        "installed as `wasm-hooks`, found through PATH",
    ));
    wasm_hooks(&["install", "claude"], project.path())
        .success()
        .stdout(
            predicate::str::contains("removed 12 older wasm-hooks entries").and(
                predicate::str::contains("added /.claude/settings.local.json to"),
            ),
        );
    assert_eq!(
        std::fs::read_to_string(project.path().join(".gitignore")).unwrap(),
        "target\n/.claude/settings.local.json\n"
    );
    let committed: Value = serde_json::from_str(&settings(project.path())).unwrap();
    assert_eq!(committed, serde_json::json!({}), "no event is hooked twice");
    let local: Value = support::read_json(&project.path().join(".claude/settings.local.json"));
    assert_eq!(
        local["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        installed_command("claude")
    );
    wasm_hooks(&["validate"], project.path())
        .stdout(predicate::str::contains("found through PATH").not());
    wasm_hooks(&["install", "claude"], project.path())
        .success()
        .stdout(predicate::str::starts_with("already installed"));
    assert_eq!(
        std::fs::read_to_string(project.path().join(".gitignore")).unwrap(),
        "target\n/.claude/settings.local.json\n",
        "listed once"
    );
}

#[test]
fn copilot_and_cursor_get_their_own_files_events_and_entries() {
    let project = tempfile::tempdir().unwrap();
    wasm_hooks(&["install", "copilot"], project.path())
        .success()
        .stdout(predicate::str::contains(
            ".github/hooks/wasm-hooks.local.json",
        ));
    let copilot: Value =
        support::read_json(&project.path().join(".github/hooks/wasm-hooks.local.json"));
    assert_eq!(copilot["version"], 1);
    let exe = assert_cmd::cargo::cargo_bin("wasm-hooks");
    assert_eq!(
        copilot["hooks"]["preToolUse"],
        serde_json::json!([{"type": "command", "exec": exe,
            "args": ["hook", "--protocol", "copilot", "--agent-event", "preToolUse"], "timeoutSec": 60}])
    );
    assert_eq!(copilot["hooks"]["agentStop"][0]["args"][4], "agentStop");
    wasm_hooks(&["install", "copilot"], project.path())
        .success()
        .stdout(predicate::str::starts_with("already installed"));
    wasm_hooks(&["install", "cursor"], project.path())
        .success()
        .stdout(predicate::str::contains("trusted workspace"));
    let cursor: Value = support::read_json(&project.path().join(".cursor/hooks.json"));
    assert_eq!(
        cursor["hooks"]["beforeShellExecution"],
        serde_json::json!([{"command": installed_command("cursor"), "timeout": 60, "failClosed": true}])
    );
    assert_eq!(
        cursor["hooks"]["stop"],
        serde_json::json!([{"command": installed_command("cursor"), "timeout": 60, "loop_limit": 8}]),
        "Cursor's cap on follow-ups agrees with wasm-hooks' own stop-loop limit"
    );
    wasm_hooks(&["install", "cursor"], project.path())
        .success()
        .stdout(predicate::str::starts_with("already installed"));
    wasm_hooks(&["uninstall", "cursor"], project.path())
        .success()
        .stdout(predicate::str::contains("removed 16 wasm-hooks entries"));
    let cursor: Value = support::read_json(&project.path().join(".cursor/hooks.json"));
    assert_eq!(cursor, serde_json::json!({"version": 1}));
}

/// Each agent's guard entries as installed, for the events that guard an
/// action: the command, and whether the agent blocks when it fails.
fn installed_guards(agent: &str, project: &Path) -> Vec<(String, bool)> {
    match agent {
        "claude" => {
            let value: Value = serde_json::from_str(&local_settings(project)).unwrap();
            [
                "PreToolUse",
                "PreSkillShellCommand",
                "PermissionRequest",
                "UserPromptSubmit",
            ]
            .iter()
            .map(|event| {
                let entry = &value["hooks"][event][0]["hooks"][0];
                (
                    entry["command"].as_str().unwrap().to_owned(),
                    entry["onFailure"] == "block",
                )
            })
            .collect()
        }
        "copilot" => {
            let value = support::read_json(&project.join(".github/hooks/wasm-hooks.local.json"));
            // Copilot CLI denies a preToolUse whose hook fails to start or
            // exits non-zero.
            let entry = &value["hooks"]["preToolUse"][0];
            let argv: Vec<String> = std::iter::once(&entry["exec"])
                .chain(entry["args"].as_array().unwrap())
                .map(|w| shell_words_quote(w.as_str().unwrap()))
                .collect();
            vec![(argv.join(" "), true)]
        }
        "cursor" => {
            let value = support::read_json(&project.join(".cursor/hooks.json"));
            [
                "preToolUse",
                "beforeShellExecution",
                "beforeMCPExecution",
                "beforeReadFile",
                "beforeSubmitPrompt",
            ]
            .iter()
            .map(|event| {
                let entry = &value["hooks"][event][0];
                (
                    entry["command"].as_str().unwrap().to_owned(),
                    entry["failClosed"] == true,
                )
            })
            .collect()
        }
        _ => unreachable!(),
    }
}

#[test]
fn with_the_program_missing_every_installed_guard_blocks() {
    for agent in ["claude", "copilot", "cursor"] {
        let project = tempfile::tempdir().unwrap();
        // Installed by a copy of wasm-hooks, which then goes.
        let bin = tempfile::tempdir().unwrap();
        let copy = bin.path().join("wasm-hooks");
        std::fs::copy(assert_cmd::cargo::cargo_bin("wasm-hooks"), &copy).unwrap();
        Command::new(&copy)
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .env_remove("XDG_RUNTIME_DIR")
            .args(["install", agent, "--project-dir"])
            .arg(project.path())
            .assert()
            .success();
        drop(bin);
        for (command, blocks_on_failure) in installed_guards(agent, project.path()) {
            assert!(blocks_on_failure, "{agent}: {command}");
            // The agent runs it with wasm-hooks gone: it fails (127),
            // which the setting above turns into a block.
            let gone = Command::new("sh")
                .args(["-c", &command])
                .write_stdin(support::fixture("PreToolUse").to_string())
                .output()
                .unwrap();
            assert_eq!(gone.status.code(), Some(127), "{agent}: {command}");
        }
        let said = explain_bash_ls(project.path());
        assert!(said.contains("is not there"), "explain warns: {said}");
    }
    // Gemini CLI blocks on a failing hook by itself; Codex cannot be made
    // to: install says so.
    let project = tempfile::tempdir().unwrap();
    wasm_hooks(&["install", "gemini"], project.path())
        .success()
        .stdout(predicate::str::contains("has no setting").not());
    wasm_hooks(&["install", "codex"], project.path())
        .success()
        .stdout(predicate::str::contains(
            "Codex has no setting that blocks a tool when its hook fails",
        ));
}

/// `word` quoted for `sh`.
fn shell_words_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// What `explain` says of a PreToolUse `Bash` `ls` in `project`.
fn explain_bash_ls(project: &Path) -> String {
    let out = Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .args(["explain", "--event", "PreToolUse", "--tool", "Bash"])
        .args(["--input", r#"{"command": "ls"}"#, "--project-dir"])
        .arg(project)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn explain_says_which_installs_let_a_tool_run_when_wasm_hooks_is_missing() {
    let project = tempfile::tempdir().unwrap();
    wasm_hooks(&["install", "claude"], project.path()).success();
    wasm_hooks(&["install", "codex"], project.path()).success();
    let text = explain_bash_ls(project.path());
    let line = |agent: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(agent))
            .unwrap_or_else(|| panic!("{agent} in:\n{text}"))
            .to_owned()
    };
    assert!(line("Claude Code").contains("(12 events): a failing or missing wasm-hooks blocks"));
    assert!(line("Codex").contains("lets the tool run"), "{text}");
    // An entry of an older install, without `onFailure`, is named.
    let file = project.path().join(".claude/settings.local.json");
    let older = std::fs::read_to_string(&file).unwrap().replacen(
        r#""onFailure": "block""#,
        r#""onFailure": "continue""#,
        1,
    );
    std::fs::write(&file, older).unwrap();
    let text = explain_bash_ls(project.path());
    assert!(
        text.contains("lets PreToolUse through: `wasm-hooks install claude` again"),
        "{text}"
    );
}

#[test]
fn the_paths_to_a_shell_no_hook_reaches_are_said_by_install_and_explain() {
    let project = tempfile::tempdir().unwrap();
    wasm_hooks(&["install", "copilot"], project.path())
        .success()
        .stdout(predicate::str::contains(
            "no guard sees these: Copilot CLI's interactive `!command`",
        ));
    wasm_hooks(&["install", "opencode"], project.path())
        .success()
        .stdout(predicate::str::contains(
            "its terminals (PTY) run with no hook",
        ));
    wasm_hooks(&["install", "claude"], project.path())
        .success()
        .stdout(predicate::str::contains("no guard sees").not());
    let text = explain_bash_ls(project.path());
    assert!(
        text.contains("note: no guard sees these: Copilot CLI's"),
        "{text}"
    );
    assert!(
        text.contains("note: no guard sees these: OpenCode's"),
        "{text}"
    );
}

/// A script for `node` that loads the OpenCode plugin at `plugin` as
/// OpenCode would and calls its `tool.execute.before` for a `bash` call of
/// each command given, printing what became of each as JSON lines.
const OPENCODE_HARNESS: &str = r#"
const [plugin, directory, ...commands] = process.argv.slice(2);
const { WasmHooks } = await import(plugin);
const hooks = await WasmHooks({ client: {}, directory });
for (const command of commands) {
  const output = { args: { command, description: "d" } };
  try {
    await hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_1", callID: "c1" }, output);
    console.log(JSON.stringify({ command, ran: output.args.command }));
  } catch (e) {
    console.log(JSON.stringify({ command, blocked: e.message }));
  }
}
"#;

#[test]
fn opencode_gets_a_plugin_that_blocks_through_wasm_hooks_and_when_it_is_missing() {
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    std::fs::create_dir_all(dir.join(".wasm-hooks")).unwrap();
    std::fs::write(
        dir.join(".wasm-hooks/hooks.json"),
        serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "inline", "name": "no-rm", "rules": [
                {"field": "tool_input.command", "operator": "starts_with", "value": "rm -rf",
                 "action": "deny", "reason": "no rm -rf here"},
                {"field": "tool_input.command", "operator": "equals", "value": "echo original",
                 "action": "modify", "modify_field": "args.command", "modify_value": "echo rewritten"}]}]}]}})
        .to_string(),
    )
    .unwrap();
    // Installed by a copy of wasm-hooks, which goes later on.
    let bin = tempfile::tempdir().unwrap();
    let exe = bin.path().join("wasm-hooks");
    std::fs::copy(assert_cmd::cargo::cargo_bin("wasm-hooks"), &exe).unwrap();
    Command::new(&exe)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env_remove("XDG_RUNTIME_DIR")
        .args(["install", "opencode", "--project-dir"])
        .arg(dir)
        .assert()
        .success()
        .stdout(predicate::str::contains("installed wasm-hooks on a plugin"));
    let plugin = dir.join(".opencode/plugin/wasm-hooks.local.js");
    let text = std::fs::read_to_string(&plugin).unwrap();
    assert!(
        text.contains(&format!(
            r#"const COMMAND = [{},"hook","--protocol","opencode"];"#,
            serde_json::json!(exe)
        )),
        "by its absolute path: {text}"
    );
    std::fs::write(dir.join("harness.mjs"), OPENCODE_HARNESS).unwrap();
    let state = tempfile::tempdir().unwrap();
    Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("XDG_STATE_HOME", state.path())
        .args(["trust", "--yes", "--project-dir"])
        .arg(dir)
        .assert()
        .success();
    let run = |path: &std::ffi::OsStr| {
        let out = Command::new("node")
            .arg(dir.join("harness.mjs"))
            .arg(&plugin)
            .arg(dir)
            .args(["rm -rf victim", "echo original", "ls"])
            .env("PATH", path)
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .env("XDG_STATE_HOME", state.path())
            .env("WASM_HOOKS_DAEMON", "off")
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect::<Vec<_>>()
    };
    let answered = run(std::ffi::OsStr::new("/usr/bin:/bin"));
    assert_eq!(answered[0]["blocked"], "no rm -rf here", "{answered:?}");
    assert_eq!(answered[1]["ran"], "echo rewritten", "{answered:?}");
    assert_eq!(answered[2]["ran"], "ls", "{answered:?}");
    // wasm-hooks gone: every tool call is blocked, none runs.
    drop(bin);
    let missing = run(std::ffi::OsStr::new("/usr/bin:/bin"));
    for call in &missing {
        assert!(
            call["blocked"]
                .as_str()
                .is_some_and(|why| why.contains("wasm-hooks did not answer")),
            "{missing:?}"
        );
    }
    wasm_hooks(&["uninstall", "opencode"], dir)
        .success()
        .stdout(predicate::str::contains("removed 1 wasm-hooks entries"));
    assert!(!plugin.exists());
}

#[test]
fn install_never_writes_through_a_symlink_a_repository_planted() {
    let project = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("authorized_keys");
    std::fs::write(&victim, "keep\n").unwrap();
    std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    std::fs::write(project.path().join(".claude/settings.local.json"), SETTINGS).unwrap();
    std::os::unix::fs::symlink(
        &victim,
        project.path().join(".claude/settings.local.json.bak"),
    )
    .unwrap();
    wasm_hooks(&["install", "claude"], project.path())
        .code(1)
        .stderr(predicate::str::contains(
            "is a symbolic link: not written through",
        ));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    assert_eq!(
        local_settings(project.path()),
        SETTINGS,
        "nothing half-done"
    );
}

#[test]
fn install_refuses_an_oversized_or_fifo_settings_file_unread() {
    let project = tempfile::tempdir().unwrap();
    let file = project.path().join(".claude/settings.local.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let mut huge = String::from(r#"{"padding": ""#);
    huge.push_str(&"x".repeat(5 << 20));
    huge.push_str(r#""}"#);
    std::fs::write(&file, &huge).unwrap();
    wasm_hooks(&["install", "claude"], project.path())
        .code(1)
        .stderr(
            predicate::str::contains("settings.local.json")
                .and(predicate::str::contains("more than the limit of 4194304")),
        );
    assert_eq!(std::fs::metadata(&file).unwrap().len(), huge.len() as u64);

    std::fs::remove_file(&file).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&file)
        .status()
        .unwrap();
    assert!(made.success());
    wasm_hooks(&["install", "claude"], project.path())
        .code(1)
        .stderr(predicate::str::contains("not a regular file"));
}

/// Drives the installed OpenCode plugin as OpenCode 1.18.33 does: an MCP
/// tool call (`echosrv_echo`, with the servers OpenCode's config names), a
/// session-shell command (`!rm -rf victim`: its tool part announced, then
/// `shell.env` with its call id only), a bash tool call (whose `shell.env`
/// is not asked again), and a tool's output a PostToolUse hook blocks.
const OPENCODE_SHELL_HARNESS: &str = r#"
const [plugin, directory] = process.argv.slice(2);
const { WasmHooks } = await import(plugin);
const client = { config: { get: async () => ({ data: { mcp: { echosrv: {} } } }) } };
const hooks = await WasmHooks({ client, directory });
const said = (what, run) => run().then(() => ({ what, ran: true }), (e) => ({ what, blocked: e.message }));
const results = [];
results.push(await said("mcp", () => hooks["tool.execute.before"]({ tool: "echosrv_echo", sessionID: "s", callID: "m1" }, { args: { text: "hi" } })));
for (const [callID, command] of [["sh1", "rm -rf victim"], ["sh2", "ls"]]) {
  hooks.event({ event: { type: "message.part.updated", properties: { part: { type: "tool", tool: "bash", callID, state: { status: "running", input: { command } } } } } });
  results.push(await said(command, () => hooks["shell.env"]({ cwd: directory, sessionID: "s", callID }, { env: {} })));
}
results.push(await said("unseen", () => hooks["shell.env"]({ cwd: directory, sessionID: "s", callID: "sh3" }, { env: {} })));
results.push(await said("terminal", () => hooks["shell.env"]({ cwd: directory }, { env: {} })));
const output = { title: "", output: "AKIA-secret", metadata: {} };
results.push(await said("after", () => hooks["tool.execute.after"]({ tool: "read", sessionID: "s", callID: "r1", args: { filePath: "x" } }, output)));
for (const r of results) console.log(JSON.stringify(r));
"#;

#[test]
fn opencode_guards_the_session_shell_names_mcp_tools_and_blocks_an_output() {
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    std::fs::create_dir_all(dir.join(".wasm-hooks")).unwrap();
    std::fs::write(
        dir.join(".wasm-hooks/hooks.json"),
        serde_json::json!({"hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "inline", "name": "no-rm", "rules": [
                    {"field": "tool_input.command", "operator": "starts_with", "value": "rm -rf",
                     "action": "deny", "reason": "no rm -rf here"}]}]},
                {"matcher": "mcp__echosrv__echo", "hooks": [{"type": "inline", "name": "no-echo", "rules": [
                    {"field": "tool_name", "operator": "equals", "value": "mcp__echosrv__echo",
                     "action": "deny", "reason": "no echo server"}]}]}],
            "PostToolUse": [{"matcher": "Read", "hooks": [{"type": "inline", "name": "no-keys", "rules": [
                {"field": "tool_response.output", "operator": "contains", "value": "AKIA",
                 "action": "deny", "reason": "the output held a key"}]}]}]}})
        .to_string(),
    )
    .unwrap();
    wasm_hooks(&["install", "opencode"], dir).success();
    let plugin = dir.join(".opencode/plugin/wasm-hooks.local.js");
    std::fs::write(dir.join("harness.mjs"), OPENCODE_SHELL_HARNESS).unwrap();
    let state = tempfile::tempdir().unwrap();
    Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("XDG_STATE_HOME", state.path())
        .args(["trust", "--yes", "--project-dir"])
        .arg(dir)
        .assert()
        .success();
    let out = Command::new("node")
        .arg(dir.join("harness.mjs"))
        .arg(&plugin)
        .arg(dir)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("XDG_STATE_HOME", state.path())
        .env("WASM_HOOKS_DAEMON", "off")
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let results: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let blocked = |n: usize| {
        results[n]["blocked"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert!(blocked(0).contains("no echo server"), "{results:?}");
    assert!(blocked(1).contains("no rm -rf here"), "{results:?}");
    assert_eq!(results[2]["ran"], true, "{results:?}");
    assert!(
        blocked(3).contains("could not see the command"),
        "an unseen command does not run: {results:?}"
    );
    assert_eq!(
        results[4]["ran"], true,
        "a terminal has nothing to guard: {results:?}"
    );
    assert!(blocked(5).contains("the output held a key"), "{results:?}");
}

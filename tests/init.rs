//! `wasm-hooks init`: a starter hook file that validates clean and guards
//! at once, the local layer git-ignored once, and no file overwritten.

fn wasm_hooks(dir: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("wasm-hooks").unwrap();
    cmd.env("XDG_CONFIG_HOME", "/nonexistent").current_dir(dir);
    cmd
}

#[test]
fn init_writes_a_starter_that_validates_clean_and_denies_a_force_push() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join(".gitignore"), "target/").unwrap();
    let out = wasm_hooks(project.path()).arg("init").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("next:") && said.contains("wasm-hooks validate"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join(".gitignore")).unwrap(),
        "target/\n# wasm-hooks: your own hooks, not shared\n.wasm-hooks/hooks.local.json\n"
    );
    wasm_hooks(project.path())
        .args(["validate", "--deny-warnings"])
        .assert()
        .code(0)
        .stdout("ok: 1 hook in 1 file\n");
    wasm_hooks(project.path())
        .args(["run", "-e", "PreToolUse", "-t", "Bash", "-i"])
        .arg(r#"{"command": "git push --force origin main"}"#)
        .assert()
        .code(2);
    wasm_hooks(project.path())
        .args(["run", "-e", "PreToolUse", "-t", "Bash", "-i"])
        .arg(r#"{"command": "git push origin main"}"#)
        .assert()
        .code(0);
    let starter = std::fs::read(project.path().join(".wasm-hooks/hooks.json")).unwrap();
    serde_json::from_slice::<serde_json::Value>(&starter)
        .expect("plain JSON, which jq and Python's json read");
    let again = wasm_hooks(project.path()).arg("init").output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    assert_eq!(
        std::fs::read(project.path().join(".wasm-hooks/hooks.json")).unwrap(),
        starter,
        "nothing overwritten"
    );
}

/// A project whose agent settings already hold hooks: `init` names the
/// command that moves them into the new hook file.
#[test]
fn init_offers_to_import_the_hooks_an_agent_already_has() {
    let project = project_with_claude_hooks();
    let out = wasm_hooks(project.path()).arg("init").output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("wasm-hooks import claude") && said.contains(".claude/settings.json"),
        "{said}"
    );
    assert!(!said.contains("import codex"), "{said}");
}

/// A project whose Claude Code settings hold a command hook.
fn project_with_claude_hooks() -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    std::fs::write(
        project.path().join(".claude/settings.json"),
        r#"{"permissions": {}, "hooks": {"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": "./check.sh"}]}]}}"#,
    )
    .unwrap();
    project
}

/// On a terminal, `init` offers the import itself: the diff of both files,
/// then a question; "n" writes nothing of it.
#[test]
fn init_on_a_terminal_shows_the_import_and_asks_before_moving_anything() {
    let project = project_with_claude_hooks();
    let settings = std::fs::read(project.path().join(".claude/settings.json")).unwrap();
    // `script` gives `init` a terminal, and passes it the answer.
    let out = std::process::Command::new("script")
        .args([
            "-qec",
            concat!(env!("CARGO_BIN_EXE_wasm-hooks"), " init"),
            "/dev/null",
        ])
        .current_dir(project.path())
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(b"n\n")?;
            child.wait_with_output()
        })
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("+            \"command\": \"./check.sh\"")
            && said.contains("1 command hook moves into wasm-hooks' hook files")
            && said.contains("Move them? [y/N]")
            && said.contains("nothing written"),
        "{said}"
    );
    assert_eq!(
        std::fs::read(project.path().join(".claude/settings.json")).unwrap(),
        settings
    );
}

/// `init --import --yes` (no terminal needed) moves the hooks beside the
/// starter's rule, and leaves Claude Code only wasm-hooks' own entry.
#[test]
fn init_with_import_moves_the_agents_hooks_beside_the_starter() {
    let project = project_with_claude_hooks();
    wasm_hooks(project.path())
        .args(["init", "--import", "--yes"])
        .assert()
        .success();
    let hooks = std::fs::read_to_string(project.path().join(".wasm-hooks/hooks.json")).unwrap();
    let hooks: serde_json::Value = serde_json::from_str(&hooks).unwrap();
    let groups = hooks["hooks"]["PreToolUse"].as_array().unwrap();
    assert!(
        groups.iter().any(|g| g["hooks"][0]["type"] == "inline")
            && groups
                .iter()
                .any(|g| g["hooks"][0]["command"] == "./check.sh"),
        "{hooks:#}"
    );
    let settings = std::fs::read_to_string(project.path().join(".claude/settings.json")).unwrap();
    assert!(!settings.contains("./check.sh"), "{settings}");
    // This build is not the `wasm-hooks` on PATH: its entry goes to the
    // uncommitted settings.
    let local =
        std::fs::read_to_string(project.path().join(".claude/settings.local.json")).unwrap();
    assert!(
        local.contains("wasm-hooks hook --protocol claude"),
        "{local}"
    );
}

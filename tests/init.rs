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
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    std::fs::write(
        project.path().join(".claude/settings.json"),
        r#"{"permissions": {}, "hooks": {"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": "./check.sh"}]}]}}"#,
    )
    .unwrap();
    let out = wasm_hooks(project.path()).arg("init").output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("wasm-hooks import claude") && said.contains(".claude/settings.json"),
        "{said}"
    );
    assert!(!said.contains("import codex"), "{said}");
}

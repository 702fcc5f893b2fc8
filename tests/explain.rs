//! `explain` (and `--explain` on `run` and `hook`): the project chosen and
//! why, the hook files looked for, and why each hook ran or not.

use std::path::Path;

use serde_json::{Value, json};

fn wasm_hooks() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("wasm-hooks").unwrap();
    cmd.env("XDG_CONFIG_HOME", "/nonexistent")
        .env_remove("CLAUDE_PROJECT_DIR");
    cmd
}

/// A project whose hook file holds one hook of each fate for a Bash
/// `rm -rf` PreToolUse, with the project trusted by being given as the
/// user's file (`--config`).
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".wasm-hooks")).unwrap();
    let rule = |value: &str| json!([{"field": "tool_input.command", "operator": "contains", "value": value, "action": "deny", "reason": "no"}]);
    let file = json!({"hooks": {
        "PreToolUse": [
            {"matcher": "Edit", "hooks": [{"name": "edits-only", "type": "inline", "rules": rule("x")}]},
            {"matcher": "Bash", "hooks": [
                {"name": "git-only", "type": "inline", "if": "Bash(git *)", "rules": rule("x")},
                {"name": "no-rm", "type": "inline", "rules": rule("rm -rf")},
                {"name": "after-the-deny", "type": "inline", "rules": rule("x")}
            ]}
        ],
        "Stop": [{"hooks": [{"name": "on-stop", "type": "inline", "rules": rule("x")}]}]
    }});
    std::fs::write(
        dir.path().join(".wasm-hooks/hooks.json"),
        serde_json::to_vec_pretty(&file).unwrap(),
    )
    .unwrap();
    dir
}

/// `wasm-hooks ARGS` run from `dir`, fed the `rm -rf` event of `project`.
fn fed(dir: &Path, args: &[&str], project: &Path) -> std::process::Output {
    wasm_hooks()
        .current_dir(dir)
        .args(args)
        .write_stdin(event_in(project))
        .output()
        .unwrap()
}

fn event_in(cwd: &Path) -> String {
    json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": cwd,
           "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}})
    .to_string()
}

#[test]
fn explain_says_why_each_hook_ran_or_not_and_which_project_and_files() {
    let project = project();
    let config = project.path().join(".wasm-hooks/hooks.json");
    let out = wasm_hooks()
        .current_dir("/")
        .args(["explain", "--config"])
        .arg(&config)
        .write_stdin(event_in(project.path()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "the deny's exit code");
    let text = String::from_utf8(out.stdout).unwrap();
    let line_of = |hook: &str| {
        text.lines()
            .find(|l| l.contains(&format!(" {hook}: ")))
            .unwrap_or_else(|| panic!("{hook} in:\n{text}"))
            .to_owned()
    };
    assert!(
        line_of("edits-only")
            .contains("skipped   edits-only: its matcher `Edit` does not fit `Bash`"),
        "{text}"
    );
    assert!(
        line_of("git-only")
            .contains("skipped   git-only: its `if` rule `Bash(git *)` does not hold"),
        "{text}"
    );
    assert!(
        line_of("no-rm").contains("ran       no-rm: deny in "),
        "{text}"
    );
    assert!(
        line_of("after-the-deny").contains("not run   after-the-deny: a hook before it decided"),
        "{text}"
    );
    assert!(
        line_of("on-stop").contains("skipped   on-stop: it is on Stop"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "project:  {}\n          chosen by the event's `cwd`",
            project.path().display()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("read       {}", config.display())),
        "{text}"
    );
    assert!(text.ends_with("decision: deny, by no-rm\n"), "{text}");

    let out = wasm_hooks()
        .current_dir("/")
        .args(["explain", "--json", "--config"])
        .arg(&config)
        .write_stdin(event_in(project.path()))
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let fates: Vec<(&str, &str)> = report["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["hook"].as_str().unwrap(), h["fate"].as_str().unwrap()))
        .collect();
    assert_eq!(
        fates,
        [
            ("edits-only", "skipped"),
            ("git-only", "skipped"),
            ("no-rm", "ran"),
            ("after-the-deny", "not_reached"),
            ("on-stop", "skipped")
        ]
    );
    assert_eq!(report["hooks"][0]["because"], "matcher");
    assert_eq!(report["hooks"][1]["because"], "condition");
    assert_eq!(report["hooks"][4]["because"], "event");
    assert_eq!(report["project"]["dir"], json!(project.path()));
    assert_eq!(report["outcome"]["decision"], "deny");
}

#[test]
fn a_hook_switched_off_by_a_higher_layer_is_explained_and_listed() {
    let project = project();
    let local = project.path().join(".wasm-hooks/hooks.local.json");
    std::fs::write(
        &local,
        json!({"hooks": {"PreToolUse": [{"name": "no-rm", "enabled": false}]}}).to_string(),
    )
    .unwrap();
    let out = wasm_hooks()
        .current_dir("/")
        .args(["explain", "--config"])
        .arg(&local)
        .arg("--config")
        .arg(project.path().join(".wasm-hooks/hooks.json"))
        .write_stdin(event_in(project.path()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "left out  no-rm: it fits, but is left out: switched off by `enabled: false` in a higher layer"
        ),
        "{text}"
    );
    assert!(text.contains("ran       after-the-deny: proceed"), "{text}");
    // `list` names it too, where it would be.
    let listed = wasm_hooks()
        .current_dir("/")
        .args([
            "list",
            "--event",
            "PreToolUse",
            "--tool",
            "Bash",
            "--config",
        ])
        .arg(&local)
        .arg("--config")
        .arg(project.path().join(".wasm-hooks/hooks.json"))
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains(
            "no-rm  (inline)  not run: switched off by `enabled: false` in a higher layer"
        ),
        "{listed}"
    );
}

#[test]
fn hook_explain_answers_the_agent_unchanged_and_explains_on_stderr() {
    let project = project();
    let plain = fed(Path::new("/"), &["hook"], project.path());
    let explained = fed(Path::new("/"), &["hook", "--explain"], project.path());
    assert_eq!(plain.stdout, explained.stdout);
    assert_eq!(plain.status.code(), explained.status.code());
    let stderr = String::from_utf8_lossy(&explained.stderr);
    assert!(stderr.contains("chosen by the event's `cwd`"), "{stderr}");
    assert!(stderr.contains("ran       no-rm: deny"), "{stderr}");
}

#[test]
fn run_explain_says_it_read_the_current_directory_not_the_events_cwd() {
    let project = project();
    let elsewhere = tempfile::tempdir().unwrap();
    let out = fed(elsewhere.path(), &["run", "--explain"], project.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("chosen by the current directory (`run` does not follow the event's `cwd`)"),
        "{text}"
    );
    assert!(text.contains("(no hooks loaded)"), "{text}");
    assert!(text.ends_with("decision: proceed\n"), "{text}");
}

/// The first hook file of docs/hook-files.md, with its plugin path
/// pointing at the built example plugin.
fn readme_hook_file(dir: &Path) -> std::path::PathBuf {
    let page = std::fs::read_to_string(crate::support::workspace_root().join("docs/hook-files.md"))
        .unwrap();
    let section = page.split("# A hook file").nth(1).unwrap();
    let block = section
        .split("```json\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap();
    let plugin = crate::support::plugin("deny-dangerous-commands");
    let text = block.replace(
        "plugins/deny_dangerous_commands.wasm",
        plugin.to_str().unwrap(),
    );
    let file = dir.join("hooks.json");
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn explain_on_the_readmes_example_shows_why_each_hook_ran_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let file = readme_hook_file(dir.path());
    let explain = |tool: &str, command: &str| {
        let out = wasm_hooks()
            .current_dir(dir.path())
            .args(["explain", "--config"])
            .arg(&file)
            .args(["--event", "PreToolUse", "--tool", tool, "--input"])
            .arg(json!({"command": command}).to_string())
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let text = explain("Bash", "git push --force");
    assert!(
        text.contains("ran       deny_dangerous_commands: deny in "),
        "{text}"
    );
    assert!(
        text.contains("not run   ./scripts/audit.sh: a hook before it decided"),
        "{text}"
    );
    assert!(
        text.ends_with("decision: deny, by deny_dangerous_commands\n"),
        "{text}"
    );
    let text = explain("Edit", "x");
    assert!(
        text.contains("skipped   deny_dangerous_commands: its matcher `Bash` does not fit `Edit`"),
        "{text}"
    );
    assert!(
        text.contains("skipped   ./scripts/audit.sh: its matcher `Bash` does not fit `Edit`"),
        "{text}"
    );
}

#[test]
fn the_audit_record_of_a_dispatch_says_which_hooks_did_not_fit_and_why() {
    let project = project();
    let log = project.path().join("audit.jsonl");
    wasm_hooks()
        .current_dir(project.path())
        .args(["run", "--config", ".wasm-hooks/hooks.json", "--audit-log"])
        .arg(&log)
        .write_stdin(event_in(project.path()))
        .assert()
        .code(2);
    let dispatch: Value = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["kind"] == "dispatch")
        .unwrap();
    assert_eq!(
        dispatch["data"]["skipped"],
        json!([
            {"hook": "edits-only", "because": "matcher"},
            {"hook": "git-only", "because": "condition"},
            {"hook": "on-stop", "because": "event"}
        ]),
        "{dispatch:#}"
    );
}

/// A hook file with a SessionStart hook adding context and a Bash hook
/// rewriting `npm install` to `pnpm install`.
fn producing() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hooks.json");
    let hooks = json!({"hooks": {
        "SessionStart": [{"hooks": [{"name": "notes", "type": "inline", "rules": [{
            "field": "hook_event_name", "operator": "equals", "value": "SessionStart",
            "action": "inject_context", "reason": "project notes: run make test"}]}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"name": "pnpm", "type": "inline", "rules": [{
            "field": "tool_input.command", "operator": "equals", "value": "npm install",
            "action": "modify", "modify_field": "tool_input.command", "modify_value": "pnpm install"}]}]}]
    }});
    std::fs::write(&file, hooks.to_string()).unwrap();
    (dir, file)
}

/// `explain` shows, under each hook that ran, what its answer carried: a
/// SessionStart's added context, a rewrite (in words and in `--json`).
#[test]
fn explain_shows_the_context_and_rewrite_each_hook_produced() {
    let (dir, file) = producing();
    let said = wasm_hooks()
        .current_dir(dir.path())
        .args(["explain", "--event", "SessionStart", "-c"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&said.stdout);
    assert!(
        text.contains("ran       notes: proceed")
            && text.contains("context: project notes: run make test"),
        "{text}"
    );
    let said = wasm_hooks()
        .current_dir(dir.path())
        .args(["explain", "--event", "PreToolUse", "--tool", "Bash", "-c"])
        .arg(&file)
        .args(["--input", r#"{"command":"npm install"}"#])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&said.stdout);
    assert!(
        text.contains(r#"rewrote the input to {"command":"pnpm install"}"#),
        "{text}"
    );
    let said = wasm_hooks()
        .current_dir(dir.path())
        .args(["explain", "--json", "--event", "SessionStart", "-c"])
        .arg(&file)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&said.stdout).unwrap();
    let notes = report["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["hook"] == "notes")
        .unwrap();
    assert_eq!(notes["context"], "project notes: run make test", "{report}");
}

/// `run --explain` prints the run's own report and the explanation, not
/// the explanation instead of it.
#[test]
fn run_explain_prints_the_runs_report_and_the_explanation() {
    let (dir, file) = producing();
    let said = wasm_hooks()
        .current_dir(dir.path())
        .args(["run", "--explain", "--event", "SessionStart", "-c"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&said.stdout);
    assert!(
        text.contains("context (notes): project notes")
            && text.contains("1 hook ran in")
            && text.contains("ran       notes:")
            && text.ends_with("decision: proceed\n"),
        "{text}"
    );
}

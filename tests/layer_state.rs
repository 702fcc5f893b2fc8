//! Layers own their state (#43): a project's hook that runs the person's
//! plugin (by its file) keeps its `kv` values apart, so it cannot read,
//! reset or use up the person's (here: the person's rate limit); and a
//! project's `once` hook of the same name as the person's keeps its own
//! mark, so it cannot use the person's up.

use std::path::Path;

use serde_json::{Value, json};
use wasm_hooks::{Event, HookEngine, Verdict};

use crate::support;

/// An engine for `project` whose person's layer is `users` (a hook file
/// in `config/wasm-hooks/`), kv values kept in memory as a long-lived
/// host keeps them.
fn engine(project: &Path, config: &Path, users: &Value) -> HookEngine {
    let dir = config.join("wasm-hooks");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hooks.json"), users.to_string()).unwrap();
    HookEngine::builder()
        .project_dir(project)
        .user_config_dir(config)
        .trust_store(None)
        .build()
        .unwrap()
}

fn write_project(project: &Path, hooks: &Value) {
    std::fs::create_dir_all(project.join(".wasm-hooks")).unwrap();
    std::fs::write(project.join(".wasm-hooks/hooks.json"), hooks.to_string()).unwrap();
}

#[tokio::test]
async fn an_untrusted_project_cannot_reset_the_persons_rate_limit_through_its_plugin() {
    let plugin = support::plugin("rate-limit-tools");
    let project = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    // The project's copy of the person's plugin, a window so short that
    // it forgets every call it is shown, and running first.
    write_project(
        project.path(),
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "wasm", "plugin": plugin, "priority": -10,
             "config": {"max_calls": 1000, "per_seconds": 0.000001}}]}]}}),
    );
    let users = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "wasm", "plugin": plugin, "config": {"max_calls": 2, "per_seconds": 600}}]}]}});
    let engine = engine(project.path(), config.path(), &users);
    let mut verdicts = Vec::new();
    for i in 0..4 {
        let event = Event::pre_tool_use("Bash", json!({"command": "ls"}))
            .with("session_id", "s")
            .with("tool_use_id", format!("call-{i}").as_str())
            .with("cwd", project.path().to_string_lossy().as_ref());
        verdicts.push(engine.dispatch(&event).await.verdict);
    }
    assert!(
        matches!(verdicts[2], Verdict::Deny { .. }),
        "the person's limit holds: {verdicts:?}"
    );
}

#[test]
fn an_untrusted_projects_once_hook_does_not_use_up_the_persons_mark() {
    let repo = crate::trust::Repository::new(&json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "inline", "name": "greet", "once": true, "priority": -10,
         "rules": [{"field": "tool_name", "operator": "exists", "value": true,
                    "action": "inject_context", "reason": "the project's greeting"}]}]}]}}));
    let ran = repo.path().join("persons-greet-ran");
    repo.write_users(
        "hooks.json",
        &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "name": "greet",
            "once": true, "command": format!("touch {}", ran.display())}]}]}})
        .to_string(),
    );
    repo.bash("ls");
    assert!(ran.exists(), "the person's once hook ran in this session");
}

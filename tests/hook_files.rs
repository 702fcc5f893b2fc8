//! Hook files in every shape and syntax load to the same registry, with the
//! real `deny-dangerous-commands` plugin: Claude Code's settings shape in
//! JSON and YAML, profile-style YAML, and the flat list in JSON and YAML.

use crate::support;

use std::path::Path;

use serde_json::json;
use support::plugin;
use wasm_hooks::{Event, EventName, HookEngine, HookSpec, Verdict};

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// What identifies a registered hook, for comparing registries.
fn summary(spec: &HookSpec) -> (String, Vec<EventName>, String, i32, String, bool) {
    (
        spec.id.to_string(),
        spec.events.events().collect(),
        format!("{:?}", spec.matcher),
        spec.priority,
        format!("{:?}", spec.on_failure),
        spec.background,
    )
}

#[tokio::test]
async fn every_shape_loads_to_the_same_registry() {
    let dir = tempfile::tempdir().unwrap();
    let wasm = plugin("deny-dangerous-commands");
    let wasm = wasm.display();
    let files = [
        write(
            dir.path(),
            "claude.json",
            &format!(
                r#"{{"permissions": {{}}, "hooks": {{
                    "PreToolUse": [{{"matcher": "Bash", "hooks": [
                        {{"type": "wasm", "plugin": "{wasm}", "name": "guard", "priority": 1, "on_failure": "block"}}]}}],
                    "session:end": [{{"hooks": [{{"type": "wasm", "plugin": "{wasm}", "name": "bye", "async": true}}]}}]}}}}"#
            ),
        ),
        write(
            dir.path(),
            "claude.yaml",
            &format!(
                "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: wasm\n          plugin: {wasm}\n          name: guard\n          priority: 1\n          on_failure: block\n  session:end:\n    - hooks:\n        - {{type: wasm, plugin: {wasm}, name: bye, async: true}}\n"
            ),
        ),
        write(
            dir.path(),
            "profile.yaml",
            &format!(
                "hooks:\n  PreToolUse:\n    - type: wasm\n      plugin: {wasm}\n      matcher: Bash\n      name: guard\n      priority: 1\n      on_failure: block\n  SessionStop:\n    - type: wasm\n      plugin: {wasm}\n      name: bye\n      async: true\n"
            ),
        ),
        write(
            dir.path(),
            "flat.json",
            &format!(
                r#"{{"hooks": [
                    {{"event": "tool:pre_execute", "matcher": "Bash", "type": "wasm", "plugin": "{wasm}", "name": "guard", "priority": 1, "on_failure": "block"}},
                    {{"event": "session:end", "type": "wasm", "plugin": "{wasm}", "name": "bye", "async": true}}]}}"#
            ),
        ),
        write(
            dir.path(),
            "flat.yml",
            &format!(
                "hooks:\n  - event: PreToolUse\n    matcher: Bash\n    type: wasm\n    plugin: {wasm}\n    name: guard\n    priority: 1\n    on_failure: block\n  - {{event: SessionEnd, type: wasm, plugin: {wasm}, name: bye, async: true}}\n"
            ),
        ),
    ];
    let mut registries = Vec::new();
    for file in &files {
        let engine = HookEngine::builder()
            .hook_file(file)
            .build()
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let denied = engine
            .dispatch(Event::pre_tool_use("Bash", json!({"command": "rm -rf /"})))
            .await;
        assert!(denied.is_denied(), "{}", file.display());
        let other_tool = engine
            .dispatch(Event::pre_tool_use("Edit", json!({"command": "rm -rf /"})))
            .await;
        assert_eq!(other_tool.verdict, Verdict::Proceed, "{}", file.display());
        registries.push(engine.hooks().iter().map(summary).collect::<Vec<_>>());
    }
    assert_eq!(registries[0].len(), 2);
    for (file, registry) in files.iter().zip(&registries) {
        assert_eq!(
            registry,
            &registries[0],
            "{} differs from claude.json",
            file.display()
        );
    }
}

#[tokio::test]
async fn event_patterns_name_events_in_keys_and_entries() {
    let wasm = plugin("deny-dangerous-commands");
    let file = support::write_hook_file(&json!({"hooks": [
        {"event": "tool:pre_execute:bash", "type": "wasm", "plugin": wasm, "name": "lowercase-bash"},
    ]}));
    let engine = HookEngine::builder().hook_file(&file.path).build().unwrap();
    // Gemini CLI and seed 003 name the shell tool in lower case.
    let outcome = engine
        .dispatch(Event::pre_tool_use("bash", json!({"command": "rm -rf /"})))
        .await;
    assert!(outcome.is_denied());
    let outcome = engine
        .dispatch(Event::pre_tool_use(
            "run_shell_command",
            json!({"command": "rm -rf /"}),
        ))
        .await;
    assert!(
        outcome.trace.is_empty(),
        "the suffix restricts the hook to bash"
    );

    let file = support::write_hook_file(&json!({"hooks": {
        "tool:*": [{"hooks": [{"type": "wasm", "plugin": wasm, "name": "all-tool-events"}]}]
    }}));
    let engine = HookEngine::builder().hook_file(&file.path).build().unwrap();
    let spec = &engine.hooks()[0];
    assert_eq!(
        spec.events.events().collect::<Vec<_>>(),
        [
            EventName::PreToolUse,
            EventName::PostToolUse,
            EventName::PostToolUseFailure
        ]
    );
}

#[test]
fn several_problems_in_several_files_are_reported_together() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", r#"{"hooks": {"PreToolUze": []}}"#);
    let b = write(
        dir.path(),
        "b.yaml",
        "hooks:\n  Stop:\n    - hooks:\n        - {type: wasm, plugin: missing.wasm}\n        - {type: wasm}\n",
    );
    let err = HookEngine::builder()
        .hook_file(&a)
        .hook_file(&b)
        .build()
        .unwrap_err();
    let text = err.to_string();
    assert_eq!(err.errors.len(), 3, "{text}");
    assert!(text.starts_with("3 problems in hook files"), "{text}");
    assert!(
        text.contains("a.json:1:") && text.contains("did you mean `PreToolUse`"),
        "{text}"
    );
    assert!(
        text.contains("b.yaml:4:11: hooks.Stop[0].hooks[0]: loading plugin")
            && text.contains("missing.wasm: file not found"),
        "{text}"
    );
    assert!(
        text.contains("b.yaml:5:11: hooks.Stop[0].hooks[1]: a wasm hook needs `plugin`"),
        "{text}"
    );
}

/// `instance` is in a wasm hook's identity only when it is not the
/// default: a copy that says `fresh` and one that says nothing are the
/// same hook (written before the field existed, it still runs once), one
/// that says `reuse` is another.
#[test]
fn a_wasm_hooks_instance_is_in_its_identity_only_when_not_the_default() {
    let guard = plugin("deny-dangerous-commands");
    let hooks_with = |instance: &str| {
        let dir = tempfile::tempdir().unwrap();
        let entry = |extra: serde_json::Value| {
            let mut e = json!({"type": "wasm", "plugin": guard});
            e.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            e
        };
        let doc = json!({"hooks": {"PreToolUse": [{"hooks": [
            entry(json!({})), entry(json!({"instance": instance}))]}]}});
        let file = write(dir.path(), "hooks.json", &doc.to_string());
        let engine = HookEngine::builder().hook_file(&file).build().unwrap();
        engine.hooks().len()
    };
    assert_eq!(hooks_with("fresh"), 1, "the same hook, once");
    assert_eq!(hooks_with("reuse"), 2, "another hook");
}

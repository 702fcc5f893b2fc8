//! `validate` finds every problem of a file in one run, each once, at its
//! line and column, with a "did you mean" where a near name exists; and its
//! lints catch the entries that load but silently never do what they say.

use crate::support;

use serde_json::json;

/// The lines of `validate`'s report that mention `needle`.
fn lines_with<'a>(report: &'a str, needle: &str) -> Vec<&'a str> {
    report.lines().filter(|l| l.contains(needle)).collect()
}

#[test]
fn validate_reports_eleven_mistakes_over_several_entries_each_once_with_position_and_suggestion() {
    let file = support::write_hook_file(&json!({
        "$shema": "https://example.com/schema.json",
        "hooks": {
            "PreToolUze": [
                {"matcher": "(", "hooks": [{"type": "command", "command": "true", "on_failure": "block"}]}
            ],
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [
                    {"type": "comand", "command": "true"},
                    {"type": "command", "command": "true", "timout": 5, "on_failure": "blok"},
                    {"type": "inline", "rules": [{"field": "tool_input.command", "operator": "contians", "value": "rm", "action": "deny"}]},
                    {"type": "inline", "rules": [{"field": "tool_input.command", "operator": "contains", "value": "rm", "action": "deni"}]},
                    {"type": "wasm", "plugin": "guard.wasm", "on_failure": "block", "limits": {"fuel": 0}},
                    {"type": "command", "command": "true", "if": "Bash(", "timeout_ms": 0, "on_failure": "block"}
                ]}
            ]
        }
    }));
    let (code, report) = support::validate(&file.path);
    assert_eq!(code, Some(1), "{report}");
    let expected = [
        ("$shema", "did you mean `$schema`?"),
        ("hooks.PreToolUze", "did you mean `PreToolUse`?"),
        (
            "hooks.PreToolUze[0].matcher",
            "not a valid regular expression",
        ),
        ("hooks.PreToolUse[0].hooks[0]", "did you mean `command`?"),
        (
            "hooks.PreToolUse[0].hooks[1]",
            "unknown field `timout` (did you mean `timeout`?)",
        ),
        (
            "hooks.PreToolUse[0].hooks[1].on_failure",
            "did you mean `block`?",
        ),
        ("hooks.PreToolUse[0].hooks[2]", "did you mean `contains`?"),
        ("hooks.PreToolUse[0].hooks[3]", "did you mean `deny`?"),
        (
            "hooks.PreToolUse[0].hooks[4]",
            "`limits.fuel`: 0 leaves the plugin nothing",
        ),
        ("hooks.PreToolUse[0].hooks[5]", "`if`"),
        ("hooks.PreToolUse[0].hooks[5]", "must be positive"),
    ];
    for (place, said) in expected {
        let found: Vec<&str> = lines_with(&report, said)
            .into_iter()
            .filter(|l| l.contains(&format!(": {place}")))
            .collect();
        assert_eq!(found.len(), 1, "`{said}` at {place}, once:\n{report}");
        let position = found[0]
            .split_once("hooks.json:")
            .and_then(|(_, rest)| rest.split_once(": "))
            .map(|(at, _)| at.split(':').all(|n| n.parse::<u32>().is_ok()));
        assert_eq!(
            position,
            Some(true),
            "with its line and column: {}",
            found[0]
        );
    }
    assert!(report.ends_with("11 problems\n"), "{report}");
    for line in report.lines() {
        assert!(
            line.matches('`').count() <= 2 * 10,
            "no line lists every name there is: {line}"
        );
    }
}

#[test]
fn each_silent_miss_is_a_lint_and_deny_warnings_fails_on_it() {
    let file = support::write_hook_file(&json!({"hooks": {
        "PreToolUse": [
            {"matcher": "bash", "hooks": [{"type": "command", "command": "true", "on_failure": "block"}]},
            {"matcher": "Bash", "hooks": [
                {"type": "inline", "rules": [{"field": "tool_inputs.command", "operator": "contains", "value": "rm", "action": "deny"}]},
                {"type": "command", "command": "true"}
            ]}
        ],
        "tool:pre_execute:bash": [
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "true", "on_failure": "block"}]}
        ],
        "SessionStart": [
            {"hooks": [{"type": "inline", "rules": [{"field": "tool_input.command", "operator": "exists", "action": "deny"}]}]}
        ],
        "Stop": [
            {"hooks": [{"type": "command", "command": "echo {{tool_args.file_path}}"}]}
        ]
    }}));
    let (code, report) = support::validate(&file.path);
    assert_eq!(code, Some(0), "warnings alone pass: {report}");
    let expected = [
        ("hooks.PreToolUse[0].matcher", "did you mean `Bash`?"),
        (
            "hooks.PreToolUse[1].hooks[0].rules",
            "no event carries `tool_inputs` (did you mean `tool_input`?)",
        ),
        (
            "hooks.PreToolUse[1].hooks[1].type",
            "`on_failure` defaults to `warn`",
        ),
        (
            "hooks.tool:pre_execute:bash[0].matcher",
            "names the tool `bash` but the matcher `Edit` never fits it",
        ),
        (
            "hooks.SessionStart[0].hooks[0].rules",
            "only tool events do), so `tool_input.command`",
        ),
        (
            "hooks.Stop[0].hooks[0].command",
            "so `tool_input.file_path` is never there",
        ),
    ];
    for (place, said) in expected {
        let found = lines_with(&report, said);
        assert_eq!(found.len(), 1, "`{said}` once:\n{report}");
        assert!(
            found[0].starts_with("warning: ") && found[0].contains(&format!(": {place}: ")),
            "a warning at {place}: {}",
            found[0]
        );
    }
    assert!(
        report.ends_with("ok: 6 hooks in 1 file, 6 warnings\n"),
        "{report}"
    );
    let out = assert_cmd::Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .args(["validate", "--deny-warnings", "--config"])
        .arg(&file.path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).ends_with("failed: 6 hooks in 1 file, 6 warnings\n")
    );
}

#[test]
fn a_config_the_plugins_schema_refuses_is_a_load_error_at_the_hook_files_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(support::plugin("deny-dangerous-commands")).unwrap();
    let schema = json!({"type": "object", "additionalProperties": false,
        "properties": {"patterns": {"type": "array", "items": {"type": "string"}}}});
    wasm_hooks_wasm::embed_config_schema(&mut bytes, &schema.to_string());
    let plugin = dir.path().join("guard.wasm");
    std::fs::write(&plugin, bytes).unwrap();
    let write = |config: serde_json::Value| {
        let file = dir.path().join("hooks.json");
        let doc = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "wasm", "plugin": "guard.wasm", "on_failure": "block", "config": config}]}]}});
        std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        file
    };
    let file = write(json!({"pattern": ["rm -rf /"], "patterns": "rm"}));
    let (code, report) = support::validate(&file);
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains("hooks.json:8:")
            && report
                .contains("`config.pattern`: unknown key `pattern` (did you mean `patterns`?)"),
        "{report}"
    );
    assert!(
        report.contains("`config.patterns`: \"rm\" is not of type \"array\""),
        "{report}"
    );
    assert!(report.ends_with("2 problems\n"), "{report}");
    // A later process that finds the plugin in the digest index (without
    // reading it) still knows its schema: the index records it.
    let cache = tempfile::tempdir().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100)); // the index records settled files only
    for _ in 0..2 {
        let out = assert_cmd::Command::cargo_bin("wasm-hooks")
            .unwrap()
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .args(["validate", "--cache-dir"])
            .arg(cache.path())
            .arg(&file)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.contains("unknown key `pattern`"), "{said}");
    }
    let records: Vec<String> = std::fs::read_dir(cache.path().join("digests"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(
        records.len() == 1 && records[0].contains("config-schema {\"additionalProperties\":false"),
        "{records:?}"
    );
    let (code, report) = support::validate(&write(json!({"patterns": ["rm -rf /"]})));
    assert_eq!(code, Some(0), "{report}");
    let shown = assert_cmd::Command::cargo_bin("wasm-hooks")
        .unwrap()
        .arg("inspect")
        .arg(&plugin)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("config schema:") && shown.contains("\"additionalProperties\": false"),
        "{shown}"
    );
}

#[test]
fn an_engine_that_only_dispatches_can_skip_the_lints() {
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [
        {"matcher": "bash", "hooks": [{"type": "command", "command": "true", "on_failure": "block"}]}
    ]}}));
    let linted = wasm_hooks::HookEngine::builder()
        .hook_file(&file.path)
        .build()
        .unwrap();
    assert_eq!(linted.warnings().len(), 1, "the matcher `bash`");
    let quiet = wasm_hooks::HookEngine::builder()
        .hook_file(&file.path)
        .lints(false)
        .build()
        .unwrap();
    assert!(quiet.warnings().is_empty());
    assert_eq!(quiet.hooks().len(), 1, "the same hooks load");
}

/// A guard in Claude Code's own settings that fails open is told Claude
/// Code's key (which Claude Code honours in its own file) or the import,
/// not wasm-hooks' `on_failure`, which Claude Code would ignore there.
#[test]
fn a_guard_in_claude_codes_settings_is_told_claude_codes_key_and_the_import() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".claude")).unwrap();
    let settings = dir.path().join(".claude/settings.json");
    std::fs::write(
        &settings,
        r#"{"permissions": {}, "hooks": {"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": "./x.sh"}]}]}}"#,
    )
    .unwrap();
    let (_, said) = support::validate(&settings);
    assert!(
        said.contains(r#"say `"onFailure": "block"` here"#)
            && said.contains("wasm-hooks import claude")
            && !said.contains("say `on_failure: block` for a guard"),
        "{said}"
    );
}

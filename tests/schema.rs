//! The JSON Schema of hook files: the shipped copy is what `wasm-hooks
//! schema` prints, every hook file in the repository fits it, and it
//! refuses what the loader refuses.

use crate::support;

use serde_json::{Value, json};

fn printed() -> Value {
    let out = assert_cmd::Command::cargo_bin("wasm-hooks")
        .unwrap()
        .arg("schema")
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_shipped_schema_is_the_printed_one_and_every_hook_file_here_fits_it() {
    let schema = printed();
    let shipped = support::read_json(&support::workspace_root().join("schemas/hooks.schema.json"));
    assert_eq!(
        shipped, schema,
        "run `wasm-hooks schema > schemas/hooks.schema.json`"
    );
    let validator = jsonschema::validator_for(&schema).unwrap();
    let examples = support::workspace_root().join("example-plugins");
    let mut checked = 0;
    for entry in std::fs::read_dir(&examples).unwrap() {
        let file = entry.unwrap().path().join("hooks.json");
        if file.is_file() {
            let doc = support::read_json(&file);
            let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{}: {errors:?}", file.display());
            checked += 1;
        }
    }
    assert!(checked >= 8, "{checked} example hook files");
    // Every kind and shape, with Claude Code's spellings.
    let every_kind = json!({"$schema": "./hooks.schema.json", "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [
                {"type": "wasm", "plugin": "g.wasm", "config": {"a": 1}, "onFailure": "block",
                 "limits": {"fuel": 1000, "memory_mb": 16}, "allow_read": ["${PROJECT_DIR}"]},
                {"type": "command", "command": "./check.sh", "timeout": 30, "if": "Bash(git *)"},
                {"type": "inline", "rules": [{"field": "tool_input.command", "operator": "contains", "value": "rm", "action": "deny"}]},
                {"type": "http", "url": "http://127.0.0.1:9/hook", "allowedEnvVars": ["TOKEN"]},
                {"type": "prompt", "prompt": "Is $ARGUMENTS safe?", "continueOnBlock": true},
                {"type": "mcp_tool", "server": "vault", "tool": "check", "input": {"x": "${tool_input.command}"}}
            ]}
        ],
        "tool:pre_execute:bash": [{"type": "matcher", "match": {"tool": "Bash", "args": {"command": "rm *"}}, "action": "deny"}]
    }});
    let errors: Vec<String> = validator
        .iter_errors(&every_kind)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let flat = json!({"hooks": [{"event": "tool:pre", "type": "command", "command": "true"}]});
    assert!(validator.is_valid(&flat));
}

#[test]
fn the_schema_refuses_what_the_loader_refuses() {
    let validator = jsonschema::validator_for(&printed()).unwrap();
    let refused = [
        json!({"hoks": {}}),
        json!({"hooks": {"PreToolUze": []}}),
        json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "comand", "command": "x"}]}]}}),
        json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timout": 5}]}]}}),
        json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "on_failure": "blok"}]}]}}),
        json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "wasm", "plugin": "p", "limits": {"fuell": 1}}]}]}}),
        json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "inline", "rules": [{"field": "x", "operator": "contians"}]}]}]}}),
        json!({"hooks": [{"type": "command", "command": "x"}]}),
    ];
    for doc in refused {
        assert!(!validator.is_valid(&doc), "{doc}");
    }
}

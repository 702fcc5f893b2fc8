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

/// Every error the schema gives for `doc`, as `PATH: MESSAGE`.
fn errors(schema: &Value, doc: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(schema).unwrap();
    validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path))
        .collect()
}

/// An editor shows where a mistake is and what was expected: a misspelt
/// `type` is "not one of" the kinds at `/…/type`, an unknown field is named
/// at its entry, a misspelt event is "not one of" the events — never only
/// "not valid under any of the given schemas" or "does not match `[*:,]`".
#[test]
fn schema_errors_name_the_field_not_any_of_the_given_schemas() {
    let schema = printed();
    let cases = [
        (
            json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "comand", "command": "x"}]}]}}),
            "/hooks/PreToolUse/0/hooks/0/type: \"comand\" is not one of",
        ),
        (
            json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timout": 5}]}]}}),
            "/hooks/PreToolUse/0/hooks/0: Additional properties are not allowed ('timout' was unexpected)",
        ),
        (
            json!({"hooks": {"PreToolUze": []}}),
            "\"PreToolUze\" is not one of",
        ),
    ];
    for (doc, expected) in cases {
        let found = errors(&schema, &doc);
        assert!(
            found.iter().any(|e| e.contains(expected)),
            "{doc}: {found:#?}"
        );
        assert!(
            found
                .iter()
                .all(|e| !e.contains("any of the given schemas") && !e.contains("[*:,]")),
            "{doc}: {found:#?}"
        );
    }
    for fine in [
        "PreToolUse",
        "tool:pre",
        "tool:*",
        "PreToolUse:Bash",
        "Stop, SubagentStop",
    ] {
        let doc = json!({"hooks": {fine: []}});
        assert!(errors(&schema, &doc).is_empty(), "{fine}");
    }
    // Stable: editors and other repositories point at it.
    assert_eq!(
        schema["$id"],
        "https://raw.githubusercontent.com/wasm-hooks/wasm-hooks/main/schemas/hooks.schema.json"
    );
    assert!(
        schema["properties"]["hooks"]["else"]["properties"]["SessionStart"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("session")),
        "event names carry their descriptions"
    );
}

/// The schema of an agent's settings file checks its `hooks` and leaves
/// the agent's other keys (`env`, `permissions`) alone; it is shipped.
#[test]
fn the_agent_settings_schema_tolerates_env_and_permissions() {
    let schema = wasm_hooks::schema::agent_settings_schema();
    let shipped =
        support::read_json(&support::workspace_root().join("schemas/agent-settings.schema.json"));
    assert_eq!(
        shipped, schema,
        "run `wasm-hooks schema --agent-settings > schemas/agent-settings.schema.json`"
    );
    let settings = json!({"$schema": "https://json.schemastore.org/claude-code-settings.json",
        "env": {"A": "b"}, "permissions": {"allow": ["Bash(ls)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}]}});
    assert!(
        errors(&schema, &settings).is_empty(),
        "{:#?}",
        errors(&schema, &settings)
    );
    let typo = json!({"env": {}, "hooks": {"PreToolUze": []}});
    assert!(!errors(&schema, &typo).is_empty());
    assert!(
        errors(&wasm_hooks::schema::hook_file_schema(), &settings)
            .iter()
            .any(|e| e.contains("'env'"))
    );
}

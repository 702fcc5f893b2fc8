//! The neutral API (#44) for a program that is none of the agents:
//! `serve`'s `POST /v1/decide` (the canonical event in, the whole outcome
//! out), described by the OpenAPI document it publishes, and the same
//! shape per process from `hook --protocol canonical` (or `none`) and
//! `run --json`.

use crate::support;

use std::process::Command;

use serde_json::{Value, json};

use support::Served as Server;

/// A PreToolUse `Bash` guard (the `deny-dangerous-commands` wasm plugin)
/// and an inline rule that adds context to every Bash call.
fn guards() -> support::HookFile {
    support::write_hook_file(
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "wasm", "name": "dangerous", "plugin": support::plugin("deny-dangerous-commands")},
            {"type": "inline", "name": "note", "rules": [
                {"field": "tool_name", "operator": "equals", "value": "Bash",
                 "action": "inject_context", "reason": "shell calls are logged"}]}
        ]}]}}),
    )
}

/// `serve` on `hooks`, for `project`, with a token.
fn serve(hooks: &support::HookFile, project: &std::path::Path) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_wasm-hooks"));
    command
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--token-env",
            "NEUTRAL_TOKEN",
            "--config",
        ])
        .arg(&hooks.path)
        .arg("--project")
        .arg(project)
        .env("NEUTRAL_TOKEN", TOKEN)
        .env("XDG_CONFIG_HOME", "/nonexistent");
    Server::start(command)
}

const TOKEN: &str = "neutral-token-0123456789";

/// A canonical Bash call of `command` from `project`.
fn bash(project: &std::path::Path, command: &str) -> Value {
    json!({"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": project,
           "tool_name": "Bash", "tool_input": {"command": command}})
}

async fn decide(server: &Server, body: &Value, token: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/v1/decide", server.address))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// A validator for `schema`, a schema of the OpenAPI `document` (its
/// `$ref`s into the document's components resolved).
fn validator(document: &Value, schema: &Value) -> jsonschema::Validator {
    let mut root = schema.clone();
    root["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    root["components"] = document["components"].clone();
    jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("{e}: {root}"))
}

fn assert_valid(validator: &jsonschema::Validator, instance: &Value) {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{instance}");
}

/// `value` without the times (`elapsed_us`), which two runs do not share.
fn untimed(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("elapsed_us");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

#[tokio::test]
async fn decide_answers_the_canonical_event_with_the_whole_outcome_its_openapi_document_describes()
{
    let project = tempfile::tempdir().unwrap();
    let hooks = guards();
    let server = serve(&hooks, project.path());
    let document: Value = reqwest::get(format!("{}/v1/openapi.json", server.address))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        document["openapi"].as_str().unwrap().starts_with("3.1"),
        "{document}"
    );
    let operation = &document["paths"]["/v1/decide"]["post"];
    let request_schema = &operation["requestBody"]["content"]["application/json"]["schema"];
    let response_schema = &operation["responses"]["200"]["content"]["application/json"]["schema"];
    for name in document["components"]["schemas"]
        .as_object()
        .unwrap()
        .keys()
    {
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)),
            "an OpenAPI component name: {name}"
        );
    }
    let requests = validator(&document, request_schema);
    let outcomes = validator(&document, response_schema);

    // A deny, with the context the inline rule added before it, and the
    // trace of both hooks.
    let rm = bash(project.path(), "rm -rf /");
    assert_valid(&requests, &rm);
    let (status, denied) = decide(&server, &rm, Some(TOKEN)).await;
    assert_eq!(status, 200);
    assert_valid(&outcomes, &denied);
    assert_eq!(denied["decision"], "deny", "{denied}");
    assert!(
        denied["reason"]
            .as_str()
            .unwrap()
            .contains("dangerous pattern")
    );
    assert_eq!(denied["decided_by"], "dangerous");
    assert_eq!(
        denied["trace"].as_array().unwrap().len(),
        1,
        "the deny ends the chain"
    );
    let (_, allowed) = decide(&server, &bash(project.path(), "ls"), Some(TOKEN)).await;
    assert_valid(&outcomes, &allowed);
    assert_eq!(allowed["decision"], "proceed", "{allowed}");
    assert_eq!(
        allowed["contexts"][0]["value"]["text"],
        "shell calls are logged"
    );
    assert_eq!(allowed["trace"].as_array().unwrap().len(), 2);

    // Never a refusal: no token, and an event the catalogue does not know,
    // are answered with a deny that says why.
    let (status, no_token) = decide(&server, &rm, None).await;
    assert_eq!(status, 200);
    assert_valid(&outcomes, &no_token);
    assert_eq!(no_token["decision"], "deny");
    assert!(
        no_token["reason"]
            .as_str()
            .unwrap()
            .contains("bearer token"),
        "{no_token}"
    );
    let unknown = json!({"hook_event_name": "NoSuchEvent", "cwd": project.path()});
    let (status, refused) = decide(&server, &unknown, Some(TOKEN)).await;
    assert_eq!(status, 200);
    assert_valid(&outcomes, &refused);
    assert_eq!(refused["decision"], "deny");
    assert!(
        refused["reason"].as_str().unwrap().contains("NoSuchEvent"),
        "{refused}"
    );

    // The same shape per process: `hook --protocol canonical` (or `none`)
    // and `run --json` (which adds the dispatch's time).
    for word in ["canonical", "none"] {
        let out = support::output_fed(
            Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
                .args(["hook", "--protocol", word, "--config"])
                .arg(&hooks.path)
                .env("XDG_CONFIG_HOME", "/nonexistent")
                .env("WASM_HOOKS_DAEMON", "off"),
            &rm.to_string(),
        );
        assert_eq!(out.status.code(), Some(0));
        let answered: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(untimed(answered), untimed(denied.clone()), "{word}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
        .args(["run", "--json", "--event", "PreToolUse", "--tool", "Bash"])
        .args(["--input", r#"{"command": "rm -rf /"}"#, "--config"])
        .arg(&hooks.path)
        .arg("--project-dir")
        .arg(project.path())
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .unwrap();
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid(&outcomes, &run);
    assert_eq!(untimed(run), untimed(denied));
}

#[test]
fn a_process_speaking_canonical_gets_a_deny_it_can_read_when_the_hooks_cannot_run() {
    let broken = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(broken.path(), "{ broken").unwrap();
    for (event, decision) in [
        (
            json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}),
            "deny",
        ),
        (json!({"hook_event_name": "Stop"}), "proceed"),
    ] {
        let out = support::output_fed(
            Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
                .args(["hook", "--protocol", "canonical", "--config"])
                .arg(broken.path())
                .env("XDG_CONFIG_HOME", "/nonexistent")
                .env("WASM_HOOKS_DAEMON", "off"),
            &event.to_string(),
        );
        assert_eq!(out.status.code(), Some(0), "the answer is the JSON");
        let answered: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(answered["decision"], decision, "{answered}");
        let said = answered.to_string();
        let at = format!("{}:1:", broken.path().display());
        assert!(said.contains(&at), "names the file and line: {said}");
    }
}

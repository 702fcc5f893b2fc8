//! `mcp_tool` hooks against a real MCP server (`tests/mcp-server`, rmcp
//! over stdio, started by wasm-hooks): arguments filled in from the event,
//! answers read as hook answers, one server process for many events, and
//! each way a call can fail.

use crate::support;

use assert_cmd::Command;
use serde_json::{Value, json};
use wasm_hooks::{Event, HookEngine, HookError, Outcome, TraceStatus, Verdict};

/// An `mcp_tool` entry calling `tool` on the test server, started inline.
fn inline_entry(tool: &str, extra: Value) -> Value {
    let mut entry = json!({
        "type": "mcp_tool",
        "server": {"command": support::mcp_server()},
        "tool": tool,
    });
    entry
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    entry
}

fn engine_on(event: &str, entries: Vec<Value>) -> (support::HookFile, HookEngine) {
    let file = support::write_hook_file(&json!({"hooks": {event: [{"hooks": entries}]}}));
    let engine = HookEngine::builder()
        .hook_file(&file.path)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    (file, engine)
}

fn bash(command: &str) -> Event {
    Event::pre_tool_use("Bash", json!({"command": command}))
}

fn failure(outcome: &Outcome) -> &HookError {
    match &outcome.trace[0].status {
        TraceStatus::Failed { error, .. } => error,
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn contexts(outcome: &Outcome) -> Vec<&str> {
    outcome
        .contexts
        .iter()
        .map(|c| c.value.text.as_str())
        .collect()
}

#[tokio::test]
async fn an_mcp_tool_hook_denies_through_a_real_server_with_the_events_fields_as_arguments() {
    let entry = inline_entry(
        "guard_command",
        json!({"input": {"command": "${tool_input.command}"}}),
    );
    let (_file, engine) = engine_on("PreToolUse", vec![entry]);
    let denied = engine.dispatch(bash("rm -rf /tmp/x")).await;
    assert_eq!(
        denied.verdict,
        Verdict::Deny {
            reason: "mcp guard: `rm -rf /tmp/x` deletes recursively".into()
        },
        "{denied:?}"
    );
    let fine = engine.dispatch(bash("ls")).await;
    assert_eq!(fine.verdict, Verdict::Proceed, "{fine:?}");
}

#[tokio::test]
async fn a_server_named_in_the_projects_mcp_json_serves_every_event_from_one_process() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join(".mcp.json"),
        json!({"mcpServers": {"hooks": {"command": support::mcp_server(), "args": []}}})
            .to_string(),
    )
    .unwrap();
    let dir = project.path().join(".wasm-hooks");
    std::fs::create_dir(&dir).unwrap();
    let path = dir.join("hooks.json");
    std::fs::write(
        &path,
        json!({"hooks": {"PostToolUse": [{"matcher": "Read", "hooks": [
            {"type": "mcp_tool", "server": "hooks", "tool": "calls"},
            {"type": "mcp_tool", "server": "hooks", "tool": "describe_file",
             "input": {"file_path": "${tool_input.file_path}"}},
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let engine = HookEngine::builder().hook_file(&path).build().unwrap();
    let read = |file: &str| {
        Event::post_tool_use("Read", json!({"file_path": file}), json!({"content": "x"}))
    };
    let first = engine.dispatch(read("/src/a.rs")).await;
    assert_eq!(
        contexts(&first),
        ["call 1", "mcp saw file /src/a.rs"],
        "{first:?}"
    );
    let second = engine.dispatch(read("/src/b.rs")).await;
    assert_eq!(
        contexts(&second),
        ["call 3", "mcp saw file /src/b.rs"],
        "one process served both hooks and both events: {second:?}"
    );
}

#[tokio::test]
async fn a_tool_error_a_server_that_does_not_start_and_the_deadline_are_hook_failures() {
    let (_file, engine) = engine_on("PreToolUse", vec![inline_entry("sealed", json!({}))]);
    let outcome = engine.dispatch(bash("ls")).await;
    let error = failure(&outcome).to_string();
    assert!(error.contains("the vault is sealed"), "{error}");
    assert_eq!(
        outcome.verdict,
        Verdict::Proceed,
        "on_failure: warn goes on"
    );
    assert!(
        outcome.system_messages[0].value.contains("sealed"),
        "the person is told: {outcome:?}"
    );

    let missing = json!({"type": "mcp_tool", "server": {"command": "/nonexistent/mcp-server"},
        "tool": "x", "on_failure": "block"});
    let (_file, engine) = engine_on("PreToolUse", vec![missing]);
    let outcome = engine.dispatch(bash("ls")).await;
    let error = failure(&outcome).to_string();
    assert!(error.contains("cannot start MCP server"), "{error}");
    assert!(outcome.is_denied(), "on_failure: block denies");

    let slow = inline_entry("sleep", json!({"input": {"ms": 5_000}, "timeout_ms": 300}));
    let (_file, engine) = engine_on("PreToolUse", vec![slow]);
    let outcome = engine.dispatch(bash("ls")).await;
    assert!(
        matches!(failure(&outcome), HookError::Timeout { limit_ms: 300, .. }),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn plain_text_from_a_tool_is_context_where_the_agent_reads_it() {
    let (_file, engine) = engine_on("UserPromptSubmit", vec![inline_entry("greet", json!({}))]);
    let outcome = engine.dispatch(Event::user_prompt_submit("hi")).await;
    assert_eq!(contexts(&outcome), ["hello from mcp"], "{outcome:?}");
}

#[test]
fn validate_names_an_mcp_server_that_is_in_no_mcp_json() {
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "mcp_tool", "server": "nowhere", "tool": "x"},
    ]}]}}));
    let (code, said) = support::validate(&file.path);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("no MCP server `nowhere`"), "{said}");
    assert!(
        said.contains("hooks.json:6:11:"),
        "the line is named: {said}"
    );
}

#[test]
fn wasm_hooks_hook_answers_claude_code_with_the_mcp_tools_deny() {
    let file = support::write_hook_file(
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            inline_entry("guard_command", json!({"input": {"command": "${tool_input.command}"}})),
        ]}]}}),
    );
    let mut event = support::fixture_of("2.1.330", "PreToolUse");
    event["tool_input"]["command"] = json!("rm -rf ~");
    let out = Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("XDG_STATE_HOME", file.dir.path())
        .args(["hook", "--config"])
        .arg(&file.path)
        .write_stdin(event.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let body: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(body["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        body["hookSpecificOutput"]["permissionDecisionReason"],
        "mcp guard: `rm -rf ~` deletes recursively"
    );
}

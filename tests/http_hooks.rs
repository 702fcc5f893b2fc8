//! HTTP hooks against a real server on 127.0.0.1: what is sent, every kind
//! of answer, and the ways an endpoint can fail.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::http::{Response, Server};
use wasm_hooks::{Event, HookEngine, HookError, Outcome, TraceStatus, UrlAllowlist, Verdict};

fn engine_for(entry: Value) -> Result<HookEngine, wasm_hooks::LoadError> {
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [entry]}]}}));
    HookEngine::builder()
        .hook_file(&file.path)
        .hook_secrets(["CARGO_PKG_NAME".to_owned()])
        .build()
}

async fn call(server: &Server, extra: Value) -> Outcome {
    let mut entry = json!({"type": "http", "url": server.url("/hook")});
    entry
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let engine = engine_for(entry).unwrap_or_else(|e| panic!("{e}"));
    engine
        .dispatch(Event::pre_tool_use("Bash", json!({"command": "ls"})))
        .await
}

fn failure(outcome: &Outcome) -> &HookError {
    match &outcome.trace[0].status {
        TraceStatus::Failed { error, .. } => error,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[tokio::test]
async fn the_event_is_posted_as_json_and_an_allow_answer_allows() {
    let server = Server::start(|_, _| {
        Response::json(200, r#"{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":"fine"}}"#)
    })
    .await;
    let outcome = call(&server, json!({})).await;
    assert_eq!(
        outcome.verdict,
        Verdict::Allow {
            reason: Some("fine".into())
        }
    );
    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/hook")
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_str(&request.body).unwrap();
    assert_eq!(body["hook_event_name"], "PreToolUse");
    assert_eq!(body["tool_input"], json!({"command": "ls"}));
}

#[tokio::test]
async fn deny_and_modify_answers() {
    let deny =
        Server::start(|_, _| Response::json(200, r#"{"decision":"block","reason":"not today"}"#))
            .await;
    assert_eq!(
        call(&deny, json!({})).await.verdict,
        Verdict::Deny {
            reason: "not today".into()
        }
    );
    let modify = Server::start(|_, _| {
        Response::json(200, r#"{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls -la"}}}"#)
    })
    .await;
    assert_eq!(
        call(&modify, json!({})).await.updated_input,
        Some(json!({"command": "ls -la"}))
    );
    let empty = Server::start(|_, _| Response::json(200, "")).await;
    assert_eq!(call(&empty, json!({})).await.verdict, Verdict::Proceed);
}

#[tokio::test]
async fn headers_carry_only_allowed_environment_variables() {
    // Cargo sets CARGO_PKG_NAME for test processes; no test mutates the env.
    let server = Server::start(|_, _| Response::json(200, "{}")).await;
    call(
        &server,
        json!({"headers": {"X-Package": "pkg ${CARGO_PKG_NAME}", "X-Plain": "v"}, "allowed_env": ["CARGO_PKG_NAME"]}),
    )
    .await;
    let request = &server.requests()[0];
    assert_eq!(
        request.header("x-package"),
        Some(concat!("pkg ", env!("CARGO_PKG_NAME")))
    );
    assert_eq!(request.header("x-plain"), Some("v"));
    let err = engine_for(json!({"type": "http", "url": server.url("/"), "headers": {"Authorization": "Bearer $HOME"}}))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("names `$HOME`, which is not in `allowed_env`"),
        "{err}"
    );
}

#[tokio::test]
async fn a_slow_endpoint_times_out() {
    let server =
        Server::start(|_, _| Response::json(200, "{}").after(Duration::from_secs(30))).await;
    let outcome = call(&server, json!({"timeout_ms": 200})).await;
    assert!(
        matches!(failure(&outcome), HookError::Timeout { limit_ms: 200, .. }),
        "{:?}",
        failure(&outcome)
    );
    assert_eq!(
        outcome.verdict,
        Verdict::Proceed,
        "on_failure: warn goes on"
    );
}

#[tokio::test]
async fn a_500_and_a_body_that_is_not_json_are_failures() {
    let broken = Server::start(|_, _| Response::json(500, "database\non fire")).await;
    let outcome = call(&broken, json!({"on_failure": "block"})).await;
    assert!(
        matches!(failure(&outcome), HookError::HttpStatus { status: 500, body, .. } if body == "database on fire"),
        "{:?}",
        failure(&outcome)
    );
    assert!(outcome.is_denied(), "on_failure: block");
    let text = Server::start(|_, _| Response::json(200, "ok!")).await;
    let outcome = call(&text, json!({})).await;
    assert!(
        matches!(failure(&outcome), HookError::BadResult { message, .. } if message.contains("not a valid JSON answer"))
    );
    let refused = call_unreachable().await;
    assert!(
        matches!(failure(&refused), HookError::Failed { .. }),
        "{:?}",
        failure(&refused)
    );
}

async fn call_unreachable() -> Outcome {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let engine =
        engine_for(json!({"type": "http", "url": format!("http://127.0.0.1:{port}/")})).unwrap();
    engine
        .dispatch(Event::pre_tool_use("Bash", json!({})))
        .await
}

#[test]
fn urls_outside_the_allowlist_are_load_errors() {
    let err =
        engine_for(json!({"type": "http", "url": "https://hooks.example.com/pre"})).unwrap_err();
    assert!(
        err.to_string()
            .contains("`https://hooks.example.com/pre` is not in the engine's URL allowlist"),
        "{err}"
    );
    let err = engine_for(json!({"type": "http", "url": "http://127.0.0.1:80@evil.example/"}))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("not in the engine's URL allowlist"),
        "{err}"
    );
    let file = support::write_hook_file(
        &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "http", "url": "https://hooks.example.com/pre"}]}]}}),
    );
    HookEngine::builder()
        .hook_file(&file.path)
        .http_allowlist(UrlAllowlist::new(["https://hooks.example.com/*"]).unwrap())
        .build()
        .expect("an allowlisted URL loads");
}

#[test]
fn h2_an_http_hooks_header_may_send_only_the_persons_hook_secrets() {
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "http", "url": "http://127.0.0.1:9/hook",
         "headers": {"X-Key": "${AWS_SECRET_ACCESS_KEY}"}, "allowed_env": ["AWS_SECRET_ACCESS_KEY"]}]}]}}));
    let err = HookEngine::builder()
        .hook_file(&file.path)
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`allowed_env` names `AWS_SECRET_ACCESS_KEY`, which is not among the variables hooks may send"),
        "{err}"
    );
}

#[tokio::test]
async fn a_redirect_off_the_allowlist_is_not_followed_and_the_target_sees_nothing() {
    let elsewhere = Server::start(|_, _| Response::json(200, "{}")).await;
    let target = elsewhere.url("/x");
    let redirecting =
        Server::start(move |_, _| Response::json(307, "").with_header("location", &target)).await;
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [{
        "type": "http", "url": redirecting.url("/hook"), "on_failure": "block",
        "headers": {"X-Package": "${CARGO_PKG_NAME}"}, "allowed_env": ["CARGO_PKG_NAME"]}]}]}}));
    let only_the_hook = UrlAllowlist::new([format!("http://{}/*", redirecting.addr)]).unwrap();
    let engine = HookEngine::builder()
        .hook_file(&file.path)
        .http_allowlist(only_the_hook)
        .hook_secrets(["CARGO_PKG_NAME".to_owned()])
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let outcome = engine
        .dispatch(Event::pre_tool_use("Bash", json!({"command": "ls"})))
        .await;
    assert!(
        matches!(failure(&outcome), HookError::HttpStatus { status: 307, .. }),
        "{:?}",
        failure(&outcome)
    );
    assert!(outcome.is_denied(), "on_failure: block");
    assert_eq!(redirecting.requests().len(), 1);
    assert!(
        elsewhere.requests().is_empty(),
        "the redirect's target got {:?}",
        elsewhere.requests()
    );
}

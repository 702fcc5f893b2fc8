//! LLM prompt hooks against a real server on 127.0.0.1 speaking the
//! Anthropic Messages and OpenAI chat-completions wire formats: answers,
//! malformed answers, errors, rate limits, timeouts, the cache, and the API
//! key (taken from the named variable, never written anywhere).

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::http::{Request, Response, Server};
use wasm_hooks::{
    Event, HookEngine, HookError, Outcome, PromptDefaults, Provider, TraceStatus, Verdict,
};

/// Cargo sets this variable for test processes: it stands in for an API key
/// without any test touching the environment.
const KEY_VAR: &str = "CARGO_MANIFEST_DIR";

fn key() -> String {
    std::env::var(KEY_VAR).unwrap()
}

fn anthropic(text: &str) -> Response {
    Response::json(
        200,
        &json!({"type": "message", "content": [{"type": "text", "text": text}]}).to_string(),
    )
}

fn openai(text: &str) -> Response {
    Response::json(
        200,
        &json!({"choices": [{"message": {"role": "assistant", "content": text}}]}).to_string(),
    )
}

/// A provider's response carrying the model's `text`.
fn reply(provider: &str, text: &str) -> Response {
    if provider == "openai" {
        openai(text)
    } else {
        anthropic(text)
    }
}

const PROVIDERS: [&str; 2] = ["anthropic", "openai"];

fn engine(server: &Server, provider: &str, extra: Value) -> HookEngine {
    let base = if provider == "openai" {
        server.url("/v1")
    } else {
        server.url("")
    };
    let entry = json!({
        "type": "prompt", "provider": provider, "base_url": base, "model": "test-model",
        "api_key_env": KEY_VAR, "max_tokens": 64,
        "prompt": "Tool {{tool_name}} wants {{tool_args}}. Is that safe?",
    });
    support::engine_of_one_hook(entry, &extra, KEY_VAR)
}

fn bash(command: &str, session: &str) -> Event {
    Event::pre_tool_use("Bash", json!({ "command": command })).with("session_id", session)
}

/// The body of an OpenAI-compatible request, after checking its path and
/// its key.
fn openai_request(request: &Request) -> Value {
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {}", key()).as_str())
    );
    serde_json::from_str(&request.body).unwrap()
}

fn failure(outcome: &Outcome) -> &HookError {
    match &outcome.trace[0].status {
        TraceStatus::Failed { error, .. } => error,
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn user_prompt(request: &Request) -> String {
    let body: Value = serde_json::from_str(&request.body).unwrap();
    let messages = body["messages"].as_array().unwrap();
    messages.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Deny when the prompt mentions `rm -rf`, allow otherwise.
fn judge(request: &Request) -> &'static str {
    if user_prompt(request).contains("rm -rf") {
        r#"{"ok": false, "reason": "deletes everything"}"#
    } else {
        r#"{"ok": true}"#
    }
}

#[tokio::test]
async fn anthropic_allow_and_deny_with_the_request_in_its_wire_format() {
    let server = Server::start(|r, _| anthropic(judge(r))).await;
    let engine = engine(&server, "anthropic", json!({}));
    assert_eq!(
        engine.dispatch(bash("ls", "s1")).await.verdict,
        Verdict::Proceed
    );
    assert_eq!(
        engine.dispatch(bash("rm -rf /", "s1")).await.verdict,
        Verdict::Deny {
            reason: "deletes everything".into()
        }
    );
    let request = &server.requests()[1];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(
        request.header("x-api-key"),
        Some(key().as_str()),
        "the key comes from the named variable"
    );
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    let body: Value = serde_json::from_str(&request.body).unwrap();
    assert_eq!(
        (body["model"].as_str(), body["max_tokens"].as_u64()),
        (Some("test-model"), Some(64))
    );
    assert!(body["system"].as_str().unwrap().contains("JSON"));
    assert_eq!(
        user_prompt(request),
        r#"Tool Bash wants {"command":"rm -rf /"}. Is that safe?"#
    );
}

#[tokio::test]
async fn openai_compatible_allow_and_deny_with_the_safe_shape() {
    let server = Server::start(|r, _| {
        openai(if user_prompt(r).contains("rm -rf") {
            r#"{"safe": false, "reason": "no"}"#
        } else {
            r#"{"safe": true}"#
        })
    })
    .await;
    let engine = engine(&server, "openai", json!({}));
    assert_eq!(
        engine.dispatch(bash("ls", "s1")).await.verdict,
        Verdict::Proceed
    );
    assert!(engine.dispatch(bash("rm -rf /", "s1")).await.is_denied());
    let body = openai_request(&server.requests()[0]);
    assert_eq!(body["messages"][0]["role"], "system");
}

#[tokio::test]
async fn a_full_result_object_from_the_model_is_read_too() {
    let server =
        Server::start(|_, _| anthropic(r#"{"decision": "block", "reason": "policy 7"}"#)).await;
    let outcome = engine(&server, "anthropic", json!({}))
        .dispatch(bash("ls", "s1"))
        .await;
    assert_eq!(
        outcome.verdict,
        Verdict::Deny {
            reason: "policy 7".into()
        }
    );
}

#[tokio::test]
async fn a_malformed_answer_is_a_failure_with_the_text_in_the_trace() {
    for provider in PROVIDERS {
        let server = Server::start(move |_, _| reply(provider, "Looks fine to me!")).await;
        let outcome = engine(&server, provider, json!({}))
            .dispatch(bash("ls", "s1"))
            .await;
        assert!(
            matches!(failure(&outcome), HookError::BadResult { message, .. } if message.contains("did not answer with JSON")),
            "{provider}"
        );
        assert_eq!(outcome.trace[0].output.stdout, "Looks fine to me!");
        let server = Server::start(|_, _| Response::json(200, "<html>not an API</html>")).await;
        let outcome = engine(&server, provider, json!({}))
            .dispatch(bash("ls", "s1"))
            .await;
        assert!(
            matches!(failure(&outcome), HookError::BadResult { message, .. } if message.contains("has no text")),
            "{provider}"
        );
    }
}

#[tokio::test]
async fn http_errors_and_timeouts_are_failures_that_never_show_the_key() {
    for provider in PROVIDERS {
        let server = Server::start(|_, _| {
            Response::json(
                500,
                r#"{"type": "error", "error": {"type": "api_error", "message": "Overloaded"}}"#,
            )
        })
        .await;
        let errored = engine(&server, provider, json!({"on_failure": "block"}))
            .dispatch(bash("ls", "s1"))
            .await;
        assert!(
            matches!(failure(&errored), HookError::HttpStatus { status: 500, body, .. } if body == "Overloaded"),
            "{provider}"
        );
        assert!(errored.is_denied());
        let slow =
            Server::start(move |r, _| reply(provider, judge(r)).after(Duration::from_secs(30)))
                .await;
        let timed_out = engine(&slow, provider, json!({"timeout_ms": 300}))
            .dispatch(bash("ls", "s1"))
            .await;
        assert!(
            matches!(
                failure(&timed_out),
                HookError::Timeout { limit_ms: 300, .. }
            ),
            "{provider}"
        );
        for outcome in [&errored, &timed_out] {
            let text = serde_json::to_string(outcome).unwrap();
            assert!(
                !text.contains(&key()),
                "the API key leaked into the outcome: {text}"
            );
        }
    }
}

#[tokio::test]
async fn a_429_is_retried_after_its_retry_after() {
    let server = Server::start(|r, earlier| {
        if earlier == 0 {
            Response::json(429, r#"{"error": {"message": "slow down"}}"#)
                .with_header("retry-after", "0")
        } else {
            anthropic(judge(r))
        }
    })
    .await;
    let outcome = engine(&server, "anthropic", json!({}))
        .dispatch(bash("rm -rf /", "s1"))
        .await;
    assert!(outcome.is_denied(), "{:?}", outcome.trace);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn the_cache_answers_identical_prompts_within_a_session() {
    for provider in PROVIDERS {
        let server = Server::start(move |r, _| reply(provider, judge(r))).await;
        let cached = engine(&server, provider, json!({"cache": true}));
        for _ in 0..3 {
            assert!(cached.dispatch(bash("rm -rf /", "s1")).await.is_denied());
        }
        assert_eq!(
            server.requests().len(),
            1,
            "{provider}: one API call for three identical prompts"
        );
        cached.dispatch(bash("rm -rf /", "another-session")).await;
        cached.dispatch(bash("ls", "s1")).await;
        assert_eq!(
            server.requests().len(),
            3,
            "{provider}: another session or prompt asks again"
        );

        let uncached = Server::start(move |r, _| reply(provider, judge(r))).await;
        let engine = engine(&uncached, provider, json!({}));
        engine.dispatch(bash("ls", "s1")).await;
        engine.dispatch(bash("ls", "s1")).await;
        assert_eq!(uncached.requests().len(), 2, "{provider}");
    }
}

#[tokio::test]
async fn engine_wide_defaults_let_a_hook_give_only_its_prompt() {
    let server = Server::start(|r, _| openai(judge(r))).await;
    let file = support::write_hook_file(
        &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "llm", "prompt": "Judge $ARGUMENTS"}]}]}}),
    );
    let engine = HookEngine::builder()
        .hook_file(&file.path)
        .prompt_defaults(PromptDefaults {
            provider: Provider::OpenAi,
            base_url: Some(server.url("/v1")),
            model: "house-model".into(),
            api_key_env: Some(KEY_VAR.into()),
            max_tokens: 32,
            timeout_ms: 5_000,
        })
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(engine.dispatch(bash("rm -rf /", "s1")).await.is_denied());
    let request = &server.requests()[0];
    let body = openai_request(request);
    assert_eq!(
        (body["model"].as_str(), body["max_tokens"].as_u64()),
        (Some("house-model"), Some(32))
    );
    let prompt = user_prompt(request);
    let event: Value = serde_json::from_str(prompt.strip_prefix("Judge ").unwrap()).unwrap();
    assert_eq!(
        event["hook_event_name"], "PreToolUse",
        "$ARGUMENTS is the whole event"
    );
    assert_eq!(event["tool_input"]["command"], "rm -rf /");
}

#[tokio::test]
async fn a_prompt_hooks_block_ends_the_turn_unless_continue_on_block() {
    let server = Server::start(|_, _| anthropic(r#"{"ok": false, "reason": "risky"}"#)).await;
    let bash = || Event::pre_tool_use("Bash", json!({"command": "rm -rf build"}));
    let ends = engine(&server, "anthropic", json!({}))
        .dispatch(bash())
        .await;
    assert!(ends.is_denied());
    assert_eq!(
        ends.stop.as_ref().map(|s| s.value.as_str()),
        Some("risky"),
        "as in Claude Code, a prompt hook's block ends the turn"
    );
    let goes_on = engine(&server, "anthropic", json!({"continueOnBlock": true}))
        .dispatch(bash())
        .await;
    assert!(goes_on.is_denied());
    assert_eq!(goes_on.stop, None, "{goes_on:?}");
}

#[test]
fn h1_a_prompt_hooks_base_url_and_key_variable_must_be_allowed() {
    let load = |entry: Value| {
        let file =
            support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [entry]}]}}));
        HookEngine::builder()
            .hook_file(&file.path)
            .build()
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let elsewhere =
        load(json!({"type": "prompt", "prompt": "judge", "base_url": "https://collector.example"}))
            .unwrap_err();
    assert!(
        elsewhere.contains("`https://collector.example` is not in the engine's URL allowlist"),
        "{elsewhere}"
    );
    let secret =
        load(json!({"type": "prompt", "prompt": "judge", "api_key_env": "AWS_SECRET_ACCESS_KEY"}))
            .unwrap_err();
    assert!(
        secret.contains("`api_key_env` names `AWS_SECRET_ACCESS_KEY`")
            && secret.contains("hook_secrets"),
        "{secret}"
    );
    // The provider's own variable, to the provider's own URL, needs no list.
    load(json!({"type": "prompt", "prompt": "judge", "provider": "openai", "api_key_env": "OPENAI_API_KEY"}))
        .expect("the provider's own key");
}

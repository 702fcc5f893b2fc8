//! The session layer end to end: a real engine (closure hooks and real
//! command hooks), routed through `Session` into recording sinks:
//! injection cap, budget, batching and provenance; approvals; display and
//! suppression; the wrappers around tool calls and the session lifecycle
//! (the seed's integration tests, under this project's names); the audit
//! records of all of it.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use wasm_hooks::{
    Approval, ApprovalChoice, ContextMessage, ContextSink, DecidedBy, Decision, DisplaySystem,
    Event, EventName, EventPattern, HookEngine, HookId, HookOutput, HookResult, HookSpec,
    InjectionLimits, InjectionStatus, OnFailure, Role, ScriptedApprovals, Session, SessionHooks,
    Severity, ToolError, ToolHooks, Verdict,
};

/// Everything the session handed to the host.
#[derive(Default)]
struct Host {
    context: Mutex<Vec<ContextMessage>>,
    shown: Mutex<Vec<String>>,
}

impl ContextSink for Host {
    fn inject(&self, message: ContextMessage) {
        self.context.lock().unwrap().push(message);
    }
}

impl DisplaySystem for Host {
    fn message(&self, hook: &HookId, severity: Severity, text: &str) {
        self.shown
            .lock()
            .unwrap()
            .push(format!("{hook} {severity:?}: {text}"));
    }
    fn hook_output(&self, hook: &HookId, output: &HookOutput) {
        self.shown
            .lock()
            .unwrap()
            .push(format!("{hook} output: {}{}", output.stdout, output.stderr));
    }
    fn tool_output(&self, tool: &str, output: &str) {
        self.shown
            .lock()
            .unwrap()
            .push(format!("{tool} tool: {output}"));
    }
}

impl Host {
    fn shown(&self) -> Vec<String> {
        self.shown.lock().unwrap().clone()
    }
    fn context(&self) -> Vec<ContextMessage> {
        self.context.lock().unwrap().clone()
    }
}

/// A session on `engine` answering approvals from `approvals`.
fn new_session(engine: HookEngine, approvals: Arc<ScriptedApprovals>) -> (Session, Arc<Host>) {
    let host = Arc::new(Host::default());
    let session = Session::builder(engine, "sess-1")
        .context_sink(host.clone())
        .display(host.clone())
        .approvals(approvals)
        .build();
    (session, host)
}

fn on(event: EventName) -> EventPattern {
    EventPattern::event(event)
}

/// A closure hook on `event` that always answers `result`.
fn answering(name: &str, event: EventName, result: HookResult) -> HookSpec {
    HookSpec::from_fn(name, on(event), move |_| {
        let r = result.clone();
        async move { Ok(r) }
    })
}

fn with_context(text: &str, role: Role) -> HookResult {
    let mut r = HookResult::new(Decision::Proceed);
    r.context = Some(wasm_hooks::Context {
        text: text.into(),
        role,
    });
    r
}

fn ask(prompt: &str, timeout_ms: Option<u32>, default_allow: bool) -> HookResult {
    HookResult::new(Decision::Ask(Approval {
        prompt: prompt.into(),
        options: vec![],
        timeout_ms,
        default_allow,
    }))
}

/// A hook on every event that records each event it sees.
fn recorder(engine: &HookEngine) -> Arc<Mutex<Vec<Event>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let pattern = EventPattern::parse("*").unwrap();
    let log = seen.clone();
    engine.register(
        HookSpec::from_fn("recorder", pattern, move |event| {
            log.lock().unwrap().push(event);
            async { Ok(HookResult::new(Decision::Proceed)) }
        })
        .with_priority(1000),
    );
    seen
}

fn names(events: &[Event]) -> Vec<EventName> {
    events.iter().map(Event::name).collect()
}

// ---- context injection -------------------------------------------------

#[tokio::test]
async fn injections_are_batched_per_turn_with_provenance() {
    let engine = HookEngine::default();
    engine.register(answering(
        "lint",
        EventName::PostToolUse,
        with_context("E501 line too long", Role::System),
    ));
    engine.register(answering(
        "types",
        EventName::PostToolUse,
        with_context("mismatched types", Role::System),
    ));
    engine.register(answering(
        "persona",
        EventName::UserPromptSubmit,
        with_context("answer briefly", Role::User),
    ));
    let (session, host) = new_session(engine, Arc::new(ScriptedApprovals::default()));
    session.dispatch(Event::user_prompt_submit("fix it")).await;
    let resolved = session
        .dispatch(Event::post_tool_use("Write", json!({}), json!("ok")))
        .await;
    assert_eq!(resolved.injections.len(), 2);
    assert!(
        host.context().is_empty(),
        "nothing is delivered before a flush"
    );

    assert_eq!(session.flush_context(), 2);
    let messages = host.context();
    assert_eq!(messages[0].role, Role::User);
    assert_eq!(messages[0].text, "answer briefly");
    assert_eq!(messages[0].sources[0].event, EventName::UserPromptSubmit);
    assert_eq!(messages[1].role, Role::System);
    assert_eq!(
        messages[1].text,
        "Hook feedback:\n\nFrom lint (PostToolUse, 18 bytes):\nE501 line too long\n\nFrom types (PostToolUse, 16 bytes):\nmismatched types"
    );
    let sources: Vec<(&str, EventName, usize)> = messages[1]
        .sources
        .iter()
        .map(|s| (s.hook.as_str(), s.event, s.bytes))
        .collect();
    assert_eq!(
        sources,
        [
            ("lint", EventName::PostToolUse, 18),
            ("types", EventName::PostToolUse, 16)
        ]
    );
    assert!(messages[1].sources[0].timestamp.starts_with("20"));
    assert_eq!(session.flush_context(), 0, "a flush empties the queue");
}

#[tokio::test]
async fn an_injection_over_the_cap_is_refused_whole_and_reported() {
    let engine = HookEngine::default();
    engine.register(answering(
        "big",
        EventName::PostToolUse,
        with_context(&"x".repeat(10 * 1024 + 1), Role::System),
    ));
    engine.register(answering(
        "small",
        EventName::PostToolUse,
        with_context("fine", Role::System),
    ));
    let (session, host) = new_session(engine, Arc::new(ScriptedApprovals::default()));
    let resolved = session
        .dispatch(Event::post_tool_use("Bash", json!({}), json!("")))
        .await;
    let InjectionStatus::Refused { reason } = &resolved.injections[0].status else {
        panic!("{:?}", resolved.injections)
    };
    assert!(
        reason.contains("10241 bytes, over the 10240 byte cap"),
        "{reason}"
    );
    assert_eq!(resolved.injections[1].status, InjectionStatus::Queued);
    assert!(
        host.shown()
            .iter()
            .any(|l| l.starts_with("big Error: context from hook `big`"))
    );
    session.flush_context();
    let messages = host.context();
    assert_eq!(messages.len(), 1);
    assert_eq!(
        messages[0].text, "fine",
        "the refused text is not truncated in"
    );
}

#[tokio::test]
async fn the_turn_budget_warns_and_a_new_turn_starts_again() {
    let engine = HookEngine::default();
    // 2,000 bytes ≈ 500 tokens a time against a budget of 1,000.
    engine.register(answering(
        "chatty",
        EventName::PostToolUse,
        with_context(&"y".repeat(2000), Role::System),
    ));
    let (session, host) = new_session(engine, Arc::new(ScriptedApprovals::default()));
    let lifecycle = SessionHooks::new(session.clone());
    let post = || Event::post_tool_use("Bash", json!({}), json!(""));
    let statuses = [
        session.dispatch(post()).await.injections[0].status.clone(),
        session.dispatch(post()).await.injections[0].status.clone(),
        session.dispatch(post()).await.injections[0].status.clone(),
    ];
    assert_eq!(statuses[0], InjectionStatus::Queued);
    assert_eq!(statuses[1], InjectionStatus::Queued);
    assert_eq!(
        statuses[2],
        InjectionStatus::OverBudget {
            used: 1500,
            budget: 1000
        }
    );
    assert!(
        host.shown()
            .iter()
            .any(|l| l.contains("Warning: this turn's injected context is now ~1500 tokens")),
        "{:?}",
        host.shown()
    );
    lifecycle.prompt_submitted("next").await;
    assert_eq!(
        session.dispatch(post()).await.injections[0].status,
        InjectionStatus::Queued
    );
    session.flush_context();
    assert_eq!(
        host.context()[0].sources.len(),
        4,
        "over budget is still delivered"
    );
}

#[tokio::test]
async fn injection_limits_are_configurable() {
    let engine = HookEngine::default();
    engine.register(answering(
        "h",
        EventName::Stop,
        with_context("twelve bytes", Role::Assistant),
    ));
    let session = Session::builder(engine, "s")
        .injection_limits(InjectionLimits {
            max_bytes: 11,
            turn_budget_tokens: 1000,
        })
        .display(Arc::new(Host::default()))
        .build();
    let resolved = session.dispatch(Event::stop(false)).await;
    assert!(matches!(
        resolved.injections[0].status,
        InjectionStatus::Refused { .. }
    ));
}

// ---- approvals -----------------------------------------------------------

fn asking_engine(prompt: &str, timeout_ms: Option<u32>, default_allow: bool) -> HookEngine {
    let engine = HookEngine::default();
    engine.register(answering(
        "guard",
        EventName::PreToolUse,
        ask(prompt, timeout_ms, default_allow),
    ));
    engine
}

#[tokio::test]
async fn approval_allow_and_deny() {
    let approvals = Arc::new(ScriptedApprovals::new([
        Some(ApprovalChoice::AllowOnce),
        Some(ApprovalChoice::Deny),
    ]));
    let (session, _) = new_session(asking_engine("Push?", None, false), approvals.clone());
    let event = || Event::pre_tool_use("Bash", json!({"command": "git push"}));
    let first = session.dispatch(event()).await;
    assert_eq!(
        first.outcome.verdict,
        Verdict::Allow {
            reason: Some("approved by the user: Push?".into())
        }
    );
    let second = session.dispatch(event()).await;
    assert_eq!(second.denial(), Some("the user denied: Push?"));
    let record = second.approval.unwrap();
    assert_eq!(record.decided_by, DecidedBy::Person);
    let requests = approvals.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].hook.as_str(), "guard");
    assert_eq!(requests[0].options, ["Allow once", "Allow always", "Deny"]);
    assert_eq!(requests[0].timeout, Duration::from_secs(60));
    assert_eq!(requests[0].default, ApprovalChoice::Deny);
}

#[tokio::test]
async fn allow_always_is_cached_per_hook_and_prompt_until_the_session_ends() {
    let engine = HookEngine::default();
    for (hook, tool, prompt) in [("guard", "Bash", "Push?"), ("other", "Delete", "Delete?")] {
        engine.register(
            answering(hook, EventName::PreToolUse, ask(prompt, None, false))
                .with_matcher(wasm_hooks::ToolMatcher::parse(tool).unwrap()),
        );
    }
    let approvals = Arc::new(ScriptedApprovals::new([
        Some(ApprovalChoice::AllowAlways),
        Some(ApprovalChoice::Deny),
        Some(ApprovalChoice::Deny),
    ]));
    let (session, _) = new_session(engine, approvals.clone());
    let push = || Event::pre_tool_use("Bash", json!({"command": "git push"}));
    assert!(session.dispatch(push()).await.denial().is_none());
    let again = session.dispatch(push()).await;
    assert_eq!(
        again.approval.as_ref().unwrap().decided_by,
        DecidedBy::Cache
    );
    assert!(again.denial().is_none());
    assert_eq!(
        approvals.requests().len(),
        1,
        "the cached answer asks nobody"
    );

    // Another hook's question is not covered by the cache.
    let delete = session
        .dispatch(Event::pre_tool_use("Delete", json!({})))
        .await;
    assert!(delete.denial().is_some());

    SessionHooks::new(session.clone()).end("logout").await;
    assert!(
        session.dispatch(push()).await.denial().is_some(),
        "after the session ends the person is asked again"
    );
    assert_eq!(approvals.requests().len(), 3);
}

#[tokio::test]
async fn a_timeout_applies_the_hooks_default() {
    // The scripted system never answers; the hooks give 50 ms.
    let approvals = Arc::new(ScriptedApprovals::new([None, None]));
    let (session, _) = new_session(asking_engine("Push?", Some(50), false), approvals.clone());
    let denied = session
        .dispatch(Event::pre_tool_use("Bash", json!({})))
        .await;
    assert_eq!(
        denied.denial(),
        Some("no answer within 0.05s: denied by default: Push?")
    );
    assert_eq!(denied.approval.unwrap().decided_by, DecidedBy::Timeout);

    let (session, _) = new_session(asking_engine("Push?", Some(50), true), approvals);
    let allowed = session
        .dispatch(Event::pre_tool_use("Bash", json!({})))
        .await;
    assert!(matches!(allowed.outcome.verdict, Verdict::Allow { .. }));
}

// ---- display ---------------------------------------------------------------

#[tokio::test]
async fn suppressed_hook_output_is_filtered_but_tool_output_never_is() {
    let file = support::write_hook_file(&json!({"hooks": {"PostToolUse": [{"hooks": [
        {"type": "command", "name": "quiet",
         "command": "echo quiet-noise >&2; echo '{\"suppressOutput\": true}'"},
        {"type": "command", "name": "loud", "command": "echo loud-noise >&2"},
    ]}]}}));
    let engine = HookEngine::builder().hook_file(&file.path).build().unwrap();
    engine.register(answering("notice", EventName::PostToolUse, {
        let mut r = HookResult::new(Decision::Proceed);
        r.user_message = Some(wasm_hooks::UserMessage {
            severity: Severity::Info,
            text: "tests are green".into(),
        });
        r.system_message = Some("mind the gap".into());
        r
    }));
    let (session, host) = new_session(engine, Arc::new(ScriptedApprovals::default()));
    let tools = ToolHooks::new(session.clone());
    let out: String = tools
        .call("Bash", json!({"command": "make"}), |_| async {
            Ok::<_, String>("tool says hi".to_owned())
        })
        .await
        .unwrap();
    assert_eq!(out, "tool says hi");
    let shown = host.shown();
    assert!(
        !shown.iter().any(|l| l.contains("quiet-noise")),
        "{shown:?}"
    );
    assert!(
        shown.contains(&"loud output: loud-noise\n".to_owned()),
        "{shown:?}"
    );
    assert!(
        shown.contains(&"Bash tool: tool says hi".to_owned()),
        "{shown:?}"
    );
    assert!(
        shown.contains(&"notice Info: tests are green".to_owned()),
        "{shown:?}"
    );
    assert!(
        shown.contains(&"notice Warning: mind the gap".to_owned()),
        "{shown:?}"
    );
}

// ---- tool wrapper ------------------------------------------------------------

/// The seed's `test_tool_execution_no_hooks`.
#[tokio::test]
async fn a_tool_call_without_hooks_just_runs() {
    let (session, _) = new_session(HookEngine::default(), Arc::default());
    let result = ToolHooks::new(session)
        .call(
            "test_tool",
            json!({"arg1": "a", "arg2": "b"}),
            |args| async move {
                Ok::<_, String>(format!(
                    "result: {} {}",
                    args["arg1"].as_str().unwrap(),
                    args["arg2"].as_str().unwrap()
                ))
            },
        )
        .await
        .unwrap();
    assert_eq!(result, "result: a b");
}

/// The seed's `test_tool_execution_with_hooks`.
#[tokio::test]
async fn a_tool_call_fires_pre_and_post_with_the_result_and_duration() {
    let engine = HookEngine::default();
    let seen = recorder(&engine);
    let (session, _) = new_session(engine, Arc::default());
    let result = ToolHooks::new(session)
        .call("bash", json!({"command": "ls"}), |args| async move {
            Ok::<_, String>(format!("executed: {}", args["command"].as_str().unwrap()))
        })
        .await
        .unwrap();
    assert_eq!(result, "executed: ls");
    let seen = seen.lock().unwrap();
    assert_eq!(
        names(&seen),
        [EventName::PreToolUse, EventName::PostToolUse]
    );
    assert_eq!(seen[0].tool_name(), Some("bash"));
    assert_eq!(seen[0].tool_input(), Some(&json!({"command": "ls"})));
    assert_eq!(seen[0].session_id(), "sess-1");
    assert_eq!(seen[1].record()["tool_response"], "executed: ls");
    assert!(seen[1].record()["duration_ms"].is_u64());
}

#[tokio::test]
async fn a_denied_tool_does_not_run() {
    let engine = HookEngine::default();
    engine.register(answering(
        "guard",
        EventName::PreToolUse,
        HookResult::new(Decision::Deny {
            reason: "not today".into(),
        }),
    ));
    let seen = recorder(&engine);
    let (session, _) = new_session(engine, Arc::default());
    let ran = Arc::new(Mutex::new(false));
    let flag = ran.clone();
    let err = ToolHooks::new(session)
        .call("Bash", json!({"command": "rm"}), |_| async move {
            *flag.lock().unwrap() = true;
            Ok::<_, String>(())
        })
        .await
        .unwrap_err();
    let ToolError::Denied(denied) = err else {
        panic!("{err}")
    };
    assert_eq!(denied.reason, "not today");
    assert_eq!(denied.hook.unwrap().as_str(), "guard");
    assert!(!*ran.lock().unwrap());
    assert!(
        seen.lock().unwrap().is_empty(),
        "a deny ends the chain; no post event"
    );
}

#[tokio::test]
async fn a_modified_call_runs_with_the_new_arguments() {
    let engine = HookEngine::default();
    engine.register(answering(
        "rewrite",
        EventName::PreToolUse,
        HookResult::new(Decision::Modify {
            input: json!({"command": "ls -la"}),
        }),
    ));
    let seen = recorder(&engine);
    let (session, _) = new_session(engine, Arc::default());
    let ran_with = ToolHooks::new(session)
        .call("Bash", json!({"command": "ls"}), |args| async move {
            Ok::<_, String>(args)
        })
        .await
        .unwrap();
    assert_eq!(ran_with, json!({"command": "ls -la"}));
    let seen = seen.lock().unwrap();
    assert_eq!(seen[1].tool_input(), Some(&json!({"command": "ls -la"})));
}

#[tokio::test]
async fn a_rewritten_output_is_what_the_call_returns() {
    let engine = HookEngine::default();
    engine.register(answering(
        "mask",
        EventName::PostToolUse,
        HookResult::new(Decision::ModifyOutput {
            output: json!("key [REDACTED]"),
        }),
    ));
    let (session, host) = new_session(engine, Arc::default());
    let tools = ToolHooks::new(session);
    let out: String = tools
        .call("Bash", json!({}), |_| async {
            Ok::<_, String>("key AKIAIOSFODNN7EXAMPLE".to_owned())
        })
        .await
        .unwrap();
    assert_eq!(out, "key [REDACTED]");
    assert!(
        host.shown()
            .contains(&"Bash tool: key AKIAIOSFODNN7EXAMPLE".to_owned()),
        "the person still sees what the tool printed"
    );

    // A rewrite the tool's output type cannot hold withholds the original.
    let err = tools
        .call("Bash", json!({}), |_| async { Ok::<_, String>(7_u32) })
        .await
        .unwrap_err();
    match err {
        ToolError::Rewritten { tool, problem } => {
            assert_eq!(tool, "Bash");
            assert!(problem.contains("expected u32"), "{problem}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_asked_call_runs_only_when_approved() {
    let approvals = Arc::new(ScriptedApprovals::new([
        Some(ApprovalChoice::AllowOnce),
        Some(ApprovalChoice::Deny),
    ]));
    let (session, _) = new_session(asking_engine("Run it?", None, false), approvals);
    let tools = ToolHooks::new(session);
    let run = || {
        tools.call("Bash", json!({}), |_| async {
            Ok::<_, String>("ran".to_owned())
        })
    };
    assert_eq!(run().await.unwrap(), "ran");
    match run().await {
        Err(ToolError::Denied(d)) => assert_eq!(d.reason, "the user denied: Run it?"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_failing_tool_fires_post_tool_use_failure_and_returns_its_error() {
    let engine = HookEngine::default();
    let seen = recorder(&engine);
    let (session, host) = new_session(engine, Arc::default());
    let err = ToolHooks::new(session)
        .call("Read", json!({"file_path": "/nope"}), |_| async {
            Err::<String, _>("no such file".to_owned())
        })
        .await
        .unwrap_err();
    assert!(matches!(&err, ToolError::Failed(e) if e == "no such file"));
    let seen = seen.lock().unwrap();
    assert_eq!(
        names(&seen),
        [EventName::PreToolUse, EventName::PostToolUseFailure]
    );
    assert_eq!(seen[1].record()["error"], "no such file");
    assert!(seen[1].record()["duration_ms"].is_u64());
    assert!(host.shown().contains(&"Read tool: no such file".to_owned()));
}

#[tokio::test]
async fn a_failing_hook_changes_the_call_only_as_its_policy_says() {
    let failing = |policy| {
        let engine = HookEngine::default();
        engine.register(
            HookSpec::from_fn("flaky", on(EventName::PreToolUse), |_| async {
                Err("exploded".to_owned())
            })
            .with_on_failure(policy),
        );
        engine
    };
    for (policy, runs) in [
        (OnFailure::Warn, true),
        (OnFailure::Ignore, true),
        (OnFailure::Block, false),
    ] {
        let (session, host) = new_session(failing(policy), Arc::default());
        let result = ToolHooks::new(session)
            .call("Bash", json!({}), |_| async {
                Ok::<_, String>("ran".to_owned())
            })
            .await;
        assert_eq!(result.is_ok(), runs, "{policy:?}: {result:?}");
        let warned = host.shown().iter().any(|l| l.contains("exploded"));
        assert_eq!(warned, policy == OnFailure::Warn, "{policy:?}");
    }
}

#[tokio::test]
async fn a_post_tool_deny_is_feedback_for_the_model() {
    let engine = HookEngine::default();
    engine.register(answering(
        "review",
        EventName::PostToolUse,
        HookResult::new(Decision::Deny {
            reason: "the file still has a syntax error".into(),
        }),
    ));
    let (session, host) = new_session(engine, Arc::default());
    let out = ToolHooks::new(session.clone())
        .call("Write", json!({}), |_| async {
            Ok::<_, String>("written".to_owned())
        })
        .await;
    assert_eq!(out.unwrap(), "written", "the tool already ran");
    session.flush_context();
    let context = host.context();
    assert_eq!(context[0].text, "the file still has a syntax error");
    assert_eq!(context[0].sources[0].hook.as_str(), "review");
}

// ---- lifecycle wrapper -----------------------------------------------------------

/// The seed's `test_session_lifecycle_start` and `…_error`, and every other
/// lifecycle event, with the fields each carries.
#[tokio::test]
async fn every_lifecycle_event_reaches_the_hooks_with_its_fields() {
    let engine = HookEngine::default();
    let seen = recorder(&engine);
    let (session, _) = new_session(engine, Arc::default());
    let life = SessionHooks::new(session);
    life.start("startup").await;
    life.prompt_submitted("hello").await;
    let error = std::io::Error::other("Test error");
    life.error(&error, Some("bash"), "error").await;
    life.checkpoint("cp-1", "auto", 12).await;
    life.model_switch("small", "large", "user").await;
    life.memory_update("CLAUDE.md", "modified").await;
    life.notification("waiting", "idle_prompt").await;
    life.pre_compact("auto").await;
    life.stop(false).await;
    life.end("logout").await;
    let seen = seen.lock().unwrap();
    assert_eq!(
        names(&seen),
        [
            EventName::SessionStart,
            EventName::UserPromptSubmit,
            EventName::Error,
            EventName::Checkpoint,
            EventName::ModelSwitch,
            EventName::MemoryUpdate,
            EventName::Notification,
            EventName::PreCompact,
            EventName::Stop,
            EventName::SessionEnd,
        ]
    );
    let field = |i: usize, f: &str| seen[i].record()[f].clone();
    assert!(seen.iter().all(|e| e.session_id() == "sess-1"));
    assert_eq!(field(0, "source"), "startup");
    assert_eq!(field(1, "prompt"), "hello");
    assert_eq!(field(2, "error_type"), "Error");
    assert_eq!(field(2, "error_message"), "Test error");
    assert_eq!(field(2, "tool"), "bash");
    assert_eq!(field(2, "severity"), "error");
    assert_eq!(
        (field(3, "checkpoint_id"), field(3, "message_count")),
        (json!("cp-1"), json!(12))
    );
    assert_eq!(
        (field(4, "old_model"), field(4, "new_model")),
        (json!("small"), json!("large"))
    );
    assert_eq!(field(5, "file_path"), "CLAUDE.md");
    assert_eq!(field(6, "notification_type"), "idle_prompt");
    assert_eq!(field(7, "trigger"), "auto");
    assert_eq!(field(8, "stop_hook_active"), false);
    assert_eq!(field(9, "reason"), "logout");
}

#[tokio::test]
async fn a_blocked_prompt_a_stop_that_goes_on_and_a_stop_request() {
    let engine = HookEngine::default();
    engine.register(answering(
        "no-secrets",
        EventName::UserPromptSubmit,
        HookResult::new(Decision::Deny {
            reason: "the prompt contains a key".into(),
        }),
    ));
    engine.register(answering(
        "tests-first",
        EventName::Stop,
        HookResult::new(Decision::Deny {
            reason: "run the tests before stopping".into(),
        }),
    ));
    engine.register(answering("halt", EventName::Notification, {
        let mut r = HookResult::new(Decision::Proceed);
        r.stop = Some("budget exhausted".into());
        r
    }));
    let (session, host) = new_session(engine, Arc::default());
    let life = SessionHooks::new(session.clone());
    let prompt = life.prompt_submitted("key=abc").await;
    assert_eq!(prompt.denial(), Some("the prompt contains a key"));
    let stop = life.stop(false).await;
    assert_eq!(stop.denial(), Some("run the tests before stopping"));
    session.flush_context();
    assert_eq!(host.context()[0].text, "run the tests before stopping");

    assert!(session.take_stop().is_none());
    life.notification("x", "y").await;
    let requested = session.take_stop().unwrap();
    assert_eq!(
        (requested.hook.as_str(), requested.value.as_str()),
        ("halt", "budget exhausted")
    );
    assert!(session.take_stop().is_none(), "taken once");
}

// ---- audit ---------------------------------------------------------------------

#[tokio::test]
async fn the_audit_log_records_dispatches_injections_and_approvals() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let engine = HookEngine::builder().audit_log(&path).build().unwrap();
    engine.register(answering(
        "guard",
        EventName::PreToolUse,
        ask("Go?", None, false),
    ));
    engine.register(answering(
        "lint",
        EventName::PostToolUse,
        with_context("1 warning", Role::System),
    ));
    engine.register(HookSpec::from_fn(
        "flaky",
        on(EventName::PostToolUse),
        |_| async { Err("exploded".to_owned()) },
    ));
    let approvals = Arc::new(ScriptedApprovals::always(ApprovalChoice::AllowOnce));
    let (session, _) = new_session(engine, approvals);
    ToolHooks::new(session)
        .call("Bash", json!({"command": "make"}), |_| async {
            Ok::<_, String>("ok".to_owned())
        })
        .await
        .unwrap();
    let log = std::fs::File::open(&path).unwrap();
    let lines = wasm_hooks::read_audit_log(log).unwrap();
    let kinds: Vec<(&str, Option<&str>)> = lines
        .iter()
        .map(|l| (l.kind.as_str(), l.hook.as_deref()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("dispatch", Some("guard")),
            ("hook_result", Some("guard")),
            ("approval_request", Some("guard")),
            ("approval_decision", Some("guard")),
            ("dispatch", None),
            ("hook_result", Some("lint")),
            ("hook_failure", Some("flaky")),
            ("injection", Some("lint")),
        ]
    );
    assert!(lines.iter().all(|l| l.session == "sess-1"));
    assert_eq!(lines[3].data["choice"], "allow_once");
    assert_eq!(lines[7].data["text"], "1 warning");
    assert_eq!(
        wasm_hooks::verify_audit_log(std::fs::File::open(&path).unwrap()).unwrap(),
        wasm_hooks::Verification::Intact { lines: 8 }
    );
}

/// The lines of `path`, to tamper with.
fn lines_of(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn verify(path: &std::path::Path) -> wasm_hooks::Verification {
    wasm_hooks::verify_audit_log(std::fs::File::open(path).unwrap()).unwrap()
}

#[tokio::test]
async fn verification_names_the_first_broken_line() {
    use wasm_hooks::{Break, Verification};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let engine = HookEngine::builder().audit_log(&path).build().unwrap();
    engine.register(answering(
        "h",
        EventName::PreToolUse,
        HookResult::new(Decision::Proceed),
    ));
    for i in 0..3 {
        engine
            .dispatch(Event::pre_tool_use(
                "Bash",
                json!({"command": format!("echo {i}")}),
            ))
            .await;
    }
    assert_eq!(verify(&path), Verification::Intact { lines: 6 });
    let original = lines_of(&path);
    let write = |lines: &[String], tail: &str| {
        std::fs::write(&path, lines.join("\n") + tail).unwrap();
    };

    // An edit, even one that keeps the JSON valid.
    let mut edited = original.clone();
    edited[2] = edited[2].replace("echo 1", "echo X");
    write(&edited, "\n");
    assert_eq!(
        verify(&path),
        Verification::Broken {
            line: 3,
            reason: Break::Edited
        }
    );

    // A deleted line: the one after it no longer links.
    let mut deleted = original.clone();
    deleted.remove(3);
    write(&deleted, "\n");
    assert_eq!(
        verify(&path),
        Verification::Broken {
            line: 4,
            reason: Break::Unlinked {
                expected_seq: 4,
                found_seq: 5
            }
        }
    );

    // A truncated last line.
    let mut truncated = original.clone();
    let last = truncated.pop().unwrap();
    truncated.push(last[..last.len() / 2].to_owned());
    write(&truncated, "");
    assert_eq!(
        verify(&path),
        Verification::Broken {
            line: 6,
            reason: Break::Truncated
        }
    );
}

#[tokio::test]
async fn events_already_named_by_the_agent_keep_their_session() {
    let engine = HookEngine::default();
    let seen = recorder(&engine);
    let (session, _) = new_session(engine, Arc::default());
    session
        .dispatch(Event::stop(false).with("session_id", "agent-own"))
        .await;
    assert_eq!(seen.lock().unwrap()[0].session_id(), "agent-own");
}

//! The lifecycle wrapper (`SessionHooks`): every lifecycle event with its fields, blocked prompts and stops, the agent's own session ids.

use super::*;

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
            EventName::PostModelSwitch,
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

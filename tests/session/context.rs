//! Context injection: batching per turn with provenance, the cap, the turn budget, configurable limits.

use super::*;

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

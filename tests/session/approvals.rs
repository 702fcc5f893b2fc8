//! Approvals: allow and deny, "allow always" cached per hook and prompt, timeouts that apply the hook's default.

use super::*;

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

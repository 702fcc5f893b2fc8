//! The tool wrapper (`ToolHooks`): pre and post around a call, denied, rewritten and asked calls, failing tools and failing hooks.

use super::*;

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

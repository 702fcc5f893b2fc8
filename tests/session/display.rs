//! Display: suppressed hook output is filtered, a tool's output never is.

use super::*;

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

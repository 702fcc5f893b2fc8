//! WIT versions side by side: a plugin built by the previous SDK (0.1.1,
//! pinned in `tests/compat/`) still loads and answers on today's host
//! (0.2.0), with its version's meaning of `modify`; a plugin of today's SDK
//! says `modify-output`, and a rewrite that does not fit the event is
//! refused.

use crate::support;

use serde_json::json;
use support::{plugin, write_hook_file};
use wasm_hooks::{Event, HookEngine, TraceStatus, Verdict};
use wasm_hooks_wasm::PluginInfo;

fn engine_for(package: &str) -> (HookEngine, support::HookFile) {
    let file = write_hook_file(&json!({"hooks": {"*": [{"hooks": [
        {"type": "wasm", "plugin": plugin(package)}
    ]}]}}));
    let engine = HookEngine::builder()
        .hook_file(&file.path)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    (engine, file)
}

#[test]
fn the_pinned_plugin_is_stamped_with_the_previous_version() {
    let info = PluginInfo::read(&plugin("compat-sdk-0-1-plugin")).unwrap();
    assert_eq!(info.wit, ["wasm-hooks:hook@0.1.1"]);
    assert_eq!(info.exports, ["wasm-hooks:hook/handler@0.1.1"]);
    assert!(info.compatible, "{info:?}");
}

#[tokio::test]
async fn a_plugin_of_the_previous_sdk_still_answers() {
    let (engine, _file) = engine_for("compat-sdk-0-1-plugin");
    let session = |e: Event| e.with("session_id", "compat");
    let ls = engine
        .dispatch(session(Event::pre_tool_use(
            "Bash",
            json!({"command": "ls"}),
        )))
        .await;
    assert_eq!(ls.verdict, Verdict::Proceed, "{:?}", ls.trace);
    // Its host imports (kv here) are served in its version too.
    let rm = engine
        .dispatch(session(Event::pre_tool_use(
            "Bash",
            json!({"command": "rm -rf /"}),
        )))
        .await;
    assert_eq!(
        rm.verdict,
        Verdict::Deny {
            reason: "0.1 plugin says no (call 2)".into()
        }
    );
    // 0.1.x's one `modify`, on PostToolUse, is the tool's new output.
    let post = engine
        .dispatch(session(Event::post_tool_use(
            "Bash",
            json!({"command": "cat .env"}),
            json!({"stdout": "KEY=SECRET\n", "stderr": ""}),
        )))
        .await;
    assert_eq!(
        post.updated_output,
        Some(json!({"stdout": "KEY=******\n", "stderr": ""})),
        "{:?}",
        post.trace
    );
}

#[tokio::test]
async fn a_plugin_of_todays_sdk_rewrites_an_output_with_modify_output() {
    let (engine, _file) = engine_for("redact-secrets");
    assert_eq!(
        PluginInfo::read(&plugin("redact-secrets")).unwrap().wit,
        ["wasm-hooks:hook@0.2.0"]
    );
    let post = engine
        .dispatch(Event::post_tool_use(
            "Bash",
            json!({"command": "env"}),
            json!({"stdout": "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n", "stderr": ""}),
        ))
        .await;
    let output = post.updated_output.expect("the output was rewritten");
    assert!(
        !output.to_string().contains("AKIAIOSFODNN7EXAMPLE"),
        "{output}"
    );
    assert!(
        post.trace
            .iter()
            .all(|t| matches!(t.status, TraceStatus::Answered(_))),
        "{:?}",
        post.trace
    );
}

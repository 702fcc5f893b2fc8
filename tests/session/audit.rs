//! The audit records of a session, and verification naming the first broken line.

use super::*;

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
    let lines = wasm_hooks_core::read_audit_log(log).unwrap();
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
        wasm_hooks::verify_audit_log(&path, None).unwrap(),
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
    wasm_hooks::verify_audit_log(path, None).unwrap()
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

//! Command hooks with real processes: what they receive (stdin, variables,
//! working directory), what each exit code and JSON answer means, and how
//! timeouts, floods, missing programs and signals are handled.

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use wasm_hooks::{
    CommandDefaults, Decision, Event, HookEngine, HookError, Outcome, TraceStatus, Verdict,
};

/// An engine with one command hook on PreToolUse, built from `entry`.
fn engine_with(entries: Vec<Value>) -> HookEngine {
    engine_with_defaults(entries, CommandDefaults::default())
}

fn engine_with_defaults(entries: Vec<Value>, defaults: CommandDefaults) -> HookEngine {
    let file = support::write_hook_file(&json!({"hooks": {"*": [{"hooks": entries}]}}));
    HookEngine::builder()
        .hook_file(&file.path)
        .command_defaults(defaults)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn command(line: &str) -> Value {
    json!({"type": "command", "command": line})
}

fn bash_in(dir: &Path, cmd: &str) -> Event {
    Event::pre_tool_use("Bash", json!({ "command": cmd }))
        .with("cwd", dir.display().to_string())
        .with("session_id", "sess-1")
}

fn failure(outcome: &Outcome) -> &HookError {
    match &outcome.trace[0].status {
        TraceStatus::Failed { error, .. } => error,
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn answered(outcome: &Outcome) -> &wasm_hooks::HookResult {
    match &outcome.trace[0].status {
        TraceStatus::Answered(r) => r,
        other => panic!("expected an answer, got {other:?}"),
    }
}

#[tokio::test]
async fn the_hook_gets_the_event_on_stdin_the_variables_and_the_project_dir() {
    let dir = tempfile::tempdir().unwrap();
    let file = support::write_hook_file(&json!({"hooks": {"*": [{"hooks": [command(
        "cat > stdin.json; env > env.txt; pwd > pwd.txt",
    )]}]}}));
    // The project is where the engine answers for, whatever the `cwd`
    // (Claude Code's `CLAUDE_PROJECT_DIR` is the project's root).
    let project = tempfile::tempdir().unwrap();
    let engine = HookEngine::builder()
        .hook_file(&file.path)
        .project_dir(project.path())
        .build()
        .unwrap();
    let outcome = engine.dispatch(bash_in(dir.path(), "ls -la")).await;
    assert_eq!(outcome.verdict, Verdict::Proceed);
    let stdin: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("stdin.json")).unwrap())
            .unwrap();
    assert_eq!(stdin["hook_event_name"], "PreToolUse");
    assert_eq!(stdin["tool_input"]["command"], "ls -la");
    let env = std::fs::read_to_string(dir.path().join("env.txt")).unwrap();
    for line in [
        "WASM_HOOKS_EVENT=PreToolUse",
        "WASM_HOOKS_SESSION_ID=sess-1",
        "WASM_HOOKS_TOOL_NAME=Bash",
        r#"WASM_HOOKS_TOOL_ARGS={"command":"ls -la"}"#,
        &format!("CLAUDE_PROJECT_DIR={}", project.path().display()),
        &format!("WASM_HOOKS_WORKING_DIR={}", dir.path().display()),
    ] {
        assert!(env.lines().any(|l| l == line), "missing {line}");
    }
    let pwd = std::fs::read_to_string(dir.path().join("pwd.txt")).unwrap();
    assert_eq!(
        Path::new(pwd.trim()).canonicalize().unwrap(),
        dir.path().canonicalize().unwrap()
    );
}

#[tokio::test]
async fn the_variable_prefix_and_the_hooks_own_env_and_working_dir_apply() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let defaults = CommandDefaults {
        env_prefix: "FORGE".into(),
        ..CommandDefaults::default()
    };
    let engine = engine_with_defaults(
        vec![
            json!({"type": "command", "command": "echo \"$FORGE_EVENT $GREETING\" > out.txt", "env": {"GREETING": "hi"}, "working_dir": "sub"}),
        ],
        defaults,
    );
    engine.dispatch(bash_in(dir.path(), "ls")).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sub/out.txt")).unwrap(),
        "PreToolUse hi\n"
    );
}

#[tokio::test]
async fn exit_2_blocks_with_stderr_and_ignores_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with(vec![command(
        r#"echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'; echo 'no rm here' >&2; exit 2"#,
    )]);
    let outcome = engine.dispatch(bash_in(dir.path(), "rm x")).await;
    assert_eq!(
        outcome.verdict,
        Verdict::Deny {
            reason: "no rm here".into()
        }
    );
}

#[tokio::test]
async fn json_answers_decide_and_a_rewrite_reaches_the_next_hook() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with(vec![
        command(
            r#"echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls -la"}}}'"#,
        ),
        command(r#"cat > seen.json"#),
        command(r#"echo '{"decision":"block","reason":"second thoughts"}'"#),
    ]);
    let outcome = engine.dispatch(bash_in(dir.path(), "ls")).await;
    assert_eq!(
        outcome.verdict,
        Verdict::Deny {
            reason: "second thoughts".into()
        }
    );
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("seen.json")).unwrap())
            .unwrap();
    assert_eq!(
        seen["tool_input"]["command"], "ls -la",
        "the second hook saw the rewrite"
    );
}

#[tokio::test]
async fn other_exit_codes_are_failures_handled_by_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    let warn = engine_with(vec![command("echo 'disk on fire' >&2; exit 3")]);
    let outcome = warn.dispatch(bash_in(dir.path(), "ls")).await;
    assert_eq!(outcome.verdict, Verdict::Proceed);
    assert!(
        matches!(failure(&outcome), HookError::ExitCode { code: 3, stderr, .. } if stderr == "disk on fire")
    );
    assert!(
        outcome.system_messages[0]
            .value
            .contains("exited with code 3: disk on fire")
    );
    let block = engine_with(vec![
        json!({"type": "command", "command": "exit 1", "on_failure": "block"}),
    ]);
    assert!(block.dispatch(bash_in(dir.path(), "ls")).await.is_denied());
}

#[tokio::test]
async fn plain_text_is_context_for_prompts_and_invalid_json_is_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with(vec![command("echo 'on branch main'")]);
    let prompt = Event::user_prompt_submit("hi").with("cwd", dir.path().display().to_string());
    let outcome = engine.dispatch(prompt).await;
    assert_eq!(outcome.contexts[0].value.text, "on branch main");
    let engine = engine_with(vec![command("echo '{not json'")]);
    let outcome = engine.dispatch(bash_in(dir.path(), "ls")).await;
    assert!(
        matches!(failure(&outcome), HookError::BadResult { message, .. } if message.contains("not a valid JSON answer"))
    );
}

/// Whether a process is gone (or a zombie waiting for its new parent).
fn is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let line = "sleep 600 & echo $! > child.pid; sleep 600";
    let engine = engine_with(vec![
        json!({"type": "command", "command": line, "timeout_ms": 300}),
    ]);
    // Only a liveness guard: if the hook were not killed, dispatch would
    // wait the full 600 s.
    let outcome = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        engine.dispatch(bash_in(dir.path(), "ls")),
    )
    .await
    .expect("dispatch returned after the hook's deadline");
    assert_eq!(
        failure(&outcome).to_string(),
        format!("hook `{line}` timed out (limit timeout_ms = 300)")
    );
    let pid: i32 = std::fs::read_to_string(dir.path().join("child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SIGKILL went to the whole group before dispatch returned; give the
    // kernel a bounded moment to finish the background child off.
    let gone = (0..500).any(|_| {
        let dead = is_dead(pid);
        if !dead {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        dead
    });
    assert!(gone, "the hook's background child {pid} survived");
}

#[tokio::test]
async fn fifty_mib_of_output_is_capped_without_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let defaults = CommandDefaults {
        max_output_kb: 64,
        ..CommandDefaults::default()
    };
    let engine = engine_with_defaults(
        vec![command(
            "head -c 52428800 /dev/zero | tr '\\0' y; head -c 52428800 /dev/zero >&2",
        )],
        defaults,
    );
    let outcome = engine.dispatch(bash_in(dir.path(), "ls")).await;
    let entry = &outcome.trace[0];
    assert!(
        matches!(entry.status, TraceStatus::Answered(_)),
        "{:?}",
        entry.status
    );
    assert_eq!(entry.output.stdout.len(), 64 * 1024);
    assert_eq!(entry.output.stderr.len(), 64 * 1024);
    assert!(entry.output.truncated);
}

#[tokio::test]
async fn missing_and_non_executable_programs_are_distinct_failures() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("not-executable.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    let script = script.display().to_string();
    let cases = [
        (command("definitely-not-a-command-wasm-hooks"), "not_found"),
        (
            json!({"type": "command", "args": ["/nonexistent/program"]}),
            "not_found",
        ),
        (command(&script), "not_executable"),
        (
            json!({"type": "command", "args": [script]}),
            "not_executable",
        ),
        (command("kill -TERM $$"), "signal"),
    ];
    for (entry, kind) in cases {
        let outcome = engine_with(vec![entry.clone()])
            .dispatch(bash_in(dir.path(), "ls"))
            .await;
        assert_eq!(
            failure(&outcome).kind(),
            kind,
            "{entry}: {}",
            failure(&outcome)
        );
    }
}

#[tokio::test]
async fn args_run_without_a_shell_so_nothing_is_injected() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with(vec![
        json!({"type": "command", "args": ["printf", "%s", "a; touch injected"]}),
    ]);
    let outcome = engine.dispatch(bash_in(dir.path(), "ls")).await;
    assert_eq!(outcome.trace[0].output.stdout, "a; touch injected");
    assert!(!dir.path().join("injected").exists());
}

#[tokio::test]
async fn non_utf8_output_is_kept_lossily() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with(vec![command(r"printf 'ok\377\376'")]);
    let outcome = engine.dispatch(bash_in(dir.path(), "ls")).await;
    assert_eq!(answered(&outcome).decision, Decision::Proceed);
    assert!(outcome.trace[0].output.stdout.starts_with("ok"));
}

#[tokio::test]
async fn an_async_command_runs_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with(vec![
        json!({"type": "command", "command": "echo '{\"decision\":\"block\"}'; touch ran", "async": true}),
    ]);
    let outcome = engine.dispatch(bash_in(dir.path(), "ls")).await;
    assert_eq!(
        outcome.verdict,
        Verdict::Proceed,
        "a background hook cannot block"
    );
    assert!(matches!(outcome.trace[0].status, TraceStatus::Detached));
    engine.wait_for_background().await;
    assert!(dir.path().join("ran").exists());
}

#[tokio::test]
async fn template_values_are_shell_quoted_so_a_file_name_cannot_inject_a_command() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with(vec![command(
        "printf '%s|' {{tool_name}} {{tool_args.file_path}} > out.txt",
    )]);
    let hostile = "'; touch injected; echo '";
    let event = Event::pre_tool_use("Write", json!({ "file_path": hostile }))
        .with("cwd", dir.path().display().to_string());
    let outcome = engine.dispatch(event).await;
    assert!(matches!(outcome.trace[0].status, TraceStatus::Answered(_)));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        format!("Write|{hostile}|")
    );
    assert!(!dir.path().join("injected").exists());
}

#[test]
fn an_unknown_template_is_a_load_error() {
    let file = support::write_hook_file(
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo {{tool_nmae}}"}]}]}}),
    );
    let err = HookEngine::builder()
        .hook_file(&file.path)
        .build()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("hooks.Stop[0].hooks[0]: unknown template `{{tool_nmae}}`"),
        "{err}"
    );
}

/// What the agent ends up doing, as docs/protocol.md's observed table puts it.
#[derive(Debug, PartialEq)]
struct Effect {
    tool_runs: bool,
    model_sees: Option<String>,
    input: Option<Value>,
    turn_ends: bool,
    context: Option<String>,
}

fn effect(outcome: &Outcome) -> Effect {
    let (tool_runs, model_sees) = match &outcome.verdict {
        Verdict::Proceed | Verdict::Allow { .. } => (true, None),
        Verdict::Deny { reason } => (false, Some(reason.clone())),
        Verdict::Ask(a) => (false, Some(a.prompt.clone())),
    };
    Effect {
        tool_runs,
        model_sees,
        input: outcome.updated_input.clone(),
        turn_ends: outcome.stop.is_some(),
        context: outcome.contexts.first().map(|c| c.value.text.clone()),
    }
}

/// docs/protocol.md, "What Claude Code 2.1.197 does with a hook's answer", row by
/// row: the same hook answers, given by real scripts, must have the same
/// effect through wasm-hooks (a non-interactive agent treats `ask` as no).
#[tokio::test]
async fn the_observed_claude_code_table_row_by_row() {
    let dir = tempfile::tempdir().unwrap();
    let runs = |input: Option<Value>, turn_ends: bool, context: Option<&str>| Effect {
        tool_runs: true,
        model_sees: None,
        input,
        turn_ends,
        context: context.map(str::to_owned),
    };
    let blocked = |reason: &str| Effect {
        tool_runs: false,
        model_sees: Some(reason.to_owned()),
        input: None,
        turn_ends: false,
        context: None,
    };
    let rows: Vec<(&str, Value, Effect)> = vec![
        (
            "exit 0, no output",
            command("true"),
            runs(None, false, None),
        ),
        (
            "exit 0, plain text",
            command("echo fine"),
            runs(None, false, None),
        ),
        (
            "exit 0, invalid JSON",
            command("echo '{oops'"),
            runs(None, false, None),
        ),
        (
            "exit 1 + stderr",
            command("echo bad >&2; exit 1"),
            runs(None, false, None),
        ),
        (
            "exit 3 + stderr",
            command("echo bad >&2; exit 3"),
            runs(None, false, None),
        ),
        (
            "exit 2 + stderr",
            command("echo 'not now' >&2; exit 2"),
            blocked("not now"),
        ),
        (
            "exit 2 + JSON allow",
            command(
                r#"echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'; echo 'still no' >&2; exit 2"#,
            ),
            blocked("still no"),
        ),
        (
            "permissionDecision deny",
            command(
                r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R verbatim"}}'"#,
            ),
            blocked("R verbatim"),
        ),
        (
            "permissionDecision allow",
            command(r#"echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'"#),
            runs(None, false, None),
        ),
        (
            "permissionDecision ask (non-interactive)",
            command(
                r#"echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"why"}}'"#,
            ),
            blocked("why"),
        ),
        (
            "updatedInput + allow",
            command(
                r#"echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"echo new"}}}'"#,
            ),
            runs(Some(json!({"command": "echo new"})), false, None),
        ),
        (
            "decision block",
            command(r#"echo '{"decision":"block","reason":"R"}'"#),
            blocked("R"),
        ),
        (
            "continue false",
            command(r#"echo '{"continue":false}'"#),
            runs(None, true, None),
        ),
        (
            "additionalContext",
            command(r#"echo '{"hookSpecificOutput":{"additionalContext":"C"}}'"#),
            runs(None, false, Some("C")),
        ),
        (
            "timeout (fails open)",
            json!({"type": "command", "command": "sleep 600", "timeout_ms": 200}),
            runs(None, false, None),
        ),
    ];
    for (row, hook, expected) in rows {
        let outcome = engine_with(vec![hook])
            .dispatch(bash_in(dir.path(), "echo hi"))
            .await;
        assert_eq!(effect(&outcome), expected, "row: {row}");
    }
}

#[tokio::test]
async fn a_script_rewrites_a_tool_output_after_the_tool_ran() {
    let dir = tempfile::tempdir().unwrap();
    let post = Event::post_tool_use(
        "Bash",
        json!({"command": "env"}),
        json!({"stdout": "TOKEN=abc", "stderr": ""}),
    )
    .with("cwd", dir.path().display().to_string());
    // The script masks what it reads on stdin, as a redaction hook would.
    let mask = command(
        r#"sed -e 's/.*"stdout":"\([A-Z]*\)=[^"]*".*/{"action":"modify","data":{"stdout":"\1=[hidden]","stderr":""}}/'"#,
    );
    let outcome = engine_with(vec![mask]).dispatch(&post).await;
    assert_eq!(
        outcome.updated_output,
        Some(json!({"stdout": "TOKEN=[hidden]", "stderr": ""})),
        "{:?}",
        outcome.trace
    );
    let mcp = command(
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedMCPToolOutput":[{"type":"text","text":"[hidden]"}]}}'"#,
    );
    let outcome = engine_with(vec![mcp]).dispatch(&post).await;
    assert_eq!(
        outcome.updated_output,
        Some(json!([{"type": "text", "text": "[hidden]"}]))
    );
    // New arguments after the tool ran are refused, as a failure of the hook.
    let late = command(r#"echo '{"action":"modify","modified_args":{"command":"ls"}}'"#);
    let outcome = engine_with(vec![late]).dispatch(&post).await;
    assert!(
        failure(&outcome)
            .to_string()
            .contains("the tool already ran"),
        "{}",
        failure(&outcome)
    );
}

#[tokio::test]
async fn every_json_answer_shape_from_a_real_script() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Decision)> = vec![
        (
            r#"{"action":"allow","message":"ok"}"#,
            Decision::Allow {
                reason: Some("ok".into()),
            },
        ),
        (
            r#"{"action":"block","message":"m"}"#,
            Decision::Deny { reason: "m".into() },
        ),
        (
            r#"{"action":"modify","modified_args":{"command":"ls"}}"#,
            Decision::Modify {
                input: json!({"command": "ls"}),
            },
        ),
        (
            r#"{"continue":true,"decision":"approve","reason":"r"}"#,
            Decision::Allow {
                reason: Some("r".into()),
            },
        ),
        (
            r#"{"decision":"modify","modified_args":{"command":"pwd"}}"#,
            Decision::Modify {
                input: json!({"command": "pwd"}),
            },
        ),
        (
            r#"{"action":"deny","reason":"r2"}"#,
            Decision::Deny {
                reason: "r2".into(),
            },
        ),
        (
            r#"{"action":"inject_context","context_injection":"ctx"}"#,
            Decision::Proceed,
        ),
        (r#"{"action":"continue"}"#, Decision::Proceed),
        (
            r#"{"action":"modify","data":{"command":"id"}}"#,
            Decision::Modify {
                input: json!({"command": "id"}),
            },
        ),
    ];
    for (answer, expected) in cases {
        let engine = engine_with(vec![command(&format!("echo '{answer}'"))]);
        let outcome = engine.dispatch(bash_in(dir.path(), "ls")).await;
        assert_eq!(answered(&outcome).decision, expected, "{answer}");
    }
    let engine = engine_with(vec![command(
        r#"echo '{"action":"ask_user","approval_prompt":"push?","approval_options":["yes","no"],"approval_timeout":5,"approval_default":"deny"}'"#,
    )]);
    let outcome = engine.dispatch(bash_in(dir.path(), "git push")).await;
    assert!(
        matches!(outcome.verdict, Verdict::Ask(ref a) if a.prompt == "push?" && a.timeout_ms == Some(5000) && !a.default_allow)
    );
}

#[tokio::test]
async fn the_engine_wide_timeout_applies_to_hooks_that_set_none() {
    let dir = tempfile::tempdir().unwrap();
    let defaults = CommandDefaults {
        timeout_ms: 250,
        ..CommandDefaults::default()
    };
    let engine = engine_with_defaults(vec![command("sleep 600")], defaults);
    let outcome = engine.dispatch(bash_in(dir.path(), "ls")).await;
    assert!(
        matches!(failure(&outcome), HookError::Timeout { limit_ms: 250, .. }),
        "{:?}",
        failure(&outcome)
    );
}

#[tokio::test]
async fn h5_a_command_guard_still_runs_on_an_event_over_128_kib() {
    let engine = engine_with(vec![command(
        r#"grep -q 'rm -rf' && { echo "omitted: $WASM_HOOKS_OMITTED" >&2; exit 2; }; exit 0"#,
    )]);
    let dir = tempfile::tempdir().unwrap();
    let huge = format!("rm -rf ~ #{}", "x".repeat(140 * 1024));
    let outcome = engine.dispatch(bash_in(dir.path(), &huge)).await;
    assert_eq!(
        outcome.verdict,
        Verdict::Deny {
            reason: "omitted: WASM_HOOKS_TOOL_ARGS".into()
        },
        "{outcome:?}"
    );
}

#[tokio::test]
async fn h5_a_guard_reading_tool_args_from_the_environment_blocks_an_event_too_large_for_it() {
    // It would see an empty `$WASM_HOOKS_TOOL_ARGS` and let `rm -rf` by.
    let engine = engine_with(vec![json!({"type": "command", "on_failure": "warn",
        "command": r#"echo "$WASM_HOOKS_TOOL_ARGS" | grep -q 'rm -rf' && exit 2; exit 0"#})]);
    let dir = tempfile::tempdir().unwrap();
    let huge = format!("rm -rf ~ #{}", "x".repeat(140 * 1024));
    let outcome = engine.dispatch(bash_in(dir.path(), &huge)).await;
    assert_eq!(failure(&outcome).kind(), "variable_too_large");
    assert!(
        matches!(&outcome.verdict, Verdict::Deny { reason } if reason.contains("WASM_HOOKS_TOOL_ARGS")),
        "{outcome:?}"
    );
    assert_eq!(
        engine.dispatch(bash_in(dir.path(), "ls")).await.verdict,
        Verdict::Proceed
    );
}

#[tokio::test]
async fn h5_an_event_too_large_for_a_templates_arguments_blocks_whatever_on_failure_says() {
    // The guard takes the command in its arguments, and warns on failure:
    // an event over 128 KiB cannot start it, and must not slip past it.
    let engine = engine_with(vec![json!({"type": "command", "on_failure": "warn",
        "command": "case {{tool_input.command}} in *rm*) exit 2;; esac"})]);
    let dir = tempfile::tempdir().unwrap();
    let huge = format!("rm -rf ~ #{}", "x".repeat(140 * 1024));
    let outcome = engine.dispatch(bash_in(dir.path(), &huge)).await;
    assert_eq!(failure(&outcome).kind(), "arguments_too_large");
    match &outcome.verdict {
        Verdict::Deny { reason } => assert!(reason.contains("too large"), "{reason}"),
        other => panic!("a huge event slipped past the guard: {other:?}"),
    }
    // A normal event still reaches it, and an innocent one passes.
    assert!(matches!(
        engine
            .dispatch(bash_in(dir.path(), "rm -rf ~"))
            .await
            .verdict,
        Verdict::Deny { .. }
    ));
    assert_eq!(
        engine.dispatch(bash_in(dir.path(), "ls")).await.verdict,
        Verdict::Proceed
    );
}

#[test]
fn l2_escape_sequences_and_newlines_from_a_hook_never_reach_the_terminal_raw() {
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [
        command(r"printf 'boom\033[2J\033]0;pwned\007\nwasm-hooks: all hooks passed\n' >&2; exit 1"),
    ]}]}}));
    let out = support::run_bash_ls(&file.path);
    let shown = [out.stdout, out.stderr].concat();
    assert!(!shown.contains(&0x1b), "a raw escape reached the terminal");
    assert!(!shown.contains(&0x07), "a raw bell reached the terminal");
    let text = String::from_utf8_lossy(&shown);
    assert!(text.contains(r"boom\u{1b}[2J"), "{text}");
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("wasm-hooks: all hooks passed")),
        "a forged line: {text}"
    );
}

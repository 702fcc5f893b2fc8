//! Command hooks with real processes: what they receive (stdin, variables,
//! working directory), what each exit code and JSON answer means, and how
//! timeouts, floods, missing programs and signals are handled.

mod support;

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
    let engine = engine_with(vec![command(
        "cat > stdin.json; env > env.txt; pwd > pwd.txt",
    )]);
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
        &format!("CLAUDE_PROJECT_DIR={}", dir.path().display()),
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
async fn a_flood_of_output_is_capped_without_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let defaults = CommandDefaults {
        max_output_kb: 64,
        ..CommandDefaults::default()
    };
    let engine = engine_with_defaults(
        vec![command(
            "head -c 5000000 /dev/zero | tr '\\0' y; head -c 3000000 /dev/zero >&2",
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

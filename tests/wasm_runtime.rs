//! The wasm handler with real components built from the guest crates in
//! `example-plugins/` and `tests/hostile/`: decisions, every limit, traps,
//! bad answers, the sandbox, and recovery after each failure.

use crate::support;

use serde_json::{Value, json};
use support::{hook_file, plugin};
use wasm_hooks::{
    Event, EventName, HookEngine, HookError, HookId, Outcome, TraceStatus, Verdict, WasmRuntime,
};

fn engine(file: &support::HookFile) -> HookEngine {
    HookEngine::builder()
        .hook_file(&file.path)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// An engine running `deny-dangerous-commands` with its default patterns on
/// Bash.
fn deny_engine() -> HookEngine {
    engine(&hook_file(
        "PreToolUse",
        "Bash",
        &plugin("deny-dangerous-commands"),
        json!({}),
    ))
}

fn bash(command: &str) -> Event {
    Event::pre_tool_use("Bash", json!({ "command": command }))
}

fn failure(outcome: &Outcome) -> &HookError {
    match &outcome.trace[0].status {
        TraceStatus::Failed { error, .. } => error,
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// After a failure on PreToolUse, the same engine and plugin still answer
/// the next event normally (the hostile plugins allow everything else).
async fn answers_next_event(engine: &HookEngine) {
    let outcome = engine.dispatch(bash("ls")).await;
    assert!(matches!(
        failure(&outcome),
        HookError::Timeout { .. }
            | HookError::FuelExhausted { .. }
            | HookError::MemoryLimit { .. }
            | HookError::Trap { .. }
    ));
    let next = engine
        .dispatch(Event::new(EventName::UserPromptSubmit).with("prompt", "hi"))
        .await;
    assert_eq!(next.verdict, Verdict::Allow { reason: None }, "{next:#?}");
}

#[tokio::test]
async fn dangerous_commands_are_denied_with_the_pattern_and_others_proceed() {
    let engine = deny_engine();
    let denied = engine.dispatch(bash("sudo rm -rf /")).await;
    assert_eq!(
        denied.verdict,
        Verdict::Deny {
            reason: "command matches the dangerous pattern `rm -rf /`".into()
        }
    );
    assert_eq!(
        denied.decided_by,
        Some(HookId::new("deny_dangerous_commands"))
    );
    assert_eq!(
        denied.trace[0].output.logs,
        ["info: denied `sudo rm -rf /`"]
    );
    for ok in ["ls -la", "rm -rf target", "curl https://example.com"] {
        assert_eq!(
            engine.dispatch(bash(ok)).await.verdict,
            Verdict::Proceed,
            "{ok}"
        );
    }
}

#[tokio::test]
async fn patterns_come_from_the_hook_config() {
    let config = json!({"config": {"patterns": ["git push --force"]}});
    let file = hook_file(
        "PreToolUse",
        "Bash",
        &plugin("deny-dangerous-commands"),
        config,
    );
    let engine = engine(&file);
    let denied = engine.dispatch(bash("git push --force origin main")).await;
    assert!(
        matches!(denied.verdict, Verdict::Deny { ref reason } if reason.contains("git push --force"))
    );
    // The configured list replaces the defaults.
    assert_eq!(
        engine.dispatch(bash("rm -rf /")).await.verdict,
        Verdict::Proceed
    );
}

#[tokio::test]
async fn the_matcher_decides_which_tools_reach_the_plugin() {
    let file = hook_file(
        "PreToolUse",
        "Edit|Write",
        &plugin("deny-dangerous-commands"),
        json!({}),
    );
    let outcome = engine(&file).dispatch(bash("rm -rf /")).await;
    assert_eq!(outcome.verdict, Verdict::Proceed);
    assert!(outcome.trace.is_empty(), "the hook must not run for Bash");
}

#[tokio::test]
async fn an_infinite_loop_is_stopped_by_fuel() {
    let file = two_event_file(
        &plugin("hostile-spin"),
        json!({"limits": {"fuel": 10_000_000, "timeout_ms": 60_000}}),
    );
    let engine = engine(&file);
    let outcome = engine.dispatch(bash("ls")).await;
    assert_eq!(
        failure(&outcome),
        &HookError::FuelExhausted {
            hook: HookId::new("hostile_spin"),
            fuel: 10_000_000
        }
    );
    assert_eq!(
        failure(&outcome).to_string(),
        "hook `hostile_spin` ran out of fuel (limit fuel = 10000000)"
    );
    answers_next_event(&engine).await;
}

/// A hook file with `plugin` on PreToolUse (with `extra` fields) and on
/// UserPromptSubmit (with defaults), to show recovery on the next event.
fn two_event_file(plugin: &std::path::Path, extra: Value) -> support::HookFile {
    let mut entry = json!({"type": "wasm", "plugin": plugin});
    entry
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    support::write_hook_file(&json!({"hooks": {
        "PreToolUse": [{"hooks": [entry]}],
        "UserPromptSubmit": [{"hooks": [{"type": "wasm", "plugin": plugin}]}],
    }}))
}

#[tokio::test]
async fn an_infinite_loop_is_stopped_by_the_deadline() {
    let file = two_event_file(
        &plugin("hostile-spin"),
        json!({"limits": {"fuel": u64::MAX, "timeout_ms": 100}}),
    );
    let engine = engine(&file);
    let outcome = engine.dispatch(bash("ls")).await;
    assert_eq!(
        failure(&outcome),
        &HookError::Timeout {
            hook: HookId::new("hostile_spin"),
            limit_ms: 100
        }
    );
    answers_next_event(&engine).await;
}

#[tokio::test]
async fn a_memory_grower_is_stopped_by_the_memory_cap() {
    let file = two_event_file(
        &plugin("hostile-grow-memory"),
        json!({"limits": {"memory_mb": 16}}),
    );
    let engine = engine(&file);
    let outcome = engine.dispatch(bash("ls")).await;
    assert_eq!(
        failure(&outcome),
        &HookError::MemoryLimit {
            hook: HookId::new("hostile_grow_memory"),
            limit_mb: 16
        }
    );
    answers_next_event(&engine).await;
}

#[tokio::test]
async fn a_panic_is_reported_with_its_message() {
    let file = two_event_file(&plugin("hostile-panic"), json!({}));
    let engine = engine(&file);
    let outcome = engine.dispatch(bash("ls")).await;
    let HookError::Trap { hook, message } = failure(&outcome) else {
        panic!("expected a trap, got {:?}", failure(&outcome));
    };
    assert_eq!(hook.as_str(), "hostile_panic");
    assert!(message.contains("unreachable"), "{message}");
    assert!(message.contains("boom from the panic plugin"), "{message}");
    // on_failure defaults to warn: the operation goes on, with a warning.
    assert_eq!(outcome.verdict, Verdict::Proceed);
    assert!(
        outcome.system_messages[0]
            .value
            .contains("boom from the panic plugin")
    );
    answers_next_event(&engine).await;
}

#[tokio::test]
async fn on_failure_block_turns_a_crash_into_a_deny() {
    let file = two_event_file(&plugin("hostile-panic"), json!({"on_failure": "block"}));
    let outcome = engine(&file).dispatch(bash("ls")).await;
    assert!(
        matches!(outcome.verdict, Verdict::Deny { ref reason } if reason.contains("on_failure = block") && reason.contains("hostile_panic")),
        "{:?}",
        outcome.verdict
    );
}

#[tokio::test]
async fn on_failure_ignore_says_nothing_but_keeps_the_trace() {
    let file = two_event_file(&plugin("hostile-panic"), json!({"on_failure": "ignore"}));
    let outcome = engine(&file).dispatch(bash("ls")).await;
    assert_eq!(outcome.verdict, Verdict::Proceed);
    assert!(outcome.system_messages.is_empty());
    assert!(matches!(failure(&outcome), HookError::Trap { .. }));
}

async fn bad_answer(config: Value, limits: Value) -> Outcome {
    let file = two_event_file(
        &plugin("hostile-bad-answer"),
        json!({"config": config, "limits": limits}),
    );
    engine(&file).dispatch(bash("ls")).await
}

#[tokio::test]
async fn an_answer_over_the_result_limit_is_a_failure() {
    let outcome = bad_answer(
        json!({"kind": "huge", "bytes": 4096}),
        json!({"max_result_kb": 1}),
    )
    .await;
    assert_eq!(
        failure(&outcome),
        &HookError::ResultTooLarge {
            hook: HookId::new("hostile_bad_answer"),
            size_kb: 4,
            limit_kb: 1
        }
    );
    let outcome = bad_answer(
        json!({"kind": "huge", "bytes": 512}),
        json!({"max_result_kb": 1}),
    )
    .await;
    assert!(outcome.is_denied(), "an answer under the limit counts");
}

#[tokio::test]
async fn a_modify_that_is_not_an_object_is_a_bad_result() {
    let outcome = bad_answer(json!({"kind": "bad-modify"}), json!({})).await;
    assert!(
        matches!(failure(&outcome), HookError::BadResult { message, .. } if message.contains("JSON object"))
    );
}

#[tokio::test]
async fn a_plugin_error_is_a_failure_with_its_message() {
    let outcome = bad_answer(json!({"kind": "error"}), json!({})).await;
    assert_eq!(
        failure(&outcome),
        &HookError::Failed {
            hook: HookId::new("hostile_bad_answer"),
            message: "the plugin could not decide".into()
        }
    );
}

#[tokio::test]
async fn flooded_stdout_and_stderr_are_capped_without_failing_the_hook() {
    let outcome = bad_answer(
        json!({"kind": "chatty", "bytes": 5000}),
        json!({"max_output_kb": 1}),
    )
    .await;
    let entry = &outcome.trace[0];
    assert!(
        matches!(entry.status, TraceStatus::Answered(_)),
        "{:?}",
        entry.status
    );
    assert_eq!(entry.output.stdout.len(), 1024);
    assert_eq!(entry.output.stderr.len(), 1024);
    assert!(entry.output.truncated);
}

#[tokio::test]
async fn the_sandbox_refuses_env_files_network_and_stdin() {
    assert!(
        std::env::var_os("PATH").is_some(),
        "the host itself has an environment"
    );
    let file = two_event_file(&plugin("hostile-snoop"), json!({}));
    let outcome = engine(&file).dispatch(bash("ls")).await;
    let report: Value = serde_json::from_str(&outcome.contexts[0].value.text).unwrap();
    assert_eq!(
        report["env"],
        json!([]),
        "no environment variable is visible"
    );
    for probe in ["read_root", "read_passwd", "write_tmp", "connect"] {
        let got = report[probe].as_str().unwrap();
        assert!(got.starts_with("refused"), "{probe}: {got}");
    }
    // stdin is empty: reading it succeeds with nothing.
    assert_eq!(report["stdin"], "ok: 0", "nothing to read");
    // Clocks and random numbers are allowed.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let clock = report["clock_s"].as_u64().unwrap();
    assert!(
        now.abs_diff(clock) < 60,
        "the plugin's clock {clock}, the host's {now}"
    );
    assert_eq!(report["random"], true, "fresh random seeds");
    assert!(!std::path::Path::new("/tmp/wasm-hooks-snoop").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_dispatch_gives_the_same_outcomes_as_sequential() {
    let engine = deny_engine();
    let commands: Vec<String> = (0..64)
        .map(|i| {
            if i % 3 == 0 {
                format!("rm -rf / # {i}")
            } else {
                format!("echo {i}")
            }
        })
        .collect();
    let mut sequential = Vec::new();
    for c in &commands {
        sequential.push(engine.dispatch(bash(c)).await.verdict);
    }
    let tasks: Vec<_> = commands
        .iter()
        .map(|c| {
            let engine = engine.clone();
            let event = bash(c);
            tokio::spawn(async move { engine.dispatch(event).await.verdict })
        })
        .collect();
    let mut concurrent = Vec::new();
    for t in tasks {
        concurrent.push(t.await.unwrap());
    }
    assert_eq!(concurrent, sequential);
    assert_eq!(
        sequential
            .iter()
            .filter(|v| matches!(v, Verdict::Deny { .. }))
            .count(),
        22
    );
}

#[tokio::test]
async fn both_allocators_give_the_same_answers() {
    let file = hook_file(
        "PreToolUse",
        "Bash",
        &plugin("deny-dangerous-commands"),
        json!({}),
    );
    for pooling in [true, false] {
        let mut options = WasmRuntime::builder();
        options.pooling(pooling).no_cache();
        let runtime = options.build().unwrap();
        assert!(!pooling || runtime.uses_pooling(), "this machine can pool");
        assert_eq!(runtime.uses_pooling(), pooling);
        let engine = support::engine_on(runtime, &file);
        assert!(matches!(
            engine.dispatch(bash("rm -rf /")).await.verdict,
            Verdict::Deny { .. }
        ));
        assert_eq!(engine.dispatch(bash("ls")).await.verdict, Verdict::Proceed);
    }
}

#[test]
fn a_runtime_wasmtime_refuses_keeps_wasmtimes_error_as_its_source() {
    // A wasm stack larger than the async stack it runs on: wasmtime refuses
    // the engine.
    let err = WasmRuntime::builder()
        .no_cache()
        .max_wasm_stack_kb(1 << 30)
        .build()
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(err, wasm_hooks::Error::Runtime { .. }), "{err:?}");
    let source = std::error::Error::source(&err).expect("wasmtime's error is the source");
    assert!(err.to_string().contains(&source.to_string()), "{err}");
}

/// The context `remember` gave: `call N`, N the calls its instance
/// answered.
async fn remembered(engine: &HookEngine, command: &str) -> String {
    let outcome = engine.dispatch(bash(command)).await;
    outcome
        .contexts
        .first()
        .map(|c| c.value.text.clone())
        .unwrap_or_else(|| format!("{outcome:#?}"))
}

/// `instance: reuse`: the hook's instance answers event after event, its
/// memory carried over (the plugin counts its calls); the default gives
/// every event a fresh one.
#[tokio::test]
async fn a_reused_instance_keeps_its_memory_between_events_and_a_fresh_one_does_not() {
    let remember = plugin("hostile-remember");
    let warm = engine(&hook_file(
        "PreToolUse",
        "Bash",
        &remember,
        json!({"instance": "reuse"}),
    ));
    let fresh = engine(&hook_file("PreToolUse", "Bash", &remember, json!({})));
    for n in 1..=3 {
        assert_eq!(remembered(&warm, "ls").await, format!("call {n}"));
        assert_eq!(remembered(&fresh, "ls").await, "call 1");
    }
}

/// A warm instance stopped by a trap is not used again: the next event
/// gets a fresh one. After `MAX_CALLS` calls it is replaced too.
#[tokio::test]
async fn a_reused_instance_is_replaced_after_a_trap_and_after_its_last_call() {
    let warm = engine(&hook_file(
        "PreToolUse",
        "Bash",
        &plugin("hostile-remember"),
        json!({"instance": "reuse"}),
    ));
    assert_eq!(remembered(&warm, "ls").await, "call 1");
    assert_eq!(remembered(&warm, "ls").await, "call 2");
    let trapped = warm.dispatch(bash("trap")).await;
    assert!(
        matches!(failure(&trapped), HookError::Trap { message, .. } if message.contains("after 3 calls")),
        "{trapped:#?}"
    );
    assert_eq!(remembered(&warm, "ls").await, "call 1", "a fresh instance");
    for n in 2..=wasm_hooks_wasm::MAX_INSTANCE_CALLS {
        assert_eq!(remembered(&warm, "ls").await, format!("call {n}"));
    }
    assert_eq!(remembered(&warm, "ls").await, "call 1", "replaced");
}

/// A runtime that answers like a process (`hook`, its daemon) gives every
/// event a fresh instance, whatever the hook file asks.
#[tokio::test]
async fn a_runtime_answering_like_a_process_never_reuses_an_instance() {
    let runtime = WasmRuntime::builder().like_a_process().build().unwrap();
    let file = hook_file(
        "PreToolUse",
        "Bash",
        &plugin("hostile-remember"),
        json!({"instance": "reuse"}),
    );
    let engine = support::engine_on(runtime, &file);
    assert_eq!(remembered(&engine, "ls").await, "call 1");
    assert_eq!(remembered(&engine, "ls").await, "call 1");
}

/// A host that prepares between events (the daemon, after its reply)
/// gives the next event an instance made ahead of it, never called
/// before: every event still sees a fresh one.
#[tokio::test]
async fn an_instance_prepared_between_events_is_fresh_for_the_next_one() {
    let runtime = WasmRuntime::builder().like_a_process().build().unwrap();
    let file = hook_file("PreToolUse", "Bash", &plugin("hostile-remember"), json!({}));
    let engine = support::engine_on(runtime, &file);
    let prepared = |engine: &HookEngine| format!("{:?}", engine.hooks()[0].handler);
    assert!(prepared(&engine).contains("Prepared(none)"));
    for _ in 0..3 {
        engine.prepare().await;
        assert!(prepared(&engine).contains("Prepared(ready)"));
        assert_eq!(remembered(&engine, "ls").await, "call 1");
        assert!(prepared(&engine).contains("Prepared(none)"), "used once");
    }
    // A trap on a prepared instance is the event's, as on any other.
    engine.prepare().await;
    let trapped = engine.dispatch(bash("trap")).await;
    assert!(
        matches!(failure(&trapped), HookError::Trap { message, .. } if message.contains("after 1 calls")),
        "{trapped:#?}"
    );
}

/// Many events at once on a hook that reuses instances: each gets an
/// instance of its own (warm or new), and every one is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_events_on_a_reused_hook_each_get_an_instance_of_their_own() {
    let warm = std::sync::Arc::new(engine(&hook_file(
        "PreToolUse",
        "Bash",
        &plugin("hostile-remember"),
        json!({"instance": "reuse"}),
    )));
    let calls: Vec<_> = (0..64)
        .map(|_| {
            let warm = warm.clone();
            tokio::spawn(async move { remembered(&warm, "ls").await })
        })
        .collect();
    // Each instance counts its own calls: `call n` is answered once per
    // instance that reached n, so no count appears more often than the one
    // below it, and with instances reused some count passes 1.
    let mut seen = std::collections::BTreeMap::<u32, usize>::new();
    for call in calls {
        let said = call.await.unwrap();
        let n: u32 = said.strip_prefix("call ").unwrap().parse().unwrap();
        *seen.entry(n).or_default() += 1;
    }
    assert_eq!(seen.values().sum::<usize>(), 64);
    assert!(
        seen.keys().any(|&n| n > 1),
        "no instance was reused: {seen:?}"
    );
    for (n, times) in &seen {
        let below = if *n == 1 {
            64
        } else {
            seen.get(&(n - 1)).copied().unwrap_or(0)
        };
        assert!(*times <= below, "{seen:?}");
    }
}

/// A shared store that takes reads and refuses every commit.
#[derive(Debug)]
struct RefusesCommits;

impl wasm_hooks::SessionStore for RefusesCommits {
    fn set_once(&self, _: &str) -> Result<bool, wasm_hooks::StoreError> {
        Ok(true)
    }
    fn count(&self, _: &str) -> Result<u32, wasm_hooks::StoreError> {
        Ok(0)
    }
    fn set_count(&self, _: &str, _: u32) -> Result<(), wasm_hooks::StoreError> {
        Ok(())
    }
    fn map_get(&self, _: &str, _: &str) -> Result<Option<String>, wasm_hooks::StoreError> {
        Ok(None)
    }
    fn map_commit(
        &self,
        _: &str,
        _: &wasm_hooks::MapChange,
        _: usize,
    ) -> Result<bool, wasm_hooks::StoreError> {
        Err(wasm_hooks::StoreError::Unreachable(
            "the store refused the write".into(),
        ))
    }
}

/// A deny whose `kv` values cannot be stored still denies, even where the
/// hook fails open (`on_failure: warn`, the default): the failure to store
/// is said, not turned into a hook failure that would let the call
/// through. An answer that lets it through fails as before.
#[tokio::test]
async fn a_deny_stands_when_its_kv_values_cannot_be_stored() {
    let runtime = WasmRuntime::builder()
        .session_store(std::sync::Arc::new(RefusesCommits))
        .build()
        .unwrap();
    let file = hook_file("PreToolUse", "Bash", &plugin("hostile-remember"), json!({}));
    let engine = support::engine_on(runtime, &file);
    let denied = engine.dispatch(bash("deny-and-note")).await;
    assert!(
        matches!(denied.verdict, Verdict::Deny { .. }),
        "{denied:#?}"
    );
    assert!(
        format!("{denied:?}").contains("the store refused the write; its answer stands"),
        "{denied:#?}"
    );
}

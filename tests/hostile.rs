//! The hostile-plugin suite: every plugin in `tests/hostile/` against the
//! sandbox and the limits. For each one, the event gets the hook's
//! `on_failure` result with a reason that names what happened, nothing
//! outside the sandbox changes, and a normal plugin dispatched at the same
//! time on the same engine keeps answering correctly.

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::plugin;
use wasm_hooks::{Event, HookEngine, Outcome, Verdict, WasmRuntime};

/// A PreToolUse event for `tool` running `command`.
fn tool_event(tool: &str, command: &str) -> Event {
    Event::pre_tool_use(tool, json!({ "command": command }))
}

/// An engine with the hostile `entry` on Bash (blocking on failure) and the
/// normal `deny-dangerous-commands` plugin on the `Shell` tool.
fn engine_with_neighbour(entry: Value) -> (HookEngine, support::HookFile) {
    let mut hostile = json!({"type": "wasm", "on_failure": "block"});
    if let (Value::Object(h), Value::Object(e)) = (&mut hostile, entry) {
        h.extend(e);
    }
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [hostile]},
        {"matcher": "Shell", "hooks": [{"type": "wasm",
            "plugin": plugin("deny-dangerous-commands"), "config": {"tools": ["Shell"]}}]},
    ]}}));
    let engine = HookEngine::builder()
        .hook_file(&file.path)
        .project_dir(file.dir.path())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    (engine, file)
}

/// Dispatch the hostile event while 16 normal events run beside it on the
/// same engine; check every normal answer and return the hostile outcome.
async fn hostile_beside_normal(engine: &HookEngine) -> Outcome {
    let hostile = tokio::spawn({
        let engine = engine.clone();
        async move { engine.dispatch(tool_event("Bash", "ls")).await }
    });
    let normal: Vec<_> = (0..16)
        .map(|i| {
            let engine = engine.clone();
            tokio::spawn(async move {
                let dangerous = i % 2 == 0;
                let command = if dangerous { "rm -rf /" } else { "ls -la" };
                (
                    dangerous,
                    engine.dispatch(tool_event("Shell", command)).await,
                )
            })
        })
        .collect();
    for task in normal {
        let (dangerous, outcome) = task.await.unwrap();
        if dangerous {
            assert!(
                matches!(&outcome.verdict, Verdict::Deny { reason } if reason.contains("rm -rf /")),
                "{outcome:#?}"
            );
        } else {
            assert_eq!(outcome.verdict, Verdict::Proceed, "{outcome:#?}");
        }
    }
    hostile.await.unwrap()
}

/// The hostile plugin `package` with these extra entry fields is blocked
/// with a reason containing `expected`.
async fn blocked_with(package: &str, extra: Value, expected: &str) -> Outcome {
    let mut entry = json!({"plugin": plugin(package)});
    if let (Value::Object(e), Value::Object(x)) = (&mut entry, extra) {
        e.extend(x);
    }
    let (engine, _file) = engine_with_neighbour(entry);
    let outcome = hostile_beside_normal(&engine).await;
    match &outcome.verdict {
        Verdict::Deny { reason } => assert!(
            reason.starts_with("blocked because a hook failed") && reason.contains(expected),
            "expected `{expected}` in: {reason}"
        ),
        other => panic!("expected a block, got {other:?}"),
    }
    outcome
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_infinite_loop_is_stopped_at_its_deadline() {
    blocked_with(
        "hostile-spin",
        json!({"limits": {"fuel": 1_000_000_000_000u64, "timeout_ms": 100}}),
        "timed out (limit timeout_ms = 100)",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_of_tiny_allocations_runs_out_of_fuel() {
    blocked_with(
        "hostile-alloc-loop",
        json!({"limits": {"fuel": 20_000_000}}),
        "ran out of fuel (limit fuel = 20000000)",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_grower_hits_its_cap() {
    blocked_with(
        "hostile-grow-memory",
        json!({"limits": {"memory_mb": 16}}),
        "exceeded its memory cap (limit memory_mb = 16)",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_recursion_overflows_the_wasm_stack() {
    blocked_with("hostile-recurse", json!({}), "call stack exhausted").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_is_a_crash_with_its_message() {
    let outcome = blocked_with("hostile-panic", json!({}), "boom from the panic plugin").await;
    let reason = format!("{:?}", outcome.verdict);
    assert!(
        reason.contains("crashed: wasm trap") && reason.contains("panicked at"),
        "{reason}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_trap_is_a_crash() {
    let outcome = blocked_with(
        "hostile-trap",
        json!({}),
        "crashed: wasm trap: wasm `unreachable` instruction executed",
    )
    .await;
    assert!(
        !format!("{:?}", outcome.verdict).contains("stderr"),
        "no panic message"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mib_answer_is_refused_by_the_result_limit() {
    blocked_with(
        "hostile-bad-answer",
        json!({"config": {"kind": "huge", "bytes": 100 << 20}, "limits": {"memory_mb": 400}}),
        "returned 102400 KiB, over its limit (max_result_kb = 1024)",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_mib_of_output_is_capped_and_the_answer_kept() {
    let (engine, _file) = engine_with_neighbour(json!({
        "plugin": plugin("hostile-bad-answer"),
        "config": {"kind": "chatty", "bytes": 10 << 20},
        // About the cap, not the clock: writing 10 MiB took over the
        // default second on a loaded two-core machine.
        "limits": {"memory_mb": 128, "timeout_ms": 10_000},
    }));
    let outcome = hostile_beside_normal(&engine).await;
    assert_eq!(outcome.verdict, Verdict::Proceed);
    let entry = &outcome.trace[0];
    assert_eq!(
        entry.output.stdout.len(),
        64 << 10,
        "the default 64 KiB cap"
    );
    assert_eq!(entry.output.stderr.len(), 64 << 10);
    assert!(entry.output.truncated);
}

/// A directory tree for the file-system probes: a granted read-only dir
/// with a file and a symlink pointing out of it, a granted writable dir,
/// and a secret file beside them.
struct Tree {
    root: tempfile::TempDir,
}

impl Tree {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let p = root.path();
        std::fs::create_dir(p.join("granted")).unwrap();
        std::fs::create_dir(p.join("out")).unwrap();
        std::fs::write(p.join("granted/inside.txt"), "inside").unwrap();
        std::fs::write(p.join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(p.join("secret.txt"), p.join("granted/escape")).unwrap();
        std::os::unix::fs::symlink("../secret.txt", p.join("granted/relative-escape")).unwrap();
        Self { root }
    }

    fn path(&self, rel: &str) -> String {
        self.root.path().join(rel).to_string_lossy().into_owned()
    }
}

/// The snoop plugin's report, run with these grants and probes.
async fn snoop(grants: Value, probes: Value) -> Value {
    snoop_traced(grants, probes).await.0
}

/// The snoop plugin's report and the log lines of its trace entry.
async fn snoop_traced(grants: Value, probes: Value) -> (Value, Vec<String>) {
    let mut entry = json!({"plugin": plugin("hostile-snoop"), "config": probes});
    if let (Value::Object(e), Value::Object(g)) = (&mut entry, grants) {
        e.extend(g);
    }
    let (engine, _file) = engine_with_neighbour(entry);
    let outcome = hostile_beside_normal(&engine).await;
    assert_eq!(outcome.verdict, Verdict::Proceed, "{outcome:#?}");
    let logs = outcome
        .trace
        .iter()
        .flat_map(|t| t.output.logs.clone())
        .collect();
    (
        serde_json::from_str(&outcome.contexts[0].value.text).unwrap(),
        logs,
    )
}

fn refused(report: &Value, kind: &str, key: &str) -> bool {
    report["probes"][kind][key]
        .as_str()
        .unwrap_or_else(|| panic!("no {kind} probe for {key}: {report:#}"))
        .starts_with("refused")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_outside_the_granted_directory_are_refused() {
    let tree = Tree::new();
    let reads = [
        "/etc/passwd".to_owned(),
        tree.path("granted/../secret.txt"),
        tree.path("secret.txt"),
        tree.path("granted/escape"),
        tree.path("granted/relative-escape"),
        tree.path("granted/inside.txt"),
    ];
    let report = snoop(
        json!({"allow_read": [tree.path("granted")]}),
        json!({"read": reads}),
    )
    .await;
    for path in &reads[..5] {
        assert!(refused(&report, "read", path), "{path}: {report:#}");
    }
    assert_eq!(
        report["probes"]["read"][&reads[5]], "ok: \"inside\"",
        "the granted file is readable"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_outside_the_grants_is_denied_not_missing_and_named_in_the_trace() {
    let tree = Tree::new();
    let (outside, escape, inside) = (
        tree.path("secret.txt"),
        tree.path("granted/../secret.txt"),
        tree.path("granted/inside.txt"),
    );
    let (report, logs) = snoop_traced(
        json!({"allow_read": [tree.path("granted")]}),
        json!({"read": [&outside, &escape, &inside]}),
    )
    .await;
    for path in [&outside, &escape] {
        let got = report["probes"]["read"][path].as_str().unwrap();
        assert!(
            (got.contains("ermission denied") || got.contains("not permitted"))
                && !got.contains("No such file"),
            "the plugin is told it was refused, not that {path} is missing: {got}"
        );
    }
    let grants = format!("read {}", tree.path("granted"));
    let escaped = "not allowed by the grants (it leads out of a granted directory, or writes to a read-only one)";
    for (path, why) in [
        ("/etc/passwd", "not within the grants"),
        (outside.as_str(), "not within the grants"),
        (escape.as_str(), escaped),
    ] {
        let line = format!("sandbox: refused open `{path}`: {why} ({grants})");
        assert!(logs.contains(&line), "{line}\n in {logs:#?}");
    }
    assert!(
        !logs.iter().any(|l| l.contains("inside.txt")),
        "a granted read is not a refusal: {logs:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_of_the_root_itself_is_not_taken_for_the_empty_sandbox_root() {
    let tree = Tree::new();
    let inside = tree.path("granted/inside.txt");
    let (report, logs) =
        snoop_traced(json!({"allow_read": ["/"]}), json!({"read": [&inside]})).await;
    assert_eq!(
        report["probes"]["read"][&inside], "ok: \"inside\"",
        "{report:#}"
    );
    // Only the snoop's write to /tmp is refused: `/` is granted read-only.
    let refused: Vec<&String> = logs.iter().filter(|l| l.starts_with("sandbox:")).collect();
    assert_eq!(
        refused,
        [
            "sandbox: refused open `/tmp/wasm-hooks-snoop`: not allowed by the grants (it leads out of a granted directory, or writes to a read-only one) (read /)"
        ],
        "{logs:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_need_a_writable_grant() {
    let tree = Tree::new();
    let (read_only, writable) = (tree.path("granted/new.txt"), tree.path("out/new.txt"));
    let outside = tree.path("secret.txt");
    let report = snoop(
        json!({"allow_read": [tree.path("granted")], "allow_write": [tree.path("out")]}),
        json!({"write": [read_only, writable, outside]}),
    )
    .await;
    assert!(refused(&report, "write", &read_only), "{report:#}");
    assert!(refused(&report, "write", &outside), "{report:#}");
    assert!(!Path::new(&read_only).exists());
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret");
    assert_eq!(
        std::fs::read_to_string(&writable).unwrap(),
        "written by snoop"
    );
}

/// Why the sandbox refuses to open a FIFO, socket or device.
const NOT_A_FILE: &str =
    "not a regular file or directory (a FIFO, socket or device could block the host)";

/// The snoop's read of `path` was denied, and the trace names it as not a
/// file, with `grants`.
fn refused_as_not_a_file(report: &Value, logs: &[String], path: &str, grants: &str) {
    let got = report["probes"]["read"][path].as_str().unwrap();
    assert!(
        got.starts_with("refused")
            && (got.contains("ermission denied") || got.contains("not permitted")),
        "the plugin is told it was refused: {got}"
    );
    let line = format!("sandbox: refused open `{path}`: {NOT_A_FILE} ({grants})");
    assert!(logs.contains(&line), "{line}\n in {logs:#?}");
}

/// A FIFO made with `mkfifo`; when dropped, it is opened at both ends (which
/// Linux does without waiting), letting go of any thread stuck opening it,
/// so that a test whose refusal fails ends instead of hanging.
struct Fifo(std::path::PathBuf);

impl Fifo {
    fn make(path: &str) -> Self {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo {path}");
        Self(path.into())
    }
}

impl Drop for Fifo {
    fn drop(&mut self) {
        let _ = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_in_a_granted_directory_is_refused_without_blocking() {
    let tree = Tree::new();
    let path = tree.path("granted/fifo");
    let _fifo = Fifo::make(&path);
    let (report, logs) = snoop_traced(
        json!({"allow_read": [tree.path("granted")]}),
        json!({"read": [&path]}),
    )
    .await;
    refused_as_not_a_file(
        &report,
        &logs,
        &path,
        &format!("read {}", tree.path("granted")),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_device_in_a_granted_directory_is_refused() {
    let (report, logs) = snoop_traced(
        json!({"allow_read": ["/dev"]}),
        json!({"read": ["/dev/zero"]}),
    )
    .await;
    refused_as_not_a_file(&report, &logs, "/dev/zero", "read /dev");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_granted_environment_variables_are_visible() {
    let report = snoop(json!({"env": ["PATH"]}), json!({"env": ["PATH", "HOME"]})).await;
    assert_eq!(report["env"], json!(["PATH"]));
    assert_eq!(
        report["probes"]["env"]["PATH"],
        format!("{:?}", std::env::var("PATH").ok())
    );
    assert_eq!(report["probes"]["env"]["HOME"], "None");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_are_refused_even_to_a_listening_loopback_port() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let report = snoop(json!({}), json!({"connect": [address]})).await;
    assert!(refused(&report, "connect", &address), "{report:#}");
    let err = listener.accept().unwrap_err();
    assert_eq!(
        err.kind(),
        std::io::ErrorKind::WouldBlock,
        "nobody connected"
    );
}

#[test]
fn a_component_of_another_world_is_refused_at_load() {
    let runtime = WasmRuntime::builder().no_cache().build().unwrap();
    let err = runtime
        .load(&plugin("hostile-other-world"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("hostile_other_world.wasm") && err.contains("does not fit the hook world"),
        "{err}"
    );
}

#[test]
fn a_component_importing_what_the_host_lacks_is_refused_at_load() {
    let wat = support::workspace_root().join("tests/hostile/missing-import/missing-import.wat");
    let bytes = wat::parse_file(&wat).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing-import.wasm");
    std::fs::write(&path, bytes).unwrap();
    let runtime = WasmRuntime::builder().no_cache().build().unwrap();
    let err = runtime.load(&path).unwrap_err().to_string();
    assert!(
        err.contains("missing-import.wasm")
            && err.contains("imports something this host does not provide")
            && err.contains("wasm-hooks:missing/thing@0.1.0"),
        "{err}"
    );
}

#[tokio::test]
async fn grants_that_name_no_directory_are_load_errors_naming_the_field() {
    let file = support::hook_file(
        "PreToolUse",
        "Bash",
        &plugin("hostile-snoop"),
        json!({"allow_read": ["${PROJECT_DIR}/nope"]}),
    );
    let err = HookEngine::builder()
        .hook_file(&file.path)
        .project_dir(file.dir.path())
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("hooks.json")
            && err.contains("allow_read[0]")
            && err.contains("nope` is not a directory"),
        "{err}"
    );
}

#[test]
fn m3_a_plugin_flooding_the_log_writes_at_most_its_output_cap() {
    let file = support::hook_file(
        "PreToolUse",
        "Bash",
        &plugin("hostile-log-flood"),
        json!({}),
    );
    let out = support::run_bash_ls(&file.path);
    assert_eq!(out.status.code(), Some(0));
    // 200 MiB were logged; the default output cap is 64 KiB.
    assert!(
        out.stderr.len() < 256 * 1024,
        "{} bytes reached the host's log",
        out.stderr.len()
    );
    assert!(!out.stderr.contains(&0x1b), "escapes are escaped");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("output cut at the hook's output cap"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[tokio::test]
async fn m4_a_plugin_cannot_hoard_the_hosts_file_descriptors() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("data.txt");
    std::fs::write(&target, "x").unwrap();
    let file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "wasm", "plugin": plugin("hostile-fd-hoard"),
         "allow_read": [dir.path()], "limits": {"timeout_ms": 5_000}}]}]}}));
    let engine = HookEngine::builder()
        .hook_file(&file.path)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let event = || Event::pre_tool_use("Bash", json!({"path": target.display().to_string()}));
    // Past MAX_HANDLES handles the instance is stopped, its handles
    // closed with it; without the cap it held 20,000 of the host's.
    let outcome = engine.dispatch(event()).await;
    let failure = outcome
        .failures()
        .next()
        .expect("the hoarding plugin is stopped");
    assert!(
        failure
            .to_string()
            .contains("resource table has no free keys"),
        "{failure}"
    );
    assert!(outcome.contexts.is_empty());
    // The host still opens files, and the engine answers the next event.
    std::fs::File::open(&target).unwrap();
    let again = engine.dispatch(event()).await;
    assert_eq!(again.trace.len(), 1, "{again:?}");
}

#[test]
fn a_refused_read_is_shown_by_run_in_the_trace_and_with_v() {
    let file = support::hook_file("PreToolUse", "Bash", &plugin("hostile-snoop"), json!({}));
    let out = assert_cmd::Command::cargo_bin("wasm-hooks")
        .unwrap()
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .args(["run", "-v", "--event", "PreToolUse", "--tool", "Bash"])
        .args(["--input", r#"{"command": "ls"}"#, "--config"])
        .arg(&file.path)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let line = "sandbox: refused open `/etc/passwd`: not within the grants (nothing)";
    assert!(
        stdout.contains(&format!("| {line}")),
        "the trace names it: {stdout}"
    );
    assert!(stderr.contains(line), "-v logs it: {stderr}");
}

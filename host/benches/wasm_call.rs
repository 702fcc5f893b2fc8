//! What one hook costs, measured side by side in one run: a wasm hook
//! (fresh store and instance per event, through the whole engine) against
//! command hooks through the engine and the bare process spawns they pay
//! for, plus loading (compiling) a plugin.
//!
//! Run with `cargo bench -p wasm-hooks --bench wasm_call`; results and their
//! ratios are written down in `docs/benchmarks.md`.

#[path = "../../tests/support/mod.rs"]
mod support;

use std::hint::black_box;
use std::io::Write;
use std::process::{Command, Stdio};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use wasm_hooks::{Event, HookEngine, WasmRuntime};

fn one_event(c: &mut Criterion) {
    let plugin = support::plugin("deny-dangerous-commands");
    let file = support::hook_file("PreToolUse", "Bash", &plugin, json!({}));
    let engine = HookEngine::builder()
        .hook_file(&file.path)
        .build()
        .expect("hook file loads");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let allowed = Event::pre_tool_use("Bash", json!({"command": "ls -la"}));
    let denied = Event::pre_tool_use("Bash", json!({"command": "rm -rf /"}));
    let payload = allowed.to_json_string();
    let true_file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "args": ["/bin/true"]}]}]}}));
    let true_engine = HookEngine::builder()
        .hook_file(&true_file.path)
        .build()
        .expect("hook file loads");
    let sh_file = support::write_hook_file(&json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": "cat >/dev/null"}]}]}}));
    let sh_engine = HookEngine::builder()
        .hook_file(&sh_file.path)
        .build()
        .expect("hook file loads");

    let mut group = c.benchmark_group("one PreToolUse event");
    group.bench_function("wasm hook, proceed (fresh instance)", |b| {
        b.to_async(&rt)
            .iter(|| engine.dispatch(black_box(allowed.clone())));
    });
    group.bench_function("wasm hook, deny (fresh instance)", |b| {
        b.to_async(&rt)
            .iter(|| engine.dispatch(black_box(denied.clone())));
    });
    group.bench_function("command hook /bin/true (args, through the engine)", |b| {
        b.to_async(&rt)
            .iter(|| true_engine.dispatch(black_box(allowed.clone())));
    });
    group.bench_function(
        "command hook sh -c reading stdin (through the engine)",
        |b| {
            b.to_async(&rt)
                .iter(|| sh_engine.dispatch(black_box(allowed.clone())));
        },
    );
    group.bench_function("spawn /bin/true", |b| {
        b.iter(|| Command::new("/bin/true").status().unwrap());
    });
    group.bench_function("spawn sh -c reading the event on stdin", |b| {
        b.iter(|| {
            let mut child = Command::new("sh")
                .args(["-c", "cat >/dev/null"])
                .stdin(Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(payload.as_bytes())
                .unwrap();
            child.wait().unwrap()
        });
    });
    group.finish();

    let runtime = WasmRuntime::new().unwrap();
    let mut group = c.benchmark_group("loading");
    group.sample_size(10);
    group.bench_function("compile the plugin (Component::new + checks)", |b| {
        b.iter(|| runtime.load(&plugin).unwrap());
    });
    group.finish();
}

criterion_group!(benches, one_event);
criterion_main!(benches);

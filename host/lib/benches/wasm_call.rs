//! What one hook costs, measured side by side in one run on the same event,
//! through the whole engine: a wasm hook (fresh store and instance per
//! event), an inline rule, a Rust closure (the floor), command hooks running
//! `/bin/true` and a python3 JSON reader; then loading a plugin, compiled
//! against deserialized from the compile cache.
//!
//! Run with `cargo bench -p wasm-hooks --bench wasm_call`. Whole processes,
//! `serve`, percentiles and throughput are measured by `wasm-hooks bench`
//! (`scripts/bench`); results are in `docs/benchmarks.md`.
#![allow(
    missing_docs,
    reason = "criterion_group! makes an undocumented public fn"
)]

#[path = "../../../tests/support/mod.rs"]
#[allow(dead_code, reason = "the bench uses a few of the test helpers")]
mod support;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use wasm_hooks::{
    Decision, Event, EventName, EventPattern, HookEngine, HookResult, HookSpec, WasmRuntime,
};

/// An engine with one PreToolUse hook on Bash.
fn engine(hook: Value, cache: &std::path::Path) -> (HookEngine, support::HookFile) {
    let file = support::write_hook_file(
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}),
    );
    let mut options = WasmRuntime::builder();
    options.cache_dir(cache);
    let engine = HookEngine::builder()
        .hook_file(&file.path)
        .runtime_options(options)
        .build()
        .expect("hook file loads");
    (engine, file)
}

fn one_event(c: &mut Criterion) {
    let cache = tempfile::tempdir().unwrap();
    let plugin = support::plugin("deny-dangerous-commands");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let event = Event::pre_tool_use("Bash", json!({"command": "ls -la"}));
    let (wasm, _w) = engine(json!({"type": "wasm", "plugin": plugin}), cache.path());
    let (inline, _i) = engine(
        json!({"type": "inline", "rules": [{"field": "tool_input.command", "operator": "regex",
            "value": "^sudo ", "action": "deny", "reason": "no sudo"}]}),
        cache.path(),
    );
    let closure = HookEngine::default();
    closure.register(HookSpec::from_fn(
        "closure",
        EventPattern::event(EventName::PreToolUse),
        |_| async { Ok(HookResult::new(Decision::Proceed)) },
    ));
    let (true_cmd, _t) = engine(
        json!({"type": "command", "args": ["/bin/true"]}),
        cache.path(),
    );
    let (python, _p) = engine(
        json!({"type": "command", "args": ["python3", "-c", "import sys, json; json.load(sys.stdin)"]}),
        cache.path(),
    );

    let mut group = c.benchmark_group("one PreToolUse event through the engine");
    for (name, engine) in [
        ("wasm hook (fresh instance)", &wasm),
        ("inline rule hook", &inline),
        ("Rust closure hook", &closure),
        ("command hook /bin/true", &true_cmd),
        ("command hook python3 json.load", &python),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| engine.dispatch(black_box(&event)));
        });
    }
    group.finish();

    let mut group = c.benchmark_group("loading the plugin");
    group.sample_size(10);
    let compiling = WasmRuntime::builder().no_cache().build().unwrap();
    group.bench_function("compile", |b| {
        b.iter(|| compiling.load(&plugin).unwrap());
    });
    let cached = WasmRuntime::builder()
        .cache_dir(cache.path())
        .build()
        .unwrap();
    group.bench_function("from the compile cache", |b| {
        b.iter(|| cached.load(&plugin).unwrap());
    });
    group.finish();
}

criterion_group!(benches, one_event);
criterion_main!(benches);

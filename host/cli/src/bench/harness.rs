//! The harness the measured cases share: a hook file and an engine for
//! it, a check that the hook answers, and the timing loops.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::bail;
use serde_json::{Value, json};
use wasm_hooks::{Event, HookEngine, Tiering, WasmRuntime};

use super::stats::Summary;

/// A command hook running `argv`, measured `n` times on `event` after one
/// checked answer; `at` is the bench's directory, compile cache and event.
/// The hook runs in a process of its own, so no fault count.
pub(super) fn command_case(
    rt: &tokio::runtime::Runtime,
    (dir, cache, event): (&Path, &Path, &Event),
    file: &str,
    label: &str,
    argv: Value,
    n: usize,
) -> anyhow::Result<Summary> {
    let file = hook_file(dir, file, json!({"type": "command", "args": argv}))?;
    let command = engine(&file, cache)?;
    check(rt, &command, event)?;
    Ok(measure(rt, label, n, || command.dispatch(event)).run_elsewhere())
}

/// A hook file in `dir` with one PreToolUse hook for Bash.
pub(super) fn hook_file(dir: &Path, name: &str, hook: Value) -> anyhow::Result<PathBuf> {
    let path = dir.join(format!("{name}.json"));
    let doc = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}});
    std::fs::write(&path, doc.to_string())?;
    Ok(path)
}

/// An engine for `file`, as a long-running host would have it (pooling),
/// its plugins on Cranelift's code from the start (the compilers are
/// compared in `tiers`).
pub(super) fn engine(file: &Path, cache: &Path) -> anyhow::Result<HookEngine> {
    let mut options = WasmRuntime::builder();
    options.cache_dir(cache).tiering(Tiering::Off);
    Ok(HookEngine::builder()
        .hook_file(file)
        .runtime_options(options)
        .build()?)
}

/// The plugin must answer the bench event without failing, or the figures
/// would measure a failure path.
pub(super) fn check(
    rt: &tokio::runtime::Runtime,
    engine: &HookEngine,
    event: &Event,
) -> anyhow::Result<()> {
    let outcome = rt.block_on(engine.dispatch(event));
    if let Some(error) = outcome.failures().next() {
        bail!("the hook fails on the bench event: {error}");
    }
    Ok(())
}

/// Time `n` awaits of `f` (after `n / 10` for warming up).
pub(super) fn measure<F, Fut>(rt: &tokio::runtime::Runtime, name: &str, n: usize, f: F) -> Summary
where
    F: FnMut() -> Fut,
    Fut: Future,
{
    measure_between(rt, name, n, || std::future::ready(()), f)
}

/// Time `n` runs of `f` (after a tenth as many unmeasured), with `between`
/// run before each, untimed and its page faults not counted.
pub(super) fn measure_between<B, BFut, F, Fut>(
    rt: &tokio::runtime::Runtime,
    name: &str,
    n: usize,
    mut between: B,
    mut f: F,
) -> Summary
where
    B: FnMut() -> BFut,
    BFut: Future,
    F: FnMut() -> Fut,
    Fut: Future,
{
    rt.block_on(async {
        for _ in 0..n / 10 {
            between().await;
            f().await;
        }
        let mut samples = Vec::with_capacity(n);
        let mut faults = 0;
        for _ in 0..n {
            between().await;
            let before = super::stats::thread_faults();
            let started = Instant::now();
            f().await;
            samples.push(started.elapsed());
            faults += super::stats::thread_faults().saturating_sub(before);
        }
        Summary::of(name, samples).with_faults(faults)
    })
}

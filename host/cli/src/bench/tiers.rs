//! The two compilers, per guest language: what compiling a plugin costs
//! with each (time and peak memory, in a process of its own, as `compile`
//! runs), what a plugin's first event costs in a `hook` process with a
//! fresh cache (Winch compiles it; Cranelift is left to a detached
//! process) against one compiled ahead, and what a call costs on each
//! compiler's code.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::json;
use wasm_hooks::{Compiler, Event, HookEngine, Tiering, WasmRuntime};

use super::BenchArgs;
use super::harness::{check, hook_file, measure};
use super::stats::Summary;

/// Every case, for each plugin given (the Rust one, and the Python and
/// JavaScript ones when given).
pub(super) fn cases(
    rt: &tokio::runtime::Runtime,
    args: &BenchArgs,
    dir: &Path,
    event: &Event,
) -> anyhow::Result<Vec<Summary>> {
    let exe = std::env::current_exe().context("finding this executable")?;
    let mut plugins = vec![("Rust", std::path::absolute(&args.plugin)?)];
    for (language, folder) in [("Python", &args.python_plugin), ("JS", &args.js_plugin)] {
        if let Some(folder) = folder {
            let folder = std::path::absolute(folder)?;
            let name = crate::build::name(&folder)?;
            plugins.push((language, folder.join(format!("build/{name}.wasm"))));
        }
    }
    let stdin = event.to_json_string();
    let mut out = Vec::new();
    for (language, plugin) in &plugins {
        let file = hook_file(
            dir,
            &format!("{language}-tiers"),
            json!({"type": "wasm", "plugin": plugin}),
        )?;
        for compiler in [Compiler::Cranelift, Compiler::Winch] {
            out.push(compiles(
                &exe,
                plugin,
                compiler,
                language,
                args.compile_runs,
            )?);
        }
        let at = Hook {
            exe: &exe,
            file: &file,
            plugin,
            stdin: &stdin,
        };
        out.push(at.first_events(language, false, args.compile_runs)?);
        out.push(at.first_events(language, true, args.compile_runs)?);
        // A guest's call takes milliseconds on Winch's code: a fifth as
        // many events.
        let calls = if *language == "Rust" {
            args.events
        } else {
            (args.events / 5).max(10)
        };
        for compiler in [Compiler::Cranelift, Compiler::Winch] {
            let engine = engine_on(&file, compiler)?;
            check(rt, &engine, event)?;
            let label = format!("per call, {compiler}'s code: {language} guest");
            out.push(measure(rt, &label, calls, || engine.dispatch(event)));
        }
    }
    Ok(out)
}

/// `runs` compiles of `plugin` by `compiler`, each a `wasm-hooks compile`
/// process into an empty cache: its wall time, and its peak memory.
fn compiles(
    exe: &Path,
    plugin: &Path,
    compiler: Compiler,
    language: &str,
    runs: usize,
) -> anyhow::Result<Summary> {
    let mut samples = Vec::with_capacity(runs);
    let mut peak_kb = 0;
    for _ in 0..runs {
        let cache = tempfile::tempdir()?;
        let mut command = Command::new(exe);
        command
            .args(["compile", "--compiler", compiler.name(), "--cache-dir"])
            .arg(cache.path())
            .arg(plugin);
        let (elapsed, kb) = run_measured(command, "")?;
        samples.push(elapsed);
        peak_kb = peak_kb.max(kb);
    }
    Ok(
        Summary::of(format!("compile, {compiler}: {language} guest"), samples)
            .with_peak_kb(peak_kb),
    )
}

/// A `hook` process on one plugin's hook file.
struct Hook<'a> {
    exe: &'a Path,
    file: &'a Path,
    plugin: &'a Path,
    stdin: &'a str,
}

impl Hook<'_> {
    /// `runs` first events of `hook` processes (no daemon), each with an
    /// empty cache, filled ahead by `compile` (not timed) when `ahead`;
    /// without it, each waits (untimed) for the detached compile it left
    /// to finish, so that runs do not share the machine with it.
    fn first_events(&self, language: &str, ahead: bool, runs: usize) -> anyhow::Result<Summary> {
        let mut samples = Vec::with_capacity(runs);
        for _ in 0..runs {
            let cache = tempfile::tempdir()?;
            if ahead {
                let mut compile = Command::new(self.exe);
                compile
                    .args(["compile", "--cache-dir"])
                    .arg(cache.path())
                    .arg(self.plugin);
                run_measured(compile, "")?;
            }
            let mut hook = Command::new(self.exe);
            hook.args(["hook", "--cache-dir"])
                .arg(cache.path())
                .arg("-c")
                .arg(self.file)
                .env("WASM_HOOKS_DAEMON", "off");
            samples.push(run_measured(hook, self.stdin)?.0);
            if !ahead {
                wait_for_cranelift(cache.path(), self.plugin)?;
            }
        }
        let how = if ahead {
            "after compile-ahead"
        } else {
            "fresh cache (winch now, cranelift detached)"
        };
        Ok(Summary::of(
            format!("first event, process, {how}: {language} guest"),
            samples,
        ))
    }
}

/// Wait for Cranelift's entry of `plugin` in the cache at `cache` (the
/// detached compile a `hook` left), up to ten minutes.
fn wait_for_cranelift(cache: &Path, plugin: &Path) -> anyhow::Result<()> {
    let runtime = WasmRuntime::builder()
        .cache_dir(cache)
        .tiering(Tiering::Off)
        .build()?;
    let sha256 = wasm_hooks::cli_support::PluginInfo::read(plugin)?.sha256;
    let entry: PathBuf = runtime.cache_entry(&sha256).context("a cache")?;
    let until = Instant::now() + Duration::from_secs(600);
    while !entry.is_file() || runtime.compile_in_progress(&sha256) {
        if Instant::now() > until {
            bail!(
                "the background compile of {} never landed",
                plugin.display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// An engine for `file` whose plugin runs on `compiler`'s code: compiled
/// at load, no cache (Winch's stays: nowhere to leave Cranelift's).
fn engine_on(file: &Path, compiler: Compiler) -> anyhow::Result<HookEngine> {
    let mut options = WasmRuntime::builder();
    options.no_cache().tiering(match compiler {
        Compiler::Cranelift => Tiering::Off,
        Compiler::Winch => Tiering::Elsewhere(Arc::new(|_| {})),
    });
    Ok(HookEngine::builder()
        .hook_file(file)
        .runtime_options(options)
        .build()?)
}

/// Run `command` to its exit with `stdin` on its stdin: its wall time and
/// its peak resident memory (KiB), the high-water mark of its own memory
/// (`VmHWM`, read as it runs: `wait4`'s `ru_maxrss` would carry this
/// process's own, inherited at the fork).
fn run_measured(mut command: Command, stdin: &str) -> anyhow::Result<(Duration, u64)> {
    use std::io::Write as _;
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting a process")?;
    if let Some(mut input) = child.stdin.take() {
        match input.write_all(stdin.as_bytes()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            written => written?,
        }
    }
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        peak_kb = peak_kb.max(high_water_kb(&status_file).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(2));
    };
    let elapsed = started.elapsed();
    // Exit 2 is a hook's deny: an answer.
    if !matches!(status.code(), Some(0 | 2)) {
        bail!("{command:?} failed ({status})");
    }
    Ok((elapsed, peak_kb))
}

/// The `VmHWM` line of a `/proc/<pid>/status`, in KiB.
fn high_water_kb(status_file: &str) -> Option<u64> {
    let text = std::fs::read_to_string(status_file).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

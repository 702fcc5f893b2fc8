//! The measured cases, all on the same PreToolUse event: hooks of every
//! kind through `HookEngine::dispatch`, whole processes as an agent starts
//! them, the `serve` round trip (quiet and abused: `serve`), plugin loading, throughput on every core,
//! and how far past its deadline an infinite loop runs.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::json;
use wasm_hooks::{
    Decision, Event, EventName, EventPattern, HookEngine, HookResult, HookSpec, Tiering,
    WasmRuntime,
};

use super::BenchArgs;
use super::harness::{check, command_case, engine, hook_file, measure};
use super::stats::Summary;

/// The case every other one is compared with.
pub(super) const WASM_CASE: &str = "wasm hook, fresh instance (engine.dispatch)";

const PYTHON_JSON: &str = "import sys, json; json.load(sys.stdin)";

/// How long the spinning plugin may run in the deadline case.
const SPIN_DEADLINE_MS: u64 = 100;

/// `serve` soaked with `events` events (see `soak`), on the wasm plugin.
pub(super) fn soak(args: &BenchArgs, events: usize) -> anyhow::Result<Summary> {
    let bench = Setting::new(args)?;
    let exe = std::env::current_exe().context("finding this executable")?;
    super::soak::soak(
        &exe,
        (&bench.wasm_file, bench.dir.path()),
        &bench.cache,
        (events, args.soak_clients),
        &bench.event.to_json_string(),
    )
}

/// What every case shares: a directory of the bench's own (the project),
/// the compile cache in it, the event, and a hook file running the plugin.
struct Setting {
    dir: tempfile::TempDir,
    cache: PathBuf,
    event: Event,
    wasm_file: PathBuf,
}

impl Setting {
    fn new(args: &BenchArgs) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir().context("creating a temporary directory")?;
        let cache = dir.path().join("cache");
        let event =
            Event::pre_tool_use("Bash", json!({"command": "ls -la", "description": "list"}))
                .with("session_id", "bench")
                .with("cwd", dir.path().to_string_lossy().as_ref());
        let plugin = std::path::absolute(&args.plugin)?;
        let wasm_file = hook_file(
            dir.path(),
            "wasm",
            json!({"type": "wasm", "plugin": plugin}),
        )?;
        Ok(Self {
            dir,
            cache,
            event,
            wasm_file,
        })
    }
}

/// Run every case, in the order of the report.
pub(super) fn run_all(args: &BenchArgs) -> anyhow::Result<Vec<Summary>> {
    let Setting {
        dir,
        cache,
        event,
        wasm_file,
    } = Setting::new(args)?;
    let stdin = event.to_json_string();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let n = args.events;
    let mut out = Vec::new();
    let plugin = std::path::absolute(&args.plugin)?;
    let wasm = engine(&wasm_file, &cache)?;
    check(&rt, &wasm, &event)?;
    out.push(measure(&rt, WASM_CASE, n, || wasm.dispatch(&event)));
    out.extend(super::guests::cases(&rt, args, dir.path(), &cache, &event)?);

    let inline_file = hook_file(
        dir.path(),
        "inline",
        json!({"type": "inline", "rules": [{"field": "tool_input.command", "operator": "regex",
            "value": "^sudo ", "action": "deny", "reason": "no sudo"}]}),
    )?;
    let inline = engine(&inline_file, &cache)?;
    out.push(measure(&rt, "inline rule hook", n, || {
        inline.dispatch(&event)
    }));

    let closure = closure_engine();
    out.push(measure(&rt, "Rust closure hook (the floor)", n, || {
        closure.dispatch(&event)
    }));

    let spawns = args.processes;
    let at = (dir.path(), cache.as_path(), &event);
    out.push(command_case(
        &rt,
        at,
        "true",
        "command hook: /bin/true",
        json!(["/bin/true"]),
        spawns,
    )?);
    out.push(command_case(
        &rt,
        at,
        "python",
        "command hook: python3 json.load(stdin)",
        json!(["python3", "-c", PYTHON_JSON]),
        spawns,
    )?);

    let exe = std::env::current_exe().context("finding this executable")?;
    out.extend(process_cases(
        &exe,
        &wasm_file,
        &inline_file,
        &cache,
        spawns,
        &stdin,
    )?);

    let served = (wasm_file.as_path(), dir.path());
    out.extend(super::serve::round_trips(
        &rt, &exe, served, &cache, n, &stdin,
    )?);
    out.extend(plugin_loads(&plugin, &cache, spawns)?);
    out.extend(super::tiers::cases(&rt, args, dir.path(), &event)?);
    out.push(throughput(&wasm, &event, n)?);
    out.push(super::replay::case(dir.path(), &plugin, &cache, n)?);
    if let Some(spin) = &args.spin {
        out.push(deadline_overshoot(
            dir.path(),
            &std::path::absolute(spin)?,
            &cache,
        )?);
    }
    Ok(out)
}

/// An engine whose one hook is a Rust closure that proceeds: the floor.
fn closure_engine() -> HookEngine {
    let engine = HookEngine::default();
    engine.register(HookSpec::from_fn(
        "closure",
        EventPattern::event(EventName::PreToolUse),
        |_| async { Ok(HookResult::new(Decision::Proceed)) },
    ));
    engine
}

/// Whole processes, as an agent starts them: `/bin/true` (the floor),
/// `wasm-hooks hook` with a wasm plugin and with an inline rule, each
/// in-process and through a warm daemon (a private one, in a directory of
/// the bench's own), the same through the small client `wasm-hooks-hook`,
/// and python3 reading the same event.
fn process_cases(
    exe: &Path,
    wasm_file: &Path,
    inline_file: &Path,
    cache: &Path,
    spawns: usize,
    stdin: &str,
) -> anyhow::Result<Vec<Summary>> {
    let runtime_dir = tempfile::tempdir()?;
    // The small client, if built beside this executable.
    let small_client = exe.with_file_name("wasm-hooks-hook");
    let hook_process = |program: &Path, file: &Path, daemon: &str| {
        let mut cmd = Command::new(program);
        if program == exe {
            cmd.arg("hook");
        }
        cmd.arg("-c")
            .arg(file)
            .arg("--cache-dir")
            .arg(cache)
            .env("WASM_HOOKS_DAEMON", daemon)
            .env("XDG_RUNTIME_DIR", runtime_dir.path());
        cmd
    };
    let mut out = vec![processes(
        "process: /bin/true",
        spawns,
        || Command::new("/bin/true"),
        stdin,
    )?];
    for (name, file) in [
        ("wasm plugin, warm cache", wasm_file),
        ("inline rule", inline_file),
    ] {
        out.push(processes(
            &format!("process: wasm-hooks hook, {name}"),
            spawns,
            || hook_process(exe, file, "off"),
            stdin,
        )?);
        out.push(processes(
            &format!("process: wasm-hooks hook, {name}, warm daemon"),
            spawns,
            || hook_process(exe, file, "only"),
            stdin,
        )?);
        if small_client.is_file() {
            out.push(processes(
                &format!("process: wasm-hooks-hook, {name}, warm daemon"),
                spawns,
                || hook_process(&small_client, file, "only"),
                stdin,
            )?);
        }
    }
    out.push(processes(
        "process: python3 json.load(stdin)",
        spawns,
        || {
            let mut cmd = Command::new("python3");
            cmd.args(["-c", PYTHON_JSON]);
            cmd
        },
        stdin,
    )?);
    Ok(out)
}

/// Time `n` runs of a process reading `stdin`, each to its exit.
fn processes(
    name: &str,
    n: usize,
    mut command: impl FnMut() -> Command,
    stdin: &str,
) -> anyhow::Result<Summary> {
    let mut run = || -> anyhow::Result<Duration> {
        let started = Instant::now();
        let mut child = command()
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("{name}: starting the process"))?;
        // A process that does not read its stdin (`/bin/true`) closes it.
        match child
            .stdin
            .take()
            .context("stdin")?
            .write_all(stdin.as_bytes())
        {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            written => written?,
        }
        let status = child.wait()?;
        if !status.success() {
            bail!("{name}: the process failed ({status})");
        }
        Ok(started.elapsed())
    };
    for _ in 0..(n / 10).max(1) {
        run()?;
    }
    let samples = (0..n).map(|_| run()).collect::<anyhow::Result<_>>()?;
    Ok(Summary::of(name, samples))
}

/// Loading the plugin: compiling it, against deserializing it from a warm
/// cache.
fn plugin_loads(plugin: &Path, cache: &Path, n: usize) -> anyhow::Result<[Summary; 3]> {
    let mut options = WasmRuntime::builder();
    options.pooling(false).no_cache().tiering(Tiering::Off);
    let compiling = options.build()?;
    let compiles = (0..(n / 20).max(3))
        .map(|_| timed(|| compiling.load(plugin)))
        .collect::<Result<_, _>>()?;
    let mut options = WasmRuntime::builder();
    options
        .pooling(false)
        .cache_dir(cache)
        .tiering(Tiering::Off);
    // A new process: a runtime of its own (not timed), the plugin mapped
    // from the compile cache and linked.
    let mut loads = Vec::with_capacity(n);
    for _ in 0..n {
        let fresh = options.build()?;
        loads.push(timed(|| fresh.load(plugin))?);
    }
    // The daemon (or any engine rebuilt on one runtime): already linked.
    let warm = options.build()?;
    warm.load(plugin)?;
    let relinks = (0..n)
        .map(|_| timed(|| warm.load(plugin)))
        .collect::<Result<_, _>>()?;
    Ok([
        Summary::of("plugin load: compile", compiles),
        Summary::of("plugin load: from the compile cache", loads),
        Summary::of("plugin load: already linked by this runtime", relinks),
    ])
}

fn timed<T, E>(f: impl FnOnce() -> Result<T, E>) -> Result<Duration, E> {
    let started = Instant::now();
    f()?;
    Ok(started.elapsed())
}

/// Events per second with every core busy: twice as many tasks as cores,
/// each dispatching its share; reported as wall time per event.
fn throughput(engine: &HookEngine, event: &Event, n: usize) -> anyhow::Result<Summary> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores)
        .enable_all()
        .build()?;
    let tasks = cores * 2;
    let started = Instant::now();
    rt.block_on(async {
        let handles: Vec<_> = (0..tasks)
            .map(|_| {
                let (engine, event) = (engine.clone(), event.clone());
                tokio::spawn(async move {
                    for _ in 0..n / tasks {
                        engine.dispatch(&event).await;
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.await.expect("a bench task");
        }
    });
    let handled = n / tasks * tasks;
    let per_event = started.elapsed() / u32::try_from(handled.max(1)).unwrap_or(u32::MAX);
    Ok(Summary::rate(
        format!("throughput: wasm hook, {tasks} tasks on {cores} cores (wall / event)"),
        handled,
        per_event,
    ))
}

/// How long past its deadline a plugin that never returns keeps running.
fn deadline_overshoot(dir: &Path, spin: &Path, cache: &Path) -> anyhow::Result<Summary> {
    let file = hook_file(
        dir,
        "spin",
        json!({"type": "wasm", "plugin": spin,
            "limits": {"fuel": 1_000_000_000_000_000u64, "timeout_ms": SPIN_DEADLINE_MS}}),
    )?;
    let engine = engine(&file, cache)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let event = Event::pre_tool_use("Bash", json!({"command": "ls"}));
    let deadline = Duration::from_millis(SPIN_DEADLINE_MS);
    let mut samples = Vec::new();
    for round in 0..22 {
        let started = Instant::now();
        let outcome = rt.block_on(engine.dispatch(&event));
        if outcome.failures().next().is_none() {
            bail!("the spin plugin answered instead of spinning");
        }
        // The first two warm up.
        if round >= 2 {
            samples.push(started.elapsed().saturating_sub(deadline));
        }
    }
    Ok(Summary::of(
        format!("infinite loop: run time past its {SPIN_DEADLINE_MS} ms deadline"),
        samples,
    ))
}

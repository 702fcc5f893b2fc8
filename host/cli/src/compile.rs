//! Compiling plugins ahead, so that no event waits on the optimising
//! compiler: `wasm-hooks compile` (and the detached `compile --background`
//! that a one-event process leaves behind to compile what it ran on
//! Winch's code), and the compile-ahead step of `pull`, `add`, `update`,
//! `trust`, `build` and `install`, with a progress line per compile.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::hook_files::{CacheArgs, HookFileArgs};
use anyhow::bail;
use clap::Args;
use wasm_hooks::{CompileNote, Compiler, Tiering, WasmRuntime, WasmRuntimeBuilder};

use super::Exit;

/// Arguments of `wasm-hooks compile`.
#[derive(Debug, Args)]
pub(crate) struct CompileArgs {
    /// Plugin components (.wasm) to compile.
    #[arg(required = true, value_name = "PLUGIN")]
    plugins: Vec<PathBuf>,

    /// Compile only if the plugin's sha256 is this (hex).
    #[arg(long, value_name = "HEX")]
    sha256: Option<String>,

    /// The compiler: `cranelift`, whose code every plugin runs on once it
    /// is cached, or `winch`, the baseline one whose code answers until
    /// then (to compare the two).
    #[arg(long, value_enum, default_value_t = CompilerArg::Cranelift)]
    compiler: CompilerArg,

    /// Run as the detached compile a `hook` process leaves behind: at a
    /// low priority, silently, and not at all when another process is
    /// compiling the plugin already.
    #[arg(long, hide = true)]
    background: bool,

    #[command(flatten)]
    cache: CacheArgs,
}

/// The compilers, as `--compiler` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CompilerArg {
    Cranelift,
    Winch,
}

impl From<CompilerArg> for Compiler {
    fn from(arg: CompilerArg) -> Self {
        match arg {
            CompilerArg::Cranelift => Compiler::Cranelift,
            CompilerArg::Winch => Compiler::Winch,
        }
    }
}

pub(crate) fn run(args: CompileArgs) -> anyhow::Result<Exit> {
    if args.background {
        return Ok(background(&args));
    }
    let mut options = args.cache.runtime_options();
    ahead(&mut options);
    let runtime = options.build()?;
    let Some(cache) = runtime.cache() else {
        bail!(
            "no compile cache to fill: drop --no-cache, or give --cache-dir \
             (or set WASM_HOOKS_CACHE_DIR or HOME)"
        );
    };
    println!("cache: {}", cache.dir().display());
    let mut failed = false;
    for path in &args.plugins {
        match runtime.compile_ahead_with(args.compiler.into(), path, args.sha256.as_deref()) {
            Ok(done) => {
                let how = match &done.entry {
                    Some(entry) if entry.is_file() && done.compiled_now => "compiled",
                    Some(entry) if entry.is_file() => "already cached",
                    _ => {
                        failed = true;
                        "compiled, but the cache could not be written (see the warning above)"
                    }
                };
                println!(
                    "{}: {how}\n  sha256 {}\n  {}",
                    path.display(),
                    done.sha256,
                    done.entry.unwrap_or_default().display()
                );
            }
            Err(e) => {
                failed = true;
                eprintln!("wasm-hooks: {e}");
            }
        }
    }
    Ok(if failed { Exit::Failed } else { Exit::GoOn })
}

/// `compile --background`: Cranelift's compile of each plugin into the
/// cache, unless another process is at it; at a low priority (the agent's
/// next events and the person's work come first), reporting nothing.
fn background(args: &CompileArgs) -> Exit {
    // SAFETY: setpriority has no memory preconditions; a failure leaves
    // the priority as it was.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, BACKGROUND_NICENESS) };
    let mut options = args.cache.runtime_options();
    options.tiering(Tiering::Off);
    let Ok(runtime) = options.build() else {
        return Exit::Failed;
    };
    let mut failed = false;
    for path in &args.plugins {
        let busy = args
            .sha256
            .as_deref()
            .is_some_and(|sha256| runtime.compile_in_progress(sha256));
        if !busy && let Err(e) = runtime.compile_ahead(path, args.sha256.as_deref()) {
            tracing::warn!("{e}");
            failed = true;
        }
    }
    if failed { Exit::Failed } else { Exit::GoOn }
}

/// The niceness of a background compile.
const BACKGROUND_NICENESS: libc::c_int = 10;

/// Set `options` to compile every plugin it loads with Cranelift now, into
/// the cache, with a progress line on stderr for each compile: what the
/// commands that prepare a machine (`trust`, `install`…) do.
pub(crate) fn ahead(options: &mut WasmRuntimeBuilder) {
    ahead_naming(options, HashMap::new());
}

/// [`ahead`], the progress line naming each plugin of `names` (its file)
/// as given there (a registry reference), other plugins by file name.
fn ahead_naming(options: &mut WasmRuntimeBuilder, names: HashMap<PathBuf, String>) {
    options
        .tiering(Tiering::Off)
        .on_compile(move |note| progress_line(note, &names));
}

/// A progress line for `note`, on stderr: `compiling NAME (19 MB) for this
/// machine… 12.9 s`.
fn progress_line(note: &CompileNote<'_>, names: &HashMap<PathBuf, String>) {
    let mut err = std::io::stderr().lock();
    let _ = match note {
        CompileNote::Started { plugin, bytes, .. } => write!(
            err,
            "wasm-hooks: compiling {} ({}) for this machine… ",
            names.get(*plugin).cloned().unwrap_or_else(|| name(plugin)),
            size(*bytes)
        ),
        CompileNote::Finished { elapsed, .. } => {
            writeln!(err, "{:.1} s", elapsed.as_secs_f64())
        }
    };
    let _ = err.flush();
}

/// Compile each plugin of `plugins` (a path and its pinned sha256) ahead
/// into the cache `runtime` uses, with a progress line for each one
/// compiled; what failed, as messages (a plugin that does not compile is
/// the next event's failure too, and says so there).
pub(crate) fn plugins_ahead<'a>(
    runtime: &WasmRuntime,
    plugins: impl IntoIterator<Item = (&'a Path, Option<&'a str>)>,
) -> Vec<String> {
    plugins
        .into_iter()
        .filter_map(|(path, sha256)| runtime.compile_ahead(path, sha256).err())
        .map(|e| e.to_string())
        .collect()
}

/// [`plugins_ahead`] of registry plugins: each a stored file, its pinned
/// sha256 and its reference (which the progress line names).
pub(crate) fn pulled_ahead(
    cache: &CacheArgs,
    plugins: &[(PathBuf, String, String)],
) -> anyhow::Result<Vec<String>> {
    let mut options = cache.runtime_options();
    let names = plugins
        .iter()
        .map(|(path, _, reference)| (path.clone(), reference.clone()))
        .collect();
    ahead_naming(&mut options, names);
    let runtime = options.build()?;
    Ok(plugins_ahead(
        &runtime,
        plugins
            .iter()
            .map(|(path, sha256, _)| (path.as_path(), Some(sha256.as_str()))),
    ))
}

/// Compile ahead every plugin on this machine that the engine `files`
/// describe would load (every layer's, as `hook` builds it): a hook file
/// that does not load is said, and left for `validate` and the events to
/// report.
pub(crate) fn engine_ahead(files: &HookFileArgs) -> anyhow::Result<()> {
    let mut options = files.cache().runtime_options();
    ahead(&mut options);
    let mut builder = files.builder(&[])?;
    builder.runtime_options(options).lints(false);
    if let Err(e) = builder.build() {
        eprintln!("wasm-hooks: compiling ahead: {e}");
    }
    Ok(())
}

/// A runtime like `cache`'s that compiles ahead (see [`ahead`]).
pub(crate) fn ahead_runtime(cache: &CacheArgs) -> anyhow::Result<WasmRuntime> {
    let mut options = cache.runtime_options();
    ahead(&mut options);
    Ok(options.build()?)
}

/// A plugin's file name, for a progress line.
fn name(path: &Path) -> String {
    path.file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy()
        .into_owned()
}

/// `bytes` in a few characters.
fn size(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss, reason = "a size shown to a person")]
    let mb = bytes as f64 / f64::from(1 << 20);
    if mb >= 1.0 {
        format!("{mb:.0} MB")
    } else {
        format!("{} KB", bytes.div_ceil(1024))
    }
}

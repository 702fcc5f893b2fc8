//! Two compilers for one component, so that no event waits on an
//! optimising compile: a plugin missing from the compile cache is compiled
//! first by wasmtime's baseline compiler ([`Compiler::Winch`], 4–7× faster
//! to compile, slower code), which answers at once, while the optimising
//! one ([`Compiler::Cranelift`]) compiles it elsewhere and its artifact
//! replaces the baseline one as soon as it is there ([`Tiering`] says
//! where). Both run the same component under the same limits (fuel and
//! epochs are compiled into either); the cache keeps each compiler's
//! artifacts apart, under its name.
//!
//! Compile-ahead commands (`pull`, `trust`, `build`…) compile with the
//! optimising compiler at once ([`Tiering::Off`] or
//! [`crate::WasmRuntime::compile_ahead`]), so a plugin's first event loads
//! it from the cache.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Which compiler made a compiled plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compiler {
    /// wasmtime's optimising compiler: what every plugin runs on once it
    /// is compiled.
    Cranelift,
    /// wasmtime's baseline compiler: what a plugin runs on until Cranelift
    /// has compiled it.
    Winch,
}

impl Compiler {
    /// Its name, as the cache and the logs spell it.
    pub fn name(self) -> &'static str {
        match self {
            Compiler::Cranelift => "cranelift",
            Compiler::Winch => "winch",
        }
    }
}

impl std::fmt::Display for Compiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// When and where a plugin that the compile cache does not hold gets its
/// optimising compile.
#[derive(Clone, Default)]
pub enum Tiering {
    /// At load, before anything runs: for the commands that compile ahead
    /// (and benchmarks of the optimised code).
    Off,
    /// Winch at load; Cranelift on a background thread of this process,
    /// cached and swapped in when done (calls already running finish on
    /// the baseline version). For long-lived hosts: the default.
    #[default]
    Background,
    /// Winch at load; Cranelift by the job given, which must outlive this
    /// process (a detached `wasm-hooks compile`): for a process that
    /// answers one event, so that the next one finds it in the cache.
    /// Without a compile cache there is nowhere to leave it, and the
    /// baseline version is all that runs.
    Elsewhere(Arc<dyn Fn(&OptimizeJob<'_>) + Send + Sync>),
}

impl std::fmt::Debug for Tiering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Tiering::Off => "Off",
            Tiering::Background => "Background",
            Tiering::Elsewhere(_) => "Elsewhere(..)",
        })
    }
}

/// An optimising compile handed to [`Tiering::Elsewhere`]: compile the
/// plugin at `plugin` (if its sha256 is still `sha256`) into the compile
/// cache in `cache_dir`.
#[derive(Debug, Clone, Copy)]
pub struct OptimizeJob<'a> {
    /// The plugin file.
    pub plugin: &'a Path,
    /// Its sha256 (hex) as loaded: other bytes by then are not compiled.
    pub sha256: &'a str,
    /// The compile cache to leave the artifact in.
    pub cache_dir: &'a Path,
}

/// What a compile reports as it goes, for a progress line.
#[derive(Debug, Clone, Copy)]
pub enum CompileNote<'a> {
    /// A compile begins.
    Started {
        /// The plugin file.
        plugin: &'a Path,
        /// Its size in bytes.
        bytes: u64,
        /// The compiler.
        compiler: Compiler,
    },
    /// It ended (well or not: a failure is the load's error).
    Finished {
        /// The plugin file.
        plugin: &'a Path,
        /// The compiler.
        compiler: Compiler,
        /// How long it took.
        elapsed: Duration,
    },
}

/// Who is told of compiles as they go.
pub(crate) type CompileProgress = Arc<dyn Fn(&CompileNote<'_>) + Send + Sync>;

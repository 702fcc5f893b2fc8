//! `wasm-hooks compile`: compile plugins ahead of time into the compile
//! cache, so the first event of every later process only deserializes them.

use std::path::PathBuf;
use std::time::Instant;

use super::hook_files::CacheArgs;
use anyhow::bail;
use clap::Args;

use super::Exit;

/// Arguments of `wasm-hooks compile`.
#[derive(Debug, Args)]
pub(crate) struct CompileArgs {
    /// Plugin components (.wasm) to compile.
    #[arg(required = true, value_name = "PLUGIN")]
    plugins: Vec<PathBuf>,

    #[command(flatten)]
    cache: CacheArgs,
}

pub(crate) fn run(args: CompileArgs) -> anyhow::Result<Exit> {
    let runtime = args.cache.runtime_options().build()?;
    let Some(cache) = runtime.cache() else {
        bail!(
            "no compile cache to fill: drop --no-cache, or give --cache-dir \
             (or set WASM_HOOKS_CACHE_DIR or HOME)"
        );
    };
    println!("cache: {}", cache.dir().display());
    let mut failed = false;
    for path in &args.plugins {
        let started = Instant::now();
        match runtime.load(path) {
            Ok(plugin) => {
                let sha256 = plugin.sha256();
                let entry = runtime.cache_entry(&sha256).unwrap_or_default();
                let how = if plugin.from_cache() {
                    "already cached".to_owned()
                } else if entry.exists() {
                    format!("compiled in {:.0?}", started.elapsed())
                } else {
                    failed = true;
                    "compiled, but the cache could not be written (see the warning above)"
                        .to_owned()
                };
                println!(
                    "{}: {how}\n  sha256 {sha256}\n  {}",
                    path.display(),
                    entry.display()
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

//! Cranelift's compile left to a detached process: what a process that
//! answers one event (`hook`, and the daemon standing in for it) does
//! with a plugin the compile cache does not hold. The detached process is
//! `wasm-hooks compile --background` (this very program).

use std::os::unix::process::CommandExt as _;
use std::process::Stdio;
use std::sync::Arc;

use wasm_hooks::{OptimizeJob, Tiering};

/// What a process that answers one event does with a plugin the cache
/// does not hold: runs it on Winch's code and leaves Cranelift's compile to
/// a detached `wasm-hooks compile --background` (this very program), which
/// outlives it, so that the next event finds it in the cache.
pub(crate) fn detached() -> Tiering {
    Tiering::Elsewhere(Arc::new(start_detached))
}

/// Start `job` as a detached `compile --background`: its own process
/// group (an agent that kills the hook's group on its timeout leaves it
/// running), no terminal, nothing waited for.
fn start_detached(job: &OptimizeJob<'_>) {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return tracing::warn!("no background compile: {e}"),
    };
    let started = std::process::Command::new(exe)
        .args(["compile", "--background", "--cache-dir"])
        .arg(job.cache_dir)
        .arg("--sha256")
        .arg(job.sha256)
        .arg("--")
        .arg(job.plugin)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    match started {
        Ok(child) => tracing::debug!(
            pid = child.id(),
            plugin = %job.plugin.display(),
            "cranelift's compile left to a background process"
        ),
        Err(e) => tracing::warn!("no background compile: {e}"),
    }
}

//! Live reload for `serve`: each served engine is checked when a file in
//! the directory of one of its inputs changes (watched with `notify`, a
//! burst of changes taken as one), every `every` in case a change was not
//! seen, and rebuilt from scratch on SIGHUP. A reload runs beside the
//! requests, never inside one: the new engine answers the requests that
//! come after it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher as _};

use crate::server_metrics::ServerMetrics;
use crate::warm::{Reloaded, WarmEngine};

/// How long a burst of changes is waited out before one reload.
const SETTLE: Duration = Duration::from_millis(50);

/// Reload `engines` as their inputs change, until aborted.
pub(crate) async fn reload_loop(
    engines: Vec<Arc<WarmEngine>>,
    metrics: Arc<ServerMetrics>,
    every: Duration,
) {
    for engine in &engines {
        metrics.set_ready(engine.name(), engine.not_ready().is_none());
    }
    let (changed, mut seen) = tokio::sync::mpsc::channel::<()>(1);
    // Kept alive while the loop runs: dropping it stops the watching.
    let mut _watcher = watch(&engines, &changed);
    let mut tick = tokio::time::interval(every.max(SETTLE));
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    loop {
        let force = tokio::select! {
            _ = seen.recv() => {
                tokio::time::sleep(SETTLE).await;
                while seen.try_recv().is_ok() {}
                false
            }
            _ = tick.tick() => false,
            Some(()) = async {
                match hangup.as_mut() {
                    Some(signal) => signal.recv().await,
                    None => std::future::pending().await,
                }
            } => {
                tracing::info!("SIGHUP: building every engine again");
                true
            }
        };
        let (all, counted) = (engines.clone(), Arc::clone(&metrics));
        let rebuilt = tokio::task::spawn_blocking(move || {
            let mut any = false;
            for engine in &all {
                match engine.reload(force) {
                    Reloaded::Unchanged => {}
                    Reloaded::Built => {
                        tracing::info!(project = %engine.name(), "reloaded its hooks");
                        counted.reloaded(engine.name(), engine.not_ready().is_none());
                        any = true;
                    }
                    Reloaded::Failed(_) => {
                        counted.reloaded(engine.name(), false);
                        any = true;
                    }
                }
            }
            any
        })
        .await
        .unwrap_or(false);
        if rebuilt {
            // Its inputs may be in other directories now.
            _watcher = watch(&engines, &changed);
        }
    }
}

/// A watcher of the directories of every engine's inputs (those that
/// exist), telling `changed`; none when the system has no watcher (the
/// periodic check still runs).
fn watch(
    engines: &[Arc<WarmEngine>],
    changed: &tokio::sync::mpsc::Sender<()>,
) -> Option<notify::RecommendedWatcher> {
    let tell = changed.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_ok_and(|e| !e.kind.is_access()) {
            let _ = tell.try_send(());
        }
    })
    .map_err(|e| tracing::warn!("cannot watch hook files ({e}); checking them periodically"))
    .ok()?;
    let mut dirs: Vec<PathBuf> = engines.iter().flat_map(|e| e.watched_dirs()).collect();
    dirs.sort();
    dirs.dedup();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        if let Err(e) = watcher.watch(dir, RecursiveMode::NonRecursive) {
            tracing::debug!(dir = %dir.display(), "not watched: {e}");
        }
    }
    Some(watcher)
}

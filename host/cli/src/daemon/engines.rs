//! The engines a daemon keeps: one [`WarmEngine`] per command line,
//! project and caller's variables (what a `hook` process builds its engine
//! from) and worker thread, built once and checked before every event
//! against the stamps of every input it was built from (hook files,
//! settings, the trust record, what the hooks run). When one changed it is
//! built again. A build that fails is that event's failure, as it would be
//! in a process of its own ([`RebuildPolicy::Fail`]): a daemon never
//! answers from an engine whose files are no longer what they were.
//!
//! Each worker thread keeps its own: what an engine keeps across events
//! (an HTTP hook's pooled connections, an MCP server's session) belongs
//! to the async runtime of the thread that made it, which runs only while
//! that thread answers, so no other thread may use it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use wasm_hooks::serve::RebuildPolicy;
use wasm_hooks::serve::WarmEngine;
use wasm_hooks::{HookEngine, HookEngineBuilder, RequestEnv, WasmRuntime};

/// Engines kept at once; past it, one is dropped for each new one (an
/// agent's events name a handful).
const MAX_KEPT: usize = 32;

/// What names a kept engine: everything its builder is made from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct EngineKey {
    /// The `hook` command line.
    pub(crate) argv: Vec<String>,
    /// The caller's per-session variables (not the per-event ones).
    pub(crate) env: Vec<(String, Option<String>)>,
    /// The project the event is in.
    pub(crate) project: PathBuf,
    /// The worker thread answering.
    pub(crate) thread: std::thread::ThreadId,
}

/// A builder, and the engine it built with the stamps of its inputs.
pub(crate) struct Built {
    /// What built the engine (for `--explain`, and to build it again).
    pub(crate) builder: Arc<HookEngineBuilder>,
    /// The engine answering.
    pub(crate) engine: Arc<HookEngine>,
}

impl Built {
    /// The engine `builder` builds now.
    ///
    /// # Errors
    /// When the hook files do not load.
    pub(crate) fn now(builder: HookEngineBuilder) -> Result<Self, String> {
        let engine = builder
            .build()
            .map_err(|e| format!("the hook files do not load: {e}"))?;
        Ok(Self {
            builder: Arc::new(builder),
            engine: Arc::new(engine),
        })
    }
}

/// Every engine a daemon keeps, each a [`WarmEngine`] that fails (never
/// answers from the last good one) when a build fails.
#[derive(Default)]
pub(crate) struct KeptEngines {
    kept: Mutex<HashMap<EngineKey, Arc<OnceLock<WarmEngine>>>>,
}

impl KeptEngines {
    /// The engine for `key`: the kept one when none of its inputs changed
    /// (the trust record is one), else one built now (by a builder `make`
    /// makes the first time). The daemon stands in for a process per
    /// event, which would build on every event: it builds on the event
    /// that finds a change.
    ///
    /// # Errors
    /// When the builder cannot be made, or the hook files do not load.
    pub(crate) fn engine(
        &self,
        key: &EngineKey,
        make: impl FnOnce() -> Result<HookEngineBuilder, String>,
    ) -> Result<Built, String> {
        let kept = {
            let mut all = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
            if !all.contains_key(key)
                && all.len() >= MAX_KEPT
                && let Some(out) = all.keys().next().cloned()
            {
                // One out (any): the others stay warm.
                all.remove(&out);
            }
            Arc::clone(all.entry(key.clone()).or_default())
        };
        let name = key.project.display().to_string();
        let warm = match kept.get() {
            Some(warm) => {
                warm.reload(false);
                warm
            }
            None => {
                let builder = make()?;
                kept.get_or_init(|| WarmEngine::build(&name, builder, RebuildPolicy::Fail))
            }
        };
        let engine = warm.engine().ok_or_else(|| {
            format!(
                "the hook files do not load: {}",
                warm.problem().unwrap_or_default()
            )
        })?;
        let builder = warm
            .builder()
            .map(Arc::clone)
            .ok_or("a kept engine has its builder")?;
        Ok(Built { builder, engine })
    }
}

impl KeptEngines {
    /// The engines `thread` keeps that built.
    pub(crate) fn of_thread(&self, thread: std::thread::ThreadId) -> Vec<Arc<HookEngine>> {
        let all = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        all.iter()
            .filter(|(key, _)| key.thread == thread)
            .filter_map(|(_, kept)| kept.get()?.engine())
            .collect()
    }
}

/// What a daemon brings to a request it answers.
pub(crate) struct FromDaemon<'a> {
    /// Its warm runtime (its plugins' `kv` lasting one call).
    pub(crate) runtime: WasmRuntime,
    /// The caller's per-session variables.
    pub(crate) env: RequestEnv,
    /// Its engines, and this request's command line, variables and
    /// thread, which with the project name the engine.
    pub(crate) engines: &'a KeptEngines,
    pub(crate) key: EngineKey,
}

impl FromDaemon<'_> {
    /// The engine for an event in `project`, from a builder `make` makes,
    /// with this daemon's runtime and the caller's variables. Kept only
    /// with a state directory: without one, `once` marks and stop counts
    /// live in the engine's memory, which a process of its own would not
    /// have kept.
    ///
    /// # Errors
    /// When the builder cannot be made, or the hook files do not load.
    pub(crate) fn engine(
        mut self,
        project: &Path,
        keep: bool,
        make: impl FnOnce() -> Result<HookEngineBuilder, String>,
    ) -> Result<Built, String> {
        let (runtime, env) = (self.runtime, self.env);
        let this_request = env.clone();
        let make = move || {
            let mut builder = make()?;
            builder.runtime(runtime).request_env(env);
            Ok(builder)
        };
        if !keep {
            return Built::now(make()?);
        }
        project.clone_into(&mut self.key.project);
        let built = self.engines.engine(&self.key, make)?;
        // A kept engine answers with this event's variables (those its key
        // leaves out change on every event).
        built.builder.current_request_env().update(&this_request);
        Ok(built)
    }
}

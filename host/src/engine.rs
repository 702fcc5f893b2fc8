//! The hook engine: the registry of hooks and dispatch.
//!
//! [`HookEngine::dispatch`] picks the hooks whose event and matcher fit,
//! runs them in priority order (lower first, then file order), hands each the
//! event as modified so far, and folds their answers with
//! [`Fold`](crate::Fold). It knows handlers only through the
//! [`Handler`](crate::Handler) trait. Build one with [`HookEngineBuilder`].

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crate::config::{HookSpec, Loader};
use crate::{Decision, Error, Event, Flow, Fold, Outcome, WasmLimits, WasmRuntime};

/// Hook files that could not be loaded: every problem found, in file order.
/// Displayed as the one problem on one line, or a count and a line each.
#[derive(Debug)]
pub struct LoadError {
    /// The problems.
    pub errors: Vec<Error>,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let [only] = self.errors.as_slice() {
            return write!(f, "{only}");
        }
        write!(f, "{} problems in hook files", self.errors.len())?;
        for e in &self.errors {
            write!(f, "\n  {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}

/// Configures and builds a [`HookEngine`].
///
/// Defaults:
/// - no hook files (add them with [`HookEngineBuilder::hook_file`]);
/// - a new [`WasmRuntime`] (pooling allocator where available) unless one is
///   given with [`HookEngineBuilder::runtime`], so that several engines can
///   share compiled-plugin machinery;
/// - [`WasmLimits::default`] for every wasm hook (fuel 1e9, 1000 ms, 64 MiB,
///   1 MiB result, 64 KiB output), which a hook's `limits` may override.
#[derive(Debug, Default)]
pub struct HookEngineBuilder {
    files: Vec<PathBuf>,
    runtime: Option<WasmRuntime>,
    limits: WasmLimits,
}

impl HookEngineBuilder {
    /// A builder with the defaults above.
    pub fn new() -> Self {
        Self::default()
    }

    /// Read hooks from this file (in addition to any given before).
    pub fn hook_file(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.files.push(path.into());
        self
    }

    /// Run wasm hooks on this runtime.
    pub fn runtime(&mut self, runtime: WasmRuntime) -> &mut Self {
        self.runtime = Some(runtime);
        self
    }

    /// Engine-wide default limits for wasm hooks.
    pub fn wasm_limits(&mut self, limits: WasmLimits) -> &mut Self {
        self.limits = limits;
        self
    }

    /// Load every hook file and build the engine.
    ///
    /// # Errors
    /// A [`LoadError`] with every problem in every file; no engine is built
    /// from a partly broken setup.
    pub fn build(&self) -> Result<HookEngine, LoadError> {
        let runtime = match &self.runtime {
            Some(r) => r.clone(),
            None => WasmRuntime::new().map_err(|e| LoadError { errors: vec![e] })?,
        };
        let mut loader = Loader::new(runtime, self.limits);
        let mut hooks = Vec::new();
        let mut errors = Vec::new();
        for file in &self.files {
            match loader.load_file(file) {
                Ok(specs) => hooks.extend(specs),
                Err(errs) => errors.extend(errs),
            }
        }
        if !errors.is_empty() {
            return Err(LoadError { errors });
        }
        // A stable sort keeps file order among equal priorities.
        hooks.sort_by_key(|h| h.priority);
        Ok(HookEngine {
            hooks: Arc::from(hooks),
        })
    }
}

/// The registry of hooks and dispatch. Cheap to clone; safe to dispatch from
/// many tasks at once.
///
/// # Examples
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use serde_json::json;
/// use wasm_hooks::{Event, HookEngine};
///
/// let engine = HookEngine::builder().hook_file(".wasm-hooks/hooks.json").build()?;
/// let outcome = engine.dispatch(Event::pre_tool_use("Bash", json!({"command": "ls"}))).await;
/// println!("{:?}", outcome.verdict);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct HookEngine {
    hooks: Arc<[HookSpec]>,
}

impl HookEngine {
    /// A builder; see [`HookEngineBuilder`] for the defaults.
    pub fn builder() -> HookEngineBuilder {
        HookEngineBuilder::new()
    }

    /// Every registered hook, in the order dispatch considers them.
    pub fn hooks(&self) -> &[HookSpec] {
        &self.hooks
    }

    /// Run every hook that fits `event` and fold their answers.
    ///
    /// Hooks run one after another; a `modify` answer replaces the tool
    /// input that later hooks see; a deny (or a failure under
    /// `on_failure: block`) stops the chain. Never fails: a failing hook is
    /// handled by its `on_failure` policy and recorded in the trace.
    pub async fn dispatch(&self, mut event: Event) -> Outcome {
        let mut fold = Fold::new();
        for hook in self.hooks.iter() {
            if hook.event != event.name() || !hook.matcher.matches(event.subject()) {
                continue;
            }
            let started = Instant::now();
            let reply = hook.handler.handle(&hook.id, &event).await;
            let elapsed = started.elapsed();
            let flow = match reply.result {
                Ok(result) => {
                    if let Decision::Modify { input } = &result.decision {
                        event.set_tool_input(input.clone());
                    }
                    fold.answer(hook.id.clone(), result, elapsed, reply.output)
                }
                Err(error) => {
                    tracing::warn!(hook = %hook.id, source = %hook.source, "{error}");
                    fold.failure(
                        hook.id.clone(),
                        error,
                        hook.on_failure,
                        elapsed,
                        reply.output,
                    )
                }
            };
            if flow == Flow::Stop {
                break;
            }
        }
        fold.finish()
    }
}

//! The wasm handler: hooks that are sandboxed WebAssembly components.
//!
//! [`WasmRuntime`] is the process-wide part (one `wasmtime::Engine` with the
//! component model, fuel and epochs on, the pooling allocator where the
//! machine allows it, one linker, a background epoch ticker); [`Plugin`] is
//! one compiled component, checked against the hook world once at load;
//! [`WasmHook`] is a plugin with one hook's config and limits, and is the
//! [`Handler`] the engine runs. Every event gets a fresh `Store` and instance
//! from the plugin's `InstancePre`, with WASI granting nothing: no
//! environment, no files, no network, empty stdin, stdout and stderr
//! captured with a cap.

mod abi;
mod limits;
mod state;
mod stdio;
mod v0_1_0;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, Trap};
use wasmtime_wasi::WasiCtxBuilder;

pub use limits::{LimitOverrides, WasmLimits};

use self::abi::FileKind;
use self::state::{HostState, Limiter, LogLines};
use self::stdio::CappedPipe;
use super::{HandlerFuture, Reply};
use crate::{Error, Event, Handler, HookError, HookId, HookOutput, HookResult};

/// The WIT package this host implements.
pub const WIT_PACKAGE: &str = v0_1_0::WIT_PACKAGE;

/// How often the background thread advances the engine's epoch; wall-clock
/// deadlines are precise to about one tick.
const EPOCH_TICK: Duration = Duration::from_millis(5);

/// The process-wide wasm runtime. Cheap to clone; all clones share one
/// engine, one linker and one epoch ticker (which stops when the last clone
/// is dropped).
///
/// # Examples
/// ```
/// let runtime = wasm_hooks::WasmRuntime::new()?;
/// let err = runtime.load("no/such/plugin.wasm".as_ref()).unwrap_err();
/// assert!(err.to_string().contains("no/such/plugin.wasm"));
/// # Ok::<(), wasm_hooks::Error>(())
/// ```
#[derive(Clone)]
pub struct WasmRuntime {
    inner: Arc<Runtime>,
}

struct Runtime {
    engine: Engine,
    linker: Linker<HostState>,
    pooling: bool,
}

impl std::fmt::Debug for WasmRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmRuntime")
            .field("pooling", &self.inner.pooling)
            .finish_non_exhaustive()
    }
}

impl WasmRuntime {
    /// Start a runtime: the pooling allocator if the machine can reserve
    /// its address space, on-demand allocation otherwise.
    ///
    /// # Errors
    /// When wasmtime cannot create an engine at all, or WASI cannot be linked.
    pub fn new() -> Result<Self, Error> {
        let mut config = Config::new();
        config
            .wasm_component_model(true)
            .consume_fuel(true)
            .epoch_interruption(true);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(
            PoolingAllocationConfig::default(),
        ));
        let (engine, pooling) = match Engine::new(&config) {
            Ok(engine) => {
                tracing::debug!("wasm runtime: pooling allocator");
                (engine, true)
            }
            Err(e) => {
                tracing::debug!("pooling allocator unavailable ({e}); allocating on demand");
                config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
                let engine = Engine::new(&config).map_err(|e| Error::Runtime(e.to_string()))?;
                (engine, false)
            }
        };
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .and_then(|()| v0_1_0::add_to_linker(&mut linker))
            .map_err(|e| Error::Runtime(e.to_string()))?;
        start_epoch_ticker(&engine);
        Ok(Self {
            inner: Arc::new(Runtime {
                engine,
                linker,
                pooling,
            }),
        })
    }

    /// Whether instances come from the pooling allocator.
    pub fn uses_pooling(&self) -> bool {
        self.inner.pooling
    }

    /// Load and compile a plugin, checking before compiling that it is a
    /// component built for a compatible WIT version, and after that it fits
    /// the `hook` world (imports this host provides, the handler export).
    ///
    /// # Errors
    /// [`Error::Plugin`] naming the file and the problem, or
    /// [`Error::IncompatiblePlugin`] naming both WIT versions.
    pub fn load(&self, path: &Path) -> Result<Plugin, Error> {
        let fail = |message: String| Error::Plugin {
            path: path.to_owned(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| {
            fail(match e.kind() {
                std::io::ErrorKind::NotFound => "file not found".to_owned(),
                _ => format!("cannot read it: {e}"),
            })
        })?;
        match abi::file_kind(&bytes) {
            FileKind::Component => {}
            FileKind::CoreModule => {
                return Err(fail(
                    "is a core wasm module, not a component (build plugins with \
                     `cargo build --target wasm32-wasip2`)"
                        .into(),
                ));
            }
            FileKind::NotWasm => return Err(fail("is not a WebAssembly file".into())),
        }
        let stamps =
            abi::wit_stamps(&bytes).map_err(|e| fail(format!("malformed component: {e}")))?;
        if let Some(found) = stamps
            .into_iter()
            .find(|s| !abi::compatible(s, WIT_PACKAGE))
        {
            return Err(Error::IncompatiblePlugin {
                path: path.to_owned(),
                found,
                expected: WIT_PACKAGE,
            });
        }
        let started = Instant::now();
        let component = Component::new(&self.inner.engine, &bytes)
            .map_err(|e| fail(format!("compiling: {e}")))?;
        tracing::debug!(plugin = %path.display(), elapsed = ?started.elapsed(), "compiled");
        let instance_pre = self
            .inner
            .linker
            .instantiate_pre(&component)
            .map_err(|e| fail(format!("imports something this host does not provide: {e}")))?;
        let pre = v0_1_0::HookPre::new(instance_pre).map_err(|e| {
            fail(format!(
                "does not fit the hook world of {}: {e}",
                v0_1_0::WIT_PACKAGE
            ))
        })?;
        Ok(Plugin {
            inner: Arc::new(PluginInner {
                path: path.to_owned(),
                pre,
                runtime: self.clone(),
            }),
        })
    }
}

/// Advance `engine`'s epoch every [`EPOCH_TICK`] until the engine is dropped.
fn start_epoch_ticker(engine: &Engine) {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("wasm-hooks-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .map(drop)
        .unwrap_or_else(|e| {
            tracing::warn!("no epoch ticker ({e}): only fuel and timers bound wasm hooks")
        });
}

/// One compiled plugin, ready to instantiate. Cheap to clone.
#[derive(Clone)]
pub struct Plugin {
    inner: Arc<PluginInner>,
}

struct PluginInner {
    path: PathBuf,
    pre: v0_1_0::HookPre<HostState>,
    runtime: WasmRuntime,
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl Plugin {
    /// The file the plugin was loaded from.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }
}

/// A plugin bound to one hook's config and limits: the wasm [`Handler`].
#[derive(Debug, Clone)]
pub struct WasmHook {
    plugin: Plugin,
    config: Arc<str>,
    limits: WasmLimits,
}

impl WasmHook {
    /// A hook running `plugin` with this `config` (a JSON object, handed to
    /// the plugin through `host.config`) and these limits.
    pub fn new(plugin: Plugin, config: &serde_json::Value, limits: WasmLimits) -> Self {
        Self {
            plugin,
            config: Arc::from(config.to_string()),
            limits,
        }
    }

    /// The limits every call of this hook runs under.
    pub fn limits(&self) -> &WasmLimits {
        &self.limits
    }

    async fn call(&self, hook: &HookId, event: &Event) -> Reply {
        let limits = &self.limits;
        let stdout = CappedPipe::new(limits.output_bytes());
        let stderr = CappedPipe::new(limits.output_bytes());
        let wasi = WasiCtxBuilder::new()
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .build();
        let runtime = &self.plugin.inner.runtime.inner;
        let mut store = Store::new(
            &runtime.engine,
            HostState {
                wasi,
                table: ResourceTable::new(),
                limiter: Limiter::new(limits),
                hook: hook.clone(),
                config: self.config.clone(),
                logs: LogLines::new(limits.output_bytes()),
            },
        );
        store.limiter(|s| &mut s.limiter);
        // Fuel is enabled on the engine, so setting it cannot fail.
        let _ = store.set_fuel(limits.fuel);
        store.set_epoch_deadline(epoch_ticks(limits.timeout_ms));

        // The timer also bounds time spent blocked in host calls, where
        // epochs cannot interrupt.
        let deadline = Duration::from_millis(limits.timeout_ms);
        let answer = tokio::time::timeout(
            deadline,
            v0_1_0::call(&self.plugin.inner.pre, &mut store, event),
        )
        .await;

        let (stdout, out_cut) = stdout.contents();
        let (stderr, err_cut) = stderr.contents();
        let state = store.into_data();
        let result = match answer {
            Err(_) => Err(HookError::Timeout {
                hook: hook.clone(),
                limit_ms: limits.timeout_ms,
            }),
            Ok(Err(trap)) => Err(classify_trap(&trap, hook, limits, &state, &stderr)),
            Ok(Ok(Err(message))) => Err(HookError::Failed {
                hook: hook.clone(),
                message,
            }),
            Ok(Ok(Ok(outcome))) => check_answer(outcome, hook, limits),
        };
        Reply {
            result,
            output: HookOutput {
                stdout,
                stderr,
                logs: state.logs.lines,
                truncated: out_cut || err_cut || state.logs.truncated,
            },
        }
    }
}

impl Handler for WasmHook {
    fn handle<'a>(&'a self, hook: &'a HookId, event: &'a Event) -> HandlerFuture<'a> {
        Box::pin(self.call(hook, event))
    }
}

/// Epoch ticks that cover `timeout_ms`, plus one for the partly elapsed
/// current tick.
fn epoch_ticks(timeout_ms: u64) -> u64 {
    let tick = u64::try_from(EPOCH_TICK.as_millis()).unwrap_or(1).max(1);
    timeout_ms.div_ceil(tick) + 1
}

/// Turn a wasmtime error into the failure that names the limit hit, telling
/// trap kinds apart by type, never by message text.
fn classify_trap(
    error: &wasmtime::Error,
    hook: &HookId,
    limits: &WasmLimits,
    state: &HostState,
    stderr: &str,
) -> HookError {
    let hook = hook.clone();
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => HookError::FuelExhausted {
            hook,
            fuel: limits.fuel,
        },
        Some(Trap::Interrupt) => HookError::Timeout {
            hook,
            limit_ms: limits.timeout_ms,
        },
        _ if state.limiter.memory_hit => HookError::MemoryLimit {
            hook,
            limit_mb: limits.memory_mb,
        },
        trap => {
            let what = trap.map_or_else(|| format!("{error:#}"), ToString::to_string);
            let said: Vec<&str> = stderr
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with("note: run with"))
                .collect();
            let message = if said.is_empty() {
                what
            } else {
                format!("{what}; stderr: {}", said.join(" / "))
            };
            HookError::Trap { hook, message }
        }
    }
}

/// Apply the result-size limit, then convert the answer.
fn check_answer(
    outcome: v0_1_0::WitOutcome,
    hook: &HookId,
    limits: &WasmLimits,
) -> Result<HookResult, HookError> {
    let size = outcome.size();
    if size > limits.result_bytes() {
        return Err(HookError::ResultTooLarge {
            hook: hook.clone(),
            size_kb: (size as u64).div_ceil(1024),
            limit_kb: limits.max_result_kb,
        });
    }
    outcome
        .into_result()
        .map_err(|message| HookError::BadResult {
            hook: hook.clone(),
            message,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_deadline_covers_the_timeout() {
        assert_eq!(epoch_ticks(0), 1);
        assert_eq!(epoch_ticks(1), 2);
        assert_eq!(epoch_ticks(100), 21);
    }

    #[test]
    fn files_that_are_not_components_are_refused_before_compiling() {
        let runtime = WasmRuntime::new().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let core = dir.path().join("core.wasm");
        std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
        let text = dir.path().join("text.wasm");
        std::fs::write(&text, b"hello").unwrap();
        let err = runtime.load(&core).unwrap_err().to_string();
        assert!(
            err.contains("core.wasm") && err.contains("core wasm module"),
            "{err}"
        );
        let err = runtime.load(&text).unwrap_err().to_string();
        assert!(
            err.contains("text.wasm") && err.contains("not a WebAssembly file"),
            "{err}"
        );
    }
}

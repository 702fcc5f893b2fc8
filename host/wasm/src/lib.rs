//! The wasm handler: hooks that are sandboxed WebAssembly components.
//!
//! [`WasmRuntime`] is the process-wide part (one `wasmtime::Engine` with the
//! component model, fuel and epochs on, the pooling allocator where the
//! machine allows it, one linker, a background epoch ticker); [`Plugin`] is
//! one compiled component, checked against the hook world once at load;
//! [`WasmHook`] is a plugin with one hook's config and limits, and is the
//! [`Handler`] the engine runs. Every event gets a fresh `Store` and instance
//! from the plugin's `InstancePre` (or, for a hook with `instance: reuse`
//! in a long-lived host, a warm one: `warm`), with WASI granting nothing:
//! no environment, no files, no network, empty stdin, stdout and stderr
//! captured with a cap.

mod abi;
mod cache;
mod compiled;
mod digests;
mod grants;
mod inspect;
mod kv;
mod limits;
mod plugin;
#[cfg(test)]
mod properties;
mod refusals;
mod refused;
mod runtime;
mod state;
mod stdio;
mod survey;
mod tier;
mod v0_1;
mod v0_2;
mod warm;
mod world;

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::ResourceTable;
use wasmtime::{Store, Trap, UpdateDeadline};
use wasmtime_wasi::WasiCtxBuilder;

pub use abi::{CONFIG_SCHEMA_SECTION, embed_config_schema, stamp_wit};
pub use cache::CompileCache;
pub use grants::{GrantBase, GrantError, GrantedDir, Grants};
pub use inspect::PluginInfo;
pub use limits::{LimitOverrides, WasmLimits};
pub use plugin::{CompiledAhead, Plugin};
pub use runtime::{WasmRuntime, WasmRuntimeBuilder};
pub use survey::CacheSurvey;
pub use tier::{CompileNote, Compiler, OptimizeJob, Tiering};
pub use warm::{InstancePolicy, MAX_INSTANCE_CALLS};

use self::refused::{Refusal, Refusals};
use self::state::{HostState, Limiter, LogLines};
use self::stdio::CappedPipe;
use self::warm::{Prepared, WarmInstance, WarmPool};
use wasm_hooks_core::{
    Decision, Event, Handler, HandlerFuture, HookError, HookId, HookOutput, HookResult,
    PrepareFuture, Reply, escape_controls,
};

pub use world::WIT_PACKAGE;

/// A plugin bound to one hook's config, limits and grants: the wasm
/// [`Handler`].
#[derive(Debug, Clone)]
pub struct WasmHook {
    plugin: Plugin,
    config: Arc<str>,
    limits: WasmLimits,
    grants: Grants,
    /// Its warm instances, when it keeps them (`instance: reuse`).
    warm: Option<Arc<WarmPool>>,
    /// Otherwise, its next fresh instance when the host made it ahead.
    prepared: Arc<Prepared>,
    /// Its name in the `kv` store: the plugin's, under the layer the hook
    /// comes from when the host says ([`WasmHook::with_kv_layer`]).
    kv_name: Arc<str>,
}

impl WasmHook {
    /// A hook running `plugin` with this `config` (a JSON object, handed to
    /// the plugin through `host.config`) and these limits, granted nothing.
    pub fn new(plugin: Plugin, config: &serde_json::Value, limits: WasmLimits) -> Self {
        Self {
            kv_name: Arc::clone(plugin.kv_name()),
            plugin,
            config: Arc::from(config.to_string()),
            limits,
            grants: Grants::default(),
            warm: None,
            prepared: Arc::default(),
        }
    }

    /// This hook, its `kv` values kept under `layer` (the layer of hook
    /// files it comes from): a hook of another layer that runs the same
    /// plugin (a project naming the person's plugin file or digest) never
    /// reads, resets or uses up these.
    pub fn with_kv_layer(mut self, layer: &str) -> Self {
        self.kv_name = Arc::from(format!("{layer}:{}", self.plugin.kv_name()));
        self
    }

    /// This hook, getting its instances as `policy` says (a runtime
    /// [`WasmRuntimeBuilder::like_a_process`] gives every call a fresh
    /// one whatever it says).
    pub fn with_instances(mut self, policy: InstancePolicy) -> Self {
        let keeps = policy == InstancePolicy::Reuse && self.plugin.runtime().keeps_instances();
        self.warm = keeps.then(Arc::default);
        self
    }

    /// This hook, with these capabilities granted.
    pub fn with_grants(mut self, grants: Grants) -> Self {
        self.grants = grants;
        self
    }

    /// The limits every call of this hook runs under.
    pub fn limits(&self) -> &WasmLimits {
        &self.limits
    }

    /// Run the plugin on `event`, and store the `kv` values it set. When
    /// another event of the session changed a value it read meanwhile, run
    /// it again on the new values, on a fresh instance (the discarded run
    /// changed the warm one's memory), within the same time limit and at
    /// most [`KV_ATTEMPTS`] times: its answer and its values go together.
    /// When its values cannot be stored, its answer is a failure, unless it
    /// denied, asked or stopped: that stands, values or not.
    async fn call(&self, hook: &HookId, event: &Event) -> Reply {
        let deadline = Instant::now() + Duration::from_millis(self.limits.timeout_ms);
        let mut attempt = 1;
        loop {
            let Attempt {
                mut reply,
                kv,
                warm,
            } = self.attempt(hook, event, deadline).await;
            if reply.result.is_err() {
                self.keep(warm);
                return reply;
            }
            let failure = match kv.commit() {
                Ok(kv::Committed::Done) => {
                    self.keep(warm);
                    return reply;
                }
                Ok(kv::Committed::Stale) if attempt < KV_ATTEMPTS && Instant::now() < deadline => {
                    attempt += 1;
                    // Let the event that won finish before trying again.
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    continue;
                }
                Ok(kv::Committed::Stale) => format!(
                    "kv: other events of this session changed the values it read \
                     {attempt} times in a row; its answer is not used"
                ),
                Err(message) => format!("{message}; its answer is not used"),
            };
            // A deny, a question or a stop stands without its values: a
            // failure would go by `on_failure`, and `warn` would let
            // through what the plugin refused.
            let restrictive = reply.result.as_ref().is_ok_and(|r| {
                matches!(r.decision, Decision::Deny { .. } | Decision::Ask(_)) || r.stop.is_some()
            });
            if restrictive {
                let kept = failure.replace("its answer is not used", "its answer stands");
                tracing::warn!(hook = hook.as_str(), "{kept}");
                reply.output.logs.push(kept);
            } else {
                reply.result = Err(HookError::Failed {
                    hook: hook.clone(),
                    message: failure,
                });
            }
            return reply;
        }
    }

    /// Keep `warm` for a later call, if the hook keeps instances; else
    /// leave it to be dropped after the reply, if the host prepares.
    fn keep(&self, warm: Option<WarmInstance>) {
        match (&self.warm, warm) {
            (Some(pool), Some(warm)) => pool.give_back(warm),
            (None, Some(spent)) => self.prepared.retire(spent),
            (_, None) => {}
        }
    }

    /// Make this hook's next fresh instance now, between events, so the
    /// next event does not wait for it (the host calls this after its
    /// reply is sent); and drop the one the last event used, whose pool
    /// slot's reset would otherwise be that event's. Nothing for a hook
    /// that keeps warm instances, nor for one granted directories: those
    /// are opened when its event comes (a directory replaced meanwhile is
    /// the new one). A failure leaves none made: the event makes its own,
    /// and reports what fails.
    async fn make_next_instance(&self, hook: &HookId) {
        let compiled = self.plugin.current();
        if self.warm.is_some() || !self.grants.dirs().is_empty() || self.prepared.begin(&compiled) {
            return;
        }
        let Ok(mut ready) = self.fresh_instance(hook, compiled) else {
            return;
        };
        let deadline = Instant::now() + Duration::from_millis(self.limits.timeout_ms);
        let timeout = arm(&mut ready.store, self.limits.fuel, deadline);
        let WarmInstance {
            store, compiled, ..
        } = &mut ready;
        if let Ok(Ok(made)) = tokio::time::timeout(timeout, compiled.pre.instantiate(store)).await {
            // The fuel its start burned is its first event's to pay, as
            // when the event makes the instance itself.
            ready.start_fuel = self.limits.fuel - ready.store.get_fuel().unwrap_or(0);
            ready.instance = Some(made);
            self.prepared.put(ready);
        }
    }

    /// One run of the plugin on `event`, ending by `deadline`: on a warm
    /// instance when the hook keeps them and one waits, else on a fresh
    /// one.
    async fn attempt(&self, hook: &HookId, event: &Event, deadline: Instant) -> Attempt {
        let limits = &self.limits;
        let runtime = self.plugin.runtime();
        let kv = runtime.kv_scope(&self.kv_name, event.session_id());
        let compiled = self.plugin.current();
        let mut warm = match self.instance_for(hook, compiled) {
            Ok(warm) => warm,
            Err(message) => {
                let reply = Reply {
                    result: Err(HookError::Failed {
                        hook: hook.clone(),
                        message,
                    }),
                    output: HookOutput::default(),
                };
                return Attempt {
                    reply,
                    kv,
                    warm: None,
                };
            }
        };
        warm.calls += 1;
        let WarmInstance {
            store,
            instance,
            compiled,
            start_fuel,
            ..
        } = &mut warm;
        store.data_mut().kv = Some(kv);
        let fuel = limits.fuel.saturating_sub(std::mem::take(start_fuel));
        let timeout = arm(store, fuel, deadline);

        let answer = tokio::time::timeout(timeout, async {
            let made = match instance.take() {
                Some(made) => made,
                None => compiled.pre.instantiate(store).await?,
            };
            let answer = made.handle(store, event).await;
            *instance = Some(made);
            answer
        })
        .await;

        let (stdout, out_cut) = warm.stdout.take();
        let (stderr, err_cut) = warm.stderr.take();
        let data = warm.store.data_mut();
        let memory_hit = std::mem::take(&mut data.limiter.memory_hit);
        let mut logs = std::mem::replace(&mut data.logs, LogLines::new(limits.output_bytes()));
        let refused = std::mem::take(&mut data.refusals.refused);
        let kv = data.kv.take().expect("set above, for this call");
        self.report_refusals(hook, refused, &mut logs);
        let result = match answer {
            Err(_) => Err(HookError::Timeout {
                hook: hook.clone(),
                limit_ms: limits.timeout_ms,
            }),
            Ok(Err(trap)) => Err(classify_trap(&trap, hook, limits, memory_hit, &stderr)),
            Ok(Ok(Err(message))) => Err(HookError::Failed {
                hook: hook.clone(),
                message,
            }),
            Ok(Ok(Ok(outcome))) => check_answer(outcome, hook, limits),
        };
        // An instance that answered (even with its own `err`) may answer
        // again; one stopped by a trap, the clock or any limit may not.
        let reusable = !memory_hit && matches!(result, Ok(_) | Err(HookError::Failed { .. }));
        let reply = Reply {
            result,
            output: HookOutput {
                stdout,
                stderr,
                logs: logs.lines,
                truncated: out_cut || err_cut || logs.truncated,
            },
        };
        Attempt {
            reply,
            kv,
            warm: reusable.then_some(warm),
        }
    }

    /// The instance of `compiled` a call runs on: one waiting (warm, when
    /// the hook keeps them; else made ahead by [`Handler::prepare`]), or a
    /// new one.
    fn instance_for(
        &self,
        hook: &HookId,
        compiled: Arc<compiled::Compiled>,
    ) -> Result<WarmInstance, String> {
        let waiting = match &self.warm {
            Some(pool) => pool.take(&compiled),
            None => self.prepared.take(&compiled),
        };
        waiting.map_or_else(|| self.fresh_instance(hook, compiled), Ok)
    }

    /// A store for a new instance of `compiled` (made by its first call),
    /// with WASI granting this hook's grants and nothing else; or why the
    /// grants cannot be given.
    fn fresh_instance(
        &self,
        hook: &HookId,
        compiled: Arc<compiled::Compiled>,
    ) -> Result<WarmInstance, String> {
        let limits = &self.limits;
        let stdout = CappedPipe::new(limits.output_bytes());
        let stderr = CappedPipe::new(limits.output_bytes());
        let mut wasi = WasiCtxBuilder::new();
        wasi.stdout(stdout.clone()).stderr(stderr.clone());
        self.grants.apply(&mut wasi)?;
        let mut store = Store::new(
            compiled.engine(),
            HostState {
                wasi: wasi.build(),
                table: handle_table(),
                limiter: Limiter::new(limits),
                hook: hook.clone(),
                config: self.config.clone(),
                logs: LogLines::new(limits.output_bytes()),
                kv: None,
                refusals: Refusals::new(self.plugin.runtime().sandbox_root()),
            },
        );
        store.limiter(|s| &mut s.limiter);
        Ok(WarmInstance {
            store,
            stdout,
            stderr,
            instance: None,
            compiled,
            calls: 0,
            start_fuel: 0,
        })
    }
}

impl WasmHook {
    /// Name each path the sandbox refused, with the grants, in the hook's
    /// trace and (at info level) in the host's log.
    fn report_refusals(&self, hook: &HookId, refused: Vec<Refusal>, logs: &mut LogLines) {
        for Refusal { what, path, why } in refused {
            let path = escape_controls(&path);
            let line = format!("sandbox: refused {what} `{path}`: {why} ({})", self.grants);
            tracing::info!(hook = hook.as_str(), "{line}");
            logs.push(line);
        }
    }
}

impl Handler for WasmHook {
    fn handle<'a>(&'a self, hook: &'a HookId, event: &'a Event) -> HandlerFuture<'a> {
        Box::pin(self.call(hook, event))
    }

    fn prepare<'a>(&'a self, hook: &'a HookId) -> PrepareFuture<'a> {
        Box::pin(self.make_next_instance(hook))
    }

    fn details(&self) -> Vec<String> {
        let l = &self.limits;
        vec![
            format!(
                "plugin {} (sha256 {}, {} by {})",
                self.plugin.path().display(),
                self.plugin.sha256(),
                if self.plugin.from_cache() {
                    "from the compile cache"
                } else {
                    "compiled"
                },
                self.plugin.compiler()
            ),
            format!("grants: {}", self.grants),
            format!(
                "limits: fuel {}, timeout_ms {}, memory_mb {}, max_result_kb {}, \
                 max_output_kb {}, max_table_elements {}",
                l.fuel,
                l.timeout_ms,
                l.memory_mb,
                l.max_result_kb,
                l.max_output_kb,
                l.max_table_elements
            ),
        ]
    }
}

/// Give `store` the hook's fuel again and stop it at `deadline`: at every
/// epoch tick past the first, the real deadline is checked, and the
/// plugin stopped past it, else other tasks run before it goes on. The
/// time left, for the timer that also bounds time spent blocked in host
/// calls, where epochs cannot interrupt.
fn arm(store: &mut Store<HostState>, fuel: u64, deadline: Instant) -> Duration {
    // Fuel is enabled on the engine, so setting it cannot fail.
    let _ = store.set_fuel(fuel);
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        Ok(if Instant::now() >= deadline {
            UpdateDeadline::Interrupt
        } else {
            UpdateDeadline::Yield(1)
        })
    });
    deadline.saturating_duration_since(Instant::now())
}

/// Turn a wasmtime error into the failure that names the limit hit, telling
/// trap kinds apart by type, never by message text.
fn classify_trap(
    error: &wasmtime::Error,
    hook: &HookId,
    limits: &WasmLimits,
    memory_hit: bool,
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
        _ if memory_hit => HookError::MemoryLimit {
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
    outcome: world::WitOutcome,
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

/// One run of a plugin: its reply, the `kv` values it read and set (not
/// stored yet), and its instance when it may answer again.
struct Attempt {
    reply: Reply,
    kv: kv::KvScope,
    warm: Option<WarmInstance>,
}

/// How many times a call whose `kv` values went stale is run (see
/// [`WasmHook::call`]): enough for every event of a busy session answered
/// at once to get through, few enough that a plugin cannot be run without
/// end.
const KV_ATTEMPTS: u32 = 32;

/// The most handles (open files, directory entries, streams) one instance
/// may hold at once: a plugin cannot take the host's file descriptors (a
/// `serve` that cannot accept) by opening a granted file again and again.
pub const MAX_HANDLES: usize = 1_024;

/// A resource table for one instance, capped at [`MAX_HANDLES`].
fn handle_table() -> ResourceTable {
    let mut table = ResourceTable::new();
    table.set_max_capacity(MAX_HANDLES);
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_that_are_not_components_are_refused_before_compiling() {
        let runtime = WasmRuntime::builder().no_cache().build().unwrap();
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

//! A wasm hook whose plugin is not on this machine yet: pinned in a lock
//! and not yet pulled into the store, or a local file not built yet. It
//! stands in the engine like any hook, so only the events and tools it is
//! on wait for it or fail (by its `on_failure`); the first event that
//! reaches it pulls the locked digest (in a trusted project or a person's
//! own layer, within a deadline, with one message) and loads it; every
//! event after runs it. A failed attempt is tried again on the next event,
//! so a long-lived host recovers when the registry comes back.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::OnceCell;
use wasm_hooks_core::{
    Event, Handler, HandlerFuture, HookError, HookId, HookOutput, PrepareFuture, Reply,
};
use wasm_hooks_wasm::{Grants, InstancePolicy, WasmHook, WasmLimits, WasmRuntime};

use super::config_schema;
use crate::oci::{Fetcher, LockEntry, PluginRef};

/// Where the plugin is to come from.
#[derive(Debug)]
pub(crate) enum Source {
    /// A registry, at the digest the lock pins.
    Registry {
        /// The reference and its pin.
        pinned: Box<Pinned>,
        /// Whether this engine may reach the registry itself (not for an
        /// untrusted project's hook).
        may_pull: Arc<AtomicBool>,
        /// The most the pull may take.
        deadline: Duration,
    },
    /// A local file (under a plugin folder's `build/`) that was missing
    /// when the hook file was read.
    File {
        /// The file.
        path: PathBuf,
        /// Its pinned sha256, if the hook file gives one.
        sha256: Option<String>,
        /// What makes it (`wasm-hooks build DIR`).
        remedy: String,
        /// Whether the hook is a project's: then the file is never loaded
        /// here, as it was not weighed by trust when the engine was built
        /// (the next engine built loads it, or leaves it out).
        from_project: bool,
    },
    /// None: the hook cannot have its plugin (the lock does not pin it,
    /// the organisation refuses a local file…), for this reason.
    Broken(String),
}

impl std::fmt::Display for Source {
    /// Why the plugin is not loaded yet, and what happens until it is.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Registry { pinned, .. } => write!(
                f,
                "plugin {} ({}) is not on this machine yet: the first event this hook is on pulls it (`wasm-hooks pull` does now)",
                pinned.reference, pinned.entry.digest
            ),
            Source::File { path, remedy, .. } => write!(
                f,
                "plugin {} is missing: {remedy}; until then the events this hook is on fail by its `on_failure`",
                path.display()
            ),
            Source::Broken(why) => write!(
                f,
                "{why}; until then the events this hook is on fail by its `on_failure`"
            ),
        }
    }
}

/// A registry reference, the lock's pin of it, and what pulls it.
#[derive(Debug)]
pub(crate) struct Pinned {
    /// As the hook file names it.
    pub(crate) reference: PluginRef,
    /// Its lock entry.
    pub(crate) entry: LockEntry,
    /// Pulls it.
    pub(crate) fetcher: Fetcher,
}

/// What the loaded plugin runs with.
#[derive(Debug)]
pub(crate) struct HookParts {
    /// Its `config`.
    pub(crate) config: Value,
    /// Its limits.
    pub(crate) limits: WasmLimits,
    /// Its grants.
    pub(crate) grants: Grants,
    /// Fresh instances or warm ones.
    pub(crate) instance: InstancePolicy,
    /// The layer of hook files it comes from, which its `kv` values are
    /// kept under.
    pub(crate) layer: &'static str,
}

/// The hook, loading its plugin on the first event that reaches it.
#[derive(Debug)]
pub(crate) struct DeferredWasm {
    source: Source,
    runtime: WasmRuntime,
    parts: HookParts,
    hook: OnceCell<WasmHook>,
    /// The pull under way, which every event waits on (each within its
    /// own deadline) and which goes on when one gives up: in a
    /// long-lived host a big plugin arrives however short a hook's
    /// timeout is.
    pulling: std::sync::Mutex<Option<Pull>>,
}

/// A pull under way, shared.
type Pull =
    futures_util::future::Shared<futures_util::future::BoxFuture<'static, Result<PathBuf, String>>>;

impl DeferredWasm {
    /// A hook running the plugin from `source` once it is there.
    pub(crate) fn new(source: Source, runtime: WasmRuntime, parts: HookParts) -> Self {
        Self {
            source,
            runtime,
            parts,
            hook: OnceCell::new(),
            pulling: std::sync::Mutex::new(None),
        }
    }

    /// The pull of `pinned` under way, started if none is.
    fn pull(&self, pinned: &Pinned) -> Pull {
        use futures_util::FutureExt as _;
        let mut slot = self
            .pulling
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(pull) = slot.as_ref() {
            return pull.clone();
        }
        let (fetcher, reference, entry) = (
            pinned.fetcher.clone(),
            pinned.reference.clone(),
            pinned.entry.clone(),
        );
        // Shared by every hook waiting for it, so kept as its words.
        let task = tokio::spawn(async move {
            fetcher
                .ensure(&reference, &entry)
                .await
                .map_err(|e| e.to_string())
        });
        let pull = async move {
            task.await
                .unwrap_or_else(|e| Err(format!("the pull stopped: {e}")))
        }
        .boxed()
        .shared();
        *slot = Some(pull.clone());
        pull
    }

    /// Forget a pull that failed, so that the next event tries again.
    fn forget_pull(&self) {
        *self
            .pulling
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// The plugin's file, pulling it first if it may.
    async fn file(&self, id: &HookId) -> Result<(PathBuf, Option<String>), String> {
        match &self.source {
            Source::Broken(why) => Err(why.clone()),
            Source::File {
                path,
                sha256,
                remedy,
                from_project,
            } => {
                if !path.is_file() {
                    Err(format!(
                        "its plugin {} is missing: {remedy}",
                        path.display()
                    ))
                } else if *from_project {
                    Err(format!(
                        "its plugin {} was built after these hook files were read; the next event loads it (if the project is trusted: `wasm-hooks trust` weighs the new file)",
                        path.display()
                    ))
                } else {
                    Ok((path.clone(), sha256.clone()))
                }
            }
            Source::Registry {
                pinned,
                may_pull,
                deadline,
            } => {
                let Pinned {
                    reference,
                    entry,
                    fetcher,
                } = &**pinned;
                let pin = Some(entry.component_hex().to_owned());
                if let Some(path) = fetcher.stored(entry) {
                    return Ok((path, pin));
                }
                if fetcher.signers.required && fetcher.signers.keys.is_empty() {
                    return Err(format!("{reference}: {}", fetcher.signers.no_keys()));
                }
                if !may_pull.load(Ordering::Relaxed) {
                    return Err(format!(
                        "its plugin {reference} ({}) is not on this machine, and wasm-hooks does not reach an untrusted project's registry by itself: run `wasm-hooks pull`",
                        entry.digest
                    ));
                }
                tracing::warn!(
                    "wasm-hooks: pulling {reference} ({}) for hook `{id}`: its first use on this machine",
                    entry.digest
                );
                match tokio::time::timeout(*deadline, self.pull(pinned)).await {
                    Ok(Ok(path)) => Ok((path, pin)),
                    Ok(Err(e)) => {
                        self.forget_pull();
                        Err(format!("{e}; run `wasm-hooks pull` to fetch it"))
                    }
                    Err(_) => Err(format!(
                        "pulling {reference} took over {} s; run `wasm-hooks pull` to fetch it",
                        deadline.as_secs_f64()
                    )),
                }
            }
        }
    }

    /// The hook, its plugin loaded and its config checked.
    async fn load(&self, id: &HookId) -> Result<WasmHook, String> {
        let (path, pin) = self.file(id).await?;
        let runtime = self.runtime.clone();
        // Compiling takes seconds for a big guest: off the async threads.
        let plugin =
            tokio::task::spawn_blocking(move || runtime.load_pinned(&path, pin.as_deref()))
                .await
                .map_err(|e| format!("loading its plugin stopped: {e}"))?
                .map_err(|e| e.to_string())?;
        if let Some(schema) = plugin.config_schema() {
            let problems = config_schema::problems(&schema, &self.parts.config);
            if let Some((field, message)) = problems.first() {
                return Err(format!(
                    "its `{field}` does not fit the plugin's schema: {message}"
                ));
            }
        }
        Ok(WasmHook::new(plugin, &self.parts.config, self.parts.limits)
            .with_kv_layer(self.parts.layer)
            .with_grants(self.parts.grants.clone())
            .with_instances(self.parts.instance))
    }
}

impl Handler for DeferredWasm {
    fn handle<'a>(&'a self, id: &'a HookId, event: &'a Event) -> HandlerFuture<'a> {
        Box::pin(async move {
            match self.hook.get_or_try_init(|| self.load(id)).await {
                Ok(hook) => hook.handle(id, event).await,
                Err(message) => Reply {
                    result: Err(HookError::Failed {
                        hook: id.clone(),
                        message,
                    }),
                    output: HookOutput::default(),
                },
            }
        })
    }

    /// Its plugin's next instance, once the plugin is loaded (never a pull
    /// or a load: those are the first event's).
    fn prepare<'a>(&'a self, id: &'a HookId) -> PrepareFuture<'a> {
        match self.hook.get() {
            Some(hook) => hook.prepare(id),
            None => Box::pin(std::future::ready(())),
        }
    }

    fn details(&self) -> Vec<String> {
        match &self.source {
            Source::Registry { pinned, .. } => vec![format!(
                "plugin: {} pinned to {} (pulled on first use)",
                pinned.reference, pinned.entry.digest
            )],
            Source::File { path, remedy, .. } => {
                vec![format!("plugin: {} (missing: {remedy})", path.display())]
            }
            Source::Broken(why) => vec![format!("plugin: none ({why})")],
        }
    }
}

//! How wasm hooks get their runtime and their registry plugins, and the
//! plugins the loader has read so far.

use crate::oci::{Fetcher, Lock};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use wasm_hooks_core::Error;
use wasm_hooks_wasm::{Plugin, WasmLimits, WasmRuntime, WasmRuntimeBuilder};

/// Where plugins named `oci://…` come from: the store and who must have
/// signed them, and whether an engine may pull them itself.
#[derive(Debug, Clone)]
pub(crate) struct RegistryPlugins {
    /// Pulls into the person's store, under the person's and the
    /// organisation's signer settings; none without a home for it.
    pub(crate) fetcher: Option<Fetcher>,
    /// The same for the project's own hooks, which its settings may make
    /// stricter (`require_signed_plugins`), never laxer.
    pub(crate) project_fetcher: Option<Fetcher>,
    /// Whether the project's hooks may pull: set once the project's trust
    /// is weighed (an untrusted project never makes wasm-hooks reach its
    /// registry).
    pub(crate) project_may_pull: Arc<AtomicBool>,
    /// Whether the organisation requires every plugin to be pulled and
    /// signed (its own layer's files excepted).
    pub(crate) signed_only: bool,
}

/// How wasm hooks get their runtime and resolve grants, and the plugins
/// loaded so far (each file and pin compiled once, however many hooks use
/// it).
pub(crate) struct WasmSetup {
    /// A runtime to share, if the embedder gave one; else made on the
    /// first wasm hook.
    pub(crate) runtime: Option<WasmRuntime>,
    /// How to make one otherwise.
    pub(crate) builder: WasmRuntimeBuilder,
    /// What `${PROJECT_DIR}` means in grants.
    pub(crate) project_dir: PathBuf,
    /// Default limits for every wasm hook.
    pub(crate) limits: WasmLimits,
    /// The most a hook file may ask for.
    pub(crate) ceilings: WasmLimits,
    /// Where `oci://` plugins come from.
    pub(crate) registry: RegistryPlugins,
    plugins: HashMap<(PathBuf, Option<String>), Plugin>,
    /// Each lock read so far, read once however many hooks name it.
    locks: HashMap<PathBuf, Result<Lock, String>>,
}

impl WasmSetup {
    /// A setup with nothing loaded yet.
    pub(crate) fn new(
        runtime: Option<WasmRuntime>,
        builder: WasmRuntimeBuilder,
        project_dir: PathBuf,
        limits: WasmLimits,
        ceilings: WasmLimits,
        registry: RegistryPlugins,
    ) -> Self {
        Self {
            runtime,
            builder,
            project_dir,
            limits,
            ceilings,
            registry,
            plugins: HashMap::new(),
            locks: HashMap::new(),
        }
    }

    /// The lock at `path`, read on first use.
    pub(super) fn lock(&mut self, path: &Path) -> &Result<Lock, String> {
        self.locks
            .entry(path.to_owned())
            .or_insert_with(|| Lock::read(path).map_err(|e| e.to_string()))
    }

    /// The shared runtime, made on first use.
    pub(super) fn runtime(&mut self) -> Result<WasmRuntime, Error> {
        match &self.runtime {
            Some(runtime) => Ok(runtime.clone()),
            None => {
                let runtime = self.builder.build()?;
                self.runtime = Some(runtime.clone());
                Ok(runtime)
            }
        }
    }

    /// The plugin at `path`, loaded once per file and pin.
    pub(super) fn plugin(&mut self, path: &Path, sha256: Option<&str>) -> Result<Plugin, Error> {
        let key = (path.to_owned(), sha256.map(str::to_owned));
        if let Some(plugin) = self.plugins.get(&key) {
            return Ok(plugin.clone());
        }
        let runtime = self.runtime()?;
        // A project's plugin is never hot-reloaded: its grants were
        // weighed (and trusted) for these bytes; other bytes untrust the
        // project, and a host that checks trust builds its engine again.
        // A project that does not resolve holds nothing (an empty path
        // would hold everything).
        let inside = self.project_dir.canonicalize().is_ok_and(|project| {
            path.canonicalize()
                .is_ok_and(|plugin| plugin.starts_with(&project))
        });
        let plugin = if inside {
            runtime.load_unwatched(path, sha256)?
        } else {
            runtime.load_pinned(path, sha256)?
        };
        self.plugins.insert(key, plugin.clone());
        Ok(plugin)
    }
}

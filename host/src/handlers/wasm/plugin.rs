//! One plugin file, compiled and checked against the hook world, ready to
//! instantiate; and its hot reload, which swaps the compiled version
//! atomically while calls already running keep the one they started with.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};
use std::time::SystemTime;

use super::WIT_PACKAGE;
use super::abi;
use super::runtime::WasmRuntime;
use super::state::HostState;
use super::v0_1;
use crate::Error;
use crate::digest::sha256_hex;

/// One loaded plugin. Cheap to clone; clones share the compiled version.
#[derive(Clone)]
pub struct Plugin {
    inner: Arc<PluginInner>,
}

pub(super) struct PluginInner {
    path: PathBuf,
    /// Its name in the `kv` store: the file, so that values survive a
    /// rebuild or a hot reload.
    kv_name: Arc<str>,
    /// The sha256 the hook file pinned, if any.
    pinned: Option<String>,
    runtime: WasmRuntime,
    current: RwLock<Arc<Compiled>>,
    /// The file as last looked at, loaded or not (so a broken file is not
    /// recompiled on every poll).
    seen: Mutex<FileStamp>,
}

/// One compiled version of a plugin.
pub(super) struct Compiled {
    pub(super) pre: v0_1::HookPre<HostState>,
    sha256: String,
    from_cache: bool,
}

/// What tells a changed file apart: its length and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<SystemTime>,
}

impl FileStamp {
    fn of(path: &Path) -> std::io::Result<Self> {
        let meta = std::fs::metadata(path)?;
        Ok(Self {
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("path", &self.inner.path)
            .field("sha256", &self.sha256())
            .finish_non_exhaustive()
    }
}

impl Plugin {
    pub(super) fn load(
        runtime: WasmRuntime,
        path: &Path,
        pinned: Option<String>,
    ) -> Result<Self, Error> {
        let started = std::time::Instant::now();
        let stamp = FileStamp::of(path).map_err(|e| read_error(path, &e))?;
        let compiled = compile(&runtime, path, pinned.as_deref())?;
        tracing::debug!(
            plugin = %path.display(),
            from_cache = compiled.from_cache,
            elapsed = ?started.elapsed(),
            "plugin loaded"
        );
        Ok(Self {
            inner: Arc::new(PluginInner {
                path: path.to_owned(),
                kv_name: Arc::from(path.to_string_lossy()),
                pinned,
                runtime,
                current: RwLock::new(Arc::new(compiled)),
                seen: Mutex::new(stamp),
            }),
        })
    }

    pub(super) fn downgrade(&self) -> Weak<PluginInner> {
        Arc::downgrade(&self.inner)
    }

    pub(super) fn upgrade(weak: &Weak<PluginInner>) -> Option<Self> {
        weak.upgrade().map(|inner| Self { inner })
    }

    pub(super) fn runtime(&self) -> &WasmRuntime {
        &self.inner.runtime
    }

    pub(super) fn kv_name(&self) -> &Arc<str> {
        &self.inner.kv_name
    }

    /// The file the plugin was loaded from.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The sha256 (hex) of the version in use.
    pub fn sha256(&self) -> String {
        self.current().sha256.clone()
    }

    /// Whether the version in use was read from the compile cache rather
    /// than compiled.
    pub fn from_cache(&self) -> bool {
        self.current().from_cache
    }

    /// The version in use; a call holds on to it until it finishes.
    pub(super) fn current(&self) -> Arc<Compiled> {
        self.inner
            .current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Reload the file if it changed since it was last looked at: true when
    /// a new version is now in use.
    ///
    /// # Errors
    /// When the changed file does not load; the old version stays in use.
    pub fn reload_if_changed(&self) -> Result<bool, Error> {
        let path = &self.inner.path;
        let stamp = FileStamp::of(path).map_err(|e| read_error(path, &e))?;
        {
            let mut seen = self
                .inner
                .seen
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if *seen == stamp {
                return Ok(false);
            }
            *seen = stamp;
        }
        let (bytes, sha256) = read(path, self.inner.pinned.as_deref())?;
        if sha256 == self.current().sha256 {
            // Touched, not changed.
            return Ok(false);
        }
        let compiled = prepare(&self.inner.runtime, path, &bytes, sha256)?;
        tracing::info!(plugin = %path.display(), sha256 = %compiled.sha256, "hot reload");
        *self
            .inner
            .current
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(compiled);
        Ok(true)
    }
}

fn read_error(path: &Path, e: &std::io::Error) -> Error {
    Error::Plugin {
        path: path.to_owned(),
        message: match e.kind() {
            std::io::ErrorKind::NotFound => "file not found".to_owned(),
            _ => format!("cannot read it: {e}"),
        },
    }
}

/// Read the plugin at `path`, check it and compile it (or fetch it from the
/// cache).
fn compile(runtime: &WasmRuntime, path: &Path, pinned: Option<&str>) -> Result<Compiled, Error> {
    let (bytes, sha256) = read(path, pinned)?;
    prepare(runtime, path, &bytes, sha256)
}

fn fail(path: &Path, message: String) -> Error {
    Error::Plugin {
        path: path.to_owned(),
        message,
    }
}

/// The bytes of the component at `path` and their sha256, which must be
/// `pinned` when given.
fn read(path: &Path, pinned: Option<&str>) -> Result<(Vec<u8>, String), Error> {
    let fail = |message| fail(path, message);
    let bytes = std::fs::read(path).map_err(|e| read_error(path, &e))?;
    abi::require_component(&bytes).map_err(fail)?;
    let sha256 = sha256_hex(&bytes);
    if let Some(expected) = pinned
        && expected != sha256
    {
        return Err(fail(format!(
            "sha256 mismatch: the hook file expects {expected}, the file is {sha256}; \
             refusing to load it"
        )));
    }
    Ok((bytes, sha256))
}

/// Check the WIT stamps of `bytes`, get the compiled component and check
/// that it fits the hook world.
fn prepare(
    runtime: &WasmRuntime,
    path: &Path,
    bytes: &[u8],
    sha256: String,
) -> Result<Compiled, Error> {
    let fail = |message| fail(path, message);
    let stamps = abi::wit_stamps(bytes).map_err(|e| fail(format!("malformed component: {e}")))?;
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
    let (component, from_cache) = runtime.component(path, bytes, &sha256).map_err(fail)?;
    let instance_pre = runtime
        .inner
        .linker
        .instantiate_pre(&component)
        .map_err(|e| fail(format!("imports something this host does not provide: {e}")))?;
    let pre = v0_1::HookPre::new(instance_pre).map_err(|e| {
        fail(format!(
            "does not fit the hook world of {}: {e}",
            v0_1::WIT_PACKAGE
        ))
    })?;
    Ok(Compiled {
        pre,
        sha256,
        from_cache,
    })
}

//! One plugin file, compiled and checked against the hook world, ready to
//! instantiate; and the swaps of its compiled version (hot reload of a
//! changed file, Cranelift's code replacing Winch's: see `tier`), atomic,
//! while calls already running keep the one they started with.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};

use super::abi;
use super::compiled::Compiled;
use super::digests::FileId;
use super::runtime::{Reload, WasmRuntime};
use super::tier::Compiler;
use super::world::{self, HookPre};
use wasm_hooks_core::sha256_hex;
use wasm_hooks_core::{Error, ReadRefused};

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
    seen: Mutex<FileId>,
    /// Itself, for the optimising compile it asks for.
    me: Weak<dyn Reload>,
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
        let id = FileId::of(path).map_err(|e| read_error(path, &e))?;
        let compiled = compile(&runtime, path, &id, pinned.as_deref())?;
        tracing::debug!(
            plugin = %path.display(),
            from_cache = compiled.from_cache,
            compiler = %compiled.compiler,
            elapsed = ?started.elapsed(),
            "plugin loaded"
        );
        let inner = Arc::new_cyclic(|me| PluginInner {
            path: path.to_owned(),
            kv_name: Arc::from(path.to_string_lossy()),
            pinned,
            runtime,
            current: RwLock::new(compiled.clone()),
            seen: Mutex::new(id),
            me: me.clone() as Weak<dyn Reload>,
        });
        inner.optimize_if_baseline(&compiled);
        Ok(Self { inner })
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

    /// The JSON Schema of its `config` that the version in use carries
    /// (the `wasm-hooks:config-schema` custom section), if any.
    pub fn config_schema(&self) -> Option<Arc<str>> {
        self.current().config_schema.clone()
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

    /// The compiler that made the version in use: Winch's code runs until
    /// Cranelift's is there (see [`crate::Tiering`]).
    pub fn compiler(&self) -> Compiler {
        self.current().compiler
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
        self.inner.reload_if_changed()
    }
}

impl Reload for PluginInner {
    /// Run `optimized` from now on, if it is Cranelift's code of the
    /// version in use (a hot reload meanwhile keeps the newer file).
    fn upgrade_to(&self, optimized: &Arc<Compiled>) {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        if current.sha256 == optimized.sha256 && current.compiler == Compiler::Winch {
            tracing::debug!(plugin = %self.path.display(), "cranelift's code replaces winch's");
            *current = optimized.clone();
        }
    }

    fn reload_if_changed(&self) -> Result<bool, Error> {
        let path = &self.path;
        let id = FileId::of(path).map_err(|e| read_error(path, &e))?;
        {
            let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
            if *seen == id {
                return Ok(false);
            }
            *seen = id;
        }
        let (bytes, sha256) = read(path, self.pinned.as_deref())?;
        if sha256
            == self
                .current
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .sha256
        {
            // Touched, not changed.
            return Ok(false);
        }
        let compiled = prepare(&self.runtime, path, &bytes, sha256, None)?;
        self.runtime.remember_digest(path, &id, &compiled);
        tracing::info!(plugin = %path.display(), sha256 = %compiled.sha256, "hot reload");
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = compiled.clone();
        self.optimize_if_baseline(&compiled);
        Ok(true)
    }
}

impl PluginInner {
    /// Ask for Cranelift's code of `compiled` if it is Winch's.
    fn optimize_if_baseline(&self, compiled: &Compiled) {
        if compiled.compiler == Compiler::Winch {
            self.runtime
                .optimize_later((&self.path, &compiled.sha256), self.me.clone(), optimized);
        }
    }
}

impl WasmRuntime {
    /// Load a plugin: check that it is a component built for a compatible
    /// WIT version, take its compiled form from the cache or compile it
    /// (and cache that), and check that it fits the `hook` world.
    ///
    /// # Errors
    /// [`Error::Plugin`] naming the file and the problem, or
    /// [`Error::IncompatiblePlugin`] naming both WIT versions.
    pub fn load(&self, path: &Path) -> Result<Plugin, Error> {
        self.load_pinned(path, None)
    }

    /// Like [`WasmRuntime::load`], refusing the file unless its sha256 is
    /// `expected` (hex); a hot reload to other bytes is refused too.
    ///
    /// # Errors
    /// As [`WasmRuntime::load`], and [`Error::Plugin`] naming both hashes
    /// on a mismatch.
    pub fn load_pinned(&self, path: &Path, expected: Option<&str>) -> Result<Plugin, Error> {
        let plugin = self.load_unwatched(path, expected)?;
        let watched: Weak<dyn Reload> = Arc::downgrade(&plugin.inner) as Weak<PluginInner>;
        self.watch(watched);
        Ok(plugin)
    }

    /// Like [`WasmRuntime::load_pinned`], never hot-reloaded: the bytes
    /// loaded are the bytes that run. For a plugin whose grants were
    /// decided for these bytes (a trusted project's): other bytes must be
    /// weighed again, not inherit them.
    ///
    /// # Errors
    /// As [`WasmRuntime::load_pinned`].
    pub fn load_unwatched(&self, path: &Path, expected: Option<&str>) -> Result<Plugin, Error> {
        Plugin::load(self.clone(), path, expected.map(str::to_ascii_lowercase))
    }

    /// Compile the plugin at `path` with Cranelift into the compile cache
    /// now, whatever the runtime's [`crate::Tiering`], so that the first
    /// event of every later process loads it from there; refused unless
    /// its sha256 is `expected` (hex), when given. What was done.
    ///
    /// # Errors
    /// As [`WasmRuntime::load_pinned`].
    pub fn compile_ahead(
        &self,
        path: &Path,
        expected: Option<&str>,
    ) -> Result<CompiledAhead, Error> {
        self.compile_ahead_with(Compiler::Cranelift, path, expected)
    }

    /// [`WasmRuntime::compile_ahead`] with this compiler (Winch's artifact
    /// is what a plugin runs on until Cranelift's is there; benchmarks
    /// compare the two).
    ///
    /// # Errors
    /// As [`WasmRuntime::load_pinned`].
    pub fn compile_ahead_with(
        &self,
        compiler: Compiler,
        path: &Path,
        expected: Option<&str>,
    ) -> Result<CompiledAhead, Error> {
        let pinned = expected.map(str::to_ascii_lowercase);
        let id = FileId::of(path).map_err(|e| read_error(path, &e))?;
        let (bytes, sha256) = read(path, pinned.as_deref())?;
        let compiled = prepare(self, path, &bytes, sha256, Some(compiler))?;
        // The file's sha256 too, so that the first event need not read it.
        self.remember_digest(path, &id, &compiled);
        Ok(CompiledAhead {
            entry: self.cache_entry_of(compiler, &compiled.sha256),
            sha256: compiled.sha256.clone(),
            bytes: bytes.len() as u64,
            compiled_now: !compiled.from_cache,
        })
    }
}

/// What [`WasmRuntime::compile_ahead`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledAhead {
    /// The plugin's sha256 (hex).
    pub sha256: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its cache entry; none without a cache.
    pub entry: Option<PathBuf>,
    /// Whether it was compiled now (else the cache had it).
    pub compiled_now: bool,
}

/// Cranelift's compile of the plugin at `path`, if its sha256 is still
/// `sha256`, from the cache or compiled (and cached), linked.
fn optimized(runtime: &WasmRuntime, path: &Path, sha256: &str) -> Result<Arc<Compiled>, Error> {
    let (bytes, sha256) = read(path, Some(sha256))?;
    prepare(runtime, path, &bytes, sha256, Some(Compiler::Cranelift))
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

/// The plugin at `path`, as of `id`: from the cache without reading the
/// file when the digest index knows this version of it, else read, checked
/// and compiled (or fetched from the cache).
fn compile(
    runtime: &WasmRuntime,
    path: &Path,
    id: &FileId,
    pinned: Option<&str>,
) -> Result<Arc<Compiled>, Error> {
    if let Some(compiled) = known(runtime, path, id, pinned) {
        return Ok(compiled);
    }
    let (bytes, sha256) = read(path, pinned)?;
    let compiled = prepare(runtime, path, &bytes, sha256, None)?;
    runtime.remember_digest(path, id, &compiled);
    Ok(compiled)
}

/// The plugin already linked by this runtime or from the cache, when the
/// digest index knows this version of the file, its pin (if any) agrees,
/// and the cache has it. Anything else takes the long way, which also
/// reports what is wrong.
fn known(
    runtime: &WasmRuntime,
    path: &Path,
    id: &FileId,
    pinned: Option<&str>,
) -> Option<Arc<Compiled>> {
    let (sha256, schema) = runtime.known_digest(path, id)?;
    if pinned.is_some_and(|pin| pin != sha256) {
        return None;
    }
    let linked = runtime.linked(&sha256);
    if let Some(compiled) = &linked
        && compiled.compiler == Compiler::Cranelift
    {
        return linked;
    }
    if let Some(component) = runtime.cached_component(Compiler::Cranelift, &sha256) {
        return link(
            runtime,
            path,
            &component,
            Compiler::Cranelift,
            sha256,
            schema,
            true,
        )
        .ok();
    }
    // Winch's, while Cranelift's is being made: only where tiering would
    // have compiled it (else the long way compiles Cranelift's now).
    if !runtime.tiers() {
        return None;
    }
    if linked.is_some() {
        return linked;
    }
    let component = runtime.cached_component(Compiler::Winch, &sha256)?;
    link(
        runtime,
        path,
        &component,
        Compiler::Winch,
        sha256,
        schema,
        true,
    )
    .ok()
}

fn fail(path: &Path, message: String) -> Error {
    Error::Plugin {
        path: path.to_owned(),
        message,
    }
}

/// The largest plugin file read (a component is megabytes: a Python one
/// about 20 MB).
pub const MAX_PLUGIN_BYTES: u64 = 256 << 20;

/// The bytes of the regular file at `path`, at most [`MAX_PLUGIN_BYTES`].
/// A device (`/dev/zero`), a FIFO or a socket is refused without reading
/// it: it is opened without blocking and looked at before any read.
fn read_regular_file(path: &Path) -> Result<Vec<u8>, Error> {
    wasm_hooks_core::read_regular_file(path, MAX_PLUGIN_BYTES).map_err(|refused| match refused {
        ReadRefused::Io(e) => read_error(path, &e),
        ReadRefused::NotRegular => fail(
            path,
            "not a regular file; a plugin is a .wasm file".to_owned(),
        ),
        other => fail(
            path,
            format!("{other} bytes a plugin may have (MAX_PLUGIN_BYTES)"),
        ),
    })
}

/// The bytes of the component at `path` and their sha256, which must be
/// `pinned` when given.
fn read(path: &Path, pinned: Option<&str>) -> Result<(Vec<u8>, String), Error> {
    let fail = |message| fail(path, message);
    let bytes = read_regular_file(path)?;
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

/// Check the WIT stamps of `bytes`, get the compiled component (`compiler`'s
/// when given, else as the runtime tiers) and check that it fits the hook
/// world.
fn prepare(
    runtime: &WasmRuntime,
    path: &Path,
    bytes: &[u8],
    sha256: String,
    compiler: Option<Compiler>,
) -> Result<Arc<Compiled>, Error> {
    let fail = |message| fail(path, message);
    let sections = abi::sections(bytes).map_err(|e| fail(format!("malformed component: {e}")))?;
    if let Some(found) = sections.wit_stamps.into_iter().find(|s| !world::served(s)) {
        return Err(Error::IncompatiblePlugin {
            path: path.to_owned(),
            found,
            expected: world::SERVED_TEXT,
        });
    }
    let (component, compiler, from_cache) = runtime
        .component(path, bytes, &sha256, compiler)
        .map_err(fail)?;
    let schema = sections.config_schema.map(Arc::from);
    link(
        runtime, path, &component, compiler, sha256, schema, from_cache,
    )
}

/// Check that `component` fits the hook world and make it ready to
/// instantiate.
fn link(
    runtime: &WasmRuntime,
    path: &Path,
    component: &wasmtime::component::Component,
    compiler: Compiler,
    sha256: String,
    config_schema: Option<Arc<str>>,
    from_cache: bool,
) -> Result<Arc<Compiled>, Error> {
    let fail = |message| fail(path, message);
    let backend = runtime.backend(compiler).map_err(fail)?;
    let instance_pre = backend
        .linker
        .instantiate_pre(component)
        .map_err(|e| fail(format!("imports something this host does not provide: {e}")))?;
    let pre = HookPre::new(instance_pre).map_err(fail)?;
    let compiled = Arc::new(Compiled {
        pre,
        sha256,
        config_schema,
        from_cache,
        compiler,
        engine: backend.engine.clone(),
    });
    runtime.remember_linked(&compiled);
    Ok(compiled)
}

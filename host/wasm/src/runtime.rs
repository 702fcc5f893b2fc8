//! The process-wide wasm runtime: one `wasmtime::Engine` per compiler
//! (component model, fuel and epochs on; Cranelift's always, Winch's made
//! when a plugin first needs it, see `tier`), their linkers and epoch
//! tickers, the compile cache, the optimising compiles under way, and the
//! optional hot-reload watcher.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use wasmtime::component::{Component, Linker};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Strategy,
};

use super::cache::{CompileCache, EntryLock};
use super::compiled::Compiled;
use super::digests::FileId;
use super::kv::{KvScope, KvStore};
use super::refusals;
use super::refused::SandboxRoot;
use super::state::HostState;
use super::survey::CacheSurvey;
use super::tier::{CompileNote, CompileProgress, Compiler, OptimizeJob, Tiering};
use super::world::HookPre;
use wasm_hooks_core::Error;
use wasm_hooks_core::{MemoryStore, SessionStore};

/// How often the background thread advances the engine's epoch: a plugin
/// past its wall-clock deadline is stopped within about one tick, and a
/// long-running one yields to other tasks once per tick.
const EPOCH_TICK: Duration = Duration::from_millis(2);

/// The wasm stack every call gets unless the builder says otherwise: 512
/// KiB, wasmtime's default, enough for deeply nested serde_json values.
const DEFAULT_MAX_WASM_STACK_KB: usize = 512;

/// A loaded plugin the runtime can reload when its file changes (the
/// runtime keeps them weakly, to poll for hot reload).
pub(crate) trait Reload: Send + Sync {
    /// Reload if the file changed: true when a new version is in use.
    ///
    /// # Errors
    /// When the changed file does not load; the old version stays in use.
    fn reload_if_changed(&self) -> Result<bool, Error>;

    /// Run `optimized` from now on, if it is Cranelift's code of the
    /// version in use (a hot reload meanwhile keeps the newer file).
    fn upgrade_to(&self, optimized: &Arc<Compiled>);
}

/// How a plugin asking for Cranelift's code has it compiled: the plugin
/// file at a path, if its sha256 is still the one given (the compile
/// holds no plugin, so a plugin dropped meanwhile is gone).
pub(crate) type OptimizingCompile = fn(&WasmRuntime, &Path, &str) -> Result<Arc<Compiled>, Error>;

/// The process-wide wasm runtime. Cheap to clone; all clones share one
/// engine, one linker and one epoch ticker (which stops when the last clone
/// is dropped).
///
/// # Examples
/// ```
/// let runtime = wasm_hooks_wasm::WasmRuntime::builder().no_cache().build()?;
/// let err = runtime.load("no/such/plugin.wasm".as_ref()).unwrap_err();
/// assert!(err.to_string().contains("no/such/plugin.wasm"));
/// # Ok::<(), wasm_hooks_core::Error>(())
/// ```
#[derive(Clone)]
pub struct WasmRuntime {
    pub(super) inner: Arc<Runtime>,
    /// The `kv` interface's values, shared by clones.
    kv: Arc<KvStore>,
}

pub(super) struct Runtime {
    /// Cranelift's engine: what every plugin runs on once compiled.
    pub(super) optimizing: Backend,
    /// Winch's, made on the first plugin the cache does not hold (never
    /// with [`Tiering::Off`]); or why it could not be.
    baseline: OnceLock<Result<Backend, String>>,
    /// The wasm stack of every call, for the baseline engine's config.
    max_wasm_stack_kb: usize,
    pooling: bool,
    cache: Option<CompileCache>,
    /// Where a plugin the cache does not hold gets compiled by Cranelift.
    tiering: Tiering,
    /// Who is told of compiles as they go.
    progress: Option<CompileProgress>,
    /// The optimising compiles under way, by sha256, with the plugins
    /// waiting to be swapped onto their result.
    optimizing_now: Mutex<HashMap<String, Vec<Weak<dyn Reload>>>>,
    /// Every plugin loaded, for hot reload.
    plugins: Mutex<Vec<Weak<dyn Reload>>>,
    /// Every plugin version linked, by sha256, so that loading it again
    /// (another engine on this runtime) takes no work.
    linked: Mutex<HashMap<String, Arc<Compiled>>>,
    /// The empty directory every call sees as `/`.
    sandbox_root: Arc<SandboxRoot>,
    /// See [`WasmRuntimeBuilder::like_a_process`].
    like_a_process: bool,
}

/// One compiler's engine, with its linker and its name in the cache.
pub(super) struct Backend {
    pub(super) engine: Engine,
    pub(super) linker: Linker<HostState>,
    /// `<compiler>-<16 hex digits of the engine's compatibility hash>`:
    /// the cache directory of its artifacts.
    pub(super) key: String,
}

impl Backend {
    /// `engine` (made with `compiler`), linked with WASI and the hook
    /// world, its epoch ticking.
    fn new(engine: Engine, compiler: Compiler) -> Result<Self, Error> {
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .and_then(|()| HookPre::add_to_linker(&mut linker))
            .and_then(|()| refusals::add_to_linker(&mut linker))
            .map_err(runtime_error)?;
        start_epoch_ticker(&engine);
        Ok(Self {
            key: format!("{compiler}-{}", engine_key(&engine)),
            engine,
            linker,
        })
    }
}

impl Runtime {
    /// See [`WasmRuntime::reload_changed`].
    fn reload_changed(&self) -> usize {
        let plugins: Vec<Arc<dyn Reload>> = self
            .plugins
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        let mut reloaded = 0;
        for plugin in plugins {
            match plugin.reload_if_changed() {
                Ok(true) => reloaded += 1,
                Ok(false) => {}
                Err(e) => tracing::warn!("hot reload: {e}; the previous version stays"),
            }
        }
        reloaded
    }
}

impl std::fmt::Debug for WasmRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmRuntime")
            .field("pooling", &self.inner.pooling)
            .field("cache", &self.inner.cache)
            .field("tiering", &self.inner.tiering)
            .finish_non_exhaustive()
    }
}

/// How to set up a [`WasmRuntime`].
///
/// Defaults: the pooling allocator where the machine can reserve its
/// address space (on-demand allocation otherwise), the compile cache in
/// [`CompileCache::default_dir`], [`Tiering::Background`] (a plugin the
/// cache does not hold runs on Winch's code until Cranelift's, compiled
/// on a thread, replaces it), a 512 KiB wasm stack, no hot reload, no
/// progress reports.
#[derive(Clone)]
pub struct WasmRuntimeBuilder {
    pooling: bool,
    cache: CacheChoice,
    max_wasm_stack_kb: usize,
    hot_reload: Option<Duration>,
    session_store: Option<Arc<dyn SessionStore>>,
    like_a_process: bool,
    tiering: Tiering,
    progress: Option<CompileProgress>,
}

impl std::fmt::Debug for WasmRuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmRuntimeBuilder")
            .field("pooling", &self.pooling)
            .field("cache", &self.cache)
            .field("max_wasm_stack_kb", &self.max_wasm_stack_kb)
            .field("hot_reload", &self.hot_reload)
            .field("like_a_process", &self.like_a_process)
            .field("tiering", &self.tiering)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone)]
enum CacheChoice {
    Default,
    Dir(PathBuf),
    Off,
}

impl Default for WasmRuntimeBuilder {
    fn default() -> Self {
        Self {
            pooling: true,
            cache: CacheChoice::Default,
            max_wasm_stack_kb: DEFAULT_MAX_WASM_STACK_KB,
            hot_reload: None,
            session_store: None,
            like_a_process: false,
            tiering: Tiering::default(),
            progress: None,
        }
    }
}

impl WasmRuntimeBuilder {
    /// Keep the plugins' `kv` values in `store` (the engine's: one Redis
    /// that runtimes on other hosts, replicas of `serve`, share) instead
    /// of a store in this runtime's memory.
    pub fn session_store(&mut self, store: Arc<dyn SessionStore>) -> &mut Self {
        self.session_store = Some(store);
        self
    }

    /// Answer each event as a process of its own would (`hook`, and the
    /// daemon standing in for it): a plugin's `kv` values last one call,
    /// and every call gets a fresh instance (`instance: reuse` is not
    /// honoured), so a plugin never remembers across events what it could
    /// not remember there.
    pub fn like_a_process(&mut self) -> &mut Self {
        self.like_a_process = true;
        self
    }

    /// Whether to try the pooling allocator (default true). It makes every
    /// instantiation cheaper but costs milliseconds to set up, so a process
    /// that handles one event (`wasm-hooks hook`) is faster without it.
    pub fn pooling(&mut self, pooling: bool) -> &mut Self {
        self.pooling = pooling;
        self
    }

    /// Keep compiled plugins in this directory.
    pub fn cache_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.cache = CacheChoice::Dir(dir.into());
        self
    }

    /// Where a plugin the compile cache does not hold gets its optimising
    /// compile (see [`Tiering`]; default [`Tiering::Background`]).
    pub fn tiering(&mut self, tiering: Tiering) -> &mut Self {
        self.tiering = tiering;
        self
    }

    /// Tell `progress` of every compile as it starts and ends (a command
    /// that compiles ahead prints a line for each).
    pub fn on_compile(
        &mut self,
        progress: impl Fn(&CompileNote<'_>) + Send + Sync + 'static,
    ) -> &mut Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// Compile every plugin at load; read and write no cache.
    pub fn no_cache(&mut self) -> &mut Self {
        self.cache = CacheChoice::Off;
        self
    }

    /// The wasm stack of every call, in KiB: deeper recursion traps with a
    /// stack overflow. It belongs to the engine, so it is not per hook.
    pub fn max_wasm_stack_kb(&mut self, kb: usize) -> &mut Self {
        self.max_wasm_stack_kb = kb;
        self
    }

    /// Watch every loaded plugin file, polling every `interval`: a changed
    /// file is recompiled in the background and swapped in; calls already
    /// running finish on the old version. For long-running hosts.
    pub fn hot_reload(&mut self, interval: Duration) -> &mut Self {
        self.hot_reload = Some(interval);
        self
    }

    /// Start the runtime.
    ///
    /// # Errors
    /// When wasmtime cannot create an engine at all, or WASI cannot be linked.
    pub fn build(&self) -> Result<WasmRuntime, Error> {
        let started = Instant::now();
        let mut config = self.config(Compiler::Cranelift);
        let pooled = if self.pooling {
            config.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling_config()));
            match Engine::new(&config) {
                Ok(engine) => Some(engine),
                Err(e) => {
                    tracing::info!(
                        "wasm runtime: pooling allocator unavailable ({e}); allocating on demand"
                    );
                    None
                }
            }
        } else {
            None
        };
        let pooling = pooled.is_some();
        let engine = match pooled {
            Some(engine) => {
                tracing::info!("wasm runtime: pooling allocator");
                engine
            }
            None => {
                config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
                tracing::info!("wasm runtime: on-demand allocation");
                Engine::new(&config).map_err(runtime_error)?
            }
        };
        let cache = match &self.cache {
            CacheChoice::Default => CompileCache::default_dir().map(CompileCache::new),
            CacheChoice::Dir(dir) => Some(CompileCache::new(dir)),
            CacheChoice::Off => None,
        };
        let runtime = WasmRuntime {
            inner: Arc::new(Runtime {
                optimizing: Backend::new(engine, Compiler::Cranelift)?,
                baseline: OnceLock::new(),
                max_wasm_stack_kb: self.max_wasm_stack_kb,
                pooling,
                cache,
                tiering: self.tiering.clone(),
                progress: self.progress.clone(),
                optimizing_now: Mutex::default(),
                plugins: Mutex::default(),
                linked: Mutex::default(),
                sandbox_root: Arc::default(),
                like_a_process: self.like_a_process,
            }),
            kv: Arc::new(match &self.session_store {
                _ if self.like_a_process => KvStore::per_call(),
                Some(store) => KvStore::kept_in(Arc::clone(store)),
                None => KvStore::kept_in(Arc::new(MemoryStore::new())),
            }),
        };
        if let Some(interval) = self.hot_reload {
            start_watcher(&runtime, interval);
        }
        tracing::debug!(elapsed = ?started.elapsed(), "wasm runtime ready");
        Ok(runtime)
    }

    /// The engine settings of `compiler`'s engine (its allocator apart):
    /// the same limits are compiled into either.
    fn config(&self, compiler: Compiler) -> Config {
        config_for(compiler, self.max_wasm_stack_kb)
    }
}

/// See [`WasmRuntimeBuilder::config`].
fn config_for(compiler: Compiler, max_wasm_stack_kb: usize) -> Config {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(max_wasm_stack_kb.saturating_mul(1024))
        .strategy(match compiler {
            Compiler::Cranelift => Strategy::Cranelift,
            Compiler::Winch => Strategy::Winch,
        });
    config
}

impl WasmRuntime {
    /// A runtime with the defaults of [`WasmRuntimeBuilder`].
    ///
    /// # Errors
    /// When wasmtime cannot create an engine at all, or WASI cannot be linked.
    pub fn new() -> Result<Self, Error> {
        Self::builder().build()
    }

    /// A builder, to choose the allocator, the cache, the tiering, the
    /// stack, hot reload.
    pub fn builder() -> WasmRuntimeBuilder {
        WasmRuntimeBuilder::default()
    }

    /// Whether a hook may keep a warm instance between calls (not in a
    /// runtime [`WasmRuntimeBuilder::like_a_process`]).
    pub(super) fn keeps_instances(&self) -> bool {
        !self.inner.like_a_process
    }

    /// The empty directory every call sees as `/`.
    pub(super) fn sandbox_root(&self) -> &Arc<SandboxRoot> {
        &self.inner.sandbox_root
    }

    /// The `kv` scope of the plugin named `plugin` in `session`.
    pub(super) fn kv_scope(&self, plugin: &Arc<str>, session: &str) -> KvScope {
        self.kv.scope(plugin, session)
    }

    /// The plugin version with this sha256 if this runtime linked it
    /// before: Cranelift's, or Winch's while Cranelift's is not there.
    pub(super) fn linked(&self, sha256: &str) -> Option<Arc<Compiled>> {
        let linked = self
            .inner
            .linked
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        linked.get(sha256).cloned()
    }

    /// Keep `compiled` for [`WasmRuntime::linked`] (Cranelift's replaces
    /// Winch's, never the other way); past [`MAX_LINKED`] versions the
    /// oldest are forgotten all at once (a long-running host that sees a
    /// plugin rebuilt many times).
    pub(super) fn remember_linked(&self, compiled: &Arc<Compiled>) {
        let mut linked = self
            .inner
            .linked
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if linked.len() >= MAX_LINKED {
            linked.clear();
        }
        let better = linked
            .get(compiled.sha256())
            .is_none_or(|known| known.compiler() == Compiler::Winch);
        if better {
            linked.insert(compiled.sha256().to_owned(), compiled.clone());
        }
    }

    /// Whether instances come from the pooling allocator.
    pub fn uses_pooling(&self) -> bool {
        self.inner.pooling
    }

    /// The compile cache, if there is one.
    pub fn cache(&self) -> Option<&CompileCache> {
        self.inner.cache.as_ref()
    }

    /// What the compile cache holds for this runtime's engines, and what
    /// of it is stale; none without a cache.
    ///
    /// # Errors
    /// When the cache directory cannot be read.
    pub fn survey_cache(&self) -> Option<std::io::Result<CacheSurvey>> {
        let rt = &self.inner;
        let cache = rt.cache.as_ref()?;
        let baseline = self.backend(Compiler::Winch).ok().map(|b| b.key.as_str());
        Some(cache.survey(&rt.optimizing.key, baseline))
    }

    /// Whether another process (or thread) is compiling the plugin with
    /// this sha256 with Cranelift into the cache now (it holds the
    /// entry's lock): a compile that would only wait for it can be left
    /// to it.
    pub fn compile_in_progress(&self, plugin_sha256: &str) -> bool {
        self.cache_entry(plugin_sha256)
            .is_some_and(|entry| matches!(EntryLock::try_take(&entry), Ok(None)))
    }

    /// Where Cranelift's compiled form of a plugin with this sha256 is (or
    /// would be) cached; none without a cache.
    pub fn cache_entry(&self, plugin_sha256: &str) -> Option<PathBuf> {
        self.cache_entry_of(Compiler::Cranelift, plugin_sha256)
    }

    /// Where `compiler`'s compiled form of a plugin with this sha256 is
    /// (or would be) cached; none without a cache (or without Winch's
    /// engine, which the machine may refuse).
    pub fn cache_entry_of(&self, compiler: Compiler, plugin_sha256: &str) -> Option<PathBuf> {
        let cache = self.inner.cache.as_ref()?;
        let backend = self.backend(compiler).ok()?;
        Some(cache.entry(&backend.key, plugin_sha256))
    }

    /// Watch a loaded plugin for [`WasmRuntime::reload_changed`].
    pub(super) fn watch(&self, plugin: Weak<dyn Reload>) {
        let mut plugins = self
            .inner
            .plugins
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        plugins.retain(|p| p.strong_count() > 0);
        plugins.push(plugin);
    }

    /// Reload every loaded plugin whose file changed since it was loaded;
    /// the number reloaded. A file that fails to load is reported in the
    /// log and the old version stays. The hot-reload watcher calls this.
    pub fn reload_changed(&self) -> usize {
        self.inner.reload_changed()
    }

    /// The sha256 of the plugin at `path` as of `id`, if the digest index
    /// has it.
    pub(super) fn known_digest(
        &self,
        path: &Path,
        id: &FileId,
    ) -> Option<(String, Option<Arc<str>>)> {
        self.inner.cache.as_ref()?.digests().lookup(path, id)
    }

    /// Record the sha256 (and config schema) of the plugin at `path` as of
    /// `id`.
    pub(super) fn remember_digest(&self, path: &Path, id: &FileId, compiled: &Compiled) {
        if let Some(cache) = &self.inner.cache {
            cache
                .digests()
                .remember(path, id, compiled.sha256(), compiled.config_schema());
        }
    }

    /// The engine (and linker) of `compiler`; Winch's is made on first
    /// use.
    pub(super) fn backend(&self, compiler: Compiler) -> Result<&Backend, String> {
        let rt = &self.inner;
        match compiler {
            Compiler::Cranelift => Ok(&rt.optimizing),
            Compiler::Winch => rt
                .baseline
                .get_or_init(|| {
                    let mut config = config_for(Compiler::Winch, rt.max_wasm_stack_kb);
                    // Its plugins run until Cranelift's code replaces them:
                    // no pool of its own.
                    config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
                    Engine::new(&config)
                        .map_err(runtime_error)
                        .and_then(|engine| Backend::new(engine, Compiler::Winch))
                        .map_err(|e| format!("the baseline compiler: {e}"))
                })
                .as_ref()
                .map_err(Clone::clone),
        }
    }

    /// The cached artifact of the plugin with this sha256 made by
    /// `compiler`, if the cache has a good one (a damaged one is logged,
    /// and left for the next compile to overwrite).
    pub(super) fn cached_component(&self, compiler: Compiler, sha256: &str) -> Option<Component> {
        let cache = self.inner.cache.as_ref()?;
        let backend = self.backend(compiler).ok()?;
        let entry = cache.entry(&backend.key, sha256);
        cache
            .load(&backend.engine, &entry)
            .inspect_err(|e| {
                tracing::warn!(entry = %entry.display(), "compile cache: {e}; recompiling");
            })
            .ok()
            .flatten()
    }

    /// The compiled plugin to run now, of `bytes` (whose sha256 is
    /// `sha256`): `compiler`'s when given (from the cache or compiled);
    /// else Cranelift's from the cache; else, with tiering, Winch's (from
    /// the cache or compiled), Cranelift's being the caller's to ask for
    /// ([`WasmRuntime::optimize_later`]); else Cranelift's, compiled now.
    /// With the compiler that made it, and whether it came from the cache.
    pub(super) fn component(
        &self,
        path: &Path,
        bytes: &[u8],
        sha256: &str,
        compiler: Option<Compiler>,
    ) -> Result<(Component, Compiler, bool), String> {
        if compiler.is_none()
            && let Some(component) = self.cached_component(Compiler::Cranelift, sha256)
        {
            return Ok((component, Compiler::Cranelift, true));
        }
        let compiler = match compiler {
            Some(compiler) => compiler,
            None if !self.tiers() => Compiler::Cranelift,
            None => {
                self.optimize_elsewhere(path, sha256);
                Compiler::Winch
            }
        };
        let (component, from_cache) = self.compile(compiler, path, bytes, sha256)?;
        Ok((component, compiler, from_cache))
    }

    /// `compiler`'s compile of `bytes`, from the cache or made now and
    /// cached; one process at a time per plugin and compiler (a lock in
    /// the cache: who waits for it finds the entry made). True when it
    /// came from the cache.
    pub(super) fn compile(
        &self,
        compiler: Compiler,
        path: &Path,
        bytes: &[u8],
        sha256: &str,
    ) -> Result<(Component, bool), String> {
        let backend = self.backend(compiler)?;
        let cache = self.inner.cache.as_ref();
        let entry = cache.map(|cache| cache.entry(&backend.key, sha256));
        let _lock = match &entry {
            Some(entry) => {
                let lock = EntryLock::wait(entry)
                    .inspect_err(|e| {
                        tracing::debug!(entry = %entry.display(), "compile cache: no lock ({e})");
                    })
                    .ok();
                // Whoever held the lock may have made the entry meanwhile.
                if let Some(component) = self.cached_component(compiler, sha256) {
                    return Ok((component, true));
                }
                lock
            }
            None => None,
        };
        self.note(&CompileNote::Started {
            plugin: path,
            bytes: bytes.len() as u64,
            compiler,
        });
        let started = Instant::now();
        let compiled = Component::new(&backend.engine, bytes);
        let elapsed = started.elapsed();
        self.note(&CompileNote::Finished {
            plugin: path,
            compiler,
            elapsed,
        });
        let component = compiled.map_err(|e| format!("compiling ({compiler}): {e}"))?;
        tracing::debug!(plugin = %path.display(), %compiler, ?elapsed, "compiled");
        if let (Some(cache), Some(entry)) = (cache, entry)
            && let Err(e) = cache.store(&entry, &component)
        {
            tracing::warn!(entry = %entry.display(), "compile cache: cannot write: {e}");
        }
        Ok((component, false))
    }

    /// Whether a plugin the cache does not hold runs on Winch's code first.
    pub(super) fn tiers(&self) -> bool {
        !matches!(self.inner.tiering, Tiering::Off)
    }

    /// Tell whoever asked of a compile's progress.
    fn note(&self, note: &CompileNote<'_>) {
        if let Some(progress) = &self.inner.progress {
            progress(note);
        }
    }

    /// Have Cranelift compile the plugin at `path` (sha256 `sha256`), now
    /// running on Winch's code, as [`Tiering`] says: on a thread of this
    /// runtime, then swapped into `plugin` (and every other plugin of this
    /// runtime waiting for the same bytes); or by the job given, once per
    /// plugin and runtime (started before Winch's compile, see
    /// [`WasmRuntime::component`]: so that a process cut short by its
    /// deadline while compiling leaves it under way).
    pub(super) fn optimize_later(
        &self,
        (path, sha256): (&Path, &str),
        plugin: Weak<dyn Reload>,
        compile: OptimizingCompile,
    ) {
        let mut now = self
            .inner
            .optimizing_now
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(waiting) = now.get_mut(sha256) {
            waiting.push(plugin);
            return;
        }
        match &self.inner.tiering {
            Tiering::Off => {}
            Tiering::Elsewhere(_) => {
                drop(now);
                self.optimize_elsewhere(path, sha256);
            }
            Tiering::Background => {
                now.insert(sha256.to_owned(), vec![plugin]);
                drop(now);
                let (runtime, path, sha256) = (self.clone(), path.to_owned(), sha256.to_owned());
                let spawned = std::thread::Builder::new()
                    .name("wasm-hooks-optimize".into())
                    .spawn(move || runtime.optimize_now(&path, &sha256, compile));
                if let Err(e) = spawned {
                    tracing::warn!("no thread to compile with cranelift ({e}); winch's code stays");
                }
            }
        }
    }

    /// Hand the plugin at `path` to [`Tiering::Elsewhere`]'s job, once
    /// per plugin and runtime (and never without a cache to leave it in).
    fn optimize_elsewhere(&self, path: &Path, sha256: &str) {
        let (Tiering::Elsewhere(job), Some(cache)) = (&self.inner.tiering, &self.inner.cache)
        else {
            return;
        };
        let mut now = self
            .inner
            .optimizing_now
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if now.contains_key(sha256) {
            return;
        }
        now.insert(sha256.to_owned(), Vec::new());
        drop(now);
        job(&OptimizeJob {
            plugin: path,
            sha256,
            cache_dir: cache.dir(),
        });
    }

    /// Cranelift's compile of the plugin at `path`, swapped into every
    /// plugin still waiting for it (see [`WasmRuntime::optimize_later`]).
    fn optimize_now(&self, path: &Path, sha256: &str, compile: OptimizingCompile) {
        let optimized = compile(self, path, sha256);
        let waiting = self
            .inner
            .optimizing_now
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(sha256)
            .unwrap_or_default();
        match optimized {
            Ok(compiled) => {
                for plugin in waiting.iter().filter_map(Weak::upgrade) {
                    plugin.upgrade_to(&compiled);
                }
            }
            Err(e) => tracing::warn!("compiling with cranelift: {e}; winch's code stays in use"),
        }
    }
}

/// The pooling allocator's settings. Resetting a slot for the next instance
/// is most of what a fresh instance costs: where the kernel can say which
/// pages a plugin dirtied (`PAGEMAP_SCAN`, Linux 6.7+), only those are reset
/// by hand and the rest stay mapped, instead of `madvise` dropping them all
/// and the next instance faulting them back in.
fn pooling_config() -> PoolingAllocationConfig {
    let mut pooling = PoolingAllocationConfig::default();
    pooling
        .pagemap_scan(Enabled::Auto)
        .linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(KEEP_RESIDENT / 16)
        .async_stack_keep_resident(KEEP_RESIDENT / 16);
    pooling
}

/// Plugin versions a runtime keeps linked in memory.
const MAX_LINKED: usize = 64;

/// How much of each slot may stay resident between instances.
const KEEP_RESIDENT: usize = 4 << 20;

/// A stable name for the engine's compiled-code compatibility: the sha256
/// of everything `precompile_compatibility_hash` feeds a hasher.
fn engine_key(engine: &Engine) -> String {
    struct Sha(Sha256);
    impl std::hash::Hasher for Sha {
        fn write(&mut self, bytes: &[u8]) {
            self.0.update(bytes);
        }
        fn finish(&self) -> u64 {
            0
        }
    }
    let mut hasher = Sha(Sha256::new());
    std::hash::Hash::hash(&engine.precompile_compatibility_hash(), &mut hasher);
    let mut hex = format!("{:x}", hasher.0.finalize());
    hex.truncate(16);
    hex
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
            tracing::warn!("no epoch ticker ({e}): only fuel and timers bound wasm hooks");
        });
}

/// Poll the runtime's plugin files every `interval` until the runtime is
/// dropped, reloading those that changed.
fn start_watcher(runtime: &WasmRuntime, interval: Duration) {
    let weak = Arc::downgrade(&runtime.inner);
    std::thread::Builder::new()
        .name("wasm-hooks-reload".into())
        .spawn(move || {
            loop {
                std::thread::sleep(interval);
                let Some(inner) = weak.upgrade() else { break };
                inner.reload_changed();
            }
        })
        .map(drop)
        .unwrap_or_else(|e| tracing::warn!("no hot reload ({e})"));
}

/// A wasmtime error as the runtime's failure, its chain kept as the source.
fn runtime_error(e: wasmtime::Error) -> Error {
    Error::Runtime { source: e.into() }
}

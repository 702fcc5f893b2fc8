//! The composition root: [`HookEngineBuilder`] turns hook files, engine
//! settings and defaults into a [`HookEngine`], a
//! [`HookRegistry`](wasm_hooks_core::HookRegistry) whose hooks came from
//! those files. Reading the files is `config`'s job; running the hooks is
//! the registry's.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Deref;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::RequestEnv;
use crate::config::{
    self, EngineSettings, FileHooks, Layer, LoadedHook, Loader, ManagedSettings, Scope,
};
use crate::handlers::defaults::CommandDefaults;
use crate::handlers::defaults::PromptDefaults;
use crate::handlers::egress::{HttpSettings, UrlAllowlist};
use crate::handlers::kind::KindSettings;
use crate::handlers::mcp_servers::McpServers;
use crate::handlers::wasm_setup::{RegistryPlugins, WasmSetup};
use crate::inputs::InputStamps;
use crate::oci::{Fetcher, PluginStore, SignerPolicy};
use crate::once::OnceMarks;
use crate::project_trust::{self, ProjectNotice, ProjectTrust, Reviews, SkippedHook};
use crate::state::{DirectoryStore, MemoryStore, SessionStore};
use crate::stop_loop::{DEFAULT_STOP_LOOP_LIMIT, StopLoopGuard};
use crate::trust::{TrustRecord, TrustStatus, TrustStore, UntrustedProjects};
use wasm_hooks_core::{
    AuditKey, AuditLog, DispatchLimits, Error, HookId, HookRegistry, OnFailure, Redactor, Review,
};
use wasm_hooks_wasm::{WasmLimits, WasmRuntime, WasmRuntimeBuilder};

/// Hook files that could not be loaded: every problem found, in file order.
/// Displayed as the one problem on one line, or a count and a line each.
#[derive(Debug)]
pub struct LoadError {
    /// The problems.
    pub errors: Vec<Error>,
    /// What the lints found in the files that did load (see
    /// [`HookEngine::warnings`]).
    pub warnings: Vec<Error>,
}

impl LoadError {
    fn new(errors: Vec<Error>) -> Self {
        Self {
            errors,
            warnings: Vec::new(),
        }
    }
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
/// - no hook files: add them one by one with
///   [`HookEngineBuilder::hook_file`], or name a project with
///   [`HookEngineBuilder::project_dir`] to use the default search list
///   (`.wasm-hooks/hooks.local.*`, `.wasm-hooks/hooks.*` in the project,
///   then `hooks.*` in the user's `wasm-hooks` config directory; explicit
///   files replace that list);
/// - Claude Code's `.claude/settings*.json` are not read unless
///   [`HookEngineBuilder::claude_settings`] asks for them;
/// - a new [`WasmRuntime`], made as [`HookEngineBuilder::runtime_options`]
///   says (by default: pooling allocator where available, the compile cache
///   in the user's cache directory) and only if a wasm hook is configured,
///   unless one is given with [`HookEngineBuilder::runtime`], so that
///   several engines can share compiled-plugin machinery;
/// - [`WasmLimits::default`] for every wasm hook (fuel 1e9, 1000 ms, 64 MiB,
///   1 MiB result, 64 KiB output), which a hook's `limits` may override;
/// - [`CommandDefaults::default`] for every command hook (60 s, 1 MiB of
///   stdout and of stderr, variables prefixed `WASM_HOOKS_`);
/// - [`PromptDefaults::default`] for prompt hooks (Anthropic,
///   `claude-haiku-4-5`, 256 tokens, 30 s);
/// - HTTP hooks may call loopback addresses only, unless
///   [`HookEngineBuilder::http_allowlist`] or a settings file says more;
/// - no audit log, unless [`HookEngineBuilder::audit_log`] or a settings
///   file (`audit_log:`) names one;
/// - at most [`DEFAULT_STOP_LOOP_LIMIT`] (8) blocked stops in a row per
///   session, counted in memory
///   ([`HookEngineBuilder::stop_loop_limit`],
///   [`HookEngineBuilder::state_dir`]).
///
/// With a project directory, the engine settings files are read too:
/// `<project>/.wasm-hooks/config.{yaml,yml,json}`, then the user's
/// `wasm-hooks/config.*` (`audit_log`, `allow_urls`, `secret_env`,
/// `untrusted_projects`).
///
/// The project's layers (its hook files, `.claude/settings*.json` when
/// read, its `config.*`) run as the person's only once they trusted the
/// project (`wasm-hooks trust`, recorded in [`TrustStore::user`] unless
/// [`HookEngineBuilder::trust_store`] says otherwise); until then the
/// user's `untrusted_projects` policy ([`UntrustedProjects`], by default
/// sandboxed hooks only) decides. Files named with
/// [`HookEngineBuilder::hook_file`] are the person's choice, and trusted.
#[derive(Debug)]
pub struct HookEngineBuilder {
    files: Vec<PathBuf>,
    project_dir: Option<PathBuf>,
    user_config_dir: Option<PathBuf>,
    claude_settings: bool,
    lints: bool,
    runtime: Option<WasmRuntime>,
    runtime_builder: WasmRuntimeBuilder,
    limits: WasmLimits,
    ceilings: WasmLimits,
    commands: CommandDefaults,
    prompts: PromptDefaults,
    request_env: RequestEnv,
    http_allowlist: UrlAllowlist,
    audit_log: Option<PathBuf>,
    audit_key: Option<PathBuf>,
    secret_env: Vec<String>,
    hook_secrets: Vec<String>,
    stop_loop_limit: u32,
    state_dir: Option<PathBuf>,
    session_store: Option<Arc<dyn SessionStore>>,
    trust_store: Option<TrustStore>,
    untrusted_projects: Option<UntrustedProjects>,
    managed_dir: Option<PathBuf>,
    strict_project: bool,
    dispatch_limits: DispatchLimits,
    /// Whose the files named with `hook_file` are.
    named_files_scope: Scope,
    /// Whether an untrusted project's sandboxed hooks answer in full.
    sandboxed_answer_in_full: bool,
    /// Whether the project's own layer (its hook files and settings) is
    /// left out: for an event from outside any project served.
    without_project: bool,
}

/// Where an organisation's managed layer lives unless
/// `WASM_HOOKS_MANAGED_DIR` or [`HookEngineBuilder::managed_dir`] says
/// otherwise.
pub const MANAGED_DIR: &str = "/etc/wasm-hooks";

/// The managed layer's directory: `WASM_HOOKS_MANAGED_DIR` when it names a
/// directory only root can write (owned by root, not writable by its group
/// or others), outside every project, and, for root (whose clone of a
/// repository is root's), under [`MANAGED_DIR`]; else [`MANAGED_DIR`]. The
/// managed layer is the organisation's and always trusted: a variable
/// anyone can set (an agent's settings `env`, a repository's) must not
/// move it to a folder they wrote, nor remove it.
fn managed_dir_from_env() -> PathBuf {
    wasm_hooks_core::personal_dir_from_env(
        "WASM_HOOKS_MANAGED_DIR",
        wasm_hooks_core::Owner::Root(MANAGED_DIR),
    )
    .unwrap_or_else(|| PathBuf::from(MANAGED_DIR))
}

impl Default for HookEngineBuilder {
    fn default() -> Self {
        Self {
            files: Vec::new(),
            project_dir: None,
            user_config_dir: None,
            claude_settings: false,
            lints: true,
            runtime: None,
            runtime_builder: WasmRuntimeBuilder::default(),
            limits: WasmLimits::default(),
            ceilings: WasmLimits::CEILINGS,
            commands: CommandDefaults::default(),
            request_env: RequestEnv::default(),
            prompts: PromptDefaults::default(),
            http_allowlist: UrlAllowlist::default(),
            audit_log: None,
            audit_key: None,
            secret_env: Vec::new(),
            hook_secrets: Vec::new(),
            stop_loop_limit: DEFAULT_STOP_LOOP_LIMIT,
            state_dir: None,
            session_store: None,
            trust_store: TrustStore::user(),
            untrusted_projects: None,
            strict_project: false,
            dispatch_limits: DispatchLimits::DEFAULT,
            named_files_scope: Scope::User,
            sandboxed_answer_in_full: false,
            without_project: false,
            managed_dir: Some(managed_dir_from_env()),
        }
    }
}

impl HookEngineBuilder {
    /// A builder with the defaults above.
    pub fn new() -> Self {
        Self::default()
    }

    /// Read hooks from this file (in addition to any given before); explicit
    /// files replace the default search list. Earlier files are higher
    /// layers.
    pub fn hook_file(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.files.push(path.into());
        self
    }

    /// Read exactly these hook files, forgetting those given before.
    pub fn replace_hook_files(&mut self, paths: impl IntoIterator<Item = PathBuf>) -> &mut Self {
        self.files = paths.into_iter().collect();
        self
    }

    /// Take the files named with [`HookEngineBuilder::hook_file`] for the
    /// project's (`wasm-hooks test` reading the hook files beside a
    /// repository's fixtures), not the person's: they are weighed by the
    /// project's trust, so an untrusted one runs only sandboxed hooks.
    pub fn named_files_are_the_projects(&mut self, project: bool) -> &mut Self {
        self.named_files_scope = if project { Scope::Project } else { Scope::User };
        self
    }

    /// For a run whose answers nothing acts on (`wasm-hooks test`): the
    /// sandboxed hooks of an untrusted project answer as trusted ones would
    /// (an allow, a rewrite, a Stop block count), since they reach nothing
    /// outside the sandbox either way; what is not sandboxed still does not
    /// run.
    pub fn sandboxed_answer_in_full(&mut self, full: bool) -> &mut Self {
        self.sandboxed_answer_in_full = full;
        self
    }

    /// Read the person's and the organisation's layers only: no hook
    /// file or settings of the project (the directory still says where
    /// `${PROJECT_DIR}` is). What `serve` answers an event from outside
    /// every project it serves with.
    pub fn without_project(&mut self) -> &mut Self {
        self.without_project = true;
        self
    }

    /// Search the default hook-file locations of this project.
    pub fn project_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.project_dir = Some(dir.into());
        self
    }

    /// Use this directory instead of `$XDG_CONFIG_HOME` (or `~/.config`)
    /// for the user layer of the search list.
    pub fn user_config_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.user_config_dir = Some(dir.into());
        self
    }

    /// Whether to run the lints when the files load (the default), for
    /// [`HookEngine::warnings`]; a process that only dispatches (`hook`,
    /// `serve`) turns them off.
    pub fn lints(&mut self, run: bool) -> &mut Self {
        self.lints = run;
        self
    }

    /// Also read the hooks of the project's `.claude/settings.local.json`
    /// and `.claude/settings.json`.
    pub fn claude_settings(&mut self, read: bool) -> &mut Self {
        self.claude_settings = read;
        self
    }

    /// Run wasm hooks on this runtime (to share one between engines).
    pub fn runtime(&mut self, runtime: WasmRuntime) -> &mut Self {
        self.runtime = Some(runtime);
        self
    }

    /// Without [`HookEngineBuilder::runtime`], make the wasm runtime this
    /// way (allocator, compile cache, stack, hot reload); it is made only
    /// when a hook file has a wasm hook.
    pub fn runtime_options(&mut self, builder: WasmRuntimeBuilder) -> &mut Self {
        self.runtime_builder = builder;
        self
    }

    /// Engine-wide defaults for command hooks (timeout, output cap, the
    /// prefix of their event variables).
    pub fn command_defaults(&mut self, defaults: CommandDefaults) -> &mut Self {
        self.commands = defaults;
        self
    }

    /// Variables this request brings over the process's environment (a
    /// daemon's caller's per-session ones): command hooks and MCP servers
    /// start with them, plugins' granted variables, HTTP hooks' headers and
    /// prompt hooks' keys read them.
    pub fn request_env(&mut self, env: RequestEnv) -> &mut Self {
        self.request_env = env;
        self
    }

    /// The variables its engines' hooks read: [`RequestEnv::update`] gives
    /// a built engine the next request's.
    pub fn current_request_env(&self) -> &RequestEnv {
        &self.request_env
    }

    /// Engine-wide defaults for prompt hooks (provider, model, API key
    /// variable, tokens, timeout), so a hook can give only its prompt.
    pub fn prompt_defaults(&mut self, defaults: PromptDefaults) -> &mut Self {
        self.prompts = defaults;
        self
    }

    /// The URLs HTTP hooks may call (default: loopback addresses only); a
    /// hook whose URL is not allowed is a load error.
    pub fn http_allowlist(&mut self, allowlist: UrlAllowlist) -> &mut Self {
        self.http_allowlist = allowlist;
        self
    }

    /// Append an audit record of every dispatch to this file (it wins over
    /// a settings file's `audit_log`).
    pub fn audit_log(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.audit_log = Some(path.into());
        self
    }

    /// Seal the audit log with the key in this file (it wins over a
    /// settings file's `audit_key`); `wasm-hooks audit key FILE` makes one.
    pub fn audit_key(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.audit_key = Some(path.into());
        self
    }

    /// Treat these environment variables as secret whatever their names:
    /// their values never reach the audit log.
    pub fn secret_env(&mut self, names: impl IntoIterator<Item = String>) -> &mut Self {
        self.secret_env.extend(names);
        self
    }

    /// Let HTTP and prompt hooks send these variables (header values,
    /// API keys), beside the user config's `hook_secrets`; a hook file
    /// naming any other is a load error.
    pub fn hook_secrets(&mut self, names: impl IntoIterator<Item = String>) -> &mut Self {
        self.hook_secrets.extend(names);
        self
    }

    /// How many Stop (or SubagentStop) blocks in a row a session may get
    /// before one goes through with a warning naming the hook (default
    /// [`DEFAULT_STOP_LOOP_LIMIT`]).
    pub fn stop_loop_limit(&mut self, limit: u32) -> &mut Self {
        self.stop_loop_limit = limit;
        self
    }

    /// Keep what lasts across a session's events (blocked stops in a row,
    /// which `once` hooks ran) in files under this directory instead of in
    /// memory: for a process per event, as `wasm-hooks hook` is.
    pub fn state_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// Keep `once` marks and stop-loop counts in `store`, which engines
    /// on several hosts (replicas of `serve`) share ([`crate::RedisStore`]),
    /// instead of this engine's memory or state directory.
    pub fn session_store(&mut self, store: Arc<dyn SessionStore>) -> &mut Self {
        self.session_store = Some(store);
        self
    }

    /// Where trusted projects are recorded (default: the user's state
    /// directory; none: no project is trusted).
    pub fn trust_store(&mut self, store: Option<TrustStore>) -> &mut Self {
        self.trust_store = store;
        self
    }

    /// The organisation's managed layer: `hooks.*` and `config.*` in this
    /// directory (default: `WASM_HOOKS_MANAGED_DIR` when it names a
    /// directory only root can write, else [`MANAGED_DIR`]; none: no
    /// managed layer). Its hooks are always trusted, load first,
    /// and cannot be switched off below; its `config.*` may run managed
    /// hooks only, restrict URLs and MCP servers, and make its hooks fail
    /// closed.
    pub fn managed_dir(&mut self, dir: Option<PathBuf>) -> &mut Self {
        self.managed_dir = dir;
        self
    }

    /// What runs in an untrusted project, over the user config's
    /// `untrusted_projects`.
    pub fn untrusted_projects(&mut self, policy: UntrustedProjects) -> &mut Self {
        self.untrusted_projects = Some(policy);
        self
    }

    /// Whether a project file (hook file or `config.*`) that does not
    /// load fails the build (`true`, for `validate`, `list`, `trust`) or
    /// is left out with a message while every other layer runs (`false`,
    /// the default: a repository cannot silence the person's hooks by
    /// breaking its own file). Files of the user and managed layers, and
    /// files named with [`HookEngineBuilder::hook_file`], always fail it.
    pub fn strict_project(&mut self, strict: bool) -> &mut Self {
        self.strict_project = strict;
        self
    }

    /// The limits of each event's dispatch (default
    /// [`DispatchLimits::DEFAULT`]: 30 s and 64 hooks per event), which the
    /// user's and the organisation's `config.*` (`limits:`) may lower.
    pub fn dispatch_limits(&mut self, limits: DispatchLimits) -> &mut Self {
        self.dispatch_limits = limits;
        self
    }

    /// The most a hook file's wasm `limits` may ask for (default
    /// [`WasmLimits::CEILINGS`]; the user config's `ceilings` apply over
    /// it); what asks more is cut, with a caveat.
    pub fn wasm_ceilings(&mut self, ceilings: WasmLimits) -> &mut Self {
        self.ceilings = ceilings;
        self
    }

    /// Engine-wide default limits for wasm hooks.
    pub fn wasm_limits(&mut self, limits: WasmLimits) -> &mut Self {
        self.limits = limits;
        self
    }

    /// The hook files this builder will read, highest layer first.
    pub fn files(&self) -> Vec<PathBuf> {
        self.layers().into_iter().map(|layer| layer.path).collect()
    }

    /// What pulls `oci://` plugins for these hook files: the person's
    /// store and the signer settings of the user's and the organisation's
    /// files (as the engine itself pulls); none without a home for the
    /// store.
    ///
    /// # Errors
    /// The settings files that do not load.
    pub fn plugin_fetcher(&self) -> Result<Option<Fetcher>, Vec<Error>> {
        let (settings, _, _) = self.settings()?;
        let managed = self.managed_settings().map_err(|e| vec![e])?;
        Ok(registry_plugins(&settings, &managed, Arc::new(AtomicBool::new(true))).fetcher)
    }

    /// What pulls the project's own plugins: as
    /// [`HookEngineBuilder::plugin_fetcher`], under the project's settings
    /// too (its `require_signed_plugins`, which only makes it stricter).
    ///
    /// # Errors
    /// The settings files that do not load.
    pub fn project_plugin_fetcher(&self) -> Result<Option<Fetcher>, Vec<Error>> {
        let (settings, _, _) = self.settings()?;
        let managed = self.managed_settings().map_err(|e| vec![e])?;
        Ok(registry_plugins(&settings, &managed, Arc::new(AtomicBool::new(true))).project_fetcher)
    }

    /// Every hook file this builder looks for, highest layer first, and
    /// whether it is there: the explicit files, or the default search list
    /// of the project and the user (after the managed files found).
    pub fn searched_files(&self) -> Vec<(PathBuf, bool)> {
        let managed = self
            .managed_dir
            .as_deref()
            .map(config::managed_files)
            .unwrap_or_default();
        let rest = match &self.project_dir {
            Some(project) if self.files.is_empty() => {
                config::searched_files(project, self.user_config().as_deref(), self.claude_settings)
                    .into_iter()
                    .filter(|layer| !(self.without_project && layer.scope == Scope::Project))
                    .map(|layer| layer.path)
                    .collect()
            }
            _ => self.files.clone(),
        };
        managed
            .into_iter()
            .map(|layer| layer.path)
            .chain(rest)
            .map(|path| {
                let found = path.is_file();
                (path, found)
            })
            .collect()
    }

    /// The managed layer's files, then the explicit files or the
    /// project's and user's.
    fn layers(&self) -> Vec<Layer> {
        let managed = self
            .managed_dir
            .as_deref()
            .map(config::managed_files)
            .unwrap_or_default();
        let rest = if !self.files.is_empty() {
            self.files
                .iter()
                .map(|path| Layer {
                    path: path.clone(),
                    scope: self.named_files_scope,
                })
                .collect()
        } else if let Some(project) = &self.project_dir {
            config::default_files(project, self.user_config().as_deref(), self.claude_settings)
        } else {
            Vec::new()
        };
        managed
            .into_iter()
            .chain(rest)
            .filter(|layer| !(self.without_project && layer.scope == Scope::Project))
            .collect()
    }

    /// Load every hook file and build the engine.
    ///
    /// # Errors
    /// A [`LoadError`] with every problem in every file; no engine is built
    /// from a partly broken setup.
    pub fn build(&self) -> Result<HookEngine, LoadError> {
        let loaded = self.load()?;
        let audit = self
            .open_audit_log(&loaded.settings, loaded.trusted)
            .map_err(|e| LoadError::new(vec![e]))?;
        let mut reviews: Vec<Arc<dyn Review>> = vec![Arc::new(StopLoopGuard::new(
            self.stop_loop_limit,
            self.store(),
        ))];
        let settings_ignored = !loaded.trusted && loaded.settings.project_audit_log.is_some();
        let notices = [
            loaded.trust.as_ref().and_then(|trust| {
                ProjectNotice::untrusted(
                    trust,
                    &loaded.skipped,
                    settings_ignored,
                    self.once_marks("notices"),
                )
            }),
            ProjectNotice::broken(&loaded.left_out, self.once_marks("notices")),
        ];
        for notice in notices.into_iter().flatten() {
            reviews.push(Arc::new(notice));
        }
        let limits = loaded
            .managed_limits
            .lower(loaded.settings.limits.lower(self.dispatch_limits));
        let registry = HookRegistry::limited(audit, Some(Arc::new(Reviews(reviews))), limits);
        // What the hooks run, for a long-lived host to watch with
        // `watched_files`: moved, not searched for on every build.
        let mut inputs = Vec::new();
        let mut kinds = std::collections::HashMap::new();
        for (scope, mut hook) in loaded.hooks {
            inputs.extend(hook.executes);
            kinds.insert(hook.spec.id.clone(), hook.kind);
            hook.spec.from_project = scope == Scope::Project;
            registry.register(hook.spec);
        }
        Ok(HookEngine {
            registry,
            skipped: loaded.skipped,
            trust: loaded.trust,
            warnings: Arc::new(loaded.warnings),
            switched_off: loaded.switched_off,
            left_out: Arc::new(loaded.left_out),
            trust_store: self.trust_store.clone(),
            inputs: Arc::new(inputs),
            kinds: Arc::new(kinds),
        })
    }

    /// [`HookEngineBuilder::build`], with the stamps of everything the
    /// engine was built from ([`HookEngineBuilder::watched_files`] and
    /// [`HookEngine::inputs`]) and of `also` (an older engine's inputs:
    /// after a failed build, a file it ran, changed back, builds again).
    /// The files known before the build (`also` among them, so a plugin a
    /// rebuild loads) are stamped before it, and any of them written while
    /// it ran is marked unknown, so an edit made meanwhile is seen by the
    /// next [`InputStamps::changed`] even when the file ends as it began;
    /// only inputs new to this build are stamped after it.
    pub fn build_stamped(
        &self,
        also: impl IntoIterator<Item = PathBuf>,
    ) -> (Result<HookEngine, LoadError>, InputStamps) {
        let mut before = InputStamps::of(self.watched_files()).with(also);
        let built = self.build();
        before.unknown_if_written();
        match built {
            Ok(engine) => {
                let stamps = before.with(engine.inputs().iter().cloned());
                (Ok(engine), stamps)
            }
            Err(e) => (Err(e), before),
        }
    }

    /// The files whose change could change the engine this builder builds,
    /// before it is built: every hook file searched for (there or not), the
    /// lock beside each, the settings files (there or not), the
    /// organisation's, and the project's trust record. A built engine adds
    /// what its hooks run ([`HookEngine::inputs`]).
    pub fn watched_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = self
            .searched_files()
            .into_iter()
            .flat_map(|(file, _)| {
                let lock = file.with_file_name(crate::oci::LOCK_FILE);
                [file, lock]
            })
            .collect();
        let settings_dirs = [
            self.project_dir.as_ref().map(|p| p.join(".wasm-hooks")),
            self.user_config().map(|u| u.join("wasm-hooks")),
            self.managed_dir.clone(),
        ];
        for dir in settings_dirs.into_iter().flatten() {
            files.extend(
                config::EXTENSIONS
                    .iter()
                    .map(|ext| dir.join(format!("config.{ext}"))),
            );
        }
        // The organisation's hook files that could appear.
        if let Some(dir) = &self.managed_dir {
            files.extend(
                config::EXTENSIONS
                    .iter()
                    .map(|ext| dir.join(format!("hooks.{ext}"))),
            );
        }
        if let (Some(store), Some(project)) = (&self.trust_store, &self.project_dir) {
            files.push(store.record_file(project));
        }
        files
    }

    /// The organisation's settings (none without a managed directory).
    fn managed_settings(&self) -> Result<ManagedSettings, Error> {
        match &self.managed_dir {
            Some(dir) => ManagedSettings::load(dir),
            None => Ok(ManagedSettings::default()),
        }
    }

    /// Per-session marks called `name`, in the engine's store.
    fn once_marks(&self, name: &str) -> Arc<OnceMarks> {
        Arc::new(OnceMarks::new(self.store(), name))
    }

    /// Where session state is kept: the store given, else files under the
    /// state directory (a process per event), else this engine's memory.
    fn store(&self) -> Arc<dyn SessionStore> {
        match (&self.session_store, &self.state_dir) {
            (Some(store), _) => Arc::clone(store),
            (None, Some(dir)) => Arc::new(DirectoryStore::new(dir)),
            (None, None) => Arc::new(MemoryStore::new()),
        }
    }

    /// What the hook kinds are built with: the builder's defaults, the
    /// user's settings, the organisation's restrictions.
    fn kind_settings(
        &self,
        settings: &EngineSettings,
        managed: &ManagedSettings,
        project_dir: &std::path::Path,
        project_may_pull: Arc<AtomicBool>,
    ) -> KindSettings {
        let allowlist = self
            .http_allowlist
            .extended(settings.allow_urls.iter().cloned())
            .expect("settings URL patterns were checked when read");
        let secrets = self
            .hook_secrets
            .iter()
            .chain(&settings.hook_secrets)
            .cloned()
            .collect();
        KindSettings {
            wasm: WasmSetup::new(
                self.runtime.clone(),
                self.runtime_builder.clone(),
                project_dir.to_owned(),
                self.limits,
                self.ceilings.with(&settings.ceilings),
                registry_plugins(settings, managed, project_may_pull),
            ),
            commands: self.commands.clone(),
            prompts: self.prompts.clone(),
            http: HttpSettings::new(allowlist, secrets).restricted(managed.url_restriction()),
            mcp: McpServers::allowing(managed.allowed_mcp_servers.clone()),
            env: self.request_env.clone(),
        }
    }

    /// Read the settings and every hook file, weigh the project's trust,
    /// leave out what may not run, and merge the layers.
    fn load(&self) -> Result<Loaded, LoadError> {
        let (settings, settings_files, mut left_out) = self.settings().map_err(LoadError::new)?;
        let managed = self
            .managed_settings()
            .map_err(|e| LoadError::new(vec![e]))?;
        let project_dir = self.project();
        let project_may_pull = Arc::new(AtomicBool::new(false));
        let mut loader = Loader::new(
            self.kind_settings(&settings, &managed, &project_dir, project_may_pull.clone()),
            self.once_marks("once"),
            self.lints,
        )
        .with_layer_enforcement(layer_enforcement(&settings, &managed));
        let layers = self.layers();
        // The project's files as read, for trust: the settings files, then
        // each hook file.
        let mut read_as: BTreeMap<PathBuf, String> = settings.read.iter().cloned().collect();
        let (found, warnings) =
            self.read_layers(&mut loader, &layers, &mut read_as, &mut left_out)?;
        let record = self
            .trust_store
            .as_ref()
            .and_then(|store| store.record(&project_dir));
        let project_settings = settings_files.clone();
        let mut trust = self.weigh_trust(
            project_dir,
            (&layers, settings_files),
            &found,
            read_as,
            record.as_ref(),
        );
        let policy = self
            .untrusted_projects
            .or(settings.untrusted_projects)
            .unwrap_or_default();
        let trusted = trust.as_ref().is_none_or(|t| t.status.is_trusted())
            || policy == UntrustedProjects::TrustAll;
        let (found, held) = self.hold_trusted_version(
            &mut loader,
            found,
            (trust.as_mut(), record.as_ref()),
            !trusted,
        );
        // The project's `config.*` counts while it is as trusted.
        let settings_trusted = trusted
            || held
                && record
                    .as_ref()
                    .is_some_and(|r| project_settings.iter().all(|f| r.holds(f)));
        // A project with nothing the person trusted to answer for a file
        // that does not load blocks what that file may guard.
        let broken_guard = (!trusted && !held && policy != UntrustedProjects::SkipAll)
            .then(|| project_trust::broken_project_guard(&left_out))
            .flatten();
        // Only a trusted project's hooks make wasm-hooks reach a registry.
        project_may_pull.store(trusted, Ordering::Relaxed);
        // What may not run is left out of each layer before they merge, so
        // an untrusted copy never stands in for a higher layer's hook.
        let (found, skipped) = project_trust::apply(
            found,
            trust.as_ref(),
            policy,
            managed.allow_managed_hooks_only,
            self.sandboxed_answer_in_full,
        );
        let (mut hooks, switched_off) = config::merge(found);
        hooks.extend(broken_guard.map(|spec| (Scope::Project, LoadedHook::standing_in(spec))));
        if managed.block_on_failure {
            for (scope, hook) in &mut hooks {
                if *scope == Scope::Managed {
                    hook.spec.on_failure = OnFailure::Block;
                }
            }
        }
        Ok(Loaded {
            settings,
            managed_limits: managed.limits,
            hooks,
            trust,
            trusted: settings_trusted,
            skipped,
            warnings,
            switched_off,
            left_out,
        })
    }

    /// Every hook file of `layers`, read by `loader`: what each holds, and
    /// the warnings. A project's file that does not load is left out (its
    /// problems added to `left_out`) unless the project is read strictly;
    /// the sha256 of each project file read is added to `read_as`.
    ///
    /// # Errors
    /// Every problem of every other file that does not load.
    fn read_layers(
        &self,
        loader: &mut Loader,
        layers: &[Layer],
        read_as: &mut BTreeMap<PathBuf, String>,
        left_out: &mut Vec<Error>,
    ) -> Result<(Vec<LayerRead>, Vec<Error>), LoadError> {
        let mut found = Vec::new();
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        // The patterns of every layer together compile within one budget.
        let loaded: Vec<_> = wasm_hooks_core::with_regex_budget(|| {
            layers
                .iter()
                .map(|layer| {
                    tracing::debug!(file = %layer.path.display(), scope = ?layer.scope, "reading hook file");
                    loader.load_file(&layer.path, layer.scope)
                })
                .collect()
        });
        for (layer, read) in layers.iter().zip(loaded) {
            match read {
                Ok(mut hooks) => {
                    if let Some(sha256) = &hooks.sha256 {
                        read_as.insert(layer.path.clone(), sha256.clone());
                    }
                    warnings.append(&mut hooks.warnings);
                    found.push((layer.clone(), hooks));
                }
                Err(errs) if layer.scope == Scope::Project && !self.strict_project => {
                    tracing::warn!(file = %layer.path.display(), "left out a project hook file that does not load");
                    left_out.extend(errs);
                }
                Err(errs) => errors.extend(errs),
            }
        }
        if errors.is_empty() {
            Ok((found, warnings))
        } else {
            Err(LoadError { errors, warnings })
        }
    }

    /// The project: the one given, else the current directory.
    fn project(&self) -> PathBuf {
        (self.project_dir.clone()).unwrap_or_else(|| std::env::current_dir().unwrap_or_default())
    }

    /// Make the project's hook file `file` read as `text` part of the
    /// version of the project the person trusts, with every file its
    /// hooks run as it is now; the rest of what they trusted stays as it
    /// was (and is recorded for the first time if nothing was). What
    /// `import` does with the hooks it moves out of an agent's settings:
    /// they ran with the person's rights there, so they go on doing so,
    /// and nothing else of the project becomes trusted.
    ///
    /// # Errors
    /// When `text` does not load, or the record cannot be written (naming
    /// the file).
    pub fn trust_hook_file_as(&self, file: &std::path::Path, text: &str) -> Result<(), LoadError> {
        let store = self.trust_store.as_ref().ok_or_else(|| {
            LoadError::new(vec![Error::Config {
                path: file.to_owned(),
                line: None,
                column: None,
                message: "no state directory to record trust in (set HOME or XDG_STATE_HOME)"
                    .to_owned(),
            }])
        })?;
        let (settings, _, _) = self.settings().map_err(LoadError::new)?;
        let managed = self
            .managed_settings()
            .map_err(|e| LoadError::new(vec![e]))?;
        let project = self.project();
        let mut loader = Loader::new(
            self.kind_settings(&settings, &managed, &project, Arc::default()),
            self.once_marks("once"),
            false,
        );
        let hooks = loader
            .load_text(file, text, Scope::Project)
            .map_err(LoadError::new)?;
        let runs: Vec<PathBuf> = hooks
            .hooks
            .iter()
            .flat_map(|hook| hook.executes.iter().cloned())
            .collect();
        store
            .trust_version(&project, file, text, &runs)
            .map(drop)
            .map_err(|e| {
                LoadError::new(vec![Error::Config {
                    path: file.to_owned(),
                    line: None,
                    column: None,
                    message: format!("recording its trust: {e}"),
                }])
            })
    }

    /// The project's layers as the version the person trusted holds them
    /// when its files changed since (`record`'s texts; see
    /// [`project_trust::hold`]), `trust`'s changes said; the layers as
    /// found otherwise, or when not `apply` (the changes are still said:
    /// `trust` shows them). True when the trusted version answers.
    fn hold_trusted_version(
        &self,
        loader: &mut Loader,
        found: Vec<LayerRead>,
        (trust, record): (Option<&mut ProjectTrust>, Option<&TrustRecord>),
        apply: bool,
    ) -> (Vec<(Scope, FileHooks)>, bool) {
        let changed = trust
            .as_ref()
            .is_some_and(|t| matches!(t.status, TrustStatus::Changed(_)));
        let (Some(trust), Some(record)) =
            (trust, record.filter(|r| changed && !r.texts.is_empty()))
        else {
            return (
                found.into_iter().map(|(l, h)| (l.scope, h)).collect(),
                false,
            );
        };
        let searched: Vec<PathBuf> = self
            .layers_searched()
            .into_iter()
            .filter(|layer| layer.scope == Scope::Project)
            .map(|layer| layer.path)
            .collect();
        let (project, rest): (Vec<_>, Vec<_>) = found
            .into_iter()
            .partition(|(layer, _)| layer.scope == Scope::Project);
        let project = project.into_iter().map(|(l, h)| (l.path, h)).collect();
        let (held, changes) = project_trust::hold(loader, record, &searched, project, apply);
        trust.changes = changes;
        // Layer order: the organisation's, the project's, the person's.
        let (managed, user): (Vec<_>, Vec<_>) = rest
            .into_iter()
            .map(|(l, h)| (l.scope, h))
            .partition(|(scope, _)| *scope == Scope::Managed);
        let held_layers = held.into_iter().map(|h| (Scope::Project, h));
        (
            managed.into_iter().chain(held_layers).chain(user).collect(),
            apply,
        )
    }

    /// Every hook file looked for, there or not, with its scope, in layer
    /// order (see [`HookEngineBuilder::layers`]).
    fn layers_searched(&self) -> Vec<Layer> {
        match &self.project_dir {
            Some(project) if self.files.is_empty() => {
                config::searched_files(project, self.user_config().as_deref(), self.claude_settings)
            }
            _ => self.layers(),
        }
    }

    /// The project's trust: every file of its layers decides what they
    /// run, the scripts of hooks a higher layer also has among them (trust
    /// is weighed before layers merge), against `record`; none without a
    /// project file.
    fn weigh_trust(
        &self,
        project_dir: PathBuf,
        (layers, settings_files): (&[Layer], Vec<PathBuf>),
        found: &[LayerRead],
        read: BTreeMap<PathBuf, String>,
        record: Option<&TrustRecord>,
    ) -> Option<ProjectTrust> {
        let mut files: Vec<PathBuf> = layers
            .iter()
            .filter(|l| l.scope == Scope::Project)
            .map(|l| l.path.clone())
            .chain(settings_files)
            .chain(
                found
                    .iter()
                    .filter(|(layer, _)| layer.scope == Scope::Project)
                    .flat_map(|(_, file)| file.hooks.iter())
                    .flat_map(|hook| hook.executes.iter().cloned()),
            )
            .collect();
        files.sort();
        files.dedup();
        let unpinned = found
            .iter()
            .filter(|(layer, _)| layer.scope == Scope::Project)
            .flat_map(|(_, file)| file.hooks.iter())
            .flat_map(|hook| {
                hook.unpinned
                    .iter()
                    .map(move |what| format!("hook `{}`: {what}", hook.spec.id))
            })
            .collect();
        (!files.is_empty() || record.is_some()).then(|| {
            let status = TrustStore::status_of(record, &files, &read);
            ProjectTrust {
                project: project_dir,
                files,
                status,
                read,
                unpinned,
                changes: Vec::new(),
            }
        })
    }

    fn user_config(&self) -> Option<PathBuf> {
        self.user_config_dir
            .clone()
            .or_else(config::user_config_dir)
    }

    /// The engine settings files' contents, the project's settings files
    /// (none without a project), and the problems of the project's files
    /// left out (see [`HookEngineBuilder::strict_project`]).
    fn settings(&self) -> Result<(EngineSettings, Vec<PathBuf>, Vec<Error>), Vec<Error>> {
        let Some(project) = &self.project_dir else {
            return Ok((EngineSettings::default(), Vec::new(), Vec::new()));
        };
        let mut files = config::settings_files(project, self.user_config().as_deref());
        files.retain(|f| !(self.without_project && f.scope == Scope::Project));
        let (settings, left_out) = EngineSettings::load(&files, !self.strict_project)?;
        let project_files = files
            .into_iter()
            .filter(|f| f.scope == Scope::Project)
            .map(|f| f.path)
            .collect();
        Ok((settings, project_files, left_out))
    }

    /// The audit log: the builder's, else the project's while it is
    /// trusted, else the user's.
    fn open_audit_log(
        &self,
        settings: &EngineSettings,
        trusted: bool,
    ) -> Result<Option<AuditLog>, Error> {
        let project_log = settings.project_audit_log.as_ref().filter(|_| trusted);
        let Some(path) = self
            .audit_log
            .as_ref()
            .or(project_log)
            .or(settings.audit_log.as_ref())
        else {
            return Ok(None);
        };
        let mut secret = self.secret_env.clone();
        secret.extend(settings.secret_env.iter().cloned());
        let key = match self.audit_key.as_ref().or(settings.audit_key.as_ref()) {
            Some(key) => Some(AuditKey::load(key).map_err(|source| Error::Audit {
                path: key.clone(),
                source,
            })?),
            None => None,
        };
        AuditLog::open(path, Redactor::from_env(&secret), key)
            .map(Some)
            .map_err(|source| Error::Audit {
                path: path.clone(),
                source,
            })
    }
}

/// The `enforcement` each layer's settings give its own hooks: the
/// person's (the user's config) and the organisation's; a project's
/// files say it themselves.
fn layer_enforcement(
    settings: &EngineSettings,
    managed: &ManagedSettings,
) -> Vec<(Scope, wasm_hooks_core::Enforcement)> {
    [
        (Scope::User, settings.enforcement),
        (Scope::Managed, managed.enforcement),
    ]
    .into_iter()
    .filter_map(|(scope, set)| set.map(|e| (scope, e)))
    .collect()
}

/// One hook file as read: its layer and what it holds.
type LayerRead = (Layer, FileHooks);

/// What [`HookEngineBuilder::load`] read.
struct Loaded {
    settings: EngineSettings,
    /// The engine's limits as the organisation lowered them.
    managed_limits: config::LimitsDoc,
    /// The hooks that run, merged, with the layer each came from.
    hooks: Vec<(Scope, LoadedHook)>,
    trust: Option<ProjectTrust>,
    /// Whether the project's layers run as the person's.
    trusted: bool,
    /// The project's hooks that may not run.
    skipped: Vec<SkippedHook>,
    warnings: Vec<Error>,
    switched_off: Vec<SkippedHook>,
    /// The problems of the project's files left out.
    left_out: Vec<Error>,
}

/// The hook engine: a [`HookRegistry`] (register, unregister, dispatch,
/// background hooks, the audit log), made from hook files by
/// [`HookEngine::builder`] or empty by `HookEngine::default()`. Cheap to
/// clone (clones share one registry); every registry method is callable on
/// it directly.
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
    registry: HookRegistry,
    skipped: Vec<SkippedHook>,
    trust: Option<ProjectTrust>,
    warnings: Arc<Vec<Error>>,
    switched_off: Vec<SkippedHook>,
    left_out: Arc<Vec<Error>>,
    /// Where the project's trust is recorded, to see it change.
    trust_store: Option<TrustStore>,
    /// The files its hooks run or read as code (see
    /// [`HookEngine::inputs`]).
    inputs: Arc<Vec<PathBuf>>,
    /// Each hook's kind (`wasm`, `command`…), by name.
    kinds: Arc<std::collections::HashMap<HookId, &'static str>>,
}

impl Default for HookEngine {
    /// An engine with no hooks, and the stop-loop guard at its default
    /// limit, counting in memory.
    fn default() -> Self {
        Self {
            registry: HookRegistry::reviewed(
                None,
                Some(Arc::new(StopLoopGuard::new(
                    DEFAULT_STOP_LOOP_LIMIT,
                    Arc::new(MemoryStore::new()),
                ))),
            ),
            skipped: Vec::new(),
            trust: None,
            warnings: Arc::default(),
            switched_off: Vec::new(),
            left_out: Arc::default(),
            trust_store: None,
            inputs: Arc::default(),
            kinds: Arc::default(),
        }
    }
}

impl HookEngine {
    /// A builder; see [`HookEngineBuilder`] for the defaults.
    pub fn builder() -> HookEngineBuilder {
        HookEngineBuilder::new()
    }

    /// What the lints found in the hook files: entries that load but may
    /// never do what they say (a matcher no tool fits, a rule on a field no
    /// event carries, a guard that fails open). `validate` prints them.
    pub fn warnings(&self) -> &[Error] {
        &self.warnings
    }

    /// The hooks a higher layer switched off (`enabled: false`).
    pub fn switched_off(&self) -> &[SkippedHook] {
        &self.switched_off
    }

    /// Every hook the files hold that does not run: left out
    /// ([`HookEngine::skipped`]) or switched off.
    pub fn not_run(&self) -> impl Iterator<Item = &SkippedHook> {
        self.skipped.iter().chain(&self.switched_off)
    }

    /// The problems of the project's files that did not load and were left
    /// out (see [`HookEngineBuilder::strict_project`]), each naming its
    /// file.
    pub fn left_out(&self) -> &[Error] {
        &self.left_out
    }

    /// The project's hooks left out because the project is not trusted.
    pub fn skipped(&self) -> &[SkippedHook] {
        &self.skipped
    }

    /// Whether the project is trusted now as it was when this engine was
    /// built: not after `wasm-hooks trust --revoke`, a new `trust`, or a
    /// change to a script its hooks run. Costs a read of the trust record
    /// and a `stat` per script; a long-lived host (`serve`) asks on every
    /// request and builds the engine again when not.
    pub fn trust_is_current(&self) -> bool {
        let Some(trust) = &self.trust else {
            return true;
        };
        let now = self
            .trust_store
            .as_ref()
            .map_or(TrustStatus::Never, |store| {
                store.status_as_read(&trust.project, &trust.files, &trust.read)
            });
        now == trust.status
    }

    /// The project's trust as the engine was built: the files trusting it
    /// records, and whether it is trusted as they are (none without a
    /// project layer).
    pub fn project_trust(&self) -> Option<&ProjectTrust> {
        self.trust.as_ref()
    }

    /// The files its hooks run or read as code (plugins, scripts, locks,
    /// MCP servers' configs). With its builder's
    /// [`HookEngineBuilder::watched_files`], every file a long-lived host
    /// stamps ([`crate::InputStamps`]) to build it again when one changes.
    pub fn inputs(&self) -> &[PathBuf] {
        &self.inputs
    }

    /// The kind of the hook named `id` (`wasm`, `command`, `http`…), if the
    /// engine has it.
    pub fn kind_of(&self, id: &HookId) -> Option<&'static str> {
        self.kinds.get(id).copied()
    }
}

impl Deref for HookEngine {
    type Target = HookRegistry;

    fn deref(&self) -> &HookRegistry {
        &self.registry
    }
}

/// Where `oci://` plugins come from, under the person's and the
/// organisation's signer settings: when the organisation requires
/// signatures, only its keys count.
fn registry_plugins(
    settings: &EngineSettings,
    managed: &ManagedSettings,
    project_may_pull: Arc<AtomicBool>,
) -> RegistryPlugins {
    let keys = if managed.require_signed_plugins {
        managed.signer_keys.clone()
    } else {
        managed
            .signer_keys
            .iter()
            .chain(&settings.plugin_signers)
            .cloned()
            .collect()
    };
    let fetcher = |required: bool| {
        let signers = SignerPolicy::new(keys.clone(), required, managed.require_signed_plugins);
        PluginStore::default_dir()
            .map(|dir| Fetcher::new(PluginStore::new(dir), signers, REGISTRY_DEADLINE))
    };
    RegistryPlugins {
        fetcher: fetcher(settings.require_signed_plugins),
        project_fetcher: fetcher(
            settings.require_signed_plugins || settings.project_requires_signed_plugins,
        ),
        project_may_pull,
        signed_only: managed.require_signed_plugins,
    }
}

/// The most one registry call may take.
const REGISTRY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

#[cfg(test)]
mod tests {
    use super::*;

    /// A rebuild stamps the older engine's inputs before it builds (and
    /// keeps watching them when it worked), so a plugin changed while the
    /// build read it is seen by the next check.
    #[test]
    fn a_rebuild_stamps_the_older_inputs_before_building() {
        let dir = tempfile::tempdir().unwrap();
        let hooks = dir.path().join("hooks.json");
        std::fs::write(&hooks, r#"{"hooks": {}}"#).unwrap();
        let plugin = dir.path().join("plugin.wasm");
        std::fs::write(&plugin, "version 1").unwrap();
        let mut builder = HookEngine::builder();
        builder.hook_file(&hooks);
        let (built, mut stamps) = builder.build_stamped([plugin.clone()]);
        built.unwrap();
        assert_eq!(stamps.changed(), None);
        std::fs::write(&plugin, "version 2, longer").unwrap();
        assert_eq!(stamps.changed(), Some(plugin));
    }
}

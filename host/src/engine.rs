//! The hook engine: the registry of hooks and dispatch.
//!
//! [`HookEngine::dispatch`] picks the hooks whose event and matcher fit,
//! runs them in priority order (lower first, then file order), hands each the
//! event as modified so far, and folds their answers with
//! [`Fold`](crate::Fold). It knows handlers only through the
//! [`Handler`](crate::Handler) trait. Build one with [`HookEngineBuilder`].

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Instant;

use tokio::task::JoinHandle;

use crate::config::{self, EngineSettings, HttpSettings, Loader, WasmSetup};
use crate::{
    AuditEntry, AuditKind, AuditLog, CommandDefaults, Decision, Error, Event, Flow, Fold,
    HookError, HookId, HookResult, HookSpec, Outcome, PromptDefaults, Redactor, UrlAllowlist,
    WasmLimits, WasmRuntime, WasmRuntimeBuilder,
};

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
///   file (`audit_log:`) names one.
///
/// With a project directory, the engine settings files are read too:
/// `<project>/.wasm-hooks/config.{yaml,yml,json}`, then the user's
/// `wasm-hooks/config.*` (`audit_log`, `allow_urls`, `secret_env`).
#[derive(Debug, Default)]
pub struct HookEngineBuilder {
    files: Vec<PathBuf>,
    project_dir: Option<PathBuf>,
    user_config_dir: Option<PathBuf>,
    claude_settings: bool,
    runtime: Option<WasmRuntime>,
    runtime_builder: WasmRuntimeBuilder,
    limits: WasmLimits,
    commands: CommandDefaults,
    prompts: PromptDefaults,
    http_allowlist: UrlAllowlist,
    audit_log: Option<PathBuf>,
    secret_env: Vec<String>,
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

    /// Treat these environment variables as secret whatever their names:
    /// their values never reach the audit log.
    pub fn secret_env(&mut self, names: impl IntoIterator<Item = String>) -> &mut Self {
        self.secret_env.extend(names);
        self
    }

    /// Engine-wide default limits for wasm hooks.
    pub fn wasm_limits(&mut self, limits: WasmLimits) -> &mut Self {
        self.limits = limits;
        self
    }

    /// The hook files this builder will read, highest layer first.
    pub fn files(&self) -> Vec<PathBuf> {
        if !self.files.is_empty() {
            return self.files.clone();
        }
        let Some(project) = &self.project_dir else {
            return Vec::new();
        };
        config::default_files(project, self.user_config().as_deref(), self.claude_settings)
    }

    /// Load every hook file and build the engine.
    ///
    /// # Errors
    /// A [`LoadError`] with every problem in every file; no engine is built
    /// from a partly broken setup.
    pub fn build(&self) -> Result<HookEngine, LoadError> {
        let settings = self.settings().map_err(|errors| LoadError { errors })?;
        let audit = self
            .open_audit_log(&settings)
            .map_err(|e| LoadError { errors: vec![e] })?;
        let project_dir = match &self.project_dir {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().unwrap_or_default(),
        };
        let allowlist = self
            .http_allowlist
            .extended(settings.allow_urls)
            .expect("settings URL patterns were checked when read");
        let mut loader = Loader::new(
            WasmSetup {
                runtime: self.runtime.clone(),
                builder: self.runtime_builder.clone(),
                project_dir,
                limits: self.limits,
            },
            self.commands.clone(),
            self.prompts.clone(),
            HttpSettings::new(allowlist),
        );
        let mut layers = Vec::new();
        let mut errors = Vec::new();
        for file in self.files() {
            match loader.load_file(&file) {
                Ok(found) => layers.push(found),
                Err(errs) => errors.extend(errs),
            }
        }
        if !errors.is_empty() {
            return Err(LoadError { errors });
        }
        let engine = HookEngine {
            inner: Arc::new(Registry {
                audit,
                ..Registry::default()
            }),
        };
        for spec in config::merge(layers) {
            engine.register(spec);
        }
        Ok(engine)
    }

    fn user_config(&self) -> Option<PathBuf> {
        self.user_config_dir
            .clone()
            .or_else(config::user_config_dir)
    }

    /// The engine settings files' contents (none without a project).
    fn settings(&self) -> Result<EngineSettings, Vec<Error>> {
        let Some(project) = &self.project_dir else {
            return Ok(EngineSettings::default());
        };
        EngineSettings::load(&config::settings_files(
            project,
            self.user_config().as_deref(),
        ))
    }

    fn open_audit_log(&self, settings: &EngineSettings) -> Result<Option<AuditLog>, Error> {
        let Some(path) = self.audit_log.as_ref().or(settings.audit_log.as_ref()) else {
            return Ok(None);
        };
        let mut secret = self.secret_env.clone();
        secret.extend(settings.secret_env.iter().cloned());
        AuditLog::open(path, Redactor::from_env(&secret))
            .map(Some)
            .map_err(|source| Error::Audit {
                path: path.clone(),
                source,
            })
    }
}

/// The registry of hooks and dispatch. Cheap to clone (clones share one
/// registry); safe to dispatch from many tasks at once, and to register or
/// unregister hooks while others dispatch (a dispatch sees the registry as
/// it was when it started).
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
#[derive(Debug, Clone, Default)]
pub struct HookEngine {
    inner: Arc<Registry>,
}

#[derive(Debug, Default)]
struct Registry {
    hooks: RwLock<Arc<[Registered]>>,
    next_handle: AtomicU64,
    background: Mutex<Vec<JoinHandle<()>>>,
    audit: Option<AuditLog>,
}

#[derive(Debug, Clone)]
struct Registered {
    handle: HookHandle,
    spec: HookSpec,
}

/// Names one registration, to take it back with [`HookEngine::unregister`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HookHandle(u64);

impl HookEngine {
    /// A builder; see [`HookEngineBuilder`] for the defaults.
    pub fn builder() -> HookEngineBuilder {
        HookEngineBuilder::new()
    }

    /// Add a hook. It runs after the hooks of lower priority, and after the
    /// hooks of equal priority registered before it.
    pub fn register(&self, spec: HookSpec) -> HookHandle {
        let handle = HookHandle(self.inner.next_handle.fetch_add(1, Ordering::Relaxed));
        self.update(|hooks| hooks.push(Registered { handle, spec }));
        handle
    }

    /// Remove a hook; false when it was not (or no longer) registered.
    pub fn unregister(&self, handle: HookHandle) -> bool {
        let mut found = false;
        self.update(|hooks| {
            let before = hooks.len();
            hooks.retain(|r| r.handle != handle);
            found = hooks.len() != before;
        });
        found
    }

    fn update(&self, change: impl FnOnce(&mut Vec<Registered>)) {
        let mut guard = self
            .inner
            .hooks
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let mut hooks = guard.to_vec();
        change(&mut hooks);
        // Handles grow with registration, so they keep file order among
        // equal priorities.
        hooks.sort_by_key(|r| (r.spec.priority, r.handle.0));
        *guard = Arc::from(hooks);
    }

    fn snapshot(&self) -> Arc<[Registered]> {
        self.inner
            .hooks
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Every registered hook, in the order dispatch considers them.
    pub fn hooks(&self) -> Vec<HookSpec> {
        self.snapshot().iter().map(|r| r.spec.clone()).collect()
    }

    /// Run every hook that fits `event` and fold their answers.
    ///
    /// Hooks run one after another; a `modify` answer replaces the tool
    /// input that later hooks see (a `modify_output`, on PostToolUse, the
    /// tool's output); a deny (or a failure under
    /// `on_failure: block`) stops the chain. Background hooks are started
    /// and not awaited. Never fails: a failing hook is handled by its
    /// `on_failure` policy and recorded in the trace.
    ///
    /// Takes the event by value or by reference (`&event`): it is copied
    /// only when a hook rewrites the tool's input or output.
    ///
    /// Must run inside a tokio runtime with its time and IO drivers enabled
    /// (`enable_all`): wasm deadlines use timers, command hooks processes.
    pub async fn dispatch<'e>(&self, event: impl Into<Cow<'e, Event>>) -> Outcome {
        let mut event = event.into();
        let hooks = self.snapshot();
        let mut fold = Fold::new();
        for Registered { spec: hook, .. } in hooks.iter() {
            if !hook.applies_to(&event) {
                continue;
            }
            if hook.background {
                self.start_in_background(hook, &event);
                fold.detached(hook.id.clone());
                continue;
            }
            let started = Instant::now();
            let reply = hook.handler.handle(&hook.id, &event).await;
            let elapsed = started.elapsed();
            let result = reply
                .result
                .and_then(|result| apply_rewrite(&hook.id, &mut event, result));
            let flow = match result {
                Ok(result) => fold.answer(hook.id.clone(), result, elapsed, reply.output),
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
        let outcome = fold.finish();
        if let Some(audit) = &self.inner.audit {
            audit.record_dispatch(&event, &outcome);
        }
        outcome
    }

    /// The audit log this engine appends to, if any.
    pub fn audit_log(&self) -> Option<&AuditLog> {
        self.inner.audit.as_ref()
    }

    fn start_in_background(&self, hook: &HookSpec, event: &Event) {
        let (handler, id, event) = (hook.handler.clone(), hook.id.clone(), event.clone());
        let audit = self.inner.audit.clone();
        let task = tokio::spawn(async move {
            let result = handler.handle(&id, &event).await.result;
            match &result {
                Ok(result) => {
                    tracing::info!(hook = %id, background = true, "answered {:?}", result.decision)
                }
                Err(error) => tracing::warn!(hook = %id, background = true, "{error}"),
            }
            if let Some(audit) = audit {
                audit.record(AuditEntry {
                    kind: AuditKind::Background,
                    session: event.session_id().to_owned(),
                    event: Some(event.name()),
                    hook: Some(id),
                    data: match result {
                        Ok(answer) => serde_json::json!({ "answered": answer }),
                        Err(error) => serde_json::json!({ "failed": error }),
                    },
                });
            }
        });
        let mut tasks = self
            .inner
            .background
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
    }

    /// Wait for every background hook started so far (a short-lived
    /// program calls this before it exits, so that they finish).
    pub async fn wait_for_background(&self) {
        let tasks = std::mem::take(
            &mut *self
                .inner
                .background
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for task in tasks {
            if let Err(e) = task.await {
                tracing::warn!("a background hook did not finish: {e}");
            }
        }
    }
}

/// Hand a `modify`'s new tool input, or a `modify_output`'s new tool
/// output, to the hooks after this one.
///
/// # Errors
/// A rewrite the event cannot take, as the hook's failure: a new input once
/// the tool ran (PostToolUse, PostToolUseFailure), a new output anywhere but
/// PostToolUse.
fn apply_rewrite(
    hook: &HookId,
    event: &mut Cow<'_, Event>,
    result: HookResult,
) -> Result<HookResult, HookError> {
    let name = event.name();
    let refused = match &result.decision {
        Decision::Modify { input } if !name.tool_ran() => {
            event.to_mut().set_tool_input(input.clone());
            None
        }
        Decision::Modify { .. } => Some(format!(
            "`modify` replaces the tool input, but on {name} the tool already ran (on PostToolUse, replace its output with `modify_output`)"
        )),
        Decision::ModifyOutput { output } if name.has_tool_output() => {
            event.to_mut().set_tool_response(output.clone());
            None
        }
        Decision::ModifyOutput { .. } => Some(format!(
            "`modify_output` replaces a tool's output, which {name} does not have (only PostToolUse)"
        )),
        _ => None,
    };
    match refused {
        None => Ok(result),
        Some(message) => Err(HookError::BadResult {
            hook: hook.clone(),
            message,
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex as StdMutex;
    use std::sync::atomic::AtomicUsize;

    use serde_json::json;

    use super::*;
    use crate::{Approval, EventName, EventPattern, HookResult, OnFailure, ToolMatcher, Verdict};

    fn pre_tool_use() -> EventPattern {
        EventPattern::event(EventName::PreToolUse)
    }

    fn answering(name: &str, decision: Decision) -> HookSpec {
        HookSpec::from_fn(name, pre_tool_use(), move |_| {
            let d = decision.clone();
            async move { Ok(HookResult::new(d)) }
        })
    }

    /// A hook that records the command it saw, in `seen`, then proceeds.
    fn recording(name: &str, seen: &Arc<StdMutex<Vec<String>>>) -> HookSpec {
        let seen = seen.clone();
        let name_owned = name.to_owned();
        HookSpec::from_fn(name, pre_tool_use(), move |event| {
            let command = event
                .tool_input()
                .and_then(|i| i["command"].as_str())
                .unwrap_or("")
                .to_owned();
            seen.lock().unwrap().push(format!("{name_owned}:{command}"));
            async { Ok(HookResult::new(Decision::Proceed)) }
        })
    }

    fn bash(command: &str) -> Event {
        Event::pre_tool_use("Bash", json!({ "command": command }))
    }

    fn ask() -> Decision {
        Decision::Ask(Approval {
            prompt: "sure?".into(),
            options: vec![],
            timeout_ms: None,
            default_allow: false,
        })
    }

    #[tokio::test]
    async fn hooks_run_by_priority_then_registration_order() {
        let seen = Arc::new(StdMutex::new(Vec::new()));
        let engine = HookEngine::default();
        engine.register(recording("b", &seen).with_priority(5));
        engine.register(recording("c", &seen).with_priority(5));
        engine.register(recording("a", &seen).with_priority(-1));
        engine.dispatch(bash("ls")).await;
        assert_eq!(*seen.lock().unwrap(), ["a:ls", "b:ls", "c:ls"]);
    }

    #[tokio::test]
    async fn a_deny_stops_the_chain_so_later_hooks_do_not_run() {
        let seen = Arc::new(StdMutex::new(Vec::new()));
        let engine = HookEngine::default();
        engine.register(recording("first", &seen));
        engine.register(answering(
            "deny",
            Decision::Deny {
                reason: "no".into(),
            },
        ));
        engine.register(recording("never", &seen));
        let outcome = engine.dispatch(bash("ls")).await;
        assert_eq!(
            outcome.verdict,
            Verdict::Deny {
                reason: "no".into()
            }
        );
        assert_eq!(*seen.lock().unwrap(), ["first:ls"]);
        assert_eq!(outcome.trace.len(), 2);
    }

    #[tokio::test]
    async fn a_modify_hands_the_new_input_to_the_next_hook() {
        let seen = Arc::new(StdMutex::new(Vec::new()));
        let engine = HookEngine::default();
        engine.register(answering(
            "rewrite",
            Decision::Modify {
                input: json!({"command": "ls -la"}),
            },
        ));
        engine.register(recording("after", &seen));
        let outcome = engine.dispatch(bash("ls")).await;
        assert_eq!(*seen.lock().unwrap(), ["after:ls -la"]);
        assert_eq!(outcome.updated_input, Some(json!({"command": "ls -la"})));

        // By reference: the chain sees the rewrite, the caller's event not.
        let event = bash("ls");
        let outcome = engine.dispatch(&event).await;
        assert_eq!(*seen.lock().unwrap(), ["after:ls -la", "after:ls -la"]);
        assert_eq!(outcome.updated_input, Some(json!({"command": "ls -la"})));
        assert_eq!(event.tool_input(), Some(&json!({"command": "ls"})));
    }

    #[tokio::test]
    async fn a_modify_output_hands_the_new_output_on_and_rewrites_out_of_place_fail() {
        let any = || EventPattern::parse("*").unwrap();
        let engine = HookEngine::default();
        engine.register(HookSpec::from_fn("mask", any(), |event| async move {
            let decision = match event.name() {
                EventName::PreToolUse => Decision::ModifyOutput { output: json!("x") },
                _ => Decision::ModifyOutput {
                    output: json!({"stdout": "[masked]"}),
                },
            };
            Ok(HookResult::new(decision))
        }));
        let seen = Arc::new(StdMutex::new(Vec::new()));
        engine.register(HookSpec::from_fn("after", any(), {
            let seen = seen.clone();
            move |event| {
                seen.lock().unwrap().push(event.tool_response().cloned());
                async { Ok(HookResult::new(Decision::Proceed)) }
            }
        }));
        let post = Event::post_tool_use("Bash", json!({}), json!({"stdout": "AKIA…"}));
        let outcome = engine.dispatch(&post).await;
        assert_eq!(outcome.updated_output, Some(json!({"stdout": "[masked]"})));
        assert_eq!(outcome.updated_input, None);
        assert_eq!(*seen.lock().unwrap(), [Some(json!({"stdout": "[masked]"}))]);
        assert_eq!(outcome.failures().count(), 0);

        let pre = engine.dispatch(bash("ls")).await;
        let failure = pre
            .failures()
            .next()
            .expect("modify_output before the tool ran");
        assert!(
            failure.to_string().contains("only PostToolUse"),
            "{failure}"
        );
        assert_eq!(pre.updated_output, None);

        let late = HookEngine::default();
        late.register(HookSpec::from_fn("late", any(), |_| async {
            Ok(HookResult::new(Decision::Modify {
                input: json!({"command": "ls"}),
            }))
        }));
        let outcome = late.dispatch(&post).await;
        let failure = outcome
            .failures()
            .next()
            .expect("modify after the tool ran");
        assert!(
            failure.to_string().contains("the tool already ran"),
            "{failure}"
        );
        assert_eq!(outcome.updated_input, None);
    }

    #[tokio::test]
    async fn ask_wins_over_allow_but_a_later_deny_wins_over_ask() {
        let engine = HookEngine::default();
        engine.register(answering("allow", Decision::Allow { reason: None }));
        engine.register(answering("ask", ask()));
        assert!(matches!(
            engine.dispatch(bash("ls")).await.verdict,
            Verdict::Ask(_)
        ));
        let deny = engine.register(answering(
            "deny",
            Decision::Deny {
                reason: "no".into(),
            },
        ));
        assert!(engine.dispatch(bash("ls")).await.is_denied());
        assert!(engine.unregister(deny));
        assert!(
            !engine.unregister(deny),
            "a second unregister finds nothing"
        );
        assert!(matches!(
            engine.dispatch(bash("ls")).await.verdict,
            Verdict::Ask(_)
        ));
    }

    #[tokio::test]
    async fn each_on_failure_policy_is_applied_to_a_failing_hook() {
        for (policy, denied, warned) in [
            (OnFailure::Warn, false, true),
            (OnFailure::Block, true, false),
            (OnFailure::Ignore, false, false),
        ] {
            let engine = HookEngine::default();
            engine.register(
                HookSpec::from_fn("broken", pre_tool_use(), |_| async {
                    Err("exploded".to_owned())
                })
                .with_on_failure(policy),
            );
            let outcome = engine.dispatch(bash("ls")).await;
            assert_eq!(outcome.is_denied(), denied, "{policy:?}");
            assert_eq!(!outcome.system_messages.is_empty(), warned, "{policy:?}");
            assert_eq!(outcome.trace.len(), 1, "the failure is always in the trace");
        }
    }

    #[tokio::test]
    async fn background_hooks_are_started_but_never_awaited() {
        let (release, wait) = tokio::sync::oneshot::channel::<()>();
        let wait = StdMutex::new(Some(wait));
        let finished = Arc::new(AtomicUsize::new(0));
        let done = finished.clone();
        let engine = HookEngine::default();
        engine.register(
            HookSpec::from_fn("slow-logger", pre_tool_use(), move |_| {
                let wait = wait.lock().unwrap().take();
                let done = done.clone();
                async move {
                    // Blocks until the test releases it, after dispatch returned.
                    if let Some(wait) = wait {
                        let _ = wait.await;
                    }
                    done.fetch_add(1, Ordering::SeqCst);
                    Ok(HookResult::new(Decision::Deny {
                        reason: "ignored".into(),
                    }))
                }
            })
            .in_background(),
        );
        // If dispatch awaited the hook, it would never return: the guard
        // turns that hang into a failure.
        let outcome = tokio::time::timeout(
            std::time::Duration::from_secs(30),
            engine.dispatch(bash("ls")),
        )
        .await
        .expect("dispatch must not wait for a background hook");
        assert_eq!(
            outcome.verdict,
            Verdict::Proceed,
            "a background answer takes no part"
        );
        assert!(matches!(
            outcome.trace[0].status,
            crate::TraceStatus::Detached
        ));
        assert_eq!(finished.load(Ordering::SeqCst), 0);
        release.send(()).unwrap();
        engine.wait_for_background().await;
        assert_eq!(finished.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn events_and_matchers_select_the_hooks() {
        let engine = HookEngine::default();
        engine.register(
            answering(
                "edits-only",
                Decision::Deny {
                    reason: "no edits".into(),
                },
            )
            .with_matcher(ToolMatcher::parse("Edit|Write").unwrap()),
        );
        engine.register(HookSpec::from_fn(
            "prompts",
            EventPattern::parse("prompt:submit").unwrap(),
            |_| async {
                Ok(HookResult::new(Decision::Deny {
                    reason: "no prompts".into(),
                }))
            },
        ));
        assert_eq!(engine.dispatch(bash("ls")).await.verdict, Verdict::Proceed);
        let write = Event::pre_tool_use("Write", json!({"file_path": "a"}));
        assert!(engine.dispatch(write).await.is_denied());
        let prompt = engine.dispatch(Event::user_prompt_submit("hi")).await;
        assert_eq!(
            prompt.decided_by.map(|h| h.as_str().to_owned()),
            Some("prompts".into())
        );
        assert_eq!(engine.hooks().len(), 2);
    }
}

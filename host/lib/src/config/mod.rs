//! Reading hook files into [`HookSpec`]s.
//!
//! Three shapes are read, in JSON or YAML (by the file's extension:
//! `.yaml`/`.yml`, otherwise JSON), and all become the same registry:
//!
//! - Claude Code's settings shape — a settings file's `hooks` block reads
//!   unchanged:
//!   ```json
//!   { "hooks": { "PreToolUse": [
//!       { "matcher": "Bash",
//!         "hooks": [ { "type": "wasm", "plugin": "plugins/deny.wasm",
//!                      "config": { "patterns": ["rm -rf /"] },
//!                      "limits": { "fuel": 50000000, "timeout_ms": 200 } } ] } ] } }
//!   ```
//! - profile-style YAML, hooks listed straight under their event:
//!   `hooks: { PreToolUse: [ { type: wasm, plugin: …, matcher: Bash } ] }`;
//! - a flat list whose entries name their event pattern:
//!   `{ "hooks": [ { "event": "tool:pre_execute:bash", "type": "wasm", … } ] }`.
//!
//! Event keys and `event` fields are [`EventPattern`]s. Other top-level keys
//! are left alone; unknown events, handler types and fields are errors naming
//! the file, line and column; problems found after parsing name the file and
//! the entry (`hooks.PreToolUse[0].hooks[1]`). A relative plugin path is
//! resolved against the hook file's directory. Every problem in a file is
//! reported in one pass. Running hooks is the engine's job, not this one's.

mod doc;
mod layers;
mod locate;
mod settings;

pub(crate) use layers::{default_files, merge, user_config_dir};
pub(crate) use settings::{EngineSettings, settings_files};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use self::doc::{EntryDoc, FileDoc, HandlerKind, HooksDoc};
use self::locate::Locator;
use crate::handlers::command::{CommandDefaults, CommandHook, Program};
use crate::handlers::http::{HttpHook, UrlAllowlist};
use crate::handlers::inline::InlineHook;
use crate::handlers::prompt::{PromptDefaults, PromptHook, PromptSettings, Provider};
use wasm_hooks_wasm::{
    GrantBase, Grants, Plugin, WasmHook, WasmLimits, WasmRuntime, WasmRuntimeBuilder,
};
use wasm_hooks_core::{Error, EventPattern, Handler, HookId, HookSource, HookSpec, ToolMatcher};

/// Reads hook files into [`HookSpec`]s, compiling each plugin file once
/// however many hooks use it.
pub(crate) struct Loader {
    /// The runtime (made on the first wasm hook unless one was given), the
    /// grants' base and the default limits.
    wasm: WasmSetup,
    commands: CommandDefaults,
    prompts: PromptDefaults,
    http: HttpSettings,
    plugins: HashMap<(PathBuf, Option<String>), Plugin>,
}

/// How the loader gets its wasm runtime and resolves grants.
pub(crate) struct WasmSetup {
    /// A runtime to share, if the embedder gave one.
    pub(crate) runtime: Option<WasmRuntime>,
    /// How to make one otherwise (only when a wasm hook is found).
    pub(crate) builder: WasmRuntimeBuilder,
    /// What `${PROJECT_DIR}` means in grants.
    pub(crate) project_dir: PathBuf,
    /// Default limits for every wasm hook.
    pub(crate) limits: WasmLimits,
}

/// What HTTP hooks share: the allowlist, and one client (one connection
/// pool), made when the first HTTP hook is loaded.
pub(crate) struct HttpSettings {
    pub(crate) allowlist: UrlAllowlist,
    client: Option<reqwest::Client>,
}

impl HttpSettings {
    pub(crate) fn new(allowlist: UrlAllowlist) -> Self {
        Self {
            allowlist,
            client: None,
        }
    }

    fn client(&mut self) -> Result<reqwest::Client, String> {
        if let Some(client) = &self.client {
            return Ok(client.clone());
        }
        let client = reqwest::Client::builder()
            .build()
            .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
        self.client = Some(client.clone());
        Ok(client)
    }
}

/// What one hook file holds.
#[derive(Debug, Default)]
pub(crate) struct FileHooks {
    /// Its enabled hooks, in file order, each with its identity: the same
    /// identity in two files is the same hook, and runs once.
    pub(crate) hooks: Vec<(String, HookSpec)>,
    /// Names its `enabled: false` entries switch off in lower layers.
    pub(crate) disabled: Vec<String>,
}

/// One file being read: where problems are reported, and what it yields.
struct FileRead<'a> {
    path: &'a Path,
    base: &'a Path,
    locator: Locator<'a>,
    found: FileHooks,
    errors: Vec<Error>,
}

impl FileRead<'_> {
    /// A problem with the entry or field at `entry` (a path such as
    /// `hooks.PreToolUse[0].matcher`), with its line and column when found.
    fn problem(&mut self, entry: &str, message: impl std::fmt::Display) {
        let position = self.locator.find(entry);
        self.errors.push(Error::Config {
            path: self.path.to_owned(),
            line: position.map(|p| p.0),
            column: position.map(|p| p.1),
            message: format!("{entry}: {message}"),
        });
    }

    /// A problem loading what the entry at `entry` names (its plugin).
    fn load_problem(&mut self, entry: String, source: Error) {
        let position = self.locator.find(&entry);
        self.errors.push(Error::InHookFile {
            path: self.path.to_owned(),
            line: position.map(|p| p.0),
            column: position.map(|p| p.1),
            entry,
            source: Box::new(source),
        });
    }
}

/// Parse `text` as the syntax the path's extension names, with the error's
/// position split out of its message.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, Error> {
    let yaml = matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    );
    let (message, position) = if yaml {
        match serde_norway::from_str(text) {
            Ok(doc) => return Ok(doc),
            Err(e) => (e.to_string(), e.location().map(|l| (l.line(), l.column()))),
        }
    } else {
        match serde_json::from_str(text) {
            Ok(doc) => return Ok(doc),
            Err(e) => (e.to_string(), Some((e.line(), e.column()))),
        }
    };
    let message = match position {
        Some((l, c)) => message
            .strip_suffix(&format!(" at line {l} column {c}"))
            .unwrap_or(&message)
            .to_owned(),
        None => message,
    };
    Err(Error::Config {
        path: path.to_owned(),
        line: position.map(|p| p.0),
        column: position.map(|p| p.1),
        message,
    })
}

impl Loader {
    /// A loader that sets wasm hooks up as `wasm` says, and gives the other
    /// kinds these defaults unless their entry overrides them.
    pub(crate) fn new(
        wasm: WasmSetup,
        commands: CommandDefaults,
        prompts: PromptDefaults,
        http: HttpSettings,
    ) -> Self {
        Self {
            wasm,
            commands,
            prompts,
            http,
            plugins: HashMap::new(),
        }
    }

    /// Read one hook file. Every problem found is returned, not only the
    /// first; a file with any problem yields no hooks.
    ///
    /// # Errors
    /// Each [`Error`] names the file and where in it.
    pub(crate) fn load_file(&mut self, path: &Path) -> Result<FileHooks, Vec<Error>> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            vec![Error::Config {
                path: path.to_owned(),
                line: None,
                column: None,
                message: format!("cannot read the hook file: {e}"),
            }]
        })?;
        let doc: FileDoc = parse(path, &text).map_err(|e| vec![e])?;
        let mut read = FileRead {
            path,
            base: path.parent().unwrap_or(Path::new(".")),
            locator: Locator::new(&text),
            found: FileHooks::default(),
            errors: Vec::new(),
        };
        match doc.hooks {
            HooksDoc::ByEvent(events) => {
                for (key, entries) in events {
                    for (i, entry) in entries.into_iter().enumerate() {
                        let at = format!("hooks.{}[{i}]", key.text);
                        self.by_event_entry(&mut read, entry, &key.pattern, at);
                    }
                }
            }
            HooksDoc::Flat(entries) => {
                for (i, entry) in entries.into_iter().enumerate() {
                    self.flat_entry(&mut read, entry, format!("hooks[{i}]"));
                }
            }
        }
        if read.errors.is_empty() {
            Ok(read.found)
        } else {
            Err(read.errors)
        }
    }

    /// An entry under an event key: a group (Claude Code's shape) or a hook
    /// listed straight under the event (profile style).
    fn by_event_entry(
        &mut self,
        read: &mut FileRead<'_>,
        mut entry: EntryDoc,
        events: &EventPattern,
        at: String,
    ) {
        if entry.event.is_some() {
            return read.problem(
                &at,
                "`event` belongs only in the flat list form (`\"hooks\": [...]`)",
            );
        }
        let Some(hooks) = entry.hooks.take() else {
            return self.hook(read, entry, events, None, at);
        };
        let stray = entry.hook_fields();
        if !stray.is_empty() {
            return read.problem(
                &at,
                format!(
                    "a group takes only `matcher` and `hooks`; move {} into its hooks",
                    quoted(&stray)
                ),
            );
        }
        let Some(matcher) = compile_matcher(read, &at, entry.matcher.as_deref()) else {
            return;
        };
        for (h, hook) in hooks.into_iter().enumerate() {
            if hook.hooks.is_some() || hook.matcher.is_some() || hook.event.is_some() {
                read.problem(
                    &format!("{at}.hooks[{h}]"),
                    "a hook inside a group cannot have `hooks`, `matcher` or `event`",
                );
                continue;
            }
            self.hook(
                read,
                hook,
                events,
                Some(&matcher),
                format!("{at}.hooks[{h}]"),
            );
        }
    }

    /// An entry of the flat list: a hook naming its own event pattern.
    fn flat_entry(&mut self, read: &mut FileRead<'_>, entry: EntryDoc, at: String) {
        if entry.hooks.is_some() {
            return read.problem(
                &at,
                "groups (`hooks` inside an entry) belong under an event name, not in the flat list",
            );
        }
        let Some(event) = entry.event.as_deref() else {
            return read.problem(
                &at,
                "an entry of the flat list needs `event` (an event name or pattern)",
            );
        };
        match EventPattern::parse(event) {
            Ok(events) => self.hook(read, entry, &events, None, at),
            Err(e) => read.problem(&format!("{at}.event"), e),
        }
    }

    /// One hook entry, with the group's matcher when it sits in a group (its
    /// own `matcher` otherwise).
    fn hook(
        &mut self,
        read: &mut FileRead<'_>,
        doc: EntryDoc,
        events: &EventPattern,
        group_matcher: Option<&ToolMatcher>,
        at: String,
    ) {
        if !doc.enabled {
            // A disabled entry need not be complete: `{name, enabled: false}`
            // switches off the hook of that name in lower layers.
            read.found.disabled.extend(doc.name);
            return;
        }
        let matcher = match group_matcher {
            Some(m) => m.clone(),
            None => match compile_matcher(read, &at, doc.matcher.as_deref()) {
                Some(m) => m,
                None => return,
            },
        };
        let Some(kind) = doc.kind() else {
            return read.problem(
                &at,
                "a hook needs `type` (one of wasm, command, inline, matcher, prompt, llm, http)",
            );
        };
        let allowed: &[&str] = match kind {
            HandlerKind::Wasm => &[
                "type",
                "name",
                "plugin",
                "config",
                "limits",
                "sha256",
                "allow_read",
                "allow_write",
                "env",
            ],
            HandlerKind::Command => &["type", "name", "command", "args", "working_dir", "env"],
            HandlerKind::Inline => &["type", "name", "rules"],
            HandlerKind::Matcher => &["type", "name", "match", "action", "message"],
            HandlerKind::Http => &["type", "name", "url", "headers", "allowed_env"],
            HandlerKind::Prompt => &[
                "type",
                "name",
                "prompt",
                "model",
                "provider",
                "base_url",
                "api_key_env",
                "max_tokens",
                "cache",
            ],
        };
        let stray: Vec<&str> = doc
            .hook_fields()
            .into_iter()
            .filter(|f| !allowed.contains(f))
            .collect();
        if !stray.is_empty() {
            return read.problem(
                &at,
                format!(
                    "{} does not apply to a {} hook",
                    quoted(&stray),
                    kind.as_str()
                ),
            );
        }
        if doc.timeout.is_some_and(|s| !(s.is_finite() && s > 0.0)) || doc.timeout_ms == Some(0) {
            return read.problem(&at, "`timeout` (seconds) and `timeout_ms` must be positive");
        }
        let timeout_ms = doc
            .timeout_ms
            .or_else(|| doc.timeout.map(|s| (s * 1000.0).round().max(1.0) as u64));
        let made = match kind {
            HandlerKind::Wasm => self.wasm_hook(&doc, timeout_ms, read.base),
            HandlerKind::Command => self.command_hook(&doc, timeout_ms),
            HandlerKind::Inline | HandlerKind::Matcher => inline_hook(&doc, kind),
            HandlerKind::Http => self.http_hook(&doc, timeout_ms),
            HandlerKind::Prompt => self.prompt_hook(&doc, timeout_ms),
        };
        let (handler, default_name, mut identity) = match made {
            Ok(made) => made,
            Err(HookProblem::Message(message)) => return read.problem(&at, message),
            Err(HookProblem::Load(e)) => return read.load_problem(at, e),
        };
        // What makes two entries the same hook; the name is only a label.
        identity.extend([
            ("events".to_owned(), Value::from(format!("{events:?}"))),
            ("matcher".to_owned(), Value::from(format!("{matcher:?}"))),
            ("priority".to_owned(), Value::from(doc.priority)),
            (
                "on_failure".to_owned(),
                serde_json::to_value(doc.on_failure).unwrap_or_default(),
            ),
            ("async".to_owned(), Value::from(doc.background)),
        ]);
        let spec = HookSpec {
            id: HookId::new(doc.name.unwrap_or(default_name)),
            events: events.clone(),
            matcher,
            description: doc.description,
            priority: doc.priority,
            on_failure: doc.on_failure,
            background: doc.background,
            source: HookSource::File {
                file: read.path.to_owned(),
                entry: at,
            },
            handler,
        };
        read.found
            .hooks
            .push((Value::Object(identity).to_string(), spec));
    }

    /// A wasm hook's handler, default name (the plugin's file stem) and
    /// identity.
    fn wasm_hook(
        &mut self,
        doc: &EntryDoc,
        timeout_ms: Option<u64>,
        base: &Path,
    ) -> Result<Made, HookProblem> {
        let Some(plugin) = &doc.plugin else {
            return Err(HookProblem::Message(
                "a wasm hook needs `plugin`, the path of its .wasm component".into(),
            ));
        };
        let plugin_path = base.join(plugin);
        let sha256 = match &doc.sha256 {
            None => None,
            Some(Value::String(hex))
                if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                Some(hex.to_ascii_lowercase())
            }
            Some(_) => {
                return Err(HookProblem::Message(
                    "`sha256` must be the plugin's sha256, 64 hex digits".into(),
                ));
            }
        };
        let grants = Grants::resolve(
            &string_list(&doc.allow_read, "allow_read")?,
            &string_list(&doc.allow_write, "allow_write")?,
            &string_list(&doc.env, "env")?,
            &GrantBase {
                project_dir: &self.wasm.project_dir,
                relative_to: base,
            },
        )
        .map_err(HookProblem::Message)?;
        let plugin = self
            .plugin(&plugin_path, sha256.as_deref())
            .map_err(HookProblem::Load)?;
        let mut overrides = doc.limits.unwrap_or_default();
        overrides.timeout_ms = overrides.timeout_ms.or(timeout_ms);
        let limits = self.wasm.limits.with(&overrides);
        let config = doc
            .config
            .clone()
            .unwrap_or_else(|| Value::Object(Default::default()));
        let name = plugin_path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let identity = serde_json::json!({
            "type": "wasm",
            "plugin": plugin_path.canonicalize().unwrap_or_else(|_| plugin_path.clone()),
            "sha256": sha256,
            "config": config,
            "limits": limits,
            "grants": grants.to_string(),
        });
        let hook = WasmHook::new(plugin, &config, limits).with_grants(grants);
        let handler: Arc<dyn Handler> = Arc::new(hook);
        Ok((handler, name, as_map(identity)))
    }

    /// An HTTP hook's handler, default name (the URL) and identity.
    fn http_hook(&mut self, doc: &EntryDoc, timeout_ms: Option<u64>) -> Result<Made, HookProblem> {
        let problem = |m: String| HookProblem::Message(m);
        let Some(Value::String(url)) = &doc.url else {
            return Err(problem("an http hook needs `url`, a string".into()));
        };
        let headers = string_map(&doc.headers, "headers")?;
        let allowed_env = string_list(&doc.allowed_env, "allowed_env")?;
        let client = self.http.client().map_err(problem)?;
        let hook = HttpHook::new(
            client,
            url,
            headers,
            &allowed_env,
            timeout_ms,
            &self.http.allowlist,
        )
        .map_err(problem)?;
        let identity = serde_json::json!({
            "type": "http", "url": url, "headers": doc.headers, "allowed_env": doc.allowed_env, "timeout_ms": timeout_ms,
        });
        let handler: Arc<dyn Handler> = Arc::new(hook);
        Ok((handler, url.clone(), as_map(identity)))
    }

    /// A prompt hook's handler, default name and identity.
    fn prompt_hook(
        &mut self,
        doc: &EntryDoc,
        timeout_ms: Option<u64>,
    ) -> Result<Made, HookProblem> {
        let problem = |m: String| HookProblem::Message(m);
        let text = |field: &str, v: &Option<Value>| -> Result<Option<String>, HookProblem> {
            match v {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(problem(format!("`{field}` must be a string"))),
            }
        };
        let Some(prompt) = text("prompt", &doc.prompt)? else {
            return Err(problem(
                "a prompt hook needs `prompt`, the text sent to the model".into(),
            ));
        };
        let provider = match text("provider", &doc.provider)?.as_deref() {
            None => None,
            Some("anthropic") => Some(Provider::Anthropic),
            Some("openai") => Some(Provider::OpenAi),
            Some(other) => {
                return Err(problem(format!(
                    "unknown provider `{other}` (expected anthropic or openai)"
                )));
            }
        };
        let max_tokens =
            match &doc.max_tokens {
                None => None,
                Some(v) => Some(v.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(
                    || problem("`max_tokens` must be a positive whole number".into()),
                )?),
            };
        let cache = match &doc.cache {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(problem("`cache` must be true or false".into())),
        };
        let settings = PromptSettings {
            prompt,
            provider,
            base_url: text("base_url", &doc.base_url)?,
            model: text("model", &doc.model)?,
            api_key_env: text("api_key_env", &doc.api_key_env)?,
            max_tokens,
            timeout_ms,
            cache,
        };
        let identity = serde_json::json!({
            "type": "prompt", "prompt": doc.prompt, "provider": doc.provider, "base_url": doc.base_url,
            "model": doc.model, "api_key_env": doc.api_key_env, "max_tokens": doc.max_tokens,
            "cache": doc.cache, "timeout_ms": timeout_ms,
        });
        let client = self.http.client().map_err(problem)?;
        let hook = PromptHook::new(client, settings, &self.prompts).map_err(problem)?;
        let handler: Arc<dyn Handler> = Arc::new(hook);
        Ok((handler, "prompt".to_owned(), as_map(identity)))
    }

    /// A command hook's handler, default name (the command) and identity.
    fn command_hook(&self, doc: &EntryDoc, timeout_ms: Option<u64>) -> Result<Made, HookProblem> {
        let problem = |m: &str| HookProblem::Message(m.to_owned());
        let program = match (&doc.command, &doc.args) {
            (Some(_), Some(_)) => {
                return Err(problem(
                    "give `command` (run by sh -c) or `args` (run directly), not both",
                ));
            }
            (Some(Value::String(line)), None) if !line.trim().is_empty() => {
                Program::Shell(line.clone())
            }
            (Some(_), None) => {
                return Err(problem(
                    "`command` must be a non-empty string, run by `sh -c`",
                ));
            }
            (None, Some(Value::Array(items))) if !items.is_empty() => {
                Program::Argv(string_list(&doc.args, "args")?)
            }
            (None, Some(_)) => {
                return Err(problem(
                    "`args` must be a non-empty list of strings: the program, then its arguments",
                ));
            }
            (None, None) => {
                return Err(problem(
                    "a command hook needs `command` (run by sh -c) or `args` (run directly)",
                ));
            }
        };
        let working_dir = match &doc.working_dir {
            None => None,
            Some(Value::String(dir)) => Some(PathBuf::from(dir)),
            Some(_) => return Err(problem("`working_dir` must be a string")),
        };
        let env = string_map(&doc.env, "env")?;
        let name = match &program {
            Program::Shell(line) => line.clone(),
            Program::Argv(argv) => argv.join(" "),
        };
        let identity = serde_json::json!({
            "type": "command",
            "command": doc.command,
            "args": doc.args,
            "working_dir": doc.working_dir,
            "env": doc.env,
            "timeout_ms": timeout_ms,
        });
        let hook = CommandHook::new(program, working_dir, env, timeout_ms, &self.commands)
            .map_err(HookProblem::Message)?;
        let handler: Arc<dyn Handler> = Arc::new(hook);
        Ok((handler, name, as_map(identity)))
    }

    /// The plugin at `path`, loaded once per file and pin.
    fn plugin(&mut self, path: &Path, sha256: Option<&str>) -> Result<Plugin, Error> {
        let key = (path.to_owned(), sha256.map(str::to_owned));
        if let Some(plugin) = self.plugins.get(&key) {
            return Ok(plugin.clone());
        }
        let runtime = match &self.wasm.runtime {
            Some(runtime) => runtime.clone(),
            None => {
                let runtime = self.wasm.builder.build()?;
                self.wasm.runtime = Some(runtime.clone());
                runtime
            }
        };
        let plugin = runtime.load_pinned(path, sha256)?;
        self.plugins.insert(key, plugin.clone());
        Ok(plugin)
    }
}

fn compile_matcher(
    read: &mut FileRead<'_>,
    at: &str,
    matcher: Option<&str>,
) -> Option<ToolMatcher> {
    ToolMatcher::parse(matcher.unwrap_or(""))
        .map_err(|e| {
            read.problem(
                &format!("{at}.matcher"),
                format!(
                    "not a valid regular expression: {}",
                    wasm_hooks_core::regex_error(&e)
                ),
            )
        })
        .ok()
}

/// An inline rule hook (or a profile-style matcher entry): its handler,
/// default name and identity.
fn inline_hook(doc: &EntryDoc, kind: HandlerKind) -> Result<Made, HookProblem> {
    let (hook, identity) = if kind == HandlerKind::Inline {
        let rules = doc.rules.as_ref().ok_or_else(|| {
            HookProblem::Message(
                "an inline hook needs `rules`: [{field, operator, value, action, …}]".into(),
            )
        })?;
        let hook = InlineHook::from_rules(rules).map_err(HookProblem::Message)?;
        (hook, serde_json::json!({"type": "inline", "rules": rules}))
    } else {
        let (Some(matches), Some(action)) = (&doc.match_, &doc.action) else {
            return Err(HookProblem::Message(
                "a matcher hook needs `match` ({tool, args}) and `action`".into(),
            ));
        };
        let action = action
            .as_str()
            .ok_or_else(|| HookProblem::Message("`action` must be a string".into()))?;
        let message = doc.message.as_ref().and_then(Value::as_str);
        let hook =
            InlineHook::from_matcher(matches, action, message).map_err(HookProblem::Message)?;
        (
            hook,
            serde_json::json!({"type": "matcher", "match": matches, "action": action, "message": message}),
        )
    };
    let handler: Arc<dyn Handler> = Arc::new(hook);
    Ok((handler, kind.as_str().to_owned(), as_map(identity)))
}

/// A hook's handler, its default name and its identity fields.
type Made = (Arc<dyn Handler>, String, serde_json::Map<String, Value>);

/// Why a hook entry could not be turned into a handler.
enum HookProblem {
    /// A problem with the entry itself.
    Message(String),
    /// A problem loading what it names (a plugin).
    Load(Error),
}

/// A field holding an object of string values, as pairs (none when absent).
fn string_map(value: &Option<Value>, field: &str) -> Result<Vec<(String, String)>, HookProblem> {
    let wrong = || HookProblem::Message(format!("`{field}` must map names to strings"));
    match value {
        None => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
            .collect::<Option<_>>()
            .ok_or_else(wrong),
        Some(_) => Err(wrong()),
    }
}

/// A field holding a list of strings (none when absent).
fn string_list(value: &Option<Value>, field: &str) -> Result<Vec<String>, HookProblem> {
    let wrong = || HookProblem::Message(format!("`{field}` must be a list of strings"));
    match value {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(wrong),
        Some(_) => Err(wrong()),
    }
}

fn as_map(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

fn quoted(fields: &[&str]) -> String {
    fields
        .iter()
        .map(|f| format!("`{f}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_named(name: &str, text: &str) -> Result<FileHooks, Vec<Error>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        Loader::new(
            WasmSetup {
                runtime: None,
                builder: WasmRuntime::builder(),
                project_dir: dir.path().to_owned(),
                limits: WasmLimits::default(),
            },
            CommandDefaults::default(),
            PromptDefaults::default(),
            HttpSettings::new(UrlAllowlist::default()),
        )
        .load_file(&path)
    }

    fn load(json: &str) -> Result<FileHooks, Vec<Error>> {
        load_named("hooks.json", json)
    }

    /// Loading `json` reports a problem containing `expected`.
    fn assert_problem(json: &str, expected: &str) {
        let errs = messages(json);
        assert!(
            errs.iter().any(|e| e.contains(expected)),
            "expected `{expected}` in {errs:#?}"
        );
    }

    fn messages(json: &str) -> Vec<String> {
        load(json)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn yaml_syntax_and_field_errors_carry_line_and_column() {
        let errs = load_named(
            "hooks.yaml",
            "hooks:\n  Stop:\n    - type: wasm\n      plugn: x.wasm\n",
        )
        .unwrap_err();
        let text = errs[0].to_string();
        assert!(text.contains("hooks.yaml:4:"), "{text}");
        assert!(text.contains("unknown field `plugn`"), "{text}");
        let errs = load_named("hooks.yml", "hooks: [unclosed\n").unwrap_err();
        assert!(
            matches!(errs[0], Error::Config { line: Some(_), .. }),
            "{}",
            errs[0]
        );
    }

    #[test]
    fn shapes_are_told_apart_by_structure_with_clear_errors() {
        assert_problem(
            r#"{"hooks": [{"type": "wasm", "plugin": "x.wasm"}]}"#,
            "hooks[0]: an entry of the flat list needs `event`",
        );
        assert_problem(
            r#"{"hooks": {"Stop": [{"event": "Stop", "type": "wasm"}]}}"#,
            "`event` belongs only in the flat list form",
        );
        assert_problem(
            r#"{"hooks": {"Stop": [{"type": "wasm", "hooks": []}]}}"#,
            "a group takes only `matcher` and `hooks`; move `type`",
        );
        assert_problem(
            r#"{"hooks": [{"event": "tool:pre_exeute", "type": "wasm"}]}"#,
            "hooks[0].event: unknown event `tool:pre_exeute` (did you mean `tool:pre_execute`?)",
        );
    }

    #[tokio::test]
    async fn seed_001_matcher_entries_and_seed_000_inline_rules_run() {
        let yaml = r#"
hooks:
  PreToolUse:
    - type: matcher
      match:
        tool: "Bash"
        args:
          command: "rm *"
      action: "block"
      message: "Destructive rm commands require confirmation"
    - type: matcher
      match:
        tool: "Write"
        args:
          path: "**/.env*"
      action: "block"
      message: "Cannot modify environment files"
    - type: inline
      name: npm-to-pnpm
      inline_rules:
        - {field: args.command, operator: starts_with, value: "npm ", action: modify,
           modify_field: args.command, modify_value: "pnpm install"}
"#;
        let found = load_named("profile.yaml", yaml).unwrap_or_else(|e| panic!("{e:?}"));
        let engine = crate::HookEngine::default();
        for (_, spec) in found.hooks {
            engine.register(spec);
        }
        let run =
            |tool: &str, input: Value| engine.dispatch(crate::Event::pre_tool_use(tool, input));
        let rm = run("Bash", serde_json::json!({"command": "rm -rf build"})).await;
        assert_eq!(
            rm.verdict,
            crate::Verdict::Deny {
                reason: "Destructive rm commands require confirmation".into()
            }
        );
        let env = run(
            "Write",
            serde_json::json!({"path": "config/.env.production"}),
        )
        .await;
        assert!(env.is_denied());
        let npm = run("Bash", serde_json::json!({"command": "npm i"})).await;
        assert_eq!(
            npm.updated_input,
            Some(serde_json::json!({"command": "pnpm install"}))
        );
        assert_eq!(
            run("Write", serde_json::json!({"path": "src/a.rs"}))
                .await
                .verdict,
            crate::Verdict::Proceed
        );
    }

    #[test]
    fn bad_inline_rules_are_load_errors_naming_the_entry_and_rule() {
        assert_problem(
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "inline", "rules": [
            {"field": "args.command", "operator": "regex", "value": "("}]}]}]}}"#,
            "hooks.PreToolUse[0].hooks[0]: rules[0]: bad regex",
        );
        assert_problem(
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "matcher", "action": "block"}]}]}}"#,
            "needs `match`",
        );
    }

    #[test]
    fn timeouts_must_be_positive() {
        for bad in [r#""timeout": -1"#, r#""timeout": 0"#, r#""timeout_ms": 0"#] {
            assert_problem(
                &format!(
                    r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "true", {bad}}}]}}]}}}}"#
                ),
                "must be positive",
            );
        }
        let found = load(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", "timeout": 0.0001}]}]}}"#,
        );
        assert!(found.is_ok(), "a tiny timeout rounds up to 1 ms");
    }

    #[test]
    fn prompt_entries_are_checked_at_load() {
        assert_problem(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "llm"}]}]}}"#,
            "needs `prompt`",
        );
        assert_problem(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "ok?", "provider": "gemini"}]}]}}"#,
            "unknown provider `gemini`",
        );
        assert_problem(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "{{tool_nmae}}"}]}]}}"#,
            "unknown template",
        );
    }

    #[test]
    fn seed_003_flat_commands_load_and_fields_must_fit_the_type() {
        // seed 003's flat form: no `type`, a command, `timeout` in seconds.
        let found = load(r#"{"hooks": [{"event": "tool:pre_execute:bash", "command": "echo hi", "timeout": 5.0, "enabled": true}]}"#)
            .unwrap();
        assert_eq!(found.hooks[0].1.id.as_str(), "echo hi");
        assert_problem(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", "plugin": "x.wasm"}]}]}}"#,
            "`plugin` does not apply to a command hook",
        );
        assert_problem(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}"#,
            "needs `command` (run by sh -c) or `args`",
        );
        assert_problem(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "args": ["a", 1]}]}]}}"#,
            "`args` must be a list of strings",
        );
        assert_problem(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "env": {"A": 1}}]}]}}"#,
            "`env` must map names to strings",
        );
    }

    #[test]
    fn settings_keys_other_than_hooks_are_left_alone() {
        let found = load(r#"{"permissions": {"allow": ["Bash"]}, "hooks": {}}"#).unwrap();
        assert!(found.hooks.is_empty());
    }

    #[test]
    fn unknown_events_are_errors_with_line_column_and_suggestion() {
        let errs = messages("{\"hooks\": {\n  \"PreToolUze\": []}}");
        assert_eq!(errs.len(), 1);
        assert!(errs[0].contains("hooks.json:2:"), "{}", errs[0]);
        assert!(errs[0].contains("did you mean `PreToolUse`"), "{}", errs[0]);
    }

    #[test]
    fn unknown_handler_types_and_fields_are_errors() {
        assert_problem(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "wams", "plugin": "x"}]}]}}"#,
            "unknown variant `wams`",
        );
        assert_problem(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "wasm", "plugin": "x", "limit": {}}]}]}}"#,
            "unknown field `limit`",
        );
    }

    #[test]
    fn every_bad_entry_is_reported_in_one_pass() {
        let errs = messages(
            r#"{"hooks": {"PreToolUse": [
                {"matcher": "(", "hooks": []},
                {"hooks": [{"type": "wasm", "plugin": "missing-a.wasm"},
                           {"type": "wasm", "plugin": "missing-b.wasm"}]}]}}"#,
        );
        assert_eq!(errs.len(), 3, "{errs:#?}");
        assert!(
            errs[0].contains("hooks.PreToolUse[0].matcher"),
            "{}",
            errs[0]
        );
        assert!(
            errs[1].contains("hooks.PreToolUse[1].hooks[0]") && errs[1].contains("missing-a.wasm")
        );
        assert!(
            errs[2].contains("hooks.PreToolUse[1].hooks[1]") && errs[2].contains("missing-b.wasm")
        );
        assert!(
            errs.iter()
                .all(|e| e.contains("file not found") || e.contains("regular expression"))
        );
    }

    #[test]
    fn a_wasm_hook_without_plugin_says_what_it_needs() {
        assert_problem(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "wasm"}]}]}}"#,
            "hooks.Stop[0].hooks[0]: a wasm hook needs `plugin`",
        );
    }

    #[test]
    fn disabled_hooks_are_not_loaded_at_all() {
        let found = load(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "wasm", "plugin": "missing.wasm", "enabled": false}]}]}}"#,
        )
        .unwrap();
        assert!(found.hooks.is_empty());
        assert!(
            found.disabled.is_empty(),
            "an unnamed disabled hook disables nothing else"
        );
    }

    #[test]
    fn a_named_disabled_entry_need_not_be_complete() {
        let found = load(
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"name": "guard", "enabled": false}]}]}}"#,
        )
        .unwrap();
        assert_eq!(found.disabled, ["guard"]);
    }
}

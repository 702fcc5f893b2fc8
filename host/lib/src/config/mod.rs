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
mod lints;
mod locate;
mod schema;
pub(crate) mod scope;
mod settings;

mod managed;

pub(crate) use layers::{
    EXTENSIONS, Layer, default_files, managed_files, merge, searched_files, user_config_dir,
};
pub(crate) use managed::ManagedSettings;
pub use schema::{
    AGENT_SETTINGS_SCHEMA_ID, HOOK_FILE_SCHEMA_ID, agent_settings_schema, hook_file_schema,
};
pub(crate) use scope::Scope;
pub(crate) use settings::{EngineSettings, LimitsDoc, settings_files};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use wasm_hooks_core::{
    Enforcement, Error, EventName, EventPattern, HookId, HookSource, HookSpec, OnFailure,
    PermissionRule, ToolMatcher, nearest,
};

use self::doc::{COMMON_FIELDS, EntryDoc, FILE_KEYS, FileDoc, HooksDoc, Lenient};
use self::locate::Locator;
use crate::handlers::KINDS;
use crate::handlers::kind::{
    BuildContext, Built, FieldsError, HookProblem, KindEntry, KindSettings,
};
use crate::once::{OnceHook, OnceMarks};
use crate::protocol::{argv_runs_us, runs_us};

/// Reads hook files into [`HookSpec`]s. Which kinds there are and what
/// their fields mean is the kinds' business ([`KINDS`]); this reads the
/// shapes, the fields every hook has, and picks the kind by `type`.
pub(crate) struct Loader {
    kinds: KindSettings,
    /// Which `once` hooks ran, shared by every `once` hook loaded.
    once: Arc<OnceMarks>,
    /// Whether to run the lints (`validate`, `list`, embedders), or not
    /// (`hook` and `serve`, where nobody reads their warnings).
    lint: bool,
    /// Each layer's `enforcement` where neither an entry nor its file
    /// says (the person's and the organisation's settings set their own
    /// layer's; a project's files say it themselves).
    layer_enforcement: Vec<(Scope, Enforcement)>,
}

/// What makes two entries the same hook, so that a hook in two layers runs
/// once: its kind and what the kind resolved (plugin file, limits, URL…),
/// where it applies, and how it runs. The name is only a label.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct HookIdentity {
    kind: &'static str,
    /// The kind's identity, as JSON text.
    handler: String,
    events: EventPattern,
    /// The matcher's source text.
    matcher: String,
    /// The `if` rule's text.
    condition: Option<String>,
    priority: i32,
    on_failure: OnFailure,
    enforcement: Enforcement,
    background: bool,
    once: bool,
    every_shell: bool,
}

#[cfg(test)]
impl HookIdentity {
    /// An identity that only `handler` tells apart from others.
    pub(crate) fn of_test(handler: &str) -> Self {
        Self {
            kind: "test",
            handler: handler.to_owned(),
            events: EventPattern::event(wasm_hooks_core::EventName::Stop),
            matcher: String::new(),
            condition: None,
            priority: 0,
            every_shell: true,
            on_failure: OnFailure::default(),
            enforcement: Enforcement::Enforce,
            background: false,
            once: false,
        }
    }
}

/// What one hook file holds.
#[derive(Debug, Default)]
pub(crate) struct FileHooks {
    /// Its enabled hooks, in file order.
    pub(crate) hooks: Vec<LoadedHook>,
    /// Names its `enabled: false` entries switch off in lower layers.
    pub(crate) disabled: Vec<String>,
    /// What loads but may not do what it says (see `lints`).
    pub(crate) warnings: Vec<Error>,
    /// The sha256 (hex) of the bytes read, for a project's file (trust
    /// checks those, not the file as it may be by then); `None` for the
    /// other layers, which trust does not weigh.
    pub(crate) sha256: Option<String>,
}

/// One hook as loaded from a file, with what trust needs to know of it.
#[derive(Debug)]
pub(crate) struct LoadedHook {
    /// The same identity in two files is the same hook, and runs once.
    pub(crate) identity: HookIdentity,
    /// The hook.
    pub(crate) spec: HookSpec,
    /// Its kind's `type` name.
    pub(crate) kind: &'static str,
    /// The files it runs or reads as code.
    pub(crate) executes: Vec<PathBuf>,
    /// Whether it may run in an untrusted project.
    pub(crate) sandboxed: bool,
    /// What it runs that trust cannot pin (see `handlers::runs`).
    pub(crate) unpinned: Vec<String>,
    /// For a project's hook: whether it belongs to the version of the
    /// project the person trusted, which answers while its files change
    /// (see `project_trust::hold`); set by trust, never by the file.
    pub(crate) held: bool,
}

impl LoadedHook {
    /// A hook wasm-hooks stands in a layer itself (no entry of a file):
    /// its identity is its name.
    pub(crate) fn standing_in(spec: HookSpec) -> Self {
        Self {
            identity: HookIdentity {
                kind: "wasm-hooks",
                handler: spec.id.to_string(),
                events: spec.events.clone(),
                matcher: String::new(),
                condition: None,
                priority: spec.priority,
                on_failure: spec.on_failure,
                enforcement: spec.enforcement,
                background: spec.background,
                once: false,
                every_shell: spec.every_shell,
            },
            spec,
            kind: "wasm-hooks",
            executes: Vec::new(),
            sandboxed: false,
            unpinned: Vec::new(),
            held: true,
        }
    }
}

/// One file being read: where problems are reported, and what it yields.
struct FileRead<'a> {
    path: &'a Path,
    /// Whose the file is.
    scope: Scope,
    /// What its entries that do not say are: the file's own
    /// `enforcement`, else its layer's.
    enforcement: Enforcement,
    base: &'a Path,
    locator: Locator<'a>,
    found: FileHooks,
    errors: Vec<Error>,
}

impl FileRead<'_> {
    /// Whether the file is one of wasm-hooks' own (in a `.wasm-hooks`
    /// folder), not an agent's settings file.
    fn in_wasm_hooks_folder(&self) -> bool {
        self.base.file_name().is_some_and(|d| d == ".wasm-hooks")
    }

    /// Whether the file is one of Claude Code's settings files (in a
    /// `.claude` folder).
    fn in_claude_folder(&self) -> bool {
        self.base.file_name().is_some_and(|d| d == ".claude")
    }

    /// The value, or `None` after reporting what is wrong with it (at
    /// `at`, or the place inside it).
    fn lenient<T>(&mut self, at: &str, read: Lenient<T>) -> Option<T> {
        for misread in read.misreads {
            let place = match misread.path.as_str() {
                "." => at.to_owned(),
                inside => format!("{at}.{inside}"),
            };
            self.problem(&place, misread.message);
        }
        read.value
    }

    /// A problem with the entry or field at `entry` (a path such as
    /// `hooks.PreToolUse[0].matcher`), with its line and column when found.
    fn problem(&mut self, entry: &str, message: impl std::fmt::Display) {
        let position = self.locator.find(entry);
        self.errors.push(Error::Config {
            path: self.path.to_owned(),
            line: position.map(|p| p.0),
            column: position.map(|p| p.1),
            message: format!("{entry}: {}", plain_words(&message.to_string())),
        });
    }

    /// A problem with a field of the entry at `entry` (`field` is a dotted
    /// path below it): located at the field, or the nearest part of its
    /// path that the locator finds.
    fn field_problem(&mut self, entry: &str, field: &str, message: impl std::fmt::Display) {
        let mut path = format!("{entry}.{field}");
        let position = loop {
            if let Some(found) = self.locator.find(&path) {
                break Some(found);
            }
            match path.rfind('.') {
                Some(cut) if cut > entry.len() => path.truncate(cut),
                _ => break self.locator.find(entry),
            }
        };
        self.errors.push(Error::Config {
            path: self.path.to_owned(),
            line: position.map(|p| p.0),
            column: position.map(|p| p.1),
            message: format!("{entry}: {}", plain_words(&message.to_string())),
        });
    }

    /// A lint's warning about the entry or field at `place`.
    fn warning(&mut self, place: &str, message: String) {
        let position = self.locator.find(place);
        self.found.warnings.push(Error::Config {
            path: self.path.to_owned(),
            line: position.map(|p| p.0),
            column: position.map(|p| p.1),
            message: format!("{place}: {message}"),
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

/// `message` in the words of a hook file, with a suggestion for a near
/// miss.
fn plain_words(message: &str) -> String {
    with_suggestion(&internal_names_in_words(message))
}

/// The most names an "expected one of" list shows.
const MAX_LISTED: usize = 8;

/// serde's `unknown variant `blok`, expected one of `block`, …` (or
/// `unknown field`) with the nearest expected name suggested, and a long
/// list of expected names cut short.
fn with_suggestion(message: &str) -> String {
    static UNKNOWN: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^(.*unknown (?:variant|field) `([^`]*)`), expected (?:one of )?(.*)$")
            .expect("a fixed pattern")
    });
    let Some(caps) = UNKNOWN.captures(message) else {
        return message.to_owned();
    };
    let expected: Vec<&str> = caps[3].split('`').skip(1).step_by(2).collect();
    let mut out = caps[1].to_owned();
    if let Some(near) = nearest(&caps[2], expected.iter().copied()) {
        out.push_str(&format!(" (did you mean `{near}`?)"));
    }
    let listed = quoted(&expected[..expected.len().min(MAX_LISTED)]);
    match expected.len() {
        0 => out.push_str(&format!(", expected {}", &caps[3])),
        n if n > MAX_LISTED => out.push_str(&format!(
            "; expected one of {listed}, … ({} more)",
            n - MAX_LISTED
        )),
        _ => out.push_str(&format!("; expected one of {listed}")),
    }
    out
}

/// `message` with serde's names of our types (`expected struct EntryDoc`)
/// and of Rust's (`expected u64`) put in the words of a hook file
/// (`expected a hook entry (an object)`, `expected a whole number`).
fn internal_names_in_words(message: &str) -> std::borrow::Cow<'_, str> {
    static TYPE_NAME: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"\b(struct|enum) ([A-Z][A-Za-z0-9]*)|\b(u8|u16|u32|u64|usize|i32|i64|f32|f64)\b",
        )
        .expect("a fixed pattern")
    });
    TYPE_NAME.replace_all(message, |caps: &regex::Captures<'_>| {
        if let Some(number) = caps.get(3) {
            return match number.as_str() {
                "f32" | "f64" => "a number",
                name if name.starts_with('u') => "a whole number, 0 or more",
                _ => "a whole number",
            }
            .to_owned();
        }
        match (&caps[1], &caps[2]) {
            ("struct", "EntryDoc") => "a hook entry (an object)".to_owned(),
            ("struct", "FileDoc") => "a hook file (an object)".to_owned(),
            ("struct", "LimitOverrides") => "a `limits` object".to_owned(),
            ("struct", "RuleDoc") => "a rule (an object)".to_owned(),
            ("struct", name) if name.ends_with("Settings") || name.ends_with("Doc") => {
                "a settings object".to_owned()
            }
            ("struct", _) => "an object".to_owned(),
            _ => "one of its known names".to_owned(),
        }
    })
}

/// The deepest nesting of `[` and `{` a hook or settings file may have.
/// Parsers take time that grows faster than the text with deeper nesting
/// (100 000 levels took 20 s), and `hook` parses on every event.
const MAX_NESTING: usize = 64;

/// Where `text` first nests `[`/`{` deeper than [`MAX_NESTING`] (1-based
/// line and column), outside quoted strings; a linear scan.
fn too_deep(text: &str) -> Option<(usize, usize)> {
    let (mut depth, mut line, mut column) = (0usize, 1usize, 0usize);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    // A quote opens a string only where a scalar may start (`it's` does
    // not open one).
    let mut last = '\n';
    for c in text.chars() {
        column += 1;
        if quote.is_none() && !c.is_whitespace() && !matches!(c, '"' | '\'') {
            last = c;
        }
        match (quote, c) {
            (_, '\n') => {
                line += 1;
                column = 0;
                last = '\n';
            }
            (Some('"'), '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (Some(q), c) if c == q && !escaped => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') if matches!(last, '\n' | ':' | ',' | '[' | '{' | '-' | '?') => {
                quote = Some(c);
            }
            (None, '[' | '{') => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some((line, column));
                }
            }
            (None, ']' | '}') => depth = depth.saturating_sub(1),
            _ => {}
        }
        escaped = false;
    }
    None
}

/// Parse JSON with comments (JSONC); an error with its 1-based line and
/// column.
fn jsonc<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, (String, usize, usize)> {
    jsonc_parser::parse_to_serde_value(text, &jsonc_parser::ParseOptions::default())
        .map_err(|e| (e.kind().to_string(), e.line_display(), e.column_display()))
}

/// Parse `text` as the syntax the path's extension names, with the error's
/// position split out of its message.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, Error> {
    let yaml = matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    );
    if let Some((line, column)) = too_deep(text) {
        return Err(Error::Config {
            path: path.to_owned(),
            line: Some(line),
            column: Some(column),
            message: format!(
                "nested deeper than {MAX_NESTING} levels of `[` and `{{`; no hook file needs that"
            ),
        });
    }
    // Where in the document a value was wrong (`hooks.PreToolUse[0]…`),
    // before what was wrong with it.
    // (An unknown field's path ends with the field: the place is its parent.)
    let at = |path: &serde_path_to_error::Path, message: String| {
        let mut place = path.to_string();
        let unknown = message
            .strip_prefix("unknown field `")
            .and_then(|rest| rest.split('`').next());
        if let Some(field) = unknown {
            match place.strip_suffix(&format!(".{field}")) {
                Some(parent) => place = parent.to_owned(),
                None if place == field => place = ".".to_owned(),
                None => {}
            }
        }
        if place == "." {
            message
        } else {
            format!("{place}: {message}")
        }
    };
    let (message, position) = if yaml {
        let document = serde_norway::Deserializer::from_str(text);
        match serde_path_to_error::deserialize(document) {
            Ok(doc) => return Ok(doc),
            Err(e) => (
                at(e.path(), e.inner().to_string()),
                e.inner().location().map(|l| (l.line(), l.column())),
            ),
        }
    } else {
        // The path to a failure is tracked on a second pass only (see
        // `crate::tracked`).
        if let Ok(doc) = serde_json::from_str(text) {
            return Ok(doc);
        }
        let mut document = serde_json::Deserializer::from_str(text);
        match serde_path_to_error::deserialize(&mut document) {
            Ok(doc) => return Ok(doc),
            // JSON with comments and trailing commas, as Claude Code's own
            // settings files may be (and `install` keeps them).
            Err(e) if e.inner().is_syntax() => match jsonc(text) {
                Ok(doc) => return Ok(doc),
                Err((message, line, column)) => (message, Some((line, column))),
            },
            Err(e) => (
                at(e.path(), e.inner().to_string()),
                Some((e.inner().line(), e.inner().column())),
            ),
        }
    };
    let message = match position {
        Some((l, c)) => message
            .strip_suffix(&format!(" at line {l} column {c}"))
            .unwrap_or(&message)
            .to_owned(),
        None => message,
    };
    let message = plain_words(&message);
    Err(Error::Config {
        path: path.to_owned(),
        line: position.map(|p| p.0),
        column: position.map(|p| p.1),
        message,
    })
}

/// The largest hook or settings file read (MAX_HOOK_FILE_BYTES): a file
/// of a cloned repository is read on every event, so a huge one must not
/// cost more than a look at its size.
pub(crate) const MAX_HOOK_FILE_BYTES: u64 = 1 << 20;

/// The text of the hook or settings file at `path` (`what` it is, for the
/// error), within [`MAX_HOOK_FILE_BYTES`]: a FIFO or a device is refused
/// unread.
///
/// # Errors
/// What kept it from being read, naming the file.
pub(crate) fn read_text(path: &Path, what: &str) -> Result<String, Error> {
    let problem = |message: String| Error::Config {
        path: path.to_owned(),
        line: None,
        column: None,
        message,
    };
    let bytes = wasm_hooks_core::read_regular_file(path, MAX_HOOK_FILE_BYTES).map_err(|e| {
        problem(match e {
            wasm_hooks_core::ReadRefused::TooLarge { .. } => {
                format!("cannot read {what}: {e} (MAX_HOOK_FILE_BYTES)")
            }
            e => format!("cannot read {what}: {e}"),
        })
    })?;
    String::from_utf8(bytes).map_err(|e| problem(format!("cannot read {what}: not UTF-8 ({e})")))
}

impl Loader {
    /// A loader that builds each kind of hook with these settings, and
    /// keeps which `once` hooks ran in `once`.
    pub(crate) fn new(kinds: KindSettings, once: Arc<OnceMarks>, lint: bool) -> Self {
        Self {
            kinds,
            once,
            lint,
            layer_enforcement: Vec::new(),
        }
    }

    /// This loader, giving the hooks of each layer listed the layer's
    /// `enforcement` where neither an entry nor its file says.
    pub(crate) fn with_layer_enforcement(mut self, defaults: Vec<(Scope, Enforcement)>) -> Self {
        self.layer_enforcement = defaults;
        self
    }

    /// What an entry of a `scope` file whose own `enforcement` is
    /// `file` does, when the entry says nothing.
    fn enforcement_default(&self, scope: Scope, file: Option<Enforcement>) -> Enforcement {
        file.or_else(|| {
            self.layer_enforcement
                .iter()
                .find(|(of, _)| *of == scope)
                .map(|(_, enforcement)| *enforcement)
        })
        .unwrap_or_default()
    }

    /// Read one hook file. Every problem found is returned, not only the
    /// first; a file with any problem yields no hooks.
    ///
    /// # Errors
    /// Each [`Error`] names the file and where in it.
    pub(crate) fn load_file(&mut self, path: &Path, scope: Scope) -> Result<FileHooks, Vec<Error>> {
        let text = read_text(path, "the hook file").map_err(|e| vec![e])?;
        self.load_text(path, &text, scope)
    }

    /// Read `text` as the hook file at `path` (a version of it that need
    /// not be on disk: the one the person trusted), as
    /// [`Loader::load_file`] reads the file.
    ///
    /// # Errors
    /// Each [`Error`] names the file and where in it.
    pub(crate) fn load_text(
        &mut self,
        path: &Path,
        text: &str,
        scope: Scope,
    ) -> Result<FileHooks, Vec<Error>> {
        let sha256 =
            (scope == Scope::Project).then(|| wasm_hooks_core::sha256_hex(text.as_bytes()));
        let doc: FileDoc = parse(path, text).map_err(|e| vec![e])?;
        let mut read = FileRead {
            path,
            scope,
            enforcement: self.enforcement_default(scope, doc.enforcement),
            base: path.parent().unwrap_or(Path::new(".")),
            locator: Locator::new(text),
            found: FileHooks::default(),
            errors: Vec::new(),
        };
        top_level_keys(&mut read, doc.other.keys());
        match doc.hooks {
            HooksDoc::ByEvent(events) => {
                for (key, entries) in events {
                    let at = format!("hooks.{}", key.text);
                    // Under an unknown event, the entries are still checked
                    // (as if for every event) so that one run finds all.
                    let pattern = key.pattern.unwrap_or_else(|message| {
                        read.problem(&at, message);
                        EventPattern::any()
                    });
                    let Some(entries) = read.lenient(&at, entries) else {
                        continue;
                    };
                    for (i, entry) in entries.into_iter().enumerate() {
                        let at = format!("{at}[{i}]");
                        if let Some(entry) = read.lenient(&at, entry) {
                            self.by_event_entry(&mut read, entry, &pattern, at);
                        }
                    }
                }
            }
            HooksDoc::Flat(entries) => {
                for (i, entry) in entries.into_iter().enumerate() {
                    let at = format!("hooks[{i}]");
                    if let Some(entry) = read.lenient(&at, entry) {
                        self.flat_entry(&mut read, entry, at);
                    }
                }
            }
        }
        if read.errors.is_empty() {
            Ok(FileHooks {
                sha256,
                ..read.found
            })
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
            read.problem(
                &at,
                format!(
                    "a group takes only `matcher` and `hooks`; move {} into its hooks",
                    quoted(&stray)
                ),
            );
        }
        // A bad matcher is reported; the group's hooks are still checked.
        let matcher = compile_matcher(read, &at, entry.matcher.as_deref())
            .unwrap_or_else(|| ToolMatcher::parse("").expect("the empty matcher"));
        for (h, hook) in hooks.into_iter().enumerate() {
            let Some(hook) = read.lenient(&format!("{at}.hooks[{h}]"), hook) else {
                continue;
            };
            if hook.hooks.is_some() || hook.matcher.is_some() || hook.event.is_some() {
                read.problem(
                    &format!("{at}.hooks[{h}]"),
                    "a hook inside a group cannot have `hooks`, `matcher` or `event`",
                );
                continue;
            }
            let group = Group {
                matcher: &matcher,
                text: entry.matcher.as_deref(),
                at: &at,
            };
            self.hook(read, hook, events, Some(&group), format!("{at}.hooks[{h}]"));
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
        mut doc: EntryDoc,
        events: &EventPattern,
        group: Option<&Group<'_>>,
        at: String,
    ) {
        if !doc.enabled {
            // A disabled entry need not be complete: `{name, enabled: false}`
            // switches off the hook of that name in lower layers.
            read.found.disabled.extend(doc.name);
            return;
        }
        if !read.in_wasm_hooks_folder() && runs_wasm_hooks_hook(&doc) {
            tracing::debug!(
                file = %read.path.display(),
                entry = %at,
                "skipped the entry `wasm-hooks install` wrote: it would run wasm-hooks inside itself"
            );
            return;
        }
        // Each check reports its own problem and the next still runs, so
        // that one run finds every problem of the entry.
        let matcher = match group {
            Some(g) => Some(g.matcher.clone()),
            None => compile_matcher(read, &at, doc.matcher.as_deref()),
        };
        let condition = compile_condition(read, &at, doc.condition.as_deref());
        let kind = kind_of(&doc)
            .map_err(|message| read.field_problem(&at, "type", message))
            .ok();
        let fit = kind.is_some_and(|kind| fields_fit(read, &at, kind, &doc));
        let timeout_ms = timeout_of(read, &at, &doc);
        let background_guard = doc.runs_in_background()
            && (doc.on_failure() == OnFailure::Block
                || kind.is_some_and(|k| matches!(k.name(), "inline" | "matcher")));
        if background_guard {
            read.field_problem(
                &at,
                "async",
                "a background hook never blocks: a guard (`on_failure: block`, or inline rules) must not be `async`",
            );
        }
        let (Some(matcher), Some(condition), Some(kind), true, Some(timeout_ms), false) =
            (matcher, condition, kind, fit, timeout_ms, background_guard)
        else {
            return;
        };
        let mut cx = BuildContext {
            settings: &mut self.kinds,
            base: read.base,
            timeout_ms,
            scope: read.scope,
        };
        let fields = std::mem::take(&mut doc.fields);
        let Some(mut built) = built_hook(read, &at, kind, fields, &mut cx) else {
            return;
        };
        let shape = lints::HookShape {
            events,
            matcher_text: match group {
                Some(g) => g.text,
                None => doc.matcher.as_deref(),
            },
            matcher: &matcher,
            kind: kind.name(),
            on_failure: doc.on_failure,
            background: doc.runs_in_background(),
            reads: &built.reads,
            in_claude_settings: read.in_claude_folder(),
        };
        if self.lint {
            report_lints(read, &shape, group, &at);
        }
        if doc.once {
            built.handler = Arc::new(OnceHook::new(
                built.handler,
                self.once.clone(),
                read.scope.name(),
            ));
        }
        let applies = Applies {
            events: events.clone(),
            matcher,
            condition,
        };
        read.found
            .hooks
            .push(loaded(read, doc, kind, built, applies, at));
    }
}

/// The hook an entry makes, with what trust needs to know of it; in a
/// project's file, what trust cannot pin of it is a caveat too.
fn loaded(
    read: &FileRead<'_>,
    doc: EntryDoc,
    kind: &KindEntry,
    mut built: Built,
    applies: Applies,
    at: String,
) -> LoadedHook {
    let (executes, sandboxed) = (std::mem::take(&mut built.executes), built.sandboxed);
    let unpinned = std::mem::take(&mut built.unpinned);
    if read.scope == Scope::Project {
        built.caveats.extend(
            unpinned
                .iter()
                .map(|what| format!("trust cannot pin what it runs: {what}")),
        );
    }
    let doc = EntryDoc {
        enforcement: doc.enforcement.or(Some(read.enforcement)),
        ..doc
    };
    let (spec, identity) = spec_of(doc, kind, built, applies, read.path, at);
    LoadedHook {
        identity,
        spec,
        kind: kind.name(),
        executes,
        sandboxed,
        unpinned,
        held: false,
    }
}

/// The entry's deadline in milliseconds, if it gives one: `timeout`
/// (seconds, as Claude Code) or `timeout_ms`, and for a background hook
/// `asyncTimeout` (milliseconds) before either. `None` after reporting a
/// problem.
fn timeout_of(read: &mut FileRead<'_>, at: &str, doc: &EntryDoc) -> Option<Option<u64>> {
    if doc.timeout.is_some_and(|s| !(s.is_finite() && s > 0.0))
        || doc.timeout_ms == Some(0)
        || doc.async_timeout == Some(0)
    {
        read.problem(
            at,
            "`timeout` (seconds), `timeout_ms` and `asyncTimeout` must be positive",
        );
        return None;
    }
    if doc.async_timeout.is_some() && !doc.runs_in_background() {
        read.field_problem(
            at,
            "asyncTimeout",
            "`asyncTimeout` is the deadline of a background hook: add `\"async\": true`, or use `timeout`",
        );
        return None;
    }
    Some(
        doc.async_timeout
            .or(doc.timeout_ms)
            .or_else(|| doc.timeout.map(|s| (s * 1000.0).round().max(1.0) as u64)),
    )
}

/// The hook `kind` builds of the entry at `at`, its warnings reported;
/// none after reporting why it could not.
fn built_hook(
    read: &mut FileRead<'_>,
    at: &str,
    kind: &KindEntry,
    fields: serde_json::Map<String, serde_json::Value>,
    cx: &mut BuildContext<'_>,
) -> Option<Built> {
    match (kind.build)(fields, cx) {
        Ok(mut built) => {
            for warning in std::mem::take(&mut built.warnings) {
                read.warning(at, warning);
            }
            Some(built)
        }
        Err(problem) => {
            build_problem(read, at.to_owned(), problem);
            None
        }
    }
}

/// Report why a kind could not build the entry at `at`.
fn build_problem(read: &mut FileRead<'_>, at: String, problem: FieldsError) {
    match problem {
        FieldsError::Field { path, message } => {
            read.field_problem(&at, &path, format!("`{path}`: {message}"));
        }
        FieldsError::Problem(HookProblem::Message(message)) => read.problem(&at, message),
        FieldsError::Problem(HookProblem::Fields(problems)) => {
            for (path, message) in problems {
                read.field_problem(&at, &path, format!("`{path}`: {message}"));
            }
        }
        FieldsError::Problem(HookProblem::Load(e)) => read.load_problem(at, e),
    }
}

/// Warn of each lint that applies to the hook at `at`.
fn report_lints(
    read: &mut FileRead<'_>,
    shape: &lints::HookShape<'_>,
    group: Option<&Group<'_>>,
    at: &str,
) {
    for lint in lints::lint(shape) {
        let place = match lint.place {
            lints::Place::Matcher => format!("{}.matcher", group.map_or(at, |g| g.at)),
            lints::Place::Field(field) => format!("{at}.{field}"),
        };
        read.warning(&place, lint.message);
    }
}

/// The group a hook sits in: its compiled matcher, the matcher's text and
/// where the group is.
struct Group<'a> {
    matcher: &'a ToolMatcher,
    text: Option<&'a str>,
    at: &'a str,
}

/// Where a hook applies: its events, tool matcher and `if` rule.
struct Applies {
    events: EventPattern,
    matcher: ToolMatcher,
    condition: Option<PermissionRule>,
}

/// The registered hook and its identity.
fn spec_of(
    doc: EntryDoc,
    kind: &KindEntry,
    mut built: Built,
    applies: Applies,
    file: &Path,
    entry: String,
) -> (HookSpec, HookIdentity) {
    let identity = HookIdentity {
        kind: kind.name(),
        handler: built.identity.to_string(),
        events: applies.events.clone(),
        matcher: applies.matcher.to_string(),
        condition: applies.condition.as_ref().map(ToString::to_string),
        priority: doc.priority,
        on_failure: doc.on_failure(),
        enforcement: doc.enforcement.unwrap_or_default(),
        background: doc.runs_in_background(),
        once: doc.once,
        every_shell: doc.every_shell,
    };
    let background = doc.runs_in_background();
    let on_failure = doc.on_failure();
    let mut caveats = std::mem::take(&mut built.caveats);
    if doc.async_rewake {
        caveats.push("`asyncRewake`: runs in the background like `async`, but wasm-hooks cannot wake the model later: a block from it is only logged".to_owned());
    }
    if background && applies.events.events().any(EventName::guards_action) {
        caveats.push(
            "`async`: runs in the background, so it cannot block the action its event guards"
                .to_owned(),
        );
    }
    let spec = HookSpec {
        id: HookId::new(doc.name.unwrap_or(built.default_name)),
        events: applies.events,
        matcher: applies.matcher,
        condition: applies.condition,
        every_shell: doc.every_shell,
        on_failure,
        enforcement: doc.enforcement.unwrap_or_default(),
        description: doc.description,
        priority: doc.priority,
        background,
        source: HookSource::File {
            file: file.to_owned(),
            entry,
        },
        handler: built.handler,
        trusted: true,
        from_project: false,
        caveats,
    };
    (spec, identity)
}

/// The kind an entry's `type` names, or the kind its fields imply when it
/// has none.
fn kind_of(doc: &EntryDoc) -> Result<&'static KindEntry, String> {
    let names = || KINDS.iter().flat_map(|k| k.types.iter().copied());
    match doc.kind.as_deref() {
        Some(name) => KINDS
            .iter()
            .find(|k| k.types.contains(&name))
            .ok_or_else(|| {
                let list = names().collect::<Vec<_>>().join(", ");
                match nearest(name, names()) {
                    Some(near) => format!(
                        "unknown hook type `{name}` (did you mean `{near}`? expected one of {list})"
                    ),
                    None => format!("unknown hook type `{name}` (expected one of {list})"),
                }
            }),
        None => KINDS
            .iter()
            .find(|k| k.implied_by.is_some_and(|f| doc.fields.contains_key(f)))
            .ok_or_else(|| {
                format!(
                    "a hook needs `type` (one of {})",
                    names().collect::<Vec<_>>().join(", ")
                )
            }),
    }
}

/// Whether the entry is a command hook running wasm-hooks as an agent's
/// hook (`wasm-hooks hook …` or `wasm-hooks-hook …`, as `command` or
/// `args`): the entry `wasm-hooks install` writes into agents' settings.
fn runs_wasm_hooks_hook(doc: &EntryDoc) -> bool {
    let args: Vec<&str> = doc
        .fields
        .get("args")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .map(|arg| arg.as_str().unwrap_or_default())
        .collect();
    kind_of(doc).is_ok_and(|kind| kind.name() == "command")
        && (doc.fields.get("command").is_some_and(runs_us) || argv_runs_us(args.as_slice()))
}

/// Whether every field the entry sets beyond the common ones is one of its
/// kind's; each that is not is reported where it stands, as belonging to
/// another kind or as unknown (with the nearest field it may have meant).
fn fields_fit(read: &mut FileRead<'_>, at: &str, kind: &KindEntry, doc: &EntryDoc) -> bool {
    let own = (kind.fields)();
    let mut fit = true;
    for field in doc.fields.keys().filter(|f| !own.contains(&f.as_str())) {
        fit = false;
        let elsewhere = KINDS.iter().any(|k| (k.fields)().contains(&field.as_str()));
        let message = if elsewhere {
            format!("`{field}` does not apply to a {} hook", kind.name())
        } else {
            let candidates = own.iter().chain(COMMON_FIELDS).copied();
            match nearest(field, candidates) {
                Some(near) => format!("unknown field `{field}` (did you mean `{near}`?)"),
                None => format!(
                    "unknown field `{field}`; a {} hook takes {}",
                    kind.name(),
                    quoted(own)
                ),
            }
        };
        read.field_problem(at, field, message);
    }
    fit
}

/// Report the top-level keys a hook file does not have: in a file of
/// `.wasm-hooks/`, every one; elsewhere (an agent's settings file, with
/// keys of its own, such as Claude Code's `permissions`), only a near miss
/// of `hooks`.
fn top_level_keys<'k>(read: &mut FileRead<'_>, keys: impl Iterator<Item = &'k String>) {
    let ours = read.in_wasm_hooks_folder();
    for key in keys {
        let message = match nearest(key, FILE_KEYS.iter().copied()) {
            Some(near) => format!("unknown top-level key `{key}` (did you mean `{near}`?)"),
            None if !ours => continue,
            None => format!(
                "unknown top-level key `{key}`; a hook file has {}",
                quoted(FILE_KEYS)
            ),
        };
        read.problem(key, message);
    }
}

/// The entry's `if` rule compiled (`Some(None)` without one), or `None`
/// after reporting why it does not compile.
fn compile_condition(
    read: &mut FileRead<'_>,
    at: &str,
    condition: Option<&str>,
) -> Option<Option<PermissionRule>> {
    match condition.map(PermissionRule::parse) {
        None => Some(None),
        Some(Ok(rule)) => Some(Some(rule)),
        Some(Err(message)) => {
            read.field_problem(at, "if", format!("`if`: {message}"));
            None
        }
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
            );
        })
        .ok()
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
    use serde_json::Value;

    use crate::handlers::defaults::{CommandDefaults, PromptDefaults};
    use crate::handlers::egress::{HttpSettings, UrlAllowlist};
    use crate::handlers::mcp_servers::McpServers;
    use crate::handlers::wasm_setup::WasmSetup;
    use wasm_hooks_wasm::{WasmLimits, WasmRuntime};

    #[test]
    fn l9_errors_speak_of_hook_entries_not_of_internal_types() {
        let errors = load_named("hooks.yaml", "hooks:\n  PreToolUse:\n    - [1, 2]\n").unwrap_err();
        let message = errors[0].to_string();
        assert!(
            message.contains("expected a hook entry (an object)"),
            "{message}"
        );
        assert!(!message.contains("struct"), "{message}");
        assert!(message.contains("hooks.yaml:3:"), "a position: {message}");
        // A field of the entry itself names where it is, in words.
        let bad_policy = r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "on_failure": "explode"}]}]}}"#;
        let message = load_named("hooks.json", bad_policy).unwrap_err()[0].to_string();
        assert!(
            message.contains("hooks.PreToolUse[0].hooks[0].on_failure: unknown variant `explode`"),
            "{message}"
        );
        let bad_number = "hooks:\n  PreToolUse:\n    - hooks: [{type: wasm, plugin: x.wasm, limits: {fuel: lots}}]\n";
        let message = load_named("hooks.yaml", bad_number).unwrap_err()[0].to_string();
        assert!(message.contains("a whole number, 0 or more"), "{message}");
        assert!(!message.contains("u64"), "{message}");
    }

    #[test]
    fn l1_a_deeply_nested_file_is_refused_with_its_position_without_parsing_it() {
        let deep = format!("hooks: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let errors = load_named("hooks.yaml", &deep).unwrap_err();
        let message = errors[0].to_string();
        assert!(
            message.contains("nested deeper than 64 levels"),
            "{message}"
        );
        assert!(message.contains("hooks.yaml:1:72:"), "{message}");
        let json = format!("{{\"hooks\": {}{}}}", "[".repeat(1_000), "]".repeat(1_000));
        assert!(
            load_named("hooks.json", &json).unwrap_err()[0]
                .to_string()
                .contains("nested deeper")
        );
        let quoted = format!("hooks: {{}}\nx: \"{}\"\n", "[".repeat(200));
        assert!(
            too_deep(&quoted).is_none(),
            "brackets inside a string do not nest"
        );
        let apostrophe = format!("x: it's\ny: {}\n", "[".repeat(100));
        assert!(
            too_deep(&apostrophe).is_some(),
            "an apostrophe opens no string"
        );
    }

    fn load_named(name: &str, text: &str) -> Result<FileHooks, Vec<Error>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        Loader::new(
            KindSettings {
                wasm: WasmSetup::new(
                    None,
                    WasmRuntime::builder(),
                    dir.path().to_owned(),
                    WasmLimits::default(),
                    WasmLimits::CEILINGS,
                    crate::handlers::wasm_setup::RegistryPlugins {
                        fetcher: None,
                        project_fetcher: None,
                        project_may_pull: Default::default(),
                        signed_only: false,
                    },
                ),
                commands: CommandDefaults::default(),
                prompts: PromptDefaults::default(),
                http: HttpSettings::new(UrlAllowlist::default(), Vec::new()),
                mcp: McpServers::default(),
                env: crate::RequestEnv::default(),
            },
            Arc::new(OnceMarks::new(
                Arc::new(wasm_hooks_core::MemoryStore::new()),
                "once",
            )),
            true,
        )
        .load_file(&path, Scope::User)
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
        for LoadedHook { spec, .. } in found.hooks {
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
            "`provider`: unknown variant `gemini`; expected one of `anthropic`, `openai`",
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
        assert_eq!(found.hooks[0].spec.id.as_str(), "echo hi");
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
    fn other_keys_are_left_to_an_agents_settings_but_a_wasm_hooks_file_has_only_hooks() {
        let settings = r#"{"permissions": {"allow": ["Bash"]}, "hooks": {}}"#;
        assert!(
            load_named("settings.json", settings)
                .unwrap()
                .hooks
                .is_empty()
        );
        let errors = load_named(".wasm-hooks/hooks.json", settings).unwrap_err();
        assert!(
            errors[0].to_string().contains(
                "unknown top-level key `permissions`; a hook file has `hooks`, `$schema`"
            ),
            "{}",
            errors[0]
        );
        let typo = "{\n  \"hoks\": {}}";
        for name in ["claude.json", ".wasm-hooks/hooks.json"] {
            let message = load_named(name, typo).unwrap_err()[0].to_string();
            assert!(
                message.contains(&format!(
                    "{name}:2:11: hoks: unknown top-level key `hoks` (did you mean `hooks`?)"
                )),
                "{message}"
            );
        }
    }

    #[test]
    fn our_own_entry_in_an_agents_settings_is_not_run_by_ourselves() {
        let settings = r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "wasm-hooks hook --protocol claude"},
            {"type": "command", "args": ["/opt/bin/wasm-hooks-hook", "--protocol", "claude"]},
            {"type": "command", "command": "./check.sh"}]}]}}"#;
        let found = load_named(".claude/settings.json", settings).unwrap();
        let names: Vec<&str> = found.hooks.iter().map(|h| h.spec.id.as_str()).collect();
        assert_eq!(names, ["./check.sh"]);
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
            "unknown hook type `wams` (did you mean `wasm`?",
        );
        assert_problem(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "wasm", "plugin": "x", "limit": {}}]}]}}"#,
            "unknown field `limit`",
        );
    }

    #[test]
    fn a_misspelt_field_is_located_and_gets_a_suggestion() {
        let errs = messages(
            "{\"hooks\": {\"Stop\": [{\"hooks\": [\n  {\"type\": \"http\",\n   \"url\": \"http://127.0.0.1/\", \"allowed_evn\": []}]}]}}",
        );
        assert_eq!(errs.len(), 1, "{errs:#?}");
        assert!(errs[0].contains("hooks.json:3:"), "{}", errs[0]);
        assert!(
            errs[0].contains("unknown field `allowed_evn` (did you mean `allowed_env`?)"),
            "{}",
            errs[0]
        );
        // Claude Code's spelling is an alias the kind owns.
        load(r#"{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://127.0.0.1/", "allowedEnvVars": []}]}]}}"#)
            .unwrap();
        // A nested field of the wrong shape is named by its path.
        assert_problem(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "wasm", "plugin": "x.wasm", "limits": {"fuel": "lots"}}]}]}}"#,
            "`limits.fuel`: invalid type",
        );
    }

    #[test]
    fn the_same_hook_in_two_files_has_one_identity() {
        let text = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", "name": "a"}]}]}}"#;
        let one = load(text).unwrap();
        let renamed = load(&text.replace(r#""name": "a""#, r#""name": "b""#)).unwrap();
        let slower = load(&text.replace(r#""name": "a""#, r#""timeout": 9"#)).unwrap();
        assert_eq!(one.hooks[0].identity, renamed.hooks[0].identity);
        assert_ne!(one.hooks[0].identity, slower.hooks[0].identity);
    }

    #[test]
    fn every_bad_entry_is_reported_in_one_pass() {
        let errs = messages(
            r#"{"hooks": {"PreToolUse": [
                {"matcher": "(", "hooks": []},
                {"hooks": [{"type": "wasm", "plugin": "a.wasm", "sha256": "short"},
                           {"type": "wasm", "plugin": "oci://127.0.0.1:1/b"}]}]}}"#,
        );
        assert_eq!(errs.len(), 3, "{errs:#?}");
        assert!(
            errs[0].contains("hooks.PreToolUse[0].matcher"),
            "{}",
            errs[0]
        );
        assert!(errs[1].contains("hooks.PreToolUse[1].hooks[0]") && errs[1].contains("`sha256`"));
        assert!(
            errs[2].contains("hooks.PreToolUse[1].hooks[1]") && errs[2].contains("names no tag")
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

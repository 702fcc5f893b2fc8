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

pub(crate) use layers::{default_files, merge, user_config_dir};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use self::doc::{EntryDoc, FileDoc, HandlerKind, HooksDoc};
use crate::handlers::wasm::{Plugin, WasmHook, WasmLimits, WasmRuntime};
use crate::{Error, EventPattern, HookId, HookSource, HookSpec, ToolMatcher};

/// Reads hook files into [`HookSpec`]s, compiling each plugin file once
/// however many hooks use it.
pub(crate) struct Loader {
    runtime: WasmRuntime,
    limits: WasmLimits,
    plugins: HashMap<PathBuf, Plugin>,
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
    found: FileHooks,
    errors: Vec<Error>,
}

impl FileRead<'_> {
    fn problem(&mut self, entry: &str, message: impl std::fmt::Display) {
        self.errors.push(Error::Config {
            path: self.path.to_owned(),
            line: None,
            column: None,
            message: format!("{entry}: {message}"),
        });
    }
}

/// Parse `text` as the syntax the path's extension names, with the error's
/// position split out of its message.
fn parse(path: &Path, text: &str) -> Result<FileDoc, Error> {
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
    /// A loader that compiles plugins with `runtime` and gives wasm hooks
    /// `limits` unless their entry overrides them.
    pub(crate) fn new(runtime: WasmRuntime, limits: WasmLimits) -> Self {
        Self {
            runtime,
            limits,
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
        let doc = parse(path, &text).map_err(|e| vec![e])?;
        let mut read = FileRead {
            path,
            base: path.parent().unwrap_or(Path::new(".")),
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
        if kind != HandlerKind::Wasm {
            return read.problem(
                &at,
                format!(
                    "`{}` hooks are not supported by this version yet; only `wasm` hooks run",
                    kind.as_str()
                ),
            );
        }
        let Some(plugin) = &doc.plugin else {
            return read.problem(
                &at,
                "a wasm hook needs `plugin`, the path of its .wasm component",
            );
        };
        let plugin_path = read.base.join(plugin);
        let plugin = match self.plugin(&plugin_path) {
            Ok(p) => p,
            Err(e) => {
                return read.errors.push(Error::InHookFile {
                    path: read.path.to_owned(),
                    entry: at,
                    source: Box::new(e),
                });
            }
        };
        let mut overrides = doc.limits.unwrap_or_default();
        if overrides.timeout_ms.is_none() {
            overrides.timeout_ms = doc
                .timeout_ms
                .or_else(|| doc.timeout.map(|s| (s * 1000.0).round() as u64));
        }
        let config = doc
            .config
            .unwrap_or_else(|| Value::Object(Default::default()));
        let id = doc.name.map_or_else(
            || {
                HookId::new(
                    plugin_path
                        .file_stem()
                        .unwrap_or_default()
                        .to_string_lossy(),
                )
            },
            HookId::new,
        );
        let limits = self.limits.with(&overrides);
        // What makes two entries the same hook; the name is only a label.
        let identity = serde_json::json!({
            "type": "wasm",
            "plugin": plugin_path.canonicalize().unwrap_or_else(|_| plugin_path.clone()),
            "config": config,
            "limits": limits,
            "events": format!("{events:?}"),
            "matcher": format!("{matcher:?}"),
            "priority": doc.priority,
            "on_failure": doc.on_failure,
            "async": doc.background,
        })
        .to_string();
        let spec = HookSpec {
            id,
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
            handler: Arc::new(WasmHook::new(plugin, &config, limits)),
        };
        read.found.hooks.push((identity, spec));
    }

    fn plugin(&mut self, path: &Path) -> Result<Plugin, Error> {
        if let Some(plugin) = self.plugins.get(path) {
            return Ok(plugin.clone());
        }
        let plugin = self.runtime.load(path)?;
        self.plugins.insert(path.to_owned(), plugin.clone());
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
                format!("not a valid regular expression: {e}"),
            )
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

    fn load_named(name: &str, text: &str) -> Result<FileHooks, Vec<Error>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        Loader::new(WasmRuntime::new().unwrap(), WasmLimits::default()).load_file(&path)
    }

    fn load(json: &str) -> Result<FileHooks, Vec<Error>> {
        load_named("hooks.json", json)
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
        let errs = messages(r#"{"hooks": [{"type": "wasm", "plugin": "x.wasm"}]}"#);
        assert!(
            errs[0].contains("hooks[0]: an entry of the flat list needs `event`"),
            "{}",
            errs[0]
        );
        let errs = messages(r#"{"hooks": {"Stop": [{"event": "Stop", "type": "wasm"}]}}"#);
        assert!(
            errs[0].contains("`event` belongs only in the flat list form"),
            "{}",
            errs[0]
        );
        let errs = messages(r#"{"hooks": {"Stop": [{"type": "wasm", "hooks": []}]}}"#);
        assert!(
            errs[0].contains("a group takes only `matcher` and `hooks`; move `type`"),
            "{}",
            errs[0]
        );
        let errs = messages(r#"{"hooks": [{"event": "tool:pre_exeute", "type": "wasm"}]}"#);
        assert!(
            errs[0].contains(
                "hooks[0].event: unknown event `tool:pre_exeute` (did you mean `tool:pre_execute`?)"
            ),
            "{}",
            errs[0]
        );
    }

    #[test]
    fn handler_kinds_this_version_cannot_run_are_named() {
        // seed 003's flat form: no `type`, a command.
        let errs = messages(
            r#"{"hooks": [{"event": "tool:pre_execute:bash", "command": "echo hi", "timeout": 5.0}]}"#,
        );
        assert!(
            errs[0].contains("hooks[0]: `command` hooks are not supported by this version yet"),
            "{}",
            errs[0]
        );
        let errs =
            messages(r#"{"hooks": {"Stop": [{"hooks": [{"type": "llm", "prompt": "ok?"}]}]}}"#);
        assert!(
            errs[0].contains("`prompt` hooks are not supported"),
            "{}",
            errs[0]
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
        let errs =
            messages(r#"{"hooks": {"Stop": [{"hooks": [{"type": "wams", "plugin": "x"}]}]}}"#);
        assert!(errs[0].contains("unknown variant `wams`"), "{}", errs[0]);
        let errs = messages(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "wasm", "plugin": "x", "limit": {}}]}]}}"#,
        );
        assert!(errs[0].contains("unknown field `limit`"), "{}", errs[0]);
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
        let errs = messages(r#"{"hooks": {"Stop": [{"hooks": [{"type": "wasm"}]}]}}"#);
        assert!(
            errs[0].contains("hooks.Stop[0].hooks[0]: a wasm hook needs `plugin`"),
            "{}",
            errs[0]
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

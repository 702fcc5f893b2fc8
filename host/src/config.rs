//! Reading hook files into hook specifications.
//!
//! The format is Claude Code's settings shape, so an existing settings file's
//! `hooks` block reads unchanged:
//!
//! ```json
//! { "hooks": { "PreToolUse": [
//!     { "matcher": "Bash",
//!       "hooks": [ { "type": "wasm", "plugin": "plugins/deny.wasm",
//!                    "config": { "patterns": ["rm -rf /"] },
//!                    "limits": { "fuel": 50000000, "timeout_ms": 200 } } ] } ] } }
//! ```
//!
//! Other top-level keys (a settings file's `permissions`, `env`, …) are left
//! alone; inside `hooks`, unknown events, handler types and fields are
//! errors that name the file, line and column. A relative plugin path is
//! resolved against the hook file's directory. Every problem in a file is
//! reported in one pass. This module turns files into [`HookSpec`]s; running
//! them is the engine's job.

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::handlers::wasm::{LimitOverrides, Plugin, WasmHook, WasmLimits, WasmRuntime};
use crate::{Error, EventPattern, HookId, HookSource, HookSpec, OnFailure, ToolMatcher};

#[derive(Deserialize)]
struct FileDoc {
    #[serde(default)]
    hooks: InOrder<EventKey, Vec<GroupDoc>>,
}

/// An event pattern used as a key, with its text for error messages.
struct EventKey {
    text: String,
    pattern: EventPattern,
}

impl<'de> Deserialize<'de> for EventKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let pattern = EventPattern::parse(&text).map_err(serde::de::Error::custom)?;
        Ok(Self { text, pattern })
    }
}

/// A map read in file order (hooks on different events keep their order).
struct InOrder<K, V>(Vec<(K, V)>);

impl<K, V> Default for InOrder<K, V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Deserialize<'de> for InOrder<K, V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct InOrderVisitor<K, V>(PhantomData<(K, V)>);
        impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Visitor<'de> for InOrderVisitor<K, V> {
            type Value = InOrder<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(InOrder(entries))
            }
        }
        d.deserialize_map(InOrderVisitor(PhantomData))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupDoc {
    #[serde(default)]
    matcher: Option<String>,
    hooks: Vec<HandlerDoc>,
}

/// One handler entry. The format is flat, as Claude Code's is: the fields of
/// every handler type live side by side, unknown ones are rejected with
/// their position, and [`Loader`] checks which ones the `type` needs.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HandlerDoc {
    #[serde(rename = "type")]
    kind: HandlerKind,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    priority: i32,
    #[serde(default = "enabled_default")]
    enabled: bool,
    #[serde(default)]
    on_failure: OnFailure,
    /// Seconds, as in Claude Code; for wasm hooks the same as
    /// `limits.timeout_ms / 1000`.
    #[serde(default)]
    timeout: Option<f64>,
    #[serde(rename = "async", default)]
    background: bool,
    // wasm
    #[serde(default)]
    plugin: Option<PathBuf>,
    #[serde(default)]
    config: Option<Value>,
    #[serde(default)]
    limits: LimitOverrides,
}

fn enabled_default() -> bool {
    true
}

/// The `type` of a handler entry.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum HandlerKind {
    Wasm,
}

/// Reads hook files into [`HookSpec`]s, compiling each plugin file once
/// however many hooks use it.
pub(crate) struct Loader {
    runtime: WasmRuntime,
    limits: WasmLimits,
    plugins: HashMap<PathBuf, Plugin>,
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
    pub(crate) fn load_file(&mut self, path: &Path) -> Result<Vec<HookSpec>, Vec<Error>> {
        let config_error = |line, column, message: String| Error::Config {
            path: path.to_owned(),
            line,
            column,
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| {
            vec![config_error(
                None,
                None,
                format!("cannot read the hook file: {e}"),
            )]
        })?;
        let doc: FileDoc = serde_json::from_str(&text).map_err(|e| {
            let (line, column) = (e.line(), e.column());
            let full = e.to_string();
            let message = full
                .strip_suffix(&format!(" at line {line} column {column}"))
                .unwrap_or(&full)
                .to_owned();
            vec![config_error(Some(line), Some(column), message)]
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        let mut specs = Vec::new();
        let mut errors = Vec::new();
        for (key, groups) in doc.hooks.0 {
            for (g, group) in groups.into_iter().enumerate() {
                let group_entry = format!("hooks.{}[{g}]", key.text);
                let matcher = match ToolMatcher::parse(group.matcher.as_deref().unwrap_or("")) {
                    Ok(m) => m,
                    Err(e) => {
                        errors.push(config_error(
                            None,
                            None,
                            format!("{group_entry}.matcher: not a valid regular expression: {e}"),
                        ));
                        continue;
                    }
                };
                for (h, doc) in group.hooks.into_iter().enumerate() {
                    let entry = format!("{group_entry}.hooks[{h}]");
                    match self.spec(doc, &key.pattern, &matcher, base, path, entry) {
                        Ok(Some(spec)) => specs.push(spec),
                        Ok(None) => {}
                        Err(e) => errors.push(e),
                    }
                }
            }
        }
        if errors.is_empty() {
            Ok(specs)
        } else {
            Err(errors)
        }
    }

    fn spec(
        &mut self,
        doc: HandlerDoc,
        events: &EventPattern,
        matcher: &ToolMatcher,
        base: &Path,
        file: &Path,
        entry: String,
    ) -> Result<Option<HookSpec>, Error> {
        if !doc.enabled {
            return Ok(None);
        }
        let HandlerKind::Wasm = doc.kind;
        let Some(plugin) = &doc.plugin else {
            return Err(Error::Config {
                path: file.to_owned(),
                line: None,
                column: None,
                message: format!(
                    "{entry}: a wasm hook needs `plugin`, the path of its .wasm component"
                ),
            });
        };
        let plugin_path = base.join(plugin);
        let plugin = self.plugin(&plugin_path).map_err(|e| Error::InHookFile {
            path: file.to_owned(),
            entry: entry.clone(),
            source: Box::new(e),
        })?;
        let mut overrides = doc.limits;
        if overrides.timeout_ms.is_none() {
            overrides.timeout_ms = doc.timeout.map(|s| (s * 1000.0).round() as u64);
        }
        let config = doc
            .config
            .unwrap_or_else(|| Value::Object(Default::default()));
        let id = doc.name.map_or_else(
            || {
                let stem = plugin_path.file_stem().unwrap_or_default();
                HookId::new(stem.to_string_lossy())
            },
            HookId::new,
        );
        Ok(Some(HookSpec {
            id,
            events: events.clone(),
            matcher: matcher.clone(),
            description: doc.description,
            priority: doc.priority,
            on_failure: doc.on_failure,
            background: doc.background,
            source: HookSource::File {
                file: file.to_owned(),
                entry,
            },
            handler: Arc::new(WasmHook::new(plugin, &config, self.limits.with(&overrides))),
        }))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn load(json: &str) -> Result<Vec<HookSpec>, Vec<Error>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hooks.json");
        std::fs::write(&path, json).unwrap();
        Loader::new(WasmRuntime::new().unwrap(), WasmLimits::default()).load_file(&path)
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
        let specs = load(r#"{"permissions": {"allow": ["Bash"]}, "hooks": {}}"#).unwrap();
        assert!(specs.is_empty());
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
        let specs = load(
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "wasm", "plugin": "missing.wasm", "enabled": false}]}]}}"#,
        )
        .unwrap();
        assert!(specs.is_empty());
    }
}

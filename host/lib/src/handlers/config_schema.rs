//! A wasm hook's `config` checked against the JSON Schema its plugin
//! carries (`wasm-hooks:config-schema`), so that a misspelt key or a wrong
//! type is an error at load, at the hook file's line, instead of a setting
//! the plugin silently ignores.
//!
//! The schema comes from the plugin, so it is hostile input: before it is
//! compiled it must fit [`MAX_SCHEMA_BYTES`], refer only inside itself
//! (`#/…`), hold no `$ref` cycle, and expand to at most
//! [`MAX_SCHEMA_NODES`] nodes no deeper than [`MAX_SCHEMA_DEPTH`] (a
//! validator walks the expansion, and a cycle through `allOf` / `anyOf` /
//! `not` would otherwise grow without bound); its `pattern`s use the
//! linear-time `regex` engine within [`MAX_SCHEMA_REGEX_BYTES`].

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;
use wasm_hooks_core::nearest;

/// Each problem of `config` under `schema`: where below the hook entry
/// (`config.max_subject`, `config.patterns[2]`) and what is wrong.
pub(crate) fn problems(schema: &str, config: &Value) -> Vec<(String, String)> {
    let compiled = match compiled(schema) {
        Ok(compiled) => compiled,
        Err(problem) => return vec![problem],
    };
    let (schema, validator) = &*compiled;
    let mut found = Vec::new();
    for error in validator.iter_errors(config) {
        let at = field_path(error.instance_path.as_str());
        match &error.kind {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let known = known_keys(schema, error.schema_path.as_str());
                for key in unexpected {
                    found.push((format!("{at}.{key}"), unknown_key(key, &known)));
                }
            }
            _ => found.push((at, format!("{error} (the plugin's config schema)"))),
        }
    }
    found
}

/// A schema, parsed and compiled.
type Compiled = Arc<(Value, jsonschema::Validator)>;

/// Config schemas compiled in this process, by their text: a long-running
/// host (the `hook` daemon) loads the same plugins for every event, and
/// compiling a schema costs far more than checking a config against it.
static COMPILED: LazyLock<Mutex<HashMap<String, Compiled>>> = LazyLock::new(Mutex::default);

/// Schemas kept compiled at once (past it, all are forgotten).
const MAX_COMPILED: usize = 64;

/// `schema` compiled, from [`COMPILED`] or now; or what is wrong with it.
fn compiled(schema: &str) -> Result<Compiled, (String, String)> {
    let lock = || COMPILED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(compiled) = lock().get(schema) {
        return Ok(compiled.clone());
    }
    let (value, validator) = parse_bounded(schema).map_err(plugin_problem)?;
    let compiled = Arc::new((value, validator));
    let mut all = lock();
    if all.len() >= MAX_COMPILED {
        all.clear();
    }
    all.insert(schema.to_owned(), compiled.clone());
    Ok(compiled)
}

/// What is wrong with a plugin's config schema, as the end of a sentence
/// ("is not JSON: …").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigSchemaError(String);

/// `text` as a compact JSON Schema, or what is wrong with it.
///
/// # Errors
/// When it is not JSON, not a valid JSON Schema, or past a limit.
pub fn check_config_schema(text: &str) -> Result<String, ConfigSchemaError> {
    let (schema, _) = parse_bounded(text).map_err(ConfigSchemaError)?;
    Ok(schema.to_string())
}

/// The most bytes a config schema may have.
pub(crate) const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// The most nodes (objects, arrays, values) a config schema may expand to,
/// every `$ref` replaced by what it refers to.
pub(crate) const MAX_SCHEMA_NODES: u64 = 10_000;
/// The deepest a config schema may nest, every `$ref` expanded.
pub(crate) const MAX_SCHEMA_DEPTH: usize = 64;
/// The most bytes one `pattern` of a config schema may compile to.
pub(crate) const MAX_SCHEMA_REGEX_BYTES: usize = 1024 * 1024;

/// `text` parsed, checked against the limits, and compiled; or what is
/// wrong with it, as the end of a sentence ("is not JSON: …").
fn parse_bounded(text: &str) -> Result<(Value, jsonschema::Validator), String> {
    if text.len() > MAX_SCHEMA_BYTES {
        return Err(format!(
            "is {} bytes, more than the limit of {MAX_SCHEMA_BYTES} (MAX_SCHEMA_BYTES)",
            text.len()
        ));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| format!("is not JSON: {e}"))?;
    Expansion::new(&value).size(&value, 0)?;
    let patterns = jsonschema::PatternOptions::regex()
        .size_limit(MAX_SCHEMA_REGEX_BYTES)
        .dfa_size_limit(MAX_SCHEMA_REGEX_BYTES);
    let validator = jsonschema::options()
        .with_pattern_options(patterns)
        .build(&value)
        .map_err(|e| format!("is not a valid JSON Schema: {e}"))?;
    Ok((value, validator))
}

/// How far a schema expands with every `$ref` replaced by its target:
/// counted once per node (memoised), refusing cycles and references
/// outside the schema, so that hostile schemas are refused in time linear
/// in their size.
struct Expansion<'a> {
    root: &'a Value,
    /// Nodes being expanded (`None`) or expanded (their size and
    /// height), by address.
    seen: HashMap<*const Value, Option<(u64, usize)>>,
}

impl<'a> Expansion<'a> {
    fn new(root: &'a Value) -> Self {
        Self {
            root,
            seen: HashMap::new(),
        }
    }

    /// The nodes `node` expands to, or why it is refused.
    /// The nodes `node` expands to and how deep (itself included), met at
    /// `depth`; or why it is refused.
    fn size(&mut self, node: &'a Value, depth: usize) -> Result<(u64, usize), String> {
        let too_deep = || {
            format!(
                "nests deeper than {MAX_SCHEMA_DEPTH} levels with its `$ref`s expanded (MAX_SCHEMA_DEPTH)"
            )
        };
        if depth > MAX_SCHEMA_DEPTH {
            return Err(too_deep());
        }
        let key: *const Value = node;
        match self.seen.get(&key) {
            // Met again, maybe deeper than before: its own height counts.
            Some(Some((_, height))) if depth + height > MAX_SCHEMA_DEPTH + 1 => {
                return Err(too_deep());
            }
            Some(Some(expanded)) => return Ok(*expanded),
            Some(None) => {
                return Err("has a `$ref` cycle (a schema may not refer to itself)".to_owned());
            }
            None => {}
        }
        self.seen.insert(key, None);
        let mut size: u64 = 1;
        let mut height = 1;
        let children: Vec<&'a Value> = match node {
            Value::Object(map) => {
                for keyword in ["$dynamicRef", "$recursiveRef"] {
                    if map.contains_key(keyword) {
                        return Err(format!("uses `{keyword}`, which is not supported"));
                    }
                }
                if !std::ptr::eq(node, self.root) && map.get("$id").is_some_and(Value::is_string) {
                    return Err("sets `$id` below its root, which is not supported".to_owned());
                }
                let mut children: Vec<&'a Value> = map.values().collect();
                if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                    children.push(self.target(reference)?);
                }
                children
            }
            Value::Array(items) => items.iter().collect(),
            _ => Vec::new(),
        };
        for child in children {
            let (nodes, below) = self.size(child, depth + 1)?;
            size = size.saturating_add(nodes);
            height = height.max(below + 1);
            if size > MAX_SCHEMA_NODES {
                return Err(format!(
                    "expands to more than {MAX_SCHEMA_NODES} nodes with its `$ref`s replaced (MAX_SCHEMA_NODES)"
                ));
            }
        }
        self.seen.insert(key, Some((size, height)));
        Ok((size, height))
    }

    /// What a `$ref` refers to: only `#` or a JSON pointer `#/…` inside
    /// the schema.
    fn target(&self, reference: &str) -> Result<&'a Value, String> {
        let cut: String = reference.chars().take(80).collect();
        let shown = wasm_hooks_core::escape_controls(&cut);
        let pointer = reference
            .strip_prefix('#')
            .filter(|p| (p.is_empty() || p.starts_with('/')) && !p.contains('%'))
            .ok_or_else(|| {
                format!(
                    "has `$ref: {shown}`; only references inside the schema (`#/…`) are supported"
                )
            })?;
        self.root
            .pointer(pointer)
            .ok_or_else(|| format!("has `$ref: {shown}`, which refers to nothing in the schema"))
    }
}

/// A problem with the schema itself, which is the plugin's doing.
fn plugin_problem(what: String) -> (String, String) {
    (
        "plugin".to_owned(),
        format!("the config schema the plugin carries {what}"),
    )
}

/// `config` and the JSON pointer below it as a hook-file path.
fn field_path(pointer: &str) -> String {
    let mut path = "config".to_owned();
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if segment.bytes().all(|b| b.is_ascii_digit()) && !segment.is_empty() {
            path.push_str(&format!("[{segment}]"));
        } else {
            path.push('.');
            path.push_str(&segment);
        }
    }
    path
}

/// The keys the object schema that refused an extra key names (its
/// `properties`), found from the refusing keyword's schema path.
fn known_keys(schema: &Value, keyword_path: &str) -> Vec<String> {
    let parent = keyword_path
        .rsplit_once('/')
        .map_or("", |(parent, _)| parent);
    schema
        .pointer(parent)
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

fn unknown_key(key: &str, known: &[String]) -> String {
    let listed = known
        .iter()
        .take(8)
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match nearest(key, known.iter().map(String::as_str)) {
        Some(near) => format!(
            "unknown key `{key}` (did you mean `{near}`?); the plugin's config takes {listed}"
        ),
        None if known.is_empty() => format!("unknown key `{key}`: the plugin's config takes none"),
        None => format!("unknown key `{key}`; the plugin's config takes {listed}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SCHEMA: &str = r#"{"type": "object", "additionalProperties": false,
        "properties": {"max_subject": {"type": "integer", "minimum": 10},
                       "types": {"type": "array", "items": {"type": "string"}}}}"#;

    #[test]
    fn a_misspelt_key_gets_its_place_and_the_near_name() {
        let found = problems(SCHEMA, &json!({"max_subjct": 60}));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "config.max_subjct");
        assert!(
            found[0].1.contains("did you mean `max_subject`?"),
            "{found:?}"
        );
    }

    #[test]
    fn every_wrong_value_is_named_at_its_place() {
        let found = problems(SCHEMA, &json!({"max_subject": 3, "types": ["feat", 7]}));
        let places: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            places,
            ["config.max_subject", "config.types[1]"],
            "{found:?}"
        );
        assert!(problems(SCHEMA, &json!({"max_subject": 60})).is_empty());
    }

    /// A schema whose definitions refer to each other through `keyword`.
    fn cycle_through(keyword: &str) -> String {
        json!({"$defs": {
            "a": {keyword: [{"$ref": "#/$defs/b"}, {"$ref": "#/$defs/b"}]},
            "b": {keyword: [{"$ref": "#/$defs/a"}]}},
            "$ref": "#/$defs/a"})
        .to_string()
    }

    #[test]
    fn a_config_schema_bomb_with_a_ref_cycle_is_refused_before_it_is_compiled() {
        for keyword in ["allOf", "anyOf", "oneOf"] {
            let found = problems(&cycle_through(keyword), &json!({"x": 1}));
            assert_eq!(found[0].0, "plugin", "{keyword}: {found:?}");
            assert!(found[0].1.contains("`$ref` cycle"), "{keyword}: {found:?}");
        }
        let not = json!({"$defs": {"a": {"not": {"$ref": "#/$defs/a"}}}, "$ref": "#/$defs/a"});
        let found = problems(&not.to_string(), &json!(1));
        assert!(found[0].1.contains("`$ref` cycle"), "{found:?}");
        assert!(check_config_schema(&cycle_through("allOf")).is_err());
    }

    #[test]
    fn a_config_schema_that_expands_exponentially_meets_its_node_limit() {
        // Each definition refers to the one before it twice: 2^30 nodes.
        let mut defs = serde_json::Map::new();
        defs.insert("d0".into(), json!({"type": "object"}));
        for i in 1..30 {
            let before = format!("#/$defs/d{}", i - 1);
            defs.insert(
                format!("d{i}"),
                json!({"allOf": [{"$ref": before}, {"$ref": before}]}),
            );
        }
        let schema = json!({"$defs": defs, "$ref": "#/$defs/d29"}).to_string();
        let found = problems(&schema, &json!({}));
        assert!(found[0].1.contains("MAX_SCHEMA_NODES"), "{found:?}");
    }

    #[test]
    fn a_definition_met_shallow_first_still_counts_its_depth_when_met_deep() {
        // `deep` is expanded first under `$defs` (shallow enough), then
        // referred to from the end of a chain as deep again.
        let nest = |inner: Value| (0..20).fold(inner, |v, _| json!({"allOf": [v]}));
        let schema = json!({"$defs": {"deep": nest(json!({"type": "object"}))},
            "properties": {"x": nest(json!({"$ref": "#/$defs/deep"}))}});
        let found = problems(&schema.to_string(), &json!({}));
        assert!(found[0].1.contains("MAX_SCHEMA_DEPTH"), "{found:?}");
    }

    #[test]
    fn a_config_schema_may_not_refer_outside_itself_or_be_too_large() {
        let outside = json!({"$ref": "https://example.invalid/s.json"}).to_string();
        assert!(
            problems(&outside, &json!({}))[0]
                .1
                .contains("only references inside")
        );
        let big = format!("{{\"description\": \"{}\"}}", "x".repeat(MAX_SCHEMA_BYTES));
        assert!(problems(&big, &json!({}))[0].1.contains("MAX_SCHEMA_BYTES"));
        // A shared definition used twice is no cycle.
        let shared = json!({"$defs": {"s": {"type": "string"}},
            "properties": {"a": {"$ref": "#/$defs/s"}, "b": {"$ref": "#/$defs/s"}}});
        assert!(problems(&shared.to_string(), &json!({"a": "x", "b": "y"})).is_empty());
        assert!(!problems(&shared.to_string(), &json!({"a": 1})).is_empty());
    }

    #[test]
    fn a_broken_schema_is_the_plugins_problem() {
        let found = problems("{nope", &json!({}));
        assert_eq!(found[0].0, "plugin");
        assert!(found[0].1.contains("is not JSON"), "{found:?}");
    }
}

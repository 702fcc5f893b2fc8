//! A wasm hook's `config` checked against the JSON Schema its plugin
//! carries (`wasm-hooks:config-schema`), so that a misspelt key or a wrong
//! type is an error at load, at the hook file's line, instead of a setting
//! the plugin silently ignores.

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
    let value: Value =
        serde_json::from_str(schema).map_err(|e| plugin_problem(format!("is not JSON: {e}")))?;
    let validator = jsonschema::validator_for(&value)
        .map_err(|e| plugin_problem(format!("is not a valid JSON Schema: {e}")))?;
    let compiled = Arc::new((value, validator));
    let mut all = lock();
    if all.len() >= MAX_COMPILED {
        all.clear();
    }
    all.insert(schema.to_owned(), compiled.clone());
    Ok(compiled)
}

/// `text` as a compact JSON Schema, or what is wrong with it.
///
/// # Errors
/// When it is not JSON or not a valid JSON Schema.
pub fn check_config_schema(text: &str) -> Result<String, String> {
    let schema: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    jsonschema::validator_for(&schema).map_err(|e| format!("not a valid JSON Schema: {e}"))?;
    Ok(schema.to_string())
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

    #[test]
    fn a_broken_schema_is_the_plugins_problem() {
        let found = problems("{nope", &json!({}));
        assert_eq!(found[0].0, "plugin");
        assert!(found[0].1.contains("is not JSON"), "{found:?}");
    }
}

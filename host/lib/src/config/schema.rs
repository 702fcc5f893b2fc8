//! The JSON Schema of a hook file, made from the types that read it: the
//! fields every hook has (`EntryDoc`) and each kind's own fields (each
//! kind's entry struct), so that editors complete and check
//! `.wasm-hooks/hooks.json`. `wasm-hooks schema` prints it; the copy in
//! `schemas/hooks.schema.json` is checked against it by a test.

use serde_json::{Map, Value, json};
use wasm_hooks_core::CATALOGUE;

use super::doc::EntryDoc;
use crate::handlers::KINDS;

/// The other spellings serde reads (`#[serde(alias)]`, which schemars does
/// not see), and the field each stands for. The schema test reads Claude
/// Code–style files that use them.
const ALIASES: &[(&str, &str)] = &[
    ("onFailure", "on_failure"),
    ("inline_rules", "rules"),
    ("allowedEnvVars", "allowed_env"),
    ("continueOnBlock", "continue_on_block"),
];

/// Where a hook entry sits, which decides the fields it may have.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Inside a group: no `matcher`, no `event`.
    InGroup,
    /// Straight under an event (profile style): its own `matcher`.
    UnderEvent,
    /// In the flat list: its own `event` and `matcher`.
    Flat,
}

/// The hook file schema, as JSON.
pub fn hook_file_schema() -> Value {
    let mut defs = Map::new();
    let common = properties_of(
        serde_json::to_value(schemars::schema_for!(EntryDoc)).unwrap_or_default(),
        &mut defs,
    );
    let kinds: Vec<(Vec<&str>, Map<String, Value>)> = KINDS
        .iter()
        .map(|k| (k.types.to_vec(), properties_of((k.schema)(), &mut defs)))
        .collect();
    let hook = |place: Place| {
        let variants: Vec<Value> = kinds
            .iter()
            .map(|(types, own)| hook_variant(&common, types, own, place))
            .collect();
        json!({ "anyOf": variants })
    };
    let group = json!({
        "type": "object",
        "description": "A group: a matcher and the hooks it applies to.",
        "properties": {
            "matcher": common.get("matcher").cloned().unwrap_or(json!({"type": "string"})),
            "hooks": { "type": "array", "items": hook(Place::InGroup) },
        },
        "required": ["hooks"],
        "additionalProperties": false,
    });
    let event_names: Vec<&str> = CATALOGUE
        .iter()
        .flat_map(|(name, aliases)| std::iter::once(name.as_str()).chain(aliases.iter().copied()))
        .collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "wasm-hooks hook file",
        "description": "Hooks for AI coding agents' events: `wasm-hooks validate` checks a file, `wasm-hooks explain` shows what it does.",
        "type": "object",
        "properties": {
            "$schema": { "type": "string" },
            "hooks": {
                "anyOf": [
                    {
                        "type": "object",
                        "description": "Hooks by event: an event name, an alias, a glob (`tool:*`), a tool suffix (`tool:pre_execute:bash`) or a comma list.",
                        "propertyNames": {
                            "anyOf": [
                                { "enum": event_names },
                                { "type": "string", "pattern": "[*:,]" }
                            ]
                        },
                        "additionalProperties": {
                            "type": "array",
                            "items": { "anyOf": [group, hook(Place::UnderEvent)] }
                        }
                    },
                    { "type": "array", "items": hook(Place::Flat) }
                ]
            }
        },
        "additionalProperties": false,
        "$defs": defs,
    })
}

/// One kind's hook entry: the common fields that fit `place`, the kind's
/// own, and `type` naming the kind.
fn hook_variant(
    common: &Map<String, Value>,
    types: &[&str],
    own: &Map<String, Value>,
    place: Place,
) -> Value {
    let mut properties: Map<String, Value> = common
        .iter()
        .filter(|(name, _)| match name.as_str() {
            "hooks" => false,
            "event" => place == Place::Flat,
            "matcher" => place != Place::InGroup,
            _ => true,
        })
        .map(|(name, schema)| (name.clone(), schema.clone()))
        .collect();
    properties.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
    for (alias, field) in ALIASES {
        if let Some(schema) = properties.get(*field).cloned() {
            properties.insert((*alias).to_owned(), schema);
        }
    }
    properties.insert(
        "type".to_owned(),
        json!({ "enum": types, "description": "The kind of hook." }),
    );
    let mut variant = json!({
        "type": "object",
        "title": format!("a {} hook", types[0]),
        "properties": properties,
        "additionalProperties": false,
    });
    if place == Place::Flat {
        variant["required"] = json!(["event"]);
    }
    variant
}

/// The `properties` of an object schema, its `$defs` moved into `defs`.
fn properties_of(mut schema: Value, defs: &mut Map<String, Value>) -> Map<String, Value> {
    if let Some(Value::Object(found)) = schema.get_mut("$defs").map(Value::take) {
        defs.extend(found);
    }
    match schema.get_mut("properties").map(Value::take) {
        Some(Value::Object(properties)) => properties,
        _ => Map::new(),
    }
}

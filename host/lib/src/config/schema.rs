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

/// Where the hook file schema lives: its stable `$id`.
pub const HOOK_FILE_SCHEMA_ID: &str =
    "https://raw.githubusercontent.com/wasm-hooks/wasm-hooks/main/schemas/hooks.schema.json";

/// Where the schema of an agent's settings file (its `hooks` key) lives.
pub const AGENT_SETTINGS_SCHEMA_ID: &str = "https://raw.githubusercontent.com/wasm-hooks/wasm-hooks/main/schemas/agent-settings.schema.json";

/// The hook file schema, as JSON.
pub fn hook_file_schema() -> Value {
    let (hooks, defs) = hooks_schema();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": HOOK_FILE_SCHEMA_ID,
        "title": "wasm-hooks hook file",
        "description": "Hooks for AI coding agents' events: `wasm-hooks validate` checks a file, `wasm-hooks explain` shows what it does.",
        "type": "object",
        "properties": {
            "$schema": { "type": "string" },
            "enforcement": {
                "description": "Whether this file's hooks are acted on (`enforce`, the default), told the person only (`warn`) or only recorded (`dryrun`), where an entry does not say.",
                "enum": ["enforce", "warn", "dryrun"],
            },
            "hooks": hooks,
        },
        "additionalProperties": false,
        "$defs": defs,
    })
}

/// The schema of an agent's settings file (Claude Code's
/// `.claude/settings.json`, Codex's `.codex/hooks.json`, Gemini CLI's
/// `.gemini/settings.json`) as wasm-hooks reads it: its `hooks` key checked
/// as in a hook file, every other key of the agent's left alone.
pub fn agent_settings_schema() -> Value {
    let (hooks, defs) = hooks_schema();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": AGENT_SETTINGS_SCHEMA_ID,
        "title": "An agent's settings file, its `hooks` as wasm-hooks reads them",
        "description": "Only `hooks` is checked; the agent's other keys (`env`, `permissions`, …) are its own.",
        "type": "object",
        "properties": { "hooks": hooks },
        "$defs": defs,
    })
}

/// One kind, for the schema: its `type` names, the field that implies it
/// without a `type`, and its own fields.
type KindSchema<'a> = (Vec<&'a str>, Option<&'a str>, Map<String, Value>);

/// The schema of the `hooks` key (by event, or a flat list), and the
/// definitions it refers to.
fn hooks_schema() -> (Value, Map<String, Value>) {
    let mut defs = Map::new();
    let common = properties_of(
        serde_json::to_value(schemars::schema_for!(EntryDoc)).unwrap_or_default(),
        &mut defs,
    );
    let kinds: Vec<KindSchema<'_>> = KINDS
        .iter()
        .map(|k| {
            let own = properties_of((k.schema)(), &mut defs);
            (k.types.to_vec(), k.implied_by, own)
        })
        .collect();
    let hook = |place: Place| hook_by_type(&common, &kinds, place);
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
    let entries = json!({
        "type": "array",
        "items": {
            "if": { "type": "object", "required": ["hooks"] },
            "then": group,
            "else": hook(Place::UnderEvent),
        }
    });
    defs.insert("event_entries".to_owned(), entries);
    let entries = json!({ "$ref": "#/$defs/event_entries" });
    // Each event name and alias, described; a pattern (a glob, a tool
    // suffix, a comma list) is checked by its shape.
    let mut names = Vec::new();
    let mut properties = Map::new();
    for (event, aliases) in CATALOGUE {
        let canonical = event.as_str();
        names.push(canonical);
        properties.insert(
            canonical.to_owned(),
            json!({ "description": event.description(), "$ref": "#/$defs/event_entries" }),
        );
        for alias in *aliases {
            names.push(alias);
            properties.insert(
                (*alias).to_owned(),
                json!({
                    "description": format!("`{canonical}` (another name): {}", event.description()),
                    "$ref": "#/$defs/event_entries",
                }),
            );
        }
    }
    let hooks = json!({
        "if": { "type": "array" },
        "then": { "type": "array", "items": hook(Place::Flat) },
        "else": {
            "type": "object",
            "description": "Hooks by event: an event name, an alias, a glob (`tool:*`), a tool suffix (`PreToolUse:Bash`) or a comma list.",
            "properties": properties,
            "propertyNames": {
                "if": { "pattern": "[*?,]" },
                "then": { "type": "string" },
                "else": {
                    "if": { "pattern": format!("^(?:{}):[^:]+$", names.join("|")) },
                    "then": { "type": "string" },
                    "else": { "enum": names },
                },
            },
            "additionalProperties": entries,
        },
    });
    (hooks, defs)
}

/// A hook entry, checked as the kind its `type` names (a kind implied by
/// a field when there is no `type`), so that a mistake is reported at its
/// field, not as "not valid under any of the given schemas".
fn hook_by_type(common: &Map<String, Value>, kinds: &[KindSchema<'_>], place: Place) -> Value {
    let all: Vec<&str> = kinds
        .iter()
        .flat_map(|(types, _, _)| types.clone())
        .collect();
    let mut branches: Vec<Value> = kinds
        .iter()
        .map(|(types, _, own)| {
            json!({
                "if": { "properties": { "type": { "enum": types } }, "required": ["type"] },
                "then": hook_variant(common, types, own, place),
            })
        })
        .collect();
    let implied: Vec<&str> = kinds.iter().filter_map(|(_, field, _)| *field).collect();
    for (types, field, own) in kinds {
        if let Some(field) = field {
            branches.push(json!({
                "if": { "not": { "required": ["type"] }, "required": [field] },
                "then": hook_variant(common, types, own, place),
            }));
        }
    }
    let either: Vec<Value> = std::iter::once("type")
        .chain(implied)
        .map(|field| json!({ "required": [field] }))
        .collect();
    branches.push(json!({ "anyOf": either }));
    json!({
        "type": "object",
        "properties": { "type": { "enum": all, "description": "The kind of hook." } },
        "allOf": branches,
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

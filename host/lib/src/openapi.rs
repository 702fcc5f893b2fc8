//! The OpenAPI document `serve` publishes at `GET /v1/openapi.json`: its
//! endpoints, and the neutral API's shapes — the canonical event a
//! program sends to `POST /v1/decide` and the whole [`Outcome`] it gets
//! back, generated from the types that serialize it (so the document
//! cannot drift from the answers).

use serde_json::{Value, json};
use wasm_hooks_core::{CATALOGUE, Outcome};

/// The document (OpenAPI 3.1, whose schemas are JSON Schema 2020-12).
pub(crate) fn document() -> Value {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.definitions_path = "/components/schemas".into();
            // What the answers are written as (these types are never read).
            settings.contract = schemars::generate::Contract::Serialize;
        })
        .into_generator();
    let outcome = generator.subschema_for::<Outcome>();
    let mut schemas = generator.take_definitions(true);
    schemas.insert("Event".into(), event_schema());
    let json_body = |schema: Value| json!({"application/json": {"schema": schema}});
    let event = json!({"$ref": "#/components/schemas/Event"});
    let outcome = serde_json::to_value(outcome).unwrap_or_default();
    let loopback = "Not for a web page: a request with an `Origin`, or a `Host` that is not the server's, is refused (403, 421).";
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "wasm-hooks serve",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The hooks engine over HTTP: agents' HTTP hooks post to `/hook` in their own dialect; any other program posts the canonical event to `/v1/decide` and gets the whole outcome. Neither ever answers with a refusal: a request no hook runs for (too large, not an event, no token, from a web page) gets a 200 with a deny saying why."
        },
        "security": [{"bearer": []}],
        "paths": {
            "/v1/decide": {"post": {
                "summary": "Decide an event: the canonical event in, the whole outcome out",
                "operationId": "decide",
                "requestBody": {"required": true, "content": json_body(event)},
                "responses": {"200": {
                    "description": "The folded outcome of every hook that fits the event (a deny, with the reason, when none could run)",
                    "content": json_body(outcome),
                }},
            }},
            "/hook": {"post": {
                "summary": "An agent's HTTP hook: the event and the answer in the dialect `serve --protocol` names",
                "operationId": "hook",
                "requestBody": {"required": true, "content": json_body(json!({"type": "object"}))},
                "responses": {"200": {
                    "description": "The answer the agent obeys (an empty object: no opinion)",
                    "content": json_body(json!({"type": "object"})),
                }},
            }},
            "/health": {"get": {
                "summary": "Liveness",
                "operationId": "health",
                "security": [],
                "description": loopback,
                "responses": {"200": {"description": "`{\"status\": \"ok\", \"hooks\": N, \"not_ready\": M}`"}},
            }},
            "/ready": {"get": {
                "summary": "Readiness: every project built from its files as they are",
                "operationId": "ready",
                "security": [],
                "description": loopback,
                "responses": {
                    "200": {"description": "`{\"status\": \"ready\"}`"},
                    "503": {"description": "Each project that is not, and why"},
                },
            }},
            "/metrics": {"get": {
                "summary": "Prometheus metrics (OpenMetrics when asked for)",
                "operationId": "metrics",
                "responses": {"200": {"description": "The metrics"}, "401": {"description": "No token, or the wrong one"}},
            }},
            "/v1/openapi.json": {"get": {
                "summary": "This document",
                "operationId": "openapi",
                "security": [],
                "description": loopback,
                "responses": {"200": {"description": "The OpenAPI document"}},
            }},
        },
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {
                "type": "http",
                "scheme": "bearer",
                "description": "The token `serve --token-env VAR` names (none with `--no-token`)"
            }},
        },
    })
}

/// The canonical event record: its name in the catalogue (or an alias),
/// the fields every event has, and whatever else the event carries (each
/// field reaches the hooks).
fn event_schema() -> Value {
    let names: Vec<&str> = CATALOGUE
        .iter()
        .flat_map(|(name, aliases)| std::iter::once(name.as_str()).chain(aliases.iter().copied()))
        .collect();
    json!({
        "type": "object",
        "description": "An event in the catalogue's words (docs/protocol.md). Every field reaches the hooks; missing `session_id`, `timestamp` and `cwd` are filled in.",
        "required": ["hook_event_name"],
        "properties": {
            "hook_event_name": {"type": "string", "enum": names},
            "session_id": {"type": "string"},
            "timestamp": {"type": "string", "description": "RFC 3339"},
            "cwd": {"type": "string", "description": "The directory the agent works in: its project's hooks answer"},
            "tool_name": {"type": "string", "description": "Claude Code's names: `Bash`, `Write`, `Edit`, `Read`, `mcp__<server>__<tool>`…"},
            "tool_input": {"type": "object"},
            "tool_response": {},
            "prompt": {"type": "string"},
            "stop_hook_active": {"type": "boolean"},
            "last_assistant_message": {"type": "string"},
        },
        "additionalProperties": true,
    })
}

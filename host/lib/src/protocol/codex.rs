//! Codex's command hooks: Claude Code's format, read as Codex sends it and
//! answered in Codex's dialect of it ([`claude::Dialect::Codex`]: no `ask`,
//! no bare `allow`), with Codex's own events and what it does with their
//! answers (observed against the real binaries: `tests/fixtures/codex-0.169/`,
//! `tests/fixtures/codex-0.171/README.md`).
//!
//! Codex 0.171 added `PreModelRequest` and `PostModelRequest`, run around
//! every model request (and each retry: `request_id`, `attempt_number`,
//! `kind`, `thread_id`; after it `status`, `error`, `token_usage`,
//! `response_id`). Codex acts on no answer to them (it only logs one), so a
//! hook there observes; one that denies is told so on stderr.

use super::facts::{AgentFacts, HookFile, SettingsShape};
use serde_json::Value;
use wasm_hooks_core::{Event, EventError, EventName, Outcome, Verdict};

use super::Answer;
use super::claude::{self, Dialect};

/// Codex's events by its own names, as `install codex` writes them: every
/// one it has but `Interrupt`, which only reports.
pub(super) const EVENTS: &[&str] = &[
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "PostCompact",
    "PreModelRequest",
    "PostModelRequest",
];

/// Codex's name of the event after a model request; the catalogue's is
/// [`EventName::PostModelResponse`].
const POST_MODEL_REQUEST: &str = "PostModelRequest";

/// Events whose answers Codex does not act on (0.171: logged only).
const ANSWERS_IGNORED: &[EventName] = &[EventName::PreModelRequest, EventName::PostModelResponse];

/// Read Codex's event: the catalogue's names for its own (its name kept
/// in `agent_event_name`), and after a model request the `tokens` it used
/// (`token_usage.total_tokens`), as the catalogue's `PostModelResponse`
/// has them.
///
/// # Errors
/// When it is not an event record.
pub(super) fn decode(value: Value) -> Result<Event, EventError> {
    let Value::Object(mut record) = value else {
        return Event::from_agent_json(value);
    };
    if record.get("hook_event_name").and_then(Value::as_str) == Some(POST_MODEL_REQUEST) {
        record.insert("agent_event_name".into(), POST_MODEL_REQUEST.into());
        record.insert(
            "hook_event_name".into(),
            EventName::PostModelResponse.as_str().into(),
        );
        if let Some(total) = record
            .get("token_usage")
            .and_then(|usage| usage.get("total_tokens"))
            .cloned()
        {
            record.entry("tokens").or_insert(total);
        }
    }
    Event::from_agent_json(Value::Object(record))
}

/// The answer in Codex's dialect; where Codex acts on no answer, a
/// decision other than going on is said on stderr, never lost silently.
pub(super) fn encode(event: &Event, outcome: &Outcome) -> Answer {
    let mut answer = claude::encode(event, outcome, Dialect::Codex);
    if ANSWERS_IGNORED.contains(&event.name()) && outcome.verdict != Verdict::Proceed {
        let name = event
            .record()
            .get("agent_event_name")
            .and_then(Value::as_str)
            .unwrap_or(event.name().as_str());
        answer.stderr.push(format!(
            "wasm-hooks: Codex acts on no answer to {name} (it only logs it): the hooks' {} is not enforced there",
            outcome.verdict.word()
        ));
    }
    answer
}

/// The command entry `install` writes (Codex has no setting that makes a
/// failure block).
fn command_entry(command: &str, _event: &str, _guards: bool) -> Vec<(&'static str, Value)> {
    vec![
        ("type", "command".into()),
        ("command", command.into()),
        ("timeout", super::settings::AGENT_TIMEOUT_SECS.into()),
    ]
}

/// What wasm-hooks knows of Codex as a program (see [`AgentFacts`]).
pub(super) const FACTS: AgentFacts = AgentFacts {
    name: "Codex",
    program: "codex",
    driven: "0.171",
    settings: ".codex/hooks.json",
    local_settings: None,
    user_settings: ".codex/hooks.json",
    user_settings_variable: Some(("CODEX_HOME", "hooks.json")),
    events: EVENTS,
    entries_fail_closed: false,
    next_step: (
        "next: Codex runs a project's hooks only in a trusted project, and each hook only once you trust it: start `codex` here, trust the project, and trust the wasm-hooks entries in `/hooks` (by hash: again after any change)",
        "next: Codex runs each hook only once you trust it: start `codex` and trust the wasm-hooks entries in `/hooks` (by hash: again after any change)",
    ),
    unguarded: None,
    importable: true,
    http_hooks: false,
    hook_file: Some(HookFile {
        shape: SettingsShape::Grouped {
            tool_events: &["PreToolUse", "PermissionRequest", "PostToolUse"],
        },
        command_entry,
    }),
};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture(name: &str) -> Value {
        let path = format!(
            "{}/../../tests/fixtures/codex-0.171/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn codex_0_171s_model_request_events_are_read_with_every_field() {
        let pre = decode(fixture("PreModelRequest")).unwrap();
        assert_eq!(pre.name(), EventName::PreModelRequest);
        assert_eq!(pre.record()["attempt_number"], 1);
        assert_eq!(pre.record()["kind"], "sampling");
        let post = decode(fixture("PostModelRequest")).unwrap();
        assert_eq!(post.name(), EventName::PostModelResponse);
        assert_eq!(post.record()["agent_event_name"], "PostModelRequest");
        assert_eq!(post.record()["tokens"], 15);
        assert_eq!(
            post.record()["response_id"],
            "resp_635319be3eb94cc6b1edc225"
        );
        assert_eq!(pre.record()["request_id"], post.record()["request_id"]);
        let failed = decode(
            json!({"hook_event_name": "PostModelRequest", "status": "failed",
            "token_usage": null, "error": "Connection failed"}),
        )
        .unwrap();
        assert!(failed.record().get("tokens").is_none());
    }
}

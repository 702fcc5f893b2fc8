//! Property tests (proptest, on stable, a fixed budget of cases each): no
//! input an agent, a hook or a hook file can give makes the engine panic.
//! Each decoder, parser and encoder gets arbitrary JSON or text and must
//! answer or refuse.

use proptest::prelude::*;
use serde_json::{Map, Value};
use wasm_hooks_core::{CATALOGUE, Event, EventName, Outcome};

use crate::engine::HookEngine;
use crate::handlers::answer;
use crate::protocol::Protocol;

/// Cases per property: enough to find the shallow panics in CI's time.
const CASES: u32 = 256;

/// Any JSON value, a few levels deep.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,24}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{0,12}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// The agents' own names of events, which their adapters rename.
const AGENT_NAMES: &[&str] = &[
    "preToolUse",
    "agentStop",
    "userPromptSubmitted",
    "permissionRequest",
    "beforeShellExecution",
    "beforeMCPExecution",
    "stop",
    "tool.execute.before",
    "tool.execute.after",
    "chat.message",
    "session.idle",
];

/// An event record: a known (or unknown) name and arbitrary fields.
fn event_record() -> impl Strategy<Value = Value> {
    let names: Vec<&'static str> = CATALOGUE
        .iter()
        .map(|(e, _)| e.as_str())
        .chain(AGENT_NAMES.iter().copied())
        .collect();
    (
        prop_oneof![
            prop::sample::select(names).prop_map(str::to_owned),
            "[A-Za-z]{1,12}"
        ],
        prop::collection::btree_map(
            prop_oneof![
                Just("tool_name".to_owned()),
                Just("tool_input".to_owned()),
                Just("tool_response".to_owned()),
                Just("cwd".to_owned()),
                Just("session_id".to_owned()),
                Just("toolArgs".to_owned()),
                Just("toolName".to_owned()),
                Just("input".to_owned()),
                Just("output".to_owned()),
                Just("event".to_owned()),
                Just("loop_count".to_owned()),
                "[a-z_]{1,10}"
            ],
            json(),
            0..6,
        ),
    )
        .prop_map(|(name, fields)| {
            let mut record: Map<String, Value> = fields.into_iter().collect();
            record.insert("hook_event_name".into(), Value::from(name));
            Value::Object(record)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn every_protocol_decodes_or_refuses_any_json(value in json()) {
        for protocol in Protocol::ALL {
            let _ = protocol.decode(value.clone());
        }
    }

    #[test]
    fn every_protocol_answers_any_event_it_decoded(record in event_record()) {
        for protocol in Protocol::ALL {
            if let Ok((sender, event)) = protocol.read(record.clone()) {
                let answer = sender.encode(&event, &Outcome::proceed());
                prop_assert!(answer.exit_code == 0);
            }
        }
    }

    #[test]
    fn any_text_on_a_hooks_stdout_is_an_answer_or_a_failure(text in ".{0,200}", json in json()) {
        for event in [EventName::PreToolUse, EventName::PostToolUse, EventName::PermissionRequest] {
            let _ = answer::on_success(event, &text);
            let _ = answer::on_success(event, &json.to_string());
        }
    }

    #[test]
    fn any_hook_file_loads_or_names_its_problems(hooks in json(), yaml in ".{0,300}") {
        let dir = tempfile::tempdir().unwrap();
        let json_file = dir.path().join("hooks.json");
        std::fs::write(&json_file, serde_json::json!({"hooks": hooks}).to_string()).unwrap();
        let yaml_file = dir.path().join("hooks.yaml");
        std::fs::write(&yaml_file, yaml).unwrap();
        for file in [json_file, yaml_file] {
            if let Err(e) = HookEngine::builder().hook_file(&file).build() {
                prop_assert!(!e.errors.is_empty());
            }
        }
    }
}

#[test]
fn an_event_from_any_agent_reaches_the_engine_whole() {
    // A sanity anchor for the properties above: a decoded event keeps its
    // fields.
    let event =
        Event::from_agent_json(serde_json::json!({"hook_event_name": "Stop", "x": 1})).unwrap();
    assert_eq!(event.record()["x"], 1);
}

//! Property tests of the WIT conversions (proptest, on stable, a fixed
//! budget of cases each): whatever a plugin answers, converting it into the
//! host's result answers or refuses and never panics, and keeps what it
//! carries; whatever event the agent sends crosses into the WIT record
//! whole. The strategies here serve each version's module.

use proptest::prelude::*;
use serde_json::{Map, Value};
use wasm_hooks_core::{CATALOGUE, Decision, Event, EventName};

use super::v0_2::{WitOutcome, wire_event, wit};

/// Cases per property, as in the host crate's properties.
pub(crate) const CASES: u32 = 256;

/// Any JSON value, a few levels deep.
pub(crate) fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        ".{0,16}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// Text a plugin might put where JSON is expected: JSON of any shape, or
/// anything at all.
pub(crate) fn json_or_not() -> impl Strategy<Value = String> {
    prop_oneof![json().prop_map(|v| v.to_string()), ".{0,32}"]
}

/// Any event name the host knows, or one it does not.
pub(crate) fn event_name() -> impl Strategy<Value = EventName> {
    let names: Vec<EventName> = CATALOGUE.iter().map(|(e, _)| *e).collect();
    prop::sample::select(names)
}

fn decision() -> impl Strategy<Value = wit::Decision> {
    prop_oneof![
        Just(wit::Decision::Proceed),
        proptest::option::of(".{0,16}").prop_map(wit::Decision::Allow),
        ".{0,16}".prop_map(wit::Decision::Deny),
        (
            ".{0,16}",
            prop::collection::vec(".{0,8}", 0..3),
            proptest::option::of(any::<u32>()),
            any::<bool>()
        )
            .prop_map(|(prompt, options, timeout_ms, default_allow)| {
                wit::Decision::Ask(wit::Approval {
                    prompt,
                    options,
                    timeout_ms,
                    default_allow,
                })
            }),
        json_or_not().prop_map(wit::Decision::Modify),
        json_or_not().prop_map(wit::Decision::ModifyOutput),
    ]
}

fn outcome() -> impl Strategy<Value = wit::Outcome> {
    (
        decision(),
        proptest::option::of(".{0,16}"),
        proptest::option::of(".{0,16}"),
        proptest::option::of(".{0,16}"),
        any::<bool>(),
        proptest::option::of(json_or_not()),
    )
        .prop_map(
            |(decision, context, system_message, stop, suppress_output, metadata)| wit::Outcome {
                decision,
                context: context.map(|text| wit::Context {
                    text,
                    role: wit::Role::System,
                }),
                user_message: system_message
                    .clone()
                    .map(|text| (wit::Severity::Warning, text)),
                system_message,
                stop,
                suppress_output,
                metadata,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn any_answer_converts_or_is_refused_and_keeps_what_it_carries(outcome in outcome()) {
        let not_json = |text: &str| serde_json::from_str::<Value>(text).is_err();
        // Refused exactly when a rewrite or the metadata is not JSON, or
        // `modify` replaces the input with anything but an object.
        let refusable = match &outcome.decision {
            wit::Decision::Modify(text) => {
                serde_json::from_str::<Value>(text).map_or(true, |v| !v.is_object())
            }
            wit::Decision::ModifyOutput(text) => not_json(text),
            _ => false,
        } || outcome.metadata.as_deref().is_some_and(not_json);
        let context = outcome.context.as_ref().map(|c| c.text.clone());
        let stop = outcome.stop.clone();
        let wire = WitOutcome(outcome);
        let size = wire.size();
        match wire.into_result() {
            Ok(result) => {
                prop_assert!(!refusable);
                prop_assert!(size >= context.as_ref().map_or(0, String::len));
                prop_assert_eq!(result.context.map(|c| c.text), context);
                prop_assert_eq!(result.stop, stop);
                if let Decision::Modify { input } = &result.decision {
                    prop_assert!(input.is_object());
                }
            }
            Err(why) => {
                prop_assert!(refusable, "refused: {}", why);
            }
        }
    }

    #[test]
    fn any_event_crosses_into_the_wit_record_whole(
        name in event_name(),
        fields in prop::collection::btree_map("[a-z_]{1,10}", json(), 0..5),
    ) {
        let mut record: Map<String, Value> = fields.into_iter().collect();
        record.insert("hook_event_name".into(), Value::from(name.as_str()));
        // Events the host refuses never reach a plugin; too many refused
        // cases would fail the property rather than pass it empty.
        let event = Event::from_json(Value::Object(record));
        prop_assume!(event.is_ok());
        let event = event.unwrap();
        let wire = wire_event(&event);
        prop_assert_eq!(wire.name.as_str(), event.name().as_str());
        prop_assert_eq!(wire.session_id.as_str(), event.session_id());
        prop_assert_eq!(wire.cwd.as_deref(), event.cwd());
        prop_assert_eq!(wire.tool_name.as_deref(), event.tool_name());
        let payload: Value = serde_json::from_str(&wire.payload).unwrap();
        prop_assert_eq!(&payload, &Value::Object(event.record().clone()));
    }
}

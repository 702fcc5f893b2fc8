//! WIT `wasm-hooks:hook@0.1.x` (0.1.1), kept so that plugins built against
//! it go on running: its generated bindings, its `host` and `kv` interfaces
//! (served by the newest version's code), and the conversion of its answers
//! into the newest version's ([`latest`]). 0.1.x has one `modify`: on
//! PostToolUse it is read as the tool's new output, which is what every
//! 0.1.x plugin that answers it there means (before 0.2.0 the host did so).

use wasm_hooks_core::{Event, EventName};

use super::state::HostState;
use super::v0_2 as latest;

mod generated {
    wasmtime::component::bindgen!({
        path: "wit/0.1.1",
        world: "hook",
        exports: { default: async },
    });
}

use generated::wasm_hooks::hook::{host, kv, types as wit};
pub(crate) use generated::{Hook, HookPre};

/// The WIT package this module implements.
pub(crate) const WIT_PACKAGE: &str = "wasm-hooks:hook@0.1.1";

/// Add this version's `host` and `kv` interfaces to a linker.
pub(crate) fn add_to_linker(
    linker: &mut wasmtime::component::Linker<HostState>,
) -> wasmtime::Result<()> {
    generated::Hook::add_to_linker::<_, wasmtime::component::HasSelf<_>>(linker, |s| s)
}

/// Call `handle` of an instance once, and give the answer in the newest
/// version's form. The outer error is a trap; the inner one the plugin's
/// own `err`.
pub(crate) async fn handle(
    hook: &Hook,
    store: &mut wasmtime::Store<HostState>,
    event: &Event,
) -> wasmtime::Result<Result<latest::WitOutcome, String>> {
    let latest::wit::Event {
        name,
        session_id,
        timestamp,
        cwd,
        tool_name,
        payload,
    } = latest::wire_event(event);
    let wire = wit::Event {
        name,
        session_id,
        timestamp,
        cwd,
        tool_name,
        payload,
    };
    let answer = hook
        .wasm_hooks_hook_handler()
        .call_handle(&mut *store, &wire)
        .await?;
    Ok(answer.map(|outcome| upgrade(outcome, event.name())))
}

/// A 0.1.x answer as a 0.2.0 one: the same fields, and `modify` on an event
/// with a tool output as `modify-output`.
fn upgrade(o: wit::Outcome, event: EventName) -> latest::WitOutcome {
    use latest::wit as new;
    let decision = match o.decision {
        wit::Decision::Proceed => new::Decision::Proceed,
        wit::Decision::Allow(reason) => new::Decision::Allow(reason),
        wit::Decision::Deny(reason) => new::Decision::Deny(reason),
        wit::Decision::Ask(a) => new::Decision::Ask(new::Approval {
            prompt: a.prompt,
            options: a.options,
            timeout_ms: a.timeout_ms,
            default_allow: a.default_allow,
        }),
        wit::Decision::Modify(json) if event.has_tool_output() => new::Decision::ModifyOutput(json),
        wit::Decision::Modify(json) => new::Decision::Modify(json),
    };
    latest::WitOutcome(new::Outcome {
        decision,
        context: o.context.map(|c| new::Context {
            text: c.text,
            role: match c.role {
                wit::Role::System => new::Role::System,
                wit::Role::User => new::Role::User,
                wit::Role::Assistant => new::Role::Assistant,
            },
        }),
        user_message: o.user_message.map(|(severity, text)| {
            let severity = match severity {
                wit::Severity::Info => new::Severity::Info,
                wit::Severity::Warning => new::Severity::Warning,
                wit::Severity::Error => new::Severity::Error,
            };
            (severity, text)
        }),
        system_message: o.system_message,
        stop: o.stop,
        suppress_output: o.suppress_output,
        metadata: o.metadata,
    })
}

impl wit::Host for HostState {}

impl host::Host for HostState {
    fn log(&mut self, level: wit::Level, message: String) {
        let level = match level {
            wit::Level::Trace => latest::wit::Level::Trace,
            wit::Level::Debug => latest::wit::Level::Debug,
            wit::Level::Info => latest::wit::Level::Info,
            wit::Level::Warn => latest::wit::Level::Warn,
            wit::Level::Error => latest::wit::Level::Error,
        };
        latest::log(self, level, message);
    }

    fn config(&mut self) -> String {
        self.config.to_string()
    }
}

impl kv::Host for HostState {
    fn get(&mut self, key: String) -> Option<String> {
        self.kv_get(&key)
    }

    fn set(&mut self, key: String, value: String) -> Result<(), String> {
        self.kv_set(key, value)
    }
}

#[cfg(test)]
mod tests {
    use wasm_hooks_core::Decision;

    use super::*;
    use crate::properties;

    fn answer(decision: wit::Decision) -> wit::Outcome {
        wit::Outcome {
            decision,
            context: None,
            user_message: Some((wit::Severity::Warning, "careful".into())),
            system_message: None,
            stop: None,
            suppress_output: false,
            metadata: None,
        }
    }

    #[test]
    fn a_0_1_modify_is_the_new_output_after_the_tool_and_the_input_before() {
        let after = upgrade(
            answer(wit::Decision::Modify(r#"{"stdout":"***"}"#.into())),
            EventName::PostToolUse,
        );
        assert_eq!(
            after.into_result().unwrap().decision,
            Decision::ModifyOutput {
                output: serde_json::json!({"stdout": "***"})
            }
        );
        let before = upgrade(
            answer(wit::Decision::Modify(r#"{"command":"ls"}"#.into())),
            EventName::PreToolUse,
        )
        .into_result()
        .unwrap();
        assert_eq!(
            before.decision,
            Decision::Modify {
                input: serde_json::json!({"command": "ls"})
            }
        );
        assert_eq!(before.user_message.unwrap().text, "careful");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(properties::CASES))]

        /// Any 0.1 answer, on any event, upgrades and then converts or is
        /// refused, never panics; a `modify` becomes the output's rewrite
        /// exactly on events with a tool output.
        #[test]
        fn any_0_1_answer_upgrades_then_converts_or_is_refused(
            text in properties::json_or_not(),
            event in properties::event_name(),
        ) {
            let upgraded = upgrade(answer(wit::Decision::Modify(text)), event);
            let is_output = matches!(
                upgraded.0.decision,
                latest::wit::Decision::ModifyOutput(_)
            );
            proptest::prop_assert_eq!(is_output, event.has_tool_output());
            let _ = upgraded.into_result();
        }
    }

    #[test]
    fn the_package_constant_matches_the_wit_file() {
        let wit = include_str!("../wit/0.1.1/hook.wit");
        assert!(wit.contains(&format!("package {WIT_PACKAGE};")));
    }
}

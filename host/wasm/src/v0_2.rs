//! WIT `wasm-hooks:hook@0.2.0`, the newest: the generated bindings, the
//! host's side of its interfaces, and the conversions between its types and
//! the host's [`Event`] and [`HookResult`]. Generated types never leave the
//! version modules; an older version's module (`v0_1`) converts its
//! plugins' answers into this one's.

use serde_json::Value;

use super::state::HostState;
use wasm_hooks_core::{
    Approval, Context, Decision, Event, HookResult, Role, Severity, UserMessage, escape_controls,
};

mod generated {
    wasmtime::component::bindgen!({
        path: "wit/0.2.0",
        world: "hook",
        exports: { default: async },
    });
}

pub(crate) use generated::wasm_hooks::hook::types as wit;
use generated::wasm_hooks::hook::{host, kv};
pub(crate) use generated::{Hook, HookPre};

/// The WIT package this module implements.
pub(crate) const WIT_PACKAGE: &str = "wasm-hooks:hook@0.2.0";

/// Add this version's `host` and `kv` interfaces to a linker.
pub(crate) fn add_to_linker(
    linker: &mut wasmtime::component::Linker<HostState>,
) -> wasmtime::Result<()> {
    generated::Hook::add_to_linker::<_, wasmtime::component::HasSelf<_>>(linker, |s| s)
}

/// Call `handle` of an instance once. The outer error is a trap; the
/// inner one the plugin's own `err`.
pub(crate) async fn handle(
    hook: &Hook,
    store: &mut wasmtime::Store<HostState>,
    event: &Event,
) -> wasmtime::Result<Result<WitOutcome, String>> {
    let answer = hook
        .wasm_hooks_hook_handler()
        .call_handle(&mut *store, &wire_event(event))
        .await?;
    Ok(answer.map(WitOutcome))
}

/// The event as this version's record.
pub(crate) fn wire_event(event: &Event) -> wit::Event {
    wit::Event {
        name: event.name().as_str().to_owned(),
        session_id: event.session_id().to_owned(),
        timestamp: event.timestamp().to_owned(),
        cwd: event.cwd().map(str::to_owned),
        tool_name: event.tool_name().map(str::to_owned),
        payload: event.to_json_string(),
    }
}

/// A plugin's answer, still in its wire form (an older version's answer
/// converted into this one's).
pub(crate) struct WitOutcome(pub(crate) wit::Outcome);

impl WitOutcome {
    /// The bytes of text the answer carries, for the result-size limit.
    pub(crate) fn size(&self) -> usize {
        let o = &self.0;
        let decision = match &o.decision {
            wit::Decision::Proceed => 0,
            wit::Decision::Allow(reason) => reason.as_ref().map_or(0, String::len),
            wit::Decision::Deny(text)
            | wit::Decision::Modify(text)
            | wit::Decision::ModifyOutput(text) => text.len(),
            wit::Decision::Ask(a) => {
                a.prompt.len() + a.options.iter().map(String::len).sum::<usize>()
            }
        };
        decision
            + o.context.as_ref().map_or(0, |c| c.text.len())
            + o.user_message.as_ref().map_or(0, |(_, m)| m.len())
            + [&o.system_message, &o.stop, &o.metadata]
                .into_iter()
                .map(|s| s.as_ref().map_or(0, String::len))
                .sum::<usize>()
    }

    /// Convert into the host's result type. Whether a rewrite fits the
    /// event (an input before the tool runs, an output after) is the
    /// engine's check, not this one's.
    ///
    /// # Errors
    /// When `modify` or `modify-output` is not JSON, or `modify` replaces an
    /// input with anything but a JSON object; when `metadata` is not JSON.
    pub(crate) fn into_result(self) -> Result<HookResult, String> {
        let o = self.0;
        let decision = match o.decision {
            wit::Decision::Proceed => Decision::Proceed,
            wit::Decision::Allow(reason) => Decision::Allow { reason },
            wit::Decision::Deny(reason) => Decision::Deny { reason },
            wit::Decision::Ask(a) => Decision::Ask(Approval {
                prompt: a.prompt,
                options: a.options,
                timeout_ms: a.timeout_ms,
                default_allow: a.default_allow,
            }),
            wit::Decision::Modify(json) => match serde_json::from_str(&json) {
                Ok(input @ Value::Object(_)) => Decision::Modify { input },
                Ok(_) => {
                    return Err(
                        "`modify` replaces the tool input, which must be a JSON object".into(),
                    );
                }
                Err(e) => return Err(format!("`modify` is not JSON: {e}")),
            },
            wit::Decision::ModifyOutput(json) => Decision::ModifyOutput {
                output: serde_json::from_str(&json)
                    .map_err(|e| format!("`modify-output` is not JSON: {e}"))?,
            },
        };
        let metadata = o
            .metadata
            .map(|m| serde_json::from_str(&m).map_err(|e| format!("`metadata` is not JSON: {e}")))
            .transpose()?;
        Ok(HookResult {
            decision,
            context: o.context.map(|c| Context {
                text: c.text,
                role: match c.role {
                    wit::Role::System => Role::System,
                    wit::Role::User => Role::User,
                    wit::Role::Assistant => Role::Assistant,
                },
            }),
            user_message: o.user_message.map(|(severity, text)| UserMessage {
                severity: match severity {
                    wit::Severity::Info => Severity::Info,
                    wit::Severity::Warning => Severity::Warning,
                    wit::Severity::Error => Severity::Error,
                },
                text,
            }),
            system_message: o.system_message,
            stop: o.stop,
            suppress_output: o.suppress_output,
            metadata,
            // WIT 0.2 has no way to ask for these.
            requests: None,
        })
    }
}

impl wit::Host for HostState {}

impl host::Host for HostState {
    fn log(&mut self, level: wit::Level, message: String) {
        log(self, level, message);
    }

    fn config(&mut self) -> String {
        self.config.to_string()
    }
}

/// A plugin's log line: kept with the hook's output and written to the
/// host's log, tagged with the hook, while the hook's output cap
/// (`max_output_kb`) has room; past it, lines are dropped (the output says
/// it was cut), so no plugin can flood the host's log. Control characters
/// are escaped on the way to the host's log.
pub(crate) fn log(state: &mut HostState, level: wit::Level, message: String) {
    let word = match level {
        wit::Level::Trace => "trace",
        wit::Level::Debug => "debug",
        wit::Level::Info => "info",
        wit::Level::Warn => "warn",
        wit::Level::Error => "error",
    };
    let line = format!("{word}: {message}");
    if !state.logs.push(line) {
        return;
    }
    let hook = state.hook.as_str();
    let message = escape_controls(&message);
    match level {
        wit::Level::Trace => tracing::trace!(hook, "{message}"),
        wit::Level::Debug => tracing::debug!(hook, "{message}"),
        wit::Level::Info => tracing::info!(hook, "{message}"),
        wit::Level::Warn => tracing::warn!(hook, "{message}"),
        wit::Level::Error => tracing::error!(hook, "{message}"),
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
    use super::*;

    fn outcome(decision: wit::Decision) -> WitOutcome {
        WitOutcome(wit::Outcome {
            decision,
            context: Some(wit::Context {
                text: "ctx".into(),
                role: wit::Role::User,
            }),
            user_message: Some((wit::Severity::Error, "msg".into())),
            system_message: None,
            stop: Some("halt".into()),
            suppress_output: true,
            metadata: Some(r#"{"a":1}"#.into()),
        })
    }

    #[test]
    fn wire_outcomes_convert_field_by_field() {
        let o = outcome(wit::Decision::Modify(r#"{"command":"ls"}"#.into()));
        assert_eq!(o.size(), r#"{"command":"ls"}"#.len() + 3 + 3 + 4 + 7);
        let r = o.into_result().unwrap();
        assert_eq!(
            r.decision,
            Decision::Modify {
                input: serde_json::json!({"command": "ls"})
            }
        );
        assert_eq!(r.context.unwrap().role, Role::User);
        assert_eq!(r.user_message.unwrap().severity, Severity::Error);
        assert_eq!(r.stop.as_deref(), Some("halt"));
        assert!(r.suppress_output);
        assert_eq!(r.metadata, Some(serde_json::json!({"a": 1})));
    }

    #[test]
    fn modify_is_an_input_object_and_modify_output_any_json() {
        let err = outcome(wit::Decision::Modify("[1]".into()))
            .into_result()
            .unwrap_err();
        assert!(err.contains("JSON object"), "{err}");
        let err = outcome(wit::Decision::ModifyOutput("{".into()))
            .into_result()
            .unwrap_err();
        assert!(err.contains("not JSON"), "{err}");
        let r = outcome(wit::Decision::ModifyOutput(r#""[masked]""#.into()))
            .into_result()
            .unwrap();
        assert_eq!(
            r.decision,
            Decision::ModifyOutput {
                output: "[masked]".into()
            }
        );
    }

    #[test]
    fn the_package_constant_matches_the_wit_file() {
        let wit = include_str!("../wit/0.2.0/hook.wit");
        assert!(wit.contains(&format!("package {WIT_PACKAGE};")));
    }
}

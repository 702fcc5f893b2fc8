//! Hooks written in the embedding program's own language (a Python or
//! JavaScript function): the binding hands over a function from the
//! event's record to a JSON answer, and this kind reads the answer as a
//! command hook's stdout is read, in any shape of `docs/protocol.md`
//! (Claude Code's, the `decision` shape, Amplifier's `action` shape).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};
use wasm_hooks_core::{
    Decision, Event, Handler, HandlerFuture, HookError, HookId, HookOutput, HookResult, Reply,
};

use super::answer;

/// What a [`CallbackHook`]'s function returns: its JSON answer (`None`:
/// no opinion), or why it failed (its exception, in a few words).
pub type CallbackFuture = Pin<Box<dyn Future<Output = Result<Option<Value>, String>> + Send>>;

/// The function behind a [`CallbackHook`]: the event's record in (shared:
/// a binding that keeps it for its language holds it without a copy).
pub type CallbackFn = dyn Fn(&Arc<Map<String, Value>>) -> CallbackFuture + Send + Sync;

/// A hook that calls a function of the embedding program with the event's
/// record (a JSON object: `hook_event_name`, `tool_name`, `tool_input`…)
/// and reads its JSON answer as a command hook's. A failure or an answer
/// that does not read is the hook's failure, folded by its `on_failure`.
pub struct CallbackHook {
    function: Box<CallbackFn>,
    label: String,
}

impl CallbackHook {
    /// A hook calling `function`, described as `label` (the function's
    /// name, for listings and traces).
    pub fn new(
        label: impl Into<String>,
        function: impl Fn(&Arc<Map<String, Value>>) -> CallbackFuture + Send + Sync + 'static,
    ) -> Self {
        Self {
            function: Box::new(function),
            label: label.into(),
        }
    }
}

impl fmt::Debug for CallbackHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallbackHook")
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

impl Handler for CallbackHook {
    fn handle<'a>(&'a self, hook: &'a HookId, event: &'a Event) -> HandlerFuture<'a> {
        let called = (self.function)(event.shared_record());
        Box::pin(async move {
            let result = match called.await {
                Ok(None) => Ok(HookResult::new(Decision::Proceed)),
                Ok(Some(reply)) => answer::value_answer(event.name(), reply).map_err(|message| {
                    HookError::BadResult {
                        hook: hook.clone(),
                        message: message.to_string(),
                    }
                }),
                Err(message) => Err(HookError::Failed {
                    hook: hook.clone(),
                    message,
                }),
            };
            Reply {
                result,
                output: HookOutput::default(),
            }
        })
    }

    fn details(&self) -> Vec<String> {
        vec![format!(
            "function: {} (in the embedding program)",
            self.label
        )]
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wasm_hooks_core::{EventPattern, HookRegistry, HookSpec, Verdict};

    use super::*;

    fn registry_with(answer: Result<Option<Value>, String>) -> HookRegistry {
        let registry = HookRegistry::new(None);
        let hook = CallbackHook::new("guard", move |_| {
            let answer = answer.clone();
            Box::pin(async move { answer })
        });
        registry.register(HookSpec::new(
            "guard",
            EventPattern::parse("PreToolUse").unwrap(),
            std::sync::Arc::new(hook),
        ));
        registry
    }

    fn rm() -> Event {
        Event::pre_tool_use("Bash", json!({"command": "rm -rf /"}))
    }

    #[tokio::test]
    async fn every_answer_shape_is_read() {
        for answer in [
            json!({"decision": "deny", "reason": "no"}),
            json!({"action": "deny", "reason": "no"}),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": "no"}}),
        ] {
            let outcome = registry_with(Ok(Some(answer.clone()))).dispatch(rm()).await;
            assert_eq!(outcome.verdict.reason(), Some("no"), "{answer}");
            assert!(outcome.is_denied(), "{answer}");
        }
        let outcome = registry_with(Ok(None)).dispatch(rm()).await;
        assert_eq!(outcome.verdict, Verdict::Proceed);
    }

    #[tokio::test]
    async fn a_raising_function_or_an_unreadable_answer_is_the_hooks_failure() {
        let outcome = registry_with(Err("ValueError: boom".into()))
            .dispatch(rm())
            .await;
        let failure = outcome.failures().next().expect("a failure").to_string();
        assert!(failure.contains("ValueError: boom"), "{failure}");
        let outcome = registry_with(Ok(Some(json!({"action": "explode"}))))
            .dispatch(rm())
            .await;
        let failure = outcome.failures().next().expect("a failure").to_string();
        assert!(
            failure.contains("invalid answer") && failure.contains("action"),
            "{failure}"
        );
    }
}

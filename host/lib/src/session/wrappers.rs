//! Wrappers that fire the right events around an agent's own code: a tool
//! call ([`ToolHooks`]) and the session's lifecycle ([`SessionHooks`]).

use std::fmt;
use std::future::Future;
use std::time::Instant;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Resolved, Session};
use wasm_hooks_core::plain_text;
use wasm_hooks_core::{Event, HookId};

/// A tool call a hook denied (before it ran).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool `{tool}` was denied{}: {reason}", hook.as_ref().map(|h| format!(" by hook `{h}`")).unwrap_or_default())]
pub struct ToolDenied {
    /// The tool.
    pub tool: String,
    /// The hook that denied it (or failed under `on_failure: block`).
    pub hook: Option<HookId>,
    /// Why.
    pub reason: String,
}

/// Why a wrapped tool call returned no output. More reasons may come:
/// match with a `_` arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError<E> {
    /// A hook denied the call; the tool did not run.
    #[error(transparent)]
    Denied(#[from] ToolDenied),
    /// The tool ran and failed.
    #[error("{0}")]
    Failed(E),
    /// The tool ran, and a PostToolUse hook rewrote its output into a value
    /// the tool's output type cannot hold. The original output is withheld:
    /// a hook wanted it changed (redacted, say).
    #[error(
        "a hook rewrote the output of tool `{tool}` into something its type cannot hold ({problem}); the original output is withheld"
    )]
    Rewritten {
        /// The tool.
        tool: String,
        /// Why the rewritten output does not fit.
        problem: String,
    },
}

/// Runs an agent's tool calls between PreToolUse and PostToolUse /
/// PostToolUseFailure.
#[derive(Debug, Clone)]
pub struct ToolHooks {
    session: Session,
}

impl ToolHooks {
    /// Wrappers for tool calls in `session`.
    pub fn new(session: Session) -> Self {
        Self { session }
    }

    /// Call `run_tool` with `args`, under the hooks:
    /// 1. PreToolUse: a deny (or a declined approval) returns
    ///    [`ToolError::Denied`] and the tool does not run; a `modify` runs
    ///    it with the new arguments;
    /// 2. the tool runs; its output is shown to the person whatever the
    ///    hooks say;
    /// 3. PostToolUse with its result and duration, or PostToolUseFailure
    ///    with the error; the tool's result is returned, as a `modify_output`
    ///    rewrote it if one did (a deny here is feedback for the model,
    ///    queued as context).
    ///
    /// A failing hook changes the call only as its `on_failure` says.
    ///
    /// # Errors
    /// [`ToolError::Denied`] when a hook denied the call,
    /// [`ToolError::Failed`] with the tool's own error, or
    /// [`ToolError::Rewritten`] when a hook's rewritten output is not a `T`.
    pub async fn call<T, E, F, Fut>(
        &self,
        tool: &str,
        args: Value,
        run_tool: F,
    ) -> Result<T, ToolError<E>>
    where
        T: Serialize + DeserializeOwned,
        E: fmt::Display,
        F: FnOnce(Value) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let pre = self
            .session
            .dispatch(Event::pre_tool_use(tool, args.clone()))
            .await;
        if let Some(reason) = pre.denial() {
            return Err(ToolError::Denied(ToolDenied {
                tool: tool.to_owned(),
                hook: pre.outcome.decided_by.clone(),
                reason: reason.to_owned(),
            }));
        }
        let args = pre.outcome.updated_input.unwrap_or(args);
        let started = Instant::now();
        let result = run_tool(args.clone()).await;
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let post = match &result {
            Ok(output) => {
                let response = serde_json::to_value(output).unwrap_or(Value::Null);
                self.session
                    .display()
                    .tool_output(tool, &plain_text(&response));
                Event::post_tool_use(tool, args, response)
            }
            Err(error) => {
                let error = error.to_string();
                self.session.display().tool_output(tool, &error);
                Event::post_tool_use_failure(tool, args, &error)
            }
        };
        let post = self
            .session
            .dispatch(post.with("duration_ms", duration_ms))
            .await;
        let output = result.map_err(ToolError::Failed)?;
        match post.outcome.updated_output {
            None => Ok(output),
            Some(rewritten) => {
                serde_json::from_value(rewritten).map_err(|e| ToolError::Rewritten {
                    tool: tool.to_owned(),
                    problem: e.to_string(),
                })
            }
        }
    }
}

/// Fires the session's lifecycle events. Each returns the routed outcome;
/// check [`Resolved::denial`] where a deny means something (a blocked
/// prompt, a Stop hook that wants the agent to go on).
#[derive(Debug, Clone)]
pub struct SessionHooks {
    session: Session,
}

impl SessionHooks {
    /// Lifecycle events of `session`.
    pub fn new(session: Session) -> Self {
        Self { session }
    }

    /// SessionStart; `source` is `startup`, `resume`, `clear` or `compact`.
    pub async fn start(&self, source: &str) -> Resolved {
        self.session.dispatch(Event::session_start(source)).await
    }

    /// SessionEnd; the "allow always" answers are forgotten afterwards.
    pub async fn end(&self, reason: &str) -> Resolved {
        let resolved = self.session.dispatch(Event::session_end(reason)).await;
        self.session.clear_approvals();
        resolved
    }

    /// UserPromptSubmit, starting a new turn; a deny blocks the prompt.
    pub async fn prompt_submitted(&self, prompt: &str) -> Resolved {
        self.session.begin_turn();
        self.session
            .dispatch(Event::user_prompt_submit(prompt))
            .await
    }

    /// Stop: the agent finished answering. A deny means "go on": its
    /// reason is queued as feedback; pass `stop_hook_active = true` on the
    /// Stop that follows.
    pub async fn stop(&self, stop_hook_active: bool) -> Resolved {
        self.session.dispatch(Event::stop(stop_hook_active)).await
    }

    /// Error, with the error's type and message, the tool concerned if
    /// any, and a severity (`warning`, `error`, `fatal`).
    pub async fn error<E: std::error::Error + ?Sized>(
        &self,
        error: &E,
        tool: Option<&str>,
        severity: &str,
    ) -> Resolved {
        let mut event = Event::error(short_type_name::<E>(), &error.to_string(), severity);
        if let Some(tool) = tool {
            event = event.with("tool", tool);
        }
        self.session.dispatch(event).await
    }

    /// Checkpoint.
    pub async fn checkpoint(&self, id: &str, kind: &str, message_count: u64) -> Resolved {
        self.session
            .dispatch(Event::checkpoint(id, kind, message_count))
            .await
    }

    /// PostModelSwitch (the seeds' ModelSwitch).
    pub async fn model_switch(&self, old: &str, new: &str, reason: &str) -> Resolved {
        self.session
            .dispatch(Event::model_switch(old, new, reason))
            .await
    }

    /// MemoryUpdate; `update_type` is `created`, `modified` or `deleted`.
    pub async fn memory_update(&self, file_path: &str, update_type: &str) -> Resolved {
        self.session
            .dispatch(Event::memory_update(file_path, update_type))
            .await
    }

    /// Notification.
    pub async fn notification(&self, message: &str, notification_type: &str) -> Resolved {
        self.session
            .dispatch(Event::notification(message, notification_type))
            .await
    }

    /// PreCompact; `trigger` is `manual` or `auto`.
    pub async fn pre_compact(&self, trigger: &str) -> Resolved {
        self.session.dispatch(Event::pre_compact(trigger)).await
    }
}

/// `std::io::Error` → `Error`: the last path segment of the type's name,
/// without generic arguments.
fn short_type_name<E: ?Sized>() -> &'static str {
    let full = std::any::type_name::<E>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_are_short() {
        assert_eq!(short_type_name::<std::io::Error>(), "Error");
        assert_eq!(
            short_type_name::<std::num::ParseIntError>(),
            "ParseIntError"
        );
    }
}

//! Hook kinds that hook files may name but this engine does not run:
//! Claude Code's `agent` hooks need an agent loop (a model that calls
//! tools until it decides). They load, so that a Claude Code settings file
//! reads whole; `validate` and `list` name them as unsupported, and every
//! event they apply to reports them as the hook's failure: never silence.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use wasm_hooks_core::{Event, Handler, HandlerFuture, HookError, HookId, HookOutput, Reply};

use super::kind::{BuildContext, Built, HookKind, HookProblem};

/// A hook of a kind this engine reads and does not run.
#[derive(Debug)]
struct Unsupported {
    why: &'static str,
}

impl Handler for Unsupported {
    fn handle<'a>(&'a self, hook: &'a HookId, _: &'a Event) -> HandlerFuture<'a> {
        let result = Err(HookError::Failed {
            hook: hook.clone(),
            message: format!("not run: {}", self.why),
        });
        Box::pin(async move {
            Reply {
                result,
                output: HookOutput::default(),
            }
        })
    }

    fn details(&self) -> Vec<String> {
        vec![format!("unsupported: {}", self.why)]
    }

    fn unsupported(&self) -> Option<&str> {
        Some(self.why)
    }
}

/// Claude Code's `agent` kind.
pub(crate) struct AgentKind;

/// An agent hook's own fields, as Claude Code spells them.
#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct AgentEntry {
    /// What the agent is asked to verify.
    #[schemars(with = "Option<String>")]
    prompt: Option<Value>,
    /// Its model.
    #[schemars(with = "Option<String>")]
    model: Option<Value>,
}

impl HookKind for AgentKind {
    const TYPES: &'static [&'static str] = &["agent"];
    type Entry = AgentEntry;

    fn build(entry: AgentEntry, _: &mut BuildContext<'_>) -> Result<Built, HookProblem> {
        let handler = Arc::new(Unsupported {
            why: "`agent` hooks need an agent loop, which wasm-hooks does not run (use a `prompt` hook for a one-shot model check)",
        });
        let identity = serde_json::json!({"prompt": entry.prompt, "model": entry.model});
        Ok(Built::new(handler, "agent".to_owned(), identity))
    }
}

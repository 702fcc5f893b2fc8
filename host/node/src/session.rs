//! `Session`: the library's session layer for a JavaScript agent: an
//! `ask` handed to the program's approval function, context kept within
//! the injection cap and the turn's budget until the program takes it,
//! messages for the person, every step in the engine's audit log.

use std::sync::Arc;
use std::time::Duration;

use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use serde_json::{Value, json};
use wasm_hooks::{
    ApprovalChoice, ApprovalFuture, ApprovalRequest, ApprovalSystem, ContextQueue, DisplaySystem,
    HookId, HookOutput, InjectionLimits, Session as LibSession, Severity, Unanswered,
};

use crate::engine::{Engine, read_event};
use crate::functions::{JsFunction, call};
use crate::outcome::Resolved;

/// How a session treats context and approvals; every field may be left out.
#[napi(object)]
pub struct SessionOptions {
    /// The largest single injection, in bytes [default: 10240].
    pub max_injection_bytes: Option<u32>,
    /// Estimated tokens a turn may inject before each further one warns
    /// [default: 1000].
    pub turn_budget_tokens: Option<u32>,
    /// How long to wait for an approval when the hook gives no timeout, in
    /// milliseconds [default: 60000].
    pub approval_timeout_ms: Option<u32>,
}

/// One agent session over an engine.
#[napi]
pub struct Session {
    session: LibSession,
    context: Arc<ContextQueue>,
}

#[napi]
impl Session {
    /// A session `sessionId` on `engine`: `approve(request)` answers
    /// approvals (an option's text, a bool, or null for the request's
    /// default; without it every default applies), `display(message)`
    /// shows messages (`{kind, source, …}`; without it they go to stderr).
    #[napi(
        constructor,
        ts_args_type = "engine: Engine, sessionId: string, approve?: ((request: any) => Promise<any>) | null, display?: ((message: any) => Promise<any>) | null, options?: SessionOptions"
    )]
    pub fn new(
        engine: &Engine,
        session_id: String,
        approve: Option<JsFunction>,
        display: Option<JsFunction>,
        options: Option<SessionOptions>,
    ) -> Self {
        let context = Arc::new(ContextQueue::default());
        let (max_bytes, budget, timeout) = options.map_or((None, None, None), |o| {
            (
                o.max_injection_bytes,
                o.turn_budget_tokens,
                o.approval_timeout_ms,
            )
        });
        let mut builder = LibSession::builder(engine.engine.clone(), session_id)
            .context_sink(Arc::clone(&context) as _)
            .injection_limits(InjectionLimits {
                max_bytes: max_bytes.map_or(10 * 1024, |b| b as usize),
                turn_budget_tokens: budget.map_or(1000, |t| t as usize),
            })
            .approval_timeout(Duration::from_millis(timeout.map_or(60_000, u64::from)));
        builder = match approve {
            Some(function) => builder.approvals(Arc::new(JsApprovals { function })),
            None => builder.approvals(Arc::new(Unanswered)),
        };
        if let Some(function) = display {
            builder = builder.display(Arc::new(JsDisplay { function }));
        }
        Self {
            session: builder.build(),
            context,
        }
    }

    /// Dispatch `event` (canonical, or `agent`'s payload) and route its
    /// outcome; the event loop stays free (an approval function runs on it).
    #[napi]
    pub async fn dispatch(&self, event: Value, agent: Option<String>) -> napi::Result<Resolved> {
        let (_, event) = read_event(event, agent.as_deref())?;
        Ok(self.session.dispatch(event).await.into())
    }

    /// A new turn (the person spoke): the injection budget starts again.
    #[napi]
    pub fn begin_turn(&self) {
        self.session.begin_turn();
    }

    /// The context queued since the last call, one message per role
    /// (`role`, `text`, `sources`): add it to the next model request.
    #[napi]
    pub fn flush_context(&self) -> Vec<Value> {
        self.session.flush_context();
        self.context
            .take()
            .iter()
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
            .collect()
    }

    /// The first request to end the turn since the last call, if any.
    #[napi]
    pub fn take_stop(&self) -> Option<Value> {
        self.session
            .take_stop()
            .map(|stop| serde_json::to_value(stop).unwrap_or(Value::Null))
    }

    /// The session's id, put in every event that has none.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.session.id().to_owned()
    }
}

/// Approvals answered by a JavaScript function; one that throws denies.
struct JsApprovals {
    function: JsFunction,
}

impl ApprovalSystem for JsApprovals {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        Box::pin(async move {
            let asked = serde_json::to_value(request).unwrap_or(Value::Null);
            match call(&self.function, asked).await {
                Ok(answer) => ApprovalChoice::from_answer(&answer),
                Err(message) => {
                    tracing::warn!(
                        "the approval function failed, so the operation is denied: {message}"
                    );
                    Some(ApprovalChoice::Deny)
                }
            }
        })
    }
}

/// Messages handed to a JavaScript function as `{kind, source, ...}`.
struct JsDisplay {
    function: JsFunction,
}

impl JsDisplay {
    fn show(&self, message: Value) {
        self.function
            .call(message, ThreadsafeFunctionCallMode::NonBlocking);
    }
}

impl DisplaySystem for JsDisplay {
    fn message(&self, hook: &HookId, severity: Severity, text: &str) {
        self.show(json!({"kind": "message", "source": hook, "severity": severity, "text": text}));
    }

    fn hook_output(&self, hook: &HookId, output: &HookOutput) {
        self.show(json!({"kind": "hook_output", "source": hook, "output": output}));
    }

    fn tool_output(&self, tool: &str, output: &str) {
        self.show(json!({"kind": "tool_output", "source": tool, "text": output}));
    }
}

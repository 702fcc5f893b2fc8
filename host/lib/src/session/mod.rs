//! The session layer: what an agent needs around [`HookEngine::dispatch`].
//!
//! A [`Session`] dispatches an event, then routes the outcome: context to
//! the host's [`ContextSink`] (size cap, per-turn budget, batching,
//! provenance), an `ask` to the host's [`ApprovalSystem`] (timeout,
//! default, "allow always" cache), messages and hook output to the host's
//! [`DisplaySystem`], and every step to the engine's audit log. The
//! [`ToolHooks`] and [`SessionHooks`] wrappers fire the right events around
//! an agent's tool calls and lifecycle.

mod approval;
mod context;
mod display;
mod terminal;
mod wrappers;

pub use approval::{
    ApprovalChoice, ApprovalFuture, ApprovalRecord, ApprovalRequest, ApprovalSystem,
    DEFAULT_OPTIONS, DecidedBy, ScriptedApprovals, Unanswered,
};
pub use context::{
    ContextMessage, ContextQueue, ContextSink, InjectionLimits, InjectionReport, InjectionStatus,
    Provenance,
};
pub use display::{DisplaySystem, TerminalDisplay};
pub use terminal::TerminalApproval;
pub use wrappers::{SessionHooks, ToolDenied, ToolError, ToolHooks};

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::json;

use self::context::Turn;
use crate::engine::HookEngine;
use wasm_hooks_core::{
    Approval, Attributed, AuditEntry, AuditKind, Context, Event, HookId, Outcome, Role, Severity,
    TraceStatus, Verdict,
};

/// An event's outcome after the session routed it.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The folded outcome; its verdict is never `Ask`: the approval system
    /// turned it into `Allow` or `Deny`.
    pub outcome: Outcome,
    /// The approval asked for, and how it was decided.
    pub approval: Option<ApprovalRecord>,
    /// What happened to each hook's context.
    pub injections: Vec<InjectionReport>,
}

impl Resolved {
    /// The reason, when the operation was denied.
    pub fn denial(&self) -> Option<&str> {
        match &self.outcome.verdict {
            Verdict::Deny { reason } => Some(reason),
            _ => None,
        }
    }
}

/// Configures a [`Session`].
///
/// Defaults: context is dropped (with a warning) until a sink is given;
/// approvals are asked on the terminal ([`TerminalApproval`]) and wait 60 s
/// when the hook gives no timeout; messages go to stderr
/// ([`TerminalDisplay`]); [`InjectionLimits::default`] (10 KiB per
/// injection, 1000 tokens per turn).
pub struct SessionBuilder {
    inner: Inner,
}

impl SessionBuilder {
    /// Where context for the agent goes.
    pub fn context_sink(mut self, sink: Arc<dyn ContextSink>) -> Self {
        self.inner.context = Some(sink);
        self
    }

    /// Who decides approvals.
    pub fn approvals(mut self, approvals: Arc<dyn ApprovalSystem>) -> Self {
        self.inner.approvals = approvals;
        self
    }

    /// Where messages for the person go.
    pub fn display(mut self, display: Arc<dyn DisplaySystem>) -> Self {
        self.inner.display = display;
        self
    }

    /// The injection cap and budget.
    pub fn injection_limits(mut self, limits: InjectionLimits) -> Self {
        self.inner.limits = limits;
        self
    }

    /// How long to wait for an approval when the hook gives no timeout.
    pub fn approval_timeout(mut self, timeout: Duration) -> Self {
        self.inner.approval_timeout = timeout;
        self
    }

    /// The session.
    pub fn build(self) -> Session {
        Session {
            inner: Arc::new(self.inner),
        }
    }
}

/// One agent session on top of a [`HookEngine`]. Cheap to clone; clones
/// share the turn's context, the approval cache and the stop request.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.inner.id)
            .finish_non_exhaustive()
    }
}

struct Inner {
    engine: HookEngine,
    id: String,
    context: Option<Arc<dyn ContextSink>>,
    approvals: Arc<dyn ApprovalSystem>,
    display: Arc<dyn DisplaySystem>,
    limits: InjectionLimits,
    approval_timeout: Duration,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    turn: Turn,
    allowed_always: HashSet<(HookId, String)>,
    stop: Option<Attributed<String>>,
}

impl Session {
    /// A builder for the session `id` on `engine`; see [`SessionBuilder`]
    /// for the defaults.
    pub fn builder(engine: HookEngine, id: impl Into<String>) -> SessionBuilder {
        SessionBuilder {
            inner: Inner {
                engine,
                id: id.into(),
                context: None,
                approvals: Arc::new(TerminalApproval::new()),
                display: Arc::new(TerminalDisplay::new()),
                limits: InjectionLimits::default(),
                approval_timeout: Duration::from_secs(60),
                state: Mutex::default(),
            },
        }
    }

    /// The session id put in every event.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// The engine.
    pub fn engine(&self) -> &HookEngine {
        &self.inner.engine
    }

    /// Where messages for the person go.
    pub fn display(&self) -> &dyn DisplaySystem {
        &*self.inner.display
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Dispatch `event` (with this session's id unless it has one) and
    /// route the outcome: show messages and unsuppressed hook output, queue
    /// context (and, for events whose operation already happened —
    /// PostToolUse, PostToolUseFailure, Stop, SubagentStop — a deny's
    /// reason, as feedback for the model), decide an `ask`, remember a
    /// stop request, and audit each step.
    pub async fn dispatch(&self, mut event: Event) -> Resolved {
        if event.session_id().is_empty() {
            event = event.with("session_id", self.inner.id.as_str());
        }
        let mut outcome = self.inner.engine.dispatch(&event).await;
        self.show(&outcome);
        let injections = self.queue_context(&event, &outcome);
        let approval = match &outcome.verdict {
            Verdict::Ask(approval) => {
                let hook = outcome
                    .decided_by
                    .clone()
                    .unwrap_or_else(|| HookId::new("unknown"));
                let record = self.decide(&event, hook, approval).await;
                outcome.verdict = verdict_after(&record);
                Some(record)
            }
            _ => None,
        };
        if let Some(stop) = &outcome.stop {
            self.state().stop.get_or_insert_with(|| stop.clone());
        }
        Resolved {
            outcome,
            approval,
            injections,
        }
    }

    /// Start a new turn (the user spoke): the injection budget starts again.
    pub fn begin_turn(&self) {
        self.state().turn.restart_budget();
    }

    /// Hand the context queued so far to the sink, batched: one message
    /// per role. Call it before each model request. Returns how many
    /// messages were delivered.
    pub fn flush_context(&self) -> usize {
        let messages = self.state().turn.take_messages();
        let count = messages.len();
        match &self.inner.context {
            Some(sink) => messages.into_iter().for_each(|m| sink.inject(m)),
            None if count > 0 => {
                tracing::warn!(
                    "{count} context message(s) dropped: the session has no context sink"
                );
            }
            None => {}
        }
        count
    }

    /// The first request to end the turn since the last call, if a hook
    /// made one (`continue: false`, `stop`).
    pub fn take_stop(&self) -> Option<Attributed<String>> {
        self.state().stop.take()
    }

    /// Forget the "allow always" answers (the session ended).
    pub fn clear_approvals(&self) {
        self.state().allowed_always.clear();
    }

    fn show(&self, outcome: &Outcome) {
        let display = &self.inner.display;
        for entry in &outcome.trace {
            let suppressed = matches!(&entry.status, TraceStatus::Answered(r) if r.suppress_output);
            if !suppressed && !entry.output.is_empty() {
                display.hook_output(&entry.hook, &entry.output);
            }
        }
        for m in &outcome.user_messages {
            display.message(&m.hook, m.value.severity, &m.value.text);
        }
        for m in &outcome.system_messages {
            display.message(&m.hook, Severity::Warning, &m.value);
        }
    }

    fn queue_context(&self, event: &Event, outcome: &Outcome) -> Vec<InjectionReport> {
        let feedback = match (&outcome.verdict, &outcome.decided_by) {
            (Verdict::Deny { reason }, Some(hook)) if event.name().already_happened() => Some((
                hook.clone(),
                Context {
                    text: reason.clone(),
                    role: Role::System,
                },
            )),
            _ => None,
        };
        let offered = outcome
            .contexts
            .iter()
            .map(|c| (c.hook.clone(), c.value.clone()))
            .chain(feedback);
        let mut reports = Vec::new();
        for (hook, context) in offered {
            let report = self
                .state()
                .turn
                .offer(&self.inner.limits, &hook, event.name(), &context);
            self.report_injection(event, &context, &report);
            reports.push(report);
        }
        reports
    }

    fn report_injection(&self, event: &Event, context: &Context, report: &InjectionReport) {
        let kind = match &report.status {
            InjectionStatus::Queued => AuditKind::Injection,
            InjectionStatus::OverBudget { used, budget } => {
                let text = format!(
                    "this turn's injected context is now ~{used} tokens, over its budget of {budget}"
                );
                tracing::warn!(hook = %report.hook, "{text}");
                self.inner
                    .display
                    .message(&report.hook, Severity::Warning, &text);
                AuditKind::Injection
            }
            InjectionStatus::Refused { reason } => {
                tracing::warn!(hook = %report.hook, "{reason}");
                self.inner
                    .display
                    .message(&report.hook, Severity::Error, reason);
                AuditKind::InjectionRefused
            }
        };
        self.audit(
            kind,
            event,
            Some(report.hook.clone()),
            json!({ "role": context.role, "text": context.text, "report": report }),
        );
    }

    async fn decide(&self, event: &Event, hook: HookId, approval: &Approval) -> ApprovalRecord {
        let request = ApprovalRequest {
            hook: hook.clone(),
            event: event.name(),
            prompt: approval.prompt.clone(),
            options: if approval.options.is_empty() {
                DEFAULT_OPTIONS.map(String::from).to_vec()
            } else {
                approval.options.clone()
            },
            timeout: approval
                .timeout_ms
                .map_or(self.inner.approval_timeout, |ms| {
                    Duration::from_millis(ms.into())
                }),
            default: if approval.default_allow {
                ApprovalChoice::AllowOnce
            } else {
                ApprovalChoice::Deny
            },
        };
        self.audit(
            AuditKind::ApprovalRequest,
            event,
            Some(hook.clone()),
            json!(&request),
        );
        let key = (hook.clone(), request.prompt.clone());
        let cached = self.state().allowed_always.contains(&key);
        let (choice, decided_by) = if cached {
            (ApprovalChoice::AllowAlways, DecidedBy::Cache)
        } else {
            let asked = self.inner.approvals.request(&request);
            match tokio::time::timeout(request.timeout, asked).await {
                Ok(Some(choice)) => (choice, DecidedBy::Person),
                Ok(None) => (request.default, DecidedBy::Unanswered),
                Err(_) => (request.default, DecidedBy::Timeout),
            }
        };
        if choice == ApprovalChoice::AllowAlways {
            self.state().allowed_always.insert(key);
        }
        let record = ApprovalRecord {
            request,
            choice,
            decided_by,
        };
        self.audit(
            AuditKind::ApprovalDecision,
            event,
            Some(hook),
            json!({ "choice": choice, "decided_by": decided_by }),
        );
        record
    }

    fn audit(&self, kind: AuditKind, event: &Event, hook: Option<HookId>, data: serde_json::Value) {
        if let Some(audit) = self.inner.engine.audit_log() {
            audit.record(AuditEntry {
                kind,
                session: event.session_id().to_owned(),
                event: Some(event.name()),
                hook,
                data,
            });
        }
    }
}

fn verdict_after(record: &ApprovalRecord) -> Verdict {
    let prompt = &record.request.prompt;
    let secs = record.request.timeout.as_secs_f64();
    match (record.choice.allows(), record.decided_by) {
        (true, DecidedBy::Person) => Verdict::Allow {
            reason: Some(format!("approved by the user: {prompt}")),
        },
        (true, DecidedBy::Cache) => Verdict::Allow {
            reason: Some(format!(
                "approved earlier this session (allow always): {prompt}"
            )),
        },
        (true, DecidedBy::Timeout) => Verdict::Allow {
            reason: Some(format!(
                "no answer within {secs}s: allowed by default: {prompt}"
            )),
        },
        (false, DecidedBy::Timeout) => Verdict::Deny {
            reason: format!("no answer within {secs}s: denied by default: {prompt}"),
        },
        (true, DecidedBy::Unanswered) => Verdict::Allow {
            reason: Some(format!("nobody could answer: allowed by default: {prompt}")),
        },
        (false, DecidedBy::Unanswered) => Verdict::Deny {
            reason: format!("nobody could answer: denied by default: {prompt}"),
        },
        (false, _) => Verdict::Deny {
            reason: format!("the user denied: {prompt}"),
        },
    }
}

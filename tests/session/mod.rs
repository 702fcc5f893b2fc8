//! The session layer end to end: a real engine (closure hooks and real
//! command hooks), routed through `Session` into recording sinks:
//! injection cap, budget, batching and provenance; approvals; display and
//! suppression; the wrappers around tool calls and the session lifecycle
//! (the seed's integration tests, under this project's names); the audit
//! records of all of it.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use wasm_hooks::{
    Approval, ApprovalChoice, ContextMessage, ContextSink, DecidedBy, Decision, DisplaySystem,
    Event, EventName, EventPattern, HookEngine, HookId, HookOutput, HookResult, HookSpec,
    InjectionLimits, InjectionStatus, OnFailure, Role, ScriptedApprovals, Session, SessionHooks,
    Severity, ToolError, ToolHooks, Verdict,
};

mod approvals;
mod audit;
mod context;
mod display;
mod lifecycle;
mod tools;

/// Everything the session handed to the host.
#[derive(Default)]
struct Host {
    context: Mutex<Vec<ContextMessage>>,
    shown: Mutex<Vec<String>>,
}

impl ContextSink for Host {
    fn inject(&self, message: ContextMessage) {
        self.context.lock().unwrap().push(message);
    }
}

impl DisplaySystem for Host {
    fn message(&self, hook: &HookId, severity: Severity, text: &str) {
        self.shown
            .lock()
            .unwrap()
            .push(format!("{hook} {severity:?}: {text}"));
    }
    fn hook_output(&self, hook: &HookId, output: &HookOutput) {
        self.shown
            .lock()
            .unwrap()
            .push(format!("{hook} output: {}{}", output.stdout, output.stderr));
    }
    fn tool_output(&self, tool: &str, output: &str) {
        self.shown
            .lock()
            .unwrap()
            .push(format!("{tool} tool: {output}"));
    }
}

impl Host {
    fn shown(&self) -> Vec<String> {
        self.shown.lock().unwrap().clone()
    }
    fn context(&self) -> Vec<ContextMessage> {
        self.context.lock().unwrap().clone()
    }
}

/// A session on `engine` answering approvals from `approvals`.
fn new_session(engine: HookEngine, approvals: Arc<ScriptedApprovals>) -> (Session, Arc<Host>) {
    let host = Arc::new(Host::default());
    let session = Session::builder(engine, "sess-1")
        .context_sink(host.clone())
        .display(host.clone())
        .approvals(approvals)
        .build();
    (session, host)
}

fn on(event: EventName) -> EventPattern {
    EventPattern::event(event)
}

/// A closure hook on `event` that always answers `result`.
fn answering(name: &str, event: EventName, result: HookResult) -> HookSpec {
    HookSpec::from_fn(name, on(event), move |_| {
        let r = result.clone();
        async move { Ok(r) }
    })
}

fn with_context(text: &str, role: Role) -> HookResult {
    let mut r = HookResult::new(Decision::Proceed);
    r.context = Some(wasm_hooks::Context {
        text: text.into(),
        role,
    });
    r
}

fn ask(prompt: &str, timeout_ms: Option<u32>, default_allow: bool) -> HookResult {
    HookResult::new(Decision::Ask(Approval {
        prompt: prompt.into(),
        options: vec![],
        timeout_ms,
        default_allow,
    }))
}

/// A hook on every event that records each event it sees.
fn recorder(engine: &HookEngine) -> Arc<Mutex<Vec<Event>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let pattern = EventPattern::parse("*").unwrap();
    let log = seen.clone();
    engine.register(
        HookSpec::from_fn("recorder", pattern, move |event| {
            log.lock().unwrap().push(event);
            async { Ok(HookResult::new(Decision::Proceed)) }
        })
        .with_priority(1000),
    );
    seen
}

fn names(events: &[Event]) -> Vec<EventName> {
    events.iter().map(Event::name).collect()
}

fn asking_engine(prompt: &str, timeout_ms: Option<u32>, default_allow: bool) -> HookEngine {
    let engine = HookEngine::default();
    engine.register(answering(
        "guard",
        EventName::PreToolUse,
        ask(prompt, timeout_ms, default_allow),
    ));
    engine
}

//! OpenTelemetry spans for `serve`: one per answered event (`dispatch
//! EVENT`, a server span continuing the agent's `traceparent`, from the
//! request's header or the event's own field) and one per hook that ran
//! (`hook NAME`, with its kind and answer, an error status when it
//! failed). They go to the global tracer: nowhere unless the host set one
//! up (`serve --otlp-endpoint`).

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue, global};
use wasm_hooks_core::{Outcome, TraceStatus};

use crate::HookEngine;
use crate::server_metrics::{decision_word, verdict_word};

/// One answered event, to trace.
pub(crate) struct Answered<'a> {
    /// The event's name.
    pub(crate) event: &'a str,
    /// Its session.
    pub(crate) session: &'a str,
    /// The agent's `traceparent`, if it sent one.
    pub(crate) traceparent: Option<&'a str>,
    /// When dispatching began.
    pub(crate) started: SystemTime,
    /// What the hooks answered.
    pub(crate) outcome: &'a Outcome,
}

/// Record the spans of `answered`, whose hooks are `engine`'s.
pub(crate) fn record(engine: &HookEngine, answered: &Answered<'_>) {
    let parent = match answered.traceparent {
        Some(traceparent) => {
            let carrier = HashMap::from([("traceparent".to_owned(), traceparent.to_owned())]);
            global::get_text_map_propagator(|propagator| propagator.extract(&carrier))
        }
        None => Context::new(),
    };
    let tracer = global::tracer("wasm-hooks");
    let outcome = answered.outcome;
    let span = tracer
        .span_builder(format!("dispatch {}", answered.event))
        .with_kind(SpanKind::Server)
        .with_start_time(answered.started)
        .with_attributes([
            KeyValue::new("wasm_hooks.event", answered.event.to_owned()),
            KeyValue::new("wasm_hooks.session", answered.session.to_owned()),
            KeyValue::new("wasm_hooks.verdict", verdict_word(&outcome.verdict)),
        ])
        .start_with_context(&tracer, &parent);
    let cx = parent.with_span(span);
    let mut ended = answered.started;
    for entry in &outcome.trace {
        let end = answered.started + entry.elapsed;
        ended = ended.max(end);
        let (answer, failure) = match &entry.status {
            TraceStatus::Answered(result) => (decision_word(&result.decision), None),
            TraceStatus::Detached => ("background", None),
            TraceStatus::Failed { error, .. } => ("failed", Some(error.to_string())),
        };
        let mut hook = tracer
            .span_builder(format!("hook {}", entry.hook))
            .with_kind(SpanKind::Internal)
            .with_start_time(answered.started)
            .with_attributes([
                KeyValue::new("wasm_hooks.hook", entry.hook.to_string()),
                KeyValue::new(
                    "wasm_hooks.kind",
                    engine.kind_of(&entry.hook).unwrap_or("other"),
                ),
                KeyValue::new("wasm_hooks.answer", answer),
            ])
            .start_with_context(&tracer, &cx);
        if let Some(why) = failure {
            hook.set_status(Status::error(why));
        }
        hook.end_with_timestamp(end);
    }
    cx.span()
        .end_with_timestamp(ended.max(answered.started + Duration::from_micros(1)));
}

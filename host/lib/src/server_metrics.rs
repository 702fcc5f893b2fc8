//! What `serve` counts, for `GET /metrics` in the Prometheus text format
//! (OpenMetrics): each hook's decisions by event and verdict, how long
//! hooks of each kind take, their failures by hook and reason, events by
//! verdict, requests by status and in flight, refused ones (answered with
//! the agent's block), and each project's reloads and whether it is
//! ready.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use wasm_hooks_core::{HookError, Outcome, TraceStatus, Verdict};

use crate::HookEngine;

/// A hook's decision on one event, and whether it was acted on
/// (`enforce`) or only recorded (`dryrun`, `warn`: a would-deny).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HookDecision {
    event: String,
    hook: String,
    verdict: String,
    enforcement: &'static str,
}

/// An event's folded verdict.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EventVerdict {
    event: String,
    verdict: String,
}

/// A kind of hook.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Kind {
    kind: String,
}

/// A hook's failure.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Failure {
    hook: String,
    reason: String,
}

/// A request's answer.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Status {
    status: String,
}

/// A served project's reload.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Reload {
    project: String,
    result: String,
}

/// A served project.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Project {
    project: String,
}

/// The server's metrics.
#[derive(Debug)]
pub(crate) struct ServerMetrics {
    registry: Registry,
    hook_decisions: Family<HookDecision, Counter>,
    events: Family<EventVerdict, Counter>,
    hook_seconds: Family<Kind, Histogram>,
    hook_failures: Family<Failure, Counter>,
    requests: Family<Status, Counter>,
    refusals: Counter,
    in_flight: Gauge<i64, std::sync::atomic::AtomicI64>,
    reloads: Family<Reload, Counter>,
    ready: Family<Project, Gauge<i64, std::sync::atomic::AtomicI64>>,
    state_errors: Counter,
}

impl ServerMetrics {
    pub(crate) fn new() -> Self {
        let mut registry = Registry::with_prefix("wasm_hooks");
        let hook_decisions = Family::<HookDecision, Counter>::default();
        registry.register(
            "hook_decisions",
            "What each hook answered, by event and verdict (failed: its failure, by its on_failure)",
            hook_decisions.clone(),
        );
        let events = Family::<EventVerdict, Counter>::default();
        registry.register(
            "events",
            "Events answered, by event and folded verdict",
            events.clone(),
        );
        let hook_seconds = Family::<Kind, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.000_01, 4.0, 10))
        });
        registry.register(
            "hook_duration_seconds",
            "How long a hook took, by kind",
            hook_seconds.clone(),
        );
        let hook_failures = Family::<Failure, Counter>::default();
        registry.register(
            "hook_failures",
            "Hooks that failed (timeouts, limits, crashes, errors), by hook and reason",
            hook_failures.clone(),
        );
        let requests = Family::<Status, Counter>::default();
        registry.register("requests", "Requests, by HTTP status", requests.clone());
        let refusals = Counter::default();
        registry.register(
            "refusals",
            "Events no hook ran for (too large, not an event, no token, from a web page…), answered with the agent's block",
            refusals.clone(),
        );
        let in_flight = Gauge::<i64, std::sync::atomic::AtomicI64>::default();
        registry.register(
            "requests_in_flight",
            "Requests being answered now",
            in_flight.clone(),
        );
        let reloads = Family::<Reload, Counter>::default();
        registry.register(
            "reloads",
            "Engines built again after their inputs changed (or SIGHUP), by project and result",
            reloads.clone(),
        );
        let ready = Family::<Project, Gauge<i64, std::sync::atomic::AtomicI64>>::default();
        registry.register(
            "project_ready",
            "1 when the project's engine is built from its files as they are, 0 when its last build failed",
            ready.clone(),
        );
        let state_errors = Counter::default();
        registry.register(
            "state_errors",
            "Calls to the shared state store (--state) that failed",
            state_errors.clone(),
        );
        Self {
            registry,
            state_errors,
            hook_decisions,
            events,
            hook_seconds,
            hook_failures,
            requests,
            refusals,
            in_flight,
            reloads,
            ready,
        }
    }

    /// Count what the hooks of `engine` answered to the event `event`.
    pub(crate) fn answered(&self, engine: &HookEngine, event: &str, outcome: &Outcome) {
        for entry in &outcome.trace {
            let hook = entry.hook.to_string();
            let verdict = match &entry.status {
                TraceStatus::Answered(result) => decision_word(&result.decision),
                TraceStatus::Detached => "background",
                TraceStatus::Failed { error, .. } => {
                    self.hook_failures
                        .get_or_create(&Failure {
                            hook: hook.clone(),
                            reason: failure_reason(error).to_owned(),
                        })
                        .inc();
                    "failed"
                }
            };
            self.hook_decisions
                .get_or_create(&HookDecision {
                    event: event.to_owned(),
                    hook: hook.clone(),
                    verdict: verdict.to_owned(),
                    enforcement: entry.enforcement.as_str(),
                })
                .inc();
            let kind = engine.kind_of(&entry.hook).unwrap_or("other").to_owned();
            self.hook_seconds
                .get_or_create(&Kind { kind })
                .observe(entry.elapsed.as_secs_f64());
        }
        self.events
            .get_or_create(&EventVerdict {
                event: event.to_owned(),
                verdict: verdict_word(&outcome.verdict).to_owned(),
            })
            .inc();
    }

    /// Count a request answered with `status`.
    pub(crate) fn request(&self, status: u16) {
        self.requests
            .get_or_create(&Status {
                status: status.to_string(),
            })
            .inc();
    }

    /// A request refused: answered with the agent's block, no hook run.
    pub(crate) fn refused(&self) {
        self.refusals.inc();
    }

    /// A request started; it ends when the guard is dropped.
    pub(crate) fn in_flight(&self) -> InFlight<'_> {
        self.in_flight.inc();
        InFlight(&self.in_flight)
    }

    /// Count a reload of `project`, and say whether it is ready.
    pub(crate) fn reloaded(&self, project: &str, ok: bool) {
        let result = if ok { "ok" } else { "failed" };
        self.reloads
            .get_or_create(&Reload {
                project: project.to_owned(),
                result: result.to_owned(),
            })
            .inc();
        self.set_ready(project, ok);
    }

    /// Say whether `project` is ready.
    pub(crate) fn set_ready(&self, project: &str, ready: bool) {
        self.ready
            .get_or_create(&Project {
                project: project.to_owned(),
            })
            .set(i64::from(ready));
    }

    /// Bring the state store's failure count up to `failures` (what the
    /// store says so far).
    pub(crate) fn state_failures(&self, failures: u64) {
        let counted = self.state_errors.get();
        if failures > counted {
            self.state_errors.inc_by(failures - counted);
        }
    }

    /// Every metric, in the OpenMetrics text format.
    pub(crate) fn encode(&self) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)
            .expect("writing to a String does not fail");
        text
    }

    /// Every metric, in the Prometheus text format 0.0.4 (what a scraper
    /// that does not ask for OpenMetrics, and `promtool check metrics`,
    /// read): a counter's `# HELP` and `# TYPE` name its `_total` samples,
    /// and there is no `# EOF`.
    pub(crate) fn encode_prometheus(&self) -> String {
        prometheus_text(&self.encode())
    }
}

/// A request in flight.
pub(crate) struct InFlight<'a>(&'a Gauge<i64, std::sync::atomic::AtomicI64>);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// OpenMetrics text as the Prometheus text format 0.0.4.
fn prometheus_text(openmetrics: &str) -> String {
    let counters: std::collections::HashSet<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.strip_suffix(" counter"))
        .collect();
    let mut text = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .contains(name)
                .then(|| format!("{prefix}{name}_total {tail}"))
        });
        text.push_str(renamed.as_deref().unwrap_or(line));
        text.push('\n');
    }
    text
}

/// A hook's decision in one word, as metrics and traces name it.
pub(crate) fn decision_word(decision: &wasm_hooks_core::Decision) -> &'static str {
    use wasm_hooks_core::Decision;
    match decision {
        Decision::Proceed => "proceed",
        Decision::Allow { .. } => "allow",
        Decision::Deny { .. } => "deny",
        Decision::Ask(_) => "ask",
        Decision::Modify { .. } | Decision::ModifyOutput { .. } => "modify",
    }
}

/// A verdict in one word, as metrics and the access log name it.
pub(crate) fn verdict_word(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Proceed => "proceed",
        Verdict::Allow { .. } => "allow",
        Verdict::Deny { .. } => "deny",
        Verdict::Ask(_) => "ask",
    }
}

fn failure_reason(error: &HookError) -> &'static str {
    match error {
        HookError::Timeout { .. }
        | HookError::EventDeadline { .. }
        | HookError::ProjectShare { .. } => "timeout",
        HookError::FuelExhausted { .. } => "fuel",
        HookError::MemoryLimit { .. } => "memory",
        HookError::Trap { .. } | HookError::Signal { .. } => "crash",
        HookError::ExitCode { .. } => "exit_code",
        HookError::BadResult { .. } | HookError::ResultTooLarge { .. } => "bad_answer",
        _ => "error",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counters_are_named_by_their_total_samples_in_the_prometheus_format() {
        let open = "# HELP x_requests Requests.\n# TYPE x_requests counter\nx_requests_total 1\n# HELP x_up Up.\n# TYPE x_up gauge\nx_up 1\n# EOF\n";
        assert_eq!(
            super::prometheus_text(open),
            "# HELP x_requests_total Requests.\n# TYPE x_requests_total counter\nx_requests_total 1\n# HELP x_up Up.\n# TYPE x_up gauge\nx_up 1\n"
        );
    }
}

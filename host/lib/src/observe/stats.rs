//! What each hook has done, read back from the audit log (`wasm-hooks
//! stats`): how often it ran, what it decided, what it would have denied
//! as a dry run, how often it failed, how long it took, when it last ran.
//! A hook that never ran is visible beside the hooks configured.
//!
//! The log is read one line at a time in bounded memory (times are kept
//! in a histogram per hook, not one by one): a log of any size, or with
//! lines that are not records, is counted, never fatal.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufRead};
use std::time::SystemTime;

use hdrhistogram::Histogram;
use serde::{Serialize, Serializer};
use serde_json::Value;
use wasm_hooks_core::{AuditLine, HookSpec};

use super::lines::{self, Line};

/// What the audit log says of every hook in it.
#[derive(Debug, Default, Serialize)]
pub struct AuditStats {
    /// Each hook, by name.
    pub hooks: BTreeMap<String, HookStats>,
    /// Events dispatched (one `dispatch` record each).
    pub events: u64,
    /// Lines that are not records (a half line, a line past the size
    /// cap, text of another kind), skipped.
    pub unreadable: u64,
    /// Records before `since`, left out.
    pub earlier: u64,
    /// The time of the first and the last record counted.
    pub first: Option<String>,
    /// See `first`.
    pub last: Option<String>,
}

/// What one hook did.
#[derive(Debug, Default, Serialize)]
pub struct HookStats {
    /// How often it ran (answered, failed, or ran in the background).
    pub fired: u64,
    /// Its answers that were acted on, other than no opinion, by
    /// decision (`deny`, `ask`, `allow`, `modify`, …).
    pub decided: BTreeMap<String, u64>,
    /// Its answers that were not acted on (`enforcement: dryrun` or
    /// `warn`), other than no opinion, by decision: `deny` here is a
    /// would-deny.
    pub would: BTreeMap<String, u64>,
    /// How often it failed (crashed, timed out, answered nonsense).
    pub failures: u64,
    /// Its enforcement when it last ran: `enforce`, `warn` or `dryrun`.
    pub enforcement: String,
    /// The events it ran on.
    pub events: BTreeSet<String>,
    /// When it last ran (RFC 3339).
    pub last_seen: Option<String>,
    /// How long it took.
    #[serde(flatten)]
    pub elapsed: Elapsed,
}

/// How long a hook took, over its runs: a histogram of microseconds
/// (three significant figures), so that memory stays bounded.
#[derive(Debug)]
pub struct Elapsed(Histogram<u64>);

impl Default for Elapsed {
    fn default() -> Self {
        Self(Histogram::new(3).expect("three significant figures are in range"))
    }
}

impl Elapsed {
    /// The `quantile` (0 to 1) of the times recorded, in microseconds;
    /// `None` before any.
    pub fn quantile_us(&self, quantile: f64) -> Option<u64> {
        (!self.0.is_empty()).then(|| self.0.value_at_quantile(quantile))
    }

    fn record(&mut self, micros: u64) {
        self.0.saturating_record(micros);
    }
}

impl Serialize for Elapsed {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Shown {
            p50_us: Option<u64>,
            p99_us: Option<u64>,
        }
        Shown {
            p50_us: self.quantile_us(0.5),
            p99_us: self.quantile_us(0.99),
        }
        .serialize(s)
    }
}

impl AuditStats {
    /// Count the records of the audit log `reader` written at or after
    /// `since` (all without it).
    ///
    /// # Errors
    /// When `reader` fails; lines that are not records are counted in
    /// [`AuditStats::unreadable`].
    pub fn read(reader: impl BufRead, since: Option<SystemTime>) -> io::Result<Self> {
        let mut stats = Self::default();
        lines::each_line(reader, lines::MAX_LINE, |line| {
            let record = match line {
                Line::Whole(bytes) => serde_json::from_slice::<AuditLine>(bytes).ok(),
                Line::TooLong => None,
            };
            match record {
                Some(record) => stats.add(&record, since),
                None => stats.unreadable += 1,
            }
        })?;
        Ok(stats)
    }

    /// Count one record, unless it was written before `since`.
    fn add(&mut self, record: &AuditLine, since: Option<SystemTime>) {
        let when = humantime::parse_rfc3339_weak(&record.time).ok();
        if since.is_some_and(|since| when.is_none_or(|when| when < since)) {
            self.earlier += 1;
            return;
        }
        self.first.get_or_insert_with(|| record.time.clone());
        self.last = Some(record.time.clone());
        if record.kind == "dispatch" {
            self.events += 1;
            return;
        }
        let Some(hook) = &record.hook else { return };
        let ran = match record.kind.as_str() {
            "hook_result" | "hook_failure" => Ran::of_trace(&record.data),
            "background" => Ran::of_background(&record.data),
            _ => return,
        };
        let stats = self.hooks.entry(hook.clone()).or_default();
        stats.fired += 1;
        stats.last_seen = Some(record.time.clone());
        stats.events.extend(record.event.clone());
        stats.enforcement = ran.enforcement.to_owned();
        if let Some(micros) = ran.elapsed_us {
            stats.elapsed.record(micros);
        }
        match ran.decision {
            None => stats.failures += 1,
            Some("proceed") => {}
            Some(word) => {
                let counts = if ran.enforcement == "enforce" {
                    &mut stats.decided
                } else {
                    &mut stats.would
                };
                *counts.entry(word.to_owned()).or_default() += 1;
            }
        }
    }

    /// The hooks of `configured` that never ran in the records counted:
    /// dead, or not yet reached.
    pub fn never_fired<'a>(&self, configured: &'a [HookSpec]) -> Vec<&'a HookSpec> {
        configured
            .iter()
            .filter(|hook| !self.hooks.contains_key(hook.id.as_str()))
            .collect()
    }
}

/// One run of a hook, as its record tells it.
struct Ran<'a> {
    /// Its decision's word; `None` when it failed.
    decision: Option<&'a str>,
    enforcement: &'a str,
    elapsed_us: Option<u64>,
}

impl<'a> Ran<'a> {
    /// A foreground hook's trace entry (`hook_result`, `hook_failure`).
    fn of_trace(data: &'a Value) -> Self {
        Self {
            decision: data["status"]["answered"]["decision"].as_str(),
            enforcement: data["enforcement"].as_str().unwrap_or("enforce"),
            elapsed_us: data["elapsed_us"].as_u64(),
        }
    }

    /// A background hook's answer (`background`): never acted on, so
    /// counted as decided only in words.
    fn of_background(data: &'a Value) -> Self {
        Self {
            decision: data["answered"]["decision"].as_str(),
            enforcement: "enforce",
            elapsed_us: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(time: &str, kind: &str, hook: Option<&str>, data: Value) -> String {
        let line = json!({"seq": 1, "time": time, "session": "s", "kind": kind,
            "event": "PreToolUse", "hook": hook, "data": data, "prev": "0"});
        line.to_string()
    }

    fn answered(decision: &str, enforcement: Option<&str>, micros: u64) -> Value {
        let mut data = json!({"hook": "h", "elapsed_us": micros,
            "status": {"answered": {"decision": decision}}, "output": {}});
        if let Some(e) = enforcement {
            data["enforcement"] = json!(e);
        }
        data
    }

    #[test]
    fn decisions_would_denies_failures_and_times_are_counted_per_hook() {
        let t = "2026-12-07T10:00:00.000Z";
        let log = [
            record(t, "dispatch", None, json!({})),
            record(t, "hook_result", Some("guard"), answered("deny", None, 10)),
            record(
                t,
                "hook_result",
                Some("guard"),
                answered("proceed", None, 30),
            ),
            record(
                t,
                "hook_result",
                Some("trial"),
                answered("deny", Some("dryrun"), 5),
            ),
            record(
                t,
                "hook_failure",
                Some("trial"),
                json!({"hook": "trial", "elapsed_us": 7,
                "status": {"failed": {"error": "x", "policy": "ignore"}}, "enforcement": "dryrun"}),
            ),
            "{half a line".to_owned(),
        ]
        .join("\n");
        let stats = AuditStats::read(log.as_bytes(), None).unwrap();
        assert_eq!((stats.events, stats.unreadable), (1, 1));
        let guard = &stats.hooks["guard"];
        assert_eq!(
            (guard.fired, guard.decided["deny"], guard.failures),
            (2, 1, 0)
        );
        assert!(guard.would.is_empty());
        assert_eq!(guard.elapsed.quantile_us(0.99), Some(30));
        let trial = &stats.hooks["trial"];
        assert_eq!(
            (trial.fired, trial.would["deny"], trial.failures),
            (2, 1, 1)
        );
        assert!(trial.decided.is_empty(), "a dry run decides nothing");
        assert_eq!(trial.enforcement, "dryrun");
    }

    #[test]
    fn since_leaves_out_older_records() {
        let log = [
            record(
                "2026-12-01T10:00:00Z",
                "hook_result",
                Some("old"),
                answered("deny", None, 1),
            ),
            record(
                "2026-12-07T10:00:00Z",
                "hook_result",
                Some("new"),
                answered("deny", None, 1),
            ),
        ]
        .join("\n");
        let since = humantime::parse_rfc3339("2026-12-05T00:00:00Z").unwrap();
        let stats = AuditStats::read(log.as_bytes(), Some(since)).unwrap();
        assert_eq!(stats.hooks.keys().collect::<Vec<_>>(), ["new"]);
        assert_eq!(stats.earlier, 1);
    }
}

//! Turning measured durations into a summary: median, 99th percentile and
//! mean, in microseconds.

use std::time::Duration;

use serde::Serialize;

/// One case's results.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Summary {
    pub(crate) name: String,
    pub(crate) n: usize,
    pub(crate) p50_us: f64,
    pub(crate) p99_us: f64,
    pub(crate) mean_us: f64,
    /// Page faults the measuring thread took per event, for the cases run
    /// in-process (copy-on-write faults are most of a large guest's cost).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) faults_per_event: Option<f64>,
    /// The largest resident memory of the processes it ran, in KiB (the
    /// compile cases).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) peak_kb: Option<u64>,
}

impl Summary {
    /// The summary of `samples` (at least one).
    pub(crate) fn of(name: impl Into<String>, mut samples: Vec<Duration>) -> Self {
        samples.sort_unstable();
        let n = samples.len().max(1);
        let at = |q: f64| {
            let i = ((n as f64 * q).ceil() as usize).clamp(1, n) - 1;
            micros(samples.get(i).copied().unwrap_or_default())
        };
        let total: Duration = samples.iter().sum();
        Self {
            name: name.into(),
            n: samples.len(),
            p50_us: at(0.50),
            p99_us: at(0.99),
            mean_us: micros(total) / n as f64,
            faults_per_event: None,
            peak_kb: None,
        }
    }

    /// This summary, with the peak resident memory of its processes.
    pub(crate) fn with_peak_kb(mut self, kb: u64) -> Self {
        self.peak_kb = Some(kb);
        self
    }

    /// This summary, with `faults` page faults taken over its events.
    pub(crate) fn with_faults(mut self, faults: u64) -> Self {
        self.faults_per_event = Some(faults as f64 / self.n.max(1) as f64);
        self
    }

    /// This summary without a fault count: for a case whose work runs in
    /// another process (a command hook, `serve`), where the measuring
    /// thread's faults are not the case's.
    pub(crate) fn run_elsewhere(mut self) -> Self {
        self.faults_per_event = None;
        self
    }

    /// A case measured as a rate: `per_event` is the wall time divided by
    /// the events handled, so every column holds it.
    pub(crate) fn rate(name: impl Into<String>, n: usize, per_event: Duration) -> Self {
        let us = micros(per_event);
        Self {
            name: name.into(),
            n,
            p50_us: us,
            p99_us: us,
            mean_us: us,
            faults_per_event: None,
            peak_kb: None,
        }
    }
}

/// The page faults (minor and major) the calling thread has taken so far.
pub(crate) fn thread_faults() -> u64 {
    // SAFETY: `getrusage` writes only the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        if libc::getrusage(libc::RUSAGE_THREAD, &mut usage) != 0 {
            return 0;
        }
        usage
    };
    u64::try_from(usage.ru_minflt + usage.ru_majflt).unwrap_or(0)
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// `12.3 µs`, `4.56 ms`, `1.23 s`.
pub(crate) fn human(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.1} µs")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_the_nearest_rank() {
        let samples = (1..=100).map(Duration::from_micros).collect();
        let s = Summary::of("x", samples);
        assert_eq!((s.p50_us, s.p99_us, s.mean_us), (50.0, 99.0, 50.5));
        assert_eq!(human(12.34), "12.3 µs");
        assert_eq!(human(4560.0), "4.56 ms");
    }
}

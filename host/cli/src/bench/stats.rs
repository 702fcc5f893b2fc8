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
        }
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
        }
    }
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

//! The result model every persistent sink shares (results store, journal, Prometheus,
//! report table): per-thread summaries converted once from a measurement, all values in
//! **ns**, and the verdict they were judged to.

use crate::measure::cyclic::ThreadResult;
use crate::measure::stats::LatencyStats;
use serde::{Deserialize, Serialize};

/// One measuring thread's figures. Latencies in **ns**.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadSummary {
    /// Thread index within its test.
    pub thread: usize,
    /// CPU the thread was pinned to (`None`: not pinned).
    pub cpu: Option<usize>,
    /// Priority it ran at.
    pub priority: i32,
    /// Interval in **µs** (cyclic) or message interval (pair tests).
    pub interval_us: u64,
    /// Samples.
    pub count: u64,
    /// Minimum.
    pub min_ns: u64,
    /// Mean, rounded.
    pub avg_ns: u64,
    /// Median.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// 99.99th percentile.
    pub p9999_ns: u64,
    /// Maximum (exact).
    pub max_ns: u64,
    /// Overruns (late wakeups past the next deadline, or receive timeouts).
    pub overruns: u64,
    /// The latency distribution as `[value_ns, count]` pairs, one per non-empty
    /// HdrHistogram bucket (value = highest value equivalent to the bucket; 0.1 % wide).
    pub histogram: Vec<[u64; 2]>,
}

impl ThreadSummary {
    /// Summarises `stats` for thread `thread` on `cpu`.
    pub fn from_stats(
        thread: usize,
        cpu: Option<usize>,
        priority: i32,
        interval_us: u64,
        stats: &LatencyStats,
    ) -> Self {
        ThreadSummary {
            thread,
            cpu,
            priority,
            interval_us,
            count: stats.count,
            min_ns: stats.min(),
            avg_ns: stats.mean_ns().round() as u64,
            p50_ns: stats.quantile_ns(0.50),
            p90_ns: stats.quantile_ns(0.90),
            p99_ns: stats.quantile_ns(0.99),
            p999_ns: stats.quantile_ns(0.999),
            p9999_ns: stats.quantile_ns(0.9999),
            max_ns: stats.max_ns,
            overruns: stats.overruns,
            histogram: stats
                .hdr
                .iter_recorded()
                .map(|v| {
                    [
                        stats.hdr.highest_equivalent(v.value_iterated_to()),
                        v.count_at_value(),
                    ]
                })
                .collect(),
        }
    }

    /// Summarises one cyclic thread.
    pub fn from_cyclic(t: &ThreadResult) -> Self {
        Self::from_stats(
            t.spec.index,
            t.spec.cpu,
            t.spec.priority,
            t.spec.interval_us,
            &t.stats,
        )
    }
}

/// One test's results (e.g. `cyclic`, `pmq`, `pipe`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestSummary {
    /// Test name.
    pub test: String,
    /// Per-thread figures, in thread order.
    pub threads: Vec<ThreadSummary>,
}

/// One judged figure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Test name.
    pub test: String,
    /// Thread index.
    pub thread: usize,
    /// CPU, if pinned.
    pub cpu: Option<usize>,
    /// Which figure: `max`, `avg`, `p99`, `p999`, `p9999`, `overruns`.
    pub what: String,
    /// Measured value (**ns** for latencies, a count for overruns).
    pub value: u64,
    /// Limit in the same unit as `value`.
    pub limit: u64,
    /// Whether `value <= limit`.
    pub pass: bool,
}

/// The self-test's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// True when every check passed (and at least one sample was taken per thread).
    pub pass: bool,
    /// Every judged figure.
    pub checks: Vec<Check>,
    /// Problems that fail the run regardless of limits (e.g. a thread with no samples).
    pub problems: Vec<String>,
}

impl Verdict {
    /// `pass` or `fail`, the value of `RTBENCH_VERDICT`.
    pub fn word(&self) -> &'static str {
        if self.pass {
            "pass"
        } else {
            "fail"
        }
    }

    /// The worst (smallest-margin) check of `test` on `thread`, for one-line reports.
    pub fn checks_for(&self, test: &str, thread: usize) -> impl Iterator<Item = &Check> {
        let test = test.to_string();
        self.checks
            .iter()
            .filter(move |c| c.test == test && c.thread == thread)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_pairs_add_up_to_count() {
        let mut s = LatencyStats::new(None);
        for v in [1000u64, 1000, 2000, 50_000, 1_000_000] {
            s.record(v);
        }
        let t = ThreadSummary::from_stats(0, Some(1), 98, 1000, &s);
        assert_eq!(t.histogram.iter().map(|p| p[1]).sum::<u64>(), 5);
        assert_eq!(t.count, 5);
        assert_eq!(t.max_ns, 1_000_000);
        assert!(t
            .histogram
            .iter()
            .any(|p| p[0] >= 1_000_000 && p[0] <= 1_001_000));
    }
}

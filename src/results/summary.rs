//! The result model every persistent sink shares (results store, journal, Prometheus,
//! report table): per-thread summaries converted once from a measurement, all values in
//! **ns**, and the verdict they were judged to.

use crate::duration::{us, UsStyle};
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
    /// Periods those overruns skipped (a wakeup or message `k` intervals late misses
    /// `k`; `rtbench cyclic`'s `Missed:`). Absent in results of older versions: see
    /// [`ThreadSummary::missed`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missed_periods: Option<u64>,
    /// The latency distribution as `[value_ns, count]` pairs, one per non-empty
    /// bucket (value = the highest value of the bucket; at most 1/128 wide, see
    /// `measure/histogram.rs`; results of versions before 0.78 % buckets have 0.1 %).
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
            missed_periods: Some(stats.missed_periods),
            histogram: stats.hist.sparse(),
        }
    }

    /// Periods missed. A result of an older version, which did not count them, reads
    /// as its overrun count: a lower bound, since every overrun misses at least one
    /// period.
    pub fn missed(&self) -> u64 {
        self.missed_periods.unwrap_or(self.overruns)
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

impl ThreadSummary {
    /// Summarises one pair of `rtbench pmq`/`rtbench pipe`: `thread` is the pair
    /// number, the figures are the sender → receiver latency per message (pmqtest's
    /// figure; for pipes the forward hand-over), overruns the messages that arrived
    /// later than the pair's interval.
    pub fn from_pair(p: &crate::measure::pair::PairResult) -> Self {
        Self::from_stats(
            p.spec.index,
            p.spec.cpu,
            p.spec.priority,
            p.spec.interval_us,
            &p.forward,
        )
    }
}

/// One test's results (e.g. `cyclic`, `pmq`, `pipe`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestSummary {
    /// Test name.
    pub test: String,
    /// The `[[condition]]` it ran in (`idle`, `stress`, …): the self-test measures each
    /// condition's tests under that condition's load; absent when the configuration
    /// names no conditions (and in files of older rtbench versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// pmq and pipe: the message size, **bytes** (`[pmq]`/`[pipe]` `msg_size`,
    /// default 32); absent for cyclic and in files of older rtbench versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg_size: Option<usize>,
    /// How long this test measured, **seconds** (the self-test runs its tests one
    /// after the other: each has its own); absent in files of older rtbench versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// `[output] histogram_us`: the range of this test's 1-µs histogram as `rtbench
    /// plot` draws it, **µs** (cyclictest's `-h US`: samples beyond it are counted as
    /// overflows); absent when not configured (the plot then covers every sample).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram_us: Option<u64>,
    /// Per-thread figures, in thread order.
    pub threads: Vec<ThreadSummary>,
    /// Its samples over the explain threshold, explained from the kernel's trace
    /// (`[explain]`, `crate::explain`); absent when nothing was to be explained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<crate::explain::explainer::ExplainSummary>,
}

/// One judged figure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Test name (`cyclic`; `pmq`, `pipe` once the self-test runs them).
    pub test: String,
    /// The `[[condition]]` of the test ([`TestSummary::condition`]); absent without
    /// conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
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
    /// Why the sample behind a failed `max` was late, from its explanation
    /// (`crate::explain::text::headline`); absent when it was not explained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The failed `max` was a sample that is not the system's latency (the process
    /// stopped, throttling, a clock step: the explanation says which): the check
    /// cannot judge the unit, it makes the run invalid rather than failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub invalid: bool,
}

impl Check {
    /// The statistic as people write it: `max`, `avg`, `p99`, `p99.9`, `p99.99`,
    /// `overruns`.
    pub fn statistic(&self) -> &str {
        statistic_name(&self.what)
    }

    /// Whether the figure is a latency (**ns**) rather than a count.
    pub fn is_latency(&self) -> bool {
        self.what != "overruns"
    }

    /// `value` for people: **µs** for latencies ([`us`] [`UsStyle::Text`]), a plain count
    /// otherwise.
    pub fn value_text(&self) -> String {
        self.amount(self.value)
    }

    /// `limit` for people, like [`Check::value_text`].
    pub fn limit_text(&self) -> String {
        self.amount(self.limit)
    }

    fn amount(&self, v: u64) -> String {
        if self.is_latency() {
            us(v, UsStyle::Text)
        } else {
            v.to_string()
        }
    }

    /// The CPU as shown: its number, or `-` when the thread was not pinned.
    pub fn cpu_text(&self) -> String {
        self.cpu.map_or_else(|| "-".to_string(), |c| c.to_string())
    }

    /// One line naming everything about a failed check, in **µs**:
    /// `cyclic CPU 1 p99.9 2974.0 µs > limit 50 µs`, `pmq pair 0 CPU 1 max …`, after
    /// its condition when it has one (`stress: cyclic CPU 1 max 112 µs > limit
    /// 100 µs`), and the cause when the sample was explained (`…: thread latency
    /// 790 µs, CPU 1 ran kworker/1:2 (pid 123, FIFO 99) for 780 µs`).
    pub fn failure_text(&self) -> String {
        let mut t = format!(
            "{}{} {} {} > limit {}",
            condition_prefix(self.condition.as_deref()),
            thread_label(&self.test, self.thread, self.cpu),
            self.statistic(),
            self.value_text(),
            self.limit_text()
        );
        if let Some(c) = &self.cause {
            t.push_str(": ");
            t.push_str(c);
        }
        t
    }
}

/// `stress: ` for a figure of condition `stress`, empty without a condition: how every
/// line of the verdict names the condition it concerns.
pub fn condition_prefix(condition: Option<&str>) -> String {
    condition.map_or_else(String::new, |c| format!("{c}: "))
}

/// Whether `test` measures sender/receiver pairs (`pmq`, `pipe`) rather than one
/// thread per CPU (`cyclic`).
pub fn is_pair_test(test: &str) -> bool {
    matches!(test, "pmq" | "pipe")
}

/// Who a figure belongs to, for people: `cyclic CPU 1`, `monitor CPU 1`, `pmq pair 0
/// CPU 1` (`-` for a thread or pair that was not pinned).
pub fn thread_label(test: &str, thread: usize, cpu: Option<usize>) -> String {
    let cpu = cpu.map_or_else(|| "-".to_string(), |c| c.to_string());
    if is_pair_test(test) {
        format!("{test} pair {thread} CPU {cpu}")
    } else {
        format!("{test} CPU {cpu}")
    }
}

/// `p999` → `p99.9`, `p9999` → `p99.99`; other figure names unchanged.
pub fn statistic_name(what: &str) -> &str {
    match what {
        "p999" => "p99.9",
        "p9999" => "p99.99",
        w => w,
    }
}

/// The self-test's outcome: the value of `RTBENCH_VERDICT` and of the results file's
/// `verdict.outcome`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Every measured thread was judged against at least one limit and nothing failed.
    Pass,
    /// A limit was exceeded, a tuning item deviated or failed, or the run itself went
    /// wrong (no samples, load problems, interrupted).
    Fail,
    /// Nothing failed, but something measured was not judged (no `[limits]`, no limit
    /// applies to a CPU, or a configured hwlat gate could not look): not a pass. Exit 1 unless `[selftest] allow_unjudged = true`.
    Unjudged,
    /// Every limit exceeded was exceeded only by samples that are not the system's
    /// latency (the process was stopped or frozen, RT throttling; for SCHED_OTHER or
    /// CLOCK_REALTIME threads also CFS throttling or a wall-clock step: its
    /// explanation names it) and nothing else failed: neither a pass nor the unit's
    /// failure. Exit 4: measure again.
    Invalid,
}

impl Outcome {
    /// `pass`, `fail`, `unjudged` or `invalid`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Unjudged => "unjudged",
            Outcome::Invalid => "invalid",
        }
    }
}

/// A tuning item that deviated from the configuration or failed, by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TuningFinding {
    /// The item, e.g. `boot.isolcpus`, `sysctl.kernel.printk`.
    pub item: String,
    /// `deviation` or `failed`.
    pub status: String,
    /// What the configuration wants, when the item says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What the system has, when the item says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
    /// The item's own line (what was found, refused or expected).
    pub detail: String,
}

impl TuningFinding {
    /// `tuning boot.isolcpus deviation: expected 2-3, found none`, or with the item's
    /// detail when it names no expected/found values.
    pub fn text(&self) -> String {
        match (&self.expected, &self.found) {
            (Some(e), Some(f)) => format!(
                "tuning {} {}: expected {e}, found {f}",
                self.item, self.status
            ),
            _ => format!("tuning {} {}: {}", self.item, self.status, self.detail),
        }
    }
}

/// What a failure line of [`Verdict::marked_failures`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A failure: the unit's.
    Fail,
    /// A limit exceeded only by samples that are not the system's latency.
    Invalid,
}

impl Mark {
    /// `FAIL` or `INVALID`, as the report table prints it.
    pub fn word(self) -> &'static str {
        match self {
            Mark::Fail => "FAIL",
            Mark::Invalid => "INVALID",
        }
    }
}

/// The self-test's verdict, built by [`crate::results::verdict::verdict`]. The outcome
/// is derived from the parts when it is built: fail when anything failed, else unjudged
/// when anything measured was not judged, else pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// `pass`, `fail`, `unjudged` or `invalid`.
    pub outcome: Outcome,
    /// True only for [`Outcome::Pass`] (kept for readers of older results files).
    pub pass: bool,
    /// Every judged figure.
    pub checks: Vec<Check>,
    /// Problems that fail the run regardless of limits, each starting with what it
    /// concerns (`cyclic thread 0: no samples`, `load: ...`, `interrupted ...`).
    pub problems: Vec<String>,
    /// Tuning items that deviated or failed.
    pub tuning: Vec<TuningFinding>,
    /// Why something measured was not judged (empty when everything was).
    pub unjudged: Vec<String>,
}

/// [`Verdict`] as written by any rtbench version: older results files have only `pass`.
#[derive(Deserialize)]
struct VerdictFile {
    outcome: Option<Outcome>,
    pass: bool,
    #[serde(default)]
    checks: Vec<Check>,
    #[serde(default)]
    problems: Vec<String>,
    #[serde(default)]
    tuning: Vec<TuningFinding>,
    #[serde(default)]
    unjudged: Vec<String>,
}

impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f = VerdictFile::deserialize(d)?;
        let outcome = f
            .outcome
            .unwrap_or(if f.pass { Outcome::Pass } else { Outcome::Fail });
        Ok(Verdict {
            outcome,
            pass: outcome == Outcome::Pass,
            checks: f.checks,
            problems: f.problems,
            tuning: f.tuning,
            unjudged: f.unjudged,
        })
    }
}

impl Verdict {
    /// A verdict from its parts, without tuning findings (see [`Verdict::from_parts`]).
    pub fn new(checks: Vec<Check>, problems: Vec<String>, unjudged: Vec<String>) -> Verdict {
        Verdict::from_parts(checks, problems, Vec::new(), unjudged)
    }

    /// A verdict from its parts, its outcome derived from them: fail when a check
    /// failed or a problem or tuning finding exists; else unjudged when something was
    /// not judged or nothing was checked at all; else pass.
    pub fn from_parts(
        checks: Vec<Check>,
        problems: Vec<String>,
        tuning: Vec<TuningFinding>,
        unjudged: Vec<String>,
    ) -> Verdict {
        let mut v = Verdict {
            outcome: Outcome::Fail,
            pass: false,
            checks,
            problems,
            tuning,
            unjudged,
        };
        v.settle();
        v
    }

    /// Derives `outcome` and `pass` from the parts.
    fn settle(&mut self) {
        let failed = self.checks.iter().any(|c| !c.pass && !c.invalid)
            || !self.tuning.is_empty()
            || !self.problems.is_empty();
        self.outcome = if failed {
            Outcome::Fail
        } else if self.checks.iter().any(|c| c.invalid) {
            Outcome::Invalid
        } else if !self.unjudged.is_empty() || self.checks.is_empty() {
            Outcome::Unjudged
        } else {
            Outcome::Pass
        };
        self.pass = self.outcome == Outcome::Pass;
    }

    /// `pass`, `fail`, `unjudged` or `invalid`, the value of `RTBENCH_VERDICT`.
    pub fn word(&self) -> &'static str {
        self.outcome.as_str()
    }

    /// Every check of `test` on `thread` (of `t`'s test and condition).
    pub fn checks_for<'a>(
        &'a self,
        t: &'a TestSummary,
        thread: usize,
    ) -> impl Iterator<Item = &'a Check> {
        self.checks
            .iter()
            .filter(move |c| c.test == t.test && c.condition == t.condition && c.thread == thread)
    }

    /// The outcome of one thread of `test` (a cyclic CPU, a pmq/pipe pair) from its
    /// checks alone: unjudged when no limit applied, pass when every check passed,
    /// invalid when every failed check is invalid (not the system's latency), else
    /// fail. The per-CPU `RTBENCH_VERDICT` of the result entry and the Prometheus
    /// `rtbench_cpu_verdict`; the run's [`Verdict::outcome`] also weighs tuning and
    /// problems.
    pub fn thread_outcome(&self, test: &TestSummary, thread: usize) -> Outcome {
        let mut checks = self.checks_for(test, thread).peekable();
        if checks.peek().is_none() {
            return Outcome::Unjudged;
        }
        let (mut failed, mut real) = (false, false);
        for c in checks.filter(|c| !c.pass) {
            failed = true;
            real |= !c.invalid;
        }
        match (failed, real) {
            (false, _) => Outcome::Pass,
            (true, false) => Outcome::Invalid,
            (true, true) => Outcome::Fail,
        }
    }

    /// Everything that failed, one line each, in **µs**: failed checks (test, CPU,
    /// statistic, value, limit, and the cause when explained; the invalid ones too),
    /// tuning deviations and failures (item, expected, found), then the other
    /// problems. [`Verdict::marked_failures`] with the marks left out.
    pub fn failures(&self) -> Vec<String> {
        self.marked_failures().into_iter().map(|(_, l)| l).collect()
    }

    /// [`Verdict::failures`], each line with its mark: [`Mark::Invalid`] for a check
    /// whose maximum is not the system's latency ([`Check::invalid`]), else
    /// [`Mark::Fail`]. The one place the failure lines are built.
    pub fn marked_failures(&self) -> Vec<(Mark, String)> {
        self.checks
            .iter()
            .filter(|c| !c.pass)
            .map(|c| {
                let mark = if c.invalid { Mark::Invalid } else { Mark::Fail };
                (mark, c.failure_text())
            })
            .chain(self.tuning.iter().map(|t| (Mark::Fail, t.text())))
            .chain(self.problems.iter().map(|p| (Mark::Fail, p.clone())))
            .collect()
    }

    /// Why the run is unjudged, one line (empty unless the outcome is unjudged).
    pub fn unjudged_reason(&self) -> String {
        if self.outcome != Outcome::Unjudged {
            return String::new();
        }
        if self.unjudged.is_empty() {
            "nothing was judged".into()
        } else {
            self.unjudged.join("; ")
        }
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
            .any(|p| p[0] >= 1_000_000 && p[0] <= 1_000_000 + 1_000_000 / 128));
    }
}

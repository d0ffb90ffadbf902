//! The self-test's Prometheus textfile for node_exporter's textfile collector: one file,
//! replaced atomically after every self-test (node_exporter never reads half a file),
//! written through [`super::exposition`] (the monitor's textfile uses the same writer).
//!
//! Source: node_exporter's textfile collector README. Latencies are exported in base
//! units (seconds).
//!
//! Each measuring thread's series are labelled `test`, `cpu` and, as the journal and
//! `rtbench report` name them, `thread` (cyclic: the thread's index) or `pair`
//! (pmq, pipe: the pair's number, `crate::results::summary::thread_label`).

use super::exposition::{Exposition, Kind, Labels, Seconds};
use super::Sink;
use crate::results::store::StoredRun;
use crate::results::summary::{is_pair_test, Outcome};

/// The labels of one measuring thread of `test` (see the module documentation), after
/// `condition` when the test ran in a `[[condition]]`.
fn thread_labels(condition: Option<&str>, test: &str, thread: usize, cpu: Option<usize>) -> Labels {
    let cpu = cpu.map_or_else(|| "none".to_string(), |c| c.to_string());
    let labels = match condition {
        Some(c) => Labels::new().with("condition", c),
        None => Labels::new(),
    };
    labels
        .with("test", test)
        .with(if is_pair_test(test) { "pair" } else { "thread" }, thread)
        .with("cpu", cpu)
}

/// The labels of a whole test: its condition (when it has one) and name.
fn test_labels(t: &crate::results::summary::TestSummary) -> Labels {
    let labels = match &t.condition {
        Some(c) => Labels::new().with("condition", c),
        None => Labels::new(),
    };
    labels.with("test", &t.test)
}

/// The four outcomes, in the order the verdict families list them.
const OUTCOMES: [Outcome; 4] = [
    Outcome::Pass,
    Outcome::Fail,
    Outcome::Unjudged,
    Outcome::Invalid,
];

/// The textfile as a sink (see [`render`]).
pub struct Prometheus;

impl Sink<StoredRun> for Prometheus {
    fn write(&self, run: &StoredRun, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(render(run).as_bytes())
    }
}

/// Renders `run` in the text exposition format.
pub fn render(run: &StoredRun) -> String {
    let mut x = Exposition::new();
    thread_families(&mut x, run);
    limit_families(&mut x, run);
    // Tuning not checked (mode off) has no count: 0 would read as "clean".
    if run.tuning.get("action").is_some() {
        let mut f = x.family(
            "rtbench_tuning_deviations",
            Kind::Gauge,
            "Tuning items of the last self-test that deviated from [tuning] (status deviation) or could not be applied (status failed); absent when the tuning was not checked ([selftest] mode = off).",
        );
        for status in ["deviation", "failed"] {
            let n = run
                .verdict
                .tuning
                .iter()
                .filter(|t| t.status == status)
                .count();
            f.sample(&Labels::new().with("status", status), n);
        }
    }
    let none = Labels::new();
    x.family(
        "rtbench_selftest_pass",
        Kind::Gauge,
        "1 when the last self-test passed every limit and exited 0 (every requested output written), else 0.",
    )
    .sample(&none, run.passed() as u8);
    let mut f = x.family(
        "rtbench_selftest_verdict",
        Kind::Gauge,
        "Verdict of the last self-test: 1 for the verdict it had (pass, fail, unjudged, invalid), 0 for the others.",
    );
    for o in OUTCOMES {
        f.sample(
            &Labels::new().with("verdict", o.as_str()),
            (run.verdict.outcome == o) as u8,
        );
    }
    x.family(
        "rtbench_selftest_exit_code",
        Kind::Gauge,
        "Exit code of the last self-test (0 accepted; 1 fail or unjudged; see rtbench selftest --help).",
    )
    .sample(&none, run.exit_status());
    x.family(
        "rtbench_selftest_stored",
        Kind::Gauge,
        "1 when the last self-test's result is in the results store, 0 when it could not be stored.",
    )
    .sample(&none, run.store_error.is_none() as u8);
    x.family(
        "rtbench_selftest_timestamp_seconds",
        Kind::Gauge,
        "Start of the last self-test, seconds since the epoch.",
    )
    .sample(&none, run.start_s);
    x.family(
        "rtbench_selftest_duration_seconds",
        Kind::Gauge,
        "Measured duration of the last self-test.",
    )
    .sample(&none, run.duration_s);
    explained_families(&mut x, run);
    // The unit, for factory records (absent when neither the hardware nor the line
    // names it).
    if let Some(u) = &run.unit {
        let labels = u
            .parts()
            .into_iter()
            .fold(Labels::new(), |l, (k, v)| l.with(k, v));
        x.family(
            "rtbench_unit_info",
            Kind::Gauge,
            "The unit the last self-test measured: its serial number (DMI, device tree or /proc/cpuinfo) and the factory line's label, station and order, as labels; always 1.",
        )
        .sample(&labels, 1);
    }
    x.family(
        "rtbench_kernel_preempt_rt",
        Kind::Gauge,
        "1 when the kernel is PREEMPT_RT.",
    )
    .sample(
        &Labels::new().with("release", &run.sysinfo.release),
        run.sysinfo.realtime as u8,
    );
    x.finish()
}

/// The families of each measuring thread (labelled as [`thread_labels`]): its latency
/// quantiles (a summary), maximum, overruns, missed periods and verdict, all in
/// seconds where they are latencies (the run holds ns).
fn thread_families(x: &mut Exposition, run: &StoredRun) {
    let threads = || {
        run.tests.iter().flat_map(|t| {
            t.threads.iter().map(move |th| {
                let labels = thread_labels(t.condition.as_deref(), &t.test, th.thread, th.cpu);
                (labels, th, t)
            })
        })
    };
    let mut f = x.family(
        "rtbench_latency_seconds",
        Kind::Summary,
        "Wakeup/handover latency quantiles of the last self-test.",
    );
    for (labels, th, _) in threads() {
        let quantiles = [
            ("0.5", th.p50_ns),
            ("0.9", th.p90_ns),
            ("0.99", th.p99_ns),
            ("0.999", th.p999_ns),
            ("0.9999", th.p9999_ns),
        ];
        let nines = th
            .high_nines_ns
            .map(|[a, b]| [("0.99999", a), ("0.999999", b)]);
        let quantiles: Vec<(&str, u64)> = quantiles
            .into_iter()
            .chain(nines.into_iter().flatten())
            .chain([("1", th.max_ns)])
            .collect();
        f.summary(&labels, &quantiles, th.avg_ns, th.count);
    }
    let mut f = x.family(
        "rtbench_latency_max_seconds",
        Kind::Gauge,
        "Largest latency of the last self-test.",
    );
    for (labels, th, _) in threads() {
        f.sample(&labels, Seconds(th.max_ns));
    }
    let mut f = x.family(
        "rtbench_overruns",
        Kind::Gauge,
        "Wakeups (cyclic) or messages (pmq) later than the following deadline in the last self-test.",
    );
    for (labels, th, _) in threads() {
        f.sample(&labels, th.overruns);
    }
    let mut f = x.family(
        "rtbench_missed_periods",
        Kind::Gauge,
        "Periods the late wakeups (cyclic) or messages (pmq, pipe) skipped in the last self-test (k intervals late misses k).",
    );
    for (labels, th, _) in threads() {
        f.sample(&labels, th.missed());
    }
    let mut f = x.family(
        "rtbench_cpu_verdict",
        Kind::Gauge,
        "Verdict of each test on each CPU (pair for pmq, pipe) in the last self-test, from its limits alone: 1 for the verdict it had (pass, fail, unjudged: no limit applied, invalid: not the system's latency), 0 for the others.",
    );
    for (labels, th, test) in threads() {
        let outcome = run.verdict.thread_outcome(test, th.thread);
        for o in OUTCOMES {
            f.sample(
                &labels.clone().with("verdict", o.as_str()),
                (outcome == o) as u8,
            );
        }
    }
}

/// The limits the verdict judged each thread against: latency limits (seconds, by
/// statistic) and overrun limits (counts).
fn limit_families(x: &mut Exposition, run: &StoredRun) {
    let mut f = x.family(
        "rtbench_limit_seconds",
        Kind::Gauge,
        "Latency limits ([limits], per test and CPU) the last self-test judged each figure against, by statistic (max, avg, p99, p999, p9999, p99999, p999999).",
    );
    for c in run.verdict.checks.iter().filter(|c| c.is_latency()) {
        let labels = thread_labels(c.condition.as_deref(), &c.test, c.thread, c.cpu)
            .with("statistic", &c.what);
        f.sample(&labels, Seconds(c.limit));
    }
    let mut f = x.family(
        "rtbench_limit_overruns",
        Kind::Gauge,
        "Overrun limits ([limits] overruns, per test and CPU) of the last self-test.",
    );
    for c in run.verdict.checks.iter().filter(|c| !c.is_latency()) {
        let labels = thread_labels(c.condition.as_deref(), &c.test, c.thread, c.cpu);
        f.sample(&labels, c.limit);
    }
}

/// Explained samples by cause, and samples the recorder missed, for the tests that
/// explained any (`[explain]`); no family when none did.
fn explained_families(x: &mut Exposition, run: &StoredRun) {
    let explained: Vec<_> = run
        .tests
        .iter()
        .filter_map(|t| t.explain.as_ref().map(|x| (t, x)))
        .collect();
    if !explained.is_empty() {
        let mut f = x.family(
            "rtbench_selftest_explained",
            Kind::Gauge,
            "Samples over their limit explained in the last self-test, by test and cause (task, preempt_off, irq, softirq, nmi, silent, stopped, cfs_throttled, rt_throttled, clock_step, untraced, unknown).",
        );
        for (t, ex) in &explained {
            for (kind, n) in &ex.counts {
                f.sample(&test_labels(t).with("cause", kind.as_str()), *n);
            }
        }
        let mut f = x.family(
            "rtbench_selftest_unexplained",
            Kind::Gauge,
            "Samples over their limit in the last self-test that found the recorder busy with another one, by test.",
        );
        for (t, ex) in &explained {
            f.sample(&test_labels(t), ex.missed);
        }
    }
}

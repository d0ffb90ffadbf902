//! Prometheus text exposition for node_exporter's textfile collector: one file,
//! replaced atomically after every self-test (node_exporter never reads half a file).
//!
//! Source: Prometheus "Exposition formats" (text format 0.0.4) and node_exporter's
//! textfile collector README. Latencies are exported in base units (seconds).

use super::Sink;
use crate::results::store::StoredRun;
use crate::results::summary::Outcome;

/// Nanoseconds per second: Prometheus wants seconds.
const NS_PER_SEC: f64 = crate::sys::clock::NS_PER_SEC as f64;
use std::fmt::Write;

/// The textfile as a sink (see [`render`]).
pub struct Prometheus;

impl Sink<StoredRun> for Prometheus {
    fn write(&self, run: &StoredRun, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(render(run).as_bytes())
    }
}

fn secs(ns: u64) -> String {
    format!("{:e}", ns as f64 / NS_PER_SEC)
}

/// Renders `run` in the text exposition format.
pub fn render(run: &StoredRun) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# HELP rtbench_latency_seconds Wakeup/handover latency quantiles of the last self-test."
    );
    let _ = writeln!(s, "# TYPE rtbench_latency_seconds summary");
    for t in &run.tests {
        for th in &t.threads {
            let labels = labels(&t.test, th.thread, th.cpu);
            for (q, v) in [
                ("0.5", th.p50_ns),
                ("0.9", th.p90_ns),
                ("0.99", th.p99_ns),
                ("0.999", th.p999_ns),
                ("0.9999", th.p9999_ns),
                ("1", th.max_ns),
            ] {
                let _ = writeln!(
                    s,
                    "rtbench_latency_seconds{{{labels},quantile=\"{q}\"}} {}",
                    secs(v)
                );
            }
            let sum = th.avg_ns as f64 * th.count as f64 / NS_PER_SEC;
            let _ = writeln!(s, "rtbench_latency_seconds_sum{{{labels}}} {sum:e}");
            let _ = writeln!(s, "rtbench_latency_seconds_count{{{labels}}} {}", th.count);
        }
    }
    let gauge = |s: &mut String, name: &str, help: &str| {
        let _ = writeln!(s, "# HELP {name} {help}");
        let _ = writeln!(s, "# TYPE {name} gauge");
    };
    gauge(
        &mut s,
        "rtbench_latency_max_seconds",
        "Largest latency of the last self-test.",
    );
    for t in &run.tests {
        for th in &t.threads {
            let _ = writeln!(
                s,
                "rtbench_latency_max_seconds{{{}}} {}",
                labels(&t.test, th.thread, th.cpu),
                secs(th.max_ns)
            );
        }
    }
    gauge(
        &mut s,
        "rtbench_overruns",
        "Wakeups (cyclic) or messages (pmq) later than the following deadline in the last self-test.",
    );
    for t in &run.tests {
        for th in &t.threads {
            let _ = writeln!(
                s,
                "rtbench_overruns{{{}}} {}",
                labels(&t.test, th.thread, th.cpu),
                th.overruns
            );
        }
    }
    gauge(
        &mut s,
        "rtbench_selftest_pass",
        "1 when the last self-test passed every limit, else 0 (fail or unjudged).",
    );
    let _ = writeln!(s, "rtbench_selftest_pass {}", run.verdict.pass as u8);
    gauge(
        &mut s,
        "rtbench_selftest_verdict",
        "Verdict of the last self-test: 1 for the verdict it had (pass, fail, unjudged), 0 for the others.",
    );
    for o in [Outcome::Pass, Outcome::Fail, Outcome::Unjudged] {
        let _ = writeln!(
            s,
            "rtbench_selftest_verdict{{verdict=\"{}\"}} {}",
            o.as_str(),
            (run.verdict.outcome == o) as u8
        );
    }
    gauge(
        &mut s,
        "rtbench_selftest_exit_code",
        "Exit code of the last self-test (0 accepted; 1 fail or unjudged; see rtbench selftest --help).",
    );
    let _ = writeln!(
        s,
        "rtbench_selftest_exit_code {}",
        run.exit_code
            .unwrap_or(if run.verdict.pass { 0 } else { 1 })
    );
    gauge(
        &mut s,
        "rtbench_selftest_stored",
        "1 when the last self-test's result is in the results store, 0 when it could not be stored.",
    );
    let _ = writeln!(
        s,
        "rtbench_selftest_stored {}",
        run.store_error.is_none() as u8
    );
    gauge(
        &mut s,
        "rtbench_selftest_timestamp_seconds",
        "Start of the last self-test, seconds since the epoch.",
    );
    let _ = writeln!(s, "rtbench_selftest_timestamp_seconds {}", run.start_s);
    gauge(
        &mut s,
        "rtbench_selftest_duration_seconds",
        "Measured duration of the last self-test.",
    );
    let _ = writeln!(s, "rtbench_selftest_duration_seconds {}", run.duration_s);
    gauge(
        &mut s,
        "rtbench_kernel_preempt_rt",
        "1 when the kernel is PREEMPT_RT.",
    );
    let _ = writeln!(
        s,
        "rtbench_kernel_preempt_rt{{release=\"{}\"}} {}",
        escape(&run.sysinfo.release),
        run.sysinfo.realtime as u8
    );
    s
}

fn labels(test: &str, thread: usize, cpu: Option<usize>) -> String {
    let cpu = cpu.map_or_else(|| "none".to_string(), |c| c.to_string());
    format!(
        "test=\"{}\",thread=\"{thread}\",cpu=\"{cpu}\"",
        escape(test)
    )
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

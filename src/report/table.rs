//! `rtbench report`'s human table: one row per test and CPU with min / avg / p99 /
//! p99.9 / max (µs), overruns, the max limit and the verdict, fitting an 80-column
//! serial console.

use super::store::StoredRun;
use std::fmt::Write;

/// Renders the header line and the table for `run`.
pub fn render(run: &StoredRun) -> String {
    let mut s = String::new();
    let si = &run.sysinfo;
    let _ = writeln!(
        s,
        "rtbench self-test {} at {} UTC, {:.0} s",
        run.verdict.word().to_uppercase(),
        super::store::utc_stamp(run.start_s),
        run.duration_s,
    );
    let _ = writeln!(
        s,
        "kernel {} ({}), load: {}{}",
        si.release,
        si.preempt_model,
        if run.load.is_empty() {
            "none"
        } else {
            &run.load
        },
        if run.interrupted { ", INTERRUPTED" } else { "" }
    );
    let _ = writeln!(
        s,
        "{:<7}{:>4}{:>8}{:>8}{:>8}{:>9}{:>9}{:>9}{:>9}{:>8}",
        "test",
        "cpu",
        "min/us",
        "avg/us",
        "p99/us",
        "p99.9/us",
        "max/us",
        "overruns",
        "limit/us",
        "verdict"
    );
    let us = |ns: u64| format!("{:.1}", ns as f64 / 1000.0);
    for t in &run.tests {
        for th in &t.threads {
            let checks: Vec<_> = run.verdict.checks_for(&t.test, th.thread).collect();
            let limit = checks
                .iter()
                .find(|c| c.what == "max")
                .map_or_else(|| "-".to_string(), |c| (c.limit / 1000).to_string());
            let verdict = if checks.is_empty() {
                "-"
            } else if checks.iter().all(|c| c.pass) {
                "pass"
            } else {
                "FAIL"
            };
            let cpu = th.cpu.map_or_else(|| "-".to_string(), |c| c.to_string());
            let _ = writeln!(
                s,
                "{:<7}{:>4}{:>8}{:>8}{:>8}{:>9}{:>9}{:>9}{:>9}{:>8}",
                truncate(&t.test, 6),
                cpu,
                us(th.min_ns),
                us(th.avg_ns),
                us(th.p99_ns),
                us(th.p999_ns),
                us(th.max_ns),
                th.overruns,
                limit,
                verdict
            );
        }
    }
    for c in run.verdict.checks.iter().filter(|c| !c.pass) {
        let unit = if c.what == "overruns" { "" } else { " ns" };
        let _ = writeln!(
            s,
            "FAIL {} thread {} cpu {}: {} {}{unit} > limit {}{unit}",
            c.test,
            c.thread,
            c.cpu.map_or_else(|| "-".to_string(), |x| x.to_string()),
            c.what,
            c.value,
            c.limit
        );
    }
    for p in &run.verdict.problems {
        let _ = writeln!(s, "FAIL {p}");
    }
    s
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

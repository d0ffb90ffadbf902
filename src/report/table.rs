//! `rtbench report`'s human table: one row per test and CPU with min / avg / p99 /
//! p99.9 / max (µs), overruns, the max limit and the verdict, fitting an 80-column
//! serial console.

use super::store::StoredRun;
use super::Sink;
use crate::sys::clock::NS_PER_US;

/// Nanoseconds per second, as the table's unsigned figures use it.
const NS_PER_SEC: u64 = crate::sys::clock::NS_PER_SEC as u64;
use std::fmt::Write;

/// The table as a sink (see [`render`]).
pub struct Table;

impl Sink<StoredRun> for Table {
    fn write(&self, run: &StoredRun, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(render(run).as_bytes())
    }
}

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
        "{}",
        clip(
            &format!(
                "kernel {} ({}){}",
                si.release,
                si.preempt_model,
                if run.interrupted { ", INTERRUPTED" } else { "" }
            ),
            80
        )
    );
    let load = if run.load.is_empty() {
        "none"
    } else {
        &run.load
    };
    let _ = writeln!(s, "{}", clip(&format!("load: {load}"), 80));
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
    // One decimal below 10 ms, whole µs below 10 s, then seconds marked "s": a value
    // never fills its column, so columns stay apart.
    let us = |ns: u64| {
        if ns < 10_000_000 {
            format!("{:.1}", ns as f64 / NS_PER_US as f64)
        } else if ns < 9_999_999_500 {
            format!("{}", (ns + NS_PER_US / 2) / NS_PER_US)
        } else {
            format!("{}s", (ns + NS_PER_SEC / 2) / NS_PER_SEC)
        }
    };
    for t in &run.tests {
        for th in &t.threads {
            let checks: Vec<_> = run.verdict.checks_for(&t.test, th.thread).collect();
            let limit = checks
                .iter()
                .find(|c| c.what == "max")
                .map_or_else(|| "-".to_string(), |c| (c.limit / NS_PER_US).to_string());
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
        let _ = writeln!(s, "{}", clip(&format!("FAIL {p}"), 80));
    }
    s
}

/// `s` cut to `n` characters, ending in `…` when cut.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n - 1).collect();
    t.push('…');
    t
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::summary::{TestSummary, ThreadSummary};
    use crate::sys::{info::SysInfo, SysRoot};

    #[test]
    fn huge_values_and_long_load_stay_within_80_columns() {
        let slow = 123_456_789_000; // 123 s: wider than any latency column
        let th = ThreadSummary {
            thread: 0,
            cpu: Some(7),
            priority: 98,
            interval_us: 1000,
            count: 10,
            min_ns: slow,
            avg_ns: slow,
            p50_ns: slow,
            p90_ns: slow,
            p99_ns: slow,
            p999_ns: slow,
            p9999_ns: slow,
            max_ns: slow,
            overruns: 99_999_999,
            histogram: vec![],
        };
        let tests = vec![TestSummary {
            test: "cyclic".into(),
            threads: vec![th],
        }];
        let run = StoredRun {
            rtbench_version: "test".into(),
            start_s: 0,
            duration_s: 1.0,
            sysinfo: SysInfo::read(&SysRoot::host()),
            config: serde_json::json!({}),
            tuning: serde_json::Value::Null,
            load: "stress-ng --cpu 4 --io 2 --vm 2 --vm-bytes 128M --timeout 0 --metrics".into(),
            verdict: crate::selftest::verdict::judge(&tests, &Default::default()),
            tests,
            interrupted: true,
        };
        let t = render(&run);
        for l in t.lines() {
            assert!(l.chars().count() <= 80, "{l:?}");
        }
        let row = t.lines().find(|l| l.starts_with("cyclic")).unwrap();
        // Every column still separated by white space.
        assert_eq!(row.split_whitespace().count(), 10, "{row:?}");
        assert!(row.contains(" 123s "), "{row:?}");
        assert!(t.contains("load: stress-ng --cpu 4"), "{t}");
    }
}

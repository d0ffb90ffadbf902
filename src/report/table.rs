//! `rtbench report`'s human table: which boot the run belongs to, the limits in force,
//! one row per test and CPU with min / avg / p99 / p99.9 / max (**µs**), overruns and
//! the verdict, then one line per failure naming the test, CPU, statistic, value and
//! limit (**µs**) or the tuning item with what was expected and found, why the run is
//! unjudged and whether it was stored — fitting an 80-column serial console.

use super::Sink;
use crate::results::store::StoredRun;
use std::fmt::Write;

/// The table as a sink (see [`render`]).
pub struct Table;

impl Sink<StoredRun> for Table {
    fn write(&self, run: &StoredRun, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(render(run).as_bytes())
    }
}

/// The limits of each thread of `run` for people (`max 100 µs, p99.9 50 µs`), grouped:
/// `max 100 µs` when every thread has the same, else `CPU 0-1: …; CPU 2: …`.
fn limits_line(run: &StoredRun) -> String {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for t in &run.tests {
        for th in &t.threads {
            let desc = run
                .verdict
                .checks_for(t, th.thread)
                .map(|c| format!("{} {}", c.statistic(), c.limit_text()))
                .collect::<Vec<_>>()
                .join(", ");
            let desc = if desc.is_empty() { "none".into() } else { desc };
            let who = format!(
                "{}{}",
                crate::results::summary::condition_prefix(t.condition.as_deref()),
                crate::results::summary::thread_label(&t.test, th.thread, th.cpu)
            );
            match groups.iter_mut().find(|(d, _)| *d == desc) {
                Some((_, v)) => v.push(who),
                None => groups.push((desc, vec![who])),
            }
        }
    }
    match groups.as_slice() {
        [] => "none".into(),
        [(d, _)] => d.clone(),
        _ => groups
            .iter()
            .map(|(d, who)| format!("{}: {d}", who.join(", ")))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// Renders the header lines, the table and the failure lines for `run`.
pub fn render(run: &StoredRun) -> String {
    let mut s = String::new();
    heading(&mut s, run);
    rows(&mut s, run);
    s.push_str(&super::conditions::render(run));
    causes(&mut s, run);
    endings(&mut s, run);
    s
}

/// The lines above the table: verdict and time, boot, kernel, unit, tuning, load,
/// limits, hardware.
fn heading(s: &mut String, run: &StoredRun) {
    let si = &run.sysinfo;
    let _ = writeln!(
        s,
        "rtbench self-test {} at {}, {:.0} s",
        run.shown_word().to_uppercase(),
        crate::date::iso_s(run.start_s),
        run.duration_s,
    );
    let o = &run.origin;
    let _ = writeln!(
        s,
        "{}",
        clip(
            &format!(
                "boot {}, {}{}",
                o.short_boot(),
                o.trigger_text(),
                run.exit_code
                    .map_or_else(String::new, |c| format!(", exit {c}"))
            ),
            80
        )
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
    if let Some(u) = &run.unit {
        let _ = writeln!(s, "{}", clip(&format!("unit: {}", u.text()), 80));
    }
    let _ = writeln!(s, "{}", clip(&run.tuning_state(), 80));
    let load = if run.load.is_empty() {
        "none"
    } else {
        &run.load
    };
    let _ = writeln!(s, "{}", clip(&format!("load: {load}"), 80));
    // Every limit shown: wrapped, never cut.
    for line in wrap(&format!("limits: {}", limits_line(run)), 80, "  ") {
        let _ = writeln!(s, "{line}");
    }
    if let Some(h) = &run.hardware {
        let parts: Vec<String> = [h.hwlat_text(), h.smi_text()]
            .into_iter()
            .filter(|t| !t.is_empty())
            .collect();
        if !parts.is_empty() {
            for line in wrap(&format!("hardware: {}", parts.join("; ")), 80, "  ") {
                let _ = writeln!(s, "{line}");
            }
        }
    }
}

/// The table: a heading, then one row per test and CPU (or pair), each condition's
/// rows after a line naming it and its load.
fn rows(s: &mut String, run: &StoredRun) {
    let _ = writeln!(
        s,
        "{:<7}{:>4}{:>8}{:>8}{:>8}{:>9}{:>9}{:>9}{:>9}{:>9}",
        "test",
        "cpu",
        "min/us",
        "avg/us",
        "p99/us",
        "p99.9/us",
        "max/us",
        "overruns",
        "missed",
        "verdict"
    );
    let us = |ns| crate::duration::us(ns, crate::duration::UsStyle::Cell);
    let mut condition: Option<&str> = None;
    for t in &run.tests {
        // With conditions, each condition's rows after a line naming it and its load.
        if let Some(c) = t.condition.as_deref().filter(|c| condition != Some(*c)) {
            condition = Some(c);
            let load = run
                .conditions
                .iter()
                .find(|r| r.name == c)
                .map_or("none", |r| if r.load.is_empty() { "none" } else { &r.load });
            let _ = writeln!(s, "{}", clip(&format!("condition {c}, load: {load}"), 80));
        }
        for th in &t.threads {
            let checks: Vec<_> = run.verdict.checks_for(t, th.thread).collect();
            let verdict = if checks.is_empty() {
                "unjudged"
            } else if checks.iter().all(|c| c.pass) {
                "pass"
            } else if checks.iter().all(|c| c.pass || c.invalid) {
                "INVALID"
            } else {
                "FAIL"
            };
            let cpu = th.cpu.map_or_else(|| "-".to_string(), |c| c.to_string());
            // The overruns and missed-period counts come from the file and may have any
            // number of digits: a space before each keeps it apart from its neighbour.
            // Missed periods: as cyclic's `Missed:` (older files: their overruns).
            let _ = writeln!(
                s,
                "{:<7}{:>4}{:>8}{:>8}{:>8}{:>9}{:>9} {:>8} {:>8} {:>8}",
                truncate(&crate::error::one_line(&t.test), 6),
                cpu,
                us(th.min_ns),
                us(th.avg_ns),
                us(th.p99_ns),
                us(th.p999_ns),
                us(th.max_ns),
                th.overruns,
                th.missed(),
                verdict
            );
        }
    }
}

/// The cause ledger of each test (`crate::explain::ledger`): every sample over its
/// explain threshold by cause, most frequent first, and those not analysed.
fn causes(s: &mut String, run: &StoredRun) {
    let mut rate = None;
    for t in &run.tests {
        let Some(x) = &t.explain else { continue };
        for (head, lines) in crate::explain::text::ledger_lines(&x.ledger, true) {
            let head = match &t.condition {
                Some(c) => format!("{c}/{head}"),
                None => head,
            };
            let _ = writeln!(s, "{}", clip(&format!("Causes: {head}"), 80));
            for l in lines {
                for line in wrap(&format!("  {l}"), 80, "      ") {
                    let _ = writeln!(s, "{line}");
                }
            }
            rate = Some(x.ledger.analyses_per_s);
        }
    }
    if let Some(r) = rate {
        // Wrapped like every other line of the table: a serial console has 80 columns.
        let line = format!(
            "Causes: analysed at most {r} a second per CPU (a new maximum always); the rest \
             counted as not analysed"
        );
        for l in wrap(&line, 80, "  ") {
            let _ = writeln!(s, "{l}");
        }
    }
}

/// The lines below the table: every failure (wrapped, never cut), why the run is
/// unjudged, whether it was stored.
fn endings(s: &mut String, run: &StoredRun) {
    // A failure with its cause is longer than a line: wrapped, never cut. A check
    // whose maximum is not the system's latency says so (the table's INVALID).
    for (mark, f) in run.verdict.marked_failures() {
        for line in wrap(&format!("{} {f}", mark.word()), 80, "     ") {
            let _ = writeln!(s, "{line}");
        }
    }
    // Why it is unjudged, and what was not stored or written: wrapped like the
    // failures (the reason is the part a reader needs), never cut.
    let why = run.verdict.unjudged_reason();
    let mut reasons = Vec::new();
    if !why.is_empty() {
        reasons.push(format!("UNJUDGED: {why}"));
    }
    if let Some(e) = &run.store_error {
        reasons.push(format!("NOT STORED: {e}"));
    }
    for u in run.unwritten.iter().filter(|u| !u.starts_with("results:")) {
        reasons.push(format!("NOT WRITTEN: {u}"));
    }
    for r in reasons {
        for line in wrap(&r, 80, "     ") {
            let _ = writeln!(s, "{line}");
        }
    }
}

/// `s` escaped ([`crate::error::one_line`]: a stored field is any text, and must not
/// move the cursor or forge a line), then cut to `n` characters ([`super::layout::clip`]).
fn clip(s: &str, n: usize) -> String {
    super::layout::clip(&crate::error::one_line(s), n)
}

/// `s` escaped as [`clip`] does, in lines of `width` ([`super::layout::wrap`]).
fn wrap(s: &str, width: usize, indent: &str) -> Vec<String> {
    super::layout::wrap(&crate::error::one_line(s), width, indent)
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
    use crate::results::summary::{TestSummary, ThreadSummary};
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
            high_nines_ns: None,
            max_ns: slow,
            overruns: 99_999_999,
            missed_periods: None,
            histogram: vec![],
        };
        let tests = vec![TestSummary {
            condition: None,
            msg_size: None,
            duration_s: None,
            histogram_us: None,
            test: "cyclic".into(),
            threads: vec![th],
            explain: None,
        }];
        let run = StoredRun {
            rtbench_version: "test".into(),
            start_s: 0,
            duration_s: 1.0,
            sysinfo: SysInfo::read(&SysRoot::host()),
            config: serde_json::json!({}),
            tuning: serde_json::Value::Null,
            load: "stress-ng --cpu 4 --io 2 --vm 2 --vm-bytes 128M --timeout 0 --metrics".into(),
            verdict: crate::results::verdict::judge(&tests, &Default::default()),
            tests,
            interrupted: true,
            origin: Default::default(),
            exit_code: None,
            store_error: None,
            results_dir: None,
            hardware: None,
            conditions: Vec::new(),
            unit: None,
            attempt: None,
            unwritten: Vec::new(),
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

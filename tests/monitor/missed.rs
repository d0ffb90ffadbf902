//! A stall of the monitor's measuring thread is one late wakeup, one overrun, and as
//! many missed periods as intervals it lasted: the missed periods reach every output
//! (journal entries, window store, `report --since` text and JSON, Prometheus), as
//! `rtbench cyclic`'s `Missed:` does.
#![cfg(feature = "monitor")]

use crate::common::*;
use std::time::Duration;

const WINDOW: &str = "cc642425788247bfaec2950f5114111e";

/// The stall: the whole process stopped (SIGSTOP) this long at a 1 ms interval misses
/// at least as many periods as whole milliseconds it lasted.
const STALL_MS: u64 = 50;
/// What the stall guarantees, with room for the rounding at its ends.
const AT_LEAST: u64 = 40;

#[test]
fn a_stall_is_counted_as_missed_periods_in_every_output() {
    let t = TempDir::new("monitor-missed");
    let cfg = t.join("rtbench.toml");
    std::fs::write(&cfg, "").unwrap();
    let dir = t.join("mon");
    let prom = t.join("monitor.prom");
    let mut c = rtbench();
    c.args(["monitor", "--config"])
        .arg(&cfg)
        .args(["--log-format", "logfmt", "-a", "0", "-i", "1000"])
        .args(["--window", "1s", "--dir"])
        .arg(&dir)
        .arg("--prometheus")
        .arg(&prom);
    let r = Running::spawn(&mut c);
    wait_samples(r.pid(), "rtbench-M", 1, 20);
    stop_for(r.pid(), Duration::from_millis(STALL_MS));
    // Some samples after the stall, then the last, partial window is stored at SIGTERM.
    wait_samples(r.pid(), "rtbench-M", 1, 20);
    r.signal(libc::SIGTERM);
    let o = r.finish();
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));

    let e = entries(&o);
    let w = with_id(&e, WINDOW);
    let n = |m: &std::collections::HashMap<String, String>, k: &str| -> u64 {
        m.get(k)
            .unwrap_or_else(|| panic!("no {k} in {m:?}"))
            .parse()
            .unwrap()
    };
    let missed: u64 = w.iter().map(|m| n(m, "RTBENCH_MISSED_PERIODS")).sum();
    let overruns: u64 = w.iter().map(|m| n(m, "RTBENCH_OVERRUNS")).sum();
    assert!(missed >= AT_LEAST, "{missed} missed periods: {w:#?}");
    assert!(missed >= overruns, "{w:#?}");
    let stalled = w
        .iter()
        .find(|m| n(m, "RTBENCH_MISSED_PERIODS") >= AT_LEAST)
        .unwrap_or_else(|| panic!("no window holds the stall: {w:#?}"));
    assert!(
        stalled["MESSAGE"].contains(&format!(
            " {} missed periods, ",
            n(stalled, "RTBENCH_MISSED_PERIODS")
        )),
        "{stalled:?}"
    );

    // The window store.
    let stored: u64 = std::fs::read_to_string(dir.join("windows.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["cpus"][0]["missed_periods"].as_u64().expect(l)
        })
        .sum();
    assert_eq!(stored, missed);

    // report --since, text and JSON.
    let o = run(&[
        "report",
        "--since",
        "1h",
        "--dir",
        &dir.display().to_string(),
    ]);
    let text = stdout(&o);
    assert!(
        text.contains(&format!("missed periods: CPU 0 {missed}\n")),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let o = run(&[
        "report",
        "--since",
        "1h",
        "--json",
        "--dir",
        &dir.display().to_string(),
    ]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["cpus"][0]["missed_periods"].as_u64(), Some(missed), "{j}");

    // Prometheus: the counter across restarts (this run is the first), valid for
    // promtool.
    let text = std::fs::read_to_string(&prom).unwrap();
    assert!(
        text.contains(&format!(
            "rtbench_monitor_missed_periods_total{{cpu=\"0\"}} {missed}\n"
        )),
        "{text}"
    );
    assert!(text.contains("# TYPE rtbench_monitor_missed_periods_total counter\n"));
    assert!(text.contains("# TYPE rtbench_monitor_window_missed_periods gauge\n"));
    crate::common::promtool_accepts(prom.as_ref());
}

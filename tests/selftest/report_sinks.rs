//! The persistent sinks on a real measurement: Prometheus textfile accepted by
//! promtool, the report table within 80 columns, the results store round trip.

use crate::common::{rtbench, TempDir};
use rtbench::config::limits::{LimitSet, Limits};
use rtbench::measure::cyclic::{self, CyclicSpec};
use rtbench::measure::harness::Progress;
use rtbench::measure::stats::LiveSnapshot;
use rtbench::measure::{RunControl, ThreadSpec};
use rtbench::results::store::{Store, StoredRun};
use rtbench::results::summary::{TestSummary, ThreadSummary};
use rtbench::results::verdict::judge;
use rtbench::sys::clock::Clock;
use rtbench::sys::info::SysInfo;
use rtbench::sys::sched::Policy;
use rtbench::sys::SysRoot;

struct Quiet;
impl Progress for Quiet {
    fn report(&mut self, _: &[ThreadSpec], _: &[LiveSnapshot]) {}
    fn status(&mut self, _: &[ThreadSpec], _: &[LiveSnapshot]) {}
    fn notice(&mut self, _: &str) {}
    fn warning(&mut self, _: &str) {}
}

fn measured_run(max_us: u64) -> StoredRun {
    // SCHED_FIFO threads in this process: the machine is shared (common::lock).
    crate::common::shared();
    let spec = CyclicSpec {
        threads: (0..2)
            .map(|i| ThreadSpec {
                index: i,
                cpu: Some(i % 2),
                policy: Policy::Fifo,
                priority: 80,
                interval_us: 500,
            })
            .collect(),
        clock: Clock::Monotonic,
        control: RunControl {
            duration: None,
            loops: Some(400),
            mlockall: false,
            pm_qos_us: None,
            main_cpus: None,
            report_every: None,
            break_ns: None,
            tracemark: false,
            histogram: None,
            explain: None,
        },
        samples: None,
    };
    let start_s = Clock::wall_secs();
    let r = cyclic::run(&spec, &SysRoot::host(), &mut Quiet).unwrap();
    let tests = vec![TestSummary {
        condition: None,
        msg_size: None,
        duration_s: None,
        histogram_us: None,
        test: "cyclic".into(),
        threads: r.threads.iter().map(ThreadSummary::from_cyclic).collect(),
        explain: None,
    }];
    let limits = LimitSet {
        default: Limits {
            max_us: Some(max_us),
            ..Default::default()
        },
        ..Default::default()
    };
    let verdict = judge(&tests, &limits);
    StoredRun {
        rtbench_version: "test".into(),
        start_s,
        duration_s: 0.2,
        sysinfo: SysInfo::read(&SysRoot::host()),
        config: serde_json::json!({}),
        tuning: serde_json::Value::Null,
        load: String::new(),
        tests,
        verdict,
        interrupted: false,
        origin: rtbench::results::store::Origin::current(),
        exit_code: None,
        store_error: None,
        results_dir: None,
        hardware: None,
        conditions: Vec::new(),
        unit: None,
        attempt: None,
        unwritten: Vec::new(),
    }
}

#[test]
fn prometheus_textfile_passes_promtool() {
    let run = measured_run(1_000_000);
    let text = rtbench::report::prometheus::render(&run);
    let dir = TempDir::new("prom");
    let f = dir.join("rtbench.prom");
    rtbench::sys::atomic::write(&f, text.as_bytes()).unwrap();
    crate::common::promtool_accepts(&f);
    assert!(text.contains("rtbench_selftest_pass 1"));
    let count_lines = text
        .lines()
        .filter(|l| l.starts_with("rtbench_latency_seconds_count"))
        .count();
    assert_eq!(count_lines, 2);
}

#[test]
fn report_table_fits_80_columns_and_names_failures() {
    // A 1 µs limit cannot hold: every thread fails and the table says why.
    let run = measured_run(1);
    let t = rtbench::report::table::render(&run);
    for l in t.lines() {
        assert!(
            l.chars().count() <= 80,
            "{} columns: {l:?}",
            l.chars().count()
        );
    }
    assert!(t.starts_with("rtbench self-test FAIL"), "{t}");
    assert_eq!(
        t.lines().filter(|l| l.starts_with("cyclic")).count(),
        2,
        "{t}"
    );
    assert!(
        t.lines()
            .any(|l| l.starts_with("FAIL cyclic CPU 0 max ") && l.ends_with(" > limit 1 µs")),
        "{t}"
    );
}

#[test]
fn store_and_rtbench_report_round_trip() {
    let dir = TempDir::new("report");
    let store = Store::new(&dir, 3);
    let pass = measured_run(1_000_000);
    let path = store.save(&pass).unwrap();
    assert_eq!(Store::load(&path).unwrap(), pass);
    let out = rtbench()
        .args(["report", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("rtbench self-test PASS"), "{text}");
    let fail = measured_run(1);
    let mut fail2 = fail.clone();
    fail2.start_s = pass.start_s + 5;
    store.save(&fail2).unwrap();
    let out = rtbench()
        .args(["report", "--json", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "last run failed");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"]["pass"], false);
    let out = rtbench()
        .args(["report", "--all", "--json", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    let out = rtbench()
        .args(["report", "--dir", "/nonexistent-rtbench"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "no results");
}

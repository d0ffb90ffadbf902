//! Byte-exact goldens of the output formats, from fixed synthetic results (no
//! measurement, so every digit and every padding space is checked): cyclictest's `T:`
//! lines, `-b` trailer, `-h`/`-H` dumps in both layouts, `-N`, the JSON documents of
//! cyclic and the pair tests, pmqtest's lines, the Prometheus textfile and the report
//! table. Captured on main at bc6443b, before the code was split into the cli/plan/app
//! layers of docs/ARCHITECTURE.md; see
//! tests/golden/main.rs for the real-run goldens and RTBENCH_BLESS.

use regex_lite::Regex;
use std::path::Path;

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.txt"));
    if std::env::var_os("RTBENCH_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (RTBENCH_BLESS=1 writes it)", path.display()));
    assert!(
        want == actual,
        "{name} differs:\n--- want\n{want}\n--- got\n{actual}"
    );
}

/// The local-time dates of the rt-tests header depend on TZ.
fn mask_times(s: &str) -> String {
    Regex::new(r#""(start_time|end_time)": "[^"]*""#)
        .unwrap()
        .replace_all(s, "\"$1\": \"<time>\"")
        .replace(env!("CARGO_PKG_VERSION"), "<version>")
}

mod fixtures {
    use rtbench::measure::stats::LatencyStats;
    use rtbench::measure::HistogramSetting;
    use rtbench::sys::info::SysInfo;

    pub fn sysinfo() -> SysInfo {
        SysInfo {
            sysname: "Linux".into(),
            nodename: "board7".into(),
            release: "6.6.30-rt30".into(),
            version: "#1 SMP PREEMPT_RT Tue May 14 2024".into(),
            machine: "aarch64".into(),
            realtime: true,
            realtime_evidence: vec![
                "/sys/kernel/realtime = 1".into(),
                "uname -v: PREEMPT_RT".into(),
            ],
            preempt_model: "PREEMPT_RT".into(),
            cmdline: "isolcpus=2-3 nohz_full=2-3".into(),
            nr_cpu_ids: 4,
            cpus_possible: "0-3".into(),
            cpus_present: "0-3".into(),
            cpus_online: "0-3".into(),
            cpus_allowed: "0-3".into(),
            cpuset: None,
            cpus_affinity: "0-1".into(),
            cpus_isolated: "2-3".into(),
            cpus_nohz_full: "2-3".into(),
            cpus_housekeeping: "0-1".into(),
            smt_control: "notsupported".into(),
            smt_siblings: Vec::new(),
            cpu_model: None,
            kernel_config_hash: None,
        }
    }

    /// Samples in ns: a spread, a few large ones, `extra` added to each.
    pub fn stats(hist: Option<(usize, u64)>, extra: u64) -> LatencyStats {
        let mut s = LatencyStats::new(
            hist.map(|(buckets, bucket_ns)| HistogramSetting { buckets, bucket_ns }),
        );
        for (i, v) in [
            3_200u64, 4_100, 4_900, 5_300, 5_300, 7_800, 11_000, 4_400, 3_900, 250_000, 6_100,
            4_700, 4_800, 5_100, 1_234_567,
        ]
        .iter()
        .enumerate()
        {
            s.record(v + extra);
            if i == 9 {
                s.record_overrun(2);
            }
        }
        s
    }
}

mod cyclic {
    use super::*;
    use rtbench::measure::breaktrace::BreakInfo;
    use rtbench::measure::cyclic::{CyclicResult, ThreadResult};
    use rtbench::measure::harness::{RunEnd, StopCause};
    use rtbench::measure::ThreadSpec;
    use rtbench::report::histogram::HistogramDump;
    use rtbench::report::json::Json;
    use rtbench::report::text::{BreakTrailer, Summary, TLines};
    use rtbench::report::{RunReport, Sink};
    use rtbench::sys::sched::Policy;

    fn result(hist: Option<(usize, u64)>, threads: usize, stop: StopCause) -> CyclicResult {
        CyclicResult {
            threads: (0..threads)
                .map(|i| ThreadResult {
                    spec: ThreadSpec {
                        index: i,
                        cpu: Some(i + 2),
                        policy: Policy::Fifo,
                        priority: 98 - i as i32,
                        interval_us: 1000 + 500 * i as u64,
                    },
                    tid: 40_000 + i as i32,
                    stats: fixtures::stats(hist, 700 * i as u64),
                })
                .collect(),
            end: RunEnd {
                stop,
                break_info: (stop == StopCause::Break).then_some(BreakInfo {
                    thread: 1,
                    tid: 40_001,
                    latency_ns: 1_235_267,
                }),
                pm_qos_us: Some(0),
                start_wall_s: 1_700_000_000,
                end_wall_s: 1_700_000_030,
                explained: None,
                explain_unavailable: None,
            },
        }
    }

    fn render(sink: &dyn for<'a> Sink<RunReport<'a>>, r: &CyclicResult, nsecs: bool) -> String {
        let si = fixtures::sysinfo();
        let argv: Vec<String> = ["rtbench", "cyclic", "-S", "-p", "98"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let report = RunReport {
            result: r,
            sysinfo: &si,
            argv: &argv,
            nsecs,
            exit_code: 0,
            load: None,
        };
        let mut buf = Vec::new();
        sink.write(&report, &mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn text_lines_trailer_dumps_and_json() {
        let mut all = String::new();
        let plain = result(None, 2, StopCause::Completed);
        let hist = result(Some((20, 1000)), 3, StopCause::Sigint);
        let hist_ns = result(Some((20, 1)), 2, StopCause::Completed);
        let broke = result(None, 2, StopCause::Break);
        for (name, text) in [
            ("TLines", render(&TLines, &plain, false)),
            ("TLines -N", render(&TLines, &plain, true)),
            ("TLines interrupted", render(&TLines, &hist, false)),
            ("Summary -N", render(&Summary, &hist_ns, true)),
            ("BreakTrailer", render(&BreakTrailer, &broke, false)),
            (
                "-h current",
                render(
                    &HistogramDump {
                        summary_column: false,
                        layout: rtbench::report::histogram::Layout::Current,
                    },
                    &hist,
                    false,
                ),
            ),
            (
                "-H current",
                render(
                    &HistogramDump {
                        summary_column: true,
                        layout: rtbench::report::histogram::Layout::Current,
                    },
                    &hist,
                    false,
                ),
            ),
            (
                "-h legacy",
                render(
                    &HistogramDump {
                        summary_column: false,
                        layout: rtbench::report::histogram::Layout::Legacy,
                    },
                    &hist,
                    false,
                ),
            ),
            (
                "-H legacy",
                render(
                    &HistogramDump {
                        summary_column: true,
                        layout: rtbench::report::histogram::Layout::Legacy,
                    },
                    &hist,
                    false,
                ),
            ),
            (
                "-H -N current",
                render(
                    &HistogramDump {
                        summary_column: true,
                        layout: rtbench::report::histogram::Layout::Current,
                    },
                    &hist_ns,
                    true,
                ),
            ),
            ("json", render(&Json, &hist, false)),
            ("json -N break", render(&Json, &broke, true)),
        ] {
            all.push_str(&format!("=== {name}\n{text}"));
        }
        golden("sinks_cyclic", &mask_times(&all));
    }
}

mod pair {
    use super::*;
    use rtbench::load::LoadInfo;
    use rtbench::measure::harness::{RunEnd, StopCause};
    use rtbench::measure::pair::{PairKind, PairResult, PairRun};
    use rtbench::measure::ThreadSpec;
    use rtbench::report::histogram::HistogramDump;
    use rtbench::report::pair_json::PairJson;
    use rtbench::report::pair_text::{as_cyclic, PairLines, PairSummary};
    use rtbench::report::{PairReport, Sink};
    use rtbench::sys::sched::Policy;

    fn run(kind: PairKind, pairs: usize, stop: StopCause) -> PairRun {
        let pipe = kind == PairKind::Pipe;
        PairRun {
            kind,
            fork: pipe,
            msg_size: rtbench::measure::transport::MSG_BYTES,
            pairs: (0..pairs)
                .map(|i| PairResult {
                    spec: ThreadSpec {
                        index: i,
                        cpu: Some(i),
                        policy: Policy::Fifo,
                        priority: 80 - i as i32,
                        interval_us: 1000 + 500 * i as u64,
                    },
                    sender_tid: 50_001 + 2 * i as i32,
                    receiver_tid: 50_000 + 2 * i as i32,
                    sender_cpu: i as i64,
                    receiver_cpu: i as i64,
                    forward: fixtures::stats(Some((20, 1000)), 300 * i as u64),
                    backward: pipe.then(|| fixtures::stats(Some((20, 1000)), 100)),
                    round_trip: pipe.then(|| fixtures::stats(None, 9_000)),
                    timeouts: 3 * i as u64,
                    total_ns: 123_456_789,
                })
                .collect(),
            end: RunEnd {
                stop,
                break_info: None,
                pm_qos_us: Some(0),
                start_wall_s: 1_700_000_000,
                end_wall_s: 1_700_000_030,
                explained: None,
                explain_unavailable: None,
            },
        }
    }

    fn render(r: &PairRun, nsecs: bool, hist: bool, load: Option<&LoadInfo>) -> String {
        let si = fixtures::sysinfo();
        let argv: Vec<String> = ["rtbench", "pmq", "-S"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let report = PairReport {
            result: r,
            sysinfo: &si,
            argv: &argv,
            nsecs,
            exit_code: 0,
            load,
        };
        let mut buf = Vec::new();
        PairLines.write(&report, &mut buf).unwrap();
        if hist {
            let cyc = as_cyclic(r);
            HistogramDump {
                summary_column: false,
                layout: rtbench::report::histogram::Layout::Current,
            }
            .write(&report.with(&cyc), &mut buf)
            .unwrap();
        }
        PairSummary.write(&report, &mut buf).unwrap();
        buf.extend_from_slice(b"--- json\n");
        PairJson.write(&report, &mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn pmq_and_pipe_lines_dump_and_json() {
        let load = LoadInfo {
            spec: "cpu:2".into(),
            cmd: Some("stress-ng --cpu 1".into()),
            cpus: "0-1".into(),
            pids: vec![7, 8],
        };
        let mut all = String::new();
        all += "=== pmq\n";
        all += &render(
            &run(PairKind::Pmq, 2, StopCause::Completed),
            false,
            true,
            None,
        );
        all += "=== pmq -N interrupted, load\n";
        all += &render(
            &run(PairKind::Pmq, 1, StopCause::Sigterm),
            true,
            false,
            Some(&load),
        );
        all += "=== pipe\n";
        all += &render(
            &run(PairKind::Pipe, 1, StopCause::Completed),
            false,
            true,
            None,
        );
        golden("sinks_pair", &mask_times(&all));
    }
}

mod stored {
    use super::*;
    use rtbench::results::store::StoredRun;

    const RUN: &str = r##"{
  "rtbench_version": "0.1.0",
  "start_s": 1700000000,
  "duration_s": 30.2,
  "sysinfo": {"sysname": "Linux", "nodename": "board7", "release": "6.6.30-rt30",
    "version": "#1 SMP PREEMPT_RT", "machine": "aarch64", "realtime": true,
    "realtime_evidence": ["sysfs"], "preempt_model": "PREEMPT_RT", "cmdline": "isolcpus=2-3",
    "nr_cpu_ids": 4, "cpus_online": "0-3", "cpus_isolated": "2-3", "cpus_nohz_full": "",
    "cpus_housekeeping": "0-1"},
  "config": {"path": "/etc/rtbench/rtbench.toml", "text": ""},
  "tuning": null,
  "load": "cpu:2,io:1",
  "tests": [{"test": "cyclic", "threads": [
    {"thread": 0, "cpu": 2, "priority": 98, "interval_us": 1000, "count": 30000,
     "min_ns": 2100, "avg_ns": 4567, "p50_ns": 4400, "p90_ns": 6100, "p99_ns": 9800,
     "p999_ns": 15500, "p9999_ns": 41000, "max_ns": 57123, "overruns": 0,
     "histogram": [[4400, 20000], [57123, 10000]]},
    {"thread": 1, "cpu": 3, "priority": 98, "interval_us": 1000, "count": 30000,
     "min_ns": 2200, "avg_ns": 14567, "p50_ns": 4400, "p90_ns": 6100, "p99_ns": 9800,
     "p999_ns": 15500, "p9999_ns": 41000, "max_ns": 12345678901, "overruns": 2,
     "histogram": [[4400, 29999], [12345678901, 1]]}]}],
  "verdict": {"pass": false, "checks": [
    {"test": "cyclic", "thread": 0, "cpu": 2, "what": "max", "value": 57123, "limit": 100000, "pass": true},
    {"test": "cyclic", "thread": 1, "cpu": 3, "what": "max", "value": 12345678901, "limit": 100000, "pass": false}],
    "problems": ["tuning check: 0 failed, 1 deviations"]},
  "interrupted": false
}"##;

    #[test]
    fn prometheus_and_table() {
        let run: StoredRun = serde_json::from_str(RUN).unwrap();
        let mut all = String::from("=== prometheus\n");
        all += &rtbench::report::prometheus::render(&run);
        all += "=== table\n";
        all += &rtbench::report::table::render(&run);
        golden("sinks_stored", &all);
    }
}

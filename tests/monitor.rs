//! `rtbench monitor` and `rtbench report --since` on this machine: real SCHED_FIFO
//! threads and timers with 1-second windows, entries on standard error (no journald
//! here; the unit and journald are exercised by tests/vm/), the window store, the
//! state file across restarts, limits, SIGTERM, promtool on the textfile.
#![cfg(feature = "monitor")]

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const START: &str = "c235ff9bebdd447a895829d54b7b1aa9";
const WINDOW: &str = "cc642425788247bfaec2950f5114111e";
const LIMIT: &str = "a694d7ed549d47af8e69c18a54fad1a8";
const STOP: &str = "d4afd97974874b9781398c86865fe1c7";
const OUTPUT: &str = "37e4093074a449328d450b9a6e3f66f8";

fn records(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("windows.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A configuration file with `body` (the default one may exist on this machine).
fn config(dir: &Path, body: &str) -> String {
    let p = dir.join("rtbench.toml");
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}

fn monitor(dir: &Path, cfg: &str, extra: &[&str]) -> Output {
    let d = dir.join("mon").display().to_string();
    let mut args = vec![
        "monitor",
        "--config",
        cfg,
        "--log-format",
        "logfmt",
        "-a",
        "0",
        "--window",
        "1s",
        "--dir",
        &d,
    ];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn windows_go_to_journal_store_prometheus_and_the_state_survives_a_restart() {
    let t = TempDir::new("monitor");
    let cfg = config(&t.0, "");
    let prom = t.0.join("monitor.prom").display().to_string();
    let o = monitor(&t.0, &cfg, &["-D", "3", "--prometheus", &prom]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let e = entries(&o);
    assert_eq!(with_id(&e, START).len(), 1);
    assert!(
        with_id(&e, START)[0]["MESSAGE"].contains("no state"),
        "{e:?}"
    );
    let w = with_id(&e, WINDOW);
    // Three 1-s windows, and a last one if the run ended just after the third closed.
    assert!((3..=4).contains(&w.len()), "{e:?}");
    let n_windows = w.len();
    for (i, m) in w.iter().enumerate() {
        assert_eq!(m["RTBENCH_CPU"], "0");
        assert_eq!(m["RTBENCH_WINDOW"], (i + 1).to_string());
        assert_eq!(m["PRIORITY"], "5");
        let n = |k: &str| m[k].parse::<u64>().unwrap();
        if i < 2 {
            // Whole windows: a second on the monotonic clock, 1000 wakeups at 1 ms
            // (fewer when wakeups are late on a loaded VM: those are overruns).
            let d: f64 = m["RTBENCH_DURATION_S"].parse().unwrap();
            assert!((0.9..1.2).contains(&d), "{m:?}");
            assert!(n("RTBENCH_SAMPLES") + n("RTBENCH_OVERRUNS") >= 500, "{m:?}");
        }
        assert!(n("RTBENCH_P99_NS") <= n("RTBENCH_P999_NS"));
        assert!(n("RTBENCH_P999_NS") <= n("RTBENCH_MAX_NS") + n("RTBENCH_MAX_NS") / 100);
        assert!(n("RTBENCH_MAX_NS") <= n("RTBENCH_ALLTIME_MAX_NS"));
    }
    let stop = with_id(&e, STOP);
    assert_eq!(stop.len(), 1);
    assert_eq!(stop[0]["RTBENCH_STOP"], "duration reached");
    // Every @FIELD@ of the catalog text is in the entry (journalctl -x fills them in).
    let cat = catalog();
    for m in &e {
        for f in &cat[&m["MESSAGE_ID"]] {
            assert!(m.contains_key(f), "@{f}@ missing in {m:?}");
        }
    }
    assert!(stop[0]["MESSAGE"].contains("state saved"), "{stop:?}");

    let dir = t.0.join("mon");
    let r = records(&dir);
    assert_eq!(r.len(), n_windows);
    let alltime = r
        .iter()
        .map(|x| x["cpus"][0]["max_ns"].as_u64().unwrap())
        .max()
        .unwrap();
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["last_window"], n_windows);
    assert_eq!(state["cpus"][0]["alltime_max_ns"].as_u64(), Some(alltime));

    // The textfile is valid for node_exporter.
    let text = std::fs::read_to_string(&prom).unwrap();
    let check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(&prom).unwrap())
        .output()
        .expect("promtool (Debian package prometheus) must be installed");
    assert!(
        check.status.success(),
        "{}{}\n{text}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(text.contains(&format!(
        "rtbench_monitor_max_seconds{{cpu=\"0\"}} {:e}\n",
        alltime as f64 / 1e9
    )));

    // A restart continues the sequence and keeps the all-time maximum.
    let o = monitor(&t.0, &cfg, &["-D", "2"]);
    assert_eq!(o.status.code(), Some(0));
    let e = entries(&o);
    assert!(
        with_id(&e, START)[0]["MESSAGE"].contains("state restored"),
        "{e:?}"
    );
    let w = with_id(&e, WINDOW);
    assert_eq!(w[0]["RTBENCH_WINDOW"], (n_windows + 1).to_string());
    for m in &w {
        assert!(m["RTBENCH_ALLTIME_MAX_NS"].parse::<u64>().unwrap() >= alltime);
    }
    let total = n_windows + w.len();
    assert_eq!(records(&dir).len(), total);

    // report --since: the table, and JSON with every window.
    let parent = t.0.join("mon").display().to_string();
    let o = run(&["report", "--since", "1h", "--dir", &parent]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.starts_with(&format!("rtbench monitor: {total} windows")),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let o = run(&["report", "--since", "1h", "--json", "--dir", &parent]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["windows"].as_u64(), Some(total as u64));
    assert_eq!(
        j["cpus"][0]["alltime_max_ns"].as_u64(),
        j["cpus"][0]["max_ns"].as_u64()
    );
    // No window in the period is not a pass: is the monitor running at all?
    std::thread::sleep(Duration::from_millis(1100));
    let o = run(&["report", "--since", "1s", "--dir", &parent]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("no windows since"));
}

#[test]
fn a_window_over_a_limit_is_a_warning_and_report_since_fails() {
    let t = TempDir::new("monitor-limit");
    // 1 µs cannot hold on any machine.
    let cfg = config(&t.0, "[monitor.limits]\nmax_us = 1\n");
    let o = monitor(&t.0, &cfg, &["-D", "2"]);
    assert_eq!(o.status.code(), Some(0));
    let e = entries(&o);
    let l = with_id(&e, LIMIT);
    assert_eq!(l.len(), with_id(&e, WINDOW).len(), "{e:?}");
    assert_eq!(l[0]["PRIORITY"], "4");
    assert_eq!(l[0]["RTBENCH_EXCEEDED"], "max");
    assert_eq!(l[0]["RTBENCH_LIMIT_NS"], "1000");
    let r = records(&t.0.join("mon"));
    assert_eq!(r[0]["cpus"][0]["exceeded"][0], "max");
    let o = run(&[
        "report",
        "--since",
        "1h",
        "--dir",
        &t.0.join("mon").display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("{} over a limit", r.len())));
}

#[test]
fn sigterm_saves_the_last_partial_window_and_the_state() {
    let t = TempDir::new("monitor-term");
    let cfg = config(&t.0, "");
    let d = t.0.join("mon");
    let child = rtbench()
        .args([
            "monitor",
            "--config",
            &cfg,
            "--log-format",
            "logfmt",
            "-a",
            "0",
            "--window",
            "1s",
            "--dir",
        ])
        .arg(&d)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(143));
    let e = entries(&o);
    let stop = with_id(&e, STOP);
    assert_eq!(stop[0]["RTBENCH_STOP"], "SIGTERM", "{e:?}");
    let w = with_id(&e, WINDOW);
    assert!(w.len() >= 2, "{e:?}");
    // The last window is the cut-short one.
    let last: f64 = w.last().unwrap()["RTBENCH_DURATION_S"].parse().unwrap();
    assert!(last < 1.0, "{last}");
    assert!(d.join("state.json").exists());
}

#[test]
fn a_damaged_state_file_is_kept_aside_and_said() {
    let t = TempDir::new("monitor-bad");
    let cfg = config(&t.0, "");
    let d = t.0.join("mon");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("state.json"), "{ half a fi").unwrap();
    let o = monitor(&t.0, &cfg, &["-D", "1"]);
    assert_eq!(o.status.code(), Some(0));
    let e = entries(&o);
    assert!(
        with_id(&e, START)[0]["MESSAGE"].contains("damaged"),
        "{e:?}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("state.json.bad")).unwrap(),
        "{ half a fi"
    );
    assert!(d.join("state.json").exists());
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let t = TempDir::new("monitor-usage");
    let cfg = config(&t.0, "[monitor]\nwindow = \"0s\"\n");
    let o = run(&["monitor", "--config", &cfg, "-D", "1s"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(":2: monitor.window = \"0s\""), "{err}");
    let good = config(&t.0, "");
    for (args, flag) in [
        (vec!["-i", "10"], "-i"),
        (vec!["--window", "0s"], "--window"),
        (vec!["-p", "0"], "-p"),
        (vec!["-a", "9999"], "-a"),
        (vec!["--dir", "relative"], "--dir"),
    ] {
        let mut a = vec!["monitor", "--config", &good, "-D", "1s"];
        a.extend(args);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(flag), "{err}");
    }
    let o = run(&[
        "report",
        "--since",
        "2h",
        "--dir",
        &t.0.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no monitor windows"));
}

#[test]
fn an_unwritable_directory_is_said_once_and_the_windows_still_reach_the_journal() {
    let t = TempDir::new("monitor-ro");
    let cfg = config(&t.0, "");
    // A file where the directory's parent should be: every write fails (also as root).
    std::fs::write(t.0.join("blocked"), "").unwrap();
    let d = t.0.join("blocked/mon").display().to_string();
    let o = run(&[
        "monitor",
        "--config",
        &cfg,
        "--log-format",
        "logfmt",
        "-a",
        "0",
        "--window",
        "1s",
        "--dir",
        &d,
        "-D",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let e = entries(&o);
    assert!(with_id(&e, WINDOW).len() >= 2, "{e:?}");
    let out = with_id(&e, OUTPUT);
    assert_eq!(out.len(), 1, "{e:?}");
    for f in &catalog()[OUTPUT] {
        assert!(out[0].contains_key(f), "@{f}@ missing in {:?}", out[0]);
    }
    assert_eq!(out[0]["RTBENCH_OUTPUT"], "window store");
    assert_eq!(out[0]["PRIORITY"], "4");
    let stop = with_id(&e, STOP);
    assert!(stop[0]["MESSAGE"].contains("state NOT saved"), "{stop:?}");
    assert_eq!(stop[0]["PRIORITY"], "4");
}

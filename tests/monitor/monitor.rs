//! `rtbench monitor` and `rtbench report --since` on this machine: real SCHED_FIFO
//! threads and timers with 1-second windows, entries on standard error (no journald
//! here; the unit and journald are exercised by tests/vm/), the window store, the
//! state file across restarts, limits, SIGTERM, promtool on the textfile.
#![cfg(feature = "monitor")]

use crate::common::*;
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

/// `rtbench monitor` with configuration `cfg`, entries as logfmt lines on standard
/// error, CPU 0 in 1-s windows, its state in `state_dir`; no duration (until a signal)
/// unless the caller adds `-D`.
fn monitor_command(cfg: &str, state_dir: &Path) -> Command {
    let mut c = rtbench();
    c.args([
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
    ])
    .arg(state_dir);
    c
}

/// [`monitor_command`] with its state in `dir/mon` and `extra` arguments, to its end.
fn monitor(dir: &Path, cfg: &str, extra: &[&str]) -> Output {
    monitor_command(cfg, &dir.join("mon"))
        .args(extra)
        .output()
        .expect("run rtbench")
}

#[test]
fn windows_go_to_journal_store_prometheus_and_the_state_survives_a_restart() {
    let t = TempDir::new("monitor");
    let cfg = config(&t, "");
    let prom = t.join("monitor.prom").display().to_string();
    let o = monitor(&t, &cfg, &["-D", "3", "--prometheus", &prom]);
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
    // One CPU is "CPU 0", not "CPUs 0".
    assert!(
        with_id(&e, START)[0]["MESSAGE"].starts_with("monitor started on CPU 0: "),
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
    assert!(
        stop[0]["MESSAGE"].contains(&format!("after {n_windows} windows;")),
        "{stop:?}"
    );

    let dir = t.join("mon");
    // Durations are stored rounded to the millisecond, without float noise.
    let raw = std::fs::read_to_string(dir.join("windows.jsonl")).unwrap();
    for line in raw.lines() {
        let v = line.split("\"duration_s\":").nth(1).unwrap();
        let v = &v[..v.find([',', '}']).unwrap()];
        let decimals = v.split('.').nth(1).map_or(0, str::len);
        assert!(decimals <= 3, "{line}");
    }
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
    crate::common::promtool_accepts(prom.as_ref());
    assert!(text.contains(&format!(
        "rtbench_monitor_max_seconds{{cpu=\"0\"}} {:e}\n",
        alltime as f64 / 1e9
    )));

    // A restart continues the sequence and keeps the all-time maximum.
    let o = monitor(&t, &cfg, &["-D", "2"]);
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
    let parent = t.join("mon").display().to_string();
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
    let cfg = config(&t, "[monitor.limits]\nmax_us = 1\n");
    let o = monitor(&t, &cfg, &["-D", "2"]);
    assert_eq!(o.status.code(), Some(0));
    let e = entries(&o);
    let l = with_id(&e, LIMIT);
    assert_eq!(l.len(), with_id(&e, WINDOW).len(), "{e:?}");
    assert_eq!(l[0]["PRIORITY"], "4");
    assert_eq!(l[0]["RTBENCH_EXCEEDED"], "max");
    assert_eq!(l[0]["RTBENCH_LIMIT_NS"], "1000");
    let r = records(&t.join("mon"));
    assert_eq!(r[0]["cpus"][0]["exceeded"][0], "max");
    let o = run(&[
        "report",
        "--since",
        "1h",
        "--dir",
        &t.join("mon").display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("{} over a limit", r.len())));
}

#[test]
fn sigterm_saves_the_last_partial_window_and_the_state() {
    let t = TempDir::new("monitor-term");
    let cfg = config(&t, "");
    let d = t.join("mon");
    // 5-s windows: the SIGTERM, sent a few samples after the first window's entry, lands
    // inside the second window however slowly this host runs the test (a 1-s window
    // could end first on a loaded machine, leaving no partial window to check).
    let mut c = rtbench();
    c.args([
        "monitor",
        "--config",
        &cfg,
        "--log-format",
        "logfmt",
        "-a",
        "0",
    ])
    .args(["--window", "5s", "--dir"])
    .arg(&d);
    let r = Running::spawn(&mut c);
    // A whole window, then some samples of the second before SIGTERM cuts it short.
    r.wait_stderr(0, "a window entry", |l| l.contains(WINDOW));
    wait_samples(r.pid(), "rtbench-M", 1, 20);
    r.signal(libc::SIGTERM);
    let o = r.finish();
    assert_eq!(o.status.code(), Some(143));
    let e = entries(&o);
    let stop = with_id(&e, STOP);
    assert_eq!(stop[0]["RTBENCH_STOP"], "SIGTERM", "{e:?}");
    let w = with_id(&e, WINDOW);
    assert!(w.len() >= 2, "{e:?}");
    // The last window is the cut-short one.
    let last: f64 = w.last().unwrap()["RTBENCH_DURATION_S"].parse().unwrap();
    assert!(last < 5.0, "{last}");
    // Said as the part of a window it was (`0.31 s`), not rounded to a whole window.
    let msg = &w.last().unwrap()["MESSAGE"];
    let said = msg.split(" samples in ").nth(1).unwrap_or_default();
    let said = said.split(' ').next().unwrap_or_default();
    assert!(said.contains('.'), "{msg}");
    assert!(said.parse::<f64>().is_ok_and(|s| s < 5.0), "{msg}");
    assert!(d.join("state.json").exists());
}

/// The damaged state files set aside in `d`, by name.
fn bad_files(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("state.json.bad"))
        .collect();
    v.sort();
    v
}

#[test]
fn damaged_state_files_are_each_kept_aside_and_said_within_a_bound() {
    let t = TempDir::new("monitor-bad");
    let cfg = config(&t, "");
    let d = t.join("mon");
    std::fs::create_dir_all(&d).unwrap();
    // Two damaged states one after the other: the second does not replace the first.
    let mut kept = Vec::new();
    for garbage in ["{ half a fi", "{\"second\": damage"] {
        std::fs::write(d.join("state.json"), garbage).unwrap();
        let o = monitor(&t, &cfg, &["-D", "1"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let e = entries(&o);
        let start = &with_id(&e, START)[0]["MESSAGE"];
        assert!(start.contains("damaged"), "{e:?}");
        let new: Vec<String> = bad_files(&d)
            .into_iter()
            .filter(|n| !kept.contains(n))
            .collect();
        assert_eq!(new.len(), 1, "{:?}", bad_files(&d));
        // The message names the file it was set aside as.
        assert!(
            start.contains(&d.join(&new[0]).display().to_string()),
            "{start}"
        );
        assert!(new[0].starts_with("state.json.bad.20"), "{new:?}");
        assert_eq!(std::fs::read_to_string(d.join(&new[0])).unwrap(), garbage);
        assert!(d.join("state.json").exists());
        kept.extend(new);
    }
    // A crash loop cannot fill the disk: the oldest beyond five are removed.
    for i in 0..6 {
        std::fs::write(d.join(format!("state.json.bad.20000101T00000{i}Z")), "x").unwrap();
    }
    std::fs::write(d.join("state.json"), "{ third").unwrap();
    let o = monitor(&t, &cfg, &["-D", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let left = bad_files(&d);
    // The five newest: the three real ones and the two newest of the old ones.
    assert_eq!(left.len(), 5, "{left:?}");
    assert!(
        left[..2]
            .iter()
            .all(|n| n.starts_with("state.json.bad.2000")),
        "{left:?}"
    );
    assert!(!left.iter().any(|n| n.ends_with("T000003Z")), "{left:?}");
    assert!(
        left.contains(&kept[0]) && left.contains(&kept[1]),
        "{left:?}"
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let t = TempDir::new("monitor-usage");
    let cfg = config(&t, "[monitor]\nwindow = \"0s\"\n");
    let o = run(&["monitor", "--config", &cfg, "-D", "1s"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(":2: monitor.window = \"0s\""), "{err}");
    let good = config(&t, "");
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
    let o = run(&["report", "--since", "2h", "--dir", &t.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no monitor windows"));
}

/// Runs `script` (sh) in a private mount namespace: its mounts vanish with it.
fn in_mount_namespace(script: &str) -> Output {
    Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-ec", script])
        .env("RTBENCH", crate::common::exe())
        .env_remove("INVOCATION_ID")
        .env_remove("NOTIFY_SOCKET")
        .env_remove("JOURNAL_STREAM")
        .output()
        .expect("unshare (util-linux)")
}

#[test]
fn a_read_only_directory_is_said_once_and_the_windows_still_reach_the_journal() {
    let t = TempDir::new("monitor-ro");
    let cfg = config(&t, "");
    let d = t.join("mon");
    std::fs::create_dir_all(&d).unwrap();
    // A read-only bind mount of the directory (root writes anywhere else): every write
    // fails at run time, which is a warning, not a refusal to start.
    let script = format!(
        "D='{}'\n\
         mount --bind \"$D/mon\" \"$D/mon\"\n\
         mount -o remount,ro,bind \"$D/mon\"\n\
         \"$RTBENCH\" monitor --config '{cfg}' --log-format logfmt -a 0 --window 1s \
         --dir \"$D/mon\" -D 3 2>&1\n",
        t.display()
    );
    let o = in_mount_namespace(&script);
    // It kept measuring to -D, but nothing was kept: not a success (exit 3, not 0).
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e: Vec<_> = stdout(&o)
        .lines()
        .filter(|l| l.starts_with("MESSAGE_ID="))
        .map(logfmt)
        .collect();
    assert!(with_id(&e, WINDOW).len() >= 2, "{e:?}");
    let out = with_id(&e, OUTPUT);
    assert_eq!(out.len(), 1, "{e:?}");
    for f in &catalog()[OUTPUT] {
        assert!(out[0].contains_key(f), "@{f}@ missing in {:?}", out[0]);
    }
    assert_eq!(out[0]["RTBENCH_OUTPUT"], "window store");
    assert!(out[0]["MESSAGE"].contains("Read-only"), "{:?}", out[0]);
    assert_eq!(out[0]["PRIORITY"], "4");
    let stop = with_id(&e, STOP);
    assert!(stop[0]["MESSAGE"].contains("state NOT saved"), "{stop:?}");
    assert_eq!(stop[0]["PRIORITY"], "4");
    assert!(!d.join("windows.jsonl").exists());
}

#[test]
fn a_file_where_a_directory_belongs_or_the_reverse_is_exit_2_before_anything_starts() {
    let t = TempDir::new("monitor-shape");
    let good = config(&t, "");
    let afile = t.join("afile");
    std::fs::write(&afile, "").unwrap();
    let a = afile.display().to_string();
    let check = |args: &[&str], want: &[&str]| {
        let mut v = vec!["monitor", "-a", "0", "--window", "1s", "-D", "1s"];
        v.extend_from_slice(args);
        let o = run(&v);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{v:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        for w in want {
            assert!(err.contains(w), "{v:?}: {err}");
        }
        // Nothing started: no start entry, nothing written.
        assert!(!err.contains(START), "{err}");
    };
    check(
        &["--config", &good, "--dir", &a],
        &["--dir", &a, "not a directory (a regular file)"],
    );
    let below = format!("{a}/mon");
    check(
        &["--config", &good, "--dir", &below],
        &["--dir", &below, &format!("{a} is not a directory")],
    );
    let cfg = config(&t, &format!("[monitor]\ndir = \"{a}\"\n"));
    check(&["--config", &cfg], &["monitor.dir", "not a directory"]);
    // The state file or the window store as a directory.
    for name in ["state.json", "windows.jsonl"] {
        let d = t.join(format!("d-{name}"));
        std::fs::create_dir_all(d.join(name)).unwrap();
        let ds = d.display().to_string();
        check(
            &["--config", &good, "--dir", &ds],
            &[
                &format!("{}", d.join(name).display()),
                "is a directory; expected a regular file",
            ],
        );
    }
    // A Prometheus textfile path that cannot be a file.
    let dir = t.display().to_string();
    let mon = t.join("m").display().to_string();
    for (p, want) in [
        (format!("{a}/x.prom"), "is not a directory"),
        (dir.clone(), "is a directory"),
        (format!("{dir}/"), "expected a file name"),
        // Relative: the unit's working directory is /.
        ("rtbench.prom".to_string(), "expected an absolute file path"),
    ] {
        check(
            &["--config", &good, "--dir", &mon, "--prometheus", &p],
            &["--prometheus", want],
        );
    }
    assert!(!t.join("m").exists());
}

#[test]
fn a_missing_prometheus_directory_is_a_warning_as_for_the_self_test() {
    let t = TempDir::new("monitor-prom");
    let missing = t.join("node-exporter/rtbench.prom");
    let cfg = config(
        &t,
        &format!("[monitor]\nprometheus = \"{}\"\n", missing.display()),
    );
    // The self-test reads the same configuration: it is valid for it too.
    let o = run(&["tune", "check", "--config", &cfg]);
    assert_ne!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = monitor(&t, &cfg, &["-D", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = entries(&o);
    let out = with_id(&e, OUTPUT);
    assert_eq!(out.len(), 1, "{e:?}");
    assert_eq!(out[0]["RTBENCH_OUTPUT"], "Prometheus textfile");
    assert_eq!(out[0]["PRIORITY"], "4");
    assert!(out[0]["MESSAGE"].contains("does not exist"), "{:?}", out[0]);
    assert!(
        out[0]["MESSAGE"].contains(&missing.display().to_string()),
        "{:?}",
        out[0]
    );
    // Said before the first window, once; the windows are stored all the same.
    let first_window = e.iter().position(|m| m["MESSAGE_ID"] == WINDOW).unwrap();
    let warned = e.iter().position(|m| m["MESSAGE_ID"] == OUTPUT).unwrap();
    assert!(warned < first_window, "{e:?}");
    assert!(!records(&t.join("mon")).is_empty());
    // The same from the flag.
    let flag = missing.display().to_string();
    let o = monitor(&t, &config(&t, ""), &["-D", "1", "--prometheus", &flag]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(with_id(&entries(&o), OUTPUT).len(), 1);
}

#[test]
fn a_closed_log_stops_the_monitor_with_the_last_window_stored_and_the_state_saved() {
    use std::io::BufRead;
    let t = TempDir::new("monitor-pipe");
    let cfg = config(&t, "");
    let d = t.join("mon");
    // As `rtbench monitor ... 2>&1 | head -1`: the reader takes one line and goes.
    let mut child = monitor_command(&cfg, &d)
        .args(["-D", "60"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(!first.is_empty());
    // The reader is dropped here: the next entry finds the pipe closed.
    let status = child.wait().unwrap();
    // Not killed by SIGPIPE: 141 (128 + SIGPIPE) as its own exit, after saving.
    assert_eq!(status.code(), Some(141), "{status:?}");
    let r = records(&d);
    assert!(!r.is_empty());
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("state.json")).unwrap()).unwrap();
    assert_eq!(
        state["last_window"].as_u64(),
        r.last().unwrap()["seq"].as_u64()
    );
}

/// Peak RSS of the finished child `pid` in KiB (`wait4`: this child only, not the
/// other tests' processes).
#[allow(clippy::useless_conversion)] // c_long: 32 bits on armv7
fn wait_peak_rss_kib(pid: u32) -> (i32, i64) {
    let mut status = 0;
    // SAFETY: zeroed rusage is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointers; waiting for our own child.
    let r = unsafe { libc::wait4(pid as i32, &mut status, 0, &mut ru) };
    assert_eq!(r, pid as i32);
    (libc::WEXITSTATUS(status), i64::from(ru.ru_maxrss))
}

#[test]
fn an_oversize_store_is_streamed_not_read_into_memory() {
    let t = TempDir::new("monitor-big");
    let d = t.join("mon");
    std::fs::create_dir_all(&d).unwrap();
    // 40 MiB of old windows (a store that grew before store_kib was made smaller).
    let line = |seq: u64| {
        format!(
            "{{\"seq\":{seq},\"start_s\":1000,\"end_s\":1300,\"duration_s\":300.0,\"cpus\":[\
             {{\"cpu\":0,\"samples\":300000,\"min_ns\":1000,\"avg_ns\":2000,\"p99_ns\":5000,\
             \"p999_ns\":8000,\"max_ns\":9000,\"overruns\":0}}]}}\n"
        )
    };
    // Written line by line: the child's peak RSS as wait4 gives it includes this
    // process's peak (posix_spawn shares its memory until exec), which must stay small.
    let mut f = std::io::BufWriter::new(std::fs::File::create(d.join("windows.jsonl")).unwrap());
    let (mut seq, mut size) = (0, 0);
    while size < 40 << 20 {
        seq += 1;
        let l = line(seq);
        size += l.len();
        std::io::Write::write_all(&mut f, l.as_bytes()).unwrap();
    }
    drop(f);
    let dir = d.display().to_string();
    // Waited for by wait_peak_rss_kib (wait4), not by Child::wait.
    #[allow(clippy::zombie_processes)]
    let child = rtbench()
        .args(["report", "--since", "1h", "--dir", &dir])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (code, kib) = wait_peak_rss_kib(child.id());
    // No window in the last hour: exit 1, having read all of them one line at a time.
    assert_eq!(code, 1);
    // Read whole, the store alone would take 40 MiB; streamed, the binary's own ~10.
    assert!(
        kib < 32 << 10,
        "report --since: peak RSS {kib} KiB for a 40 MiB store"
    );
    // The monitor reads only the tail its store_kib allows, and counts on from it.
    let cfg = config(&t, "[monitor]\nstore_kib = 64\n");
    let o = monitor(&t, &cfg, &["-D", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let w = with_id(&entries(&o), WINDOW).len() as u64;
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["last_window"].as_u64(), Some(seq + w));
}

#[test]
fn sigusr2_is_a_status_and_sighup_saves_the_state() {
    let t = TempDir::new("monitor-hup");
    let cfg = config(&t, "");
    let d = t.join("mon");
    let r = Running::spawn(&mut monitor_command(&cfg, &d));
    wait_samples(r.pid(), "rtbench-M", 1, 20);
    // rt-tests' snapshot signal: the status, and the monitor carries on.
    r.signal(libc::SIGUSR2);
    r.wait_stderr(0, "the status of T: 0", |l| l.contains("T: 0 "));
    wait_samples(r.pid(), "rtbench-M", 1, 2);
    // A lost terminal: stopped as on SIGTERM, the last window stored, the state saved.
    r.signal(libc::SIGHUP);
    let o = r.finish();
    assert_eq!(o.status.code(), Some(129), "{}", stderr(&o));
    let e = entries(&o);
    let stop = with_id(&e, STOP);
    assert_eq!(stop[0]["RTBENCH_STOP"], "SIGHUP", "{e:?}");
    assert!(d.join("state.json").exists());
    assert!(!records(&d).is_empty(), "the partial window is stored");
}

//! `rtbench oslat` (and rtbench installed as `oslat`) beside Debian's rt-tests oslat
//! 2.4, run with the same arguments on the same CPU:
//!
//! - standard output has the same lines, byte for byte, once every measured number is
//!   masked (the header, the per-CPU table with its bucket rows and units);
//! - parsed as OpenShift's node latency test parses it (the `Maximum:` row, one
//!   value per CPU in µs), and checked against the `--json` of the same run as an
//!   independent reading (JSON `max` = the row, the buckets add up to the gap count);
//! - argv\[0\] `oslat`; bad options are one line and exit 2; `-T` stops the run.
//!
//! No latency value is asserted: only shapes, units and consistency.

use crate::common::*;
use crate::common::{exclusive, skip};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// The CPU to poll: the last one this process may run on, and a main-thread CPU beside
/// it (the first), so that both programs print the same header.
fn cpus() -> (String, String) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    let set = rtbench::cpuset::CpuSet::parse_list(&list, 4096).unwrap();
    (
        set.last().unwrap().to_string(),
        set.first().unwrap().to_string(),
    )
}

/// Debian's oslat with `args`; panics with the install hint when it is missing (the
/// comparison is the point of these tests).
fn real_oslat(args: &[&str]) -> Output {
    isolate::ensure();
    lock::shared();
    lock::spawning();
    Command::new("oslat")
        .args(args)
        .output()
        .expect("oslat (Debian package rt-tests) must be installed: apt-get install rt-tests")
}

/// Every run of digits (with its decimals) after the first tab of a line, and in the
/// `Global bias` line, replaced by `N`: what remains is what a parser relies on.
fn masked(text: &str) -> String {
    let digits = |s: &str| {
        let mut out = String::new();
        let mut in_num = false;
        for c in s.chars() {
            if c.is_ascii_digit() || (in_num && c == '.') {
                if !in_num {
                    out.push('N');
                }
                in_num = true;
            } else {
                in_num = false;
                out.push(c);
            }
        }
        out
    };
    text.lines()
        .map(|l| match l.split_once('\t') {
            _ if l.starts_with("Global bias") => digits(l),
            Some((label, values)) if label.ends_with(':') && label.len() == 13 => {
                format!("{label}\t{}", digits(values))
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// OpenShift's reading of oslat's output: the values of the `Maximum:` row, in µs.
fn maxima(text: &str) -> Vec<u64> {
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("Maximum:"))
        .unwrap_or_else(|| panic!("no Maximum row in:\n{text}"));
    row.split_once(':')
        .unwrap()
        .1
        .split_whitespace()
        .take_while(|w| *w != "(us)")
        .map(|w| w.parse().unwrap_or_else(|_| panic!("{w:?} in {row:?}")))
        .collect()
}

#[test]
fn same_lines_as_oslat_2_4_with_the_numbers_masked() {
    let (cpu, main) = cpus();
    let dir = TempDir::new("oslat-compat");
    for extra in [
        &[][..],
        &["-q", "-B", "-b", "8"],
        &["-f", "1", "-w", "memmove", "-m", "4K"],
    ] {
        let mut args = vec!["-c", cpu.as_str(), "-C", main.as_str(), "-D", "1"];
        args.extend_from_slice(extra);
        let theirs = real_oslat(&args);
        assert!(theirs.status.success(), "oslat {args:?}: {theirs:?}");
        let json = dir.join("run.json");
        let mut ours_args = vec!["oslat"];
        ours_args.extend_from_slice(&args);
        ours_args.extend_from_slice(&["--json", json.to_str().unwrap()]);
        let ours = run(&ours_args);
        assert!(
            ours.status.success(),
            "rtbench {ours_args:?}: {}",
            stderr(&ours)
        );
        let (t, o) = (stdout(&theirs), stdout(&ours));
        assert_eq!(
            masked(&o),
            masked(&t),
            "{args:?}\n--- rtbench\n{o}\n--- oslat\n{t}"
        );
        // OpenShift's parse, and the same run's JSON as the independent reading.
        let max = maxima(&o);
        assert_eq!(max.len(), 1, "{o}");
        assert_eq!(maxima(&t).len(), 1);
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let th = &doc["thread"]["0"];
        assert_eq!(th["max"].as_u64(), Some(max[0]), "{doc}");
        assert_eq!(th["cpu"].as_u64().map(|c| c.to_string()), Some(cpu.clone()));
        let ext = &doc["rtbench"]["threads"][0];
        let in_buckets: u64 = th["histogram"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(Some(in_buckets), ext["count"].as_u64(), "{doc}");
        // oslat counts the started µs of a gap: max_ns / 1000 + 1.
        assert_eq!(ext["max_ns"].as_u64().map(|n| n / 1000 + 1), Some(max[0]));
        assert_eq!(doc["rt_test_version:"], "2.40");
    }
}

#[test]
fn called_as_oslat_by_argv0() {
    let dir = TempDir::new_in(Path::new(env!("CARGO_TARGET_TMPDIR")), "oslat-link");
    std::os::unix::fs::symlink(exe(), dir.join("oslat")).unwrap();
    let link = dir.join("oslat");
    let v = Command::new(&link).arg("-v").output().unwrap();
    assert_eq!(
        (v.status.code(), stdout(&v).as_str()),
        (Some(0), "oslat V 2.40\n")
    );
    let (cpu, _) = cpus();
    let o = Command::new(&link)
        .args(["-c", &cpu, "-D", "1", "-q", "-z"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("oslat V 2.40\n        Core:\t "), "{out}");
    assert!(out.contains(" (including overflows)\n"), "{out}");
    assert_eq!(maxima(&out).len(), 1);
}

#[test]
fn bad_options_are_one_line_and_exit_2() {
    for (args, says) in [
        (
            &["-b", "3"][..],
            "-b 3: expected a number of buckets 4..1024",
        ),
        (&["-b", "1025"], "-b 1025:"),
        (&["-f", "0"], "-f 0: expected a SCHED_FIFO priority 1..99"),
        (
            &["-w", "spin"],
            "-w spin: expected a workload: no or memmove",
        ),
        (&["-m", "4X"], "-m 4X:"),
        (&["-T", "0"], "-T 0:"),
        (&["-D", "5x"], "-D 5x:"),
        (&["-c", "4096"], "-c 4096:"),
        (&["-x"], "'-x'"),
        (&["-D", "1", "stray"], "'stray': unexpected argument"),
    ] {
        let mut argv = vec!["oslat"];
        argv.extend_from_slice(args);
        let o = run(&argv);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("rtbench: ") && err.contains(says),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn trace_threshold_stops_the_run_as_oslat() {
    let guard = TracingOnGuard::save();
    let (cpu, _) = cpus();
    // -T 1: every gap is at least oslat's 1 µs, so the first one stops the run.
    let o = run(&["oslat", "-c", &cpu, "-D", "30", "-T", "1"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "rtbench oslat: Trace threshold (1 us) triggered on cpu {cpu} with "
        )),
        "{err}"
    );
    assert!(err.contains("\nStopping the test.\n"), "{err}");
    assert_eq!(maxima(&stdout(&o)).len(), 1);
    if let Some(on) = guard.read() {
        assert_eq!(on, "0", "-T stops tracing as oslat does");
    }
}

/// Noise injected on the polled CPU is named as the cause of the gap it made, with
/// what would move it: a timer-driven task at SCHED_FIFO 90 (150 ms busy every 300 ms:
/// longer than what this shared machine's other tenants take, as only new maxima are
/// explained) on CPU 1 while `rtbench oslat --explain` polls CPU 1. The attribution is
/// asserted (the culprit's pid, the cause's kind), never a latency.
#[test]
fn a_timer_driven_task_on_the_polled_cpu_is_named_with_what_moves_it() {
    let _machine = exclusive();
    if online_cpus() < 2 {
        return skip("needs 2 online CPUs (CPU 1 polled, CPU 0 for the rest)");
    }
    let d = TempDir::new("oslat-explain");
    let json = d.join("r.json");
    let run = rtbench()
        .args([
            "oslat",
            "-c",
            "1",
            "-C",
            "0",
            "-D",
            "120",
            "-q",
            "--explain",
            "100000",
            "--json",
        ])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rtbench starts");
    let pid = run.id();
    let ready = wait_for(std::time::Duration::from_secs(30), || {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
        let polling = tasks.flatten().any(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.trim() == "rtbench-oslat0")
        });
        let on =
            std::fs::read_to_string(crate::common::explain::instance_of(pid).join("tracing_on"))
                .ok()?;
        (polling && on.trim() == "1").then_some(())
    });
    assert!(
        ready.is_some(),
        "rtbench {pid} did not start polling and recording"
    );
    // Past the 1 s pre-heat, when gaps are explained.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let script = "python3 -c 'import time\nwhile True:\n    e=time.monotonic()+0.15\n    while time.monotonic()<e: pass\n    time.sleep(0.15)'";
    let (mut c, sh_pid) =
        crate::common::explain::culprit(&["-f", "90"], "2", &format!("exec {script}"), &d);
    c.wait().unwrap();
    signal(pid, libc::SIGINT);
    let out = run.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let x = &doc["rtbench"]["explain"];
    let named = x["explained"]
        .as_array()
        .unwrap_or_else(|| panic!("no explanations: {doc:#}\n{err}"))
        .iter()
        .any(|e| {
            e["spike"]["kind"] == "poll"
                && e["cause"]["kind"] == "task"
                && e["cause"]["pid"] == sh_pid
                && e["cause"]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("instead of the polling thread"))
        });
    assert!(
        named,
        "the culprit (pid {sh_pid}) is not named: {x:#}\n{err}"
    );
    assert!(
        err.lines()
            .any(|l| l.starts_with("# To move (CPU 1): task ")
                && l.contains("isolcpus=1 ([tuning] isolated")),
        "{err}"
    );
    assert!(
        !crate::common::explain::instance_of(pid).exists(),
        "the tracefs instance was left behind"
    );
}

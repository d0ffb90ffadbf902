//! The self-test with `[explain]` (its default): a culprit on the measured CPU is named
//! in the failure and its journal entry; a self-test stopped from outside is invalid
//! (exit 4), not a failed unit. Root, tracefs, 2 CPUs; each test holds the machine
//! alone (`common::exclusive`).

use crate::common::{exclusive, logfmt, rtbench, signal, wait_for, TempDir};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The instance the run recorded into.
fn instance_of(pid: u32) -> PathBuf {
    PathBuf::from(format!("/sys/kernel/tracing/instances/rtbench-{pid}"))
}

/// Waits until the measuring thread runs and the recorder records.
fn wait_ready(child: &Child) {
    let pid = child.id();
    let ready = wait_for(Duration::from_secs(60), || {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
        let measuring = tasks.flatten().any(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "rtbench-T0")
        });
        let on = std::fs::read_to_string(instance_of(pid).join("tracing_on")).ok()?;
        (measuring && on.trim() == "1").then_some(())
    });
    assert!(
        ready.is_some(),
        "rtbench {pid} did not start measuring and recording"
    );
}

/// Runs `sh -c SCRIPT` pinned to CPU 1 under `chrt ARGS`, ended by `timeout` on CPU 0
/// after `secs`; returns the culprit's pid (written by the script to a file).
fn culprit(chrt: &[&str], secs: &str, script: &str, dir: &Path) -> (Child, i32) {
    let pidfile = dir.join("culprit.pid");
    let _ = std::fs::remove_file(&pidfile);
    let mut c = Command::new("taskset");
    c.args(["-c", "0", "timeout", "-k", "1", secs, "chrt"])
        .args(chrt)
        .args(["taskset", "-c", "1", "sh", "-c"])
        .arg(format!("echo $$ > {}; {script}", pidfile.display()));
    let child = c
        .spawn()
        .expect("taskset, timeout, chrt (util-linux, coreutils)");
    let pid = wait_for(Duration::from_secs(10), || {
        std::fs::read_to_string(&pidfile).ok()?.trim().parse().ok()
    })
    .expect("the culprit started");
    (child, pid)
}

/// A self-test configuration measuring CPU 1 for `secs` with `max_us`, results under
/// `dir`; journal entries as logfmt lines on standard error.
fn selftest(dir: &Path, secs: u32, max_us: u64) -> Child {
    selftest_with(dir, secs, max_us, "")
}

/// [`selftest`] with `extra` lines in `[selftest]`.
fn selftest_with(dir: &Path, secs: u32, max_us: u64, extra: &str) -> Child {
    selftest_on(dir, secs, max_us, extra, "1")
}

/// [`selftest_with`] measuring `cpus`.
fn selftest_on(dir: &Path, secs: u32, max_us: u64, extra: &str, cpus: &str) -> Child {
    let cfg = dir.join("rtbench.toml");
    std::fs::write(
        &cfg,
        format!(
            "[selftest]\nmode = \"off\"\nduration = \"{secs}s\"\n{extra}[cyclic]\ncpus = \"{cpus}\"\n\
             [limits]\nmax_us = {max_us}\n[output]\nresults_dir = \"{0}/results\"\n\
             fallback_dir = \"{0}/run\"\n",
            dir.display()
        ),
    )
    .unwrap();
    rtbench()
        .args(["selftest", "--config"])
        .arg(&cfg)
        .args(["--log-format", "logfmt"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rtbench starts")
}

fn entries_of(out: &std::process::Output) -> Vec<std::collections::HashMap<String, String>> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .chain(String::from_utf8_lossy(&out.stdout).lines())
        .filter(|l| l.starts_with("MESSAGE_ID="))
        .map(logfmt)
        .collect()
}

#[test]
fn the_self_test_names_the_culprit_in_its_failure_and_journal() {
    let _machine = exclusive();
    let d = TempDir::new("st-busy");
    let st = selftest(&d, 30, 20_000);
    wait_ready(&st);
    let (mut c, culprit_pid) = culprit(&["-f", "99"], "0.3", "while :; do :; done", &d);
    c.wait().unwrap();
    signal(st.id(), libc::SIGTERM);
    let out = st.wait_with_output().unwrap();
    let es = entries_of(&out);
    let explained: Vec<_> = es
        .iter()
        .filter(|e| e["MESSAGE_ID"] == "8d09e443b62944249b71ee2f6aa7adff")
        .collect();
    let hit = explained
        .iter()
        .find(|e| e["RTBENCH_CULPRIT_PID"] == culprit_pid.to_string())
        .unwrap_or_else(|| panic!("no entry names pid {culprit_pid}: {explained:#?}"));
    assert_eq!(hit["RTBENCH_EXPLAIN_KIND"], "task");
    assert_eq!(hit["RTBENCH_EXPLAIN_VALID"], "1");
    let summary = es
        .iter()
        .find(|e| e["MESSAGE_ID"] == "7b1dd0eea94d4cc4bd8f9e6c91b6465d")
        .expect("summary entry");
    assert!(
        summary["RTBENCH_FAILED"].contains(&format!("(pid {culprit_pid}, ")),
        "{summary:#?}"
    );
}

#[test]
fn a_stopped_self_test_is_invalid_with_exit_4_not_a_failed_unit() {
    let _machine = exclusive();
    let d = TempDir::new("st-stop");
    let st = selftest(&d, 3, 20_000);
    wait_ready(&st);
    let pid = st.id();
    signal(pid, libc::SIGSTOP);
    wait_for(Duration::from_secs(10), || {
        crate::common::proc_info(pid as i32)
            .filter(|p| p.state == 'T')
            .map(|_| ())
    })
    .expect("stopped");
    std::thread::sleep(Duration::from_millis(300));
    signal(pid, libc::SIGCONT);
    let out = st.wait_with_output().unwrap();
    let es = entries_of(&out);
    let summary = es
        .iter()
        .find(|e| e["MESSAGE_ID"] == "7b1dd0eea94d4cc4bd8f9e6c91b6465d")
        .unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    // Any other spike over 20 ms on this shared VM would make it a real failure.
    if summary["RTBENCH_VERDICT"] == "fail" {
        assert!(
            summary["RTBENCH_FAILED"].contains("not the system's latency"),
            "{summary:#?}"
        );
        return;
    }
    assert_eq!(summary["RTBENCH_VERDICT"], "invalid", "{summary:#?}");
    assert_eq!(out.status.code(), Some(4));
    assert!(
        summary["RTBENCH_FAILED"].contains("not the system's latency"),
        "{summary:#?}"
    );
}

/// A stop after a real failure excuses nothing: a FIFO 99 busy loop of 0.2 s over the
/// 20 ms limit, then a SIGSTOP of 0.3 s (the larger maximum): the unit failed, exit 1,
/// and the failure names the busy loop's explanation beside the stop.
#[test]
fn a_stop_after_a_real_failure_is_still_a_failure() {
    let _machine = exclusive();
    let d = TempDir::new("st-real-then-stop");
    let st = selftest(&d, 30, 20_000);
    wait_ready(&st);
    let (mut c, _) = culprit(&["-f", "99"], "0.2", "while :; do :; done", &d);
    c.wait().unwrap();
    let pid = st.id();
    signal(pid, libc::SIGSTOP);
    wait_for(Duration::from_secs(10), || {
        crate::common::proc_info(pid as i32)
            .filter(|p| p.state == 'T')
            .map(|_| ())
    })
    .expect("stopped");
    std::thread::sleep(Duration::from_millis(300));
    signal(pid, libc::SIGCONT);
    // Past the stop's analysis (the recorder re-armed) before ending the run.
    std::thread::sleep(Duration::from_millis(500));
    signal(pid, libc::SIGTERM);
    let out = st.wait_with_output().unwrap();
    let es = entries_of(&out);
    let summary = es
        .iter()
        .find(|e| e["MESSAGE_ID"] == "7b1dd0eea94d4cc4bd8f9e6c91b6465d")
        .unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(summary["RTBENCH_VERDICT"], "fail", "{summary:#?}");
    let explained: Vec<_> = es
        .iter()
        .filter(|e| e["MESSAGE_ID"] == "8d09e443b62944249b71ee2f6aa7adff")
        .map(|e| e["RTBENCH_EXPLAIN_KIND"].as_str())
        .collect();
    assert!(explained.contains(&"task"), "{explained:?}");
}

/// `[selftest] hwlat` on a kernel without the hwlat tracer (this machine): the gate
/// checked nothing, so the verdict is not a pass — unjudged, exit 1, naming why.
#[test]
fn a_configured_hwlat_gate_that_cannot_run_is_not_a_pass() {
    let _machine = exclusive();
    if std::fs::read_to_string("/sys/kernel/tracing/available_tracers")
        .is_ok_and(|t| t.split_whitespace().any(|t| t == "hwlat"))
    {
        eprintln!("skipped: this kernel has the hwlat tracer");
        return;
    }
    let d = TempDir::new("st-hwlat");
    let st = selftest_with(&d, 1, 1_000_000, "hwlat = \"1s\"\n");
    let out = st.wait_with_output().unwrap();
    let es = entries_of(&out);
    let summary = es
        .iter()
        .find(|e| e["MESSAGE_ID"] == "7b1dd0eea94d4cc4bd8f9e6c91b6465d")
        .unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(summary["RTBENCH_VERDICT"], "unjudged", "{summary:#?}");
    assert_eq!(out.status.code(), Some(1));
    let all: String = summary.values().cloned().collect::<Vec<_>>().join(" ");
    assert!(
        all.contains("hwlat gate not run: unsupported: CONFIG_HWLAT_TRACER"),
        "{summary:#?}"
    );
}

/// A stop of the whole process with two measured CPUs: every thread wakes late at once,
/// and the first to measure freezes the recording for both; the other's stop is still
/// in the recorded part. Invalid (exit 4), not a failed unit.
#[test]
fn a_stopped_self_test_on_two_cpus_is_invalid() {
    let _machine = exclusive();
    let d = TempDir::new("st-stop-2");
    let st = selftest_on(&d, 3, 20_000, "", "0-1");
    wait_ready(&st);
    let pid = st.id();
    signal(pid, libc::SIGSTOP);
    wait_for(Duration::from_secs(10), || {
        crate::common::proc_info(pid as i32)
            .filter(|p| p.state == 'T')
            .map(|_| ())
    })
    .expect("stopped");
    std::thread::sleep(Duration::from_millis(300));
    signal(pid, libc::SIGCONT);
    let out = st.wait_with_output().unwrap();
    let es = entries_of(&out);
    let summary = es
        .iter()
        .find(|e| e["MESSAGE_ID"] == "7b1dd0eea94d4cc4bd8f9e6c91b6465d")
        .unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let kinds: Vec<_> = es
        .iter()
        .filter(|e| e["MESSAGE_ID"] == "8d09e443b62944249b71ee2f6aa7adff")
        .map(|e| (e["RTBENCH_CPU"].clone(), e["RTBENCH_EXPLAIN_KIND"].clone()))
        .collect();
    assert_eq!(
        summary["RTBENCH_VERDICT"], "invalid",
        "{summary:#?}\n{kinds:?}"
    );
    assert_eq!(out.status.code(), Some(4));
}

//! Runs with the flight recorder (`--explain`, the self-test's `[explain]`): the tracefs
//! instance a run records into, waiting until it records, and a culprit on the measured
//! CPU. Used by tests/cli/explain.rs and tests/selftest/explain.rs.

use super::proc::wait_for;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

/// The tracefs instance rtbench `pid` records into (`rtbench-PID`, made by
/// src/explain/recorder.rs).
pub fn instance_of(pid: u32) -> PathBuf {
    PathBuf::from(format!("/sys/kernel/tracing/instances/rtbench-{pid}"))
}

/// Waits until `child`'s measuring thread `rtbench-T0` exists, its instance records
/// (`tracing_on` is 1) and the thread has taken two samples, so that it is in its loop
/// with a deadline (a thread that exists may still be setting up, or waiting at the start
/// barrier for a main thread that a loaded CPU delays: a stop or a culprit then lands
/// before the first deadline and delays no sample); fails the test after `bound`.
pub fn wait_ready(child: &Child, bound: Duration) {
    let pid = child.id();
    let ready = wait_for(bound, || {
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
    super::proc::wait_samples(pid, "rtbench-T", 1, 2);
}

/// Runs `sh -c SCRIPT` pinned to CPU 1 under `chrt CHRT`, ended by `timeout` on CPU 0
/// after `secs` (seconds, as `timeout` reads them: "0.3"), so that a stuck test leaves
/// no real-time busy loop behind. Returns the child (`taskset`) and the culprit's pid
/// (the shell's, written by the script to `dir/culprit.pid`); fails the test when the
/// culprit has not started within 10 s.
pub fn culprit(chrt: &[&str], secs: &str, script: &str, dir: &Path) -> (Child, i32) {
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

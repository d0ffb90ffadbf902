//! tracefs instances rtbench did not make: an instance named `rtbench-PID` of a gone
//! process is removed at the start only when it is provably a dead rtbench's (rtbench's
//! marker, recording off). `trace-cmd start -B rtbench-123` leaves exactly such a name
//! recording; an instance without the marker is another tool's. Real tracefs, planted
//! instances in the states those tools leave them.

use crate::common::explain::instance_of;
use crate::common::{exclusive, rtbench};
use std::path::PathBuf;
use std::process::Command;

/// rtbench's marker as src/sys/tracefs.rs writes it (its `MARKER_FILE`, `MARKER`).
const MARKER_FILE: &str = "events/sched/sched_process_free/filter";
const MARKER: &str = "common_pid != -1 && common_type != 0x7274626e";

/// A pid that no process has now.
fn gone_pid() -> u32 {
    let mut c = Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

/// A planted instance, stopped and removed however the test ends.
struct Planted(PathBuf);

impl Planted {
    fn new(settings: &[(&str, &str)]) -> (Planted, u32) {
        let pid = gone_pid();
        let dir = instance_of(pid);
        std::fs::create_dir(&dir).expect("mkdir of a tracefs instance");
        let p = Planted(dir);
        for (rel, v) in settings {
            std::fs::write(p.0.join(rel), v).unwrap_or_else(|e| panic!("{rel}: {e}"));
        }
        (p, pid)
    }
}

impl Drop for Planted {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0.join("tracing_on"), "0");
        let _ = std::fs::write(self.0.join("events/sched/sched_switch/enable"), "0");
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn only_an_instance_provably_a_dead_rtbenchs_is_reclaimed() {
    if !std::path::Path::new("/sys/kernel/tracing/instances").is_dir() {
        eprintln!("skipped: no tracefs with instances at /sys/kernel/tracing on this machine");
        return;
    }
    let _machine = exclusive();
    // trace-cmd start -B rtbench-PID: recording (a new instance's tracing_on is 1),
    // an event enabled.
    let (recording, rec_pid) = Planted::new(&[("events/sched/sched_switch/enable", "1")]);
    // Stopped but not marked: another tool's.
    let (unmarked, unm_pid) = Planted::new(&[("tracing_on", "0")]);
    // What a killed rtbench leaves: marked, stopped (tests/cli/explain.rs kills a real one).
    let (_ours, ours_pid) = Planted::new(&[(MARKER_FILE, MARKER), ("tracing_on", "0")]);
    let out = rtbench()
        .args([
            "cyclic",
            "-m",
            "-a",
            "1",
            "-p",
            "98",
            "-i",
            "1000",
            "-D",
            "1s",
            "-q",
            "--explain",
            "100000",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(recording.0.exists(), "a live recording was removed: {err}");
    assert!(
        unmarked.0.exists(),
        "another tool's instance was removed: {err}"
    );
    assert!(!instance_of(ours_pid).exists(), "{err}");
    assert!(
        err.contains(&format!(
            "tracefs instance rtbench-{ours_pid} of an rtbench that is gone removed"
        )),
        "{err}"
    );
    let left: Vec<&str> = err.lines().filter(|l| l.contains("left alone")).collect();
    assert_eq!(left.len(), 1, "one warning: {err}");
    assert!(
        left[0].contains(&format!("rtbench-{rec_pid} (recording"))
            && left[0].contains(&format!("rtbench-{unm_pid} (no rtbench marker")),
        "{err}"
    );
    // The recording is untouched: still on.
    let on = std::fs::read_to_string(recording.0.join("tracing_on")).unwrap();
    assert_eq!(on.trim(), "1");
}

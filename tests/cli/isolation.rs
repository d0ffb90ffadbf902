//! The host's `/etc/rtbench`, `/run/rtbench` and `/var/lib/rtbench` never reach a test
//! (tests/common/isolate.rs): this test binary is run again, twice, on a host whose three
//! directories hold hostile files — a configuration every command rejects, a damaged
//! stored run and fallback result, a damaged tuning journal and monitor state — made in
//! a mount namespace of that child, never on the real paths. Without the isolation
//! (`control`) every one of them shows; with it (`isolated`, what every test binary
//! does) none does, and the commands behave as on a machine without rtbench.

use crate::common::isolate::{HIDDEN, HOSTILE_HOST, HOSTILE_MARK};
use crate::common::*;
use std::process::Command;

/// What the suite's helpers see of the three directories, by command.
fn look(empty_config: &std::path::Path) -> Vec<(&'static str, std::process::Output)> {
    let cfg = empty_config.to_str().unwrap();
    let mut v = vec![
        // /etc/rtbench/rtbench.toml, read without --config.
        ("tune check", run("tune check")),
        // /run/rtbench/journal.json.
        ("tune status", run(&["tune", "status", "--config", cfg])),
        // /var/lib/rtbench/run-*.json and /run/rtbench/unstored-run.json.
        ("report", run(&["report", "--config", cfg])),
    ];
    if cfg!(feature = "monitor") {
        // /var/lib/rtbench/monitor/state.json.
        let o = run(&[
            "monitor",
            "--config",
            cfg,
            "-D",
            "1",
            "--window",
            "1s",
            "-a",
            "0",
            "--log-format",
            "logfmt",
        ]);
        v.push(("monitor", o));
    }
    v
}

/// The run inside the child: `isolated` says whether this binary hid the directories.
/// Each command reads one of them (the control run shows it does); what a command
/// says on a machine without rtbench files (a missing configuration, no journal, no
/// result) is its own business, only nothing of the host's may show.
fn inside(isolated: bool) {
    assert_eq!(isolate::isolated(), isolated);
    let tmp = TempDir::new("isolation");
    let empty = tmp.join("empty.toml");
    std::fs::write(&empty, "").unwrap();
    for p in HIDDEN {
        let names: Vec<_> = std::fs::read_dir(p)
            .unwrap_or_else(|e| panic!("{p}: {e}"))
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.is_empty(), isolated, "{p}: {names:?}");
    }
    for (what, o) in look(&empty) {
        let err = stderr(&o);
        let seen = match what {
            "tune check" => {
                err.contains("/etc/rtbench/rtbench.toml:2: ") && err.contains(HOSTILE_MARK)
            }
            "tune status" => err.contains("/run/rtbench/journal.json: damaged tuning journal"),
            "report" => {
                err.contains("/var/lib/rtbench/run-000001-20000101T000000Z.json: skipped")
                    && err.contains("/run/rtbench/unstored-run.json: skipped")
            }
            _ => err.contains("/var/lib/rtbench/monitor/state.json damaged"),
        };
        assert_eq!(
            seen,
            !isolated,
            "{what} (exit {:?}):\n{}{err}",
            o.status.code(),
            stdout(&o)
        );
        let all = format!("{}{err}", stdout(&o));
        if isolated {
            for hostile in [HOSTILE_MARK, "damaged", "skipped"] {
                assert!(!all.contains(hostile), "{what}: {all}");
            }
        }
    }
}

#[test]
fn the_hosts_rtbench_files_never_reach_a_test() {
    match std::env::var(HOSTILE_HOST).as_deref() {
        Ok("control") => return inside(false),
        Ok("isolated") => return inside(true),
        _ => {}
    }
    // libtest names a test by its module path without the crate (the binary).
    let module = module_path!().split_once("::").unwrap().1;
    let name = format!("{module}::the_hosts_rtbench_files_never_reach_a_test");
    for mode in ["control", "isolated"] {
        let o = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &name, "--nocapture", "--test-threads", "1"])
            .env(HOSTILE_HOST, mode)
            .output()
            .unwrap();
        let out = stdout(&o);
        assert!(
            o.status.success() && out.contains("test result: ok. 1 passed"),
            "{mode}:\n{out}{}",
            stderr(&o)
        );
    }
}

//! Load processes: started, stopped and reaped with the measurement, and nothing left
//! behind when rtbench is stopped by SIGTERM or killed with SIGKILL.

use crate::common::*;
use std::io::Read;
use std::time::Duration;

/// What an rtbench run started: its load process group and every child.
struct Started {
    pgid: i32,
    pids: Vec<i32>,
}

/// Waits until the run has its load up (the io worker is found by its directory in
/// its command line), checks the io worker writes into an unnamed file in `tmp`, and
/// returns the load group and all children of rtbench.
fn started(rt_pid: u32, tmp: &TempDir, want_load: usize) -> Started {
    let dir = tmp.to_string_lossy().into_owned();
    let io = wait_for(BOUND, || {
        all_procs()
            .into_iter()
            .find(|p| p.cmdline.contains("load-worker io") && p.cmdline.contains(&dir))
    })
    .expect("the io load worker starts");
    assert_eq!(
        io.ppid, rt_pid as i32,
        "load workers are children of rtbench"
    );
    let group = wait_for(BOUND, || {
        let g: Vec<Proc> = all_procs()
            .into_iter()
            .filter(|p| p.pgid == io.pgid)
            .collect();
        (g.len() >= want_load).then_some(g)
    })
    .expect("all load processes start");
    assert_ne!(io.pgid, rt_pid as i32, "load runs in its own process group");
    // The io worker holds a file in TMPDIR that has no name there.
    let fd_into_tmp = wait_for(BOUND, || {
        std::fs::read_dir(format!("/proc/{}/fd", io.pid))
            .ok()?
            .find_map(|e| {
                let l = std::fs::read_link(e.ok()?.path()).ok()?;
                l.to_string_lossy().starts_with(&dir).then_some(l)
            })
    });
    let link = fd_into_tmp.expect("io worker has a file open in TMPDIR");
    assert!(
        link.to_string_lossy().contains("(deleted)") || link.to_string_lossy().contains('#'),
        "{link:?}"
    );
    assert!(
        tmp.entries().is_empty(),
        "no name in TMPDIR while running: {:?}",
        tmp.entries()
    );
    let mut pids: Vec<i32> = group.iter().map(|p| p.pid).collect();
    pids.extend(
        all_procs()
            .iter()
            .filter(|p| p.ppid == rt_pid as i32)
            .map(|p| p.pid),
    );
    Started {
        pgid: io.pgid,
        pids,
    }
}

fn assert_nothing_left(s: &Started, tmp: &TempDir) {
    let left = wait_for(BOUND, || {
        let a = alive(&s.pids, Some(s.pgid));
        a.is_empty().then_some(())
    });
    assert!(
        left.is_some(),
        "processes left behind: {:?}",
        alive(&s.pids, Some(s.pgid))
    );
    assert!(
        tmp.entries().is_empty(),
        "files left in the io worker's directory: {:?}",
        tmp.entries()
    );
}

#[test]
fn sigterm_during_loaded_pmq_run_stops_and_reaps_the_load() {
    let tmp = TempDir::new("term");
    let mut child = spawn_with_tmp(
        &[
            "pmq",
            "-a",
            "0",
            "-i",
            "500",
            "-D",
            "60",
            "-q",
            "--load",
            "cpu:1,vm:1:8M,io:1",
            "--load-cpus",
            "1",
        ],
        &tmp,
    );
    let s = started(child.id(), &tmp, 3);
    assert!(s.pids.len() >= 3);
    // Measuring: SIGTERM is the run's stop (with partial results), not the default action.
    wait_samples(child.id(), "rtbench-S", 1, 5);
    signal(child.id(), libc::SIGTERM);
    let st = child.wait().unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(
        st.code(),
        Some(128 + libc::SIGTERM),
        "exit code after SIGTERM"
    );
    assert!(
        out.contains("#1 -> #0, Min"),
        "partial results printed: {out}"
    );
    assert!(out.contains("# interrupted (SIGTERM)"), "{out}");
    assert_nothing_left(&s, &tmp);
}

#[test]
fn sigkill_of_rtbench_during_loaded_run_leaves_nothing_behind() {
    let tmp = TempDir::new("kill");
    // A forked pipe responder plus three load workers are children of rtbench here.
    let mut child = spawn_with_tmp(
        &[
            "pipe",
            "--fork",
            "-a",
            "0",
            "-i",
            "200",
            "-D",
            "60",
            "-q",
            "--load",
            "cpu:1,vm:1:8M,io:1",
        ],
        &tmp,
    );
    let s = started(child.id(), &tmp, 3);
    assert!(
        s.pids.len() >= 4,
        "load workers and the pipe responder: {:?}",
        s.pids
    );
    signal(child.id(), libc::SIGKILL);
    child.wait().unwrap();
    assert_nothing_left(&s, &tmp);
}

#[test]
fn sigkill_during_loaded_cyclic_run_leaves_nothing_behind() {
    let tmp = TempDir::new("killcyc");
    let mut child = spawn_with_tmp(
        &[
            "cyclic",
            "-t",
            "1",
            "-D",
            "60",
            "-q",
            "--load",
            "io:2,cpu:1",
        ],
        &tmp,
    );
    let s = started(child.id(), &tmp, 3);
    signal(child.id(), libc::SIGKILL);
    child.wait().unwrap();
    assert_nothing_left(&s, &tmp);
}

#[test]
fn load_alone_runs_for_its_duration_then_stops() {
    let tmp = TempDir::new("alone");
    let t0 = std::time::Instant::now();
    let tag = format!("sleep 27{}{}.5", std::process::id(), unique());
    let mut child = spawn_with_tmp(
        &[
            "load",
            "--load",
            "cpu:1,io:1",
            "--load-cmd",
            &tag,
            "-D",
            "2",
        ],
        &tmp,
    );
    let s = started(child.id(), &tmp, 3);
    // The guard forks and execs the command: wait for the exec, not just the fork.
    let sleep = wait_for(BOUND, || {
        all_procs()
            .into_iter()
            .find(|p| p.cmdline.starts_with(&tag))
    })
    .expect("the external command runs");
    let guard = proc_info(sleep.ppid).expect("the command's guard");
    assert!(guard.cmdline.contains("load-worker guard"), "{guard:?}");
    assert_eq!(
        guard.pgid, s.pgid,
        "the guard is in the load's process group"
    );
    assert_eq!(
        sleep.pgid, sleep.pid,
        "the command leads a process group of its own"
    );
    let mut s = s;
    s.pids.push(sleep.pid);
    let st = wait_until("the load run to end after its -D", || {
        child.try_wait().unwrap()
    });
    assert_eq!(st.code(), Some(0));
    assert!(t0.elapsed() >= Duration::from_secs(2), "ran for -D 2");
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(
        err.contains("# load on CPUs") && err.contains(&format!("{tag} (pid")),
        "{err}"
    );
    assert_nothing_left(&s, &tmp);
}

#[test]
fn bad_or_dying_load_is_one_line_exit_2_or_3_and_starts_nothing() {
    let tmp = TempDir::new("bad");
    // Bad input is exit 2 before anything starts; a load that starts and exits at once
    // is the system's answer, exit 3. Either way nothing runs.
    let cases: [(&[&str], &str, i32); 6] = [
        (
            &["pmq", "-l", "5", "--load", "vm:1:10Q"],
            "unknown size suffix 'Q'",
            2,
        ),
        (
            &["pmq", "-l", "5", "--load", "disk:2"],
            "unknown load kind 'disk'",
            2,
        ),
        (
            &[
                "cyclic",
                "-l",
                "5",
                "--load-cmd",
                "no-such-load-program --x",
            ],
            "program 'no-such-load-program' not found",
            2,
        ),
        (
            &[
                "pipe",
                "-l",
                "5",
                "--load",
                "io:1",
                "--load-cmd",
                "sh -c 'exit 3'",
            ],
            "exited at once with status 3",
            3,
        ),
        (
            &["load", "--load", "cpu:1", "--load-cmd", "true", "-D", "5"],
            "--load-cmd 'true': exited at once with status 0",
            3,
        ),
        (
            &["pmq", "-l", "5", "--load", "cpu:1", "--load-cpus", "99"],
            "--load-cpus 99:",
            2,
        ),
    ];
    for (args, want, code) in cases {
        let out = rtbench().args(args).env("TMPDIR", &tmp).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert_eq!(lines.len(), 1, "{args:?}: one error line: {err}");
        assert!(
            lines[0].starts_with("rtbench: ") && lines[0].contains(want),
            "{args:?}: {err}"
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).is_empty(),
            "{args:?}: nothing measured"
        );
        let dir = tmp.to_string_lossy().into_owned();
        assert!(
            all_procs()
                .iter()
                .all(|p| !(p.cmdline.contains("load-worker") && p.cmdline.contains(&dir))),
            "{args:?}: a load worker survived"
        );
        assert!(tmp.entries().is_empty());
    }
}

/// A built-in worker that cannot run is named by the `--load` item as
/// the user wrote it (`vm:1:512M`), not by rtbench's reading of it (`vm:536870912`).
/// The address-space limit makes the vm worker's mmap fail at once: exit 3, the
/// worker's own error with the errno mmap returned (ENOMEM) and the limit that refused
/// it.
#[test]
fn a_worker_that_cannot_run_is_named_as_written() {
    let tmp = TempDir::new("as-written");
    for spec in ["vm:1:512M", "cpu:1, vm:1:512M"] {
        let out = std::process::Command::new("prlimit")
            .arg("--as=400000000")
            .arg(crate::common::exe())
            .args(["cyclic", "-p", "90", "-l", "200", "-q", "--load", spec])
            .env("TMPDIR", &tmp)
            .output()
            .expect("prlimit (util-linux) runs rtbench");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{spec}: {err}");
        let line = err
            .lines()
            .find(|l| l.starts_with("rtbench: --load "))
            .unwrap_or_else(|| panic!("{spec}: no --load line: {err}"));
        assert!(
            line.starts_with("rtbench: --load 'vm:1:512M': exited at once with status 3"),
            "{spec}: {line}"
        );
        // The worker's mapping is its own business: its size in bytes is in its words.
        assert!(
            line.contains("vm load worker: mmap of 536870912 bytes (512 MiB): Cannot allocate memory (os error 12); RLIMIT_AS is 400000000 bytes"),
            "{spec}: {line}"
        );
        assert!(!line.contains("RLIMIT_MEMLOCK"), "{spec}: {line}");
        assert!(!line.contains("vm:536870912"), "{spec}: {line}");
    }
}

/// Live processes whose command line starts with `prefix`.
fn procs_named(prefix: &str) -> Vec<Proc> {
    all_procs()
        .into_iter()
        .filter(|p| p.state != 'Z' && p.cmdline.starts_with(prefix))
        .collect()
}

#[test]
fn grandchildren_of_a_load_command_die_with_a_sigkilled_rtbench() {
    // The shell forks two sleeps; only the guard's subreaper + own group catch them.
    let tag = format!("29{}{}.5", std::process::id(), unique());
    let cmd = format!("sh -c 'sleep {tag} & sleep {tag} & wait'");
    let mut child = rtbench()
        .args(["cyclic", "-t", "1", "-D", "60", "-q", "--load-cmd", &cmd])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let sleeps = wait_for(BOUND, || {
        let s = procs_named(&format!("sleep {tag}"));
        (s.len() == 2).then_some(s)
    })
    .expect("the command's two sleeps start");
    let pids: Vec<i32> = sleeps.iter().map(|p| p.pid).collect();
    signal(child.id(), libc::SIGKILL);
    child.wait().unwrap();
    let gone = wait_for(BOUND, || alive(&pids, None).is_empty().then_some(()));
    assert!(
        gone.is_some(),
        "grandchildren left behind: {:?}",
        alive(&pids, None)
    );
}

#[test]
fn load_command_grandchildren_are_stopped_at_the_end_of_a_run() {
    let tag = format!("28{}{}.5", std::process::id(), unique());
    let cmd = format!("sh -c 'sleep {tag} & sleep {tag} & wait'");
    let out = rtbench()
        .args(["pmq", "-l", "300", "-i", "1000", "-q", "--load-cmd", &cmd])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        procs_named(&format!("sleep {tag}")).is_empty(),
        "sleeps left after the run"
    );
}

#[test]
fn load_processes_take_sigterm() {
    // rtbench blocks SIGTERM for its supervisor; its load must not inherit that, or
    // a stop would always wait out the grace period and need SIGKILL. The command
    // says it took SIGTERM by writing a file from its trap (a SIGKILL runs no trap).
    let tmp = TempDir::new("mask");
    let marks = TempDir::new("mask-marks");
    let took = marks.join("took-sigterm");
    let tag = format!("load-cmd-{}-{}", std::process::id(), unique());
    let cmd = format!(
        "sh -c 'trap \"echo > {}; exit 0\" TERM; sleep 1000 & wait' {tag}",
        took.display()
    );
    let mut child = spawn_with_tmp(
        &["load", "--load", "io:1", "--load-cmd", &cmd, "-D", "60"],
        &tmp,
    );
    let s = started(child.id(), &tmp, 2);
    let command = wait_until("the command's shell", || {
        all_procs().into_iter().find(|p| {
            p.cmdline.starts_with("sh -c trap") && p.cmdline.ends_with(&format!("{tag} "))
        })
    });
    // Its trap is set once its child runs (`sleep 1000 &` comes after `trap`).
    wait_until("the command's sleep", || {
        all_procs()
            .into_iter()
            .find(|p| p.ppid == command.pid && p.cmdline.starts_with("sleep 1000"))
    });
    // The guard blocks SIGTERM on purpose (it takes it with sigtimedwait).
    let mut checked: Vec<i32> = s
        .pids
        .iter()
        .copied()
        .chain([command.pid])
        .filter(|&p| proc_info(p).is_some_and(|i| !i.cmdline.contains("load-worker guard")))
        .collect();
    checked.sort_unstable();
    checked.dedup();
    assert_eq!(checked.len(), 2, "the io worker and the command");
    for pid in &checked {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let blk = status.lines().find(|l| l.starts_with("SigBlk:")).unwrap();
        let mask = u64::from_str_radix(blk.split_whitespace().nth(1).unwrap(), 16).unwrap();
        assert_eq!(
            mask & (1 << (libc::SIGTERM - 1)),
            0,
            "pid {pid} blocks SIGTERM: {blk}"
        );
    }
    signal(child.id(), libc::SIGTERM);
    wait_until("rtbench load to stop", || child.try_wait().unwrap());
    assert!(took.exists(), "the command was not stopped by SIGTERM");
    let mut s = s;
    s.pids.push(command.pid);
    assert_nothing_left(&s, &tmp);
}

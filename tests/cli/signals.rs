//! The signals a harness or an operator sends to a measuring command, and a standard
//! output that fails late: every signal either leaves the run measuring or stops it
//! with its results written (docs/COMPAT.md, "Signals"), and an output that fails
//! costs no other output.

use crate::common::*;
use serde_json::Value;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// rt-tests' snapshot tool (rt-tests 2.x), where it is installed.
const SNAPSHOT_TOOL: &str = "/usr/sbin/get_cyclictest_snapshot";

fn spawn_json(args: &str, json: &std::path::Path) -> Running {
    Running::spawn(
        rtbench()
            .args(args.split_whitespace())
            .arg("--json")
            .arg(json),
    )
}

fn json(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}: the JSON was not written", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn sigusr2_writes_the_snapshot_file_and_the_cyclic_run_carries_on() {
    let dir = TempDir::new("sig-usr2");
    let out = dir.join("r.json");
    let r = spawn_json("cyclic -t 1 -i 1000 -D 60s -q", &out);
    wait_samples(r.pid(), "rtbench-T", 1, 10);
    // Where get_cyclictest_snapshot finds a running cyclictest: created at the start.
    let file = std::path::PathBuf::from(format!("/dev/shm/cyclictest{}", r.pid()));
    assert!(file.exists(), "{} while measuring", file.display());
    r.signal(libc::SIGUSR2);
    wait_until("the snapshot in the file", || {
        std::fs::read_to_string(&file)
            .ok()
            .filter(|t| t.lines().any(|l| l.starts_with("T: 0 ")))
    });
    if std::path::Path::new(SNAPSHOT_TOOL).exists() {
        let pid = r.pid().to_string();
        let listed = Command::new(SNAPSHOT_TOOL).arg("-l").output().unwrap();
        assert!(
            String::from_utf8_lossy(&listed.stdout)
                .lines()
                .any(|l| l.trim() == pid),
            "{listed:?}"
        );
        let shown = Command::new(SNAPSHOT_TOOL)
            .args(["-p", &pid])
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&shown.stdout).contains("T: 0 "),
            "{shown:?}"
        );
    }
    // Still measuring after the snapshot.
    wait_samples(r.pid(), "rtbench-T", 1, 2);
    r.signal(libc::SIGINT);
    let o = r.finish();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stdout(&o).contains("T: 0 "), "{}", stdout(&o));
    assert_eq!(json(&out)["rtbench"]["stop"], "sigint");
    assert!(!file.exists(), "the snapshot file is removed at the end");
}

#[test]
fn sigusr2_is_a_status_for_the_pair_tests() {
    for cmd in ["pipe", "pmq"] {
        let dir = TempDir::new("sig-usr2-pair");
        let out = dir.join("r.json");
        let r = spawn_json(&format!("{cmd} -i 1000 -D 60s -q"), &out);
        wait_samples(r.pid(), "rtbench-S", 1, 10);
        r.signal(libc::SIGUSR2);
        r.wait_stderr(0, "the status", |l| l == "# rtbench current status:");
        wait_samples(r.pid(), "rtbench-S", 1, 2);
        r.signal(libc::SIGTERM);
        let o = r.finish();
        assert_eq!(o.status.code(), Some(143), "{cmd}: {}", stderr(&o));
        assert_eq!(json(&out)["rtbench"]["stop"], "sigterm", "{cmd}");
    }
}

#[test]
fn sighup_stops_the_run_with_its_results_written() {
    for (cmd, prefix) in [("cyclic -t 1", "rtbench-T"), ("pipe", "rtbench-S")] {
        let dir = TempDir::new("sig-hup");
        let out = dir.join("r.json");
        let r = spawn_json(&format!("{cmd} -i 1000 -D 60s -q"), &out);
        wait_samples(r.pid(), prefix, 1, 10);
        r.signal(libc::SIGHUP);
        let o = r.finish();
        assert_eq!(o.status.code(), Some(129), "{cmd}: {}", stderr(&o));
        assert!(!stdout(&o).is_empty(), "{cmd}: the results");
        let v = json(&out);
        assert_eq!(v["rtbench"]["stop"], "sighup", "{cmd}");
        assert_eq!(v["rtbench"]["interrupted"], true, "{cmd}");
        assert_eq!(v["return_code"], 129, "{cmd}");
    }
}

/// `rtbench cyclic` on one thread to `json`, started with `signal` ignored, as `nohup`
/// (SIGHUP) or a shell without job control running `cmd &` (SIGINT) start a program.
fn spawn_ignoring(signal: libc::c_int, json: &std::path::Path) -> Running {
    use std::os::unix::process::CommandExt;
    let mut cmd = rtbench();
    cmd.args([
        "cyclic", "-t", "1", "-i", "1000", "-D", "60s", "-q", "--json",
    ])
    .arg(json);
    // SAFETY: signal(2) between fork and exec, as nohup and the shell do.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(signal, libc::SIG_IGN);
            Ok(())
        });
    }
    Running::spawn(&mut cmd)
}

/// `nohup`: a SIGHUP ignored by whoever started rtbench stays ignored. Before: the
/// blocked SIGHUP was queued all the same (the kernel never discards a blocked signal)
/// and ended the run with 129.
#[test]
fn a_hangup_ignored_by_the_caller_stays_ignored() {
    let dir = TempDir::new("sig-nohup");
    let out = dir.join("r.json");
    let r = spawn_ignoring(libc::SIGHUP, &out);
    wait_samples(r.pid(), "rtbench-T", 1, 10);
    r.signal(libc::SIGHUP);
    // Still measuring after the hangup, then stopped by SIGINT.
    wait_samples(r.pid(), "rtbench-T", 1, 10);
    r.signal(libc::SIGINT);
    let o = r.finish();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert_eq!(json(&out)["rtbench"]["stop"], "sigint");
}

/// `cmd &` in a shell without job control (a harness script) starts rtbench with
/// SIGINT ignored, and the script stops it with `kill -INT $!`: as cyclictest, whose
/// signal(2) handler replaces the inherited SIG_IGN, rtbench stops and writes its
/// results. Before: the ignored SIGINT was not taken and the run went on to its end.
#[test]
fn an_interrupt_ignored_by_the_caller_still_stops_the_run() {
    let dir = TempDir::new("sig-bg-int");
    let out = dir.join("r.json");
    let r = spawn_ignoring(libc::SIGINT, &out);
    wait_samples(r.pid(), "rtbench-T", 1, 10);
    r.signal(libc::SIGINT);
    let o = r.finish();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert_eq!(json(&out)["rtbench"]["stop"], "sigint");
}

#[test]
fn a_stop_and_continue_is_said_without_explain() {
    let r = Running::spawn(rtbench().args(["cyclic", "-t", "1", "-i", "1000", "-D", "60s", "-q"]));
    wait_samples(r.pid(), "rtbench-T", 1, 10);
    stop_for(r.pid(), Duration::ZERO);
    r.wait_stderr(0, "the stop's warning", |l| l.contains("SIGCONT received"));
    r.signal(libc::SIGINT);
    let o = r.finish();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
}

/// timeout(1) and `systemctl stop` send SIGCONT right after SIGTERM: no stop to warn
/// of. Before: the warning came with most such stops.
#[test]
fn the_sigcont_after_a_sigterm_is_not_a_stop() {
    for _ in 0..3 {
        let r =
            Running::spawn(rtbench().args(["cyclic", "-t", "1", "-i", "1000", "-D", "60s", "-q"]));
        wait_samples(r.pid(), "rtbench-T", 1, 10);
        r.signal(libc::SIGTERM);
        r.signal(libc::SIGCONT);
        let o = r.finish();
        assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
        assert!(!stderr(&o).contains("SIGCONT received"), "{}", stderr(&o));
    }
}

/// The write end of a pipe whose read end is already closed.
fn closed_pipe() -> OwnedFd {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors pipe2 returns.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors were just returned by pipe2 and are owned here.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    write
}

/// Runs rtbench with `args` and `--json json`, its standard output `stdout`.
fn run_with_stdout(args: &str, json: &std::path::Path, stdout: Stdio) -> Output {
    let child: Child = rtbench()
        .args(args.split_whitespace())
        .arg("--json")
        .arg(json)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_full_standard_output_is_reported_after_the_json_is_written() {
    for cmd in ["cyclic -t 1", "pipe"] {
        let dir = TempDir::new("sig-full");
        let out = dir.join("r.json");
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = run_with_stdout(&format!("{cmd} -i 1000 -l 50 -q"), &out, full.into());
        assert_eq!(o.status.code(), Some(3), "{cmd}: {}", stderr(&o));
        let err = stderr(&o);
        let failed: Vec<&str> = err.lines().filter(|l| l.starts_with("rtbench: ")).collect();
        assert_eq!(failed.len(), 1, "{cmd}: one line for the one output: {err}");
        assert!(failed[0].starts_with("rtbench: <stdout>: "), "{cmd}: {err}");
        assert_eq!(json(&out)["rtbench"]["stop"], "completed", "{cmd}");
    }
}

#[test]
fn a_closed_standard_output_costs_no_json() {
    // -q: nothing is written to standard output until the end; without it the live
    // lines meet the closed pipe at the first report and the run stops there.
    for args in [
        "cyclic -t 1 -i 1000 -l 50 -q",
        "cyclic -t 1 -i 1000 -D 60s",
        "pipe -i 1000 -l 50 -q",
    ] {
        let dir = TempDir::new("sig-pipe");
        let out = dir.join("r.json");
        let o = run_with_stdout(args, &out, closed_pipe().into());
        assert_eq!(o.status.code(), Some(141), "{args}: {}", stderr(&o));
        assert!(
            !stderr(&o).contains("rtbench: <stdout>"),
            "a reader that left is said by the exit status alone: {}",
            stderr(&o)
        );
        assert!(json(&out)["rtbench"]["stop"].is_string(), "{args}");
    }
}

#[test]
fn a_read_only_standard_output_is_refused_before_measuring() {
    let dir = TempDir::new("sig-rdonly");
    let out = dir.join("r.json");
    let read_only = std::fs::File::open("/dev/null").unwrap();
    let o = run_with_stdout("cyclic -t 1 -i 1000 -l 50 -q", &out, read_only.into());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("rtbench: <stdout>: "),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists(), "nothing measured, nothing written");
}

/// A signal mask or an ignored disposition in /proc/PID/status (`SigBlk`, `SigIgn`).
fn sig_field(pid: i32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let hex = status.lines().find_map(|l| l.strip_prefix(field))?.trim();
    u64::from_str_radix(hex, 16).ok()
}

#[test]
fn load_workers_get_the_default_signal_state_back() {
    // The measuring rtbench blocks its signals and ignores SIGPIPE; its load workers,
    // exec'd children, must not inherit either.
    let tmp = TempDir::new("sig-load");
    let mut child = spawn_with_tmp(
        &[
            "cyclic", "-t", "1", "-i", "1000", "-D", "60s", "-q", "--load", "cpu:1",
        ],
        &tmp,
    );
    let rt = child.id() as i32;
    wait_samples(child.id(), "rtbench-T", 1, 5);
    let worker = wait_until("the cpu load worker", || {
        all_procs()
            .into_iter()
            .find(|p| p.ppid == rt && p.cmdline.contains("load-worker"))
    });
    let pipe_bit = 1u64 << (libc::SIGPIPE - 1);
    assert_eq!(
        sig_field(rt, "SigIgn:").unwrap() & pipe_bit,
        pipe_bit,
        "the measuring rtbench ignores SIGPIPE"
    );
    assert_eq!(sig_field(worker.pid, "SigBlk:"), Some(0), "{worker:?}");
    assert_eq!(
        sig_field(worker.pid, "SigIgn:").unwrap() & pipe_bit,
        0,
        "{worker:?}"
    );
    signal(child.id(), libc::SIGTERM);
    assert_eq!(child.wait().unwrap().code(), Some(143));
}

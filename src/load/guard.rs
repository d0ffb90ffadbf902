//! The guard around an external load command (`rtbench load-worker guard PROG ARGV0
//! ARGS…`, started by [`super::RunningLoad`]).
//!
//! `PR_SET_PDEATHSIG` reaches only direct children, so a command that forks its own
//! workers (a shell pipeline, `make -j`, …) could outlive a SIGKILLed rtbench. The
//! guard closes that gap: it is a child subreaper (`PR_SET_CHILD_SUBREAPER`, so orphans
//! of the command are re-parented to it), runs the command in a process group of its
//! own, and asks for SIGTERM when rtbench dies. On SIGTERM/SIGINT it stops that group
//! (SIGTERM, then SIGKILL), reaps it and exits; when the command ends on its own it
//! kills what the command left behind and exits with the command's status.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Grace between SIGTERM and SIGKILL for the command's group.
const GRACE: Duration = Duration::from_millis(1500);

fn reap_all(cmd_pid: i32, cmd_status: &mut Option<i32>) {
    loop {
        let mut st = 0;
        // SAFETY: waitpid on any child with a valid status pointer.
        let r = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
        if r <= 0 {
            return;
        }
        if r == cmd_pid {
            *cmd_status = Some(st);
        }
    }
}

/// Whether this process has any child left (running or zombie): waitid fails with
/// ECHILD only when there is none.
fn has_children() -> bool {
    // SAFETY: WNOHANG|WNOWAIT only peeks; info is a valid out-pointer.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        ) == 0
    }
}

fn stop_group(pgid: i32, cmd_pid: i32, cmd_status: &mut Option<i32>) {
    // SAFETY: signalling the command's own process group.
    unsafe { libc::killpg(pgid, libc::SIGTERM) };
    let end = Instant::now() + GRACE;
    while Instant::now() < end {
        reap_all(cmd_pid, cmd_status);
        // SAFETY: signal 0 only checks whether the group still has members.
        if unsafe { libc::killpg(pgid, 0) } != 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: as above.
    unsafe { libc::killpg(pgid, libc::SIGKILL) };
    let end = Instant::now() + GRACE;
    while Instant::now() < end && has_children() {
        reap_all(cmd_pid, cmd_status);
        std::thread::sleep(Duration::from_millis(5));
    }
    reap_all(cmd_pid, cmd_status);
}

/// Runs the guard; returns the exit code (the command's, or 128+signal).
pub fn run(prog: &Path, argv0: &str, args: &[String]) -> io::Result<i32> {
    // SAFETY: prctl and sigprocmask on this single-threaded process.
    let set = unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGCHLD] {
            libc::sigaddset(&mut set, s);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    let mut cmd = Command::new(prog);
    cmd.arg0(argv0).args(args).process_group(0);
    // SAFETY: prctl between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            super::run::unblock_all_signals();
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    let pid = child.id() as i32;
    std::mem::forget(child); // reaped below with waitpid
    let mut cmd_status = None;
    let ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 200_000_000,
    };
    loop {
        // SAFETY: set and ts are valid; info may be null.
        let sig = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &ts) };
        if sig == libc::SIGTERM || sig == libc::SIGINT {
            stop_group(pid, pid, &mut cmd_status);
            return Ok(crate::error::exit::SIGNAL_BASE + sig);
        }
        reap_all(pid, &mut cmd_status);
        if let Some(st) = cmd_status {
            stop_group(pid, pid, &mut cmd_status);
            let es = std::process::ExitStatus::from_raw(st);
            return Ok(es
                .code()
                .unwrap_or_else(|| crate::error::exit::SIGNAL_BASE + es.signal().unwrap_or(0)));
        }
    }
}

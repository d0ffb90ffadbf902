//! The responding end of a pair (pmqtest's receiver): raw syscalls only, no allocation,
//! so it may run in a thread or in a child forked from the multi-threaded rtbench.

use super::{READY, STAGE_AFFINITY, STAGE_MLOCK, STAGE_SCHED, STOP};
use crate::error::{Error, Result};
use crate::measure::transport::{Msg, MsgBuf, PipeRead, PipeWrite, Rx, Tx};
use crate::sys::clock::{ns_to_ts, Clock};
use crate::sys::sched::{self, Policy};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// How long the main thread waits for a responder (thread or process) to end after
/// STOP: [`WAIT_POLLS`] × [`WAIT_POLL`] (one second).
pub(super) const WAIT_POLL: Duration = Duration::from_millis(10);
/// See [`WAIT_POLL`].
pub(super) const WAIT_POLLS: u32 = 100;

/// How a responder sets itself up: raw syscalls only (no allocation; safe in a child
/// forked from a multi-threaded process). Returns `(stage, errno)` on failure.
pub(super) fn responder_setup(
    cpu: Option<usize>,
    policy: Policy,
    priority: i32,
    mlock: bool,
) -> std::result::Result<(), (i64, i32)> {
    let errno = || io::Error::last_os_error().raw_os_error().unwrap_or(0);
    // Its READY and its answers go to the sender's pipe, which may be closed already.
    crate::sys::signals::block_sigpipe_in_this_thread();
    // SAFETY: plain syscalls on the calling thread with valid, stack-held arguments.
    unsafe {
        if let Some(c) = cpu {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(c, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err((STAGE_AFFINITY, errno()));
            }
        }
        if mlock && libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) != 0 {
            return Err((STAGE_MLOCK, errno()));
        }
        let p = libc::sched_param {
            sched_priority: priority,
        };
        if libc::sched_setscheduler(0, policy.raw(), &p) != 0 {
            return Err((STAGE_SCHED, errno()));
        }
    }
    sched::prefault_stack(crate::measure::PREFAULT_STACK_BYTES);
    Ok(())
}

#[inline(always)]
pub(super) fn sleep_rel_ns(ns: i64) {
    let ts = ns_to_ts(ns);
    // SAFETY: ts is valid; relative sleep; an interruption just ends it early.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut()) };
}

#[inline(always)]
pub(super) fn current_cpu() -> i64 {
    // SAFETY: sched_getcpu has no arguments.
    unsafe { libc::sched_getcpu() as i64 }
}

/// What a responder needs; no heap data.
#[derive(Clone, Copy)]
pub(super) struct ResponderCfg {
    pub(super) cpu: Option<usize>,
    pub(super) policy: Policy,
    pub(super) priority: i32,
    pub(super) mlock: bool,
    pub(super) sleep_ns: i64,
    pub(super) timeout_ns: Option<i64>,
    /// A responder thread (not a forked child, which must stay async-signal-safe):
    /// gives back its unused stack after setup, as the measuring threads do
    /// ([`sched::trim_stack`]).
    pub(super) trim_stack: bool,
}

/// The responder: report setup, then answer every message until STOP (or an error).
/// Allocates nothing: `buf` (the message size) is allocated by the caller, before a
/// fork.
pub(super) fn respond<T: Tx, R: Rx>(
    tx: &T,
    rx: &R,
    cfg: ResponderCfg,
    buf: &mut MsgBuf,
) -> io::Result<()> {
    let tid = sched::gettid() as i64;
    let ready = match responder_setup(cfg.cpu, cfg.policy, cfg.priority, cfg.mlock) {
        Ok(()) => {
            if cfg.trim_stack {
                let _ = sched::trim_stack(crate::measure::PREFAULT_STACK_BYTES);
            }
            [READY, 0, 0, tid]
        }
        Err((stage, errno)) => [READY, stage, errno as i64, tid],
    };
    tx.send(&ready, buf)?;
    let unpinned = cfg.cpu.is_none();
    let mut m: Msg = [0; 4];
    let mut timeouts = 0i64;
    loop {
        if !rx.recv(&mut m, buf, cfg.timeout_ns)? {
            timeouts += 1;
            continue;
        }
        let t1 = Clock::Monotonic.now_ns();
        if m[0] == STOP {
            return Ok(());
        }
        if cfg.sleep_ns > 0 {
            sleep_rel_ns(cfg.sleep_ns);
        }
        let cpu = if unpinned {
            current_cpu()
        } else {
            cfg.cpu.unwrap_or(0) as i64
        };
        let t2 = Clock::Monotonic.now_ns();
        tx.send(&[t1, t2, timeouts, cpu], buf)?;
    }
}

/// Forks the responder of a pipe pair. The child dies with its parent
/// (`PR_SET_PDEATHSIG`), runs [`respond`] with `buf` (allocated here, before the fork)
/// and `_exit`s; it never returns here.
pub(super) fn fork_responder(
    rx: PipeRead,
    tx: PipeWrite,
    cfg: ResponderCfg,
    mut buf: MsgBuf,
    all_fds: &[RawFd],
) -> Result<libc::pid_t> {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the child only makes syscalls and runs `respond`, which allocates
    // nothing, then leaves with _exit (no destructors, no atexit handlers).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = io::Error::last_os_error();
        let cause = e.raw_os_error().and_then(|n| {
            crate::sys::refusal::memory::new_task(&crate::sys::SysRoot::host(), n, 0)
        });
        return Err(Error::refused("fork of the pipe responder", e, cause));
    }
    if pid == 0 {
        // SAFETY: see above.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            // Keep only this pair's two ends, so the parent sees EOF if this child dies.
            let keep = [rx.0.as_raw_fd(), tx.0.as_raw_fd()];
            for &fd in all_fds {
                if !keep.contains(&fd) {
                    libc::close(fd);
                }
            }
            let code = match respond(&tx, &rx, cfg, &mut buf) {
                Ok(()) => 0,
                Err(_) => 1,
            };
            libc::_exit(code);
        }
    }
    drop((rx, tx));
    Ok(pid)
}

/// Waits for forked responders (they exit after STOP or EOF); kills any that do not
/// within a second (at once with `kill`).
pub(super) fn reap(children: &[libc::pid_t], kill: bool) {
    for &pid in children {
        if kill {
            // SAFETY: pid is our unreaped child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let mut status = 0;
        let mut done = false;
        for _ in 0..WAIT_POLLS {
            // SAFETY: pid is our child; status is a valid out-pointer.
            if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } != 0 {
                done = true;
                break;
            }
            std::thread::sleep(WAIT_POLL);
        }
        if !done {
            // SAFETY: pid is our unreaped child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
        }
    }
}

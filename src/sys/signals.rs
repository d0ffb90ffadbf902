//! The signals rtbench takes synchronously on its main thread: SIGINT, SIGTERM and
//! SIGHUP (a lost terminal or ssh session) end a run (or a load) after its results are
//! written, SIGUSR1 and SIGUSR2 (rt-tests' snapshot signal, sent by
//! `get_cyclictest_snapshot`) ask for a status, SIGCONT says the process had been
//! stopped (its samples of that time are not the system's latency; blocking SIGCONT
//! does not keep it from continuing the process, signal(7)). They are blocked in every thread
//! (a thread inherits the signal mask of the thread that spawns it) and
//! taken with `sigtimedwait(2)`, so no asynchronous handler runs and no measuring
//! thread is interrupted by them. A SIGHUP rtbench inherited as ignored (`nohup`) is
//! left out of the set: the kernel queues a blocked signal even when it is ignored
//! (kernel/signal.c, `sig_ignored`: "Blocked signals are never ignored"), so blocking
//! it would let `sigtimedwait` take what the caller asked to ignore. The others are
//! taken whatever rtbench inherited, as cyclictest and pmqtest install their handlers
//! for SIGINT, SIGTERM and SIGUSR1/2 with signal(2), which replaces an inherited
//! `SIG_IGN`: a shell without job control starts `cmd &` with SIGINT and SIGQUIT
//! ignored (POSIX, Shell Command Language 2.11), and a script's `kill -INT $!` must
//! still stop the run. docs/COMPAT.md has the table of what each signal does to each
//! command.

use std::time::Duration;

/// The signals the main thread takes synchronously: [`Signals::block`] blocks them and
/// [`Signals::wait`] takes them.
pub const TAKEN: [i32; 6] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGCONT,
];

/// The signals the main thread takes synchronously.
pub struct Signals {
    set: libc::sigset_t,
}

impl Signals {
    /// Blocks the signals of [`TAKEN`] in the calling thread (and so in every thread
    /// it spawns afterwards), except a SIGHUP whose disposition is `SIG_IGN` (inherited:
    /// `nohup`), which stays ignored. Call before spawning measuring threads.
    pub fn block() -> Signals {
        // SAFETY: set is initialised by sigemptyset before use; sigaction with a null
        // new action only reads the disposition; pthread_sigmask only changes the
        // calling thread's mask.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for s in TAKEN {
                let mut old: libc::sigaction = std::mem::zeroed();
                let ignored = s == libc::SIGHUP
                    && libc::sigaction(s, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction == libc::SIG_IGN;
                if !ignored {
                    libc::sigaddset(&mut set, s);
                }
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            Signals { set }
        }
    }

    /// Waits up to `timeout` for one of the blocked signals (`sigtimedwait(2)`).
    pub fn wait(&self, timeout: Duration) -> Option<i32> {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as _,
        };
        // SAFETY: set and ts are valid; info may be null.
        let sig = unsafe { libc::sigtimedwait(&self.set, std::ptr::null_mut(), &ts) };
        (sig > 0).then_some(sig)
    }
}

/// Whether process `pid` exists (`kill(pid, 0)`, kill(2): `ESRCH` means gone; any
/// other answer, `EPERM` included, means it is there).
pub fn pid_alive(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks whether the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Ignores SIGPIPE in the whole process, so that a write to standard output whose reader
/// is gone fails with EPIPE instead of killing rtbench before it has written its other
/// outputs (the `--json` file, the store, the monitor's state; pipe(7)). For the commands
/// that measure: [`crate::report::output::Written`] reports such a standard output
/// (exit 141). Child processes get the default back before `exec`
/// ([`crate::load`]'s `unblock_all_signals`): an ignored disposition survives execve(2).
pub fn ignore_sigpipe() {
    // SAFETY: changing a signal disposition; no handler is installed.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}

/// Blocks SIGPIPE in the calling thread only, so that a write to a pipe whose reader is
/// gone fails with EPIPE instead of killing the process (pipe(7): SIGPIPE is sent to the
/// writing thread; blocked, it stays pending there and `write` returns EPIPE). For the
/// pipe ping-pong ends: when one end of a pair fails to start (a refused SCHED_FIFO) and
/// its pipe ends are closed, the other end's next write must be an error, not SIGPIPE
/// (rtbench's `main` restores SIGPIPE's default action for `rtbench cyclic | head`).
/// A plain syscall: safe in a child forked from a multi-threaded process.
pub fn block_sigpipe_in_this_thread() {
    // SAFETY: set is initialised by sigemptyset before use; pthread_sigmask only changes
    // the calling thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

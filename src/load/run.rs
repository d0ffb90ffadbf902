//! Starting, watching and stopping the load processes.

use super::LoadSpec;
use crate::error::{Error, Result};
use crate::sys::{refusal, SysRoot};
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long a load process must stay up after start to count as started.
pub const SETTLE: Duration = Duration::from_millis(200);
/// How long stopped load processes get to exit after SIGTERM before SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_secs(2);

/// The running load: children of rtbench in one process group. Dropping it stops
/// and reaps them (also while a panic unwinds).
#[derive(Debug)]
pub struct RunningLoad {
    procs: Vec<(String, Child)>,
    pgid: Option<i32>,
    stopped: bool,
}

/// Gives a child the signal state of a fresh process: empties the calling thread's
/// signal mask and sets SIGPIPE back to its default action. rtbench blocks the
/// supervisor's signals ([`crate::sys::signals::TAKEN`]) and `fork` passes the mask on:
/// a load process must die on SIGTERM (and on SIGHUP, as any program would); a
/// measuring rtbench ignores SIGPIPE ([`crate::sys::signals::ignore_sigpipe`]) and an
/// ignored disposition survives execve(2), so `stress-ng | …` in a load command would
/// otherwise not die when its reader goes. A disposition rtbench inherited as ignored
/// (`nohup`) stays ignored, as for any child. Async-signal-safe; for `pre_exec`.
pub(crate) fn unblock_all_signals() {
    // SAFETY: set is initialised by sigemptyset; only the calling thread's mask and the
    // (about to be replaced) process's SIGPIPE disposition change.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// The last line a built-in worker that has exited wrote on standard error (its
/// one-line error), without the `rtbench: ` prefix; empty for an external command,
/// whose standard error is the user's.
fn last_words(child: &mut Child) -> String {
    use std::io::Read;
    let mut text = String::new();
    if let Some(mut e) = child.stderr.take() {
        // The worker has exited: the pipe's only writer is gone, so this ends.
        let _ = e.read_to_string(&mut text);
    }
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.strip_prefix("rtbench: ").unwrap_or(l).to_string())
        .unwrap_or_default()
}

fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("status {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => status.to_string(),
    }
}

impl RunningLoad {
    /// Starts every process of `spec`: built-in workers as `exe load-worker …`, then the
    /// external command. Each is pinned to `spec.cpus`, joins the load's process group
    /// and gets `PR_SET_PDEATHSIG(SIGKILL)`. The io workers write into `io_dir`.
    ///
    /// Waits [`SETTLE`]; a process that has exited by then is an [`Error::Ended`] naming
    /// it, its exit status and (a built-in worker) its error line, and everything
    /// started is stopped again. A process that cannot be started at all is an
    /// [`Error::Refused`] with the errno of fork/exec and its cause (exit 3 both: the
    /// command line was fine, the system said no).
    pub fn start(spec: &LoadSpec, exe: &Path, io_dir: &Path) -> Result<RunningLoad> {
        let mut load = RunningLoad {
            procs: Vec::new(),
            pgid: None,
            stopped: false,
        };
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: an all-zero cpu_set_t is a valid empty set.
        let mut mask: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for c in spec.cpus.iter().filter(|&c| c < libc::CPU_SETSIZE as usize) {
            // SAFETY: CPU_SET writes in bounds for CPUs below CPU_SETSIZE (filtered).
            unsafe { libc::CPU_SET(c, &mut mask) };
        }
        let mut jobs: Vec<(String, Command)> = spec
            .workers
            .iter()
            .zip(&spec.labels)
            .map(|(w, label)| {
                let mut c = Command::new(exe);
                c.arg("load-worker").args(w.args());
                if *w == super::Worker::Io {
                    c.arg(io_dir);
                }
                c.stdout(Stdio::null());
                // Its one-line error, if it fails, becomes part of rtbench's.
                c.stderr(Stdio::piped());
                (label.clone(), c)
            })
            .collect();
        if let (Some(argv), Some(path)) = (&spec.cmd, &spec.cmd_path) {
            let mut c = Command::new(exe);
            c.args(["load-worker", "guard"]).arg(path).args(argv);
            // The command's standard output goes to standard error: rtbench's standard
            // output stays cyclictest/pmqtest-compatible.
            if let Ok(fd) = std::io::stderr().as_fd().try_clone_to_owned() {
                c.stdout(Stdio::from(fd));
            }
            jobs.push((argv.join(" "), c));
        }
        for (label, mut c) in jobs {
            c.stdin(Stdio::null());
            c.process_group(load.pgid.unwrap_or(0));
            // SAFETY: the closure runs between fork and exec and only makes syscalls.
            unsafe {
                c.pre_exec(move || {
                    unblock_all_signals();
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                    if libc::getppid() != parent {
                        return Err(std::io::Error::other("rtbench exited"));
                    }
                    if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mask)
                        != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            match c.spawn() {
                Ok(child) => {
                    load.pgid.get_or_insert(child.id() as i32);
                    load.procs.push((label, child));
                }
                Err(e) => {
                    load.stop();
                    // fork/exec or the pinning before exec refused: the errno it returned.
                    let cause = e
                        .raw_os_error()
                        .and_then(|n| refusal::memory::new_task(&SysRoot::host(), n, 0));
                    return Err(Error::refused(format!("starting load '{label}'"), e, cause));
                }
            }
        }
        let deadline = Instant::now() + SETTLE;
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            for (label, child) in &mut load.procs {
                if let Ok(Some(st)) = child.try_wait() {
                    let label = label.clone();
                    let said = last_words(child);
                    load.stop();
                    let flag = if spec.cmd.as_ref().is_some_and(|a| a.join(" ") == label) {
                        "--load-cmd"
                    } else {
                        "--load"
                    };
                    return Err(Error::Ended {
                        what: format!("{flag} '{label}'"),
                        status: describe(st),
                        said,
                    });
                }
            }
        }
        Ok(load)
    }

    /// Process ids of the load processes (direct children).
    pub fn pids(&self) -> Vec<u32> {
        self.procs.iter().map(|(_, c)| c.id()).collect()
    }

    /// The process group of the load, if anything was started.
    pub fn pgid(&self) -> Option<i32> {
        self.pgid
    }

    /// One line describing what runs: `cpu pid 12, io pid 13, …`.
    pub fn describe(&self) -> String {
        self.procs
            .iter()
            .map(|(l, c)| format!("{l} (pid {})", c.id()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Stops the load: SIGTERM to the process group, SIGKILL after [`TERM_GRACE`], reaps
    /// every child, then SIGKILLs the group once more for any grandchild an external
    /// command left in it. Returns a line for each process that had exited on its own
    /// before the stop (a load that died during the measurement). Idempotent.
    pub fn stop(&mut self) -> Vec<String> {
        if self.stopped {
            return Vec::new();
        }
        self.stopped = true;
        let mut early = Vec::new();
        for (label, c) in &mut self.procs {
            if let Ok(Some(st)) = c.try_wait() {
                let said = last_words(c);
                early.push(format!(
                    "# load '{label}' (pid {}) ended during the run with {}{}",
                    c.id(),
                    describe(st),
                    if said.is_empty() {
                        String::new()
                    } else {
                        format!(": {said}")
                    }
                ));
            }
        }
        let Some(pgid) = self.pgid else {
            return early;
        };
        // SAFETY: signalling our own load process group (the guard of an external
        // command is in it; the command itself has a group of its own).
        unsafe { libc::killpg(pgid, libc::SIGTERM) };
        let deadline = Instant::now() + TERM_GRACE;
        loop {
            let all = self
                .procs
                .iter_mut()
                .all(|(_, c)| matches!(c.try_wait(), Ok(Some(_))));
            if all || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: as above.
        unsafe { libc::killpg(pgid, libc::SIGKILL) };
        for (_, c) in &mut self.procs {
            let _ = c.kill();
            let _ = c.wait();
        }
        early
    }
}

impl Drop for RunningLoad {
    fn drop(&mut self) {
        self.stop();
    }
}

//! Processes and threads as /proc shows them, and waiting for a state instead of for a
//! time: a test waits until what it needs is true, with a bound that only turns a hang
//! into a failure.

use std::time::{Duration, Instant};

/// How long a wait for a state may take before the test fails: long enough for a
/// loaded CI machine, only there so that a broken rtbench fails instead of hanging.
pub const BOUND: Duration = Duration::from_secs(60);

/// One process as /proc/PID/stat shows it.
#[derive(Debug, Clone)]
pub struct Proc {
    pub pid: i32,
    pub state: char,
    pub ppid: i32,
    pub pgid: i32,
    pub cmdline: String,
}

pub fn proc_info(pid: i32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // comm may contain spaces: fields start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default();
    Some(Proc {
        pid,
        state: f[0].chars().next()?,
        ppid: f[1].parse().ok()?,
        pgid: f[2].parse().ok()?,
        cmdline,
    })
}

/// Every process on the machine.
pub fn all_procs() -> Vec<Proc> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(proc_info)
        .collect()
}

/// Live (not zombie) processes among `pids` or in process group `pgid`.
pub fn alive(pids: &[i32], pgid: Option<i32>) -> Vec<Proc> {
    all_procs()
        .into_iter()
        .filter(|p| p.state != 'Z' && p.state != 'X')
        .filter(|p| pids.contains(&p.pid) || Some(p.pgid) == pgid)
        .collect()
}

/// Polls `f` every 20 ms until it returns Some or `timeout` passes.
pub fn wait_for<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls `f` until it returns Some; after [`BOUND`] the test fails saying `what` it
/// waited for.
pub fn wait_until<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
    wait_for(BOUND, f).unwrap_or_else(|| panic!("waited {BOUND:?} for {what}"))
}

pub fn signal(pid: u32, sig: i32) {
    // SAFETY: sending a signal to a child we spawned.
    unsafe { libc::kill(pid as i32, sig) };
}

/// One thread of a process.
#[derive(Debug, Clone)]
pub struct Task {
    pub pid: u32,
    pub tid: i32,
    /// Its name (`/proc/PID/task/TID/comm`): rtbench names its measuring threads
    /// `rtbench-T0` (cyclic), `rtbench-S0`/`rtbench-R0` (pair sender/responder),
    /// `rtbench-M0` (monitor) — src/measure/harness.rs and src/measure/pair/mod.rs.
    pub comm: String,
}

impl Task {
    fn file(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(format!("/proc/{}/task/{}/{name}", self.pid, self.tid)).ok()
    }

    /// The system call the thread is blocked in (`/proc/PID/task/TID/syscall`, first
    /// field), or None while it runs (or has ended).
    pub fn blocked_in(&self) -> Option<i64> {
        self.file("syscall")?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    }

    /// How often the thread has gone to sleep of its own accord
    /// (`voluntary_ctxt_switches`): a measuring loop does once per sample.
    pub fn voluntary_switches(&self) -> Option<u64> {
        self.file("status")?
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))?
            .trim()
            .parse()
            .ok()
    }
}

/// The threads of `pid`.
pub fn tasks(pid: u32) -> Vec<Task> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let tid: i32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let comm = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).ok()?;
        Some(Task {
            pid,
            tid,
            comm: comm.trim_end().to_string(),
        })
    })
    .collect()
}

/// The system calls a measuring loop sleeps or waits in: `clock_nanosleep` (cyclic,
/// monitor, a pair's interval), `mq_timedreceive` (pmq), `read` (pipe). The barrier
/// before the first sample is a `futex`, which is not among them. (`c_long`: 32 bits on
/// armv7, where the tests are built too.)
#[allow(clippy::unnecessary_cast)]
const LOOP_WAITS: [i64; 3] = [
    libc::SYS_clock_nanosleep as i64,
    libc::SYS_mq_timedreceive as i64,
    libc::SYS_read as i64,
];

/// Waits until `pid` has the `n` measuring threads `{prefix}0`…`{prefix}{n-1}`
/// (`rtbench-T` for cyclic) and each of them waits in its measuring loop (a system
/// call of [`LOOP_WAITS`]). From the first of them on, SIGINT, SIGTERM and SIGUSR1 are
/// blocked and taken by the run's supervisor: the harness blocks them before it spawns
/// any measuring thread (src/measure/harness.rs), so a signal sent now is the run's
/// stop or status, never the default action.
pub fn wait_measuring(pid: u32, prefix: &str, n: usize) -> Vec<Task> {
    wait_until(
        &format!("{n} threads {prefix}N of pid {pid} in their measuring loop"),
        || {
            let mut found: Vec<Task> = (0..n)
                .filter_map(|i| {
                    let name = format!("{prefix}{i}");
                    tasks(pid).into_iter().find(|t| t.comm == name)
                })
                .collect();
            found.retain(|t| t.blocked_in().is_some_and(|s| LOOP_WAITS.contains(&s)));
            (found.len() == n).then_some(found)
        },
    )
}

/// [`wait_measuring`], then waits until each of the threads has gone to sleep
/// `wakeups` more times in its loop, each time after finishing the wait before: a
/// cyclic or monitor thread sleeps once per sample, so it has taken `wakeups` samples;
/// a pair's sender waits once per round trip (pmq) or twice (pipe also sleeps its
/// interval), so it has made at least `wakeups / 2`.
pub fn wait_samples(pid: u32, prefix: &str, n: usize, wakeups: u64) -> Vec<Task> {
    let threads = wait_measuring(pid, prefix, n);
    let base: Vec<u64> = threads
        .iter()
        .map(|t| t.voluntary_switches().unwrap_or(0))
        .collect();
    wait_until(
        &format!("{wakeups} samples of each of {prefix}0..{n} (pid {pid})"),
        || {
            threads
                .iter()
                .zip(&base)
                .all(|(t, b)| t.voluntary_switches().is_some_and(|s| s >= b + wakeups))
                .then_some(())
        },
    );
    threads
}

/// Waits until process `pid` is stopped (state `T`, after SIGSTOP).
pub fn wait_stopped(pid: u32) {
    wait_until(&format!("pid {pid} stopped"), || {
        proc_info(pid as i32).filter(|p| p.state == 'T').map(|_| ())
    });
}

/// Stops process `pid` with SIGSTOP, waits until /proc shows it stopped
/// ([`wait_stopped`]: state `T`, within [`BOUND`]), leaves it stopped for `held`, then
/// continues it with SIGCONT. Its threads see `held` (and the time to notice the stop)
/// as one late wakeup: a stop from outside, not the system's latency.
pub fn stop_for(pid: u32, held: Duration) {
    signal(pid, libc::SIGSTOP);
    wait_stopped(pid);
    std::thread::sleep(held);
    signal(pid, libc::SIGCONT);
}

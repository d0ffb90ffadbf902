//! Scheduling policy and priority, CPU affinity, memory locking: all for the calling
//! thread, with the raw syscalls named so a reader knows what the kernel sees.

use super::{refusal, SysRoot};
use crate::cpuset::CpuSet;
use crate::error::{Cause, Error, Result};
use std::io;

/// A scheduling policy, as named by cyclictest's `--policy` (sched(7)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// SCHED_OTHER (CFS/EEVDF), priority 0.
    Other,
    /// SCHED_BATCH, priority 0.
    Batch,
    /// SCHED_IDLE, priority 0.
    Idle,
    /// SCHED_FIFO, priority 1..99.
    Fifo,
    /// SCHED_RR, priority 1..99.
    Rr,
}

impl Policy {
    /// Parses `other`, `normal` (= other), `batch`, `idle`, `fifo`, `rr`.
    pub fn parse(s: &str) -> Option<Policy> {
        Some(match s.to_ascii_lowercase().as_str() {
            "other" | "normal" => Policy::Other,
            "batch" => Policy::Batch,
            "idle" => Policy::Idle,
            "fifo" => Policy::Fifo,
            "rr" => Policy::Rr,
            _ => return None,
        })
    }

    /// The name cyclictest prints (`policy: fifo: loadavg: …`).
    pub fn name(self) -> &'static str {
        match self {
            Policy::Other => "other",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
        }
    }

    /// Whether this is a real-time policy (needs priority 1..99).
    pub fn is_realtime(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }

    pub(crate) fn raw(self) -> libc::c_int {
        match self {
            Policy::Other => libc::SCHED_OTHER,
            Policy::Batch => libc::SCHED_BATCH,
            Policy::Idle => libc::SCHED_IDLE,
            Policy::Fifo => libc::SCHED_FIFO,
            Policy::Rr => libc::SCHED_RR,
        }
    }
}

/// A task's `/proc/PID/stat` (or `/proc/PID/task/TID/stat`) split as proc(5) numbers
/// its fields: the command (field 2, in parentheses; it may itself hold spaces and
/// parentheses, so it ends at the last `)`) and the fields from 3 (`state`) on.
#[derive(Debug)]
pub struct TaskStat<'a> {
    /// Field 2 without its parentheses.
    pub comm: &'a str,
    rest: Vec<&'a str>,
}

impl<'a> TaskStat<'a> {
    /// `None` when `stat` has no `(comm)`.
    pub fn parse(stat: &'a str) -> Option<TaskStat<'a>> {
        let (open, close) = (stat.find('(')?, stat.rfind(')')?);
        Some(TaskStat {
            comm: stat.get(open + 1..close)?,
            rest: stat[close + 1..].split_whitespace().collect(),
        })
    }

    /// Field `n` (1-based as in proc(5), `n >= 3`) as a number; `None` when absent or
    /// not a number.
    pub fn field<T: std::str::FromStr>(&self, n: usize) -> Option<T> {
        self.rest.get(n.checked_sub(3)?)?.parse().ok()
    }
}

/// The name of a policy number (`/proc/PID/stat` field 41, `sched_getscheduler(2)`;
/// include/uapi/linux/sched.h): `OTHER`, `FIFO`, `RR`, `BATCH`, `IDLE`, `DEADLINE`.
pub fn policy_name(policy: i64) -> Option<&'static str> {
    Some(match policy {
        0 => "OTHER",
        1 => "FIFO",
        2 => "RR",
        3 => "BATCH",
        5 => "IDLE",
        6 => "DEADLINE",
        _ => return None,
    })
}

/// The kernel thread id of the calling thread (`gettid(2)`), as cyclictest prints it.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Sets the calling thread's policy and priority with `sched_setscheduler(0, …)`
/// (on Linux, pid 0 means the calling thread). Priority must be 1..99 for FIFO/RR and
/// 0 otherwise. A refusal is an [`Error::Refused`] — never a silent fallback — with the
/// errno the call returned and, for a real-time policy, its cause (`RLIMIT_RTPRIO`
/// without `CAP_SYS_NICE`, a cgroup without RT runtime, seccomp, a security module:
/// [`refusal::sched`]).
pub fn set_scheduler(policy: Policy, priority: i32) -> Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: param is a valid sched_param for the duration of the call.
    let rc = unsafe { libc::sched_setscheduler(0, policy.raw(), &param) };
    if rc != 0 {
        // Taken before anything else runs: formatting and reading files may set errno.
        let e = io::Error::last_os_error();
        return Err(scheduler_refused(policy, priority, e));
    }
    Ok(())
}

/// The error for `sched_setscheduler(policy, priority)` refused with `e` (also for
/// a pair's responder, which reports the errno of its own thread or process).
pub fn scheduler_refused(policy: Policy, priority: i32, e: io::Error) -> Error {
    let name = format!("SCHED_{}", policy.name().to_uppercase());
    let cause = match e.raw_os_error() {
        Some(errno) if policy.is_realtime() => {
            refusal::sched::setscheduler(&SysRoot::host(), &name, priority, errno)
        }
        _ => None,
    };
    Error::refused(format!("sched_setscheduler({name}, {priority})"), e, cause)
}

/// Pins the calling thread to `cpus` with `sched_setaffinity(0, …)`. EINVAL (no CPU of
/// the set is online and allowed by the thread's cpuset) and EPERM are refusals that
/// name the CPUs the thread may use.
pub fn set_affinity(cpus: &CpuSet) -> Result<()> {
    let mut set = nix::sched::CpuSet::new();
    for c in cpus.iter() {
        set.set(c)
            .map_err(|e| Error::refused(format!("CPU {c} in affinity"), e.into(), None))?;
    }
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).map_err(|e| {
        let e = io::Error::from(e);
        let cause = (e.raw_os_error() == Some(libc::EINVAL)).then(|| affinity_cause(cpus));
        Error::refused(format!("sched_setaffinity({cpus})"), e, cause)
    })
}

/// Why `sched_setaffinity(cpus)` found no usable CPU: the online CPUs and the cpuset
/// the thread is confined to (`Cpus_allowed_list` is the affinity, not the cpuset, so
/// the cpuset file is named when there is one).
fn affinity_cause(cpus: &CpuSet) -> Cause {
    let root = SysRoot::host();
    let online = root
        .read_trim("/sys/devices/system/cpu/online")
        .unwrap_or_else(|_| "unknown".into());
    let cpuset = refusal::cgroup_dir(&root, "cpuset", true).and_then(|d| {
        [
            "cpuset.effective_cpus",
            "cpuset.cpus.effective",
            "cpuset.cpus",
        ]
        .iter()
        .map(|f| format!("{d}/{f}"))
        .find_map(|f| Some(format!("{f} = {}", root.read_trim(&f).ok()?)))
    });
    Cause::new(
        "cpuset",
        format!(
            "CPUs {cpus} are not online ({online}) or not in this thread's cpuset{}: choose CPUs from both",
            cpuset.map(|c| format!(" ({c})")).unwrap_or_default()
        ),
    )
}

/// The calling thread's current CPU affinity (`sched_getaffinity(0, …)`).
pub fn get_affinity() -> Result<CpuSet> {
    let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
        .map_err(|e| Error::refused("sched_getaffinity", e.into(), None))?;
    Ok((0..nix::sched::CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .collect())
}

/// Locks current and future pages of the process (`mlockall(MCL_CURRENT|MCL_FUTURE)`,
/// cyclictest `-m`). A refusal names its cause: `RLIMIT_MEMLOCK` below the mapped size
/// without `CAP_IPC_LOCK`, or the memory state ([`refusal::memory::mlockall`]).
pub fn lock_memory() -> Result<()> {
    use nix::sys::mman::{mlockall, MlockAllFlags};
    mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE).map_err(|e| {
        let e = io::Error::from(e);
        let cause = e
            .raw_os_error()
            .and_then(|n| refusal::memory::mlockall(&SysRoot::host(), n));
        Error::refused("mlockall(MCL_CURRENT|MCL_FUTURE)", e, cause)
    })
}

/// Touches `bytes` of the calling thread's stack so that its pages are resident (and,
/// after `mlockall`, locked) before the first sample: no page fault in the hot loop.
#[inline(never)]
pub fn prefault_stack(bytes: usize) {
    const CHUNK: usize = 4096;
    let mut buf = [0u8; CHUNK];
    std::hint::black_box(&mut buf);
    if bytes > CHUNK {
        prefault_stack(bytes - CHUNK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_names_round_trip() {
        for p in [
            Policy::Other,
            Policy::Batch,
            Policy::Idle,
            Policy::Fifo,
            Policy::Rr,
        ] {
            assert_eq!(Policy::parse(p.name()), Some(p));
        }
        assert_eq!(Policy::parse("normal"), Some(Policy::Other));
        assert_eq!(Policy::parse("deadline"), None);
    }

    #[test]
    fn affinity_round_trip_in_a_thread() {
        std::thread::spawn(|| {
            let cpu0: CpuSet = [0].into_iter().collect();
            set_affinity(&cpu0).unwrap();
            assert_eq!(get_affinity().unwrap(), cpu0);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn fifo_in_a_thread_then_bad_priority_refused() {
        std::thread::spawn(|| {
            if nix::unistd::geteuid().is_root() {
                set_scheduler(Policy::Fifo, 10).unwrap();
                // SAFETY: no arguments but the calling thread (0).
                let p = unsafe { libc::sched_getscheduler(0) };
                assert_eq!(p, libc::SCHED_FIFO);
            }
            let e = set_scheduler(Policy::Fifo, 100).unwrap_err();
            assert!(e.to_string().contains("SCHED_FIFO, 100"), "{e}");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn task_stat_fields_count_after_the_last_parenthesis() {
        let st = "42 (a) b (c)) S 1 42 42 0 -1 4194560 0 0 0 0 7 3";
        let t = TaskStat::parse(st).unwrap();
        assert_eq!(t.comm, "a) b (c)");
        assert_eq!(t.field::<char>(3), Some('S'));
        assert_eq!(t.field::<u64>(14), Some(7));
        assert_eq!(t.field::<u64>(99), None);
        assert_eq!(t.field::<u64>(1), None);
        assert!(TaskStat::parse("garbage").is_none());
        assert_eq!(policy_name(1), Some("FIFO"));
        assert_eq!(policy_name(4), None);
    }
}

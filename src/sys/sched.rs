//! Scheduling policy and priority, CPU affinity, memory locking: all for the calling
//! thread, with the raw syscalls named so a reader knows what the kernel sees.

use crate::cpuset::CpuSet;
use crate::error::{Error, Result};
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

/// The kernel thread id of the calling thread (`gettid(2)`), as cyclictest prints it.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Sets the calling thread's policy and priority with `sched_setscheduler(0, …)`
/// (on Linux, pid 0 means the calling thread). Priority must be 1..99 for FIFO/RR and
/// 0 otherwise. Refusal (EPERM: no CAP_SYS_NICE and RLIMIT_RTPRIO too low) is an
/// [`Error::Refused`] — never a silent fallback.
pub fn set_scheduler(policy: Policy, priority: i32) -> Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: param is a valid sched_param for the duration of the call.
    let rc = unsafe { libc::sched_setscheduler(0, policy.raw(), &param) };
    if rc != 0 {
        return Err(Error::refused(
            format!(
                "sched_setscheduler(SCHED_{}, {priority})",
                policy.name().to_uppercase()
            ),
            io::Error::last_os_error(),
        ));
    }
    Ok(())
}

/// Pins the calling thread to `cpus` with `sched_setaffinity(0, …)`. EINVAL (no online
/// CPU in the set, or isolated by a cpuset cgroup) and EPERM are reported as refusals.
pub fn set_affinity(cpus: &CpuSet) -> Result<()> {
    let mut set = nix::sched::CpuSet::new();
    for c in cpus.iter() {
        set.set(c)
            .map_err(|e| Error::refused(format!("CPU {c} in affinity"), e.into()))?;
    }
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
        .map_err(|e| Error::refused(format!("sched_setaffinity({cpus})"), e.into()))
}

/// The calling thread's current CPU affinity (`sched_getaffinity(0, …)`).
pub fn get_affinity() -> Result<CpuSet> {
    let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
        .map_err(|e| Error::refused("sched_getaffinity", e.into()))?;
    Ok((0..nix::sched::CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .collect())
}

/// Locks current and future pages of the process (`mlockall(MCL_CURRENT|MCL_FUTURE)`,
/// cyclictest `-m`). ENOMEM means RLIMIT_MEMLOCK is too small, EPERM no CAP_IPC_LOCK.
pub fn lock_memory() -> Result<()> {
    use nix::sys::mman::{mlockall, MlockAllFlags};
    mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE)
        .map_err(|e| Error::refused("mlockall(MCL_CURRENT|MCL_FUTURE)", e.into()))
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
                let p = unsafe { libc::sched_getscheduler(0) };
                assert_eq!(p, libc::SCHED_FIFO);
            }
            let e = set_scheduler(Policy::Fifo, 100).unwrap_err();
            assert!(e.to_string().contains("SCHED_FIFO, 100"), "{e}");
        })
        .join()
        .unwrap();
    }
}

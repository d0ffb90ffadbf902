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
///
/// Before locking, glibc's malloc is limited to one arena (`mallopt(M_ARENA_MAX, 1)`,
/// mallopt(3)): otherwise the first allocation of each new thread (a channel block,
/// the standard library's thread-local bookkeeping) makes it a 132 KiB arena heap of
/// its own, up to 8 per CPU, which `MCL_FUTURE` locks whole (cyclictest `-t 256` locks
/// 2 MiB that way). Nothing allocates on a measuring thread's hot path, so sharing the
/// arena's lock costs nothing there. musl has a single heap already.
pub fn lock_memory() -> Result<()> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes a malloc tunable; no memory is touched, and it runs
    // before the measuring threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
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

/// Gives back the calling thread's stack pages more than `keep` bytes below the
/// current frame, and its alternate signal stack, after [`prefault_stack`] has touched
/// what the thread uses: `munlock`
/// (so that `mlockall(MCL_FUTURE)`, which locked the whole mapping when the thread was
/// made, no longer holds them) and `madvise(MADV_DONTNEED)` (so that they are freed).
/// A page touched again later is faulted in, unlocked. Returns the bytes given back.
///
/// Why: glibc's smallest thread stack is `PTHREAD_STACK_MIN` plus the static TLS —
/// 16 KiB on x86_64 and armv7 but 128 KiB on aarch64 (`bits/pthread_stack_min.h`) —
/// and `MCL_FUTURE` locks all of it, for every measuring thread. Sources:
/// pthread_getattr_np(3) for the stack's bounds, mlock(2), madvise(2).
///
/// Errors: the calls' own (`ENOMEM` for a range not mapped); the stack is then left
/// locked (a failed `madvise` after a good `munlock` leaves it unlocked but resident),
/// and the alternate signal stack is not touched.
pub fn trim_stack(keep: usize) -> io::Result<usize> {
    let page = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .map_or(4096, |p| p as usize);
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    let mut base: *mut libc::c_void = std::ptr::null_mut();
    let mut size: libc::size_t = 0;
    // SAFETY: pthread_getattr_np fills the attr object it is given (initialising it);
    // pthread_attr_getstack reads it and writes the two out-pointers, which are valid
    // locals; the object is destroyed exactly once, after a successful init.
    let rc = unsafe {
        let rc = libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr());
        if rc == 0 {
            let got = libc::pthread_attr_getstack(attr.as_ptr(), &mut base, &mut size);
            libc::pthread_attr_destroy(attr.as_mut_ptr());
            got
        } else {
            rc
        }
    };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    let here = std::hint::black_box(&rc) as *const i32 as usize;
    let low = base as usize;
    let end = here.saturating_sub(keep) & !(page - 1);
    if end <= low || here >= low + size {
        // Nothing below to give back (or a frame outside the stack glibc reports).
        return Ok(release_alt_stack(page));
    }
    let len = end - low;
    // SAFETY: [low, end) is the unused bottom of this thread's own stack mapping (below
    // the current frame by more than `keep`), which no live object occupies.
    unsafe { release(low, len) }?;
    Ok(len + release_alt_stack(page))
}

/// `munlock` and `madvise(MADV_DONTNEED)` of `[start, start + len)`: unlocked, freed,
/// still mapped; a later touch faults in a zero-filled page.
///
/// # Safety
/// The range must be page-aligned, mapped, and hold no live object (its contents are
/// discarded).
unsafe fn release(start: usize, len: usize) -> io::Result<()> {
    // SAFETY: the caller's contract.
    let rc = unsafe {
        let rc = libc::munlock(start as *const libc::c_void, len);
        if rc == 0 {
            libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED)
        } else {
            rc
        }
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The calling thread's alternate signal stack (sigaltstack(2); Rust's standard
/// library gives every thread one for its stack-overflow message) is used only when a
/// signal arrives on an overflowing stack: its pages are unlocked and freed like the
/// stack's unused bottom. Returns the bytes given back (0 when there is none).
fn release_alt_stack(page: usize) -> usize {
    let mut ss = std::mem::MaybeUninit::<libc::stack_t>::uninit();
    // SAFETY: with a null new stack, sigaltstack only writes the current one into
    // `ss`, a valid local.
    let rc = unsafe { libc::sigaltstack(std::ptr::null(), ss.as_mut_ptr()) };
    if rc != 0 {
        return 0;
    }
    // SAFETY: sigaltstack returned 0, so it filled `ss`.
    let ss = unsafe { ss.assume_init() };
    let start = ss.ss_sp as usize;
    if ss.ss_flags & (libc::SS_DISABLE | libc::SS_ONSTACK) != 0
        || start == 0
        || start % page != 0
        || ss.ss_size < page
    {
        return 0;
    }
    let len = ss.ss_size & !(page - 1);
    // SAFETY: [start, start + len) is this thread's registered alternate signal stack,
    // page-aligned and not in use (SS_ONSTACK is clear): nothing live is in it.
    match unsafe { release(start, len) } {
        Ok(()) => len,
        Err(_) => 0,
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

    /// Pages of `[start, start + len)` resident, by mincore(2).
    fn resident_pages(start: usize, len: usize) -> usize {
        let page = 4096;
        let mut vec = vec![0u8; len.div_ceil(page)];
        // SAFETY: the range is page-aligned and mapped (a thread's own stack); `vec`
        // has one byte per page of it.
        let rc = unsafe { libc::mincore(start as *mut libc::c_void, len, vec.as_mut_ptr()) };
        assert_eq!(rc, 0, "{}", io::Error::last_os_error());
        vec.iter().filter(|b| **b & 1 != 0).count()
    }

    #[test]
    fn trim_stack_gives_back_the_unused_bottom_and_keeps_the_frame() {
        std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(|| {
                // Touch most of the stack, as MCL_FUTURE's population would.
                prefault_stack(400 * 1024);
                let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
                let (mut base, mut size) = (std::ptr::null_mut(), 0usize);
                // SAFETY: as in trim_stack.
                unsafe {
                    assert_eq!(
                        libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()),
                        0
                    );
                    libc::pthread_attr_getstack(attr.as_ptr(), &mut base, &mut size);
                    libc::pthread_attr_destroy(attr.as_mut_ptr());
                }
                // Probe below this frame, not above the bottom: glibc may hand the
                // thread a cached stack larger than asked (up to 4 times, an exited
                // test thread's 2 MiB one), whose bottom prefault_stack never reached.
                let low = base as usize;
                let frame = &attr as *const _ as usize;
                let probe = (frame - 320 * 1024) & !4095;
                assert!(probe >= low && frame < low + size);
                assert_eq!(resident_pages(probe, 128 * 1024), 32, "touched before");
                let given = trim_stack(8 * 1024).unwrap();
                assert!(given >= 256 * 1024, "gave back {given} bytes");
                // The bottom is gone, the frames in use are still there and usable.
                assert_eq!(resident_pages(probe, 128 * 1024), 0);
                let here = &given as *const usize as usize & !4095;
                assert_eq!(resident_pages(here, 4096), 1);
                prefault_stack(4 * 1024);
            })
            .unwrap()
            .join()
            .unwrap();
    }
}

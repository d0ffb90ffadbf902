//! Why memory was refused: `mlockall(2)`, an anonymous mapping (the vm load, a thread
//! stack) or a new process or thread.
//!
//! The kernel's rules (mm/mlock.c, mm/mmap.c, mm/util.c `__vm_enough_memory()`,
//! kernel/fork.c, Documentation/mm/overcommit-accounting.rst, getrlimit(2)):
//! - `mlockall(MCL_CURRENT)` without `CAP_IPC_LOCK` needs `RLIMIT_MEMLOCK` ≥ the
//!   mapped size (`VmSize`, ENOMEM), and a limit of 0 is EPERM; after
//!   `MCL_FUTURE` every new mapping is locked and counts against it (EAGAIN);
//! - a mapping fails with ENOMEM when `VmSize` + its size exceeds `RLIMIT_AS`, when a
//!   private writable one makes `VmData` exceed `RLIMIT_DATA`, under
//!   `overcommit_memory = 2` when `Committed_AS` + its size exceeds `CommitLimit`,
//!   under the heuristic (0) when it alone is larger than RAM + swap, and when the
//!   process has `vm.max_map_count` mappings;
//! - `fork`/`clone` fail with EAGAIN at `RLIMIT_NPROC` (tasks of the user; root and
//!   `CAP_SYS_RESOURCE`/`CAP_SYS_ADMIN` are exempt), the pids cgroup's `pids.max` or
//!   `kernel.threads-max`; a fork under `overcommit_memory = 2` commits the parent's
//!   private writable memory again (ENOMEM).

use super::{bytes, capable, lacks, limit_bytes, soft_limit, Cause, Limit, Status};
use super::{CAP_IPC_LOCK, CAP_SYS_ADMIN, CAP_SYS_RESOURCE};
use crate::sys::SysRoot;

/// `/proc/meminfo` and the overcommit sysctls, in kB.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Commit {
    /// `vm.overcommit_memory` (0 heuristic, 1 always, 2 strict).
    pub mode: u8,
    /// `vm.overcommit_ratio` (%).
    pub ratio: u64,
    /// `MemTotal`.
    pub mem_total_kb: u64,
    /// `MemAvailable`.
    pub mem_available_kb: u64,
    /// `SwapTotal`.
    pub swap_total_kb: u64,
    /// `CommitLimit`.
    pub commit_limit_kb: u64,
    /// `Committed_AS`.
    pub committed_kb: u64,
}

/// The `key:` field of `/proc/meminfo` text in kB.
pub fn meminfo_kb(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

impl Commit {
    /// Reads `/proc/meminfo` and `/proc/sys/vm/overcommit_*` below `root`.
    pub fn read(root: &SysRoot) -> Commit {
        let m = root.read("/proc/meminfo").unwrap_or_default();
        let kb = |k: &str| meminfo_kb(&m, k).unwrap_or(0);
        let sysctl = |k: &str| {
            root.read_trim(&format!("/proc/sys/vm/{k}"))
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        Commit {
            mode: sysctl("overcommit_memory") as u8,
            ratio: sysctl("overcommit_ratio"),
            mem_total_kb: kb("MemTotal"),
            mem_available_kb: kb("MemAvailable"),
            swap_total_kb: kb("SwapTotal"),
            commit_limit_kb: kb("CommitLimit"),
            committed_kb: kb("Committed_AS"),
        }
    }

    /// One line of the memory state, for causes no limit explains.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "MemAvailable {} kB of MemTotal {} kB, SwapTotal {} kB, overcommit_memory {}",
            self.mem_available_kb, self.mem_total_kb, self.swap_total_kb, self.mode
        );
        if self.mode == 2 {
            s += &format!(
                " (CommitLimit {} kB, Committed_AS {} kB)",
                self.commit_limit_kb, self.committed_kb
            );
        }
        s
    }
}

/// The cause of `mlockall(MCL_CURRENT | MCL_FUTURE)` failing with `errno`.
pub fn mlockall(root: &SysRoot, errno: i32) -> Option<Cause> {
    let st = Status::read(root);
    let memlock = soft_limit(root, "Max locked memory").flatten();
    let cap = capable(root, &st, CAP_IPC_LOCK);
    let fix = "raise it (LimitMEMLOCK=infinity in the systemd unit, a memlock line in /etc/security/limits.conf, prlimit --memlock=unlimited) or grant CAP_IPC_LOCK, or measure without locking (--no-mlockall)";
    let vm = st.vm_size_kb * 1024;
    match errno {
        libc::EPERM if !cap && memlock == Some(0) => Some(Cause::new(
            "RLIMIT_MEMLOCK",
            format!(
                "RLIMIT_MEMLOCK is 0 (ulimit -l) and the process {}: {fix}",
                lacks(root, &st, "CAP_IPC_LOCK", CAP_IPC_LOCK)
            ),
        )),
        libc::ENOMEM if !cap && memlock.is_some_and(|l| vm > l) => Some(Cause::new(
            "RLIMIT_MEMLOCK",
            format!(
                "RLIMIT_MEMLOCK is {} (ulimit -l), below the {} rtbench has mapped (VmSize; mlockall locks all of it), and the process {}: {fix}",
                limit_bytes(memlock),
                bytes(vm),
                lacks(root, &st, "CAP_IPC_LOCK", CAP_IPC_LOCK)
            ),
        )),
        libc::ENOMEM => {
            let why = if cap {
                "the process holds CAP_IPC_LOCK".to_string()
            } else {
                format!(
                    "RLIMIT_MEMLOCK {} covers VmSize {}",
                    limit_bytes(memlock),
                    bytes(vm)
                )
            };
            Some(Cause::new(
                "memory",
                format!(
                    "not RLIMIT_MEMLOCK ({why}): the kernel could not lock the pages: {}{}",
                    Commit::read(root).describe(),
                    map_count(root)
                        .map(|(n, max)| format!(", {n} mappings of vm.max_map_count {max}"))
                        .unwrap_or_default()
                ),
            ))
        }
        _ => None,
    }
}

/// The process's number of mappings (`/proc/self/maps` lines) and `vm.max_map_count`.
fn map_count(root: &SysRoot) -> Option<(u64, u64)> {
    let n = root.read("/proc/self/maps").ok()?.lines().count() as u64;
    let max = root
        .read_trim("/proc/sys/vm/max_map_count")
        .ok()?
        .parse()
        .ok()?;
    Some((n, max))
}

/// The cause of an anonymous private writable mapping of `size` bytes failing with
/// `errno` (ENOMEM, or EAGAIN for the locked-memory limit after `mlockall`).
pub fn mapping(root: &SysRoot, errno: i32, size: u64) -> Option<Cause> {
    if errno != libc::ENOMEM && errno != libc::EAGAIN {
        return None;
    }
    let st = Status::read(root);
    let c = Commit::read(root);
    let lim = |name| soft_limit(root, name).flatten();
    let over = |l: Limit, used_kb: u64| l.filter(|&l| used_kb * 1024 + size > l);
    if let Some(l) = over(lim("Max address space"), st.vm_size_kb) {
        return Some(Cause::new(
            "RLIMIT_AS",
            format!(
                "RLIMIT_AS is {} (ulimit -v): {} mapped (VmSize) + {} asked exceeds it; raise it (LimitAS= in the systemd unit, prlimit --as=unlimited) or ask for less",
                bytes(l),
                bytes(st.vm_size_kb * 1024),
                bytes(size)
            ),
        ));
    }
    if let Some(l) = over(lim("Max data size"), st.vm_data_kb) {
        return Some(Cause::new(
            "RLIMIT_DATA",
            format!(
                "RLIMIT_DATA is {} (ulimit -d): {} of private writable memory (VmData) + {} asked exceeds it; raise it (LimitDATA= in the systemd unit, prlimit --data=unlimited) or ask for less",
                bytes(l),
                bytes(st.vm_data_kb * 1024),
                bytes(size)
            ),
        ));
    }
    if st.vm_lck_kb > 0 && !capable(root, &st, CAP_IPC_LOCK) {
        if let Some(l) = over(lim("Max locked memory"), st.vm_lck_kb) {
            return Some(Cause::new(
                "RLIMIT_MEMLOCK",
                format!(
                    "mlockall(MCL_FUTURE) locks every new mapping, and RLIMIT_MEMLOCK is {} (ulimit -l): {} locked (VmLck) + {} asked exceeds it; raise it (LimitMEMLOCK=infinity, prlimit --memlock=unlimited) or grant CAP_IPC_LOCK",
                    bytes(l),
                    bytes(st.vm_lck_kb * 1024),
                    bytes(size)
                ),
            ));
        }
    }
    commit_cause(&c, size).or_else(|| {
        let maps = map_count(root).filter(|(n, max)| n >= max);
        Some(match maps {
            Some((n, max)) => Cause::new(
                "vm.max_map_count",
                format!("the process has {n} mappings, vm.max_map_count is {max}: raise vm.max_map_count"),
            ),
            None => Cause::new(
                "memory",
                format!(
                    "no limit explains it (RLIMIT_AS, RLIMIT_DATA, RLIMIT_MEMLOCK and the commit limit leave room for {}): {}",
                    bytes(size),
                    c.describe()
                ),
            ),
        })
    })
}

/// The overcommit policy's answer to committing `size` more bytes, when it refuses.
fn commit_cause(c: &Commit, size: u64) -> Option<Cause> {
    let kb = size.div_ceil(1024);
    match c.mode {
        2 if c.committed_kb + kb > c.commit_limit_kb => Some(Cause::new(
            "CommitLimit",
            format!(
                "overcommit_memory = 2 (strict): Committed_AS {} kB + {kb} kB asked exceeds CommitLimit {} kB ((MemTotal {} kB − hugetlb) × overcommit_ratio {} % + SwapTotal {} kB); raise vm.overcommit_ratio, add swap, or set overcommit_memory = 0",
                c.committed_kb, c.commit_limit_kb, c.mem_total_kb, c.ratio, c.swap_total_kb
            ),
        )),
        0 if kb > c.mem_total_kb + c.swap_total_kb => Some(Cause::new(
            "overcommit",
            format!(
                "overcommit_memory = 0 (heuristic) refuses one allocation larger than RAM + swap: {kb} kB asked, MemTotal {} kB + SwapTotal {} kB",
                c.mem_total_kb, c.swap_total_kb
            ),
        )),
        _ => None,
    }
}

/// The cause of creating a process (`fork`) or thread (`clone`, `pthread_create`
/// with a `stack` of that many bytes; 0 for a fork) failing with `errno`.
pub fn new_task(root: &SysRoot, errno: i32, stack: u64) -> Option<Cause> {
    let st = Status::read(root);
    match errno {
        libc::EAGAIN => {
            let exempt = st.uid == 0
                || capable(root, &st, CAP_SYS_RESOURCE)
                || capable(root, &st, CAP_SYS_ADMIN);
            let nproc = soft_limit(root, "Max processes").flatten();
            if let (false, Some(l)) = (exempt, nproc) {
                let tasks = tasks_of_uid(root, st.uid);
                if tasks + 1 > l {
                    return Some(Cause::new(
                        "RLIMIT_NPROC",
                        format!(
                            "RLIMIT_NPROC is {l} (ulimit -u) and uid {} already runs {tasks} tasks (threads count): raise it (LimitNPROC= in the systemd unit, an nproc line in /etc/security/limits.conf, prlimit --nproc=)",
                            st.uid
                        ),
                    ));
                }
            }
            if let Some(c) = pids_cgroup(root) {
                return Some(c);
            }
            if let Some(c) = threads_max(root) {
                return Some(c);
            }
            if stack > 0 {
                if let Some(c) = mapping(root, errno, stack).filter(|c| c.name != "memory") {
                    return Some(c);
                }
            }
            Some(Cause::new(
                "tasks",
                format!(
                    "no task limit is reached (RLIMIT_NPROC {}, the pids cgroup, kernel.threads-max) and no memory limit applies; memory: {}",
                    nproc.map_or("unlimited".into(), |n| n.to_string()),
                    Commit::read(root).describe()
                ),
            ))
        }
        libc::ENOMEM if stack > 0 => mapping(root, errno, stack),
        libc::ENOMEM => {
            // A fork commits the parent's private writable memory once more.
            let private = (st.vm_data_kb + st.vm_stk_kb) * 1024;
            mapping(root, errno, private)
        }
        _ => None,
    }
}

/// Tasks (threads included) of `uid`, counted over `/proc/*/status`.
fn tasks_of_uid(root: &SysRoot, uid: u32) -> u64 {
    root.list_dir("/proc")
        .unwrap_or_default()
        .iter()
        .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|d| root.read(&format!("/proc/{d}/status")).ok())
        .filter(|t| Status::parse(t).uid == uid)
        .map(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(1)
        })
        .sum()
}

/// The pids cgroup that refused the task: this process's pids cgroup or an ancestor
/// with a `pids.max` that is full now (`pids.current` ≥ `pids.max`) or, failing that,
/// whose `pids.events` counts refusals (`max N`, N > 0). The count is what
/// tells: the tasks of a start that failed (the other threads of a pair, a
/// responder) may have ended between the refusal and this reading, so `pids.current`
/// alone can be below the limit again (cgroup-v1/pids.rst, cgroup-v2.rst "PID").
fn pids_cgroup(root: &SysRoot) -> Option<Cause> {
    let own = super::cgroup_dir(root, "pids", true)?;
    let num = |dir: &str, file: &str| -> Option<u64> {
        root.read_trim(&format!("{dir}/{file}")).ok()?.parse().ok()
    };
    let refusals = |dir: &str| -> u64 {
        root.read(&format!("{dir}/pids.events"))
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("max "))
                    .and_then(|n| n.trim().parse().ok())
            })
            .unwrap_or(0)
    };
    // This cgroup, then its ancestors while they have a pids.max (the root has none).
    let mut levels = Vec::new();
    let mut dir = own.as_str();
    while root.path(&format!("{dir}/pids.max")).exists() {
        levels.push(dir.to_string());
        match dir.rfind('/') {
            Some(i) if i > 0 => dir = &dir[..i],
            _ => break,
        }
    }
    let limited: Vec<(String, u64, u64, u64)> = levels
        .into_iter()
        .filter_map(|d| {
            let max = num(&d, "pids.max")?;
            let current = num(&d, "pids.current").unwrap_or(0);
            let events = refusals(&d);
            Some((d, max, current, events))
        })
        .collect();
    let full = limited.iter().find(|(_, max, current, _)| current >= max);
    let counted = || limited.iter().find(|(_, _, _, events)| *events > 0);
    let (dir, max, current, events) = full.or_else(counted)?;
    let counted = if *events > 0 {
        format!(", and pids.events counts {events} refused fork(s)")
    } else {
        String::new()
    };
    Some(Cause::new(
        "pids.max",
        format!(
            "cgroup {dir} has pids.max = {max} and pids.current = {current}{counted}: raise it (systemd: TasksMax=)"
        ),
    ))
}

/// `kernel.threads-max` when the system's task count (`/proc/loadavg`) reached it.
fn threads_max(root: &SysRoot) -> Option<Cause> {
    let max: u64 = root
        .read_trim("/proc/sys/kernel/threads-max")
        .ok()?
        .parse()
        .ok()?;
    let load = root.read("/proc/loadavg").ok()?;
    let total: u64 = load
        .split_whitespace()
        .nth(3)?
        .split('/')
        .nth(1)?
        .parse()
        .ok()?;
    (total >= max).then(|| {
        Cause::new(
            "kernel.threads-max",
            format!("the system runs {total} tasks, kernel.threads-max is {max}: raise kernel.threads-max"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::refusal::tree::{limits, Tree};

    const MEMINFO: &str = "MemTotal:       24684092 kB\nMemAvailable:   22267752 kB\nSwapTotal:             0 kB\nCommitLimit:    12342044 kB\nCommitted_AS:     887012 kB\n";

    fn tree(cap_eff: &str, memlock: Option<u64>, address: Option<u64>) -> Tree {
        let t = Tree::new("memory");
        t.file("/proc/self/limits", &limits(0, memlock, address))
            .file(
                "/proc/thread-self/status",
                &format!("Uid:\t1000\nVmSize:\t   40960 kB\nVmLck:\t       0 kB\nVmData:\t   10240 kB\nVmStk:\t     132 kB\nCapEff:\t{cap_eff}\n"),
            )
            .file("/proc/meminfo", MEMINFO)
            .file("/proc/sys/vm/overcommit_memory", "0\n")
            .file("/proc/sys/vm/overcommit_ratio", "50\n");
        t
    }

    #[test]
    fn mlockall_names_rlimit_memlock_or_the_memory_state() {
        let t = tree("0000000000000000", Some(8 << 20), None);
        let c = mlockall(&t.root(), libc::ENOMEM).unwrap();
        assert_eq!(c.name, "RLIMIT_MEMLOCK");
        assert!(
            c.text.starts_with("RLIMIT_MEMLOCK is 8388608 bytes (8 MiB) (ulimit -l), below the 41943040 bytes (40 MiB) rtbench has mapped")
                && c.text.contains("lacks CAP_IPC_LOCK"),
            "{}",
            c.text
        );
        let t = tree("0000000000000000", Some(0), None);
        assert_eq!(
            mlockall(&t.root(), libc::EPERM).unwrap().name,
            "RLIMIT_MEMLOCK"
        );
        // With CAP_IPC_LOCK the limit does not apply: the memory state is named.
        let t = tree("0000000000004000", Some(8 << 20), None);
        t.file("/proc/sys/vm/overcommit_memory", "2\n");
        let c = mlockall(&t.root(), libc::ENOMEM).unwrap();
        assert_eq!(c.name, "memory");
        assert!(
            c.text.contains("CAP_IPC_LOCK")
                && c.text
                    .contains("CommitLimit 12342044 kB, Committed_AS 887012 kB"),
            "{}",
            c.text
        );
    }

    #[test]
    fn a_mapping_names_the_address_space_data_commit_or_heuristic_limit() {
        let t = tree("0", None, Some(400_000_000));
        let c = mapping(&t.root(), libc::ENOMEM, 512 << 20).unwrap();
        assert_eq!(c.name, "RLIMIT_AS");
        assert!(
            c.text.starts_with("RLIMIT_AS is 400000000 bytes (381.5 MiB) (ulimit -v): 41943040 bytes (40 MiB) mapped (VmSize) + 536870912 bytes (512 MiB) asked"),
            "{}",
            c.text
        );
        let t = tree("0", None, None);
        t.file("/proc/sys/vm/overcommit_memory", "2\n");
        let c = mapping(&t.root(), libc::ENOMEM, 16 << 30).unwrap();
        assert_eq!(c.name, "CommitLimit");
        assert!(
            c.text.contains(
                "Committed_AS 887012 kB + 16777216 kB asked exceeds CommitLimit 12342044 kB"
            ) && c.text.contains("overcommit_ratio 50 %"),
            "{}",
            c.text
        );
        t.file("/proc/sys/vm/overcommit_memory", "0\n");
        assert_eq!(
            mapping(&t.root(), libc::ENOMEM, 32 << 30).unwrap().name,
            "overcommit"
        );
        let c = mapping(&t.root(), libc::ENOMEM, 1 << 20).unwrap();
        assert!(
            c.name == "memory" && c.text.starts_with("no limit explains it"),
            "{}",
            c.text
        );
        assert_eq!(mapping(&t.root(), libc::EINVAL, 1), None);
    }

    #[test]
    fn new_tasks_name_nproc_pids_and_threads_max() {
        let t = tree("0", None, None);
        t.file(
            "/proc/self/limits",
            "Max processes             1                    1                    processes \n",
        )
        .file("/proc/42/status", "Uid:\t1000\nThreads:\t3\n");
        let c = new_task(&t.root(), libc::EAGAIN, 256 << 10).unwrap();
        assert!(
            c.name == "RLIMIT_NPROC" && c.text.contains("uid 1000 already runs 3 tasks"),
            "{}",
            c.text
        );
        let t = tree("0", None, None);
        t.file(
            "/proc/self/mountinfo",
            "35 31 0:32 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n",
        )
        .file("/proc/thread-self/cgroup", "9:pids:/small\n")
        .file("/sys/fs/cgroup/pids/small/pids.max", "4\n")
        .file("/sys/fs/cgroup/pids/small/pids.current", "4\n");
        let c = new_task(&t.root(), libc::EAGAIN, 0).unwrap();
        assert!(
            c.name == "pids.max" && c.text.contains("/sys/fs/cgroup/pids/small"),
            "{}",
            c.text
        );
        // The tasks of the failed start have ended: pids.events still counts the
        // refusal, in this cgroup or in the ancestor whose limit it was.
        for (limit_at, other) in [("small", "small/inner"), ("small/inner", "small")] {
            let t = tree("0", None, None);
            t.file(
                "/proc/self/mountinfo",
                "35 31 0:32 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n",
            )
            .file("/proc/thread-self/cgroup", "9:pids:/small/inner\n")
            .file(&format!("/sys/fs/cgroup/pids/{limit_at}/pids.max"), "4\n")
            .file(
                &format!("/sys/fs/cgroup/pids/{limit_at}/pids.current"),
                "2\n",
            )
            .file(
                &format!("/sys/fs/cgroup/pids/{limit_at}/pids.events"),
                "max 3\n",
            )
            .file(&format!("/sys/fs/cgroup/pids/{other}/pids.max"), "max\n")
            .file(
                &format!("/sys/fs/cgroup/pids/{other}/pids.events"),
                "max 0\n",
            );
            let c = new_task(&t.root(), libc::EAGAIN, 0).unwrap();
            assert!(
                c.name == "pids.max"
                    && c.text
                        .contains(&format!("/sys/fs/cgroup/pids/{limit_at} has pids.max = 4"))
                    && c.text.contains("pids.events counts 3 refused fork(s)"),
                "{}",
                c.text
            );
        }
        let t = tree("0", None, None);
        t.file("/proc/sys/kernel/threads-max", "100\n")
            .file("/proc/loadavg", "0.00 0.01 0.05 1/100 4242\n");
        assert_eq!(
            new_task(&t.root(), libc::EAGAIN, 0).unwrap().name,
            "kernel.threads-max"
        );
        // A fork under strict overcommit commits the parent's private memory again.
        let t = tree("0", None, None);
        t.file("/proc/sys/vm/overcommit_memory", "2\n").file(
            "/proc/meminfo",
            "MemTotal: 1000 kB\nCommitLimit: 20000 kB\nCommitted_AS: 15000 kB\n",
        );
        let c = new_task(&t.root(), libc::ENOMEM, 0).unwrap();
        assert!(
            c.name == "CommitLimit" && c.text.contains("Committed_AS 15000 kB + 10372 kB asked"),
            "{}",
            c.text
        );
    }
}

//! Why the kernel said no. When a call rtbench needs is refused (SCHED_FIFO, mlockall,
//! a mapping, a fork, a thread), the errno alone does not tell an integrator what to
//! change: EPERM from `sched_setscheduler(2)` may be `RLIMIT_RTPRIO` without
//! `CAP_SYS_NICE`, a cgroup without RT runtime or a seccomp filter. The functions here
//! read the facts the kernel decided on — the process's limits (`/proc/self/limits`),
//! capabilities, seccomp mode and memory (`/proc/thread-self/status`), its cgroups, the
//! overcommit state (`/proc/meminfo`) — and name the one that explains the errno, with
//! its numbers and the fix. They are called *after* the errno was taken from the
//! failed call (reading files may change `errno`), and only on that error path.
//!
//! Everything is read through [`SysRoot`], so each diagnosis is tested on generated
//! trees as well as reproduced for real (tests/cli/refusals.rs).

pub mod files;
pub mod memory;
pub mod rtgroup;
pub mod sched;

use super::SysRoot;
pub use crate::error::Cause;

/// A soft resource limit as `/proc/self/limits` shows it: `None` is unlimited.
pub type Limit = Option<u64>;

/// Capability bits (include/uapi/linux/capability.h).
pub const CAP_IPC_LOCK: u32 = 14;
/// `CAP_SYS_ADMIN`.
pub const CAP_SYS_ADMIN: u32 = 21;
/// `CAP_SYS_NICE`.
pub const CAP_SYS_NICE: u32 = 23;
/// `CAP_SYS_RESOURCE`.
pub const CAP_SYS_RESOURCE: u32 = 24;

/// The soft limit named `name` in `/proc/self/limits` (e.g. `Max realtime priority`):
/// `Some(None)` for unlimited, `None` when the file or the line is missing.
pub fn soft_limit(root: &SysRoot, name: &str) -> Option<Limit> {
    let text = root.read("/proc/self/limits").ok()?;
    let rest = text.lines().find_map(|l| l.strip_prefix(name))?;
    let soft = rest.split_whitespace().next()?;
    if soft == "unlimited" {
        Some(None)
    } else {
        soft.parse().ok().map(Some)
    }
}

/// The calling thread's `/proc/thread-self/status` (capabilities and seccomp are per
/// thread), else the process's.
fn status_text(root: &SysRoot) -> String {
    root.read("/proc/thread-self/status")
        .or_else(|_| root.read("/proc/self/status"))
        .unwrap_or_default()
}

/// The facts of the calling thread's `status` file that decide refusals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// Effective capabilities (`CapEff`).
    pub cap_eff: u64,
    /// `Seccomp`: 0 none, 1 strict, 2 filter.
    pub seccomp: u32,
    /// `Seccomp_filters`: filters installed.
    pub seccomp_filters: u32,
    /// `VmSize` in kB (the kernel's `total_vm`).
    pub vm_size_kb: u64,
    /// `VmLck` in kB (locked memory).
    pub vm_lck_kb: u64,
    /// `VmData` in kB (private writable memory, as `RLIMIT_DATA` counts it).
    pub vm_data_kb: u64,
    /// `VmStk` in kB.
    pub vm_stk_kb: u64,
    /// The real user id (first field of `Uid`).
    pub uid: u32,
}

impl Status {
    /// Reads `/proc/thread-self/status` below `root`; missing fields are 0.
    pub fn read(root: &SysRoot) -> Status {
        Status::parse(&status_text(root))
    }

    /// Parses a `status` file's text.
    pub fn parse(text: &str) -> Status {
        let field = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(k)?.strip_prefix(':'))
                .map(str::trim)
                .unwrap_or("")
        };
        let num = |k: &str| {
            field(k)
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        Status {
            cap_eff: u64::from_str_radix(field("CapEff"), 16).unwrap_or(0),
            seccomp: num("Seccomp") as u32,
            seccomp_filters: num("Seccomp_filters") as u32,
            vm_size_kb: num("VmSize"),
            vm_lck_kb: num("VmLck"),
            vm_data_kb: num("VmData"),
            vm_stk_kb: num("VmStk"),
            uid: num("Uid") as u32,
        }
    }

    /// Whether capability `bit` is in the effective set.
    pub fn has(&self, bit: u32) -> bool {
        self.cap_eff & (1u64 << bit) != 0
    }
}

/// Whether the process runs in the initial user namespace (`/proc/self/uid_map` maps
/// all of 0..2³²−1 onto itself). Capabilities held in another namespace do not count
/// for the scheduler's and mlock's `capable()` checks. A missing file counts as the
/// initial namespace.
pub fn in_initial_user_ns(root: &SysRoot) -> bool {
    match root.read("/proc/self/uid_map") {
        Ok(t) => t.split_whitespace().collect::<Vec<_>>() == ["0", "0", "4294967295"],
        Err(_) => true,
    }
}

/// Whether the thread holds capability `bit` where the kernel checks it (in the
/// initial user namespace).
pub fn capable(root: &SysRoot, st: &Status, bit: u32) -> bool {
    st.has(bit) && in_initial_user_ns(root)
}

/// "lacks CAP_X" or, in a user namespace, why the one it holds does not count.
pub(crate) fn lacks(root: &SysRoot, st: &Status, cap: &str, bit: u32) -> String {
    if st.has(bit) && !in_initial_user_ns(root) {
        format!(
            "holds {cap} only in a user namespace (/proc/self/uid_map), where it does not count"
        )
    } else {
        format!("lacks {cap} (CapEff {:016x})", st.cap_eff)
    }
}

/// Bytes in a human unit for messages: `536870912 bytes (512 MiB)`.
pub fn bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (u, size) in UNITS {
        if n >= size {
            let v = n as f64 / size as f64;
            return if n % size == 0 {
                format!("{n} bytes ({} {u})", n / size)
            } else {
                format!("{n} bytes ({v:.1} {u})")
            };
        }
    }
    format!("{n} bytes")
}

/// A limit for messages: `unlimited` or [`bytes`].
pub fn limit_bytes(l: Limit) -> String {
    l.map_or_else(|| "unlimited".into(), bytes)
}

/// The security modules the kernel runs (`/sys/kernel/security/lsm`) other than the
/// capability module, and this thread's LSM label when it is confined
/// (`/proc/thread-self/attr/current`, e.g. an AppArmor profile in enforce mode).
pub fn security_modules(root: &SysRoot) -> String {
    let lsms: Vec<String> = root
        .read_trim("/sys/kernel/security/lsm")
        .map(|t| {
            t.split(',')
                .filter(|m| !m.is_empty() && *m != "capability")
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let label = root
        .read("/proc/thread-self/attr/current")
        .ok()
        .map(|l| l.trim_end_matches(['\0', '\n']).to_string())
        .filter(|l| !l.is_empty() && l != "unconfined");
    match (lsms.is_empty(), label) {
        (true, None) => "none found (/sys/kernel/security/lsm not readable)".into(),
        (false, None) => format!("{} (this thread is unconfined)", lsms.join(",")),
        (true, Some(l)) => format!("this thread runs as {l:?}"),
        (false, Some(l)) => format!("{}; this thread runs as {l:?}", lsms.join(",")),
    }
}

/// The seccomp filter cause, when the thread runs under one: the filter is evaluated
/// before the system call, so it can return any errno.
pub(crate) fn seccomp_cause(st: &Status, call: &str, others: &str) -> Option<Cause> {
    (st.seccomp == 2).then(|| {
        Cause::new(
            "seccomp",
            format!(
                "a seccomp filter is installed on this thread (Seccomp: 2, Seccomp_filters: {} in /proc/self/status) and {others}: the filter refused {call} (systemd's RestrictRealtime=yes or SystemCallFilter=, a container runtime's seccomp profile); allow {call} for rtbench",
                st.seccomp_filters
            ),
        )
    })
}

// The cgroup directories the diagnosis reads, from the one mountinfo parser.
pub use super::cgroup::{cgroup_dir, v1_mount_point};

/// A test tree: files below a fresh temporary directory, removed on drop.
#[cfg(test)]
pub(crate) mod tree {
    use crate::sys::SysRoot;
    use std::path::PathBuf;

    /// A temporary directory standing in for `/`.
    pub struct Tree(pub PathBuf);

    impl Tree {
        /// A new empty tree named after `tag`.
        pub fn new(tag: &str) -> Tree {
            static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let d = std::env::temp_dir()
                .join(format!("rtbench-refusal-{tag}-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).unwrap();
            Tree(d)
        }

        /// Writes `text` at kernel path `p`.
        pub fn file(&self, p: &str, text: &str) -> &Self {
            let f = self.0.join(p.trim_start_matches('/'));
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
            self
        }

        /// The tree as a [`SysRoot`].
        pub fn root(&self) -> SysRoot {
            SysRoot::at(&self.0)
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// `/proc/self/limits` with these soft limits (`None`: unlimited).
    pub fn limits(rtprio: u64, memlock: Option<u64>, address: Option<u64>) -> String {
        let v = |l: Option<u64>| l.map_or("unlimited".to_string(), |n| n.to_string());
        format!(
            "Limit                     Soft Limit           Hard Limit           Units     \n\
             Max data size             unlimited            unlimited            bytes     \n\
             Max processes             95543                95543                processes \n\
             Max locked memory         {:<20} {:<20} bytes     \n\
             Max address space         {:<20} {:<20} bytes     \n\
             Max realtime priority     {rtprio:<20} {rtprio:<20}\n",
            v(memlock),
            v(memlock),
            v(address),
            v(address)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::tree::{limits, Tree};
    use super::*;

    const MOUNTS: &str = "31 23 0:28 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n\
        33 31 0:30 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
        35 31 0:32 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n\
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

    #[test]
    fn limits_status_and_cgroups_are_read_as_the_kernel_writes_them() {
        let t = Tree::new("facts");
        t.file("/proc/self/limits", &limits(0, Some(8 << 20), None))
            .file(
                "/proc/thread-self/status",
                "Uid:\t65534\t65534\t65534\t65534\nVmSize:\t   20480 kB\nCapEff:\t0000000000800000\nSeccomp:\t2\nSeccomp_filters:\t1\n",
            )
            .file("/proc/self/mountinfo", MOUNTS)
            .file(
                "/proc/thread-self/cgroup",
                "9:pids:/user.slice\n1:cpu:/rt/a\n0::/user.slice/x.scope\n",
            )
            .file("/proc/self/uid_map", "         0          0 4294967295\n");
        let r = t.root();
        assert_eq!(soft_limit(&r, "Max realtime priority"), Some(Some(0)));
        assert_eq!(soft_limit(&r, "Max locked memory"), Some(Some(8 << 20)));
        assert_eq!(soft_limit(&r, "Max address space"), Some(None));
        let st = Status::read(&r);
        assert_eq!((st.uid, st.vm_size_kb, st.seccomp), (65534, 20480, 2));
        assert!(st.has(CAP_SYS_NICE) && !st.has(CAP_IPC_LOCK));
        assert!(capable(&r, &st, CAP_SYS_NICE));
        assert_eq!(
            cgroup_dir(&r, "cpu", false).as_deref(),
            Some("/sys/fs/cgroup/cpu/rt/a")
        );
        assert_eq!(
            cgroup_dir(&r, "pids", true).as_deref(),
            Some("/sys/fs/cgroup/pids/user.slice")
        );
        assert_eq!(
            cgroup_dir(&r, "memory", true).as_deref(),
            Some("/sys/fs/cgroup/unified/user.slice/x.scope")
        );
        assert_eq!(cgroup_dir(&r, "memory", false), None);
        t.file("/proc/self/uid_map", "0 1000 1\n");
        assert!(!capable(&r, &st, CAP_SYS_NICE));
        assert!(lacks(&r, &st, "CAP_SYS_NICE", CAP_SYS_NICE).contains("user namespace"));
        assert_eq!(bytes(512 << 20), "536870912 bytes (512 MiB)");
        assert_eq!(bytes(1536), "1536 bytes (1.5 KiB)");
    }

    #[test]
    fn a_bind_mounted_subtree_is_followed() {
        let t = Tree::new("bind");
        t.file(
            "/proc/self/mountinfo",
            "33 31 0:30 /docker/abc /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,cpuacct\n",
        )
        .file("/proc/self/cgroup", "4:cpu,cpuacct:/docker/abc\n");
        assert_eq!(
            cgroup_dir(&t.root(), "cpu", false).as_deref(),
            Some("/sys/fs/cgroup/cpu")
        );
    }
}

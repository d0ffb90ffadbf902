//! Why `sched_setscheduler(2)` refused a real-time policy, in the order the kernel
//! decides (kernel/sched/syscalls.c `__sched_setscheduler()`): a seccomp filter runs
//! before the call; then, without `CAP_SYS_NICE` in the initial user namespace, the
//! priority must not exceed `RLIMIT_RTPRIO` (EPERM); then the security modules
//! (`security_task_setscheduler()`, SELinux answers EACCES); then, under RT group
//! scheduling with throttling on, the task's cgroup must have RT runtime (EPERM).

use super::rtgroup;
use super::{capable, lacks, seccomp_cause, security_modules, soft_limit, Cause, Status};
use super::{SysRoot, CAP_SYS_NICE};

/// The cause of `sched_setscheduler(policy, priority)` failing with `errno` for the
/// calling thread (`policy` as `SCHED_FIFO`/`SCHED_RR`). `None` for an errno no
/// process state explains.
pub fn setscheduler(root: &SysRoot, policy: &str, priority: i32, errno: i32) -> Option<Cause> {
    let call = format!("sched_setscheduler({policy})");
    match errno {
        libc::EPERM | libc::EACCES => Some(permission(root, &call, priority, errno)),
        libc::EINVAL => Some(Cause::new(
            "priority",
            format!(
                "priority {priority} is outside {policy}'s range 1..99 (sched_get_priority_max(2))"
            ),
        )),
        _ => None,
    }
}

fn permission(root: &SysRoot, call: &str, priority: i32, errno: i32) -> Cause {
    let st = Status::read(root);
    let rtprio = soft_limit(root, "Max realtime priority");
    let nice_ok = capable(root, &st, CAP_SYS_NICE);
    let rtprio_ok = match rtprio {
        Some(None) => true,
        Some(Some(n)) => n >= priority as u64,
        None => nice_ok, // unknown limit: only the capability speaks
    };
    if !nice_ok && !rtprio_ok {
        let lim = rtprio.flatten().map_or("unknown".into(), |n| n.to_string());
        return Cause::new(
            "RLIMIT_RTPRIO",
            format!(
                "RLIMIT_RTPRIO is {lim} (ulimit -r), below priority {priority}, and the thread {}: raise the limit (LimitRTPRIO={priority} in the systemd unit, an rtprio line in /etc/security/limits.conf, prlimit --rtprio={priority}) or grant CAP_SYS_NICE (AmbientCapabilities=CAP_SYS_NICE, setcap cap_sys_nice+ep){}",
                lacks(root, &st, "CAP_SYS_NICE", CAP_SYS_NICE),
                if st.uid == 0 { "" } else { ", or run as root" }
            ),
        );
    }
    let why_not_limit = if nice_ok {
        "the thread holds CAP_SYS_NICE".to_string()
    } else {
        format!(
            "RLIMIT_RTPRIO {} allows priority {priority}",
            rtprio
                .flatten()
                .map_or("unlimited".into(), |n| n.to_string())
        )
    };
    let throttled = rtgroup::global(root).map_or(true, |(rt, _)| rt != -1);
    if let Some(g) = rtgroup::of_thread(root).filter(|g| g.runtime_us == 0 && throttled) {
        let top = rtgroup::all(root)
            .into_iter()
            .next()
            .map(|t| format!(" (the top group {} has {} µs)", t.dir, t.runtime_us))
            .unwrap_or_default();
        return Cause::new(
            "cpu.rt_runtime_us",
            format!(
                "cgroup {} has cpu.rt_runtime_us = 0 (RT group scheduling, CONFIG_RT_GROUP_SCHED) and {why_not_limit}: the kernel lets no SCHED_FIFO/RR task into a group without RT runtime; give it some (echo 100000 > {}/cpu.rt_runtime_us, its parent groups first) or run rtbench in a cpu cgroup that has RT runtime{top}",
                g.dir, g.dir
            ),
        );
    }
    let others = format!("{why_not_limit} and no cgroup without RT runtime explains it");
    if let Some(c) = seccomp_cause(&st, call, &others) {
        return c;
    }
    let lsm = security_modules(root);
    Cause::new(
        "security policy",
        format!(
            "{others}, and no seccomp filter is installed: a security module denied it{} (security modules: {lsm})",
            if errno == libc::EACCES {
                " (EACCES is their answer, e.g. SELinux's setsched permission)"
            } else {
                ""
            }
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::refusal::tree::{limits, Tree};

    fn tree(cap_eff: &str, rtprio: u64) -> Tree {
        let t = Tree::new("sched");
        t.file("/proc/self/limits", &limits(rtprio, Some(8 << 20), None))
            .file(
                "/proc/thread-self/status",
                &format!("Uid:\t0\nCapEff:\t{cap_eff}\nSeccomp:\t0\nSeccomp_filters:\t0\n"),
            )
            .file(
                "/proc/self/mountinfo",
                "33 31 0:30 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
            )
            .file("/proc/thread-self/cgroup", "1:cpu:/\n")
            .file("/sys/fs/cgroup/cpu/cpu.rt_runtime_us", "950000\n")
            .file("/sys/fs/cgroup/cpu/cpu.rt_period_us", "1000000\n")
            .file("/proc/sys/kernel/sched_rt_runtime_us", "950000\n")
            .file("/proc/sys/kernel/sched_rt_period_us", "1000000\n");
        t
    }

    const ALL: &str = "000001ffffffffff";
    const NO_NICE: &str = "000001ffff7fffff";

    #[test]
    fn rtprio_without_cap_sys_nice() {
        let t = tree(NO_NICE, 0);
        let c = setscheduler(&t.root(), "SCHED_FIFO", 90, libc::EPERM).unwrap();
        assert_eq!(c.name, "RLIMIT_RTPRIO");
        assert!(
            c.text.starts_with("RLIMIT_RTPRIO is 0 (ulimit -r), below priority 90, and the thread lacks CAP_SYS_NICE")
                && c.text.contains("LimitRTPRIO=90"),
            "{}",
            c.text
        );
        // A high enough limit is not the cause: the security policy is.
        let t = tree(NO_NICE, 99);
        let c = setscheduler(&t.root(), "SCHED_FIFO", 90, libc::EPERM).unwrap();
        assert_eq!(c.name, "security policy", "{}", c.text);
        assert!(
            c.text.contains("RLIMIT_RTPRIO 99 allows priority 90"),
            "{}",
            c.text
        );
    }

    #[test]
    fn a_cgroup_without_rt_runtime() {
        let t = tree(ALL, 0);
        t.file("/proc/thread-self/cgroup", "1:cpu:/box\n")
            .file("/sys/fs/cgroup/cpu/box/cpu.rt_runtime_us", "0\n")
            .file("/sys/fs/cgroup/cpu/box/cpu.rt_period_us", "1000000\n");
        let c = setscheduler(&t.root(), "SCHED_RR", 10, libc::EPERM).unwrap();
        assert_eq!(c.name, "cpu.rt_runtime_us");
        assert!(
            c.text
                .starts_with("cgroup /sys/fs/cgroup/cpu/box has cpu.rt_runtime_us = 0")
                && c.text.contains("the thread holds CAP_SYS_NICE")
                && c.text
                    .contains("(the top group /sys/fs/cgroup/cpu has 950000 µs)"),
            "{}",
            c.text
        );
        // With RT throttling off the kernel does not check the group.
        t.file("/proc/sys/kernel/sched_rt_runtime_us", "-1\n");
        let c = setscheduler(&t.root(), "SCHED_RR", 10, libc::EPERM).unwrap();
        assert_ne!(c.name, "cpu.rt_runtime_us");
    }

    #[test]
    fn seccomp_user_namespace_and_security_modules() {
        let t = tree(ALL, 0);
        t.file(
            "/proc/thread-self/status",
            &format!("CapEff:\t{ALL}\nSeccomp:\t2\nSeccomp_filters:\t3\n"),
        );
        let c = setscheduler(&t.root(), "SCHED_FIFO", 1, libc::EPERM).unwrap();
        assert_eq!(c.name, "seccomp");
        assert!(c.text.contains("Seccomp_filters: 3"), "{}", c.text);
        // Capabilities in a user namespace do not count.
        t.file("/proc/self/uid_map", "0 100000 65536\n");
        let c = setscheduler(&t.root(), "SCHED_FIFO", 1, libc::EPERM).unwrap();
        assert_eq!(c.name, "RLIMIT_RTPRIO");
        assert!(c.text.contains("only in a user namespace"), "{}", c.text);
        let t = tree(ALL, 0);
        t.file("/sys/kernel/security/lsm", "lockdown,capability,selinux\n");
        let c = setscheduler(&t.root(), "SCHED_FIFO", 1, libc::EACCES).unwrap();
        assert!(
            c.name == "security policy" && c.text.contains("lockdown,selinux"),
            "{}",
            c.text
        );
        assert_eq!(setscheduler(&t.root(), "SCHED_FIFO", 1, libc::ESRCH), None);
    }
}

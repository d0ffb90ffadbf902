//! RT bandwidth: RT group scheduling (`CONFIG_RT_GROUP_SCHED`, the cgroup v1 `cpu`
//! controller's `cpu.rt_runtime_us`/`cpu.rt_period_us`) and the SCHED_DEADLINE
//! bandwidth that `kernel.sched_rt_runtime_us` must leave room for.
//!
//! What the kernel enforces (kernel/sched/rt.c `tg_rt_schedulable()`,
//! kernel/sched/deadline.c `sched_dl_global_validate()`,
//! Documentation/scheduler/sched-rt-group.rst):
//! - a SCHED_FIFO/RR task cannot join, or be made real-time in, a group whose
//!   `cpu.rt_runtime_us` is 0 (EPERM) while RT throttling is on (`sched_rt_runtime_us`
//!   ≠ −1); a new group starts with 0;
//! - writing `sched_rt_runtime_us` fails with EINVAL when any group's share
//!   (runtime / period) is above the new global share — the root group keeps the
//!   950000 µs it booted with, so on such kernels the global value cannot go below it
//!   until the root group's `cpu.rt_runtime_us` is lowered first;
//! - it fails with EBUSY when the admitted SCHED_DEADLINE bandwidth of a root domain
//!   (deadline tasks and, since Linux 6.12, the fair server's 50 ms per 1 s on every
//!   CPU) is above the new share × its CPUs.
//!
//! Shares are compared as the kernel computes them: `to_ratio(period, runtime) =
//! (runtime << 20) / period`, in ns.

use super::{cgroup_dir, v1_mount_point, Cause};
use crate::sys::SysRoot;

/// The kernel's bandwidth unit, `BW_UNIT = 1 << BW_SHIFT` (kernel/sched/sched.h).
pub const BW_UNIT: u64 = 1 << 20;

/// The kernel's `to_ratio(period, runtime)`: the share of `runtime_us` per `period_us`
/// in units of 1/[`BW_UNIT`]; `None` runtime (−1, no limit) is the whole unit.
pub fn to_ratio(period_us: u64, runtime_us: Option<u64>) -> u64 {
    match runtime_us {
        None => BW_UNIT,
        Some(_) if period_us == 0 => 0,
        Some(r) => ((r * 1000) << 20) / (period_us * 1000),
    }
}

/// One group's RT bandwidth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtGroup {
    /// The group's directory, e.g. `/sys/fs/cgroup/cpu/rt`.
    pub dir: String,
    /// `cpu.rt_runtime_us` (−1: unlimited).
    pub runtime_us: i64,
    /// `cpu.rt_period_us`.
    pub period_us: u64,
}

impl RtGroup {
    /// Reads the group in `dir`; `None` without the files (no RT group scheduling).
    pub fn read(root: &SysRoot, dir: &str) -> Option<RtGroup> {
        let num = |f: &str| root.read_trim(&format!("{dir}/{f}")).ok()?.parse().ok();
        Some(RtGroup {
            dir: dir.to_string(),
            runtime_us: num("cpu.rt_runtime_us")?,
            period_us: num("cpu.rt_period_us")? as u64,
        })
    }

    /// The group's share as the kernel compares it.
    pub fn ratio(&self) -> u64 {
        to_ratio(self.period_us, u64::try_from(self.runtime_us).ok())
    }
}

/// The calling thread's RT group, when the kernel schedules RT groups.
pub fn of_thread(root: &SysRoot) -> Option<RtGroup> {
    RtGroup::read(root, &cgroup_dir(root, "cpu", false)?)
}

/// Every group of the `cpu` hierarchy (the top first), up to 10000 directories.
pub fn all(root: &SysRoot) -> Vec<RtGroup> {
    let Some(top) = v1_mount_point(root, "cpu") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut dirs = vec![top];
    while let Some(d) = dirs.pop() {
        let Some(g) = RtGroup::read(root, &d) else {
            continue;
        };
        out.push(g);
        if out.len() >= 10_000 {
            break;
        }
        let mut children: Vec<String> = root
            .list_dir(&d)
            .unwrap_or_default()
            .into_iter()
            .map(|n| format!("{d}/{n}"))
            .filter(|p| root.path(p).is_dir())
            .collect();
        children.sort();
        children.reverse();
        dirs.extend(children);
    }
    out
}

/// `kernel.sched_rt_runtime_us` and `sched_rt_period_us` (µs).
pub fn global(root: &SysRoot) -> Option<(i64, u64)> {
    let n = |k: &str| {
        root.read_trim(&format!("/proc/sys/kernel/{k}"))
            .ok()?
            .parse::<i64>()
            .ok()
    };
    Some((n("sched_rt_runtime_us")?, n("sched_rt_period_us")? as u64))
}

/// Why writing `runtime_us` to `sched_rt_runtime_us` (period `period_us`) is refused
/// with EINVAL: the group whose share is largest and above the new global share, with
/// the numbers and the value its `cpu.rt_runtime_us` must be lowered to. `None` when
/// no group stands in the way (or the kernel has no RT group scheduling).
pub fn global_refused_by_group(root: &SysRoot, runtime_us: i64, period_us: u64) -> Option<Cause> {
    let want = to_ratio(period_us, u64::try_from(runtime_us).ok());
    let worst = all(root).into_iter().max_by_key(RtGroup::ratio)?;
    if worst.ratio() <= want {
        return None;
    }
    let fit =
        (runtime_us.max(0) as u128 * worst.period_us as u128 / period_us.max(1) as u128) as u64;
    Some(Cause::new(
        "cpu.rt_runtime_us",
        format!(
            "RT group scheduling: cgroup {} holds cpu.rt_runtime_us = {} of cpu.rt_period_us = {} ({}), more than the {runtime_us} of {period_us} µs ({}) asked for, and the kernel refuses (EINVAL) a global RT runtime below any group's; lower {}/cpu.rt_runtime_us to {fit} or less first (its child groups before it)",
            worst.dir,
            worst.runtime_us,
            worst.period_us,
            percent(worst.ratio()),
            percent(want),
            worst.dir
        ),
    ))
}

/// A share for messages: `95.0 %`.
fn percent(ratio: u64) -> String {
    format!("{:.1} %", ratio as f64 * 100.0 / BW_UNIT as f64)
}

/// The admitted SCHED_DEADLINE bandwidth per root domain (`dl_bw->total_bw`, largest
/// over the CPUs) from the scheduler's debug file, when debugfs is mounted and readable.
pub fn dl_total_bw(root: &SysRoot) -> Option<u64> {
    let text = root.read("/sys/kernel/debug/sched/debug").ok()?;
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == ".dl_bw->total_bw")
                .then(|| v.trim().parse::<u64>().ok())
                .flatten()
        })
        .max()
}

/// The fair server's default reservation since Linux 6.12: 50 ms every 1 s on each CPU
/// (kernel/sched/fair.c `fair_server_init()`, `dl_server_apply_params(…, 50 ms, 1 s)`).
pub const FAIR_SERVER_RUNTIME_US: u64 = 50_000;
/// Its period.
pub const FAIR_SERVER_PERIOD_US: u64 = 1_000_000;

/// Whether the kernel has the fair server (Linux 6.12 and later, or its debugfs
/// directory `/sys/kernel/debug/sched/fair_server` is there): it stops a SCHED_FIFO
/// task that holds a CPU while fair tasks wait, even with RT throttling off.
pub fn has_fair_server(root: &SysRoot) -> bool {
    root.exists("/sys/kernel/debug/sched/fair_server") || release_at_least(root, 6, 12)
}

/// Whether the kernel release (`/proc/sys/kernel/osrelease`) is at least `major.minor`.
fn release_at_least(root: &SysRoot, major: u32, minor: u32) -> bool {
    let Ok(r) = root.read_trim("/proc/sys/kernel/osrelease") else {
        return false;
    };
    let mut it = r.split(|c: char| !c.is_ascii_digit());
    let (Some(a), Some(b)) = (it.next(), it.next()) else {
        return false;
    };
    (a.parse().unwrap_or(0), b.parse().unwrap_or(0)) >= (major, minor)
}

/// Why writing `runtime_us`/`period_us` is (or would be) refused with EBUSY by the
/// SCHED_DEADLINE bandwidth of `cpus` CPUs. With debugfs, from the kernel's admitted
/// total (`certain` is then true); otherwise from the fair server's default on Linux
/// ≥ 6.12, a lower bound the fair server's debugfs knobs may have changed.
pub fn global_refused_by_deadline(
    root: &SysRoot,
    runtime_us: i64,
    period_us: u64,
    cpus: u64,
) -> Option<(Cause, bool)> {
    let Ok(runtime) = u64::try_from(runtime_us) else {
        return None;
    };
    let new_bw = to_ratio(period_us, Some(runtime));
    let (total, certain, source) = match dl_total_bw(root) {
        Some(t) => (t, true, "dl_bw->total_bw in /sys/kernel/debug/sched/debug".to_string()),
        None if release_at_least(root, 6, 12) => (
            cpus * to_ratio(FAIR_SERVER_PERIOD_US, Some(FAIR_SERVER_RUNTIME_US)),
            false,
            format!(
                "at least the fair server's default {FAIR_SERVER_RUNTIME_US} µs per {FAIR_SERVER_PERIOD_US} µs on each of {cpus} CPUs (Linux ≥ 6.12; debugfs not readable for the exact total)"
            ),
        ),
        None => return None,
    };
    if new_bw * cpus >= total {
        return None;
    }
    Some((
        Cause::new(
            "SCHED_DEADLINE bandwidth",
            format!(
                "SCHED_DEADLINE bandwidth: {total}/{BW_UNIT} is admitted on the root domain ({source}), more than {runtime_us} of {period_us} µs × {cpus} CPUs = {}/{BW_UNIT}, and the kernel refuses (EBUSY) an RT runtime that leaves deadline tasks and the fair server less; keep sched_rt_runtime_us at {} µs or more",
                new_bw * cpus,
                (total.div_ceil(cpus.max(1)) as u128 * period_us as u128).div_ceil(BW_UNIT as u128)
            ),
        ),
        certain,
    ))
}

/// The number of online CPUs (`/sys/devices/system/cpu/online`), at least 1.
pub fn online_cpus(root: &SysRoot) -> u64 {
    root.read("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| crate::cpuset::CpuSet::parse_list(&t, crate::cpuset::MAX_CPU_IDS).ok())
        .map_or(1, |s| s.len().max(1) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::refusal::tree::Tree;

    fn rt_tree() -> Tree {
        let t = Tree::new("rtgroup");
        t.file(
            "/proc/self/mountinfo",
            "33 31 0:30 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
        )
        .file("/proc/thread-self/cgroup", "1:cpu:/rt\n")
        .file("/sys/fs/cgroup/cpu/cpu.rt_runtime_us", "950000\n")
        .file("/sys/fs/cgroup/cpu/cpu.rt_period_us", "1000000\n")
        .file("/sys/fs/cgroup/cpu/rt/cpu.rt_runtime_us", "0\n")
        .file("/sys/fs/cgroup/cpu/rt/cpu.rt_period_us", "1000000\n")
        .file("/proc/sys/kernel/osrelease", "6.18.44-fc\n")
        .file("/sys/devices/system/cpu/online", "0-1\n");
        t
    }

    #[test]
    fn the_root_groups_runtime_bounds_the_global_one() {
        let t = rt_tree();
        let r = t.root();
        assert_eq!(of_thread(&r).unwrap().runtime_us, 0);
        assert_eq!(all(&r).len(), 2);
        let c = global_refused_by_group(&r, 900_000, 1_000_000).unwrap();
        assert_eq!(c.name, "cpu.rt_runtime_us");
        assert!(
            c.text.contains("cgroup /sys/fs/cgroup/cpu holds cpu.rt_runtime_us = 950000 of cpu.rt_period_us = 1000000 (95.0 %)")
                && c.text.contains("to 900000 or less"),
            "{}",
            c.text
        );
        assert_eq!(global_refused_by_group(&r, 950_000, 1_000_000), None);
        assert_eq!(global_refused_by_group(&r, -1, 1_000_000), None);
        // A group with a longer period: the share is what counts.
        t.file("/sys/fs/cgroup/cpu/rt/cpu.rt_runtime_us", "1900000\n")
            .file("/sys/fs/cgroup/cpu/rt/cpu.rt_period_us", "2000000\n");
        assert_eq!(global_refused_by_group(&r, 950_000, 1_000_000), None);
    }

    #[test]
    fn deadline_bandwidth_as_this_kernel_counts_it() {
        // Measured on this machine (2 CPUs, Linux 6.18): total_bw 104856, 50000 µs
        // accepted, 49999 µs refused with EBUSY.
        let t = rt_tree();
        let r = t.root();
        assert!(global_refused_by_deadline(&r, 50_000, 1_000_000, 2).is_none());
        let (c, certain) = global_refused_by_deadline(&r, 49_999, 1_000_000, 2).unwrap();
        assert!(!certain && c.text.contains("fair server"), "{}", c.text);
        assert!(c.text.contains("at 50000 µs or more"), "{}", c.text);
        t.file(
            "/sys/kernel/debug/sched/debug",
            "dl_rq[0]:\n  .dl_bw->bw                     : 996147\n  .dl_bw->total_bw               : 104856\n",
        );
        let (c, certain) = global_refused_by_deadline(&r, 49_999, 1_000_000, 2).unwrap();
        assert!(certain && c.text.contains("104856/1048576"), "{}", c.text);
        assert!(global_refused_by_deadline(&r, 50_000, 1_000_000, 2).is_none());
        assert_eq!(online_cpus(&r), 2);
        // Before the fair server (6.12) and without debugfs nothing is known.
        let old = Tree::new("rtgroup-old");
        old.file("/proc/sys/kernel/osrelease", "6.6.1\n");
        assert!(global_refused_by_deadline(&old.root(), 0, 1_000_000, 2).is_none());
    }
}

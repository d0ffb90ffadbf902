//! The system snapshot of a diagnostics bundle, read through [`SysRoot`] with no tools:
//! CPU sets, IRQ affinities and counts, softirqs, RT throttling and the other sysctls
//! rtbench cares about, cpufreq and cpuidle state, real-time tasks, irqbalance, and the
//! kernel log (`/dev/kmsg`). Each part is parsed into a few facts for the findings and
//! kept as text for the bundle.
//!
//! Sources: Documentation/core-api/irq/irq-affinity.rst (`/proc/irq/N/*`),
//! Documentation/admin-guide/pm/cpufreq.rst and cpuidle.rst (sysfs layout, read by
//! [`crate::sys::power`]),
//! Documentation/scheduler/sched-rt-group.rst (`sched_rt_*`), proc(5)
//! (`/proc/PID/stat` fields 40 `rt_priority` and 41 `policy`),
//! Documentation/ABI/testing/dev-kmsg (`/dev/kmsg` records).

use crate::cpuset::CpuSet;
use crate::sys::cpus::CpuTopology;
use crate::sys::power;
use crate::sys::SysRoot;
use std::fmt::Write;

/// Sysctls shown (and RT throttling read from).
pub const SYSCTLS: &[&str] = &[
    "kernel/sched_rt_runtime_us",
    "kernel/sched_rt_period_us",
    "kernel/timer_migration",
    "kernel/printk",
    "kernel/nmi_watchdog",
    "kernel/watchdog",
    "kernel/numa_balancing",
    "vm/overcommit_memory",
    "vm/stat_interval",
    "vm/swappiness",
];

/// One numbered IRQ line of `/proc/interrupts` with its affinity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Irq {
    /// The IRQ number.
    pub irq: u32,
    /// Counts per CPU column, in column order.
    pub counts: Vec<(usize, u64)>,
    /// The rest of the line: chip, hwirq, name.
    pub name: String,
    /// `/proc/irq/N/smp_affinity_list`.
    pub affinity: String,
    /// `/proc/irq/N/effective_affinity_list` (empty if the kernel has none).
    pub effective: String,
}

/// A task running under SCHED_FIFO, SCHED_RR or SCHED_DEADLINE.
#[derive(Debug, Clone, PartialEq)]
pub struct RtTask {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// `comm`.
    pub comm: String,
    /// `FIFO`, `RR` or `DEADLINE`.
    pub policy: &'static str,
    /// Real-time priority.
    pub priority: u32,
    /// `Cpus_allowed_list`.
    pub cpus: String,
    /// A kernel thread (`PF_KTHREAD`: migration, watchdog, irq threads, ktimers …).
    pub kernel: bool,
    /// CPU time since it started over the time since it started, percent of one CPU
    /// (proc(5) `utime`, `stime`, `starttime` and `/proc/uptime`).
    pub cpu_percent: f64,
}

/// One cpuidle state of one CPU (read by [`crate::sys::power`]).
pub use crate::sys::power::IdleState;

/// What the snapshot found.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The CPU sets.
    pub topo: Option<CpuTopology>,
    /// Numbered IRQs.
    pub irqs: Vec<Irq>,
    /// `(name, value)` of [`SYSCTLS`] that exist.
    pub sysctls: Vec<(String, String)>,
    /// `(policy, cpus, governor)` of each cpufreq policy.
    pub governors: Vec<(String, String, String)>,
    /// cpuidle states.
    pub idle: Vec<IdleState>,
    /// Real-time tasks.
    pub rt_tasks: Vec<RtTask>,
    /// irqbalance's pid, if it runs.
    pub irqbalance: Option<u32>,
    /// The kernel log, one record per line (`[seconds since boot] [wall-clock time]
    /// message`).
    pub kernel_log: String,
    /// The kernel log's records with their times.
    pub kernel_lines: Vec<crate::explain::counters::KernelLine>,
    /// Parts that could not be read: `what: why`.
    pub missing: Vec<String>,
}

/// Reads the snapshot below `root`, adding its files to `files` as `(name, text)`.
pub fn collect(root: &SysRoot, files: &mut Vec<(String, String)>) -> Snapshot {
    let mut s = Snapshot::default();
    let mut copy = |s: &mut Snapshot, path: &str, name: &str| match root.read(path) {
        Ok(t) => {
            files.push((name.to_string(), t.clone()));
            Some(t)
        }
        Err(e) => {
            s.missing.push(format!("{path}: {e}"));
            None
        }
    };
    for (path, name) in [
        ("/proc/cmdline", "system/cmdline.txt"),
        ("/proc/version", "system/version.txt"),
        ("/etc/os-release", "system/os-release.txt"),
        ("/proc/meminfo", "system/meminfo.txt"),
        ("/proc/loadavg", "system/loadavg.txt"),
        ("/proc/uptime", "system/uptime.txt"),
        ("/proc/softirqs", "system/softirqs.txt"),
    ] {
        copy(&mut s, path, name);
    }
    let interrupts = copy(&mut s, "/proc/interrupts", "system/interrupts.txt");
    let topo = CpuTopology::read(root);
    files.push(("system/cpus.txt".into(), cpus_text(root, &topo)));
    s.irqs = interrupts.map_or_else(Vec::new, |t| irqs(root, &t));
    files.push(("system/irq-affinity.txt".into(), irq_text(root, &s.irqs)));
    let mut sysctl = String::new();
    for k in SYSCTLS {
        if let Ok(v) = root.read_trim(&format!("/proc/sys/{k}")) {
            let _ = writeln!(sysctl, "{} = {v}", k.replace('/', "."));
            s.sysctls.push((k.replace('/', "."), v));
        }
    }
    files.push(("system/sysctl.txt".into(), sysctl));
    let (freq, governors) = cpufreq(root);
    s.governors = governors;
    files.push(("system/cpufreq.txt".into(), freq));
    let (idle_text, idle) = cpuidle(root, &topo);
    s.idle = idle;
    files.push(("system/cpuidle.txt".into(), idle_text));
    s.rt_tasks = rt_tasks(root);
    let mut rt = String::from("pid tid policy priority cpus cpu% kernel comm\n");
    for t in &s.rt_tasks {
        let _ = writeln!(
            rt,
            "{} {} {} {} {} {:.1} {} {}",
            t.pid,
            t.tid,
            t.policy,
            t.priority,
            t.cpus,
            t.cpu_percent,
            if t.kernel { "kthread" } else { "user" },
            t.comm
        );
    }
    files.push(("system/rt-tasks.txt".into(), rt));
    s.irqbalance = crate::tune::irq::find_process(root, "irqbalance");
    match kernel_log(root) {
        Ok((log, lines)) => {
            files.push(("system/kernel-log.txt".into(), log.clone()));
            s.kernel_log = log;
            s.kernel_lines = lines;
        }
        Err(e) => s.missing.push(format!("/dev/kmsg: {e}")),
    }
    if let Some((text, source)) = crate::sys::info::kernel_config(root, &uname_release()) {
        files.push((
            "system/kernel-config.txt".into(),
            format!("# from {source}\n{text}"),
        ));
    } else {
        s.missing
            .push("kernel configuration: neither /proc/config.gz nor /boot/config-*".into());
    }
    s.topo = Some(topo);
    s
}

fn uname_release() -> String {
    nix::sys::utsname::uname()
        .map(|u| u.release().to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn cpus_text(root: &SysRoot, topo: &CpuTopology) -> String {
    let mut t = String::new();
    for f in [
        "possible",
        "present",
        "online",
        "offline",
        "isolated",
        "nohz_full",
    ] {
        let v = match root.read_trim(&format!("/sys/devices/system/cpu/{f}")) {
            Ok(v) if v.is_empty() => "none".to_string(),
            Ok(v) => v,
            Err(e) => format!("({e})"),
        };
        let _ = writeln!(t, "{f:<12} {v}");
    }
    let _ = writeln!(t, "{:<12} {}", "housekeeping", topo.housekeeping());
    for (label, path) in [
        (
            "cgroup root cpuset.cpus.effective",
            "/sys/fs/cgroup/cpuset.cpus.effective",
        ),
        (
            "cgroup root cpuset.cpus.isolated",
            "/sys/fs/cgroup/cpuset.cpus.isolated",
        ),
    ] {
        if let Ok(v) = root.read_trim(path) {
            let _ = writeln!(t, "{label}: {v}");
        }
    }
    // The CPUs rtbench itself may run on (its cgroup cpuset and affinity), in the
    // column layout of the lines above.
    if let Ok(st) = root.read("/proc/self/status") {
        if let Some(v) = st
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        {
            let _ = writeln!(
                t,
                "{:<12} {} (rtbench's Cpus_allowed_list)",
                "allowed",
                v.trim()
            );
        }
    }
    t
}

/// The numbered IRQs of `/proc/interrupts` (first line: the CPU columns).
fn irqs(root: &SysRoot, text: &str) -> Vec<Irq> {
    let mut lines = text.lines();
    let cols: Vec<usize> = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|c| c.strip_prefix("CPU")?.parse().ok())
        .collect();
    let mut out = Vec::new();
    for line in lines {
        let Some((num, rest)) = line.trim_start().split_once(':') else {
            continue;
        };
        let Ok(irq) = num.trim().parse::<u32>() else {
            continue; // NMI, LOC, RES, …: per-CPU, not movable
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let n = words
            .iter()
            .take(cols.len())
            .take_while(|w| w.parse::<u64>().is_ok())
            .count();
        let counts = cols
            .iter()
            .zip(&words[..n])
            .map(|(&c, w)| (c, w.parse().unwrap_or(0)))
            .collect();
        let read = |f: &str| {
            root.read_trim(&format!("/proc/irq/{irq}/{f}"))
                .unwrap_or_default()
        };
        out.push(Irq {
            irq,
            counts,
            name: words[n..].join(" "),
            affinity: read("smp_affinity_list"),
            effective: read("effective_affinity_list"),
        });
    }
    out
}

fn irq_text(root: &SysRoot, irqs: &[Irq]) -> String {
    let mut t = format!(
        "default_smp_affinity {}\nirq affinity effective name\n",
        root.read_trim("/proc/irq/default_smp_affinity")
            .unwrap_or_else(|e| format!("({e})"))
    );
    for i in irqs {
        let _ = writeln!(t, "{} {} {} {}", i.irq, i.affinity, i.effective, i.name);
    }
    t
}

/// The cpufreq policies as text, and `(policy, cpus, governor)`.
fn cpufreq(root: &SysRoot) -> (String, Vec<(String, String, String)>) {
    let mut t = String::new();
    let mut gov = Vec::new();
    let policies = power::cpufreq_policies(root);
    if policies.is_empty() {
        t.push_str("no cpufreq policies (no cpufreq driver)\n");
    }
    for p in policies {
        let read = |f: &str| p.read(root, f).unwrap_or_default();
        let _ = writeln!(
            t,
            "{}: cpus {} driver {} governor {} cur {} kHz (min {} max {}, hardware {}..{})",
            p.name,
            read("affected_cpus"),
            read("scaling_driver"),
            read("scaling_governor"),
            read("scaling_cur_freq"),
            read("scaling_min_freq"),
            read("scaling_max_freq"),
            read("cpuinfo_min_freq"),
            read("cpuinfo_max_freq"),
        );
        gov.push((
            p.name.clone(),
            read("affected_cpus"),
            read("scaling_governor"),
        ));
    }
    (t, gov)
}

/// cpuidle driver and every state of every online CPU.
fn cpuidle(root: &SysRoot, topo: &CpuTopology) -> (String, Vec<IdleState>) {
    let (driver, governor) = power::cpuidle_driver(root);
    let none = || "(none)".to_string();
    let mut t = format!(
        "driver {} governor {}\ncpu state name latency_us disabled usage time_us\n",
        driver.unwrap_or_else(none),
        governor.unwrap_or_else(none),
    );
    let mut states = Vec::new();
    for cpu in topo.online.iter() {
        for s in power::idle_states(root, cpu).unwrap_or_default() {
            let _ = writeln!(
                t,
                "{cpu} {} {} {} {} {} {}",
                s.state,
                s.name,
                s.latency_us,
                s.disabled() as u8,
                s.usage,
                s.time_us
            );
            states.push(s);
        }
    }
    (t, states)
}

/// Every thread with a real-time policy (`/proc/PID/task/TID/stat`).
fn rt_tasks(root: &SysRoot) -> Vec<RtTask> {
    let mut out = Vec::new();
    let hz = crate::sys::clock::clock_ticks_per_sec();
    let uptime_s: f64 = root
        .read("/proc/uptime")
        .ok()
        .and_then(|u| u.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    let pids = root.list_dir("/proc").unwrap_or_default();
    for pid in pids.iter().filter_map(|p| p.parse::<u32>().ok()) {
        let tids = root
            .list_dir(&format!("/proc/{pid}/task"))
            .unwrap_or_default();
        for tid in tids.iter().filter_map(|t| t.parse::<u32>().ok()) {
            let Ok(stat) = root.read(&format!("/proc/{pid}/task/{tid}/stat")) else {
                continue;
            };
            let Some(st) = crate::sys::sched::TaskStat::parse(&stat) else {
                continue;
            };
            let comm = st.comm.to_string();
            // rt_priority is field 40, policy field 41.
            let num = |field: usize| st.field::<u32>(field);
            let big = |field: usize| st.field::<u64>(field);
            // PF_KTHREAD (include/linux/sched.h).
            let kernel = big(9).is_some_and(|f| f & 0x0020_0000 != 0);
            let ran_s = (big(14).unwrap_or(0) + big(15).unwrap_or(0)) as f64 / hz;
            let alive_s = uptime_s - big(22).unwrap_or(0) as f64 / hz;
            let cpu_percent = if alive_s > 0.0 {
                (100.0 * ran_s / alive_s).min(100.0)
            } else {
                0.0
            };
            let policy = match st.field(41).and_then(crate::sys::sched::policy_name) {
                Some(p @ ("FIFO" | "RR" | "DEADLINE")) => p,
                _ => continue,
            };
            let cpus = root
                .read(&format!("/proc/{pid}/task/{tid}/status"))
                .ok()
                .and_then(|s| {
                    s.lines()
                        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                        .map(|v| v.trim().to_string())
                })
                .unwrap_or_default();
            out.push(RtTask {
                pid,
                tid,
                comm,
                policy,
                priority: num(40).unwrap_or(0),
                cpus,
                kernel,
                cpu_percent,
            });
        }
    }
    out
}

/// The kernel log ring buffer: `/dev/kmsg` read without blocking until it is empty,
/// each record as `[seconds since boot] [wall-clock time] message`, and the records
/// with their times (below a test root: the file as it is, each line a record). The
/// printk clock is close to CLOCK_MONOTONIC, so the wall-clock time (boot time +
/// seconds since boot) is approximate (Documentation/ABI/testing/dev-kmsg).
fn kernel_log(
    root: &SysRoot,
) -> std::io::Result<(String, Vec<crate::explain::counters::KernelLine>)> {
    use crate::explain::counters::{parse_kmsg, wall_offset_ns};
    let offset = wall_offset_ns();
    if !root.is_host() {
        // A test tree's file: records as the kernel gives them, or as `dmesg` prints
        // them (`[  12.345678] message`).
        let text = root.read("/dev/kmsg")?;
        let lines = text
            .lines()
            .filter_map(|l| parse_kmsg(l.as_bytes(), offset).or_else(|| dmesg_line(l, offset)))
            .collect();
        return Ok((text, lines));
    }
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open("/dev/kmsg")?;
    let mut out = String::new();
    let mut lines = Vec::new();
    crate::explain::counters::drain_kmsg(&mut f, usize::MAX, |rec| {
        if let Some(l) = parse_kmsg(rec, offset) {
            let us = l.mono_ns / 1000;
            let _ = writeln!(
                out,
                "[{:>5}.{:06}] [{}] {}",
                us / 1_000_000,
                us % 1_000_000,
                crate::date::iso_ms(l.wall_ns),
                l.text
            );
            lines.push(l);
        }
    })?;
    Ok((out, lines))
}

/// `[  12.345678] message` (dmesg's form) as a kernel log record.
fn dmesg_line(l: &str, wall_offset_ns: i64) -> Option<crate::explain::counters::KernelLine> {
    let (stamp, text) = l.strip_prefix('[')?.split_once(']')?;
    let secs: f64 = stamp.trim().parse().ok()?;
    let mono_ns = (secs * 1e9).round() as i64;
    Some(crate::explain::counters::KernelLine {
        mono_ns,
        wall_ns: mono_ns.saturating_add(wall_offset_ns),
        text: text.trim().to_string(),
    })
}

/// IRQ counts on `cpus`: `(irq, name, count)` of every numbered IRQ that fired there,
/// largest first.
pub fn irqs_on(irqs: &[Irq], cpus: &CpuSet) -> Vec<(u32, String, u64)> {
    let mut v: Vec<_> = irqs
        .iter()
        .map(|i| {
            let n: u64 = i
                .counts
                .iter()
                .filter(|(c, _)| cpus.contains(*c))
                .map(|(_, n)| n)
                .sum();
            (i.irq, i.name.clone(), n)
        })
        .filter(|(_, _, n)| *n > 0)
        .collect();
    v.sort_by_key(|x| std::cmp::Reverse(x.2));
    v
}

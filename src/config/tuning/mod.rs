//! `[tuning]`: the CPU partition and the knobs `rtbench tune` checks and changes.
//!
//! Nothing is changed unless a key asks for it; an empty `[tuning]` checks nothing.
//! Example (a 4-CPU board, CPUs 2-3 for the real-time work):
//!
//! ```toml
//! [tuning]
//! isolated = "2-3"              # cpu-list of possible CPUs (N = last possible); not the boot CPU 0
//! # housekeeping = "0-1"        # default: online CPUs minus isolated
//! require_preempt_rt = true
//! allow_unthrottled_rt = false  # needed for sched_rt_runtime_us = -1
//! # journal_dir = "/run/rtbench"
//!
//! [tuning.boot]                 # check-only: the kernel command line's effect
//! isolcpus = ["domain", "managed_irq"]
//! nohz_full = true
//! rcu_nocbs = true
//! irqaffinity = true
//!
//! [tuning.irq]
//! affinity = true               # move every movable IRQ to housekeeping CPUs
//! default_affinity = true       # /proc/irq/default_smp_affinity
//! exclude = [ 42 ]              # IRQ numbers left alone
//! irqbalance = "fail"           # "fail" | "warn" when irqbalance runs and would undo it
//!
//! [tuning.sysctl]
//! printk = 1                    # console_loglevel only (1..8)
//! overcommit_memory = 2         # refused unless CommitLimit covers Committed_AS, the
//! overcommit_ratio = 80         # largest process that may fork and the self-test
//! commit_headroom_pct = 0       # optional extra margin, % of Committed_AS
//! sched_rt_runtime_us = 950000
//! timer_migration = 0
//! stat_interval = 10
//!
//! [tuning.power]
//! governor = "performance"
//! cpuidle_max_latency_us = 10   # disable idle states whose exit latency is above
//! # cpuidle_cpus = "2-3"        # default: the isolated CPUs
//!
//! [tuning.memory]
//! thp = "never"                 # "never" | "madvise" | "always"
//!
//! [tuning.workqueue]
//! cpumask = true                # unbound workqueues on housekeeping CPUs
//! ```
//!
//! Sources of the semantics: the kernel's Documentation/admin-guide/kernel-parameters.txt
//! (cpu lists, `isolcpus=`, `nohz_full=`, `irqaffinity=`),
//! Documentation/admin-guide/sysctl/kernel.rst and vm.rst (printk, RT throttling,
//! overcommit), Documentation/admin-guide/pm/cpufreq.rst and cpuidle.rst; the items
//! that apply them are in src/tune/ (docs/ARCHITECTURE.md, "Where a knob is written").

mod raw;

pub use raw::TuningToml;

use super::Source;
use crate::cpuset::CpuSet;
use crate::error::ConfigError;
use crate::sys::cpus::CpuTopology;
use crate::tune::spec::{CommitReserve, TuningSpec, BOOT_CPU};
use std::path::PathBuf;
use toml::Spanned;

/// The [`CommitReserve`] of a self-test with `load` measuring on `threads` CPUs.
pub fn commit_reserve(load: Option<&crate::load::LoadSpec>, threads: usize) -> CommitReserve {
    let workers = load.map_or(&[][..], |l| &l.workers[..]);
    CommitReserve {
        load_bytes: workers
            .iter()
            .map(|w| match w {
                crate::load::Worker::Vm { bytes } => *bytes,
                _ => 0,
            })
            .sum(),
        load_procs: workers.len() as u64 + load.map_or(0, |l| l.cmd.is_some() as u64),
        threads: threads as u64,
        stack_bytes: crate::measure::thread_stack_mapping_bytes(),
    }
}

fn flag(v: &Option<Spanned<bool>>) -> bool {
    v.as_ref().is_some_and(|s| *s.get_ref())
}

fn ranged(
    src: &Source<'_>,
    v: &Option<Spanned<i64>>,
    key: &str,
    range: std::ops::RangeInclusive<i64>,
    expected: &str,
) -> Result<Option<i64>, ConfigError> {
    match v {
        None => Ok(None),
        Some(s) if range.contains(s.get_ref()) => Ok(Some(*s.get_ref())),
        Some(s) => Err(src.value_error(s.span(), key, format!("expected {expected}"))),
    }
}

fn cpu_list(
    src: &Source<'_>,
    v: &Spanned<String>,
    key: &str,
    topo: &CpuTopology,
) -> Result<CpuSet, ConfigError> {
    let set = CpuSet::parse_list(v.get_ref(), topo.nr_cpu_ids).map_err(|e| {
        src.value_error(
            v.span(),
            key,
            format!(
                "{e}; expected a cpu-list of online CPUs ({}) such as \"1\" or \"2-3\"",
                topo.online.to_list()
            ),
        )
    })?;
    let offline = set.difference(&topo.online);
    if !offline.is_empty() {
        return Err(src.value_error(
            v.span(),
            key,
            format!(
                "CPU {} is not online; expected CPUs within {}",
                offline.to_list(),
                topo.online.to_list()
            ),
        ));
    }
    Ok(set)
}

/// A boot-parameter CPU list (`isolated`, `housekeeping`): read as the kernel reads
/// `isolcpus=`/`irqaffinity=`, against the possible CPUs (`N` = the last possible CPU),
/// so a CPU that is offline now (hotplug, `maxcpus=`) can still be named.
fn boot_cpu_list(
    src: &Source<'_>,
    v: &Spanned<String>,
    key: &str,
    topo: &CpuTopology,
) -> Result<CpuSet, ConfigError> {
    topo.boot_list(v.get_ref()).map_err(|e| {
        src.value_error(
            v.span(),
            key,
            format!(
                "{e}; expected a cpu-list of possible CPUs ({}) such as \"1\" or \"2-3\"",
                topo.possible.to_list()
            ),
        )
    })
}

/// Validates `[tuning]` against the machine's CPUs (see [`TuningSpec`]).
pub fn resolve(
    t: &TuningToml,
    topo: &CpuTopology,
    src: &Source<'_>,
) -> Result<TuningSpec, ConfigError> {
    let (isolated, housekeeping) = partition(t, topo, src)?;
    let boot_isolcpus = boot_isolcpus(t, &isolated, src)?;
    let sysctl = sysctl(t, src)?;
    let (governor, cpuidle_max_latency_us, cpuidle_cpus) = power(t, topo, &isolated, src)?;
    let journal_dir = journal_dir(t, src)?;
    Ok(TuningSpec {
        nr_cpu_ids: topo.nr_cpu_ids,
        online: topo.online.clone(),
        isolated,
        housekeeping,
        require_preempt_rt: t.require_preempt_rt,
        journal_dir,
        boot_isolcpus,
        boot_nohz_full: flag(&t.boot.nohz_full),
        boot_rcu_nocbs: flag(&t.boot.rcu_nocbs),
        boot_irqaffinity: flag(&t.boot.irqaffinity),
        irq_affinity: flag(&t.irq.affinity),
        irq_default_affinity: flag(&t.irq.default_affinity),
        irq_exclude: t.irq.exclude.clone(),
        irqbalance: t.irq.irqbalance,
        printk: sysctl.printk.map(|v| v as u8),
        overcommit_memory: sysctl.overcommit_memory.map(|v| v as u8),
        overcommit_ratio: sysctl.overcommit_ratio.map(|v| v as u32),
        commit_headroom_pct: sysctl.commit_headroom_pct as u32,
        commit_reserve: CommitReserve::default(),
        sched_rt_runtime_us: sysctl.sched_rt_runtime_us,
        timer_migration: sysctl.timer_migration.map(|v| v as u8),
        stat_interval_s: sysctl.stat_interval.map(|v| v as u32),
        governor,
        cpuidle_max_latency_us: cpuidle_max_latency_us.map(|v| v as u32),
        cpuidle_cpus,
        thp: t.memory.thp,
        workqueue_cpumask: flag(&t.workqueue.cpumask),
    })
}

/// `tuning.isolated` and `tuning.housekeeping` (default: the online CPUs not
/// isolated), and every item that places work on CPUs asks for the partition.
fn partition(
    t: &TuningToml,
    topo: &CpuTopology,
    src: &Source<'_>,
) -> Result<(CpuSet, CpuSet), ConfigError> {
    let isolated = match &t.isolated {
        Some(v) => {
            let set = boot_cpu_list(src, v, "tuning.isolated", topo)?;
            if set.contains(BOOT_CPU) {
                return Err(src.value_error(
                    v.span(),
                    "tuning.isolated",
                    format!("the boot CPU {BOOT_CPU} cannot be isolated (the kernel keeps it for housekeeping); expected CPUs other than {BOOT_CPU}"),
                ));
            }
            set
        }
        None => CpuSet::new(),
    };
    let housekeeping = match &t.housekeeping {
        Some(v) => {
            let set = boot_cpu_list(src, v, "tuning.housekeeping", topo)?;
            let bad = |msg: String| src.value_error(v.span(), "tuning.housekeeping", msg);
            if set.is_empty() {
                return Err(bad(
                    "expected at least one CPU, including the boot CPU 0".into()
                ));
            }
            if !set.contains(BOOT_CPU) {
                return Err(bad(format!(
                    "expected a set that includes the boot CPU {BOOT_CPU}"
                )));
            }
            let both = set.intersection(&isolated);
            if !both.is_empty() {
                return Err(bad(format!(
                    "CPU {} is also in tuning.isolated; expected disjoint sets",
                    both.to_list()
                )));
            }
            set
        }
        None => topo.online.difference(&isolated),
    };
    // Items that place work on CPUs need to know the partition.
    let needs_partition = [
        (&t.boot.nohz_full, "tuning.boot.nohz_full"),
        (&t.boot.rcu_nocbs, "tuning.boot.rcu_nocbs"),
        (&t.boot.irqaffinity, "tuning.boot.irqaffinity"),
        (&t.irq.affinity, "tuning.irq.affinity"),
        (&t.irq.default_affinity, "tuning.irq.default_affinity"),
        (&t.workqueue.cpumask, "tuning.workqueue.cpumask"),
    ];
    for (v, key) in needs_partition {
        if let Some(s) = v.as_ref().filter(|s| *s.get_ref()) {
            if isolated.is_empty() {
                return Err(src.value_error(
                    s.span(),
                    key,
                    "needs tuning.isolated; expected a cpu-list like isolated = \"1\" in [tuning]",
                ));
            }
        }
    }
    Ok((isolated, housekeeping))
}

/// `tuning.boot.isolcpus`: its flags, each once; `domain` for an empty list (the
/// kernel's meaning); it needs `tuning.isolated`.
fn boot_isolcpus(
    t: &TuningToml,
    isolated: &CpuSet,
    src: &Source<'_>,
) -> Result<Option<Vec<String>>, ConfigError> {
    Ok(match &t.boot.isolcpus {
        Some(v) => {
            for f in v.get_ref() {
                if !["domain", "nohz", "managed_irq"].contains(&f.as_str()) {
                    return Err(src.value_error(
                        v.span(),
                        "tuning.boot.isolcpus",
                        format!("unknown flag \"{f}\"; expected flags from \"domain\", \"nohz\", \"managed_irq\""),
                    ));
                }
            }
            if isolated.is_empty() {
                return Err(src.value_error(
                    v.span(),
                    "tuning.boot.isolcpus",
                    "needs tuning.isolated; expected a cpu-list like isolated = \"1\" in [tuning]",
                ));
            }
            // The kernel's meaning: `isolcpus=1` (no flag) is `isolcpus=domain,1`
            // (Documentation/admin-guide/kernel-parameters.txt, "isolcpus="), so an
            // empty list checks `domain`; a check with no flag would check nothing.
            let mut flags: Vec<String> = Vec::new();
            for f in v.get_ref() {
                if !flags.contains(f) {
                    flags.push(f.clone());
                }
            }
            if flags.is_empty() {
                flags.push("domain".into());
            }
            Some(flags)
        }
        None => None,
    })
}

/// `[tuning.sysctl]`'s values, each in its range.
struct Sysctl {
    printk: Option<i64>,
    overcommit_memory: Option<i64>,
    overcommit_ratio: Option<i64>,
    commit_headroom_pct: i64,
    sched_rt_runtime_us: Option<i64>,
    timer_migration: Option<i64>,
    stat_interval: Option<i64>,
}

/// `[tuning.sysctl]`: each value in its range; no RT throttling (-1) only with
/// `allow_unthrottled_rt`.
fn sysctl(t: &TuningToml, src: &Source<'_>) -> Result<Sysctl, ConfigError> {
    let s = &t.sysctl;
    let printk = ranged(
        src,
        &s.printk,
        "tuning.sysctl.printk",
        1..=8,
        "a console log level 1..8 (1: only KERN_EMERG reaches the console)",
    )?;
    let overcommit_memory = ranged(
        src,
        &s.overcommit_memory,
        "tuning.sysctl.overcommit_memory",
        0..=2,
        "0 (heuristic), 1 (always) or 2 (strict)",
    )?;
    let overcommit_ratio = ranged(
        src,
        &s.overcommit_ratio,
        "tuning.sysctl.overcommit_ratio",
        1..=1000,
        "a percentage of RAM 1..1000",
    )?;
    let commit_headroom_pct = ranged(
        src,
        &s.commit_headroom_pct,
        "tuning.sysctl.commit_headroom_pct",
        0..=1000,
        "a percentage 0..1000",
    )?
    .unwrap_or(0);
    let sched_rt_runtime_us = ranged(
        src,
        &s.sched_rt_runtime_us,
        "tuning.sysctl.sched_rt_runtime_us",
        -1..=i32::MAX as i64,
        "-1 (no RT throttling) or a runtime in µs up to sched_rt_period_us",
    )?;
    if let (Some(-1), Some(v)) = (sched_rt_runtime_us, &s.sched_rt_runtime_us) {
        if !flag(&t.allow_unthrottled_rt) {
            return Err(src.value_error(v.span(), "tuning.sysctl.sched_rt_runtime_us",
                "no RT throttling lets a runaway SCHED_FIFO task hang the CPU; expected a runtime such as 950000, or allow_unthrottled_rt = true in [tuning]"));
        }
    }
    let timer_migration = ranged(
        src,
        &s.timer_migration,
        "tuning.sysctl.timer_migration",
        0..=1,
        "0 or 1",
    )?;
    let stat_interval = ranged(
        src,
        &s.stat_interval,
        "tuning.sysctl.stat_interval",
        1..=3600,
        "seconds 1..3600",
    )?;
    Ok(Sysctl {
        printk,
        overcommit_memory,
        overcommit_ratio,
        commit_headroom_pct,
        sched_rt_runtime_us,
        timer_migration,
        stat_interval,
    })
}

/// `[tuning.power]`: the governor's name, the cpuidle latency limit and the CPUs it
/// applies to (default: the isolated ones; it needs some).
#[allow(clippy::type_complexity)]
fn power(
    t: &TuningToml,
    topo: &CpuTopology,
    isolated: &CpuSet,
    src: &Source<'_>,
) -> Result<(Option<String>, Option<i64>, CpuSet), ConfigError> {
    let p = &t.power;
    let governor = match &p.governor {
        Some(g)
            if g.get_ref().is_empty()
                || !g
                    .get_ref()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_') =>
        {
            return Err(src.value_error(
                g.span(),
                "tuning.power.governor",
                "expected a governor name such as \"performance\"",
            ));
        }
        Some(g) => Some(g.get_ref().clone()),
        None => None,
    };
    let cpuidle_max_latency_us = ranged(
        src,
        &p.cpuidle_max_latency_us,
        "tuning.power.cpuidle_max_latency_us",
        0..=u32::MAX as i64,
        "µs 0 or more",
    )?;
    let cpuidle_cpus = match &p.cpuidle_cpus {
        Some(v) => cpu_list(src, v, "tuning.power.cpuidle_cpus", topo)?,
        None => isolated.clone(),
    };
    if let (Some(_), Some(v)) = (cpuidle_max_latency_us, &p.cpuidle_max_latency_us) {
        if cpuidle_cpus.is_empty() {
            return Err(src.value_error(
                v.span(),
                "tuning.power.cpuidle_max_latency_us",
                "needs CPUs; expected tuning.isolated or tuning.power.cpuidle_cpus",
            ));
        }
    }
    Ok((governor, cpuidle_max_latency_us, cpuidle_cpus))
}

/// `tuning.journal_dir`: an absolute directory that can be named (default
/// `/run/rtbench`).
fn journal_dir(t: &TuningToml, src: &Source<'_>) -> Result<PathBuf, ConfigError> {
    if let Some(d) = &t.journal_dir {
        src.nameable(d, "tuning.journal_dir")?;
    }
    Ok(match &t.journal_dir {
        Some(d) if !d.get_ref().starts_with('/') => {
            return Err(src.value_error(
                d.span(),
                "tuning.journal_dir",
                "expected an absolute directory such as \"/run/rtbench\"",
            ));
        }
        Some(d) => PathBuf::from(d.get_ref()),
        None => PathBuf::from("/run/rtbench"),
    })
}

#[cfg(test)]
mod tests;

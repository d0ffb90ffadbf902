//! The validated `[tuning]`: what `rtbench tune` and the self-test check and change,
//! with CPU sets resolved against this machine and values in range. The TOML schema,
//! its validation into these types and the example are in `src/config/tuning/`
//! (`config::tuning::resolve`); the items that apply them are the other files here.

use crate::cpuset::CpuSet;
use serde::Deserialize;
use std::path::PathBuf;

/// The boot CPU: the kernel forces it back into housekeeping, so it can never be isolated.
pub const BOOT_CPU: usize = 0;

/// What to do when irqbalance runs and does not ban the isolated CPUs (it rewrites
/// every IRQ's affinity on each rebalance, default every 10 s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IrqbalancePolicy {
    /// Refuse to move IRQs (status `failed`, nothing written).
    #[default]
    Fail,
    /// Move them anyway and say so in the report.
    Warn,
}

/// Transparent huge pages mode (`/sys/kernel/mm/transparent_hugepage/enabled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Thp {
    /// THP for every anonymous mapping (compaction stalls: bad for latency).
    Always,
    /// Only for `madvise(MADV_HUGEPAGE)` regions.
    Madvise,
    /// Off.
    Never,
}

impl Thp {
    /// The word the kernel file uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Thp::Always => "always",
            Thp::Madvise => "madvise",
            Thp::Never => "never",
        }
    }
}

/// What the self-test commits beside the rest of the system while it runs, for the
/// `overcommit_memory = 2` guard (Documentation/mm/overcommit-accounting.rst: every
/// private writable mapping and every fork counts against CommitLimit).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitReserve {
    /// Bytes the built-in vm workers map (the sum of their `vm:N:SIZE`).
    pub load_bytes: u64,
    /// Load processes: each is rtbench forked and re-executed.
    pub load_procs: u64,
    /// Measuring threads (one per measured CPU).
    pub threads: u64,
    /// Stack bytes of each measuring thread.
    pub stack_bytes: u64,
}

/// The validated `[tuning]`: CPU sets resolved against this machine, values in range.
/// Every `Option`/`false` means "leave alone".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TuningSpec {
    /// Number of possible CPU ids (mask width).
    pub nr_cpu_ids: usize,
    /// CPUs reserved for real-time work (empty when not configured); possible CPUs,
    /// offline ones allowed (a boot parameter's list).
    pub isolated: CpuSet,
    /// CPUs for everything else: IRQs, unbound workqueues (online − isolated by
    /// default); possible CPUs, offline ones allowed.
    pub housekeeping: CpuSet,
    /// The CPUs online when the configuration was read: runtime masks
    /// (`smp_affinity`, `default_smp_affinity`) are compared over these.
    pub online: CpuSet,
    /// Fail the check when the kernel is not PREEMPT_RT.
    pub require_preempt_rt: bool,
    /// Directory of the lock and the journal (default `/run/rtbench`).
    pub journal_dir: PathBuf,
    /// `isolcpus=` flags expected on the command line (`None`: not checked).
    pub boot_isolcpus: Option<Vec<String>>,
    /// Expect `nohz_full=` on the isolated CPUs.
    pub boot_nohz_full: bool,
    /// Expect `rcu_nocbs=` on the isolated CPUs.
    pub boot_rcu_nocbs: bool,
    /// Expect the default IRQ affinity (`irqaffinity=`) within housekeeping.
    pub boot_irqaffinity: bool,
    /// Move IRQs to housekeeping CPUs.
    pub irq_affinity: bool,
    /// Set `/proc/irq/default_smp_affinity` to housekeeping.
    pub irq_default_affinity: bool,
    /// IRQ numbers not to move.
    pub irq_exclude: Vec<u32>,
    /// What a running irqbalance means.
    pub irqbalance: IrqbalancePolicy,
    /// `kernel.printk` console_loglevel, 1..=8.
    pub printk: Option<u8>,
    /// `vm.overcommit_memory` mode (0, 1, 2).
    pub overcommit_memory: Option<u8>,
    /// `vm.overcommit_ratio` in percent.
    pub overcommit_ratio: Option<u32>,
    /// Mode 2 guard, an extra margin on top of the computed one: this percentage of
    /// Committed_AS (default 0).
    pub commit_headroom_pct: u32,
    /// Mode 2 guard: what the self-test of this configuration adds to the committed
    /// memory while it runs (its load, threads and own memory); filled in by
    /// [`crate::config::parse`] from `[load]` and `[cyclic]`.
    pub commit_reserve: CommitReserve,
    /// `kernel.sched_rt_runtime_us` (−1 = no RT throttling, only with the opt-in).
    pub sched_rt_runtime_us: Option<i64>,
    /// `kernel.timer_migration` (0 or 1).
    pub timer_migration: Option<u8>,
    /// `vm.stat_interval` in seconds.
    pub stat_interval_s: Option<u32>,
    /// cpufreq governor for every policy.
    pub governor: Option<String>,
    /// Disable idle states with exit latency above this many µs, on `cpuidle_cpus`.
    pub cpuidle_max_latency_us: Option<u32>,
    /// CPUs whose idle states are limited.
    pub cpuidle_cpus: CpuSet,
    /// THP mode.
    pub thp: Option<Thp>,
    /// Restrict unbound workqueues to housekeeping CPUs.
    pub workqueue_cpumask: bool,
}

impl TuningSpec {
    /// Whether nothing at all is asked for.
    pub fn is_empty(&self) -> bool {
        !self.require_preempt_rt
            && self.boot_isolcpus.is_none()
            && !self.boot_nohz_full
            && !self.boot_rcu_nocbs
            && !self.boot_irqaffinity
            && !self.irq_affinity
            && !self.irq_default_affinity
            && self.printk.is_none()
            && self.overcommit_memory.is_none()
            && self.overcommit_ratio.is_none()
            && self.sched_rt_runtime_us.is_none()
            && self.timer_migration.is_none()
            && self.stat_interval_s.is_none()
            && self.governor.is_none()
            && self.cpuidle_max_latency_us.is_none()
            && self.thp.is_none()
            && !self.workqueue_cpumask
    }
}

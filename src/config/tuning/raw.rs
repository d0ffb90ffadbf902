//! `[tuning]` as written: every value that is validated is a [`Spanned`], so an
//! error names its line. Validation is in the parent module.

use crate::tune::spec::{IrqbalancePolicy, Thp};
use serde::Deserialize;
use toml::Spanned;

/// `[tuning]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuningToml {
    pub(super) isolated: Option<Spanned<String>>,
    pub(super) housekeeping: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) require_preempt_rt: bool,
    pub(super) allow_unthrottled_rt: Option<Spanned<bool>>,
    pub(super) journal_dir: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) boot: BootToml,
    #[serde(default)]
    pub(super) irq: IrqToml,
    #[serde(default)]
    pub(super) sysctl: SysctlToml,
    #[serde(default)]
    pub(super) power: PowerToml,
    #[serde(default)]
    pub(super) memory: MemoryToml,
    #[serde(default)]
    pub(super) workqueue: WorkqueueToml,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BootToml {
    pub(super) isolcpus: Option<Spanned<Vec<String>>>,
    pub(super) nohz_full: Option<Spanned<bool>>,
    pub(super) rcu_nocbs: Option<Spanned<bool>>,
    pub(super) irqaffinity: Option<Spanned<bool>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct IrqToml {
    pub(super) affinity: Option<Spanned<bool>>,
    pub(super) default_affinity: Option<Spanned<bool>>,
    #[serde(default)]
    pub(super) exclude: Vec<u32>,
    #[serde(default)]
    pub(super) irqbalance: IrqbalancePolicy,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SysctlToml {
    pub(super) printk: Option<Spanned<i64>>,
    pub(super) overcommit_memory: Option<Spanned<i64>>,
    pub(super) overcommit_ratio: Option<Spanned<i64>>,
    pub(super) commit_headroom_pct: Option<Spanned<i64>>,
    pub(super) sched_rt_runtime_us: Option<Spanned<i64>>,
    pub(super) timer_migration: Option<Spanned<i64>>,
    pub(super) stat_interval: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PowerToml {
    pub(super) governor: Option<Spanned<String>>,
    pub(super) cpuidle_max_latency_us: Option<Spanned<i64>>,
    pub(super) cpuidle_cpus: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MemoryToml {
    pub(super) thp: Option<Thp>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WorkqueueToml {
    pub(super) cpumask: Option<Spanned<bool>>,
}

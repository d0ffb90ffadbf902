//! The boot self-test: configuration → tuning → READY → measurement under load →
//! verdict → journal, results store, Prometheus → exit code. `app/selftest.rs` loads
//! the configuration; [`plan`] turns it into a [`SelftestPlan`], [`run::execute`] runs
//! it and [`crate::results::verdict::verdict`] judges it. docs/ARCHITECTURE.md has the
//! flow.

mod outputs;
pub mod record;
pub mod run;
mod unchecked;

use crate::config::condition::Measure;
use crate::config::explain::ExplainSection;
use crate::config::limits::LimitSet;
use crate::config::pair::{PairPlacement, PairSection};
use crate::config::{Located, TuningMode};
use crate::explain::explainer::ExplainSpec;
use crate::explain::SpikeKind;
use crate::measure::cyclic::CyclicSpec;
use crate::measure::pair::PairSpec;
use crate::measure::poll::{BucketSetting, PollSpec};
use crate::measure::{RunControl, ThreadSpec};
use crate::sys::clock::Clock;
use crate::sys::clock::NS_PER_US;
use crate::sys::cpus::{CpuTopology, Sharing};
use crate::sys::sched::Policy;
use std::path::PathBuf;
use std::time::Duration;

/// One test of the self-test, ready to run. Each runs through the one harness
/// (`measure::harness`) with the measuring code of its command: `rtbench cyclic`'s
/// threads or `rtbench pmq`/`rtbench pipe`'s pairs.
#[derive(Debug, Clone)]
pub enum TestPlan {
    /// `[cyclic]`: timer-wakeup latency, one thread per CPU.
    Cyclic(CyclicSpec),
    /// `[pmq]` or `[pipe]`: sender/receiver pairs.
    Pair(PairSpec),
    /// `[poll]`: busy-poll threads, one per CPU (`rtbench oslat`'s).
    Poll(PollSpec),
}

impl TestPlan {
    /// The test's name in results, limits and journal entries: `cyclic`, `pmq`, `pipe`.
    pub fn name(&self) -> &'static str {
        match self {
            TestPlan::Cyclic(_) => "cyclic",
            TestPlan::Pair(p) => crate::config::pair::kind_name(p.kind),
            TestPlan::Poll(_) => "poll",
        }
    }

    /// The measuring threads (cyclic) or pairs.
    pub fn threads(&self) -> &[ThreadSpec] {
        match self {
            TestPlan::Cyclic(c) => &c.threads,
            TestPlan::Pair(p) => &p.pairs,
            TestPlan::Poll(p) => &p.threads,
        }
    }

    /// Duration, process setup and reporting of the run.
    pub fn control(&self) -> &RunControl {
        match self {
            TestPlan::Cyclic(c) => &c.control,
            TestPlan::Pair(p) => &p.control,
            TestPlan::Poll(p) => &p.control,
        }
    }

    /// Mutable [`TestPlan::control`].
    pub fn control_mut(&mut self) -> &mut RunControl {
        match self {
            TestPlan::Cyclic(c) => &mut c.control,
            TestPlan::Pair(p) => &mut p.control,
            TestPlan::Poll(p) => &mut p.control,
        }
    }

    /// How long it measures.
    pub fn duration(&self) -> Duration {
        self.control().duration.unwrap_or_default()
    }

    /// The CPUs its threads are pinned to (empty for unpinned pairs).
    pub fn cpus(&self) -> crate::cpuset::CpuSet {
        self.threads().iter().filter_map(|t| t.cpu).collect()
    }

    /// `cyclic on CPUs 0-3 for 30s`, `pmq on CPUs 0-1 for 10s` (a pair per CPU),
    /// `pipe with 2 unpinned pairs for 10s`.
    pub fn describe(&self) -> String {
        let on = match self {
            TestPlan::Pair(p) if p.pairs.iter().all(|t| t.cpu.is_none()) => {
                format!("with {} unpinned pairs", p.pairs.len())
            }
            _ => format!("on CPUs {}", self.cpus()),
        };
        format!(
            "{} {on} for {}",
            self.name(),
            crate::duration::format(self.duration())
        )
    }
}

/// One condition of the self-test, ready to run: its tests under its load, judged
/// against its limits. A configuration without `[[condition]]` is one unnamed
/// condition.
#[derive(Debug, Clone)]
pub struct ConditionPlan {
    /// `[[condition]] name`; `None` for the one condition of a configuration without
    /// conditions (its outputs name none).
    pub name: Option<String>,
    /// The enabled tests, run one after the other under the same load: cyclic, pmq,
    /// pipe (empty: every test disabled, an unjudged run).
    pub tests: Vec<TestPlan>,
    /// Pass/fail limits.
    pub limits: LimitSet,
    /// The load as configured, for reports (empty: none).
    pub load_label: String,
    /// The load to run beside the measurement.
    pub load: Option<crate::load::LoadSpec>,
    /// The main thread or the load sharing a core with a measured CPU (a warning each).
    pub sharing: Vec<Sharing>,
    /// Every CPU a test measures (all online CPUs when a pair is unpinned).
    pub measured_cpus: crate::cpuset::CpuSet,
}

impl ConditionPlan {
    /// `stress: ` (empty for the unnamed condition): how lines about it start.
    pub fn prefix(&self) -> String {
        crate::results::summary::condition_prefix(self.name.as_deref())
    }
}

/// A validated self-test: everything [`run::execute`] needs.
#[derive(Debug, Clone)]
pub struct SelftestPlan {
    /// The configuration file read (empty when the defaults were used).
    pub config_path: String,
    /// The configuration file as named (also when it did not exist).
    pub config_shown: String,
    /// Its text, stored with the results.
    pub config_text: String,
    /// Apply, check or leave the tuning.
    pub mode: TuningMode,
    /// The `[tuning]` section.
    pub tuning: crate::tune::spec::TuningSpec,
    /// `[selftest] duration`: each test's duration unless its section sets one.
    pub duration: Duration,
    /// The conditions, measured one after the other (one, unnamed, without
    /// `[[condition]]`).
    pub conditions: Vec<ConditionPlan>,
    /// Results store directory.
    pub results_dir: PathBuf,
    /// Where this boot's result goes when the store fails.
    pub fallback_dir: PathBuf,
    /// `[selftest] allow_unjudged`: an unjudged run exits 0.
    pub allow_unjudged: bool,
    /// `[selftest] require_preempt_rt`: a kernel that is not PREEMPT_RT fails the run.
    pub require_preempt_rt: bool,
    /// Runs to keep.
    pub keep: usize,
    /// `[output] histogram_us`: each stored test's plotted histogram range, **µs**.
    pub histogram_us: Option<u64>,
    /// Prometheus textfile.
    pub prometheus: Option<PathBuf>,
    /// `[selftest] hwlat`: the hwlat gate's length, if it runs.
    pub hwlat: Option<Duration>,
    /// `[selftest] hwlat_limit_us`, **µs**.
    pub hwlat_limit_us: u64,
    /// Every CPU a test of any condition measures (the hwlat gate's and the SMI
    /// count's CPUs).
    pub measured_cpus: crate::cpuset::CpuSet,
    /// `[unit]` with the environment's values (`app/selftest.rs`): the factory line's
    /// names of the unit, stored with its serial number.
    pub unit: crate::config::unit::UnitSection,
}

impl SelftestPlan {
    /// Every test of every condition.
    pub fn tests(&self) -> impl Iterator<Item = &TestPlan> {
        self.conditions.iter().flat_map(|c| c.tests.iter())
    }

    /// Whether the configuration names its conditions (`[[condition]]`).
    pub fn named_conditions(&self) -> bool {
        self.conditions.iter().any(|c| c.name.is_some())
    }

    /// The load of the run as the results and reports name it: the load, or with
    /// conditions each condition's (`idle: none; stress: cpu:2`).
    pub fn load_label(&self) -> String {
        if !self.named_conditions() {
            return self
                .conditions
                .first()
                .map_or_else(String::new, |c| c.load_label.clone());
        }
        self.conditions
            .iter()
            .map(|c| {
                let load = if c.load_label.is_empty() {
                    "none"
                } else {
                    &c.load_label
                };
                format!("{}{load}", c.prefix())
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The pairs of a `[pmq]`/`[pipe]` section: one per CPU (both ends pinned to it), or
/// `pairs = N` unpinned; every pair at the section's priority and interval.
fn pair_threads(p: &PairSection) -> Vec<ThreadSpec> {
    let cpus: Vec<Option<usize>> = match &p.placement {
        PairPlacement::Pinned(set) => set.iter().map(Some).collect(),
        PairPlacement::Unpinned(n) => vec![None; *n],
    };
    cpus.into_iter()
        .enumerate()
        .map(|(i, cpu)| ThreadSpec {
            index: i,
            cpu,
            policy: Policy::Fifo,
            priority: p.priority,
            interval_us: p.interval_us,
        })
        .collect()
}

/// What `[explain]` asks of `test`: each thread's threshold is `threshold_us`, else
/// its `max` limit (**µs** → **ns**); `None` when explaining is off or no thread has a
/// threshold.
fn explain_spec(
    section: &ExplainSection,
    limits: &LimitSet,
    test: &str,
    kind: SpikeKind,
    threads: &[ThreadSpec],
) -> Option<ExplainSpec> {
    if !section.enabled {
        return None;
    }
    let thresholds_ns: Vec<u64> = threads
        .iter()
        .map(|t| {
            section
                .threshold_us
                .or_else(|| limits.effective(test, t.cpu).max_us)
                .map_or(u64::MAX, |us| us.saturating_mul(NS_PER_US))
        })
        .collect();
    thresholds_ns
        .iter()
        .any(|t| *t != u64::MAX)
        .then(|| ExplainSpec {
            buffer_kib: section.buffer_kib,
            timerlat: section.timerlat,
            ..ExplainSpec::new(test, kind, thresholds_ns)
        })
}

/// Builds the plan from a validated configuration and the file it came from.
pub fn plan(located: &Located, topo: &CpuTopology) -> SelftestPlan {
    let cfg = &located.config;
    let conditions: Vec<ConditionPlan> = if cfg.conditions.is_empty() {
        let top = Measure {
            duration: cfg.duration,
            cyclic: cfg.cyclic.clone(),
            cyclic_cpus: cfg.cyclic_cpus.clone(),
            pmq: cfg.pmq.clone(),
            pipe: cfg.pipe.clone(),
            poll: cfg.poll.clone(),
            load: cfg.load.clone(),
            load_spec: cfg.load_spec.clone(),
            limits: cfg.limits.clone(),
        };
        vec![condition_plan(cfg, &top, None, topo)]
    } else {
        cfg.conditions
            .iter()
            .map(|c| condition_plan(cfg, &c.measure, Some(c.name.clone()), topo))
            .collect()
    };
    let measured_cpus = conditions
        .iter()
        .fold(crate::cpuset::CpuSet::default(), |a, c| {
            a.union(&c.measured_cpus)
        });
    SelftestPlan {
        config_path: if located.text.is_some() {
            located.shown()
        } else {
            String::new()
        },
        config_shown: located.shown(),
        config_text: located.text.clone().unwrap_or_default(),
        mode: cfg.selftest.mode,
        tuning: cfg.tuning.clone(),
        duration: cfg.duration,
        conditions,
        results_dir: cfg.output.results_dir.clone(),
        fallback_dir: cfg.output.fallback_dir.clone(),
        allow_unjudged: cfg.selftest.allow_unjudged,
        require_preempt_rt: cfg.selftest.require_preempt_rt,
        keep: cfg.output.keep,
        histogram_us: cfg.output.histogram_us,
        prometheus: cfg.output.prometheus.clone(),
        hwlat: cfg.selftest.hwlat,
        hwlat_limit_us: cfg.selftest.hwlat_limit_us,
        measured_cpus,
        unit: cfg.unit.clone(),
    }
}

/// `[load]` as the report names it: its `spec` and its `cmd: …`, `; `-separated
/// (empty without a load).
fn load_label(m: &Measure) -> String {
    let mut load = Vec::new();
    if let Some(s) = &m.load.spec {
        load.push(s.clone());
    }
    if let Some(c) = &m.load.cmd {
        load.push(format!("cmd: {c}"));
    }
    load.join("; ")
}

/// The CPUs the enabled tests of `m` measure (`[cyclic]`'s, the pinned `pairs`', the
/// enabled `poll`'s); `None` when a pair is unpinned (its threads may run on any CPU)
/// or no test names a CPU.
fn measured(
    m: &Measure,
    pairs: &[&PairSection],
    poll: Option<&crate::config::poll::PollSection>,
) -> Option<crate::cpuset::CpuSet> {
    let mut measured = Some(crate::cpuset::CpuSet::default());
    if m.cyclic.enabled {
        measured = measured.map(|x| x.union(&m.cyclic_cpus));
    }
    for p in pairs {
        measured = match &p.placement {
            PairPlacement::Pinned(c) => measured.map(|x| x.union(c)),
            PairPlacement::Unpinned(_) => None,
        };
    }
    if let Some(p) = poll {
        measured = measured.map(|x| x.union(&p.cpus));
    }
    measured.filter(|x| !x.is_empty())
}

/// `[cyclic]`'s threads: one per CPU of `m.cyclic_cpus`, SCHED_FIFO at its priority
/// and interval (µs).
fn cyclic_threads(m: &Measure) -> Vec<ThreadSpec> {
    m.cyclic_cpus
        .iter()
        .enumerate()
        .map(|(i, cpu)| ThreadSpec {
            index: i,
            cpu: Some(cpu),
            policy: Policy::Fifo,
            priority: m.cyclic.priority,
            interval_us: m.cyclic.interval_us,
        })
        .collect()
}

/// The plan of one condition: the tests of `m` on their CPUs, the main thread and the
/// load beside them, `[explain]` of `cfg`.
fn condition_plan(
    cfg: &crate::config::Config,
    m: &Measure,
    name: Option<String>,
    topo: &CpuTopology,
) -> ConditionPlan {
    let pairs: Vec<&PairSection> = [&m.pmq, &m.pipe]
        .into_iter()
        .flatten()
        .filter(|p| p.enabled)
        .collect();
    let poll = m.poll.as_ref().filter(|p| p.enabled);
    // The main thread and the load beside the measured CPUs of every test (and their
    // SMT siblings).
    let measured = measured(m, &pairs, poll);
    let measured_cpus = measured.clone().unwrap_or_else(|| topo.online.clone());
    let placed = topo.companions(measured.as_ref());
    let mut sharing: Vec<Sharing> = placed.main_shares.into_iter().collect();
    let mut load_spec = m.load_spec.clone();
    if let Some(l) = load_spec.as_mut().filter(|l| !l.cpus_given) {
        l.cpus = placed.load;
        sharing.extend(placed.load_shares);
    }
    let explain = |test: &str, kind: SpikeKind, threads: &[ThreadSpec]| {
        explain_spec(&cfg.explain, &m.limits, test, kind, threads)
    };
    let control = |duration: Option<Duration>| RunControl {
        duration: Some(duration.unwrap_or(m.duration)),
        loops: None,
        mlockall: true,
        pm_qos_us: Some(0),
        main_cpus: placed.main.clone(),
        report_every: Some(Duration::from_secs(1)),
        break_ns: None,
        tracemark: false,
        histogram: None,
        explain: None,
    };
    let mut tests = Vec::new();
    if m.cyclic.enabled {
        let threads = cyclic_threads(m);
        let mut control = control(m.cyclic.duration);
        control.explain = explain("cyclic", SpikeKind::Timer, &threads);
        tests.push(TestPlan::Cyclic(CyclicSpec {
            threads,
            clock: Clock::Monotonic,
            control,
            samples: None,
        }));
    }
    for p in pairs {
        let threads = pair_threads(p);
        let mut control = control(p.duration);
        control.explain = explain(
            crate::config::pair::kind_name(p.kind),
            SpikeKind::Message,
            &threads,
        );
        tests.push(TestPlan::Pair(PairSpec {
            kind: p.kind,
            pairs: threads,
            fork: false,
            timeout: None,
            force_timeout: None,
            msg_size: p.msg_size,
            control,
        }));
    }
    // Last, as the field orders its gates: hardware, timer latency, then busy-poll.
    if let Some(p) = poll {
        let mut spec = poll_spec(p, control(p.duration));
        spec.control.explain = explain("poll", SpikeKind::Poll, &spec.threads);
        tests.push(TestPlan::Poll(spec));
    }
    ConditionPlan {
        name,
        tests,
        limits: m.limits.clone(),
        load_label: load_label(m),
        load: load_spec,
        sharing,
        measured_cpus,
    }
}

/// The busy-poll test of `[poll]` `p`: one thread per CPU at its priority (SCHED_OTHER
/// at 0), oslat's 1-µs buckets and its 1 s pre-heat, explained as
/// `SpikeKind::Poll` gaps (set by the caller).
fn poll_spec(p: &crate::config::poll::PollSection, control: RunControl) -> PollSpec {
    let threads: Vec<ThreadSpec> = p
        .cpus
        .iter()
        .enumerate()
        .map(|(index, cpu)| ThreadSpec {
            index,
            cpu: Some(cpu),
            policy: if p.priority > 0 {
                Policy::Fifo
            } else {
                Policy::Other
            },
            priority: p.priority,
            interval_us: 0,
        })
        .collect();
    PollSpec {
        threads,
        control,
        buckets: BucketSetting {
            count: crate::measure::poll::DEFAULT_BUCKETS,
            width_ns: NS_PER_US,
        },
        bias: false,
        preheat: Some(Duration::from_secs(1)),
        single_preheat: false,
        workload_bytes: 0,
    }
}

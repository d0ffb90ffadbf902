//! `rtbench pmq` and `rtbench pipe`: flags → [`PairPlan`].

use super::{parse_cpus, run_options, usage, DEFAULT_RT_PRIORITY, HIST_MAX};
use crate::cli::pipe::PipeArgs;
use crate::cli::pmq::PmqArgs;
use crate::cli::PairFlags;
use crate::error::Result;
use crate::load::LoadSpec;
use crate::measure::pair::{PairKind, PairSpec, PairThreads};
use crate::sys::cpus::CpuTopology;
use crate::sys::sched::Policy;
use std::path::PathBuf;
use std::time::Duration;

/// How pair results are shown and stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairOutput {
    /// `-q`: no live blocks.
    pub quiet: bool,
    /// `-N`: figures in ns.
    pub nsecs: bool,
    /// `-h`: print the histogram dump.
    pub histogram: bool,
    /// `--json` target; `-` is standard output.
    pub json: Option<PathBuf>,
}

/// A validated `rtbench pmq` / `rtbench pipe` invocation.
#[derive(Debug, Clone)]
pub struct PairPlan {
    /// What to measure.
    pub spec: PairSpec,
    /// How to report it.
    pub output: PairOutput,
    /// Load to run meanwhile.
    pub load: Option<LoadSpec>,
    /// Remarks to print before starting.
    pub warnings: Vec<String>,
}

/// Validates `rtbench pmq`.
pub fn pmq(args: &PmqArgs, topo: &CpuTopology) -> Result<PairPlan> {
    build(
        PairKind::Pmq,
        &args.common,
        args.interval,
        args.distance,
        false,
        topo,
    )
}

/// Validates `rtbench pipe`.
pub fn pipe(args: &PipeArgs, topo: &CpuTopology) -> Result<PairPlan> {
    build(
        PairKind::Pipe,
        &args.common,
        args.interval,
        args.distance,
        args.fork,
        topo,
    )
}

fn build(
    kind: PairKind,
    c: &PairFlags,
    interval: u64,
    distance: u64,
    fork: bool,
    topo: &CpuTopology,
) -> Result<PairPlan> {
    let mut warnings = Vec::new();
    let run = run_options(&c.run, topo)?;
    if kind == PairKind::Pmq && interval == 0 {
        return usage("-i", 0, "interval must be at least 1 µs");
    }
    if interval > 3_600_000_000 {
        return usage(
            "-i",
            interval,
            "interval must be at most 1 hour (3600000000 µs)",
        );
    }
    if let Some(n) = c.histogram {
        if n == 0 || n > HIST_MAX {
            return usage("-h", n, format!("expected 1..{HIST_MAX} buckets"));
        }
    }
    if c.breaktrace == Some(0) {
        return usage("-b", 0, "expected a threshold of at least 1 µs");
    }
    match (c.forcetimeout, c.timeout) {
        (Some(_), None) => return usage("-f", c.forcetimeout.unwrap_or(0), "needs -T TO"),
        (Some(0), _) => return usage("-f", 0, "expected at least 1 s"),
        _ => {}
    }
    if c.timeout == Some(0) {
        return usage("-T", 0, "expected a timeout of at least 1 s");
    }
    for (flag, v) in [("-T", c.timeout), ("-f", c.forcetimeout)] {
        if v.is_some_and(|t| t > 86_400) {
            return usage(flag, v.unwrap_or(0), "expected at most 86400 s (one day)");
        }
    }
    let (policy, priority) = match c.priority {
        Some(p) if !(0..=99).contains(&p) => return usage("-p", p, "expected a priority of 0..99"),
        Some(0) => (Policy::Other, 0),
        Some(p) => (Policy::Fifo, p as i32),
        None => (Policy::Fifo, DEFAULT_RT_PRIORITY),
    };

    let online: Vec<usize> = topo.online.iter().collect();
    let count_flag = match c.threads.as_deref() {
        None => None,
        Some("") => Some(None),
        Some(s) => match s.parse::<usize>() {
            Ok(n) if (1..=4096).contains(&n) => Some(Some(n)),
            _ => return usage("-t", s, "expected a number of pairs of 1..4096"),
        },
    };
    let cpus: Vec<Option<usize>> = if c.smp {
        if c.affinity.is_some() || count_flag.is_some() {
            warnings.push("# -S given: -a and -t are ignored (one pair per online CPU)".into());
        }
        online.iter().map(|&c| Some(c)).collect()
    } else {
        let set: Option<Vec<usize>> = match c.affinity.as_deref() {
            None => None,
            Some("") => Some(online.clone()),
            Some(s) => Some(parse_cpus("-a", s, topo)?.iter().collect()),
        };
        let n = match count_flag {
            Some(Some(n)) => n,
            Some(None) => online.len(),
            None => 1,
        };
        match &set {
            Some(s) => (0..n).map(|i| Some(s[i % s.len()])).collect(),
            None => vec![None; n],
        }
    };
    let same_prio = c.smp;
    let mut pairs = Vec::with_capacity(cpus.len());
    for (i, cpu) in cpus.into_iter().enumerate() {
        // pmqtest: each further pair one priority lower (not below 1) unless -S.
        let prio = if policy.is_realtime() && !same_prio {
            (priority - i as i32).max(1)
        } else {
            priority
        };
        let interval_us = super::thread_interval_us(interval, distance, i)?;
        pairs.push(PairThreads {
            index: i,
            cpu,
            policy,
            priority: prio,
            interval_us,
        });
    }
    let unit_ns = if run.nsecs { 1 } else { 1000 };
    Ok(PairPlan {
        spec: PairSpec {
            kind,
            pairs,
            fork,
            timeout: c.timeout.map(Duration::from_secs),
            force_timeout: c.forcetimeout.map(Duration::from_secs),
            duration: run.duration,
            loops: (c.loops > 0).then_some(c.loops),
            mlockall: run.mlockall,
            pm_qos_us: run.pm_qos_us,
            main_cpus: run.main_cpus.clone(),
            histogram: c.histogram.map(|n| (n, unit_ns)),
            break_ns: c.breaktrace.map(|b| b.saturating_mul(unit_ns)),
            report_every: run.report_every,
        },
        output: PairOutput {
            quiet: run.quiet,
            nsecs: run.nsecs,
            histogram: c.histogram.is_some(),
            json: run.json.clone(),
        },
        load: super::load::load(&c.load, topo)?,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::cpuset::CpuSet;
    use clap::Parser;

    fn topo(n: usize) -> CpuTopology {
        CpuTopology {
            nr_cpu_ids: n,
            online: CpuSet::first_n(n),
            isolated: CpuSet::new(),
            nohz_full: CpuSet::new(),
        }
    }

    fn plan(argv: &str, t: &CpuTopology) -> Result<PairPlan> {
        let mut v = vec!["rtbench"];
        v.extend(argv.split_whitespace());
        match Cli::try_parse_from(v).unwrap().command {
            Command::Pmq(a) => pmq(&a, t),
            Command::Pipe(a) => pipe(&a, t),
            _ => unreachable!(),
        }
    }

    #[test]
    fn pmqtest_layout_of_pairs() {
        let t = topo(4);
        let p = plan("pmq -S -p 80 -i 1000", &t).unwrap();
        let cpus: Vec<_> = p.spec.pairs.iter().map(|p| p.cpu).collect();
        assert_eq!(cpus, vec![Some(0), Some(1), Some(2), Some(3)]);
        let iv: Vec<_> = p.spec.pairs.iter().map(|p| p.interval_us).collect();
        assert_eq!(iv, vec![1000, 1500, 2000, 2500]);
        assert!(p.spec.pairs.iter().all(|p| p.priority == 80));
        let p = plan("pmq -t 3 -p 2 -a 1", &t).unwrap();
        let pr: Vec<_> = p.spec.pairs.iter().map(|p| (p.cpu, p.priority)).collect();
        assert_eq!(pr, vec![(Some(1), 2), (Some(1), 1), (Some(1), 1)]);
        let p = plan("pmq", &t).unwrap();
        assert_eq!(
            (
                p.spec.pairs.len(),
                p.spec.pairs[0].cpu,
                p.spec.pairs[0].priority
            ),
            (1, None, 98)
        );
        let p = plan("pipe --fork -a 1 -p 0", &t).unwrap();
        assert!(p.spec.fork);
        assert_eq!(
            (p.spec.pairs[0].policy, p.spec.pairs[0].interval_us),
            (Policy::Other, 0)
        );
    }

    #[test]
    fn bad_input_names_the_flag() {
        let t = topo(2);
        let err = |a: &str| plan(a, &t).unwrap_err().to_string();
        assert!(err("pmq -i 0").starts_with("-i 0:"));
        assert!(err("pmq -p 100").starts_with("-p 100:"));
        assert!(err("pmq -a 5").starts_with("-a 5:"));
        assert!(err("pmq -T 0").starts_with("-T 0:"));
        assert!(err("pmq --load vm:1:10Q").contains("unknown size suffix 'Q'"));
        assert!(err("pmq --load disk:2").contains("unknown load kind 'disk'"));
        assert!(err("pipe --load-cmd no-such-rtbench-cmd").contains("not found"));
        assert!(err("pipe --load-cpus 0").contains("needs --load"));
        assert!(err("pipe --load cpu:1 --load-cpus 7").starts_with("--load-cpus 7:"));
    }
}

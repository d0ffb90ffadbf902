//! `rtbench pmq` and `rtbench pipe`: flags → [`PairPlan`].

use super::{
    break_ns, check_interval, check_priority, histogram, placement, run_options,
    thread_interval_us, usage, AllCpus, HistogramOutput, OutputSpec, DEFAULT_RT_PRIORITY,
    MAX_THREADS,
};
use crate::cli::pipe::PipeArgs;
use crate::cli::pmq::PmqArgs;
use crate::cli::PairFlags;
use crate::error::Result;
use crate::load::LoadSpec;
use crate::measure::pair::{PairKind, PairSpec};
use crate::measure::ThreadSpec;
use crate::report::histogram::Layout;
use crate::sys::cpus::CpuTopology;
use crate::sys::sched::Policy;
use std::time::Duration;

/// Longest `-T`/`-f` timeout, seconds (one day).
pub const MAX_TIMEOUT_S: u64 = 86_400;

/// A validated `rtbench pmq` / `rtbench pipe` invocation.
#[derive(Debug, Clone)]
pub struct PairPlan {
    /// What to measure.
    pub spec: PairSpec,
    /// How to report it (`-h`: cyclictest's current layout, one column per pair).
    pub output: OutputSpec,
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
        (args.interval, args.distance),
        false,
        args.as_pmqtest,
        topo,
    )
}

/// Validates `rtbench pipe`.
pub fn pipe(args: &PipeArgs, topo: &CpuTopology) -> Result<PairPlan> {
    build(
        PairKind::Pipe,
        &args.common,
        (args.interval, args.distance),
        args.fork,
        false,
        topo,
    )
}

/// `(interval, distance)` in µs; `as_pmqtest`: called as `pmqtest`.
fn build(
    kind: PairKind,
    c: &PairFlags,
    (interval, distance): (u64, u64),
    fork: bool,
    as_pmqtest: bool,
    topo: &CpuTopology,
) -> Result<PairPlan> {
    let mut warnings = Vec::new();
    let mut run = run_options(&c.run, topo)?;
    check_interval(interval, kind == PairKind::Pmq)?;
    let hist = histogram("-h", c.histogram, run.nsecs)?;
    let break_ns = break_ns(c.breaktrace, run.nsecs)?;
    let explain_ns = super::explain_ns(c.explain, break_ns)?;
    timeouts(c)?;
    check_priority(c.priority)?;
    let msg_size =
        crate::measure::pair::check_msg_size(kind, c.msg_size, &crate::sys::SysRoot::host())
            .or_else(|why| usage("--msg-size", c.msg_size, why))?;
    let (policy, priority) = match c.priority {
        Some(0) => (Policy::Other, 0),
        Some(p) => (Policy::Fifo, p as i32),
        None => (Policy::Fifo, DEFAULT_RT_PRIORITY),
    };
    if kind == PairKind::Pipe && interval == 0 && policy.is_realtime() {
        warnings.extend(back_to_back(&crate::sys::SysRoot::host()));
    }

    let count = pair_count(c.threads.as_deref())?;
    let (cpus, remark) = placement(
        c.smp,
        c.affinity.as_deref(),
        count,
        AllCpus::CountOnline,
        "pair",
        topo,
    )?;
    warnings.extend(remark);
    let pairs = pairs(cpus, c.smp, (policy, priority), (interval, distance))?;
    let mut load = super::load::load(&c.load, topo)?;
    let placed: Vec<Option<usize>> = pairs.iter().map(|t| t.cpu).collect();
    warnings.extend(super::companions(&placed, &mut run, load.as_mut(), topo));
    let mut control = run.control(c.loops, hist, break_ns, false);
    control.explain = explain_ns.map(|ns| {
        crate::explain::explainer::ExplainSpec::new(
            crate::config::pair::kind_name(kind),
            crate::explain::SpikeKind::Message,
            vec![ns; pairs.len()],
        )
    });
    Ok(PairPlan {
        spec: PairSpec {
            kind,
            pairs,
            fork,
            timeout: c.timeout.map(Duration::from_secs),
            force_timeout: c.forcetimeout.map(Duration::from_secs),
            msg_size,
            control,
        },
        output: OutputSpec {
            quiet: run.quiet,
            nsecs: run.nsecs,
            histogram: hist.map(|_| HistogramOutput {
                summary_column: false,
                layout: Layout::Current,
                file: None,
            }),
            json: run.json,
            rt_tests_stdout: as_pmqtest,
        },
        load,
        warnings,
    })
}

/// `-T` and `-f`: `-f` needs `-T`, both at least 1 s and at most [`MAX_TIMEOUT_S`].
fn timeouts(c: &PairFlags) -> Result<()> {
    match (c.forcetimeout, c.timeout) {
        (Some(_), None) => return usage("-f", c.forcetimeout.unwrap_or(0), "needs -T TO"),
        (Some(0), _) => return usage("-f", 0, "expected at least 1 s"),
        _ => {}
    }
    if c.timeout == Some(0) {
        return usage("-T", 0, "expected a timeout of at least 1 s");
    }
    for (flag, v) in [("-T", c.timeout), ("-f", c.forcetimeout)] {
        if v.is_some_and(|t| t > MAX_TIMEOUT_S) {
            return usage(
                flag,
                v.unwrap_or(0),
                format!("expected at most {MAX_TIMEOUT_S} s (one day)"),
            );
        }
    }
    Ok(())
}

/// `-t`: absent (`None`), without a number (`Some(None)`: one pair per CPU), or a number
/// of pairs 1..=[`MAX_THREADS`].
fn pair_count(t: Option<&str>) -> Result<Option<Option<usize>>> {
    Ok(match t {
        None => None,
        Some("") => Some(None),
        Some(s) => match crate::cli::number::usize_arg(s) {
            Ok(n) if (1..=MAX_THREADS).contains(&n) => Some(Some(n)),
            _ => {
                return usage(
                    "-t",
                    s,
                    format!("expected a number of pairs of 1..{MAX_THREADS}"),
                )
            }
        },
    })
}

/// One pair per placed CPU: pmqtest's priorities (each further pair one lower, not below
/// 1, unless `-S`) and intervals (each further pair longer by the distance).
fn pairs(
    cpus: Vec<Option<usize>>,
    smp: bool,
    (policy, priority): (Policy, i32),
    (interval, distance): (u64, u64),
) -> Result<Vec<ThreadSpec>> {
    let mut pairs = Vec::with_capacity(cpus.len());
    for (i, cpu) in cpus.into_iter().enumerate() {
        // pmqtest: each further pair one priority lower (not below 1) unless -S.
        let prio = if policy.is_realtime() && !smp {
            (priority - i as i32).max(1)
        } else {
            priority
        };
        pairs.push(ThreadSpec {
            index: i,
            cpu,
            policy,
            priority: prio,
            interval_us: thread_interval_us(interval, distance, i)?,
        });
    }
    Ok(pairs)
}

/// The warning for `pipe -i 0` at SCHED_FIFO: a pair that never sleeps holds its CPU,
/// and RT bandwidth control (`sched_rt_runtime_us` of `sched_rt_period_us`,
/// Documentation/scheduler/sched-rt-group.rst; from Linux 6.12 the fair server) stops it
/// while other tasks wait there. `None` when neither is active.
fn back_to_back(root: &crate::sys::SysRoot) -> Option<String> {
    let throttled = match crate::explain::counters::rt_throttling(root) {
        Some((r, p)) => format!("RT throttling (sched_rt_runtime_us {r} of {p})"),
        None if crate::sys::refusal::rtgroup::has_fair_server(root) => "the fair server".into(),
        None => return None,
    };
    Some(format!(
        "rtbench: warning: -i 0 runs each SCHED_FIFO pair back to back, 100 % of its CPU: {throttled} \
         stalls it while other tasks wait; -i 1000 measures task switches, not throttling"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn topo(n: usize) -> CpuTopology {
        CpuTopology::uniform(n, "")
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
            (Policy::Other, 1000)
        );
        // Back to back as perf: at SCHED_OTHER nothing to warn about.
        let p = plan("pipe -a 1 -p 0 -i 0", &t).unwrap();
        assert!(
            p.warnings.iter().all(|w| !w.contains("-i 0")),
            "{:?}",
            p.warnings
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
        assert!(err("pipe --msg-size 4097").starts_with("--msg-size 4097:"));
        assert!(err("pipe --msg-size 31").contains("32..=4096 bytes (PIPE_BUF, pipe(7))"));
        assert!(err("pmq --msg-size=-1").contains("msgsize_max, mq_overview(7)"));
        assert_eq!(
            plan("pipe --msg-size 4096", &t).unwrap().spec.msg_size,
            4096
        );
        assert_eq!(plan("pmq", &t).unwrap().spec.msg_size, 32);
    }
}

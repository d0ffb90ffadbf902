//! `rtbench cyclic`: flags → [`CyclicPlan`].

use super::{
    break_ns, check_interval, check_output_path, check_priority, histogram, placement, run_options,
    thread_interval_us, usage, AllCpus, HistogramOutput, OutputSpec, DEFAULT_DISTANCE_US,
    DEFAULT_RT_PRIORITY, MAX_THREADS,
};
use crate::cli::cyclic::CyclicArgs;
use crate::cli::HistogramLayout;
use crate::error::Result;
use crate::explain::explainer::ExplainSpec;
use crate::explain::SpikeKind;
use crate::load::LoadSpec;
use crate::measure::cyclic::CyclicSpec;
use crate::measure::ThreadSpec;
use crate::report::histogram::Layout;
use crate::sys::clock::Clock;
use crate::sys::cpus::CpuTopology;
use crate::sys::sched::Policy;

/// A validated `rtbench cyclic` invocation.
#[derive(Debug, Clone)]
pub struct CyclicPlan {
    /// What to measure.
    pub spec: CyclicSpec,
    /// How to report it.
    pub output: OutputSpec,
    /// Load to run meanwhile.
    pub load: Option<LoadSpec>,
    /// Non-fatal remarks to print before starting (cyclictest's warnings).
    pub warnings: Vec<String>,
    /// `-v`: every sample on standard output.
    pub verbose: Option<VerbosePlan>,
}

/// `-v` as cyclictest runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerbosePlan {
    /// `-o RED`: each group of this many samples printed as its maximum (cyclictest's
    /// oscilloscope reduction; 1 without `-o`).
    pub reduction: u64,
    /// The distance between the threads' intervals (µs): cyclictest's `Thread N
    /// Interval:` line shows each thread's interval plus it.
    pub distance_us: u64,
}

/// `--policy` and `-p` → policy and priority (cyclictest's rules, but SCHED_FIFO 98
/// without either).
fn policy_and_priority(args: &CyclicArgs) -> Result<(Policy, i32)> {
    let policy_flag = match &args.policy {
        Some(p) => Some(Policy::parse(p).map_or_else(
            || {
                usage(
                    "--policy",
                    p,
                    "expected other, normal, batch, idle, fifo or rr",
                )
            },
            Ok,
        )?),
        None => None,
    };
    check_priority(args.priority)?;
    Ok(match (policy_flag, args.priority) {
        (Some(pol), Some(p)) if pol.is_realtime() && p == 0 => {
            return usage(
                "-p",
                0,
                format!("--policy {} needs a priority of 1..99", pol.name()),
            )
        }
        (Some(pol), Some(p)) if !pol.is_realtime() && p != 0 => {
            return usage(
                "-p",
                p,
                format!(
                    "--policy {} takes no priority; use --policy fifo or rr",
                    pol.name()
                ),
            )
        }
        (Some(pol), Some(p)) => (pol, p as i32),
        (Some(pol), None) if pol.is_realtime() => (pol, DEFAULT_RT_PRIORITY),
        (Some(pol), None) => (pol, 0),
        (None, Some(0)) => (Policy::Other, 0),
        (None, Some(p)) => (Policy::Fifo, p as i32),
        (None, None) => (Policy::Fifo, DEFAULT_RT_PRIORITY),
    })
}

/// Validates `args` against `topo` and builds the run.
pub fn cyclic(args: &CyclicArgs, topo: &CpuTopology) -> Result<CyclicPlan> {
    let mut warnings = Vec::new();
    let mut run = run_options(&args.run, topo)?;
    if args.mlockall && args.run.no_mlockall {
        return usage("--no-mlockall", "", "contradicts -m/--mlockall");
    }
    let clock = clock(&args.clock)?;
    check_interval(args.interval, true)?;
    let (buckets, summary_column) = match (args.histogram, args.histofall) {
        (Some(_), Some(_)) => return usage("-h", "", "give -h or -H, not both"),
        (Some(n), None) => (Some(n), false),
        (None, Some(n)) => (Some(n), true),
        (None, None) => (None, false),
    };
    let hist = histogram(if summary_column { "-H" } else { "-h" }, buckets, run.nsecs)?;
    if args.histfile.is_some() && hist.is_none() {
        return usage("--histfile", "", "needs -h or -H");
    }
    if let Some(p) = &args.histfile {
        check_output_path("--histfile", p)?;
    }
    if args.tracemark && args.breaktrace.is_none() {
        return usage("--tracemark", "", "needs -b USEC");
    }
    let break_ns = break_ns(args.breaktrace, run.nsecs)?;
    let explain_ns = super::explain_ns(args.explain, break_ns)?;
    if args.explain_timerlat && explain_ns.is_none() {
        return usage("--explain-timerlat", "", "needs --explain USEC or -b USEC");
    }
    let (policy, priority) = policy_and_priority(args)?;
    let oscope = oscope(args)?;

    // Threads and CPUs.
    let count = thread_count(args.threads.as_deref())?;
    let (mut cpus, remark) = placement(
        args.smp,
        args.affinity.as_deref(),
        count,
        AllCpus::PinnedPerCpu,
        "thread",
        topo,
    )?;
    warnings.extend(remark);
    if cpus.is_empty() {
        cpus.push(None);
    }
    if cpus.len() > MAX_THREADS {
        return usage(
            "-t",
            cpus.len(),
            format!("expected at most {MAX_THREADS} threads"),
        );
    }

    let (threads, distance) = threads(
        args,
        cpus,
        hist.is_some(),
        (policy, priority),
        &mut warnings,
    )?;

    let mut load = super::load::load(&args.load, topo)?;
    let placed: Vec<Option<usize>> = threads.iter().map(|t| t.cpu).collect();
    warnings.extend(super::companions(&placed, &mut run, load.as_mut(), topo));
    let mut control = run.control(args.loops, hist, break_ns, args.tracemark);
    control.explain = explain_ns.map(|ns| ExplainSpec {
        realtime: clock == Clock::Realtime,
        timerlat: args.explain_timerlat,
        ..ExplainSpec::new("cyclic", SpikeKind::Timer, vec![ns; threads.len()])
    });
    Ok(CyclicPlan {
        spec: CyclicSpec {
            threads,
            clock,
            control,
            samples: None,
        },
        verbose: args.verbose.then_some(VerbosePlan {
            reduction: oscope,
            distance_us: distance,
        }),
        output: OutputSpec {
            quiet: run.quiet,
            nsecs: run.nsecs,
            histogram: hist.map(|_| HistogramOutput {
                summary_column,
                layout: histogram_layout(args),
                file: args.histfile.clone(),
            }),
            json: run.json,
            rt_tests_stdout: args.as_cyclictest,
        },
        load,
        warnings,
    })
}

/// `-o RED` → the reduction `-v` prints its samples with (1 without `-o`). cyclictest:
/// `-o` below 1 is an error, and above 1 "only meaningful, if verbose".
fn oscope(args: &CyclicArgs) -> Result<u64> {
    Ok(match args.oscope {
        None => 1,
        Some(0) => return usage("-o", 0, "expected a reduction of at least 1 sample"),
        Some(r) if r > 1 && !args.verbose => {
            return usage("-o", r, "expected with -v (it reduces -v's samples)")
        }
        Some(r) => r,
    })
}

/// `--histogram-layout` → the `-h` dump's layout; without it, the current one, but
/// called as cyclictest the layout of rt-tests <= 2.6, what the rt-tests packages of
/// Yocto scarthgap (2.6) and Debian 12 (2.4) print (docs/COMPAT.md).
fn histogram_layout(args: &CyclicArgs) -> Layout {
    match args.histogram_layout {
        Some(HistogramLayout::Current) => Layout::Current,
        Some(HistogramLayout::Legacy) => Layout::Legacy,
        None if args.as_cyclictest => Layout::Legacy,
        None => Layout::Current,
    }
}

/// `-c`: a clock's name, or a number as cyclictest's atoi reads it (`-c 1`, `"-c 1"`).
fn clock(text: &str) -> Result<Clock> {
    Clock::parse(text)
        .or_else(|| match crate::cli::number::leading_integer(text) {
            Ok(0) => Some(Clock::Monotonic),
            Ok(1) => Some(Clock::Realtime),
            _ => None,
        })
        .map_or_else(
            || usage("-c", text, "expected 0|monotonic or 1|realtime"),
            Ok,
        )
}

/// `-t`: absent (`None`), without a number (`Some(None)`: one per CPU), or a number of
/// threads, bounded before anything is allocated for them (as pmq's `-t` is).
fn thread_count(t: Option<&str>) -> Result<Option<Option<usize>>> {
    Ok(match t {
        None => None,
        Some("") => Some(None),
        Some(s) => match crate::cli::number::usize_arg(s) {
            Ok(n) if (1..=MAX_THREADS).contains(&n) => Some(Some(n)),
            Ok(n) if n > MAX_THREADS => {
                return usage("-t", s, format!("expected at most {MAX_THREADS} threads"))
            }
            _ => return usage("-t", s, "expected a number of threads >= 1"),
        },
    })
}

/// One thread per placed CPU: its priority (`--priospread` lowers each next one by one,
/// never below 1) and interval (`-d`: each next one longer by the distance, 0 with a
/// histogram, as cyclictest sets it, with the remark in `warnings`); and that distance
/// (µs).
fn threads(
    args: &CyclicArgs,
    cpus: Vec<Option<usize>>,
    histogram: bool,
    (policy, priority): (Policy, i32),
    warnings: &mut Vec<String>,
) -> Result<(Vec<ThreadSpec>, u64)> {
    let distance = match (args.distance, histogram) {
        (Some(d), true) => {
            if d != 0 {
                warnings.push("# distance is ignored and set to 0, if histogram enabled".into());
            }
            0
        }
        (_, true) => 0,
        (Some(d), false) => d,
        (None, false) => DEFAULT_DISTANCE_US,
    };
    let mut threads = Vec::with_capacity(cpus.len());
    for (i, cpu) in cpus.into_iter().enumerate() {
        let prio = if args.priospread && policy.is_realtime() {
            let p = priority - i as i32;
            if p < 1 {
                return usage(
                    "--priospread",
                    "",
                    format!(
                        "-p {priority} with {} threads would go below priority 1",
                        i + 1
                    ),
                );
            }
            p
        } else {
            priority
        };
        threads.push(ThreadSpec {
            index: i,
            cpu,
            policy,
            priority: prio,
            interval_us: thread_interval_us(args.interval, distance, i)?,
        });
    }

    Ok((threads, distance))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::cpuset::CpuSet;
    use clap::Parser;

    fn topo(n: usize, isolated: &str) -> CpuTopology {
        CpuTopology::uniform(n, isolated)
    }

    fn plan(argv: &str, t: &CpuTopology) -> Result<CyclicPlan> {
        let mut v = vec!["rtbench", "cyclic"];
        v.extend(argv.split_whitespace());
        let cli = Cli::try_parse_from(v).unwrap();
        match cli.command {
            Command::Cyclic(a) => cyclic(&a, t),
            _ => unreachable!(),
        }
    }

    fn err(argv: &str, t: &CpuTopology) -> String {
        plan(argv, t).unwrap_err().to_string()
    }

    #[test]
    fn smp_uses_every_online_cpu_including_isolated() {
        let t = topo(4, "2-3");
        let p = plan("-S -p 90 -i 1000", &t).unwrap();
        let cpus: Vec<_> = p.spec.threads.iter().map(|t| t.cpu).collect();
        assert_eq!(cpus, vec![Some(0), Some(1), Some(2), Some(3)]);
        let iv: Vec<_> = p.spec.threads.iter().map(|t| t.interval_us).collect();
        assert_eq!(iv, vec![1000, 1500, 2000, 2500]);
        assert!(p.spec.threads.iter().all(|t| t.priority == 90));
        assert_eq!(p.spec.control.main_cpus.unwrap().to_list(), "0");
    }

    #[test]
    fn histogram_forces_distance_zero_and_round_robin_affinity() {
        let t = topo(6, "");
        let p = plan("-a 3-5,0 -t 5 -h 100", &t).unwrap();
        let cpus: Vec<_> = p.spec.threads.iter().map(|t| t.cpu.unwrap()).collect();
        assert_eq!(cpus, vec![0, 3, 4, 5, 0]);
        assert!(p.spec.threads.iter().all(|t| t.interval_us == 1000));
        assert_eq!(
            p.spec.control.histogram,
            Some(crate::measure::HistogramSetting {
                buckets: 100,
                bucket_ns: 1000
            })
        );
    }

    #[test]
    fn defaults_and_priospread() {
        let t = topo(2, "");
        let p = plan("", &t).unwrap();
        assert_eq!(p.spec.threads.len(), 1);
        assert_eq!(p.spec.threads[0].cpu, None);
        assert_eq!(p.spec.threads[0].policy, Policy::Fifo);
        assert_eq!(p.spec.threads[0].priority, 98);
        assert!(p.spec.control.mlockall);
        let p = plan("-t 3 -p 80 --priospread -n", &t).unwrap();
        let pr: Vec<_> = p.spec.threads.iter().map(|t| t.priority).collect();
        assert_eq!(pr, vec![80, 79, 78]);
        let p = plan("--policy other", &t).unwrap();
        assert_eq!(
            (p.spec.threads[0].policy, p.spec.threads[0].priority),
            (Policy::Other, 0)
        );
    }

    #[test]
    fn bad_input_names_the_flag() {
        let t = topo(2, "");
        assert!(err("-a 3-1", &t).starts_with("-a 3-1:"));
        assert!(err("-a 9", &t).contains("beyond the last possible CPU 1"));
        assert!(err("-a 4-N", &t).contains("greater"));
        assert!(err("-a abc", &t).starts_with("-a abc:"));
        assert!(err("-p 100", &t).starts_with("-p 100: expected a priority of 0..99"));
        assert!(err("-i 0", &t).starts_with("-i 0:"));
        assert!(err("-D 5x", &t).contains("unknown suffix 'x'"));
        assert!(err("-h 0", &t).starts_with("-h 0:"));
        assert!(err("--json /nonexistent-dir/x.json", &t).contains("does not exist"));
        assert!(err("--policy other -p 5", &t).starts_with("-p 5:"));
        assert!(err("--tracemark", &t).starts_with("--tracemark"));
        let t3 = CpuTopology {
            online: CpuSet::parse_list("0,2", 4).unwrap(),
            ..topo(4, "")
        };
        assert!(err("-a 1", &t3).contains("not online"));
    }
}

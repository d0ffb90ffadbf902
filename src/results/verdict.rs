//! The self-test's verdict, built in one place ([`verdict`]) from typed facts: every
//! thread of every test judged against the configured limits (`[limits]`, in **µs**,
//! see [`crate::config::limits`]) on its **ns** figures, and what the run itself went
//! through ([`RunFacts`]: tuning findings, tests that did not run, the load, a signal).
//!
//! It fails closed: a thread no limit applies to is *unjudged*, and a run with anything
//! unjudged is not a pass (see [`crate::results::summary::Outcome`]). The reasons are
//! typed ([`Unjudged`], [`Problem`]) and rendered once, to the lines the results file,
//! the journal and the report have always carried.

use crate::config::limits::LimitSet;
use crate::measure::harness::StopCause;
use crate::results::summary::{
    is_pair_test, thread_label, Check, TestSummary, TuningFinding, Verdict,
};
use crate::sys::clock::NS_PER_US;
use crate::tune::{Status, TuningReport};
use std::fmt;

/// Why something measured was not judged (the results file's `verdict.unjudged`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unjudged {
    /// `[limits]` is empty: `no [limits] configured: measured, nothing judged`, after
    /// `no configuration file at PATH: ` when no file was found (`config_missing_at`)
    /// and the documented defaults ran.
    NoLimits {
        /// The configuration file looked for, when it did not exist.
        config_missing_at: Option<String>,
    },
    /// No limit applies to one thread or pair: `cyclic CPU 0: no limit applies`.
    NoLimitApplies {
        /// Test name.
        test: String,
        /// Thread (pair) index.
        thread: usize,
        /// Its CPU, if pinned.
        cpu: Option<usize>,
    },
    /// `[cyclic]`, `[pmq]` and `[pipe]` are all disabled.
    NoTestEnabled,
    /// A `[[limits.cpus]]` rule (number `index`) applied to no thread or pair that ran:
    /// its CPUs were not measured (a cpuset, `AllowedCPUs=`, a disabled test), so what
    /// it asks was not checked: `limits.cpus[0] (CPU 1) applied to nothing measured`.
    RuleUnused {
        /// Position of the rule in the file.
        index: usize,
        /// Its CPUs, as a cpu-list.
        cpus: String,
        /// Its test, if it names one.
        test: Option<String>,
    },
    /// `[selftest] hwlat` is set and the gate could not check what it was asked to:
    /// `hwlat gate not run: unsupported: CONFIG_HWLAT_TRACER`.
    HwlatNotRun {
        /// Why.
        why: String,
    },
    /// A `[tuning]` key that nothing checked: `tuning.housekeeping: not checked,
    /// because …` (the line as made by the self-test).
    TuningNotChecked {
        /// The whole line.
        line: String,
    },
}

impl fmt::Display for Unjudged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unjudged::NoLimits { config_missing_at } => {
                if let Some(path) = config_missing_at {
                    write!(f, "no configuration file at {path}: ")?;
                }
                f.write_str("no [limits] configured: measured, nothing judged")
            }
            Unjudged::NoLimitApplies { test, thread, cpu } => {
                write!(f, "{}: no limit applies", thread_label(test, *thread, *cpu))
            }
            Unjudged::NoTestEnabled => {
                f.write_str("no test enabled ([cyclic], [pmq] and [pipe] are all disabled)")
            }
            Unjudged::HwlatNotRun { why } => write!(f, "hwlat gate not run: {why}"),
            Unjudged::TuningNotChecked { line } => f.write_str(line),
            Unjudged::RuleUnused { index, cpus, test } => {
                let test = test.as_deref().map_or(String::new(), |t| format!(", {t}"));
                write!(
                    f,
                    "limits.cpus[{index}] (CPU {cpus}{test}) applied to nothing measured"
                )
            }
        }
    }
}

/// What fails a run whatever the limits (the results file's `verdict.problems`).
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// A thread or pair took no sample: `cyclic thread 0: no samples`.
    NoSamples {
        /// Test name.
        test: String,
        /// Thread (pair) index.
        thread: usize,
    },
    /// Tuning (`apply` or `check`, the `[selftest] mode`) is not as configured, with
    /// no item to name: `tuning apply: not as configured`.
    Tuning {
        /// `apply` or `check`.
        mode: &'static str,
    },
    /// `[selftest] require_preempt_rt` and the kernel is not PREEMPT_RT: `kernel
    /// 6.18.4 is PREEMPT_DYNAMIC, not PREEMPT_RT: …`.
    NotRealtime {
        /// `uname -r`.
        release: String,
        /// The preemption model (`crate::sys::info::SysInfo::preempt_model`).
        model: String,
    },
    /// A test could not run: `pmq: not run: …` with its error.
    NotRun {
        /// Test name.
        test: String,
        /// The error, one line.
        why: String,
    },
    /// A test not started because the run was interrupted before it.
    Skipped {
        /// Test name.
        test: String,
    },
    /// The load went wrong during the run (a worker died): `load: …`.
    Load(String),
    /// The hwlat gate found a gap the OS did not cause over its limit: `hwlat: CPU 1
    /// hardware latency 42 µs > limit 20 µs …`.
    Hardware {
        /// The CPU with the largest gap.
        cpu: usize,
        /// The gap, **µs**.
        us: u64,
        /// `[selftest] hwlat_limit_us`.
        limit_us: u64,
    },
    /// A problem of one `[[condition]]`'s tests or load: `stress: load: …`.
    InCondition {
        /// The condition's name.
        condition: String,
        /// What went wrong in it.
        problem: Box<Problem>,
    },
    /// The run was cut short by a signal after `after_s` seconds: `interrupted
    /// (sigterm) after 3.2 s`.
    Interrupted {
        /// How it stopped.
        stop: StopCause,
        /// Seconds measured.
        after_s: f64,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NoSamples { test, thread } => {
                let who = if is_pair_test(test) { "pair" } else { "thread" };
                write!(f, "{test} {who} {thread}: no samples")
            }
            Problem::Tuning { mode } => write!(f, "tuning {mode}: not as configured"),
            Problem::NotRealtime { release, model } => write!(
                f,
                "kernel {release} is {model}, not PREEMPT_RT: a real-time acceptance needs \
                 a PREEMPT_RT kernel ([selftest] require_preempt_rt = false judges any kernel)"
            ),
            Problem::NotRun { test, why } => write!(f, "{test}: not run: {why}"),
            Problem::Skipped { test } => write!(f, "{test}: not run (interrupted before it)"),
            Problem::Load(line) => write!(f, "load: {}", line.trim_start_matches("# ")),
            Problem::Hardware { cpu, us, limit_us } => write!(
                f,
                "hwlat: CPU {cpu} hardware latency {us} µs > limit {limit_us} µs (time the OS did not have, with interrupts off: SMI, firmware or a hypervisor; no tuning fixes it)"
            ),
            Problem::InCondition { condition, problem } => write!(f, "{condition}: {problem}"),
            Problem::Interrupted { stop, after_s } => {
                let stop = format!("{stop:?}").to_lowercase();
                write!(f, "interrupted ({stop}) after {after_s:.1} s")
            }
        }
    }
}

/// What the self-test knows about a run besides its figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFacts {
    /// Problems of the run, in the order they happened: tuning, tests that did not
    /// run, the load.
    pub problems: Vec<Problem>,
    /// Tuning items that deviated or failed.
    pub tuning: Vec<TuningFinding>,
    /// Every test was disabled: nothing was measured.
    pub no_test_enabled: bool,
    /// No configuration file was found at this path: the documented defaults ran.
    pub config_missing_at: Option<String>,
    /// The run was cut short ([`Problem::Interrupted`]), said after every other problem.
    pub interrupted: Option<Problem>,
    /// The configured hwlat gate did not check (why): a check that checks nothing is
    /// not a pass.
    pub hwlat_not_run: Option<String>,
    /// `[tuning]` keys nothing checked, each `tuning.KEY: not checked, because …`.
    pub tuning_not_checked: Vec<String>,
}

/// The deviations and failures of a tuning report, by item (recovered, then this run's,
/// then rolled back).
pub fn tuning_findings(r: &TuningReport) -> Vec<TuningFinding> {
    r.recovered
        .iter()
        .chain(&r.items)
        .chain(&r.rolled_back)
        .filter(|i| matches!(i.status, Status::Deviation | Status::Failed))
        .map(|i| TuningFinding {
            item: i.item.clone(),
            status: i.status.as_str().to_string(),
            expected: i.expected.clone(),
            found: i.found.clone(),
            detail: i.detail.clone(),
        })
        .collect()
}

/// The cause of a failed maximum `max_ns` of `thread` over `limit_ns` from the test's
/// explanations: its own explanation's headline, and whether the check is invalid —
/// only when that explanation is not the system's latency *and* no sample of the
/// thread over the limit was explained as the system's latency or missed
/// ([`crate::explain::explainer::ExplainSummary::only_invalid_over`]: a stop after a
/// real failure excuses nothing). When the maximum itself was not explained (the
/// recorder was frozen for another sample), the largest explained sample's, said as
/// such (never invalid: the maximum is unexplained).
fn explained_max(
    t: &TestSummary,
    thread: usize,
    max_ns: u64,
    limit_ns: u64,
) -> (Option<String>, bool) {
    let Some(x) = &t.explain else {
        return (None, false);
    };
    let us = |ns: u64| crate::duration::us(ns, crate::duration::UsStyle::Text);
    match x.largest(&t.test, thread) {
        Some(e) if e.spike.latency_ns() == max_ns => {
            let invalid = !e.cause.valid && x.only_invalid_over(&t.test, thread, limit_ns);
            if e.cause.valid || invalid {
                return (Some(crate::explain::text::headline(e)), invalid);
            }
            // The maximum is not the system's latency, but another sample over the
            // limit is (or was not looked at): that one is why the check failed.
            let real = x
                .explained
                .iter()
                .filter(|o| o.spike.test == t.test && o.spike.thread == thread)
                .filter(|o| o.cause.valid && o.spike.latency_ns() > limit_ns)
                .max_by_key(|o| o.spike.latency_ns());
            let tally = x.tally(&t.test, thread);
            let why = match (real, tally) {
                (Some(o), _) => format!(
                    "a sample of {} over the limit is the system's: {}",
                    us(o.spike.latency_ns()),
                    crate::explain::text::headline(o)
                ),
                (None, Some(t)) if t.largest_valid_ns > limit_ns => format!(
                    "a sample of {} over the limit is the system's (its explanation was not kept)",
                    us(t.largest_valid_ns)
                ),
                (None, Some(t)) if t.missed > 0 => format!(
                    "{} sample(s) over the limit could not be explained (the recorder was busy) and count",
                    t.missed
                ),
                _ => "samples over the limit were not looked at (the explain threshold is above the limit) and count".to_string(),
            };
            (
                Some(format!("{}; but {why}", crate::explain::text::headline(e))),
                false,
            )
        }
        Some(e) => (
            Some(format!(
                "the maximum was not explained (the recorder was busy), the largest explained sample, {}, was: {}",
                us(e.spike.latency_ns()),
                crate::explain::text::headline(e)
            )),
            false,
        ),
        // The recorder could not start: the maximum has no cause, and this is why.
        None => (
            x.unavailable
                .as_ref()
                .map(|why| format!("not explained: cannot explain: {why}")),
            false,
        ),
    }
}

/// Judges every thread of every test against `limits` (a run with no other facts).
pub fn judge(tests: &[TestSummary], limits: &LimitSet) -> Verdict {
    verdict(tests, limits, RunFacts::default())
}

/// The tests of one condition and the limits they are judged against: the whole run
/// without `[[condition]]`s (`condition: None`), else one per condition.
#[derive(Debug, Clone, Copy)]
pub struct Judged<'a> {
    /// The condition's name (every line about its figures starts `NAME: `).
    pub condition: Option<&'a str>,
    /// Its tests, as measured.
    pub tests: &'a [TestSummary],
    /// Its `[limits]`.
    pub limits: &'a LimitSet,
}

/// The verdict of a run: the checks of every thread of every test against `limits`,
/// then the problems (threads without samples, then `facts.problems`, then the
/// interruption), the tuning findings and why anything was not judged (no `[limits]`,
/// threads no limit applies to, no test enabled), each rendered once; the outcome is
/// derived from them ([`crate::results::summary::Outcome`]).
pub fn verdict(tests: &[TestSummary], limits: &LimitSet, facts: RunFacts) -> Verdict {
    verdict_of(
        &[Judged {
            condition: None,
            tests,
            limits,
        }],
        facts,
    )
}

/// [`verdict`] of a run of several conditions, each judged against its own limits;
/// each check carries its condition and each line about a condition's tests starts
/// with its name (`stress: cyclic thread 0: no samples`).
pub fn verdict_of(groups: &[Judged<'_>], facts: RunFacts) -> Verdict {
    let mut checks = Vec::new();
    let mut problems = Vec::new();
    let mut unjudged = Vec::new();
    for g in groups {
        let (p, u) = judge_group(g, facts.config_missing_at.as_deref(), &mut checks);
        let prefix = crate::results::summary::condition_prefix(g.condition);
        problems.extend(p.iter().map(|p| format!("{prefix}{p}")));
        unjudged.extend(u.iter().map(|u| format!("{prefix}{u}")));
    }
    if facts.no_test_enabled {
        unjudged.push(Unjudged::NoTestEnabled.to_string());
    }
    if let Some(why) = facts.hwlat_not_run {
        unjudged.push(Unjudged::HwlatNotRun { why }.to_string());
    }
    for line in facts.tuning_not_checked {
        unjudged.push(Unjudged::TuningNotChecked { line }.to_string());
    }
    problems.extend(facts.problems.iter().map(Problem::to_string));
    problems.extend(facts.interrupted.iter().map(Problem::to_string));
    Verdict::from_parts(checks, problems, facts.tuning, unjudged)
}

/// The checks of one condition's threads (appended to `checks`), its threads without
/// samples and what of it was not judged.
fn judge_group(
    g: &Judged<'_>,
    config_missing_at: Option<&str>,
    checks: &mut Vec<Check>,
) -> (Vec<Problem>, Vec<Unjudged>) {
    let (tests, limits) = (g.tests, g.limits);
    let mut problems = Vec::new();
    let mut unjudged = Vec::new();
    if limits.is_empty() {
        unjudged.push(Unjudged::NoLimits {
            config_missing_at: config_missing_at.map(str::to_string),
        });
    }
    for t in tests {
        for th in &t.threads {
            if th.count == 0 {
                problems.push(Problem::NoSamples {
                    test: t.test.clone(),
                    thread: th.thread,
                });
            }
            let l = limits.effective(&t.test, th.cpu);
            let us = |v: Option<u64>| v.map(|x| x.saturating_mul(NS_PER_US));
            let figures = [
                ("max", th.max_ns, us(l.max_us)),
                ("avg", th.avg_ns, us(l.avg_us)),
                ("p99", th.p99_ns, us(l.p99_us)),
                ("p999", th.p999_ns, us(l.p999_us)),
                ("p9999", th.p9999_ns, us(l.p9999_us)),
                ("overruns", th.overruns, l.overruns),
            ];
            // The high nines (absent only in results of older versions, which had no
            // such limits).
            let nines = th.high_nines_ns.map(|[a, b]| {
                [
                    ("p99999", a, us(l.p99999_us)),
                    ("p999999", b, us(l.p999999_us)),
                ]
            });
            let before = checks.len();
            for (what, value, limit) in figures.into_iter().chain(nines.into_iter().flatten()) {
                if let Some(limit) = limit {
                    let pass = value <= limit;
                    let (cause, invalid) = if !pass && what == "max" {
                        explained_max(t, th.thread, value, limit)
                    } else {
                        (None, false)
                    };
                    checks.push(Check {
                        test: t.test.clone(),
                        condition: t.condition.clone(),
                        thread: th.thread,
                        cpu: th.cpu,
                        what: what.to_string(),
                        value,
                        limit,
                        pass,
                        cause,
                        invalid,
                    });
                }
            }
            if checks.len() == before && !limits.is_empty() {
                unjudged.push(Unjudged::NoLimitApplies {
                    test: t.test.clone(),
                    thread: th.thread,
                    cpu: th.cpu,
                });
            }
        }
    }
    // A rule that matched nothing that ran judged nothing: fail closed.
    for (index, r) in limits.per_cpus.iter().enumerate() {
        let used = tests.iter().any(|t| {
            r.test.as_deref().map_or(true, |x| x == t.test)
                && t.threads
                    .iter()
                    .any(|th| th.cpu.is_some_and(|c| r.cpus.contains(c)))
        });
        if !used && !tests.is_empty() {
            unjudged.push(Unjudged::RuleUnused {
                index,
                cpus: r.cpus.to_list(),
                test: r.test.clone(),
            });
        }
    }
    (problems, unjudged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::limits::{CpuLimits, Limits};
    use crate::measure::stats::LatencyStats;
    use crate::results::summary::ThreadSummary;
    use std::collections::BTreeMap;

    fn summary(cpu: usize, max_ns: u64) -> ThreadSummary {
        let mut s = LatencyStats::new(None);
        s.record(1000);
        s.record(max_ns);
        ThreadSummary::from_stats(cpu, Some(cpu), 98, 1000, &s)
    }

    #[test]
    fn per_cpu_rules_override_defaults() {
        let limits = LimitSet {
            default: Limits {
                max_us: Some(100),
                ..Default::default()
            },
            per_test: BTreeMap::new(),
            per_cpus: vec![CpuLimits {
                cpus: [1].into_iter().collect(),
                test: None,
                limits: Limits {
                    max_us: Some(20),
                    ..Default::default()
                },
            }],
        };
        let tests = vec![TestSummary {
            condition: None,
            msg_size: None,
            duration_s: None,
            histogram_us: None,
            test: "cyclic".into(),
            threads: vec![summary(0, 50_000), summary(1, 50_000)],
            explain: None,
        }];
        let v = judge(&tests, &limits);
        assert!(!v.pass);
        assert_eq!(v.checks.len(), 2);
        assert!(v.checks[0].pass && !v.checks[1].pass);
        assert_eq!(v.checks[1].limit, 20_000);
        assert_eq!(v.word(), "fail");
        assert_eq!(
            v.failures(),
            vec!["cyclic CPU 1 max 50 µs > limit 20 µs".to_string()]
        );
    }

    #[test]
    fn a_cpu_rule_that_matched_nothing_measured_is_unjudged() {
        let rule = |cpu: usize, test: Option<&str>| CpuLimits {
            cpus: [cpu].into_iter().collect(),
            test: test.map(str::to_string),
            limits: Limits {
                max_us: Some(5),
                ..Default::default()
            },
        };
        let limits = LimitSet {
            default: Limits {
                max_us: Some(100),
                ..Default::default()
            },
            per_test: BTreeMap::new(),
            // CPU 1 was not measured (a cpuset); the pmq rule's test did not run.
            per_cpus: vec![rule(1, None), rule(0, Some("pmq")), rule(0, None)],
        };
        let tests = vec![TestSummary {
            condition: None,
            msg_size: None,
            duration_s: None,
            histogram_us: None,
            test: "cyclic".into(),
            threads: vec![summary(0, 1_000)],
            explain: None,
        }];
        let v = judge(&tests, &limits);
        assert!(!v.pass);
        assert_eq!(v.word(), "unjudged");
        assert_eq!(
            v.unjudged_reason(),
            "limits.cpus[0] (CPU 1) applied to nothing measured; \
             limits.cpus[1] (CPU 0, pmq) applied to nothing measured"
        );
    }

    /// An explanation of thread 0's sample of `latency_ns`, valid or not.
    fn explained(latency_ns: u64, valid: bool) -> crate::explain::Explanation {
        let mut e = crate::explain::Explanation::default();
        e.spike.test = "cyclic".into();
        e.spike.wake_ns = latency_ns as i64;
        e.cause.kind = if valid {
            crate::explain::CauseKind::Task
        } else {
            crate::explain::CauseKind::Stopped
        };
        e.cause.valid = valid;
        e.cause.text = if valid { "CPU 0 ran burn" } else { "stopped" }.into();
        e
    }

    /// Thread 0 with a maximum of 5 s, whose explanation is a stop, and `others`
    /// explained besides; `missed` samples the recorder did not see (`u64::MAX`: no
    /// tally at all).
    fn stopped_run(others: &[(u64, bool)], missed: u64) -> Verdict {
        stopped_run_at(others, missed, 100_000)
    }

    /// [`stopped_run`] with the recorder's threshold at `threshold_ns`.
    fn stopped_run_at(others: &[(u64, bool)], missed: u64, threshold_ns: u64) -> Verdict {
        use crate::explain::explainer::{ExplainSummary, ThreadTally};
        let mut x = ExplainSummary::default();
        let mut all = vec![(5_000_000_000, false)];
        all.extend_from_slice(others);
        for (ns, valid) in &all {
            x.explained.push(explained(*ns, *valid));
        }
        if missed != u64::MAX {
            x.threads.push(ThreadTally {
                test: "cyclic".into(),
                thread: 0,
                largest_valid_ns: all.iter().filter(|e| e.1).map(|e| e.0).max().unwrap_or(0),
                missed,
                threshold_ns,
            });
        }
        let tests = vec![TestSummary {
            condition: None,
            msg_size: None,
            duration_s: None,
            histogram_us: None,
            test: "cyclic".into(),
            threads: vec![summary(0, 5_000_000_000)],
            explain: Some(x),
        }];
        let limits = LimitSet {
            default: Limits {
                max_us: Some(100),
                ..Default::default()
            },
            ..Default::default()
        };
        judge(&tests, &limits)
    }

    #[test]
    fn a_stop_excuses_a_maximum_only_when_nothing_real_exceeded_the_limit() {
        // Only the stop (and a real sample within the limit): invalid, never pass.
        let v = stopped_run(&[(80_000, true)], 0);
        assert_eq!(v.word(), "invalid", "{v:?}");
        assert!(v.checks[0].invalid);
        // A real 300 µs sample over the 100 µs limit before the stop: the unit failed.
        let v = stopped_run(&[(300_000, true)], 0);
        assert_eq!(v.word(), "fail", "{v:?}");
        assert!(!v.checks[0].invalid);
        // The failure names the sample that failed it, and the maximum for what it is.
        let f = &v.failures()[0];
        assert!(f.contains("not the system's latency: stopped; but a sample of 300 µs over the limit is the system's: CPU 0 ran burn"), "{f}");
        // A sample over the threshold the recorder was too busy to see: fail closed.
        let v = stopped_run(&[], 1);
        assert_eq!(v.word(), "fail", "{v:?}");
        assert!(
            v.failures()[0].contains("1 sample(s) over the limit could not be explained"),
            "{:?}",
            v.failures()
        );
        // A threshold above the limit: samples between them were never looked at.
        let v = stopped_run_at(&[], 0, 1_000_000);
        assert_eq!(v.word(), "fail", "{v:?}");
        // No tally (results of an older version): fail closed.
        let v = stopped_run(&[], u64::MAX);
        assert_eq!(v.word(), "fail", "{v:?}");
    }

    #[test]
    fn nothing_judged_is_not_a_pass() {
        let tests = vec![TestSummary {
            condition: None,
            msg_size: None,
            duration_s: None,
            histogram_us: None,
            test: "cyclic".into(),
            threads: vec![summary(0, 50_000), summary(1, 50_000)],
            explain: None,
        }];
        // No [limits] at all (also what a missing configuration file gives).
        let v = judge(&tests, &LimitSet::default());
        assert_eq!(v.word(), "unjudged");
        assert!(!v.pass);
        assert!(v.unjudged_reason().contains("no [limits]"), "{v:?}");
        // Limits for CPU 1 only: CPU 0 is measured but not judged.
        let limits = LimitSet {
            per_cpus: vec![CpuLimits {
                cpus: [1].into_iter().collect(),
                test: None,
                limits: Limits {
                    max_us: Some(100),
                    ..Default::default()
                },
            }],
            ..Default::default()
        };
        let v = judge(&tests, &limits);
        assert_eq!(v.word(), "unjudged");
        assert_eq!(v.unjudged_reason(), "cyclic CPU 0: no limit applies");
        // A failure wins over unjudged.
        let limits = LimitSet {
            per_cpus: vec![CpuLimits {
                cpus: [1].into_iter().collect(),
                test: None,
                limits: Limits {
                    max_us: Some(1),
                    ..Default::default()
                },
            }],
            ..Default::default()
        };
        assert_eq!(judge(&tests, &limits).word(), "fail");
    }

    #[test]
    fn empty_threads_fail_even_without_limits() {
        let tests = vec![TestSummary {
            condition: None,
            msg_size: None,
            duration_s: None,
            histogram_us: None,
            test: "cyclic".into(),
            threads: vec![ThreadSummary::from_stats(
                0,
                None,
                98,
                1000,
                &LatencyStats::new(None),
            )],
            explain: None,
        }];
        let v = judge(&tests, &LimitSet::default());
        assert!(!v.pass);
        assert_eq!(v.word(), "fail");
        assert_eq!(v.problems.len(), 1);
    }

    #[test]
    fn facts_are_rendered_in_order_as_the_results_file_always_said() {
        let tests = vec![TestSummary {
            condition: None,
            msg_size: Some(32),
            duration_s: None,
            histogram_us: None,
            test: "pmq".into(),
            threads: vec![ThreadSummary::from_stats(
                0,
                None,
                98,
                1000,
                &LatencyStats::new(None),
            )],
            explain: None,
        }];
        let facts = RunFacts {
            problems: vec![
                Problem::Tuning { mode: "apply" },
                Problem::NotRun {
                    test: "pipe".into(),
                    why: "no queue".into(),
                },
                Problem::Skipped {
                    test: "cyclic".into(),
                },
                Problem::Load("# load cpu:0 exited early".into()),
            ],
            tuning: vec![],
            no_test_enabled: true,
            config_missing_at: Some("/etc/rtbench/rtbench.toml".into()),
            interrupted: Some(Problem::Interrupted {
                stop: StopCause::Sigterm,
                after_s: 3.25,
            }),
            hwlat_not_run: Some("unsupported: CONFIG_HWLAT_TRACER".into()),
            tuning_not_checked: Vec::new(),
        };
        let v = verdict(&tests, &LimitSet::default(), facts);
        assert_eq!(
            v.problems,
            [
                "pmq pair 0: no samples",
                "tuning apply: not as configured",
                "pipe: not run: no queue",
                "cyclic: not run (interrupted before it)",
                "load: load cpu:0 exited early",
                "interrupted (sigterm) after 3.2 s",
            ]
        );
        assert_eq!(
            v.unjudged,
            [
                "no configuration file at /etc/rtbench/rtbench.toml: no [limits] configured: \
                 measured, nothing judged",
                "no test enabled ([cyclic], [pmq] and [pipe] are all disabled)",
                "hwlat gate not run: unsupported: CONFIG_HWLAT_TRACER",
            ]
        );
        assert_eq!(v.word(), "fail");
    }
}

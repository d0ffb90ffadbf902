//! Pass/fail limits and the verdict.
//!
//! Limits come from `[limits]` in rtbench.toml, in **µs** as users write them, and are
//! judged against **ns** figures. A default set applies to every test and CPU;
//! `[limits.<test>]` overrides it for one test and `[[limits.cpus]]` for a CPU set
//! (later rules win).

use crate::cpuset::CpuSet;
use crate::report::summary::TestSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One set of limits; every field optional. Latencies in **µs**.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Largest allowed sample.
    pub max_us: Option<u64>,
    /// Largest allowed mean.
    pub avg_us: Option<u64>,
    /// Largest allowed 99th percentile.
    pub p99_us: Option<u64>,
    /// Largest allowed 99.9th percentile.
    pub p999_us: Option<u64>,
    /// Largest allowed 99.99th percentile.
    pub p9999_us: Option<u64>,
    /// Largest allowed number of overruns (late wakeups past the next deadline).
    pub overruns: Option<u64>,
}

impl Limits {
    /// `other`'s set fields replace ours.
    pub fn overlay(&self, other: &Limits) -> Limits {
        Limits {
            max_us: other.max_us.or(self.max_us),
            avg_us: other.avg_us.or(self.avg_us),
            p99_us: other.p99_us.or(self.p99_us),
            p999_us: other.p999_us.or(self.p999_us),
            p9999_us: other.p9999_us.or(self.p9999_us),
            overruns: other.overruns.or(self.overruns),
        }
    }
}

/// Limits for a CPU set (`[[limits.cpus]]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuLimits {
    /// The CPUs the rule applies to.
    pub cpus: CpuSet,
    /// Optional test name the rule is restricted to.
    pub test: Option<String>,
    /// The limits.
    pub limits: Limits,
}

/// All limits of a configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitSet {
    /// Applies everywhere.
    pub default: Limits,
    /// Per test name.
    pub per_test: BTreeMap<String, Limits>,
    /// Per CPU set, in order.
    pub per_cpus: Vec<CpuLimits>,
}

impl LimitSet {
    /// The limits in force for `test` on `cpu`.
    pub fn effective(&self, test: &str, cpu: Option<usize>) -> Limits {
        let mut l = self.default.clone();
        if let Some(t) = self.per_test.get(test) {
            l = l.overlay(t);
        }
        for r in &self.per_cpus {
            let cpu_ok = cpu.is_some_and(|c| r.cpus.contains(c));
            let test_ok = r.test.as_deref().map_or(true, |t| t == test);
            if cpu_ok && test_ok {
                l = l.overlay(&r.limits);
            }
        }
        l
    }
}

/// One judged figure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Test name.
    pub test: String,
    /// Thread index.
    pub thread: usize,
    /// CPU, if pinned.
    pub cpu: Option<usize>,
    /// Which figure: `max`, `avg`, `p99`, `p999`, `p9999`, `overruns`.
    pub what: String,
    /// Measured value (**ns** for latencies, a count for overruns).
    pub value: u64,
    /// Limit in the same unit as `value`.
    pub limit: u64,
    /// Whether `value <= limit`.
    pub pass: bool,
}

/// The self-test's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// True when every check passed (and at least one sample was taken per thread).
    pub pass: bool,
    /// Every judged figure.
    pub checks: Vec<Check>,
    /// Problems that fail the run regardless of limits (e.g. a thread with no samples).
    pub problems: Vec<String>,
}

impl Verdict {
    /// `pass` or `fail`, the value of `RTBENCH_VERDICT`.
    pub fn word(&self) -> &'static str {
        if self.pass {
            "pass"
        } else {
            "fail"
        }
    }

    /// The worst (smallest-margin) check of `test` on `thread`, for one-line reports.
    pub fn checks_for(&self, test: &str, thread: usize) -> impl Iterator<Item = &Check> {
        let test = test.to_string();
        self.checks
            .iter()
            .filter(move |c| c.test == test && c.thread == thread)
    }
}

/// Judges every thread of every test against `limits`.
pub fn judge(tests: &[TestSummary], limits: &LimitSet) -> Verdict {
    let mut checks = Vec::new();
    let mut problems = Vec::new();
    for t in tests {
        for th in &t.threads {
            if th.count == 0 {
                problems.push(format!("{} thread {}: no samples", t.test, th.thread));
            }
            let l = limits.effective(&t.test, th.cpu);
            let us = |v: Option<u64>| v.map(|x| x.saturating_mul(1000));
            let figures = [
                ("max", th.max_ns, us(l.max_us)),
                ("avg", th.avg_ns, us(l.avg_us)),
                ("p99", th.p99_ns, us(l.p99_us)),
                ("p999", th.p999_ns, us(l.p999_us)),
                ("p9999", th.p9999_ns, us(l.p9999_us)),
                ("overruns", th.overruns, l.overruns),
            ];
            for (what, value, limit) in figures {
                if let Some(limit) = limit {
                    checks.push(Check {
                        test: t.test.clone(),
                        thread: th.thread,
                        cpu: th.cpu,
                        what: what.to_string(),
                        value,
                        limit,
                        pass: value <= limit,
                    });
                }
            }
        }
    }
    let pass = problems.is_empty() && checks.iter().all(|c| c.pass);
    Verdict {
        pass,
        checks,
        problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stats::LatencyStats;
    use crate::report::summary::ThreadSummary;

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
            test: "cyclic".into(),
            threads: vec![summary(0, 50_000), summary(1, 50_000)],
        }];
        let v = judge(&tests, &limits);
        assert!(!v.pass);
        assert_eq!(v.checks.len(), 2);
        assert!(v.checks[0].pass && !v.checks[1].pass);
        assert_eq!(v.checks[1].limit, 20_000);
        assert_eq!(v.word(), "fail");
    }

    #[test]
    fn empty_threads_fail_even_without_limits() {
        let tests = vec![TestSummary {
            test: "cyclic".into(),
            threads: vec![ThreadSummary::from_stats(
                0,
                None,
                98,
                1000,
                &LatencyStats::new(None),
            )],
        }];
        let v = judge(&tests, &LimitSet::default());
        assert!(!v.pass);
        assert_eq!(v.problems.len(), 1);
    }
}

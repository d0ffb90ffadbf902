//! The self-test's verdict: every thread of every test judged against the configured
//! limits (`[limits]`, in **µs**, see [`crate::config::limits`]) on its **ns** figures.
//!
//! It fails closed: a thread no limit applies to is *unjudged*, and a run with anything
//! unjudged is not a pass (see [`crate::results::summary::Outcome`]).

use crate::config::limits::LimitSet;
use crate::results::summary::{is_pair_test, thread_label, Check, TestSummary, Verdict};
use crate::sys::clock::NS_PER_US;

/// Judges every thread of every test against `limits`.
pub fn judge(tests: &[TestSummary], limits: &LimitSet) -> Verdict {
    let mut checks = Vec::new();
    let mut problems = Vec::new();
    let mut unjudged = Vec::new();
    if limits.is_empty() {
        unjudged.push("no [limits] configured: measured, nothing judged".to_string());
    }
    for t in tests {
        for th in &t.threads {
            if th.count == 0 {
                let who = if is_pair_test(&t.test) {
                    "pair"
                } else {
                    "thread"
                };
                problems.push(format!("{} {who} {}: no samples", t.test, th.thread));
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
            let before = checks.len();
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
            if checks.len() == before && !limits.is_empty() {
                unjudged.push(format!(
                    "{}: no limit applies",
                    thread_label(&t.test, th.thread, th.cpu)
                ));
            }
        }
    }
    Verdict::new(checks, problems, unjudged)
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
            msg_size: None,
            test: "cyclic".into(),
            threads: vec![summary(0, 50_000), summary(1, 50_000)],
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
    fn nothing_judged_is_not_a_pass() {
        let tests = vec![TestSummary {
            msg_size: None,
            test: "cyclic".into(),
            threads: vec![summary(0, 50_000), summary(1, 50_000)],
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
            msg_size: None,
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
        assert_eq!(v.word(), "fail");
        assert_eq!(v.problems.len(), 1);
    }
}

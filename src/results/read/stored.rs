//! A stored self-test result (`results::store::StoredRun`) as a latency plot: one test's
//! Histogram `[value_ns, count]` pairs re-binned into 1-µs classes as cyclictest and
//! OSADL use (up to `[output] histogram_us` when the test carries it, the rest counted
//! as overflows), with that test's own duration, verdict and limits.

use super::{Curve, Histograms, Meta};
use crate::results::store::StoredRun;
use crate::results::summary::{is_pair_test, TestSummary};
use std::collections::BTreeMap;

/// The name `--test` selects a test by: `cyclic`, or with `[[condition]]`s
/// `CONDITION/TEST` (`stress/cyclic`; the test's name alone is its first condition's).
pub fn selector(t: &TestSummary) -> String {
    match &t.condition {
        Some(c) => format!("{c}/{}", t.test),
        None => t.test.clone(),
    }
}

/// The plot of test `test` of `run` (default: `cyclic`, else the first; with
/// conditions `CONDITION/TEST`, one plot per condition and test). Errors are
/// messages without the input name: no such test (naming those there are), counts or
/// values past 2^64 - 1.
pub fn plot(run: &StoredRun, test: Option<&str>) -> Result<Histograms, String> {
    histograms(run, select(run, test)?)
}

/// Test `test` of `run` (default: `cyclic`, else the first): by its selector
/// ([`selector`]) or its name alone. Errors: no such test, naming those there are.
pub fn select<'a>(run: &'a StoredRun, test: Option<&str>) -> Result<&'a TestSummary, String> {
    let names = || {
        run.tests
            .iter()
            .map(selector)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen = match test {
        Some(name) => run
            .tests
            .iter()
            .find(|t| selector(t) == name || t.test == name)
            .ok_or_else(|| {
                format!(
                    "no test {name:?} in the stored result (it has: {})",
                    names()
                )
            })?,
        None => run
            .tests
            .iter()
            .find(|t| t.test == "cyclic")
            .or(run.tests.first())
            .ok_or("the stored result has no tests")?,
    };
    Ok(chosen)
}

/// The histograms of `chosen`, a test of `run`, with that test's own duration, verdict
/// and limits. Errors are messages without the input name: counts or values past
/// 2^64 - 1.
pub fn histograms(run: &StoredRun, chosen: &TestSummary) -> Result<Histograms, String> {
    // `[output] histogram_us`: cyclictest's `-h US`, buckets at or beyond it are overflows.
    let range_ns = chosen.histogram_us.map(|h| h.saturating_mul(1000));
    let curves = chosen
        .threads
        .iter()
        .map(|t| {
            let mut classes: BTreeMap<u64, u64> = BTreeMap::new();
            let mut total = 0u64;
            let mut overflows = 0u64;
            for &[value_ns, n] in &t.histogram {
                total = total.checked_add(n).ok_or_else(|| {
                    format!(
                        "test {}, thread {}: count {n} at {value_ns} ns takes the samples \
                         past 2^64 - 1 (out of range)",
                        chosen.test, t.thread
                    )
                })?;
                // A 1-µs class ends within 64 bits (its start is at most u64::MAX − 1615).
                let class = value_ns / 1000 * 1000;
                if n > 0 && range_ns.is_some_and(|r| class >= r) {
                    overflows += n;
                } else if n > 0 && class.checked_add(1000).is_some() {
                    spread(&mut classes, value_ns, n, range_ns, &mut overflows);
                } else if n > 0 {
                    return Err(format!(
                        "test {}, thread {}: histogram value {value_ns} ns is out of range \
                         (its 1-µs class ends past 2^64 - 1 ns)",
                        chosen.test, t.thread
                    ));
                }
            }
            Ok(Curve {
                thread: t.thread,
                cpu: t.cpu,
                bucket_ns: 1000,
                buckets: classes.into_iter().collect(),
                overflows,
                range_ns,
                max_ns: t.max_ns,
                p999_ns: Some(t.p999_ns),
                run: None,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let si = &run.sysinfo;
    let mut name = format!(
        "{}{}",
        crate::results::summary::condition_prefix(chosen.condition.as_deref()),
        chosen.test
    );
    if run.interrupted {
        name.push_str(" (interrupted)");
    }
    let (verdict, run_verdict) = verdict_lines(run, chosen);
    // The load of the test's condition, else the run's.
    let load = match &chosen.condition {
        Some(c) => run
            .conditions
            .iter()
            .find(|r| r.name == *c)
            .map_or_else(String::new, |r| r.load.clone()),
        None => run.load.clone(),
    };
    Ok(Histograms {
        meta: Meta {
            format: "rtbench self-test result".into(),
            host: Some(si.nodename.clone()),
            kernel: Some(format!(
                "{} {} {}",
                si.release, si.preempt_model, si.machine
            )),
            date: Some(crate::date::iso_s(run.start_s)),
            test: Some(name),
            command: None,
            // Files of older versions have only the whole run's duration.
            duration_s: Some(chosen.duration_s.unwrap_or(run.duration_s)),
            load: Some(if load.is_empty() { "none".into() } else { load }),
            verdict: Some(verdict),
            run_verdict,
            limits: limits_of(run, chosen),
            pairs: is_pair_test(&chosen.test),
            binned_all: range_ns.is_none(),
        },
        curves,
    })
}

/// The verdict of `test` alone — `PASS`, `INVALID: …`, `UNJUDGED: …` or `FAIL: what
/// failed; …` from its own checks, problems and unjudged threads (each names its test
/// first, [`crate::results::summary::thread_label`]) — and, when the whole run's verdict
/// says more, that one: `run: FAIL, 2 more findings outside this test (rtbench report)`.
fn verdict_lines(run: &StoredRun, t: &TestSummary) -> (String, Option<String>) {
    let v = &run.verdict;
    let test = format!(
        "{}{}",
        crate::results::summary::condition_prefix(t.condition.as_deref()),
        t.test
    );
    let ours = |s: &str| s.strip_prefix(&test).is_some_and(|r| r.starts_with(' '));
    let checks: Vec<_> = v
        .checks
        .iter()
        .filter(|c| c.test == t.test && c.condition == t.condition)
        .collect();
    let failed: Vec<String> = checks
        .iter()
        .filter(|c| !c.pass && !c.invalid)
        .map(|c| c.failure_text())
        .chain(v.problems.iter().filter(|p| ours(p)).cloned())
        .collect();
    let invalid: Vec<String> = checks
        .iter()
        .filter(|c| !c.pass && c.invalid)
        .map(|c| c.failure_text())
        .collect();
    let unjudged: Vec<String> = v.unjudged.iter().filter(|u| ours(u)).cloned().collect();
    let own = if !failed.is_empty() {
        format!("FAIL: {}", failed.join("; "))
    } else if !invalid.is_empty() {
        format!("INVALID: {}", invalid.join("; "))
    } else if checks.is_empty() {
        "UNJUDGED: no limit judged this test".to_string()
    } else if !unjudged.is_empty() {
        format!("UNJUDGED: {}", unjudged.join("; "))
    } else {
        "PASS".to_string()
    };
    let own_word = own.split(':').next().unwrap_or_default();
    let all = v.failures().len();
    let others = all.saturating_sub(failed.len() + invalid.len());
    let run_word = v.word().to_uppercase();
    let run_line = if others > 0 {
        Some(format!(
            "run: {run_word}, {others} more finding{} outside this test (rtbench report)",
            if others == 1 { "" } else { "s" }
        ))
    } else if run_word != own_word {
        Some(format!("run: {run_word} (rtbench report)"))
    } else {
        None
    };
    (own, run_line)
}

/// The distinct latency limits (statistic, **ns**) judged for `test`, in check order.
fn limits_of(run: &StoredRun, t: &TestSummary) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = Vec::new();
    for c in run
        .verdict
        .checks
        .iter()
        .filter(|c| c.test == t.test && c.condition == t.condition && c.is_latency())
    {
        let l = (c.statistic().to_string(), c.limit);
        if !v.contains(&l) {
            v.push(l);
        }
    }
    v
}

/// Adds `n` samples of the stored pair `[value_ns, n]` to the 1-µs `classes`: over the
/// classes its bucket covers when the bucket is wider than 1 µs
/// (`measure::histogram::bucket_of`: from 131 µs up), in proportion to the overlap, the rounding remainder in the
/// class of `value_ns` itself — so that a tail plotted from log buckets has no empty
/// classes between them. Parts at or beyond the plot's range (`range_ns`) count as
/// overflows. A value that is not its bucket's upper edge (results of versions with
/// 0.1 % buckets, which leave no empty classes below 1 ms) stays in its own class.
fn spread(
    classes: &mut BTreeMap<u64, u64>,
    value_ns: u64,
    n: u64,
    range_ns: Option<u64>,
    overflows: &mut u64,
) {
    let (lo, hi) = crate::measure::histogram::bucket_of(value_ns)
        .filter(|&(lo, hi)| hi - lo >= 1000 && hi == value_ns)
        .unwrap_or((value_ns, value_ns));
    let width = (hi - lo + 1) as u128;
    let mut given = 0u64;
    for c in lo / 1000..=hi / 1000 {
        let (start, end) = ((c * 1000).max(lo), (c * 1000 + 999).min(hi));
        let part = (n as u128 * (end - start + 1) as u128 / width) as u64;
        let part = if c == hi / 1000 { n - given } else { part };
        given += part;
        if part == 0 {
            continue;
        }
        if range_ns.is_some_and(|r| c * 1000 >= r) {
            *overflows += part;
        } else {
            *classes.entry(c * 1000).or_default() += part;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wide_bucket_is_spread_over_its_classes_and_keeps_its_count() {
        // 600 µs lies in a bucket 4096 ns wide: its upper edge as stored.
        let (lo, hi) = crate::measure::histogram::bucket_of(600_000).unwrap();
        assert!(hi - lo + 1 == 4096, "{lo}..{hi}");
        let mut classes = BTreeMap::new();
        let mut overflows = 0;
        spread(&mut classes, hi, 1000, None, &mut overflows);
        assert_eq!(classes.values().sum::<u64>(), 1000);
        assert_eq!(overflows, 0);
        assert!(classes.len() >= 4, "{classes:?}");
        assert!(classes.keys().all(|&c| c >= lo / 1000 * 1000 && c <= hi));
        // A narrow bucket, and a value that is not an upper edge: one class.
        let mut one = BTreeMap::new();
        spread(&mut one, 50_123, 7, None, &mut overflows);
        spread(&mut one, 600_001, 3, None, &mut overflows);
        assert_eq!(one, BTreeMap::from([(50_000, 7), (600_000, 3)]));
        // The part beyond the plot's range is an overflow.
        let mut cut = BTreeMap::new();
        spread(
            &mut cut,
            hi,
            1000,
            Some(lo / 1000 * 1000 + 2000),
            &mut overflows,
        );
        assert_eq!(cut.values().sum::<u64>() + overflows, 1000);
        assert!(overflows > 0);
    }
}

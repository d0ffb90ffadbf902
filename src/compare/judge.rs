//! What two histograms of one CPU (or pair) support, statistic by statistic.
//!
//! A percentile `q` of `n` samples is the sample of rank `⌈q·n⌉`. How far that rank
//! may move by chance is binomial: its standard deviation is `√(n·q·(1−q))` ranks, so
//! [`Z`] of them each way bound it (about 3 in 1000 that the true percentile lies
//! outside, for independent samples). The values at those ranks, read from the
//! histogram (the lower edge of the lower rank's bucket, the upper edge of the upper
//! one's), are the percentile's interval. The upper rank must exist: a percentile needs
//! at least `t` samples above it, `t = ((Z·√q + √(Z²·q + 4)) / 2)²` (about 11 for
//! Z = 3), in *each* run — p99.9 about 11 000 samples per CPU, p99.99 about 110 000.
//! With fewer, or with the upper rank among samples beyond the histogram's range, the
//! statistic is inconclusive. The maximum is one sample: it says what happened once,
//! never whether a system is worse; it is shown, always inconclusive.
//!
//! Samples of one run are not independent (a noisy neighbour, a hypervisor, a busy
//! second lift many at once), and two runs of the same system differ by more than the
//! binomial interval says. So a difference counts only beyond a tolerance
//! ([`Tolerance`], `--tolerance`/`--tolerance-us`): regression when the candidate's
//! whole interval lies above the baseline's grown by it, improvement the other way,
//! equivalent when each interval lies within the other's grown by it, inconclusive
//! otherwise.

use crate::results::read::Curve;

/// Standard deviations of the rank on each side of a percentile's interval.
pub const Z: f64 = 3.0;

/// The statistics compared, as `(name, quantile)`; `None` is the maximum.
pub const STATS: [(&str, Option<f64>); 6] = [
    ("p50", Some(0.5)),
    ("p90", Some(0.9)),
    ("p99", Some(0.99)),
    ("p99.9", Some(0.999)),
    ("p99.99", Some(0.9999)),
    ("max", None),
];

/// How much larger a latency must be to count as a difference: `rel` (1.0 = 100 %)
/// of the smaller and `abs_ns` **ns** more.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Relative part (0.5 = 50 %).
    pub rel: f64,
    /// Absolute part, **ns**.
    pub abs_ns: u64,
}

impl Tolerance {
    /// `v` grown by the tolerance.
    fn grow(&self, v: u64) -> f64 {
        v as f64 * (1.0 + self.rel) + self.abs_ns as f64
    }
}

/// Default relative tolerance, % (`--tolerance`): a latency twice as large. Repeated
/// runs of a shared virtual machine differ by up to about that in their body
/// (tests/cli/compare.rs measures it); a dedicated board can be judged tighter.
pub const DEFAULT_TOLERANCE_PCT: f64 = 100.0;
/// Default absolute tolerance, **µs** (`--tolerance-us`): below it no latency
/// difference matters on any board rtbench targets.
pub const DEFAULT_TOLERANCE_US: u64 = 5;

/// A verdict on one statistic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The two lie within the tolerance of each other.
    Equivalent,
    /// The candidate's is larger beyond the tolerance.
    Regression,
    /// The candidate's is smaller beyond the tolerance.
    Improvement,
    /// The samples cannot support either claim.
    Inconclusive,
}

impl Verdict {
    /// `equivalent`, `regression`, `improvement`, `inconclusive`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Equivalent => "equivalent",
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// One statistic of one histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    /// The value, **ns** (the lower edge of its bucket; the exact maximum); `None`
    /// beyond the histogram's range.
    pub value_ns: Option<u64>,
    /// Its interval, **ns**; `None` when the samples do not bound it.
    pub interval_ns: Option<(u64, u64)>,
    /// Samples above the percentile.
    pub above: u64,
}

/// A statistic of two runs, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// `p50` … `max`.
    pub stat: &'static str,
    /// The baseline's.
    pub a: Estimate,
    /// The candidate's.
    pub b: Estimate,
    /// What the samples support.
    pub verdict: Verdict,
    /// Why, for an inconclusive verdict (empty otherwise).
    pub why: String,
}

/// Samples of `c`: binned and beyond the range.
pub fn samples(c: &Curve) -> u64 {
    c.buckets
        .iter()
        .map(|b| b.1)
        .fold(c.overflows, u64::saturating_add)
}

/// The bucket `[lo, hi)` holding the sample of rank `r` (1-based, ascending); `None`
/// among the overflows.
fn at_rank(c: &Curve, r: u64) -> Option<(u64, u64)> {
    let mut seen = 0u64;
    for &(lo, n) in &c.buckets {
        seen = seen.saturating_add(n);
        if seen >= r {
            return Some((lo, c.bucket_end(lo)));
        }
    }
    None
}

/// Samples a percentile `q` needs above it in each run (see the module documentation).
pub fn needed_above(q: f64) -> f64 {
    let t = (Z * q.sqrt() + (Z * Z * q + 4.0).sqrt()) / 2.0;
    (t * t).ceil()
}

/// Percentile `q` of `c` (`None`: the maximum).
pub fn estimate(c: &Curve, q: Option<f64>) -> Estimate {
    let n = samples(c);
    let Some(q) = q else {
        return Estimate {
            value_ns: Some(c.max_ns),
            interval_ns: None,
            above: 0,
        };
    };
    let nf = n as f64;
    let rank = ((q * nf).ceil() as u64).clamp(1, n.max(1));
    let sd = (nf * q * (1.0 - q)).sqrt();
    let lo_rank = ((q * nf - Z * sd).floor() as u64).max(1);
    let hi_rank = (q * nf + Z * sd).ceil() as u64 + 1;
    let interval_ns = if hi_rank <= n && n - rank >= needed_above(q) as u64 {
        match (at_rank(c, lo_rank), at_rank(c, hi_rank)) {
            (Some((lo, _)), Some((_, hi))) => Some((lo, hi)),
            _ => None,
        }
    } else {
        None
    };
    Estimate {
        value_ns: at_rank(c, rank).map(|b| b.0),
        interval_ns,
        above: n - rank,
    }
}

/// Every statistic of [`STATS`] of baseline `a` against candidate `b`.
pub fn compare(a: &Curve, b: &Curve, tol: Tolerance) -> Vec<Judgement> {
    STATS
        .iter()
        .map(|&(stat, q)| {
            let (ea, eb) = (estimate(a, q), estimate(b, q));
            let (verdict, why) = judge(stat, q, &ea, &eb, tol);
            Judgement {
                stat,
                a: ea,
                b: eb,
                verdict,
                why,
            }
        })
        .collect()
}

/// The verdict on `stat` (quantile `q`) and why, when inconclusive.
fn judge(
    stat: &str,
    q: Option<f64>,
    a: &Estimate,
    b: &Estimate,
    tol: Tolerance,
) -> (Verdict, String) {
    let Some(q) = q else {
        return (
            Verdict::Inconclusive,
            "the max is one sample: what happened once, not what the system does".into(),
        );
    };
    let (Some((alo, ahi)), Some((blo, bhi))) = (a.interval_ns, b.interval_ns) else {
        let need = needed_above(q);
        return (
            Verdict::Inconclusive,
            format!(
                "{stat} needs {need:.0} samples above it in each run (about {} per CPU), \
                 within the histogram's range: the baseline has {}, this run {}",
                (need / (1.0 - q)).round(),
                a.above,
                b.above
            ),
        );
    };
    if blo as f64 > tol.grow(ahi) {
        (Verdict::Regression, String::new())
    } else if alo as f64 > tol.grow(bhi) {
        (Verdict::Improvement, String::new())
    } else if bhi as f64 <= tol.grow(alo) && ahi as f64 <= tol.grow(blo) {
        (Verdict::Equivalent, String::new())
    } else {
        (
            Verdict::Inconclusive,
            format!(
                "{stat}: A's interval and B's neither lie within the tolerance of each other \
                 nor beyond it (longer runs narrow them)"
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A curve of `n` samples per µs value in `values` (1-µs buckets).
    fn curve(values: &[(u64, u64)]) -> Curve {
        Curve {
            thread: 0,
            cpu: Some(0),
            bucket_ns: 1000,
            buckets: values.iter().map(|&(us, n)| (us * 1000, n)).collect(),
            overflows: 0,
            range_ns: None,
            max_ns: values.last().map_or(0, |v| v.0 * 1000),
            p999_ns: None,
            run: None,
        }
    }

    const TOL: Tolerance = Tolerance {
        rel: 0.2,
        abs_ns: 1000,
    };

    #[test]
    fn the_same_histogram_is_equivalent_where_the_samples_bound_it() {
        // 10 000 samples: 300 at each µs of 10..=40, 11 at each of 41..=100, 40 at 200.
        let mut values: Vec<(u64, u64)> = (10..=40).map(|us| (us, 300)).collect();
        values.extend((41..=100).map(|us| (us, 11)));
        values.push((200, 40));
        let c = curve(&values);
        let v = compare(&c, &c, TOL);
        let word = |s: &str| v.iter().find(|j| j.stat == s).unwrap().verdict;
        assert_eq!(word("p50"), Verdict::Equivalent);
        assert_eq!(word("p90"), Verdict::Equivalent);
        assert_eq!(word("p99"), Verdict::Equivalent);
        // 10 above p99.9, fewer than it needs.
        assert_eq!(word("p99.9"), Verdict::Inconclusive);
        assert_eq!(word("max"), Verdict::Inconclusive);
        assert!(
            v[3].why.contains("needs 11 samples above it"),
            "{}",
            v[3].why
        );
    }

    #[test]
    fn a_percentile_where_the_histogram_jumps_is_inconclusive_even_against_itself() {
        // p90 between 12 and 20 µs: its interval spans both, wider than the tolerance.
        let c = curve(&[(10, 5000), (12, 4000), (20, 900), (50, 99), (90, 1)]);
        assert_eq!(compare(&c, &c, TOL)[1].verdict, Verdict::Inconclusive);
    }

    #[test]
    fn a_shift_beyond_the_tolerance_is_a_regression_the_other_way_an_improvement() {
        let a = curve(&[(10, 9000), (20, 1000)]);
        let b = curve(&[(40, 9000), (80, 1000)]);
        let v = compare(&a, &b, TOL);
        assert_eq!(v[0].verdict, Verdict::Regression);
        assert_eq!(v[1].verdict, Verdict::Regression);
        let v = compare(&b, &a, TOL);
        assert_eq!(v[0].verdict, Verdict::Improvement);
        // Within the tolerance: equivalent.
        let c = curve(&[(11, 9000), (21, 1000)]);
        assert_eq!(compare(&a, &c, TOL)[0].verdict, Verdict::Equivalent);
    }

    #[test]
    fn what_each_percentile_needs() {
        assert_eq!(needed_above(0.999), 11.0);
        assert_eq!(needed_above(0.9999), 11.0);
        assert_eq!(needed_above(0.5), 7.0);
    }
}

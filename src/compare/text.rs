//! `rtbench compare`'s text: the runs by letter, then each candidate against the
//! baseline — what differs between the systems, a table per test and CPU (or pair)
//! with every statistic of both runs (**µs**) and its verdict, the reasons of the
//! inconclusive ones once each, and the candidate's verdict line.

use super::judge::{self, Tolerance, Verdict};
use super::{letter, Run, FACTS};
use crate::plot::Curve;
use std::fmt::Write as _;

/// A candidate against the baseline, as shown and as the exit code sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The candidate's letter.
    pub run: String,
    /// Its verdict: regression when any statistic regressed, else improvement when any
    /// improved, else equivalent when every statistic but the max (one sample, never
    /// decided) was judged equivalent and every test and CPU of the baseline was there
    /// to judge, else inconclusive.
    pub verdict: Verdict,
    /// What regressed: `cyclic CPU 0 p50`, ….
    pub regressions: Vec<String>,
    /// Threads (CPUs, pairs) compared with the baseline's: 0 when the two runs have
    /// nothing in common.
    pub compared: usize,
}

/// The curve of `b` matching `a`'s: the same CPU when both say theirs, else the same
/// thread (a cyclictest `-h` dump does not record CPUs).
fn matching<'a>(a: &Curve, b: &'a [Curve]) -> Option<&'a Curve> {
    let known = a.cpu.is_some() && b.iter().all(|c| c.cpu.is_some());
    match a.cpu {
        Some(cpu) if known => b.iter().find(|c| c.cpu == Some(cpu)),
        _ => b.iter().find(|c| c.thread == a.thread),
    }
}

/// Renders the comparison of `runs` (the first is the baseline); returns the text and
/// each candidate's outcome.
pub fn render(runs: &[Run], tol: Tolerance) -> (String, Vec<Outcome>) {
    let mut s = String::new();
    let us = |ns: Option<u64>| {
        ns.map_or_else(
            || "beyond".to_string(),
            |v| crate::duration::us(v, crate::duration::UsStyle::Cell),
        )
    };
    for (i, r) in runs.iter().enumerate() {
        let role = if i == 0 { ", the baseline" } else { "" };
        let _ = writeln!(
            s,
            "{} = {} ({}{role})",
            letter(i),
            crate::error::one_line(&r.name),
            r.format
        );
    }
    let _ = writeln!(
        s,
        "tolerance: {:.0} % + {} (a difference counts beyond it)",
        tol.rel * 100.0,
        crate::duration::us(tol.abs_ns, crate::duration::UsStyle::Text)
    );
    let base = &runs[0];
    let mut outcomes = Vec::new();
    for (i, cand) in runs.iter().enumerate().skip(1) {
        let l = letter(i);
        let _ = writeln!(s, "\n{l} against A");
        differences(&mut s, base, cand, &l);
        let mut reasons: Vec<String> = Vec::new();
        let mut regressions = Vec::new();
        let (mut any_judged, mut all_equivalent, mut improved) = (false, true, false);
        let (mut undecided, mut missing, mut compared) = (0usize, 0usize, 0usize);
        for sa in &base.series {
            let Some(sb) = cand.series(&sa.key) else {
                let _ = writeln!(s, "{}: only in A", crate::error::one_line(&sa.key));
                missing += 1;
                continue;
            };
            for cb in &sb.plot.curves {
                if !sa
                    .plot
                    .curves
                    .iter()
                    .any(|ca| matching(ca, std::slice::from_ref(cb)).is_some())
                {
                    let _ = writeln!(
                        s,
                        "{} {}: only in {l}",
                        crate::error::one_line(&sa.key),
                        cb.label(true, sb.pairs)
                    );
                }
            }
            for ca in &sa.plot.curves {
                let who = format!(
                    "{} {}",
                    crate::error::one_line(&sa.key),
                    ca.label(true, sa.pairs)
                );
                let Some(cb) = matching(ca, &sb.plot.curves) else {
                    let _ = writeln!(s, "{who}: only in A");
                    missing += 1;
                    continue;
                };
                compared += 1;
                let _ = writeln!(
                    s,
                    "{:<20}{:>10}{:>10}  verdict",
                    clip(&who, 19),
                    "A µs",
                    format!("{l} µs")
                );
                let _ = writeln!(
                    s,
                    "  {:<18}{:>10}{:>10}",
                    "samples",
                    judge::samples(ca),
                    judge::samples(cb)
                );
                for j in judge::compare(ca, cb, tol) {
                    let mut word = j.verdict.word().to_string();
                    if !j.why.is_empty() {
                        let n = match reasons.iter().position(|r| *r == j.why) {
                            Some(n) => n,
                            None => {
                                reasons.push(j.why.clone());
                                reasons.len() - 1
                            }
                        };
                        let _ = write!(word, " ({})", n + 1);
                    }
                    let _ = writeln!(
                        s,
                        "  {:<18}{:>10}{:>10}  {word}",
                        j.stat,
                        us(j.a.value_ns),
                        us(j.b.value_ns)
                    );
                    match j.verdict {
                        Verdict::Regression => {
                            regressions.push(format!("{who} {}", j.stat));
                            any_judged = true;
                            all_equivalent = false;
                        }
                        Verdict::Improvement => {
                            improved = true;
                            any_judged = true;
                            all_equivalent = false;
                        }
                        Verdict::Equivalent => any_judged = true,
                        // The max is one sample: never decided, never counted.
                        Verdict::Inconclusive if j.stat == "max" => {}
                        Verdict::Inconclusive => undecided += 1,
                    }
                }
            }
        }
        for sb in &cand.series {
            if base.series(&sb.key).is_none() {
                let _ = writeln!(s, "{}: only in {l}", crate::error::one_line(&sb.key));
            }
        }
        for (n, r) in reasons.iter().enumerate() {
            let _ = writeln!(s, "  ({}) {r}", n + 1);
        }
        let verdict = if !regressions.is_empty() {
            Verdict::Regression
        } else if improved {
            Verdict::Improvement
        } else if any_judged && all_equivalent && undecided == 0 && missing == 0 {
            Verdict::Equivalent
        } else {
            Verdict::Inconclusive
        };
        let detail = if !regressions.is_empty() {
            format!(": {}", regressions.join(", "))
        } else if compared == 0 {
            " (nothing in common with A to compare)".to_string()
        } else if verdict == Verdict::Inconclusive || undecided > 0 || missing > 0 {
            let mut why = vec!["no regression found".to_string()];
            if undecided > 0 {
                why.push(format!(
                    "{undecided} statistic(s) undecided: longer runs decide them"
                ));
            }
            if missing > 0 {
                why.push(format!("{missing} test(s) or CPU(s) of A not in {l}"));
            }
            format!(" ({})", why.join("; "))
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "verdict {l} against A: {}{detail}",
            verdict.word().to_uppercase()
        );
        outcomes.push(Outcome {
            run: l,
            verdict,
            regressions,
            compared,
        });
    }
    (s, outcomes)
}

/// The facts that differ between `a` and `b` (`what differs: load: none → cpu:2`),
/// and those only one of them records.
fn differences(s: &mut String, a: &Run, b: &Run, l: &str) {
    let mut differ = Vec::new();
    let mut unknown = Vec::new();
    for what in FACTS {
        match (a.fact(what), b.fact(what)) {
            // A run file's facts are any text: escaped, so none forges a line.
            (Some(x), Some(y)) if x != y => differ.push(format!(
                "{what}: {} → {}",
                crate::error::one_line(x),
                crate::error::one_line(y)
            )),
            (Some(_), Some(_)) => {}
            (None, None) => unknown.push(what),
            _ => unknown.push(what),
        }
    }
    if differ.is_empty() {
        let _ = writeln!(s, "what differs (A → {l}): nothing the files record");
    } else {
        let _ = writeln!(s, "what differs (A → {l}):");
        for d in differ {
            let _ = writeln!(s, "  {d}");
        }
    }
    if !unknown.is_empty() {
        let _ = writeln!(s, "not recorded by both: {}", unknown.join(", "));
    }
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n - 1).collect();
    t.push('…');
    t
}

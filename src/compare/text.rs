//! `rtbench compare`'s text: the runs by letter, then each candidate against the
//! baseline — what differs between the systems, a table per test and CPU (or pair)
//! with every statistic of both runs (**µs**) and its verdict, the reasons of the
//! inconclusive ones once each, and the candidate's verdict line. It renders a
//! [`Comparison`] and decides nothing.

use super::judge::Verdict;
use super::letter;
use super::outcome::{Candidate, Comparison, Item, Outcome};
use crate::duration::{us, UsStyle};
use crate::error::one_line;
use crate::results::read::run::Run;
use std::fmt::Write as _;

/// Renders `cmp`, the comparison of `runs` (the first is the baseline).
pub fn render(runs: &[Run], cmp: &Comparison) -> String {
    let mut s = String::new();
    for (i, r) in runs.iter().enumerate() {
        let role = if i == 0 { ", the baseline" } else { "" };
        let _ = writeln!(
            s,
            "{} = {} ({}{role})",
            letter(i),
            one_line(&r.name),
            r.format
        );
    }
    let _ = writeln!(
        s,
        "tolerance: {:.0} % + {} (a difference counts beyond it)",
        cmp.tolerance.rel * 100.0,
        us(cmp.tolerance.abs_ns, UsStyle::Text)
    );
    for c in &cmp.candidates {
        candidate(&mut s, c);
    }
    s
}

/// One candidate's part of the text.
fn candidate(s: &mut String, c: &Candidate) {
    let l = &c.outcome.run;
    let _ = writeln!(s, "\n{l} against A");
    if c.differ.is_empty() {
        let _ = writeln!(s, "what differs (A → {l}): nothing the files record");
    } else {
        let _ = writeln!(s, "what differs (A → {l}):");
        for (what, x, y) in &c.differ {
            // A run file's facts are any text: escaped, so none forges a line.
            let _ = writeln!(s, "  {what}: {} → {}", one_line(x), one_line(y));
        }
    }
    if !c.unknown.is_empty() {
        let _ = writeln!(s, "not recorded by both: {}", c.unknown.join(", "));
    }
    let cell = |ns: Option<u64>| ns.map_or_else(|| "beyond".to_string(), |v| us(v, UsStyle::Cell));
    for item in &c.items {
        match item {
            Item::OnlyIn { who, run } => {
                let _ = writeln!(s, "{}: only in {run}", one_line(who));
            }
            Item::Compared {
                who,
                samples,
                stats,
            } => {
                let head = crate::report::layout::clip(&one_line(who), 19);
                let _ = writeln!(
                    s,
                    "{head:<20}{:>10}{:>10}  verdict",
                    "A µs",
                    format!("{l} µs")
                );
                let _ = writeln!(s, "  {:<18}{:>10}{:>10}", "samples", samples.0, samples.1);
                for st in stats {
                    let j = &st.judgement;
                    let mut word = j.verdict.word().to_string();
                    if let Some(n) = st.reason {
                        let _ = write!(word, " ({})", n + 1);
                    }
                    let (a, b) = (cell(j.a.value_ns), cell(j.b.value_ns));
                    let _ = writeln!(s, "  {:<18}{a:>10}{b:>10}  {word}", j.stat);
                }
            }
        }
    }
    for (n, r) in c.reasons.iter().enumerate() {
        let _ = writeln!(s, "  ({}) {r}", n + 1);
    }
    let o = &c.outcome;
    let _ = writeln!(
        s,
        "verdict {l} against A: {}{}",
        o.verdict.word().to_uppercase(),
        detail(o)
    );
}

/// What the verdict line says after the verdict: what regressed, or why it is not
/// equivalent.
fn detail(o: &Outcome) -> String {
    let l = &o.run;
    if !o.regressions.is_empty() {
        format!(": {}", one_line(&o.regressions.join(", ")))
    } else if o.compared == 0 {
        " (nothing in common with A to compare)".to_string()
    } else if o.verdict == Verdict::Inconclusive || o.undecided > 0 || o.missing > 0 {
        let mut why = vec!["no regression found".to_string()];
        if o.undecided > 0 {
            why.push(format!(
                "{} statistic(s) undecided: longer runs decide them",
                o.undecided
            ));
        }
        if o.missing > 0 {
            why.push(format!("{} test(s) or CPU(s) of A not in {l}", o.missing));
        }
        format!(" ({})", why.join("; "))
    } else {
        String::new()
    }
}

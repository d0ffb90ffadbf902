//! The judging of `rtbench compare`, once: every candidate against the baseline, per
//! test and CPU (or pair), into a [`Comparison`] that the text and the exit code both
//! read ([`Comparison::exit_code`]); nothing here formats a line.

use super::judge::{self, Judgement, Tolerance, Verdict};
use super::letter;
use crate::error::exit;
use crate::results::read::run::{Run, FACTS};
use crate::results::read::Curve;

/// Every candidate judged against the baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// What counted as a difference.
    pub tolerance: Tolerance,
    /// The candidates (`B`, `C`, …), in the order given.
    pub candidates: Vec<Candidate>,
}

/// One candidate against the baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// What differs between the two systems: `(what, baseline's, candidate's)`, in the
    /// order of [`FACTS`].
    pub differ: Vec<(&'static str, String, String)>,
    /// The facts not recorded by both.
    pub unknown: Vec<&'static str>,
    /// What was compared and what was only in one run, in the baseline's order (the
    /// candidate's tests that the baseline lacks last).
    pub items: Vec<Item>,
    /// The reasons of the inconclusive statistics, each once; [`Stat::reason`] indexes
    /// them.
    pub reasons: Vec<String>,
    /// The candidate's verdict.
    pub outcome: Outcome,
}

/// A line of the comparison: a thread (CPU, pair) compared, or something one run lacks.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// `who` (a test, or a test and its CPU) is only in run `run` (a letter).
    OnlyIn {
        /// `cyclic`, `cyclic CPU 3`, `stress/pmq pair 0 CPU 1`.
        who: String,
        /// The run's letter.
        run: String,
    },
    /// One thread of both runs, statistic by statistic.
    Compared {
        /// `cyclic CPU 0`.
        who: String,
        /// Samples of the baseline's and the candidate's thread.
        samples: (u64, u64),
        /// [`judge::STATS`], in that order.
        stats: Vec<Stat>,
    },
}

/// A statistic judged, with the index of its reason in [`Candidate::reasons`].
#[derive(Debug, Clone, PartialEq)]
pub struct Stat {
    /// The judgement.
    pub judgement: Judgement,
    /// Where the reason of an inconclusive verdict is in [`Candidate::reasons`].
    pub reason: Option<usize>,
}

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
    /// Statistics but the max that the samples could not decide.
    pub undecided: usize,
    /// Tests and threads of the baseline the candidate lacks.
    pub missing: usize,
}

impl Comparison {
    /// Judges every run after the first (the baseline) against it. `runs` holds at
    /// least one run (the plan asks for two).
    pub fn judge(runs: &[Run], tolerance: Tolerance) -> Comparison {
        let candidates = match runs.split_first() {
            Some((base, rest)) => rest
                .iter()
                .enumerate()
                .map(|(i, cand)| candidate(base, cand, &letter(i + 1), tolerance))
                .collect(),
            None => Vec::new(),
        };
        Comparison {
            tolerance,
            candidates,
        }
    }

    /// The outcomes, one per candidate.
    pub fn outcomes(&self) -> impl Iterator<Item = &Outcome> {
        self.candidates.iter().map(|c| &c.outcome)
    }

    /// The exit code: 1 ([`exit::FAIL`]) when a candidate regressed, else 2
    /// ([`exit::USAGE`]) when one had nothing in common with the baseline (a CI job
    /// must not read that as a pass), else 0.
    pub fn exit_code(&self) -> i32 {
        if self.outcomes().any(|o| o.verdict == Verdict::Regression) {
            exit::FAIL
        } else if self.outcomes().any(|o| o.compared == 0) {
            exit::USAGE
        } else {
            exit::OK
        }
    }
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

/// The facts that differ between `a` and `b`, and those only one of them records (or
/// neither).
fn differences(a: &Run, b: &Run) -> (Vec<(&'static str, String, String)>, Vec<&'static str>) {
    let mut differ = Vec::new();
    let mut unknown = Vec::new();
    for what in FACTS {
        match (a.fact(what), b.fact(what)) {
            (Some(x), Some(y)) if x != y => differ.push((what, x.to_string(), y.to_string())),
            (Some(_), Some(_)) => {}
            _ => unknown.push(what),
        }
    }
    (differ, unknown)
}

/// What the statistics of one candidate add up to.
#[derive(Default)]
struct Tally {
    regressions: Vec<String>,
    any_judged: bool,
    all_equivalent: bool,
    improved: bool,
    undecided: usize,
    missing: usize,
    compared: usize,
}

impl Tally {
    fn add(&mut self, who: &str, j: &Judgement) {
        match j.verdict {
            Verdict::Regression => {
                self.regressions.push(format!("{who} {}", j.stat));
                self.any_judged = true;
                self.all_equivalent = false;
            }
            Verdict::Improvement => {
                self.improved = true;
                self.any_judged = true;
                self.all_equivalent = false;
            }
            Verdict::Equivalent => self.any_judged = true,
            // The max is one sample: never decided, never counted.
            Verdict::Inconclusive if j.stat == "max" => {}
            Verdict::Inconclusive => self.undecided += 1,
        }
    }

    fn outcome(self, run: &str) -> Outcome {
        let verdict = if !self.regressions.is_empty() {
            Verdict::Regression
        } else if self.improved {
            Verdict::Improvement
        } else if self.any_judged && self.all_equivalent && self.undecided == 0 && self.missing == 0
        {
            Verdict::Equivalent
        } else {
            Verdict::Inconclusive
        };
        Outcome {
            run: run.to_string(),
            verdict,
            regressions: self.regressions,
            compared: self.compared,
            undecided: self.undecided,
            missing: self.missing,
        }
    }
}

/// `cand` (letter `l`) against `base`.
fn candidate(base: &Run, cand: &Run, l: &str, tol: Tolerance) -> Candidate {
    let (differ, unknown) = differences(base, cand);
    let mut items = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    let mut tally = Tally {
        all_equivalent: true,
        ..Tally::default()
    };
    let only = |who: String, run: &str| Item::OnlyIn {
        who,
        run: run.to_string(),
    };
    for sa in &base.series {
        let Some(sb) = cand.series(&sa.key) else {
            items.push(only(sa.key.clone(), "A"));
            tally.missing += 1;
            continue;
        };
        let (ca_all, cb_all) = (&sa.histograms.curves, &sb.histograms.curves);
        for cb in cb_all {
            if !ca_all
                .iter()
                .any(|ca| matching(ca, std::slice::from_ref(cb)).is_some())
            {
                items.push(only(format!("{} {}", sa.key, cb.label(true, sb.pairs)), l));
            }
        }
        for ca in ca_all {
            let who = format!("{} {}", sa.key, ca.label(true, sa.pairs));
            let Some(cb) = matching(ca, cb_all) else {
                items.push(only(who, "A"));
                tally.missing += 1;
                continue;
            };
            tally.compared += 1;
            let stats = judge::compare(ca, cb, tol)
                .into_iter()
                .map(|j| {
                    tally.add(&who, &j);
                    let reason = (!j.why.is_empty()).then(|| {
                        reasons.iter().position(|r| *r == j.why).unwrap_or_else(|| {
                            reasons.push(j.why.clone());
                            reasons.len() - 1
                        })
                    });
                    Stat {
                        judgement: j,
                        reason,
                    }
                })
                .collect();
            items.push(Item::Compared {
                who,
                samples: (judge::samples(ca), judge::samples(cb)),
                stats,
            });
        }
    }
    for sb in &cand.series {
        if base.series(&sb.key).is_none() {
            items.push(only(sb.key.clone(), l));
        }
    }
    Candidate {
        differ,
        unknown,
        items,
        reasons,
        outcome: tally.outcome(l),
    }
}

//! `rtbench compare RUN RUN…`: runs side by side — this kernel against the last, this
//! board against the golden unit, before and after `tune apply`. Each RUN is a stored
//! self-test result (or a results directory: its newest run), `rtbench cyclic --json`
//! or cyclictest `--json` output (with `-h`: the histogram is what is compared), or a
//! cyclictest `-h` dump, each read once by `crate::results::read::run`, so every input
//! `rtbench plot` draws can be compared.
//!
//! The first RUN is the baseline; every other one is compared with it, per test (with
//! `[[condition]]`s, per condition and test) and CPU or pair, statistic by statistic
//! ([`judge`]: equivalent, regression, improvement, or inconclusive when the samples
//! cannot support the claim), beside what differs between the systems
//! (`crate::results::read::run::Run::facts`). [`outcome`] judges every candidate once
//! into a [`outcome::Comparison`], whose outcomes decide the exit code; [`text`]
//! renders it and `--plot` overlays the histograms ([`overlay`], drawn by
//! `crate::plot::svg` in a build with the `plot` feature).

pub mod judge;
pub mod outcome;
pub mod text;

use crate::results::read::run::Run;
use crate::results::read::{Curve, Histograms};

/// The overlay of `key`'s histograms of every run that has it, each curve named by its
/// run's letter (`A CPU 0`, `B CPU 0`); `None` when no run has it.
pub fn overlay(runs: &[Run], key: &str) -> Option<Histograms> {
    let mut plot: Option<Histograms> = None;
    for (i, r) in runs.iter().enumerate() {
        let Some(s) = r.series(key) else { continue };
        let curves: Vec<Curve> = s
            .histograms
            .curves
            .iter()
            .cloned()
            .map(|mut c| {
                c.run = Some(letter(i));
                c
            })
            .collect();
        match plot.as_mut() {
            Some(p) => p.curves.extend(curves),
            None => {
                let mut p = s.histograms.clone();
                p.curves = curves;
                p.meta.format = format!("rtbench compare ({} runs)", runs.len());
                p.meta.verdict = None;
                p.meta.run_verdict = None;
                p.meta.limits.clear();
                plot = Some(p);
            }
        }
    }
    plot
}

/// The test `--test` names, else the baseline's `cyclic`, else its first; `None` when
/// the baseline has no test.
pub fn overlay_key(runs: &[Run], test: Option<&str>) -> Option<String> {
    match test {
        Some(t) => Some(t.to_string()),
        None => runs.first().and_then(|base| {
            base.series("cyclic")
                .or(base.series.first())
                .map(|s| s.key.clone())
        }),
    }
}

/// The letter of run `i`: `A` (the baseline), `B`, … `Z`, then `R27`, `R28`, ….
pub fn letter(i: usize) -> String {
    match u8::try_from(i).ok().filter(|i| *i < 26) {
        Some(i) => char::from(b'A' + i).to_string(),
        None => format!("R{}", i + 1),
    }
}

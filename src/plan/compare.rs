//! `rtbench compare`: flags → [`ComparePlan`].

use super::usage;
use crate::cli::compare::CompareArgs;
use crate::compare::judge::{Tolerance, DEFAULT_TOLERANCE_PCT, DEFAULT_TOLERANCE_US};
use crate::error::Result;
use crate::results::read::run::Run;
use std::path::{Path, PathBuf};

/// A validated `rtbench compare`.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparePlan {
    /// The runs, the baseline first (at least two).
    pub runs: Vec<PathBuf>,
    /// What counts as a difference.
    pub tolerance: Tolerance,
    /// `--plot`: the overlay's SVG file.
    pub plot: Option<PathBuf>,
    /// `--test`: the overlaid test.
    pub test: Option<String>,
}

/// Validates `rtbench compare`'s flags: `--tolerance` 0..=10000 %, `--tolerance-us`
/// 0..=1000000 µs, `--plot` writable ([`super::check_output_path`]), not one of the
/// RUNs as named ([`super::check_not_input`]), and only in a build with the `plot`
/// feature. What needs the runs read is [`check_runs`].
pub fn plan(args: &CompareArgs) -> Result<ComparePlan> {
    let pct = args.tolerance.unwrap_or(DEFAULT_TOLERANCE_PCT);
    if !(pct.is_finite() && (0.0..=10_000.0).contains(&pct)) {
        return usage("--tolerance", pct, "expected 0..10000 %");
    }
    let us = args
        .tolerance_us
        .map_or(Ok(DEFAULT_TOLERANCE_US), u64::try_from)
        .ok()
        .filter(|us| *us <= 1_000_000);
    let Some(us) = us else {
        let given = args.tolerance_us.unwrap_or_default();
        return usage("--tolerance-us", given, "expected 0..1000000 µs");
    };
    if let Some(p) = &args.plot {
        if !cfg!(feature = "plot") {
            return usage(
                "--plot",
                p.display(),
                "this rtbench was built without the plot feature; expected no --plot",
            );
        }
        super::check_output_path("--plot", p)?;
        let inputs: Vec<&Path> = args.runs.iter().map(PathBuf::as_path).collect();
        super::check_not_input("--plot", p, &inputs)?;
    }
    Ok(ComparePlan {
        runs: args.runs.clone(),
        tolerance: Tolerance {
            rel: pct / 100.0,
            abs_ns: us * 1000,
        },
        plot: args.plot.clone(),
        test: args.test.clone(),
    })
}

/// What can be checked only once the runs are read, before anything is printed or
/// written: `--plot` is none of the files read (a results directory's newest run
/// included, `files`), and `--test` names a test some run has (`CONDITION/TEST` with
/// conditions). Errors: [`crate::error::Error::Usage`] (exit 2).
pub fn check_runs(plan: &ComparePlan, runs: &[Run], files: &[&Path]) -> Result<()> {
    if let Some(p) = &plan.plot {
        super::check_not_input("--plot", p, files)?;
    }
    if let Some(t) = &plan.test {
        if !runs.iter().any(|r| r.series(t).is_some()) {
            let mut have: Vec<&str> = Vec::new();
            for s in runs.iter().flat_map(|r| &r.series) {
                if !have.contains(&s.key.as_str()) {
                    have.push(&s.key);
                }
            }
            return usage(
                "--test",
                t,
                format!(
                    "no run has this test; expected one of: {}",
                    crate::error::echo(&have.join(", "))
                ),
            );
        }
    }
    Ok(())
}

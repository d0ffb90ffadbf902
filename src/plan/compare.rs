//! `rtbench compare`: flags → [`ComparePlan`].

use super::usage;
use crate::cli::compare::CompareArgs;
use crate::compare::judge::{Tolerance, DEFAULT_TOLERANCE_PCT, DEFAULT_TOLERANCE_US};
use crate::error::Result;
use std::path::PathBuf;

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

/// Validates `rtbench compare`: `--tolerance` 0..=10000 %, `--tolerance-us` at most
/// one second, `--plot` writable ([`super::check_output_path`]).
pub fn plan(args: &CompareArgs) -> Result<ComparePlan> {
    let pct = args.tolerance.unwrap_or(DEFAULT_TOLERANCE_PCT);
    if !(pct.is_finite() && (0.0..=10_000.0).contains(&pct)) {
        return usage("--tolerance", pct, "expected 0..10000 %");
    }
    let us = args.tolerance_us.unwrap_or(DEFAULT_TOLERANCE_US);
    if us > 1_000_000 {
        return usage("--tolerance-us", us, "expected at most 1000000 µs");
    }
    if let Some(p) = &args.plot {
        super::check_output_path("--plot", p)?;
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

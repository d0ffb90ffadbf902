//! `rtbench plot`: flags → [`PlotPlan`].

use super::usage;
use crate::cli::plot::PlotArgs;
use crate::error::Result;
use std::path::PathBuf;

/// A validated `rtbench plot`.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotPlan {
    /// The input file (`-` = standard input; a directory = its newest stored run).
    pub input: PathBuf,
    /// The SVG file (`-` = standard output).
    pub output: PathBuf,
    /// Title instead of the one made from the input.
    pub title: Option<String>,
    /// End of the latency axis in **µs**.
    pub x_max_us: Option<f64>,
    /// Test to plot from a stored self-test result.
    pub test: Option<String>,
}

/// Validates `rtbench plot`: `--x-max` must be a latency above 0, and `-o` writable
/// ([`super::check_output_path`]).
pub fn plot(args: &PlotArgs) -> Result<PlotPlan> {
    if let Some(x) = args.x_max_us.filter(|x| !(x.is_finite() && *x > 0.0)) {
        return usage("--x-max", x, "expected a latency in µs greater than 0");
    }
    super::check_output_path("-o", &args.output)?;
    Ok(PlotPlan {
        input: args.input.clone(),
        output: args.output.clone(),
        title: args.title.clone(),
        x_max_us: args.x_max_us,
        test: args.test.clone(),
    })
}

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

use crate::plot::svg::{MAX_X_MAX_US, MIN_X_MAX_US};

/// Validates `rtbench plot`: `--x-max` must be a latency from 1 ns to 2^64 - 1 ns, and
/// `-o` writable ([`super::check_output_path`]) and not the input
/// ([`super::check_not_input`]; a directory's newest run is checked once read).
pub fn plot(args: &PlotArgs) -> Result<PlotPlan> {
    if let Some(x) = args.x_max_us.filter(|x| !(x.is_finite() && *x > 0.0)) {
        return usage("--x-max", x, "not a finite number of µs greater than 0");
    }
    if let Some(x) = args
        .x_max_us
        .filter(|x| !(MIN_X_MAX_US..=MAX_X_MAX_US).contains(x))
    {
        // Shown as written for tiny or huge values (5e-324, not 324 digits).
        let shown = [format!("{x}"), format!("{x:?}")]
            .into_iter()
            .min_by_key(String::len)
            .unwrap_or_default();
        return usage(
            "--x-max",
            shown,
            format!("expected a latency from {MIN_X_MAX_US} µs (1 ns) to {MAX_X_MAX_US:e} µs"),
        );
    }
    super::check_output_path("-o", &args.output)?;
    super::check_not_input("-o", &args.output, &[&args.input])?;
    Ok(PlotPlan {
        input: args.input.clone(),
        output: args.output.clone(),
        title: args.title.clone(),
        x_max_us: args.x_max_us,
        test: args.test.clone(),
    })
}

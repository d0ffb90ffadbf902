//! `rtbench compare RUN RUN…`: plan, read every run once, check what needs the runs,
//! judge, then write the overlay plot when asked and print the comparison (each output
//! whatever happened to the other); the exit code is the comparison's (1 when a run
//! regressed against the baseline) unless an output failed.

use crate::cli::compare::CompareArgs;
use crate::compare::outcome::Comparison;
use crate::error::Result;
use crate::report::output::{Output, Target, Written};
use std::path::Path;

/// `rtbench compare`.
pub fn run(args: &CompareArgs) -> Result<i32> {
    let p = crate::plan::compare::plan(args)?;
    let mut runs = Vec::with_capacity(p.runs.len());
    let mut inputs = Vec::with_capacity(p.runs.len());
    for r in &p.runs {
        let (run, input) = crate::results::read::run::load(r)?;
        runs.push(run);
        inputs.push(input);
    }
    let files: Vec<&Path> = inputs.iter().filter_map(|i| i.file.as_deref()).collect();
    crate::plan::compare::check_runs(&p, &runs, &files)?;
    let comparison = Comparison::judge(&runs, p.tolerance);
    let plot_target = p.plot.as_ref().map(|f| Target::from_path(f));
    let out = Output::new(plot_target.as_ref());
    for line in inputs.iter().flat_map(|i| &i.skipped) {
        out.warn(&format!("rtbench: {line}"));
    }
    let mut written = Written::new();
    #[cfg(feature = "plot")]
    if let Some(target) = &plot_target {
        let key = crate::compare::overlay_key(&runs, p.test.as_deref()).unwrap_or_default();
        // check_runs made sure some run has `--test`; the baseline has its own first.
        if let Some(overlay) = crate::compare::overlay(&runs, &key) {
            let svg = crate::plot::svg::Svg {
                title: None,
                x_max_us: None,
            };
            written.stdout(|| out.document(target, &svg, &overlay));
        }
    }
    let text = crate::compare::text::render(&runs, &comparison);
    written.stdout(|| out.text(&crate::report::output::Verbatim, &text));
    written.finish(comparison.exit_code())
}

//! `rtbench plot INPUT -o FILE`: plan, read, parse, render, write (atomically; `-` =
//! standard output).

use crate::cli::plot::PlotArgs;
use crate::error::{exit, Result};
use crate::plot;
use crate::report::output::{Output, Target};

/// `rtbench plot`.
pub fn run(args: &PlotArgs) -> Result<i32> {
    let p = crate::plan::plot::plot(args)?;
    let (name, bytes) = plot::read_input(&p.input)?;
    let parsed = plot::parse(&name, &bytes, p.test.as_deref())?;
    let target = Target::from_path(&p.output);
    let svg = plot::svg::Svg {
        title: p.title.as_deref(),
        x_max_us: p.x_max_us,
    };
    Output::new(Some(&target)).document(&target, &svg, &parsed)?;
    Ok(exit::OK)
}

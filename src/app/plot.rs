//! `rtbench plot INPUT -o FILE`: plan, read, parse, render, write (atomically; `-` =
//! standard output).

use crate::cli::plot::PlotArgs;
use crate::error::{exit, Error, Result};
use crate::plot;
use std::path::Path;

/// `rtbench plot`.
pub fn run(args: &PlotArgs) -> Result<i32> {
    let p = crate::plan::plot::plot(args)?;
    let (name, bytes) = plot::read_input(&p.input)?;
    let parsed = plot::parse(&name, &bytes, p.test.as_deref())?;
    let svg = plot::svg::render(&parsed, p.title.as_deref(), p.x_max_us);
    let out = &p.output;
    if out == Path::new("-") {
        use std::io::Write;
        std::io::stdout()
            .write_all(svg.as_bytes())
            .map_err(|e| Error::io("<stdout>", e))?;
    } else {
        crate::sys::atomic::write(out, svg.as_bytes()).map_err(|e| Error::io(out, e))?;
    }
    Ok(exit::OK)
}

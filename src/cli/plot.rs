//! `rtbench plot`.

use clap::Args;
use std::path::PathBuf;

/// Examples shown by `rtbench plot --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench cyclic -S -p 98 -i 200 -D 30s -q -h 400 --json run.json
  rtbench plot run.json -o latency.svg         from rtbench's (or cyclictest's) --json
  rtbench plot /var/lib/rtbench -o latency.svg the newest stored self-test result
  cyclictest -m -S -p 98 -i 200 -q -h 400 -D 1h > hist.txt
  rtbench plot hist.txt -o latency.svg --title \"board 7, 1 h idle\" --x-max 100
  rtbench plot /var/lib/rtbench/monitor -o monitor.svg  the monitor's window maxima over time

A cyclictest -h/-H dump (rt-tests <= 2.6 or 2.7+ layout) records no kernel, date or
load: the plot says so, or give --title.";

/// `rtbench plot` flags.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// rtbench/cyclictest --json output, a stored self-test result (or the results
    /// directory: its newest run), a cyclictest -h/-H dump, or the monitor's window
    /// store (its directory or windows.jsonl: a timeline); - for standard input
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,
    /// SVG file to write (atomically); - for standard output
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Title instead of the one made from the input (host, kernel)
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    /// End of the latency axis in µs (default: the histogram's range or the largest
    /// maximum; a self-test result without [output] histogram_us has a log axis);
    /// buckets beyond it are left out, maxima beyond it marked at the edge
    #[arg(long = "x-max", value_name = "US", allow_hyphen_values = true)]
    pub x_max_us: Option<f64>,
    /// Test to plot from a stored self-test result (default: cyclic, else the first;
    /// CONDITION/TEST for a test of a [[condition]], e.g. stress/cyclic)
    #[arg(long, value_name = "NAME")]
    pub test: Option<String>,
}

//! `rtbench compare`.

use clap::Args;
use std::path::PathBuf;

/// Examples shown by `rtbench compare --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench compare golden.json /var/lib/rtbench      this board against the golden unit
  rtbench compare before.json after.json --plot overlay.svg   before and after tune apply
  rtbench cyclic -m -S -p 98 -i 1000 -D 1m -q -h 2000 --json new.json
  rtbench compare last-kernel.json new.json         this kernel against the last
  cyclictest -m -S -p 98 -i 1000 -D 1m -q -h 2000 > ct.txt; rtbench compare ct.txt new.json

The first RUN is the baseline (A); each other is compared with it, per test and CPU:
p50, p90, p99, p99.9, p99.99 are equivalent, regression, improvement or inconclusive
(the samples cannot support a claim: a percentile needs about 11 samples above it in
each run, p99.9 about 11 000 per CPU; the max is one sample and always inconclusive).
A difference counts beyond --tolerance (% of the smaller) plus --tolerance-us. A run is
EQUIVALENT only when every statistic but the max was judged equivalent and every test and
CPU of the baseline was in it; otherwise, without a regression, INCONCLUSIVE, saying why.

Exit codes: 0 no regression, 1 a run regressed against the baseline, 2 usage, an
unreadable run, or a run with no test and CPU in common with the baseline.";

/// `rtbench compare` flags.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Runs: stored self-test results (or a results directory: its newest run),
    /// rtbench or cyclictest --json output (with -h), cyclictest -h dumps; the first is
    /// the baseline
    #[arg(value_name = "RUN", num_args = 2.., required = true)]
    pub runs: Vec<PathBuf>,
    /// Relative tolerance, %: a larger latency counts as a difference only beyond it
    /// (default 100: twice as large)
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    pub tolerance: Option<f64>,
    /// Absolute tolerance, µs, added to the relative one (default 5)
    #[arg(
        long = "tolerance-us",
        value_name = "US",
        allow_negative_numbers = true
    )]
    pub tolerance_us: Option<i64>,
    /// Overlay the histograms of one test of every run in an SVG plot (- for standard
    /// output)
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Test to overlay (default: cyclic, else the baseline's first; CONDITION/TEST with
    /// conditions)
    #[arg(long, value_name = "NAME")]
    pub test: Option<String>,
}

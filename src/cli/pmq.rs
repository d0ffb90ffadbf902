//! `rtbench pmq`: pmqtest's flags.

use super::PairFlags;
use clap::Args;

/// Examples for `rtbench pmq --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench pmq -S -p 80 -i 1000 -D 10s -q          one pair per CPU, pmqtest's classic run
  rtbench pmq -a 2 -t 1 -p 98 -l 100000 -h 100    one pair on CPU 2 with a histogram
  rtbench pmq -S -p 98 -D 1m --load cpu:2,io:1    the same under built-in load

Differences from pmqtest (on purpose):
  * Time stamps are CLOCK_MONOTONIC in ns (pmqtest: gettimeofday, only tv_usec).
  * Without -p: SCHED_FIFO 98 and mlockall (-p 0 gives SCHED_OTHER).
  * -l stops each pair after LOOPS messages (pmqtest stops all pairs when the first
    pair gets there); -T counts timeouts and keeps waiting (pmqtest's -f behaviour).
  * -a takes a cpu-list: pairs go round-robin over it (one CPU = pmqtest's -a NUM).
  * Live output is one block per --report-interval, no cursor movement; -h dumps a
    cyclictest-style histogram; # lines add percentiles, overruns and timeouts.";

/// `rtbench pmq` flags: pmqtest's.
#[derive(Debug, Args)]
pub struct PmqArgs {
    /// Distance of pair intervals in µs (pair i: interval + i*DIST)
    #[arg(short, long, value_name = "DIST", default_value_t = 500, value_parser = super::number::us_arg)]
    pub distance: u64,

    /// Receiver's delay before it asks for the next message, µs (pmqtest's interval)
    #[arg(short, long, value_name = "INTV", default_value_t = 1000, value_parser = super::number::us_arg)]
    pub interval: u64,

    /// Flags shared with `pipe`.
    #[command(flatten)]
    pub common: PairFlags,

    /// rtbench was called as `pmqtest` (argv\[0\], see [`super::getopt`]): standard
    /// output as pmqtest's. Not a flag; set by the caller of the parser.
    #[arg(skip)]
    pub as_pmqtest: bool,
}

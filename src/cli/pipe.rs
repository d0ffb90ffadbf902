//! `rtbench pipe`: pipe ping-pong between two threads or processes.

use super::PairFlags;
use clap::Args;

/// Examples for `rtbench pipe --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench pipe -a 1 -l 100000 -q                 two SCHED_FIFO 98 threads on CPU 1
  rtbench pipe --fork -a 1 -p 0 -i 0 -l 100000 -q  like `taskset -c 1 perf bench sched pipe`
  rtbench pipe -a 1 -p 98 -D 1m -h 50 --load cpu:1 --load-cpus 1

Each round trip: the sender stamps and writes, the receiver stamps on wakeup, stamps
and writes back, the sender stamps on wakeup. Both one-way latencies go into the
histogram and the lines #1 -> #0 and #0 -> #1; the round trip has its own line, and
the switch line gives total round-trip time / (2 x round trips), the figure
`perf bench sched pipe` gives as usecs/op / 2.";

/// `rtbench pipe` flags.
#[derive(Debug, Args)]
pub struct PipeArgs {
    /// Pause between round trips in µs (default 1000, as pmqtest -i; 0: back to back, as
    /// perf bench sched pipe, which at SCHED_FIFO measures RT throttling)
    #[arg(short, long, value_name = "INTV", default_value_t = 1000, value_parser = super::number::us_arg)]
    pub interval: u64,

    /// Distance of pair pauses in µs (pair i: interval + i*DIST)
    #[arg(short, long, value_name = "DIST", default_value_t = 0, value_parser = super::number::us_arg)]
    pub distance: u64,

    /// Run the receiving end of each pair in a child process (perf's default) instead
    /// of a thread
    #[arg(long = "fork")]
    pub fork: bool,

    /// Flags shared with `pmq`.
    #[command(flatten)]
    pub common: PairFlags,
}

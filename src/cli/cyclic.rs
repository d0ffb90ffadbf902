//! `rtbench cyclic`: cyclictest's flags.

use super::{number, HistogramLayout, LoadFlags, RunFlags};
use clap::{ArgAction, Args};
use std::path::PathBuf;

/// Examples and differences from cyclictest for `rtbench cyclic --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench cyclic -m -S -p 98 -i 1000 -D 10s        one SCHED_FIFO thread per online CPU, 10 s
  rtbench cyclic -S -p 98 -i 200 -h 400 -q -D 12h  the classic 12-hour histogram run
  rtbench cyclic -a 2-3 -t 2 -p 98 --json out.json pin two threads to the isolated CPUs 2-3

Differences from cyclictest (on purpose):
  * -S and -t without -a use every online CPU, isolated ones included; the main thread
    runs on the first housekeeping CPU (change with --mainaffinity).
  * Without -p/--policy: SCHED_FIFO priority 98 and mlockall (use --policy other or
    --no-mlockall to opt out); cyclictest would measure SCHED_OTHER.
  * Overruns (wakeups after the next deadline) are counted and reported.
  * With -l every thread completes LOOPS cycles (cyclictest stops all threads when
    the first one is done).
  * -D takes s, m, h, d; an unknown suffix is an error. -n is accepted and ignored.
  * Live output is one line per thread per --report-interval, no cursor movement.
  * -b stops tracing (tracing_on) whenever tracefs is there, and exits 1.";

/// `rtbench cyclic` flags, named and meant as in cyclictest 2.x.
#[derive(Debug, Args)]
pub struct CyclicArgs {
    /// Pin threads: thread N on CPU N without CPUSET, else round-robin over CPUSET
    /// (cpu-list like 0-3,5 or 1-7:2/4, N = last CPU, all; or a 0x hex mask)
    #[arg(short = 'a', long = "affinity", value_name = "CPUSET", num_args = 0..=1, default_missing_value = "")]
    pub affinity: Option<String>,

    /// Stop the test (and tracing) when a latency exceeds USEC µs; exit 1
    #[arg(short = 'b', long = "breaktrace", value_name = "USEC", value_parser = number::us_arg)]
    pub breaktrace: Option<u64>,

    /// Clock: 0|monotonic (default) or 1|realtime
    #[arg(short = 'c', long = "clock", value_name = "CLOCK", default_value = "0")]
    pub clock: String,

    /// Distance of thread intervals in µs (thread i: interval + i*DIST; 0 with -h)
    #[arg(short = 'd', long = "distance", value_name = "DIST", value_parser = number::us_arg)]
    pub distance: Option<u64>,

    /// Latency histogram of US 1-µs buckets, printed at exit (same interval on all threads)
    #[arg(short = 'h', long = "histogram", value_name = "US", value_parser = number::us_usize_arg)]
    pub histogram: Option<usize>,

    /// Like -h, plus a summary column over all threads
    #[arg(short = 'H', long = "histofall", value_name = "US", value_parser = number::us_usize_arg)]
    pub histofall: Option<usize>,

    /// Write the -h/-H histogram to PATH instead of standard output
    #[arg(long = "histfile", value_name = "PATH")]
    pub histfile: Option<PathBuf>,

    /// Histogram layout of cyclictest 2.7+ (current) or <= 2.6 (legacy) [default:
    /// current; legacy when called as cyclictest]
    #[arg(long = "histogram-layout", value_enum)]
    pub histogram_layout: Option<HistogramLayout>,

    /// Base interval of the threads in µs
    #[arg(
        short = 'i',
        long = "interval",
        value_name = "INTV",
        default_value_t = 1000,
        value_parser = number::us_arg
    )]
    pub interval: u64,

    /// Number of cycles per thread; 0 = endless
    #[arg(short = 'l', long = "loops", value_name = "LOOPS", default_value_t = 0, value_parser = number::u64_arg)]
    pub loops: u64,

    /// Lock current and future memory (the default; kept for cyclictest command lines)
    #[arg(short = 'm', long = "mlockall")]
    pub mlockall: bool,

    /// Accepted and ignored (cyclictest 0.x option that vendor docs still pass)
    #[arg(short = 'n', long = "nanosleep")]
    pub nanosleep: bool,

    /// Priority of the highest-priority thread (1..99 FIFO/RR; 0 = SCHED_OTHER)
    #[arg(short = 'p', long = "priority", value_name = "PRIO", value_parser = number::i64_arg)]
    pub priority: Option<i64>,

    /// Policy of the measuring threads: other, normal, batch, idle, fifo, rr
    #[arg(long = "policy", value_name = "NAME")]
    pub policy: Option<String>,

    /// Spread priorities: thread i gets PRIO - i
    #[arg(long = "priospread")]
    pub priospread: bool,

    /// Standard SMP testing: -a -t with the same priority on all threads
    #[arg(short = 'S', long = "smp")]
    pub smp: bool,

    /// Number of threads; without NUM one per online CPU
    #[arg(short = 't', long = "threads", value_name = "NUM", num_args = 0..=1, default_missing_value = "")]
    pub threads: Option<String>,

    /// Write a trace marker when -b fires
    #[arg(long = "tracemark")]
    pub tracemark: bool,

    /// Explain samples over USEC µs from the kernel's trace events: what ran on the CPU
    /// between the deadline and the wakeup (a tracefs instance of rtbench's own; root).
    /// Each new maximum is explained, the others up to 4 a second per CPU; every one is
    /// counted by its cause in the closing `# Causes:` block. -b explains the sample
    /// that stops the run.
    #[arg(long = "explain", value_name = "USEC", value_parser = number::own_us_arg)]
    pub explain: Option<u64>,

    /// With --explain or -b: also run the kernel's timerlat tracer for a second opinion
    /// (adds a SCHED_FIFO 95 thread per measured CPU)
    #[arg(long = "explain-timerlat")]
    pub explain_timerlat: bool,

    /// Every sample on standard output as cyclictest prints it, `THREAD:CYCLE:LATENCY`
    /// (µs; ns with -N), instead of the live T: lines
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,

    /// With -v: print only the largest of every RED samples, with its cycle
    /// (cyclictest's oscilloscope reduction).
    #[arg(short = 'o', long = "oscope", value_name = "RED", value_parser = number::u64_arg)]
    pub oscope: Option<u64>,

    /// Unbuffered output: every line is written at once (always so; accepted for
    /// cyclictest command lines)
    #[arg(short = 'u', long = "unbuffered")]
    pub unbuffered: bool,

    /// Background load while measuring.
    #[command(flatten)]
    pub load: LoadFlags,

    /// Run control shared with the other measuring subcommands.
    #[command(flatten)]
    pub run: RunFlags,

    /// Print help
    #[arg(long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,

    /// rtbench was called as `cyclictest` (argv\[0\], see [`super::getopt`]): the
    /// defaults of the rt-tests version such a caller expects (the ≤ 2.6 histogram
    /// layout). Not a flag; set by the caller of the parser.
    #[arg(skip)]
    pub as_cyclictest: bool,
}

//! Command-line definitions for `rtbench pmq`, `rtbench pipe`, `rtbench load` and the
//! load flags every measuring subcommand takes (clap; no logic — `plan_pair` validates).

use clap::{ArgAction, Args};

/// Background load while measuring (all measuring subcommands).
#[derive(Debug, Args, Default, Clone)]
pub struct LoadFlags {
    /// Built-in load: cpu:N (busy loops), vm:N:SIZE (allocate, touch, free SIZE bytes,
    /// e.g. 64M), io:N (write + fsync an unlinked temp file in $TMPDIR); comma-separated
    #[arg(long = "load", value_name = "SPEC")]
    pub load: Option<String>,

    /// External load command, e.g. "stress-ng --cpu 2" or "iperf3 -c host -t 0"
    /// (split like a shell would, no expansion); its output goes to standard error
    #[arg(long = "load-cmd", value_name = "CMD")]
    pub load_cmd: Option<String>,

    /// CPUs the load runs on (default: all online CPUs)
    #[arg(long = "load-cpus", value_name = "CPUSET")]
    pub load_cpus: Option<String>,
}

/// Flags shared by `pmq` and `pipe` (pmqtest's meaning where pmqtest has the flag).
#[derive(Debug, Args)]
pub struct PairCommon {
    /// Pin: pair N on CPU N without CPUSET, else round-robin over CPUSET (a single CPU
    /// pins every pair there, as pmqtest -a NUM); both ends of a pair share the CPU
    #[arg(short = 'a', long = "affinity", value_name = "CPUSET", num_args = 0..=1, default_missing_value = "")]
    pub affinity: Option<String>,

    /// Stop (and stop tracing) when a latency exceeds USEC µs; exit 1
    #[arg(short = 'b', long = "breaktrace", value_name = "USEC")]
    pub breaktrace: Option<u64>,

    /// Latency histogram of US buckets (1 µs, or 1 ns with -N), printed at exit
    #[arg(short = 'h', long = "histogram", value_name = "US")]
    pub histogram: Option<usize>,

    /// Number of messages (cycles) per pair; 0 = endless
    #[arg(short = 'l', long = "loops", value_name = "LOOPS", default_value_t = 0)]
    pub loops: u64,

    /// Priority (1..99 SCHED_FIFO; 0 = SCHED_OTHER); default 98
    #[arg(short = 'p', long = "priority", alias = "prio", value_name = "PRIO")]
    pub priority: Option<i64>,

    /// SMP testing: -a -t and the same priority for all pairs
    #[arg(short = 'S', long = "smp")]
    pub smp: bool,

    /// Number of pairs; without NUM one per online CPU
    #[arg(short = 't', long = "threads", value_name = "NUM", num_args = 0..=1, default_missing_value = "")]
    pub threads: Option<String>,

    /// Receive with a timeout of TO seconds; each timeout is counted, the wait goes on
    #[arg(short = 'T', long = "timeout", value_name = "TO")]
    pub timeout: Option<u64>,

    /// Force timeouts: the sender waits TO seconds before each message (needs -T)
    #[arg(short = 'f', long = "forcetimeout", value_name = "TO")]
    pub forcetimeout: Option<u64>,

    /// Run control shared with `cyclic`.
    #[command(flatten)]
    pub run: crate::cli::RunFlags,

    /// Background load.
    #[command(flatten)]
    pub load: LoadFlags,

    /// Print help
    #[arg(long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,
}

/// `rtbench pmq` flags: pmqtest's.
#[derive(Debug, Args)]
pub struct PmqArgs {
    /// Distance of pair intervals in µs (pair i: interval + i*DIST)
    #[arg(
        short = 'd',
        long = "distance",
        value_name = "DIST",
        default_value_t = 500
    )]
    pub distance: u64,

    /// Receiver's delay before it asks for the next message, µs (pmqtest's interval)
    #[arg(
        short = 'i',
        long = "interval",
        value_name = "INTV",
        default_value_t = 1000
    )]
    pub interval: u64,

    /// Flags shared with `pipe`.
    #[command(flatten)]
    pub common: PairCommon,
}

/// `rtbench pipe` flags.
#[derive(Debug, Args)]
pub struct PipeArgs {
    /// Pause between round trips in µs (0: back to back, as perf bench sched pipe)
    #[arg(
        short = 'i',
        long = "interval",
        value_name = "INTV",
        default_value_t = 0
    )]
    pub interval: u64,

    /// Distance of pair pauses in µs (pair i: interval + i*DIST)
    #[arg(
        short = 'd',
        long = "distance",
        value_name = "DIST",
        default_value_t = 0
    )]
    pub distance: u64,

    /// Run the receiving end of each pair in a child process (perf's default) instead
    /// of a thread
    #[arg(long = "fork")]
    pub fork: bool,

    /// Flags shared with `pmq`.
    #[command(flatten)]
    pub common: PairCommon,
}

/// `rtbench load` flags: run the load alone.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// How long: N seconds, or with suffix s, m, h, d (default: until SIGINT/SIGTERM)
    #[arg(short = 'D', long = "duration", value_name = "TIME")]
    pub duration: Option<String>,

    /// The load.
    #[command(flatten)]
    pub load: LoadFlags,
}

/// `rtbench load-worker` (internal): one built-in load process.
#[derive(Debug, Args)]
pub struct LoadWorkerArgs {
    /// cpu, vm, io or guard
    pub kind: String,
    /// vm: bytes per round; io: the directory for the temporary file; guard: the
    /// program, argv0 and the arguments of the external command
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Examples for `rtbench pmq --help`.
pub const PMQ_EXAMPLES: &str = "\
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

/// Examples for `rtbench pipe --help`.
pub const PIPE_EXAMPLES: &str = "\
Examples:
  rtbench pipe -a 1 -l 100000 -q                 two SCHED_FIFO 98 threads on CPU 1
  rtbench pipe --fork -a 1 -p 0 -l 100000 -q     like `taskset -c 1 perf bench sched pipe`
  rtbench pipe -a 1 -p 98 -D 1m -h 50 --load cpu:1 --load-cpus 1

Each round trip: the sender stamps and writes, the receiver stamps on wakeup, stamps
and writes back, the sender stamps on wakeup. Both one-way latencies go into the
histogram and the lines #1 -> #0 and #0 -> #1; the round trip has its own line, and
the switch line gives total round-trip time / (2 x round trips), the figure
`perf bench sched pipe` gives as usecs/op / 2.";

/// Examples for `rtbench load --help`.
pub const LOAD_EXAMPLES: &str = "\
Examples:
  rtbench load --load cpu:2,vm:1:128M,io:1 -D 10m
  rtbench load --load-cmd \"stress-ng --cpu 2 --io 1\" --load-cpus 0 -D 1h
  rtbench cyclic -S -p 98 -D 10m --load cpu:1,io:1 --load-cpus 0

Load processes are children of rtbench in their own process group, stopped and reaped
at the end, on SIGINT/SIGTERM, on errors, and killed by the kernel if rtbench dies.";

//! The command line (clap): what each subcommand accepts, its help and examples. No
//! logic and no validation — `plan` turns these values into typed, checked options, and
//! nothing below `plan`/`app` sees clap. One file per subcommand; the flag groups that
//! several subcommands flatten (run control, load, the pair tests' common flags) live
//! here.
//!
//! The doc comments of the clap types are `--help` texts, printed as written: a
//! `[tuning]` or `[output]` there names a section of rtbench.toml, not a Rust item.
#![allow(rustdoc::broken_intra_doc_links)]

pub mod compare;
pub mod config;
pub mod cyclic;
#[cfg(feature = "diagnose")]
pub mod diagnose;
pub mod getopt;
pub mod load;
#[cfg(feature = "monitor")]
pub mod monitor;
pub mod number;
pub mod oslat;
pub mod parse;
pub mod pipe;
#[cfg(feature = "plot")]
pub mod plot;
pub mod pmq;
pub mod report;
pub mod rt_tests;
pub mod selftest;
pub mod sysinfo;
pub mod tune;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Real-time Linux latency measurement, tuning and boot self-test.
#[derive(Debug, Parser)]
#[command(name = "rtbench", version = crate::VERSION, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// rtbench subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Timer-wakeup latency, cyclictest-compatible (flags, T: lines, -h dump, --json)
    #[command(
        disable_help_flag = true,
        allow_negative_numbers = true,
        args_override_self = true,
        after_help = cyclic::EXAMPLES,
    )]
    Cyclic(Box<cyclic::CyclicArgs>),
    /// Print the system snapshot: kernel, PREEMPT_RT, isolated/housekeeping CPUs
    Sysinfo(sysinfo::SysinfoArgs),
    /// Boot self-test: tune, measure under load, judge the limits, report (rtbench.service)
    #[command(after_help = selftest::EXAMPLES)]
    Selftest(selftest::SelftestArgs),
    /// Long-running latency monitoring for the field: one journal entry per CPU per window
    #[cfg(feature = "monitor")]
    #[command(after_help = monitor::EXAMPLES)]
    Monitor(monitor::MonitorArgs),
    /// Collect a diagnostics bundle (.tar.gz) for a field engineer: results, windows,
    /// tuning, system snapshot, journal; SUMMARY.txt says what looks wrong
    #[cfg(feature = "diagnose")]
    #[command(after_help = diagnose::EXAMPLES)]
    Diagnose(diagnose::DiagnoseArgs),
    /// Show stored self-test results: the last verdict and table, or all kept runs
    #[command(after_help = report::EXAMPLES)]
    Report(report::ReportArgs),
    /// Draw a latency plot (SVG, one curve per CPU, log count axis) from a result
    #[cfg(feature = "plot")]
    #[command(after_help = plot::EXAMPLES)]
    Plot(plot::PlotArgs),
    /// Compare runs (stored results, --json, -h dumps): per test, CPU and statistic,
    /// equivalent, regression, improvement or inconclusive; what differs between them
    #[command(after_help = compare::EXAMPLES)]
    Compare(compare::CompareArgs),
    /// Print the configuration template, or check a configuration file without running anything
    #[command(subcommand, after_help = config::EXAMPLES)]
    Config(config::ConfigAction),
    /// Check, apply, revert or show the RT tuning of the configuration's [tuning]
    #[command(subcommand, after_help = tune::EXAMPLES)]
    Tune(tune::TuneAction),
    /// POSIX message-queue latency between thread pairs, pmqtest-compatible
    #[command(
        disable_help_flag = true,
        allow_negative_numbers = true,
        args_override_self = true,
        after_help = pmq::EXAMPLES
    )]
    Pmq(Box<pmq::PmqArgs>),
    /// Task-switch latency: pipe ping-pong between two threads or processes
    #[command(
        disable_help_flag = true,
        allow_negative_numbers = true,
        args_override_self = true,
        after_help = pipe::EXAMPLES
    )]
    Pipe(Box<pipe::PipeArgs>),
    /// Busy-poll noise of (isolated) CPUs, oslat-compatible (flags, per-CPU table, --json)
    #[command(
        disable_help_flag = true,
        disable_version_flag = true,
        allow_negative_numbers = true,
        args_override_self = true,
        after_help = oslat::EXAMPLES
    )]
    Oslat(Box<oslat::OslatArgs>),
    /// Run only the background load (--load/--load-cmd) for -D TIME
    #[command(after_help = load::EXAMPLES)]
    Load(load::LoadArgs),
    /// Internal: one built-in load worker process (started by --load)
    #[command(hide = true)]
    LoadWorker(load::LoadWorkerArgs),
}

/// Histogram dump layout for `-h/-H`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HistogramLayout {
    /// cyclictest 2.7+: zero rows omitted, no `# Total:` line
    Current,
    /// cyclictest <= 2.6: every row and a `# Total:` line (old OSADL scripts)
    Legacy,
}

/// Run-control flags every measuring subcommand (`cyclic`, `pmq`, `pipe`) shares, with
/// cyclictest's meaning.
#[derive(Debug, Args)]
pub struct RunFlags {
    /// Run time: N seconds, or with suffix s, m, h, d (e.g. 10s, 5m, 12h)
    #[arg(short = 'D', long = "duration", value_name = "TIME")]
    pub duration: Option<String>,

    /// Write results as JSON (rt-tests file_version 1 plus an "rtbench" object); - for stdout
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// CPUs for the main thread (default: first housekeeping CPU)
    #[arg(long = "mainaffinity", value_name = "CPUSET")]
    pub mainaffinity: Option<String>,

    /// Do not call mlockall
    #[arg(long = "no-mlockall")]
    pub no_mlockall: bool,

    /// Print results in ns instead of µs
    #[arg(short = 'N', long = "nsecs")]
    pub nsecs: bool,

    /// Print only a summary at exit
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,

    /// Seconds between live report blocks (without -q)
    #[arg(long = "report-interval", value_name = "SECS", default_value_t = 1.0)]
    pub report_interval: f64,

    /// PM QoS latency target written to /dev/cpu_dma_latency, in µs
    #[arg(long = "latency", value_name = "PM_QOS", default_value_t = 0, value_parser = number::i32_arg)]
    pub latency: i32,

    /// Leave /dev/cpu_dma_latency alone
    #[arg(long = "default-system")]
    pub default_system: bool,
}

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
pub struct PairFlags {
    /// Pin: pair N on CPU N without CPUSET, else round-robin over CPUSET (a single CPU
    /// pins every pair there, as pmqtest -a NUM); both ends of a pair share the CPU
    #[arg(short = 'a', long = "affinity", value_name = "CPUSET", num_args = 0..=1, default_missing_value = "")]
    pub affinity: Option<String>,

    /// Stop (and stop tracing) when a latency exceeds USEC µs; exit 1
    #[arg(short = 'b', long = "breaktrace", value_name = "USEC", value_parser = number::us_arg)]
    pub breaktrace: Option<u64>,

    /// Explain messages later than USEC µs from the kernel's trace events: what ran on
    /// the receiver's CPU between the send and the receipt (a tracefs instance of
    /// rtbench's own; root). Each new maximum is explained, the others up to 4 a second
    /// per CPU; every one is counted by its cause in the closing `# Causes:` block. -b
    /// explains the sample that stops the run.
    #[arg(long = "explain", value_name = "USEC", value_parser = number::own_us_arg)]
    pub explain: Option<u64>,

    /// Latency histogram of US buckets (1 µs, or 1 ns with -N), printed at exit
    #[arg(short = 'h', long = "histogram", value_name = "US", value_parser = number::us_usize_arg)]
    pub histogram: Option<usize>,

    /// Number of messages (cycles) per pair; 0 = endless
    #[arg(short = 'l', long = "loops", value_name = "LOOPS", default_value_t = 0, value_parser = number::u64_arg)]
    pub loops: u64,

    /// Priority (1..99 SCHED_FIFO; 0 = SCHED_OTHER); default 98
    #[arg(short = 'p', long = "priority", alias = "prio", value_name = "PRIO", value_parser = number::i64_arg)]
    pub priority: Option<i64>,

    /// SMP testing: -a -t and the same priority for all pairs
    #[arg(short = 'S', long = "smp")]
    pub smp: bool,

    /// Number of pairs; without NUM one per online CPU
    #[arg(short = 't', long = "threads", value_name = "NUM", num_args = 0..=1, default_missing_value = "")]
    pub threads: Option<String>,

    /// Receive with a timeout of TO seconds; each timeout is counted, the wait goes on
    #[arg(short = 'T', long = "timeout", value_name = "TO", value_parser = number::u64_arg)]
    pub timeout: Option<u64>,

    /// Force timeouts: the sender waits TO seconds before each message (needs -T)
    #[arg(short = 'f', long = "forcetimeout", value_name = "TO", value_parser = number::u64_arg)]
    pub forcetimeout: Option<u64>,

    /// Message size in bytes: 32 carry the stamps, the rest is padding; pipe up to
    /// PIPE_BUF (4096, pipe(7)), pmq up to /proc/sys/fs/mqueue/msgsize_max (mq_overview(7))
    #[arg(long = "msg-size", value_name = "BYTES", default_value_t = 32, value_parser = number::i64_arg)]
    pub msg_size: i64,

    /// Run control shared with `cyclic`.
    #[command(flatten)]
    pub run: RunFlags,

    /// Background load.
    #[command(flatten)]
    pub load: LoadFlags,

    /// Print help
    #[arg(long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,
}

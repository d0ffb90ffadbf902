//! Command-line definitions (clap). No logic: `plan` turns these into validated specs.

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Real-time Linux latency measurement, tuning and boot self-test.
#[derive(Debug, Parser)]
#[command(name = "rtbench", version, about, long_about = None, propagate_version = true)]
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
        after_help = CYCLIC_EXAMPLES,
    )]
    Cyclic(Box<CyclicArgs>),
    /// Print the system snapshot: kernel, PREEMPT_RT, isolated/housekeeping CPUs
    Sysinfo(SysinfoArgs),
    /// Boot self-test: tune, measure under load, judge the limits, report (rtbench.service)
    #[command(after_help = SELFTEST_EXAMPLES)]
    Selftest(SelftestArgs),
    /// Show stored self-test results: the last verdict and table, or all kept runs
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Draw a latency plot (SVG, one curve per CPU, log count axis) from a result
    #[cfg(feature = "plot")]
    #[command(after_help = crate::cli_plot::PLOT_EXAMPLES)]
    Plot(crate::cli_plot::PlotArgs),
    /// Check, apply, revert or show the RT tuning of the configuration's [tuning]
    #[command(subcommand, after_help = TUNE_EXAMPLES)]
    Tune(TuneAction),
    /// POSIX message-queue latency between thread pairs, pmqtest-compatible
    #[command(
        disable_help_flag = true,
        allow_negative_numbers = true,
        after_help = crate::cli_pair::PMQ_EXAMPLES
    )]
    Pmq(Box<crate::cli_pair::PmqArgs>),
    /// Task-switch latency: pipe ping-pong between two threads or processes
    #[command(
        disable_help_flag = true,
        allow_negative_numbers = true,
        after_help = crate::cli_pair::PIPE_EXAMPLES
    )]
    Pipe(Box<crate::cli_pair::PipeArgs>),
    /// Run only the background load (--load/--load-cmd) for -D TIME
    #[command(after_help = crate::cli_pair::LOAD_EXAMPLES)]
    Load(crate::cli_pair::LoadArgs),
    /// Internal: one built-in load worker process (started by --load)
    #[command(hide = true)]
    LoadWorker(crate::cli_pair::LoadWorkerArgs),
}

const TUNE_EXAMPLES: &str = "\
Examples:
  rtbench tune check                      compare the system with /etc/rtbench/rtbench.toml
  rtbench tune apply --config board.toml  change what differs; undo all on the first failure
  rtbench tune revert                     restore every value the last apply changed
  rtbench tune status --json              show the journal in /run/rtbench

Exit codes: 0 ok, 1 deviations or a failure (rolled back), 2 configuration error,
3 not root or the journal/lock is unusable.";

/// `rtbench tune` actions.
#[derive(Debug, Subcommand)]
pub enum TuneAction {
    /// Compare the kernel's effective state with [tuning]; write nothing
    Check(TuneArgs),
    /// Change what differs as a transaction (journal in /run/rtbench, rollback on failure)
    Apply(TuneArgs),
    /// Restore every value recorded by the last committed apply
    Revert(TuneArgs),
    /// Show the journal: state and recorded changes
    Status(TuneArgs),
}

/// Flags shared by the `rtbench tune` actions.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,

    /// Configuration file
    #[arg(long, value_name = "FILE", default_value = crate::config::DEFAULT_PATH)]
    pub config: PathBuf,

    /// Root of /proc and /sys (tests run against a temporary tree)
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysroot: Option<PathBuf>,

    /// Test hook: sleep after this many kernel writes until killed
    #[arg(long, value_name = "N", hide = true)]
    pub pause_after_writes: Option<usize>,
}

const SELFTEST_EXAMPLES: &str = "\
Examples:
  rtbench selftest                          /etc/rtbench/rtbench.toml, as rtbench.service runs it
  rtbench selftest --config factory.toml    another configuration

Exit codes: 0 pass, 1 a limit failed (or tuning deviated), 2 invalid configuration
(nothing tuned, nothing written), 3 the environment refused, 130/143 interrupted.";

/// `rtbench selftest` flags.
#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// Configuration file (default /etc/rtbench/rtbench.toml; when it is missing the
    /// documented defaults are used)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

const REPORT_EXAMPLES: &str = "\
Examples:
  rtbench report              the last self-test: verdict and per-CPU table
  rtbench report --all        every kept run, oldest first
  rtbench report --json       the last run's full result (histograms included)";

const CYCLIC_EXAMPLES: &str = "\
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

/// Histogram dump layout for `-h/-H`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HistogramLayout {
    /// cyclictest 2.7+: zero rows omitted, no `# Total:` line
    Current,
    /// cyclictest <= 2.6: every row and a `# Total:` line (old OSADL scripts)
    Legacy,
}

/// `rtbench cyclic` flags, named and meant as in cyclictest 2.x.
#[derive(Debug, Args)]
pub struct CyclicArgs {
    /// Pin threads: thread N on CPU N without CPUSET, else round-robin over CPUSET
    /// (cpu-list like 0-3,5 or 1-7:2/4, N = last CPU, all; or a 0x hex mask)
    #[arg(short = 'a', long = "affinity", value_name = "CPUSET", num_args = 0..=1, default_missing_value = "")]
    pub affinity: Option<String>,

    /// Stop the test (and tracing) when a latency exceeds USEC µs; exit 1
    #[arg(short = 'b', long = "breaktrace", value_name = "USEC")]
    pub breaktrace: Option<u64>,

    /// Clock: 0|monotonic (default) or 1|realtime
    #[arg(short = 'c', long = "clock", value_name = "CLOCK", default_value = "0")]
    pub clock: String,

    /// Distance of thread intervals in µs (thread i: interval + i*DIST; 0 with -h)
    #[arg(short = 'd', long = "distance", value_name = "DIST")]
    pub distance: Option<u64>,

    /// Latency histogram of US 1-µs buckets, printed at exit (same interval on all threads)
    #[arg(short = 'h', long = "histogram", value_name = "US")]
    pub histogram: Option<usize>,

    /// Like -h, plus a summary column over all threads
    #[arg(short = 'H', long = "histofall", value_name = "US")]
    pub histofall: Option<usize>,

    /// Write the -h/-H histogram to PATH instead of standard output
    #[arg(long = "histfile", value_name = "PATH")]
    pub histfile: Option<PathBuf>,

    /// Histogram layout of cyclictest 2.7+ (current) or <= 2.6 (legacy)
    #[arg(long = "histogram-layout", value_enum, default_value = "current")]
    pub histogram_layout: HistogramLayout,

    /// Base interval of the threads in µs
    #[arg(
        short = 'i',
        long = "interval",
        value_name = "INTV",
        default_value_t = 1000
    )]
    pub interval: u64,

    /// Number of cycles per thread; 0 = endless
    #[arg(short = 'l', long = "loops", value_name = "LOOPS", default_value_t = 0)]
    pub loops: u64,

    /// Lock current and future memory (the default; kept for cyclictest command lines)
    #[arg(short = 'm', long = "mlockall")]
    pub mlockall: bool,

    /// Accepted and ignored (cyclictest 0.x option that vendor docs still pass)
    #[arg(short = 'n', long = "nanosleep")]
    pub nanosleep: bool,

    /// Priority of the highest-priority thread (1..99 FIFO/RR; 0 = SCHED_OTHER)
    #[arg(short = 'p', long = "priority", value_name = "PRIO")]
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

    /// Background load while measuring.
    #[command(flatten)]
    pub load: crate::cli_pair::LoadFlags,

    /// Run control shared with the other measuring subcommands.
    #[command(flatten)]
    pub run: RunFlags,

    /// Print help
    #[arg(long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,
}

/// `rtbench report` flags.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Print the stored JSON instead of the table
    #[arg(long)]
    pub json: bool,
    /// Every kept run instead of the last one
    #[arg(long)]
    pub all: bool,
    /// Results directory
    #[arg(long, value_name = "DIR", default_value = crate::report::store::DEFAULT_DIR)]
    pub dir: PathBuf,
}

/// `rtbench sysinfo` flags.
#[derive(Debug, Args)]
pub struct SysinfoArgs {
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
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
    #[arg(long = "latency", value_name = "PM_QOS", default_value_t = 0)]
    pub latency: i32,

    /// Leave /dev/cpu_dma_latency alone
    #[arg(long = "default-system")]
    pub default_system: bool,
}

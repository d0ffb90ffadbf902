//! `rtbench oslat`: rt-tests oslat's flags (2.4, plus later rt-tests' `-W`).

use super::number;
use clap::{ArgAction, Args};
use std::path::PathBuf;

/// Examples and differences from oslat for `rtbench oslat --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench oslat -c 1 -D 5m                 poll the isolated CPU 1 for 5 minutes
  rtbench oslat -c 2-3 -f 1 -D 300 -q -z   OpenShift's oslat step, FIFO 1, zero buckets omitted
  rtbench oslat -c 1 -D 1h --explain 20    name the cause of every new maximum over 20 µs

Differences from oslat 2.4 (on purpose; docs/COMPAT.md):
  * a bad option or value is one line on standard error and exit 2 (oslat: usage, exit 1);
  * the main thread runs beside the polled CPUs unless -C says where;
  * -T also writes the summary after its line on standard error (oslat exits at once);
  * percentiles (P99.99, P99.999, P99.9999) and the counter used go to standard error
    and into the --json \"rtbench\" object; standard output is oslat's.";

/// `rtbench oslat` flags, named and meant as in rt-tests' oslat.
#[derive(Debug, Args)]
pub struct OslatArgs {
    /// Number of buckets (4..1024; oslat's default 32)
    #[arg(short = 'b', long = "bucket-size", value_name = "N")]
    pub bucket_size: Option<String>,

    /// Subtract the smallest pre-heat latency from every gap before bucketing
    #[arg(short = 'B', long = "bias")]
    pub bias: bool,

    /// CPUs to poll, one thread each (cpu-list like 1,3,5-7; default: every allowed CPU)
    #[arg(short = 'c', long = "cpu-list", value_name = "CPUS")]
    pub cpu_list: Option<String>,

    /// CPU of the main thread (default: a housekeeping CPU beside the polled ones)
    #[arg(short = 'C', long = "cpu-main-thread", value_name = "CPU")]
    pub cpu_main_thread: Option<String>,

    /// Run time: N seconds, or with suffix s, m, h, d (oslat's default 1 s)
    #[arg(short = 'D', long = "duration", value_name = "TIME")]
    pub duration: Option<String>,

    /// Write results as JSON (rt-tests' layout plus an "rtbench" object); - for stdout
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// SCHED_FIFO priority of the polling threads (1..99; default SCHED_OTHER)
    #[arg(short = 'f', long = "rtprio", value_name = "PRIO")]
    pub rtprio: Option<String>,

    /// Workload memory per thread (e.g. 4K, 1M; default 16K), with -w memmove
    #[arg(short = 'm', long = "workload-mem", value_name = "SIZE")]
    pub workload_mem: Option<String>,

    /// Print only the summary at exit
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,

    /// Pre-heat with the first thread only
    #[arg(short = 's', long = "single-preheat")]
    pub single_preheat: bool,

    /// Stop the test when a gap reaches US µs: a marker in the trace, tracing stopped
    #[arg(short = 'T', long = "trace-threshold", value_name = "US")]
    pub trace_threshold: Option<String>,

    /// Print oslat's version line and exit
    #[arg(short = 'v', long = "version")]
    pub version: bool,

    /// Workload between two reads: no (default) or memmove
    #[arg(short = 'w', long = "workload", value_name = "KIND")]
    pub workload: Option<String>,

    /// Bucket width in ns (default 1000; not a multiple of 1000: ns precision output)
    #[arg(short = 'W', long = "bucket-width", value_name = "NS")]
    pub bucket_width: Option<String>,

    /// Leave all-zero buckets out of the histogram ("    ..." stands for them)
    #[arg(short = 'z', long = "zero-omit")]
    pub zero_omit: bool,

    /// Explain gaps over USEC µs from the kernel's trace events: what ran on the polled
    /// CPU in the gap (a tracefs instance of rtbench's own; root). Each new maximum is
    /// explained, the others up to 4 a second per CPU; every one is counted by its cause
    /// in the closing `# Causes:` block
    #[arg(long = "explain", value_name = "USEC", value_parser = number::own_us_arg)]
    pub explain: Option<u64>,

    /// Do not call mlockall
    #[arg(long = "no-mlockall")]
    pub no_mlockall: bool,

    /// Print help
    #[arg(short = 'h', long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,

    /// rtbench was called as `oslat` (argv\[0\]). Not a flag.
    #[arg(skip)]
    pub as_oslat: bool,
}

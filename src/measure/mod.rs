//! Measurements: the shared run control and harness, per-thread statistics, the cyclic
//! timer-wakeup test and the pair tests (pmq, pipe).
//!
//! A test describes its measuring threads ([`ThreadSpec`]) and what each one does
//! (a [`harness::Worker`]); [`harness::Harness`] prepares the process as
//! [`RunControl`] says, starts and supervises the threads and returns their outputs
//! with a [`harness::RunEnd`]. The hot loops live in [`cyclic`] and
//! `pair/sender.rs`.

pub mod breaktrace;
pub mod cyclic;
pub mod harness;
pub mod histogram;
#[cfg(feature = "monitor")]
pub mod monitor;
pub mod pair;
mod periodic;
pub mod poll;
pub mod shared;
pub mod stats;
pub mod transport;
pub mod verbose;

use crate::cpuset::CpuSet;
use crate::sys::sched::Policy;
use std::time::Duration;

/// Default priority when a real-time policy is used without `-p`: 98, the highest that
/// jitterdebugger's `-p` accepts (1..98; its own default is 80), so that 99 stays with
/// the kernel's per-CPU threads (migration, watchdog).
pub const DEFAULT_RT_PRIORITY: i32 = 98;

/// Stack size asked for a measuring thread (Rust's standard library raises it to
/// glibc's minimum, `__pthread_get_minstack`: `PTHREAD_STACK_MIN` plus the static TLS,
/// 128 KiB and more on aarch64). Room for any
/// path a thread may take (setup, an error, debug builds' larger frames); what the
/// thread does not use is given back after setup ([`crate::sys::sched::trim_stack`]).
pub const THREAD_STACK_BYTES: usize = 32 * 1024;
/// The stack mapping glibc makes for a measuring thread, in bytes: what it charges
/// to the commit limit (the overcommit guard, `tune/commit.rs`) before the unused
/// part is given back — [`THREAD_STACK_BYTES`] or the C library's
/// `PTHREAD_STACK_MIN`, whichever is larger (128 KiB on aarch64 glibc).
pub fn thread_stack_mapping_bytes() -> u64 {
    THREAD_STACK_BYTES.max(libc::PTHREAD_STACK_MIN) as u64
}

/// Stack bytes touched before the first sample and kept (locked with `-m`) below the
/// frame the loop runs from; the loop itself needs a few hundred bytes.
pub const PREFAULT_STACK_BYTES: usize = 4 * 1024;

/// One measuring thread (cyclic) or pair (pmq, pipe), fully decided by the Plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSpec {
    /// Thread or pair number (`T:` index, pmqtest's pair number).
    pub index: usize,
    /// CPU to pin to, or `None` to inherit the process affinity (cyclictest `-t N`
    /// without `-a`). Both ends of a pair share it.
    pub cpu: Option<usize>,
    /// Scheduling policy.
    pub policy: Policy,
    /// Priority (1..99 for FIFO/RR, 0 otherwise).
    pub priority: i32,
    /// Interval in **µs**: cyclic, the wakeup interval (cyclictest `-i` plus
    /// `index × -d`); pmq, the receiver's delay before it replies; pipe, the pause
    /// between round trips (0 = back to back).
    pub interval_us: u64,
}

/// cyclictest's `-h N` histogram: `buckets` linear buckets of `bucket_ns` each (1000 ns
/// = 1 µs, or 1 ns with `-N`), as rt-tests' `src/lib/histogram.c` keeps them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistogramSetting {
    /// Number of buckets (`-h N`).
    pub buckets: usize,
    /// Width of one bucket in **ns**.
    pub bucket_ns: u64,
}

/// The run control every measurement shares: how long it runs, how the process is
/// prepared, and what is reported while it runs. Decided by the Plan (flags or the
/// self-test's configuration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunControl {
    /// Stop after this long (cyclictest `-D`), if set.
    pub duration: Option<Duration>,
    /// Stop each thread after this many samples (cyclictest `-l`), if set.
    pub loops: Option<u64>,
    /// Call `mlockall` before starting threads (and in a forked pipe responder).
    pub mlockall: bool,
    /// Value for `/dev/cpu_dma_latency` in **µs**, or `None` to leave PM QoS alone.
    pub pm_qos_us: Option<i32>,
    /// Where the main (supervising) thread runs.
    pub main_cpus: Option<CpuSet>,
    /// Live report period; `None` for `-q`.
    pub report_every: Option<Duration>,
    /// `-b`: stop the run when a sample exceeds this many **ns**.
    pub break_ns: Option<u64>,
    /// `--tracemark`: write a trace marker when `-b` fires.
    pub tracemark: bool,
    /// `-h N`: a linear histogram per thread.
    pub histogram: Option<HistogramSetting>,
    /// `--explain US` (and `-b`, the self-test's and monitor's limits): the flight
    /// recorder and the thresholds of the samples to explain (`crate::explain`).
    pub explain: Option<crate::explain::explainer::ExplainSpec>,
}

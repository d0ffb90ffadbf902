//! The cyclic timer-wakeup test (cyclictest's measurement).
//!
//! Each measuring thread (pinned, prioritised and pre-faulted by the
//! [`super::harness::Harness`]) runs the periodic-wakeup loop of `measure/periodic.rs`
//! (sleep to an absolute deadline, read the clock, record `latency = now − next` in
//! **ns**, count overruns), every sample into the thread's one [`LatencyStats`].

use super::harness::{Harness, Progress, RunEnd, ThreadCtx, Worker};
use super::periodic::Period;
use super::stats::LatencyStats;
use super::{RunControl, ThreadSpec};
use crate::error::Result;
use crate::sys::clock::Clock;
use crate::sys::SysRoot;
use std::sync::atomic::Ordering;

/// A whole cyclic run, validated: nothing here can be wrong when it reaches [`run`].
#[derive(Debug, Clone)]
pub struct CyclicSpec {
    /// The measuring threads.
    pub threads: Vec<ThreadSpec>,
    /// Clock to sleep on and read.
    pub clock: Clock,
    /// Duration, loops, process setup, reporting.
    pub control: RunControl,
    /// `-v`: one ring per thread, in thread order, made by the main thread
    /// ([`super::verbose`]); the main thread prints what the threads store there.
    pub samples: Option<super::verbose::Rings>,
}

/// One thread's outcome.
#[derive(Debug, Clone)]
pub struct ThreadResult {
    /// The thread as specified.
    pub spec: ThreadSpec,
    /// Kernel thread id.
    pub tid: i32,
    /// Its statistics (ns).
    pub stats: LatencyStats,
}

/// A finished (or interrupted) cyclic run.
#[derive(Debug, Clone)]
pub struct CyclicResult {
    /// Per-thread results, in thread order.
    pub threads: Vec<ThreadResult>,
    /// How the run ended.
    pub end: RunEnd,
}

/// Sets up the process, runs every measuring thread and supervises them until the
/// duration/loops end, `-b` fires, or SIGINT/SIGTERM (see [`Harness`]).
///
/// Errors: [`crate::error::Error::Refused`] (exit 3) when mlockall, affinity or the
/// scheduling policy is refused — the run never falls back to SCHED_OTHER silently.
/// PM QoS problems are warnings, as in cyclictest.
pub fn run(spec: &CyclicSpec, root: &SysRoot, progress: &mut dyn Progress) -> Result<CyclicResult> {
    let harness = Harness::prepare(&spec.control, spec.threads.len(), root, progress)?;
    let workers = spec
        .threads
        .iter()
        .enumerate()
        .map(|(i, t)| CyclicThread {
            spec: t.clone(),
            period: Period::new(spec.clock, &spec.control),
            stats: Some(LatencyStats::new(spec.control.histogram)),
            ring: spec.samples.clone().map(|r| (r, i)),
        })
        .collect();
    let (threads, end) = harness.run("T", &spec.threads, workers, progress)?;
    Ok(CyclicResult { threads, end })
}

/// One measuring thread's work.
struct CyclicThread {
    spec: ThreadSpec,
    period: Period,
    /// Allocated by the main thread: a first allocation inside the measuring thread
    /// would make glibc create a per-thread malloc arena (64 MiB of mappings that
    /// `mlockall(MCL_FUTURE)` then accounts as locked).
    stats: Option<LatencyStats>,
    /// `-v`: the rings and this thread's index in them.
    ring: Option<(super::verbose::Rings, usize)>,
}

impl Worker for CyclicThread {
    type Output = ThreadResult;

    fn run(mut self, ctx: &ThreadCtx, measure: bool) -> Result<ThreadResult> {
        let tid = ctx.live.tid.load(Ordering::Relaxed);
        let mut stats = self
            .stats
            .take()
            .expect("stats are set when the thread is made");
        if measure {
            let ring = self.ring.as_ref().map(|(r, i)| &r[*i]);
            self.period.run(&self.spec, ctx, tid, &mut stats, ring);
        }
        Ok(ThreadResult {
            spec: self.spec,
            tid,
            stats,
        })
    }
}

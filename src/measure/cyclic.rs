//! The cyclic timer-wakeup test (cyclictest's measurement).
//!
//! Each measuring thread (pinned, prioritised and pre-faulted by the
//! [`super::harness::Harness`]) loops: `clock_nanosleep(clock, TIMER_ABSTIME, next)`,
//! read the clock, record `latency = now − next` in **ns**, advance `next` by the
//! interval. A wakeup later than the following deadline is an **overrun**: it is counted
//! and `next` moves past `now` (cyclictest skips such periods silently).

use super::breaktrace::BreakInfo;
use super::harness::{Harness, Progress, RunEnd, ThreadCtx, Worker};
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
        .map(|t| CyclicThread {
            spec: t.clone(),
            clock: spec.clock,
            duration_ns: spec.control.duration.map(crate::duration::as_nanos_i64),
            loops: spec.control.loops,
            stats: Some(LatencyStats::new(spec.control.histogram)),
        })
        .collect();
    let (threads, end) = harness.run("T", &spec.threads, workers, progress)?;
    Ok(CyclicResult { threads, end })
}

/// One measuring thread's work.
struct CyclicThread {
    spec: ThreadSpec,
    clock: Clock,
    duration_ns: Option<i64>,
    loops: Option<u64>,
    /// Allocated by the main thread: a first allocation inside the measuring thread
    /// would make glibc create a per-thread malloc arena (64 MiB of mappings that
    /// `mlockall(MCL_FUTURE)` then accounts as locked).
    stats: Option<LatencyStats>,
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
            self.measure(ctx, &mut stats, tid);
        }
        Ok(ThreadResult {
            spec: self.spec,
            tid,
            stats,
        })
    }
}

impl CyclicThread {
    /// The hot loop: no allocation, no lock, no formatting between two clock reads.
    fn measure(&self, ctx: &ThreadCtx, stats: &mut LatencyStats, tid: i32) {
        let clock = self.clock;
        let interval = self.spec.interval_us as i64 * 1000;
        let loops = self.loops.unwrap_or(u64::MAX);
        let start = clock.now_ns();
        let stop_at = self
            .duration_ns
            .map_or(i64::MAX, |d| start.saturating_add(d));
        let mut next = start + interval;
        'run: loop {
            while !clock.sleep_until_ns(next) {
                if ctx.shared.stopped() {
                    break 'run;
                }
            }
            let now = clock.now_ns();
            let latency = (now - next).max(0) as u64;
            stats.record(latency);
            ctx.live.publish(stats);
            if let Some(b) = &ctx.breaks {
                if latency > b.limit_ns {
                    b.trip(
                        BreakInfo {
                            thread: self.spec.index,
                            tid,
                            latency_ns: latency,
                        },
                        &ctx.shared,
                    );
                    break;
                }
            }
            next += interval;
            if now > next {
                let missed = (now - next) / interval + 1;
                stats.record_overrun(missed as u64);
                next += missed * interval;
            }
            if stats.count >= loops || now >= stop_at || ctx.shared.stopped() {
                break;
            }
        }
    }
}

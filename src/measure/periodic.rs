//! The periodic-wakeup loop (cyclictest's measurement), written once for every test
//! that wakes up on a timer: the cyclic test ([`super::cyclic`]) and the monitor
//! ([`super::monitor`]).
//!
//! The loop: `clock_nanosleep(clock, TIMER_ABSTIME, next)`, read the clock, record
//! `latency = now − next` in **ns**, publish the live figures, trip the flight
//! recorder over the explain threshold (`crate::explain`), stop at `-b`, advance
//! `next` by the interval. A wakeup later than the following deadline is an
//! **overrun**: it is counted and `next` moves past `now` (cyclictest skips such
//! periods silently). What a test adds is one [`Wakeup`] call per cycle, which says
//! where the sample goes (the monitor hands its window over there).
//!
//! The loop is generic over the [`Wakeup`], so each test gets its own copy with the
//! call inlined: no indirect call, no allocation, no lock, no formatting and no
//! syscall beyond the two clock calls (`src/sys/clock.rs`).

use super::breaktrace::BreakInfo;
use super::harness::ThreadCtx;
use super::stats::LatencyStats;
use super::verbose::SampleRing;
use super::{RunControl, ThreadSpec};
use crate::sys::clock::Clock;

/// The one thing a test adds to the loop.
pub(super) trait Wakeup {
    /// Called on the measuring thread at every wakeup, after the clock is read and
    /// before the sample is recorded: the statistics the sample goes into, or `None`
    /// to end the loop. Runs on the hot path: it must not allocate, lock, format or
    /// make a syscall.
    fn stats(&mut self) -> Option<&mut LatencyStats>;
}

/// The cyclic test records every sample into one [`LatencyStats`].
impl Wakeup for LatencyStats {
    #[inline(always)]
    fn stats(&mut self) -> Option<&mut LatencyStats> {
        Some(self)
    }
}

/// When a loop sleeps and when it ends, taken from the run's [`RunControl`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Period {
    /// The clock slept on and read.
    clock: Clock,
    /// `-D` in **ns** (checked conversion: [`crate::duration::as_nanos_i64`]).
    duration_ns: Option<i64>,
    /// `-l`: samples to take.
    loops: Option<u64>,
}

impl Period {
    /// The period of a run with `control`, on `clock`.
    pub(super) fn new(clock: Clock, control: &RunControl) -> Period {
        Period {
            clock,
            duration_ns: control.duration.map(crate::duration::as_nanos_i64),
            loops: control.loops,
        }
    }

    /// Runs the loop for thread `spec` (its interval; its index and kernel thread id
    /// `tid` name it when `-b` fires) until the duration or loop count ends, `-b`
    /// fires, the run is stopped, or `at` returns `None`. With `ring` (`-v`), every
    /// sample is also stored there for the main thread to print.
    #[inline(always)]
    pub(super) fn run<W: Wakeup>(
        &self,
        spec: &ThreadSpec,
        ctx: &ThreadCtx,
        tid: i32,
        at: &mut W,
        ring: Option<&SampleRing>,
    ) {
        let clock = self.clock;
        let interval = spec.interval_us as i64 * 1000;
        let loops = self.loops.unwrap_or(u64::MAX);
        let start = clock.now_ns();
        let stop_at = self
            .duration_ns
            .map_or(i64::MAX, |d| start.saturating_add(d));
        let mut next = start + interval;
        let threshold = ctx.explain_threshold();
        'run: loop {
            while !clock.sleep_until_ns(next) {
                if ctx.shared.stopped() {
                    break 'run;
                }
            }
            let now = clock.now_ns();
            let Some(stats) = at.stats() else { break };
            let latency = (now - next).max(0) as u64;
            stats.record_at(latency, now);
            if let Some(r) = ring {
                r.push(latency);
            }
            ctx.live.publish(stats);
            // The flight recorder (`--explain`, the self-test's and monitor's limits):
            // one load per sample, one write(2) when it trips.
            if latency > threshold.load(std::sync::atomic::Ordering::Relaxed) {
                ctx.trip(next, now, spec.cpu);
            }
            if let Some(b) = &ctx.breaks {
                if latency > b.limit_ns {
                    b.trip(
                        BreakInfo {
                            thread: spec.index,
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

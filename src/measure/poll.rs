//! The busy-poll test (rt-tests' oslat): one thread per CPU that never sleeps, reads a
//! free-running counter ([`crate::sys::counter`]) over and over, and records every
//! gap between two reads. A gap is the time the CPU was taken from the loop
//! (interrupts, softirqs, other tasks, the tick, SMIs, the hypervisor); the shortest
//! gap is the loop's own cost (tens of ns).
//!
//! Each gap in **ns** goes into the thread's [`LatencyStats`] (log-linear histogram,
//! exact min/max) and into oslat's linear buckets ([`PollBuckets`]). The loop
//! allocates nothing, takes no lock and formats nothing; it looks at the stop flag and
//! the end of the run and publishes its live figures once every [`CHECK_EVERY`]
//! gaps. Over the explain threshold it trips the flight recorder (one `write(2)`),
//! over `-T` it stops the run as oslat does; both are off the hot path, and the
//! counter is read again after them, so their own cost is not counted as a gap.
//!
//! Before measuring, each thread (or only the first with `-s`) polls for the pre-heat
//! time (oslat: 1 s) so the CPU leaves its idle and low-frequency states; the smallest
//! pre-heat gap of all threads is the bias of `-B`.

use super::harness::{Harness, Progress, RunEnd, ThreadCtx, Worker};
use super::stats::LatencyStats;
use super::{RunControl, ThreadSpec};
use crate::error::Result;
use crate::sys::clock::{Clock, NS_PER_US};
use crate::sys::counter::Counter;
use crate::sys::SysRoot;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// oslat's number of buckets (`BUCKET_SIZE`).
pub const DEFAULT_BUCKETS: usize = 32;

/// Gaps between two looks at the stop flag, the run's end and the live figures.
pub const CHECK_EVERY: u64 = 1024;

/// oslat's buckets: `count` buckets of `width_ns`; bucket `j` holds the gaps of
/// `[bias + j·width, bias + (j+1)·width)` (the first also those below the bias), the
/// last also every longer one (rt-tests' `insert_bucket`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketSetting {
    /// Number of buckets (`-b`, 4..=1024; oslat's default 32).
    pub count: usize,
    /// Width of one bucket in **ns** (1000 = oslat 2.4's 1 µs; `-W`).
    pub width_ns: u64,
}

impl BucketSetting {
    /// Widths that are not whole µs print with ns precision (later rt-tests' `-W`).
    pub fn ns_precision(&self) -> bool {
        self.width_ns % NS_PER_US != 0
    }
}

/// One thread's oslat buckets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PollBuckets {
    /// Bucket width, **ns**.
    pub width_ns: u64,
    /// The bias subtracted from every gap before bucketing, **ns** (0 without `-B`).
    pub bias_ns: u64,
    /// Counts per bucket; the last one includes the overflows.
    pub counts: Vec<u64>,
    /// For overflows: the bucket widths beyond the last bucket, summed as oslat sums
    /// them (`index − count`), for its average.
    pub overflow_widths: u64,
}

impl PollBuckets {
    /// Empty buckets as `s` says (allocated now; recording never allocates).
    pub fn new(s: BucketSetting) -> PollBuckets {
        PollBuckets {
            width_ns: s.width_ns.max(1),
            bias_ns: 0,
            counts: vec![0; s.count.max(1)],
            overflow_widths: 0,
        }
    }

    /// Records one gap in **ns**. The common gap (first bucket) costs a subtraction
    /// and a compare; a division only beyond it.
    #[inline(always)]
    pub fn record(&mut self, gap_ns: u64) {
        let v = gap_ns.saturating_sub(self.bias_ns);
        if v < self.width_ns {
            self.counts[0] += 1;
        } else {
            self.record_far(v);
        }
    }

    #[inline(never)]
    fn record_far(&mut self, v: u64) {
        let index = v / self.width_ns;
        let last = self.counts.len() as u64 - 1;
        if index > last {
            self.overflow_widths = self
                .overflow_widths
                .saturating_add(index - self.counts.len() as u64);
        }
        self.counts[index.min(last) as usize] += 1;
    }

    /// Empties the buckets, keeping their memory.
    pub fn reset(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.overflow_widths = 0;
    }

    /// The latency a bucket stands for, **ns**: its upper edge, `bias + (j+1)·width`
    /// (oslat's `bucket_to_lat`).
    pub fn label_ns(&self, j: usize) -> u64 {
        self.bias_ns + (j as u64 + 1) * self.width_ns
    }

    /// oslat's average, **ns**: every bucket at its label, the overflows at their
    /// widths beyond the last bucket (rt-tests' `calculate`, per thread).
    pub fn average_ns(&self) -> f64 {
        let count: u64 = self.counts.iter().sum();
        if count == 0 {
            return 0.0;
        }
        let sum: f64 = self
            .counts
            .iter()
            .enumerate()
            .map(|(j, &c)| c as f64 * self.label_ns(j) as f64)
            .sum::<f64>()
            + self.overflow_widths as f64 * self.width_ns as f64;
        sum / count as f64
    }
}

/// A whole busy-poll run, validated.
#[derive(Debug, Clone)]
pub struct PollSpec {
    /// The polling threads, one per CPU (interval unused).
    pub threads: Vec<ThreadSpec>,
    /// Duration, process setup, `-T` (`break_ns`, a gap at or over it stops the run)
    /// and the flight recorder.
    pub control: RunControl,
    /// oslat's buckets.
    pub buckets: BucketSetting,
    /// `-B`: bias the buckets by the smallest pre-heat gap.
    pub bias: bool,
    /// Pre-heat time (oslat: 1 s); `None` for none.
    pub preheat: Option<Duration>,
    /// `-s`: only the first thread pre-heats.
    pub single_preheat: bool,
    /// `-w memmove -m SIZE`: bytes moved between two reads (0: no workload).
    pub workload_bytes: usize,
}

/// One thread's outcome.
#[derive(Debug, Clone)]
pub struct PollThreadResult {
    /// The thread as specified.
    pub spec: ThreadSpec,
    /// Kernel thread id.
    pub tid: i32,
    /// Every gap, **ns**.
    pub stats: LatencyStats,
    /// oslat's buckets.
    pub buckets: PollBuckets,
    /// Time the loop ran, **ns** (oslat's `Duration`).
    pub runtime_ns: u64,
}

/// A finished (or interrupted) busy-poll run.
#[derive(Debug, Clone)]
pub struct PollResult {
    /// Per-thread results, in thread order.
    pub threads: Vec<PollThreadResult>,
    /// The counter the loops read.
    pub counter: Counter,
    /// The bias of `-B`, **ns** (0 without it).
    pub bias_ns: u64,
    /// How the run ended.
    pub end: RunEnd,
}

/// What the threads of one run share besides the harness's state: the pre-heat's
/// meeting point and its smallest gap.
struct Preheat {
    barrier: Barrier,
    min_ns: AtomicU64,
    bias_ns: AtomicU64,
}

/// Prepares the process, runs the polling threads and supervises them until the
/// duration ends, `-T` fires, or SIGINT/SIGTERM/SIGHUP ([`Harness`]). `counter` is the
/// one [`Counter::detect`] found.
///
/// Errors: [`crate::error::Error::Refused`] (exit 3) when mlockall, affinity or the
/// scheduling policy is refused.
pub fn run(
    spec: &PollSpec,
    counter: Counter,
    root: &SysRoot,
    progress: &mut dyn Progress,
) -> Result<PollResult> {
    let harness = Harness::prepare(&spec.control, spec.threads.len(), root, progress)?;
    let preheat = Arc::new(Preheat {
        barrier: Barrier::new(spec.threads.len()),
        min_ns: AtomicU64::new(u64::MAX),
        bias_ns: AtomicU64::new(0),
    });
    let workers = spec
        .threads
        .iter()
        .map(|t| PollThread {
            spec: t.clone(),
            counter,
            run_ns: spec.control.duration.map(|d| d.as_nanos() as u64),
            preheat_ns: spec
                .preheat
                .filter(|_| !spec.single_preheat || t.index == 0)
                .map(|d| d.as_nanos() as u64),
            bias: spec.bias,
            trace_ns: spec.control.break_ns,
            shared: Arc::clone(&preheat),
            stats: Some(LatencyStats::new(None)),
            buckets: Some(PollBuckets::new(spec.buckets)),
            work: (spec.workload_bytes > 0).then(|| {
                (
                    vec![1u8; spec.workload_bytes],
                    vec![0u8; spec.workload_bytes],
                )
            }),
        })
        .collect();
    let (threads, end) = harness.run("oslat", &spec.threads, workers, progress)?;
    Ok(PollResult {
        threads,
        counter,
        bias_ns: preheat.bias_ns.load(Ordering::Relaxed),
        end,
    })
}

/// One polling thread's work. Every buffer is allocated by the main thread.
struct PollThread {
    spec: ThreadSpec,
    counter: Counter,
    run_ns: Option<u64>,
    preheat_ns: Option<u64>,
    bias: bool,
    trace_ns: Option<u64>,
    shared: Arc<Preheat>,
    stats: Option<LatencyStats>,
    buckets: Option<PollBuckets>,
    work: Option<(Vec<u8>, Vec<u8>)>,
}

impl Worker for PollThread {
    type Output = PollThreadResult;

    fn run(mut self, ctx: &ThreadCtx, measure: bool) -> Result<PollThreadResult> {
        let tid = ctx.live.tid.load(Ordering::Relaxed);
        let mut stats = self.stats.take().expect("stats are set when made");
        let mut buckets = self.buckets.take().expect("buckets are set when made");
        let mut work = self.work.take();
        let mut runtime_ns = 0;
        if measure {
            if let Some(ns) = self.preheat_ns {
                self.poll(ctx, ns, &mut stats, &mut buckets, work.as_mut(), false);
                self.shared.min_ns.fetch_min(stats.min(), Ordering::Relaxed);
            }
            self.shared.barrier.wait();
            if self.bias {
                // oslat 2.4: the bias is the smallest pre-heat latency in whole µs
                // as it counts them (`ns / 1000 + 1`); with ns-wide buckets, in ns.
                let min = self.shared.min_ns.load(Ordering::Relaxed);
                let bias = match min {
                    u64::MAX => 0,
                    m if buckets.width_ns % NS_PER_US == 0 => (m / NS_PER_US + 1) * NS_PER_US,
                    m => m,
                };
                self.shared.bias_ns.store(bias, Ordering::Relaxed);
                buckets.bias_ns = bias;
            }
            stats.reset();
            buckets.reset();
            if !ctx.shared.stopped() {
                let ns = self.run_ns.unwrap_or(u64::MAX);
                runtime_ns = self.poll(ctx, ns, &mut stats, &mut buckets, work.as_mut(), true);
            }
        }
        ctx.live.publish(&stats);
        Ok(PollThreadResult {
            spec: self.spec,
            tid,
            stats,
            buckets,
            runtime_ns,
        })
    }
}

impl PollThread {
    /// The loop: polls for `run_ns` (or until stopped), every gap into `stats` and
    /// `buckets`; `armed` enables the explain and `-T` checks (not in the pre-heat, as
    /// oslat). Returns the time it ran, **ns**.
    #[inline(never)]
    fn poll(
        &self,
        ctx: &ThreadCtx,
        run_ns: u64,
        stats: &mut LatencyStats,
        buckets: &mut PollBuckets,
        mut work: Option<&mut (Vec<u8>, Vec<u8>)>,
        armed: bool,
    ) -> u64 {
        let c = self.counter;
        let threshold = ctx.explain_threshold();
        let never = AtomicU64::new(u64::MAX);
        let threshold = if armed { threshold } else { &never };
        let trace_ns = self.trace_ns.filter(|_| armed).unwrap_or(u64::MAX);
        let start = c.read();
        let end = start.saturating_add(c.ticks(run_ns));
        let mut prev = start;
        loop {
            if let Some((src, dst)) = work.as_deref_mut() {
                dst.copy_from_slice(src);
                std::hint::black_box(&mut *dst);
            }
            let mut now = c.read();
            let gap = c.ns(now.wrapping_sub(prev));
            stats.record(gap);
            buckets.record(gap);
            if gap > threshold.load(Ordering::Relaxed) {
                self.trip(ctx, now, gap);
                now = c.read();
            }
            if gap >= trace_ns {
                self.break_at(ctx, gap);
                break;
            }
            if stats.count % CHECK_EVERY == 0 {
                ctx.live.publish(stats);
                if now >= end || ctx.shared.stopped() {
                    break;
                }
            }
            prev = now;
        }
        c.ns(c.read().wrapping_sub(start))
    }

    /// A gap over the explain threshold that ended at counter value `now`: the
    /// recorder's trap with the gap's start and end on CLOCK_MONOTONIC.
    #[cold]
    #[inline(never)]
    fn trip(&self, ctx: &ThreadCtx, now: u64, gap_ns: u64) {
        let mono = Clock::Monotonic.now_ns();
        let since = self.counter.ns(self.counter.read().wrapping_sub(now)) as i64;
        let wake = mono - since;
        ctx.trip(wake - gap_ns as i64, wake, self.spec.cpu);
    }

    /// `-T`: stops the run (and tracing, with oslat's marker).
    #[cold]
    #[inline(never)]
    fn break_at(&self, ctx: &ThreadCtx, gap_ns: u64) {
        if let Some(b) = &ctx.breaks {
            b.trip(
                super::breaktrace::BreakInfo {
                    thread: self.spec.index,
                    tid: ctx.live.tid.load(Ordering::Relaxed),
                    latency_ns: gap_ns,
                },
                &ctx.shared,
            );
        } else {
            ctx.shared.request_stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buckets(count: usize, width_ns: u64, bias_ns: u64) -> PollBuckets {
        let mut b = PollBuckets::new(BucketSetting { count, width_ns });
        b.bias_ns = bias_ns;
        b
    }

    /// oslat 2.4's `insert_bucket` for 1-µs buckets, written from its definition:
    /// `index = cycles / mhz` (whole µs), less the bias, at least 0; beyond the last
    /// bucket into it, `index − count` added to the overflow sum.
    fn oracle(count: usize, bias_us: u64, gaps_ns: &[u64]) -> (Vec<u64>, u64) {
        let mut counts = vec![0u64; count];
        let mut extra = 0;
        for &g in gaps_ns {
            let mut index = (g / 1000) as i64 - bias_us as i64;
            if index < 0 {
                index = 0;
            }
            let mut index = index as usize;
            if index >= count {
                extra += (index - count) as u64;
                index = count - 1;
            }
            counts[index] += 1;
        }
        (counts, extra)
    }

    proptest::proptest! {
        #[test]
        fn buckets_agree_with_oslat(
            count in 4usize..64,
            bias_us in 0u64..3,
            gaps in proptest::collection::vec(0u64..200_000, 0..300),
        ) {
            let mut b = buckets(count, 1000, bias_us * 1000);
            for &g in &gaps {
                b.record(g);
            }
            let (counts, extra) = oracle(count, bias_us, &gaps);
            proptest::prop_assert_eq!(&b.counts, &counts);
            proptest::prop_assert_eq!(b.overflow_widths, extra);
        }
    }

    #[test]
    fn labels_and_average_are_oslats() {
        let mut b = buckets(4, 1000, 0);
        for g in [100, 200, 1500, 9000] {
            b.record(g);
        }
        assert_eq!(b.counts, vec![2, 1, 0, 1]);
        // 9 µs is index 9: 9 − 4 = 5 widths beyond.
        assert_eq!(b.overflow_widths, 5);
        assert_eq!((b.label_ns(0), b.label_ns(3)), (1000, 4000));
        // (2·1 + 1·2 + 1·4 + 5) / 4 µs.
        assert!((b.average_ns() - 3250.0).abs() < 1e-9);
        let b = buckets(4, 1000, 2000);
        assert_eq!(b.label_ns(0), 3000);
        b.clone().reset();
    }
}

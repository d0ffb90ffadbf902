//! Per-thread latency statistics.
//!
//! Every value here is in **ns**. A measuring thread owns its [`LatencyStats`] and
//! records into it with no allocation and no lock (all buffers are sized before the
//! first sample); it publishes a few counters through [`LiveStats`] (relaxed atomic
//! stores) so the main thread can print progress and SIGUSR1 status without touching
//! the histogram.

use super::histogram::Histogram;
use super::HistogramSetting;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU64, Ordering::Relaxed};

/// cyclictest's `-h/-H` histogram: linear buckets of `bucket_ns` (1000 ns = 1 µs, or
/// 1 ns with `-N`), an overflow count and the first `buckets.len()` overflow cycle
/// numbers (0-based sample index), as `src/lib/histogram.c` of rt-tests keeps them.
#[derive(Debug, Clone)]
pub struct LinearHistogram {
    /// Width of one bucket in **ns**.
    pub bucket_ns: u64,
    /// Counts per bucket; bucket `i` holds samples in `[i, i+1)` × `bucket_ns`.
    pub buckets: Vec<u64>,
    /// Samples at or above `buckets.len() × bucket_ns`.
    pub overflows: u64,
    /// Cycle numbers of the first overflows (at most `buckets.len()`).
    pub overflow_cycles: Vec<u64>,
}

impl LinearHistogram {
    /// The buckets `setting` asks for, all memory allocated now.
    pub fn new(setting: HistogramSetting) -> Self {
        let n = setting.buckets;
        LinearHistogram {
            bucket_ns: setting.bucket_ns,
            buckets: vec![0; n],
            overflows: 0,
            overflow_cycles: Vec::with_capacity(n),
        }
    }

    #[inline(always)]
    fn record(&mut self, latency_ns: u64, cycle: u64) {
        let b = (latency_ns / self.bucket_ns) as usize;
        if let Some(slot) = self.buckets.get_mut(b) {
            *slot += 1;
        } else {
            self.overflows += 1;
            if self.overflow_cycles.len() < self.overflow_cycles.capacity() {
                self.overflow_cycles.push(cycle);
            }
        }
    }
}

/// Everything one measuring thread learned. Latencies in **ns**.
#[derive(Debug, Clone)]
pub struct LatencyStats {
    /// Samples recorded.
    pub count: u64,
    /// Smallest sample (0 when `count` is 0).
    pub min_ns: u64,
    /// Largest sample.
    pub max_ns: u64,
    /// When the largest sample woke, in the thread's clock, **ns** (0 until noted by
    /// [`LatencyStats::record_at`]): the monitor stamps a window's maximum with its
    /// own time.
    pub max_at_ns: i64,
    /// Most recent sample.
    pub last_ns: u64,
    /// Sum of all samples (for the mean).
    pub sum_ns: u128,
    /// Wakeups that came later than the following deadline (cyclictest skips these
    /// silently; rtbench counts them).
    pub overruns: u64,
    /// Periods skipped because of overruns.
    pub missed_periods: u64,
    /// The percentiles' histogram (`measure/histogram.rs`: within 0.78 %, 13 KB).
    pub hist: Histogram,
    /// cyclictest `-h` buckets, when asked for.
    pub linear: Option<LinearHistogram>,
}

impl LatencyStats {
    /// Empty statistics, with the `-h` buckets of `linear` when set. Allocates every
    /// buffer now: recording never does.
    pub fn new(linear: Option<HistogramSetting>) -> Self {
        LatencyStats {
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            max_at_ns: 0,
            last_ns: 0,
            sum_ns: 0,
            overruns: 0,
            missed_periods: 0,
            hist: Histogram::new(),
            linear: linear.map(LinearHistogram::new),
        }
    }

    /// Empties the statistics for reuse, keeping every buffer (no allocation).
    pub fn reset(&mut self) {
        self.count = 0;
        self.min_ns = u64::MAX;
        self.max_ns = 0;
        self.max_at_ns = 0;
        self.last_ns = 0;
        self.sum_ns = 0;
        self.overruns = 0;
        self.missed_periods = 0;
        self.hist.reset();
        if let Some(l) = self.linear.as_mut() {
            l.buckets.iter_mut().for_each(|b| *b = 0);
            l.overflows = 0;
            l.overflow_cycles.clear();
        }
    }

    /// Records one latency sample in **ns**. No allocation, no lock.
    #[inline(always)]
    pub fn record(&mut self, latency_ns: u64) {
        if let Some(l) = self.linear.as_mut() {
            l.record(latency_ns, self.count);
        }
        self.count += 1;
        self.last_ns = latency_ns;
        self.sum_ns += latency_ns as u128;
        self.min_ns = self.min_ns.min(latency_ns);
        self.max_ns = self.max_ns.max(latency_ns);
        self.hist.record(latency_ns);
    }

    /// Records one latency sample in **ns** that woke at `now_ns` (the thread's clock),
    /// noting it as the time of the maximum when it is the largest (ties too: the
    /// latest). No allocation, no lock.
    #[inline(always)]
    pub fn record_at(&mut self, latency_ns: u64, now_ns: i64) {
        if latency_ns >= self.max_ns {
            self.max_at_ns = now_ns;
        }
        self.record(latency_ns);
    }

    /// Counts an overrun that skipped `periods` deadlines.
    #[inline(always)]
    pub fn record_overrun(&mut self, periods: u64) {
        self.overruns += 1;
        self.missed_periods += periods;
    }

    /// Smallest sample, 0 when empty.
    pub fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min_ns
        }
    }

    /// Mean in **ns** (0.0 when empty, never NaN).
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }

    /// The value at quantile `q` (0.0..=1.0) in **ns**: never below the true sample,
    /// at most 0.78 % above it (`measure/histogram.rs`), never above the exact
    /// maximum; 0 when empty. The top quantile reports the exact maximum.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        if q >= 1.0 {
            return self.max_ns;
        }
        let v = self.hist.value_at_quantile(q);
        if v >= super::histogram::RANGE_NS {
            // Above the histogram's range: the samples there are counted, not placed.
            self.max_ns
        } else {
            v.min(self.max_ns)
        }
    }

    /// Adds another thread's statistics (for an all-threads summary).
    pub fn merge(&mut self, other: &LatencyStats) {
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        if other.max_ns > self.max_ns {
            self.max_at_ns = other.max_at_ns;
        }
        self.max_ns = self.max_ns.max(other.max_ns);
        self.overruns += other.overruns;
        self.missed_periods += other.missed_periods;
        self.hist.add(&other.hist);
    }
}

/// Counters a measuring thread publishes for the main thread (relaxed atomics: each
/// value is individually current; a reader may see them from different samples).
///
/// Aligned to 128 bytes (two cache lines, for the adjacent-line prefetcher) so that
/// the counters of threads on different CPUs, written every cycle, never share a
/// cache line.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct LiveStats {
    /// Kernel thread id of the measuring thread (0 until it starts).
    pub tid: AtomicI32,
    /// Samples recorded.
    pub count: AtomicU64,
    /// Smallest sample in **ns** (`u64::MAX` until the first sample).
    pub min_ns: AtomicU64,
    /// Largest sample in **ns**.
    pub max_ns: AtomicU64,
    /// Most recent sample in **ns**.
    pub last_ns: AtomicU64,
    /// Sum of samples in **ns** (wraps after ~584 years of 1 s latencies).
    pub sum_ns: AtomicU64,
    /// Overruns counted so far.
    pub overruns: AtomicU64,
    /// A pair's receiver: thread id (or process id with `--fork`); 0 for cyclic.
    pub peer_tid: AtomicI64,
    /// A pair's receive timeouts (`-T`) so far; 0 for cyclic.
    pub timeouts: AtomicU64,
}

/// A consistent-enough copy of [`LiveStats`] for printing.
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveSnapshot {
    /// Thread id.
    pub tid: i32,
    /// Samples.
    pub count: u64,
    /// Min in **ns** (0 when no samples).
    pub min_ns: u64,
    /// Max in **ns**.
    pub max_ns: u64,
    /// Last in **ns**.
    pub last_ns: u64,
    /// Sum in **ns**.
    pub sum_ns: u64,
    /// Overruns.
    pub overruns: u64,
    /// A pair's receiver thread (or process) id.
    pub peer_tid: i64,
    /// A pair's receive timeouts.
    pub timeouts: u64,
}

impl LiveStats {
    /// Publishes the thread's current figures (called after every sample).
    #[inline(always)]
    pub fn publish(&self, s: &LatencyStats) {
        self.count.store(s.count, Relaxed);
        self.min_ns.store(s.min_ns, Relaxed);
        self.max_ns.store(s.max_ns, Relaxed);
        self.last_ns.store(s.last_ns, Relaxed);
        self.sum_ns.store(s.sum_ns as u64, Relaxed);
        self.overruns.store(s.overruns, Relaxed);
    }

    /// Reads the published figures.
    pub fn snapshot(&self) -> LiveSnapshot {
        let count = self.count.load(Relaxed);
        LiveSnapshot {
            tid: self.tid.load(Relaxed),
            count,
            min_ns: if count == 0 {
                0
            } else {
                self.min_ns.load(Relaxed)
            },
            max_ns: self.max_ns.load(Relaxed),
            last_ns: self.last_ns.load(Relaxed),
            sum_ns: self.sum_ns.load(Relaxed),
            overruns: self.overruns.load(Relaxed),
            peer_tid: self.peer_tid.load(Relaxed),
            timeouts: self.timeouts.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_percentiles_and_linear_buckets() {
        let mut s = LatencyStats::new(Some(HistogramSetting {
            buckets: 10,
            bucket_ns: 1000,
        }));
        for v in [1500u64, 2500, 2600, 9999, 10_000, 250_000] {
            s.record(v);
        }
        assert_eq!(s.count, 6);
        assert_eq!(s.min(), 1500);
        assert_eq!(s.max_ns, 250_000);
        assert_eq!(s.last_ns, 250_000);
        let l = s.linear.as_ref().unwrap();
        assert_eq!(l.buckets[1], 1);
        assert_eq!(l.buckets[2], 2);
        assert_eq!(l.buckets[9], 1);
        assert_eq!(l.overflows, 2);
        assert_eq!(l.overflow_cycles, vec![4, 5]);
        assert_eq!(s.quantile_ns(1.0), 250_000);
        let p50 = s.quantile_ns(0.5);
        assert!((2600..=2600 + 2600 / 128).contains(&p50), "p50 {p50}");
        assert!((s.mean_ns() - 46_099.833).abs() < 0.01);
    }

    #[test]
    fn overflow_log_is_bounded_and_recording_does_not_grow_it() {
        let mut s = LatencyStats::new(Some(HistogramSetting {
            buckets: 3,
            bucket_ns: 1000,
        }));
        let cap = s.linear.as_ref().unwrap().overflow_cycles.capacity();
        for _ in 0..100 {
            s.record(1_000_000);
        }
        let l = s.linear.as_ref().unwrap();
        assert_eq!(l.overflows, 100);
        assert_eq!(l.overflow_cycles.len(), 3);
        assert_eq!(l.overflow_cycles.capacity(), cap);
    }

    #[test]
    fn reset_keeps_buffers() {
        let mut s = LatencyStats::new(None);
        for v in [1_000u64, 20_000, 3_000_000] {
            s.record(v);
        }
        s.record_overrun(2);
        // Within 1/128 above the true value.
        let p50 = s.quantile_ns(0.5);
        assert!((20_000..=20_000 + 20_000 / 128).contains(&p50), "{p50}");
        s.reset();
        assert_eq!((s.count, s.max_ns, s.overruns, s.min()), (0, 0, 0, 0));
        assert!(s.hist.is_empty());
        s.record(5_000);
        assert_eq!((s.count, s.min(), s.max_ns), (1, 5_000, 5_000));
    }

    #[test]
    fn empty_stats_are_zero_not_nan() {
        let s = LatencyStats::new(None);
        assert_eq!(s.min(), 0);
        assert_eq!(s.mean_ns(), 0.0);
        assert_eq!(s.quantile_ns(0.99), 0);
    }

    #[test]
    fn huge_samples_keep_exact_max() {
        let mut s = LatencyStats::new(None);
        let huge = super::super::histogram::RANGE_NS * 20;
        s.record(huge);
        s.record(1_000);
        assert_eq!(s.max_ns, huge);
        assert_eq!(s.quantile_ns(1.0), huge);
        // Above the histogram's range: counted, and reported as the exact maximum.
        assert_eq!(s.quantile_ns(0.99), huge);
        assert_eq!(s.hist.above(), 1);
    }
}

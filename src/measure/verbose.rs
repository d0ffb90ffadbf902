//! `-v`/`--verbose` of the cyclic test, as cyclictest does it (rt-tests
//! src/cyclictest/cyclictest.c: `stat->values[cycles & bufmsk] = diff` in the
//! measuring thread, `print_stat` drains them on the main thread): every sample
//! goes into a ring of its thread, preallocated by the main thread, and the main thread
//! reads them out and prints them. The measuring thread's part is two relaxed stores
//! and a release store: no allocation, no lock, no formatting, no syscall.
//!
//! The ring holds at least cyclictest's `VALBUF_SIZE` (16384) samples, more when the
//! interval is short: room for [`HELD_FOR`] of samples, so that the main thread, which
//! looks at least every 50 ms, keeps up. A sample overwritten before the main thread
//! read it is counted ([`Reader::lost`]) — cyclictest loses such samples silently.

use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// cyclictest's `VALBUF_SIZE`: the smallest ring.
pub const MIN_SAMPLES: usize = 16384;

/// How long a ring holds samples at the thread's interval (its size is the next power
/// of two of that many samples, at least [`MIN_SAMPLES`]).
pub const HELD_FOR: Duration = Duration::from_millis(500);

/// The largest ring (2^22 samples, 32 MiB): an interval of about 0.1 µs or less.
const MAX_SAMPLES: usize = 1 << 22;

/// One thread's ring of samples (**ns**), written by the measuring thread alone.
#[derive(Debug)]
pub struct SampleRing {
    values: Box<[AtomicU64]>,
    mask: u64,
    /// Samples written so far (the next one's sequence number).
    written: AtomicU64,
}

impl SampleRing {
    /// A ring for a thread waking every `interval_us` µs (see [`HELD_FOR`]).
    pub fn for_interval(interval_us: u64) -> SampleRing {
        let want = (HELD_FOR.as_micros() as u64 / interval_us.max(1)) as usize;
        let n = want
            .clamp(MIN_SAMPLES, MAX_SAMPLES)
            .next_power_of_two()
            .min(MAX_SAMPLES);
        SampleRing {
            values: (0..n).map(|_| AtomicU64::new(0)).collect(),
            mask: n as u64 - 1,
            written: AtomicU64::new(0),
        }
    }

    /// How many samples it holds.
    pub fn capacity(&self) -> u64 {
        self.mask + 1
    }

    /// Stores the next sample (measuring thread only; hot path).
    #[inline(always)]
    pub fn push(&self, latency_ns: u64) {
        let n = self.written.load(Ordering::Relaxed);
        self.values[(n & self.mask) as usize].store(latency_ns, Ordering::Relaxed);
        self.written.store(n + 1, Ordering::Release);
    }

    /// Calls `f(cycle, latency_ns)` for every sample written since `r` last read, in
    /// order (the cycle is the sample's number from 0, as cyclictest's); samples the
    /// thread overwrote before they could be read are counted in `r.lost` instead.
    pub fn drain(&self, r: &mut Reader, mut f: impl FnMut(u64, u64)) {
        let cap = self.capacity();
        let w = self.written.load(Ordering::Acquire);
        if w - r.read > cap {
            r.lost += w - r.read - cap;
            r.read = w - cap;
        }
        while r.read < w {
            let i = r.read;
            let v = self.values[(i & self.mask) as usize].load(Ordering::Relaxed);
            // The value read must not be one the thread was writing over meanwhile:
            // slot i is reused by sample i + cap.
            fence(Ordering::Acquire);
            if self.written.load(Ordering::Relaxed) >= i + cap {
                r.lost += 1;
            } else {
                f(i, v);
            }
            r.read += 1;
        }
    }
}

/// The main thread's place in one ring.
#[derive(Debug, Default, Clone)]
pub struct Reader {
    /// The next sample to read.
    pub read: u64,
    /// Samples overwritten before they were read.
    pub lost: u64,
}

/// Every thread's ring, shared by the measuring threads (each its own) and the main
/// thread.
pub type Rings = Arc<[SampleRing]>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_in_order_and_overwritten_ones_counted() {
        let r = SampleRing::for_interval(1_000_000);
        assert_eq!(r.capacity(), MIN_SAMPLES as u64);
        let mut rd = Reader::default();
        for v in 0..10 {
            r.push(v * 3);
        }
        let mut got = Vec::new();
        r.drain(&mut rd, |c, v| got.push((c, v)));
        assert_eq!(got, (0..10).map(|c| (c, c * 3)).collect::<Vec<_>>());
        // The thread laps the reader: the oldest are lost, counted; the rest in order.
        let cap = r.capacity();
        for v in 10..10 + cap + 5 {
            r.push(v);
        }
        got.clear();
        r.drain(&mut rd, |c, v| got.push((c, v)));
        // 5 overwritten, and the oldest still held (15), whose slot the thread's next
        // sample takes: it may be being written, so it is not read as a value.
        assert_eq!(rd.lost, 6);
        assert_eq!(got.len() as u64, cap - 1);
        assert_eq!(got[0], (16, 16));
        assert!(got.windows(2).all(|w| w[1].0 == w[0].0 + 1));
        assert_eq!(SampleRing::for_interval(1).capacity(), 1 << 19);
    }
}

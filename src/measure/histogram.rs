//! The latency histogram every measuring thread records into: log-linear buckets in
//! **ns**, small enough that hundreds of threads cost less locked memory than
//! cyclictest's, and cheap enough that recording a sample is a handful of
//! instructions.
//!
//! Layout (HdrHistogram's — Gil Tene, hdrhistogram.org — with 128 sub-buckets per
//! power of two where its usual 3 significant digits take 1,024): values below 256 ns have a bucket each (exact to 1 ns); above,
//! each power of two `[2^e, 2^(e+1))` is split into 128 equal buckets, so a bucket is
//! at most 1/128 of its values wide. Samples from 2^32 ns (4.29 s) up are counted
//! apart ([`Histogram::above`]); the statistics keep the exact maximum beside.
//!
//! **Precision of a percentile**: the value reported is the upper edge of the bucket
//! holding it, so it is never below the true sample and at most 0.78 % (1/128) above
//! it — within 1 ns below 256 ns, 0.1 µs at 12.8 µs, 0.8 µs at 100 µs, 7.8 µs at
//! 1 ms. That is finer than cyclictest's 1-µs `-h` classes up to 128 µs.
//!
//! **Memory**: 3,328 counters of 32 bits, 13,312 bytes (an HdrHistogram of 1 ns..60 s
//! at 3 significant digits with 64-bit counters takes 221,184). A 32-bit counter
//! wraps after 2^32 samples in one bucket (2.5 days of a `-i 50` run in a single
//! bucket): the wrap is carried into a short list of `(bucket, wraps)` with room for
//! [`HOT_WRAP_SLOTS`] buckets reserved before the first sample, so recording never
//! allocates and a count is never lost to a wrap. Should more buckets than that wrap
//! on a measuring thread (137 × 10^9 samples at least), further samples of such a
//! bucket are counted in [`Histogram::unplaced`] instead: counted, never wrapped.

/// Binary digits below the leading one that a bucket keeps: 2^7 = 128 buckets per
/// power of two, a relative width of at most 1/128.
const SUB_BITS: u32 = 7;
/// Buckets per power of two.
const SUB: usize = 1 << SUB_BITS;
/// Values below 2^32 **ns** (4.294967296 s) are bucketed; larger ones are counted in
/// [`Histogram::above`].
pub const RANGE_NS: u64 = 1 << 32;
/// Number of buckets: 256 exact ones, then 128 for each power of two from 2^8 to
/// 2^31.
pub const BUCKETS: usize = 2 * SUB + (32 - SUB_BITS as usize - 1) * SUB;
/// Buckets whose counter may wrap on a measuring thread before it must count
/// further samples of a wrapped bucket apart (room reserved before the first sample).
pub const HOT_WRAP_SLOTS: usize = 32;
/// Relative precision of a value read back: at most this fraction above the true
/// sample (1/128).
pub const PRECISION: f64 = 1.0 / SUB as f64;

/// The bucket of `v` (< [`RANGE_NS`]). Branch-free: `v | 128` makes values below 256
/// land in the exact buckets (shift 0).
#[inline(always)]
fn index(v: u64) -> usize {
    let e = 63 - (v | SUB as u64).leading_zeros();
    let shift = e - SUB_BITS;
    ((v >> shift) + ((shift as u64) << SUB_BITS)) as usize
}

/// The values bucket `i` stands for, `(lowest, highest)` in **ns**.
fn bounds(i: usize) -> (u64, u64) {
    let shift = (i >> SUB_BITS).saturating_sub(1) as u32;
    let sub = (i - ((shift as usize) << SUB_BITS)) as u64;
    (sub << shift, ((sub + 1) << shift) - 1)
}

/// The highest value that lands in the same bucket as `v`, in **ns** (`v` itself below
/// 256 ns; [`RANGE_NS`] and above stay as they are).
pub fn highest_equivalent(v: u64) -> u64 {
    if v >= RANGE_NS {
        v
    } else {
        bounds(index(v)).1
    }
}

/// The values `(lowest, highest)` in **ns** of the bucket `v` lands in; `None` from
/// [`RANGE_NS`] up. For readers of stored `[value_ns, count]` pairs that need the
/// range a count stands for (the latency plot spreads it over its 1-µs classes).
pub fn bucket_of(v: u64) -> Option<(u64, u64)> {
    (v < RANGE_NS).then(|| bounds(index(v)))
}

/// A latency histogram in **ns** (see the module documentation for its layout,
/// precision and memory).
#[derive(Debug)]
pub struct Histogram {
    /// Low 32 bits of each bucket's count.
    counts: Box<[u32]>,
    /// `(bucket, wraps)`: 2^32 × `wraps` more samples in `bucket`. Room for
    /// [`HOT_WRAP_SLOTS`] entries is reserved at creation; only merges (never the
    /// measuring thread) grow it.
    wraps: Vec<(u16, u32)>,
    /// Samples at or above [`RANGE_NS`].
    above: u64,
    /// Samples of a wrapped bucket a measuring thread had no room to carry.
    unplaced: u64,
}

/// A copy keeps the room reserved for carried wraps, so that a measuring thread may
/// record into it without allocating.
impl Clone for Histogram {
    fn clone(&self) -> Self {
        let mut wraps = Vec::with_capacity(HOT_WRAP_SLOTS.max(self.wraps.len()));
        wraps.extend_from_slice(&self.wraps);
        Histogram {
            counts: self.counts.clone(),
            wraps,
            above: self.above,
            unplaced: self.unplaced,
        }
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

impl PartialEq for Histogram {
    fn eq(&self, other: &Self) -> bool {
        self.sparse() == other.sparse() && self.unplaced == other.unplaced
    }
}

impl Histogram {
    /// An empty histogram, every buffer allocated now (13.6 KB).
    pub fn new() -> Histogram {
        Histogram {
            counts: vec![0u32; BUCKETS].into_boxed_slice(),
            wraps: Vec::with_capacity(HOT_WRAP_SLOTS),
            above: 0,
            unplaced: 0,
        }
    }

    /// Empties it, keeping its buffers.
    pub fn reset(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.wraps.clear();
        self.above = 0;
        self.unplaced = 0;
    }

    /// Records one sample of `v` **ns**. No allocation, no lock: a handful of
    /// instructions, one more branch when a counter wraps.
    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        if v < RANGE_NS {
            let i = index(v);
            if let Some(c) = self.counts.get_mut(i) {
                let n = c.wrapping_add(1);
                *c = n;
                if n == 0 {
                    self.carry_one(i);
                }
            }
        } else {
            self.above += 1;
        }
    }

    /// A counter of bucket `i` wrapped on the hot path: carry it without allocating.
    #[cold]
    #[inline(never)]
    fn carry_one(&mut self, i: usize) {
        if let Some(w) = self.wraps.iter_mut().find(|w| w.0 as usize == i) {
            w.1 += 1;
        } else if self.wraps.len() < self.wraps.capacity() {
            self.wraps.push((i as u16, 1));
        } else {
            // No room: the bucket stays full and the sample is counted apart.
            self.counts[i] = u32::MAX;
            self.unplaced += 1;
        }
    }

    /// Adds `n` samples to bucket `i` (may allocate: merges only).
    fn add_at(&mut self, i: usize, n: u64) {
        let total = self.counts[i] as u64 + (n & 0xffff_ffff);
        self.counts[i] = total as u32;
        let wraps = (total >> 32) + (n >> 32);
        if wraps > 0 {
            let wraps = u32::try_from(wraps).unwrap_or(u32::MAX);
            match self.wraps.iter_mut().find(|w| w.0 as usize == i) {
                Some(w) => w.1 = w.1.saturating_add(wraps),
                None => self.wraps.push((i as u16, wraps)),
            }
        }
    }

    /// Records `n` samples of `v` **ns** (merging, reading stored histograms; may
    /// allocate).
    pub fn record_n(&mut self, v: u64, n: u64) {
        if v < RANGE_NS {
            self.add_at(index(v), n);
        } else {
            self.above = self.above.saturating_add(n);
        }
    }

    /// Adds every sample of `other`.
    pub fn add(&mut self, other: &Histogram) {
        for (i, &c) in other.counts.iter().enumerate() {
            if c != 0 {
                self.add_at(i, c as u64);
            }
        }
        for &(i, w) in &other.wraps {
            self.add_at(i as usize, (w as u64) << 32);
        }
        self.above = self.above.saturating_add(other.above);
        self.unplaced = self.unplaced.saturating_add(other.unplaced);
    }

    /// Whether bucket `i` holds a sample (its low counter, or a carried wrap).
    fn recorded(&self, i: usize) -> bool {
        self.counts[i] != 0 || self.wraps.iter().any(|w| w.0 as usize == i)
    }

    /// Samples in bucket `i`.
    fn count_at(&self, i: usize) -> u64 {
        let wraps: u64 = self
            .wraps
            .iter()
            .filter(|w| w.0 as usize == i)
            .map(|w| w.1 as u64)
            .sum();
        self.counts[i] as u64 + (wraps << 32)
    }

    /// Samples at or above [`RANGE_NS`].
    pub fn above(&self) -> u64 {
        self.above
    }

    /// Samples a measuring thread could not place (see the module documentation);
    /// 0 unless more than [`HOT_WRAP_SLOTS`] buckets wrapped.
    pub fn unplaced(&self) -> u64 {
        self.unplaced
    }

    /// Every sample counted, placed or not.
    pub fn len(&self) -> u64 {
        let low: u64 = self.counts.iter().map(|&c| c as u64).sum();
        let wraps: u64 = self.wraps.iter().map(|w| w.1 as u64).sum();
        low + (wraps << 32) + self.above + self.unplaced
    }

    /// No sample.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The recorded buckets as `[value_ns, count]`, lowest first: value is the
    /// highest the bucket stands for; samples at or above [`RANGE_NS`] come last as
    /// `[RANGE_NS, count]`.
    pub fn sparse(&self) -> Vec<[u64; 2]> {
        let mut out: Vec<[u64; 2]> = (0..BUCKETS)
            .filter(|&i| self.recorded(i))
            .map(|i| [bounds(i).1, self.count_at(i)])
            .collect();
        if self.above > 0 {
            out.push([RANGE_NS, self.above]);
        }
        out
    }

    /// Adds sparse `[value_ns, count]` pairs (as [`Histogram::sparse`] or an older
    /// HdrHistogram-based rtbench wrote them).
    pub fn add_sparse(&mut self, pairs: &[[u64; 2]]) {
        for &[v, n] in pairs {
            self.record_n(v, n);
        }
    }

    /// The value at quantile `q` (0.0..=1.0) in **ns**: the upper edge of the bucket
    /// where the `ceil(q × n)`-th smallest placed sample lies (at least the first);
    /// [`RANGE_NS`] when that sample is at or above the range, 0 when empty. The caller
    /// caps it with the exact maximum it keeps.
    pub fn value_at_quantile(&self, q: f64) -> u64 {
        let total = self.len() - self.unplaced;
        if total == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0u64;
        for i in 0..BUCKETS {
            seen += self.count_at(i);
            if seen >= rank {
                return bounds(i).1;
            }
        }
        RANGE_NS
    }

    /// The highest bucket's upper edge in **ns** ([`RANGE_NS`] when samples lie above
    /// the range), 0 when empty.
    pub fn max(&self) -> u64 {
        if self.above > 0 {
            return RANGE_NS;
        }
        (0..BUCKETS)
            .rev()
            .find(|&i| self.recorded(i))
            .map_or(0, |i| bounds(i).1)
    }

    /// The mean in **ns**, each sample taken at its bucket's middle (samples above the
    /// range at [`RANGE_NS`]); 0.0 when empty.
    pub fn mean(&self) -> f64 {
        let n = self.len() - self.unplaced;
        if n == 0 {
            return 0.0;
        }
        let mut sum = self.above as f64 * RANGE_NS as f64;
        for i in (0..BUCKETS).filter(|&i| self.recorded(i)) {
            let (lo, hi) = bounds(i);
            sum += self.count_at(i) as f64 * (lo + hi) as f64 / 2.0;
        }
        sum / n as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_range_and_stay_within_the_precision() {
        assert_eq!(BUCKETS, 3328);
        let mut next = 0u64;
        for i in 0..BUCKETS {
            let (lo, hi) = bounds(i);
            assert_eq!(
                lo,
                next,
                "bucket {i} starts where {} ended",
                i.wrapping_sub(1)
            );
            assert!(hi >= lo);
            assert_eq!(index(lo), i);
            assert_eq!(index(hi), i);
            // Width at most 1/128 of the lowest value above the exact buckets.
            if lo >= 256 {
                assert!((hi - lo + 1) as f64 <= lo as f64 * PRECISION, "bucket {i}");
            } else {
                assert_eq!(lo, hi);
            }
            next = hi + 1;
        }
        assert_eq!(next, RANGE_NS);
        for v in [
            0,
            1,
            255,
            256,
            257,
            12_800,
            100_000,
            1_000_000,
            RANGE_NS - 1,
        ] {
            let h = highest_equivalent(v);
            assert!(
                h >= v && (h - v) as f64 <= v as f64 * PRECISION,
                "{v} -> {h}"
            );
        }
    }

    #[test]
    fn quantiles_are_bucket_upper_edges_and_above_range_is_counted() {
        let mut h = Histogram::new();
        assert_eq!((h.len(), h.value_at_quantile(0.5), h.max()), (0, 0, 0));
        for v in 1..=100u64 {
            h.record(v * 1000);
        }
        h.record(RANGE_NS + 5);
        assert_eq!(h.len(), 101);
        assert_eq!(h.above(), 1);
        let p50 = h.value_at_quantile(0.5);
        assert!((51_000..=51_000 + 51_000 / 128).contains(&p50), "{p50}");
        assert_eq!(h.value_at_quantile(1.0), RANGE_NS);
        assert_eq!(h.value_at_quantile(0.0), highest_equivalent(1000));
        assert_eq!(h.max(), RANGE_NS);
        let s = h.sparse();
        assert_eq!(s.last(), Some(&[RANGE_NS, 1]));
        let mut back = Histogram::new();
        back.add_sparse(&s);
        assert_eq!(back, h);
    }

    #[test]
    fn a_wrapped_counter_is_carried_not_lost() {
        let mut h = Histogram::new();
        let i = index(5_000);
        h.counts[i] = u32::MAX;
        h.record(5_000);
        h.record(5_000);
        assert_eq!(h.count_at(i), (1u64 << 32) + 1);
        assert_eq!(h.len(), (1u64 << 32) + 1);
        assert!(h.clone().wraps.capacity() >= HOT_WRAP_SLOTS);
        assert_eq!(bucket_of(5_000), Some(bounds(i)));
        assert_eq!(bucket_of(RANGE_NS), None);
        assert_eq!(h.value_at_quantile(0.99), highest_equivalent(5_000));
        // Merged twice: the carries add up.
        let mut m = Histogram::new();
        m.add(&h);
        m.add(&h);
        assert_eq!(m.count_at(i), (2u64 << 32) + 2);
        assert_eq!(
            m.sparse(),
            vec![[highest_equivalent(5_000), (2u64 << 32) + 2]]
        );
    }

    #[test]
    fn with_no_room_left_samples_are_counted_apart() {
        let mut h = Histogram::new();
        let cap = h.wraps.capacity();
        for k in 0..cap + 1 {
            let v = 1_000 + k as u64 * 1_000;
            h.counts[index(v)] = u32::MAX;
            h.record(v);
        }
        assert_eq!(
            h.wraps.capacity(),
            cap,
            "the hot path never grows the carries"
        );
        assert_eq!(h.unplaced(), 1);
        assert_eq!(h.len(), cap as u64 * (1u64 << 32) + u32::MAX as u64 + 1);
    }

    #[test]
    fn mean_and_reset() {
        let mut h = Histogram::new();
        for v in [100u64, 200, 250] {
            h.record(v);
        }
        assert_eq!(h.mean(), 550.0 / 3.0);
        h.record(1_000);
        let (lo, hi) = bounds(index(1_000));
        assert_eq!(h.mean(), (550.0 + (lo + hi) as f64 / 2.0) / 4.0);
        h.reset();
        assert!(h.is_empty());
        assert_eq!(h.mean(), 0.0);
    }
}

//! What the monitor keeps per CPU beyond one window, bounded whatever the uptime: the
//! all-time maximum (with when it happened) and counters, and the **rolling
//! histogram** — the latency distribution of the last `rolling` period (default 24 h)
//! in [`SLOTS`] steps: one dense histogram for the current slot, and the finished slots
//! as sparse `[value_ns, count]` lists in a ring of at most [`SLOTS`]. A finished slot
//! has at most as many entries as the histogram has buckets, so memory has a fixed
//! upper bound (`benches/monitor_memory.rs` simulates 30 days of windows).
//!
//! The whole history is saved in the state file (`state.json` in the monitor's
//! directory) when a slot finishes and when the monitor stops, and read back at start,
//! so the all-time maximum and the rolling histogram survive restarts and reboots.

use crate::measure::monitor::MONITOR_SIGFIG;
use crate::measure::stats::{LatencyStats, HDR_MAX_NS};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Steps of the rolling histogram: it covers `rolling` in this many slots of
/// `rolling / SLOTS` (at least one window) each, plus the slot being filled.
pub const SLOTS: usize = 24;

/// A histogram of the monitor's precision ([`MONITOR_SIGFIG`] digits, 1 ns .. 60 s).
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HDR_MAX_NS, MONITOR_SIGFIG)
        .expect("constant HdrHistogram bounds are valid")
}

/// The recorded buckets of `h` as `[value_ns, count]` (value: the highest value the
/// bucket stands for).
pub fn sparse(h: &Histogram<u64>) -> Vec<[u64; 2]> {
    h.iter_recorded()
        .map(|v| {
            [
                h.highest_equivalent(v.value_iterated_to()),
                v.count_at_value(),
            ]
        })
        .collect()
}

/// Adds sparse `[value_ns, count]` buckets to `h`.
pub fn add_sparse(h: &mut Histogram<u64>, buckets: &[[u64; 2]]) {
    for &[v, n] in buckets {
        let _ = h.record_n(v.clamp(1, HDR_MAX_NS), n);
    }
}

/// One finished slot of the rolling histogram.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    /// Start, seconds since the epoch (UTC).
    pub start_s: i64,
    /// End, seconds since the epoch (UTC).
    pub end_s: i64,
    /// The samples as `[value_ns, count]`.
    pub buckets: Vec<[u64; 2]>,
}

/// One CPU's history as saved in the state file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuState {
    /// The CPU.
    pub cpu: usize,
    /// Largest latency ever seen on it by the monitor, **ns**.
    pub alltime_max_ns: u64,
    /// When (end of that window), seconds since the epoch; 0 if never.
    pub alltime_max_at_s: i64,
    /// Samples ever taken.
    pub alltime_samples: u64,
    /// Overruns ever counted.
    pub alltime_overruns: u64,
    /// Windows that exceeded a `[monitor.limits]` limit, ever.
    pub windows_over_limit: u64,
    /// Windows summarised, ever.
    pub windows: u64,
    /// The slot being filled: its start and its samples so far.
    pub current_start_s: i64,
    /// Its samples as `[value_ns, count]`.
    pub current: Vec<[u64; 2]>,
    /// Finished slots, oldest first.
    pub slots: Vec<Slot>,
}

/// One CPU's history in memory.
pub struct CpuHistory {
    /// The CPU.
    pub cpu: usize,
    /// See [`CpuState::alltime_max_ns`].
    pub alltime_max_ns: u64,
    /// See [`CpuState::alltime_max_at_s`].
    pub alltime_max_at_s: i64,
    /// See [`CpuState::alltime_samples`].
    pub alltime_samples: u64,
    /// See [`CpuState::alltime_overruns`].
    pub alltime_overruns: u64,
    /// See [`CpuState::windows_over_limit`].
    pub windows_over_limit: u64,
    /// See [`CpuState::windows`].
    pub windows: u64,
    current_start_s: i64,
    current: Histogram<u64>,
    slots: VecDeque<Slot>,
    slot_s: i64,
}

impl CpuHistory {
    /// An empty history for `cpu` whose slots are `slot_s` seconds long, starting at
    /// `now_s`.
    pub fn new(cpu: usize, slot_s: i64, now_s: i64) -> CpuHistory {
        CpuHistory {
            cpu,
            alltime_max_ns: 0,
            alltime_max_at_s: 0,
            alltime_samples: 0,
            alltime_overruns: 0,
            windows_over_limit: 0,
            windows: 0,
            current_start_s: now_s,
            current: histogram(),
            slots: VecDeque::with_capacity(SLOTS + 1),
            slot_s: slot_s.max(1),
        }
    }

    /// The history saved in `state`, with slots older than the rolling period
    /// (`SLOTS × slot_s` before `now_s`) dropped.
    pub fn restore(state: &CpuState, slot_s: i64, now_s: i64) -> CpuHistory {
        let mut h = CpuHistory::new(state.cpu, slot_s, state.current_start_s);
        h.alltime_max_ns = state.alltime_max_ns;
        h.alltime_max_at_s = state.alltime_max_at_s;
        h.alltime_samples = state.alltime_samples;
        h.alltime_overruns = state.alltime_overruns;
        h.windows_over_limit = state.windows_over_limit;
        h.windows = state.windows;
        add_sparse(&mut h.current, &state.current);
        h.slots.extend(state.slots.iter().cloned());
        h.prune(now_s);
        h
    }

    /// The history for the state file.
    pub fn state(&self) -> CpuState {
        CpuState {
            cpu: self.cpu,
            alltime_max_ns: self.alltime_max_ns,
            alltime_max_at_s: self.alltime_max_at_s,
            alltime_samples: self.alltime_samples,
            alltime_overruns: self.alltime_overruns,
            windows_over_limit: self.windows_over_limit,
            windows: self.windows,
            current_start_s: self.current_start_s,
            current: sparse(&self.current),
            slots: self.slots.iter().cloned().collect(),
        }
    }

    /// Adds one window's statistics that ended at `end_s`. Returns true when a slot
    /// was finished (the caller saves the state then).
    pub fn add_window(&mut self, stats: &LatencyStats, end_s: i64, over_limit: bool) -> bool {
        if stats.max_ns > self.alltime_max_ns {
            self.alltime_max_ns = stats.max_ns;
            self.alltime_max_at_s = end_s;
        }
        // The counters come back from the state file: one that claims nearly 2^64
        // samples (584,000 years at 1 MHz) is damaged, and stays at the maximum rather
        // than wrapping to a small number.
        self.alltime_samples = self.alltime_samples.saturating_add(stats.count);
        self.alltime_overruns = self.alltime_overruns.saturating_add(stats.overruns);
        self.windows = self.windows.saturating_add(1);
        self.windows_over_limit = self
            .windows_over_limit
            .saturating_add(u64::from(over_limit));
        let _ = self.current.add(&stats.hdr);
        if end_s.saturating_sub(self.current_start_s) < self.slot_s {
            return false;
        }
        self.slots.push_back(Slot {
            start_s: self.current_start_s,
            end_s,
            buckets: sparse(&self.current),
        });
        self.current.reset();
        self.current_start_s = end_s;
        self.prune(end_s);
        true
    }

    /// Drops slots that ended before the rolling period, and beyond [`SLOTS`].
    fn prune(&mut self, now_s: i64) {
        let oldest = now_s.saturating_sub(self.slot_s.saturating_mul(SLOTS as i64));
        while self
            .slots
            .front()
            .is_some_and(|s| s.end_s <= oldest || self.slots.len() > SLOTS)
        {
            self.slots.pop_front();
        }
    }

    /// The rolling histogram (every slot kept plus the current one) into `into`,
    /// which is reset first; returns the start of the oldest slot.
    pub fn rolling(&self, into: &mut Histogram<u64>) -> i64 {
        into.reset();
        let _ = into.add(&self.current);
        for s in &self.slots {
            add_sparse(into, &s.buckets);
        }
        self.slots
            .front()
            .map_or(self.current_start_s, |s| s.start_s)
    }

    /// Finished slots kept.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }
}

/// The state file: every monitored CPU's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// rtbench version that wrote it.
    pub rtbench_version: String,
    /// When it was written, seconds since the epoch.
    pub saved_s: i64,
    /// The sequence number of the last window summarised (see the window store).
    pub last_window: u64,
    /// Per CPU.
    pub cpus: Vec<CpuState>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(values: &[u64]) -> LatencyStats {
        let mut s = LatencyStats::with_sigfig(MONITOR_SIGFIG);
        for &v in values {
            s.record(v);
        }
        s
    }

    #[test]
    fn rolling_covers_the_last_slots_and_alltime_survives_a_restart() {
        // Slots of 60 s: 24 of them cover 24 minutes.
        let mut h = CpuHistory::new(3, 60, 0);
        let mut scratch = histogram();
        // Minute 0: one big spike; then 30 minutes of 10 µs.
        assert!(h.add_window(&window(&[500_000, 10_000]), 60, false));
        for m in 2..=31 {
            h.add_window(&window(&[10_000, 10_000]), m * 60, m == 5);
        }
        assert_eq!(h.slots(), SLOTS);
        h.rolling(&mut scratch);
        // The spike is older than the rolling period: gone from the histogram ...
        assert!(scratch.max() < 11_000, "{}", scratch.max());
        assert_eq!(scratch.len(), 2 * SLOTS as u64);
        // ... but not from the all-time figures.
        assert_eq!((h.alltime_max_ns, h.alltime_max_at_s), (500_000, 60));
        assert_eq!(
            (h.alltime_samples, h.windows, h.windows_over_limit),
            (62, 31, 1)
        );
        // Saved and restored (JSON, as in the state file) a day later: the slots are
        // too old, the all-time figures stay.
        let text = serde_json::to_string(&h.state()).unwrap();
        let back: CpuState = serde_json::from_str(&text).unwrap();
        assert_eq!(back, h.state());
        let r = CpuHistory::restore(&back, 60, 86_400);
        assert_eq!(r.slots(), 0);
        assert_eq!(r.alltime_max_ns, 500_000);
        // Restored a minute later: everything is kept.
        let r = CpuHistory::restore(&back, 60, 31 * 60 + 1);
        assert_eq!(r.slots(), SLOTS);
        r.rolling(&mut scratch);
        assert_eq!(scratch.len(), 2 * SLOTS as u64);
    }
}

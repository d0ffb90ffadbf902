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

use crate::measure::histogram::Histogram;
use crate::measure::stats::LatencyStats;
use crate::results::window::{AllTime, WindowCpu};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Steps of the rolling histogram: it covers `rolling` in this many slots of
/// `rolling / SLOTS` (at least one window) each, plus the slot being filled.
pub const SLOTS: usize = 24;

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
    /// The all-time figures (saved flat: `alltime_max_ns`, `alltime_max_at_s`,
    /// `alltime_samples`, `alltime_overruns`, `alltime_missed_periods`,
    /// `windows_over_limit`, `windows`).
    #[serde(flatten)]
    pub alltime: AllTime,
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
    /// The all-time figures.
    pub alltime: AllTime,
    current_start_s: i64,
    current: Histogram,
    slots: VecDeque<Slot>,
    slot_s: i64,
}

impl CpuHistory {
    /// An empty history for `cpu` whose slots are `slot_s` seconds long, starting at
    /// `now_s`.
    pub fn new(cpu: usize, slot_s: i64, now_s: i64) -> CpuHistory {
        CpuHistory {
            cpu,
            alltime: AllTime::default(),
            current_start_s: now_s,
            current: Histogram::new(),
            slots: VecDeque::with_capacity(SLOTS + 1),
            slot_s: slot_s.max(1),
        }
    }

    /// The history saved in `state`, with slots older than the rolling period
    /// (`SLOTS × slot_s` before `now_s`) dropped.
    pub fn restore(state: &CpuState, slot_s: i64, now_s: i64) -> CpuHistory {
        let mut h = CpuHistory::new(state.cpu, slot_s, state.current_start_s);
        h.alltime = state.alltime;
        h.current.add_sparse(&state.current);
        h.slots.extend(state.slots.iter().cloned());
        h.prune(now_s);
        h
    }

    /// The history for the state file.
    pub fn state(&self) -> CpuState {
        CpuState {
            cpu: self.cpu,
            alltime: self.alltime,
            current_start_s: self.current_start_s,
            current: self.current.sparse(),
            slots: self.slots.iter().cloned().collect(),
        }
    }

    /// Adds one window that ended at `end_s`: its statistics `stats` and their
    /// figures `c` (with the limits it exceeded). Returns true when a slot was
    /// finished (the caller saves the state then).
    pub fn add_window(&mut self, stats: &LatencyStats, c: &WindowCpu, end_s: i64) -> bool {
        self.alltime.add_window(c, end_s);
        self.current.add(&stats.hist);
        if end_s.saturating_sub(self.current_start_s) < self.slot_s {
            return false;
        }
        self.slots.push_back(Slot {
            start_s: self.current_start_s,
            end_s,
            buckets: self.current.sparse(),
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
    pub fn rolling(&self, into: &mut Histogram) -> i64 {
        into.reset();
        into.add(&self.current);
        for s in &self.slots {
            into.add_sparse(&s.buckets);
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

impl State {
    /// The all-time figures saved for `cpu`, if any.
    pub fn alltime(&self, cpu: usize) -> Option<AllTime> {
        self.cpus.iter().find(|c| c.cpu == cpu).map(|c| c.alltime)
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
        let mut s = LatencyStats::new(None);
        for &v in values {
            s.record(v);
        }
        s
    }

    fn add(h: &mut CpuHistory, values: &[u64], end_s: i64, over: bool) -> bool {
        let s = window(values);
        let mut c = WindowCpu::from_stats(h.cpu, &s, 0);
        if over {
            c.exceeded.push("max".into());
        }
        h.add_window(&s, &c, end_s)
    }

    #[test]
    fn rolling_covers_the_last_slots_and_alltime_survives_a_restart() {
        // Slots of 60 s: 24 of them cover 24 minutes.
        let mut h = CpuHistory::new(3, 60, 0);
        let mut scratch = Histogram::new();
        // Minute 0: one big spike; then 30 minutes of 10 µs.
        assert!(add(&mut h, &[500_000, 10_000], 60, false));
        for m in 2..=31 {
            add(&mut h, &[10_000, 10_000], m * 60, m == 5);
        }
        assert_eq!(h.slots(), SLOTS);
        h.rolling(&mut scratch);
        // The spike is older than the rolling period: gone from the histogram ...
        assert!(scratch.max() < 11_000, "{}", scratch.max());
        assert_eq!(scratch.len(), 2 * SLOTS as u64);
        // ... but not from the all-time figures.
        let a = h.alltime;
        assert_eq!((a.max_ns, a.max_at_s), (500_000, 60));
        assert_eq!((a.samples, a.windows, a.windows_over_limit), (62, 31, 1));
        // Saved and restored (JSON, as in the state file) a day later: the slots are
        // too old, the all-time figures stay. The figures are saved flat, under the
        // names state files have always had.
        let text = serde_json::to_string(&h.state()).unwrap();
        assert!(
            text.starts_with(
                "{\"cpu\":3,\"alltime_max_ns\":500000,\"alltime_max_at_s\":60,\
                 \"alltime_samples\":62,\"alltime_overruns\":0,\"alltime_missed_periods\":0,\
                 \"windows_over_limit\":1,\
                 \"windows\":31,\"current_start_s\":"
            ),
            "{text}"
        );
        let back: CpuState = serde_json::from_str(&text).unwrap();
        assert_eq!(back, h.state());
        let r = CpuHistory::restore(&back, 60, 86_400);
        assert_eq!(r.slots(), 0);
        assert_eq!(r.alltime.max_ns, 500_000);
        // Restored a minute later: everything is kept.
        let r = CpuHistory::restore(&back, 60, 31 * 60 + 1);
        assert_eq!(r.slots(), SLOTS);
        r.rolling(&mut scratch);
        assert_eq!(scratch.len(), 2 * SLOTS as u64);
    }
}

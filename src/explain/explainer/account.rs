//! The explainer's cause ledger ([`crate::explain::ledger`]): what it counts at each
//! look and the rate limit of the analyses (at most [`ExplainSpec::analyses_per_s`] a
//! second per CPU).
//!
//! A sample over the rate limit is counted as not analysed and its slot is *held*: the
//! thread's trap stays busy, so its later samples over the threshold are only counted
//! by the trap ([`crate::explain::recorder::Trap::trip`]: no freeze, no write) until the
//! CPU has room again. A sample larger than every analysed one of its thread passes
//! the limit: the maximum is explained.

use super::Explainer;
use crate::explain::ledger::{task_start, Owner, Reason, Tally};
use crate::explain::recorder::Caught;
use crate::explain::Explanation;
use crate::sys::clock::Clock;
use std::time::Instant;

impl Explainer {
    /// Who slot `i`'s samples belong to.
    fn owner(&self, i: usize, cpu: Option<usize>) -> Owner<'_> {
        let t = &self.threads[i];
        Owner {
            test: &t.test,
            thread: t.thread,
            cpu: cpu.or(t.cpu),
            threshold_ns: self.base.get(i).copied().unwrap_or(u64::MAX),
        }
    }

    /// Adds what each trap counted while busy since the last look: under "rate limit"
    /// for a held slot, else "recorder busy".
    pub(super) fn count_missed(&mut self) {
        if !self.ledger_on {
            return;
        }
        let now = Clock::Realtime.now_ns();
        for i in 0..self.threads.len() {
            let m = self.recorder.trap().missed_since(i);
            let (count, sum) = self.missed_seen[i];
            if m.count <= count {
                continue;
            }
            self.missed_seen[i] = (m.count, m.sum_ns);
            let reason = if self.held[i] {
                Reason::RateLimit
            } else {
                Reason::Busy
            };
            let o = o_owned(&self.owner(i, None));
            let tally = Tally::of(
                m.count - count,
                m.sum_ns.saturating_sub(sum),
                m.worst_ns,
                o.threshold_ns,
                now,
                now,
            );
            self.summary
                .ledger
                .add_not_analysed(o.as_owner(), reason, None, &tally);
        }
    }

    /// Frees the held slots whose CPU has room again (their counts are in the ledger:
    /// [`Explainer::count_missed`] runs first).
    pub(super) fn release_held(&mut self) {
        let now = Instant::now();
        for i in 0..self.held.len() {
            if self.held[i] && self.pace.room(self.held_on[i], now) {
                self.held[i] = false;
                let c = Caught {
                    thread: i,
                    timer_ns: 0,
                    wake_ns: 0,
                    cpu: self.held_on[i],
                };
                self.recorder.trap().release(&[c]);
            }
        }
    }

    /// The samples of `caught` to analyse now; the others (over their CPU's rate
    /// limit) are counted and their slots held.
    pub(super) fn admit(&mut self, caught: Vec<Caught>) -> Vec<Caught> {
        if !self.ledger_on {
            return caught;
        }
        let now = Instant::now();
        let mut keep = Vec::with_capacity(caught.len());
        for c in caught {
            let latency = (c.wake_ns - c.timer_ns).max(0) as u64;
            let new_max = latency > self.largest_of[c.thread];
            if self.pace.room(c.cpu, now) || new_max {
                self.pace.begin(c.cpu, now);
                self.largest_of[c.thread] = self.largest_of[c.thread].max(latency);
                keep.push(c);
                continue;
            }
            self.held[c.thread] = true;
            self.rate_limited[c.thread] += 1;
            self.held_on[c.thread] = c.cpu;
            let wall = self.spike(&c).wall_ns;
            let o = o_owned(&self.owner(c.thread, Some(c.cpu)));
            let tally = Tally::of(1, latency, latency, o.threshold_ns, wall, wall);
            self.summary
                .ledger
                .add_not_analysed(o.as_owner(), Reason::RateLimit, None, &tally);
        }
        keep
    }

    /// Counts explanation `e` of slot `slot` in the ledger.
    pub(super) fn account(&mut self, slot: usize, e: &Explanation) {
        if !self.ledger_on {
            return;
        }
        let o = o_owned(&self.owner(slot, Some(e.spike.cpu)));
        self.summary.ledger.add(o.as_owner(), e, task_start);
    }
}

/// An [`Owner`] that does not borrow the explainer (the ledger is changed beside it).
struct OwnedOwner {
    test: String,
    thread: usize,
    cpu: Option<usize>,
    threshold_ns: u64,
}

impl OwnedOwner {
    fn as_owner(&self) -> Owner<'_> {
        Owner {
            test: &self.test,
            thread: self.thread,
            cpu: self.cpu,
            threshold_ns: self.threshold_ns,
        }
    }
}

fn o_owned(o: &Owner<'_>) -> OwnedOwner {
    OwnedOwner {
        test: o.test.to_string(),
        thread: o.thread,
        cpu: o.cpu,
        threshold_ns: o.threshold_ns,
    }
}

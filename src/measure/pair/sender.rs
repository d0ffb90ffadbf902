//! The initiating end of a pair (pmqtest's sender): stamps, sends, waits for the
//! reply and records every latency; the hot loop allocates nothing.

use super::responder::{current_cpu, sleep_rel_ns};
use super::{
    LivePair, PairKind, PairResult, PairThreads, READY, STAGE_AFFINITY, STAGE_MLOCK, STOP,
};
use crate::error::{Error, Result};
use crate::measure::cyclic::{BreakInfo, BreakTrace};
use crate::measure::runner::Shared;
use crate::measure::stats::LatencyStats;
use crate::measure::transport::{Msg, Rx, Tx};
use crate::sys::clock::Clock;
use crate::sys::sched;
use std::io;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{mpsc, Arc};

pub(super) struct InitCtx {
    pub(super) spec: PairThreads,
    pub(super) kind: PairKind,
    pub(super) duration_ns: Option<i64>,
    pub(super) force_ns: i64,
    pub(super) loops: Option<u64>,
    pub(super) histogram: Option<(usize, u64)>,
    pub(super) shared: Arc<Shared>,
    pub(super) live: Arc<LivePair>,
    pub(super) breaks: Option<Arc<BreakTrace>>,
}

fn setup_error(stage: i64, errno: i64, p: &PairThreads, fork: bool) -> Error {
    let who = if fork {
        "the pipe responder process"
    } else {
        "the receiver thread"
    };
    let what = match stage {
        STAGE_AFFINITY => format!(
            "sched_setaffinity(CPU {}) in {who} of pair {}",
            p.cpu.unwrap_or(0),
            p.index
        ),
        STAGE_MLOCK => format!(
            "mlockall(MCL_CURRENT|MCL_FUTURE) in {who} of pair {}",
            p.index
        ),
        _ => format!(
            "sched_setscheduler(SCHED_{}, {}) in {who} of pair {}",
            p.policy.name().to_uppercase(),
            p.priority,
            p.index
        ),
    };
    Error::refused(what, io::Error::from_raw_os_error(errno as i32))
}

impl InitCtx {
    pub(super) fn run<T: Tx, R: Rx>(
        self,
        tx: &T,
        rx: &R,
        setup_tx: mpsc::Sender<Option<Error>>,
    ) -> Result<PairResult> {
        let tid = sched::gettid();
        self.live.stats.tid.store(tid, Relaxed);
        self.shared.register_sleeper();
        let mut setup = (|| {
            if let Some(cpu) = self.spec.cpu {
                sched::set_affinity(&[cpu].into_iter().collect())?;
            }
            sched::set_scheduler(self.spec.policy, self.spec.priority)?;
            sched::prefault_stack(crate::measure::cyclic::PREFAULT_STACK_BYTES);
            Ok(())
        })();
        let mut ready: Msg = [0; 4];
        let got = rx.recv(&mut ready, Some(10_000_000_000));
        let fork = self.live.receiver_tid.load(Relaxed) != 0;
        match got {
            Ok(true) if ready[0] == READY => {
                self.live.receiver_tid.store(ready[3], Relaxed);
                if ready[1] != 0 && setup.is_ok() {
                    setup = Err(setup_error(ready[1], ready[2], &self.spec, fork));
                }
            }
            Ok(_) if setup.is_ok() => {
                setup = Err(Error::refused(
                    format!("starting the receiver of pair {}", self.spec.index),
                    io::Error::other("no ready message within 10 s"),
                ))
            }
            Err(e) if setup.is_ok() => {
                setup = Err(Error::refused(
                    format!("starting the receiver of pair {}", self.spec.index),
                    e,
                ))
            }
            _ => {}
        }
        let _ = setup_tx.send(setup.err());
        drop(setup_tx);
        self.shared.barrier.wait();
        let mut r = PairResult {
            spec: self.spec.clone(),
            sender_tid: tid,
            receiver_tid: self.live.receiver_tid.load(Relaxed) as i32,
            sender_cpu: self.spec.cpu.map_or(-1, |c| c as i64),
            receiver_cpu: self.spec.cpu.map_or(-1, |c| c as i64),
            forward: LatencyStats::new(self.histogram),
            backward: (self.kind == PairKind::Pipe).then(|| LatencyStats::new(self.histogram)),
            round_trip: (self.kind == PairKind::Pipe).then(|| LatencyStats::new(None)),
            timeouts: 0,
            total_ns: 0,
        };
        let outcome = if self.shared.stopped() {
            Ok(())
        } else {
            self.measure(tx, rx, &mut r)
        };
        // Always release the responder, even after an error.
        let _ = tx.send(&[STOP, 0, 0, 0]);
        if outcome.is_err() {
            self.shared.request_stop();
        }
        outcome.map_err(|e| {
            Error::refused(
                format!("{:?} transport of pair {}", self.kind, self.spec.index),
                e,
            )
        })?;
        Ok(r)
    }

    /// The hot loop: no allocation, no lock between the stamps and the syscalls.
    fn measure<T: Tx, R: Rx>(&self, tx: &T, rx: &R, r: &mut PairResult) -> io::Result<()> {
        let clock = Clock::Monotonic;
        let interval = self.spec.interval_us as i64 * 1000;
        let pause = if self.kind == PairKind::Pipe {
            interval
        } else {
            0
        };
        let loops = self.loops.unwrap_or(u64::MAX);
        let start = clock.now_ns();
        let stop_at = self
            .duration_ns
            .map_or(i64::MAX, |d| start.saturating_add(d));
        let unpinned = self.spec.cpu.is_none();
        let mut reply: Msg = [0; 4];
        let first = clock.now_ns();
        let mut last = first;
        let mut paused = 0;
        loop {
            if self.force_ns > 0 {
                let before = clock.now_ns();
                sleep_rel_ns(self.force_ns);
                paused += clock.now_ns() - before;
            }
            let t0 = clock.now_ns();
            tx.send(&[t0, 0, 0, 0])?;
            match rx.recv(&mut reply, None) {
                Ok(_) => {}
                // The runner's wake signal: the run is over, this reply is not a sample.
                Err(e) if e.kind() == io::ErrorKind::Interrupted && self.shared.stopped() => break,
                Err(e) => return Err(e),
            }
            let t3 = clock.now_ns();
            last = t3;
            let fwd = (reply[0] - t0).max(0) as u64;
            r.forward.record(fwd);
            if interval > 0 && fwd > interval as u64 {
                r.forward.record_overrun(fwd / interval as u64);
            }
            if let (Some(b), Some(rt)) = (r.backward.as_mut(), r.round_trip.as_mut()) {
                b.record((t3 - reply[1]).max(0) as u64);
                rt.record((t3 - t0).max(0) as u64);
            }
            r.timeouts = reply[2] as u64;
            r.receiver_cpu = reply[3];
            self.live.stats.publish(&r.forward);
            self.live.timeouts.store(r.timeouts, Relaxed);
            if let Some(b) = &self.breaks {
                if fwd > b.limit_ns {
                    b.trip(
                        BreakInfo {
                            thread: self.spec.index,
                            tid: r.receiver_tid,
                            latency_ns: fwd,
                        },
                        &self.shared,
                    );
                    break;
                }
            }
            if r.forward.count >= loops || t3 >= stop_at || self.shared.stopped() {
                break;
            }
            if pause > 0 {
                sleep_rel_ns(pause);
                if self.shared.stopped() {
                    // Woken: this pause is not between two round trips.
                    break;
                }
                paused += clock.now_ns() - t3;
            }
        }
        r.total_ns = (last - first - paused).max(0) as u64;
        if unpinned {
            r.sender_cpu = current_cpu();
        }
        Ok(())
    }
}

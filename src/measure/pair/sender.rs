//! The initiating end of a pair (pmqtest's sender): stamps, sends, waits for the
//! reply and records every latency; the hot loop allocates nothing.

use super::responder::{current_cpu, sleep_rel_ns};
use super::{PairKind, PairResult, READY, STAGE_AFFINITY, STAGE_MLOCK, STOP};
use crate::error::{Cause, Error, Result};
use crate::measure::breaktrace::BreakInfo;
use crate::measure::harness::{ThreadCtx, Worker};
use crate::measure::transport::{MqQueue, Msg, MsgBuf, PipeRead, PipeWrite, Rx, Tx};
use crate::measure::ThreadSpec;
use crate::sys::clock::Clock;
use crate::sys::{refusal, sched, SysRoot};
use std::io;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// How long a sender waits for its responder's READY message, **ns**.
const READY_TIMEOUT_NS: i64 = 10_000_000_000;

/// The sender's ends of its pair: (to the responder, from the responder).
pub(super) enum SenderEnds {
    /// Two message queues (test, sync).
    Mq(Arc<MqQueue>, Arc<MqQueue>),
    /// Forward pipe's write end, backward pipe's read end.
    Pipe(PipeWrite, PipeRead),
}

/// One pair's sender, run by the harness on its measuring thread.
pub(super) struct Sender {
    pub(super) spec: ThreadSpec,
    pub(super) kind: PairKind,
    pub(super) ends: SenderEnds,
    pub(super) duration_ns: Option<i64>,
    pub(super) force_ns: i64,
    pub(super) loops: Option<u64>,
    /// Whether the responder is a forked process (for messages).
    pub(super) forked: bool,
    /// The message buffer (the message size, **bytes**), allocated by the main thread.
    pub(super) buf: MsgBuf,
    /// Allocated by the main thread (see `cyclic.rs` for why).
    pub(super) result: Option<PairResult>,
}

fn setup_error(stage: i64, errno: i64, p: &ThreadSpec, fork: bool) -> Error {
    let who = if fork {
        "the pipe responder process"
    } else {
        "the receiver thread"
    };
    let e = io::Error::from_raw_os_error(errno as i32);
    match stage {
        STAGE_AFFINITY => Error::refused(
            format!(
                "sched_setaffinity(CPU {}) in {who} of pair {}",
                p.cpu.unwrap_or(0),
                p.index
            ),
            e,
            None,
        ),
        STAGE_MLOCK => {
            let cause = refusal::memory::mlockall(&SysRoot::host(), errno as i32);
            Error::refused(
                format!(
                    "mlockall(MCL_CURRENT|MCL_FUTURE) in {who} of pair {}",
                    p.index
                ),
                e,
                cause,
            )
        }
        _ => match sched::scheduler_refused(p.policy, p.priority, e) {
            Error::Refused {
                what,
                source,
                cause,
            } => Error::Refused {
                what: format!("{what} in {who} of pair {}", p.index),
                source,
                cause,
            },
            other => other,
        },
    }
}

impl Worker for Sender {
    type Output = PairResult;

    /// Waits for the responder's READY: its own setup result and thread id.
    fn setup(&mut self, ctx: &ThreadCtx) -> Result<()> {
        // A responder that ended closes its pipe: the next write is EPIPE, not SIGPIPE.
        crate::sys::signals::block_sigpipe_in_this_thread();
        let mut ready: Msg = [0; 4];
        let buf = &mut self.buf;
        let got = match &self.ends {
            SenderEnds::Mq(_, rx) => rx.recv(&mut ready, buf, Some(READY_TIMEOUT_NS)),
            SenderEnds::Pipe(_, rx) => rx.recv(&mut ready, buf, Some(READY_TIMEOUT_NS)),
        };
        let starting = || format!("starting the receiver of pair {}", self.spec.index);
        match got {
            Ok(true) if ready[0] == READY => {
                ctx.live.peer_tid.store(ready[3], Relaxed);
                if ready[1] != 0 {
                    return Err(setup_error(ready[1], ready[2], &self.spec, self.forked));
                }
                Ok(())
            }
            Ok(_) => Err(Error::refused(
                starting(),
                io::Error::from_raw_os_error(libc::ETIMEDOUT),
                Some(Cause::new(
                    "responder",
                    "no ready message within 10 s: the receiver did not start",
                )),
            )),
            Err(e) => Err(Error::refused(starting(), e, None)),
        }
    }

    fn run(mut self, ctx: &ThreadCtx, measure: bool) -> Result<PairResult> {
        let mut r = self
            .result
            .take()
            .expect("the result is set when the sender is made");
        r.sender_tid = ctx.live.tid.load(Relaxed);
        r.receiver_tid = ctx.live.peer_tid.load(Relaxed) as i32;
        // Moved out (no allocation: the placeholder is empty) so `self` stays shared.
        let mut buf = std::mem::take(&mut self.buf);
        let outcome = match &self.ends {
            SenderEnds::Mq(tx, rx) => self.exchange(ctx, tx, rx, &mut buf, &mut r, measure),
            SenderEnds::Pipe(tx, rx) => self.exchange(ctx, tx, rx, &mut buf, &mut r, measure),
        };
        if outcome.is_err() {
            ctx.shared.request_stop();
        }
        outcome.map_err(|e| {
            Error::refused(
                format!("{:?} transport of pair {}", self.kind, self.spec.index),
                e,
                None,
            )
        })?;
        Ok(r)
    }
}

impl Sender {
    /// Measures (unless told not to), then always releases the responder.
    fn exchange<T: Tx, R: Rx>(
        &self,
        ctx: &ThreadCtx,
        tx: &T,
        rx: &R,
        buf: &mut MsgBuf,
        r: &mut PairResult,
        measure: bool,
    ) -> io::Result<()> {
        let outcome = if measure {
            self.measure(ctx, tx, rx, buf, r)
        } else {
            Ok(())
        };
        let _ = tx.send(&[STOP, 0, 0, 0], buf);
        outcome
    }

    /// The hot loop: no allocation, no lock between the stamps and the syscalls.
    fn measure<T: Tx, R: Rx>(
        &self,
        ctx: &ThreadCtx,
        tx: &T,
        rx: &R,
        buf: &mut MsgBuf,
        r: &mut PairResult,
    ) -> io::Result<()> {
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
            tx.send(&[t0, 0, 0, 0], buf)?;
            match rx.recv(&mut reply, buf, None) {
                Ok(_) => {}
                // The runner's wake signal: the run is over, this reply is not a sample.
                Err(e) if e.kind() == io::ErrorKind::Interrupted && ctx.shared.stopped() => break,
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
            ctx.live.publish(&r.forward);
            ctx.live.timeouts.store(r.timeouts, Relaxed);
            if fwd > ctx.explain_threshold_ns() {
                // The receiver woke late: its message was sent at t0, it ran at reply[0].
                ctx.trip(
                    t0,
                    reply[0],
                    Some(self.spec.cpu.unwrap_or(reply[3].max(0) as usize)),
                );
            }
            if let Some(b) = &ctx.breaks {
                if fwd > b.limit_ns {
                    b.trip(
                        BreakInfo {
                            thread: self.spec.index,
                            tid: r.receiver_tid,
                            latency_ns: fwd,
                        },
                        &ctx.shared,
                    );
                    break;
                }
            }
            if r.forward.count >= loops || t3 >= stop_at || ctx.shared.stopped() {
                break;
            }
            if pause > 0 {
                sleep_rel_ns(pause);
                if ctx.shared.stopped() {
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

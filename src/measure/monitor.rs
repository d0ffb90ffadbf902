//! The monitor's measuring threads (`rtbench monitor`): cyclictest's timer-wakeup loop,
//! run for weeks, with the samples going into the statistics of the current **window**.
//!
//! Window hand-over without allocation or locks on the measuring path: every thread
//! owns two pre-allocated [`WindowSlot`]s. The main thread starts a new window by
//! incrementing [`Windows::current`]; at its next wakeup the thread takes its spare slot
//! back from the `empty` channel, records into it, and sends the finished slot on the
//! `full` channel. The main thread summarises the finished slot, resets it and returns
//! it on `empty` (before it starts the next window). Both channels are bounded
//! (`sync_channel`: a pre-allocated ring), only `try_send`/`try_recv` are used and
//! nobody blocks on them, so a hand-over is a few atomic operations and moves a pointer.
//! Should the spare not be back yet, the thread keeps recording into the slot it has
//! and tries again at its next wakeup; the slot then says which windows it covers.
//!
//! Source: the loop is `measure/periodic.rs`'s, as the cyclic test's; OSADL's latency monitoring (maxima of
//! 5-minute intervals, osadl.org "Continuous worst-case latency monitoring") is the
//! model for the windows.

use super::harness::{Harness, Progress, RunEnd, ThreadCtx, Worker};
use super::periodic::{Period, Wakeup};
use super::stats::LatencyStats;
use super::{RunControl, ThreadSpec};
use crate::error::Result;
use crate::sys::clock::Clock;
use crate::sys::SysRoot;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::sync::Arc;

/// One thread's statistics for one window (or, when the main thread fell behind,
/// several consecutive windows).
#[derive(Debug)]
pub struct WindowSlot {
    /// The first window number recorded here.
    pub first: u64,
    /// The last window number recorded here (`first` unless windows were merged).
    pub last: u64,
    /// The samples, in **ns**.
    pub stats: LatencyStats,
}

impl WindowSlot {
    fn new() -> Box<WindowSlot> {
        Box::new(WindowSlot {
            first: 0,
            last: 0,
            stats: LatencyStats::new(None),
        })
    }
}

/// The window counter all threads follow.
#[derive(Debug, Default)]
pub struct Windows {
    /// The window samples belong to now; the main thread increments it.
    pub current: AtomicU64,
}

/// The main thread's end of one measuring thread's hand-over.
pub struct Link {
    /// The thread this link belongs to.
    pub thread: ThreadSpec,
    full: Receiver<Box<WindowSlot>>,
    empty: SyncSender<Box<WindowSlot>>,
}

impl Link {
    /// A finished slot, if the thread has handed one over.
    pub fn take(&self) -> Option<Box<WindowSlot>> {
        self.full.try_recv().ok()
    }

    /// Returns a summarised slot to the thread, emptied.
    pub fn give_back(&self, mut slot: Box<WindowSlot>) {
        slot.stats.reset();
        // Fails only when the thread has ended; the slot is then dropped here.
        let _ = self.empty.try_send(slot);
    }
}

/// A monitor run: its threads, the clock and the run control (no `-l`, `-h`, `-b`).
#[derive(Debug, Clone)]
pub struct MonitorSpec {
    /// One measuring thread per CPU.
    pub threads: Vec<ThreadSpec>,
    /// The run control (duration `None`: until SIGTERM).
    pub control: RunControl,
}

/// The measuring threads of a [`MonitorSpec`], made but not started.
pub struct Threads(Vec<MonitorThread>);

/// Makes one measuring thread per [`MonitorSpec::threads`] (with both of its slots
/// allocated now) and the main thread's [`Link`] to each, in thread order.
pub fn threads(spec: &MonitorSpec, windows: &Arc<Windows>) -> (Threads, Vec<Link>) {
    let mut workers = Vec::with_capacity(spec.threads.len());
    let mut links = Vec::with_capacity(spec.threads.len());
    for t in &spec.threads {
        // Two slots per thread in flight at most: room for both in each channel.
        let (full_tx, full_rx) = mpsc::sync_channel(2);
        let (empty_tx, empty_rx) = mpsc::sync_channel(2);
        let _ = empty_tx.try_send(WindowSlot::new());
        workers.push(MonitorThread {
            spec: t.clone(),
            period: Period::new(Clock::Monotonic, &spec.control),
            windows: Arc::clone(windows),
            active: Some(WindowSlot::new()),
            full: full_tx,
            empty: empty_rx,
        });
        links.push(Link {
            thread: t.clone(),
            full: full_rx,
            empty: empty_tx,
        });
    }
    (Threads(workers), links)
}

/// Runs `threads` until the duration ends or SIGINT/SIGTERM (see [`Harness`]).
/// `progress` is called every report period on the main thread: that is where windows
/// are closed (by incrementing [`Windows::current`]) and the finished slots taken
/// from the [`Link`]s. Returns each thread's last, unfinished slot and how the run
/// ended; slots handed over but not yet taken stay in the links.
///
/// Errors: as [`super::cyclic::run`] (mlockall, affinity or SCHED_FIFO refused).
pub fn run(
    spec: &MonitorSpec,
    threads: Threads,
    root: &SysRoot,
    progress: &mut dyn Progress,
) -> Result<(Vec<Box<WindowSlot>>, RunEnd)> {
    let harness = Harness::prepare(&spec.control, spec.threads.len(), root, progress)?;
    harness.run("M", &spec.threads, threads.0, progress)
}

/// One monitoring thread.
struct MonitorThread {
    spec: ThreadSpec,
    period: Period,
    windows: Arc<Windows>,
    /// Allocated by the main thread (see `CyclicThread::stats` for why).
    active: Option<Box<WindowSlot>>,
    full: SyncSender<Box<WindowSlot>>,
    empty: Receiver<Box<WindowSlot>>,
}

impl Worker for MonitorThread {
    type Output = Box<WindowSlot>;

    fn run(mut self, ctx: &ThreadCtx, measure: bool) -> Result<Box<WindowSlot>> {
        let mut active = self.active.take().expect("set when the thread is made");
        let w = self.windows.current.load(Ordering::Acquire);
        active.first = w;
        active.last = w;
        if measure {
            let tid = ctx.live.tid.load(Ordering::Relaxed);
            let mut hand_over = HandOver {
                windows: &self.windows,
                full: &self.full,
                empty: &self.empty,
                active: &mut active,
            };
            self.period.run(&self.spec, ctx, tid, &mut hand_over, None);
        }
        Ok(active)
    }
}

/// The monitor's part of the loop: at a new window, swap the active slot for the spare
/// and send the finished one to the main thread (see the module documentation).
struct HandOver<'a> {
    windows: &'a Windows,
    full: &'a SyncSender<Box<WindowSlot>>,
    empty: &'a Receiver<Box<WindowSlot>>,
    active: &'a mut Box<WindowSlot>,
}

impl Wakeup for HandOver<'_> {
    /// One relaxed load per cycle; at a new window a `try_recv` and a `try_send` (no
    /// blocking, no allocation). `None` when the main thread is gone.
    #[inline(always)]
    fn stats(&mut self) -> Option<&mut LatencyStats> {
        let window = self.windows.current.load(Ordering::Relaxed);
        if window != self.active.first {
            match self.empty.try_recv() {
                Ok(mut fresh) => {
                    fresh.first = window;
                    fresh.last = window;
                    std::mem::swap(self.active, &mut fresh);
                    // The finished slot covers every window until this one.
                    fresh.last = window.saturating_sub(1);
                    if self.full.try_send(fresh).is_err() {
                        return None; // the main thread is gone
                    }
                }
                // The main thread has not returned the spare yet: keep recording
                // here and try again at the next wakeup.
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => return None,
            }
        }
        Some(&mut self.active.stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::sched::Policy;
    use std::time::Duration;

    /// Real threads, real timers: windows are handed over, summarised and returned,
    /// and every sample lands in exactly one slot.
    #[test]
    fn windows_are_handed_over_and_nothing_is_lost() {
        use crate::measure::stats::LiveSnapshot;
        struct Collect {
            links: Vec<Link>,
            windows: Arc<Windows>,
            seen: Vec<(u64, u64, u64)>,
        }
        impl Collect {
            fn drain(&mut self) {
                for l in &self.links {
                    while let Some(s) = l.take() {
                        self.seen.push((s.first, s.last, s.stats.count));
                        l.give_back(s);
                    }
                }
            }
        }
        impl Progress for Collect {
            fn report(&mut self, _: &[ThreadSpec], _: &[LiveSnapshot]) {
                self.windows.current.fetch_add(1, Ordering::Release);
                self.drain();
            }
            fn status(&mut self, _: &[ThreadSpec], _: &[LiveSnapshot]) {}
            fn notice(&mut self, _: &str) {}
            fn warning(&mut self, _: &str) {}
        }
        let spec = MonitorSpec {
            threads: vec![ThreadSpec {
                index: 0,
                cpu: None,
                policy: Policy::Other,
                priority: 0,
                interval_us: 1000,
            }],
            control: RunControl {
                duration: Some(Duration::from_millis(700)),
                loops: None,
                mlockall: false,
                pm_qos_us: None,
                main_cpus: None,
                report_every: Some(Duration::from_millis(100)),
                break_ns: None,
                tracemark: false,
                histogram: None,
                explain: None,
            },
        };
        let windows = Arc::new(Windows::default());
        let (threads, links) = threads(&spec, &windows);
        let mut c = Collect {
            links,
            windows,
            seen: Vec::new(),
        };
        let (last, end) = run(&spec, threads, &SysRoot::host(), &mut c).unwrap();
        c.drain();
        assert_eq!(end.stop, crate::measure::harness::StopCause::Completed);
        let seen = c.seen;
        assert!(seen.len() >= 2, "{seen:?}");
        // Windows follow each other without gaps or overlaps, up to the last slot.
        assert_eq!(seen[0].0, 0, "{seen:?}");
        for pair in seen.windows(2) {
            assert_eq!(pair[1].0, pair[0].1 + 1, "{seen:?}");
        }
        assert_eq!(last[0].first, seen.last().unwrap().1 + 1, "{seen:?}");
        // 700 ms at 1 ms: each wakeup counted once (fewer on a loaded VM, where late
        // wakeups are overruns instead).
        let total: u64 = seen.iter().map(|s| s.2).sum::<u64>() + last[0].stats.count;
        assert!(total > 100 && total <= 701, "{total}");
    }
}

//! The cyclic timer-wakeup test (cyclictest's measurement).
//!
//! Each measuring thread pins itself (inside the thread, before the first sample),
//! takes its scheduling policy and priority, pre-faults its stack, then loops:
//! `clock_nanosleep(clock, TIMER_ABSTIME, next)`, read the clock, record
//! `latency = now − next` in **ns**, advance `next` by the interval. A wakeup later than
//! the following deadline is an **overrun**: it is counted and `next` moves past `now`
//! (cyclictest skips such periods silently).

use super::runner::{prepare_process, supervise, Say, Shared, StopCause, Tick};
use super::stats::{LatencyStats, LiveSnapshot, LiveStats};
use crate::cpuset::CpuSet;
use crate::error::{Error, Result};
use crate::sys::clock::Clock;
use crate::sys::sched::{self, Policy};
use crate::sys::signals::Signals;
use crate::sys::SysRoot;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, OnceLock};
use std::time::Duration;

/// Stack size of a measuring thread; small, so that `mlockall` locks little.
pub const THREAD_STACK_BYTES: usize = 256 * 1024;
/// Stack bytes touched before the first sample.
pub const PREFAULT_STACK_BYTES: usize = 64 * 1024;

/// One measuring thread, fully decided by the Plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSpec {
    /// Thread number (`T:` index).
    pub index: usize,
    /// CPU to pin to, or `None` to inherit the process affinity (cyclictest `-t N`
    /// without `-a`).
    pub cpu: Option<usize>,
    /// Scheduling policy.
    pub policy: Policy,
    /// Priority (1..99 for FIFO/RR, 0 otherwise).
    pub priority: i32,
    /// Wakeup interval in **µs** (cyclictest `-i` plus `index × -d`).
    pub interval_us: u64,
}

/// A whole cyclic run, validated: nothing here can be wrong when it reaches [`run`].
#[derive(Debug, Clone)]
pub struct CyclicSpec {
    /// The measuring threads.
    pub threads: Vec<ThreadSpec>,
    /// Clock to sleep on and read.
    pub clock: Clock,
    /// Stop after this long (cyclictest `-D`), if set.
    pub duration: Option<Duration>,
    /// Stop each thread after this many samples (cyclictest `-l`), if set.
    pub loops: Option<u64>,
    /// Call `mlockall` before starting threads.
    pub mlockall: bool,
    /// Value for `/dev/cpu_dma_latency` in **µs**, or `None` to leave PM QoS alone.
    pub pm_qos_us: Option<i32>,
    /// Where the main (supervising) thread runs.
    pub main_cpus: Option<CpuSet>,
    /// `-h N`: linear histogram of N buckets of `bucket_ns` each.
    pub histogram: Option<(usize, u64)>,
    /// `-b`: stop the run when a sample exceeds this many **ns**.
    pub break_ns: Option<u64>,
    /// `--tracemark`: write a trace marker when `-b` fires.
    pub tracemark: bool,
    /// Live report period; `None` for `-q`.
    pub report_every: Option<Duration>,
}

/// What `-b` caught: the first thread whose sample exceeded the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct BreakInfo {
    /// Thread index.
    pub thread: usize,
    /// Kernel thread id.
    pub tid: i32,
    /// The sample in **ns**.
    pub latency_ns: u64,
}

/// One thread's outcome.
#[derive(Debug, Clone)]
pub struct ThreadResult {
    /// The thread as specified.
    pub spec: ThreadSpec,
    /// Kernel thread id.
    pub tid: i32,
    /// Its statistics (ns).
    pub stats: LatencyStats,
}

/// A finished (or interrupted) cyclic run.
#[derive(Debug, Clone)]
pub struct CyclicResult {
    /// Per-thread results, in thread order.
    pub threads: Vec<ThreadResult>,
    /// Why the run ended.
    pub stop: StopCause,
    /// Set when `-b` fired.
    pub break_info: Option<BreakInfo>,
    /// The PM QoS value held during the run, in **µs**, if any.
    pub pm_qos_us: Option<i32>,
    /// Wall-clock start and end, seconds since the epoch.
    pub start_wall_s: i64,
    /// See `start_wall_s`.
    pub end_wall_s: i64,
}

/// Progress printing hooks for the live output (`T:` lines) and SIGUSR1 status.
pub trait Progress {
    /// Called every report period with each thread's live figures.
    fn report(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]);
    /// Called on SIGUSR1.
    fn status(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]);
    /// A fact about the run's setup for standard output (e.g. the PM QoS line).
    fn notice(&mut self, line: &str);
    /// A warning for standard error.
    fn warning(&mut self, line: &str);
}

/// tracefs files `-b` writes: `tracing_on` (to stop the trace) and `trace_marker`.
pub(crate) struct BreakTrace {
    pub(crate) limit_ns: u64,
    tracing_on: Option<File>,
    marker: Option<File>,
    tripped: AtomicBool,
    pub(crate) info: OnceLock<BreakInfo>,
}

impl BreakTrace {
    pub(crate) fn open(root: &SysRoot, limit_ns: u64, tracemark: bool) -> BreakTrace {
        let dir = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
            .into_iter()
            .find(|d| root.exists(&format!("{d}/tracing_on")));
        let open = |name: &str| dir.and_then(|d| root.open_rw(&format!("{d}/{name}")).ok());
        BreakTrace {
            limit_ns,
            tracing_on: open("tracing_on"),
            marker: if tracemark {
                open("trace_marker")
            } else {
                None
            },
            tripped: AtomicBool::new(false),
            info: OnceLock::new(),
        }
    }

    /// Called by the thread whose sample crossed the limit; only the first one acts.
    pub(crate) fn trip(&self, info: BreakInfo, shared: &Shared) {
        if self.tripped.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(mut m) = self.marker.as_ref() {
            let _ = write!(
                m,
                "hit latency threshold ({} > {})",
                info.latency_ns / 1000,
                self.limit_ns / 1000
            );
        }
        if let Some(mut t) = self.tracing_on.as_ref() {
            let _ = t.write_all(b"0");
        }
        let _ = self.info.set(info);
        shared.request_stop();
    }
}

/// Sets up the process (mlockall, PM QoS, main-thread affinity), runs every measuring
/// thread and supervises them until the duration/loops end, `-b` fires, or SIGINT/SIGTERM.
///
/// Errors: [`Error::Refused`] (exit 3) when mlockall, affinity or the scheduling policy is
/// refused — the run never falls back to SCHED_OTHER silently. PM QoS problems are
/// warnings, as in cyclictest.
pub fn run(spec: &CyclicSpec, root: &SysRoot, progress: &mut dyn Progress) -> Result<CyclicResult> {
    let pm_qos = prepare_process(
        spec.mlockall,
        spec.pm_qos_us,
        spec.main_cpus.as_ref(),
        root,
        &mut |kind, line| match kind {
            Say::Notice => progress.notice(line),
            Say::Warning => progress.warning(line),
        },
    )?;
    let breaks = spec
        .break_ns
        .map(|ns| Arc::new(BreakTrace::open(root, ns, spec.tracemark)));

    let signals = Signals::block();
    let n = spec.threads.len();
    let shared = Arc::new(Shared::new(n));
    let live: Vec<Arc<LiveStats>> = (0..n).map(|_| Arc::new(LiveStats::default())).collect();
    let (setup_tx, setup_rx) = mpsc::channel::<(usize, Option<Error>)>();
    let start_wall_s = Clock::wall_secs();

    let mut handles = Vec::with_capacity(n);
    for t in &spec.threads {
        let ctx = ThreadCtx {
            spec: t.clone(),
            clock: spec.clock,
            duration_ns: spec.duration.map(|d| d.as_nanos() as i64),
            loops: spec.loops,
            stats: Some(LatencyStats::new(spec.histogram)),
            shared: Arc::clone(&shared),
            live: Arc::clone(&live[t.index]),
            breaks: breaks.clone(),
        };
        let tx = setup_tx.clone();
        let h = std::thread::Builder::new()
            .name(format!("rtbench-T{}", t.index))
            .stack_size(THREAD_STACK_BYTES)
            .spawn(move || ctx.run(tx))
            .map_err(|e| Error::refused("spawning a measuring thread", e))?;
        handles.push(h);
    }
    drop(setup_tx);

    let mut first_err = None;
    for _ in 0..n {
        match setup_rx.recv() {
            Ok((_, Some(e))) => {
                first_err.get_or_insert(e);
            }
            Ok((_, None)) => {}
            Err(_) => break,
        }
    }
    if first_err.is_some() {
        shared.request_stop();
    }
    shared.barrier.wait();

    let cause = if first_err.is_none() {
        supervise(
            &signals,
            &shared,
            spec.report_every,
            || handles.iter().all(|h| h.is_finished()),
            |tick| {
                let snap: Vec<LiveSnapshot> = live.iter().map(|l| l.snapshot()).collect();
                match tick {
                    Tick::Report => progress.report(&spec.threads, &snap),
                    Tick::Status => progress.status(&spec.threads, &snap),
                }
            },
        )
    } else {
        None
    };
    let mut threads = Vec::with_capacity(n);
    for h in handles {
        match h.join() {
            Ok(r) => threads.push(r),
            Err(_) => {
                return Err(Error::refused(
                    "a measuring thread",
                    std::io::Error::other("panicked"),
                ))
            }
        }
    }
    let pm_qos_us = pm_qos.as_ref().map(|h| h.latency_us);
    drop(pm_qos);
    if let Some(e) = first_err {
        return Err(e);
    }
    let break_info = breaks.as_ref().and_then(|b| b.info.get().copied());
    let stop = match (cause, break_info) {
        (Some(c), _) => c,
        (None, Some(_)) => StopCause::Break,
        (None, None) => StopCause::Completed,
    };
    Ok(CyclicResult {
        threads,
        stop,
        break_info,
        pm_qos_us,
        start_wall_s,
        end_wall_s: Clock::wall_secs(),
    })
}

struct ThreadCtx {
    spec: ThreadSpec,
    clock: Clock,
    duration_ns: Option<i64>,
    loops: Option<u64>,
    /// Allocated by the main thread: a first allocation inside the measuring thread
    /// would make glibc create a per-thread malloc arena (64 MiB of mappings that
    /// `mlockall(MCL_FUTURE)` then accounts as locked).
    stats: Option<LatencyStats>,
    shared: Arc<Shared>,
    live: Arc<LiveStats>,
    breaks: Option<Arc<BreakTrace>>,
}

impl ThreadCtx {
    fn setup(&self) -> Result<()> {
        if let Some(cpu) = self.spec.cpu {
            sched::set_affinity(&[cpu].into_iter().collect())?;
        }
        sched::set_scheduler(self.spec.policy, self.spec.priority)?;
        sched::prefault_stack(PREFAULT_STACK_BYTES);
        Ok(())
    }

    fn run(mut self, setup_tx: mpsc::Sender<(usize, Option<Error>)>) -> ThreadResult {
        let tid = sched::gettid();
        self.live.tid.store(tid, Ordering::Relaxed);
        self.shared.register_sleeper();
        let mut stats = self
            .stats
            .take()
            .expect("stats are set when the thread is spawned");
        let setup = self.setup();
        let _ = setup_tx.send((self.spec.index, setup.err()));
        drop(setup_tx);
        self.shared.barrier.wait();
        if !self.shared.stopped() {
            self.measure(&mut stats, tid);
        }
        ThreadResult {
            spec: self.spec,
            tid,
            stats,
        }
    }

    /// The hot loop: no allocation, no lock, no formatting between two clock reads.
    fn measure(&self, stats: &mut LatencyStats, tid: i32) {
        let clock = self.clock;
        let interval = self.spec.interval_us as i64 * 1000;
        let loops = self.loops.unwrap_or(u64::MAX);
        let start = clock.now_ns();
        let stop_at = self
            .duration_ns
            .map_or(i64::MAX, |d| start.saturating_add(d));
        let mut next = start + interval;
        'run: loop {
            while !clock.sleep_until_ns(next) {
                if self.shared.stopped() {
                    break 'run;
                }
            }
            let now = clock.now_ns();
            let latency = (now - next).max(0) as u64;
            stats.record(latency);
            self.live.publish(stats);
            if let Some(b) = &self.breaks {
                if latency > b.limit_ns {
                    b.trip(
                        BreakInfo {
                            thread: self.spec.index,
                            tid,
                            latency_ns: latency,
                        },
                        &self.shared,
                    );
                    break;
                }
            }
            next += interval;
            if now > next {
                let missed = (now - next) / interval + 1;
                stats.record_overrun(missed as u64);
                next += missed * interval;
            }
            if stats.count >= loops || now >= stop_at || self.shared.stopped() {
                break;
            }
        }
    }
}

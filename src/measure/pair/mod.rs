//! The pair tests: one sender/receiver engine, two transports (POSIX message queues for
//! `rtbench pmq`, pipes for `rtbench pipe`).
//!
//! Each pair has an *initiator* (pmqtest's sender, `#2i+1`) and a *responder*
//! (pmqtest's receiver, `#2i`), both pinned (`cpu`) and prioritised like cyclic's
//! threads. One cycle:
//!
//! 1. initiator: `t0 = CLOCK_MONOTONIC` immediately before it sends `[t0]`;
//! 2. responder: `t1 = CLOCK_MONOTONIC` immediately after the receive returns;
//!    pmq: sleeps the pair's interval (pmqtest's receiver delay); `t2` immediately
//!    before it sends the reply `[t1, t2, timeouts, cpu]`;
//! 3. initiator: `t3` immediately after the reply arrives; records the one-way latency
//!    `t1 − t0` (and for pipes `t3 − t2` and the round trip `t3 − t0`), all in **ns**.
//!
//! An **overrun** is a message whose one-way latency exceeded the pair's interval (it
//! arrived later than the next one was due; none with a pipe interval of 0). A
//! **timeout** (`-T`) is a receive that waited longer than TO; it is counted and the
//! wait goes on.
//!
//! All recording happens in the initiator, so `--fork` (the responder in a child
//! process, as `perf bench sched pipe` does) needs no shared memory: CLOCK_MONOTONIC
//! is system-wide. The responder body allocates nothing, so it may run in a child
//! forked from a multi-threaded process.

mod responder;
mod sender;

use responder::{fork_responder, reap, respond, ResponderCfg};
use sender::InitCtx;

use super::cyclic::{BreakInfo, BreakTrace, THREAD_STACK_BYTES};
use super::runner::{prepare_process, supervise, Say, Shared, StopCause, Tick};
use super::stats::{LatencyStats, LiveStats};
use super::transport::{pipe, MqQueue, PipeRead, PipeWrite};
use crate::cpuset::CpuSet;
use crate::error::{Error, Result};
use crate::sys::clock::Clock;
use crate::sys::signals::Signals;
use crate::sys::SysRoot;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// `t0` of the message that tells the responder to finish.
const STOP: i64 = i64::MIN;
/// `t1` of the responder's first message (setup result).
const READY: i64 = i64::MIN + 1;
/// Setup stages reported in a READY message.
const STAGE_AFFINITY: i64 = 1;
const STAGE_SCHED: i64 = 2;
const STAGE_MLOCK: i64 = 3;

/// Which test, and so which transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PairKind {
    /// POSIX message queues (pmqtest).
    Pmq,
    /// Pipe ping-pong (perf bench sched pipe).
    Pipe,
}

/// One sender/receiver pair, fully decided by the Plan: the same fields as a cyclic
/// thread, for both ends (`index` is pmqtest's thread number; `cpu` the CPU both ends
/// share). `interval_us` is, for pmq, the receiver's delay before it sends the sync
/// message (pmqtest `-i` + `index × -d`); for pipe, the initiator's pause between round
/// trips (0 = back to back, as perf does).
pub type PairThreads = super::cyclic::ThreadSpec;

/// A validated pair run.
#[derive(Debug, Clone)]
pub struct PairSpec {
    /// pmq or pipe.
    pub kind: PairKind,
    /// The pairs.
    pub pairs: Vec<PairThreads>,
    /// Pipe only: the responder runs in a forked child process.
    pub fork: bool,
    /// `-T`: the responder's receive times out after this long; each timeout is
    /// counted and the wait goes on.
    pub timeout: Option<Duration>,
    /// `-f`: the sender waits this long before each message, so that every receive
    /// times out at least once (pmqtest's `-f`, a check of the timeout path).
    pub force_timeout: Option<Duration>,
    /// Stop after this long, if set.
    pub duration: Option<Duration>,
    /// Stop each pair after this many cycles, if set.
    pub loops: Option<u64>,
    /// `mlockall` before starting (and in a forked responder).
    pub mlockall: bool,
    /// `/dev/cpu_dma_latency` value, **µs**, or `None`.
    pub pm_qos_us: Option<i32>,
    /// Where the main thread runs.
    pub main_cpus: Option<CpuSet>,
    /// `-h N`: linear histogram of N buckets of `bucket_ns`.
    pub histogram: Option<(usize, u64)>,
    /// `-b`: stop when a one-way latency exceeds this many **ns**.
    pub break_ns: Option<u64>,
    /// Live report period; `None` for `-q`.
    pub report_every: Option<Duration>,
}

/// One pair's outcome. Latencies in **ns**.
#[derive(Debug, Clone)]
pub struct PairResult {
    /// The pair as specified.
    pub spec: PairThreads,
    /// Thread id of the initiator (sender).
    pub sender_tid: i32,
    /// Thread id (or pid with `--fork`) of the responder (receiver).
    pub receiver_tid: i32,
    /// CPU the sender ran on last (the pinned CPU, or where it was seen).
    pub sender_cpu: i64,
    /// CPU the receiver ran on last.
    pub receiver_cpu: i64,
    /// Sender → receiver latency per message (pmqtest's figure).
    pub forward: LatencyStats,
    /// Pipe: receiver → sender latency per message.
    pub backward: Option<LatencyStats>,
    /// Pipe: round trip `t3 − t0` per cycle.
    pub round_trip: Option<LatencyStats>,
    /// Receives that timed out (`-T`).
    pub timeouts: u64,
    /// Wall time from the first send to the last reply, minus the pauses between
    /// round trips (pipe `-i`), **ns**: perf's "Total time".
    pub total_ns: u64,
}

impl PairResult {
    /// Mean task-switch time in **ns**: total round-trip time ([`Self::total_ns`]) /
    /// (2 × round trips), the figure `perf bench sched pipe` gives as usecs/op ÷ 2.
    pub fn switch_ns(&self) -> Option<f64> {
        self.round_trip
            .as_ref()
            .filter(|r| r.count > 0)
            .map(|r| self.total_ns as f64 / (2.0 * r.count as f64))
    }
}

/// A finished (or interrupted) pair run.
#[derive(Debug, Clone)]
pub struct PairRun {
    /// pmq or pipe.
    pub kind: PairKind,
    /// Whether the responders ran as processes.
    pub fork: bool,
    /// Per-pair results, in pair order.
    pub pairs: Vec<PairResult>,
    /// Why the run ended.
    pub stop: StopCause,
    /// Set when `-b` fired.
    pub break_info: Option<BreakInfo>,
    /// PM QoS value held, **µs**.
    pub pm_qos_us: Option<i32>,
    /// Wall-clock start, seconds since the epoch.
    pub start_wall_s: i64,
    /// Wall-clock end.
    pub end_wall_s: i64,
}

/// Live figures of one pair for progress lines.
#[derive(Debug, Default)]
pub struct LivePair {
    /// Forward latency counters (tid = sender tid).
    pub stats: LiveStats,
    /// Receiver tid.
    pub receiver_tid: AtomicI64,
    /// Timeouts so far.
    pub timeouts: AtomicU64,
}

/// Progress hooks for a pair run.
pub trait PairProgress {
    /// Every report period.
    fn report(&mut self, pairs: &[PairThreads], live: &[Arc<LivePair>]);
    /// On SIGUSR1.
    fn status(&mut self, pairs: &[PairThreads], live: &[Arc<LivePair>]);
    /// A setup fact for standard output.
    fn notice(&mut self, line: &str);
    /// A warning for standard error.
    fn warning(&mut self, line: &str);
}

/// One pair's ends after forking.
enum Ends {
    Mq(Arc<MqQueue>, Arc<MqQueue>, ResponderCfg),
    Pipes((PipeRead, PipeWrite), (PipeRead, PipeWrite), ResponderCfg),
    Forked(PipeWrite, PipeRead),
}

/// The channels of one pair from both sides, before the threads start.
pub enum Channels {
    /// Two queues (forward, backward), shared by both threads.
    Mq(Arc<MqQueue>, Arc<MqQueue>),
    /// Forward and backward pipes.
    Pipe {
        /// Forward pipe.
        fwd: (PipeRead, PipeWrite),
        /// Backward pipe.
        bwd: (PipeRead, PipeWrite),
    },
}

/// Creates every pair's channels (queues or pipes). Call before starting load, so a
/// queue that cannot be created stops the run before anything else starts.
pub fn open_channels(spec: &PairSpec) -> Result<Vec<Channels>> {
    let pid = std::process::id();
    spec.pairs
        .iter()
        .map(|p| match spec.kind {
            PairKind::Pmq => Ok(Channels::Mq(
                Arc::new(MqQueue::create(&format!(
                    "/rtbench-{pid}-{}-test",
                    p.index
                ))?),
                Arc::new(MqQueue::create(&format!(
                    "/rtbench-{pid}-{}-sync",
                    p.index
                ))?),
            )),
            PairKind::Pipe => Ok(Channels::Pipe {
                fwd: pipe()?,
                bwd: pipe()?,
            }),
        })
        .collect()
}

/// Sets up the process (mlockall, PM QoS, main affinity), starts every pair on the
/// given `channels` (from [`open_channels`]) and supervises them until loops/duration
/// end, `-b` fires, or SIGINT/SIGTERM.
///
/// Errors: [`Error::Refused`] when affinity, policy or mlockall is refused (in either
/// end; no silent fallback), or when a transport fails during the run.
pub fn run(
    spec: &PairSpec,
    channels: Vec<Channels>,
    root: &SysRoot,
    progress: &mut dyn PairProgress,
) -> Result<PairRun> {
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
        .map(|ns| Arc::new(BreakTrace::open(root, ns, false)));
    let signals = Signals::block();
    let n = spec.pairs.len();
    let shared = Arc::new(Shared::new(n));
    let live: Vec<Arc<LivePair>> = (0..n).map(|_| Arc::new(LivePair::default())).collect();
    let (setup_tx, setup_rx) = mpsc::channel::<Option<Error>>();
    let start_wall_s = Clock::wall_secs();
    // Fork every responder first, while this process runs no other thread of ours.
    let all_fds: Vec<RawFd> = channels
        .iter()
        .flat_map(|c| match c {
            Channels::Pipe { fwd, bwd } => vec![
                fwd.0 .0.as_raw_fd(),
                fwd.1 .0.as_raw_fd(),
                bwd.0 .0.as_raw_fd(),
                bwd.1 .0.as_raw_fd(),
            ],
            Channels::Mq(..) => vec![],
        })
        .collect();
    let mut children: Vec<libc::pid_t> = Vec::new();
    let mut ends = Vec::with_capacity(n);
    for (p, ch) in spec.pairs.iter().zip(channels) {
        let rcfg = ResponderCfg {
            cpu: p.cpu,
            policy: p.policy,
            priority: p.priority,
            mlock: spec.mlockall && spec.fork,
            sleep_ns: if spec.kind == PairKind::Pmq {
                p.interval_us as i64 * 1000
            } else {
                0
            },
            timeout_ns: spec.timeout.map(|t| t.as_nanos() as i64),
        };
        ends.push(match ch {
            Channels::Pipe { fwd, bwd } if spec.fork => {
                let pid = match fork_responder(fwd.0, bwd.1, rcfg, &all_fds) {
                    Ok(pid) => pid,
                    Err(e) => {
                        reap(&children, true);
                        return Err(e);
                    }
                };
                children.push(pid);
                live[p.index].receiver_tid.store(pid as i64, Relaxed);
                Ends::Forked(fwd.1, bwd.0)
            }
            Channels::Pipe { fwd, bwd } => Ends::Pipes(fwd, bwd, rcfg),
            Channels::Mq(test, sync) => Ends::Mq(test, sync, rcfg),
        });
    }
    let mut handles = Vec::with_capacity(n);
    let mut responders = Vec::new();
    for (p, e) in spec.pairs.iter().zip(ends) {
        let ictx = InitCtx {
            spec: p.clone(),
            kind: spec.kind,
            duration_ns: spec.duration.map(|d| d.as_nanos() as i64),
            force_ns: spec.force_timeout.map_or(0, |d| d.as_nanos() as i64),
            loops: spec.loops,
            histogram: spec.histogram,
            shared: Arc::clone(&shared),
            live: Arc::clone(&live[p.index]),
            breaks: breaks.clone(),
        };
        let tx = setup_tx.clone();
        let sname = format!("rtbench-S{}", p.index);
        let rname = format!("rtbench-R{}", p.index);
        let h = match e {
            Ends::Mq(test, sync, rcfg) => {
                let (t2, s2) = (Arc::clone(&test), Arc::clone(&sync));
                let sh = Arc::clone(&shared);
                responders.push(spawn(rname, move || {
                    // Woken (EINTR) when the run stops, so a long -i ends at once.
                    sh.register_sleeper();
                    let _ = respond(&s2, &t2, rcfg);
                })?);
                spawn(sname, move || ictx.run(&test, &sync, tx))?
            }
            Ends::Pipes(fwd, bwd, rcfg) => {
                let (fr, bw) = (fwd.0, bwd.1);
                let sh = Arc::clone(&shared);
                responders.push(spawn(rname, move || {
                    sh.register_sleeper();
                    let _ = respond(&bw, &fr, rcfg);
                })?);
                spawn(sname, move || ictx.run(&fwd.1, &bwd.0, tx))?
            }
            Ends::Forked(ftx, brx) => spawn(sname, move || ictx.run(&ftx, &brx, tx))?,
        };
        handles.push(h);
    }
    drop(setup_tx);

    let mut first_err = None;
    for _ in 0..n {
        match setup_rx.recv() {
            Ok(Some(e)) => {
                first_err.get_or_insert(e);
            }
            Ok(None) => {}
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
            |tick| match tick {
                Tick::Report => progress.report(&spec.pairs, &live),
                Tick::Status => progress.status(&spec.pairs, &live),
            },
        )
    } else {
        None
    };
    let mut pairs = Vec::with_capacity(n);
    let mut run_err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(r)) => pairs.push(r),
            Ok(Err(e)) => {
                run_err.get_or_insert(e);
            }
            Err(_) => {
                run_err.get_or_insert(Error::refused(
                    "a sender thread",
                    io::Error::other("panicked"),
                ));
            }
        }
    }
    // A responder ends on STOP; one that cannot get it (a failed send) is left to
    // process exit rather than hanging the run.
    for r in responders {
        for _ in 0..100 {
            if r.is_finished() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if r.is_finished() {
            let _ = r.join();
        }
    }
    reap(&children, false);
    let pm_qos_us = pm_qos.as_ref().map(|h| h.latency_us);
    drop(pm_qos);
    if let Some(e) = first_err.or(run_err) {
        return Err(e);
    }
    let break_info = breaks.as_ref().and_then(|b| b.info.get().copied());
    let stop = match (cause, break_info) {
        (Some(c), _) => c,
        (None, Some(_)) => StopCause::Break,
        (None, None) => StopCause::Completed,
    };
    Ok(PairRun {
        kind: spec.kind,
        fork: spec.fork,
        pairs,
        stop,
        break_info,
        pm_qos_us,
        start_wall_s,
        end_wall_s: Clock::wall_secs(),
    })
}

fn spawn<T: Send + 'static>(
    name: String,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<std::thread::JoinHandle<T>> {
    std::thread::Builder::new()
        .name(name)
        .stack_size(THREAD_STACK_BYTES)
        .spawn(f)
        .map_err(|e| Error::refused("spawning a pair thread", e))
}

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
use sender::{Sender, SenderEnds};

use super::harness::{Harness, Progress, RunEnd};
use super::stats::LatencyStats;
use super::transport::{self, pipe, MqQueue, MsgBuf, PipeRead, PipeWrite};
use super::{RunControl, ThreadSpec, THREAD_STACK_BYTES};
use crate::error::{Error, Result};
use crate::sys::{refusal, SysRoot};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
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

/// The message sizes a test accepts, **bytes**: pipe `32..=PIPE_BUF` (pipe(7)); pmq
/// `32..=msgsize_max` of `root` (mq_overview(7); [`transport::MQ_HARD_MSGSIZE_MAX`] when that
/// file is unreadable, and mq_open's refusal then names the limit).
pub fn msg_size_range(
    kind: PairKind,
    root: &crate::sys::SysRoot,
) -> std::ops::RangeInclusive<usize> {
    match kind {
        PairKind::Pipe => transport::MSG_BYTES..=transport::PIPE_MAX_MSG_BYTES,
        PairKind::Pmq => {
            let max = root
                .read_trim(transport::MQ_MSGSIZE_MAX)
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(transport::MQ_HARD_MSGSIZE_MAX);
            transport::MSG_BYTES..=max.max(transport::MSG_BYTES)
        }
    }
}

/// What bounds the message size of `kind`, for error messages: `PIPE_BUF, pipe(7)` or
/// `/proc/sys/fs/mqueue/msgsize_max, mq_overview(7)`.
pub fn msg_size_limit(kind: PairKind) -> &'static str {
    match kind {
        PairKind::Pipe => "PIPE_BUF, pipe(7)",
        PairKind::Pmq => "/proc/sys/fs/mqueue/msgsize_max, mq_overview(7)",
    }
}

/// `Err(expected)` when `bytes` is outside [`msg_size_range`]: the one-line "expected a
/// message size of A..=B bytes (limit)" for the caller's error.
pub fn check_msg_size(
    kind: PairKind,
    bytes: i64,
    root: &crate::sys::SysRoot,
) -> std::result::Result<usize, String> {
    let range = msg_size_range(kind, root);
    match usize::try_from(bytes) {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(format!(
            "expected a message size of {}..={} bytes ({})",
            range.start(),
            range.end(),
            msg_size_limit(kind)
        )),
    }
}

/// A validated pair run. Each [`ThreadSpec`] is one pair (`index` is pmqtest's pair
/// number; `cpu` the CPU both ends share); its `interval_us` is, for pmq, the
/// receiver's delay before it sends the sync message (pmqtest `-i` + `index × -d`); for
/// pipe, the initiator's pause between round trips (0 = back to back, as perf does).
#[derive(Debug, Clone)]
pub struct PairSpec {
    /// pmq or pipe.
    pub kind: PairKind,
    /// The pairs.
    pub pairs: Vec<ThreadSpec>,
    /// Pipe only: the responder runs in a forked child process.
    pub fork: bool,
    /// `-T`: the responder's receive times out after this long; each timeout is
    /// counted and the wait goes on.
    pub timeout: Option<Duration>,
    /// `-f`: the sender waits this long before each message, so that every receive
    /// times out at least once (pmqtest's `-f`, a check of the timeout path).
    pub force_timeout: Option<Duration>,
    /// Message size, **bytes** (`--msg-size`, `msg_size`): the first 32 carry the
    /// stamps, the rest is padding. Checked by the caller against
    /// [`msg_size_range`] (pipe: `PIPE_BUF`, pipe(7); pmq:
    /// `msgsize_max`, mq_overview(7)); default [`transport::MSG_BYTES`].
    pub msg_size: usize,
    /// Duration, loops, process setup, reporting (`-b`: a one-way latency above it).
    pub control: RunControl,
}

/// One pair's outcome. Latencies in **ns**.
#[derive(Debug, Clone)]
pub struct PairResult {
    /// The pair as specified.
    pub spec: ThreadSpec,
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
    /// Message size, **bytes** ([`PairSpec::msg_size`]).
    pub msg_size: usize,
    /// Per-pair results, in pair order.
    pub pairs: Vec<PairResult>,
    /// How the run ended.
    pub end: RunEnd,
}

/// One pair's ends after forking: the sender's, and the responder's when it is a thread.
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
                Arc::new(MqQueue::create(
                    &format!("/rtbench-{pid}-{}-test", p.index),
                    spec.msg_size,
                )?),
                Arc::new(MqQueue::create(
                    &format!("/rtbench-{pid}-{}-sync", p.index),
                    spec.msg_size,
                )?),
            )),
            PairKind::Pipe => Ok(Channels::Pipe {
                fwd: pipe()?,
                bwd: pipe()?,
            }),
        })
        .collect()
}

/// Sets up the process, starts every pair on the given `channels` (from
/// [`open_channels`]) — responders first (forked or as threads), then the senders as
/// the harness's measuring threads — and supervises them until loops/duration end,
/// `-b` fires, or SIGINT/SIGTERM (see [`Harness`]).
///
/// Errors: [`Error::Refused`] when affinity, policy or mlockall is refused (in either
/// end; no silent fallback), or when a transport fails during the run.
pub fn run(
    spec: &PairSpec,
    channels: Vec<Channels>,
    root: &SysRoot,
    progress: &mut dyn Progress,
) -> Result<PairRun> {
    let harness = Harness::prepare(&spec.control, spec.pairs.len(), root, progress)?;
    let ctl = &spec.control;
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
    let mut ends = Vec::with_capacity(spec.pairs.len());
    for (p, ch) in spec.pairs.iter().zip(channels) {
        let rcfg = ResponderCfg {
            cpu: p.cpu,
            policy: p.policy,
            priority: p.priority,
            mlock: ctl.mlockall && spec.fork,
            sleep_ns: if spec.kind == PairKind::Pmq {
                p.interval_us as i64 * 1000
            } else {
                0
            },
            timeout_ns: spec.timeout.map(crate::duration::as_nanos_i64),
            trim_stack: !spec.fork,
        };
        ends.push(match ch {
            Channels::Pipe { fwd, bwd } if spec.fork => {
                let buf = MsgBuf::new(spec.msg_size);
                let pid = match fork_responder(fwd.0, bwd.1, rcfg, buf, &all_fds) {
                    Ok(pid) => pid,
                    Err(e) => {
                        reap(&children, true);
                        return Err(e);
                    }
                };
                children.push(pid);
                harness.live(p.index).peer_tid.store(pid as i64, Relaxed);
                Ends::Forked(fwd.1, bwd.0)
            }
            Channels::Pipe { fwd, bwd } => Ends::Pipes(fwd, bwd, rcfg),
            Channels::Mq(test, sync) => Ends::Mq(test, sync, rcfg),
        });
    }
    let mut senders = Vec::with_capacity(spec.pairs.len());
    let mut responders = Vec::new();
    for (p, e) in spec.pairs.iter().zip(ends) {
        let rname = format!("rtbench-R{}", p.index);
        let shared = Arc::clone(harness.shared());
        let forked = matches!(e, Ends::Forked(..));
        let size = spec.msg_size;
        let sender_ends = match e {
            Ends::Mq(test, sync, rcfg) => {
                let (t2, s2) = (Arc::clone(&test), Arc::clone(&sync));
                responders.push(spawn(rname, move || {
                    // Woken (EINTR) when the run stops, so a long -i ends at once.
                    shared.register_sleeper();
                    let _ = respond(&s2, &t2, rcfg, &mut MsgBuf::new(size));
                })?);
                SenderEnds::Mq(test, sync)
            }
            Ends::Pipes(fwd, bwd, rcfg) => {
                let (fr, bw) = (fwd.0, bwd.1);
                responders.push(spawn(rname, move || {
                    shared.register_sleeper();
                    let _ = respond(&bw, &fr, rcfg, &mut MsgBuf::new(size));
                })?);
                SenderEnds::Pipe(fwd.1, bwd.0)
            }
            Ends::Forked(ftx, brx) => SenderEnds::Pipe(ftx, brx),
        };
        let pipe = spec.kind == PairKind::Pipe;
        senders.push(Sender {
            spec: p.clone(),
            kind: spec.kind,
            ends: sender_ends,
            duration_ns: ctl.duration.map(crate::duration::as_nanos_i64),
            force_ns: spec.force_timeout.map_or(0, crate::duration::as_nanos_i64),
            loops: ctl.loops,
            forked,
            buf: MsgBuf::new(spec.msg_size),
            result: Some(PairResult {
                spec: p.clone(),
                sender_tid: 0,
                receiver_tid: 0,
                sender_cpu: p.cpu.map_or(-1, |c| c as i64),
                receiver_cpu: p.cpu.map_or(-1, |c| c as i64),
                forward: LatencyStats::new(ctl.histogram),
                backward: pipe.then(|| LatencyStats::new(ctl.histogram)),
                round_trip: pipe.then(|| LatencyStats::new(None)),
                timeouts: 0,
                total_ns: 0,
            }),
        });
    }
    let outcome = harness.run("S", &spec.pairs, senders, progress);
    // A responder ends on STOP; one that cannot get it (a failed send) is left to
    // process exit rather than hanging the run.
    for r in responders {
        for _ in 0..responder::WAIT_POLLS {
            if r.is_finished() {
                break;
            }
            std::thread::sleep(responder::WAIT_POLL);
        }
        if r.is_finished() {
            let _ = r.join();
        }
    }
    reap(&children, false);
    let (pairs, end) = outcome?;
    Ok(PairRun {
        kind: spec.kind,
        fork: spec.fork,
        msg_size: spec.msg_size,
        pairs,
        end,
    })
}

/// Spawns a responder thread.
fn spawn<T: Send + 'static>(
    name: String,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<std::thread::JoinHandle<T>> {
    std::thread::Builder::new()
        .name(name)
        .stack_size(THREAD_STACK_BYTES)
        .spawn(f)
        .map_err(|e| {
            let cause = e.raw_os_error().and_then(|n| {
                refusal::memory::new_task(&SysRoot::host(), n, THREAD_STACK_BYTES as u64)
            });
            Error::refused("spawning a pair thread", e, cause)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_follow_pipe_buf_and_msgsize_max() {
        assert_eq!(msg_size_range(PairKind::Pipe, &SysRoot::host()), 32..=4096);
        let dir = std::env::temp_dir().join(format!("rtbench-msgsize-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("proc/sys/fs/mqueue")).unwrap();
        let fake = SysRoot::at(dir.clone());
        assert_eq!(
            msg_size_range(PairKind::Pmq, &fake),
            32..=transport::MQ_HARD_MSGSIZE_MAX
        );
        std::fs::write(dir.join("proc/sys/fs/mqueue/msgsize_max"), "8192\n").unwrap();
        assert_eq!(msg_size_range(PairKind::Pmq, &fake), 32..=8192);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! The one harness that runs measuring threads, for the cyclic test and the pair tests:
//! prepare the process ([`RunControl`]: mlockall, PM QoS, main-thread CPUs), start every
//! thread (pinned, prioritised and pre-faulted inside the thread before its first
//! sample), wait until all are set up, start them together at a barrier, supervise
//! (signals, live progress, `-b`), join them and say how the run ended ([`RunEnd`]).
//!
//! Signals: SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 and SIGCONT are blocked before any
//! measuring thread is spawned (threads inherit the mask) and taken by the main thread
//! with `sigtimedwait(2)` ([`crate::sys::signals`]): INT, TERM and HUP stop the run
//! (its results are written as after its end), USR1 asks for the status, USR2 for a
//! snapshot ([`Progress::snapshot`]), CONT says the process had been stopped
//! ([`Progress::continued`]). A stop wakes sleeping measuring threads
//! with [`wake_signal`](super::shared::wake_signal), whose handler does nothing, so a long `clock_nanosleep` or
//! blocking receive returns EINTR at once and the thread sees the stop flag.

use super::breaktrace::{BreakInfo, BreakTrace};
use super::shared::Shared;
use super::stats::{LiveSnapshot, LiveStats};
use super::{RunControl, ThreadSpec, PREFAULT_STACK_BYTES, THREAD_STACK_BYTES};
use crate::error::{exit, Error, Result};
use crate::explain::explainer::{ExplainSpec, ExplainSummary, Explainer, ThreadInfo};
use crate::explain::recorder::Trap;
use crate::explain::Explanation;
use crate::sys::clock::Clock;
use crate::sys::pmqos::PmQosHolder;
use crate::sys::signals::Signals;
use crate::sys::{refusal, sched, SysRoot};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the supervisor looks at its threads and signals.
const POLL: Duration = Duration::from_millis(50);

/// What a run tells the person running it while it runs.
pub trait Progress {
    /// Called every report period with each thread's live figures (**ns**).
    fn report(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]);
    /// Called on SIGUSR1.
    fn status(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]);
    /// Called on SIGUSR2, rt-tests' snapshot signal (`get_cyclictest_snapshot`).
    /// Default: the status, as on SIGUSR1; the run carries on either way.
    fn snapshot(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]) {
        self.status(threads, live);
    }
    /// Called on SIGCONT: the process had most likely been stopped (SIGSTOP, SIGTSTP:
    /// a Ctrl-Z, a debugger), so the samples that spanned the stop are late by the time
    /// it stood still, not by the system's latency (anyone may send SIGCONT to a running
    /// process too, so it is no proof). Default: one [`Progress::warning`] that says so
    /// (with `-b`/`--explain` the explanation names such a sample `stopped` from the
    /// trace).
    fn continued(&mut self) {
        self.warning(CONTINUED);
    }
    /// A fact about the run's setup (e.g. `# /dev/cpu_dma_latency set to 0us`, which
    /// cyclictest prints on standard output).
    fn notice(&mut self, line: &str);
    /// Something that may make the figures worse.
    fn warning(&mut self, line: &str);
    /// A sample over its explain threshold, explained (main thread, as it is found).
    /// Default: nothing (the run's [`RunEnd::explained`] keeps them).
    fn explained(&mut self, e: &Explanation) {
        let _ = e;
    }
    /// Asked after every look of the recorder: true sets the explain thresholds back
    /// to their configured values (a new window of the monitor, whose explanations
    /// are of each window's new maxima). Default: never.
    fn reset_explain(&mut self) -> bool {
        false
    }
    /// Called at every look of the main thread (at least every 50 ms) and once after
    /// the threads returned: `-v` prints the samples stored since. True stops the run
    /// as the duration's end would (standard output's reader is gone). Default:
    /// nothing, false.
    fn drain(&mut self) -> bool {
        false
    }
    /// Asked after every report period: true stops the run as the duration's end
    /// would (the monitor, whose log output is gone). Default: never.
    fn wants_stop(&mut self) -> bool {
        false
    }
}

/// The warning of [`Progress::continued`]'s default.
pub const CONTINUED: &str = "# rtbench: warning: SIGCONT received: if the process was \
stopped (SIGSTOP, SIGTSTP), the samples across the stop are late by the time it stood still, \
not by the system's latency";

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StopCause {
    /// Duration or loop count reached.
    Completed,
    /// A sample exceeded the `-b` break threshold.
    Break,
    /// SIGINT (exit 130).
    Sigint,
    /// SIGTERM (exit 143).
    Sigterm,
    /// SIGHUP, the terminal or session went away (exit 129).
    Sighup,
}

impl StopCause {
    /// The signal that ended the run, as kill(1) names it (`SIGINT`), or `None` when no
    /// signal did.
    pub fn signal_name(self) -> Option<&'static str> {
        match self {
            StopCause::Sigint => Some("SIGINT"),
            StopCause::Sigterm => Some("SIGTERM"),
            StopCause::Sighup => Some("SIGHUP"),
            _ => None,
        }
    }

    /// Whether the run was cut short by a signal.
    pub fn interrupted(self) -> bool {
        matches!(
            self,
            StopCause::Sigint | StopCause::Sigterm | StopCause::Sighup
        )
    }

    /// The exit code of a measuring command that ended this way: 0, 1 for `-b`,
    /// 130/143/129 for SIGINT/SIGTERM/SIGHUP (see [`crate::error::exit`]).
    pub fn exit_code(self) -> i32 {
        match self {
            StopCause::Completed => exit::OK,
            StopCause::Break => exit::FAIL,
            StopCause::Sigint => exit::INTERRUPTED,
            StopCause::Sigterm => exit::TERMINATED,
            StopCause::Sighup => exit::HANGUP,
        }
    }

    /// The exit code when rtbench was called by an rt-tests program's name
    /// (`cyclictest`, `pmqtest`; docs/COMPAT.md): 0 however the run ended, as
    /// cyclictest 2.4 and pmqtest 2.4 exit 0 after SIGINT, SIGTERM and `-b` (their signal
    /// handler only sets the shutdown flag; measured side by side in
    /// tests/cli/harness_compat.rs). After SIGHUP too, which kills rt-tests 2.4 (129,
    /// nothing written): rtbench writes its results, and a harness reads them as after
    /// SIGTERM. A harness that treats a non-zero status as a crash
    /// (rteval stops cyclictest with SIGINT) reads the same status as from the real tool.
    pub fn exit_code_as_rt_tests(self) -> i32 {
        exit::OK
    }
}

/// How a run ended, for every output: why, what `-b` caught, the PM QoS value held,
/// the wall-clock start and end, and what the flight recorder explained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunEnd {
    /// Why the run ended.
    pub stop: StopCause,
    /// Set when `-b` fired.
    pub break_info: Option<BreakInfo>,
    /// The PM QoS value held during the run, in **µs**, if any.
    pub pm_qos_us: Option<i32>,
    /// Wall-clock start, seconds since the epoch.
    pub start_wall_s: i64,
    /// Wall-clock end, seconds since the epoch.
    pub end_wall_s: i64,
    /// The explained samples, when the run explained any (`RunControl::explain`); why
    /// nothing could be explained is in its notes.
    pub explained: Option<ExplainSummary>,
    /// Why the run asked for explanations and got none: the flight recorder could not
    /// start (`cannot explain: …`, e.g. a read-only tracefs, no permission).
    pub explain_unavailable: Option<String>,
}

impl RunEnd {
    /// What the stored results keep of the recorder: [`RunEnd::explained`], or, when
    /// it could not start, an empty summary that says why
    /// ([`ExplainSummary::unavailable`]), so a failed maximum without a cause says why.
    pub fn explain_summary(&self) -> Option<ExplainSummary> {
        self.explained.clone().or_else(|| {
            self.explain_unavailable.as_ref().map(|why| ExplainSummary {
                unavailable: Some(why.clone()),
                ..ExplainSummary::default()
            })
        })
    }

    /// The exit code of a measuring command (see [`StopCause::exit_code`]).
    pub fn exit_code(&self) -> i32 {
        self.stop.exit_code()
    }
}

/// What a measuring thread has to measure with: the run's shared state, its live
/// counters and the `-b` trace, if any.
pub struct ThreadCtx {
    /// Stop flag and start barrier.
    pub shared: Arc<Shared>,
    /// This thread's published figures.
    pub live: Arc<LiveStats>,
    /// `-b`.
    pub breaks: Option<Arc<BreakTrace>>,
    /// The flight recorder's trap (thresholds `u64::MAX` when nothing is explained).
    pub trap: Arc<Trap>,
    /// This thread's slot in the trap.
    pub slot: usize,
}

impl ThreadCtx {
    /// The sample's explain threshold, **ns** (one relaxed load per sample).
    #[inline(always)]
    pub fn explain_threshold_ns(&self) -> u64 {
        self.explain_threshold()
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The threshold itself (**ns**), for a loop that looks it up once and then loads
    /// it each sample (one relaxed load, no index).
    pub fn explain_threshold(&self) -> &std::sync::atomic::AtomicU64 {
        &self.trap.slot(self.slot).threshold_ns
    }

    /// A sample over [`ThreadCtx::explain_threshold_ns`]: freezes the recorder (see
    /// [`Trap::trip`]). `timer_ns` is the deadline (or send time), `wake_ns` the clock
    /// read, both in the thread's clock; `cpu` the CPU the thread is pinned to (an
    /// unpinned thread asks `sched_getcpu(3)`, off the hot path).
    #[cold]
    #[inline(never)]
    pub fn trip(&self, timer_ns: i64, wake_ns: i64, cpu: Option<usize>) {
        // SAFETY: sched_getcpu has no arguments.
        let cpu = cpu.unwrap_or_else(|| unsafe { libc::sched_getcpu() }.max(0) as usize);
        self.trap.trip(self.slot, timer_ns, wake_ns, cpu);
    }
}

/// One measuring thread's work. The harness runs it on a thread of its own that is
/// already pinned, prioritised and pre-faulted as its [`ThreadSpec`] says.
pub trait Worker: Send + 'static {
    /// What the thread hands back.
    type Output: Send + 'static;
    /// More setup before the start barrier (e.g. waiting for a pair's responder).
    /// An error ends the run before the first sample.
    fn setup(&mut self, ctx: &ThreadCtx) -> Result<()> {
        let _ = ctx;
        Ok(())
    }
    /// Runs after the start barrier; `measure` is false when the run was stopped
    /// before it began (a setup error elsewhere, a signal).
    fn run(self, ctx: &ThreadCtx, measure: bool) -> Result<Self::Output>;
}

/// Pins, prioritises and pre-faults the calling thread (in this order, as cyclictest
/// does). A refusal is an error: never a silent SCHED_OTHER fallback.
fn enter(spec: &ThreadSpec) -> Result<()> {
    if let Some(cpu) = spec.cpu {
        sched::set_affinity(&[cpu].into_iter().collect())?;
    }
    sched::set_scheduler(spec.policy, spec.priority)?;
    sched::prefault_stack(PREFAULT_STACK_BYTES);
    // The rest of the stack mapping is never used: give it back rather than keep it
    // locked (failure only costs memory).
    let _ = sched::trim_stack(PREFAULT_STACK_BYTES);
    Ok(())
}

/// Waits for the setup results of `threads` measuring threads (each sends one: its
/// error, or `None` when it is ready) and returns the first error in arrival order.
/// A thread that died before sending ends the wait (the channel closes when every
/// sender is gone).
fn first_setup_error(setup_rx: &mpsc::Receiver<Option<Error>>, threads: usize) -> Option<Error> {
    let mut first_err = None;
    for _ in 0..threads {
        match setup_rx.recv() {
            Ok(Some(e)) => {
                first_err.get_or_insert(e);
            }
            Ok(None) => {}
            Err(_) => break,
        }
    }
    first_err
}

/// Joins every measuring thread, in thread order: the outputs of those that returned
/// one, and the first error (a worker's own, or [`Error::Refused`] for a thread that
/// panicked). Every thread is joined whatever the others returned.
fn join_all<T>(handles: Vec<JoinHandle<Result<T>>>) -> (Vec<T>, Option<Error>) {
    let mut outputs = Vec::with_capacity(handles.len());
    let mut run_err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(o)) => outputs.push(o),
            Ok(Err(e)) => {
                run_err.get_or_insert(e);
            }
            Err(_) => {
                run_err.get_or_insert(Error::refused(
                    "a measuring thread",
                    std::io::Error::other("panicked"),
                    None,
                ));
            }
        }
    }
    (outputs, run_err)
}

/// A prepared run: the process is set up, the threads are not started yet.
pub struct Harness {
    signals: Signals,
    shared: Arc<Shared>,
    live: Vec<Arc<LiveStats>>,
    breaks: Option<Arc<BreakTrace>>,
    pm_qos: Option<PmQosHolder>,
    report_every: Option<Duration>,
    start_wall_s: i64,
    root: SysRoot,
    explain: Option<ExplainSpec>,
    trap: Arc<Trap>,
    /// Why the flight recorder could not start.
    explain_unavailable: Option<String>,
}

impl Harness {
    /// Prepares the process for `threads` measuring threads in cyclictest's order:
    /// `mlockall` (when asked), the `/dev/cpu_dma_latency` request (held until the
    /// run ends), the main thread's CPUs; opens the `-b` trace files; blocks the
    /// signals the supervisor takes.
    ///
    /// Errors: [`Error::Refused`] when mlockall or the main thread's affinity is
    /// refused. A PM QoS request that cannot be made is only a warning, as in cyclictest.
    pub fn prepare(
        control: &RunControl,
        threads: usize,
        root: &SysRoot,
        progress: &mut dyn Progress,
    ) -> Result<Harness> {
        if control.mlockall {
            sched::lock_memory()?;
        }
        let pm_qos = match control.pm_qos_us {
            Some(us) => match PmQosHolder::hold(root, us) {
                Ok(h) => {
                    progress.notice(&format!("# /dev/cpu_dma_latency set to {us}us"));
                    Some(h)
                }
                Err(e) => {
                    // Out of descriptors: the limit named, as for a refusal.
                    let cause = e
                        .raw_os_error()
                        .and_then(|n| refusal::files::descriptors(root, n, 1))
                        .map(|c| format!("; {}", c.text))
                        .unwrap_or_default();
                    progress.warning(&format!(
                        "# /dev/cpu_dma_latency not set ({e}{cause}); C-state exits may add latency"
                    ));
                    None
                }
            },
            None => None,
        };
        if let Some(cpus) = &control.main_cpus {
            sched::set_affinity(cpus)?;
        }
        let breaks = control
            .break_ns
            .map(|ns| Arc::new(BreakTrace::open(root, ns, control.tracemark)));
        let signals = Signals::block();
        Ok(Harness {
            signals,
            shared: Arc::new(Shared::new(threads)),
            live: (0..threads)
                .map(|_| Arc::new(LiveStats::default()))
                .collect(),
            breaks,
            pm_qos,
            report_every: control.report_every,
            start_wall_s: Clock::wall_secs(),
            root: root.clone(),
            explain: control.explain.clone(),
            trap: Arc::new(Trap::idle(threads)),
            explain_unavailable: None,
        })
    }

    /// The run's shared state (for helper threads that must be woken on stop).
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Thread `i`'s live counters.
    pub fn live(&self, i: usize) -> &Arc<LiveStats> {
        &self.live[i]
    }

    /// The context a worker of thread `i` measures with.
    pub fn ctx(&self, i: usize) -> ThreadCtx {
        ThreadCtx {
            shared: Arc::clone(&self.shared),
            live: Arc::clone(&self.live[i]),
            breaks: self.breaks.clone(),
            trap: Arc::clone(&self.trap),
            slot: i,
        }
    }

    /// Starts one thread per `threads[i]` running `workers[i]`, waits until every one
    /// is set up, starts them together and supervises them until they end (duration,
    /// loops, `-b`) or SIGINT/SIGTERM/SIGHUP; SIGUSR1, SIGUSR2, SIGCONT and the report
    /// period call `progress`.
    /// Returns the workers' outputs in thread order and how the run ended.
    ///
    /// Errors: the first setup error (the run is stopped before any sample), else the
    /// first error a worker returned; a panicking thread is [`Error::Refused`].
    pub fn run<W: Worker>(
        mut self,
        name: &str,
        threads: &[ThreadSpec],
        workers: Vec<W>,
        progress: &mut dyn Progress,
    ) -> Result<(Vec<W::Output>, RunEnd)> {
        let mut explainer = self.start_explainer(threads, progress);
        let (setup_tx, setup_rx) = mpsc::channel::<Option<Error>>();
        let mut handles: Vec<JoinHandle<Result<W::Output>>> = Vec::with_capacity(threads.len());
        for (i, (t, mut w)) in threads.iter().zip(workers).enumerate() {
            let mut ctx = self.ctx(t.index);
            ctx.slot = i;
            let tx = setup_tx.clone();
            let spec = t.clone();
            let h = std::thread::Builder::new()
                .name(format!("rtbench-{name}{}", t.index))
                .stack_size(THREAD_STACK_BYTES)
                .spawn(move || {
                    ctx.live.tid.store(sched::gettid(), Ordering::Relaxed);
                    ctx.shared.register_sleeper();
                    let setup = enter(&spec).and_then(|()| w.setup(&ctx));
                    let _ = tx.send(setup.err());
                    drop(tx);
                    ctx.shared.barrier.wait();
                    let measure = !ctx.shared.stopped();
                    w.run(&ctx, measure)
                })
                .map_err(|e| {
                    let cause = e.raw_os_error().and_then(|n| {
                        refusal::memory::new_task(&SysRoot::host(), n, THREAD_STACK_BYTES as u64)
                    });
                    Error::refused("spawning a measuring thread", e, cause)
                })?;
            handles.push(h);
        }
        drop(setup_tx);
        let first_err = first_setup_error(&setup_rx, handles.len());
        if first_err.is_some() {
            self.shared.request_stop();
        }
        self.shared.barrier.wait();
        let cause = if first_err.is_none() {
            self.supervise(threads, &handles, progress, explainer.as_mut())
        } else {
            None
        };
        let (outputs, run_err) = join_all(handles);
        let pm_qos_us = self.pm_qos.as_ref().map(|h| h.latency_us);
        drop(self.pm_qos.take());
        // Samples caught in the last moments, then the recording ends (the trap's
        // files close first: the instance is removed only when none is open).
        self.trap = Arc::new(Trap::idle(0));
        let explained = explainer.map(|mut x| {
            for e in x.poll(&self.tids()) {
                progress.explained(&e);
            }
            x.finish()
        });
        if let Some(e) = first_err.or(run_err) {
            return Err(e);
        }
        let break_info = self.breaks.as_ref().and_then(|b| b.info());
        let stop = match (cause, break_info) {
            (Some(c), _) => c,
            (None, Some(_)) => StopCause::Break,
            (None, None) => StopCause::Completed,
        };
        let end = RunEnd {
            stop,
            break_info,
            pm_qos_us,
            start_wall_s: self.start_wall_s,
            end_wall_s: Clock::wall_secs(),
            explained,
            explain_unavailable: self.explain_unavailable.take(),
        };
        Ok((outputs, end))
    }

    /// The ids of the threads whose wakeups are measured, in thread order (0 until a
    /// thread has started): a pair's receiver (its peer), else the thread itself.
    fn tids(&self) -> Vec<i32> {
        self.live
            .iter()
            .map(|l| match l.peer_tid.load(Ordering::Relaxed) {
                0 => l.tid.load(Ordering::Relaxed),
                p => p as i32,
            })
            .collect()
    }

    /// The flight recorder for `threads` when the run explains samples; a recorder
    /// that cannot start is one warning (`# cannot explain: …`) and the run goes on.
    fn start_explainer(
        &mut self,
        threads: &[ThreadSpec],
        progress: &mut dyn Progress,
    ) -> Option<Explainer> {
        let spec = self.explain.as_ref()?;
        let info = threads
            .iter()
            .map(|t| ThreadInfo {
                test: spec.test.clone(),
                thread: t.index,
                cpu: t.cpu,
                prio: if t.policy.is_realtime() {
                    99 - t.priority
                } else {
                    120
                },
                kind: spec.kind,
                realtime: spec.realtime,
            })
            .collect();
        let all = sched::get_affinity().unwrap_or_default();
        match Explainer::start(&self.root, spec, info, &all) {
            Ok(x) => {
                for r in &x.reclaimed().removed {
                    progress.warning(&format!(
                        "# tracefs instance {r} of an rtbench that is gone removed"
                    ));
                }
                let left = &x.reclaimed().left;
                if !left.is_empty() {
                    progress.warning(&format!(
                        "# tracefs instances named like a gone rtbench's left alone, \
                         not provably rtbench's: {}",
                        left.join(", ")
                    ));
                }
                self.trap = x.trap();
                Some(x)
            }
            Err(why) => {
                progress.warning(&format!("# cannot explain: {why}"));
                self.explain_unavailable = Some(why);
                None
            }
        }
    }

    /// The supervision loop on the main thread, until every measuring thread has
    /// returned: SIGINT/SIGTERM/SIGHUP stop the run, SIGUSR1 asks for a status, SIGUSR2
    /// for a snapshot, SIGCONT notes a stop, and every report period gives live
    /// progress. Returns the signal that stopped the run.
    fn supervise<T>(
        &self,
        threads: &[ThreadSpec],
        handles: &[JoinHandle<T>],
        progress: &mut dyn Progress,
        mut explainer: Option<&mut Explainer>,
    ) -> Option<StopCause> {
        let shared = &self.shared;
        let snapshot = || self.live.iter().map(|l| l.snapshot()).collect::<Vec<_>>();
        let mut cause = None;
        let mut next_report = self.report_every.map(|d| Instant::now() + d);
        while !handles.iter().all(|h| h.is_finished()) {
            let mut wait = POLL;
            if let Some(t) = next_report {
                wait = wait.min(t.saturating_duration_since(Instant::now()));
            }
            if shared.stopped() {
                // A thread may have checked the flag just before the first wake and
                // gone back to sleep: wake again until every thread has returned.
                shared.wake_sleepers();
            }
            match self.signals.wait(wait) {
                Some(libc::SIGINT) => {
                    cause.get_or_insert(StopCause::Sigint);
                    shared.request_stop();
                }
                Some(libc::SIGTERM) => {
                    cause.get_or_insert(StopCause::Sigterm);
                    shared.request_stop();
                }
                Some(libc::SIGHUP) => {
                    cause.get_or_insert(StopCause::Sighup);
                    shared.request_stop();
                }
                Some(libc::SIGUSR1) => progress.status(threads, &snapshot()),
                Some(libc::SIGUSR2) => progress.snapshot(threads, &snapshot()),
                // Once a stop is decided, a SIGCONT is the sender's follow-up, not news
                // of a stop: timeout(1) and systemd (`systemctl stop`) send SIGCONT right
                // after SIGTERM so that a stopped process can act on it.
                Some(libc::SIGCONT) if !shared.stopped() => {
                    if let Some(x) = explainer.as_mut() {
                        x.sigcont();
                    }
                    progress.continued();
                }
                _ => {}
            }
            if progress.drain() && !shared.stopped() {
                shared.request_stop();
            }
            if let Some(x) = explainer.as_mut() {
                for e in x.poll(&self.tids()) {
                    progress.explained(&e);
                }
                if progress.reset_explain() {
                    x.reset_thresholds();
                }
            }
            if let (Some(t), Some(every)) = (next_report, self.report_every) {
                if Instant::now() >= t && !shared.stopped() {
                    progress.report(threads, &snapshot());
                    next_report = Some(t + every);
                    if progress.wants_stop() {
                        shared.request_stop();
                    }
                }
            }
        }
        let _ = progress.drain();
        cause
    }
}

//! The main thread's side of the flight recorder: every look of the supervisor
//! ([`Explainer::poll`], about every 50 ms) takes the samples the threads caught,
//! reads each CPU's frozen window once, analyses every sample in it, and re-arms the
//! recorder; the measurement goes on meanwhile.
//!
//! Each explained sample raises its thread's threshold to itself — unless its cause is not the system's latency (stopped,
//! throttled: so every later real sample over the limit is still explained, and the
//! verdict never excuses one it did not see) —: only new maxima over the limit are
//! explained, so analyses
//! are rare, the recorder is armed almost always, and a run ends with its maximum
//! explained unless the recorder was frozen for another sample at that moment (a
//! sample that finds it frozen is counted as missed). [`Explainer::reset_thresholds`]
//! lowers them again (the monitor's windows). The run keeps the [`ExplainSpec::keep`] largest explanations and counts
//! all of them by cause.

#[cfg(feature = "explain")]
use super::analyse::{analyse, Context};
use super::counters::KernelLine;
#[cfg(feature = "explain")]
use super::counters::{wall_offset_ns, Counters};
#[cfg(feature = "explain")]
use super::recorder::{Caught, Recorder, RecorderSpec, Trap};
#[cfg(feature = "explain")]
use super::Spike;
use super::{CauseKind, Explanation, SpikeKind};
#[cfg(feature = "explain")]
use crate::cpuset::CpuSet;
#[cfg(feature = "explain")]
use crate::sys::SysRoot;
use serde::{Deserialize, Serialize};
#[cfg(feature = "explain")]
use std::sync::atomic::Ordering;
#[cfg(feature = "explain")]
use std::sync::Arc;
#[cfg(feature = "explain")]
use std::time::Instant;

#[cfg(feature = "explain")]
mod account;
#[cfg(not(feature = "explain"))]
mod disabled;
/// Without the `explain` feature (Cargo.toml) there is no flight recorder: its
/// [`Explainer::start`](disabled::Explainer::start) says so, and every run goes on
/// unexplained.
#[cfg(not(feature = "explain"))]
pub use disabled::Explainer;

/// Explanations kept per run by default (the largest); the counts go on past it.
pub const DEFAULT_KEEP: usize = 16;

/// Lines of trace kept for the largest explained sample.
pub const EXCERPT_LINES: usize = 160;

/// What to explain, decided by the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplainSpec {
    /// The test's name in explanations (`cyclic`, `monitor`, `pmq`, `pipe`).
    pub test: String,
    /// What wakes its threads.
    pub kind: SpikeKind,
    /// The threads sleep on CLOCK_REALTIME.
    pub realtime: bool,
    /// Per measuring thread (or pair), in thread order: samples above this many **ns**
    /// are explained (`u64::MAX`: never).
    pub thresholds_ns: Vec<u64>,
    /// Ring buffer per CPU, **KiB**.
    pub buffer_kib: u32,
    /// Run the timerlat tracer beside the recorder for a second opinion.
    pub timerlat: bool,
    /// Explanations kept, the largest (the counts go on).
    pub keep: usize,
    /// Keep the cause ledger ([`super::ledger`]): every sample over a threshold is
    /// analysed (at most [`ExplainSpec::analyses_per_s`] a second per CPU) or counted
    /// as not analysed, and thresholds stay where they are. Without it (the monitor)
    /// an explained sample raises its thread's threshold: only new maxima.
    pub ledger: bool,
    /// With the ledger: analyses at most per second per CPU.
    pub analyses_per_s: u32,
}

impl ExplainSpec {
    /// `test`'s threads of `kind` explained above `thresholds_ns` (**ns**, per thread),
    /// with the defaults: monotonic clock, [`super::recorder::DEFAULT_BUFFER_KIB`], no
    /// timerlat, [`DEFAULT_KEEP`] kept.
    pub fn new(test: &str, kind: SpikeKind, thresholds_ns: Vec<u64>) -> ExplainSpec {
        ExplainSpec {
            test: test.to_string(),
            kind,
            realtime: false,
            thresholds_ns,
            buffer_kib: super::recorder::DEFAULT_BUFFER_KIB,
            timerlat: false,
            keep: DEFAULT_KEEP,
            ledger: true,
            analyses_per_s: super::ledger::ANALYSES_PER_SECOND,
        }
    }
}

/// Who a measuring thread is, for its explanations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Test name.
    pub test: String,
    /// Thread or pair index.
    pub thread: usize,
    /// Pinned CPU, if any.
    pub cpu: Option<usize>,
    /// Kernel priority (see [`Spike::prio`]).
    pub prio: i32,
    /// Timer or message.
    pub kind: SpikeKind,
    /// Its clock is CLOCK_REALTIME (deadlines are converted to CLOCK_MONOTONIC).
    pub realtime: bool,
}

/// What a run's recorder found, for results and reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ExplainSummary {
    /// The explanations kept (the largest samples), in the order found.
    pub explained: Vec<Explanation>,
    /// Explained samples per cause kind (also those not kept), in the order of
    /// [`CauseKind::ALL`].
    pub counts: std::collections::BTreeMap<CauseKind, u64>,
    /// Samples over a threshold not explained because the recorder was busy with
    /// another one.
    pub missed: u64,
    /// The longest analysis of one frozen window, **ms**.
    pub analysis_max_ms: u64,
    /// The trace around the largest explained sample, as the kernel rendered it (at
    /// most [`EXCERPT_LINES`] lines: the first of its window and the last before the
    /// wakeup), for `rtbench diagnose` and a reader who wants to see for himself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excerpt: Vec<String>,
    /// Kernel log lines of the run (wall-clock stamped).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_lines: Vec<KernelLine>,
    /// Limits of the recording (events the kernel lacks, timerlat unavailable).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Why nothing was recorded: the recorder could not start (`tracefs … read-only`,
    /// no permission); nothing else in the summary is then set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Per measuring thread that tripped: what the verdict needs to excuse a maximum
    /// as invalid, also for explanations not kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadTally>,
    /// Every sample over a threshold by cause, and those not analysed by reason
    /// (runs with [`ExplainSpec::ledger`]); absent in results of older versions.
    #[serde(default, skip_serializing_if = "super::ledger::Ledger::is_empty")]
    pub ledger: super::ledger::Ledger,
}

/// One thread's explained samples, summed up for the verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ThreadTally {
    /// Test name.
    pub test: String,
    /// Thread or pair index.
    pub thread: usize,
    /// The largest sample whose explanation does not make it invalid (a cause that is
    /// the system's latency, unknown, or untraced), **ns**; 0 when none.
    pub largest_valid_ns: u64,
    /// Samples over its threshold not explained because the recorder was busy.
    pub missed: u64,
    /// Its configured threshold, **ns**: samples below it were never looked at.
    #[serde(default)]
    pub threshold_ns: u64,
}

impl ExplainSummary {
    /// How many samples were explained (kept or not).
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// The tally of thread `thread` of `test`, if it tripped.
    pub fn tally(&self, test: &str, thread: usize) -> Option<&ThreadTally> {
        self.threads
            .iter()
            .find(|t| t.test == test && t.thread == thread)
    }

    /// Whether every sample of thread `thread` of `test` over `limit_ns` was looked at
    /// (its threshold is not above the limit), explained, and explained as not the
    /// system's latency: the largest valid explanation is within the limit and no
    /// sample was missed. Only then may a maximum over the limit be called invalid
    /// (fail closed).
    pub fn only_invalid_over(&self, test: &str, thread: usize, limit_ns: u64) -> bool {
        self.tally(test, thread).is_some_and(|t| {
            t.threshold_ns <= limit_ns && t.largest_valid_ns <= limit_ns && t.missed == 0
        })
    }

    /// The explanation of thread `thread` of `test` with the largest sample.
    pub fn largest(&self, test: &str, thread: usize) -> Option<&Explanation> {
        self.explained
            .iter()
            .filter(|e| e.spike.test == test && e.spike.thread == thread)
            .max_by_key(|e| e.spike.latency_ns())
    }
}

/// The recorder of one run and what it found so far.
#[cfg(feature = "explain")]
pub struct Explainer {
    root: SysRoot,
    recorder: Recorder,
    threads: Vec<ThreadInfo>,
    tids: Vec<i32>,
    counters: Counters,
    base: Vec<u64>,
    keep: usize,
    continued_at: Vec<i64>,
    /// When the recording last resumed (CLOCK_MONOTONIC **ns**): a sample whose
    /// deadline is earlier fell into the gap of the freeze before it.
    resumed_ns: i64,
    /// The largest explained sample so far, **ns** (its excerpt is kept).
    largest_ns: u64,
    /// The recording's freezes so far, the newest 32: CLOCK_MONOTONIC **ns** `(frozen,
    /// resumed)`.
    freezes: Vec<(i64, i64)>,
    /// rtbench's own threads seen so far (at the last look after the run they are
    /// gone from `/proc/self/task`).
    own_tids: Vec<i32>,
    summary: ExplainSummary,
    /// [`ExplainSpec::ledger`].
    ledger_on: bool,
    /// Per slot: held busy by the rate limit (its trap counts, never freezes).
    held: Vec<bool>,
    /// Per slot: the CPU of its held sample.
    held_on: Vec<usize>,
    /// Per slot: samples caught and not analysed (the rate limit): missed too.
    rate_limited: Vec<u64>,
    /// Per slot: the trap's missed count and latency sum already in the ledger.
    missed_seen: Vec<(u64, u64)>,
    /// Per slot: its largest analysed sample, **ns** (a larger one passes the rate
    /// limit).
    largest_of: Vec<u64>,
    /// The rate limit of the analyses ([`ExplainSpec::analyses_per_s`] per CPU).
    pace: super::ledger::Pace,
}

/// The frozen recording a look analyses: who froze it, when (CLOCK_MONOTONIC **ns**),
/// and when it had last resumed before (a deadline earlier than that was not recorded).
#[cfg(feature = "explain")]
struct Window {
    by: usize,
    frozen_mono: i64,
    resumed_before: i64,
}

#[cfg(feature = "explain")]
impl Explainer {
    /// Starts the recorder for `threads` as `spec` says.
    ///
    /// Errors: why nothing can be explained (one line: no tracefs, no permission, an
    /// event missing); the measurement then runs without it.
    pub fn start(
        root: &SysRoot,
        spec: &ExplainSpec,
        threads: Vec<ThreadInfo>,
        all_cpus: &CpuSet,
    ) -> Result<Explainer, String> {
        let cpus: CpuSet = if threads.iter().all(|t| t.cpu.is_some()) {
            threads.iter().filter_map(|t| t.cpu).collect()
        } else {
            all_cpus.clone()
        };
        let recorder = Recorder::start(
            root,
            &RecorderSpec {
                cpus,
                buffer_kib: spec.buffer_kib,
                timerlat: spec.timerlat,
            },
            threads.len(),
        )?;
        for (i, t) in spec.thresholds_ns.iter().enumerate().take(threads.len()) {
            recorder
                .trap()
                .slot(i)
                .threshold_ns
                .store(*t, Ordering::Relaxed);
        }
        let mut notes = Vec::new();
        if let Some(w) = &recorder.timerlat_unavailable {
            notes.push(format!("timerlat: {w}"));
        }
        if !recorder.missing.is_empty() {
            notes.push(format!(
                "events this kernel lacks: {}",
                recorder.missing.join(", ")
            ));
        }
        let threads_n = threads.len();
        Ok(Explainer {
            root: root.clone(),
            tids: vec![0; threads.len()],
            threads,
            counters: Counters::start(root),
            base: spec.thresholds_ns.clone(),
            keep: spec.keep,
            continued_at: Vec::new(),
            resumed_ns: 0,
            largest_ns: 0,
            own_tids: Vec::new(),
            freezes: Vec::new(),
            summary: ExplainSummary {
                notes,
                ledger: super::ledger::Ledger::new(spec.analyses_per_s),
                ..ExplainSummary::default()
            },
            ledger_on: spec.ledger,
            held: vec![false; threads_n],
            held_on: vec![0; threads_n],
            rate_limited: vec![0; threads_n],
            missed_seen: vec![(0, 0); threads_n],
            largest_of: vec![0; threads_n],
            pace: super::ledger::Pace::new(spec.analyses_per_s),
            recorder,
        })
    }

    /// The trap the measuring threads trip.
    pub fn trap(&self) -> Arc<Trap> {
        Arc::clone(self.recorder.trap())
    }

    /// The instances of crashed rtbench processes removed at the start.
    pub fn reclaimed(&self) -> &crate::sys::tracefs::Reclaim {
        &self.recorder.reclaimed
    }

    /// Notes that SIGCONT reached the process now: it had been stopped. The newest 64
    /// are kept.
    pub fn sigcont(&mut self) {
        if self.continued_at.len() >= 64 {
            self.continued_at.remove(0);
        }
        self.continued_at
            .push(crate::sys::clock::Clock::Monotonic.now_ns());
    }

    /// Sets every thread's threshold back to its configured value.
    pub fn reset_thresholds(&self) {
        for (i, t) in self.base.iter().enumerate() {
            self.recorder
                .trap()
                .slot(i)
                .threshold_ns
                .store(*t, Ordering::Relaxed);
        }
    }

    /// One look: counters, then the samples caught since the last look, each
    /// explained. `tids` are the measuring threads' ids in thread order (0 for one not
    /// started yet).
    ///
    /// With the ledger ([`ExplainSpec::ledger`]) every sample over a threshold is
    /// accounted for: the trap's counts of samples it could not record are added first,
    /// a sample over the CPU's rate limit is counted and its slot held (the thread's
    /// later samples are counted by its trap, without a freeze), and the recorder is
    /// re-armed as soon as the frozen windows are read, before the analysis.
    pub fn poll(&mut self, tids: &[i32]) -> Vec<Explanation> {
        for (i, t) in tids.iter().enumerate().take(self.tids.len()) {
            if *t != 0 {
                self.tids[i] = *t;
            }
        }
        self.counters.look();
        // rtbench's own threads (measuring, senders, main, load), gathered at every look
        // while they live: the last look comes after they have ended.
        for t in own_tids().into_iter().chain(self.tids.iter().copied()) {
            if t != 0 && !self.own_tids.contains(&t) {
                self.own_tids.push(t);
            }
        }
        self.count_missed();
        self.release_held();
        let caught = self.recorder.trap().take(&self.held);
        if caught.is_empty() {
            return Vec::new();
        }
        let t0 = Instant::now();
        let window = Window {
            by: self.recorder.trap().frozen().0,
            frozen_mono: self.frozen_mono(),
            resumed_before: self.resumed_ns,
        };
        let caught = self.admit(caught);
        self.counters.look_cgroup(&self.root);
        let texts = self.read_frozen(&caught);
        // The ledger counts every sample: record the next one while this one is analysed.
        let early = self.ledger_on.then(|| self.resume(&caught));
        let out = self.explain_all(&caught, &texts, &window);
        for (slot, e) in &out {
            *self.summary.counts.entry(e.cause.kind).or_insert(0) += 1;
            self.tally(e);
            self.account(*slot, e);
            // Raised before the slots are free and the recorder re-armed, so the same
            // thread cannot freeze it again on a smaller sample. Not by a sample that
            // is not the system's latency: a real one after it, even smaller, must
            // still be seen (and the verdict excuses nothing it did not see).
            if e.cause.valid && !self.ledger_on {
                let slot = self.recorder.trap().slot(*slot);
                slot.threshold_ns
                    .fetch_max(e.spike.latency_ns(), Ordering::Relaxed);
            }
            self.keep_largest(e);
        }
        let resumed = early.unwrap_or_else(|| self.resume(&caught));
        // Recording again from here (after the write returned): an earlier deadline
        // fell into the freeze.
        self.resumed_ns = resumed;
        if self.freezes.len() >= 32 {
            self.freezes.remove(0);
        }
        self.freezes.push((window.frozen_mono, resumed));
        let ms = t0.elapsed().as_millis() as u64;
        self.summary.analysis_max_ms = self.summary.analysis_max_ms.max(ms);
        out.into_iter().map(|(_, e)| e).collect()
    }

    /// The frozen text of each CPU of `caught`, read once per CPU.
    fn read_frozen(&self, caught: &[Caught]) -> Vec<(usize, std::io::Result<String>)> {
        let mut cpus: Vec<usize> = caught.iter().map(|c| c.cpu).collect();
        cpus.sort_unstable();
        cpus.dedup();
        cpus.into_iter()
            .map(|cpu| (cpu, self.recorder.read_cpu(cpu)))
            .collect()
    }

    /// Frees the slots of `caught` and records again; returns when (CLOCK_MONOTONIC
    /// **ns**, after the write returned).
    fn resume(&mut self, caught: &[Caught]) -> i64 {
        self.recorder.trap().release(caught);
        if let Err(e) = self.recorder.rearm() {
            self.summary
                .notes
                .push(format!("the recorder could not be re-armed: {e}"));
        }
        crate::sys::clock::Clock::Monotonic.now_ns()
    }

    /// Each sample of `caught` explained from its CPU's text, with its slot.
    fn explain_all(
        &mut self,
        caught: &[Caught],
        texts: &[(usize, std::io::Result<String>)],
        w: &Window,
    ) -> Vec<(usize, Explanation)> {
        let own_tids = self.own_tids.clone();
        let mut out = Vec::with_capacity(caught.len());
        for (cpu, text) in texts {
            let cpu = *cpu;
            for c in caught.iter().filter(|c| c.cpu == cpu) {
                // For recording analysis fixtures (src/explain/analyse/tests.rs): the
                // frozen trace, through the project's writer (no link followed).
                if let (Ok(t), Some(d)) = (text, std::env::var_os("RTBENCH_DEBUG_TRACE_DIR")) {
                    let sp = self.spike(c);
                    let name = format!(
                        "cpu{cpu}-tid{}-D{}-W{}.trace",
                        sp.tid, sp.start_ns, sp.wake_ns
                    );
                    let _ = crate::sys::atomic::write(
                        &std::path::Path::new(&d).join(name),
                        t.as_bytes(),
                    );
                }
                let e = match text {
                    Ok(t) => {
                        let e = self.explain(c, t, &own_tids, w);
                        if e.cause.kind != CauseKind::Untraced
                            && self.largest_ns < e.spike.latency_ns()
                        {
                            self.largest_ns = e.spike.latency_ns();
                            self.summary.excerpt = excerpt(t, &e.spike);
                        }
                        e
                    }
                    Err(err) => {
                        self.untraced(c, format!("cannot read the trace of CPU {cpu}: {err}"))
                    }
                };
                out.push((c.thread, e));
            }
        }
        out
    }

    /// Adds `e` to its thread's tally.
    fn tally(&mut self, e: &Explanation) {
        let s = &e.spike;
        let i = match self
            .summary
            .threads
            .iter()
            .position(|t| t.test == s.test && t.thread == s.thread)
        {
            Some(i) => i,
            None => {
                let threshold_ns = self
                    .threads
                    .iter()
                    .position(|t| t.test == s.test && t.thread == s.thread)
                    .and_then(|i| self.base.get(i).copied())
                    .unwrap_or(u64::MAX);
                self.summary.threads.push(ThreadTally {
                    test: s.test.clone(),
                    thread: s.thread,
                    threshold_ns,
                    ..ThreadTally::default()
                });
                self.summary.threads.len() - 1
            }
        };
        if e.cause.valid {
            let t = &mut self.summary.threads[i];
            t.largest_valid_ns = t.largest_valid_ns.max(s.latency_ns());
        }
    }

    /// Keeps `e` if it is among the [`ExplainSpec::keep`] largest so far.
    fn keep_largest(&mut self, e: &Explanation) {
        let kept = &mut self.summary.explained;
        if kept.len() < self.keep {
            kept.push(e.clone());
            return;
        }
        if let Some((i, smallest)) = kept
            .iter()
            .enumerate()
            .min_by_key(|(_, k)| k.spike.latency_ns())
        {
            if smallest.spike.latency_ns() < e.spike.latency_ns() {
                kept.remove(i);
                kept.push(e.clone());
            }
        }
    }

    fn spike(&self, c: &Caught) -> Spike {
        let t = &self.threads[c.thread];
        let wall = wall_offset_ns();
        let off = if t.realtime { wall } else { 0 };
        Spike {
            test: t.test.clone(),
            thread: t.thread,
            cpu: c.cpu,
            tid: self.tids[c.thread],
            prio: t.prio,
            start_ns: c.timer_ns - off,
            wake_ns: c.wake_ns - off,
            timer_ns: c.timer_ns,
            kind: t.kind,
            wall_ns: c.wake_ns - off + wall,
        }
    }

    fn explain(&self, c: &Caught, text: &str, own_tids: &[i32], w: &Window) -> Explanation {
        let spike = self.spike(c);
        if spike.start_ns < w.resumed_before {
            return self.untraced(
                c,
                format!(
                    "not recorded: the recording had stopped for an earlier sample and resumed {} after this one's deadline",
                    crate::duration::us((w.resumed_before - spike.start_ns) as u64, crate::duration::UsStyle::Text)
                ),
            );
        }
        let (by, frozen_at) = (w.by, w.frozen_mono);
        let cut = (by != c.thread && spike.wake_ns > frozen_at).then(|| {
            format!(
                "not recorded to its end: the recording stopped for another thread's sample {} before this one's wakeup",
                crate::duration::us((spike.wake_ns - frozen_at) as u64, crate::duration::UsStyle::Text)
            )
        });
        let realtime = self.threads[c.thread].realtime;
        let ctx = Context {
            own_tids: own_tids.to_vec(),
            rt_throttling: self.counters.rt_throttling(),
            cfs_throttled: self.counters.cfs_throttled(),
            clock_step: realtime
                .then(|| self.counters.step_in(spike.start_ns, spike.wake_ns))
                .flatten(),
            continued: self
                .continued_at
                .iter()
                // Taken by the supervisor at its next look: up to one poll (50 ms) and
                // an analysis after the thread woke.
                .any(|at| *at >= spike.start_ns && *at <= spike.wake_ns + 100_000_000),
            policy_of: Some(task_sched),
            unrecorded: self.freezes.clone(),
        };
        let mut e = analyse(&spike, text, &ctx);
        if let Some(why) = cut {
            // A stop of the whole process wakes every thread at once, and the first to
            // measure freezes the recording for all: the others' end is not recorded.
            // Their own stop (switched out in state T before the deadline and not run
            // again up to the freeze) is still in the recorded part, and is the cause.
            if e.cause.kind != CauseKind::Stopped {
                return self.untraced(c, why);
            }
            e.notes.push(why);
        }
        let topo = crate::sys::cpus::CpuTopology::read(&self.root);
        let role = super::advice::CpuRole {
            cpu: spike.cpu,
            isolated: topo.isolated.contains(spike.cpu),
            nohz_full: topo.nohz_full.contains(spike.cpu),
        };
        e.advice = super::advice::advice(&e, role);
        let lines = self
            .counters
            .lines_near(spike.start_ns, spike.wake_ns, 1_000_000_000);
        for l in lines {
            e.notes.push(format!("kernel: {}", l.text));
        }
        e
    }

    /// When the recording was frozen, CLOCK_MONOTONIC **ns**.
    fn frozen_mono(&self) -> i64 {
        let (by, at) = self.recorder.trap().frozen();
        if self.threads.get(by).is_some_and(|t| t.realtime) {
            at - wall_offset_ns()
        } else {
            at
        }
    }

    fn untraced(&self, c: &Caught, why: String) -> Explanation {
        let mut e = Explanation {
            spike: self.spike(c),
            ..Explanation::default()
        };
        e.cause.kind = CauseKind::Untraced;
        e.cause.valid = true;
        e.cause.text = why.clone();
        e.notes.push(why);
        e
    }

    /// Ends the recording (the instance is removed) and returns what it found.
    pub fn finish(mut self) -> ExplainSummary {
        self.count_missed();
        let mut missed = self.recorder.trap().missed();
        for (m, r) in missed.iter_mut().zip(&self.rate_limited) {
            *m += r;
        }
        self.summary.missed = missed.iter().sum();
        for (info, n) in self.threads.iter().zip(&missed) {
            if let Some(t) = self
                .summary
                .threads
                .iter_mut()
                .find(|t| t.test == info.test && t.thread == info.thread)
            {
                t.missed = *n;
            }
        }
        self.summary.kernel_lines = self.counters.kernel_lines.clone();
        self.summary
    }
}

/// The lines of `trace` from 1 ms before the sample's deadline to its wakeup; the
/// first fifth and the rest from the end when there are more than [`EXCERPT_LINES`].
#[cfg(feature = "explain")]
fn excerpt(trace: &str, s: &Spike) -> Vec<String> {
    use super::event::{parse, Line};
    let lines: Vec<&str> = trace
        .lines()
        .filter(|l| match parse(l) {
            Line::Event(e) => {
                e.cpu == s.cpu && e.ts_ns >= s.start_ns - 1_000_000 && e.ts_ns <= s.wake_ns
            }
            _ => false,
        })
        .collect();
    if lines.len() <= EXCERPT_LINES {
        return lines.iter().map(|l| l.to_string()).collect();
    }
    let head = EXCERPT_LINES / 5;
    let tail = EXCERPT_LINES - head - 1;
    let mut v: Vec<String> = lines[..head].iter().map(|l| l.to_string()).collect();
    v.push(format!("… {} lines …", lines.len() - head - tail));
    v.extend(lines[lines.len() - tail..].iter().map(|l| l.to_string()));
    v
}

/// The thread ids of this process (`/proc/self/task`).
#[cfg(feature = "explain")]
fn own_tids() -> Vec<i32> {
    std::fs::read_dir("/proc/self/task")
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The scheduling policy and kernel priority of task `pid` from `/proc/PID/stat`
/// (proc(5): field 18 `priority` is the kernel priority − 100; field 41 `policy`):
/// `("FIFO", 0)` for SCHED_FIFO 99, `("OTHER", 120)` at nice 0; `None` when it is
/// gone.
pub fn task_sched(pid: i32) -> Option<(String, i32)> {
    use crate::sys::sched::{policy_name, TaskStat};
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let t = TaskStat::parse(&stat)?;
    let prio = t.field::<i32>(18)? + 100;
    Some((policy_name(t.field(41)?)?.to_string(), prio))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_and_priority_of_this_thread_are_read() {
        let (pol, prio) = task_sched(std::process::id() as i32).unwrap();
        assert_eq!(pol, "OTHER");
        assert!((100..140).contains(&prio), "{prio}");
        assert_eq!(task_sched(-5), None);
    }
}

//! The cause ledger: every sample over a thread's explain threshold accounted for, not
//! only the new maxima. Per test and thread (its CPU), each cause — its kind and its
//! culprit's identity: a task by name, pid and start time (`/proc/PID/stat` field 22),
//! an IRQ by number and name, a softirq by vector, a kernel mechanism by what it is —
//! gets a count, the total time over the threshold, the worst sample and the first and
//! last time it was seen. A sample that was not analysed is counted under "not
//! analysed" with the reason ([`Reason`]), never dropped.
//!
//! The analysis is rate-limited: at most [`ANALYSES_PER_SECOND`] per second per CPU
//! (a new maximum of its thread is analysed all the same). Samples beyond it are
//! counted from the measuring thread's trap counters ([`super::recorder::Slot`]), which
//! cost the measuring thread nothing until a sample is over its threshold.
//!
//! Every duration here is **ns**, times are wall-clock **ns** since the epoch; the words
//! people read are [`super::text::ledger_lines`].

use super::{CauseKind, Explanation};
use serde::{Deserialize, Serialize};

/// Analyses at most per second per CPU (a sliding second); the samples over the
/// threshold beyond it are counted as "not analysed (rate limit)".
pub const ANALYSES_PER_SECOND: u32 = 4;

/// Why a sample over the threshold was not analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The thread's previous sample had frozen the recorder and was not taken yet
    /// (the recorder was being read and re-armed).
    Busy,
    /// The CPU's analyses of the last second reached [`ANALYSES_PER_SECOND`].
    RateLimit,
    /// The recording did not cover the sample (frozen for another sample, the buffer
    /// overwritten, the trace unreadable): the explanation is `untraced`.
    TraceLost,
}

impl Reason {
    /// `recorder busy`, `rate limit`, `trace lost`.
    pub fn words(self) -> &'static str {
        match self {
            Reason::Busy => "recorder busy",
            Reason::RateLimit => "rate limit",
            Reason::TraceLost => "trace lost",
        }
    }
}

/// Count, time over the threshold, worst sample, first and last time of a set of
/// samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Tally {
    /// Samples.
    pub count: u64,
    /// Their time over the threshold summed, **ns**.
    pub over_ns: u64,
    /// The largest sample, **ns** (its whole latency, not only the part over).
    pub worst_ns: u64,
    /// The first sample's wakeup, wall-clock **ns** since the epoch (for samples
    /// counted without analysis: when they were counted, within 50 ms of it).
    pub first_ns: i64,
    /// The last sample's wakeup, same clock.
    pub last_ns: i64,
}

impl Tally {
    /// `count` samples whose latencies sum to `sum_ns`, the worst `worst_ns`, over a
    /// threshold of `threshold_ns`, seen from `first_ns` to `last_ns` (wall **ns**).
    pub fn of(
        count: u64,
        sum_ns: u64,
        worst_ns: u64,
        threshold_ns: u64,
        first_ns: i64,
        last_ns: i64,
    ) -> Tally {
        Tally {
            count,
            over_ns: sum_ns.saturating_sub(count.saturating_mul(threshold_ns)),
            worst_ns,
            first_ns,
            last_ns,
        }
    }

    /// Adds `o` to this tally.
    pub fn merge(&mut self, o: &Tally) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 || o.first_ns < self.first_ns {
            self.first_ns = o.first_ns;
        }
        self.last_ns = self.last_ns.max(o.last_ns);
        self.count = self.count.saturating_add(o.count);
        self.over_ns = self.over_ns.saturating_add(o.over_ns);
        self.worst_ns = self.worst_ns.max(o.worst_ns);
    }
}

/// Who or what a cause is: its kind and its culprit's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Culprit {
    /// The cause's kind.
    pub kind: CauseKind,
    /// The task's name (`comm`), the IRQ (`24:virtio0-input.0`, `local_timer
    /// (vector)`), the softirq vector (`NET_RX`), or the mechanism (`interrupts off or
    /// time outside the OS`, `the exit from idle`, `RT throttling` …). Outside bytes as
    /// the kernel gave them: escaped where printed.
    pub name: String,
    /// The task's pid, for task causes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// The task's start time, clock ticks after boot (`/proc/PID/stat` field 22), read
    /// at the analysis; absent when the task was gone or its `/proc` hidden. With the
    /// pid it tells a reused pid from the task seen before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ticks: Option<u64>,
    /// The processes of this name counted under it (tasks only; 1 for one task): a
    /// daemon that starts its worker anew for every burst, or a cron job, is one cause
    /// that recurs, not one cause per pid. `pid` and `start_ticks` are then the latest
    /// process's.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub processes: u32,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl Culprit {
    /// The culprit of explanation `e`; `start_of` reads a task's start time (ticks).
    /// `None` for an `untraced` one (its sample was not analysed: [`Reason::TraceLost`]).
    pub fn of(e: &Explanation, start_of: impl Fn(i32) -> Option<u64>) -> Option<Culprit> {
        let c = &e.cause;
        let mech = |name: &str| Culprit {
            kind: c.kind,
            name: name.to_string(),
            pid: None,
            start_ticks: None,
            processes: 1,
        };
        let first = |v: &[super::IrqUse]| v.first().map(|i| i.name.clone()).unwrap_or_default();
        Some(match c.kind {
            CauseKind::Untraced => return None,
            CauseKind::Task | CauseKind::PreemptOff if c.pid.is_some() => Culprit {
                kind: c.kind,
                name: c.comm.clone().unwrap_or_default(),
                pid: c.pid,
                start_ticks: c.pid.and_then(start_of),
                processes: 1,
            },
            CauseKind::Irq => mech(&first(&e.irqs)),
            CauseKind::Softirq => mech(&first(&e.softirqs)),
            CauseKind::Nmi => mech("NMI"),
            CauseKind::Silent if c.text.contains("exit from idle") => mech("the exit from idle"),
            CauseKind::Silent => mech("interrupts off or time outside the OS"),
            CauseKind::Stopped => mech("stopped or frozen"),
            CauseKind::CfsThrottled => mech("CFS bandwidth throttling"),
            CauseKind::RtThrottled => mech("RT throttling"),
            CauseKind::ClockStep => mech("a wall-clock step"),
            CauseKind::Unknown => mech("no single cause"),
            // A task cause without a named task: its words (no figures in them).
            _ => mech(&c.text),
        })
    }

    /// `task rt-hog (pid 312, started 41.37 s after boot)`, `task vendord-burn (7
    /// processes, the latest pid 538, started …)`, `irq 24:virtio0-input.0`, `silent: the
    /// exit from idle`; not escaped.
    pub fn label(&self, ticks_per_s: u64) -> String {
        let mut s = format!("{} {}", self.kind.as_str(), self.name);
        if let Some(pid) = self.pid {
            if self.processes > 1 {
                s.push_str(&format!(
                    " ({} processes, the latest pid {pid}",
                    self.processes
                ));
            } else {
                s.push_str(&format!(" (pid {pid}"));
            }
            if let Some(t) = self.start_ticks {
                let hz = ticks_per_s.max(1);
                s.push_str(&format!(
                    ", started {}.{:02} s after boot",
                    t / hz,
                    (t % hz) * 100 / hz
                ));
            }
            s.push(')');
        }
        s
    }

    /// The same cause: same kind and name (a task's processes of one name are one
    /// cause, [`Culprit::processes`]).
    fn same(&self, o: &Culprit) -> bool {
        self.kind == o.kind && self.name == o.name && self.pid.is_some() == o.pid.is_some()
    }

    /// The same process: same pid, and the same start time where both are known (a task
    /// read once after it had gone is still itself; a reused pid is another process).
    fn same_process(&self, o: &Culprit) -> bool {
        self.pid == o.pid
            && (self.start_ticks.is_none()
                || o.start_ticks.is_none()
                || self.start_ticks == o.start_ticks)
    }

    /// Counts `o`, a sample's culprit of the same cause ([`Culprit::same`]), in: another
    /// process of the name is counted and becomes the latest.
    fn count(&mut self, o: Culprit) {
        if self.same_process(&o) {
            if self.start_ticks.is_none() {
                self.start_ticks = o.start_ticks;
            }
        } else {
            self.processes = self.processes.saturating_add(o.processes.max(1));
            self.pid = o.pid;
            self.start_ticks = o.start_ticks;
        }
    }
}

/// One cause of a thread's samples over its threshold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct CauseEntry {
    /// Who or what.
    pub culprit: Culprit,
    /// Its samples.
    #[serde(flatten)]
    pub tally: Tally,
}

/// Samples of a thread over its threshold that were not analysed, for one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotAnalysed {
    /// Why.
    pub reason: Reason,
    /// The last untraced explanation's words, for [`Reason::TraceLost`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The samples (for [`Reason::Busy`] and [`Reason::RateLimit`], first and last are
    /// when they were counted).
    #[serde(flatten)]
    pub tally: Tally,
}

/// One thread's (or pair's) ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ThreadLedger {
    /// Test name.
    pub test: String,
    /// Thread or pair index.
    pub thread: usize,
    /// The CPU it measured on (where its samples were taken).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
    /// Its explain threshold, **ns**.
    pub threshold_ns: u64,
    /// The causes, by count, then by time over the threshold (largest first).
    pub causes: Vec<CauseEntry>,
    /// What was not analysed, by reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_analysed: Vec<NotAnalysed>,
}

impl ThreadLedger {
    /// Samples over the threshold, analysed or not.
    pub fn samples(&self) -> u64 {
        self.causes.iter().map(|c| c.tally.count).sum::<u64>()
            + self.not_analysed.iter().map(|n| n.tally.count).sum::<u64>()
    }

    fn sort(&mut self) {
        self.causes.sort_by(|a, b| {
            (b.tally.count, b.tally.over_ns, b.tally.worst_ns).cmp(&(
                a.tally.count,
                a.tally.over_ns,
                a.tally.worst_ns,
            ))
        });
        self.not_analysed.sort_by_key(|n| n.reason);
    }
}

/// The ledger of a run: one [`ThreadLedger`] per thread that had a sample over its
/// threshold, in thread order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Ledger {
    /// Analyses at most per second per CPU ([`ANALYSES_PER_SECOND`]).
    pub analyses_per_s: u32,
    /// Per thread.
    pub threads: Vec<ThreadLedger>,
}

/// Who a sample belongs to: test, thread, CPU, threshold (**ns**).
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    /// Test name.
    pub test: &'a str,
    /// Thread or pair index.
    pub thread: usize,
    /// The CPU.
    pub cpu: Option<usize>,
    /// Its explain threshold, **ns**.
    pub threshold_ns: u64,
}

impl Ledger {
    /// An empty ledger that says its rate limit.
    pub fn new(analyses_per_s: u32) -> Ledger {
        Ledger {
            analyses_per_s,
            threads: Vec::new(),
        }
    }

    /// No sample was over a threshold (nothing to say).
    pub fn is_empty(&self) -> bool {
        self.threads.iter().all(|t| t.samples() == 0)
    }

    /// The ledger of `test`'s thread `thread`.
    pub fn thread(&self, test: &str, thread: usize) -> Option<&ThreadLedger> {
        self.threads
            .iter()
            .find(|t| t.test == test && t.thread == thread)
    }

    fn entry(&mut self, o: Owner<'_>) -> &mut ThreadLedger {
        let i = match self
            .threads
            .iter()
            .position(|t| t.test == o.test && t.thread == o.thread)
        {
            Some(i) => i,
            None => {
                self.threads.push(ThreadLedger {
                    test: o.test.to_string(),
                    thread: o.thread,
                    cpu: o.cpu,
                    threshold_ns: o.threshold_ns,
                    ..ThreadLedger::default()
                });
                self.threads
                    .sort_by(|a, b| (&a.test, a.thread).cmp(&(&b.test, b.thread)));
                self.threads
                    .iter()
                    .position(|t| t.test == o.test && t.thread == o.thread)
                    .unwrap_or(0)
            }
        };
        let t = &mut self.threads[i];
        if t.cpu.is_none() {
            t.cpu = o.cpu;
        }
        t
    }

    /// Counts `tally` under `culprit` for `o`.
    pub fn add_cause(&mut self, o: Owner<'_>, culprit: Culprit, tally: &Tally) {
        let t = self.entry(o);
        match t.causes.iter_mut().find(|c| c.culprit.same(&culprit)) {
            Some(c) => {
                c.culprit.count(culprit);
                c.tally.merge(tally);
            }
            None => t.causes.push(CauseEntry {
                culprit,
                tally: *tally,
            }),
        }
        t.sort();
    }

    /// Counts `tally` as not analysed for `reason` (`detail`: the latest words for it).
    pub fn add_not_analysed(
        &mut self,
        o: Owner<'_>,
        reason: Reason,
        detail: Option<String>,
        tally: &Tally,
    ) {
        if tally.count == 0 {
            return;
        }
        let t = self.entry(o);
        match t.not_analysed.iter_mut().find(|n| n.reason == reason) {
            Some(n) => {
                n.tally.merge(tally);
                if detail.is_some() {
                    n.detail = detail;
                }
            }
            None => t.not_analysed.push(NotAnalysed {
                reason,
                detail,
                tally: *tally,
            }),
        }
        t.sort();
    }

    /// Counts explanation `e` of `o`'s sample: under its culprit, or as not analysed
    /// ([`Reason::TraceLost`]) when it is `untraced`.
    pub fn add(&mut self, o: Owner<'_>, e: &Explanation, start_of: impl Fn(i32) -> Option<u64>) {
        let lat = e.spike.latency_ns();
        let tally = Tally::of(
            1,
            lat,
            lat,
            o.threshold_ns,
            e.spike.wall_ns,
            e.spike.wall_ns,
        );
        match Culprit::of(e, start_of) {
            Some(c) => self.add_cause(o, c, &tally),
            None => self.add_not_analysed(o, Reason::TraceLost, Some(e.cause.text.clone()), &tally),
        }
    }

    /// The `n` causes with the most samples over all threads (then by time over), each
    /// with its thread: what keeps failing the unit.
    pub fn top(&self, n: usize) -> Vec<(&ThreadLedger, &CauseEntry)> {
        let mut v: Vec<(&ThreadLedger, &CauseEntry)> = self
            .threads
            .iter()
            .flat_map(|t| t.causes.iter().map(move |c| (t, c)))
            .collect();
        v.sort_by(|a, b| {
            (b.1.tally.count, b.1.tally.over_ns).cmp(&(a.1.tally.count, a.1.tally.over_ns))
        });
        v.truncate(n);
        v
    }
}

/// The rate limit of the analyses: at most `per_s` per CPU in any second (a sliding
/// second, from the times the analyses began).
#[derive(Debug, Clone, Default)]
pub struct Pace {
    per_s: u32,
    at: std::collections::BTreeMap<usize, std::collections::VecDeque<std::time::Instant>>,
}

impl Pace {
    /// At most `per_s` analyses a second per CPU (at least 1).
    pub fn new(per_s: u32) -> Pace {
        Pace {
            per_s: per_s.max(1),
            at: Default::default(),
        }
    }

    /// Whether CPU `cpu` may have another analysis at `now`.
    pub fn room(&mut self, cpu: usize, now: std::time::Instant) -> bool {
        let q = self.at.entry(cpu).or_default();
        while q
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t).as_secs() >= 1)
        {
            q.pop_front();
        }
        q.len() < self.per_s as usize
    }

    /// Notes an analysis of CPU `cpu` beginning at `now` (also one past the limit: a
    /// new maximum).
    pub fn begin(&mut self, cpu: usize, now: std::time::Instant) {
        self.at.entry(cpu).or_default().push_back(now);
    }
}

/// The start time of task `pid`, clock ticks after boot (`/proc/PID/stat` field 22);
/// `None` when it is gone or hidden.
pub fn task_start(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    crate::sys::sched::TaskStat::parse(&stat)?.field(22)
}

/// Clock ticks per second, the unit of `/proc/PID/stat`'s times
/// ([`crate::sys::clock::clock_ticks_per_sec`]).
pub fn ticks_per_s() -> u64 {
    crate::sys::clock::clock_ticks_per_sec() as u64
}

#[cfg(test)]
#[path = "ledger_tests.rs"]
mod tests;

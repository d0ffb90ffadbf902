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
        };
        let first = |v: &[super::IrqUse]| v.first().map(|i| i.name.clone()).unwrap_or_default();
        Some(match c.kind {
            CauseKind::Untraced => return None,
            CauseKind::Task | CauseKind::PreemptOff if c.pid.is_some() => Culprit {
                kind: c.kind,
                name: c.comm.clone().unwrap_or_default(),
                pid: c.pid,
                start_ticks: c.pid.and_then(start_of),
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

    /// `task rt-hog (pid 312, started 41.37 s after boot)`, `irq 24:virtio0-input.0`,
    /// `silent: the exit from idle`; not escaped.
    pub fn label(&self, ticks_per_s: u64) -> String {
        let mut s = format!("{} {}", self.kind.as_str(), self.name);
        if let Some(pid) = self.pid {
            s.push_str(&format!(" (pid {pid}"));
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

    /// The same culprit: same kind, name and pid, and the same start time where both
    /// are known (a task read once after it had gone is still itself).
    fn same(&self, o: &Culprit) -> bool {
        self.kind == o.kind
            && self.name == o.name
            && self.pid == o.pid
            && (self.start_ticks.is_none()
                || o.start_ticks.is_none()
                || self.start_ticks == o.start_ticks)
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
                if c.culprit.start_ticks.is_none() {
                    c.culprit.start_ticks = culprit.start_ticks;
                }
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

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`, the unit of `/proc/PID/stat`'s
/// times; 100 where it cannot be read).
pub fn ticks_per_s() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::{Cause, IrqUse, Spike};

    fn owner() -> Owner<'static> {
        Owner {
            test: "cyclic",
            thread: 0,
            cpu: Some(1),
            threshold_ns: 1_000_000,
        }
    }

    fn sample(latency_ns: i64, wall_ns: i64, cause: Cause) -> Explanation {
        Explanation {
            spike: Spike {
                test: "cyclic".into(),
                start_ns: 1_000,
                wake_ns: 1_000 + latency_ns,
                wall_ns,
                cpu: 1,
                ..Spike::default()
            },
            cause,
            irqs: vec![IrqUse {
                name: "24:eth0".into(),
                count: 2,
                ns: 5,
            }],
            ..Explanation::default()
        }
    }

    fn task(pid: i32, comm: &str) -> Cause {
        Cause {
            kind: CauseKind::Task,
            valid: true,
            ns: 1,
            text: format!("CPU 1 ran {comm} (pid {pid}, FIFO 99)"),
            pid: Some(pid),
            comm: Some(comm.into()),
        }
    }

    #[test]
    fn samples_of_one_culprit_merge_and_order_by_count_then_time_over() {
        let mut l = Ledger::new(ANALYSES_PER_SECOND);
        // One large one-off, then a recurring smaller culprit.
        l.add(owner(), &sample(300_000_000, 10, task(7, "sh")), |_| {
            Some(50)
        });
        for i in 0..3 {
            l.add(owner(), &sample(20_000_000, 20 + i, task(9, "hog")), |_| {
                Some(60)
            });
        }
        let irq = Cause {
            kind: CauseKind::Irq,
            valid: true,
            ..Cause::default()
        };
        l.add(owner(), &sample(2_000_000, 30, irq.clone()), |_| None);
        l.add(owner(), &sample(3_000_000, 40, irq), |_| None);
        let t = l.thread("cyclic", 0).unwrap();
        let names: Vec<&str> = t.causes.iter().map(|c| c.culprit.name.as_str()).collect();
        assert_eq!(names, ["hog", "24:eth0", "sh"]);
        let hog = &t.causes[0].tally;
        assert_eq!(hog.count, 3);
        assert_eq!(hog.over_ns, 3 * 19_000_000);
        assert_eq!(hog.worst_ns, 20_000_000);
        assert_eq!((hog.first_ns, hog.last_ns), (20, 22));
        assert_eq!(t.causes[1].tally.over_ns, 1_000_000 + 2_000_000);
        assert_eq!(t.samples(), 6);
        assert_eq!(l.top(1)[0].1.culprit.pid, Some(9));
    }

    #[test]
    fn a_reused_pid_is_another_culprit_and_a_gone_task_is_still_itself() {
        let mut l = Ledger::new(ANALYSES_PER_SECOND);
        l.add(owner(), &sample(2_000_000, 1, task(9, "hog")), |_| Some(60));
        l.add(owner(), &sample(2_000_000, 2, task(9, "hog")), |_| None);
        l.add(owner(), &sample(2_000_000, 3, task(9, "hog")), |_| Some(99));
        let t = l.thread("cyclic", 0).unwrap();
        assert_eq!(t.causes.len(), 2, "{t:#?}");
        assert_eq!(t.causes[0].tally.count, 2);
        assert_eq!(t.causes[0].culprit.start_ticks, Some(60));
        assert_eq!(
            t.causes[0].culprit.label(100),
            "task hog (pid 9, started 0.60 s after boot)"
        );
    }

    #[test]
    fn the_rate_limit_is_per_cpu_and_per_sliding_second() {
        use std::time::{Duration, Instant};
        let t0 = Instant::now();
        let mut p = Pace::new(2);
        for _ in 0..2 {
            assert!(p.room(1, t0));
            p.begin(1, t0);
        }
        assert!(!p.room(1, t0 + Duration::from_millis(999)));
        assert!(p.room(2, t0), "another CPU has its own");
        assert!(p.room(1, t0 + Duration::from_secs(1)));
        // A new maximum is analysed past the limit, and counts.
        p.begin(1, t0 + Duration::from_secs(1));
        p.begin(1, t0 + Duration::from_secs(1));
        p.begin(1, t0 + Duration::from_secs(1));
        assert!(!p.room(1, t0 + Duration::from_millis(1999)));
        assert!(p.room(1, t0 + Duration::from_secs(2)));
    }

    #[test]
    fn samples_not_analysed_are_counted_with_their_reason() {
        let mut l = Ledger::new(ANALYSES_PER_SECOND);
        let untraced = Cause {
            kind: CauseKind::Untraced,
            valid: true,
            text: "not recorded".into(),
            ..Cause::default()
        };
        l.add(owner(), &sample(5_000_000, 5, untraced), |_| None);
        l.add_not_analysed(
            owner(),
            Reason::RateLimit,
            None,
            &Tally::of(3, 9_000_000, 4_000_000, 1_000_000, 7, 8),
        );
        l.add_not_analysed(owner(), Reason::Busy, None, &Tally::of(0, 0, 0, 0, 0, 0));
        let t = l.thread("cyclic", 0).unwrap();
        assert!(t.causes.is_empty());
        let reasons: Vec<Reason> = t.not_analysed.iter().map(|n| n.reason).collect();
        assert_eq!(reasons, [Reason::RateLimit, Reason::TraceLost]);
        assert_eq!(t.not_analysed[0].tally.over_ns, 6_000_000);
        assert_eq!(t.not_analysed[1].detail.as_deref(), Some("not recorded"));
        assert_eq!(t.samples(), 4);
        assert!(!l.is_empty());
        // The JSON shape round-trips (results files keep the ledger).
        let back: Ledger = serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
        assert_eq!(back, l);
    }
}

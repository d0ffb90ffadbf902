//! The end of the walk: the window closed at the thread's clock read, what it saw
//! turned into an [`Explanation`] (IRQ and thread latency, the tasks with their
//! policies, IRQs, softirqs, NMIs, silence, timerlat's figures, notes on coverage), and
//! its cause ([`super::cause`]).

use super::{ctx_name, Context, Ctx, Walk, UNKNOWN_PRIO};
use crate::explain::{Cause, Explanation, IrqUse, Spike, SpikeKind, TaskUse, WorkUse};

impl Walk<'_, '_> {
    /// The explanation of what the walk saw (`first_ts`/`last_ts`: the first and last
    /// event read, ns; `lost`: events the ring buffer lost).
    pub(super) fn finish(
        mut self,
        first_ts: Option<i64>,
        last_ts: Option<i64>,
        lost: u64,
        ctx: &Context,
    ) -> Explanation {
        let s = self.spike;
        let (notes, covered, stopped_before) = coverage_notes(s, first_ts, last_ts, lost, ctx);
        // The window ends at the thread's clock read.
        if let Some(c) = self.cursor {
            self.account((s.wake_ns - c).max(0) as u64);
        }
        let irq_latency_ns = match (s.kind, self.expiry) {
            (SpikeKind::Timer, Some((now, _))) => Some((now - s.timer_ns).max(0) as u64),
            _ => None,
        };
        // Some kernels log no switch from the idle task to the woken thread: woken, it
        // ran by its clock read at the latest.
        let run = self
            .run
            .or_else(|| (s.kind == SpikeKind::Timer && self.woken()).then_some(s.wake_ns));
        let thread_latency_ns = run.map(|r| (r - s.start_ns).max(0) as u64);
        let our_prio = s.prio;
        let own = |pid: i32| pid == s.tid || ctx.own_tids.contains(&pid);
        let sched = |pid: i32| {
            (pid > 0)
                .then(|| ctx.policy_of.and_then(|f| f(pid)))
                .flatten()
        };
        // A priority no event named is the live task's, when it still exists.
        let resolve = |pid: i32, prio: i32| -> (i32, Option<String>) {
            match (sched(pid), prio) {
                (Some((pol, p)), UNKNOWN_PRIO) => (p, Some(pol)),
                (Some((pol, _)), p) => (p, Some(pol)),
                (None, UNKNOWN_PRIO) => (120, None),
                (None, p) => (p, None),
            }
        };
        let mut tasks: Vec<TaskUse> = self
            .acc
            .tasks
            .iter()
            .filter(|t| t.pid != s.tid)
            .map(|t| {
                let (prio, policy) = resolve(t.pid, t.prio);
                (t, prio, policy)
            })
            .map(|(t, prio, policy)| TaskUse {
                comm: t.comm.to_string(),
                pid: t.pid,
                prio,
                policy,
                ran_ns: t.before_wake_ns + t.after_wake_ns,
                after_wakeup_ns: t.after_wake_ns,
                outranks: prio < our_prio,
                bh_off: t.bh_off,
                own: own(t.pid),
                work: t
                    .work
                    .iter()
                    .map(|(f, a)| WorkUse {
                        function: f.to_string(),
                        count: a.count,
                    })
                    .collect(),
            })
            .filter(|t| t.ran_ns > 0)
            .collect();
        tasks.sort_by_key(|t| std::cmp::Reverse(t.ran_ns));
        let (irqs, softirqs, nmis) = self.interrupts();
        // The name a task had last (an exec renames it: `taskset` becomes `sh`).
        let name_of = |pid: i32, comm: &str| {
            self.acc
                .tasks
                .iter()
                .find(|t| t.pid == pid)
                .map_or_else(|| comm.to_string(), |t| t.comm.to_string())
        };
        // What ran at the deadline is known only when the trace reaches back to it.
        let at_deadline = self.at_deadline.filter(|_| covered).map(|(c, irq)| {
            let prio = self
                .acc
                .tasks
                .iter()
                .find(|t| t.pid == c.pid)
                .map_or(c.prio, |t| t.prio);
            (c, irq, resolve(c.pid, prio))
        });
        let at_deadline = at_deadline.map(|(c, irq, (prio, policy))| TaskUse {
            comm: name_of(c.pid, c.comm),
            pid: c.pid,
            prio,
            policy,
            ran_ns: 0,
            after_wakeup_ns: 0,
            outranks: prio < our_prio,
            bh_off: false,
            own: own(c.pid),
            work: irq
                .map(|i| {
                    vec![WorkUse {
                        function: format!("in {}", ctx_name(i)),
                        count: 1,
                    }]
                })
                .unwrap_or_default(),
        });
        let silent_ns = match irq_latency_ns {
            // Silence counts while the timer's interrupt was due and not taken, and
            // while the idle task held a CPU that had a thread to run.
            Some(l) => self.silent_ns.min(l) + self.idle_after_wake_ns,
            None => self.idle_after_wake_ns,
        };
        let mut e = Explanation {
            spike: s.clone(),
            irq_latency_ns,
            thread_latency_ns,
            at_deadline,
            tasks,
            irqs,
            softirqs,
            nmis,
            silent_ns,
            timerlat: self.timerlat.seen().then_some(self.timerlat),
            cause: Cause::default(),
            notes,
            advice: Vec::new(),
        };
        e.cause = self.cause(&e, ctx, covered && !stopped_before);
        e
    }

    /// What interrupted the CPU in the window: its hard IRQs and its softirqs (each
    /// by name, the longest first; ns), and its NMIs (`None` when none came).
    fn interrupts(&self) -> (Vec<IrqUse>, Vec<IrqUse>, Option<IrqUse>) {
        let mut irqs = Vec::new();
        let mut softirqs = Vec::new();
        for (c, a) in &self.acc.irqs {
            let u = IrqUse {
                name: ctx_name(*c),
                count: a.count,
                ns: a.ns,
            };
            match c {
                Ctx::Softirq(_) => softirqs.push(u),
                _ => irqs.push(u),
            }
        }
        irqs.sort_by_key(|i| std::cmp::Reverse(i.ns));
        softirqs.sort_by_key(|i| std::cmp::Reverse(i.ns));
        let nmis = (self.acc.nmi.count > 0).then(|| IrqUse {
            name: "NMI".into(),
            count: self.acc.nmi.count,
            ns: self.acc.nmi.ns,
        });
        (irqs, softirqs, nmis)
    }
}

/// The notes on what the trace of `s` can tell (`first_ts`/`last_ts`: the first and
/// last event read, ns; `lost`: events the ring buffer lost; SIGCONT from `ctx`), with
/// whether the trace reaches back to the deadline (`covered`) and whether the
/// recording had stopped before it (`stopped_before`).
fn coverage_notes(
    s: &Spike,
    first_ts: Option<i64>,
    last_ts: Option<i64>,
    lost: u64,
    ctx: &Context,
) -> (Vec<String>, bool, bool) {
    let mut notes = Vec::new();
    // SIGCONT alone is no evidence (anyone in the session may send it): the trace's
    // own signs of a stop decide; the signal is said for the reader.
    if ctx.continued {
        notes.push("rtbench received SIGCONT around this sample".to_string());
    }
    if lost > 0 {
        notes.push(format!("the ring buffer lost {lost} events"));
    }
    // (A recording frozen for another thread's sample before this one's wakeup is
    // found before the analysis: `Explainer::explain`.)
    let covered = first_ts.is_some_and(|f| f <= s.start_ns);
    if !covered {
        notes.push(match first_ts {
            Some(f) => format!(
                "the trace begins {} after the deadline: the buffer was too small for this load (a larger [explain] buffer_kib keeps more)",
                crate::duration::us((f - s.start_ns).max(0) as u64, crate::duration::UsStyle::Text)
            ),
            None => "the trace of this CPU is empty".to_string(),
        });
    }
    let stopped_before = last_ts.is_some_and(|l| l < s.start_ns);
    if stopped_before {
        notes.push(
            "the recording had stopped for an earlier sample before this one's deadline".into(),
        );
    }
    (notes, covered, stopped_before)
}

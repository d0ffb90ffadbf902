//! The headline of an explanation: which cause the walk's evidence supports. Causes
//! that are not the system's latency (stopped, throttled, a clock step) come first and
//! only on evidence; then the largest share of the gap, when it is a fair part of it.

use super::{Context, Walk};
use crate::explain::{Cause, CauseKind, Explanation, Spike, SpikeKind, TaskUse};

impl Walk<'_, '_> {
    /// The headline: a cause outside the kernel's scheduling latency first, then the
    /// largest share of the gap.
    pub(super) fn cause(&self, e: &Explanation, ctx: &Context, covered: bool) -> Cause {
        let s = self.spike;
        let gap = s.latency_ns();
        if let Some(step) = &ctx.clock_step {
            return Cause::invalid(CauseKind::ClockStep, step.clone(), gap);
        }
        if let Some(c) = self.stopped(covered) {
            return c;
        }
        if let Some(c) = self.throttled(e, ctx, covered) {
            return c;
        }
        if !covered {
            return Cause {
                kind: CauseKind::Untraced,
                valid: true,
                ns: 0,
                text: e.notes.first().cloned().unwrap_or_default(),
                ..Cause::default()
            };
        }
        let best = self.largest_share(e);
        if let Some(c) = outranking_together(s, e, best.ns) {
            return c;
        }
        // A share far smaller than the gap explains nothing: say so, and what it was.
        if best.kind != CauseKind::Unknown && best.ns.saturating_mul(5) < gap {
            return Cause {
                kind: CauseKind::Unknown,
                valid: true,
                ns: 0,
                text: format!(
                    "no single cause in the trace (the largest share, {} for {}, is under a fifth of the {} gap)",
                    best.text,
                    crate::duration::us(best.ns, crate::duration::UsStyle::Text),
                    crate::duration::us(gap, crate::duration::UsStyle::Text)
                ),
                ..Cause::default()
            };
        }
        best
    }

    /// The thread stopped (SIGSTOP, a debugger) or frozen (cgroup freezer) in the
    /// gap, on the trace's evidence only (`covered`: the trace covers the whole gap),
    /// as an invalid cause with the time it lost (ns); `None` without that evidence.
    fn stopped(&self, covered: bool) -> Option<Cause> {
        let s = self.spike;
        let gap = s.latency_ns();
        // Evidence from the trace counts only where the trace covers the whole gap.
        if let Some((at, state)) = self.stopped_at.filter(|_| covered) {
            let how = if state.starts_with('t') {
                "stopped by a debugger (ptrace)"
            } else {
                "stopped (SIGSTOP, SIGTSTP or a debugger)"
            };
            let ns = (self.run.unwrap_or(s.wake_ns) - at.max(s.start_ns)).max(0) as u64;
            return Some(Cause::invalid(CauseKind::Stopped, how.to_string(), ns));
        }
        if s.kind == SpikeKind::Timer {
            // Only on evidence, never by elimination: a false "frozen" would excuse a
            // real failure.
            // The timer fired while the thread slept on it and could not wake it: it
            // was frozen in its sleep (cgroup v1 freezer, TASK_FROZEN). Or it was
            // woken by something else than its timer, slept again without re-arming
            // it (the cgroup v2 freezer's trap), and its sleep restarted after the
            // deadline (or its timer never fired: cancelled by the interruption).
            let frozen_in_sleep = matches!(self.expiry, Some((_, false))) && self.expired_asleep;
            let trapped = self.timer.is_some()
                && self.slept_without_timer.is_some()
                && (self.rearmed_late.is_some() || self.expiry.is_none());
            let frozen = covered && (frozen_in_sleep || trapped);
            if let Some(at) = self.trapped_after_wake.filter(|_| covered && !frozen) {
                let ns = (self.run.unwrap_or(s.wake_ns) - at).max(0) as u64;
                return Some(Cause::invalid(
                    CauseKind::Stopped,
                    "the thread was frozen (cgroup freezer) after its timer woke it, before it read the clock".to_string(),
                    ns,
                ));
            }
            if frozen {
                return Some(Cause::invalid(
                    CauseKind::Stopped,
                    "the thread was frozen (cgroup freezer) or stopped: it was not waiting for its timer".to_string(),
                    gap,
                ));
            }
        }
        None
    }

    /// The thread held back by CPU bandwidth control, on the trace's evidence only
    /// (`covered`): a fair thread's cgroup throttled (CFS quota), or a real-time
    /// thread's RT bandwidth limit ([`Walk::rt_throttled`]); an invalid cause with the
    /// time the thread was runnable and did not run (ns), else `None`.
    fn throttled(&self, e: &Explanation, ctx: &Context, covered: bool) -> Option<Cause> {
        let s = self.spike;
        let gap = s.latency_ns();
        let after_wake_idle: u64 = e
            .tasks
            .iter()
            .filter(|t| t.pid == 0)
            .map(|t| t.after_wakeup_ns)
            .sum();
        let woken_not_run: u64 = e
            .tasks
            .iter()
            .filter(|t| !t.outranks)
            .map(|t| t.after_wakeup_ns)
            .sum();
        if s.prio >= 100 {
            // A fair thread, woken, with the CPU idle for over a millisecond, in a
            // cgroup that was throttled: its quota was spent.
            if let Some(c) = ctx.cfs_throttled.as_ref().filter(|_| covered) {
                if after_wake_idle > 1_000_000 || woken_not_run > gap / 2 {
                    return Some(Cause::invalid(
                        CauseKind::CfsThrottled,
                        c.clone(),
                        woken_not_run,
                    ));
                }
            }
        } else if let Some((runtime, period)) = ctx.rt_throttling.filter(|_| covered) {
            return self.rt_throttled(ctx, woken_not_run, runtime, period);
        }
        None
    }

    /// A real-time thread runnable for `woken_not_run` ns without running, under the
    /// RT bandwidth limit (`runtime` of `period`, µs, as sysctl sets them): its cause,
    /// naming the real-time tasks of the CPU's recorded past, when the evidence holds;
    /// else `None`.
    fn rt_throttled(
        &self,
        ctx: &Context,
        woken_not_run: u64,
        runtime: i64,
        period: i64,
    ) -> Option<Cause> {
        let s = self.spike;
        // A real-time thread held back for over a millisecond while lower-priority
        // work (or nothing) ran, on a CPU whose recorded past was real-time work
        // almost only: the RT bandwidth limit (RT throttling, or from Linux 6.12
        // the fair server that runs fair tasks in that share).
        // Evidence, not a guess: the stall ended as the bandwidth control gave the
        // CPU back (within 1 ms before the thread ran).
        let handed_back = match (self.throttle_end, self.run) {
            (Some(t), Some(r)) => t <= r && r - t <= 1_000_000 && t >= s.start_ns,
            _ => false,
        };
        // The recorded past before the deadline: real-time work almost only (90 %).
        let rt_ns: u64 = self.hist_rt.iter().map(|h| h.3).sum();
        let rt_past = self.hist_ns > 0 && rt_ns.saturating_mul(10) >= self.hist_ns * 9;
        if woken_not_run > 1_000_000 && handed_back && rt_past {
            let mut hogs = self.hist_rt.clone();
            hogs.sort_by_key(|h| std::cmp::Reverse(h.3));
            let own_hog = hogs
                .first()
                .is_some_and(|h| h.0 == s.tid || ctx.own_tids.contains(&h.0));
            let names: Vec<String> = hogs
                .iter()
                .filter(|h| h.0 != s.tid && h.3 * 100 >= self.hist_ns)
                .take(3)
                .map(|h| {
                    let t = TaskUse {
                        comm: h.1.to_string(),
                        pid: h.0,
                        prio: h.2,
                        own: ctx.own_tids.contains(&h.0),
                        ..TaskUse::default()
                    };
                    format!("{} {} %", t.label(), h.3 * 100 / self.hist_ns.max(1))
                })
                .collect();
            let whose = if own_hog {
                " caused by rtbench's own threads"
            } else {
                ""
            };
            return Some(Cause::invalid(
                CauseKind::RtThrottled,
                format!(
                    "RT throttling{whose} (sched_rt_runtime_us {runtime} of sched_rt_period_us {period}): the thread was runnable while CPU {} ran lower-priority work, after real-time {} on CPU {}",
                    s.cpu,
                    names.join(", "),
                    s.cpu
                ),
                woken_not_run,
            ));
        }
        None
    }

    /// The largest share of the gap in `e`: a task (each as [`task_share`] weighs it),
    /// a hard IRQ, a softirq, the NMIs or silence ([`Walk::silence`]); the unknown
    /// cause when none took any time.
    fn largest_share(&self, e: &Explanation) -> Cause {
        let s = self.spike;
        // The largest share wins.
        let mut best = Cause {
            kind: CauseKind::Unknown,
            valid: true,
            ns: 0,
            text: "no single cause in the trace".into(),
            ..Cause::default()
        };
        let mut consider = |kind: CauseKind, ns: u64, text: String, who: Option<&TaskUse>| {
            if ns > best.ns {
                best = Cause {
                    kind,
                    valid: true,
                    ns,
                    text,
                    pid: who.map(|t| t.pid),
                    comm: who.map(|t| t.comm.clone()),
                };
            }
        };
        let fair = s.prio >= 100;
        for t in &e.tasks {
            if t.pid == 0 {
                continue;
            }
            if let Some((kind, ns, text)) = task_share(s, t, fair) {
                consider(kind, ns, text, Some(t));
            }
        }
        for i in &e.irqs {
            consider(
                CauseKind::Irq,
                i.ns,
                format!("hard IRQ {} ({}×)", i.name, i.count),
                None,
            );
        }
        for i in &e.softirqs {
            consider(
                CauseKind::Softirq,
                i.ns,
                format!("softirq {} ({}×)", i.name, i.count),
                None,
            );
        }
        if let Some(n) = &e.nmis {
            consider(CauseKind::Nmi, n.ns, format!("NMIs ({}×)", n.count), None);
        }
        if e.silent_ns > 0 {
            consider(CauseKind::Silent, e.silent_ns, self.silence(e), None);
        }
        best
    }

    /// What the silence of `e` (time no event was recorded) most likely was: an exit
    /// from idle, or interrupts off or time taken outside the OS.
    fn silence(&self, e: &Explanation) -> String {
        let s = self.spike;
        let who = e
            .at_deadline
            .as_ref()
            .map(|t| format!(" while CPU {} ran {}", s.cpu, t.label()))
            .unwrap_or_default();
        if self.idle_after_wake_ns >= e.silent_ns / 2 {
            format!("no event while CPU {} stayed idle after the wakeup: the exit from idle (a C-state, or in a VM the host) delayed the switch to the thread", s.cpu)
        } else if self.silent_in_idle {
            format!("no event while CPU {} was idle: the exit from idle (a C-state, or in a VM the host) delayed the timer's interrupt", s.cpu)
        } else {
            format!("no event{who}: interrupts off, or time taken outside the OS (SMI, firmware, hypervisor)")
        }
    }
}

/// The share of the gap task `t` took from the thread of `s` (`fair`: the thread is
/// SCHED_OTHER): its cause kind, time (ns) and text; `None` when it took none.
fn task_share(s: &Spike, t: &TaskUse, fair: bool) -> Option<(CauseKind, u64, String)> {
    if s.kind == SpikeKind::Poll {
        // A polling thread never sleeps: every task that ran on its CPU in the
        // gap took the CPU from it (preempted it, or was given its share).
        Some((
            CauseKind::Task,
            t.ran_ns,
            format!(
                "CPU {} ran {} instead of the polling thread",
                s.cpu,
                t.label()
            ),
        ))
    } else if fair && t.after_wakeup_ns > 0 {
        // A SCHED_OTHER thread shares the CPU with the other fair tasks:
        // neither preemption nor priority decides, the fair scheduler does.
        Some((
            CauseKind::Task,
            t.ran_ns,
            format!(
                "CPU {} ran {} (the thread is SCHED_OTHER: it shares the CPU with fair tasks)",
                s.cpu,
                t.label()
            ),
        ))
    } else if t.outranks {
        Some((
            CauseKind::Task,
            t.ran_ns,
            format!("CPU {} ran {}", s.cpu, t.label()),
        ))
    } else if t.after_wakeup_ns > 0 && s.prio < 100 && t.prio == s.prio && t.pid != 0 {
        // A real-time task of the thread's own priority is not preempted by its
        // wakeup (sched(7): SCHED_FIFO runs until it blocks or yields; SCHED_RR
        // until its time slice ends): a pair's sender on the receiver's CPU.
        Some((
            CauseKind::Task,
            t.after_wakeup_ns,
            format!(
                "{} ran at the thread's own priority after the wakeup (not preempted by an equal priority)",
                t.label()
            ),
        ))
    } else if t.after_wakeup_ns > 0 {
        Some((
            CauseKind::PreemptOff,
            t.after_wakeup_ns,
            if t.bh_off {
                format!(
                    "{} kept CPU {} after the wakeup with softirqs disabled (a local_bh_disable section: networking, block I/O)",
                    t.label(),
                    s.cpu
                )
            } else {
                format!(
                    "{} kept CPU {} after the wakeup (preemption or interrupts disabled)",
                    t.label(),
                    s.cpu
                )
            },
        ))
    } else {
        None
    }
}

/// Several tasks that outrank the thread, none alone a fair part of the gap (a shell
/// script forking at a real-time priority; `best_ns`: the largest single share, ns):
/// together they are the cause, named by the longest three; `None` otherwise.
fn outranking_together(s: &Spike, e: &Explanation, best_ns: u64) -> Option<Cause> {
    let gap = s.latency_ns();
    let mut outranking: Vec<&TaskUse> = e
        .tasks
        .iter()
        .filter(|t| t.pid != 0 && t.outranks)
        .collect();
    let together: u64 = outranking.iter().map(|t| t.ran_ns).sum();
    if best_ns.saturating_mul(5) < gap && outranking.len() > 1 && together.saturating_mul(5) >= gap
    {
        outranking.sort_by_key(|t| std::cmp::Reverse(t.ran_ns));
        let named: Vec<String> = outranking
            .iter()
            .take(3)
            .map(|t| {
                format!(
                    "{} {}",
                    t.label(),
                    crate::duration::us(t.ran_ns, crate::duration::UsStyle::Text)
                )
            })
            .collect();
        let top = outranking[0];
        return Some(Cause {
            kind: CauseKind::Task,
            valid: true,
            ns: together,
            text: format!(
                "CPU {} ran {} tasks that outrank the thread ({}{})",
                s.cpu,
                outranking.len(),
                named.join(", "),
                if outranking.len() > 3 { ", …" } else { "" }
            ),
            pid: Some(top.pid),
            comm: Some(top.comm.clone()),
        });
    }
    None
}

//! What the kernel did on one CPU between a sample's deadline and the moment its
//! thread ran: the analysis an RT engineer does by hand in kernelshark, on the generic
//! trace events of [`super::event`].
//!
//! The split is rtla timerlat's (Documentation/tools/rtla/rtla-timerlat-top.rst):
//! **IRQ latency** is the programmed expiry → the timer's callback
//! (`hrtimer_expire_entry`'s `now=`, exact to the ns); **thread latency** is the
//! programmed expiry → the switch to the measuring thread. Inside that gap every
//! interval between two consecutive events belongs to what the CPU was doing then: an
//! NMI, a hard IRQ (a handler or an x86 system vector), a softirq, or the task that was
//! switched in. Time before the timer's callback in which nothing at all was logged is
//! **silent**: interrupts were off, or the time was taken outside the OS (SMI,
//! firmware, a hypervisor: Documentation/trace/osnoise-tracer.rst calls it hardware
//! noise).
//!
//! Every figure here is **ns**; the timestamps of the text have µs resolution, the
//! timer fields ns.

use super::event::{self, Event, Kind, Line};
use super::{Explanation, Spike, SpikeKind, Timerlat};

/// How far after the wakeup events are still read: the measuring thread's own
/// `tracing_on` write lands a few µs after its clock read.
const AFTER_WAKE_NS: i64 = 200_000;

/// The priority of a task no switch or wakeup event has named yet.
const UNKNOWN_PRIO: i32 = i32::MAX;

/// Looks up a live task's scheduling policy and kernel priority.
pub type SchedOf = fn(i32) -> Option<(String, i32)>;

/// What the analysis needs to know besides the trace.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The thread ids of rtbench's own process: a task among them is rtbench's own
    /// (its pair responder, the main thread, another measuring thread).
    pub own_tids: Vec<i32>,
    /// RT throttling is on: `/proc/sys/kernel/sched_rt_runtime_us` is not `-1` (the
    /// kernel's default 950000 of 1000000; Documentation/scheduler/sched-rt-group.rst).
    pub rt_throttling: Option<(i64, i64)>,
    /// CFS bandwidth throttling of the measuring thread's cgroup during the run
    /// (`cpu.stat` `nr_throttled` grew), as a sentence, from [`super::counters`].
    pub cfs_throttled: Option<String>,
    /// A wall-clock step inside the sample, for measurements on CLOCK_REALTIME.
    pub clock_step: Option<String>,
    /// SIGCONT reached rtbench around the sample (said in the notes; no evidence of a
    /// stop by itself: anyone in the session may send it).
    pub continued: bool,
    /// When the recording was frozen for earlier samples, CLOCK_MONOTONIC **ns**
    /// `(from, to)`: the buffer holds no events of that time, which is no one's.
    pub unrecorded: Vec<(i64, i64)>,
    /// Looks up a task's scheduling policy and kernel priority while it exists
    /// ([`super::explainer::task_sched`]): trace events show the priority only where
    /// a switch or wakeup names the task, and never the policy.
    pub policy_of: Option<SchedOf>,
}

/// One context the CPU can be in, innermost last on a stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx<'a> {
    Irq(u32, &'a str),
    Vector(&'a str),
    Softirq(u32),
}

/// The running accounts of a window.
#[derive(Default)]
struct Accounts<'a> {
    tasks: Vec<TaskAcc<'a>>,
    irqs: Vec<(Ctx<'a>, IrqAcc)>,
    nmi: IrqAcc,
}

#[derive(Default, Clone, Copy)]
struct IrqAcc {
    count: u64,
    ns: u64,
}

struct TaskAcc<'a> {
    pid: i32,
    comm: &'a str,
    prio: i32,
    /// Time it ran before the measuring thread was woken.
    before_wake_ns: u64,
    /// Time it ran while the measuring thread was runnable.
    after_wake_ns: u64,
    /// Bottom halves were off at one of its events after the wakeup.
    bh_off: bool,
    work: Vec<(&'a str, IrqAcc)>,
}

impl<'a> Accounts<'a> {
    fn task(&mut self, pid: i32, comm: &'a str, prio: i32) -> &mut TaskAcc<'a> {
        let i = match self.tasks.iter().position(|t| t.pid == pid) {
            Some(i) => i,
            None => {
                self.tasks.push(TaskAcc {
                    pid,
                    comm,
                    prio,
                    before_wake_ns: 0,
                    after_wake_ns: 0,
                    bh_off: false,
                    work: Vec::new(),
                });
                self.tasks.len() - 1
            }
        };
        &mut self.tasks[i]
    }

    fn irq(&mut self, c: Ctx<'a>) -> &mut IrqAcc {
        let i = match self.irqs.iter().position(|(k, _)| same_source(*k, c)) {
            Some(i) => i,
            None => {
                self.irqs.push((c, IrqAcc::default()));
                self.irqs.len() - 1
            }
        };
        &mut self.irqs[i].1
    }
}

fn same_source(a: Ctx<'_>, b: Ctx<'_>) -> bool {
    match (a, b) {
        (Ctx::Irq(x, _), Ctx::Irq(y, _)) => x == y,
        _ => a == b,
    }
}

/// The task on the CPU: pid, name, kernel priority.
#[derive(Debug, Clone, Copy)]
struct Current<'a> {
    pid: i32,
    comm: &'a str,
    prio: i32,
}

/// Explains `spike` from `trace`, the text of its CPU's `per_cpu/cpuN/trace` (other
/// CPUs' lines are ignored), and what `ctx` knows from outside the trace.
pub fn analyse(spike: &Spike, trace: &str, ctx: &Context) -> Explanation {
    let mut w = Walk::new(spike);
    w.unrecorded = &ctx.unrecorded;
    let mut lost = 0u64;
    let mut first_ts = None;
    let mut last_ts = None;
    for line in trace.lines() {
        match event::parse(line) {
            Line::Lost(n) => lost += n,
            Line::Event(e) if e.cpu == spike.cpu => {
                first_ts.get_or_insert(e.ts_ns);
                last_ts = Some(e.ts_ns);
                if e.ts_ns > spike.wake_ns {
                    w.timerlat_after(&e);
                    continue;
                }
                w.step(&e);
            }
            _ => {}
        }
    }
    w.finish(first_ts, last_ts, lost, ctx)
}

/// The state of one pass over the events.
struct Walk<'a, 's> {
    spike: &'s Spike,
    current: Option<Current<'a>>,
    stack: Vec<Ctx<'a>>,
    acc: Accounts<'a>,
    /// The last event's time inside the window, once the deadline has passed.
    cursor: Option<i64>,
    at_deadline: Option<(Current<'a>, Option<Ctx<'a>>)>,
    /// The measuring thread's timer: its hashed pointer, from its `hrtimer_start`.
    timer: Option<&'a str>,
    /// The re-arm of a deadline already past: the sleep had been interrupted.
    rearmed_late: Option<i64>,
    /// The callback of the thread's timer: when, and whether it woke the thread.
    expiry: Option<(i64, bool)>,
    /// The thread is switched out asleep (`S`/`D`) since arming its timer.
    asleep: bool,
    /// Times it went to sleep since arming its timer.
    sleeps_since_arm: u32,
    /// Its timer fired while it was asleep so.
    expired_asleep: bool,
    /// Inside that callback now.
    in_callback: bool,
    wake: Option<i64>,
    /// The thread was woken by a task rather than by its timer (timer spikes).
    woken_by_task: Option<(i64, &'a str, i32)>,
    run: Option<i64>,
    /// The thread switched out stopped (`T`/`t`) or asleep without its timer.
    stopped_at: Option<(i64, &'a str)>,
    slept_without_timer: Option<i64>,
    /// Woken by its timer for this sample, it slept (`S`) again before it read the
    /// clock: trapped on its way back to user space (the cgroup v2 freezer).
    trapped_after_wake: Option<i64>,
    /// Task-context time before the timer's callback: nothing was logged while the
    /// interrupt was due.
    silent_ns: u64,
    silent_in_idle: bool,
    idle_after_wake_ns: u64,
    /// Before the deadline: the last event's time, the time covered, and per
    /// real-time task (prio < 100) its share of it.
    hist_cursor: Option<i64>,
    hist_ns: u64,
    /// The recording's freezes ([`Context::unrecorded`]): not counted in the past.
    unrecorded: &'s [(i64, i64)],
    hist_rt: Vec<(i32, &'a str, i32, u64)>,
    /// Priorities seen in switch and wakeup events, by pid.
    prios: Vec<(i32, i32)>,
    /// The last sign of RT bandwidth control handing the CPU back to real-time tasks:
    /// the RT period timer's expiry (`sched_rt_period_timer`, RT throttling's
    /// unthrottle) or the fair server re-arming its replenishment timer when its
    /// runtime is spent (`hrtimer_start` of `dl_task_timer`, Linux 6.12+).
    throttle_end: Option<i64>,
    timerlat: Timerlat,
}

impl<'a, 's> Walk<'a, 's> {
    fn new(spike: &'s Spike) -> Self {
        Walk {
            spike,
            current: None,
            stack: Vec::with_capacity(4),
            acc: Accounts::default(),
            cursor: None,
            at_deadline: None,
            timer: None,
            rearmed_late: None,
            expiry: None,
            asleep: false,
            sleeps_since_arm: 0,
            expired_asleep: false,
            in_callback: false,
            wake: None,
            woken_by_task: None,
            run: None,
            stopped_at: None,
            slept_without_timer: None,
            trapped_after_wake: None,
            silent_ns: 0,
            silent_in_idle: false,
            idle_after_wake_ns: 0,
            hist_cursor: None,
            hist_ns: 0,
            unrecorded: &[],
            hist_rt: Vec::new(),
            prios: Vec::new(),
            throttle_end: None,
            timerlat: Timerlat::default(),
        }
    }

    /// Whether the measuring thread's wakeup has happened by now (for pairs and when
    /// the timer was not seen: its wakeup event).
    fn woken(&self) -> bool {
        self.wake.is_some() || self.expiry.is_some_and(|(_, woke)| woke)
    }

    /// Timerlat samples are read up to a period after the wakeup too.
    fn timerlat_after(&mut self, e: &Event<'a>) {
        if let Kind::Timerlat {
            context,
            latency_ns,
        } = e.kind
        {
            if e.ts_ns <= self.spike.wake_ns + AFTER_WAKE_NS {
                self.timerlat.add(context, latency_ns);
            }
        }
    }

    fn step(&mut self, e: &Event<'a>) {
        let s = self.spike;
        let tid = s.tid;
        // Before the window: who had the CPU (for RT throttling's evidence).
        if e.ts_ns < s.start_ns {
            let frozen_between = |from: i64| {
                self.unrecorded
                    .iter()
                    .any(|(a, b)| *a < e.ts_ns && *b > from)
            };
            if let (Some(from), Some(cur)) = (
                self.hist_cursor.filter(|f| !frozen_between(*f)),
                self.current,
            ) {
                let dt = (e.ts_ns - from).max(0) as u64;
                self.hist_ns += dt;
                if cur.prio < 100 && cur.pid != 0 {
                    match self.hist_rt.iter_mut().find(|h| h.0 == cur.pid) {
                        Some(h) => h.3 += dt,
                        None => self.hist_rt.push((cur.pid, cur.comm, cur.prio, dt)),
                    }
                }
            }
            self.hist_cursor = Some(e.ts_ns);
        }
        // Account the time since the previous event inside the window.
        if e.ts_ns >= s.start_ns {
            let from = self.cursor.unwrap_or(s.start_ns).max(s.start_ns);
            let dt = (e.ts_ns - from).max(0) as u64;
            self.account(dt);
            self.cursor = Some(e.ts_ns);
        }
        // The task column names the task on the CPU (also inside an interrupt): a
        // switch the trace lacks (some kernels do not log every switch out of the idle
        // task) is seen there.
        if self.current.map_or(true, |c| c.pid != e.pid) && !matches!(e.kind, Kind::Switch { .. }) {
            self.current = Some(Current {
                pid: e.pid,
                comm: e.comm,
                prio: self.prio_of(e.pid),
            });
            if e.pid == tid {
                self.asleep = false;
                // It ran before this sample's deadline (an event in its context): a
                // stop or a freezer's trap seen earlier ended.
                if e.ts_ns < s.start_ns {
                    self.stopped_at = None;
                    self.slept_without_timer = None;
                }
                if e.ts_ns >= s.start_ns && self.woken() {
                    self.run = Some(e.ts_ns);
                }
            }
        }
        if e.flags.bh_off && e.ts_ns >= s.start_ns && self.woken() {
            if let Some(cur) = self.current.filter(|c| c.pid != 0 && c.pid != tid) {
                self.acc.task(cur.pid, cur.comm, cur.prio).bh_off = true;
            }
        }
        if e.ts_ns >= s.start_ns && self.at_deadline.is_none() {
            let cur = self.current.unwrap_or(Current {
                pid: e.pid,
                comm: e.comm,
                prio: 120,
            });
            self.at_deadline = Some((cur, self.stack.last().copied()));
        }
        match e.kind {
            Kind::TimerStart {
                function: "dl_task_timer",
                ..
            } => {
                self.throttle_end = Some(e.ts_ns);
            }
            Kind::TimerExpire {
                function: "sched_rt_period_timer",
                ..
            } => {
                self.throttle_end = Some(e.ts_ns);
            }
            _ => {}
        }
        match e.kind {
            Kind::Switch {
                prev_pid,
                prev_state,
                next_comm,
                next_pid,
                next_prio,
                prev_prio,
                prev_comm,
            } => {
                self.note_prio(prev_pid, prev_prio);
                self.note_prio(next_pid, next_prio);
                // The priority a task ran at is the one it had when it left the CPU.
                if let Some(t) = self.acc.tasks.iter_mut().find(|t| t.pid == prev_pid) {
                    t.prio = prev_prio;
                    t.comm = prev_comm;
                }
                if next_pid == tid {
                    self.asleep = false;
                    // It ran again before this sample's deadline: a stop or a freezer's
                    // trap seen earlier in the buffer ended before this sample.
                    if e.ts_ns < s.start_ns {
                        self.stopped_at = None;
                        self.slept_without_timer = None;
                    }
                }
                if prev_pid == tid {
                    let sleeps = prev_state.starts_with('S') || prev_state.starts_with('D');
                    // A second sleep since arming the timer, with no expiry between:
                    // the thread was woken by something else and slept again.
                    let again = sleeps && self.timer.is_some() && self.sleeps_since_arm > 0;
                    if sleeps && self.timer.is_some() {
                        self.sleeps_since_arm += 1;
                    }
                    self.asleep = self.timer.is_some() && sleeps;
                    if prev_state.starts_with('T') || prev_state.starts_with('t') {
                        self.stopped_at = Some((e.ts_ns, prev_state));
                    } else if self.spike.kind == SpikeKind::Timer
                        && prev_state.starts_with('S')
                        && (self.woken_by_task.is_some() || again)
                        && self.expiry.is_none()
                        && e.ts_ns < s.start_ns
                    {
                        // Woken by a task, not by its timer, and asleep again without
                        // re-arming it: the freezer's trap (cgroup v2) or a stop.
                        self.slept_without_timer = Some(e.ts_ns);
                    } else if self.spike.kind == SpikeKind::Timer
                        && prev_state.starts_with('S')
                        && matches!(self.expiry, Some((_, true)))
                        && e.ts_ns >= s.start_ns
                        && e.ts_ns < s.wake_ns
                    {
                        // Woken by its timer, and asleep again before its clock read
                        // (the sample's wakeup): nothing in the measuring loop sleeps
                        // there. The freezer's trap did, which a freeze that lands
                        // between the timer's wakeup and the return to user space
                        // sets (kernel/signal.c, do_freezer_trap: an interruptible
                        // sleep). A lock would sleep uninterruptibly (`D`) and a stop
                        // is `T`: neither is taken for this.
                        self.trapped_after_wake.get_or_insert(e.ts_ns);
                    }
                }
                self.current = Some(Current {
                    pid: next_pid,
                    comm: next_comm,
                    prio: next_prio,
                });
                // The last switch-in before the clock read is the one the thread
                // measured from (an earlier one may have been a freezer's trap).
                if next_pid == tid && e.ts_ns >= s.start_ns {
                    self.run = Some(e.ts_ns);
                }
            }
            Kind::Wake { pid, prio, .. } if pid != tid => self.note_prio(pid, prio),
            Kind::Wake { pid, waking, .. } if pid == tid => {
                // Woken by its own timer's callback, or by anything else (a task, an
                // IPI doing a remote task's wakeup, the freezer, SIGCONT).
                let by_timer = self.in_callback;
                if s.kind == SpikeKind::Timer && !by_timer {
                    self.woken_by_task = Some((e.ts_ns, e.comm, e.pid));
                }
                if e.ts_ns >= s.start_ns && (!waking || self.wake.is_none()) {
                    self.wake.get_or_insert(e.ts_ns);
                }
                if let Some((_, woke)) = self.expiry.as_mut().filter(|_| by_timer) {
                    *woke = true;
                }
            }
            Kind::TimerStart {
                hrtimer,
                function,
                expires_ns,
                softexpires_ns,
            } if e.pid == tid && function == "hrtimer_wakeup" => {
                let d = s.timer_ns;
                if expires_ns == d || softexpires_ns == d {
                    if e.ts_ns > s.start_ns {
                        // The sleep was interrupted and restarted after its deadline:
                        // the timer that counts is the first one.
                        self.rearmed_late.get_or_insert(e.ts_ns);
                    } else {
                        self.woken_by_task = None;
                        self.slept_without_timer = None;
                        self.sleeps_since_arm = 0;
                        self.timer = Some(hrtimer);
                    }
                }
            }
            Kind::TimerExpire {
                hrtimer,
                now_ns,
                function,
            } => {
                // Inside any sleeping task's timer callback: a wakeup there is a
                // timer's (this cycle's or an earlier one's), not another task's.
                self.in_callback = function == "hrtimer_wakeup";
                if Some(hrtimer) == self.timer
                    && self.expiry.is_none()
                    && self.rearmed_late.is_none()
                    && e.ts_ns >= s.start_ns - 1_000
                {
                    self.expiry = Some((now_ns, false));
                    self.expired_asleep = self.asleep;
                }
            }
            Kind::TimerExpireExit { .. } => self.in_callback = false,
            Kind::IrqEntry { irq, name } => self.enter(Ctx::Irq(irq, name)),
            Kind::IrqExit { irq } => self.leave(|c| matches!(c, Ctx::Irq(i, _) if i == irq)),
            Kind::VectorEntry { name } => self.enter(Ctx::Vector(name)),
            Kind::VectorExit { name } => self.leave(|c| c == Ctx::Vector(name)),
            Kind::SoftirqEntry { vec } => self.enter(Ctx::Softirq(vec)),
            Kind::SoftirqExit { vec } => self.leave(|c| c == Ctx::Softirq(vec)),
            Kind::Nmi { delta_ns, .. } if e.ts_ns >= s.start_ns => {
                self.acc.nmi.count += 1;
                self.acc.nmi.ns += delta_ns;
            }
            Kind::WorkStart { function } if e.ts_ns >= s.start_ns => {
                let (comm, prio) = self.current.map_or((e.comm, 120), |c| (c.comm, c.prio));
                let t = self.acc.task(e.pid, comm, prio);
                match t.work.iter_mut().find(|(f, _)| *f == function) {
                    Some((_, w)) => w.count += 1,
                    None => t.work.push((function, IrqAcc { count: 1, ns: 0 })),
                }
            }
            Kind::Timerlat {
                context,
                latency_ns,
            } if e.ts_ns + 2 * AFTER_WAKE_NS >= s.start_ns => {
                self.timerlat.add(context, latency_ns);
            }
            _ => {}
        }
        // An exit seen without its entry (the trace began inside the handler): the
        // task is current again.
        if matches!(e.kind, Kind::Switch { .. }) {
            self.stack.clear();
        }
    }

    /// The last priority seen for `pid` ([`UNKNOWN_PRIO`] when none was).
    fn prio_of(&self, pid: i32) -> i32 {
        if pid == 0 {
            return 120;
        }
        self.prios
            .iter()
            .find(|(p, _)| *p == pid)
            .map_or(UNKNOWN_PRIO, |(_, pr)| *pr)
    }

    fn note_prio(&mut self, pid: i32, prio: i32) {
        match self.prios.iter_mut().find(|(p, _)| *p == pid) {
            Some((_, pr)) => *pr = prio,
            None => self.prios.push((pid, prio)),
        }
    }

    fn enter(&mut self, c: Ctx<'a>) {
        if self.stack.len() < 8 {
            self.stack.push(c);
        }
        if self.cursor.is_some() {
            self.acc.irq(c).count += 1;
        }
    }

    fn leave(&mut self, is: impl Fn(Ctx<'a>) -> bool) {
        if let Some(i) = self.stack.iter().rposition(|c| is(*c)) {
            self.stack.truncate(i);
        }
    }

    /// `dt` of the current context, ending at the event just read.
    fn account(&mut self, dt: u64) {
        if dt == 0 {
            return;
        }
        let before_irq = self.expiry.is_none() && !self.woken();
        if before_irq && self.spike.kind == SpikeKind::Timer && self.stack.is_empty() {
            self.silent_ns += dt;
            self.silent_in_idle |= self.current.is_some_and(|c| c.pid == 0);
        }
        if let Some(&c) = self.stack.last() {
            let a = self.acc.irq(c);
            a.ns += dt;
            // Entered before the window: it still counts once.
            a.count = a.count.max(1);
            return;
        }
        // The idle task gives the CPU up at once to a woken thread: idle time after
        // the wakeup is time the CPU did not run (a hypervisor, or the exit from a
        // C-state).
        if self.woken() && self.current.is_some_and(|c| c.pid == 0) {
            self.idle_after_wake_ns += dt;
        }
        if let Some(cur) = self.current {
            let woken = self.woken();
            let t = self.acc.task(cur.pid, cur.comm, cur.prio);
            if woken {
                t.after_wake_ns += dt;
            } else {
                t.before_wake_ns += dt;
            }
        }
    }
}

/// `local_timer (vector)`, `24:virtio0-input.0`, `NET_RX`.
fn ctx_name(c: Ctx<'_>) -> String {
    match c {
        Ctx::Irq(n, name) => format!("{n}:{name}"),
        Ctx::Vector(v) => format!("{v} (vector)"),
        Ctx::Softirq(v) => event::softirq_name(v).to_string(),
    }
}

mod cause;
mod finish;
#[cfg(test)]
mod tests;

//! Why a sample was late: a flight recorder on the kernel's generic trace events and
//! the analysis of the gap between a sample's deadline and its thread's wakeup.
//!
//! - [`recorder`]: a private tracefs instance (`instances/rtbench-PID`) recording the
//!   measured CPUs; the measuring thread freezes it with one write when a sample
//!   crosses the explain threshold ([`recorder::Trap::trip`]), the main thread reads
//!   the window and re-arms it.
//! - [`event`]: the trace text parsed into events.
//! - [`analyse`]: the attribution (IRQ and thread latency, what ran in the gap, the
//!   cause).
//! - [`counters`]: causes the trace cannot show alone, from counters the kernel keeps
//!   (CFS bandwidth, RT throttling settings, the kernel log, clock steps).
//! - [`hardware`]: the hwlat tracer gate and the x86 SMI count.
//!
//! Every duration here is **ns**; reports convert to µs.

pub mod advice;
#[cfg(feature = "explain")]
pub mod analyse;
pub mod counters;
pub mod event;
pub mod explainer;
pub mod hardware;
pub mod ledger;
pub mod recorder;
pub mod text;

use serde::{Deserialize, Serialize};

/// What woke the measuring thread: its timer (cyclic, monitor) or a message from its
/// sender (pmq, pipe).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SpikeKind {
    /// An absolute `clock_nanosleep` deadline.
    #[default]
    Timer,
    /// A message sent at `start_ns`.
    Message,
    /// A gap in a busy-poll loop that never sleeps (oslat): from `timer_ns` (the read
    /// before the gap) to `wake_ns` (the read after it); nothing wakes the thread, so
    /// what ran on its CPU in between is the whole cause.
    Poll,
}

/// One sample over the explain threshold, as the measuring thread saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Spike {
    /// The test (`cyclic`, `monitor`, `pmq`, `pipe`).
    pub test: String,
    /// Thread (or pair) index within the test.
    pub thread: usize,
    /// The CPU the thread woke on.
    pub cpu: usize,
    /// The measuring thread's id.
    pub tid: i32,
    /// Its kernel priority as trace events show it (`99 − rt_priority` for SCHED_FIFO,
    /// `120 + nice` for SCHED_OTHER).
    pub prio: i32,
    /// When the thread should have run, CLOCK_MONOTONIC **ns** (the trace's clock): the
    /// deadline, or the send time of a message.
    pub start_ns: i64,
    /// When it read the clock after waking, CLOCK_MONOTONIC **ns**.
    pub wake_ns: i64,
    /// The deadline in the clock the thread slept on (what `hrtimer_start` shows as
    /// `expires=`), **ns**; equal to `start_ns` on CLOCK_MONOTONIC.
    pub timer_ns: i64,
    /// Timer or message.
    pub kind: SpikeKind,
    /// The wakeup as wall-clock time, **ns** since the epoch (CLOCK_REALTIME −
    /// CLOCK_MONOTONIC at the analysis added to `wake_ns`): when it happened, for
    /// people and for matching other logs.
    #[serde(default)]
    pub wall_ns: i64,
}

impl Spike {
    /// [`Spike::wall_ns`] as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    pub fn when(&self) -> String {
        crate::date::iso_ms(self.wall_ns)
    }

    /// The sample, **ns**.
    pub fn latency_ns(&self) -> u64 {
        (self.wake_ns - self.start_ns).max(0) as u64
    }
}

/// What a cause is, for counting (Prometheus) and for the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    /// A task that outranks the measuring thread ran.
    Task,
    /// A task that does not outrank it kept the CPU after the wakeup (preemption or
    /// interrupts disabled in the kernel).
    PreemptOff,
    /// Hard IRQ handlers (including x86 system vectors).
    Irq,
    /// Softirqs.
    Softirq,
    /// NMI handlers.
    Nmi,
    /// Nothing logged while the timer's interrupt was due: interrupts off, or time
    /// outside the OS (SMI, firmware, hypervisor), or the exit from idle.
    Silent,
    /// The process or thread was stopped or frozen (SIGSTOP, cgroup freezer): not the
    /// system's latency.
    Stopped,
    /// CFS bandwidth throttling (`cpu.max`) of a SCHED_OTHER thread.
    CfsThrottled,
    /// RT throttling (`sched_rt_runtime_us`).
    RtThrottled,
    /// The wall clock was stepped inside a CLOCK_REALTIME sample.
    ClockStep,
    /// The trace did not cover the sample.
    Untraced,
    /// Covered, but no single cause stands out.
    #[default]
    Unknown,
}

impl CauseKind {
    /// The name in journal fields, JSON and Prometheus labels (`task`, `preempt_off`,
    /// `irq`, `softirq`, `nmi`, `silent`, `stopped`, `cfs_throttled`, `rt_throttled`,
    /// `clock_step`, `untraced`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            CauseKind::Task => "task",
            CauseKind::PreemptOff => "preempt_off",
            CauseKind::Irq => "irq",
            CauseKind::Softirq => "softirq",
            CauseKind::Nmi => "nmi",
            CauseKind::Silent => "silent",
            CauseKind::Stopped => "stopped",
            CauseKind::CfsThrottled => "cfs_throttled",
            CauseKind::RtThrottled => "rt_throttled",
            CauseKind::ClockStep => "clock_step",
            CauseKind::Untraced => "untraced",
            CauseKind::Unknown => "unknown",
        }
    }

    /// Every kind, in the order above.
    pub const ALL: [CauseKind; 12] = [
        CauseKind::Task,
        CauseKind::PreemptOff,
        CauseKind::Irq,
        CauseKind::Softirq,
        CauseKind::Nmi,
        CauseKind::Silent,
        CauseKind::Stopped,
        CauseKind::CfsThrottled,
        CauseKind::RtThrottled,
        CauseKind::ClockStep,
        CauseKind::Untraced,
        CauseKind::Unknown,
    ];
}

/// The headline of an explanation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Cause {
    /// What it is.
    pub kind: CauseKind,
    /// False when the sample is not the system's real-time latency (stopped,
    /// throttled, clock step): the measurement is invalid, not the unit.
    pub valid: bool,
    /// The time it took, **ns**.
    pub ns: u64,
    /// What it is, for people, without figures: `CPU 1 ran kworker/1:2 (pid 123,
    /// FIFO 99)`.
    pub text: String,
    /// The culprit task, when one is named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comm: Option<String>,
}

// Used by the analysis only.
#[cfg(feature = "explain")]
impl Cause {
    fn invalid(kind: CauseKind, text: String, ns: u64) -> Cause {
        Cause {
            kind,
            valid: false,
            ns,
            text,
            pid: None,
            comm: None,
        }
    }
}

/// A task that ran on the CPU inside the gap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct TaskUse {
    /// Its name.
    pub comm: String,
    /// Its pid (thread id; 0 is the idle task).
    pub pid: i32,
    /// Its kernel priority (see [`Spike::prio`]).
    pub prio: i32,
    /// Its scheduling policy from `/proc/PID/stat` when it still existed at the
    /// analysis (`FIFO`, `RR`, `OTHER`, `BATCH`, `IDLE`, `DEADLINE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// Time it ran inside the gap, **ns** (IRQ and softirq time excluded).
    pub ran_ns: u64,
    /// Of which after the measuring thread was woken, **ns**.
    pub after_wakeup_ns: u64,
    /// Its priority is higher than the measuring thread's.
    pub outranks: bool,
    /// It had bottom halves (softirqs) disabled at an event after the measuring
    /// thread's wakeup (`local_bh_disable`: the `b`/`D` trace flag, Linux 5.18+), so the
    /// stretch it kept the CPU was a softirq-disabled section.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bh_off: bool,
    /// It is one of rtbench's own threads.
    pub own: bool,
    /// Work items it ran (kworkers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub work: Vec<WorkUse>,
}

impl TaskUse {
    /// `kworker/1:2 (pid 123, FIFO 99)`, `stress-ng (pid 77, OTHER nice 0)`, `idle`.
    pub fn label(&self) -> String {
        if self.pid == 0 {
            return "idle".into();
        }
        let own = if self.own { ", rtbench's own" } else { "" };
        format!("{} (pid {}, {}{own})", self.comm, self.pid, self.sched())
    }

    /// `FIFO 99`, `RR 50`, `OTHER nice 0`, `DEADLINE`, `RT 99` when the policy is not
    /// known (FIFO and RR look alike in trace events).
    pub fn sched(&self) -> String {
        let rt = 99 - self.prio;
        match (self.policy.as_deref(), self.prio) {
            (_, p) if p < 0 => "DEADLINE".into(),
            (Some(pol), p) if p < 100 => format!("{pol} {rt}"),
            (None, p) if p < 100 => format!("RT {rt}"),
            (Some(pol), p) => format!("{pol} nice {}", p - 120),
            (None, p) => format!("nice {}", p - 120),
        }
    }
}

/// A work function a kworker ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct WorkUse {
    /// The function.
    pub function: String,
    /// How often.
    pub count: u64,
}

/// A hard IRQ, system vector, softirq vector or the NMIs inside the gap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct IrqUse {
    /// `24:virtio0-input.0`, `local_timer (vector)`, `NET_RX`, `NMI`.
    pub name: String,
    /// Handler runs.
    pub count: u64,
    /// Time in them, **ns**.
    pub ns: u64,
}

/// The timerlat tracer's samples around the spike: a second opinion from the kernel's
/// own measurement (Documentation/trace/timerlat-tracer.rst).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Timerlat {
    /// Largest IRQ latency, **ns**.
    pub irq_max_ns: u64,
    /// Largest thread latency, **ns**.
    pub thread_max_ns: u64,
    /// Samples read.
    pub samples: u64,
}

// Used by the analysis only.
#[cfg(feature = "explain")]
impl Timerlat {
    fn add(&mut self, context: &str, ns: u64) {
        self.samples += 1;
        match context {
            "irq" => self.irq_max_ns = self.irq_max_ns.max(ns),
            "thread" => self.thread_max_ns = self.thread_max_ns.max(ns),
            _ => {}
        }
    }

    fn seen(&self) -> bool {
        self.samples > 0
    }
}

/// One explained sample.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Explanation {
    /// The sample.
    pub spike: Spike,
    /// Deadline → the timer's callback, **ns** (timer spikes whose timer was seen).
    pub irq_latency_ns: Option<u64>,
    /// Deadline (or send) → the switch to the measuring thread, **ns**.
    pub thread_latency_ns: Option<u64>,
    /// The task that was running when the thread should have run (in the IRQ named
    /// in its `work`, if one was running).
    pub at_deadline: Option<TaskUse>,
    /// Every task that ran in the gap, longest first.
    pub tasks: Vec<TaskUse>,
    /// Hard IRQs and system vectors in the gap, longest first.
    pub irqs: Vec<IrqUse>,
    /// Softirqs in the gap, longest first.
    pub softirqs: Vec<IrqUse>,
    /// NMIs in the gap.
    pub nmis: Option<IrqUse>,
    /// Time before the timer's callback with no event at all, **ns**.
    pub silent_ns: u64,
    /// The timerlat tracer's figures, where it ran.
    pub timerlat: Option<Timerlat>,
    /// The headline.
    pub cause: Cause,
    /// What limits the analysis (events lost, trace too short).
    pub notes: Vec<String>,
    /// What would move each contributor off the CPU: the boot parameter or `[tuning]`
    /// key ([`advice::advice`]); absent in results of older versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub advice: Vec<String>,
}

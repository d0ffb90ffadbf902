//! The flight recorder: rtbench's own tracefs instance recording the measured CPUs,
//! frozen by a measuring thread when a sample crosses its threshold, read and re-armed
//! by the main thread.
//!
//! Set-up ([`Recorder::start`]): `instances/rtbench-PID` ([`crate::sys::tracefs`]),
//! `trace_clock` = `mono` (trace times are CLOCK_MONOTONIC, the clock the deadlines are
//! on), `buffer_size_kb` per CPU, `tracing_cpumask` = the measured CPUs, the events of
//! [`EVENTS`] that the kernel has, `options/disable_on_free` with `free_buffer` held
//! open: if rtbench dies, the kernel stops the recording and frees the buffer when the
//! file closes, and the next start removes the instance.
//!
//! The measuring thread's side is [`Trap::trip`]: on the hot path only a load of the
//! thread's threshold per sample; when a sample crosses it, a few atomic stores and one
//! `write(2)` of `0` to the instance's `tracing_on` (no allocation, no formatting, no
//! lock). Everything else happens on the main thread ([`super::explainer::Explainer`]).

use crate::cpuset::CpuSet;
use crate::sys::tracefs::{Instance, Tracefs};
use crate::sys::SysRoot;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// The events recorded: `(system, event, required)`. Without a required one nothing
/// can be explained; the others make the attribution finer where the kernel has them
/// (`irq_vectors` is x86's, `ipi_entry`/`ipi_exit` arm's and arm64's).
pub const EVENTS: &[(&str, &str, bool)] = &[
    ("sched", "sched_switch", true),
    ("sched", "sched_wakeup", true),
    ("timer", "hrtimer_start", true),
    ("timer", "hrtimer_expire_entry", true),
    ("timer", "hrtimer_expire_exit", false),
    ("irq", "irq_handler_entry", false),
    ("irq", "irq_handler_exit", false),
    ("irq", "softirq_entry", false),
    ("irq", "softirq_exit", false),
    ("nmi", "nmi_handler", false),
    ("ipi", "ipi_entry", false),
    ("ipi", "ipi_exit", false),
    ("workqueue", "workqueue_execute_start", false),
    ("workqueue", "workqueue_execute_end", false),
    ("irq_vectors", "local_timer_entry", false),
    ("irq_vectors", "local_timer_exit", false),
    ("irq_vectors", "reschedule_entry", false),
    ("irq_vectors", "reschedule_exit", false),
    ("irq_vectors", "call_function_entry", false),
    ("irq_vectors", "call_function_exit", false),
    ("irq_vectors", "call_function_single_entry", false),
    ("irq_vectors", "call_function_single_exit", false),
    ("irq_vectors", "irq_work_entry", false),
    ("irq_vectors", "irq_work_exit", false),
    ("irq_vectors", "x86_platform_ipi_entry", false),
    ("irq_vectors", "x86_platform_ipi_exit", false),
    ("irq_vectors", "thermal_apic_entry", false),
    ("irq_vectors", "thermal_apic_exit", false),
];

/// Default ring buffer per recorded CPU, **KiB**: at 1 kHz and the idle event rate of
/// the development VM about 1.5 s of history, read and analysed in well under 50 ms.
pub const DEFAULT_BUFFER_KIB: u32 = 512;

/// How the recorder is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecorderSpec {
    /// The CPUs to record (the measured ones).
    pub cpus: CpuSet,
    /// Ring buffer per CPU, **KiB**.
    pub buffer_kib: u32,
    /// Also run the timerlat tracer in the instance for a second opinion
    /// (Documentation/trace/timerlat-tracer.rst). It adds a SCHED_FIFO 95 thread per
    /// CPU waking every 1 ms: opt-in.
    pub timerlat: bool,
}

/// One measuring thread's trap: its threshold and its pending sample.
#[derive(Debug, Default)]
pub struct Slot {
    /// Samples above this many **ns** trip the trap (`u64::MAX`: never).
    pub threshold_ns: AtomicU64,
    pending: AtomicBool,
    timer_ns: AtomicI64,
    wake_ns: AtomicI64,
    cpu: AtomicU32,
    /// Samples over the threshold that found the trap busy: not explained.
    pub missed: AtomicU64,
    /// Their latencies summed, **ns** (for the ledger's time over the threshold).
    missed_sum_ns: AtomicU64,
    /// The largest of them since the main thread last took it, **ns**.
    missed_worst_ns: AtomicU64,
}

/// What a thread's trap counted without a recording since it was last asked:
/// [`Trap::missed_since`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Missed {
    /// Samples over the threshold that found the trap busy, all of the run.
    pub count: u64,
    /// Their latencies summed, **ns**, all of the run.
    pub sum_ns: u64,
    /// The largest since the last call, **ns**.
    pub worst_ns: u64,
}

/// A sample caught by a trap, taken by the main thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caught {
    /// The thread (slot) index.
    pub thread: usize,
    /// The deadline or send time in the thread's clock, **ns**.
    pub timer_ns: i64,
    /// The clock read after the wakeup, same clock, **ns**.
    pub wake_ns: i64,
    /// The CPU the thread woke on.
    pub cpu: usize,
}

/// [`Trap`]'s "nobody froze it yet" (armed).
const UNSET: usize = usize::MAX - 1;

/// The measuring threads' side of the recorder (shared with them).
#[derive(Debug)]
pub struct Trap {
    tracing_on: Option<File>,
    frozen: AtomicBool,
    /// Who froze the recording last and when: the thread (`usize::MAX`: the main
    /// thread; [`UNSET`] while armed) and its wakeup on its own clock, **ns** (the main
    /// thread's: monotonic). The write follows within microseconds; a sample that woke
    /// later was not recorded to its end.
    frozen_by: AtomicUsize,
    frozen_at_ns: AtomicI64,
    slots: Box<[Slot]>,
}

impl Trap {
    /// A trap for `threads` threads with no recorder behind it (every threshold
    /// `u64::MAX`): what threads get when nothing is explained.
    pub fn idle(threads: usize) -> Trap {
        let t = Trap {
            tracing_on: None,
            frozen: AtomicBool::new(false),
            frozen_by: AtomicUsize::new(UNSET),
            frozen_at_ns: AtomicI64::new(i64::MAX),
            slots: (0..threads).map(|_| Slot::default()).collect(),
        };
        for s in t.slots.iter() {
            s.threshold_ns.store(u64::MAX, Ordering::Relaxed);
        }
        t
    }

    /// Thread `thread`'s slot (its threshold is read on the hot path).
    pub fn slot(&self, thread: usize) -> &Slot {
        &self.slots[thread]
    }

    /// Called by thread `thread` for a sample over its threshold: records the deadline
    /// (`timer_ns`), the wakeup (`wake_ns`) and the CPU, and freezes the recorder with
    /// one write unless it is frozen already. A thread whose previous sample is still
    /// being analysed counts the sample as missed.
    #[inline]
    pub fn trip(&self, thread: usize, timer_ns: i64, wake_ns: i64, cpu: usize) {
        let s = &self.slots[thread];
        if s.pending.load(Ordering::Acquire) {
            // Counted for the ledger; no write, no freeze.
            let latency = (wake_ns - timer_ns).max(0) as u64;
            s.missed.fetch_add(1, Ordering::Relaxed);
            s.missed_sum_ns.fetch_add(latency, Ordering::Relaxed);
            s.missed_worst_ns.fetch_max(latency, Ordering::Relaxed);
            return;
        }
        s.timer_ns.store(timer_ns, Ordering::Relaxed);
        s.wake_ns.store(wake_ns, Ordering::Relaxed);
        s.cpu.store(cpu as u32, Ordering::Relaxed);
        s.pending.store(true, Ordering::Release);
        self.freeze(thread, wake_ns);
    }

    /// Stops the recording (one `write(2)` of `0` to `tracing_on`), once; notes who
    /// and when (`at_ns`, on `by`'s clock).
    fn freeze(&self, by: usize, at_ns: i64) {
        if !self.frozen.swap(true, Ordering::AcqRel) {
            self.frozen_at_ns.store(at_ns, Ordering::Relaxed);
            self.frozen_by.store(by, Ordering::Release);
            if let Some(f) = &self.tracing_on {
                // SAFETY: a valid open file descriptor and a 1-byte buffer.
                unsafe { libc::write(f.as_raw_fd(), b"0".as_ptr().cast(), 1) };
            }
        }
    }

    /// The samples caught since the last call (the main thread's side), freezing the
    /// recorder if a thread caught one while it was being re-armed. Slots `held` (by
    /// index; the main thread keeps them busy: the rate limit) are left out.
    pub fn take(&self, held: &[bool]) -> Vec<Caught> {
        let mut v = Vec::new();
        for (i, s) in self.slots.iter().enumerate() {
            if held.get(i).copied().unwrap_or(false) {
                continue;
            }
            if s.pending.load(Ordering::Acquire) {
                v.push(Caught {
                    thread: i,
                    timer_ns: s.timer_ns.load(Ordering::Relaxed),
                    wake_ns: s.wake_ns.load(Ordering::Relaxed),
                    cpu: s.cpu.load(Ordering::Relaxed) as usize,
                });
            }
        }
        if !v.is_empty() {
            self.freeze(usize::MAX, crate::sys::clock::Clock::Monotonic.now_ns());
        }
        v
    }

    /// Who froze the recording and when (see the field): `(thread or usize::MAX,
    /// ns on its clock)`. Read after [`Trap::take`]; the thread that won the freeze
    /// may be between its swap and its note of who it is (nanoseconds): waited for.
    pub fn frozen(&self) -> (usize, i64) {
        let mut by = self.frozen_by.load(Ordering::Acquire);
        for _ in 0..1_000_000 {
            if by != UNSET {
                break;
            }
            std::thread::yield_now();
            by = self.frozen_by.load(Ordering::Acquire);
        }
        (by, self.frozen_at_ns.load(Ordering::Relaxed))
    }

    /// Armed again (the recording was switched back on): nobody froze it yet.
    fn rearmed(&self) {
        self.frozen_by.store(UNSET, Ordering::Relaxed);
        self.frozen.store(false, Ordering::Release);
    }

    /// Frees the slots of `caught` for new samples.
    pub fn release(&self, caught: &[Caught]) {
        for c in caught {
            self.slots[c.thread].pending.store(false, Ordering::Release);
        }
    }

    /// What thread `thread`'s trap counted while busy ([`Missed`]; the worst is taken,
    /// so the next call reports the worst after this one).
    pub fn missed_since(&self, thread: usize) -> Missed {
        let s = &self.slots[thread];
        Missed {
            count: s.missed.load(Ordering::Relaxed),
            sum_ns: s.missed_sum_ns.load(Ordering::Relaxed),
            worst_ns: s.missed_worst_ns.swap(0, Ordering::Relaxed),
        }
    }

    /// Samples not explained because the trap was busy, per thread.
    pub fn missed(&self) -> Vec<u64> {
        self.slots
            .iter()
            .map(|s| s.missed.load(Ordering::Relaxed))
            .collect()
    }
}

/// The recorder: the instance, the trap, what the kernel lacked.
#[derive(Debug)]
pub struct Recorder {
    // Dropped in this order: the files of the instance close before its rmdir.
    trap: std::sync::Arc<Trap>,
    // Held open for its close: see `start`.
    _free_buffer: Option<File>,
    instance: Instance,
    /// Buffer per CPU, **KiB**.
    pub buffer_kib: u32,
    /// Optional events the kernel does not have, other than one architecture's own
    /// (x86's `irq_vectors`, arm's `ipi_entry`/`ipi_exit`): `irq:softirq_entry` ….
    pub missing: Vec<String>,
    /// The instances of crashed rtbench processes removed at the start, and those named
    /// like one that were left alone.
    pub reclaimed: crate::sys::tracefs::Reclaim,
    /// The timerlat tracer runs in the instance.
    pub timerlat: bool,
    /// Why timerlat was asked for and does not run.
    pub timerlat_unavailable: Option<String>,
}

impl Recorder {
    /// Sets up the instance for `spec` and starts recording; `threads` slots, every
    /// threshold `u64::MAX` until set.
    ///
    /// Errors: one line for "cannot explain: …" — no tracefs, no permission to make
    /// an instance, no `mono` trace clock, a required event missing. Nothing is left
    /// behind on error (the instance is removed).
    pub fn start(root: &SysRoot, spec: &RecorderSpec, threads: usize) -> Result<Recorder, String> {
        let fs = Tracefs::open(root).map_err(|e| e.0)?;
        let reclaimed = fs.reclaim();
        let instance = Instance::create(&fs).map_err(|e| {
            format!(
                "cannot make a tracefs instance in {}: {e}",
                fs.dir.join("instances").display()
            )
        })?;
        let set = |rel: &str, v: &str| {
            instance
                .write(rel, v)
                .map_err(|e| format!("{}: cannot write {v:?}: {e}", instance.path(rel).display()))
        };
        set("tracing_on", "0")?;
        set("trace_clock", "mono").map_err(|e| {
            format!("{e} (the trace clock must be CLOCK_MONOTONIC, `mono`, to compare with the deadlines)")
        })?;
        // Memory only for the measured CPUs: every other CPU's buffer shrinks to the
        // kernel's minimum (a page or two), each measured CPU's is `buffer_kib`
        // (per_cpu/cpuN/buffer_size_kb; the instance-wide file where that fails).
        let kib = spec.buffer_kib.to_string();
        let per_cpu = set("buffer_size_kb", "4").is_ok()
            && spec
                .cpus
                .iter()
                .all(|c| set(&format!("per_cpu/cpu{c}/buffer_size_kb"), &kib).is_ok());
        if !per_cpu {
            set("buffer_size_kb", &kib)?;
        }
        if let Some(last) = spec.cpus.last() {
            set("tracing_cpumask", &spec.cpus.to_mask(last + 1))?;
        }
        let mut missing = Vec::new();
        for (sys, ev, required) in EVENTS {
            let rel = format!("events/{sys}/{ev}/enable");
            if !instance.has(&rel) {
                if *required {
                    return Err(format!("the kernel has no trace event {sys}:{ev}"));
                }
                if *sys != "irq_vectors" && *sys != "ipi" {
                    missing.push(format!("{sys}:{ev}"));
                }
                continue;
            }
            set(&rel, "1")?;
        }
        // Crash safety: closing free_buffer (also when the process dies) stops the
        // recording and shrinks the buffer.
        let free_buffer = if instance.has("options/disable_on_free") {
            let _ = instance.write("options/disable_on_free", "1");
            instance.open_write("free_buffer").ok()
        } else {
            None
        };
        let (timerlat, timerlat_unavailable) = if spec.timerlat {
            if !fs.has_tracer("timerlat") {
                (
                    false,
                    Some("unsupported: CONFIG_TIMERLAT_TRACER".to_string()),
                )
            } else {
                match instance.write("current_tracer", "timerlat") {
                    Ok(()) => (true, None),
                    Err(e) => (false, Some(format!("timerlat not started: {e}"))),
                }
            }
        } else {
            (false, None)
        };
        let tracing_on = instance
            .open_write("tracing_on")
            .map_err(|e| format!("{}: {e}", instance.path("tracing_on").display()))?;
        let trap = Trap {
            tracing_on: Some(tracing_on),
            ..Trap::idle(threads)
        };
        set("tracing_on", "1")?;
        Ok(Recorder {
            trap: std::sync::Arc::new(trap),
            _free_buffer: free_buffer,
            instance,
            buffer_kib: spec.buffer_kib,
            missing,
            reclaimed,
            timerlat,
            timerlat_unavailable,
        })
    }

    /// The trap the measuring threads trip.
    pub fn trap(&self) -> &std::sync::Arc<Trap> {
        &self.trap
    }

    /// The recorded text of `cpu` (`per_cpu/cpuN/trace`), at most a generous multiple of
    /// the buffer's size (its events rendered as text).
    pub fn read_cpu(&self, cpu: usize) -> std::io::Result<String> {
        let max = u64::from(self.buffer_kib) * 1024 * 16;
        self.instance.read(&format!("per_cpu/cpu{cpu}/trace"), max)
    }

    /// Records again after an analysis. The buffers are not emptied (that costs an RCU
    /// grace period, tens of ms): the ring overwrites the oldest events, and the next
    /// analysis reads from the next sample's deadline on.
    pub fn rearm(&self) -> std::io::Result<()> {
        self.instance.write("tracing_on", "1")?;
        self.trap.rearmed();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_trap_counts_what_it_cannot_record_and_skips_held_slots() {
        let t = Trap::idle(2);
        t.trip(0, 1_000, 3_000, 1);
        // Busy: counted, not recorded.
        t.trip(0, 10_000, 15_000, 1);
        t.trip(0, 20_000, 24_000, 1);
        let m = t.missed_since(0);
        assert_eq!((m.count, m.sum_ns, m.worst_ns), (2, 9_000, 5_000));
        // The worst is taken: the next call reports what came after.
        assert_eq!(t.missed_since(0).worst_ns, 0);
        assert!(t.take(&[true]).is_empty(), "a held slot is left out");
        let c = t.take(&[]);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].timer_ns, c[0].wake_ns), (1_000, 3_000));
        t.release(&c);
        t.trip(0, 30_000, 31_000, 1);
        assert_eq!(t.missed_since(0).count, 2, "a free slot records");
        assert_eq!(t.missed(), vec![2, 0]);
    }
}

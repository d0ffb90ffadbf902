//! Running measuring threads: the shared stop flag and start barrier, signal handling
//! on the main thread, and the supervision loop that prints progress.
//!
//! Signals: SIGINT, SIGTERM and SIGUSR1 are blocked before any measuring thread is
//! spawned (threads inherit the mask), and the main thread takes them synchronously
//! with `sigtimedwait(2)`. No async signal handler runs, and a measuring thread is never
//! interrupted by one.

use crate::cpuset::CpuSet;
use crate::error::Result;
use crate::sys::pmqos::PmQosHolder;
use crate::sys::signals::Signals;
use crate::sys::{sched, SysRoot};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex, Once};
use std::time::{Duration, Instant};

/// Whether a setup line is a fact for standard output or a warning for standard error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Say {
    /// e.g. `# /dev/cpu_dma_latency set to 0us` (cyclictest prints it on stdout).
    Notice,
    /// Something that may make the figures worse.
    Warning,
}

/// Prepares the process for a measurement, in cyclictest's order: `mlockall` (when
/// asked), the `/dev/cpu_dma_latency` request (held until the returned holder drops),
/// and the main thread's affinity. A refused mlockall or affinity is an error (exit 3);
/// a PM QoS request that cannot be made is only a warning, as in cyclictest.
pub fn prepare_process(
    mlockall: bool,
    pm_qos_us: Option<i32>,
    main_cpus: Option<&CpuSet>,
    root: &SysRoot,
    say: &mut dyn FnMut(Say, &str),
) -> Result<Option<PmQosHolder>> {
    if mlockall {
        sched::lock_memory()?;
    }
    let pm_qos = match pm_qos_us {
        Some(us) => match PmQosHolder::hold(root, us) {
            Ok(h) => {
                say(
                    Say::Notice,
                    &format!("# /dev/cpu_dma_latency set to {us}us"),
                );
                Some(h)
            }
            Err(e) => {
                say(
                    Say::Warning,
                    &format!("# /dev/cpu_dma_latency not set ({e}); C-state exits may add latency"),
                );
                None
            }
        },
        None => None,
    };
    if let Some(cpus) = main_cpus {
        sched::set_affinity(cpus)?;
    }
    Ok(pm_qos)
}

/// State shared by the main thread and every measuring thread of one run.
#[derive(Debug)]
pub struct Shared {
    /// Set to end the run; measuring threads check it once per cycle.
    pub stop: AtomicBool,
    /// All measuring threads and the main thread meet here after setup, so the first
    /// samples of every thread are taken together.
    pub barrier: Barrier,
    /// Measuring threads to interrupt (with [`wake_signal`]) when the run stops.
    sleepers: Mutex<Vec<libc::pthread_t>>,
}

/// The signal that interrupts a measuring thread's `clock_nanosleep` when the run
/// stops, so SIGINT/SIGTERM take effect at once even with an interval of minutes
/// (cyclictest does the same with SIGTERM to its threads). Its handler does nothing;
/// the sleep returns EINTR and the thread sees the stop flag.
pub fn wake_signal() -> i32 {
    libc::SIGRTMIN()
}

extern "C" fn on_wake(_: libc::c_int) {}

fn install_wake_handler() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: a zeroed sigaction with a valid handler and an empty mask; no
        // SA_RESTART, so clock_nanosleep returns EINTR.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_wake as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(wake_signal(), &sa, std::ptr::null_mut());
        }
    });
}

impl Shared {
    /// Shared state for `threads` measuring threads plus the main thread.
    pub fn new(threads: usize) -> Self {
        install_wake_handler();
        Shared {
            stop: AtomicBool::new(false),
            barrier: Barrier::new(threads + 1),
            sleepers: Mutex::new(Vec::with_capacity(threads)),
        }
    }

    /// Registers the calling thread to be woken when the run stops (call during setup,
    /// not in the hot loop).
    pub fn register_sleeper(&self) {
        // SAFETY: pthread_self cannot fail.
        let me = unsafe { libc::pthread_self() };
        self.sleepers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(me);
    }

    /// Interrupts every registered thread's sleep (see [`wake_signal`]).
    pub fn wake_sleepers(&self) {
        let me = unsafe { libc::pthread_self() };
        let sleepers = self.sleepers.lock().unwrap_or_else(|e| e.into_inner());
        for &t in sleepers.iter() {
            if t != me {
                // SAFETY: t was a live thread of this run; a finished thread's id is
                // only signalled while the main thread still holds its JoinHandle.
                unsafe { libc::pthread_kill(t, wake_signal()) };
            }
        }
    }

    /// Whether the run should end.
    #[inline(always)]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Ends the run and wakes the sleeping measuring threads.
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.wake_sleepers();
    }
}

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
}

impl StopCause {
    /// Whether the run was cut short by a signal.
    pub fn interrupted(self) -> bool {
        matches!(self, StopCause::Sigint | StopCause::Sigterm)
    }
}

/// What the supervision loop asks its caller to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tick {
    /// A report period has passed (live output).
    Report,
    /// SIGUSR1 arrived: dump the current status to stderr.
    Status,
}

/// Supervises a run from the main thread until `finished()` says every measuring
/// thread has returned: takes signals (SIGINT/SIGTERM stop the run, SIGUSR1 gives
/// [`Tick::Status`]) and gives [`Tick::Report`] every `report_every` when set. Returns
/// the signal that stopped the run, if any.
pub fn supervise(
    signals: &Signals,
    shared: &Shared,
    report_every: Option<Duration>,
    mut finished: impl FnMut() -> bool,
    mut tick: impl FnMut(Tick),
) -> Option<StopCause> {
    let poll = Duration::from_millis(50);
    let mut cause = None;
    let mut next_report = report_every.map(|d| Instant::now() + d);
    while !finished() {
        let mut wait = poll;
        if let Some(t) = next_report {
            wait = wait.min(t.saturating_duration_since(Instant::now()));
        }
        if shared.stopped() {
            // A thread may have checked the flag just before the first wake and gone back
            // to sleep: wake again until every thread has returned.
            shared.wake_sleepers();
        }
        match signals.wait(wait) {
            Some(libc::SIGINT) => {
                cause.get_or_insert(StopCause::Sigint);
                shared.request_stop();
            }
            Some(libc::SIGTERM) => {
                cause.get_or_insert(StopCause::Sigterm);
                shared.request_stop();
            }
            Some(libc::SIGUSR1) => tick(Tick::Status),
            _ => {}
        }
        if let (Some(t), Some(every)) = (next_report, report_every) {
            if Instant::now() >= t && !shared.stopped() {
                tick(Tick::Report);
                next_report = Some(t + every);
            }
        }
    }
    cause
}

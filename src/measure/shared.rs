//! The state one run's main thread and measuring threads share: the stop flag, the
//! start barrier, and the threads to wake when the run stops. A stop wakes sleeping
//! threads with [`wake_signal`], whose handler does nothing, so a long
//! `clock_nanosleep` or blocking receive returns EINTR at once (cyclictest sends its
//! threads SIGTERM for the same reason).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex, Once};

/// State shared by the main thread and every measuring thread of one run.
#[derive(Debug)]
pub struct Shared {
    /// Set to end the run; measuring threads check it once per cycle.
    stop: AtomicBool,
    /// All measuring threads and the main thread meet here after setup, so the first
    /// samples of every thread are taken together.
    pub(super) barrier: Barrier,
    /// Threads to interrupt (with [`wake_signal`]) when the run stops.
    sleepers: Mutex<Vec<libc::pthread_t>>,
}

/// The signal that interrupts a measuring thread's `clock_nanosleep` (or blocking
/// receive) when the run stops, so SIGINT/SIGTERM take effect at once even with an
/// interval of minutes (cyclictest does the same with SIGTERM to its threads).
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
    pub(super) fn new(threads: usize) -> Self {
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
    pub(super) fn wake_sleepers(&self) {
        // SAFETY: pthread_self cannot fail.
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

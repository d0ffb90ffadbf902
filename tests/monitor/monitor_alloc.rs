//! The monitor's measuring thread allocates nothing once it measures — also not when
//! windows are handed over — so it can run for weeks without touching the allocator
//! (no page faults, no malloc locks on the measuring path). A counting global allocator
//! watches the measuring thread's kernel thread id while real windows are closed.
#![cfg(feature = "monitor")]

use rtbench::measure::harness::Progress;
use rtbench::measure::monitor::{self, Link, MonitorSpec, Windows};
use rtbench::measure::stats::LiveSnapshot;
use rtbench::measure::{RunControl, ThreadSpec};
use rtbench::sys::sched::Policy;
use rtbench::sys::SysRoot;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The thread whose allocations are counted (0: none yet).
static WATCH: AtomicI64 = AtomicI64::new(0);
static ALLOCS: AtomicU64 = AtomicU64::new(0);
/// One watched thread at a time: the tests of this file run one after the other.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

struct Counting;

// SAFETY: every call is passed on unchanged to the system allocator, which keeps the
// GlobalAlloc contract; only a counter is updated besides.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract of GlobalAlloc::alloc, passed on.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        count();
        // SAFETY: the caller's contract of GlobalAlloc::dealloc, passed on.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        // SAFETY: the caller's contract of GlobalAlloc::realloc, passed on.
        unsafe { System.realloc(p, l, n) }
    }
}

#[allow(clippy::useless_conversion)] // c_long: 32 bits on armv7
fn count() {
    let watch = WATCH.load(Ordering::Relaxed);
    // SAFETY: gettid has no arguments and cannot fail; it does not allocate.
    if watch != 0 && i64::from(unsafe { libc::syscall(libc::SYS_gettid) }) == watch {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
    }
}

#[global_allocator]
static A: Counting = Counting;

struct Windowing {
    links: Vec<Link>,
    windows: Arc<Windows>,
    handed: u64,
    /// Allocations of the watched thread up to the last report before the run is asked
    /// to stop (while it surely measured).
    allocs: u64,
    /// Set when enough windows were handed over: the run stops at the next report.
    stop: bool,
}

impl Progress for Windowing {
    fn report(&mut self, _: &[ThreadSpec], live: &[LiveSnapshot]) {
        if WATCH.load(Ordering::Relaxed) == 0 {
            WATCH.store(live[0].tid as i64, Ordering::Relaxed);
        }
        for l in &self.links {
            while let Some(s) = l.take() {
                self.handed += 1;
                l.give_back(s);
            }
        }
        self.windows.current.fetch_add(1, Ordering::Release);
        if !self.stop {
            self.allocs = ALLOCS.load(Ordering::Relaxed);
            self.stop = self.handed >= 20;
        }
    }
    fn wants_stop(&mut self) -> bool {
        self.stop
    }
    fn status(&mut self, _: &[ThreadSpec], _: &[LiveSnapshot]) {}
    fn notice(&mut self, _: &str) {}
    fn warning(&mut self, _: &str) {}
}

#[test]
fn measuring_thread_allocates_nothing_across_window_hand_overs() {
    // A measuring thread in this process: the machine is shared (common::lock).
    crate::common::shared();
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    WATCH.store(0, Ordering::Relaxed);
    ALLOCS.store(0, Ordering::Relaxed);
    let spec = MonitorSpec {
        threads: vec![ThreadSpec {
            index: 0,
            cpu: Some(0),
            policy: Policy::Other,
            priority: 0,
            interval_us: 500,
        }],
        control: RunControl {
            // Until 20 windows were handed over (`wants_stop`); the duration only
            // bounds a run that never gets there.
            duration: Some(Duration::from_secs(60)),
            loops: None,
            mlockall: false,
            pm_qos_us: None,
            main_cpus: None,
            report_every: Some(Duration::from_millis(50)),
            break_ns: None,
            tracemark: false,
            histogram: None,
            explain: None,
        },
    };
    let windows = Arc::new(Windows::default());
    let (threads, links) = monitor::threads(&spec, &windows);
    let mut p = Windowing {
        links,
        windows,
        handed: 0,
        allocs: 0,
        stop: false,
    };
    let (last, _) = monitor::run(&spec, threads, &SysRoot::host(), &mut p).unwrap();
    assert!(WATCH.swap(0, Ordering::Relaxed) > 0);
    // Windows of 50 ms were handed over while the thread was watched.
    assert!(p.handed >= 20, "{}", p.handed);
    assert!(last[0].stats.count > 0);
    // While it measured: nothing. (Its exit, after the loop, frees its slot's box.)
    assert_eq!(p.allocs, 0);
}

/// Progress of a busy-poll run: watches the polling thread from the first report,
/// notes its allocations after ten reports (it surely polled meanwhile), then stops.
struct Polling {
    reports: u32,
    allocs: Option<u64>,
}

impl Progress for Polling {
    fn report(&mut self, _: &[ThreadSpec], live: &[LiveSnapshot]) {
        if WATCH.load(Ordering::Relaxed) == 0 && live[0].tid > 0 {
            WATCH.store(live[0].tid as i64, Ordering::Relaxed);
            return;
        }
        self.reports += 1;
        if self.reports == 10 {
            self.allocs = Some(ALLOCS.load(Ordering::Relaxed));
        }
    }
    fn wants_stop(&mut self) -> bool {
        self.allocs.is_some()
    }
    fn status(&mut self, _: &[ThreadSpec], _: &[LiveSnapshot]) {}
    fn notice(&mut self, _: &str) {}
    fn warning(&mut self, _: &str) {}
}

/// The busy-poll loop (`rtbench oslat`, the self-test's `[poll]`) allocates nothing
/// while it polls: every gap goes into buffers the main thread allocated.
#[test]
fn polling_thread_allocates_nothing() {
    use rtbench::measure::poll::{self, BucketSetting, PollSpec};
    crate::common::shared();
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    WATCH.store(0, Ordering::Relaxed);
    ALLOCS.store(0, Ordering::Relaxed);
    let spec = PollSpec {
        threads: vec![ThreadSpec {
            index: 0,
            cpu: Some(0),
            policy: Policy::Other,
            priority: 0,
            interval_us: 0,
        }],
        control: RunControl {
            duration: Some(Duration::from_secs(60)),
            loops: None,
            mlockall: false,
            pm_qos_us: None,
            main_cpus: None,
            report_every: Some(Duration::from_millis(50)),
            break_ns: None,
            tracemark: false,
            histogram: None,
            explain: None,
        },
        buckets: BucketSetting {
            count: 32,
            width_ns: 1000,
        },
        bias: false,
        preheat: None,
        single_preheat: false,
        workload_bytes: 4096,
    };
    let counter = rtbench::sys::counter::Counter::detect(&SysRoot::host());
    let mut p = Polling {
        reports: 0,
        allocs: None,
    };
    let r = poll::run(&spec, counter, &SysRoot::host(), &mut p).unwrap();
    WATCH.store(0, Ordering::Relaxed);
    assert!(r.threads[0].stats.count > 0);
    assert_eq!(p.allocs, Some(0));
}

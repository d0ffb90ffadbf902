//! 30 days of `rtbench monitor` windows in seconds: does the monitor's memory stay flat?
//!
//! Runs every window of 30 days (5-minute windows, 24-hour rolling histogram: 8640
//! windows) for N CPUs through the monitor's real window path
//! (`rtbench::monitor::aggregate::Aggregator::window`: per-CPU figures, limit checks,
//! journal entries, window store append and rotation, rolling histogram, all-time
//! maximum, Prometheus textfile, state file at every finished slot), with synthetic
//! windows: a latency body of a few hundred distinct values plus rare spikes up to
//! 20 ms, different in every window (a deterministic pseudo-random generator), so
//! the rolling histogram's slots hold as many buckets as real ones would or more.
//! The measuring threads are not simulated: they own two fixed slots each (see
//! `tests/monitor/monitor_alloc.rs` for their zero allocations).
//!
//! Prints, at simulated days 0 (first window), 1, 2, 7, 14, 21, 30: live heap bytes
//! (a counting global allocator), RSS (/proc/self/statm), the state file and the window
//! store on disk; then the verdict: flat when the heap on day 30 is within 5 % of day 2
//! (the rolling period is full after day 1).
//!
//! Run: `cargo bench --bench monitor_memory [-- CPUS]` (default 4 CPUs).

use rtbench::config::limits::Limits;
use rtbench::measure::monitor::MonitorSpec;
use rtbench::measure::stats::LatencyStats;
use rtbench::measure::{RunControl, ThreadSpec};
use rtbench::monitor::aggregate::Aggregator;
use rtbench::monitor::MonitorPlan;
use rtbench::report::journal::Journal;
use rtbench::sys::sched::Policy;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

static LIVE: AtomicI64 = AtomicI64::new(0);

struct Counting;

// SAFETY: every call is passed on unchanged to the system allocator, which keeps the
// GlobalAlloc contract; only a counter is updated besides.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as i64, Ordering::Relaxed);
        // SAFETY: the caller's contract of GlobalAlloc::alloc, passed on.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as i64, Ordering::Relaxed);
        // SAFETY: the caller's contract of GlobalAlloc::dealloc, passed on.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        LIVE.fetch_add(n as i64 - l.size() as i64, Ordering::Relaxed);
        // SAFETY: the caller's contract of GlobalAlloc::realloc, passed on.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// xorshift64*: deterministic windows.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// One synthetic 5-minute window at 1 ms: 300 000 samples.
fn window(rng: &mut Rng, s: &mut LatencyStats) {
    s.reset();
    let add = |s: &mut LatencyStats, v: u64, n: u64| {
        s.hist.record_n(v, n);
        s.count += n;
        s.sum_ns += (v * n) as u128;
        s.min_ns = s.min_ns.min(v);
        s.max_ns = s.max_ns.max(v);
    };
    // Body: 400 distinct values between 2 and 80 µs.
    let mut left = 300_000u64;
    for _ in 0..400 {
        let v = 2_000 + rng.next() % 78_000;
        let n = (rng.next() % 1_500).min(left);
        add(s, v, n);
        left -= n;
    }
    add(s, 5_000, left);
    // Tail: a few spikes, up to 20 ms.
    for _ in 0..(rng.next() % 8) {
        add(s, 80_000 + rng.next() % 19_920_000, 1);
    }
    s.overruns = rng.next() % 3;
}

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no side effects.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64
}

fn size(p: &std::path::Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

fn main() {
    let cpus: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(4);
    let dir = std::env::temp_dir().join(format!("rtbench-bench-monitor-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let plan = MonitorPlan {
        spec: MonitorSpec {
            threads: (0..cpus)
                .map(|i| ThreadSpec {
                    index: i,
                    cpu: Some(i),
                    policy: Policy::Fifo,
                    priority: 98,
                    interval_us: 1000,
                })
                .collect(),
            control: RunControl {
                duration: None,
                loops: None,
                mlockall: true,
                pm_qos_us: None,
                main_cpus: None,
                report_every: None,
                break_ns: None,
                tracemark: false,
                histogram: None,
                explain: None,
            },
        },
        window: Duration::from_secs(300),
        rolling: Duration::from_secs(86_400),
        dir: dir.clone(),
        store_bytes: 4096 * 1024,
        prometheus: Some(dir.join("monitor.prom")),
        limits: Limits {
            max_us: Some(10_000),
            ..Default::default()
        },
        sharing: Vec::new(),
    };
    let mut journal = Journal::Memory(Vec::new());
    let cpu_list: Vec<usize> = (0..cpus).collect();
    let t0_s = 1_800_000_000i64;
    let mut stats: Vec<LatencyStats> = (0..cpus).map(|_| LatencyStats::new(None)).collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let windows_per_day = 86_400 / 300;
    let days = 30;
    let checkpoints = [0, 1, 2, 7, 14, 21, 30];
    let mut agg = Aggregator::new(&plan, &mut journal, &cpu_list, t0_s);
    println!(
        "monitor memory, {cpus} CPUs, 5-min windows, 24-h rolling histogram, {days} days \
         ({} windows)",
        windows_per_day * days
    );
    println!(
        "{:>4} {:>8} {:>12} {:>10} {:>12} {:>12}",
        "day", "windows", "heap/bytes", "RSS/KiB", "state/bytes", "store/bytes"
    );
    let mut heap_at = std::collections::BTreeMap::new();
    let started = Instant::now();
    let mut busy = Duration::ZERO;
    for w in 0..(windows_per_day * days) {
        for s in stats.iter_mut() {
            window(&mut rng, s);
        }
        let refs: Vec<&LatencyStats> = stats.iter().collect();
        let start = t0_s + w as i64 * 300;
        let t = Instant::now();
        agg.window(&refs, start, start + 300, 300.0, &[]);
        busy += t.elapsed();
        // The journal is a sink: what reached it is gone from the process.
        if let Journal::Memory(v) = &mut *agg.journal {
            v.clear();
        }
        let done = w + 1;
        if done == 1 || done % windows_per_day == 0 {
            let day = if done == 1 { 0 } else { done / windows_per_day };
            if checkpoints.contains(&day) {
                let heap = LIVE.load(Ordering::Relaxed);
                heap_at.insert(day, heap);
                let store = size(&dir.join("windows.jsonl")) + size(&dir.join("windows.1.jsonl"));
                println!(
                    "{day:>4} {done:>8} {heap:>12} {:>10} {:>12} {store:>12}",
                    rss_bytes() / 1024,
                    size(&dir.join("state.json")),
                );
            }
        }
    }
    let n = (windows_per_day * days) as u32;
    println!(
        "main-thread work per window ({cpus} CPUs): {:.0} µs mean; whole simulation {:.1} s",
        busy.as_secs_f64() * 1e6 / n as f64,
        started.elapsed().as_secs_f64()
    );
    let (d2, d30) = (heap_at[&2], heap_at[&30]);
    let growth = (d30 - d2) as f64 / d2 as f64 * 100.0;
    println!(
        "heap day 2 -> day 30: {d2} -> {d30} bytes ({growth:+.2} %): {}",
        if growth.abs() <= 5.0 {
            "FLAT (target: within 5 %)"
        } else {
            "GROWS (target: within 5 %)"
        }
    );
    let _ = std::fs::remove_dir_all(&dir);
}

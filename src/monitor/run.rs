//! The monitor's flow: restore the state, start the threads, close a window every
//! `window` on the main thread (`Collector`, called by the harness every second),
//! hand each finished window to the [`Aggregator`], and at the end summarise the last,
//! partial window and save the state.

use super::aggregate::Aggregator;
use super::MonitorPlan;
use crate::duration::{us, UsStyle};
use crate::error::exit;
use crate::measure::harness::{Progress, StopCause};
use crate::measure::monitor::{self, Link, WindowSlot, Windows};
use crate::measure::stats::LiveSnapshot;
use crate::measure::ThreadSpec;
use crate::report::journal::{self, Journal, Priority};
use crate::report::output::{Output, Verbatim};
use crate::report::text::LiveLines;
use crate::report::Live;
use crate::sys::clock::Clock;
use crate::sys::notify::{self, Notifier};
use crate::sys::SysRoot;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The main thread's side of a monitor run: window boundaries, the hand-over links
/// and the aggregator.
struct Collector<'a> {
    agg: Aggregator<'a>,
    window: Duration,
    windows: Arc<Windows>,
    links: Vec<Link>,
    /// Slots handed over and not yet summarised, per thread.
    pending: Vec<VecDeque<Box<WindowSlot>>>,
    /// Wall-clock and monotonic start of window `w` is `bounds[w - bounds_base]`;
    /// entries of summarised windows are dropped (memory stays flat).
    bounds: VecDeque<(i64, Instant)>,
    bounds_base: u64,
    next_close: Instant,
    ready: bool,
    /// `$NOTIFY_SOCKET`, if a service manager listens.
    notifier: Option<Notifier>,
    watchdog: bool,
    /// Samples over the limit explained since the oldest window not yet summarised.
    explained: Vec<crate::explain::Explanation>,
    /// A window closed: the explain thresholds go back to the limit.
    reset_explain: bool,
    /// Where the monitor's own lines go (no document: text on standard output).
    out: Output,
}

impl Collector<'_> {
    /// The wall-clock and monotonic start of window `w` (= end of `w − 1`).
    fn bound(&self, w: u64) -> Option<(i64, Instant)> {
        w.checked_sub(self.bounds_base)
            .and_then(|i| self.bounds.get(i as usize))
            .copied()
    }

    /// Takes every finished slot from the threads and summarises each window all
    /// threads have finished.
    fn collect(&mut self) {
        for (i, l) in self.links.iter().enumerate() {
            while let Some(s) = l.take() {
                self.pending[i].push_back(s);
            }
        }
        while !self.pending.is_empty() && self.pending.iter().all(|p| !p.is_empty()) {
            let slots: Vec<Box<WindowSlot>> = self
                .pending
                .iter_mut()
                .filter_map(|p| p.pop_front())
                .collect();
            let last = slots.iter().map(|s| s.last).max().unwrap_or(0);
            let end = self
                .bound(last + 1)
                .unwrap_or_else(|| (Clock::wall_secs(), Instant::now()));
            self.summarise(&slots, end);
            for (l, s) in self.links.iter().zip(slots) {
                l.give_back(s);
            }
            // Window `last + 1` has started: earlier bounds are no longer needed.
            while self.bounds_base <= last && self.bounds.len() > 1 {
                self.bounds.pop_front();
                self.bounds_base += 1;
            }
        }
    }

    /// One window of every thread, ending at `end`.
    fn summarise(&mut self, slots: &[Box<WindowSlot>], end: (i64, Instant)) {
        let first = slots.iter().map(|s| s.first).min().unwrap_or(0);
        let start = self.bound(first).unwrap_or(end);
        let stats: Vec<_> = slots.iter().map(|s| &s.stats).collect();
        // Rounded to the millisecond: the store holds 1.548, not 1.5475799019999998.
        let ms = (end.1.saturating_duration_since(start.1).as_micros() + 500) / 1000;
        let duration_s = ms as f64 / 1000.0;
        let record = self
            .agg
            .window(&stats, start.0, end.0, duration_s, &self.explained);
        // Explanations of samples in later windows stay for those.
        let end_ms = end.0 * 1000;
        self.explained
            .retain(|e| e.spike.wall_ns / 1_000_000 > end_ms);
        let worst = record.cpus.iter().map(|c| c.max_ns).max().unwrap_or(0);
        let status = format!(
            "window {}: worst max {}; all-time max {}",
            record.seq,
            us(worst, UsStyle::Text),
            us(self.agg.alltime_max_ns(), UsStyle::Text)
        );
        self.notify(&[&format!("STATUS={status}")]);
    }

    /// After the run: the windows still in the links, then the threads' last, partial
    /// slots as a last window; the state saved. Returns what the stop entry says
    /// about the state.
    #[allow(clippy::vec_box)] // the harness hands the slots back boxed
    fn finish(&mut self, last: Vec<Box<WindowSlot>>) -> String {
        self.collect();
        let now = (Clock::wall_secs(), Instant::now());
        if last.len() == self.links.len() && last.iter().any(|s| s.stats.count > 0) {
            self.summarise(&last, now);
        }
        let path = self.agg.state_path();
        if self.agg.exhausted {
            self.agg.lost = true;
            return format!(
                "state NOT saved in {}: window sequence numbers used up",
                path.display()
            );
        }
        match self.agg.save_state(now.0) {
            Ok(()) => format!("state saved in {}", path.display()),
            Err(e) => {
                self.agg.lost = true;
                format!("state NOT saved in {}: {e}", path.display())
            }
        }
    }
}

impl Progress for Collector<'_> {
    fn report(&mut self, _threads: &[ThreadSpec], _live: &[LiveSnapshot]) {
        if !self.ready {
            self.ready = true;
            self.notify(&["READY=1", "STATUS=monitoring: first window running"]);
        }
        if self.watchdog {
            self.notify(&["WATCHDOG=1"]);
        }
        // Summarise first: the spare slots are back with the threads before they see
        // the next window start.
        self.collect();
        let now = Instant::now();
        while now >= self.next_close {
            self.bounds.push_back((Clock::wall_secs(), self.next_close));
            self.windows.current.fetch_add(1, Ordering::Release);
            self.next_close += self.window;
            self.reset_explain = true;
        }
    }

    fn explained(&mut self, e: &crate::explain::Explanation) {
        self.agg.send(&journal::explained(e, &e.spike.when()));
        self.agg.count_explained(e);
        // Bounded: each window explains only new maxima (the thresholds rise), a few
        // per CPU at most.
        if self.explained.len() < 64 * self.links.len().max(1) {
            self.explained.push(e.clone());
        }
    }

    fn reset_explain(&mut self) -> bool {
        std::mem::take(&mut self.reset_explain)
    }

    fn status(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]) {
        let l = Live {
            threads,
            live,
            nsecs: false,
        };
        let mut buf = Vec::new();
        if crate::report::Sink::write(&LiveLines, &l, &mut buf).is_ok() {
            let text = journal::stamped(&String::from_utf8_lossy(&buf));
            let r = self.out.to_stderr(&Verbatim, &text);
            self.closed(r);
        }
    }

    // The monitor's own lines carry their time, as its entries in text do.
    fn notice(&mut self, line: &str) {
        let r = self
            .out
            .text(&Verbatim, &format!("{}\n", journal::stamped(line)));
        self.closed(r);
    }

    fn warning(&mut self, line: &str) {
        let line = journal::stamped(&crate::error::one_line(line));
        let r = self.out.to_stderr(&Verbatim, &format!("{line}\n"));
        self.closed(r);
    }

    fn wants_stop(&mut self) -> bool {
        self.agg.log_closed || self.agg.exhausted
    }
}

impl Collector<'_> {
    /// Sends `lines` to the service manager, if one listens; the first notification
    /// that cannot be delivered is said once on standard error.
    fn notify(&mut self, lines: &[&str]) {
        if let Some(line) = self.notifier.as_mut().and_then(|n| n.send(lines)) {
            self.warning(&format!("rtbench: warning: {line}"));
        }
    }

    /// Notes a write to standard output or error that found its reader gone.
    fn closed(&mut self, r: crate::error::Result<()>) {
        if r.is_err_and(|e| crate::report::output::reader_gone(&e)) {
            self.agg.log_closed = true;
        }
    }
}

/// The exit code when the monitor's log output went away (128 + SIGPIPE, what a shell
/// shows for a process killed by SIGPIPE): the monitor stopped as on SIGTERM, with
/// the last, partial window stored and the state saved, and not as a clean stop, so
/// `Restart=on-failure` (or a respawning init) starts it again with a fresh log.
pub const LOG_CLOSED: i32 = exit::SIGNAL_BASE + libc::SIGPIPE;

/// Runs the monitor `plan` until its duration ends, SIGINT/SIGTERM/SIGHUP, or its log
/// output goes away (EPIPE on standard error or output; SIGPIPE must be ignored, see
/// src/app/monitor.rs); returns the exit code: 0 (duration reached), 130/143/129
/// (SIGINT/SIGTERM/SIGHUP, the last window stored and the state saved: the unit counts
/// 143 as a clean stop, and 129 as a failure that `Restart=on-failure` restarts),
/// [`LOG_CLOSED`] (141, state saved), 3 (SCHED_FIFO or mlockall refused; or, instead of
/// 0, a window or the state could not be kept — the store or the state file failed, said
/// in the journal when it happened —, or the window sequence numbers are used up).
/// SIGUSR1 and SIGUSR2 print the live status on standard error and the monitor carries
/// on.
pub fn execute(plan: &MonitorPlan, root: &SysRoot, journal: &mut Journal) -> i32 {
    let windows = Arc::new(Windows::default());
    let (threads, links) = monitor::threads(&plan.spec, &windows);
    let mut spec = plan.spec.clone();
    let watchdog = notify::watchdog_interval();
    if let Some(w) = watchdog {
        let half = (w / 2).max(Duration::from_millis(100));
        spec.control.report_every = spec.control.report_every.map(|r| r.min(half));
    }
    let cpus: Vec<usize> = links
        .iter()
        .map(|l| l.thread.cpu.unwrap_or(l.thread.index))
        .collect();
    let now_s = Clock::wall_secs();
    let mut agg = Aggregator::new(plan, journal, &cpus, now_s);
    let cpus_text = plan.cpus_text();
    let start = journal::monitor_start(&journal::MonitorStart {
        cpus: &cpus_text,
        interval_us: plan.interval_us(),
        priority: plan.priority(),
        window_s: plan.window.as_secs(),
        first_end_s: now_s.saturating_add(plan.window.as_secs().min(i64::MAX as u64) as i64),
        restored: &agg.restored,
        dir: &plan.dir,
        prometheus: plan.prometheus.as_deref(),
    });
    agg.send(&start);
    for s in &plan.sharing {
        agg.send(&journal::placement(s));
    }
    agg.check_outputs();
    let now = Instant::now();
    let mut c = Collector {
        agg,
        window: plan.window,
        windows,
        pending: links.iter().map(|_| VecDeque::with_capacity(2)).collect(),
        links,
        bounds: VecDeque::from([(now_s, now)]),
        bounds_base: 0,
        next_close: now + plan.window,
        ready: false,
        notifier: Notifier::from_env(),
        out: Output::new(None),
        watchdog: watchdog.is_some(),
        explained: Vec::new(),
        reset_explain: false,
    };
    let result = monitor::run(&spec, threads, root, &mut c);
    let (how, state, prio, code) = match result {
        Ok((last, end)) => {
            let state = c.finish(last);
            let (how, code) = match end.stop {
                // The log went away: the run was stopped for that (the cause a signal
                // set first wins).
                StopCause::Completed if c.agg.log_closed => ("log output closed", LOG_CLOSED),
                StopCause::Completed if c.agg.exhausted => {
                    ("window sequence numbers used up", exit::ENV)
                }
                StopCause::Completed => ("duration reached", end.exit_code()),
                StopCause::Sigterm => ("SIGTERM", end.exit_code()),
                StopCause::Sigint => ("SIGINT", end.exit_code()),
                StopCause::Sighup => ("SIGHUP", end.exit_code()),
                StopCause::Break => ("break", end.exit_code()),
            };
            let prio = if state.contains("NOT") {
                Priority::Warning
            } else {
                Priority::Info
            };
            // Windows or the state that could not be kept: not a success (the journal
            // said which output failed and why). A signal's code stays: it says why the
            // monitor stopped, and the service manager counts 143 as a stop it asked for.
            let code = if code == exit::OK && c.agg.lost {
                exit::ENV
            } else {
                code
            };
            (how.to_string(), state, prio, code)
        }
        Err(e) => (
            format!("refused: {e}"),
            "nothing measured".to_string(),
            Priority::Error,
            e.exit_code(),
        ),
    };
    let windows = c.agg.windows;
    c.agg
        .send(&journal::monitor_stop(&how, windows, &state, prio));
    if let Some(line) = c.notifier.as_ref().and_then(Notifier::dropped_line) {
        c.warning(&format!("rtbench: warning: {line}"));
    }
    code
}

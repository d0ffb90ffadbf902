//! What happens to one finished window, on the main thread: each CPU's figures and
//! limit checks, the journal entries, the window store, the history (rolling
//! histogram, all-time maximum), the Prometheus textfile, and the state file when a
//! slot of the rolling histogram is finished. Independent of threads and clocks (the
//! times come in as arguments), so `benches/monitor_memory.rs` can run 30 days of
//! windows through it in seconds.

use super::history::{self, CpuHistory, CpuState, State};
use super::MonitorPlan;
use crate::config::limits::Limits;
use crate::measure::stats::LatencyStats;
use crate::report::journal::{Entry, Journal, Priority};
use crate::report::monitor::{self as out, CpuLongTerm, MonitorMetrics, MonitorProm};
use crate::report::output;
use crate::report::window::{WindowCpu, WindowRecord, WindowStore};
use hdrhistogram::Histogram;
use std::path::PathBuf;

/// The state file in the monitor's directory.
pub const STATE_FILE: &str = "state.json";

/// The checks of `limits` that `c` exceeds: `(name, value, limit)`, latencies in **ns**.
pub fn exceeded(c: &WindowCpu, limits: &Limits) -> Vec<(&'static str, u64, u64)> {
    let us = |v: Option<u64>| v.map(|u| u.saturating_mul(1000));
    [
        ("max", c.max_ns, us(limits.max_us)),
        ("avg", c.avg_ns, us(limits.avg_us)),
        ("p99", c.p99_ns, us(limits.p99_us)),
        ("p999", c.p999_ns, us(limits.p999_us)),
        ("overruns", c.overruns, limits.overruns),
    ]
    .into_iter()
    .filter_map(|(w, v, l)| l.filter(|&l| v > l).map(|l| (w, v, l)))
    .collect()
}

/// The monitor's memory beyond the measuring threads: every CPU's history and the
/// outputs' state.
pub struct Aggregator<'a> {
    plan: &'a MonitorPlan,
    /// Where the entries go.
    pub journal: &'a mut Journal,
    /// Per monitored CPU, in thread order.
    history: Vec<CpuHistory>,
    /// CPUs in the state file that this run does not monitor: saved back unchanged.
    others: Vec<CpuState>,
    scratch: Histogram<u64>,
    store: WindowStore,
    /// Sequence number of the last window summarised (counts on across restarts).
    pub last_seq: u64,
    /// Windows summarised by this run.
    pub windows: u64,
    /// Outputs whose last write failed (said once, until one works again).
    failing: Vec<&'static str>,
    /// What the start entry says about the state file.
    pub restored: String,
}

impl<'a> Aggregator<'a> {
    /// Restores the state of `cpus` from the plan's directory at wall time `now_s`
    /// (a damaged state file is kept as `state.json.bad` and said in
    /// [`Aggregator::restored`]); windows in the store newer than the state (a crash
    /// after the last save) still count for the all-time maximum.
    pub fn new(
        plan: &'a MonitorPlan,
        journal: &'a mut Journal,
        cpus: &[usize],
        now_s: i64,
    ) -> Aggregator<'a> {
        let slot_s = plan.slot_s();
        let (state, note) = load_state(plan);
        let store = WindowStore::new(&plan.dir, plan.store_bytes);
        let (records, _) = store.read().unwrap_or_default();
        let saved = state.as_ref().map_or(0, |s| s.last_window);
        let last_seq = records.last().map_or(0, |r| r.seq).max(saved);
        let history: Vec<CpuHistory> = cpus
            .iter()
            .map(|&cpu| {
                let mut h = state
                    .as_ref()
                    .and_then(|s| s.cpus.iter().find(|c| c.cpu == cpu))
                    .map_or_else(
                        || CpuHistory::new(cpu, slot_s, now_s),
                        |c| CpuHistory::restore(c, slot_s, now_s),
                    );
                for r in records.iter().filter(|r| r.seq > saved) {
                    for c in r.cpus.iter().filter(|c| c.cpu == cpu) {
                        if c.max_ns > h.alltime_max_ns {
                            h.alltime_max_ns = c.max_ns;
                            h.alltime_max_at_s = r.end_s;
                        }
                    }
                }
                h
            })
            .collect();
        let others = state.as_ref().map_or_else(Vec::new, |s| {
            s.cpus
                .iter()
                .filter(|c| !cpus.contains(&c.cpu))
                .cloned()
                .collect()
        });
        let restored = match (&state, note) {
            (_, Some(n)) => n,
            (Some(s), None) => format!(
                "state restored from {} (saved {} UTC, all-time max {})",
                plan.dir.join(STATE_FILE).display(),
                crate::report::date::utc_stamp(s.saved_s),
                crate::report::summary::us(
                    history.iter().map(|h| h.alltime_max_ns).max().unwrap_or(0)
                )
            ),
            (None, None) => format!("no state in {} yet", plan.dir.display()),
        };
        Aggregator {
            plan,
            journal,
            history,
            others,
            scratch: history::histogram(),
            store,
            last_seq,
            windows: 0,
            failing: Vec::new(),
            restored,
        }
    }

    /// One window of every monitored CPU (`stats` in thread order) from `start_s` to
    /// `end_s` (wall clock), `duration_s` long (monotonic clock): journal entries, the
    /// window store, the history, the Prometheus textfile, the state file when a
    /// slot is finished. Returns the window's record.
    pub fn window(
        &mut self,
        stats: &[&LatencyStats],
        start_s: i64,
        end_s: i64,
        duration_s: f64,
    ) -> WindowRecord {
        let seq = self.last_seq + 1;
        let mut record = WindowRecord {
            seq,
            start_s,
            end_s,
            duration_s,
            cpus: Vec::with_capacity(stats.len()),
        };
        let mut checks = Vec::with_capacity(stats.len());
        let mut slot_done = false;
        for (h, s) in self.history.iter_mut().zip(stats) {
            let mut c = WindowCpu::from_stats(h.cpu, s);
            let over = exceeded(&c, &self.plan.limits);
            c.exceeded = over.iter().map(|o| o.0.to_string()).collect();
            slot_done |= h.add_window(s, end_s, !over.is_empty());
            checks.push(over);
            record.cpus.push(c);
        }
        let long: Vec<CpuLongTerm> = self
            .history
            .iter()
            .map(|h| long_term(h, &mut self.scratch))
            .collect();
        for ((c, l), over) in record.cpus.iter().zip(&long).zip(&checks) {
            self.journal.send(&out::window_entry(&record, c, l));
            if !over.is_empty() {
                self.journal.send(&out::limit_entry(&record, c, over));
            }
        }
        let stored = self.store.append(&record);
        self.note(stored, "window store");
        if let Some(p) = &self.plan.prometheus {
            let metrics = MonitorMetrics {
                window: record.clone(),
                long,
                rolling_s: self.plan.rolling.as_secs(),
            };
            let written = output::write_file(p, &MonitorProm, &metrics);
            self.note(written, "Prometheus textfile");
        }
        self.last_seq = seq;
        self.windows += 1;
        if slot_done {
            let saved = self.save_state(end_s);
            self.note(saved, "state file");
        }
        record
    }

    /// Says a failed write once (and when writes work again), not every window.
    fn note(&mut self, r: std::io::Result<()>, what: &'static str) {
        let failing = self.failing.contains(&what);
        match r {
            Err(e) if !failing => {
                self.failing.push(what);
                self.journal.send(
                    &Entry::new(
                        out::MSG_MONITOR_OUTPUT,
                        Priority::Warning,
                        format!(
                        "monitor {what} not written ({e}) in {}; windows still go to the journal",
                        self.plan.dir.display()
                    ),
                    )
                    .field("RTBENCH_OUTPUT", what),
                );
            }
            Ok(()) if failing => {
                self.failing.retain(|w| *w != what);
                self.journal.send(
                    &Entry::new(
                        out::MSG_MONITOR_OUTPUT,
                        Priority::Info,
                        format!("monitor {what} written again"),
                    )
                    .field("RTBENCH_OUTPUT", what),
                );
            }
            _ => {}
        }
    }

    /// Writes the state file atomically (compact JSON: the histograms are long lists
    /// of pairs).
    pub fn save_state(&self, now_s: i64) -> std::io::Result<()> {
        let mut cpus: Vec<CpuState> = self.history.iter().map(CpuHistory::state).collect();
        cpus.extend(self.others.iter().cloned());
        cpus.sort_by_key(|c| c.cpu);
        let state = State {
            rtbench_version: crate::VERSION.to_string(),
            saved_s: now_s,
            last_window: self.last_seq,
            cpus,
        };
        std::fs::create_dir_all(&self.plan.dir)?;
        let mut bytes = serde_json::to_vec(&state)?;
        bytes.push(b'\n');
        crate::sys::atomic::write(&self.plan.dir.join(STATE_FILE), &bytes)
    }

    /// The state file's path.
    pub fn state_path(&self) -> PathBuf {
        self.plan.dir.join(STATE_FILE)
    }

    /// The largest all-time maximum of the monitored CPUs, **ns**.
    pub fn alltime_max_ns(&self) -> u64 {
        self.history
            .iter()
            .map(|h| h.alltime_max_ns)
            .max()
            .unwrap_or(0)
    }
}

/// The long-term figures of `h`, its rolling quantiles computed in `scratch`.
fn long_term(h: &CpuHistory, scratch: &mut Histogram<u64>) -> CpuLongTerm {
    let since = h.rolling(scratch);
    let q = |scratch: &Histogram<u64>, q: f64| {
        if scratch.is_empty() {
            0
        } else {
            scratch.highest_equivalent(scratch.value_at_quantile(q))
        }
    };
    CpuLongTerm {
        cpu: h.cpu,
        alltime_max_ns: h.alltime_max_ns,
        alltime_max_at_s: h.alltime_max_at_s,
        alltime_samples: h.alltime_samples,
        alltime_overruns: h.alltime_overruns,
        windows_over_limit: h.windows_over_limit,
        rolling_since_s: since,
        rolling_samples: scratch.len(),
        rolling_mean_ns: scratch.mean().round() as u64,
        rolling_p99_ns: q(scratch, 0.99),
        rolling_p999_ns: q(scratch, 0.999),
        rolling_p9999_ns: q(scratch, 0.9999),
        rolling_max_ns: if scratch.is_empty() { 0 } else { scratch.max() },
    }
}

/// The state file, if there is a readable one, and what to say about a damaged one
/// (renamed to `state.json.bad`, so that nothing is silently lost).
fn load_state(plan: &MonitorPlan) -> (Option<State>, Option<String>) {
    let path = plan.dir.join(STATE_FILE);
    // A regular file of sane size only: a FIFO named state.json must not stall the
    // monitor's start, nor a link to /dev/zero exhaust its memory.
    let max = crate::sys::input::MAX_INPUT_BYTES;
    let text = match crate::sys::input::read_regular_text(&path, max).map_err(|e| e.into_io()) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (None, None),
        Err(e) => {
            return (
                None,
                Some(format!(
                    "state {} unreadable ({e}); starting afresh",
                    path.display()
                )),
            )
        }
    };
    match serde_json::from_str::<State>(&text) {
        Ok(s) => (Some(s), None),
        Err(e) => {
            let bad = PathBuf::from(format!("{}.bad", path.display()));
            let _ = std::fs::rename(&path, &bad);
            (
                None,
                Some(format!(
                    "state {} damaged ({e}); kept as {}, starting afresh",
                    path.display(),
                    bad.display()
                )),
            )
        }
    }
}

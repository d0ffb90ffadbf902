//! What happens to one finished window, on the main thread: each CPU's figures and
//! limit checks, the journal entries, the window store, the history (rolling
//! histogram, all-time maximum), the Prometheus textfile, and the state file when a
//! slot of the rolling histogram is finished. Independent of threads and clocks (the
//! times come in as arguments), so `benches/monitor_memory.rs` can run 30 days of
//! windows through it in seconds.

use super::history::{CpuHistory, CpuState, State};
use super::MonitorPlan;
use crate::config::limits::Limits;
use crate::measure::histogram::Histogram;
use crate::measure::stats::LatencyStats;
use crate::report::journal::{self, Entry, Journal};
use crate::report::monitor::{CpuLongTerm, MonitorMetrics, MonitorProm};
use crate::report::output;
use crate::results::window::{WindowCpu, WindowRecord, WindowStore};
use std::path::{Path, PathBuf};

/// The state file in the monitor's directory.
pub const STATE_FILE: &str = "state.json";

/// The `RTBENCH_OUTPUT` of the Prometheus textfile.
const PROMETHEUS: &str = "Prometheus textfile";

/// Why the Prometheus textfile `path` could not be written: its directory missing is
/// said as such (node_exporter's textfile collector is not installed).
fn prometheus_why(path: &Path, e: std::io::Error) -> String {
    let dir = crate::sys::atomic::parent_dir(path);
    if e.kind() == std::io::ErrorKind::NotFound && !dir.is_dir() {
        format!(
            "directory {} does not exist; is node_exporter's textfile collector installed?",
            dir.display()
        )
    } else {
        e.to_string()
    }
}

/// The limits of `limits` that are set: `(name, limit)`, latencies in **ns**, the
/// `overruns` limit a count.
pub fn set_limits(limits: &Limits) -> Vec<(&'static str, u64)> {
    let us = |v: Option<u64>| v.map(|u| u.saturating_mul(1000));
    [
        ("max", us(limits.max_us)),
        ("avg", us(limits.avg_us)),
        ("p99", us(limits.p99_us)),
        ("p999", us(limits.p999_us)),
        ("overruns", limits.overruns),
    ]
    .into_iter()
    .filter_map(|(w, l)| l.map(|l| (w, l)))
    .collect()
}

/// The checks of `limits` that `c` exceeds: `(name, value, limit)`, latencies in **ns**.
pub fn exceeded(c: &WindowCpu, limits: &Limits) -> Vec<(&'static str, u64, u64)> {
    set_limits(limits)
        .into_iter()
        .map(|(w, l)| {
            let v = match w {
                "max" => c.max_ns,
                "avg" => c.avg_ns,
                "p99" => c.p99_ns,
                "p999" => c.p999_ns,
                _ => c.overruns,
            };
            (w, v, l)
        })
        .filter(|(_, v, l)| v > l)
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
    scratch: Histogram,
    store: WindowStore,
    /// Sequence number of the last window summarised (counts on across restarts).
    pub last_seq: u64,
    /// Windows summarised by this run.
    pub windows: u64,
    /// Outputs whose last write failed (said once, until one works again).
    failing: Vec<&'static str>,
    /// What the start entry says about the state file.
    pub restored: String,
    /// The log output (standard error) is gone: a write returned EPIPE.
    pub log_closed: bool,
    /// A window or the state could not be kept (the store or the state file failed
    /// at least once): the run's exit code says so ([`super::run::execute`]).
    pub lost: bool,
    /// The window sequence numbers are used up (the last one was 2^64 − 1: a damaged
    /// state file or store): the monitor stops rather than wrap to 0.
    pub exhausted: bool,
    /// Spikes explained by this run, per (CPU, cause kind): the Prometheus counter.
    explained: std::collections::BTreeMap<(usize, &'static str), u64>,
}

impl<'a> Aggregator<'a> {
    /// Restores the state of `cpus` from the plan's directory at wall time `now_s`
    /// (a damaged state file is kept as `state.json.bad.<UTC stamp>` and said in
    /// [`Aggregator::restored`]); windows in the store newer than the state (a crash
    /// after the last save) still count for the all-time maximum.
    pub fn new(
        plan: &'a MonitorPlan,
        journal: &'a mut Journal,
        cpus: &[usize],
        now_s: i64,
    ) -> Aggregator<'a> {
        let slot_s = plan.slot_s();
        // Temporary files of saves cut short by a kill or a power loss in earlier runs.
        // (The window store is appended to and renamed, never through a temporary file.)
        crate::sys::kept::remove_stale_temps(&plan.dir, &[STATE_FILE]);
        if let Some(p) = &plan.prometheus {
            if let Some(name) = p.file_name().and_then(|n| n.to_str()) {
                crate::sys::kept::remove_stale_temps(&crate::sys::atomic::parent_dir(p), &[name]);
            }
        }
        let (state, note) = load_state(plan, now_s);
        let store = WindowStore::new(&plan.dir, plan.store_bytes);
        let saved = state.as_ref().map_or(0, |s| s.last_window);
        // Streamed within the store's bound: the last sequence number, and per CPU the
        // largest maximum of the windows newer than the state (a crash after the last
        // save) with the end of the first window that had it.
        let mut last_record = 0;
        let mut newer: Vec<(usize, u64, i64)> = Vec::new();
        let scanned = store.scan(|r| {
            last_record = r.seq;
            if r.seq > saved {
                for c in &r.cpus {
                    match newer.iter_mut().find(|n| n.0 == c.cpu) {
                        Some(n) if c.max_ns > n.1 => *n = (c.cpu, c.max_ns, r.end_s),
                        Some(_) => {}
                        None => newer.push((c.cpu, c.max_ns, r.end_s)),
                    }
                }
            }
        });
        if let Ok(skipped) = &scanned {
            for line in crate::report::monitor::skipped_lines(&plan.dir, skipped, false) {
                output::Output::new(None).warn(&line);
            }
        }
        let last_seq = last_record.max(saved);
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
                for &(_, max_ns, at_s) in newer.iter().filter(|n| n.0 == cpu) {
                    h.alltime.add_max(max_ns, at_s);
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
                "state restored from {} (saved {}, all-time max {})",
                plan.dir.join(STATE_FILE).display(),
                crate::date::iso_s(s.saved_s),
                crate::duration::us(
                    history.iter().map(|h| h.alltime.max_ns).max().unwrap_or(0),
                    crate::duration::UsStyle::Text
                )
            ),
            (None, None) => format!("no state in {} yet", plan.dir.display()),
        };
        Aggregator {
            plan,
            journal,
            history,
            others,
            scratch: Histogram::new(),
            store,
            last_seq,
            windows: 0,
            failing: Vec::new(),
            restored,
            log_closed: false,
            lost: false,
            exhausted: false,
            explained: Default::default(),
        }
    }

    /// Sends `e` to the journal; a write to standard error that finds its reader gone
    /// (EPIPE) sets [`Aggregator::log_closed`].
    pub fn send(&mut self, e: &Entry) {
        if let Err(err) = self.journal.try_send(e) {
            if err.kind() == std::io::ErrorKind::BrokenPipe {
                self.log_closed = true;
            }
        }
    }

    /// Counts one explained spike for the Prometheus textfile.
    pub fn count_explained(&mut self, e: &crate::explain::Explanation) {
        *self
            .explained
            .entry((e.spike.cpu, e.cause.kind.as_str()))
            .or_default() += 1;
    }

    /// One window of every monitored CPU (`stats` in thread order) from `start_s` to
    /// `end_s` (wall clock), `duration_s` long (monotonic clock): journal entries, the
    /// window store, the history, the Prometheus textfile, the state file when a
    /// slot is finished. A CPU's maximum that `explained` holds (same CPU, same
    /// sample) carries its cause. Returns the window's record.
    pub fn window(
        &mut self,
        stats: &[&LatencyStats],
        start_s: i64,
        end_s: i64,
        duration_s: f64,
        explained: &[crate::explain::Explanation],
    ) -> WindowRecord {
        // Never wraps: a store that counted to 2^64 − 1 is damaged, and a window 0 after
        // it would read as the oldest. The window is not stored and the monitor stops.
        let next = self.last_seq.checked_add(1);
        self.exhausted |= next.is_none();
        let seq = next.unwrap_or(u64::MAX);
        let mut record = WindowRecord {
            seq,
            start_s,
            end_s,
            duration_s,
            cpus: Vec::with_capacity(stats.len()),
        };
        let mut checks = Vec::with_capacity(stats.len());
        let mut slot_done = false;
        let offset = crate::explain::counters::wall_offset_ns();
        for (h, s) in self.history.iter_mut().zip(stats) {
            let mut c = WindowCpu::from_stats(h.cpu, s, offset);
            if let Some(e) = explained
                .iter()
                .find(|e| e.spike.cpu == h.cpu && e.spike.latency_ns() == c.max_ns)
            {
                c.cause = Some(crate::explain::text::headline(e));
                c.cause_kind = Some(e.cause.kind.as_str().to_string());
            }
            let over = exceeded(&c, &self.plan.limits);
            c.exceeded = over.iter().map(|o| o.0.to_string()).collect();
            slot_done |= h.add_window(s, &c, end_s);
            checks.push(over);
            record.cpus.push(c);
        }
        let long: Vec<CpuLongTerm> = self
            .history
            .iter()
            .map(|h| long_term(h, &mut self.scratch))
            .collect();
        for ((c, l), over) in record.cpus.iter().zip(&long).zip(&checks) {
            self.send(&journal::monitor_window(&record, c, l));
            if !over.is_empty() {
                self.send(&journal::monitor_limit(&record, c, over));
            }
        }
        let stored = if self.exhausted {
            Err(std::io::Error::other(format!(
                "window sequence numbers are used up at {}, a damaged state or store; \
                 stopping: move {STATE_FILE} and the windows*.jsonl files aside to start \
                 afresh",
                u64::MAX
            )))
        } else {
            self.store.append(&record)
        };
        let plan = self.plan;
        self.note(stored, "window store", &plan.dir);
        if let Some(p) = &plan.prometheus {
            let metrics = MonitorMetrics {
                window: record.clone(),
                long,
                rolling_s: self.plan.rolling.as_secs(),
                explained: self.explained.iter().map(|(k, n)| (k.0, k.1, *n)).collect(),
                limits: set_limits(&plan.limits),
            };
            let written = output::keep_file(p, &MonitorProm, &metrics);
            self.note(written, PROMETHEUS, p);
        }
        self.last_seq = seq;
        self.windows += 1;
        if slot_done && !self.exhausted {
            let saved = self.save_state(end_s);
            let path = self.state_path();
            self.note(saved, "state file", &path);
        }
        record
    }

    /// Says a failed write of `what` (at `path`) once, and when writes work again,
    /// not every window.
    fn note(&mut self, r: std::io::Result<()>, what: &'static str, path: &Path) {
        // The textfile is a view of the store and the state; those two are the data.
        self.lost |= r.is_err() && what != PROMETHEUS;
        let why = r.map_err(|e| match what {
            PROMETHEUS => prometheus_why(path, e),
            _ => e.to_string(),
        });
        self.note_why(why, what, path);
    }

    fn note_why(&mut self, r: Result<(), String>, what: &'static str, path: &Path) {
        let failing = self.failing.contains(&what);
        match r {
            Err(why) if !failing => {
                self.failing.push(what);
                self.send(&journal::monitor_output(what, path, Some(&why)));
            }
            Ok(()) if failing => {
                self.failing.retain(|w| *w != what);
                self.send(&journal::monitor_output(what, path, None));
            }
            _ => {}
        }
    }

    /// At start: a Prometheus textfile whose directory does not exist (node_exporter
    /// not installed yet) is a warning, said once, not an error: the windows still go
    /// to the journal and the store, and the file is written once the directory
    /// appears. (The self-test treats it the same way.)
    pub fn check_outputs(&mut self) {
        if let Some(p) = self.plan.prometheus.clone() {
            let dir = crate::sys::atomic::parent_dir(&p);
            if !dir.is_dir() {
                let why = prometheus_why(&p, std::io::ErrorKind::NotFound.into());
                self.note_why(Err(why), PROMETHEUS, &p);
            }
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
        crate::sys::kept::replace(&self.plan.dir.join(STATE_FILE), &bytes)
    }

    /// The state file's path.
    pub fn state_path(&self) -> PathBuf {
        self.plan.dir.join(STATE_FILE)
    }

    /// The largest all-time maximum of the monitored CPUs, **ns**.
    pub fn alltime_max_ns(&self) -> u64 {
        self.history
            .iter()
            .map(|h| h.alltime.max_ns)
            .max()
            .unwrap_or(0)
    }
}

/// The long-term figures of `h`, its rolling quantiles computed in `scratch`.
fn long_term(h: &CpuHistory, scratch: &mut Histogram) -> CpuLongTerm {
    let since = h.rolling(scratch);
    let q = |scratch: &Histogram, q: f64| scratch.value_at_quantile(q);
    CpuLongTerm {
        cpu: h.cpu,
        alltime: h.alltime,
        rolling_since_s: since,
        rolling_samples: scratch.len(),
        rolling_mean_ns: scratch.mean().round() as u64,
        rolling_p99_ns: q(scratch, 0.99),
        rolling_p999_ns: q(scratch, 0.999),
        rolling_p9999_ns: q(scratch, 0.9999),
        rolling_max_ns: scratch.max(),
    }
}

/// Damaged state files kept (`state.json.bad.<UTC stamp>`); older ones are removed, so
/// a crash loop that damages the state cannot fill the disk.
pub const KEEP_BAD: usize = 5;

/// The state file, if there is a readable one, and what to say about a damaged one:
/// it is renamed to `state.json.bad.<UTC stamp of now_s>` (the newest [`KEEP_BAD`]
/// are kept), so that nothing is silently lost, and the message names that file. A
/// regular file that cannot be read, is larger than the bound, is not UTF-8 (a bit
/// flip on flash) or not a state is set aside alike; anything else named like it (a
/// link, a FIFO: refused at start by `plan::monitor::check_dir`, or put there since)
/// is not read, and the save refuses it in turn ([`crate::sys::kept`]).
fn load_state(plan: &MonitorPlan, now_s: i64) -> (Option<State>, Option<String>) {
    use crate::sys::input::InputError;
    let path = plan.dir.join(STATE_FILE);
    // A kept file: a regular file of sane size only, no link followed; a FIFO named
    // state.json must not stall the monitor's start, nor /dev/zero exhaust its memory.
    let max = crate::sys::input::MAX_INPUT_BYTES;
    let damage = match crate::sys::kept::read(&path, max) {
        Ok(bytes) => match std::str::from_utf8(&bytes) {
            Ok(text) => match serde_json::from_str::<State>(text) {
                Ok(s) => return (Some(s), None),
                Err(e) => e.to_string(),
            },
            Err(e) => format!("not UTF-8: {e}"),
        },
        Err(InputError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return (None, None),
        Err(e @ InputError::NotRegular { .. }) => {
            return (
                None,
                Some(format!(
                    "state {} not read ({e}); starting afresh",
                    path.display()
                )),
            )
        }
        Err(e) => e.to_string(),
    };
    let kept = match set_aside(&plan.dir, now_s) {
        Ok(bad) => format!("kept as {}", bad.display()),
        Err(e) => format!("could not be kept ({e}); it will be replaced"),
    };
    (
        None,
        Some(format!(
            "state {} damaged ({damage}); {kept}, starting afresh",
            path.display()
        )),
    )
}

/// Renames the state file in `dir` to `state.json.bad.<stamp>` (`-N` added when that
/// name is taken), then removes the oldest such files beyond [`KEEP_BAD`] (the stamps
/// sort by time; a `state.json.bad` of older versions counts as the oldest). Returns
/// the new name.
fn set_aside(dir: &Path, now_s: i64) -> std::io::Result<PathBuf> {
    let prefix = format!("{STATE_FILE}.bad");
    let stamp = crate::date::utc_stamp(now_s);
    let mut bad = dir.join(format!("{prefix}.{stamp}"));
    let mut n = 1;
    while std::fs::symlink_metadata(&bad).is_ok() {
        bad = dir.join(format!("{prefix}.{stamp}-{n}"));
        n += 1;
    }
    std::fs::rename(dir.join(STATE_FILE), &bad)?;
    let mut kept: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n == &prefix || n.starts_with(&format!("{prefix}.")))
        .collect();
    // "state.json.bad" < "state.json.bad.2026…"; within a second, "…Z" < "…Z-1".
    kept.sort();
    let excess = kept.len().saturating_sub(KEEP_BAD);
    for old in &kept[..excess] {
        let _ = std::fs::remove_file(dir.join(old));
    }
    Ok(bad)
}

//! The monitor's windows: one record per window with every CPU's figures
//! ([`WindowRecord`]), the window store that keeps them on disk within a size bound
//! ([`WindowStore`]), and the summary of the windows since a point in time that
//! `rtbench report --since` prints ([`SinceSummary`]).
//!
//! The store is append-only JSON Lines: `windows.jsonl` and, once that has reached half
//! of the store's size, the previous file `windows.1.jsonl` (like logrotate with one
//! rotation). One `write(2)` per window and an fsync; a record cut short by a crash is
//! a last line without a newline, which readers skip. Appending instead of rewriting
//! the store every window spares the flash of boards that run the monitor for years.

use crate::measure::stats::LatencyStats;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

/// The current file of the window store.
pub const CURRENT: &str = "windows.jsonl";
/// The previous file of the window store.
pub const PREVIOUS: &str = "windows.1.jsonl";

/// One CPU's figures for one window. Latencies in **ns**.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowCpu {
    /// The CPU.
    pub cpu: usize,
    /// Samples taken.
    pub samples: u64,
    /// Smallest latency.
    pub min_ns: u64,
    /// Mean, rounded.
    pub avg_ns: u64,
    /// Median (< 1 % value error). Absent in records of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ns: Option<u64>,
    /// 99th percentile (< 1 % value error).
    pub p99_ns: u64,
    /// 99.9th percentile (< 1 % value error).
    pub p999_ns: u64,
    /// 99.99th percentile (< 1 % value error). Absent in records of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p9999_ns: Option<u64>,
    /// Largest latency (exact).
    pub max_ns: u64,
    /// Wakeups later than the following deadline.
    pub overruns: u64,
    /// Periods those late wakeups skipped (`crate::measure::periodic`: a wakeup `k`
    /// intervals past its deadline misses `k` periods; the `Missed:` of `rtbench
    /// cyclic`). Absent in records of older versions: see [`WindowCpu::missed`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missed_periods: Option<u64>,
    /// The `[monitor.limits]` this window exceeded (`max`, `p999`, …); empty: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exceeded: Vec<String>,
    /// When the maximum woke, wall-clock **ms** since the epoch (absent in records of
    /// older versions, which stamped the window's end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_at_ms: Option<i64>,
    /// Why the maximum was late, when it was over the explain threshold and explained
    /// (`crate::explain::text::headline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The cause's kind (`task`, `irq`, … `stopped`; `crate::explain::CauseKind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause_kind: Option<String>,
}

impl WindowCpu {
    /// The figures of `stats` for `cpu`; `wall_offset_ns` (CLOCK_REALTIME −
    /// CLOCK_MONOTONIC) turns the maximum's time into wall-clock time.
    pub fn from_stats(cpu: usize, stats: &LatencyStats, wall_offset_ns: i64) -> WindowCpu {
        WindowCpu {
            cpu,
            samples: stats.count,
            min_ns: stats.min(),
            avg_ns: stats.mean_ns().round() as u64,
            p50_ns: Some(stats.quantile_ns(0.5)),
            p99_ns: stats.quantile_ns(0.99),
            p999_ns: stats.quantile_ns(0.999),
            p9999_ns: Some(stats.quantile_ns(0.9999)),
            max_ns: stats.max_ns,
            overruns: stats.overruns,
            missed_periods: Some(stats.missed_periods),
            exceeded: Vec::new(),
            max_at_ms: (stats.count > 0 && stats.max_at_ns > 0)
                .then(|| (stats.max_at_ns + wall_offset_ns).div_euclid(1_000_000)),
            cause: None,
            cause_kind: None,
        }
    }

    /// Periods missed in the window. A record of an older version, which did not
    /// count them, reads as its overrun count: a lower bound, since every overrun
    /// misses at least one period.
    pub fn missed(&self) -> u64 {
        self.missed_periods.unwrap_or(self.overruns)
    }

    /// When the maximum woke, seconds since the epoch: its own time where the record
    /// has it, else `end_s` (the window's end).
    pub fn max_at_s(&self, end_s: i64) -> i64 {
        self.max_at_ms.map_or(end_s, |ms| ms.div_euclid(1000))
    }
}

/// What the monitor has seen on one CPU over all its windows, across restarts: the
/// largest latency and when, and the counters. Latencies in **ns**. The one type for
/// these figures: kept per CPU by the monitor's history (and in its state file, under
/// the names below), shown in its journal entries and Prometheus textfile and by
/// `rtbench report --since`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AllTime {
    /// Largest latency ever seen on the CPU by the monitor.
    #[serde(rename = "alltime_max_ns")]
    pub max_ns: u64,
    /// When, seconds since the epoch (the sample's own time; the end of its window
    /// for windows of older versions); 0 if never.
    #[serde(rename = "alltime_max_at_s")]
    pub max_at_s: i64,
    /// Samples ever taken.
    #[serde(rename = "alltime_samples")]
    pub samples: u64,
    /// Overruns ever counted.
    #[serde(rename = "alltime_overruns")]
    pub overruns: u64,
    /// Periods missed ever ([`WindowCpu::missed`]); absent in state files of older
    /// versions, which did not count them: counted from then on.
    #[serde(rename = "alltime_missed_periods", default)]
    pub missed_periods: u64,
    /// Windows that exceeded a `[monitor.limits]` limit, ever.
    pub windows_over_limit: u64,
    /// Windows summarised, ever.
    pub windows: u64,
}

impl AllTime {
    /// Adds one window's figures `c` that ended at `end_s`. The counters come back
    /// from the state file: one that claims nearly 2^64 samples (584,000 years at 1
    /// MHz) is damaged, and stays at the maximum rather than wrapping to a small
    /// number.
    pub fn add_window(&mut self, c: &WindowCpu, end_s: i64) {
        self.add_max(c.max_ns, c.max_at_s(end_s));
        self.samples = self.samples.saturating_add(c.samples);
        self.overruns = self.overruns.saturating_add(c.overruns);
        self.missed_periods = self.missed_periods.saturating_add(c.missed());
        self.windows = self.windows.saturating_add(1);
        self.windows_over_limit = self
            .windows_over_limit
            .saturating_add(u64::from(!c.exceeded.is_empty()));
    }

    /// Takes `max_ns`, seen at `at_s`, as the maximum if it is larger (also for a
    /// window newer than the state file: a crash after the last save).
    pub fn add_max(&mut self, max_ns: u64, at_s: i64) {
        if max_ns > self.max_ns {
            self.max_ns = max_ns;
            self.max_at_s = at_s;
        }
    }
}

/// One window of the monitor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowRecord {
    /// Window sequence number, counting on across restarts of the monitor.
    pub seq: u64,
    /// Start, seconds since the epoch (UTC).
    pub start_s: i64,
    /// End, seconds since the epoch (UTC).
    pub end_s: i64,
    /// Measured length in seconds, rounded to the millisecond (monotonic clock; the
    /// configured window unless the monitor started or stopped within it).
    pub duration_s: f64,
    /// Per CPU, in CPU order.
    pub cpus: Vec<WindowCpu>,
}

/// The window store in a directory (see the module documentation).
#[derive(Debug, Clone)]
pub struct WindowStore {
    /// The directory.
    pub dir: PathBuf,
    /// Size bound of both files together, **bytes**.
    pub max_bytes: u64,
}

impl WindowStore {
    /// The store in `dir`, at most `max_bytes` on disk.
    pub fn new(dir: impl Into<PathBuf>, max_bytes: u64) -> WindowStore {
        WindowStore {
            dir: dir.into(),
            max_bytes,
        }
    }

    /// Appends `record` (one line), rotating first when the current file would grow
    /// past half the bound. Creates the directory if needed. The store's files are
    /// kept files ([`crate::sys::kept`]): a link, FIFO or device named like one is an
    /// error, never followed, rotated or written into.
    pub fn append(&self, record: &WindowRecord) -> io::Result<()> {
        use crate::sys::kept;
        std::fs::create_dir_all(&self.dir)?;
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        let current = self.dir.join(CURRENT);
        let previous = self.dir.join(PREVIOUS);
        // The caller names the directory; the error names the file in it.
        let named = |name: &str, e: io::Error| {
            let why = e.to_string();
            let sep = if why.starts_with("is ") { " " } else { ": " };
            io::Error::new(e.kind(), format!("{name}{sep}{why}"))
        };
        kept::check(&current).map_err(|e| named(CURRENT, e))?;
        let size = std::fs::symlink_metadata(&current).map_or(0, |m| m.len());
        if size > 0 && size + line.len() as u64 > self.max_bytes / 2 {
            kept::check(&previous).map_err(|e| named(PREVIOUS, e))?;
            std::fs::rename(&current, &previous).map_err(|e| named(CURRENT, e))?;
        }
        kept::append(&current, &line).map_err(|e| named(CURRENT, e))
    }

    /// Every readable record, oldest first, and what was skipped. A missing store is
    /// empty. See [`WindowStore::scan`] for what is read.
    pub fn read(&self) -> io::Result<(Vec<WindowRecord>, Skipped)> {
        let mut records = Vec::new();
        let skipped = self.scan(|r| records.push(r))?;
        Ok((records, skipped))
    }

    /// Hands every readable record to `each`, oldest first, one line at a time (the
    /// store is never held in memory whole), and returns what it skipped ([`Skipped`]):
    /// lines torn (a crash during an append), foreign, or longer than
    /// [`MAX_LINE_BYTES`], and store files that are not regular files (a FIFO, a link to
    /// a device), never waited on or read without end. It prints nothing: the caller
    /// says what was skipped. Only the newest [`WindowStore::max_bytes`] of the two
    /// files are read: a store larger than its bound (`store_kib` made smaller) is read
    /// from the first whole line within the bound. A missing store is empty. Errors:
    /// the open or the read.
    pub fn scan(&self, mut each: impl FnMut(WindowRecord)) -> io::Result<Skipped> {
        let snapshot = self.open()?;
        let mut skipped = snapshot.skipped.clone();
        skipped.lines += snapshot.scan(&mut each)?;
        Ok(skipped)
    }

    /// Opens the store's files as they are now ([`Snapshot`]): what
    /// [`WindowStore::scan`] reads, to be read more than once with the same records
    /// each time (a window appended or a rotation meanwhile is not seen). Errors: the
    /// open.
    pub fn open(&self) -> io::Result<Snapshot> {
        let mut files = Vec::with_capacity(2);
        let mut skipped = Skipped::default();
        for name in [PREVIOUS, CURRENT] {
            let path = self.dir.join(name);
            match open_regular(&path)? {
                Opened::File(f, len) => files.push((f, 0, len)),
                Opened::Missing => {}
                Opened::Special(kind) => skipped.files.push((path, kind)),
            }
        }
        // The budget goes to the newest bytes first.
        let mut budget = self.max_bytes;
        for (_, start, len) in files.iter_mut().rev() {
            *start = len.saturating_sub(budget);
            budget -= *len - *start;
        }
        Ok(Snapshot { files, skipped })
    }

    /// The summary of the records that ended after `since_s` (seconds since the
    /// epoch), made at `now_s`, and the snapshot it was read from (for the windows
    /// themselves, [`SinceSummary::records`]), what was skipped in it counted. Streamed:
    /// memory does not grow with the store or the period. Errors: the open or read
    /// (outer); sums past 2^64 − 1, a damaged store (inner, as [`SinceSummary::add`]).
    pub fn since(
        &self,
        since_s: i64,
        now_s: i64,
    ) -> io::Result<(Result<SinceSummary, String>, Snapshot)> {
        let mut snapshot = self.open()?;
        let mut summary = Ok(SinceSummary::empty(since_s, now_s));
        snapshot.skipped.lines += snapshot.scan(|r| {
            if let Ok(s) = &mut summary {
                if let Err(e) = s.add(&r) {
                    summary = Err(e);
                }
            }
        })?;
        Ok((summary, snapshot))
    }

    /// The files of the store that exist.
    pub fn files(&self) -> Vec<PathBuf> {
        [PREVIOUS, CURRENT]
            .iter()
            .map(|n| self.dir.join(n))
            // Named like a store file, whatever it is: a link (dangling too) is
            // listed, and refused when read.
            .filter(|p| p.symlink_metadata().is_ok())
            .collect()
    }
}

/// The store's files opened by [`WindowStore::open`], each with the byte range read
/// (from the first whole line within the store's bound to its size when opened).
#[derive(Debug)]
pub struct Snapshot {
    files: Vec<(std::fs::File, u64, u64)>,
    /// Store files not read (not regular files); the lines skipped are counted by
    /// [`Snapshot::scan`].
    pub skipped: Skipped,
}

impl Snapshot {
    /// Hands every readable record to `each`, oldest first, one line at a time (at
    /// most one line, [`MAX_LINE_BYTES`], is held), and returns the lines skipped.
    /// Each call reads the same records. Errors: the read.
    pub fn scan(&self, mut each: impl FnMut(WindowRecord)) -> io::Result<usize> {
        let mut skipped = 0;
        for (f, start, len) in &self.files {
            skipped += scan_file(f, *start, *len, &mut each)?;
        }
        Ok(skipped)
    }
}

/// What [`WindowStore::scan`] left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Lines not read: torn, foreign, or longer than [`MAX_LINE_BYTES`].
    pub lines: usize,
    /// Store files that are not regular files, with what they are (`FIFO`,
    /// `character device`, as [`crate::sys::atomic::kind_name`] says).
    pub files: Vec<(PathBuf, &'static str)>,
}

/// A store file as [`open_regular`] found it.
enum Opened {
    /// A regular file, open, and its size.
    File(std::fs::File, u64),
    /// No such file.
    Missing,
    /// Something else, of this kind: not read.
    Special(&'static str),
}

/// Longest line of the store read, bytes (a window of 4096 CPUs is about 1 MiB).
pub const MAX_LINE_BYTES: u64 = 4 << 20;

/// Opens `path` if it exists and is a regular file (`O_NONBLOCK`: a FIFO never blocks
/// the open); anything else is not read.
fn open_regular(path: &Path) -> io::Result<Opened> {
    use crate::sys::input::{open_regular, Links};
    // A file the monitor keeps (crate::sys::kept): a link is never followed — opening
    // what it points to may have effects of its own (a device) — and said as a link.
    let f = match open_regular(path, std::fs::OpenOptions::new().read(true), Links::Refuse) {
        Ok(f) => f,
        Err(Ok(kind)) => return Ok(Opened::Special(kind)),
        Err(Err(e)) if e.kind() == io::ErrorKind::NotFound => return Ok(Opened::Missing),
        Err(Err(e)) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Ok(Opened::Special("symbolic link"))
        }
        Err(Err(e)) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    };
    let len = f.metadata()?.len();
    Ok(Opened::File(f, len))
}

/// The records of one file of the store from byte `start` (the first whole line
/// from there) to `len` (its size when opened: a line being appended meanwhile is
/// not read), to `each`; returns the lines skipped.
fn scan_file(
    f: &std::fs::File,
    start: u64,
    len: u64,
    each: &mut impl FnMut(WindowRecord),
) -> io::Result<usize> {
    use std::io::{Seek, SeekFrom};
    let mut r = io::BufReader::with_capacity(64 << 10, f);
    let mut left = len;
    let mut line = Vec::new();
    if start > 0 {
        // From the byte before `start`: if it ends a line, the next line starts at
        // `start`; else the cut line is dropped (it is outside the bound).
        r.seek(SeekFrom::Start(start - 1))?;
        left = len - (start - 1);
        read_line(&mut r, &mut left, &mut line)?;
    } else {
        r.seek(SeekFrom::Start(0))?;
    }
    let mut skipped = 0;
    while let Some(whole) = read_line(&mut r, &mut left, &mut line)? {
        match serde_json::from_slice::<WindowRecord>(&line) {
            Ok(rec) if whole => each(rec),
            _ => skipped += 1,
        }
    }
    Ok(skipped)
}

/// Reads the next line (newline included) into `line`, at most `left` bytes and at
/// most [`MAX_LINE_BYTES`] kept; returns whether it is whole (`None` at the end). A
/// longer line is read to its end and dropped; a last line without its newline is not
/// whole.
fn read_line(
    r: &mut io::BufReader<&std::fs::File>,
    left: &mut u64,
    line: &mut Vec<u8>,
) -> io::Result<Option<bool>> {
    use std::io::{BufRead, Read};
    line.clear();
    let n = r
        .by_ref()
        .take((*left).min(MAX_LINE_BYTES + 1))
        .read_until(b'\n', line)? as u64;
    if n == 0 {
        return Ok(None);
    }
    *left -= n;
    if line.last() == Some(&b'\n') {
        return Ok(Some(true));
    }
    if n > MAX_LINE_BYTES {
        loop {
            line.clear();
            let m = r
                .by_ref()
                .take((*left).min(64 << 10))
                .read_until(b'\n', line)? as u64;
            *left -= m;
            if m == 0 || line.last() == Some(&b'\n') {
                break;
            }
        }
        line.clear();
    }
    Ok(Some(false))
}

/// One CPU over the windows of a `--since` period. Latencies in **ns**.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CpuSince {
    /// The CPU.
    pub cpu: usize,
    /// Windows.
    pub windows: u64,
    /// Samples.
    pub samples: u64,
    /// Largest latency of the period.
    pub max_ns: u64,
    /// When it woke, seconds since the epoch (the end of its window for windows of
    /// older versions).
    pub max_at_s: i64,
    /// Why it was late, when it was explained.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cause: Option<String>,
    /// Largest window p99.9.
    pub worst_p999_ns: u64,
    /// Largest window p99.
    pub worst_p99_ns: u64,
    /// Overruns, summed.
    pub overruns: u64,
    /// Periods missed, summed ([`WindowCpu::missed`]: for records of older versions,
    /// their overruns, a lower bound).
    pub missed_periods: u64,
    /// Windows that exceeded a `[monitor.limits]` limit.
    pub windows_over_limit: u64,
    /// The monitor's all-time figures for this CPU (state file, see
    /// [`SinceSummary::add_alltime`]), if known. Only the maximum is shown (in JSON as
    /// `alltime_max_ns`).
    #[serde(
        rename = "alltime_max_ns",
        serialize_with = "alltime_max",
        skip_serializing_if = "Option::is_none"
    )]
    pub alltime: Option<AllTime>,
}

impl CpuSince {
    /// No window yet on `cpu`.
    fn new(cpu: usize) -> CpuSince {
        CpuSince {
            cpu,
            windows: 0,
            samples: 0,
            max_ns: 0,
            max_at_s: 0,
            max_cause: None,
            worst_p999_ns: 0,
            worst_p99_ns: 0,
            overruns: 0,
            missed_periods: 0,
            windows_over_limit: 0,
            alltime: None,
        }
    }
}

fn alltime_max<S: serde::Serializer>(a: &Option<AllTime>, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&a.map(|a| a.max_ns), s)
}

/// The windows of the monitor since a point in time (`rtbench report --since`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SinceSummary {
    /// The start of the period, seconds since the epoch.
    pub since_s: i64,
    /// When the summary was made, seconds since the epoch.
    pub now_s: i64,
    /// Windows in the period.
    pub windows: u64,
    /// Start of the first window, end of the last (0 when none).
    pub first_s: i64,
    /// End of the last window.
    pub last_s: i64,
    /// Per CPU, in CPU order.
    pub cpus: Vec<CpuSince>,
    /// Windows in the period that exceeded a limit on some CPU.
    #[serde(skip)]
    pub over_limit: u64,
}

impl SinceSummary {
    /// No window yet, for the period after `since_s`, made at `now_s`.
    pub fn empty(since_s: i64, now_s: i64) -> SinceSummary {
        SinceSummary {
            since_s,
            now_s,
            windows: 0,
            first_s: 0,
            last_s: 0,
            cpus: Vec::new(),
            over_limit: 0,
        }
    }

    /// Summarises the `records` that ended after `since_s` (as [`SinceSummary::add`],
    /// one after the other). Errors: as [`SinceSummary::add`].
    pub fn new(
        records: impl IntoIterator<Item = WindowRecord>,
        since_s: i64,
        now_s: i64,
    ) -> Result<SinceSummary, String> {
        let mut s = SinceSummary::empty(since_s, now_s);
        for r in records {
            s.add(&r)?;
        }
        Ok(s)
    }

    /// Adds the window `r` (the next, oldest first) if it ended after the period's
    /// start; one that did not is left out. Errors: sums of samples, overruns or
    /// windows past 2^64 − 1 (a damaged store), naming the window; the summary is then
    /// not to be used.
    pub fn add(&mut self, r: &WindowRecord) -> Result<(), String> {
        if r.end_s <= self.since_s {
            return Ok(());
        }
        for c in &r.cpus {
            let i = match self.cpus.binary_search_by_key(&c.cpu, |s| s.cpu) {
                Ok(i) => i,
                Err(i) => {
                    self.cpus.insert(i, CpuSince::new(c.cpu));
                    i
                }
            };
            let s = &mut self.cpus[i];
            let past = |what: &str| {
                format!(
                    "window {}, CPU {}: {what} add up past 2^64 - 1 (out of range)",
                    r.seq, c.cpu
                )
            };
            s.windows += 1;
            s.samples = s
                .samples
                .checked_add(c.samples)
                .ok_or_else(|| past("samples"))?;
            if c.max_ns >= s.max_ns {
                s.max_ns = c.max_ns;
                s.max_at_s = c.max_at_s(r.end_s);
                s.max_cause.clone_from(&c.cause);
            }
            s.worst_p999_ns = s.worst_p999_ns.max(c.p999_ns);
            s.worst_p99_ns = s.worst_p99_ns.max(c.p99_ns);
            s.overruns = s
                .overruns
                .checked_add(c.overruns)
                .ok_or_else(|| past("overruns"))?;
            s.missed_periods = s
                .missed_periods
                .checked_add(c.missed())
                .ok_or_else(|| past("missed periods"))?;
            s.windows_over_limit += !c.exceeded.is_empty() as u64;
        }
        if self.windows == 0 {
            self.first_s = r.start_s;
        }
        self.windows += 1;
        self.last_s = r.end_s;
        self.over_limit += r.cpus.iter().any(|c| !c.exceeded.is_empty()) as u64;
        Ok(())
    }

    /// The windows of the period, oldest first, from `snapshot` (the one
    /// [`WindowStore::since`] summarised), to `each`, one at a time. Errors: the read.
    pub fn records(
        &self,
        snapshot: &Snapshot,
        mut each: impl FnMut(WindowRecord),
    ) -> io::Result<()> {
        snapshot
            .scan(|r| {
                if r.end_s > self.since_s {
                    each(r)
                }
            })
            .map(|_| ())
    }

    /// Sets each CPU's all-time figures from `alltime` (the monitor's state file, by
    /// CPU), its maximum raised to the period's where a window of the period is newer
    /// than the state (a crash after the last save).
    pub fn add_alltime(&mut self, alltime: impl Fn(usize) -> Option<AllTime>) {
        for c in self.cpus.iter_mut() {
            c.alltime = alltime(c.cpu).map(|mut a| {
                a.add_max(c.max_ns, c.max_at_s);
                a
            });
        }
    }

    /// Windows in the period that exceeded a limit on some CPU.
    pub fn over_limit(&self) -> u64 {
        self.over_limit
    }
}

/// The monitor's directory under a results directory (`[output] results_dir`).
pub fn default_dir(results_dir: &Path) -> PathBuf {
    results_dir.join("monitor")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(seq: u64, max_ns: u64, exceeded: bool) -> WindowRecord {
        WindowRecord {
            seq,
            start_s: 1_000 + seq as i64 * 300,
            end_s: 1_300 + seq as i64 * 300,
            duration_s: 300.0,
            cpus: vec![WindowCpu {
                cpu: 1,
                samples: 300_000,
                min_ns: 1_000,
                avg_ns: 2_000,
                p50_ns: None,
                p99_ns: 5_000,
                p9999_ns: None,
                p999_ns: 8_000 + seq,
                max_ns,
                overruns: 1,
                missed_periods: Some(3),
                exceeded: if exceeded { vec!["max".into()] } else { vec![] },
                max_at_ms: None,
                cause: None,
                cause_kind: None,
            }],
        }
    }

    #[test]
    fn fifos_and_device_links_named_like_the_store_are_skipped() {
        use std::os::unix::ffi::OsStrExt;
        let dir = crate::config::tempdir::Dir::new("windows-special");
        let fifo = dir.path().join(PREVIOUS);
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        std::os::unix::fs::symlink("/dev/zero", dir.path().join(CURRENT)).unwrap();
        // Neither waits for a writer nor opens the link (a file the monitor keeps).
        let (records, skipped) = WindowStore::new(dir.path(), 1 << 20).read().unwrap();
        assert_eq!((records.len(), skipped.lines), (0, 0));
        assert_eq!(
            skipped.files,
            [
                (fifo.clone(), "FIFO"),
                (dir.path().join(CURRENT), "symbolic link")
            ]
        );
        // Appending to a link to a device is refused, not written through.
        let e = WindowStore::new(dir.path(), 1 << 20)
            .append(&record(0, 1, false))
            .unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
    }

    #[test]
    fn store_rotates_within_its_bound_and_skips_a_torn_line() {
        let dir = crate::config::tempdir::Dir::new("windows");
        let line_len = serde_json::to_vec(&record(0, 1, false)).unwrap().len() as u64 + 1;
        // Room for about 10 records per file.
        let store = WindowStore::new(dir.path(), line_len * 20 + 10);
        for seq in 0..95 {
            store.append(&record(seq, seq * 10, seq == 50)).unwrap();
        }
        let total: u64 = store
            .files()
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum();
        assert!(total <= store.max_bytes, "{total} > {}", store.max_bytes);
        let (records, skipped) = store.read().unwrap();
        assert_eq!(skipped, Skipped::default());
        assert_eq!(records.last().unwrap().seq, 94);
        assert!(records.len() >= 10, "{}", records.len());
        assert!(records.windows(2).all(|w| w[1].seq == w[0].seq + 1));
        // A crash in the middle of an append leaves a line without its newline.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(CURRENT))
            .unwrap();
        std::io::Write::write_all(&mut f, b"{\"seq\": 95, \"sta").unwrap();
        let (again, skipped) = store.read().unwrap();
        assert_eq!((again.len(), skipped.lines), (records.len(), 1));
    }

    #[test]
    fn scan_reads_only_the_newest_bytes_of_an_oversize_store_one_line_at_a_time() {
        let dir = crate::config::tempdir::Dir::new("windows-tail");
        // Records 90..99 all have lines of this length.
        let line_len = serde_json::to_vec(&record(99, 99, false)).unwrap().len() as u64 + 1;
        let big = WindowStore::new(dir.path(), u64::MAX);
        for seq in 0..100 {
            big.append(&record(seq, seq, false)).unwrap();
        }
        // A bound of 10.5 lines: the 10 newest whole lines, the cut one not counted.
        let small = WindowStore::new(dir.path(), line_len * 21 / 2);
        let mut seen = Vec::new();
        let skipped = small.scan(|r| seen.push(r.seq)).unwrap();
        assert_eq!(skipped.lines, 0);
        assert_eq!(seen, (90..100).collect::<Vec<_>>());
        // Exactly on a line boundary: that line is whole.
        let exact = WindowStore::new(dir.path(), line_len * 3);
        let (records, _) = exact.read().unwrap();
        assert_eq!(
            records.iter().map(|r| r.seq).collect::<Vec<_>>(),
            [97, 98, 99]
        );
        // A line longer than MAX_LINE_BYTES is skipped and counted, the next one read.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(CURRENT))
            .unwrap();
        let long = vec![b'x'; MAX_LINE_BYTES as usize + 10];
        std::io::Write::write_all(&mut f, &long).unwrap();
        std::io::Write::write_all(&mut f, b"\n").unwrap();
        let mut line = serde_json::to_vec(&record(100, 1, false)).unwrap();
        line.push(b'\n');
        std::io::Write::write_all(&mut f, &line).unwrap();
        let (records, skipped) = big.read().unwrap();
        assert_eq!((records.len(), skipped.lines), (101, 1));
        assert_eq!(records.last().unwrap().seq, 100);
    }

    #[test]
    fn since_summary_takes_the_worst_and_counts_limits() {
        let records: Vec<_> = (0..10).map(|s| record(s, 100 * (s % 4), s == 7)).collect();
        // Windows ending after 1_300 + 5 × 300: seq 5..9.
        let s = SinceSummary::new(records, 1_300 + 4 * 300, 5_000).unwrap();
        assert_eq!(s.windows, 5);
        let c = &s.cpus[0];
        assert_eq!((c.windows, c.samples, c.overruns), (5, 1_500_000, 5));
        assert_eq!(c.missed_periods, 15);
        // max 300 at seq 7 (100 × 3); p99.9 worst at seq 9.
        assert_eq!((c.max_ns, c.max_at_s), (300, 1_300 + 7 * 300));
        assert_eq!(c.worst_p999_ns, 8_009);
        assert_eq!((c.windows_over_limit, s.over_limit()), (1, 1));
        assert_eq!((s.first_s, s.last_s), (1_000 + 5 * 300, 1_300 + 9 * 300));
        let empty = SinceSummary::new(vec![], 0, 1).unwrap();
        assert_eq!((empty.windows, empty.cpus.len()), (0, 0));
    }

    #[test]
    fn missed_periods_are_stored_and_older_records_read_as_their_overruns() {
        let r = record(1, 290_000_000, false);
        let line = serde_json::to_string(&r).unwrap();
        assert!(line.contains("\"missed_periods\":3"), "{line}");
        // A line of an older version has no missed_periods: each overrun missed at
        // least one period, so the overruns are the lower bound it reads as.
        let old = line.replace(",\"missed_periods\":3", "");
        let back: WindowRecord = serde_json::from_str(&old).unwrap();
        assert_eq!(back.cpus[0].missed_periods, None);
        assert_eq!(back.cpus[0].missed(), 1);
        let r0 = r.clone();
        let s = SinceSummary::new(vec![r, back], 0, 5_000).unwrap();
        assert_eq!((s.cpus[0].overruns, s.cpus[0].missed_periods), (2, 4));
        let mut a = AllTime::default();
        a.add_window(&r0.cpus[0], 0);
        assert_eq!(a.missed_periods, 3);
        let json = serde_json::to_string(&a).unwrap();
        assert!(json.contains("\"alltime_missed_periods\":3"), "{json}");
        let old: AllTime =
            serde_json::from_str(&json.replace(",\"alltime_missed_periods\":3", "")).unwrap();
        assert_eq!(old.missed_periods, 0);
    }
}

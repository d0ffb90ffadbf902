//! cyclictest's text output: the `T:` line, the `-b` trailer, and rtbench's
//! `#`-comment lines with percentiles and overruns (parsers of `T:` lines skip them).

use super::{Live, RunReport, Sink};
use crate::measure::stats::LiveSnapshot;
use crate::measure::ThreadSpec;
use std::io::{self, Write};

/// Figures for one `T:` line, already in the output unit (µs, or ns with `-N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TLine {
    /// Thread index.
    pub index: usize,
    /// Kernel thread id.
    pub tid: i32,
    /// Priority.
    pub priority: i32,
    /// Interval in µs (always µs, as in cyclictest).
    pub interval_us: u64,
    /// Cycles.
    pub cycles: u64,
    /// Min, last ("Act"), integer average and max, in the output unit.
    pub min: u64,
    /// See `min`.
    pub act: u64,
    /// See `min`.
    pub avg: u64,
    /// See `min`.
    pub max: u64,
}

impl TLine {
    /// Builds a line from live counters (ns) for output in `unit_ns`.
    pub fn from_live(t: &ThreadSpec, s: &LiveSnapshot, unit_ns: u64) -> TLine {
        TLine {
            index: t.index,
            tid: s.tid,
            priority: t.priority,
            interval_us: t.interval_us,
            cycles: s.count,
            min: s.min_ns / unit_ns,
            act: s.last_ns / unit_ns,
            avg: s.sum_ns.checked_div(s.count).unwrap_or(0) / unit_ns,
            max: s.max_ns / unit_ns,
        }
    }

    /// Formats exactly as cyclictest's `print_stat()`:
    /// `T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld`
    /// (`Act`/`Avg` are `%8ld` with `-N`).
    pub fn format(&self, nsecs: bool) -> String {
        let w = if nsecs { 8 } else { 5 };
        format!(
            "T:{:2} ({:5}) P:{:2} I:{} C:{:7} Min:{:7} Act:{:w$} Avg:{:w$} Max:{:8}",
            self.index,
            self.tid,
            self.priority,
            self.interval_us,
            self.cycles,
            self.min,
            self.act,
            self.avg,
            self.max,
        )
    }
}

/// The final `T:` lines (cyclictest `-q` without `-h`, or the last live screen),
/// followed by rtbench's percentile/overrun comment lines ([`Summary`]).
pub struct TLines;

impl Sink<RunReport<'_>> for TLines {
    fn write(&self, r: &RunReport<'_>, out: &mut dyn Write) -> io::Result<()> {
        FinalTLines.write(r, out)?;
        Summary.write(r, out)
    }
}

/// The final `T:` lines alone, as cyclictest prints them.
pub struct FinalTLines;

impl Sink<RunReport<'_>> for FinalTLines {
    fn write(&self, r: &RunReport<'_>, out: &mut dyn Write) -> io::Result<()> {
        let unit = r.unit_ns();
        for t in &r.result.threads {
            let s = &t.stats;
            let line = TLine {
                index: t.spec.index,
                tid: t.tid,
                priority: t.spec.priority,
                interval_us: t.spec.interval_us,
                cycles: s.count,
                min: s.min() / unit,
                act: s.last_ns / unit,
                avg: (s.mean_ns() as u64) / unit,
                max: s.max_ns / unit,
            };
            writeln!(out, "{}", line.format(r.nsecs))?;
        }
        Ok(())
    }
}

/// The live `T:` lines (every report interval without `-q`, and the `SIGUSR1` status).
pub struct LiveLines;

impl Sink<Live<'_>> for LiveLines {
    fn write(&self, l: &Live<'_>, out: &mut dyn Write) -> io::Result<()> {
        for (t, s) in l.threads.iter().zip(l.live) {
            writeln!(
                out,
                "{}",
                TLine::from_live(t, s, l.unit_ns()).format(l.nsecs)
            )?;
        }
        Ok(())
    }
}

/// rtbench's extra lines, all `#` comments: percentiles, overruns, how the run ended.
pub struct Summary;

impl Sink<RunReport<'_>> for Summary {
    fn write(&self, r: &RunReport<'_>, out: &mut dyn Write) -> io::Result<()> {
        let unit = r.unit_ns();
        let u = if r.nsecs { "ns" } else { "us" };
        for t in &r.result.threads {
            let s = &t.stats;
            writeln!(
                out,
                "# T:{:2} P50:{} P99:{} P99.9:{} P99.99:{} Max:{} ({u}) Overruns:{} Missed:{}",
                t.spec.index,
                s.quantile_ns(0.50) / unit,
                s.quantile_ns(0.99) / unit,
                s.quantile_ns(0.999) / unit,
                s.quantile_ns(0.9999) / unit,
                s.max_ns / unit,
                s.overruns,
                s.missed_periods,
            )?;
        }
        if r.result.end.stop.interrupted() {
            writeln!(
                out,
                "# interrupted ({}): results cover the run so far",
                r.result.end.stop.signal_name().unwrap_or("signal")
            )?;
        }
        Ok(())
    }
}

/// cyclictest's `-b` trailer: `# Thread Ids:`, `# Break thread:`, `# Break value:`.
pub struct BreakTrailer;

impl Sink<RunReport<'_>> for BreakTrailer {
    fn write(&self, r: &RunReport<'_>, out: &mut dyn Write) -> io::Result<()> {
        write!(out, "# Thread Ids:")?;
        for t in &r.result.threads {
            write!(out, " {:05}", t.tid)?;
        }
        writeln!(out)?;
        if let Some(b) = r.result.end.break_info {
            writeln!(out, "# Break thread: {}", b.tid)?;
            writeln!(out, "# Break value: {}", b.latency_ns / r.unit_ns())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_line_matches_cyclictest_printf() {
        let l = TLine {
            index: 0,
            tid: 7580,
            priority: 90,
            interval_us: 1000,
            cycles: 2961,
            min: 11,
            act: 14,
            avg: 33,
            max: 7060,
        };
        // Captured from Debian's cyclictest 2.4 (rt-tests src/cyclictest/cyclictest.c,
        // print_stat()).
        assert_eq!(
            l.format(false),
            "T: 0 ( 7580) P:90 I:1000 C:   2961 Min:     11 Act:   14 Avg:   33 Max:    7060"
        );
        assert_eq!(
            l.format(true),
            "T: 0 ( 7580) P:90 I:1000 C:   2961 Min:     11 Act:      14 Avg:      33 Max:    7060"
        );
    }
}

/// `-v`'s line of one sample, as cyclictest's `print_stat` writes it:
/// `%8d:%8lu:%8ld\n` — thread index, cycle (from 0), latency (µs, ns with `-N`).
pub fn verbose_line(out: &mut String, thread: usize, cycle: u64, latency: u64) {
    use std::fmt::Write as _;
    let _ = writeln!(out, "{thread:8}:{cycle:8}:{latency:8}");
}

/// cyclictest's oscilloscope reduction (`-o RED`) of one thread's `-v` samples: of
/// every `RED` samples, the largest and its cycle (the first of equal ones; a group
/// whose samples are all 0 keeps the cycle of the group before, as cyclictest's
/// `redmax`/`cycleofmax` do). `RED` 1 is every sample.
#[derive(Debug, Clone, Default)]
pub struct Reduce {
    seen: u64,
    max: u64,
    cycle_of_max: u64,
}

impl Reduce {
    /// Takes sample `latency` of `cycle`; returns the group's (cycle, maximum) when it
    /// completes a group of `red`.
    pub fn take(&mut self, red: u64, cycle: u64, latency: u64) -> Option<(u64, u64)> {
        if latency > self.max {
            self.max = latency;
            self.cycle_of_max = cycle;
        }
        self.seen += 1;
        if self.seen < red {
            return None;
        }
        let out = (self.cycle_of_max, self.max);
        self.seen = 0;
        self.max = 0;
        Some(out)
    }
}

//! cyclictest's `-h/-H` histogram dump, byte-compatible with rt-tests 2.7+ (rows whose
//! counts are all zero omitted, no `# Total:`; `src/lib/histogram.c`) and, with the
//! legacy layout, with rt-tests ≤ 2.6 (every row and a `# Total:` line).
//!
//! Rows: `%06d ` bucket, then `%06lu` per thread separated by tabs, plus the sum with
//! `-H`. Trailer: `# Min/Avg/Max Latencies:`, `# Histogram Overflows:`, and the first
//! overflow cycle numbers per thread. Bucket units are µs (ns with `-N`).

use super::{RunReport, Sink};
use crate::measure::stats::LinearHistogram;
use std::io::{self, Write};

/// Row layout of the dump (`--histogram-layout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// cyclictest 2.7+: zero rows omitted, no `# Total:` line.
    Current,
    /// cyclictest <= 2.6: every row and a `# Total:` line (old OSADL scripts).
    Legacy,
}

/// The dump, configured by `-H` and `--histogram-layout`.
pub struct HistogramDump {
    /// `-H`: the all-threads column.
    pub summary_column: bool,
    /// Row layout.
    pub layout: Layout,
}

impl Sink<RunReport<'_>> for HistogramDump {
    fn write(&self, r: &RunReport<'_>, out: &mut dyn Write) -> io::Result<()> {
        let threads = &r.result.threads;
        let hists: Vec<_> = threads
            .iter()
            .filter_map(|t| t.stats.linear.as_ref())
            .collect();
        if hists.len() != threads.len() || hists.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "run has no -h histogram",
            ));
        }
        let n = threads.len();
        let legacy = self.layout == Layout::Legacy;
        // Legacy prints the sum column only with more than one thread; 2.7+ always with -H.
        let row_sum = self.summary_column && (!legacy || n > 1);
        let tail_sum = self.summary_column && n > 1;
        let mut buf = io::BufWriter::new(out);
        buckets(&mut buf, &hists, legacy, row_sum, tail_sum)?;
        latencies(&mut buf, r, &hists, tail_sum)?;
        overflow_cycles(&mut buf, &hists, legacy)?;
        writeln!(buf)?;
        buf.flush()
    }
}

/// The bucket rows (`%06d` bucket, then one `%06lu` count per thread, tab-separated, and
/// the all-threads sum under `-H`), and the legacy layout's `# Total:` line.
fn buckets(
    buf: &mut dyn Write,
    hists: &[&LinearHistogram],
    legacy: bool,
    row_sum: bool,
    tail_sum: bool,
) -> io::Result<()> {
    let n = hists.len();
    let nbuckets = hists[0].buckets.len();
    let mut totals = vec![0u64; n + 1];

    writeln!(buf, "# Histogram")?;
    for b in 0..nbuckets {
        let sum: u64 = hists.iter().map(|h| h.buckets[b]).sum();
        if !legacy && sum == 0 {
            continue;
        }
        write!(buf, "{b:06} ")?;
        for (i, h) in hists.iter().enumerate() {
            if i != 0 {
                write!(buf, "\t")?;
            }
            write!(buf, "{:06}", h.buckets[b])?;
            totals[i] += h.buckets[b];
        }
        if row_sum {
            write!(buf, "\t{sum:06}")?;
        }
        totals[n] += sum;
        writeln!(buf)?;
    }
    if legacy {
        write!(buf, "# Total:")?;
        for t in &totals[..n] {
            write!(buf, " {t:09}")?;
        }
        if tail_sum {
            write!(buf, " {:09}", totals[n])?;
        }
        writeln!(buf)?;
    }
    Ok(())
}

/// `# Min Latencies:`, `# Avg Latencies:`, `# Max Latencies:` and `# Histogram
/// Overflows:` (in the run's unit), the max and the sum after them under `-H` with more
/// than one thread.
fn latencies(
    buf: &mut dyn Write,
    r: &RunReport<'_>,
    hists: &[&LinearHistogram],
    tail_sum: bool,
) -> io::Result<()> {
    let unit = r.unit_ns();
    let threads = &r.result.threads;
    let row = |buf: &mut dyn Write, name: &str, v: &[u64], all: Option<u64>| -> io::Result<()> {
        write!(buf, "# {name}:")?;
        for x in v {
            write!(buf, " {x:05}")?;
        }
        if let Some(a) = all {
            write!(buf, " {a:05}")?;
        }
        writeln!(buf)
    };
    let mins: Vec<u64> = threads.iter().map(|t| t.stats.min() / unit).collect();
    let avgs: Vec<u64> = threads
        .iter()
        .map(|t| t.stats.mean_ns() as u64 / unit)
        .collect();
    let maxs: Vec<u64> = threads.iter().map(|t| t.stats.max_ns / unit).collect();
    let ovf: Vec<u64> = hists.iter().map(|h| h.overflows).collect();
    row(buf, "Min Latencies", &mins, None)?;
    row(buf, "Avg Latencies", &avgs, None)?;
    let maxmax = maxs.iter().copied().max().unwrap_or(0);
    row(buf, "Max Latencies", &maxs, tail_sum.then_some(maxmax))?;
    row(
        buf,
        "Histogram Overflows",
        &ovf,
        tail_sum.then_some(ovf.iter().sum()),
    )?;
    Ok(())
}

/// `# Histogram Overflow at cycle number:` and each thread's logged cycles, in the
/// layout's spelling.
fn overflow_cycles(
    buf: &mut dyn Write,
    hists: &[&LinearHistogram],
    legacy: bool,
) -> io::Result<()> {
    let nbuckets = hists[0].buckets.len();
    writeln!(buf, "# Histogram Overflow at cycle number:")?;
    for (i, h) in hists.iter().enumerate() {
        let logged = h.overflow_cycles.len() as u64;
        if legacy {
            write!(buf, "# Thread {i}:")?;
            for c in &h.overflow_cycles {
                write!(buf, " {c:05}")?;
            }
            if logged < h.overflows {
                write!(buf, " # {:05} others", h.overflows - logged)?;
            }
        } else {
            write!(buf, "# Thread {i}: ")?;
            let strs: Vec<String> = h
                .overflow_cycles
                .iter()
                .map(|c| format!("{c:05}"))
                .collect();
            write!(buf, "{}", strs.join(" "))?;
            // rt-tests 2.7+ prints the "others" note once the log is full, even with 0 others.
            if h.overflows >= nbuckets as u64 {
                write!(buf, " # {:05} others", h.overflows - nbuckets as u64)?;
            }
        }
        writeln!(buf)?;
    }
    Ok(())
}

//! Output of the pair tests (`pmq`, `pipe`): pmqtest's text lines, rtbench's `#`
//! lines (percentiles, overruns, timeouts, the pipe's switch time), pmqtest's JSON
//! (rt-tests `file_version` 1) plus the `"rtbench"` object, and the `-h` dump
//! (cyclictest's layout, one column per pair, via [`super::histogram::HistogramDump`]
//! and [`as_cyclic`]). The JSON is in [`super::pair_json`].
//!
//! pmqtest formats (rt-tests `src/pmqtest/pmqtest.c`, `print_stat`):
//! `#%1d: ID%d, P%d, CPU%d, I%ld; #%1d: ID%d, P%d, CPU%d, TO %d, Cycles %d` and
//! `#%d -> #%d, Min %4d, Cur %4d, Avg %4d, Max %4d` (Avg rounded half up).

use super::{Live, PairReport, Sink};
use crate::measure::cyclic::{CyclicResult, ThreadResult};
use crate::measure::pair::PairRun;
use crate::measure::stats::LatencyStats;
use std::io::{self, Write};

/// Nanoseconds per second and per µs, for the floating-point figures of the switch line.
const NS_PER_SEC: f64 = crate::sys::clock::NS_PER_SEC as f64;
const NS_PER_US: f64 = crate::sys::clock::NS_PER_US as f64;

/// pmqtest's first line for pair `i`.
#[allow(clippy::too_many_arguments)]
pub fn header_line(
    i: usize,
    rtid: i64,
    rprio: i32,
    rcpu: i64,
    interval_us: u64,
    stid: i64,
    sprio: i32,
    scpu: i64,
    timeouts: u64,
    cycles: u64,
) -> String {
    format!(
        "#{}: ID{rtid}, P{rprio}, CPU{rcpu}, I{interval_us}; #{}: ID{stid}, P{sprio}, CPU{scpu}, TO {timeouts}, Cycles {cycles}",
        i * 2,
        i * 2 + 1
    )
}

/// pmqtest's latency line `#from -> #to, Min …`; values already in the output unit.
pub fn latency_line(from: &str, min: u64, cur: u64, avg: u64, max: u64) -> String {
    format!("{from}, Min {min:4}, Cur {cur:4}, Avg {avg:4}, Max {max:4}")
}

fn avg_rounded(s: &LatencyStats, unit: u64) -> u64 {
    (s.mean_ns() / unit as f64 + 0.5) as u64
}

fn stat_line(from: &str, s: &LatencyStats, unit: u64) -> String {
    latency_line(
        from,
        s.min() / unit,
        s.last_ns / unit,
        avg_rounded(s, unit),
        s.max_ns / unit,
    )
}

fn arrows(i: usize) -> [String; 3] {
    let (r, s) = (i * 2, i * 2 + 1);
    [
        format!("#{s} -> #{r}"),
        format!("#{r} -> #{s}"),
        format!("#{s} -> #{r} -> #{s}"),
    ]
}

/// The live block (every report interval, and SIGUSR1): pmqtest's two lines per pair.
pub struct PairLive;

impl Sink<Live<'_>> for PairLive {
    fn write(&self, l: &Live<'_>, out: &mut dyn Write) -> io::Result<()> {
        let unit = l.unit_ns();
        let cpu = |p: &crate::measure::ThreadSpec| p.cpu.map_or(-1, |c| c as i64);
        for (p, st) in l.threads.iter().zip(l.live) {
            let line = header_line(
                p.index,
                st.peer_tid,
                p.priority,
                cpu(p),
                p.interval_us,
                st.tid as i64,
                p.priority,
                cpu(p),
                st.timeouts,
                st.count,
            );
            writeln!(out, "{line}")?;
        }
        for (p, st) in l.threads.iter().zip(l.live) {
            let avg = if st.count == 0 {
                0
            } else {
                (st.sum_ns as f64 / st.count as f64 / unit as f64 + 0.5) as u64
            };
            let line = latency_line(
                &arrows(p.index)[0],
                st.min_ns / unit,
                st.last_ns / unit,
                avg,
                st.max_ns / unit,
            );
            writeln!(out, "{line}")?;
        }
        Ok(())
    }
}

/// The final pmqtest lines (what `pmqtest -q` prints at exit), plus for pipes the
/// backward and round-trip lines.
pub struct PairLines;

impl Sink<PairReport<'_>> for PairLines {
    fn write(&self, r: &PairReport<'_>, out: &mut dyn Write) -> io::Result<()> {
        write_lines(r, out)
    }
}

fn write_lines(r: &PairReport<'_>, out: &mut dyn Write) -> io::Result<()> {
    let unit = r.unit_ns();
    for p in &r.result.pairs {
        let s = &p.spec;
        writeln!(
            out,
            "{}",
            header_line(
                s.index,
                p.receiver_tid as i64,
                s.priority,
                p.receiver_cpu,
                s.interval_us,
                p.sender_tid as i64,
                s.priority,
                p.sender_cpu,
                p.timeouts,
                p.forward.count
            )
        )?;
    }
    for p in &r.result.pairs {
        let a = arrows(p.spec.index);
        writeln!(out, "{}", stat_line(&a[0], &p.forward, unit))?;
        if let (Some(b), Some(rt)) = (&p.backward, &p.round_trip) {
            writeln!(out, "{}", stat_line(&a[1], b, unit))?;
            writeln!(out, "{}", stat_line(&a[2], rt, unit))?;
        }
    }
    Ok(())
}

fn pct_line(
    out: &mut dyn Write,
    name: &str,
    s: &LatencyStats,
    unit: u64,
    u: &str,
    extra: &str,
) -> io::Result<()> {
    writeln!(
        out,
        "# {name} P50:{} P99:{} P99.9:{} P99.99:{} Max:{} ({u}){extra}",
        s.quantile_ns(0.50) / unit,
        s.quantile_ns(0.99) / unit,
        s.quantile_ns(0.999) / unit,
        s.quantile_ns(0.9999) / unit,
        s.max_ns / unit,
    )
}

/// rtbench's `#` lines: percentiles, overruns and timeouts per direction; for pipes the
/// mean switch time next to perf's usecs/op; how the run ended.
pub struct PairSummary;

impl Sink<PairReport<'_>> for PairSummary {
    fn write(&self, r: &PairReport<'_>, out: &mut dyn Write) -> io::Result<()> {
        write_summary(r, out)
    }
}

fn write_summary(r: &PairReport<'_>, out: &mut dyn Write) -> io::Result<()> {
    let unit = r.unit_ns();
    let u = if r.nsecs { "ns" } else { "us" };
    for p in &r.result.pairs {
        let a = arrows(p.spec.index);
        pct_line(
            out,
            &a[0],
            &p.forward,
            unit,
            u,
            &format!(" Overruns:{} Timeouts:{}", p.forward.overruns, p.timeouts),
        )?;
        if let (Some(b), Some(rt)) = (&p.backward, &p.round_trip) {
            pct_line(out, &a[1], b, unit, u, "")?;
            pct_line(out, &a[2], rt, unit, u, "")?;
            if let Some(sw) = p.switch_ns() {
                writeln!(
                    out,
                    "# pair {}: {} round trips, total round-trip time {:.6} s, mean switch {:.3} us (= total / (2 x round trips); perf bench sched pipe: {:.6} usecs/op, {} ops/sec)",
                    p.spec.index,
                    rt.count,
                    p.total_ns as f64 / NS_PER_SEC,
                    sw / NS_PER_US,
                    sw * 2.0 / NS_PER_US,
                    if sw > 0.0 { (NS_PER_SEC / (sw * 2.0)) as u64 } else { 0 },
                )?;
            }
        }
    }
    if r.result.end.stop.interrupted() {
        writeln!(
            out,
            "# interrupted ({}): results cover the run so far",
            r.result.end.stop.signal_name().unwrap_or("signal")
        )?;
    }
    if let Some(b) = r.result.end.break_info {
        writeln!(out, "# Break thread: {}", b.tid)?;
        writeln!(out, "# Break value: {}", b.latency_ns / unit)?;
    }
    Ok(())
}

/// The run as a cyclic result with one "thread" per pair (its forward latencies), so
/// the `-h` dump is exactly cyclictest's layout.
pub fn as_cyclic(run: &PairRun) -> CyclicResult {
    CyclicResult {
        threads: run
            .pairs
            .iter()
            .map(|p| ThreadResult {
                spec: p.spec.clone(),
                tid: p.receiver_tid,
                stats: p.forward.clone(),
            })
            .collect(),
        end: run.end.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_match_pmqtest_printf() {
        // Captured from Debian's pmqtest 2.4 (rt-tests src/pmqtest/pmqtest.c,
        // print_stat()).
        assert_eq!(
            header_line(0, 14991, 80, 0, 1000, 14992, 80, 0, 0, 2839),
            "#0: ID14991, P80, CPU0, I1000; #1: ID14992, P80, CPU0, TO 0, Cycles 2839"
        );
        assert_eq!(
            latency_line("#1 -> #0", 3, 5, 4, 118),
            "#1 -> #0, Min    3, Cur    5, Avg    4, Max  118"
        );
        assert_eq!(
            latency_line("#3 -> #2", 3, 3, 4, 34),
            "#3 -> #2, Min    3, Cur    3, Avg    4, Max   34"
        );
        assert_eq!(
            arrows(1),
            [
                "#3 -> #2".to_string(),
                "#2 -> #3".into(),
                "#3 -> #2 -> #3".into()
            ]
        );
    }

    #[test]
    fn average_rounds_half_up_like_pmqtest() {
        let mut s = LatencyStats::new(None);
        s.record(4000);
        s.record(5000);
        assert_eq!(avg_rounded(&s, 1000), 5);
        s.record(4000);
        assert_eq!(avg_rounded(&s, 1000), 4);
    }
}

//! cyclictest's `-h`/`-H` histogram dump (rt-tests src/lib/histogram.c and
//! src/cyclictest/cyclictest.c; the writer is src/report/histogram.rs), both layouts:
//! rt-tests ≤ 2.6 prints every row and a `# Total:` line; 2.7+ omits all-zero rows and
//! `# Total:`. Rows are `%06d ` (bucket, µs) then one `%06lu` count per thread separated
//! by tabs, plus the all-threads sum under `-H`. The trailer has `# Min Latencies:`
//! (one value per thread), `# Avg Latencies:`, `# Max Latencies:` and `# Histogram
//! Overflows:` (one extra value, the max/sum, under `-H` with more than one thread),
//! then `# Histogram Overflow at cycle number:` and one `# Thread N:` line per thread.
//!
//! The thread count comes from `# Min Latencies:`; a row with one count more is `-H`'s
//! sum column, which must equal the sum of the others and is not plotted. Lines before
//! `# Histogram` (cyclictest's `T:` lines, `# /dev/cpu_dma_latency ...`) are skipped. A
//! dump that ends before its trailer, or whose rows disagree with it, is an error that
//! names the line. Buckets are taken as µs (a `-N` dump is not distinguishable).
//!
//! Every number is a `u64` and every conversion and sum is checked: a bucket or
//! maximum whose value in ns does not fit in 64 bits, or counts that add up past
//! 2^64 - 1, are errors naming the line and the value, never a wrapped number.

use super::{Curve, Histograms, Meta};

/// True when `text` has a `# Histogram` line (a cyclictest `-h`/`-H` dump).
pub fn is_dump(text: &str) -> bool {
    text.lines().any(is_start)
}

fn is_start(l: &str) -> bool {
    // Without -q, cyclictest's last screen update (ANSI escapes) may precede it.
    l.trim_end().ends_with("# Histogram")
}

/// A row or trailer line with its 1-based line number.
struct Row {
    line: usize,
    bucket: u64,
    counts: Vec<u64>,
}

fn numbers(s: &str, line: usize) -> Result<Vec<u64>, String> {
    s.split_whitespace()
        .map(|w| {
            w.parse().map_err(|_| {
                if w.bytes().all(|b| b.is_ascii_digit()) {
                    format!(
                        "line {line}: {} is out of range (at most 2^64 - 1)",
                        crate::error::echo(w)
                    )
                } else {
                    format!("line {line}: \"{}\" is not a number", crate::error::echo(w))
                }
            })
        })
        .collect()
}

/// The sum of `v`, `None` past `u64::MAX`.
fn checked_sum(v: impl IntoIterator<Item = u64>) -> Option<u64> {
    v.into_iter().try_fold(0u64, u64::checked_add)
}

/// `us` µs in ns, or an error naming the line and the value when that does not fit in
/// 64 bits.
fn us_to_ns(us: u64, line: usize, what: &str) -> Result<u64, String> {
    us.checked_mul(1000).ok_or_else(|| {
        format!(
            "line {line}: {what} {us} µs is out of range (at most {} µs)",
            u64::MAX / 1000
        )
    })
}

/// Parses a dump. Errors are messages naming the line, without the input name.
pub fn parse(text: &str) -> Result<Histograms, String> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    for (_, l) in lines.by_ref() {
        if is_start(l) {
            break;
        }
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut trailer: std::collections::HashMap<&str, (usize, Vec<u64>)> = Default::default();
    let mut thread_lines = Vec::new();
    let mut last = 0;
    for (n, l) in lines {
        last = n;
        let l = l.trim_end();
        if let Some(rest) = l.strip_prefix("# ") {
            if let Some((key, vals)) = rest.split_once(':') {
                if let Some(t) = key.strip_prefix("Thread ") {
                    thread_lines.push((n, t.trim().parse::<usize>().ok()));
                } else if matches!(
                    key,
                    "Total"
                        | "Min Latencies"
                        | "Avg Latencies"
                        | "Max Latencies"
                        | "Histogram Overflows"
                ) {
                    trailer.insert(key, (n, numbers(vals, n)?));
                }
            }
            continue;
        }
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if !trailer.is_empty() {
            return Err(format!(
                "line {n}: histogram row after the trailer: \"{}\"",
                crate::error::echo(l)
            ));
        }
        let mut w = numbers(l, n)?;
        if w.len() < 2 {
            return Err(format!(
                "line {n}: row has no counts (truncated dump?): {l:?}"
            ));
        }
        let bucket = w.remove(0);
        if rows.last().is_some_and(|r| r.bucket >= bucket) {
            return Err(format!("line {n}: bucket {bucket} out of order"));
        }
        rows.push(Row {
            line: n,
            bucket,
            counts: w,
        });
    }
    let need = |key: &str| {
        trailer.get(key).ok_or_else(|| {
            format!("line {last}: the dump ends without its \"# {key}:\" line (truncated?)")
        })
    };
    let (min_line, mins) = need("Min Latencies")?;
    let nthreads = mins.len();
    if nthreads == 0 {
        return Err(format!(
            "line {min_line}: \"# Min Latencies:\" lists no threads"
        ));
    }
    let (_, avgs) = need("Avg Latencies")?;
    let (max_line, maxs) = need("Max Latencies")?;
    let (ovf_line, ovfs) = need("Histogram Overflows")?;
    if avgs.len() != nthreads {
        return Err(format!(
            "line {min_line}: {} \"Min Latencies\" but {} \"Avg Latencies\"",
            nthreads,
            avgs.len()
        ));
    }
    // -H with more than one thread adds the max/sum over all threads.
    let summary = maxs.len() == nthreads + 1 && nthreads > 1;
    for (line, v, what) in [(max_line, maxs, "Max"), (ovf_line, ovfs, "Overflows")] {
        if v.len() != nthreads + usize::from(summary) {
            return Err(format!(
                "line {line}: {} values for {nthreads} threads in \"{what}\"",
                v.len()
            ));
        }
    }
    for t in 0..nthreads {
        if !thread_lines.iter().any(|&(_, i)| i == Some(t)) {
            return Err(format!(
                "line {last}: the dump ends without its \"# Thread {t}:\" overflow line \
                 (truncated?)"
            ));
        }
    }
    let mut columns: Option<usize> = None;
    for r in &rows {
        let c = r.counts.len();
        if c != nthreads && c != nthreads + 1 {
            return Err(format!(
                "line {}: {c} counts, expected {nthreads} (one per thread) or {} with -H \
                 (truncated?)",
                r.line,
                nthreads + 1
            ));
        }
        if *columns.get_or_insert(c) != c {
            return Err(format!(
                "line {}: {c} counts, earlier rows have {}",
                r.line,
                columns.unwrap_or(0)
            ));
        }
        if c == nthreads + 1 {
            let sum = checked_sum(r.counts[..nthreads].iter().copied()).ok_or_else(|| {
                format!(
                    "line {}: the counts add up to more than 2^64 - 1 (out of range)",
                    r.line
                )
            })?;
            if r.counts[nthreads] != sum {
                return Err(format!(
                    "line {}: -H sum column is {}, the threads add up to {sum}",
                    r.line, r.counts[nthreads]
                ));
            }
        }
    }
    // Each thread's samples (rows and overflows) must add up within 64 bits.
    for (t, &ovf) in ovfs.iter().enumerate().take(nthreads) {
        let all = rows.iter().map(|r| (r.line, r.counts[t]));
        let mut sum = 0u64;
        for (line, n) in all.chain([(*ovf_line, ovf)]) {
            sum = sum.checked_add(n).ok_or_else(|| {
                format!(
                    "line {line}: count {n} of thread {t} takes its samples past 2^64 - 1 \
                     (out of range)"
                )
            })?;
        }
    }
    let legacy = trailer.get("Total");
    if let Some((line, totals)) = legacy {
        for t in 0..nthreads {
            let sum = checked_sum(rows.iter().map(|r| r.counts[t])).unwrap_or(u64::MAX);
            if totals.get(t) != Some(&sum) {
                return Err(format!(
                    "line {line}: \"# Total:\" of thread {t} is {:?} but its rows add up \
                     to {sum} (rows missing?)",
                    totals.get(t)
                ));
            }
        }
    }
    // Buckets and maxima in µs → ns; a bucket's end must fit too.
    for r in &rows {
        us_to_ns(r.bucket.saturating_add(1), r.line, "bucket")?;
    }
    let range_ns = match (legacy, rows.last()) {
        (Some(_), Some(r)) => Some(us_to_ns(r.bucket.saturating_add(1), r.line, "bucket")?),
        _ => None,
    };
    let mut curves = Vec::with_capacity(nthreads);
    for t in 0..nthreads {
        let mut buckets = Vec::new();
        for r in rows.iter().filter(|r| r.counts[t] > 0) {
            buckets.push((us_to_ns(r.bucket, r.line, "bucket")?, r.counts[t]));
        }
        curves.push(Curve {
            thread: t,
            cpu: None,
            bucket_ns: 1000,
            buckets,
            overflows: ovfs[t],
            range_ns,
            max_ns: us_to_ns(maxs[t], *max_line, "maximum latency")?,
            p999_ns: None,
            run: None,
        });
    }
    Ok(Histograms {
        meta: Meta {
            format: format!(
                "cyclictest -h{} dump, rt-tests {} layout",
                if summary || columns == Some(nthreads + 1) {
                    "/-H"
                } else {
                    ""
                },
                if legacy.is_some() { "<= 2.6" } else { "2.7+" }
            ),
            ..Meta::default()
        },
        curves,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // The shape Debian's cyclictest 2.4 prints: 2 threads, -H, legacy layout.
    const LEGACY_H: &str = "# Histogram
000000 000000\t000000\t000000
000001 000002\t000000\t000002
000002 000004\t000018\t000022
000003 000000\t000000\t000000
# Total: 000000006 000000018 000000024
# Min Latencies: 00001 00002
# Avg Latencies: 00044 00044
# Max Latencies: 07202 07141 07202
# Histogram Overflows: 02571 02079 04650
# Histogram Overflow at cycle number:
# Thread 0: 00005 00009 # 02569 others
# Thread 1: 00000 00001 # 02077 others
";

    #[test]
    fn legacy_h_dump_drops_the_sum_column() {
        let p = parse(LEGACY_H).unwrap();
        assert_eq!(p.curves.len(), 2);
        assert_eq!(p.curves[0].buckets, vec![(1000, 2), (2000, 4)]);
        assert_eq!(p.curves[1].buckets, vec![(2000, 18)]);
        assert_eq!(p.curves[1].max_ns, 7_141_000);
        assert_eq!(p.curves[0].overflows, 2571);
        assert_eq!(p.curves[0].range_ns, Some(4000));
        assert!(p.meta.format.contains("-h/-H"), "{}", p.meta.format);
        assert!(p.meta.format.contains("<= 2.6"), "{}", p.meta.format);
    }

    #[test]
    fn current_layout_single_thread_with_sum_column() {
        // rt-tests 2.7+ prints the -H column even for one thread, but no extra Max value.
        let d = "# Histogram\n000007 000003\t000003\n000009 000001\t000001\n\
                 # Min Latencies: 00007\n# Avg Latencies: 00007\n# Max Latencies: 00009\n\
                 # Histogram Overflows: 00000\n# Histogram Overflow at cycle number:\n\
                 # Thread 0: \n";
        let p = parse(d).unwrap();
        assert_eq!(p.curves.len(), 1);
        assert_eq!(p.curves[0].buckets, vec![(7000, 3), (9000, 1)]);
        assert!(p.meta.format.contains("2.7+"));
    }

    #[test]
    fn truncation_and_inconsistency_name_the_line() {
        // Cut in the middle of a row: the last line read is named.
        let cut = &LEGACY_H[..LEGACY_H.find("000018").unwrap() + 3];
        let e = parse(cut).unwrap_err();
        assert!(e.starts_with("line 4: the dump ends without"), "{e}");
        assert!(e.contains("truncated"), "{e}");
        // A row with too few counts.
        let short = LEGACY_H.replace("000004\t000018\t000022", "000004");
        let e = parse(&short).unwrap_err();
        assert!(e.starts_with("line 4: 1 counts, expected 2"), "{e}");
        // Cut after the rows: no trailer.
        let cut = &LEGACY_H[..LEGACY_H.find("# Total").unwrap()];
        let e = parse(cut).unwrap_err();
        assert!(e.starts_with("line 5: the dump ends without"), "{e}");
        // Cut in the overflow list.
        let cut = &LEGACY_H[..LEGACY_H.find("# Thread 1").unwrap()];
        let e = parse(cut).unwrap_err();
        assert!(e.contains("\"# Thread 1:\""), "{e}");
        // A row lost from a legacy dump: # Total disagrees.
        let lost = LEGACY_H.replace("000001 000002\t000000\t000002\n", "");
        let e = parse(&lost).unwrap_err();
        assert!(e.starts_with("line 5: \"# Total:\" of thread 0"), "{e}");
        // A garbled count.
        let bad = LEGACY_H.replace("000004\t000018", "0000x4\t000018");
        let e = parse(&bad).unwrap_err();
        assert!(e.starts_with("line 4: \"0000x4\" is not a number"), "{e}");
    }
}

//! The vendors' table of a self-test with `[[condition]]`s, as board vendors publish
//! it (every CPU idle, under load, isolated under load): per test, one row per CPU
//! (cyclic) or pair (pmq, pipe), and per condition the min / avg / max / p99.9 in
//! **µs** — as many conditions side by side as fit 80 columns, the others in further
//! blocks. `rtbench report` prints it after its per-condition rows; a run without
//! conditions has none.

use crate::results::store::StoredRun;
use crate::results::summary::{is_pair_test, TestSummary, ThreadSummary};
use std::fmt::Write;

/// Width of a figure's column: a space and [`crate::duration::UsStyle::Cell`]'s at
/// most 7 characters.
const CELL: usize = 8;
/// Width of the row label (`cpu 12`, `pair 3`).
const LABEL: usize = 8;
/// The statistics of each condition, in the vendors' order.
const STATS: [&str; 4] = ["min", "avg", "max", "p99.9"];

/// The tables of `run` (empty without conditions).
pub fn render(run: &StoredRun) -> String {
    let mut s = String::new();
    let conditions: Vec<&str> = run.conditions.iter().map(|c| c.name.as_str()).collect();
    if conditions.is_empty() {
        return s;
    }
    let mut names: Vec<&str> = Vec::new();
    for t in &run.tests {
        if !names.contains(&t.test.as_str()) {
            names.push(&t.test);
        }
    }
    let per_block = ((80 - LABEL) / (CELL * STATS.len())).max(1);
    for name in names {
        let of = |c: &str| -> Option<&TestSummary> {
            run.tests
                .iter()
                .find(|t| t.test == name && t.condition.as_deref() == Some(c))
        };
        // Rows: every CPU (or unpinned pair) any condition measured, in order; a
        // condition measuring fewer CPUs numbers its threads from 0, so a pinned
        // thread's row is its CPU's.
        let key = |th: &ThreadSummary| (th.cpu, if th.cpu.is_some() { 0 } else { th.thread });
        let mut rows: Vec<(Option<usize>, usize)> = Vec::new();
        for t in conditions.iter().filter_map(|c| of(c)) {
            for th in &t.threads {
                if !rows.contains(&key(th)) {
                    rows.push(key(th));
                }
            }
        }
        rows.sort();
        for block in conditions.chunks(per_block) {
            let _ = writeln!(s, "{} (µs)", crate::error::one_line(name));
            let mut head = format!("{:<LABEL$}", "");
            let mut sub = format!(
                "{:<LABEL$}",
                if is_pair_test(name) {
                    "pair/cpu"
                } else {
                    "cpu"
                }
            );
            for c in block {
                let w = CELL * STATS.len();
                let title: String = c.chars().take(w - 1).collect();
                let _ = write!(head, "{title:>w$}");
                for st in STATS {
                    let _ = write!(sub, "{st:>CELL$}");
                }
            }
            let _ = writeln!(s, "{}", crate::error::one_line(head.trim_end()));
            let _ = writeln!(s, "{}", crate::error::one_line(&sub));
            for row in &rows {
                let first = of(block[0])
                    .into_iter()
                    .chain(conditions.iter().filter_map(|c| of(c)))
                    .flat_map(|t| t.threads.iter())
                    .find(|th| key(th) == *row);
                let cpu_text = row.0.map_or_else(|| "-".to_string(), |c| c.to_string());
                let label = match first {
                    Some(th) if is_pair_test(name) => format!("{}/{cpu_text}", th.thread),
                    _ => cpu_text,
                };
                let mut line = format!("{label:<LABEL$}");
                for c in block {
                    let th: Option<&ThreadSummary> =
                        of(c).and_then(|t| t.threads.iter().find(|th| key(th) == *row));
                    for v in figures(th) {
                        let _ = write!(line, "{v:>CELL$}");
                    }
                }
                let _ = writeln!(s, "{}", crate::error::one_line(&line));
            }
        }
    }
    s
}

/// min, avg, max, p99.9 of `th` in **µs**, `-` where the condition did not measure it.
fn figures(th: Option<&ThreadSummary>) -> [String; 4] {
    let us = |ns| crate::duration::us(ns, crate::duration::UsStyle::Cell);
    match th {
        Some(t) => [us(t.min_ns), us(t.avg_ns), us(t.max_ns), us(t.p999_ns)],
        None => std::array::from_fn(|_| "-".to_string()),
    }
}

//! The plot's text: XML escaping, clipping, and the labels of latencies (µs), counts,
//! durations and axis steps.

/// Escapes `s` for the SVG's text and attribute values ([`crate::report::xml::escape`]),
/// with tabs and newlines as spaces: a label is one line.
pub fn esc(s: &str) -> String {
    crate::report::xml::escape(&s.replace(['\t', '\n', '\r'], " "))
}

pub(super) use crate::report::layout::{clip, wrap};

/// A latency in **ns** as the plot writes it in **µs**:
/// [`crate::duration::us`] in [`crate::duration::UsStyle::Label`] (`87`, `12.3`, `1.23`).
pub fn us(ns: u64) -> String {
    crate::duration::us(ns, crate::duration::UsStyle::Label)
}

/// A count with thousands separators (`1,234,567`).
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut o = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            o.push(',');
        }
        o.push(c);
    }
    o
}

/// A duration in seconds as `45 s`, `12.5 min` or `3.0 h`.
pub(super) fn duration(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// 1, 2 or 5 × 10^k, the smallest not below `v`.
pub(super) fn nice_step(v: f64) -> f64 {
    let e = 10f64.powf(v.log10().floor());
    let f = v / e;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * e
}

/// 10^k as digits (`1e20` beyond `u64`), for the count axis's `data-value`.
pub(super) fn decade_value(k: i32) -> String {
    u32::try_from(k)
        .ok()
        .and_then(|k| 10u64.checked_pow(k))
        .map_or_else(|| format!("1e{k}"), |v| v.to_string())
}

/// Count axis label for 10^k: 1, 10, 100, 1k, ... 100G.
pub(super) fn decade_label(k: i32) -> String {
    let suffix = ["", "k", "M", "G", "T"];
    let i = (k / 3) as usize;
    match suffix.get(i) {
        Some(s) => format!("{}{s}", 10u64.pow((k % 3) as u32)),
        None => format!("1e{k}"),
    }
}

/// `2026-11-29T23:18:44Z` for `secs` since the epoch: the date every rtbench text uses
/// ([`crate::date::iso_s`]).
pub fn utc_date(secs: i64) -> String {
    crate::date::iso_s(secs)
}

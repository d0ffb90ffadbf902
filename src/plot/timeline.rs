//! The monitor's long-term view: each window's maximum per CPU over time, as OSADL's
//! long-term latency monitoring draws it
//! (<https://www.osadl.org/Long-term-latency-monitoring.qa-farm-latency-monitoring.0.html>),
//! from the window store (`crate::results::window`, `windows.jsonl`).
//!
//! Shape: x = wall-clock time (UTC), linear, from the first window's start to the last
//! one's end; y = the window's maximum in µs, log10 (a window's maximum spans decades
//! between a quiet and a disturbed hour). One `<polyline class="series">` per CPU and
//! run of windows without a gap (a monitor restart breaks the line); each point is one
//! window, drawn at its end (`data-end-s`). A window that exceeded a `[monitor.limits]`
//! limit is ringed (`<circle class="exceeded">`), each CPU's largest window maximum is
//! labelled (placed as in `place.rs`).

use super::labels::{count, esc, us, utc_date, wrap};
use super::page::{self, HEADER_CHARS, LABEL_FONT, LEFT, LINE_H, PLOT_W};
use super::place::{self, Placer};
use crate::results::window::{WindowRecord, WindowStore, CURRENT, PREVIOUS};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

const PLOT_H: f64 = 360.0;
/// Time-axis steps, seconds: the first that gives at most 8 ticks.
const STEPS_S: [i64; 22] = [
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400,
    172_800, 604_800, 2_592_000, 31_536_000,
];

/// The monitor store a plot input names, if it is one: a directory holding
/// `windows.jsonl` or `windows.1.jsonl` (the monitor's `--dir`, by default
/// `/var/lib/rtbench/monitor`).
pub fn store_dir(input: &Path) -> Option<PathBuf> {
    let has = |d: &Path| d.join(CURRENT).exists() || d.join(PREVIOUS).exists();
    (input.is_dir() && has(input)).then(|| input.to_path_buf())
}

/// The timeline as a [`crate::report::Sink`] of window records (see [`render`]).
pub struct Timeline<'a> {
    /// Replaces the title.
    pub title: Option<&'a str>,
    /// The input, named in the footer.
    pub source: &'a str,
}

impl crate::report::Sink<Vec<WindowRecord>> for Timeline<'_> {
    fn write(
        &self,
        records: &Vec<WindowRecord>,
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        out.write_all(render(records, self.title, self.source).as_bytes())
    }
}

/// True when `text`'s first line is a window record (`windows.jsonl` given as a file).
pub fn is_windows(text: &str) -> bool {
    text.lines()
        .next()
        .is_some_and(|l| serde_json::from_str::<WindowRecord>(l).is_ok())
}

/// The records of a `windows.jsonl` text, oldest first, and how many lines were not
/// records (torn or foreign).
pub fn parse_lines(text: &str) -> (Vec<WindowRecord>, usize) {
    let mut v = Vec::new();
    let mut skipped = 0;
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<WindowRecord>(l) {
            Ok(r) => v.push(r),
            Err(_) => skipped += 1,
        }
    }
    (v, skipped)
}

/// Every record of the window store in `dir`, oldest first (both files, whatever
/// their size), and the lines skipped.
pub fn read_store(dir: &Path) -> std::io::Result<(Vec<WindowRecord>, usize)> {
    let (v, s) = WindowStore::new(dir, u64::MAX / 2).read()?;
    Ok((v, s.lines + s.files.len()))
}

/// One CPU's windows as `(end s, max ns, exceeded)`, oldest first.
type Series = Vec<(i64, u64, bool)>;

/// 1, 2 or 5 × 10^k µs as a label.
fn us_label(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// `HH:MM` (or `HH:MM:SS` for steps under a minute) of `t`; with the date where a
/// step is a day or more.
fn time_label(t: i64, step: i64) -> String {
    let d = utc_date(t); // YYYY-MM-DDTHH:MM:SSZ
    if step >= 86_400 {
        d[5..10].to_string()
    } else if step >= 60 {
        d[11..16].to_string()
    } else {
        d[11..19].to_string()
    }
}

/// Renders `records` (oldest first; at least one) as an SVG timeline. `title` replaces
/// the title; `source` names the input in the footer.
pub fn render(records: &[WindowRecord], title: Option<&str>, source: &str) -> String {
    let mut series: BTreeMap<usize, Series> = BTreeMap::new();
    for r in records {
        for c in r.cpus.iter().filter(|c| c.samples > 0) {
            series
                .entry(c.cpu)
                .or_default()
                .push((r.end_s, c.max_ns, !c.exceeded.is_empty()));
        }
    }
    let t0 = records.iter().map(|r| r.start_s).min().unwrap_or(0);
    let t1 = records
        .iter()
        .map(|r| r.end_s)
        .max()
        .unwrap_or(t0)
        .max(t0 + 1);
    // A gap: more than 1.5 windows between one end and the next.
    // The window length: the median window (the first and last of a monitor run are
    // cut short by its start and stop).
    let mut lengths: Vec<i64> = records
        .iter()
        .map(|r| r.duration_s.round() as i64)
        .collect();
    lengths.sort_unstable();
    let window_s = lengths.get(lengths.len() / 2).copied().unwrap_or(1).max(1);
    let title = title.map_or_else(
        || "Monitor: window maxima per CPU".to_string(),
        String::from,
    );
    let exceeded: usize = series.values().flatten().filter(|p| p.2).count();
    let header = [
        format!(
            "{} windows of {} s from {} to {}",
            count(records.len() as u64),
            window_s,
            utc_date(t0),
            utc_date(t1)
        ),
        format!(
            "each point: one window's largest latency on one CPU; {} of them beyond \
             [monitor.limits] (ringed)",
            count(exceeded as u64)
        ),
    ];
    let header: Vec<String> = header
        .iter()
        .flat_map(|l| wrap(l, HEADER_CHARS, ""))
        .collect();
    let v = View::new(&series, (t0, t1), page::plot_top(header.len()));
    let legend_top = v.bottom + 62.0;
    let height = legend_top + LINE_H * series.len() as f64 + 30.0;
    let mut s = String::new();
    let w = &mut s;
    page::open(w, height, &title, &title, &header);
    time_axis(w, &v);
    latency_axis(w, &v);
    page::frame(w, v.top, PLOT_H);
    draw_series(w, &v, &series, window_s);
    maxima(w, &v, &series);
    legend(w, &series, legend_top);
    page::close(w, height, &format!("the monitor's window store {source}"));
    s
}

/// The plot area: time (x) from `t0` to `t1`, window maxima (y, log10 µs) in whole
/// decades around every window's maximum.
struct View {
    t0: i64,
    t1: i64,
    lo_dec: i32,
    hi_dec: i32,
    top: f64,
    bottom: f64,
}

impl View {
    fn new(series: &BTreeMap<usize, Series>, (t0, t1): (i64, i64), top: f64) -> View {
        let all = series.values().flatten().map(|p| p.1.max(1));
        let (lo, hi) = all.fold((u64::MAX, 1u64), |(a, b), v| (a.min(v), b.max(v)));
        let lo_dec = ((lo.min(hi) as f64 / 1000.0).log10().floor() as i32).max(-3);
        let hi_dec = ((hi as f64 / 1000.0).log10().ceil() as i32).max(lo_dec + 1);
        View {
            t0,
            t1,
            lo_dec,
            hi_dec,
            top,
            bottom: top + PLOT_H,
        }
    }

    fn px(&self, t: i64) -> f64 {
        LEFT + (t - self.t0) as f64 / (self.t1 - self.t0) as f64 * PLOT_W
    }

    fn py(&self, ns: u64) -> f64 {
        let l = (ns.max(1) as f64 / 1000.0).log10();
        self.bottom - (l - self.lo_dec as f64) / (self.hi_dec - self.lo_dec) as f64 * PLOT_H
    }
}

/// The time axis: ticks at a round step, at most about 8 of them.
fn time_axis(w: &mut String, v: &View) {
    let (t0, t1, top, bottom) = (v.t0, v.t1, v.top, v.bottom);
    // Time axis.
    let span = t1 - t0;
    let step = STEPS_S
        .iter()
        .copied()
        .find(|st| span / st <= 8)
        .unwrap_or(31_536_000);
    let _ = writeln!(w, "<g id=\"x-axis\" data-scale=\"time\">");
    let mut t = (t0 + step - 1).div_euclid(step) * step;
    while t <= t1 {
        let x = v.px(t);
        let _ = writeln!(
            w,
            "<line class=\"grid\" x1=\"{x:.2}\" y1=\"{top}\" x2=\"{x:.2}\" y2=\"{bottom}\" \
             stroke=\"#e4e4e4\"/><line x1=\"{x:.2}\" y1=\"{bottom}\" x2=\"{x:.2}\" y2=\"{}\" \
             stroke=\"#000\"/><text class=\"tick\" data-value=\"{t}\" x=\"{x:.2}\" y=\"{}\" \
             text-anchor=\"middle\">{}</text>",
            bottom + 5.0,
            bottom + 18.0,
            time_label(t, step)
        );
        t += step;
    }
    page::x_label(w, bottom, "Time (UTC), window end");
    let _ = writeln!(w, "</g>");
}

/// The latency axis: 1, 2, 5 per decade.
fn latency_axis(w: &mut String, view: &View) {
    let (lo_dec, hi_dec, top) = (view.lo_dec, view.hi_dec, view.top);
    let _ = writeln!(w, "<g id=\"y-axis\" data-scale=\"log\">");
    for k in lo_dec..=hi_dec {
        for m in [1.0, 2.0, 5.0] {
            let v = m * 10f64.powi(k);
            if k == hi_dec && m > 1.0 {
                break;
            }
            let y = view.py((v * 1000.0).round() as u64);
            let grid = if m == 1.0 { "#e4e4e4" } else { "#f2f2f2" };
            let _ = writeln!(
                w,
                "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{y:.2}\" x2=\"{}\" y2=\"{y:.2}\" \
                 stroke=\"{grid}\"/><text class=\"tick\" data-value=\"{v}\" x=\"{}\" \
                 y=\"{:.2}\" text-anchor=\"end\">{}</text>",
                LEFT + PLOT_W,
                LEFT - 6.0,
                y + 4.0,
                us_label(v)
            );
        }
    }
    page::y_label(w, top, PLOT_H, "Window maximum (µs, log scale)");
    let _ = writeln!(w, "</g>");
}

/// One polyline per CPU and run of windows without a gap; windows over a limit ringed.
fn draw_series(w: &mut String, v: &View, series: &BTreeMap<usize, Series>, window_s: i64) {
    let _ = writeln!(
        w,
        "<g id=\"series\" fill=\"none\" stroke-width=\"1.3\" stroke-linejoin=\"round\">"
    );
    for (i, (cpu, pts)) in series.iter().enumerate() {
        let (color, dash) = page::style(i);
        let _ = write!(
            w,
            "<g class=\"cpu\" data-cpu=\"{cpu}\" stroke=\"{color}\"{dash}><title>CPU {cpu}</title>\n\
             <polyline class=\"series\" points=\""
        );
        let mut prev: Option<i64> = None;
        for &(end, max, _) in pts {
            if prev.is_some_and(|p| end - p > window_s * 3 / 2 + 1) {
                let _ = write!(w, "\"/>\n<polyline class=\"series\" points=\"");
            }
            let _ = write!(w, "{:.2},{:.2} ", v.px(end), v.py(max));
            prev = Some(end);
        }
        let _ = writeln!(w, "\"/>");
        for &(end, max, _) in pts.iter().filter(|p| p.2) {
            let _ = writeln!(
                w,
                "<circle class=\"exceeded\" data-end-s=\"{end}\" cx=\"{:.2}\" cy=\"{:.2}\" r=\"4\" \
                 stroke=\"#c00\"/>",
                v.px(end),
                v.py(max)
            );
        }
        let _ = writeln!(w, "</g>");
    }
    let _ = writeln!(w, "</g>");
}

/// Each CPU's largest window maximum, labelled.
fn maxima(w: &mut String, v: &View, series: &BTreeMap<usize, Series>) {
    let (top, bottom) = (v.top, v.bottom);
    let mut placer = Placer::new([LEFT, top, LEFT + PLOT_W, bottom]);
    let _ = writeln!(
        w,
        "<g id=\"maxima\" font-size=\"{LABEL_FONT}\" stroke=\"#fff\" stroke-width=\"3\" \
         paint-order=\"stroke\" stroke-linejoin=\"round\">"
    );
    for (i, (cpu, pts)) in series.iter().enumerate() {
        let Some(&(end, max, _)) = pts.iter().max_by_key(|p| (p.1, -p.0)) else {
            continue;
        };
        let (color, _) = page::style(i);
        let text = format!("CPU {cpu} max {} µs", us(max));
        let width = text.chars().count() as f64 * LABEL_FONT * place::CHAR_EM;
        let (x, y) = (v.px(end), v.py(max));
        let at = placer.place(&text, LABEL_FONT, x - width / 2.0, y - 8.0, -1.0);
        let _ = writeln!(
            w,
            "<g class=\"max\" data-cpu=\"{cpu}\" data-max-ns=\"{max}\" fill=\"{color}\">\
             <circle cx=\"{x:.2}\" cy=\"{y:.2}\" r=\"2.5\" stroke=\"none\"/><text class=\"label\" \
             x=\"{:.2}\" y=\"{:.2}\">{}</text></g>",
            at.x,
            at.y,
            esc(&text)
        );
    }
    let _ = writeln!(w, "</g>");
}

/// The legend: per CPU its windows, its largest maximum and when, and how many windows
/// were over a limit.
fn legend(w: &mut String, series: &BTreeMap<usize, Series>, legend_top: f64) {
    let _ = writeln!(w, "<g id=\"legend\">");
    for (i, (cpu, pts)) in series.iter().enumerate() {
        let y = legend_top + LINE_H * i as f64;
        let worst = pts.iter().max_by_key(|p| (p.1, -p.0)).copied();
        let over = pts.iter().filter(|p| p.2).count();
        let text = format!(
            "CPU {cpu}: {} windows, largest maximum {} µs at {}; {} over a limit",
            count(pts.len() as u64),
            worst.map_or_else(|| "-".into(), |p| us(p.1)),
            worst.map_or_else(|| "-".into(), |p| utc_date(p.0)),
            count(over as u64)
        );
        page::legend_entry(w, y, i, &text);
    }
    let _ = writeln!(w, "</g>");
}

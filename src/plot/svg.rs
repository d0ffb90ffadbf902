//! The latency plot as SVG 1.1, written directly.
//!
//! Why no plotting crate: plotters 0.3.7 with only its SVG backend was tried in a scratch
//! crate with this release profile. Drawing the same two-curve log plot took about
//! 90 KiB more of the stripped binary than writing the SVG by hand. It also put 11 crates
//! into Cargo.lock (wasm-bindgen, web-sys, js-sys, ...; a Yocto `cargo` recipe fetches
//! every one), its three crates declare no `rust-version`, and its SVG has no grouping:
//! a test or a reader cannot tell a curve from a grid line. PNG would need a font at run
//! time (ttf/font-kit, or an embedded font), so PNG is not offered.
//!
//! Shape (OSADL latency plot, <https://www.osadl.org/Latency-plots.latency-plots.0.html>):
//! x = latency in µs, linear from 0 (each bucket at its lower bound), or log10 where the
//! input binned every sample (each bucket at its centre; `<g id="x-axis"
//! data-scale="log">`, [`super::axis`]); y = samples per bucket, log10, from 0.5 (an
//! empty bucket lies on the x axis, so a lone sample shows as a spike). Each curve is one
//! `<polyline class="histogram">` in `<g class="curve">`; its points above the x axis
//! are exactly the input's non-empty buckets. Each maximum is a triangle with its value
//! (`<g class="max">`); limit and maximum labels (`class="label"`) are kept inside the
//! plot area and apart (`place.rs`).
//! Text is XML-escaped; characters XML 1.0 forbids are replaced.

use super::axis::{self, XAxis};
use super::labels::{clip, decade_label, decade_value, duration, wrap};
pub use super::labels::{count, esc, us};
use super::page::{self, HEADER_CHARS, LABEL_FONT, LEFT, LINE_H, PLOT_W};
use super::place::{self, Placer};
use crate::report::Sink;
use crate::results::read::{Curve, Histograms, Meta, Percentile};
use std::fmt::Write;

/// Smallest end of the latency axis, **µs**: 1 ns, the finest bucket an input can have
/// (`-N`).
pub const MIN_X_MAX_US: f64 = 0.001;
/// Largest end of the latency axis, **µs**: the largest latency an input can hold
/// (2^64 - 1 ns).
pub const MAX_X_MAX_US: f64 = u64::MAX as f64 / 1000.0;

const PLOT_H: f64 = 400.0;
/// Lower end of the count axis (log10 of 0.5): empty buckets are drawn here.
const Y_FLOOR_LOG: f64 = -std::f64::consts::LOG10_2;

/// The SVG format as a [`Sink`] (see [`render`]).
pub struct Svg<'a> {
    /// Replaces the title made from the input.
    pub title: Option<&'a str>,
    /// End of the latency axis in **µs**.
    pub x_max_us: Option<f64>,
}

impl Sink<Histograms> for Svg<'_> {
    fn write(&self, plot: &Histograms, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(render(plot, self.title, self.x_max_us).as_bytes())
    }
}

/// Renders `plot` as an SVG document. `title` replaces the title made from the input;
/// `x_max_us` (> 0) ends the latency axis there: buckets beyond it are left out (the
/// legend counts them) and maxima beyond it are marked at the right edge.
pub fn render(plot: &Histograms, title: Option<&str>, x_max_us: Option<f64>) -> String {
    let (m, curves) = (&plot.meta, &plot.curves);
    let (title, header) = heading(m, title);
    // Long lines (a verdict naming every failure) are wrapped, never cut.
    let header: Vec<String> = header
        .iter()
        .flat_map(|l| wrap(l, HEADER_CHARS, ""))
        .collect();
    let area = Area::new(plot, page::plot_top(header.len()), x_max_us);
    let legend_top = area.bottom + 62.0;
    let height = legend_top + LINE_H * curves.len() as f64 + 30.0;
    let mut s = String::new();
    let w = &mut s;
    page::open(w, height, &title, &clip(&title, 90), &header);
    x_axis(w, &area);
    y_axis(w, &area, curves);
    page::frame(w, area.top, PLOT_H);
    let cpus_unique = {
        let mut v: Vec<_> = curves.iter().filter_map(|c| c.cpu).collect();
        let n = v.len();
        v.sort_unstable();
        v.dedup();
        n == curves.len() && v.len() == n
    };
    draw_curves(w, &area, plot, cpus_unique);
    // Labels of limits and maxima: kept inside the plot area and apart (place.rs).
    let mut placer = Placer::new([LEFT, area.top, LEFT + PLOT_W, area.bottom]);
    limits(w, &area, &m.limits, &mut placer);
    maxima(w, &area, curves, &mut placer);
    legend(w, &area, plot, cpus_unique, legend_top);
    let exact = if curves.iter().all(|c| c.p999_ns.is_some()) {
        "to 0.78 % (log buckets, ns)"
    } else {
        "from the buckets (bucket lower bound)"
    };
    page::close(w, height, &format!("{}; p99.9 {exact}", m.format));
    s
}

/// The title (`title`, or one made from the host and kernel) and the header lines
/// before wrapping: what the input records of the run, its verdict and limits.
fn heading(m: &Meta, title: Option<&str>) -> (String, Vec<String>) {
    let custom_title = title.is_some();
    let nr = |o: &Option<String>| o.clone().unwrap_or_else(|| "not recorded".into());
    let title = match title {
        Some(t) => t.to_string(),
        None => match (&m.host, &m.kernel) {
            (None, None) => format!("Latency plot ({})", m.format),
            _ => format!("Latency plot: {}, Linux {}", nr(&m.host), nr(&m.kernel)),
        },
    };
    let mut header = vec![];
    if m.kernel.is_none() && m.date.is_none() {
        header.push(format!(
            "{}: kernel, date, duration and load not recorded{}",
            m.format,
            if custom_title { "" } else { " (give --title)" }
        ));
    } else {
        header.push(format!(
            "host: {}  ·  kernel: {}",
            nr(&m.host),
            nr(&m.kernel)
        ));
        header.push(format!(
            "test: {}  ·  date: {}  ·  duration: {}  ·  load: {}",
            nr(&m.test),
            nr(&m.date),
            m.duration_s.map_or_else(|| "not recorded".into(), duration),
            nr(&m.load)
        ));
    }
    if let Some(c) = &m.command {
        header.push(format!("command: {c}"));
    }
    if let Some(v) = &m.verdict {
        header.push(format!("verdict: {v}"));
    }
    if let Some(v) = &m.run_verdict {
        header.push(v.clone());
    }
    if !m.limits.is_empty() {
        header.push(format!(
            "limits: {}",
            m.limits
                .iter()
                .map(|(what, ns)| format!("{what} {} µs", us(*ns)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    (title, header)
}

/// The plot area and its two axes: where a latency and a count are drawn.
struct Area {
    axis: XAxis,
    /// The end of the latency axis, **µs**.
    x_max_us: f64,
    top: f64,
    bottom: f64,
    /// The count axis ends at 10^top_decade.
    top_decade: i32,
}

impl Area {
    /// The area of `plot` below a header ending at `top`. The latency axis covers
    /// every histogram and every maximum inside one; a maximum among the overflows
    /// (beyond `-h US`) is marked at the right edge. `rtbench plot` refuses an
    /// `--x-max` outside 1 ns ..= 2^64 - 1 ns (plan/plot.rs); a caller of [`render`]
    /// that passes one gets the axis of the data instead. Log scale where the input
    /// binned every sample (docs/PLOT.md says why).
    fn new(plot: &Histograms, top: f64, x_max_us: Option<f64>) -> Area {
        let (m, curves) = (&plot.meta, &plot.curves);
        let x_max_us = x_max_us.filter(|x| (MIN_X_MAX_US..=MAX_X_MAX_US).contains(x));
        let limits_ns: Vec<u64> = m.limits.iter().map(|l| l.1).collect();
        let axis = XAxis {
            scale: if m.binned_all {
                axis::log(curves, &limits_ns, x_max_us)
            } else {
                axis::linear(curves, x_max_us)
            },
            left: LEFT,
            width: PLOT_W,
        };
        let max_count = curves
            .iter()
            .flat_map(|c| c.buckets.iter().map(|b| b.1))
            .max()
            .unwrap_or(1);
        Area {
            x_max_us: axis.max(),
            axis,
            top,
            bottom: top + PLOT_H,
            top_decade: (max_count as f64).log10().floor() as i32 + 1,
        }
    }

    fn px(&self, x_us: f64) -> f64 {
        self.axis.px(x_us)
    }

    /// The y of a count's log10.
    fn py_log(&self, l: f64) -> f64 {
        self.bottom - (l - Y_FLOOR_LOG) / (self.top_decade as f64 - Y_FLOOR_LOG) * PLOT_H
    }

    /// The y of a count (0 on the x axis).
    fn py(&self, n: u64) -> f64 {
        if n == 0 {
            self.bottom
        } else {
            self.py_log((n as f64).log10())
        }
    }
}

/// The grid and the latency axis.
fn x_axis(w: &mut String, a: &Area) {
    let (top, bottom) = (a.top, a.bottom);
    let _ = writeln!(
        w,
        "<g id=\"x-axis\" data-scale=\"{}\">",
        if a.axis.is_log() { "log" } else { "linear" }
    );
    for (v, label) in a.axis.ticks() {
        let x = a.px(v);
        let _ = writeln!(
            w,
            "<line class=\"grid\" x1=\"{x:.2}\" y1=\"{top}\" x2=\"{x:.2}\" y2=\"{bottom}\" \
             stroke=\"#e4e4e4\"/><line x1=\"{x:.2}\" y1=\"{bottom}\" x2=\"{x:.2}\" y2=\"{}\" \
             stroke=\"#000\"/><text class=\"tick\" x=\"{x:.2}\" y=\"{}\" \
             text-anchor=\"middle\">{label}</text>",
            bottom + 5.0,
            bottom + 18.0
        );
    }
    page::x_label(
        w,
        bottom,
        if a.axis.is_log() {
            "Latency (µs, log scale)"
        } else {
            "Latency (µs)"
        },
    );
    let _ = writeln!(w, "</g>");
}

/// The count axis: decades labelled, 2..9 as short ticks.
fn y_axis(w: &mut String, a: &Area, curves: &[Curve]) {
    let _ = writeln!(w, "<g id=\"y-axis\">");
    for k in 0..=a.top_decade {
        let y = a.py_log(k as f64);
        let _ = writeln!(
            w,
            "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{y:.2}\" x2=\"{}\" y2=\"{y:.2}\" \
             stroke=\"#e4e4e4\"/><line x1=\"{}\" y1=\"{y:.2}\" x2=\"{LEFT}\" y2=\"{y:.2}\" \
             stroke=\"#000\"/><text class=\"tick\" data-value=\"{}\" x=\"{}\" y=\"{:.2}\" \
             text-anchor=\"end\">{}</text>",
            LEFT + PLOT_W,
            LEFT - 6.0,
            decade_value(k),
            LEFT - 9.0,
            y + 4.0,
            decade_label(k)
        );
        if k < a.top_decade {
            for j in 2..10 {
                let y = a.py_log(k as f64 + (j as f64).log10());
                let _ = writeln!(
                    w,
                    "<line x1=\"{}\" y1=\"{y:.2}\" x2=\"{LEFT}\" y2=\"{y:.2}\" stroke=\"#000\"/>",
                    LEFT - 3.0
                );
            }
        }
    }
    let bucket = curves.first().map_or(1000, |c| c.bucket_ns);
    let unit = if bucket % 1000 == 0 {
        format!("{} µs", bucket / 1000)
    } else {
        format!("{bucket} ns")
    };
    page::y_label(
        w,
        a.top,
        PLOT_H,
        &format!("Samples per {unit} bucket (log scale)"),
    );
    let _ = writeln!(w, "</g>");
}

/// One polyline per curve.
fn draw_curves(w: &mut String, a: &Area, plot: &Histograms, cpus_unique: bool) {
    let _ = writeln!(
        w,
        "<g id=\"curves\" fill=\"none\" stroke-width=\"1.3\" stroke-linejoin=\"round\">"
    );
    for (i, c) in plot.curves.iter().enumerate() {
        let (color, dash) = page::style(i);
        let label = c.label(cpus_unique, plot.meta.pairs);
        let _ = write!(
            w,
            "<g class=\"curve\" id=\"curve-{i}\" data-thread=\"{}\" stroke=\"{color}\"{dash}>\
             <title>{}</title>\n<polyline class=\"histogram\" points=\"",
            c.thread,
            esc(&label)
        );
        // x to 1/1000 px: over a 0..80 ms axis (tens of µs per px, as a loaded board
        // gives) each point still names its 1-µs bucket to within 0.05 µs.
        let shift = a.axis.bucket_us(0, c.bucket_ns);
        for (x_us, n) in polyline(c)
            .into_iter()
            .map(|p| (p.0 + shift, p.1))
            .filter(|p| p.0 <= a.x_max_us)
        {
            let _ = write!(w, "{:.3},{:.2} ", a.px(x_us), a.py(n));
        }
        let _ = writeln!(w, "\"/></g>");
    }
    let _ = writeln!(w, "</g>");
}

/// Limits of a stored self-test result: a dashed vertical line each, labelled at the
/// top, right of the line (left where it would leave the plot); a limit beyond the
/// axis is named in the header only.
fn limits(w: &mut String, a: &Area, limits: &[(String, u64)], placer: &mut Placer) {
    if limits.is_empty() {
        return;
    }
    let (top, bottom) = (a.top, a.bottom);
    let _ = writeln!(
        w,
        "<g id=\"limits\" stroke=\"#c00\" font-size=\"{LABEL_FONT}\" fill=\"#c00\">"
    );
    for (what, ns) in limits {
        let x_us = *ns as f64 / 1000.0;
        if x_us > a.x_max_us {
            continue;
        }
        let x = a.px(x_us);
        let text = format!("limit {what} {} µs", us(*ns));
        let width = text.chars().count() as f64 * LABEL_FONT * place::CHAR_EM;
        let want_x = if x + 3.0 + width <= LEFT + PLOT_W - 2.0 {
            x + 3.0
        } else {
            x - 3.0 - width
        };
        let at = placer.place(&text, LABEL_FONT, want_x, top + 14.0, 1.0);
        let _ = writeln!(
            w,
            "<g class=\"limit\" data-statistic=\"{}\" data-limit-ns=\"{ns}\"><line x1=\"{x:.2}\" \
             y1=\"{top}\" x2=\"{x:.2}\" y2=\"{bottom}\" stroke-dasharray=\"4 3\"/>\
             <text class=\"label\" x=\"{:.2}\" y=\"{:.2}\" stroke=\"#fff\" \
             stroke-width=\"3\" paint-order=\"stroke\">{}</text></g>",
            esc(what),
            at.x,
            at.y,
            esc(&text)
        );
    }
    let _ = writeln!(w, "</g>");
}

/// Maxima: a triangle above the point, the value above it (moved up, or down near the
/// top, until it covers no other label). The white halo (stroke painted under the
/// fill) keeps a label readable on curves.
fn maxima(w: &mut String, a: &Area, curves: &[Curve], placer: &mut Placer) {
    let _ = writeln!(
        w,
        "<g id=\"maxima\" font-size=\"{LABEL_FONT}\" stroke=\"#fff\" stroke-width=\"3\" \
         paint-order=\"stroke\" stroke-linejoin=\"round\">"
    );
    for (i, c) in curves.iter().enumerate() {
        let (color, _) = page::style(i);
        let beyond = c.max_ns as f64 / 1000.0 > a.x_max_us;
        let bucket = c
            .buckets
            .iter()
            .find(|b| b.0 <= c.max_ns && c.max_ns < c.bucket_end(b.0));
        // On a log axis the bucket's spike is at its centre: the marker goes there.
        let at_us = match bucket {
            Some(b) if a.axis.is_log() => a.axis.bucket_us(b.0, c.bucket_ns),
            _ => c.max_ns as f64 / 1000.0,
        };
        let x = a.px(at_us.min(a.x_max_us));
        let n = bucket.map_or(0, |b| b.1);
        let y = a.py(if beyond { 0 } else { n }) - 3.0;
        let text = format!("max {} µs{}", us(c.max_ns), if beyond { " →" } else { "" });
        let width = text.chars().count() as f64 * LABEL_FONT * place::CHAR_EM;
        let want_x = if beyond { x - width } else { x - width / 2.0 };
        let at = placer.place(&text, LABEL_FONT, want_x, y - 12.0, -1.0);
        let _ = writeln!(
            w,
            "<g class=\"max\" data-thread=\"{}\" data-max-ns=\"{}\" fill=\"{color}\">\
             <path d=\"M{x:.2},{y:.2} l-5,-9 h10 z\" stroke=\"none\"/><text class=\"label\" \
             x=\"{:.2}\" y=\"{:.2}\">{}</text></g>",
            c.thread,
            c.max_ns,
            at.x,
            at.y,
            esc(&text)
        );
    }
    let _ = writeln!(w, "</g>");
}

/// The legend: one line per curve — its samples, p99.9 and max, and what is not drawn.
fn legend(w: &mut String, a: &Area, plot: &Histograms, cpus_unique: bool, legend_top: f64) {
    let _ = writeln!(w, "<g id=\"legend\">");
    for (i, c) in plot.curves.iter().enumerate() {
        let y = legend_top + LINE_H * i as f64;
        let p999 = match c.p999() {
            Percentile::At(ns) => format!("{} µs", us(ns)),
            Percentile::Beyond(ns) => format!("≥ {} µs (in the overflows)", us(ns)),
        };
        let mut text = format!(
            "{}: {} samples, p99.9 {p999}, max {} µs",
            c.label(cpus_unique, plot.meta.pairs),
            count(c.samples()),
            us(c.max_ns)
        );
        let cut: u64 = c
            .buckets
            .iter()
            .filter(|b| b.0 as f64 / 1000.0 > a.x_max_us)
            .map(|b| b.1)
            .sum();
        if cut > 0 {
            let _ = write!(text, "; {} beyond the axis", count(cut));
        }
        if c.overflows > 0 {
            let range = c
                .range_ns
                .map_or_else(|| "the histogram".into(), |r| format!("{} µs", us(r)));
            let _ = write!(
                text,
                "; {} beyond {range}, counted but not plotted",
                count(c.overflows)
            );
        }
        page::legend_entry(w, y, i, &clip(&text, 130));
    }
    let _ = writeln!(w, "</g>");
}

/// The points of one curve as `(latency µs, samples)`: every non-empty bucket at its
/// lower bound, and a point on the x axis (0 samples) where empty buckets begin and end,
/// so gaps drop to the axis instead of bridging them.
pub fn polyline(c: &Curve) -> Vec<(f64, u64)> {
    let w = c.bucket_ns;
    let us = |ns: u64| ns as f64 / 1000.0;
    let mut pts = Vec::with_capacity(c.buckets.len() + 8);
    let mut prev: Option<u64> = None;
    for &(lo, n) in &c.buckets {
        match prev {
            None if lo >= w => pts.push((us(lo - w), 0)),
            Some(p) if lo > p + w => {
                pts.push((us(p + w), 0));
                if lo - w > p + w {
                    pts.push((us(lo - w), 0));
                }
            }
            _ => {}
        }
        pts.push((us(lo), n));
        prev = Some(lo);
    }
    if let Some(p) = prev {
        pts.push((us(p + w), 0));
    }
    pts
}

#[cfg(test)]
mod tests {
    use super::super::labels::nice_step;
    use super::*;

    #[test]
    fn escapes_markup_and_forbidden_characters() {
        assert_eq!(
            esc("a<b>&\"c'\u{1b}[1m"),
            "a&lt;b&gt;&amp;&quot;c&apos;\u{fffd}[1m"
        );
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(count(999), "999");
        assert_eq!(us(87_000), "87");
        assert_eq!(us(12_345), "12.3");
        assert_eq!(us(1_234), "1.23");
        assert_eq!(decade_label(0), "1");
        assert_eq!(decade_label(4), "10k");
        assert_eq!(decade_label(6), "1M");
        assert_eq!(nice_step(7.3), 10.0);
        assert_eq!(nice_step(0.3), 0.5);
    }

    #[test]
    fn gaps_drop_to_the_axis() {
        let c = Curve {
            thread: 0,
            cpu: None,
            bucket_ns: 1000,
            buckets: vec![(0, 5), (1000, 7), (4000, 1), (6000, 2)],
            overflows: 0,
            range_ns: None,
            max_ns: 6000,
            p999_ns: None,
            run: None,
        };
        let p = polyline(&c);
        assert_eq!(
            p,
            vec![
                (0.0, 5),
                (1.0, 7),
                (2.0, 0),
                (3.0, 0),
                (4.0, 1),
                (5.0, 0),
                (6.0, 2),
                (7.0, 0)
            ]
        );
        assert_eq!(p.iter().filter(|p| p.1 > 0).count(), c.buckets.len());
    }
}

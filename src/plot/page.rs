//! The page both pictures share ([`super::svg`]'s latency plot and [`super::timeline`]):
//! the SVG root, the header (title and lines of facts), the axis titles, the plot
//! area's frame, legend entries and the footer, at one width and in one palette.
//! Every element a test reads back has an `id` or `class` (tests/cli/plot.rs).

use super::labels::esc;
use std::fmt::Write;

/// Width of the picture, px.
pub const WIDTH: f64 = 960.0;
/// Left edge of the plot area, px (room for the count or latency ticks).
pub const LEFT: f64 = 80.0;
/// Space right of the plot area, px.
pub const RIGHT: f64 = 30.0;
/// Width of the plot area, px.
pub const PLOT_W: f64 = WIDTH - LEFT - RIGHT;
/// Height of one header or legend line, px.
pub const LINE_H: f64 = 17.0;
/// Font size of the labels in the plot area (limits, maxima), px.
pub const LABEL_FONT: f64 = 11.0;
/// Longest header line, characters (12 px text across the page); longer ones wrap.
pub const HEADER_CHARS: usize = 128;
/// One colour per curve (matplotlib's tab10); past ten, dashed lines.
pub const COLORS: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// Colour and dash attribute of curve `i`.
pub fn style(i: usize) -> (&'static str, &'static str) {
    let dash = if i >= COLORS.len() {
        " stroke-dasharray=\"6 3\""
    } else {
        ""
    };
    (COLORS[i % COLORS.len()], dash)
}

/// Top of the plot area below a header of `lines` lines, px.
pub fn plot_top(lines: usize) -> f64 {
    34.0 + LINE_H * lines as f64 + 8.0
}

/// The SVG root of a page `height` px high, its `<title>`, the white background and the
/// header: `title` (already cut to fit) in bold, then `lines`.
pub fn open(w: &mut String, height: f64, title: &str, shown_title: &str, lines: &[String]) {
    let _ = writeln!(
        w,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" \
         version=\"1.1\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" \
         font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(w, "<title>{}</title>", esc(title));
    let _ = writeln!(w, "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>");
    let _ = writeln!(w, "<g id=\"header\">");
    let _ = writeln!(
        w,
        "<text id=\"title\" x=\"{LEFT}\" y=\"24\" font-size=\"17\" font-weight=\"bold\">{}</text>",
        esc(shown_title)
    );
    for (i, l) in lines.iter().enumerate() {
        let _ = writeln!(
            w,
            "<text x=\"{LEFT}\" y=\"{}\">{}</text>",
            44.0 + LINE_H * i as f64,
            esc(l)
        );
    }
    let _ = writeln!(w, "</g>");
}

/// The x axis's title under a plot area ending at `bottom`.
pub fn x_label(w: &mut String, bottom: f64, text: &str) {
    let _ = writeln!(
        w,
        "<text id=\"x-label\" x=\"{:.2}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\">{}</text>",
        LEFT + PLOT_W / 2.0,
        bottom + 38.0,
        esc(text)
    );
}

/// The y axis's title, turned, beside a plot area from `top`, `height` px high.
pub fn y_label(w: &mut String, top: f64, height: f64, text: &str) {
    let (lx, ly) = (22.0, top + height / 2.0);
    let _ = writeln!(
        w,
        "<text id=\"y-label\" x=\"{lx}\" y=\"{ly}\" text-anchor=\"middle\" font-size=\"13\" \
         transform=\"rotate(-90 {lx} {ly})\">{}</text>",
        esc(text)
    );
}

/// The frame of the plot area.
pub fn frame(w: &mut String, top: f64, height: f64) {
    let _ = writeln!(
        w,
        "<rect id=\"plot-area\" x=\"{LEFT}\" y=\"{top}\" width=\"{PLOT_W}\" height=\"{height}\" \
         fill=\"none\" stroke=\"#000\"/>"
    );
}

/// One legend line at baseline `y`: a line in curve `i`'s style, then `text`.
pub fn legend_entry(w: &mut String, y: f64, i: usize, text: &str) {
    let (color, dash) = style(i);
    let _ = writeln!(
        w,
        "<g class=\"entry\"><line x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{}\" y2=\"{:.1}\" \
         stroke=\"{color}\" stroke-width=\"3\"{dash}/><text x=\"{}\" y=\"{y:.1}\">{}</text></g>",
        y - 4.0,
        LEFT + 24.0,
        y - 4.0,
        LEFT + 32.0,
        esc(text)
    );
}

/// The footer (`rtbench VERSION plot of …`) and the end of the SVG.
pub fn close(w: &mut String, height: f64, footer: &str) {
    let _ = writeln!(
        w,
        "<text id=\"footer\" x=\"{LEFT}\" y=\"{:.1}\" font-size=\"10\" fill=\"#555\">\
         rtbench {} plot of {}</text>",
        height - 10.0,
        env!("CARGO_PKG_VERSION"),
        esc(footer)
    );
    let _ = writeln!(w, "</svg>");
}

//! The Prometheus text exposition format, written in one place for both textfiles
//! rtbench keeps for node_exporter's textfile collector: the self-test's
//! ([`super::prometheus`]) and the monitor's ([`super::monitor::MonitorProm`]).
//!
//! A [`Exposition`] holds the text; [`Exposition::family`] writes a metric family's
//! `# HELP` and `# TYPE` lines once and returns the [`Family`] its samples are written
//! through, so a sample never appears outside its family. Label values and help texts
//! are escaped as the format asks; latencies are written in seconds ([`Seconds`]).
//!
//! Source: Prometheus "Exposition formats", text format 0.0.4 (`# HELP` escapes `\` and
//! line feeds; label values escape `\`, `"` and line feeds; a summary is its
//! `{quantile="…"}` samples plus `_sum` and `_count`).

use std::fmt::{Display, Write};

/// Nanoseconds per second: Prometheus wants base units.
const NS_PER_SEC: f64 = crate::sys::clock::NS_PER_SEC as f64;

/// The `# TYPE` of a metric family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A value that goes up and down.
    Gauge,
    /// A value that only goes up (names end in `_total`).
    Counter,
    /// Quantiles, `_sum` and `_count` (see [`Family::summary`]).
    Summary,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
            Kind::Summary => "summary",
        }
    }
}

/// A latency given in **ns**, written in seconds in Rust's exponent form (`1.2e-5`,
/// `0e0`), which the format reads as a float.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seconds(pub u64);

impl Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:e}", self.0 as f64 / NS_PER_SEC)
    }
}

/// A sample's labels, rendered `name="value",…` in the order added, values escaped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels(String);

impl Labels {
    /// No labels.
    pub fn new() -> Labels {
        Labels::default()
    }

    /// These labels and `name="value"` (`name` must be a valid label name).
    pub fn with(mut self, name: &str, value: impl Display) -> Labels {
        if !self.0.is_empty() {
            self.0.push(',');
        }
        let value = value.to_string();
        let _ = write!(self.0, "{name}=\"{}\"", escape(&value, true));
        self
    }
}

/// `v` escaped for a label value (`\`, `"`, line feed) or, without `quote`, for a
/// `# HELP` text (`\`, line feed).
fn escape(v: &str, quote: bool) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' if quote => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A textfile being written (see the module documentation).
#[derive(Debug, Default)]
pub struct Exposition {
    text: String,
    families: Vec<String>,
}

impl Exposition {
    /// An empty textfile.
    pub fn new() -> Exposition {
        Exposition::default()
    }

    /// Starts family `name` of `kind`: its `# HELP` and `# TYPE` lines. Each family is
    /// started once, and its samples follow before the next family starts.
    pub fn family(&mut self, name: &str, kind: Kind, help: &str) -> Family<'_> {
        debug_assert!(
            !self.families.iter().any(|f| f == name),
            "family {name} started twice"
        );
        self.families.push(name.to_string());
        let _ = writeln!(self.text, "# HELP {name} {}", escape(help, false));
        let _ = writeln!(self.text, "# TYPE {name} {}", kind.as_str());
        Family {
            name: name.to_string(),
            out: self,
        }
    }

    /// The text.
    pub fn finish(self) -> String {
        self.text
    }
}

/// The samples of one family (see [`Exposition::family`]).
pub struct Family<'a> {
    name: String,
    out: &'a mut Exposition,
}

impl Family<'_> {
    /// One sample line of the family's own name: `name{labels} value`.
    pub fn sample(&mut self, labels: &Labels, value: impl Display) -> &mut Self {
        self.line("", labels, None, value);
        self
    }

    /// One summary (the family must be a [`Kind::Summary`]): a sample per
    /// `(quantile, ns)` in seconds, then `_sum` (`mean_ns` × `count`, in seconds) and
    /// `_count`.
    pub fn summary(
        &mut self,
        labels: &Labels,
        quantiles: &[(&str, u64)],
        mean_ns: u64,
        count: u64,
    ) -> &mut Self {
        for &(q, ns) in quantiles {
            self.line("", labels, Some(q), Seconds(ns));
        }
        let sum = mean_ns as f64 * count as f64 / NS_PER_SEC;
        self.line("_sum", labels, None, format_args!("{sum:e}"));
        self.line("_count", labels, None, count);
        self
    }

    fn line(&mut self, suffix: &str, labels: &Labels, quantile: Option<&str>, value: impl Display) {
        let t = &mut self.out.text;
        let _ = write!(t, "{}{suffix}", self.name);
        match (labels.0.is_empty(), quantile) {
            (true, None) => {}
            (true, Some(q)) => {
                let _ = write!(t, "{{quantile=\"{q}\"}}");
            }
            (false, None) => {
                let _ = write!(t, "{{{}}}", labels.0);
            }
            (false, Some(q)) => {
                let _ = write!(t, "{{{},quantile=\"{q}\"}}", labels.0);
            }
        }
        let _ = writeln!(t, " {value}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_samples_summaries_and_escapes() {
        let mut x = Exposition::new();
        x.family("a_seconds", Kind::Summary, "Help with \\ and\nline.")
            .summary(
                &Labels::new().with("cpu", 2).with("name", "x\"y\\z\n"),
                &[("0.99", 9_000), ("1", 12_000)],
                5_000,
                10,
            );
        x.family("b", Kind::Gauge, "B.")
            .sample(&Labels::new(), 1)
            .sample(&Labels::new().with("v", "pass"), Seconds(50_000));
        assert_eq!(
            x.finish(),
            "# HELP a_seconds Help with \\\\ and\\nline.\n\
             # TYPE a_seconds summary\n\
             a_seconds{cpu=\"2\",name=\"x\\\"y\\\\z\\n\",quantile=\"0.99\"} 9e-6\n\
             a_seconds{cpu=\"2\",name=\"x\\\"y\\\\z\\n\",quantile=\"1\"} 1.2e-5\n\
             a_seconds_sum{cpu=\"2\",name=\"x\\\"y\\\\z\\n\"} 5e-5\n\
             a_seconds_count{cpu=\"2\",name=\"x\\\"y\\\\z\\n\"} 10\n\
             # HELP b B.\n\
             # TYPE b gauge\n\
             b 1\n\
             b{v=\"pass\"} 5e-5\n"
        );
    }
}

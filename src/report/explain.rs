//! The `# Explained:` block of `rtbench cyclic`, `pmq` and `pipe` with `--explain`/`-b`:
//! the explanations of late samples (`crate::explain`, their words in
//! `crate::explain::text`), in **µs**.

use crate::duration::UsStyle;
use crate::explain::explainer::ExplainSummary;
use crate::explain::text::{details, headline};

fn us(ns: u64) -> String {
    crate::duration::us(ns, UsStyle::Text)
}

/// The `# Explained:` block: per explanation a headline line (`T:` is the thread, or
/// the pair for pmq/pipe) and its breakdown, then the counts.
pub struct ExplainLines;

impl super::Sink<ExplainSummary> for ExplainLines {
    fn write(&self, s: &ExplainSummary, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        for e in &s.explained {
            writeln!(
                out,
                "# Explained: T:{} ({}) CPU {} latency {}: {}",
                e.spike.thread,
                e.spike.tid,
                e.spike.cpu,
                us(e.spike.latency_ns()),
                headline(e)
            )?;
            for d in details(e) {
                writeln!(out, "#   {d}")?;
            }
        }
        let kinds: Vec<String> = s
            .counts
            .iter()
            .map(|(k, n)| format!("{} {n}", k.as_str()))
            .collect();
        writeln!(
            out,
            "# Explain: {} explained ({}), {} not explained (recorder busy), analysis at most {} ms",
            s.total(),
            if kinds.is_empty() {
                "none".to_string()
            } else {
                kinds.join(", ")
            },
            s.missed,
            s.analysis_max_ms
        )?;
        for n in &s.notes {
            writeln!(out, "# Explain: {n}")?;
        }
        Ok(())
    }
}

//! The `# Explained:` block of `rtbench cyclic`, `pmq` and `pipe` with `--explain`/`-b`:
//! the explanations of late samples (`crate::explain`, their words in
//! `crate::explain::text`), in **µs**.

use crate::duration::UsStyle;
use crate::explain::explainer::ExplainSummary;
use crate::explain::text::{details, headline, ledger_lines};

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
        // The kept explanations are the largest (above); the count is of all.
        let shown = if (s.explained.len() as u64) < s.total() {
            format!(" (the {} largest shown)", s.explained.len())
        } else {
            String::new()
        };
        writeln!(
            out,
            "# Explain: {} explained{shown} ({}), {} not explained (recorder busy or rate limit), analysis at most {} ms",
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
        causes(s, out)
    }
}

/// The `# Causes:` block: every sample over the explain threshold by cause (the
/// ledger, `crate::explain::ledger`), per thread, then the rate limit of the analysis.
fn causes(s: &ExplainSummary, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let blocks = ledger_lines(&s.ledger, false);
    if blocks.is_empty() {
        return Ok(());
    }
    for (head, lines) in blocks {
        writeln!(out, "# Causes: {head}")?;
        for l in lines {
            writeln!(out, "#   {l}")?;
        }
    }
    writeln!(
        out,
        "# Causes: analysed at most {} a second per CPU (a new maximum always); the rest counted as not analysed",
        s.ledger.analyses_per_s
    )
}

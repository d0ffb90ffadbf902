//! Every printing path of outside strings holds the one rule (`crate::error::hidden`):
//! strings of arbitrary code points — controls, C1, bidi, zero-width, noncharacters,
//! line breaks — put into a stored run's fields, a culprit's task name and a journal
//! entry come out of the report table, the report's lines, the explanation's words and
//! the journal/logfmt/human entries with no hidden character and no line break of
//! their own. The oracle is independent of the escaper: Unicode's general categories
//! as Rust's `char` reports them, plus the listed code points.

use crate::report::journal::{self, Entry, Priority};
use crate::results::store::sample_run;
use proptest::prelude::*;

/// What must never reach a terminal as itself, written out independently of
/// `error::hidden`.
fn forbidden(c: char) -> bool {
    let n = c as u32;
    (c.is_control() && c != '\t')
        || (0x80..=0x9f).contains(&n)
        || [
            0x2028, 0x2029, 0x061c, 0x200e, 0x200f, 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff,
        ]
        .contains(&n)
        || (0x202a..=0x202e).contains(&n)
        || (0x2066..=0x2069).contains(&n)
        || (0xfdd0..=0xfdef).contains(&n)
        || n & 0xfffe == 0xfffe
}

/// Strings that favour the dangerous code points, with any other scalar value too.
fn hostile() -> impl Strategy<Value = String> {
    let special = prop::sample::select(vec![
        '\n',
        '\r',
        '\u{1b}',
        '\u{7}',
        '\u{0}',
        '\u{7f}',
        '\u{85}',
        '\u{9b}',
        '\u{2028}',
        '\u{2029}',
        '\u{202e}',
        '\u{2066}',
        '\u{061c}',
        '\u{200b}',
        '\u{200d}',
        '\u{2060}',
        '\u{feff}',
        '\u{fffe}',
        '\u{ffff}',
        '\u{1fffe}',
        '\u{10ffff}',
        '\u{fdd0}',
        '[',
        '=',
        '"',
        '\\',
        ' ',
        'a',
    ]);
    prop::collection::vec(prop_oneof![special, any::<char>()], 0..24)
        .prop_map(|v| v.into_iter().collect())
}

/// Every line of `text` is free of forbidden characters and `lines` lines long at most
/// (no field added one).
fn clean(what: &str, text: &str, max_lines: usize) {
    if let Some(c) = text.chars().find(|&c| c != '\n' && forbidden(c)) {
        panic!("{what}: U+{:04X} survived in {text:?}", c as u32);
    }
    assert!(
        text.lines().count() <= max_lines,
        "{what}: a field forged a line: {text:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn stored_fields_print_escaped_in_the_table(
        release in hostile(), cond in hostile(), load in hostile(),
        problem in hostile(), store_error in hostile(),
    ) {
        let mut run = sample_run(0);
        run.sysinfo.release = release;
        run.load = load.clone();
        run.store_error = Some(store_error);
        run.verdict.problems = vec![problem];
        run.conditions = vec![crate::results::store::ConditionRecord { name: cond.clone(), load }];
        let clean_run = {
            let mut r = sample_run(0);
            r.store_error = Some("x".into());
            r.verdict.problems = vec!["x".into()];
            r.conditions = run.conditions.iter().map(|_| crate::results::store::ConditionRecord {
                name: "x".into(), load: "x".into() }).collect();
            r
        };
        let text = super::table::render(&run);
        let baseline = super::table::render(&clean_run).lines().count();
        // Wrapping may add continuation lines (80 columns), never a forged one: a
        // continuation starts with the indent.
        for l in text.lines() {
            clean("table", l, 1);
        }
        let extra = text.lines().count().saturating_sub(baseline);
        let indented = text.lines().filter(|l| l.starts_with("  ")).count();
        prop_assert!(extra <= indented, "{text}");
    }

    #[test]
    fn journal_entries_are_one_line_in_every_form(msg in hostile(), value in hostile()) {
        let e = Entry::new(journal::MSG_READY, Priority::Warning, msg)
            .field("RTBENCH_MODE", &value)
            .field("RTBENCH_CHANGED", 0)
            .field("RTBENCH_STATUS", value.clone());
        clean("human", &e.to_text(), 1);
        clean("logfmt", &e.to_logfmt(), 1);
        for (_, v) in &e.fields {
            clean("field", v, 1);
        }
    }

    #[test]
    fn a_culprits_name_prints_escaped_in_every_explanation_text(comm in hostile()) {
        let mut e = crate::explain::Explanation::default();
        e.spike.test = "cyclic".into();
        e.cause.text = format!("CPU 1 ran {comm} (pid 7)");
        e.notes = vec![format!("note about {comm}")];
        clean("headline", &crate::explain::text::headline(&e), 1);
        for d in crate::explain::text::details(&e) {
            clean("details", &d, 1);
        }
    }

    #[test]
    fn a_culprits_name_prints_escaped_in_the_ledger(comm in hostile(), why in hostile()) {
        use crate::explain::ledger::{Culprit, Ledger, Owner, Reason, Tally};
        let mut l = Ledger::new(4);
        let o = Owner { test: "cyclic", thread: 0, cpu: Some(1), threshold_ns: 1000 };
        let tally = Tally::of(1, 5000, 5000, 1000, 0, 0);
        let culprit = Culprit {
            kind: crate::explain::CauseKind::Task,
            name: comm,
            pid: Some(7),
            start_ticks: Some(12),
        };
        l.add_cause(o, culprit, &tally);
        l.add_not_analysed(o, Reason::TraceLost, Some(why), &tally);
        for (head, lines) in crate::explain::text::ledger_lines(&l, true) {
            clean("ledger head", &head, 1);
            for line in lines {
                clean("ledger", &line, 1);
            }
        }
        let mut run = sample_run(0);
        let x = crate::explain::explainer::ExplainSummary {
            ledger: l,
            ..Default::default()
        };
        run.tests.push(crate::results::summary::TestSummary {
            test: "cyclic".into(),
            condition: None,
            msg_size: None,
            duration_s: None,
            histogram_us: None,
            threads: Vec::new(),
            explain: Some(x),
        });
        for line in super::table::render(&run).lines() {
            clean("table", line, 1);
        }
        let top = super::journal::top_causes(&run, 3);
        clean("top causes", &top, 1);
    }

    #[test]
    fn labels_are_printable_only_under_the_one_rule(v in hostile()) {
        let valid = crate::config::unit::valid_value(&v);
        let bad = v.chars().any(forbidden);
        prop_assert!(!(valid && bad), "{v:?} passed as printable");
    }
}

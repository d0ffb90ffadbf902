//! Explanations as people read them, in **µs**: the one-line headline every output
//! shares (FAIL lines, journal entries, the monitor, `rtbench cyclic`) and the
//! breakdown lines. Text lives here, beside the analysis, so that the verdict
//! (`crate::results`) and every report can use the same words.

use super::{CauseKind, Explanation, IrqUse, SpikeKind};
use crate::duration::UsStyle;

fn us(ns: u64) -> String {
    crate::duration::us(ns, UsStyle::Text)
}

/// `IRQ latency 9.2 µs, thread latency 790 µs, CPU 1 ran kworker/1:2 (pid 123, FIFO
/// 99) for 780 µs`; a sample that is not the system's latency says so first
/// (`not the system's latency: …`). One line, outside names escaped
/// ([`crate::error::one_line`]).
pub fn headline(e: &Explanation) -> String {
    let mut parts = Vec::new();
    if let Some(irq) = e.irq_latency_ns {
        parts.push(format!("IRQ latency {}", us(irq)));
    }
    match (e.thread_latency_ns, e.spike.kind) {
        // A polling thread is not woken: its figure is the gap in its loop.
        (_, SpikeKind::Poll) => parts.push(format!("gap {}", us(e.spike.latency_ns()))),
        (Some(t), _) => parts.push(format!("thread latency {}", us(t))),
        (None, SpikeKind::Message) => {
            parts.push(format!("wakeup latency {}", us(e.spike.latency_ns())))
        }
        (None, SpikeKind::Timer) => {}
    }
    let c = &e.cause;
    let mut cause = c.text.clone();
    if c.ns > 0 {
        cause = format!("{cause} for {}", us(c.ns));
    }
    if !c.valid {
        cause = format!("not the system's latency: {cause}");
    }
    parts.push(cause);
    // Task names and IRQ names are any bytes a process or driver chose: escaped here,
    // so every output of an explanation prints them one way (crate::error::hidden).
    crate::error::one_line(&parts.join(", ")).into_owned()
}

fn irq_list(v: &[IrqUse]) -> String {
    v.iter()
        .take(4)
        .map(|i| format!("{} ×{} {}", i.name, i.count, us(i.ns)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The breakdown: what ran at the deadline, every task (longest first), hard IRQs,
/// softirqs, NMIs, silent time, timerlat's figures, and the notes; each one line, outside
/// names escaped ([`crate::error::one_line`]).
pub fn details(e: &Explanation) -> Vec<String> {
    let mut v = Vec::new();
    let cpu = e.spike.cpu;
    if let Some(t) = &e.at_deadline {
        let inside = t
            .work
            .first()
            .map(|w| format!(", {}", w.function))
            .unwrap_or_default();
        v.push(format!(
            "at the deadline CPU {cpu} ran {}{inside}",
            t.label()
        ));
    }
    if !e.tasks.is_empty() {
        let tasks: Vec<String> = e
            .tasks
            .iter()
            .take(5)
            .map(|t| {
                let rank = if t.pid == 0 {
                    ""
                } else if t.outranks {
                    ", outranks the thread"
                } else {
                    ""
                };
                let work = if t.work.is_empty() {
                    String::new()
                } else {
                    format!(
                        " running {}",
                        t.work
                            .iter()
                            .take(3)
                            .map(|w| w.function.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                format!("{}{rank} {}{work}", t.label(), us(t.ran_ns))
            })
            .collect();
        v.push(format!("tasks: {}", tasks.join("; ")));
    }
    if !e.irqs.is_empty() {
        v.push(format!("hard IRQs: {}", irq_list(&e.irqs)));
    }
    if !e.softirqs.is_empty() {
        v.push(format!("softirqs: {}", irq_list(&e.softirqs)));
    }
    if let Some(n) = &e.nmis {
        v.push(format!("NMIs: ×{} {}", n.count, us(n.ns)));
    }
    if e.silent_ns > 0 {
        v.push(format!(
            "no event while the timer's interrupt was due: {}",
            us(e.silent_ns)
        ));
    }
    if let Some(t) = &e.timerlat {
        v.push(format!(
            "timerlat (second opinion, {} samples): IRQ latency max {}, thread latency max {}",
            t.samples,
            us(t.irq_max_ns),
            us(t.thread_max_ns)
        ));
    }
    // An untraced sample's cause is its first note: said once.
    v.extend(
        e.notes
            .iter()
            .filter(|n| !(e.cause.kind == CauseKind::Untraced && **n == e.cause.text))
            .cloned(),
    );
    v.into_iter()
        .map(|l| crate::error::one_line(&l).into_owned())
        .collect()
}

/// The cause ledger as people read it, in **µs**: per thread a header (`T:0 CPU 1,
/// threshold 5000 µs: 14 samples over it`, with `with_test` the test first) and its
/// lines, one per cause (count, time over the threshold in all, worst sample, first and
/// last time, the culprit) by count, then by time over, and one per reason a sample was
/// not analysed; outside names escaped ([`crate::error::one_line`]).
pub fn ledger_lines(l: &super::ledger::Ledger, with_test: bool) -> Vec<(String, Vec<String>)> {
    let hz = super::ledger::ticks_per_s();
    l.threads
        .iter()
        .filter(|t| t.samples() > 0)
        .map(|t| {
            let test = if with_test {
                format!("{} ", t.test)
            } else {
                String::new()
            };
            let cpu = t.cpu.map(|c| format!(" CPU {c}")).unwrap_or_default();
            let n = t.samples();
            let head = format!(
                "{test}T:{}{cpu}, threshold {}: {n} sample{} over it",
                t.thread,
                us(t.threshold_ns),
                if n == 1 { "" } else { "s" }
            );
            let mut lines: Vec<String> = t
                .causes
                .iter()
                .map(|c| tally_line(&c.tally, &c.culprit.label(hz)))
                .collect();
            lines.extend(t.not_analysed.iter().map(|n| {
                let why = match &n.detail {
                    Some(d) => format!("not analysed ({}: {d})", n.reason.words()),
                    None => format!("not analysed ({})", n.reason.words()),
                };
                tally_line(&n.tally, &why)
            }));
            let lines = lines
                .into_iter()
                .map(|l| crate::error::one_line(&l).into_owned())
                .collect();
            (crate::error::one_line(&head).into_owned(), lines)
        })
        .collect()
}

/// `12× 240 ms over in all, worst 30 ms, 2026-12-06T03:40:01.123Z to 03:40:09.456Z: WHAT`.
fn tally_line(t: &super::ledger::Tally, what: &str) -> String {
    let first = crate::date::iso_ms(t.first_ns);
    let when = if t.first_ns == t.last_ns {
        first
    } else {
        let last = crate::date::iso_ms(t.last_ns);
        // The date once when both are on the same day.
        let last = match (first.split_once('T'), last.split_once('T')) {
            (Some((d1, _)), Some((d2, time))) if d1 == d2 => time.to_string(),
            _ => last,
        };
        format!("{first} to {last}")
    };
    format!(
        "{}× {} over in all, worst {}, {when}: {what}",
        t.count,
        us(t.over_ns),
        us(t.worst_ns)
    )
}

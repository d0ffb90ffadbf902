//! The `[tuning]` keys a self-test's tuning check did not check, each with why: a key
//! that says what the system should be and that nothing compared is not a pass, so
//! each one makes the verdict unjudged (`Unjudged::TuningNotChecked`). `[limits]`
//! needs no such list: a rule that could never apply is refused when the
//! configuration is read (`config::limits`), and one that applied to nothing measured
//! is already unjudged (`Unjudged::RuleUnused`).

use crate::config::TuningMode;
use crate::tune::TuningReport;

/// Keys that choose how rtbench works, not what the system should be: never a claim
/// to check.
const POLICY: [&str; 3] = ["journal_dir", "require_preempt_rt", "allow_unthrottled_rt"];

/// Keys that only qualify another item: each with the item-name prefixes that put it
/// to use and why it is not checked without them.
const QUALIFIERS: [(&str, &[&str], &str); 6] = [
    (
        "housekeeping",
        &["irq", "boot.irqaffinity", "workqueue"],
        "no [tuning.irq], [tuning.workqueue] or [tuning.boot] irqaffinity item puts work \
         on the housekeeping CPUs",
    ),
    (
        "irq.exclude",
        &["irq."],
        "no [tuning.irq] affinity or default_affinity item moves IRQs",
    ),
    (
        "irq.irqbalance",
        &["irq.irqbalance"],
        "irqbalance is looked at only when [tuning.irq] moves IRQs",
    ),
    (
        "sysctl.commit_headroom_pct",
        &["sysctl.vm.overcommit"],
        "it is a margin of overcommit_memory = 2, which [tuning.sysctl] does not set",
    ),
    (
        "sysctl.overcommit_ratio",
        &["sysctl.vm.overcommit"],
        "it is read with overcommit_memory, which [tuning.sysctl] does not set",
    ),
    (
        "power.cpuidle_cpus",
        &["cpuidle."],
        "no [tuning.power] cpuidle_max_latency_us item checks their idle states",
    ),
];

/// `tuning.KEY: not checked, because …` for each key of `[tuning]` in `config_text`
/// that the tuning `report` (of `mode`) did not check. None with `mode = "off"` (the
/// tuning state says "tuning off (not checked)").
pub fn tuning(config_text: &str, mode: TuningMode, report: Option<&TuningReport>) -> Vec<String> {
    let Some(report) = report.filter(|_| mode != TuningMode::Off) else {
        return Vec::new();
    };
    let table: toml::Table = toml::from_str(config_text).unwrap_or_default();
    let Some(tuning) = table.get("tuning").and_then(|t| t.as_table()) else {
        return Vec::new();
    };
    let mut keys = Vec::new();
    for (k, v) in tuning {
        match v.as_table() {
            Some(sub) => keys.extend(sub.keys().map(|s| format!("{k}.{s}"))),
            None => keys.push(k.clone()),
        }
    }
    let names: Vec<&str> = report
        .items
        .iter()
        .chain(&report.recovered)
        .map(|i| i.item.as_str())
        .collect();
    let any = |p: &[&str]| names.iter().any(|n| p.iter().any(|p| n.starts_with(p)));
    keys.into_iter()
        .filter(|k| !POLICY.contains(&k.as_str()))
        .filter_map(|k| {
            let qualifier = QUALIFIERS.iter().find(|(q, _, _)| *q == k);
            let because = match qualifier {
                _ if names.is_empty() => {
                    "no tuning item checks it on its own (rtbench config template lists the \
                     items)"
                }
                Some((_, users, why)) if !any(users) => why,
                _ => return None,
            };
            Some(format!("tuning.{k}: not checked, because {because}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::{Action, ItemReport, Status};

    fn report(items: &[&str]) -> TuningReport {
        TuningReport {
            action: Action::Check,
            items: items
                .iter()
                .map(|i| ItemReport::new(*i, Status::Ok, ""))
                .collect(),
            recovered: Vec::new(),
            rolled_back: Vec::new(),
            bootargs: None,
            bootargs_notes: Vec::new(),
            writes: 0,
        }
    }

    #[test]
    fn keys_no_item_checked_are_named_with_why() {
        let text = "[tuning]\nhousekeeping = \"0\"\njournal_dir = \"/run/x\"\n";
        let none = report(&[]);
        let v = tuning(text, TuningMode::Check, Some(&none));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].starts_with("tuning.housekeeping: not checked, because"),
            "{v:?}"
        );
        // Placement items use the housekeeping CPUs: checked through them.
        let irq = report(&["irq.default_affinity"]);
        assert!(tuning(text, TuningMode::Check, Some(&irq)).is_empty());
        // Without placement items, housekeeping is still named.
        let printk = report(&["sysctl.kernel.printk"]);
        let t2 = format!("{text}[tuning.sysctl]\nprintk = 3\ncommit_headroom_pct = 10\n");
        let v = tuning(&t2, TuningMode::Check, Some(&printk));
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(
            v[1].starts_with("tuning.sysctl.commit_headroom_pct: not checked"),
            "{v:?}"
        );
        assert!(tuning(text, TuningMode::Off, None).is_empty());
        assert!(tuning("", TuningMode::Check, Some(&none)).is_empty());
    }
}

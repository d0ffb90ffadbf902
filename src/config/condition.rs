//! `[[condition]]`: the self-test's conditions — the table board vendors publish
//! (every CPU idle, under load, with a CPU isolated under load), measured in one boot.
//!
//! ```toml
//! [[condition]]
//! name = "idle"
//!
//! [[condition]]
//! name = "stress"
//! duration = "10m"
//! [condition.load]
//! spec = "cpu:2,vm:1:64M"
//! [condition.limits]
//! max_us = 150
//! ```
//!
//! A condition may set `duration` (instead of `[selftest] duration`), `tests` (which of
//! its enabled tests run) and its own `[condition.cyclic]`, `[condition.pmq]`,
//! `[condition.pipe]`, `[condition.load]` and `[condition.limits]`: each section it
//! writes replaces the top-level section of that name *as a whole* for this condition
//! (an empty `[condition.load]` is no load); the sections it does not write are the
//! top-level ones. The conditions run in the file's order, each under its own load,
//! and are judged into one verdict whose every line names its condition.

use super::limits::{LimitSet, LimitsToml, Measured, Written};
use super::pair::{PairPlacement, PairSection, PairToml};
use super::selftest::{duration_key, CyclicSection, CyclicToml, LoadSection, LoadToml};
use super::{RawConfig, Source};
use crate::cpuset::CpuSet;
use crate::error::ConfigError;
use crate::load::LoadSpec;
use crate::measure::pair::PairKind;
use crate::sys::cpus::CpuTopology;
use crate::sys::SysRoot;
use crate::tune::spec::CommitReserve;
use serde::Deserialize;
use std::time::Duration;
use toml::Spanned;

/// Longest condition name, **characters** (it is a Prometheus label value, a journal
/// field value and part of plot file names).
pub const MAX_NAME_LEN: usize = 32;

/// `[[condition]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionToml {
    name: Spanned<String>,
    duration: Option<Spanned<String>>,
    tests: Option<Spanned<Vec<String>>>,
    cyclic: Option<CyclicToml>,
    pmq: Option<PairToml>,
    pipe: Option<PairToml>,
    load: Option<LoadToml>,
    limits: Option<LimitsToml>,
}

/// The raw sections one condition measures with: its own where it writes them, the
/// top-level ones otherwise.
pub struct Parts<'a> {
    /// `[cyclic]`.
    pub cyclic: &'a CyclicToml,
    /// `[pmq]`.
    pub pmq: Option<&'a PairToml>,
    /// `[pipe]`.
    pub pipe: Option<&'a PairToml>,
    /// `[load]`.
    pub load: &'a LoadToml,
    /// `[limits]`.
    pub limits: &'a LimitsToml,
}

/// What one condition measures, validated: the tests, their load and limits.
#[derive(Debug, Clone)]
pub struct Measure {
    /// Each test's duration unless its section sets one.
    pub duration: Duration,
    /// `[cyclic]`.
    pub cyclic: CyclicSection,
    /// The CPUs `[cyclic]` measures.
    pub cyclic_cpus: CpuSet,
    /// `[pmq]` (`None`: not run).
    pub pmq: Option<PairSection>,
    /// `[pipe]` (`None`: not run).
    pub pipe: Option<PairSection>,
    /// `[load]` as written.
    pub load: LoadSection,
    /// `[load]`, validated (`None`: no load).
    pub load_spec: Option<LoadSpec>,
    /// `[limits]`, resolved.
    pub limits: LimitSet,
}

/// One `[[condition]]`, validated.
#[derive(Debug, Clone)]
pub struct Condition {
    /// `name`: unique, 1..=[`MAX_NAME_LEN`] of `A-Z a-z 0-9 _ - .`.
    pub name: String,
    /// What it measures.
    pub measure: Measure,
}

impl Measure {
    /// The tests that run, one after the other: the most threads at once is the largest
    /// test's.
    pub fn threads(&self) -> usize {
        [&self.pmq, &self.pipe]
            .into_iter()
            .flatten()
            .filter(|p| p.enabled)
            .map(|p| 2 * p.pairs())
            .chain(self.cyclic.enabled.then_some(self.cyclic_cpus.len()))
            .max()
            .unwrap_or(0)
    }

    /// What this condition commits while it runs ([`super::tuning::commit_reserve`]).
    pub fn commit_reserve(&self) -> CommitReserve {
        super::tuning::commit_reserve(self.load_spec.as_ref(), self.threads())
    }

    /// Whether no test of it is enabled.
    pub fn no_test(&self) -> bool {
        !self.cyclic.enabled
            && ![&self.pmq, &self.pipe]
                .into_iter()
                .flatten()
                .any(|p| p.enabled)
    }
}

/// The larger of two reserves, field by field: the conditions run one after the
/// other, so the guard needs the largest of each.
pub fn larger_reserve(a: CommitReserve, b: CommitReserve) -> CommitReserve {
    CommitReserve {
        load_bytes: a.load_bytes.max(b.load_bytes),
        load_procs: a.load_procs.max(b.load_procs),
        threads: a.threads.max(b.threads),
        stack_bytes: a.stack_bytes.max(b.stack_bytes),
    }
}

/// Validates the tests, their CPUs and the limits of `parts` (the load is validated
/// first, by the caller, in the order the file's errors are reported).
pub fn measure(
    parts: &Parts<'_>,
    load_spec: Option<LoadSpec>,
    duration: Duration,
    topo: &CpuTopology,
    root: &SysRoot,
    src: &Source<'_>,
) -> Result<Measure, ConfigError> {
    let (cyclic, cyclic_cpus) = parts.cyclic.resolve(topo, src)?;
    let pair = |t: Option<&PairToml>, kind| t.map(|t| t.resolve(kind, topo, root, src)).transpose();
    let pmq = pair(parts.pmq, PairKind::Pmq)?;
    let pipe = pair(parts.pipe, PairKind::Pipe)?;
    let measured = |written: bool, p: &Option<PairSection>| match p {
        None => Measured::Absent,
        Some(p) => match &p.placement {
            PairPlacement::Unpinned(_) => Measured::Scheduler,
            PairPlacement::Pinned(set) if written => Measured::Cpus(set.clone()),
            PairPlacement::Pinned(_) => Measured::Default,
        },
    };
    let pair_cpus = |t: Option<&PairToml>| t.is_some_and(|t| t.cpus_written());
    let written = Written {
        cyclic: if cyclic.cpus.is_some() {
            Measured::Cpus(cyclic_cpus.clone())
        } else {
            Measured::Default
        },
        pmq: measured(pair_cpus(parts.pmq), &pmq),
        pipe: measured(pair_cpus(parts.pipe), &pipe),
    };
    let limits = parts.limits.resolve(topo, src, written)?;
    Ok(Measure {
        duration,
        cyclic,
        cyclic_cpus,
        pmq,
        pipe,
        load: parts.load.as_written(),
        load_spec,
        limits,
    })
}

/// Validates every `[[condition]]` of `raw`; `top` are the top-level sections a
/// condition inherits, `duration` the `[selftest]` duration.
pub fn resolve(
    raw: &RawConfig,
    top: &Parts<'_>,
    duration: Duration,
    topo: &CpuTopology,
    root: &SysRoot,
    src: &Source<'_>,
) -> Result<Vec<Condition>, ConfigError> {
    let mut out: Vec<Condition> = Vec::new();
    for (i, c) in raw.condition.iter().enumerate() {
        let key = |k: &str| format!("condition[{i}].{k}");
        let name = c.name.get_ref();
        let fine = |ch: char| ch.is_ascii_alphanumeric() || "_-.".contains(ch);
        if name.is_empty() || name.chars().count() > MAX_NAME_LEN || !name.chars().all(fine) {
            return Err(src.value_error(
                c.name.span(),
                &key("name"),
                format!("expected 1..{MAX_NAME_LEN} letters, digits, '_', '-' or '.'"),
            ));
        }
        if out.iter().any(|o| o.name == *name) {
            return Err(src.value_error(
                c.name.span(),
                &key("name"),
                "another condition has this name: expected each name once",
            ));
        }
        let parts = Parts {
            cyclic: c.cyclic.as_ref().unwrap_or(top.cyclic),
            pmq: if c.pmq.is_some() {
                c.pmq.as_ref()
            } else {
                top.pmq
            },
            pipe: if c.pipe.is_some() {
                c.pipe.as_ref()
            } else {
                top.pipe
            },
            load: c.load.as_ref().unwrap_or(top.load),
            limits: c.limits.as_ref().unwrap_or(top.limits),
        };
        let load_spec = parts.load.resolve(topo, src)?;
        let duration = match &c.duration {
            Some(d) => duration_key(src, d, &key("duration"))?.1,
            None => duration,
        };
        let mut m = measure(&parts, load_spec, duration, topo, root, src)?;
        if let Some(tests) = &c.tests {
            only_tests(&mut m, tests, &key("tests"), src)?;
        }
        if m.no_test() {
            return Err(src.value_error(
                c.name.span(),
                &key("name"),
                "the condition enables no test: expected [cyclic], [pmq] or [pipe] enabled in it",
            ));
        }
        out.push(Condition {
            name: name.clone(),
            measure: m,
        });
    }
    Ok(out)
}

/// `tests = ["cyclic", "pmq"]`: only these of the condition's tests run; each must be
/// a test its sections define.
fn only_tests(
    m: &mut Measure,
    tests: &Spanned<Vec<String>>,
    key: &str,
    src: &Source<'_>,
) -> Result<(), ConfigError> {
    for t in tests.get_ref() {
        let there = match t.as_str() {
            "cyclic" => true,
            "pmq" => m.pmq.is_some(),
            "pipe" => m.pipe.is_some(),
            _ => {
                return Err(src.value_error(
                    tests.span(),
                    key,
                    format!(
                        "unknown test \"{}\": expected \"cyclic\", \"pmq\" or \"pipe\"",
                        crate::error::echo(t)
                    ),
                ))
            }
        };
        if !there {
            return Err(src.value_error(
                tests.span(),
                key,
                format!("no [{t}] section: expected one (top-level or in the condition) to run it"),
            ));
        }
    }
    let listed = |t: &str| tests.get_ref().iter().any(|x| x == t);
    m.cyclic.enabled &= listed("cyclic");
    for (p, name) in [(&mut m.pmq, "pmq"), (&mut m.pipe, "pipe")] {
        if let Some(p) = p.as_mut() {
            p.enabled &= listed(name);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::sys::SysRoot;

    fn parse(text: &str) -> Result<crate::config::Config, crate::error::ConfigError> {
        crate::config::parse(text, "t.toml", &SysRoot::host())
    }

    #[test]
    fn sections_of_a_condition_replace_the_top_level_ones() {
        let c = parse(
            "[selftest]\nduration = \"2s\"\n[load]\nspec = \"cpu:1\"\n[limits]\nmax_us = 500\n\
             [[condition]]\nname = \"idle\"\n[condition.load]\n\
             [[condition]]\nname = \"stress\"\nduration = \"3s\"\n[condition.limits]\nmax_us = 900\n",
        )
        .unwrap();
        assert_eq!(c.conditions.len(), 2);
        let (idle, stress) = (&c.conditions[0].measure, &c.conditions[1].measure);
        assert!(idle.load_spec.is_none());
        assert_eq!(idle.limits.default.max_us, Some(500));
        assert_eq!(idle.duration.as_secs(), 2);
        assert!(stress.load_spec.is_some());
        assert_eq!(stress.limits.default.max_us, Some(900));
        assert_eq!(stress.duration.as_secs(), 3);
        // Without conditions, none.
        assert!(parse("").unwrap().conditions.is_empty());
    }

    #[test]
    fn names_and_tests_are_checked_where_written() {
        for (text, line, key) in [
            ("[[condition]]\nname = \"a b\"\n", 2, "condition[0].name"),
            (
                "[[condition]]\nname = \"a\"\n[[condition]]\nname = \"a\"\n",
                4,
                "condition[1].name",
            ),
            (
                "[[condition]]\nname = \"a\"\ntests = [\"pmq\"]\n",
                3,
                "condition[0].tests",
            ),
            (
                "[[condition]]\nname = \"a\"\ntests = [\"x\"]\n",
                3,
                "condition[0].tests",
            ),
            (
                "[[condition]]\nname = \"a\"\nduration = \"0s\"\n",
                3,
                "condition[0].duration",
            ),
            (
                "[[condition]]\nname = \"a\"\n[condition.cyclic]\nenabled = false\n",
                2,
                "condition[0].name",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!((e.line(), e.key()), (Some(line), Some(key)), "{text}: {e}");
        }
        let c = parse("[pmq]\n[[condition]]\nname = \"q\"\ntests = [\"pmq\"]\n").unwrap();
        let m = &c.conditions[0].measure;
        assert!(!m.cyclic.enabled && m.pmq.as_ref().is_some_and(|p| p.enabled));
    }
}

//! `[limits]`: the self-test's pass/fail limits.
//!
//! Limits are written in **µs** (and a count for overruns) and judged against **ns**
//! figures by `results::verdict`. A default set applies to every test and CPU;
//! `[limits.<test>]` overrides it for one test and `[[limits.cpus]]` for a CPU set
//! (later rules win). Tests: `cyclic`, `pmq`, `pipe` ([`TESTS`]); a pair test's figures
//! are per pair, on the CPU the pair is pinned to.

use super::selftest::cpus_key;
use super::Source;
use crate::cpuset::CpuSet;
use crate::error::ConfigError;
use crate::sys::cpus::CpuTopology;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Spanned;

/// Largest latency limit, **µs**: its value in ns (as the verdict compares it) fits in
/// 64 bits. A larger one is a configuration error, not a limit that saturates.
pub const MAX_LIMIT_US: u64 = u64::MAX / 1000;

/// A latency limit in µs of at most [`MAX_LIMIT_US`] (serde `deserialize_with`; the
/// TOML parser's error then names the line and the key).
fn limit_us<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    use serde::de::Error;
    let v = u64::deserialize(d)?;
    if v > MAX_LIMIT_US {
        return Err(D::Error::invalid_value(
            serde::de::Unexpected::Unsigned(v),
            &"a latency limit of at most 18446744073709551 µs (2^64 - 1 ns)",
        ));
    }
    Ok(Some(v))
}

/// One set of limits; every field optional. Latencies in **µs**.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Largest allowed sample.
    #[serde(default, deserialize_with = "limit_us")]
    pub max_us: Option<u64>,
    /// Largest allowed mean.
    #[serde(default, deserialize_with = "limit_us")]
    pub avg_us: Option<u64>,
    /// Largest allowed 99th percentile.
    #[serde(default, deserialize_with = "limit_us")]
    pub p99_us: Option<u64>,
    /// Largest allowed 99.9th percentile.
    #[serde(default, deserialize_with = "limit_us")]
    pub p999_us: Option<u64>,
    /// Largest allowed 99.99th percentile.
    #[serde(default, deserialize_with = "limit_us")]
    pub p9999_us: Option<u64>,
    /// Largest allowed 99.999th percentile (NI's busy-poll limits).
    #[serde(default, deserialize_with = "limit_us")]
    pub p99999_us: Option<u64>,
    /// Largest allowed 99.9999th percentile.
    #[serde(default, deserialize_with = "limit_us")]
    pub p999999_us: Option<u64>,
    /// Largest allowed number of overruns (late wakeups past the next deadline).
    pub overruns: Option<u64>,
}

impl Limits {
    /// `other`'s set fields replace ours.
    pub fn overlay(&self, other: &Limits) -> Limits {
        Limits {
            max_us: other.max_us.or(self.max_us),
            avg_us: other.avg_us.or(self.avg_us),
            p99_us: other.p99_us.or(self.p99_us),
            p999_us: other.p999_us.or(self.p999_us),
            p9999_us: other.p9999_us.or(self.p9999_us),
            p99999_us: other.p99999_us.or(self.p99999_us),
            p999999_us: other.p999999_us.or(self.p999999_us),
            overruns: other.overruns.or(self.overruns),
        }
    }
}

/// Limits for a CPU set (`[[limits.cpus]]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuLimits {
    /// The CPUs the rule applies to.
    pub cpus: CpuSet,
    /// Optional test name the rule is restricted to.
    pub test: Option<String>,
    /// The limits.
    pub limits: Limits,
}

/// All limits of a configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitSet {
    /// Applies everywhere.
    pub default: Limits,
    /// Per test name.
    pub per_test: BTreeMap<String, Limits>,
    /// Per CPU set, in order.
    pub per_cpus: Vec<CpuLimits>,
}

impl LimitSet {
    /// True when no limit at all is configured (no `[limits]` key anywhere).
    pub fn is_empty(&self) -> bool {
        self.default == Limits::default()
            && self.per_test.values().all(|l| *l == Limits::default())
            && self.per_cpus.iter().all(|r| r.limits == Limits::default())
    }

    /// The limits in force for `test` on `cpu`.
    pub fn effective(&self, test: &str, cpu: Option<usize>) -> Limits {
        let mut l = self.default.clone();
        if let Some(t) = self.per_test.get(test) {
            l = l.overlay(t);
        }
        for r in &self.per_cpus {
            let cpu_ok = cpu.is_some_and(|c| r.cpus.contains(c));
            let test_ok = r.test.as_deref().map_or(true, |t| t == test);
            if cpu_ok && test_ok {
                l = l.overlay(&r.limits);
            }
        }
        l
    }
}

/// The self-test's tests, by the names results, limits and journal entries use.
pub const TESTS: [&str; 4] = ["cyclic", "pmq", "pipe", "poll"];

/// Where a test's threads run, as the configuration says it: what decides whether a
/// `[[limits.cpus]]` rule can apply to it (see [`LimitsToml::resolve`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Measured {
    /// The test does not run: its section (`[pmq]`, `[pipe]`) is not written.
    Absent,
    /// On these CPUs, written in the test's `cpus` key.
    Cpus(CpuSet),
    /// On the default CPUs (every CPU rtbench may run on where it runs: not known
    /// until then, so not checked).
    Default,
    /// `pairs = N`: pairs the scheduler places, on no CPU a rule can name.
    Scheduler,
}

/// Which tests a configuration file runs, and where (see [`LimitsToml::resolve`]).
#[derive(Debug, Clone)]
pub struct Written {
    /// `[cyclic]` (never [`Measured::Absent`]: it runs unless disabled).
    pub cyclic: Measured,
    /// `[pmq]`.
    pub pmq: Measured,
    /// `[pipe]`.
    pub pipe: Measured,
    /// `[poll]`.
    pub poll: Measured,
}

impl Written {
    fn of(&self, test: &str) -> &Measured {
        match test {
            "pmq" => &self.pmq,
            "pipe" => &self.pipe,
            "poll" => &self.poll,
            _ => &self.cyclic,
        }
    }
}

/// `[[limits.cpus]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuLimitsToml {
    cpus: Spanned<String>,
    test: Option<Spanned<String>>,
    #[serde(default, deserialize_with = "limit_us")]
    max_us: Option<u64>,
    #[serde(default, deserialize_with = "limit_us")]
    avg_us: Option<u64>,
    #[serde(default, deserialize_with = "limit_us")]
    p99_us: Option<u64>,
    #[serde(default, deserialize_with = "limit_us")]
    p999_us: Option<u64>,
    #[serde(default, deserialize_with = "limit_us")]
    p9999_us: Option<u64>,
    #[serde(default, deserialize_with = "limit_us")]
    p99999_us: Option<u64>,
    #[serde(default, deserialize_with = "limit_us")]
    p999999_us: Option<u64>,
    overruns: Option<u64>,
}

/// `[limits]` as written: defaults, `[limits.<test>]` and `[[limits.cpus]]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsToml {
    #[serde(default, deserialize_with = "limit_us")]
    max_us: Option<u64>,
    #[serde(default, deserialize_with = "limit_us")]
    avg_us: Option<u64>,
    #[serde(default, deserialize_with = "limit_us")]
    p99_us: Option<u64>,
    #[serde(default, deserialize_with = "limit_us")]
    p999_us: Option<u64>,
    #[serde(default, deserialize_with = "limit_us")]
    p9999_us: Option<u64>,
    #[serde(default, deserialize_with = "limit_us")]
    p99999_us: Option<u64>,
    #[serde(default, deserialize_with = "limit_us")]
    p999999_us: Option<u64>,
    overruns: Option<u64>,
    cyclic: Option<Limits>,
    pmq: Option<Spanned<Limits>>,
    pipe: Option<Spanned<Limits>>,
    poll: Option<Spanned<Limits>>,
    cpus: Vec<CpuLimitsToml>,
}

impl LimitsToml {
    /// The limits as a [`LimitSet`], CPU lists checked. `written` says which pair-test
    /// sections the file has: limits for a test without its section would never be
    /// checked, and a check that silently never runs is worse than an error (a section
    /// with `enabled = false` is a deliberate choice and keeps its limits).
    pub fn resolve(
        &self,
        topo: &CpuTopology,
        src: &Source<'_>,
        written: Written,
    ) -> Result<LimitSet, ConfigError> {
        for (name, l, there) in [
            ("pmq", &self.pmq, &written.pmq),
            ("pipe", &self.pipe, &written.pipe),
            ("poll", &self.poll, &written.poll),
        ] {
            if let (Some(l), Measured::Absent) = (l, there) {
                return Err(src.table_error(
                    l.span(),
                    &format!("limits.{name}"),
                    format!(
                        "the self-test runs no {name} test: expected a [{name}] section \
                         to run it, or no [limits.{name}]"
                    ),
                ));
            }
        }
        let mut per_test = BTreeMap::new();
        if let Some(l) = &self.cyclic {
            per_test.insert("cyclic".to_string(), l.clone());
        }
        for (name, l) in [
            ("pmq", &self.pmq),
            ("pipe", &self.pipe),
            ("poll", &self.poll),
        ] {
            if let Some(l) = l {
                per_test.insert(name.to_string(), l.get_ref().clone());
            }
        }
        let mut per_cpus = Vec::new();
        for (i, c) in self.cpus.iter().enumerate() {
            if let Some(t) = &c.test {
                if !TESTS.contains(&t.get_ref().as_str()) {
                    return Err(src.value_error(
                        t.span(),
                        &format!("limits.cpus[{i}].test"),
                        "expected \"cyclic\", \"pmq\", \"pipe\" or \"poll\" (the self-test's tests)",
                    ));
                }
            }
            let limits = Limits {
                max_us: c.max_us,
                avg_us: c.avg_us,
                p99_us: c.p99_us,
                p999_us: c.p999_us,
                p9999_us: c.p9999_us,
                p99999_us: c.p99999_us,
                p999999_us: c.p999999_us,
                overruns: c.overruns,
            };
            let cpus_name = format!("limits.cpus[{i}].cpus");
            let cpus = cpus_key(src, &c.cpus, &cpus_name, topo)?;
            if limits == Limits::default() {
                return Err(src.value_error(
                    c.cpus.span(),
                    &format!("limits.cpus[{i}]"),
                    "sets no limit: expected at least one of max_us, avg_us, p99_us, \
                     p999_us, p9999_us, p99999_us, p999999_us, overruns",
                ));
            }
            never_applies(src, c, i, &cpus, &written)?;
            per_cpus.push(CpuLimits {
                cpus,
                test: c.test.as_ref().map(|t| t.get_ref().clone()),
                limits,
            });
        }
        Ok(LimitSet {
            default: Limits {
                max_us: self.max_us,
                avg_us: self.avg_us,
                p99_us: self.p99_us,
                p999_us: self.p999_us,
                p9999_us: self.p9999_us,
                p99999_us: self.p99999_us,
                p999999_us: self.p999999_us,
                overruns: self.overruns,
            },
            per_test,
            per_cpus,
        })
    }
}

/// Refuses a `[[limits.cpus]]` rule (number `i`) that could never apply: a rule for a
/// test that does not run, or whose CPUs none of its tests measures — it would judge
/// nothing and read as if it had. CPUs left to the default are only known where the
/// self-test runs, so a rule over them is kept.
fn never_applies(
    src: &Source<'_>,
    c: &CpuLimitsToml,
    i: usize,
    cpus: &CpuSet,
    written: &Written,
) -> Result<(), ConfigError> {
    let tests: Vec<&str> = match &c.test {
        Some(t) => vec![t.get_ref().as_str()],
        None => TESTS.to_vec(),
    };
    if let Some(t) = &c.test {
        let name = t.get_ref();
        match written.of(name) {
            Measured::Absent => {
                return Err(src.value_error(
                    t.span(),
                    &format!("limits.cpus[{i}].test"),
                    format!(
                        "the self-test runs no {name} test: expected a [{name}] section \
                         to run it, or another test"
                    ),
                ));
            }
            Measured::Scheduler => {
                return Err(src.value_error(
                    t.span(),
                    &format!("limits.cpus[{i}].test"),
                    format!(
                        "{name} runs pairs = N, placed by the scheduler on no CPU a rule \
                         can name: expected [limits.{name}], or cpus in [{name}]"
                    ),
                ));
            }
            _ => {}
        }
    }
    let mut measured = Vec::new();
    for t in tests {
        match written.of(t) {
            Measured::Default => return Ok(()),
            Measured::Cpus(set) if !set.intersection(cpus).is_empty() => return Ok(()),
            Measured::Cpus(set) => measured.push(format!("{t} measures {}", set.to_list())),
            Measured::Scheduler => measured.push(format!("{t} runs unpinned pairs")),
            Measured::Absent => {}
        }
    }
    Err(src.value_error(
        c.cpus.span(),
        &format!("limits.cpus[{i}].cpus"),
        format!(
            "no test measures CPU {} ({}): expected CPUs a test measures",
            cpus.to_list(),
            measured.join(", ")
        ),
    ))
}

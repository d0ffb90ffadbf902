//! `[poll]`: the self-test's busy-poll test — rt-tests oslat's measurement, by the code
//! of `rtbench oslat` (`src/measure/poll.rs`): one thread per CPU that never sleeps and
//! records every gap in its loop, the noise an isolated CPU lets through to a polling
//! application (a DPDK-style task, a `nohz_full` control loop).
//!
//! A section that is written runs its test (`enabled = false` keeps it and skips the
//! test). Without `cpus` it polls the isolated CPUs (`isolcpus=` and `nohz_full=`
//! together, those rtbench may run on): a machine with none and no `cpus` is a
//! configuration error, not a test of nothing. `priority` 0 (the default, oslat's) is
//! SCHED_OTHER, 1..99 SCHED_FIFO.

use super::selftest::{cpus_key, duration_key};
use super::Source;
use crate::cpuset::CpuSet;
use crate::error::ConfigError;
use crate::sys::cpus::CpuTopology;
use serde::Deserialize;
use std::time::Duration;
use toml::Spanned;

/// `[poll]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PollToml {
    enabled: Option<bool>,
    cpus: Option<Spanned<String>>,
    priority: Option<Spanned<i32>>,
    duration: Option<Spanned<String>>,
}

/// `[poll]`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PollSection {
    /// Run the test: true when the section is written, unless `enabled = false`.
    pub enabled: bool,
    /// The CPUs polled, one thread each.
    pub cpus: CpuSet,
    /// Whether `cpus` was written (else the isolated CPUs).
    pub cpus_written: bool,
    /// 0: SCHED_OTHER (oslat's default); 1..99: SCHED_FIFO.
    pub priority: i32,
    /// How long this test measures (default: `[selftest] duration`).
    pub duration: Option<Duration>,
}

/// The CPUs `[poll]` polls without `cpus`: the isolated ones (`isolcpus=`,
/// `nohz_full=`) this process may run on.
pub fn default_cpus(topo: &CpuTopology) -> CpuSet {
    topo.isolated
        .union(&topo.nohz_full)
        .intersection(&topo.run_default())
}

impl PollToml {
    /// Validates the section (`span`: the table's, for the error without `cpus`).
    pub fn resolve(
        &self,
        span: std::ops::Range<usize>,
        topo: &CpuTopology,
        src: &Source<'_>,
    ) -> Result<PollSection, ConfigError> {
        let priority = src.in_range(
            &self.priority,
            "poll.priority",
            0..=99,
            0,
            "expected 0 (SCHED_OTHER, oslat's default) or a SCHED_FIFO priority of 1..99",
        )?;
        let cpus = match &self.cpus {
            Some(c) => cpus_key(src, c, "poll.cpus", topo)?,
            None => {
                let c = default_cpus(topo);
                if c.is_empty() && self.enabled != Some(false) {
                    return Err(src.table_error(
                        span,
                        "poll",
                        "this system has no isolated CPU (isolcpus=, nohz_full=) to poll: \
                         expected cpus = \"LIST\" in [poll], or isolated CPUs",
                    ));
                }
                c
            }
        };
        let duration = match &self.duration {
            Some(d) => Some(duration_key(src, d, "poll.duration")?.1),
            None => None,
        };
        Ok(PollSection {
            enabled: self.enabled.unwrap_or(true),
            cpus,
            cpus_written: self.cpus.is_some(),
            priority,
            duration,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::sys::SysRoot;

    #[test]
    fn written_section_runs_on_its_cpus() {
        let root = SysRoot::host();
        let c = parse("", "f", &root).unwrap();
        assert!(c.poll.is_none());
        let c = parse("[poll]\ncpus = \"0\"\nduration = \"2s\"\n", "f", &root).unwrap();
        let p = c.poll.unwrap();
        assert!(p.enabled && p.cpus_written);
        assert_eq!(p.cpus.to_list(), "0");
        assert_eq!(p.priority, 0);
        assert_eq!(p.duration, Some(std::time::Duration::from_secs(2)));
        let e = parse("[poll]\ncpus = \"0\"\npriority = 100\n", "f", &root).unwrap_err();
        assert_eq!((e.line(), e.key()), (Some(3), Some("poll.priority")));
    }

    #[test]
    fn a_condition_polls_with_its_own_section_or_the_top_level_one() {
        let root = SysRoot::host();
        let text = "[poll]\ncpus = \"0\"\n\
                    [[condition]]\nname = \"quiet\"\ntests = [\"poll\"]\n\
                    [[condition]]\nname = \"own\"\n[condition.poll]\ncpus = \"0\"\npriority = 1\n\
                    [condition.cyclic]\nenabled = false\n";
        let c = parse(text, "f", &root).unwrap();
        let quiet = &c.conditions[0].measure;
        assert!(
            !quiet.cyclic.enabled,
            "tests = [\"poll\"] leaves cyclic out"
        );
        assert!(quiet
            .poll
            .as_ref()
            .is_some_and(|p| p.enabled && p.priority == 0));
        let own = &c.conditions[1].measure;
        assert_eq!(own.poll.as_ref().map(|p| p.priority), Some(1));
        let e = parse(
            "[[condition]]\nname = \"x\"\ntests = [\"poll\"]\n",
            "f",
            &root,
        )
        .unwrap_err();
        assert!(e.to_string().contains("no [poll] section"), "{e}");
    }

    #[test]
    fn no_isolated_cpu_and_no_cpus_is_refused_by_name() {
        let topo = crate::sys::cpus::CpuTopology::uniform(4, "");
        let src = crate::config::Source {
            file: "f",
            text: "[poll]\n",
        };
        let e = super::PollToml::default()
            .resolve(0..6, &topo, &src)
            .unwrap_err();
        assert!(e.to_string().contains("no isolated CPU"), "{e}");
        let topo = crate::sys::cpus::CpuTopology::uniform(4, "2-3");
        let p = super::PollToml::default()
            .resolve(0..6, &topo, &src)
            .unwrap();
        assert_eq!(p.cpus.to_list(), "2-3");
    }
}

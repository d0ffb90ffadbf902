//! `[pmq]` and `[pipe]`: the self-test's pair tests — POSIX message-queue latency
//! (rt-tests' pmqtest) and pipe ping-pong task-switch latency (`perf bench sched pipe`)
//! — measured by the same code as `rtbench pmq` and `rtbench pipe`
//! (`src/measure/pair/`).
//!
//! A section that is written runs its test (`enabled = false` keeps it and skips the
//! test); a section that is absent does not. Each pair is a sender and a receiver on
//! the same CPU (pmqtest `-S`), one pair per CPU of `cpus`, or `pairs = N` unpinned
//! pairs (pmqtest `-t N` without `-a`). Every pair runs at the same SCHED_FIFO
//! `priority` and `interval_us`.

use super::selftest::{cpus_key, duration_key, MAX_INTERVAL_US};
use super::Source;
use crate::cpuset::CpuSet;
use crate::error::ConfigError;
use crate::measure::pair::{check_msg_size, PairKind};
use crate::measure::transport::MSG_BYTES;
use crate::sys::cpus::CpuTopology;
use crate::sys::SysRoot;
use serde::Deserialize;
use std::time::Duration;
use toml::Spanned;

/// Default of `[pmq] interval_us`, **µs**: the receiver's delay before each reply
/// (pmqtest's `-i` default).
pub const DEFAULT_PMQ_INTERVAL_US: u64 = 1000;
/// Default of `[pipe] interval_us`, **µs**: the sender's pause between round trips,
/// as pmqtest's `-i` default and `rtbench pipe -i`'s. Not 0 (back to back, `perf
/// bench sched pipe`'s default): a SCHED_FIFO pair that never sleeps holds its CPU, and RT
/// bandwidth control (`sched_rt_runtime_us`, Documentation/scheduler/sched-rt-group.rst;
/// from Linux 6.12 the fair server) stops it for ~50 ms a second once fair tasks wait
/// there — the self-test would measure the throttling, not the task switch.
pub const DEFAULT_PIPE_INTERVAL_US: u64 = 1000;
// `rtbench pipe -i` has the same default (src/cli/pipe.rs).
/// Most pairs of one test (as `rtbench pmq -t`, `plan::MAX_THREADS`).
pub const MAX_PAIRS: usize = 4096;

/// `[pmq]` / `[pipe]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairToml {
    enabled: Option<bool>,
    cpus: Option<Spanned<String>>,
    pairs: Option<Spanned<i64>>,
    interval_us: Option<Spanned<u64>>,
    priority: Option<Spanned<i32>>,
    duration: Option<Spanned<String>>,
    msg_size: Option<Spanned<i64>>,
}

/// Where a pair test's pairs run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairPlacement {
    /// One pair per CPU, sender and receiver pinned to it (pmqtest `-S`).
    Pinned(CpuSet),
    /// `pairs = N`: N pairs the scheduler places (pmqtest `-t N` without `-a`).
    Unpinned(usize),
}

/// `[pmq]` / `[pipe]`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairSection {
    /// pmq or pipe.
    pub kind: PairKind,
    /// Run the test: true when the section is written, unless `enabled = false`.
    pub enabled: bool,
    /// The pairs.
    pub placement: PairPlacement,
    /// pmq: the receiver's delay before it replies; pipe: the sender's pause between
    /// round trips. **µs** (1..1000000), the same for every pair.
    pub interval_us: u64,
    /// SCHED_FIFO priority 1..99 of both ends of every pair.
    pub priority: i32,
    /// How long this test measures (default: `[selftest] duration`).
    pub duration: Option<Duration>,
    /// Message size, **bytes** (default 32, pmqtest's): the first 32 carry the stamps,
    /// the rest is padding. pipe: 32..=`PIPE_BUF` (4096, pipe(7)); pmq:
    /// 32..=`/proc/sys/fs/mqueue/msgsize_max` (mq_overview(7)) of the measured system.
    pub msg_size: usize,
}

impl PairToml {
    /// Whether the section writes its `cpus` key.
    pub fn cpus_written(&self) -> bool {
        self.cpus.is_some()
    }

    /// Validates the section named `kind` (`pmq` or `pipe`); `root` gives pmq's
    /// message-size limit.
    pub fn resolve(
        &self,
        kind: PairKind,
        topo: &CpuTopology,
        root: &SysRoot,
        src: &Source<'_>,
    ) -> Result<PairSection, ConfigError> {
        let name = kind_name(kind);
        let key = |k: &str| format!("{name}.{k}");
        let (default, zero) = match kind {
            PairKind::Pmq => (DEFAULT_PMQ_INTERVAL_US, ""),
            // See DEFAULT_PIPE_INTERVAL_US: back to back measures RT throttling.
            PairKind::Pipe => (
                DEFAULT_PIPE_INTERVAL_US,
                " (not 0: back to back at SCHED_FIFO, 100 % of the CPU, RT throttling \
                 stalls the pair ~50 ms a second)",
            ),
        };
        let interval_us = src.in_range(
            &self.interval_us,
            &key("interval_us"),
            1..=MAX_INTERVAL_US,
            default,
            format!("expected 1..{MAX_INTERVAL_US} µs{zero}"),
        )?;
        let priority = src.in_range(
            &self.priority,
            &key("priority"),
            1..=99,
            crate::measure::DEFAULT_RT_PRIORITY,
            "expected a SCHED_FIFO priority of 1..99",
        )?;
        let placement = match (&self.cpus, &self.pairs) {
            (Some(_), Some(p)) => {
                return Err(src.value_error(
                    p.span(),
                    &key("pairs"),
                    "expected either cpus (one pinned pair per CPU) or pairs (unpinned), not both",
                ));
            }
            (Some(c), None) => PairPlacement::Pinned(cpus_key(src, c, &key("cpus"), topo)?),
            (None, Some(p)) => match usize::try_from(*p.get_ref()) {
                Ok(n) if (1..=MAX_PAIRS).contains(&n) => PairPlacement::Unpinned(n),
                _ => {
                    return Err(src.value_error(
                        p.span(),
                        &key("pairs"),
                        format!("expected a number of pairs of 1..{MAX_PAIRS}"),
                    ));
                }
            },
            (None, None) => PairPlacement::Pinned(topo.run_default()),
        };
        let duration = match &self.duration {
            Some(d) => Some(duration_key(src, d, &key("duration"))?.1),
            None => None,
        };
        let msg_size = match &self.msg_size {
            Some(v) => check_msg_size(kind, *v.get_ref(), root)
                .map_err(|why| src.value_error(v.span(), &key("msg_size"), why))?,
            None => MSG_BYTES,
        };
        Ok(PairSection {
            kind,
            enabled: self.enabled.unwrap_or(true),
            placement,
            interval_us,
            priority,
            duration,
            msg_size,
        })
    }
}

impl PairSection {
    /// The number of pairs (each is two threads, sender and receiver).
    pub fn pairs(&self) -> usize {
        match &self.placement {
            PairPlacement::Pinned(cpus) => cpus.len(),
            PairPlacement::Unpinned(n) => *n,
        }
    }

    /// The name of the test: `pmq` or `pipe`.
    pub fn name(&self) -> &'static str {
        kind_name(self.kind)
    }
}

/// `pmq` or `pipe`: the section's name, the test's name in results and journal entries.
pub fn kind_name(kind: PairKind) -> &'static str {
    match kind {
        PairKind::Pmq => "pmq",
        PairKind::Pipe => "pipe",
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::error::ConfigPlace;
    use crate::sys::SysRoot;

    #[test]
    fn sections_run_when_written_and_not_otherwise() {
        let root = SysRoot::host();
        let c = parse("", "f", &root).unwrap();
        assert!(c.pmq.is_none() && c.pipe.is_none());
        assert!(c.cyclic.enabled);
        let c = parse(
            "[pmq]\ncpus = \"0\"\npriority = 80\n[pipe]\nenabled = false\n[cyclic]\nenabled = false\n",
            "f",
            &root,
        )
        .unwrap();
        let pmq = c.pmq.unwrap();
        assert!(pmq.enabled);
        assert_eq!(pmq.interval_us, 1000);
        assert_eq!(pmq.priority, 80);
        assert_eq!(
            pmq.placement,
            super::PairPlacement::Pinned([0].into_iter().collect())
        );
        assert!(!c.pipe.unwrap().enabled);
        assert!(!c.cyclic.enabled);
        let c = parse("[pipe]\npairs = 2\nduration = \"2s\"\n", "f", &root).unwrap();
        let pipe = c.pipe.unwrap();
        assert_eq!(pipe.placement, super::PairPlacement::Unpinned(2));
        assert_eq!(pipe.interval_us, 1000);
        assert_eq!(pipe.duration, Some(std::time::Duration::from_secs(2)));
        assert_eq!(pipe.msg_size, 32);
        let c = parse(
            "[pmq]\nmsg_size = 256\n[pipe]\nmsg_size = 4096\n",
            "f",
            &root,
        )
        .unwrap();
        assert_eq!(
            (c.pmq.unwrap().msg_size, c.pipe.unwrap().msg_size),
            (256, 4096)
        );
    }

    #[test]
    fn bad_values_name_file_line_key_and_value() {
        let root = SysRoot::host();
        for (text, key, value) in [
            ("[pmq]\ninterval_us = 0\n", "pmq.interval_us", "0"),
            ("[pipe]\ninterval_us = 0\n", "pipe.interval_us", "0"),
            ("[pipe]\npriority = 100\n", "pipe.priority", "100"),
            ("[pmq]\npairs = 0\n", "pmq.pairs", "0"),
            ("[pipe]\npairs = -1\n", "pipe.pairs", "-1"),
            ("[pmq]\ncpus = \"0\"\npairs = 1\n", "pmq.pairs", "1"),
            ("[pmq]\ncpus = \"x\"\n", "pmq.cpus", "\"x\""),
            ("[pipe]\nduration = \"0s\"\n", "pipe.duration", "\"0s\""),
            ("[pipe]\nmsg_size = 4097\n", "pipe.msg_size", "4097"),
            ("[pmq]\nmsg_size = 31\n", "pmq.msg_size", "31"),
            ("[pmq]\nmsg_size = -1\n", "pmq.msg_size", "-1"),
        ] {
            let e = parse(text, "f", &root).unwrap_err();
            let line = text
                .lines()
                .position(|l| l.starts_with(key.split('.').nth(1).unwrap()));
            assert_eq!(e.line(), line.map(|l| l + 1), "{text:?}: {e}");
            assert_eq!(e.key(), Some(key), "{text:?}: {e}");
            match &e.place {
                ConfigPlace::Value { value: v, .. } => assert_eq!(v, value, "{text:?}"),
                p => panic!("{text:?}: {p:?}"),
            }
            assert!(!e.to_string().contains('\n'), "{e}");
        }
        let e = parse("[pmq]\nmsgsize = 8\n", "f", &root).unwrap_err();
        assert_eq!((e.line(), e.key()), (Some(2), Some("msgsize")));
        assert!(e.to_string().contains("unknown field `msgsize`"), "{e}");
    }
}

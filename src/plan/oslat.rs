//! `rtbench oslat`: flags → [`OslatPlan`], with rt-tests oslat's ranges
//! (`parse_options` in `src/oslat/oslat.c`): `-b` 4..1024 (oslat 2.4 refuses 4
//! itself, `bucket_size <= 4`; rtbench takes 4 as its help says), `-f` 1..99, `-T` ≥ 1,
//! `-w no|memmove`, `-m` with a K/M/G suffix.

use super::{check_output_path, check_stdout, parse_cpus, usage};
use crate::cli::oslat::OslatArgs;
use crate::cpuset::CpuSet;
use crate::error::Result;
use crate::explain::explainer::ExplainSpec;
use crate::explain::SpikeKind;
use crate::measure::poll::{BucketSetting, PollSpec};
use crate::measure::{RunControl, ThreadSpec};
use crate::report::oslat::Header;
use crate::sys::clock::NS_PER_US;
use crate::sys::cpus::CpuTopology;
use crate::sys::sched::Policy;
use std::path::PathBuf;
use std::time::Duration;

/// oslat's default number of buckets.
pub const DEFAULT_BUCKETS: usize = crate::measure::poll::DEFAULT_BUCKETS;
/// oslat's default workload memory per thread and buffer, bytes (16 KiB).
pub const DEFAULT_WORKLOAD_BYTES: usize = 16 << 10;
/// Largest `-m`, bytes (1 GiB per buffer: two per thread, all locked).
pub const MAX_WORKLOAD_BYTES: u64 = 1 << 30;
/// oslat's pre-heat.
pub const PREHEAT: Duration = Duration::from_secs(1);

/// A validated `rtbench oslat` invocation.
#[derive(Debug, Clone)]
pub struct OslatPlan {
    /// What to measure.
    pub spec: PollSpec,
    /// The header's facts as oslat prints them.
    pub header: Header,
    /// `-z`.
    pub zero_omit: bool,
    /// `-q`.
    pub quiet: bool,
    /// `--json` target; `-` is standard output.
    pub json: Option<PathBuf>,
    /// `-T` in µs, for oslat's line.
    pub trace_threshold_us: Option<u64>,
    /// `-v`: print the version line only.
    pub version_only: bool,
    /// Called as `oslat`: exit 0 after a signal, as oslat.
    pub as_oslat: bool,
    /// Remarks to print before starting (standard error).
    pub warnings: Vec<String>,
}

/// A number as `strtol(s, NULL, 10)` reads it, refused when there are no digits.
fn strtol(flag: &str, s: &str, what: &str) -> Result<i128> {
    crate::cli::number::leading_integer(s).or_else(|_| usage(flag, s, format!("expected {what}")))
}

/// `-m SIZE`: bytes with an optional K, M or G suffix (any case; powers of 1024), as
/// rt-tests' `parse_mem_string`.
pub fn mem_size(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| "expected a size like 4K or 1M".to_string())?;
    let mult: u64 = match suffix {
        "" | "b" | "B" => 1,
        "k" | "K" => 1 << 10,
        "m" | "M" => 1 << 20,
        "g" | "G" => 1 << 30,
        _ => return Err("expected a size like 4K or 1M (suffix K, M or G)".into()),
    };
    n.checked_mul(mult)
        .filter(|&b| b <= MAX_WORKLOAD_BYTES)
        .ok_or_else(|| format!("expected at most {} MiB", MAX_WORKLOAD_BYTES >> 20))
}

/// `-b` and `-W` → the histogram's buckets: `-b` 4..1024 buckets (oslat's 32 without
/// it), `-W` 1..1000000000 ns wide (1 µs without it). Later rt-tests: ns-wide buckets
/// without `-b` keep the 32 µs range (at most 1024 buckets).
fn bucket_setting(args: &OslatArgs) -> Result<BucketSetting> {
    let count = match &args.bucket_size {
        None => DEFAULT_BUCKETS,
        Some(s) => match strtol("-b", s, "a number of buckets 4..1024")? {
            n @ 4..=1024 => n as usize,
            _ => return usage("-b", s, "expected a number of buckets 4..1024"),
        },
    };
    let width_ns = match &args.bucket_width {
        None => NS_PER_US,
        Some(s) => match strtol("-W", s, "a bucket width in ns >= 1")? {
            n @ 1..=1_000_000_000 => n as u64,
            _ => return usage("-W", s, "expected a bucket width of 1..1000000000 ns"),
        },
    };
    let count = match (&args.bucket_size, width_ns < NS_PER_US) {
        (None, true) => (DEFAULT_BUCKETS * NS_PER_US as usize / width_ns as usize).min(1024),
        _ => count,
    };
    Ok(BucketSetting { count, width_ns })
}

/// `-D` → the run's length in whole seconds (1 without it; a duration under 1 s is
/// refused as zero).
fn runtime_s(args: &OslatArgs) -> Result<u64> {
    Ok(match &args.duration {
        None => 1,
        Some(d) => match crate::duration::parse(d) {
            Ok(v) if v > Duration::ZERO => v.as_secs(),
            Ok(_) => return usage("-D", d, "expected a duration of at least 1 s"),
            Err(e) => return usage("-D", d, e),
        },
    })
}

/// `-f` → the threads' SCHED_FIFO priority 1..99 (0 without it: SCHED_OTHER).
fn rtprio(args: &OslatArgs) -> Result<i32> {
    Ok(match &args.rtprio {
        None => 0,
        Some(s) => match strtol("-f", s, "a SCHED_FIFO priority 1..99")? {
            p @ 1..=99 => p as i32,
            _ => return usage("-f", s, "expected a SCHED_FIFO priority 1..99"),
        },
    })
}

/// `-T` → the trace threshold, µs (1..4000000000), or `None` without it.
fn trace_threshold_us(args: &OslatArgs) -> Result<Option<u64>> {
    Ok(match &args.trace_threshold {
        None => None,
        Some(s) => match strtol("-T", s, "a threshold in µs >= 1")? {
            t @ 1..=4_000_000_000 => Some(t as u64),
            _ => return usage("-T", s, "expected a threshold of 1..4000000000 µs"),
        },
    })
}

/// `-w` and `-m` → the workload's name for the header (`no` or `memmove`) and its
/// memory per buffer, bytes (`-m`, 16 KiB without it; 0 without a workload, though a
/// bad `-m` is refused either way).
fn workload(args: &OslatArgs) -> Result<(&'static str, usize)> {
    let workload = match args.workload.as_deref() {
        None | Some("no") => "no",
        Some("memmove") => "memmove",
        Some(w) => return usage("-w", w, "expected a workload: no or memmove"),
    };
    let mem = match &args.workload_mem {
        None => DEFAULT_WORKLOAD_BYTES as u64,
        Some(s) => mem_size(s).or_else(|e| usage("-m", s, e))?,
    };
    let workload_bytes = if workload == "memmove" {
        mem as usize
    } else {
        0
    };
    Ok((workload, workload_bytes))
}

/// `-C` → the main thread's CPU as a set, or `None` without it; refused unless it is
/// an online CPU this process may use.
fn main_cpu_flag(args: &OslatArgs, topo: &CpuTopology) -> Result<Option<CpuSet>> {
    Ok(match &args.cpu_main_thread {
        None => None,
        Some(s) => {
            let cpu = strtol("-C", s, "a CPU number")?;
            let set = usize::try_from(cpu)
                .ok()
                .and_then(|c| parse_cpus("-C", &c.to_string(), topo).ok());
            match set {
                Some(set) => Some(set),
                None => return usage("-C", s, "expected an online CPU this process may use"),
            }
        }
    })
}

/// Validates `args` against `topo` and builds the run.
pub fn oslat(args: &OslatArgs, topo: &CpuTopology) -> Result<OslatPlan> {
    let buckets = bucket_setting(args)?;
    let runtime_s = runtime_s(args)?;
    let rtprio = rtprio(args)?;
    let trace_us = trace_threshold_us(args)?;
    let (workload, workload_bytes) = workload(args)?;
    let (cpus, cpu_list) = match &args.cpu_list {
        Some(s) => (parse_cpus("-c", s, topo)?, s.clone()),
        None => (topo.run_default(), "all".to_string()),
    };
    let main_cpus = main_cpu_flag(args, topo)?;
    if let Some(p) = &args.json {
        check_output_path("--json", p)?;
    }
    check_stdout()?;
    let explain_ns = super::explain_ns(args.explain, None)?;
    let policy = if rtprio > 0 {
        Policy::Fifo
    } else {
        Policy::Other
    };
    let threads: Vec<ThreadSpec> = cpus
        .iter()
        .enumerate()
        .map(|(index, cpu)| ThreadSpec {
            index,
            cpu: Some(cpu),
            policy,
            priority: rtprio,
            interval_us: 0,
        })
        .collect();
    let mut warnings = Vec::new();
    if rtprio > 0 && cpus.contains(0) {
        // oslat prints this on standard output; rtbench on standard error.
        warnings.push("WARNING: Running SCHED_FIFO workload on CPU 0 may hang the thread".into());
    }
    let main_cpus = main_cpus.or_else(|| {
        let c = topo.companions(Some(&cpus));
        warnings.extend(c.main_shares.map(|s| s.line()));
        c.main
    });
    let main_cpu = main_cpus.as_ref().and_then(CpuSet::first).unwrap_or(0);
    let control = RunControl {
        duration: Some(Duration::from_secs(runtime_s)),
        loops: None,
        mlockall: !args.no_mlockall,
        pm_qos_us: None,
        main_cpus,
        report_every: None,
        // `-T`: a gap of `T` µs as oslat 2.4 counts µs (`ns / 1000 + 1 >= T`).
        break_ns: trace_us.map(|t| (t - 1) * NS_PER_US),
        tracemark: trace_us.is_some(),
        histogram: None,
        explain: explain_ns
            .map(|ns| ExplainSpec::new("oslat", SpikeKind::Poll, vec![ns; threads.len()])),
    };
    Ok(OslatPlan {
        header: Header {
            runtime_s,
            rtprio,
            cpu_list,
            main_cpu,
            workload,
            workload_kib: workload_bytes as u64 / 1024,
            preheat_cores: if args.single_preheat {
                1
            } else {
                threads.len()
            },
        },
        spec: PollSpec {
            threads,
            control,
            buckets,
            bias: args.bias,
            preheat: Some(PREHEAT),
            single_preheat: args.single_preheat,
            workload_bytes,
        },
        zero_omit: args.zero_omit,
        quiet: args.quiet,
        json: args.json.clone(),
        trace_threshold_us: trace_us,
        version_only: args.version,
        as_oslat: args.as_oslat,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn plan(argv: &str) -> Result<OslatPlan> {
        let mut v = vec!["rtbench", "oslat"];
        v.extend(argv.split_whitespace());
        let cli = Cli::try_parse_from(v).unwrap();
        match cli.command {
            Command::Oslat(a) => oslat(&a, &CpuTopology::uniform(4, "2-3")),
            _ => unreachable!(),
        }
    }

    fn err(argv: &str) -> String {
        plan(argv).unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_oslats() {
        let p = plan("").unwrap();
        assert_eq!(p.spec.threads.len(), 4);
        assert_eq!(
            p.spec.buckets,
            BucketSetting {
                count: 32,
                width_ns: 1000
            }
        );
        assert_eq!(p.header.runtime_s, 1);
        assert_eq!(p.header.cpu_list, "all");
        assert_eq!(p.spec.threads[0].policy, Policy::Other);
        assert_eq!(p.spec.workload_bytes, 0);
        let p = plan("-c 2-3 -f 1 -D 2m -w memmove -m 4K -T 20 -b 8 -C 0").unwrap();
        let cpus: Vec<_> = p.spec.threads.iter().map(|t| t.cpu).collect();
        assert_eq!(cpus, vec![Some(2), Some(3)]);
        assert_eq!(
            (p.spec.threads[0].policy, p.spec.threads[0].priority),
            (Policy::Fifo, 1)
        );
        assert_eq!(p.header.runtime_s, 120);
        assert_eq!((p.spec.workload_bytes, p.header.workload_kib), (4096, 4));
        assert_eq!(p.spec.control.break_ns, Some(19_000));
        assert_eq!(p.header.main_cpu, 0);
        let p = plan("-W 250").unwrap();
        assert_eq!(
            p.spec.buckets,
            BucketSetting {
                count: 128,
                width_ns: 250
            }
        );
    }

    #[test]
    fn bad_values_name_the_flag() {
        assert!(err("-b 3").starts_with("-b 3: expected a number of buckets 4..1024"));
        assert!(err("-b 2000").starts_with("-b 2000:"));
        assert!(err("-f 0").starts_with("-f 0:"));
        assert!(err("-f 100").starts_with("-f 100:"));
        assert!(err("-w foo").starts_with("-w foo: expected a workload"));
        assert!(err("-m 4X").starts_with("-m 4X:"));
        assert!(err("-T 0").starts_with("-T 0:"));
        assert!(err("-D 5x").contains("unknown suffix"));
        assert!(err("-c 9").starts_with("-c 9:"));
        assert!(err("-C 9").starts_with("-C 9:"));
        assert!(err("-W 0").starts_with("-W 0:"));
    }

    #[test]
    fn mem_sizes() {
        assert_eq!(mem_size("4K"), Ok(4096));
        assert_eq!(mem_size("1m"), Ok(1 << 20));
        assert_eq!(mem_size("100"), Ok(100));
        assert!(mem_size("2G").is_err());
        assert!(mem_size("k").is_err());
    }
}

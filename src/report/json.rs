//! `--json`: rt-tests' `file_version` 1 layout (every key cyclictest writes, including
//! the `"cmdline:"` and `"rt_test_version:"` typos, but correctly escaped and never
//! `nan`), plus an `"rtbench"` object with percentiles in **ns**, overruns, overflow
//! counts, units and the full system snapshot.

use super::{RunReport, Sink};
use crate::measure::cyclic::ThreadResult;
use crate::measure::harness::{RunEnd, StopCause};
use crate::measure::stats::LatencyStats;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use std::io::{self, Write};

/// Percentiles reported in the `"rtbench"` object: (key, quantile).
pub const PERCENTILES: [(&str, f64); 5] = [
    ("p50_ns", 0.50),
    ("p90_ns", 0.90),
    ("p99_ns", 0.99),
    ("p999_ns", 0.999),
    ("p9999_ns", 0.9999),
];

/// The JSON sink.
pub struct Json;

/// Formats seconds since the epoch as rt-tests does (`strftime("%a, %d %b %Y %T %z")`,
/// local time).
/// Dates that do not fit the C library's `time_t` (32-bit on armv7, after 2038) are
/// formatted in UTC without it.
#[allow(irrefutable_let_patterns)] // try_from cannot fail where time_t is 64-bit
pub fn rfc2822(secs: i64) -> String {
    let Ok(t) = libc::time_t::try_from(secs) else {
        return crate::date::rfc2822_utc(secs);
    };
    // SAFETY: tm and buf are valid for the calls; strftime writes at most buf.len() bytes.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        let mut buf = [0u8; 64];
        let n = libc::strftime(
            buf.as_mut_ptr() as *mut libc::c_char,
            buf.len(),
            b"%a, %d %b %Y %T %z\0".as_ptr() as *const libc::c_char,
            &tm,
        );
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }
}

#[derive(Serialize)]
struct RtSysinfo<'a> {
    sysname: &'a str,
    nodename: &'a str,
    release: &'a str,
    version: &'a str,
    machine: &'a str,
    realtime: u8,
}

/// The part of rt-tests' JSON every tool shares (`rt_write_json()` in
/// `src/lib/rt-utils.c`): file_version 1, the command line and version under their
/// misspelt keys `"cmdline:"` and `"rt_test_version:"`, start/end time, return code and
/// the uname-based sysinfo. Flatten it into a tool's document.
#[derive(Serialize)]
pub struct RtHeader<'a> {
    file_version: u32,
    #[serde(rename = "cmdline:")]
    cmdline: String,
    #[serde(rename = "rt_test_version:")]
    rt_test_version: &'static str,
    start_time: String,
    end_time: String,
    return_code: i32,
    sysinfo: RtSysinfo<'a>,
}

impl<'a> RtHeader<'a> {
    /// The header for a run of `argv` that ended as `end` with `return_code`, on `si`.
    pub fn new(
        argv: &[String],
        end: &RunEnd,
        return_code: i32,
        si: &'a crate::sys::info::SysInfo,
    ) -> Self {
        let (start_s, end_s) = (end.start_wall_s, end.end_wall_s);
        RtHeader {
            file_version: 1,
            cmdline: argv.join(" "),
            rt_test_version: env!("CARGO_PKG_VERSION"),
            start_time: rfc2822(start_s),
            end_time: rfc2822(end_s),
            return_code,
            sysinfo: RtSysinfo {
                sysname: &si.sysname,
                nodename: &si.nodename,
                release: &si.release,
                version: &si.version,
                machine: &si.machine,
                realtime: si.realtime as u8,
            },
        }
    }
}

impl<'a> RtHeader<'a> {
    /// The same header with another `"rt_test_version:"` (oslat's `2.40`).
    pub fn with_version(self, version: &'static str) -> Self {
        RtHeader {
            rt_test_version: version,
            ..self
        }
    }
}

#[derive(Serialize)]
struct Document<'a> {
    #[serde(flatten)]
    header: RtHeader<'a>,
    num_threads: usize,
    resolution_in_ns: u8,
    thread: Threads<'a>,
    rtbench: Extension<'a>,
}

/// rt-tests' `"thread": {"0": {...}, "1": {...}}`, keys in thread order.
struct Threads<'a> {
    threads: &'a [ThreadResult],
    unit_ns: u64,
}

/// One thread as rt-tests 2.4 writes it: `"histogram"` is always there, `{}` without
/// `-h` (2.7+ leaves it out then; callers written for 2.4 look it up).
#[derive(Serialize)]
struct RtThread<'a> {
    histogram: Buckets<'a>,
    cycles: u64,
    min: u64,
    max: u64,
    avg: f64,
    cpu: i64,
    node: i64,
}

/// Non-zero buckets as `{"<bucket>": count}`.
struct Buckets<'a>(&'a [u64]);

impl Serialize for Buckets<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for (i, &c) in self.0.iter().enumerate() {
            if c != 0 {
                m.serialize_entry(&i.to_string(), &c)?;
            }
        }
        m.end()
    }
}

impl Serialize for Threads<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.threads.len()))?;
        for t in self.threads {
            let st = &t.stats;
            let avg = (st.mean_ns() / self.unit_ns as f64 * 100.0).round() / 100.0;
            m.serialize_entry(
                &t.spec.index.to_string(),
                &RtThread {
                    histogram: Buckets(st.linear.as_ref().map_or(&[], |l| &l.buckets)),
                    cycles: st.count,
                    min: st.min() / self.unit_ns,
                    max: st.max_ns / self.unit_ns,
                    avg,
                    cpu: t.spec.cpu.map_or(-1, |c| c as i64),
                    node: -1,
                },
            )?;
        }
        m.end()
    }
}

/// The `"units"` object of every `"rtbench"` extension: rtbench's own fields are ns
/// (latency) and µs (interval); the rt-tests fields follow `-N`.
#[derive(Serialize)]
pub struct Units {
    latency: &'static str,
    interval: &'static str,
    rt_tests_fields: &'static str,
}

impl Units {
    /// Units of a run printed in ns (`-N`) or µs.
    pub fn new(nsecs: bool) -> Units {
        Units {
            latency: "ns",
            interval: "us",
            rt_tests_fields: if nsecs { "ns" } else { "us" },
        }
    }
}

/// Writes the latency figures every `"rtbench"` object carries for one series:
/// `count`, `min_ns`, `avg_ns`, `max_ns` and the [`PERCENTILES`].
pub fn latency_entries<M: SerializeMap>(m: &mut M, st: &LatencyStats) -> Result<(), M::Error> {
    m.serialize_entry("count", &st.count)?;
    m.serialize_entry("min_ns", &st.min())?;
    m.serialize_entry("avg_ns", &(st.mean_ns().round() as u64))?;
    m.serialize_entry("max_ns", &st.max_ns)?;
    for (k, q) in PERCENTILES {
        m.serialize_entry(k, &st.quantile_ns(q))?;
    }
    Ok(())
}

/// How the run ended, in every `"rtbench"` object: `stop`, `interrupted` and
/// `pm_qos_us` (**µs**).
#[derive(Serialize)]
pub struct Ended {
    stop: StopCause,
    interrupted: bool,
    pm_qos_us: Option<i32>,
}

impl Ended {
    /// The fields of `end`.
    pub fn of(end: &RunEnd) -> Ended {
        Ended {
            stop: end.stop,
            interrupted: end.stop.interrupted(),
            pm_qos_us: end.pm_qos_us,
        }
    }
}

#[derive(Serialize)]
struct Extension<'a> {
    version: &'static str,
    test: &'static str,
    units: Units,
    #[serde(flatten)]
    ended: Ended,
    load: Option<&'a crate::load::LoadInfo>,
    #[serde(rename = "break")]
    break_info: Option<crate::measure::breaktrace::BreakInfo>,
    sysinfo: &'a crate::sys::info::SysInfo,
    threads: Vec<ExtThread<'a>>,
    /// `--explain`/`-b`: the explained samples (**ns**), their counts by cause.
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<&'a crate::explain::explainer::ExplainSummary>,
}

struct ExtThread<'a> {
    t: &'a ThreadResult,
}

impl Serialize for ExtThread<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.t;
        let st = &t.stats;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("thread", &t.spec.index)?;
        m.serialize_entry("tid", &t.tid)?;
        m.serialize_entry("cpu", &t.spec.cpu)?;
        m.serialize_entry("policy", &t.spec.policy)?;
        m.serialize_entry("priority", &t.spec.priority)?;
        m.serialize_entry("interval_us", &t.spec.interval_us)?;
        latency_entries(&mut m, st)?;
        m.serialize_entry("overruns", &st.overruns)?;
        m.serialize_entry("missed_periods", &st.missed_periods)?;
        if let Some(l) = &st.linear {
            m.serialize_entry("histogram_bucket_ns", &l.bucket_ns)?;
            m.serialize_entry("histogram_overflows", &l.overflows)?;
            m.serialize_entry("histogram_overflow_cycles", &l.overflow_cycles)?;
        }
        m.end()
    }
}

impl Sink<RunReport<'_>> for Json {
    fn write(&self, r: &RunReport<'_>, out: &mut dyn Write) -> io::Result<()> {
        let res = r.result;
        let si = r.sysinfo;
        let doc = Document {
            header: RtHeader::new(r.argv, &res.end, r.exit_code, si),
            num_threads: res.threads.len(),
            resolution_in_ns: r.nsecs as u8,
            thread: Threads {
                threads: &res.threads,
                unit_ns: r.unit_ns(),
            },
            rtbench: Extension {
                version: env!("CARGO_PKG_VERSION"),
                test: "cyclic",
                units: Units::new(r.nsecs),
                ended: Ended::of(&res.end),
                load: r.load,
                break_info: res.end.break_info,
                sysinfo: si,
                threads: res.threads.iter().map(|t| ExtThread { t }).collect(),
                explain: res.end.explained.as_ref(),
            },
        };
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc2822_shape() {
        let s = rfc2822(0);
        // e.g. "Thu, 01 Jan 1970 00:00:00 +0000"
        assert_eq!(s.len(), 31, "{s}");
        assert!(s.contains(" 1970 ") || s.contains(" 1969 "));
    }
}

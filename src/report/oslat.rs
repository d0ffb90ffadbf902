//! rt-tests oslat 2.4's output (`dump_globals`, `write_summary`, `write_summary_json`
//! in `src/oslat/oslat.c`): the header, the per-CPU table with its histogram, and the
//! JSON; plus rtbench's own lines (counter, percentiles) for standard error and the
//! `"rtbench"` object of the JSON. Figures come from a [`PollResult`] in **ns** and are
//! printed as oslat prints them: a latency of `ns` is `ns / 1000 + 1` whole µs
//! (oslat 2.4 counts the started µs), or with ns-wide buckets (`-W`) µs with three
//! decimals.

use super::json::{Ended, RtHeader};
use super::Sink;
use crate::measure::poll::{PollResult, PollThreadResult};
use crate::sys::clock::NS_PER_US;
use crate::sys::info::SysInfo;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use std::io::{self, Write};

/// The version oslat's first line and JSON carry: the rt-tests release whose output
/// rtbench writes.
pub const OSLAT_VERSION: &str = "2.40";

/// Percentiles of rtbench's own lines and JSON: (label, key, quantile).
pub const NINES: [(&str, &str, f64); 4] = [
    ("P99.99", "p9999_ns", 0.9999),
    ("P99.999", "p99999_ns", 0.99999),
    ("P99.9999", "p999999_ns", 0.999999),
    ("P99", "p99_ns", 0.99),
];

/// What oslat's header says (`dump_globals`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// `-D` in whole seconds.
    pub runtime_s: u64,
    /// `-f`, 0 for SCHED_OTHER (`default`).
    pub rtprio: i32,
    /// `-c` as written, else `all`.
    pub cpu_list: String,
    /// The main thread's CPU (the first of its set).
    pub main_cpu: usize,
    /// `no` or `memmove`.
    pub workload: &'static str,
    /// Workload memory, KiB (0 without a workload).
    pub workload_kib: u64,
    /// Threads that pre-heat.
    pub preheat_cores: usize,
}

/// `oslat V 2.40`, then without `-q` the header and `Pre-heat for 1 seconds...`
/// (what oslat prints before it measures).
pub struct Start {
    /// `-q`.
    pub quiet: bool,
}

impl Sink<Header> for Start {
    fn write(&self, h: &Header, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "oslat V {OSLAT_VERSION}")?;
        if self.quiet {
            return Ok(());
        }
        writeln!(out, "Total runtime: \t\t{} seconds", h.runtime_s)?;
        if h.rtprio > 0 {
            writeln!(out, "Thread priority: \tSCHED_FIFO:{}", h.rtprio)?;
        } else {
            writeln!(out, "Thread priority: \tdefault")?;
        }
        writeln!(out, "CPU list: \t\t{}", crate::error::echo(&h.cpu_list))?;
        writeln!(out, "CPU for main thread: \t{}", h.main_cpu)?;
        writeln!(out, "Workload: \t\t{}", h.workload)?;
        writeln!(out, "Workload mem: \t\t{} (KiB)", h.workload_kib)?;
        writeln!(out, "Preheat cores: \t\t{}", h.preheat_cores)?;
        writeln!(out)?;
        writeln!(out, "Pre-heat for 1 seconds...")
    }
}

/// Everything oslat prints after the pre-heat: the bias line (`-B`), `Test starts...`
/// and `Test completed.` (without `-q`), then the table.
pub struct Summary {
    /// `-q`.
    pub quiet: bool,
    /// `-B`.
    pub bias: bool,
    /// `-z`.
    pub zero_omit: bool,
}

/// oslat's latency of a gap of `ns`: the started µs (`ns / 1000 + 1`).
pub fn oslat_us(ns: u64) -> u64 {
    ns / NS_PER_US + 1
}

/// A bucket's label or a latency as oslat prints it: whole µs, or µs with three
/// decimals when the buckets are ns wide.
fn lat(ns: u64, ns_precision: bool) -> String {
    if ns_precision {
        format!("{:.3}", ns as f64 / NS_PER_US as f64)
    } else {
        (ns / NS_PER_US).to_string()
    }
}

/// One line of the table: the label right-aligned in 12 columns, a colon, a tab, one
/// value per thread each after a space, the unit (`putfield`).
fn field(
    out: &mut dyn Write,
    label: &str,
    t: &[PollThreadResult],
    value: impl Fn(&PollThreadResult) -> String,
    end: &str,
) -> io::Result<()> {
    write!(out, "{label:>12}:\t")?;
    for x in t {
        write!(out, " {}", value(x))?;
    }
    writeln!(out, "{end}")
}

impl Sink<PollResult> for Summary {
    fn write(&self, r: &PollResult, out: &mut dyn Write) -> io::Result<()> {
        let t = &r.threads;
        let nsp = t
            .first()
            .is_some_and(|x| x.buckets.width_ns % NS_PER_US != 0);
        if self.bias {
            writeln!(out, "Global bias set to {} (us)", lat(r.bias_ns, nsp))?;
        }
        if !self.quiet {
            writeln!(out, "Test starts...")?;
            writeln!(out, "Test completed.")?;
            writeln!(out)?;
        }
        let mhz = r.counter.mhz();
        field(out, "Core", t, |x| x.spec.cpu.unwrap_or(0).to_string(), "")?;
        field(out, "Counter Freq", t, |_| mhz.to_string(), " (Mhz)")?;
        let n = t.first().map_or(0, |x| x.buckets.counts.len());
        let mut omitted = false;
        for j in 0..n {
            if self.zero_omit && j + 1 < n && t.iter().all(|x| x.buckets.counts[j] == 0) {
                omitted = true;
                continue;
            }
            if omitted {
                writeln!(out, "    ...")?;
                omitted = false;
            }
            let label = match nsp {
                true => format!("{} (us)", lat(t[0].buckets.label_ns(j), true)),
                false => format!("{:03} (us)", t[0].buckets.label_ns(j) / NS_PER_US),
            };
            let end = if j + 1 == n {
                " (including overflows)"
            } else {
                ""
            };
            field(out, &label, t, |x| x.buckets.counts[j].to_string(), end)?;
        }
        let min = |x: &PollThreadResult| min_max(x, nsp).0;
        let max = |x: &PollThreadResult| min_max(x, nsp).1;
        field(out, "Minimum", t, |x| show(min(x), nsp), " (us)")?;
        let avg = |x: &PollThreadResult| x.buckets.average_ns() / NS_PER_US as f64;
        field(out, "Average", t, |x| format!("{:.3}", avg(x)), " (us)")?;
        field(out, "Maximum", t, |x| show(max(x), nsp), " (us)")?;
        field(out, "Max-Min", t, |x| show(max(x) - min(x), nsp), " (us)")?;
        let secs = |x: &PollThreadResult| x.runtime_ns as f64 / 1e9;
        field(out, "Duration", t, |x| format!("{:.3}", secs(x)), " (sec)")?;
        writeln!(out)
    }
}

/// A thread's minimum and maximum in oslat's unit: whole started µs, or ns with
/// ns-wide buckets.
fn min_max(x: &PollThreadResult, ns_precision: bool) -> (u64, u64) {
    let (min, max) = (x.stats.min(), x.stats.max_ns);
    if ns_precision {
        (min, max)
    } else {
        (oslat_us(min), oslat_us(max))
    }
}

fn show(v: u64, ns_precision: bool) -> String {
    if ns_precision {
        format!("{:.3}", v as f64 / NS_PER_US as f64)
    } else {
        v.to_string()
    }
}

/// rtbench's own lines (standard error): the counter and its resolution, then per CPU
/// the gaps, min in ns and the high nines and max in µs.
pub struct Nines;

impl Sink<PollResult> for Nines {
    fn write(&self, r: &PollResult, out: &mut dyn Write) -> io::Result<()> {
        let c = r.counter;
        writeln!(
            out,
            "# rtbench: counter {} at {:.3} MHz, resolution {:.3} ns",
            c.kind.name(),
            c.hz as f64 / 1e6,
            c.resolution_ns()
        )?;
        for t in &r.threads {
            let st = &t.stats;
            write!(
                out,
                "# rtbench: CPU {} gaps {} min {} ns",
                t.spec.cpu.unwrap_or(0),
                st.count,
                st.min()
            )?;
            for (label, _, q) in NINES.iter().filter(|n| n.0 != "P99") {
                write!(out, " {label} {}", us3(st.quantile_ns(*q)))?;
            }
            writeln!(out, " Max {} (us)", us3(st.max_ns))?;
        }
        Ok(())
    }
}

fn us3(ns: u64) -> String {
    format!("{:.3}", ns as f64 / NS_PER_US as f64)
}

/// The `--json` document: rt-tests' header, `num_threads`, `thread` as oslat 2.4
/// writes it, and the `"rtbench"` object.
pub struct Json<'a> {
    /// The system.
    pub sysinfo: &'a SysInfo,
    /// argv.
    pub argv: &'a [String],
    /// The exit code.
    pub exit_code: i32,
}

/// The threads, and the counter's rate in MHz (`freq`).
struct Threads<'a>(&'a [PollThreadResult], u64);

impl Serialize for Threads<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (i, x) in self.0.iter().enumerate() {
            m.serialize_entry(&i.to_string(), &Thread(x, self.1))?;
        }
        m.end()
    }
}

struct Thread<'a>(&'a PollThreadResult, u64);

/// `{"1": count}` of the non-zero buckets, keyed by label.
struct Histogram<'a>(&'a PollThreadResult, bool);

impl Serialize for Histogram<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let b = &self.0.buckets;
        let mut m = s.serialize_map(None)?;
        for (j, &c) in b.counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            m.serialize_entry(&lat(b.label_ns(j), self.1), &c)?;
        }
        m.end()
    }
}

impl Serialize for Thread<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let x = self.0;
        let nsp = x.buckets.width_ns % NS_PER_US != 0;
        let (min, max) = min_max(x, nsp);
        let avg = (x.buckets.average_ns() / NS_PER_US as f64 * 1e6).round() / 1e6;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("cpu", &x.spec.cpu.unwrap_or(0))?;
        m.serialize_entry("freq", &self.1)?;
        m.serialize_entry("min", &min)?;
        m.serialize_entry("avg", &avg)?;
        m.serialize_entry("max", &max)?;
        m.serialize_entry("duration", &((x.runtime_ns as f64 / 1e6).round() / 1e3))?;
        m.serialize_entry("histogram", &Histogram(x, nsp))?;
        m.end()
    }
}

struct Ext<'a>(&'a PollResult, &'a SysInfo);

impl Serialize for Ext<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("version", crate::VERSION)?;
        m.serialize_entry("test", "oslat")?;
        m.serialize_entry(
            "units",
            &serde_json::json!({"latency": "ns", "rt_tests_fields": "us"}),
        )?;
        let e = Ended::of(&r.end);
        m.serialize_entry("end", &e)?;
        m.serialize_entry("break", &r.end.break_info)?;
        m.serialize_entry(
            "counter",
            &serde_json::json!({
                "kind": r.counter.kind,
                "name": r.counter.kind.name(),
                "hz": r.counter.hz,
                "resolution_ns": r.counter.resolution_ns(),
            }),
        )?;
        m.serialize_entry("bias_ns", &r.bias_ns)?;
        let threads: Vec<serde_json::Value> = r
            .threads
            .iter()
            .map(|t| {
                let st = &t.stats;
                let mut o = serde_json::json!({
                    "thread": t.spec.index,
                    "tid": t.tid,
                    "cpu": t.spec.cpu,
                    "policy": t.spec.policy,
                    "priority": t.spec.priority,
                    "count": st.count,
                    "min_ns": st.min(),
                    "avg_ns": st.mean_ns().round() as u64,
                    "max_ns": st.max_ns,
                    "runtime_ns": t.runtime_ns,
                    "histogram_ns": st.hist.sparse(),
                });
                for (_, key, q) in NINES {
                    o[key] = st.quantile_ns(q).into();
                }
                o
            })
            .collect();
        m.serialize_entry("threads", &threads)?;
        m.serialize_entry("sysinfo", self.1)?;
        if let Some(x) = &r.end.explained {
            m.serialize_entry("explain", x)?;
        }
        m.end()
    }
}

#[derive(Serialize)]
struct Document<'a> {
    #[serde(flatten)]
    header: RtHeader<'a>,
    num_threads: usize,
    thread: Threads<'a>,
    rtbench: Ext<'a>,
}

impl Sink<PollResult> for Json<'_> {
    fn write(&self, r: &PollResult, out: &mut dyn Write) -> io::Result<()> {
        let doc = Document {
            header: RtHeader::new(self.argv, &r.end, self.exit_code, self.sysinfo)
                .with_version(OSLAT_VERSION),
            num_threads: r.threads.len(),
            thread: Threads(&r.threads, r.counter.mhz()),
            rtbench: Ext(r, self.sysinfo),
        };
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)
    }
}

//! `--json` of the pair tests: pmqtest's rt-tests `file_version` 1 keys
//! (`"thread": {"N": {"sender": {cpu, priority, samples, interval}, "receiver": {cpu,
//! priority, timeoutcount, min, avg, max}}}`, rt-tests `src/pmqtest/pmqtest.c`
//! `write_stats`) plus an `"rtbench"` object: per pair and direction count, min, avg,
//! max and percentiles in **ns**, overruns, timeouts, the `-h` buckets, the pipe's
//! round trip and switch time, the load and the system snapshot.

use super::json::{latency_entries, Ended, RtHeader, Units};
use super::{PairReport, Sink};
use crate::load::LoadInfo;
use crate::measure::pair::{PairKind, PairResult};
use crate::measure::stats::LatencyStats;
use crate::sys::info::SysInfo;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use std::io::{self, Write};

#[derive(Serialize)]
struct Document<'a> {
    #[serde(flatten)]
    header: RtHeader<'a>,
    num_threads: usize,
    thread: Threads<'a>,
    rtbench: Extension<'a>,
}

struct Threads<'a> {
    pairs: &'a [PairResult],
    unit: u64,
}

#[derive(Serialize)]
struct Sender {
    cpu: i64,
    priority: i32,
    samples: u64,
    interval: u64,
}

#[derive(Serialize)]
struct Receiver {
    cpu: i64,
    priority: i32,
    timeoutcount: u64,
    min: u64,
    avg: f64,
    max: u64,
}

#[derive(Serialize)]
struct RtPair {
    sender: Sender,
    receiver: Receiver,
}

impl Serialize for Threads<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.pairs.len()))?;
        for p in self.pairs {
            let f = &p.forward;
            m.serialize_entry(
                &p.spec.index.to_string(),
                &RtPair {
                    sender: Sender {
                        cpu: p.sender_cpu,
                        priority: p.spec.priority,
                        samples: f.count,
                        interval: p.spec.interval_us,
                    },
                    receiver: Receiver {
                        cpu: p.receiver_cpu,
                        priority: p.spec.priority,
                        timeoutcount: p.timeouts,
                        min: f.min() / self.unit,
                        avg: (f.mean_ns() / self.unit as f64 * 100.0).round() / 100.0,
                        max: f.max_ns / self.unit,
                    },
                },
            )?;
        }
        m.end()
    }
}

#[derive(Serialize)]
struct Extension<'a> {
    version: &'static str,
    test: PairKind,
    fork: bool,
    /// Message size, **bytes** (`--msg-size`); written only when not the default 32,
    /// so default runs keep their output byte for byte.
    #[serde(skip_serializing_if = "is_default_msg_size")]
    msg_size: usize,
    units: Units,
    #[serde(flatten)]
    ended: Ended,
    #[serde(rename = "break")]
    break_info: Option<crate::measure::breaktrace::BreakInfo>,
    load: Option<&'a LoadInfo>,
    sysinfo: &'a SysInfo,
    pairs: Vec<ExtPair<'a>>,
    /// `--explain`/`-b`: the explained samples (**ns**), their counts by cause.
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<&'a crate::explain::explainer::ExplainSummary>,
}

fn is_default_msg_size(bytes: &usize) -> bool {
    *bytes == crate::measure::transport::MSG_BYTES
}

/// Statistics of one direction in **ns**.
struct ExtStats<'a>(&'a LatencyStats);

impl Serialize for ExtStats<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let st = self.0;
        let mut m = s.serialize_map(None)?;
        latency_entries(&mut m, st)?;
        m.serialize_entry("sum_ns", &(st.sum_ns as u64))?;
        if let Some(l) = &st.linear {
            m.serialize_entry("histogram_bucket_ns", &l.bucket_ns)?;
            m.serialize_entry("histogram_overflows", &l.overflows)?;
            let nz: std::collections::BTreeMap<String, u64> = l
                .buckets
                .iter()
                .enumerate()
                .filter(|(_, &c)| c != 0)
                .map(|(i, &c)| (i.to_string(), c))
                .collect();
            m.serialize_entry("histogram", &nz)?;
        }
        m.end()
    }
}

struct ExtPair<'a>(&'a PairResult);

impl Serialize for ExtPair<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("pair", &p.spec.index)?;
        m.serialize_entry("sender_tid", &p.sender_tid)?;
        m.serialize_entry("receiver_tid", &p.receiver_tid)?;
        m.serialize_entry("cpu", &p.spec.cpu)?;
        m.serialize_entry("policy", &p.spec.policy)?;
        m.serialize_entry("priority", &p.spec.priority)?;
        m.serialize_entry("interval_us", &p.spec.interval_us)?;
        m.serialize_entry("overruns", &p.forward.overruns)?;
        m.serialize_entry("timeouts", &p.timeouts)?;
        m.serialize_entry("latency", &ExtStats(&p.forward))?;
        if let Some(b) = &p.backward {
            m.serialize_entry("latency_back", &ExtStats(b))?;
        }
        if let Some(rt) = &p.round_trip {
            m.serialize_entry("round_trip", &ExtStats(rt))?;
        }
        if let Some(sw) = p.switch_ns() {
            m.serialize_entry("total_ns", &p.total_ns)?;
            m.serialize_entry("switch_mean_ns", &((sw * 10.0).round() / 10.0))?;
        }
        m.end()
    }
}

/// The pair tests' JSON document (pretty, trailing newline).
pub struct PairJson;

impl Sink<PairReport<'_>> for PairJson {
    fn write(&self, r: &PairReport<'_>, out: &mut dyn Write) -> io::Result<()> {
        write_json(r, out)
    }
}

fn write_json(r: &PairReport<'_>, out: &mut dyn Write) -> io::Result<()> {
    let run = r.result;
    let si = r.sysinfo;
    let doc = Document {
        header: RtHeader::new(r.argv, &run.end, r.exit_code, si),
        num_threads: run.pairs.len(),
        thread: Threads {
            pairs: &run.pairs,
            unit: r.unit_ns(),
        },
        rtbench: Extension {
            version: env!("CARGO_PKG_VERSION"),
            test: run.kind,
            fork: run.fork,
            msg_size: run.msg_size,
            units: Units::new(r.nsecs),
            ended: Ended::of(&run.end),
            break_info: run.end.break_info,
            load: r.load,
            sysinfo: si,
            pairs: run.pairs.iter().map(ExtPair).collect(),
            explain: run.end.explained.as_ref(),
        },
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

//! Every output rtbench writes, one format per file behind one trait ([`Sink`]), and
//! one mechanism that decides where the bytes go ([`output::Output`]): human text to
//! standard output (or standard error when standard output carries a document),
//! documents to standard output or to a file written atomically with a fixed mode,
//! journal entries to journald or standard error. A sink never measures and a
//! measurement never formats.
//!
//! Formats: cyclictest's text ([`text`]) and `-h` dump ([`histogram`]), rt-tests JSON
//! ([`json`], [`pair_json`]), pmqtest's text ([`pair_text`]), journal entries
//! ([`journal`]), the Prometheus textfile ([`prometheus`]), `rtbench report`'s table
//! ([`table`]) and the lines around it ([`selection`]), `rtbench tune`'s report ([`tuning`]), the system snapshot
//! ([`sysinfo`]), the cyclic test's SIGUSR2 snapshot file ([`snapshot`]) and any value as JSON ([`PrettyJson`]). What the self-test's results
//! are, the stores that keep them and their rules are in `crate::results`.

#[cfg(feature = "diagnose")]
pub mod bundle;
pub mod conditions;
pub mod explain;
pub mod exposition;
pub mod histogram;
pub mod journal;
pub mod json;
pub mod junit;
pub mod layout;
#[cfg(feature = "monitor")]
pub mod monitor;
pub mod output;
pub mod pair_json;
pub mod pair_text;
pub mod prometheus;
pub mod selection;
pub mod snapshot;
pub mod sysinfo;
pub mod table;
pub mod text;
pub mod tuning;
pub mod xml;

#[cfg(test)]
mod escape_tests;

use crate::load::LoadInfo;
use crate::measure::cyclic::CyclicResult;
use crate::measure::pair::PairRun;
use crate::measure::stats::LiveSnapshot;
use crate::measure::ThreadSpec;
use crate::sys::info::SysInfo;
use std::io::{self, Write};

pub use crate::sys::clock::NS_PER_US;

/// The unit of cyclictest-compatible figures in **ns**: 1 µs, or 1 ns with `-N`.
pub fn unit_ns(nsecs: bool) -> u64 {
    if nsecs {
        1
    } else {
        NS_PER_US
    }
}

/// One output format of a `T`.
pub trait Sink<T: ?Sized> {
    /// Writes `value` in this format to `out`.
    fn write(&self, value: &T, out: &mut dyn Write) -> io::Result<()>;
}

/// Everything a sink may show about one finished measurement `R` (a [`CyclicResult`]
/// or a [`PairRun`]).
#[derive(Debug)]
pub struct Report<'a, R> {
    /// The measurement.
    pub result: &'a R,
    /// The system it ran on.
    pub sysinfo: &'a SysInfo,
    /// The command line as given (argv).
    pub argv: &'a [String],
    /// `-N`: cyclictest-compatible numbers in ns instead of µs.
    pub nsecs: bool,
    /// Process exit code the run ends with (written as `return_code`).
    pub exit_code: i32,
    /// The load that ran beside the measurement, if any.
    pub load: Option<&'a LoadInfo>,
}

impl<R> Clone for Report<'_, R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for Report<'_, R> {}

impl<R> Report<'_, R> {
    /// The unit of cyclictest-compatible figures in **ns** (1000 = µs, 1 with `-N`).
    pub fn unit_ns(&self) -> u64 {
        unit_ns(self.nsecs)
    }

    /// The same report about another result (e.g. a pair run as cyclic columns).
    pub fn with<'b, S>(&self, result: &'b S) -> Report<'b, S>
    where
        Self: 'b,
    {
        Report {
            result,
            sysinfo: self.sysinfo,
            argv: self.argv,
            nsecs: self.nsecs,
            exit_code: self.exit_code,
            load: self.load,
        }
    }
}

/// A cyclic run's report.
pub type RunReport<'a> = Report<'a, CyclicResult>;
/// A pair run's report.
pub type PairReport<'a> = Report<'a, PairRun>;

/// The live figures of a running measurement, for progress lines. Latencies in **ns**.
#[derive(Debug, Clone, Copy)]
pub struct Live<'a> {
    /// The threads (or pairs).
    pub threads: &'a [ThreadSpec],
    /// Their live counters, in the same order.
    pub live: &'a [LiveSnapshot],
    /// `-N`: print ns instead of µs.
    pub nsecs: bool,
}

impl Live<'_> {
    /// The unit of the printed figures in **ns**.
    pub fn unit_ns(&self) -> u64 {
        unit_ns(self.nsecs)
    }
}

/// Any serialisable value as pretty-printed JSON and a newline (`--json` of `sysinfo`,
/// `report` and `tune`).
pub struct PrettyJson;

impl<T: serde::Serialize + ?Sized> Sink<T> for PrettyJson {
    fn write(&self, value: &T, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, value)?;
        writeln!(out)
    }
}

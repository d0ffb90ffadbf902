//! Sinks: each turns a finished run into one output format. A sink never measures
//! and a measurement never formats (one trait, one file per format).

pub mod date;
pub mod histogram;
pub mod journal;
pub mod json;
pub mod pmq;
pub mod pmq_json;
pub mod prometheus;
pub mod store;
pub mod summary;
pub mod table;
pub mod text;
pub mod tuning;

use crate::measure::cyclic::CyclicResult;
use crate::sys::info::SysInfo;
use std::io::{self, Write};

/// Everything a sink may show about one run.
#[derive(Debug, Clone, Copy)]
pub struct RunReport<'a> {
    /// The measurement.
    pub result: &'a CyclicResult,
    /// The system it ran on.
    pub sysinfo: &'a SysInfo,
    /// The command line as given (argv).
    pub argv: &'a [String],
    /// `-N`: cyclictest-compatible numbers in ns instead of µs.
    pub nsecs: bool,
    /// Process exit code the run ends with (written as `return_code`).
    pub exit_code: i32,
    /// The load that ran beside the measurement, if any.
    pub load: Option<&'a crate::load::LoadInfo>,
}

impl RunReport<'_> {
    /// The unit of cyclictest-compatible figures in **ns** (1000 = µs, 1 with `-N`).
    pub fn unit_ns(&self) -> u64 {
        if self.nsecs {
            1
        } else {
            1000
        }
    }
}

/// One output format.
pub trait Sink {
    /// Writes the report to `out`.
    fn write(&self, report: &RunReport<'_>, out: &mut dyn Write) -> io::Result<()>;
}

//! `-b USEC` (cyclictest's break trace): the first sample over the threshold stops the
//! run, stops kernel tracing (`tracing_on` = 0) so the trace ends at the latency, and
//! with `--tracemark` writes a marker into the trace first. Files: the kernel's
//! Documentation/trace/ftrace.rst (`tracing_on`, `trace_marker`).

use super::shared::Shared;
use crate::sys::clock::NS_PER_US;
use crate::sys::SysRoot;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// What `-b` caught: the first thread whose sample exceeded the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct BreakInfo {
    /// Thread (or pair) index.
    pub thread: usize,
    /// Kernel thread id (of a pair's receiver).
    pub tid: i32,
    /// The sample in **ns**.
    pub latency_ns: u64,
}

/// tracefs files `-b` writes: `tracing_on` (to stop the trace) and `trace_marker`.
pub struct BreakTrace {
    /// The threshold in **ns**.
    pub limit_ns: u64,
    tracing_on: Option<File>,
    marker: Option<File>,
    tripped: AtomicBool,
    info: OnceLock<BreakInfo>,
}

impl BreakTrace {
    /// Opens `tracing_on` (and `trace_marker` with `tracemark`) in tracefs below `root`,
    /// where present: `-b` works without tracefs too.
    pub fn open(root: &SysRoot, limit_ns: u64, tracemark: bool) -> BreakTrace {
        let dir = crate::sys::tracefs::find(root, "tracing_on");
        let open = |name: &str| dir.and_then(|d| root.open_rw(&format!("{d}/{name}")).ok());
        BreakTrace {
            limit_ns,
            tracing_on: open("tracing_on"),
            marker: if tracemark {
                open("trace_marker")
            } else {
                None
            },
            tripped: AtomicBool::new(false),
            info: OnceLock::new(),
        }
    }

    /// Called by the thread whose sample crossed the limit; only the first one acts:
    /// writes the marker, stops tracing, ends the run.
    pub fn trip(&self, info: BreakInfo, shared: &Shared) {
        if self.tripped.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(mut m) = self.marker.as_ref() {
            let _ = write!(
                m,
                "hit latency threshold ({} > {})",
                info.latency_ns / NS_PER_US,
                self.limit_ns / NS_PER_US
            );
        }
        if let Some(mut t) = self.tracing_on.as_ref() {
            let _ = t.write_all(b"0");
        }
        let _ = self.info.set(info);
        shared.request_stop();
    }

    /// What the first crossing caught, if any.
    pub fn info(&self) -> Option<BreakInfo> {
        self.info.get().copied()
    }
}

//! `-b USEC` (cyclictest's break trace): the first sample over the threshold stops the
//! run, stops kernel tracing (`tracing_on` = 0) so the trace ends at the latency, and
//! with `--tracemark` writes a marker into the trace first. Files: the kernel's
//! Documentation/trace/ftrace.rst (`tracing_on`, `trace_marker`).

use super::shared::Shared;
use crate::sys::clock::NS_PER_US;
use crate::sys::tracefs::Tracefs;
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
    /// Opens `tracing_on` (and `trace_marker` with `tracemark`) of the tracefs that
    /// rtbench traces in: the one [`Tracefs::open`] finds, or mounts at
    /// `/sys/kernel/tracing` when none is mounted (as the flight recorder does, and as
    /// cyclictest's `-b` mounts debugfs in rt-tests' `src/lib/rt-utils.c`), so that the
    /// break stops the tracing rtbench's own recorder may have started in a tracefs it
    /// mounted. A tracefs without instances (before Linux 3.12) still has `tracing_on`.
    /// Without any (no CONFIG_TRACING, no permission to mount), `-b` stops the run alone.
    pub fn open(root: &SysRoot, limit_ns: u64, tracemark: bool) -> BreakTrace {
        let dir = match Tracefs::open(root) {
            Ok(t) => Some(t.dir),
            Err(_) => crate::sys::tracefs::find(root, "tracing_on").map(|d| root.path(d)),
        };
        let open = |name: &str| {
            dir.as_ref().and_then(|d| {
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(d.join(name))
                    .ok()
            })
        };
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

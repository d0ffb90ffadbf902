//! `rtbench monitor`: long-running, low-overhead latency monitoring for the field.
//!
//! One SCHED_FIFO thread per chosen CPU runs cyclictest's loop
//! ([`crate::measure::monitor`]); every window (default 5 min) the main thread
//! summarises each CPU's window (max, p99, p99.9, overruns, samples), writes one
//! journal entry per CPU (a warning when a `[monitor.limits]` limit is exceeded),
//! appends the window to the window store, updates the Prometheus textfile and adds the
//! window to each CPU's [`history`] (the rolling histogram and the all-time maximum),
//! which is saved in the monitor's directory and survives restarts.

pub mod aggregate;
pub mod history;
pub mod run;

use crate::config::limits::Limits;
use crate::cpuset::CpuSet;
use crate::measure::monitor::MonitorSpec;
use crate::sys::cpus::Sharing;
use std::path::PathBuf;
use std::time::Duration;

/// A validated monitor run: everything [`run::execute`] needs.
#[derive(Debug, Clone)]
pub struct MonitorPlan {
    /// The measuring threads (one per CPU) and the run control.
    pub spec: MonitorSpec,
    /// Length of one window.
    pub window: Duration,
    /// The period the rolling histogram covers.
    pub rolling: Duration,
    /// State file and window store directory.
    pub dir: PathBuf,
    /// Size bound of the window store, **bytes**.
    pub store_bytes: u64,
    /// Prometheus textfile, if any.
    pub prometheus: Option<PathBuf>,
    /// Limits per window (**µs**, overruns a count).
    pub limits: Limits,
    /// The main thread sharing a core with a monitored CPU (a warning entry at start).
    pub sharing: Vec<Sharing>,
}

impl MonitorPlan {
    /// Length of one slot of the rolling histogram in seconds: `rolling /
    /// history::SLOTS`, at least one window.
    pub fn slot_s(&self) -> i64 {
        let slot = self.rolling.as_secs() / history::SLOTS as u64;
        slot.max(self.window.as_secs()).max(1) as i64
    }

    /// The monitored CPUs as a cpu-list.
    pub fn cpus_text(&self) -> String {
        self.spec
            .threads
            .iter()
            .filter_map(|t| t.cpu)
            .collect::<CpuSet>()
            .to_string()
    }

    /// The interval of the threads, **µs**.
    pub fn interval_us(&self) -> u64 {
        self.spec.threads.first().map_or(0, |t| t.interval_us)
    }

    /// The SCHED_FIFO priority of the threads.
    pub fn priority(&self) -> i32 {
        self.spec.threads.first().map_or(0, |t| t.priority)
    }
}

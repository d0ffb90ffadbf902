//! Measurements: per-thread statistics, the cyclic timer-wakeup test, the pair tests
//! (pmq, pipe) and the runner that starts, stops and collects measuring threads.

pub mod cyclic;
pub mod pair;
pub mod runner;
pub mod stats;
pub mod transport;

/// Default priority when a real-time policy is used without `-p` (jitterdebugger's
/// choice: 99 is left to kernel threads such as the watchdog/migration).
pub const DEFAULT_RT_PRIORITY: i32 = 98;

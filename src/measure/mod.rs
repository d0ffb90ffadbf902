//! Measurements: per-thread statistics, the cyclic timer-wakeup test and the runner
//! that starts, stops and collects measuring threads.

pub mod cyclic;
pub mod pair;
pub mod runner;
pub mod stats;
pub mod transport;

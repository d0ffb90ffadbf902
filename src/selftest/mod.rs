//! The boot self-test (DESIGN.md §5): configuration → tuning → READY → measurement
//! under load → verdict → journal, results store, Prometheus → exit code.

pub mod config;
pub mod limits;

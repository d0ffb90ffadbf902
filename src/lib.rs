//! rtbench: real-time Linux latency measurement, tuning and boot self-test.
//!
//! The library owns all logic; `main.rs` only parses the command line, calls
//! [`app::main`] and exits with the code it returns. See DESIGN.md for the data flow:
//! CLI/config → Plan (validated specs) → Tune → Measure → Sinks.

pub mod app;
pub mod app_pair;
pub mod cli;
pub mod cli_pair;
#[cfg(feature = "plot")]
pub mod cli_plot;
pub mod config;
pub mod cpuset;
pub mod duration;
pub mod error;
pub mod load;
pub mod measure;
pub mod plan;
pub mod plan_pair;
#[cfg(feature = "plot")]
pub mod plot;
pub mod report;
pub mod selftest;
pub mod sys;
pub mod tune;

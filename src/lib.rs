//! rtbench: real-time Linux latency measurement, tuning and boot self-test.
//!
//! The library owns all logic; `main.rs` only parses the command line, calls
//! [`app::main`] and exits with the code it returns. See DESIGN.md for the data flow:
//! CLI/config → Plan (validated specs) → Tune → Measure → Sinks.

pub mod app;
pub mod cli;
pub mod config;
pub mod cpuset;
pub mod duration;
pub mod error;
pub mod measure;
pub mod plan;
pub mod report;
pub mod selftest;
pub mod sys;
pub mod tune;

//! rtbench: real-time Linux latency measurement, tuning and boot self-test.
//!
//! The library owns all logic; `main.rs` only calls [`app::main`] and exits with the
//! code it returns. Data flow (docs/ARCHITECTURE.md): command line → [`cli`] (clap) →
//! [`plan`] (validated options; the configuration file through [`config`]) → [`app`]
//! (one file per command) → [`tune`] / [`measure`] / [`load`] → [`report`] (every
//! output format), with [`sys`] the only way to the kernel.

pub mod app;
pub mod cli;
pub mod config;
pub mod cpuset;
pub mod duration;
pub mod error;
pub mod load;
pub mod measure;
pub mod plan;
#[cfg(feature = "plot")]
pub mod plot;
pub mod report;
pub mod selftest;
pub mod sys;
pub mod tune;

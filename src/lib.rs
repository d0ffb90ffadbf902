//! rtbench: real-time Linux latency measurement, tuning and boot self-test.
//!
//! The library owns all logic; `main.rs` only calls [`app::main`] and exits with the
//! code it returns. Data flow (docs/ARCHITECTURE.md, "Data flow" and "Module map"):
//!
//! - command line → [`cli`] (clap) → [`plan`] (validated, typed options; the
//!   configuration file through [`config`]) → [`app`] (one file per command);
//! - [`app`] runs the command: [`tune`] (kernel knobs), [`load`] (load processes),
//!   [`measure`] (the measuring threads, with the [`explain`] flight recorder beside
//!   them), or the flows built on them — [`selftest`] (the boot self-test),
//!   [`monitor`] (the field monitor), [`diagnose`] (the bundle);
//! - what was measured becomes the [`results`] model (per-thread summaries, the verdict
//!   and its causes, the stores, and `results::read`, the readers of stored and foreign
//!   results that [`compare`] and [`plot`] use);
//! - every byte goes out through [`report`] (`report::output::Output` and one sink per
//!   format; [`plot`] draws SVG, [`compare`] renders its comparison as text);
//! - [`sys`] is the only way to the kernel (`/proc`, `/sys`, `/dev`, tracefs, syscalls);
//!   [`cpuset`], [`duration`], [`date`] and [`error`] are the foundation every module
//!   uses.
//!
//! `app` maps the result to the exit code (`error::Error::exit_code`, or the command's
//! own verdict).

/// The source revision this binary was built from: a 12-digit git commit id (with
/// `-dirty` when the checkout had changes), what the packager passed in
/// `RTBENCH_REVISION`, or `unknown` (see `build.rs` for the order of the sources).
pub const REVISION: &str = env!("RTBENCH_REVISION");

/// `rtbench --version`'s text after the name: the package version and the source
/// revision, e.g. `0.1.0 (rev 1a2b3c4d5e6f)`.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (rev ",
    env!("RTBENCH_REVISION"),
    ")"
);

pub mod app;
pub mod cli;
pub mod compare;
pub mod config;
pub mod cpuset;
pub mod date;
#[cfg(feature = "diagnose")]
pub mod diagnose;
pub mod duration;
pub mod error;
pub mod explain;
pub mod load;
pub mod measure;
#[cfg(feature = "monitor")]
pub mod monitor;
pub mod plan;
#[cfg(feature = "plot")]
pub mod plot;
pub mod report;
pub mod results;
pub mod selftest;
pub mod sys;
pub mod tune;

/// The build script's revision lookup, unit-tested here (it runs only in `build.rs`).
#[cfg(test)]
#[path = "../build/revision.rs"]
mod build_revision;

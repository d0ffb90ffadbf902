//! `rtbench selftest` on this machine, its verdict, the persistent outputs (results
//! store, Prometheus textfile, `report`), sd_notify and the diagnostics bundle.
//!
//! One test binary per area (link time is most of a cold `cargo test`); its tests run in
//! parallel threads, eight at a time (.cargo/config.toml): each has its own
//! `common::TempDir`, and what must not overlap takes `common::lock` (docs/TESTING.md).

#[path = "../common/mod.rs"]
mod common;

mod attempts;
mod compare;
mod conditions;
mod config;
mod diagnose;
mod explain;
mod explain_refusals;
mod factory;
mod missed;
mod notify;
mod outcome_props;
mod prometheus;
mod report_sinks;
mod selftest;
mod selftest_tests;
mod tuning_keys;
mod verdict;

//! `rtbench tune` on fake /proc + /sys trees (faults, crashes, IRQ threads, machine
//! shapes) and on this machine.
//!
//! One test binary per area (link time is most of a cold `cargo test`); its tests run in
//! parallel threads, eight at a time (.cargo/config.toml): each has its own
//! `common::TempDir`, and what must not overlap takes `common::lock` (docs/TESTING.md).

#[path = "../common/mod.rs"]
mod common;

mod topology_shapes;
mod tune_crash;
mod tune_faults;
mod tune_host;
mod tune_irq_threads;

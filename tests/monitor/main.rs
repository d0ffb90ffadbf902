//! `rtbench monitor` and `rtbench report --since`, and the monitor's measuring thread.
//!
//! One test binary per area (link time is most of a cold `cargo test`); its tests run in
//! parallel threads, eight at a time (.cargo/config.toml): each has its own
//! `common::TempDir`, and what must not overlap takes `common::lock` (docs/TESTING.md).

#[path = "../common/mod.rs"]
mod common;

mod missed;
mod monitor;
mod monitor_alloc;
mod notify;
mod text;

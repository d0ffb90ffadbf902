//! The measuring commands as a user, a harness or the kernel meets them: `cyclic`, `pmq`,
//! `pipe` and `load` on this machine, compared with rt-tests where they overlap, their
//! refusals, output contracts and plots, and runs inside a cgroup cpuset.
//!
//! One test binary per area (link time is most of a cold `cargo test`); its tests run in
//! parallel threads, eight at a time (.cargo/config.toml): each has its own
//! `common::TempDir`, and what must not overlap takes `common::lock` (docs/TESTING.md).

#[path = "../common/mod.rs"]
mod common;

mod cpuset_cgroup;
mod cyclic_cli;
mod cyclic_compat;
mod every_command;
mod explain;
mod explain_reclaim;
mod harness_compat;
mod isolation;
mod load;
mod output_contract;
mod pair;
mod plot;
mod plot_report;
mod refusals;
mod signals;

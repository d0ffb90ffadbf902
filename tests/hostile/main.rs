//! Odd and hostile input: regression tests on the real binary and property tests of
//! every parser and conversion.
//!
//! One test binary per area (link time is most of a cold `cargo test`); its tests run in
//! parallel threads, eight at a time (.cargo/config.toml): each has its own
//! `common::TempDir`, and what must not overlap takes `common::lock` (docs/TESTING.md).

#[path = "../common/mod.rs"]
mod common;

mod acceptance;
mod hostile_input;
mod hostile_props;
mod kept_files;

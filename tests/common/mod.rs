//! Helpers shared by the integration tests: run the real rtbench binary and Debian's
//! cyclictest, capture their output.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Path of the rtbench binary cargo built for these tests.
pub fn rtbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rtbench"))
}

/// Runs rtbench with `args` (split on white space).
pub fn run(args: &str) -> Output {
    rtbench()
        .args(args.split_whitespace())
        .output()
        .expect("run rtbench")
}

/// Runs Debian's cyclictest with `args`. Panics with an install hint when missing: the
/// comparison tests are the point, so they must not pass silently without it.
pub fn cyclictest(args: &str) -> Output {
    Command::new("cyclictest")
        .args(args.split_whitespace())
        .output()
        .expect("cyclictest (Debian package rt-tests) must be installed: apt-get install rt-tests")
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh temporary directory for one test.
pub fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rtbench-it-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Number of online CPUs (`/sys/devices/system/cpu/online`).
pub fn online_cpus() -> usize {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    rtbench::cpuset::CpuSet::parse_list(&s, 4096).unwrap().len()
}

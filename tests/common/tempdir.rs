//! The one temporary directory of the tests.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A number no other call in this process returns: tests of one binary share a
/// process id, so names built from the pid alone collide.
pub fn unique() -> u64 {
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// A fresh empty directory of one test, removed with everything in it when dropped —
/// at the end of the test and when an assertion fails (tests unwind). Its name holds
/// the tag, the process id and a number unique in the process
/// (`rtbench-it-TAG-PID-N`), so parallel tests and two test runs at once never share
/// one. It dereferences to its [`Path`]: `dir.join("x")`.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new directory in the temporary directory (`$TMPDIR`, else `/tmp`).
    pub fn new(tag: &str) -> TempDir {
        TempDir::new_in(&std::env::temp_dir(), tag)
    }

    /// A new directory in `parent` (e.g. `CARGO_TARGET_TMPDIR`, on the build's file
    /// system, where hard links to the binary can be made).
    pub fn new_in(parent: &Path, tag: &str) -> TempDir {
        let d = parent.join(format!(
            "rtbench-it-{tag}-{}-{}",
            std::process::id(),
            unique()
        ));
        // Left over by a killed run whose pid this process now has.
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("creating {}: {e}", d.display()));
        TempDir(d)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The names in the directory.
    pub fn entries(&self) -> Vec<String> {
        std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TempDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

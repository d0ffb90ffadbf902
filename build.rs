//! Build script: the source revision `rtbench --version` names, in the environment
//! variable `RTBENCH_REVISION` for `env!` (see `src/lib.rs`, `REVISION`).
//!
//! Where the revision comes from, first match wins:
//! 1. `RTBENCH_REVISION` in the build's environment (packagers: the Buildroot package
//!    passes its version, since its download is an archive without `.git`; the Yocto
//!    recipe needs nothing, its git fetcher leaves a checkout of `SRCREV` in `${S}`);
//! 2. the git checkout this crate is the top of (`git rev-parse HEAD`, `-dirty` when
//!    tracked files differ) — only when the repository's top directory *is* this crate,
//!    so a release tarball unpacked inside some other git tree (a Buildroot or Yocto
//!    build directory) never reports that tree's revision;
//! 3. `.cargo_vcs_info.json`, which `cargo package` writes into a crate archive;
//! 4. `.git_archival.txt`, whose `$Format:%H$` placeholder `git archive` fills in
//!    (`export-subst` in `.gitattributes`; GitHub's release tarballs are made that way);
//! 5. otherwise `unknown`.
//!
//! Source: gitattributes(5) `export-subst`, git-rev-parse(1), The Cargo Book
//! ("Build scripts", "cargo package": `.cargo_vcs_info.json`).

use std::path::PathBuf;

#[path = "build/revision.rs"]
mod revision;

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    println!("cargo:rerun-if-env-changed=RTBENCH_REVISION");
    let found = revision::find(&dir, std::env::var("RTBENCH_REVISION").ok().as_deref());
    for p in &found.watch {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    println!("cargo:rustc-env=RTBENCH_REVISION={}", found.revision);
    unwind_tables(&dir);
}

/// Leaves the unwind tables (`.eh_frame`, `.eh_frame_hdr`, `.gcc_except_table`: 270 KB of
/// the 1.77 MB stripped aarch64 binary) out of the release `rtbench` binary on Linux, through
/// the linker script `build/no-unwind-tables.ld` and `--no-eh-frame-hdr` (GNU ld, lld).
/// The release profile has `panic = "abort"`, so no Rust frame is ever unwound; debug and
/// test builds (`PROFILE` = `debug`) unwind and keep them. `RTBENCH_KEEP_UNWIND_TABLES=1`
/// keeps them in a release build too (for gdb/perf DWARF stack walks on the board).
/// The script uses `INSERT`, which GNU ld and lld understand; a linker without linker
/// scripts (mold) needs `RTBENCH_KEEP_UNWIND_TABLES=1`.
/// Source: The Cargo Book, "Build scripts" (`cargo:rustc-link-arg-bins`, `PROFILE`).
fn unwind_tables(dir: &std::path::Path) {
    println!("cargo:rerun-if-env-changed=RTBENCH_KEEP_UNWIND_TABLES");
    let script = dir.join("build").join("no-unwind-tables.ld");
    println!("cargo:rerun-if-changed={}", script.display());
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let keep = std::env::var("RTBENCH_KEEP_UNWIND_TABLES").is_ok_and(|v| !v.is_empty() && v != "0");
    let path = script.to_string_lossy();
    // `-Wl,` splits at commas: a path with one cannot be passed this way.
    if !linux || !release || keep || path.contains(',') {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-Wl,--no-eh-frame-hdr");
    println!("cargo:rustc-link-arg-bins=-Wl,--script={path}");
}

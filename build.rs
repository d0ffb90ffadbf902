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
}

//! Where the source revision comes from (included by `build.rs`, unit-tested from
//! `src/lib.rs`). See `build.rs` for the order.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The revision found and the files whose change must rerun the build script.
pub struct Found {
    /// Printed by `rtbench --version`; `unknown` when no source had one.
    pub revision: String,
    /// Files and directories to watch (`cargo:rerun-if-changed`).
    pub watch: Vec<PathBuf>,
}

/// The revision of the crate in `dir`; `env` is `RTBENCH_REVISION` if set.
pub fn find(dir: &Path, env: Option<&str>) -> Found {
    let mut watch = vec![
        dir.join(".git_archival.txt"),
        dir.join(".cargo_vcs_info.json"),
    ];
    let revision = env
        .and_then(clean)
        .or_else(|| from_git(dir, &mut watch))
        .or_else(|| from_vcs_info(dir))
        .or_else(|| from_archival(dir))
        .unwrap_or_else(|| "unknown".to_string());
    let watch = watch.into_iter().filter_map(watchable).collect();
    Found { revision, watch }
}

/// What to watch for `p`. Cargo reruns a build script on *every* build while a path it
/// watches is missing (`cargo build -v`: "Dirty …: the file … is missing"), which
/// relinks the whole binary each time, so only existing paths are watched: a missing
/// branch file (packed into `packed-refs`, as after a fresh clone) through the nearest
/// existing directory under `refs/`, where the loose file appears at the next commit;
/// any other missing path (`.cargo_vcs_info.json` outside a crate archive, no
/// `packed-refs` yet) not at all — a file that appears later changes `HEAD`, the index
/// or a watched ref too, or the tree it comes with (a tarball) has it from the start.
/// Source: The Cargo Book, "Build scripts", `rerun-if-changed`.
fn watchable(p: PathBuf) -> Option<PathBuf> {
    if p.exists() {
        return Some(p);
    }
    p.ancestors()
        .skip(1)
        .take_while(|a| a.components().any(|c| c.as_os_str() == "refs"))
        .find(|a| a.is_dir())
        .map(Path::to_path_buf)
}

/// A revision is printed on one line: hex digits, tags, `-dirty`; nothing else.
fn clean(s: &str) -> Option<String> {
    let s = s.trim();
    let ok = !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+'));
    ok.then(|| s.to_string())
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn from_git(dir: &Path, watch: &mut Vec<PathBuf>) -> Option<String> {
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    if std::fs::canonicalize(&top).ok()? != std::fs::canonicalize(dir).ok()? {
        return None;
    }
    // Rerun when HEAD moves, a branch is committed to, the index changes, or a source
    // file is edited (for `-dirty`).
    for p in ["src", "Cargo.toml", "Cargo.lock", "build.rs"] {
        watch.push(dir.join(p));
    }
    let mut git_paths = vec!["HEAD".to_string(), "index".into(), "packed-refs".into()];
    git_paths.extend(git(dir, &["symbolic-ref", "-q", "HEAD"]));
    for p in git_paths {
        if let Some(path) = git(dir, &["rev-parse", "--git-path", &p]) {
            watch.push(dir.join(path));
        }
    }
    let head = clean(&git(dir, &["rev-parse", "--short=12", "HEAD"])?)?;
    // --no-optional-locks: a build must not rewrite the index (that would rerun this).
    let dirty = git(
        dir,
        &[
            "--no-optional-locks",
            "status",
            "--porcelain",
            "--untracked-files=no",
        ],
    )
    .is_some_and(|s| !s.is_empty());
    Some(if dirty { format!("{head}-dirty") } else { head })
}

fn from_vcs_info(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    // {"git": {"sha1": "<40 hex>"}, "path_in_vcs": ""}: no JSON parser in a build script.
    let at = text.find("\"sha1\"")?;
    let rest = &text[at + 6..];
    let start = rest.find('"')? + 1;
    let len = rest[start..].find('"')?;
    short(&rest[start..start + len])
}

fn from_archival(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(".git_archival.txt")).ok()?;
    let node = text.lines().find_map(|l| l.strip_prefix("node:"))?.trim();
    // Unsubstituted (a checkout, or a tarball not made by `git archive`).
    if node.contains('$') {
        return None;
    }
    short(node)
}

/// The first 12 hex digits of a full commit id.
fn short(id: &str) -> Option<String> {
    let id = id.trim();
    (id.len() >= 12 && id.chars().all(|c| c.is_ascii_hexdigit())).then(|| id[..12].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rtbench-rev-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn run(dir: &Path, args: &[&str]) {
        let st = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    }

    /// A repository with this crate's `.git_archival.txt` and `.gitattributes`.
    fn repo(tag: &str) -> (PathBuf, String) {
        let d = tmp(tag);
        let src = Path::new(env!("CARGO_MANIFEST_DIR"));
        for f in [".git_archival.txt", ".gitattributes"] {
            std::fs::copy(src.join(f), d.join(f)).unwrap();
        }
        std::fs::write(d.join("a.txt"), "a\n").unwrap();
        run(&d, &["init", "-q", "-b", "main"]);
        run(&d, &["add", "."]);
        run(&d, &["commit", "-q", "-m", "one"]);
        let head = git(&d, &["rev-parse", "HEAD"]).unwrap();
        (d, head)
    }

    #[test]
    fn checkout_gives_its_commit_and_dirty() {
        let (d, head) = repo("checkout");
        let found = find(&d, None);
        assert_eq!(found.revision, head[..12]);
        // A commit moves HEAD's branch: the build script must rerun.
        assert!(
            found.watch.iter().any(|p| p.ends_with("refs/heads/main")),
            "{:?}",
            found.watch
        );
        std::fs::write(d.join("a.txt"), "b\n").unwrap();
        assert_eq!(find(&d, None).revision, format!("{}-dirty", &head[..12]));
        // The packager's value wins.
        assert_eq!(find(&d, Some("v1.2.3")).revision, "v1.2.3");
        // Junk in the variable is not printed.
        assert_eq!(
            find(&d, Some("a b")).revision,
            format!("{}-dirty", &head[..12])
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn every_watched_path_exists_so_cargo_does_not_rebuild_every_time() {
        let (d, head) = repo("packed");
        // As after a fresh clone: the branch lives in packed-refs, no loose file.
        run(&d, &["pack-refs", "--all"]);
        assert!(!d.join(".git/refs/heads/main").exists());
        let found = find(&d, None);
        assert_eq!(found.revision, head[..12]);
        let missing: Vec<_> = found.watch.iter().filter(|p| !p.exists()).collect();
        assert!(missing.is_empty(), "missing watched paths: {missing:?}");
        // The next commit writes refs/heads/main again: its directory is watched.
        assert!(
            found.watch.iter().any(|p| p.ends_with(".git/refs/heads")),
            "{:?}",
            found.watch
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn git_archive_tarball_gives_the_commit_and_an_enclosing_repo_does_not() {
        let (d, head) = repo("archive");
        // A release tarball (git archive applies export-subst) unpacked inside another
        // git repository, as in a Buildroot or Yocto build directory.
        let out = d.join("build/rtbench-1.0");
        std::fs::create_dir_all(&out).unwrap();
        let tar = Command::new("git")
            .arg("-C")
            .arg(&d)
            .args(["archive", "--format=tar", "HEAD"])
            .output()
            .unwrap();
        assert!(tar.status.success());
        let mut child = Command::new("tar")
            .arg("-x")
            .arg("-C")
            .arg(&out)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&tar.stdout).unwrap();
        assert!(child.wait().unwrap().success());
        assert_eq!(find(&out, None).revision, head[..12]);
        // Unsubstituted placeholder (a plain copy of the tree): unknown, not the
        // enclosing repository's commit.
        std::fs::copy(d.join(".git_archival.txt"), out.join(".git_archival.txt")).unwrap();
        assert_eq!(find(&out, None).revision, "unknown");
        // A crate archive made by `cargo package`.
        std::fs::write(
            out.join(".cargo_vcs_info.json"),
            format!(
                "{{\n  \"git\": {{\n    \"sha1\": \"{head}\"\n  }},\n  \"path_in_vcs\": \"\"\n}}"
            ),
        )
        .unwrap();
        assert_eq!(find(&out, None).revision, head[..12]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}

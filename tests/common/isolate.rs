//! The host's rtbench files never reach a test, and no test writes to them.
//!
//! rtbench's default paths are `/etc/rtbench` (the configuration), `/run/rtbench` (the
//! tuning journal, the fallback result) and `/var/lib/rtbench` (the results store, the
//! monitor's directory). A developer with rtbench installed has files there, and two
//! test runs at once would share them. So before `main`, while the process is still
//! single-threaded (`unshare(CLONE_NEWNS)` needs that), every test binary moves into a
//! mount namespace of its own, private from `/` down, where each of these paths is an
//! empty tmpfs: the test process and everything it starts (rtbench, cyclictest, shells)
//! see empty directories, whatever the host holds, and what they write there vanishes
//! with the binary. A path the host does not have is made inside the namespace on an
//! overlay of its parent whose upper layer is a tmpfs: the host's directory is never
//! written. Everything else (`/tmp`, `/proc`, `/sys`, cgroups) is the host's.
//!
//! rtbench's tests run as root (they measure with SCHED_FIFO); without root the
//! namespace cannot be made, and [`ensure`] fails every test that starts a program
//! instead of letting it read the host's files. `tests/cli/isolation.rs` shows the
//! isolation on a host with hostile files in all three places.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The paths every test sees as empty private directories.
pub const HIDDEN: [&str; 3] = ["/etc/rtbench", "/run/rtbench", "/var/lib/rtbench"];

/// Set to `control` or `isolated` by tests/cli/isolation.rs when it runs its test
/// binary again on a host whose [`HIDDEN`] paths hold hostile files (made in a mount
/// namespace of that child, never on the real paths): `control` skips the isolation,
/// to show the hostile files are visible without it.
pub const HOSTILE_HOST: &str = "RTBENCH_IT_HOSTILE_HOST";

/// A distinctive word in each hostile file.
pub const HOSTILE_MARK: &str = "hostile_host_file";

/// How the start went: Ok(true) isolated, Ok(false) deliberately not (`control`).
static STATE: OnceLock<Result<bool, String>> = OnceLock::new();

#[used]
#[link_section = ".init_array"]
static AT_START: extern "C" fn() = at_start;

/// Runs before `main` (an ELF constructor), when no other thread exists yet.
extern "C" fn at_start() {
    let mode = std::env::var(HOSTILE_HOST).ok();
    let state = (|| {
        if mode.is_some() {
            // The child of tests/cli/isolation.rs: first make the hostile host.
            private_namespace()?;
            hostile_host()?;
        }
        if mode.as_deref() == Some("control") {
            return Ok(false);
        }
        private_namespace()?;
        for p in HIDDEN {
            empty_tmpfs(Path::new(p))?;
        }
        Ok(true)
    })();
    let _ = STATE.set(state);
}

/// Fails the test unless the binary runs in its own namespace with [`HIDDEN`] empty
/// (or, for tests/cli/isolation.rs's control run, deliberately does not).
pub fn ensure() {
    match STATE.get() {
        Some(Ok(_)) => {}
        Some(Err(e)) => panic!(
            "the tests run rtbench in a private mount namespace that hides {HIDDEN:?}, \
             which needs root: {e}"
        ),
        None => panic!("the test binary's constructor did not run"),
    }
}

/// Whether this binary hides [`HIDDEN`] (false only in the control run).
pub fn isolated() -> bool {
    matches!(STATE.get(), Some(Ok(true)))
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

fn c(p: &Path) -> CString {
    use std::os::unix::ffi::OsStrExt;
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

fn mount(
    src: &str,
    target: &Path,
    fstype: &str,
    flags: libc::c_ulong,
    data: &str,
) -> Result<(), String> {
    let (s, t, f, d) = (
        CString::new(src).unwrap(),
        c(target),
        CString::new(fstype).unwrap(),
        CString::new(data).unwrap(),
    );
    // SAFETY: valid C strings that outlive the call.
    let r = unsafe { libc::mount(s.as_ptr(), t.as_ptr(), f.as_ptr(), flags, d.as_ptr().cast()) };
    if r == 0 {
        Ok(())
    } else {
        Err(os_err(&format!("mount {fstype} on {}", target.display())))
    }
}

/// A new mount namespace for this process, with every mount private in it (nothing
/// mounted here propagates to the host).
fn private_namespace() -> Result<(), String> {
    // SAFETY: plain system calls; the process has one thread.
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
        return Err(os_err("unshare(CLONE_NEWNS)"));
    }
    let root = CString::new("/").unwrap();
    // SAFETY: as above; null source, type and data are allowed for a propagation change.
    let r = unsafe {
        libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(os_err("making / private"));
    }
    Ok(())
}

/// Makes `dir` exist in this namespace without writing to the host: when the host has
/// no such directory, its parent gets an overlay whose upper layer is a tmpfs (set up
/// in a staging directory that is detached and removed again), and `dir` is made there.
fn exists_privately(dir: &Path) -> Result<(), String> {
    if dir.is_dir() {
        return Ok(());
    }
    let parent = dir.parent().ok_or("no parent")?;
    let stage: PathBuf = std::env::temp_dir().join(format!(
        "rtbench-it-ns-{}-{}",
        std::process::id(),
        dir.display().to_string().replace('/', "_")
    ));
    std::fs::create_dir_all(&stage).map_err(|e| format!("{}: {e}", stage.display()))?;
    let result = (|| {
        mount("tmpfs", &stage, "tmpfs", 0, "mode=0755")?;
        let (upper, work) = (stage.join("upper"), stage.join("work"));
        for d in [&upper, &work] {
            std::fs::create_dir(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        let opts = format!(
            "lowerdir={},upperdir={},workdir={}",
            parent.display(),
            upper.display(),
            work.display()
        );
        mount("overlay", parent, "overlay", 0, &opts)?;
        std::fs::create_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))
    })();
    // The overlay keeps its layers; the staging mount and directory go.
    // SAFETY: a valid C string.
    unsafe { libc::umount2(c(&stage).as_ptr(), libc::MNT_DETACH) };
    let _ = std::fs::remove_dir(&stage);
    result
}

/// An empty tmpfs on `dir` (made first if the host lacks it).
fn empty_tmpfs(dir: &Path) -> Result<(), String> {
    exists_privately(dir)?;
    mount(
        "tmpfs",
        dir,
        "tmpfs",
        libc::MS_NOSUID | libc::MS_NODEV,
        "mode=0755",
    )
}

/// What a developer's machine with rtbench installed could hold, made unusable for a
/// test: a configuration every command would reject, a damaged stored run, a damaged
/// tuning journal and a damaged monitor state, each naming [`HOSTILE_MARK`].
fn hostile_host() -> Result<(), String> {
    for p in HIDDEN {
        empty_tmpfs(Path::new(p))?;
    }
    let w = |p: &str, text: String| {
        if let Some(d) = Path::new(p).parent() {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        std::fs::write(p, text).map_err(|e| format!("{p}: {e}"))
    };
    w(
        "/etc/rtbench/rtbench.toml",
        format!("[selftest]\n{HOSTILE_MARK} = true\n"),
    )?;
    w(
        "/var/lib/rtbench/run-000001-20000101T000000Z.json",
        format!("{{\"{HOSTILE_MARK}\": "),
    )?;
    w(
        "/var/lib/rtbench/monitor/state.json",
        format!("{{\"{HOSTILE_MARK}\": "),
    )?;
    w(
        "/run/rtbench/journal.json",
        format!("{{\"{HOSTILE_MARK}\": "),
    )?;
    w(
        "/run/rtbench/unstored-run.json",
        format!("{{\"{HOSTILE_MARK}\": "),
    )
}

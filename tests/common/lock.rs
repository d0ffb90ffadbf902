//! What tests must not do at the same time, made explicit: the tests of one binary run
//! in parallel threads, and two `cargo test` runs may share a machine.
//!
//! - **The machine** ([`shared`], [`exclusive`]): a test that changes a machine-wide
//!   setting every measurement would see (strict overcommit, the root cpu cgroup's RT
//!   runtime, real tuning of this machine) holds it exclusively; every test that runs
//!   rtbench, cyclictest or pmqtest holds it shared. [`crate::common::rtbench`],
//!   [`crate::common::exe`] and [`crate::common::cyclictest`] take the shared hold for
//!   the rest of the calling test, so no test has to remember it; a test that measures
//!   in-process calls [`shared`] itself.
//! - **One resource** ([`serial`]): tests that change the same kernel file or cgroup
//!   file run one after the other, and run beside everything else.
//! - **Forks** ([`no_forks`], [`spawning`]): a test that takes rtbench's tuning lock in
//!   this process (`tune::apply`, `tune::revert`: an `flock` of the journal directory's
//!   `lock`, src/tune/journal.rs) runs while no other test of the binary starts a
//!   process. A child started meanwhile holds the lock's open file from its fork until
//!   its exec, and an `apply` in that window is refused as "another rtbench tune is
//!   running". [`crate::common::exe`] marks a test as spawning.
//!
//! The machine and resource locks are `flock(2)` locks on files in the temporary
//! directory, so they hold between threads (each hold opens the file anew: a lock per
//! open file description) and between processes (two test runs at once, and the test
//! binary re-run by the isolation test). The fork lock is this process's own. All are
//! released when the test's thread ends, also by a panic.

use std::cell::{Cell, RefCell};
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A kernel file or cgroup file that some tests change and restore.
#[derive(Debug, Clone, Copy)]
pub enum Resource {
    /// `/proc/sys/kernel/printk` (the self-test's `mode = "apply"` tunes it).
    Printk,
    /// `/sys/kernel/tracing/tracing_on`, which `-b` turns off (and tests restore).
    Tracing,
    /// The cgroup hierarchy's root: cgroup v2's `cgroup.subtree_control` (`+cpuset`).
    CgroupRoot,
}

impl Resource {
    fn file(self) -> &'static str {
        match self {
            Resource::Printk => "printk",
            Resource::Tracing => "tracing",
            Resource::CgroupRoot => "cgroup-root",
        }
    }
}

/// Opens `rtbench-tests-NAME.lock` in the temporary directory and locks it (`LOCK_SH`
/// or `LOCK_EX`), waiting as long as it takes.
fn lock(name: &str, how: libc::c_int) -> File {
    let path = std::env::temp_dir().join(format!("rtbench-tests-{name}.lock"));
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("lock file {}: {e}", path.display()));
    loop {
        // SAFETY: flock on a file descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), how) } == 0 {
            return f;
        }
        let e = std::io::Error::last_os_error();
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::Interrupted,
            "flock {name}: {e}"
        );
    }
}

/// What this test's thread holds of the machine.
enum Held {
    Nothing,
    Shared(#[allow(dead_code)] File),
    Exclusive,
}

thread_local! {
    static MACHINE: RefCell<Held> = const { RefCell::new(Held::Nothing) };
}

/// Holds the machine shared until the calling test's thread ends: no test that changes
/// a machine-wide setting runs meanwhile. Nothing to do when this thread already holds
/// it (shared or exclusively).
pub fn shared() {
    MACHINE.with(|m| {
        let mut m = m.borrow_mut();
        if let Held::Nothing = *m {
            *m = Held::Shared(lock("machine", libc::LOCK_SH));
        }
    });
}

/// The machine to this test alone (see [`exclusive`]); released when dropped.
pub struct Exclusive(#[allow(dead_code)] File);

impl Drop for Exclusive {
    fn drop(&mut self) {
        MACHINE.with(|m| *m.borrow_mut() = Held::Nothing);
    }
}

/// Waits until no other test (of this run or another) holds the machine, and holds it
/// alone: for a test that changes a setting every measurement would see. Call it before
/// anything else in the test; a shared hold of this thread is given up first.
pub fn exclusive() -> Exclusive {
    MACHINE.with(|m| *m.borrow_mut() = Held::Nothing);
    let f = lock("machine", libc::LOCK_EX);
    MACHINE.with(|m| *m.borrow_mut() = Held::Exclusive);
    Exclusive(f)
}

/// `what` to this test alone until the guard is dropped.
pub struct Serial(#[allow(dead_code)] File);

/// Waits until no other test changes `what`, and holds it until the guard is dropped.
pub fn serial(what: Resource) -> Serial {
    Serial(lock(what.file(), libc::LOCK_EX))
}

/// Read: a test that starts processes; write: a test that holds rtbench's tuning lock.
static FORKS: RwLock<()> = RwLock::new(());

thread_local! {
    static SPAWNS: RefCell<Option<RwLockReadGuard<'static, ()>>> = const { RefCell::new(None) };
    static NO_FORKS: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling test, until its thread ends, as one that starts processes: no
/// test that holds rtbench's tuning lock in this process runs meanwhile. Nothing to do
/// when this thread holds [`no_forks`] (its own children are started in sequence).
pub fn spawning() {
    if NO_FORKS.with(Cell::get) {
        return;
    }
    SPAWNS.with(|s| {
        let mut s = s.borrow_mut();
        if s.is_none() {
            *s = Some(FORKS.read().unwrap_or_else(|e| e.into_inner()));
        }
    });
}

/// No other test of this binary starts a process until the guard is dropped.
pub struct NoForks(#[allow(dead_code)] RwLockWriteGuard<'static, ()>);

impl Drop for NoForks {
    fn drop(&mut self) {
        NO_FORKS.with(|n| n.set(false));
    }
}

/// Waits until no other test of this binary starts processes, and keeps it so: for a
/// test that calls `tune::apply` or `tune::revert` in this process. Holds the machine
/// shared first (unless this thread holds it already): every test takes the machine
/// before the forks lock, never the other way round — a test holding the forks lock
/// and waiting for the machine would deadlock against one that holds the machine
/// exclusively and waits for the forks lock.
pub fn no_forks() -> NoForks {
    shared();
    SPAWNS.with(|s| *s.borrow_mut() = None);
    let g = FORKS.write().unwrap_or_else(|e| e.into_inner());
    NO_FORKS.with(|n| n.set(true));
    NoForks(g)
}

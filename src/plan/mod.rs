//! Plan: turns command-line values plus a read-only snapshot of the CPU topology into
//! validated, typed options. Every check happens here, before anything is written or
//! any thread is started; each failure is a one-line [`Error::Usage`] naming the flag,
//! the value and what was expected. Planning has no side effects (the output-path
//! probe creates and removes one empty file). One file per command; the checks several
//! commands share are here.

pub mod compare;
pub mod cyclic;
#[cfg(feature = "diagnose")]
pub mod diagnose;
pub mod load;
#[cfg(feature = "monitor")]
pub mod monitor;
pub mod pair;
#[cfg(feature = "plot")]
pub mod plot;
pub mod report;
pub mod tune;

use crate::cli::RunFlags;
use crate::cpuset::CpuSet;
use crate::error::{Error, Result};
use crate::measure::{HistogramSetting, RunControl};
use crate::report::unit_ns;
use crate::sys::cpus::CpuTopology;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::measure::DEFAULT_RT_PRIORITY;

/// Largest `-h/-H` bucket count (cyclictest's HIST_MAX).
pub const HIST_MAX: usize = 1_000_000;
/// cyclictest's default distance between thread intervals, **µs**.
pub const DEFAULT_DISTANCE_US: u64 = 500;
/// Largest interval or pause, **µs** (one hour), for `-i` and `-i + index × -d`.
pub const MAX_INTERVAL_US: u64 = 3_600_000_000;
/// Most measuring threads (cyclic) or pairs (pmq, pipe).
pub const MAX_THREADS: usize = 4096;
/// Largest `--report-interval`, seconds.
pub const MAX_REPORT_INTERVAL_S: f64 = 3600.0;

pub(crate) fn usage<T>(
    flag: &str,
    value: impl std::fmt::Display,
    msg: impl Into<String>,
) -> Result<T> {
    Err(Error::usage(flag, value, msg))
}

/// Checks, before anything starts, the one thing about standard output that can be
/// known without writing to it: that it is open for writing (`fcntl(F_GETFL)`, its
/// access mode; fcntl(2)). A read-only descriptor (`1</dev/null`) would take the
/// results of a whole run and lose them. A full disk (`> /dev/full`) or a reader that
/// leaves shows only when written to: those are found at the end, after every other
/// output is written (`crate::report::output::Written`).
///
/// Errors: [`Error::Usage`] naming `<stdout>` (exit 2).
pub fn check_stdout() -> Result<()> {
    // SAFETY: F_GETFL only reads the descriptor's flags.
    let flags = unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFL) };
    if flags < 0 {
        let e = std::io::Error::last_os_error();
        return usage("<stdout>", "", format!("standard output is not open: {e}"));
    }
    if flags & libc::O_ACCMODE == libc::O_RDONLY {
        return usage(
            "<stdout>",
            "",
            "standard output is open for reading only: the results would be lost",
        );
    }
    Ok(())
}

/// Refuses an output file `out` (`-` is standard output, never an input) that is one of
/// the `inputs` the command reads: the same file by device and inode (stat(2), through
/// links), not by name, so `./a.json`, a hard link or a symbolic link to an input is
/// refused too. An output that does not exist yet, and an input that cannot be
/// stat'ed (standard input, `-`), is no input's file.
///
/// Errors: [`Error::Usage`] naming `flag`, the output and the input (exit 2).
pub fn check_not_input(flag: &str, out: &Path, inputs: &[&Path]) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    if out == Path::new("-") {
        return Ok(());
    }
    let Ok(o) = std::fs::metadata(out) else {
        return Ok(());
    };
    for input in inputs.iter().filter(|i| **i != Path::new("-")) {
        if let Ok(i) = std::fs::metadata(input) {
            if (i.dev(), i.ino()) == (o.dev(), o.ino()) {
                return usage(
                    flag,
                    out.display(),
                    format!(
                        "is the input {}; expected a file that is not one of the inputs \
                         (writing it would replace what is read)",
                        crate::error::echo(&input.display().to_string())
                    ),
                );
            }
        }
    }
    Ok(())
}

/// Checks that `path` can be written before anything starts, the way
/// [`crate::sys::atomic::write`] will write it (`-` is standard output):
/// - a regular file or a new name: its directory exists, the name fits the file
///   system (`NAME_MAX`), and a file can be created there (a probe file is created and
///   removed — this catches /proc, /sys, read-only mounts and permissions);
/// - a symbolic link to a regular file: the same for the file it points to;
/// - a device or FIFO: it is writable (`access(W_OK)`; it is not opened here: opening
///   a FIFO waits for a reader, and some devices act on open);
/// - refused: a directory, a name ending in `/`, a dangling symbolic link.
///
/// Errors are [`Error::Usage`] naming `flag` and the path (exit 2).
pub fn check_output_path(flag: &str, path: &Path) -> Result<()> {
    use crate::sys::atomic::{self, Destination};
    if path == Path::new("-") {
        return Ok(());
    }
    let shown = path.display();
    if let Some(why) = atomic::unnameable(path) {
        return usage(flag, shown, format!("path {why}"));
    }
    let dir = atomic::parent_dir(path);
    if !dir.is_dir() {
        return usage(
            flag,
            shown,
            format!("directory {} does not exist", dir.display()),
        );
    }
    let target = match atomic::destination(path) {
        Ok(Destination::New(p) | Destination::Regular(p)) => p,
        Ok(Destination::Special { path: p, kind }) => {
            return match nix::unistd::access(&p, nix::unistd::AccessFlags::W_OK) {
                Ok(()) => Ok(()),
                Err(e) => usage(flag, shown, format!("cannot write to this {kind}: {e}")),
            };
        }
        Err(e) => return usage(flag, shown, e.to_string()),
    };
    let dir = atomic::parent_dir(&target);
    let name_len = target.file_name().map_or(0, |n| n.len());
    let max = atomic::name_max(&dir);
    if name_len > max {
        return usage(
            flag,
            shown,
            format!("file name is {name_len} bytes; the file system takes names of at most {max}"),
        );
    }
    let probe = atomic::temp_path(&target);
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => usage(
            flag,
            shown,
            format!("cannot create files in {}: {e}", dir.display()),
        ),
    }
}

/// Parses a CPU list given with `flag` as CPUs to run on (see
/// [`CpuTopology::where_to_run`]).
pub(crate) fn parse_cpus(flag: &str, s: &str, topo: &CpuTopology) -> Result<CpuSet> {
    topo.where_to_run(s)
        .map_err(|e| Error::usage(flag, s, e.message()))
}

/// Interval of thread (or pair) `index` in **µs**: `base + index × distance`
/// (cyclictest/pmqtest `-i` and `-d`), at most one hour.
pub fn thread_interval_us(base: u64, distance: u64, index: usize) -> Result<u64> {
    base.checked_add(distance.saturating_mul(index as u64))
        .filter(|&v| v <= MAX_INTERVAL_US)
        .map_or_else(
            || usage("-d", distance, "interval + index × distance exceeds 1 hour"),
            Ok,
        )
}

/// Where and how the `-h/-H` histogram is printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistogramOutput {
    /// `-H`: add a summary column over all threads.
    pub summary_column: bool,
    /// Row layout (2.7+ or legacy).
    pub layout: crate::report::histogram::Layout,
    /// `--histfile`, or standard output.
    pub file: Option<PathBuf>,
}

/// How a measurement's results are shown and stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSpec {
    /// `-q`: no live lines; at exit the final lines (cyclic: only the histogram with
    /// `-h`).
    pub quiet: bool,
    /// `-N`: text and rt-tests JSON fields in ns instead of µs.
    pub nsecs: bool,
    /// `-h/-H` dump.
    pub histogram: Option<HistogramOutput>,
    /// `--json` target; `-` is standard output.
    pub json: Option<PathBuf>,
    /// Called as `cyclictest`/`pmqtest`: standard output carries only what that
    /// program prints; rtbench's own summary lines (percentiles, overruns) go to
    /// standard error, where line-oriented parsers of the program's output (`tail`,
    /// `grep Max`, Linaro's `parse_rt_tests_results.py`) do not see them.
    pub rt_tests_stdout: bool,
}

/// The validated [`RunFlags`] shared by every measuring subcommand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOptions {
    /// `-D` (`None`: no limit, also for `-D 0`).
    pub duration: Option<Duration>,
    /// `--json` target (checked writable).
    pub json: Option<PathBuf>,
    /// Where the main thread runs (`--mainaffinity`; `None` until `companions`
    /// places it beside the measuring threads).
    pub main_cpus: Option<CpuSet>,
    /// mlockall unless `--no-mlockall`.
    pub mlockall: bool,
    /// `-N`.
    pub nsecs: bool,
    /// `-q`.
    pub quiet: bool,
    /// Live report period (`None` with `-q`).
    pub report_every: Option<Duration>,
    /// `/dev/cpu_dma_latency` value in **µs** (`None` with `--default-system`).
    pub pm_qos_us: Option<i32>,
}

/// Validates the shared run-control flags.
pub fn run_options(f: &RunFlags, topo: &CpuTopology) -> Result<RunOptions> {
    let duration = match &f.duration {
        None => None,
        Some(d) => {
            let v = crate::duration::parse(d).or_else(|e| usage("-D", d, e))?;
            (v > Duration::ZERO).then_some(v)
        }
    };
    if let Some(p) = &f.json {
        check_output_path("--json", p)?;
    }
    check_stdout()?;
    if !(f.report_interval > 0.0 && f.report_interval <= MAX_REPORT_INTERVAL_S) {
        return usage(
            "--report-interval",
            f.report_interval,
            format!("expected 0 < SECS <= {MAX_REPORT_INTERVAL_S}"),
        );
    }
    if f.latency < 0 {
        return usage("--latency", f.latency, "expected a PM QoS value >= 0 µs");
    }
    // The default (beside the measuring threads) is set by `companions` once the
    // threads are placed.
    let main_cpus = match &f.mainaffinity {
        Some(s) => parse_cpus("--mainaffinity", s, topo)?,
        None => CpuSet::new(),
    };
    Ok(RunOptions {
        duration,
        json: f.json.clone(),
        main_cpus: (!main_cpus.is_empty()).then_some(main_cpus),
        mlockall: !f.no_mlockall,
        nsecs: f.nsecs,
        quiet: f.quiet,
        report_every: (!f.quiet).then(|| Duration::from_secs_f64(f.report_interval)),
        pm_qos_us: (!f.default_system).then_some(f.latency),
    })
}

impl RunOptions {
    /// The run control of a measurement with these options and the test's own
    /// `-l` (0 = endless), `-h`, `-b` and `--tracemark`.
    pub fn control(
        &self,
        loops: u64,
        histogram: Option<HistogramSetting>,
        break_ns: Option<u64>,
        tracemark: bool,
    ) -> RunControl {
        RunControl {
            duration: self.duration,
            loops: (loops > 0).then_some(loops),
            mlockall: self.mlockall,
            pm_qos_us: self.pm_qos_us,
            main_cpus: self.main_cpus.clone(),
            report_every: self.report_every,
            break_ns,
            tracemark,
            histogram,
            explain: None,
        }
    }
}

/// `-i`: at most one hour (and, with `at_least_one`, not 0).
pub(crate) fn check_interval(interval_us: u64, at_least_one: bool) -> Result<()> {
    if at_least_one && interval_us == 0 {
        return usage("-i", 0, "interval must be at least 1 µs");
    }
    if interval_us > MAX_INTERVAL_US {
        return usage(
            "-i",
            interval_us,
            format!("interval must be at most 1 hour ({MAX_INTERVAL_US} µs)"),
        );
    }
    Ok(())
}

/// `-h N` (or `-H N`, named by `flag`): N buckets of 1 µs (1 ns with `-N`).
pub(crate) fn histogram(
    flag: &str,
    buckets: Option<usize>,
    nsecs: bool,
) -> Result<Option<HistogramSetting>> {
    match buckets {
        None => Ok(None),
        Some(n) if n == 0 || n > HIST_MAX => {
            usage(flag, n, format!("expected 1..{HIST_MAX} buckets"))
        }
        Some(n) => Ok(Some(HistogramSetting {
            buckets: n,
            bucket_ns: unit_ns(nsecs),
        })),
    }
}

/// `-b USEC` (ns with `-N`) as a threshold in **ns**; one whose value in ns does not
/// fit in 64 bits is refused (it would otherwise saturate to a different threshold).
/// The explain threshold, **ns**: `--explain US` (always µs: `-N` changes `-b` only,
/// as in cyclictest and pmqtest), else `-b`'s (`break_ns`: the sample that stops the
/// run is explained). `--explain 0` is a usage error.
pub(crate) fn explain_ns(explain_us: Option<u64>, break_ns: Option<u64>) -> Result<Option<u64>> {
    match explain_us {
        Some(0) => usage("--explain", 0, "expected a threshold of at least 1 µs"),
        Some(us) => Ok(Some(us.saturating_mul(crate::sys::clock::NS_PER_US))),
        None => Ok(break_ns),
    }
}

pub(crate) fn break_ns(breaktrace: Option<u64>, nsecs: bool) -> Result<Option<u64>> {
    match breaktrace {
        None => Ok(None),
        Some(0) => usage("-b", 0, "expected a threshold of at least 1 µs"),
        Some(b) => match b.checked_mul(unit_ns(nsecs)) {
            Some(ns) => Ok(Some(ns)),
            None => usage(
                "-b",
                b,
                format!("out of range: at most {} µs", u64::MAX / unit_ns(nsecs)),
            ),
        },
    }
}

/// `-p` outside 0..99.
pub(crate) fn check_priority(priority: Option<i64>) -> Result<()> {
    match priority {
        Some(p) if !(0..=99).contains(&p) => usage("-p", p, "expected a priority of 0..99"),
        _ => Ok(()),
    }
}

/// What `-t` without NUM means, the one place cyclictest and pmqtest differ in
/// placing threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AllCpus {
    /// cyclictest: one thread per CPU of `-a` (or per online CPU), each pinned there.
    PinnedPerCpu,
    /// pmqtest: as many pairs as online CPUs, pinned only when `-a` is given.
    CountOnline,
}

/// `-S`, `-a [CPUSET]` and `-t [NUM]` (`count`: `None` not given, `Some(None)`
/// without NUM) → the CPU of each thread (`None`: not pinned), and a remark when `-S`
/// overrides `-a`/`-t`. Without `-S`: round-robin over `-a`'s CPUs (thread N on CPU N
/// of the list), else unpinned; one thread without `-t`.
pub(crate) fn placement(
    smp: bool,
    affinity: Option<&str>,
    count: Option<Option<usize>>,
    all: AllCpus,
    noun: &str,
    topo: &CpuTopology,
) -> Result<(Vec<Option<usize>>, Option<String>)> {
    // Every CPU this process may run on (online ∩ its cpuset, isolated ones included,
    // or the affinity `taskset` narrowed it to): CpuTopology::run_default.
    let online: Vec<usize> = topo.run_default().iter().collect();
    if smp {
        let remark = (affinity.is_some() || count.is_some())
            .then(|| format!("# -S given: -a and -t are ignored (one {noun} per allowed CPU)"));
        return Ok((online.iter().map(|&c| Some(c)).collect(), remark));
    }
    let set: Option<Vec<usize>> = match affinity {
        None => None,
        Some("") => Some(online.clone()),
        Some(s) => Some(parse_cpus("-a", s, topo)?.iter().collect()),
    };
    let n = match (count, &set, all) {
        (Some(Some(n)), _, _) => n,
        (Some(None), Some(c), AllCpus::PinnedPerCpu) => c.len(),
        (Some(None), _, _) => online.len(),
        (None, _, _) => 1,
    };
    let cpus = match (&set, count, all) {
        (Some(c), _, _) => (0..n).map(|i| Some(c[i % c.len()])).collect(),
        (None, Some(None), AllCpus::PinnedPerCpu) => online.iter().map(|&c| Some(c)).collect(),
        (None, _, _) => vec![None; n],
    };
    Ok((cpus, None))
}

/// Places the main thread (unless `--mainaffinity` did) and the load (unless
/// `--load-cpus` did) beside measuring threads on `cpus` (one entry per thread, `None`
/// when not pinned): [`CpuTopology::companions`] — off the measured CPUs and their SMT
/// siblings while another core is allowed, with a warning naming both CPUs when they
/// must share. Returns the warnings to print.
pub(crate) fn companions(
    cpus: &[Option<usize>],
    run: &mut RunOptions,
    load: Option<&mut crate::load::LoadSpec>,
    topo: &CpuTopology,
) -> Vec<String> {
    let measured: Option<CpuSet> = cpus.iter().copied().collect();
    let c = topo.companions(measured.as_ref());
    let mut warnings = Vec::new();
    if run.main_cpus.is_none() {
        run.main_cpus = c.main;
        warnings.extend(c.main_shares.map(|s| s.line()));
    }
    if let Some(l) = load.filter(|l| !l.cpus_given) {
        l.cpus = c.load;
        warnings.extend(c.load_shares.map(|s| s.line()));
    }
    warnings
}

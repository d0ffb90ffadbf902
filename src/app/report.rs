//! `rtbench report`: this boot's self-test result (or every kept run) as a table or
//! JSON. It never shows a run of another boot as this boot's: every run names its boot,
//! and when this boot's run is missing or was not stored (read from the fallback copy)
//! it says so and exits 1.

use crate::cli::report::ReportArgs;
use crate::config::Reader;
use crate::error::{exit, Error, Result};
use crate::report::output::{Output, Target};
use crate::report::store::{self, Store, StoredRun};
use crate::report::table::Table;
use crate::report::PrettyJson;
use std::path::PathBuf;

/// The configuration `args` names (the default file, or the defaults when that does
/// not exist).
fn config(args: &ReportArgs) -> Result<crate::config::Config> {
    let root = crate::sys::SysRoot::host();
    Ok(crate::config::locate(args.config.as_deref(), Reader::Report, &root)?.config)
}

/// `[output] results_dir` and `fallback_dir` of the configuration; `--dir` overrides
/// the first.
fn dirs(args: &ReportArgs) -> Result<(PathBuf, PathBuf)> {
    let cfg = config(args)?;
    Ok((
        args.dir.clone().unwrap_or(cfg.output.results_dir),
        cfg.output.fallback_dir,
    ))
}

/// One run to show: where it was read from and whether it is this boot's.
struct Shown {
    file: PathBuf,
    run: StoredRun,
}

fn is_this_boot(run: &StoredRun, boot: &str) -> bool {
    !boot.is_empty() && run.origin.boot_id == boot
}

/// `rtbench report`.
pub fn run(args: &ReportArgs) -> Result<i32> {
    #[cfg(feature = "monitor")]
    if let Some(since) = &args.since {
        return run_since(args, since);
    }
    let (dir, fallback_dir) = dirs(args)?;
    // A directory named on the command line must be one; the configured one may not
    // exist yet (no self-test has run).
    if args.dir.is_some() {
        match std::fs::metadata(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::usage(
                    "--dir",
                    dir.display(),
                    "directory does not exist",
                ))
            }
            Err(e) => {
                return Err(Error::usage(
                    "--dir",
                    dir.display(),
                    format!("cannot read: {e}"),
                ))
            }
            Ok(m) if !m.is_dir() => {
                return Err(Error::usage(
                    "--dir",
                    dir.display(),
                    "not a directory; expected the results directory",
                ))
            }
            Ok(_) => {}
        }
    }
    let out = Output::new(args.json.then_some(&Target::Stdout));
    let boot = store::current_boot_id();
    let store = Store::new(&dir, 1);
    // A store that cannot be listed (the configured results_dir is a file, EIO) hides
    // nothing: this boot's fallback copy is still shown, with the reason said.
    let mut list_error = None;
    let files = match store.list() {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            let why = if dir.exists() && !dir.is_dir() {
                "not a directory".to_string()
            } else {
                e.to_string()
            };
            list_error = Some(why);
            Vec::new()
        }
    };
    // This boot's result that the store could not take, if any.
    let unstored = match store::load_fallback(&fallback_dir) {
        Some(Ok(r)) if is_this_boot(&r, &boot) => Some(Shown {
            file: store::fallback_path(&fallback_dir),
            run: r,
        }),
        Some(Err(e)) => {
            out.warn(&format!(
                "rtbench: {}: skipped, not a stored result: {e}",
                store::fallback_path(&fallback_dir).display()
            ));
            None
        }
        _ => None,
    };
    // A damaged file (a foreign file, a disk error) is reported and skipped: the other
    // runs stay readable.
    let mut stored = Vec::new();
    for f in files.iter().rev() {
        match Store::load(f) {
            Ok(run) => {
                stored.push(Shown {
                    file: f.clone(),
                    run,
                });
                if !args.all {
                    break;
                }
            }
            Err(e) => out.warn(&format!(
                "rtbench: {}: skipped, not a stored result: {e}",
                f.display()
            )),
        }
    }
    stored.reverse();
    // A stored run of this boot newer than the fallback copy supersedes it.
    let unstored = unstored.filter(|u| {
        !stored
            .last()
            .is_some_and(|s| is_this_boot(&s.run, &boot) && s.run.start_s >= u.run.start_s)
    });
    if let Some(why) = &list_error {
        if unstored.is_none() {
            return Err(Error::usage(
                "results directory",
                dir.display(),
                format!("cannot list it: {why}"),
            ));
        }
        out.warn(&format!(
            "rtbench: results directory {}: cannot list it: {why}",
            dir.display()
        ));
    }
    if stored.is_empty() && unstored.is_none() {
        return Err(Error::usage(
            "--dir",
            dir.display(),
            if files.is_empty() {
                "no stored self-test results (run `rtbench selftest` first)"
            } else {
                "no readable self-test result"
            },
        ));
    }
    let mut shown: Vec<&Shown> = if args.all || unstored.is_none() {
        stored.iter().collect()
    } else {
        Vec::new()
    };
    if let Some(u) = &unstored {
        shown.push(u);
    }
    if !args.all {
        shown.drain(..shown.len().saturating_sub(1));
    }
    if args.json {
        let runs: Vec<&StoredRun> = shown.iter().map(|s| &s.run).collect();
        if args.all {
            out.document(&Target::Stdout, &PrettyJson, &runs)?;
        } else {
            out.document(&Target::Stdout, &PrettyJson, runs[0])?;
        }
    } else {
        for s in &shown {
            out.line(&format!(
                "# {}{}",
                s.file.display(),
                boot_note(&s.run, &boot)
            ));
            out.text(&Table, &s.run)?;
        }
    }
    // The verdict of this boot, said plainly.
    let this_boot = match &unstored {
        Some(u) => Some(&u.run),
        None => stored
            .last()
            .map(|s| &s.run)
            .filter(|r| is_this_boot(r, &boot)),
    };
    let say = |line: String| {
        if args.json {
            out.warn(&format!("rtbench: {line}"));
        } else {
            out.line(&line);
        }
    };
    Ok(match (this_boot, &unstored) {
        (Some(r), Some(u)) => {
            say(format!(
                "this boot's self-test ({}) was NOT STORED: {}; shown from {}",
                r.verdict.word(),
                r.store_error.as_deref().unwrap_or("unknown error"),
                u.file.display()
            ));
            exit::FAIL
        }
        (Some(r), None) if r.accepted() => exit::OK,
        (Some(_), None) => exit::FAIL,
        (None, _) => {
            let newest = stored.last().map(|s| &s.run);
            say(format!(
                "no self-test result of this boot ({}) in {} or {}{}",
                short(&boot),
                dir.display(),
                fallback_dir.display(),
                newest.map_or_else(String::new, |r| format!(
                    "; the newest stored run is from boot {}",
                    r.origin.short_boot()
                ))
            ));
            exit::FAIL
        }
    })
}

fn short(boot: &str) -> String {
    if boot.is_empty() {
        "unknown".into()
    } else {
        boot.chars().filter(|c| *c != '-').take(8).collect()
    }
}

/// `: boot 1a2b3c4d, this boot` / `: boot …, NOT this boot` after a file name.
fn boot_note(run: &StoredRun, boot: &str) -> String {
    let whose = if is_this_boot(run, boot) {
        "this boot"
    } else {
        "NOT this boot"
    };
    format!(" (boot {}, {whose})", run.origin.short_boot())
}

#[cfg(feature = "monitor")]
/// `rtbench report --since TIME`: the monitor's windows of the last TIME, per CPU;
/// exit 1 when one exceeded a limit or there is none in the period.
fn run_since(args: &ReportArgs, since: &str) -> Result<i32> {
    use crate::monitor::aggregate::STATE_FILE;
    use crate::monitor::history::State;
    use crate::report::monitor::SinceTable;
    use crate::report::window::{self, SinceSummary, WindowStore, CURRENT};
    let period = crate::duration::parse(since).map_err(|e| Error::usage("--since", since, e))?;
    if period.is_zero() {
        return Err(Error::usage(
            "--since",
            since,
            "expected a period of at least 1s",
        ));
    }
    // --dir: DIR itself when the monitor was given it with --dir, else DIR/monitor (the
    // monitor's default under a results directory); without --dir, the configuration's
    // [monitor] dir.
    let dir = match &args.dir {
        Some(d) if d.join(CURRENT).exists() => d.clone(),
        Some(d) => window::default_dir(d),
        None => {
            let cfg = config(args)?;
            cfg.monitor
                .dir
                .unwrap_or_else(|| window::default_dir(&cfg.output.results_dir))
        }
    };
    let store = WindowStore::new(&dir, u64::MAX);
    if store.files().is_empty() {
        // Name every place looked in: --dir DIR itself, then DIR/monitor.
        let looked = match &args.dir {
            Some(d) if *d != dir => format!("{} or {}", d.display(), dir.display()),
            _ => dir.display().to_string(),
        };
        return Err(Error::usage(
            "--since",
            since,
            format!("no monitor windows in {looked} (is rtbench-monitor.service running?)"),
        ));
    }
    let now = crate::sys::clock::Clock::wall_secs();
    // period is at most duration::MAX_SECS: the subtraction cannot overflow.
    let since_s = now.saturating_sub(i64::try_from(period.as_secs()).unwrap_or(i64::MAX));
    // Streamed: only the windows of the period are kept in memory, whatever the size
    // of the store.
    let mut records = Vec::new();
    let skipped = store
        .scan(|r| {
            if r.end_s > since_s {
                records.push(r);
            }
        })
        .map_err(|e| Error::io(&dir, e))?;
    let out = Output::new(args.json.then_some(&Target::Stdout));
    if skipped > 0 {
        out.warn(&format!(
            "rtbench: {}: {skipped} unreadable line(s) skipped",
            dir.display()
        ));
    }
    let mut summary = SinceSummary::new(records, since_s, now)
        .map_err(|e| Error::usage(dir.display().to_string(), "", e))?;
    let max = crate::sys::input::MAX_INPUT_BYTES;
    if let Ok(text) = crate::sys::input::read_regular_text(&dir.join(STATE_FILE), max) {
        if let Ok(state) = serde_json::from_str::<State>(&text) {
            for c in summary.cpus.iter_mut() {
                c.alltime_max_ns = state
                    .cpus
                    .iter()
                    .find(|s| s.cpu == c.cpu)
                    .map(|s| s.alltime_max_ns.max(c.max_ns));
            }
        }
    }
    if args.json {
        out.document(&Target::Stdout, &PrettyJson, &summary)?;
    } else {
        out.text(&SinceTable, &summary)?;
    }
    Ok(if summary.windows == 0 || summary.over_limit() > 0 {
        exit::FAIL
    } else {
        exit::OK
    })
}

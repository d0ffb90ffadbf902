//! What every measuring command (`cyclic`, `pmq`, `pipe`) does around its
//! measurement: the load before and after it, live progress through its [`Output`],
//! and the end of the run — its exit code ([`exit_code`]) and the outputs every one of
//! them writes in the same order ([`write_outputs`]).

use crate::error::Result;
use crate::explain::explainer::ExplainSummary;
use crate::load::{LoadInfo, LoadSpec};
use crate::measure::harness::Progress;
use crate::measure::harness::RunEnd;
use crate::measure::stats::LiveSnapshot;
use crate::measure::ThreadSpec;
use crate::report::explain::ExplainLines;
use crate::report::output::{Output, Target, Written};
use crate::report::snapshot::ShmSnapshot;
use crate::report::{Live, Sink};

/// Live progress of a measuring command, through its [`Output`]: every report period
/// the live lines (`T:` lines, pmqtest's block) as text; `SIGUSR1` status, and
/// warnings, on standard error; `SIGUSR2` the snapshot file when the command has one
/// (the cyclic test's, [`ShmSnapshot`]), else the status; setup notices (the PM QoS
/// line) as text. Live lines that find standard output's reader gone (EPIPE) stop the
/// run, as its end would: its results are then written to every other output.
struct TextProgress<'a> {
    out: Output,
    lines: &'a dyn for<'l> Sink<Live<'l>>,
    nsecs: bool,
    snapshot: Option<ShmSnapshot>,
    stdout_closed: bool,
    verbose: Option<&'a mut Verbose>,
}

/// `-v`: what the measuring threads store ([`crate::measure::verbose`]), printed by
/// the main thread as cyclictest prints it, each thread's samples reduced by `-o`.
pub struct Verbose {
    /// The threads' rings, in thread order.
    pub rings: crate::measure::verbose::Rings,
    /// `-o RED` (1: every sample).
    pub reduction: u64,
    /// Where each ring was read to.
    pub readers: Vec<crate::measure::verbose::Reader>,
    /// Each thread's reduction state.
    pub reduce: Vec<crate::report::text::Reduce>,
    /// Text unit: 1000 for µs, 1 for ns (`-N`).
    pub unit_ns: u64,
    /// Lines printed before the first samples, once the threads run (cyclictest's
    /// `Thread N Interval:` lines).
    pub header: String,
}

impl Verbose {
    /// For the threads of `rings`, `-o reduction`, in µs or ns (`nsecs`).
    pub fn new(
        rings: crate::measure::verbose::Rings,
        reduction: u64,
        nsecs: bool,
        header: String,
    ) -> Verbose {
        let n = rings.len();
        Verbose {
            rings,
            reduction,
            readers: vec![Default::default(); n],
            reduce: vec![Default::default(); n],
            unit_ns: crate::report::unit_ns(nsecs),
            header,
        }
    }

    /// The lines of every sample stored since the last call (the header first).
    fn lines(&mut self) -> String {
        let mut s = std::mem::take(&mut self.header);
        for (i, ring) in self.rings.iter().enumerate() {
            let (red, unit) = (self.reduction, self.unit_ns);
            let reduce = &mut self.reduce[i];
            ring.drain(&mut self.readers[i], |cycle, ns| {
                if let Some((c, v)) = reduce.take(red, cycle, ns / unit) {
                    crate::report::text::verbose_line(&mut s, i, c, v);
                }
            });
        }
        s
    }

    /// One warning line per thread whose samples were overwritten before they could be
    /// printed.
    pub fn lost_lines(&self) -> Vec<String> {
        self.readers
            .iter()
            .enumerate()
            .filter(|(_, r)| r.lost > 0)
            .map(|(i, r)| {
                format!(
                    "# rtbench: warning: -v: {} samples of thread {i} were overwritten before \
                     they could be printed (standard output did not keep up); their cycles \
                     are missing from the lines",
                    r.lost
                )
            })
            .collect()
    }
}

/// `# rtbench current status:` and the live lines (`SIGUSR1`).
struct Status<'a>(&'a dyn for<'l> Sink<Live<'l>>);

impl Sink<Live<'_>> for Status<'_> {
    fn write(&self, l: &Live<'_>, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        writeln!(out, "# rtbench current status:")?;
        self.0.write(l, out)
    }
}

impl Progress for TextProgress<'_> {
    fn report(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]) {
        if self.verbose.is_some() {
            // cyclictest -v prints the samples instead of the live T: lines.
            return;
        }
        let l = Live {
            threads,
            live,
            nsecs: self.nsecs,
        };
        let r = self.out.text(self.lines, &l);
        self.stdout_closed |= r
            .as_ref()
            .is_err_and(|e| crate::report::output::reader_gone(e) && !self.out.text_to_stderr());
    }

    fn wants_stop(&mut self) -> bool {
        self.stdout_closed
    }

    fn drain(&mut self) -> bool {
        let Some(v) = self.verbose.as_mut() else {
            return false;
        };
        let text = v.lines();
        if text.is_empty() || self.stdout_closed {
            return self.stdout_closed;
        }
        let r = self
            .out
            .text(&crate::report::output::Verbatim, text.as_str());
        self.stdout_closed |= r
            .as_ref()
            .is_err_and(|e| crate::report::output::reader_gone(e) && !self.out.text_to_stderr());
        self.stdout_closed
    }

    fn snapshot(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]) {
        let Some(file) = &self.snapshot else {
            return self.status(threads, live);
        };
        let l = Live {
            threads,
            live,
            nsecs: self.nsecs,
        };
        if let Err(e) = file.write(&Status(self.lines), &l) {
            self.out.warn(&format!(
                "rtbench: warning: snapshot not written to {}: {e}",
                file.path().display()
            ));
        }
    }

    fn status(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]) {
        let l = Live {
            threads,
            live,
            nsecs: self.nsecs,
        };
        let _ = self.out.to_stderr(&Status(self.lines), &l);
    }

    fn notice(&mut self, line: &str) {
        self.out.line(line);
    }

    fn warning(&mut self, line: &str) {
        self.out.warn(line);
    }
}

/// How a measuring command shows its progress: live lines on `out` with `lines`, in
/// ns with `nsecs`; `snapshot`: whether SIGUSR2 writes rt-tests' snapshot file
/// ([`ShmSnapshot`], the cyclic test) rather than the status.
pub struct Shown<'a> {
    /// Where text goes.
    pub out: Output,
    /// The live lines' format.
    pub lines: &'a dyn for<'l> Sink<Live<'l>>,
    /// `-N`.
    pub nsecs: bool,
    /// SIGUSR2 writes `/dev/shm/cyclictestPID`.
    pub snapshot: bool,
    /// `-v`: the samples printed instead of the live lines.
    pub verbose: Option<&'a mut Verbose>,
}

/// What every measuring command does around its measurement: SIGPIPE ignored (a
/// closed standard output must not cost the other outputs,
/// [`crate::sys::signals::ignore_sigpipe`]), the snapshot file made (where
/// `/dev/shm` takes it), the load started
/// before and stopped after it (also when it fails), live progress as `shown` says.
/// Returns the result and what the load was.
pub fn with_load<R>(
    load: Option<&LoadSpec>,
    shown: Shown<'_>,
    measure: impl FnOnce(&mut dyn Progress) -> Result<R>,
) -> Result<(R, Option<LoadInfo>)> {
    crate::sys::signals::ignore_sigpipe();
    // No /dev/shm (a small Buildroot image may not mount it) is no reason for a
    // warning on every run: SIGUSR2 then prints the status, as SIGUSR1. Something else
    // under the file's name (a link, a FIFO: /dev/shm is writable by everyone) is said,
    // since get_cyclictest_snapshot would show it as this run's snapshot.
    let snapshot = shown.snapshot.then(ShmSnapshot::create).and_then(|r| {
        r.map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidInput {
                crate::report::output::Output::new(None).warn(&format!(
                    "# rtbench: warning: no snapshot file: {e}; SIGUSR2 prints the status on \
                     standard error"
                ));
            }
        })
        .ok()
    });
    let running = super::load::start(load)?;
    let info = load.map(|s| s.info(running.as_ref()));
    let mut progress = TextProgress {
        out: shown.out,
        lines: shown.lines,
        nsecs: shown.nsecs,
        snapshot,
        stdout_closed: false,
        verbose: shown.verbose,
    };
    let result = measure(&mut progress);
    super::load::stop(running);
    Ok((result?, info))
}

/// The exit code of a run that ended with `end`: rtbench's, or rt-tests' own (0 after
/// SIGINT/SIGTERM and `-b`) when standard output is rt-tests' (called as
/// `cyclictest`/`pmqtest`).
pub(super) fn exit_code(end: &RunEnd, rt_tests_stdout: bool) -> i32 {
    if rt_tests_stdout {
        end.stop.exit_code_as_rt_tests()
    } else {
        end.exit_code()
    }
}

/// What a measuring command writes once its run ended, each output whatever happened
/// to the others ([`Written`]), files first: the `--json` document `doc` to its file,
/// then the command's `own` outputs (its other files first, then its lines on standard
/// output), the explanations (`# Explained:` lines; on standard error when
/// `explain_to_stderr` keeps standard output byte-compatible with rt-tests'), and the
/// `--json -` document on standard output last. Returns [`Written::finish`] of
/// `exit_code`.
#[allow(clippy::too_many_arguments)]
pub(super) fn write_outputs<R>(
    out: &Output,
    json: Option<&std::path::Path>,
    doc: &dyn Sink<R>,
    report: &R,
    explained: Option<&ExplainSummary>,
    explain_to_stderr: bool,
    exit_code: i32,
    own: impl FnOnce(&mut Written),
) -> Result<i32> {
    let mut written = Written::new();
    let json = json.map(Target::from_path);
    if let Some(t @ Target::File(_)) = &json {
        written.keep(out.document(t, doc, report));
    }
    own(&mut written);
    if let Some(x) = explained {
        if explain_to_stderr {
            let _ = out.to_stderr(&ExplainLines, x);
        } else {
            written.stdout(|| out.text(&ExplainLines, x));
        }
    }
    if let Some(t @ Target::Stdout) = &json {
        written.stdout(|| out.document(t, doc, report));
    }
    written.finish(exit_code)
}

//! What every measuring command (`cyclic`, `pmq`, `pipe`) does around its
//! measurement: the load before and after it, live progress through its [`Output`].

use crate::error::Result;
use crate::load::{LoadInfo, LoadSpec};
use crate::measure::harness::Progress;
use crate::measure::stats::LiveSnapshot;
use crate::measure::ThreadSpec;
use crate::report::output::Output;
use crate::report::{Live, Sink};

/// Live progress of a measuring command, through its [`Output`]: every report period
/// the live lines (`T:` lines, pmqtest's block) as text; `SIGUSR1` status, and
/// warnings, on standard error; setup notices (the PM QoS line) as text.
struct TextProgress<'a> {
    out: Output,
    lines: &'a dyn for<'l> Sink<Live<'l>>,
    nsecs: bool,
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
        let l = Live {
            threads,
            live,
            nsecs: self.nsecs,
        };
        let _ = self.out.text(self.lines, &l);
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

/// What every measuring command does around its measurement: the load started before
/// and stopped after it (also when it fails), live progress on `out` with `lines`.
/// Returns the result and what the load was.
pub fn with_load<R>(
    load: Option<&LoadSpec>,
    out: Output,
    lines: &dyn for<'l> Sink<Live<'l>>,
    nsecs: bool,
    measure: impl FnOnce(&mut dyn Progress) -> Result<R>,
) -> Result<(R, Option<LoadInfo>)> {
    let running = super::load::start(load)?;
    let info = load.map(|s| s.info(running.as_ref()));
    let mut progress = TextProgress { out, lines, nsecs };
    let result = measure(&mut progress);
    super::load::stop(running);
    Ok((result?, info))
}

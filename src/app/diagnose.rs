//! `rtbench diagnose -o FILE.tar.gz`: read the configuration, collect, write the bundle
//! atomically (or to standard output with `-o -`), say where it went and what looks
//! wrong on standard error.

use crate::cli::diagnose::DiagnoseArgs;
use crate::error::{exit, Result};
use crate::report::bundle::TarGz;
use crate::report::output::{Output, Target, Verbatim};
use crate::sys::SysRoot;

/// `rtbench diagnose`: 0 written, 2 bad input, 3 (I/O) not written.
pub fn run(args: &DiagnoseArgs) -> Result<i32> {
    let root = args
        .sysroot
        .as_ref()
        .map_or_else(SysRoot::host, SysRoot::at);
    let plan = crate::plan::diagnose::plan(args, &root)?;
    let now = crate::sys::clock::Clock::wall_secs();
    let bundle = crate::diagnose::collect(&plan, &root, now);
    let target = Target::from_path(&args.output);
    let out = Output::new(Some(&target));
    out.document(&target, &TarGz, &bundle)?;
    // What looks wrong, on standard error whatever the target: SUMMARY.txt's lines up
    // to its file list, each line as one line (a kernel log line's control characters
    // escaped, crate::error::one_line).
    if let Some(summary) = bundle.files.first() {
        let text = String::from_utf8_lossy(&summary.bytes);
        let head: String = text
            .lines()
            .take_while(|l| !l.starts_with("Files:"))
            .map(|l| format!("{}\n", crate::error::one_line(l)))
            .collect();
        out.to_stderr(&Verbatim, &format!("{}\n", head.trim_end()))?;
    }
    if target != Target::Stdout {
        out.warn(&format!(
            "rtbench: diagnostics written to {} ({} files)",
            args.output.display(),
            bundle.files.len()
        ));
    }
    Ok(exit::OK)
}

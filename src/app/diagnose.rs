//! `rtbench diagnose -o FILE.tar.gz`: read the configuration, collect, write the bundle
//! atomically (or to standard output with `-o -`), say where it went and what looks
//! wrong on standard error.

use crate::cli::diagnose::DiagnoseArgs;
use crate::error::{exit, Result};
use crate::report::bundle::TarGz;
use crate::report::output::{Output, Target};
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
    // What looks wrong, on standard error whatever the target.
    if let Some(summary) = bundle.files.first() {
        let text = String::from_utf8_lossy(&summary.bytes);
        let head: String = text
            .lines()
            .take_while(|l| !l.starts_with("Files:"))
            .map(|l| format!("{l}\n"))
            .collect();
        out.warn(head.trim_end());
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

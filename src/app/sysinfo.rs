//! `rtbench sysinfo`: the system snapshot as text or JSON.

use crate::cli::sysinfo::SysinfoArgs;
use crate::error::{exit, Result};
use crate::report::output::{Output, Target};
use crate::report::sysinfo::SysinfoText;
use crate::report::PrettyJson;
use crate::sys::info::SysInfo;
use crate::sys::SysRoot;

/// `rtbench sysinfo`.
pub fn run(args: &SysinfoArgs) -> Result<i32> {
    let info = SysInfo::read(&SysRoot::host());
    if args.json {
        Output::new(Some(&Target::Stdout)).document(&Target::Stdout, &PrettyJson, &info)?;
    } else {
        Output::new(None).text(&SysinfoText, &info)?;
    }
    Ok(exit::OK)
}

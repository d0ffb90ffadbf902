//! The load flags every measuring command takes, `rtbench load`, and the internal
//! `rtbench load-worker`.

use super::usage;
use crate::cli::load::{LoadArgs, LoadWorkerArgs};
use crate::cli::LoadFlags;
use crate::error::{Error, Result};
use crate::load::worker::Job;
use crate::load::{LoadError, LoadField, LoadRequest, LoadSpec};
use crate::sys::cpus::CpuTopology;
use std::time::Duration;

/// Validates the load flags. `None` when no load was asked for. A `--load-cmd` whose
/// program cannot be found is an error here, before anything starts.
pub fn load(flags: &LoadFlags, topo: &CpuTopology) -> Result<Option<LoadSpec>> {
    let req = LoadRequest {
        spec: flags.load.as_deref(),
        cmd: flags.load_cmd.as_deref(),
        cpus: flags.load_cpus.as_deref(),
    };
    crate::load::validate(&req, topo).map_err(|e| {
        let message = e.message().to_string();
        match e {
            LoadError::Invalid {
                field: LoadField::Spec,
                ..
            } => Error::usage("--load", as_written(req.spec), message),
            LoadError::Invalid {
                field: LoadField::Cmd,
                ..
            } => Error::usage(
                "--load-cmd",
                format!("'{}'", req.cmd.unwrap_or_default()),
                message,
            ),
            LoadError::Invalid {
                field: LoadField::Cpus,
                ..
            } => Error::usage("--load-cpus", as_written(req.cpus), message),
            LoadError::CpusWithoutLoad => Error::usage("--load-cpus", "", message),
        }
    })
}

/// A flag's value as the user wrote it, quoted when it has white space in it or is
/// empty (so that the message shows where it ends).
fn as_written(v: Option<&str>) -> String {
    let v = v.unwrap_or_default();
    if v.is_empty() || v.contains(char::is_whitespace) {
        format!("'{v}'")
    } else {
        v.to_string()
    }
}

/// A validated `rtbench load`.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    /// How long (`-D`); `None` until SIGINT/SIGTERM.
    pub duration: Option<Duration>,
    /// The load.
    pub spec: LoadSpec,
}

/// Validates `rtbench load`.
pub fn load_only(args: &LoadArgs, topo: &CpuTopology) -> Result<LoadPlan> {
    let duration = match &args.duration {
        None => None,
        Some(d) => Some(crate::duration::parse(d).or_else(|e| usage("-D", d, e))?),
    };
    let Some(spec) = load(&args.load, topo)? else {
        return usage("rtbench load", "", "needs --load or --load-cmd");
    };
    Ok(LoadPlan { duration, spec })
}

/// Validates the internal `rtbench load-worker KIND ARGS` (as [`crate::load`] starts
/// it): `cpu`, `vm BYTES`, `io DIR`, or `guard PROGRAM ARGV0 [ARGS…]`.
pub fn worker(args: &LoadWorkerArgs) -> Result<Job> {
    let arg = |what: &str| {
        args.args
            .first()
            .cloned()
            .ok_or_else(|| Error::usage("load-worker", &args.kind, format!("needs {what}")))
    };
    Ok(match args.kind.as_str() {
        "cpu" => Job::Cpu,
        "vm" => {
            let a = arg("BYTES")?;
            let bytes = a
                .parse::<u64>()
                .map_err(|_| Error::usage("load-worker", format!("vm {a}"), "expected bytes"))?;
            Job::Vm { bytes }
        }
        "io" => Job::Io {
            dir: arg("DIR")?.into(),
        },
        "guard" if args.args.len() >= 2 => Job::Guard {
            prog: args.args[0].clone().into(),
            argv0: args.args[1].clone(),
            args: args.args[2..].to_vec(),
        },
        k => return usage("load-worker", k, "expected cpu, vm or io"),
    })
}

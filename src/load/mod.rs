//! Background load for measurements: built-in cpu / vm / io workers
//! (`--load cpu:N,vm:N:SIZE,io:N`, the classic `stress`/`stress-ng` trio) and any
//! external command (`--load-cmd "stress-ng --cpu 2"`, `iperf3 -c …`), pinned with
//! `--load-cpus`.
//!
//! Every load process is a child of rtbench in one process group of its own, with
//! `PR_SET_PDEATHSIG(SIGKILL)`: [`RunningLoad`] stops the group (SIGTERM, then SIGKILL)
//! and reaps it when the measurement ends, on SIGINT/SIGTERM, on an error and during a
//! panic (its `Drop`); if rtbench itself is SIGKILLed the kernel kills the children.
//! Built-in workers are rtbench re-executed (`rtbench load-worker …`, hidden) so they
//! are ordinary single-threaded processes. An external command runs under a small
//! guard process ([`guard`]) that takes its grandchildren down with it.

pub mod guard;
pub mod run;
pub mod worker;

pub use run::RunningLoad;

use crate::cpuset::CpuSet;
use std::path::{Path, PathBuf};

/// Default size for `vm:N` without SIZE (stress's `--vm-bytes` default).
pub const DEFAULT_VM_BYTES: u64 = 256 << 20;

/// One built-in worker kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Worker {
    /// A busy loop.
    Cpu,
    /// Allocate (mmap) `bytes`, write every page, free (munmap), repeat.
    Vm {
        /// Bytes per round.
        bytes: u64,
    },
    /// Write 1 MiB blocks to an unlinked temporary file and fsync after each.
    Io,
}

impl Worker {
    /// The worker's arguments after `rtbench load-worker`.
    pub fn args(&self) -> Vec<String> {
        match self {
            Worker::Cpu => vec!["cpu".into()],
            Worker::Vm { bytes } => vec!["vm".into(), bytes.to_string()],
            Worker::Io => vec!["io".into()],
        }
    }
}

/// A validated load: what to start and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadSpec {
    /// Built-in workers, one process each.
    pub workers: Vec<Worker>,
    /// For each worker, the item of `--load` it comes from as the user wrote it
    /// (`vm:1:512M`), so that messages about it echo the user's words.
    pub labels: Vec<String>,
    /// `--load` as given (for output).
    pub text: String,
    /// External command, split into program and arguments.
    pub cmd: Option<Vec<String>>,
    /// The program of `cmd` resolved through PATH.
    pub cmd_path: Option<PathBuf>,
    /// CPUs every load process is pinned to (`--load-cpus`; default the CPUs a
    /// command may run on, narrowed by the plan to those beside the measurement:
    /// [`crate::sys::cpus::CpuTopology::companions`]).
    pub cpus: CpuSet,
    /// Whether `cpus` was given (`--load-cpus`, `[load] cpus`) rather than defaulted.
    pub cpus_given: bool,
}

/// What ran as load during a measurement, for the JSON and stored results.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LoadInfo {
    /// `--load` as given.
    pub spec: String,
    /// `--load-cmd` as given.
    pub cmd: Option<String>,
    /// CPUs the load was pinned to, cpu-list.
    pub cpus: String,
    /// Process ids of the load processes.
    pub pids: Vec<u32>,
}

impl LoadSpec {
    /// What the results record about this load, with the pids of `running`.
    pub fn info(&self, running: Option<&RunningLoad>) -> LoadInfo {
        LoadInfo {
            spec: self.text.clone(),
            cmd: self.cmd.as_ref().map(|a| a.join(" ")),
            cpus: self.cpus.to_list(),
            pids: running.map(|l| l.pids()).unwrap_or_default(),
        }
    }
}

/// A load as described by the flags (`--load`, `--load-cmd`, `--load-cpus`) or by the
/// configuration's `[load]` (`spec`, `cmd`, `cpus`).
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadRequest<'a> {
    /// Built-in load, `cpu:N,vm:N:SIZE,io:N`.
    pub spec: Option<&'a str>,
    /// External command line.
    pub cmd: Option<&'a str>,
    /// CPUs for the load (cpu-list or mask).
    pub cpus: Option<&'a str>,
}

/// Which part of a [`LoadRequest`] is wrong; the caller names it as a flag or a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadField {
    /// `--load` / `[load] spec`.
    Spec,
    /// `--load-cmd` / `[load] cmd`.
    Cmd,
    /// `--load-cpus` / `[load] cpus`.
    Cpus,
}

/// Why a [`LoadRequest`] is not valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// A value that is not valid, and what was expected.
    Invalid {
        /// The offending part.
        field: LoadField,
        /// What was wrong and what was expected.
        message: String,
    },
    /// CPUs given without any load.
    CpusWithoutLoad,
}

impl LoadError {
    /// The message (the caller adds the flag or key and the value).
    pub fn message(&self) -> &str {
        match self {
            LoadError::Invalid { message, .. } => message,
            LoadError::CpusWithoutLoad => "needs --load or --load-cmd",
        }
    }
}

/// Validates a load description against the CPU topology; `None` when no load was asked
/// for. A command whose program cannot be found is an error here, before anything
/// starts.
pub fn validate(
    req: &LoadRequest<'_>,
    topo: &crate::sys::cpus::CpuTopology,
) -> Result<Option<LoadSpec>, LoadError> {
    let invalid = |field, message: String| LoadError::Invalid { field, message };
    let (workers, labels): (Vec<Worker>, Vec<String>) = match req.spec {
        Some(s) => parse_labelled(s)
            .map_err(|e| invalid(LoadField::Spec, e))?
            .into_iter()
            .unzip(),
        None => Default::default(),
    };
    let (cmd, cmd_path) = match req.cmd {
        Some(s) => {
            let argv = split_command(s).map_err(|e| invalid(LoadField::Cmd, e))?;
            let Some(path) = resolve_program(&argv[0]) else {
                return Err(invalid(
                    LoadField::Cmd,
                    format!(
                        "program '{}' not found (or not executable) in PATH",
                        crate::error::echo_part(&argv[0])
                    ),
                ));
            };
            (Some(argv), Some(path))
        }
        None => (None, None),
    };
    let cpus = match req.cpus {
        Some(s) => topo
            .where_to_run(s)
            .map_err(|e| invalid(LoadField::Cpus, e.message()))?,
        None => topo.run_default(),
    };
    if workers.is_empty() && cmd.is_none() {
        if req.cpus.is_some() {
            return Err(LoadError::CpusWithoutLoad);
        }
        return Ok(None);
    }
    Ok(Some(LoadSpec {
        workers,
        labels,
        text: req.spec.unwrap_or_default().to_string(),
        cmd,
        cmd_path,
        cpus,
        cpus_given: req.cpus.is_some(),
    }))
}

/// Starts `spec`'s processes for a measurement: first blocks the supervisor's signals in
/// the calling thread (see [`crate::sys::signals::Signals::block`]), so a signal during
/// start-up is taken by the measurement's supervisor rather than ending rtbench with
/// the load half started; built-in workers are this executable re-run; io workers
/// write in `$TMPDIR`.
pub fn start(spec: &LoadSpec) -> crate::error::Result<RunningLoad> {
    let _ = crate::sys::signals::Signals::block();
    let exe = std::env::current_exe().map_err(|e| crate::error::Error::io("/proc/self/exe", e))?;
    RunningLoad::start(spec, &exe, &std::env::temp_dir())
}

/// Largest `vm:N:SIZE`, in bytes: the largest mapping `mmap(2)` can be on this machine
/// (`isize::MAX`; 2 GiB - 1 on armv7). A larger size would be truncated when it is
/// converted to the mapping length (`size_t`).
pub const MAX_VM_BYTES: u64 = isize::MAX as u64;

/// Parses a size like `64M`, `1G`, `4096`, `512K` (powers of 1024, optional `B`/`iB`,
/// any case) into bytes: at least one page, at most [`MAX_VM_BYTES`].
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err("size must start with a number (e.g. 64M, 1G)".into());
    }
    // The caller names the item (and the flag or key its value).
    let too_large = || format!("size out of range: at most {MAX_VM_BYTES} bytes");
    let n: u64 = num.parse().map_err(|_| too_large())?;
    let mult: u64 = match suffix.to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        "T" | "TB" | "TIB" => 1 << 40,
        _ => {
            return Err(format!(
                "unknown size suffix '{}': expected K, M, G or T (e.g. 64M)",
                crate::error::echo_part(suffix)
            ))
        }
    };
    let bytes = n
        .checked_mul(mult)
        .filter(|&b| b <= MAX_VM_BYTES)
        .ok_or_else(too_large)?;
    if bytes < 4096 {
        return Err("size below one page (4096 bytes)".into());
    }
    Ok(bytes)
}

/// Parses `cpu:N,vm:N[:SIZE],io:N` into workers (kinds may repeat; counts add up).
/// Errors name the offending item and what was expected.
pub fn parse_workers(s: &str) -> Result<Vec<Worker>, String> {
    Ok(parse_labelled(s)?.into_iter().map(|(w, _)| w).collect())
}

/// [`parse_workers`], each worker with the item it comes from as written (trimmed).
pub fn parse_labelled(s: &str) -> Result<Vec<(Worker, String)>, String> {
    let mut v = Vec::new();
    // An item is named only among several: the caller shows the whole value.
    let several = s.contains(',');
    for item in s.split(',').map(str::trim) {
        let named = |m: String| {
            if several {
                format!("'{}': {m}", crate::error::echo_part(item))
            } else {
                m
            }
        };
        if item.is_empty() {
            return Err("empty item; expected cpu:N, vm:N:SIZE or io:N separated by commas".into());
        }
        let parts: Vec<&str> = item.split(':').collect();
        let count = |p: Option<&&str>| -> Result<usize, String> {
            match p.map(|s| s.parse::<usize>()) {
                Some(Ok(n)) if (1..=1024).contains(&n) => Ok(n),
                _ => Err(named(format!(
                    "expected a worker count of 1..1024 after '{}:'",
                    crate::error::echo_part(parts[0])
                ))),
            }
        };
        match parts[0] {
            "cpu" | "io" if parts.len() == 2 => {
                let n = count(parts.get(1))?;
                let w = if parts[0] == "cpu" {
                    Worker::Cpu
                } else {
                    Worker::Io
                };
                v.extend(std::iter::repeat((w, item.to_string())).take(n));
            }
            "vm" if parts.len() == 2 || parts.len() == 3 => {
                let n = count(parts.get(1))?;
                let bytes = match parts.get(2) {
                    Some(sz) => parse_size(sz).map_err(named)?,
                    None => DEFAULT_VM_BYTES,
                };
                v.extend(std::iter::repeat((Worker::Vm { bytes }, item.to_string())).take(n));
            }
            "cpu" | "io" | "vm" => {
                return Err(named("expected cpu:N, vm:N:SIZE or io:N".into()));
            }
            other => {
                let within = if several {
                    format!(" in '{}'", crate::error::echo_part(item))
                } else {
                    String::new()
                };
                return Err(format!(
                    "unknown load kind '{}'{within}: expected cpu, vm or io (use --load-cmd for anything else)",
                    crate::error::echo_part(other)
                ));
            }
        }
    }
    if v.len() > 1024 {
        return Err(format!("{} workers; expected at most 1024", v.len()));
    }
    Ok(v)
}

/// Splits a command line the way a POSIX shell splits words: blanks separate words,
/// single quotes keep everything literally, double quotes keep blanks, a backslash
/// escapes the next character. No expansion of any kind.
pub fn split_command(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x) => cur.push(x),
                            None => return Err("unterminated double quote".into()),
                        },
                        Some(x) => cur.push(x),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(x) => cur.push(x),
                    None => return Err("trailing backslash".into()),
                }
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    if words.is_empty() {
        return Err("empty command".into());
    }
    Ok(words)
}

/// Resolves `prog` as execvp(3) would: a name with a `/` is taken as a path, anything
/// else is looked up in `$PATH`. Returns the executable file, or `None`.
pub fn resolve_program(prog: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_exec = |p: &Path| {
        p.is_file()
            && p.metadata()
                .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
    };
    if prog.contains('/') {
        let p = PathBuf::from(prog);
        return is_exec(&p).then_some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(prog))
        .find(|p| is_exec(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_and_sizes() {
        let w = parse_workers("cpu:2,vm:1:64M,io:1").unwrap();
        assert_eq!(
            w,
            vec![
                Worker::Cpu,
                Worker::Cpu,
                Worker::Vm { bytes: 64 << 20 },
                Worker::Io
            ]
        );
        assert_eq!(
            parse_workers("vm:1").unwrap(),
            vec![Worker::Vm {
                bytes: DEFAULT_VM_BYTES
            }]
        );
        assert!(parse_workers("vm:1:10Q")
            .unwrap_err()
            .contains("unknown size suffix 'Q'"));
        assert!(parse_workers("disk:2")
            .unwrap_err()
            .contains("unknown load kind 'disk'"));
        assert!(parse_workers("cpu:0").unwrap_err().contains("1..1024"));
        assert!(parse_workers("cpu").unwrap_err().contains("expected cpu:N"));
        assert!(parse_workers("cpu:1,").is_err());
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        assert_eq!(parse_size("512KiB").unwrap(), 512 << 10);
        assert!(parse_size("100").is_err());
    }

    #[test]
    fn command_splitting() {
        assert_eq!(
            split_command("stress-ng --cpu 2").unwrap(),
            vec!["stress-ng", "--cpu", "2"]
        );
        assert_eq!(
            split_command(r#"sh -c 'echo "a b"; sleep 1' x\ y"#).unwrap(),
            vec!["sh", "-c", "echo \"a b\"; sleep 1", "x y"]
        );
        assert_eq!(
            split_command(r#"a "b \" c" ''"#).unwrap(),
            vec!["a", "b \" c", ""]
        );
        assert!(split_command("a 'b").is_err());
        assert!(split_command("   ").is_err());
    }

    #[test]
    fn programs_resolve_through_path() {
        assert!(resolve_program("sh").is_some());
        assert!(resolve_program("/bin/sh").is_some());
        assert!(resolve_program("no-such-program-rtbench").is_none());
        assert!(resolve_program("/etc/passwd").is_none());
    }
}

//! The command line of the measuring commands read the way `getopt_long(3)` reads it,
//! so that whatever a harness passes to cyclictest or pmqtest means the same to
//! rtbench; and argv\[0\] dispatch, so that rtbench can be installed *as* `cyclictest`
//! and `pmqtest` (a symlink or hard link of that name behaves as `rtbench cyclic` /
//! `rtbench pmq`).
//!
//! [`prepare`] runs before clap. For `cyclic`, `pmq` and `pipe` it rewrites the
//! arguments after the subcommand into one canonical spelling — `--long` or
//! `--long=VALUE` — following glibc's `getopt_long` (`posix/getopt.c`) and what
//! cyclictest and pmqtest do on top of it (`process_options` in
//! `src/cyclictest/cyclictest.c` and `src/pmqtest/pmqtest.c`, rt-tests 2.4):
//!
//! - short options bundle (`-qmu`); a value is attached (`-h3500`), the next argument
//!   (`-h 3500`), or the rest of the same argument after spaces (`"-h 3500"`, as rteval
//!   passes it: the leading white space is dropped, numbers are then read as `atoi`
//!   reads them, see [`super::number`]);
//! - long options take `--name=VALUE` or `--name VALUE`, and any unambiguous prefix
//!   (`--dur 10`): abbreviations resolve first among the rt-tests program's own option
//!   names (so `--lo` is `--loops` as in cyclictest, although rtbench also has
//!   `--load`), then among rtbench's;
//! - `-a`/`-t` take a value attached (`-t4`, `--threads=4`), or — cyclictest's own
//!   look-ahead — the next argument (`-t 4`, `-a 2-3`) unless that is an option (see
//!   `look_ahead` for where rtbench takes more than cyclictest);
//! - `--` ends the options; empty arguments are dropped (rteval passes `""` when it
//!   has no interval); any other word that is not an option or a value is refused
//!   (cyclictest would silently ignore it);
//! - the last of repeated options wins (clap's `args_override_self`);
//! - an rt-tests option rtbench does not implement ([`super::rt_tests`], the one list
//!   of them) is refused with one line saying so — never ignored;
//! - an unknown option is left as written, so clap reports it with its suggestion.
//!
//! For `pmq` (and so `pmqtest`), `-h` without a number is pmqtest's help (rtbench's
//! `pmq -h US` is a histogram, which pmqtest does not have).

use super::rt_tests::{self, HasArg, RtOption};
use crate::error::UsageError;
use clap::Args;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

/// A command whose arguments are read as `getopt_long` reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `rtbench cyclic`, or rtbench called as `cyclictest`.
    Cyclic,
    /// `rtbench pmq`, or rtbench called as `pmqtest`.
    Pmq,
    /// `rtbench pipe` (no rt-tests program: rtbench's own options only).
    Pipe,
    /// `rtbench oslat`, or rtbench called as `oslat`.
    Oslat,
}

impl Tool {
    /// The rtbench subcommand.
    pub fn subcommand(self) -> &'static str {
        match self {
            Tool::Cyclic => "cyclic",
            Tool::Pmq => "pmq",
            Tool::Pipe => "pipe",
            Tool::Oslat => "oslat",
        }
    }

    /// The rt-tests program it stands in for, its options, and the options that
    /// program had before rt-tests 2.0.
    fn program(self) -> (&'static str, &'static [RtOption], &'static [RtOption]) {
        match self {
            Tool::Cyclic => (
                "cyclictest",
                rt_tests::CYCLICTEST,
                rt_tests::CYCLICTEST_REMOVED,
            ),
            Tool::Pmq => ("pmqtest", rt_tests::PMQTEST, &[]),
            Tool::Pipe => ("", &[], &[]),
            Tool::Oslat => ("oslat", rt_tests::OSLAT, &[]),
        }
    }

    /// The tool called by the file name `name` (argv\[0\] without its directory).
    pub fn by_program_name(name: &str) -> Option<Tool> {
        match name {
            "cyclictest" => Some(Tool::Cyclic),
            "pmqtest" => Some(Tool::Pmq),
            "oslat" => Some(Tool::Oslat),
            _ => None,
        }
    }
}

/// The command line for clap, after argv\[0\] dispatch and normalisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// `rtbench SUBCOMMAND --long[=VALUE]…` for the measuring commands; the arguments
    /// unchanged for the others.
    pub args: Vec<OsString>,
    /// rtbench was called by the rt-tests program's name (`cyclictest`, `pmqtest`).
    pub as_rt_tests: Option<Tool>,
}

/// argv\[0\] dispatch and getopt normalisation of `args` (argv\[0\] included). Errors
/// are one line: an rt-tests option rtbench does not implement, an ambiguous
/// abbreviation, or a stray word.
pub fn prepare(args: &[OsString]) -> Result<Invocation, UsageError> {
    prepare_with_command(args).map(|(i, _)| i)
}

/// [`prepare`], and for a measuring command the built [`measuring_command`] its table
/// was read from, for [`super::parse::parse`] to parse with (built once: it is most of
/// the start-up's instructions).
pub fn prepare_with_command(
    args: &[OsString],
) -> Result<(Invocation, Option<clap::Command>), UsageError> {
    let called = args
        .first()
        .and_then(|a| Path::new(a).file_name())
        .and_then(|f| f.to_str())
        .and_then(Tool::by_program_name);
    let (tool, rest) = match called {
        Some(t) => (t, args.get(1..).unwrap_or_default()),
        None => {
            let tool = match args.get(1).and_then(|a| a.to_str()) {
                Some("cyclic") => Tool::Cyclic,
                Some("pmq") => Tool::Pmq,
                Some("pipe") => Tool::Pipe,
                Some("oslat") => Tool::Oslat,
                _ => {
                    let invocation = Invocation {
                        args: args.to_vec(),
                        as_rt_tests: None,
                    };
                    return Ok((invocation, None));
                }
            };
            (tool, &args[2..])
        }
    };
    let mut cmd = measuring_command(tool);
    cmd.build();
    let mut out = vec![OsString::from("rtbench"), OsString::from(tool.subcommand())];
    out.extend(Table::of(tool, &cmd).normalise(rest)?);
    let invocation = Invocation {
        args: out,
        as_rt_tests: called,
    };
    Ok((invocation, Some(cmd)))
}

/// `rtbench SUBCOMMAND` for one measuring command alone: the subcommand's arguments and
/// the settings its variant of [`super::Command`] declares (`disable_help_flag`,
/// `allow_negative_numbers`, `args_override_self`; the version propagated as `Cli`
/// does), without the other subcommands (parsed by [`super::parse::parse`]). Building the whole tree costs about ten
/// times the instructions of cyclictest's whole start-up, before the first sample
/// (`benches/cost_vs_cyclictest.py`); a unit test keeps this tree's arguments equal to
/// the whole tree's.
pub fn measuring_command(tool: Tool) -> clap::Command {
    let sub = clap::Command::new(tool.subcommand())
        .disable_help_flag(true)
        .allow_negative_numbers(true)
        .args_override_self(true);
    let sub = match tool {
        // oslat's -v is its version line (printed by `app/oslat.rs`), not clap's.
        Tool::Oslat => super::oslat::OslatArgs::augment_args(sub.disable_version_flag(true)),
        Tool::Cyclic => super::cyclic::CyclicArgs::augment_args(sub),
        Tool::Pmq => super::pmq::PmqArgs::augment_args(sub),
        Tool::Pipe => super::pipe::PipeArgs::augment_args(sub),
    };
    clap::Command::new("rtbench")
        .version(crate::VERSION)
        .propagate_version(true)
        .subcommand(sub)
}

/// How an option takes its value, as far as normalisation is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    No,
    Required,
    /// Attached only, or the next argument by [`look_ahead`].
    Optional,
}

/// One option of a [`Table`].
#[derive(Debug, Clone)]
struct Opt {
    /// rtbench's long name (the rt-tests name for an option rtbench lacks).
    long: String,
    /// Further long names (clap aliases).
    aliases: Vec<String>,
    short: Option<u8>,
    value: Value,
    /// The rt-tests program knows it (abbreviations resolve among these first).
    rt_tests: bool,
    /// An rt-tests option rtbench does not implement: what it does there.
    missing: Option<&'static str>,
    /// Matched by its full name only (options of older rt-tests versions).
    exact_only: bool,
}

impl Opt {
    fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.long.as_str()).chain(self.aliases.iter().map(String::as_str))
    }
}

/// What a long option name (or abbreviation) resolves to.
enum Found<'a> {
    One(&'a Opt),
    Ambiguous(Vec<&'a str>),
    Unknown,
}

/// The options of one measuring command: rtbench's (from its clap definition) and its
/// rt-tests program's ([`rt_tests`]).
#[derive(Debug)]
pub struct Table {
    tool: Tool,
    program: &'static str,
    opts: Vec<Opt>,
    /// pmqtest: `-h` without a number is `--help`.
    bare_h_is_help: bool,
}

impl Table {
    /// The table of `tool`.
    pub fn new(tool: Tool) -> Table {
        let mut cmd = measuring_command(tool);
        cmd.build();
        Table::of(tool, &cmd)
    }

    /// The table of `tool` read from its built [`measuring_command`] `cmd`.
    fn of(tool: Tool, cmd: &clap::Command) -> Table {
        let sub = cmd
            .find_subcommand(tool.subcommand())
            .expect("every Tool is a subcommand");
        let mut opts: Vec<Opt> = sub
            .get_arguments()
            .filter(|a| a.get_long().is_some())
            .map(|a| {
                let long = a.get_long().unwrap_or_default().to_string();
                let optional = a.get_num_args().is_some_and(|n| n.min_values() == 0);
                let value = if !a.get_action().takes_values() {
                    Value::No
                } else if optional {
                    Value::Optional
                } else {
                    Value::Required
                };
                Opt {
                    aliases: a
                        .get_all_aliases()
                        .unwrap_or_default()
                        .into_iter()
                        .map(String::from)
                        .collect(),
                    short: a.get_short().map(|c| c as u8),
                    value,
                    long,
                    rt_tests: false,
                    missing: None,
                    exact_only: false,
                }
            })
            .collect();
        let (program, known, removed) = tool.program();
        for (r, exact_only) in known
            .iter()
            .map(|r| (r, false))
            .chain(removed.iter().map(|r| (r, true)))
        {
            if let Some(o) = opts.iter_mut().find(|o| o.names().any(|n| n == r.long)) {
                o.rt_tests = true;
                continue;
            }
            opts.push(Opt {
                long: r.long.to_string(),
                aliases: Vec::new(),
                short: r.short.map(|c| c as u8),
                value: match r.has_arg {
                    HasArg::No => Value::No,
                    HasArg::Required => Value::Required,
                    HasArg::Optional => Value::Optional,
                },
                rt_tests: !exact_only,
                missing: Some(r.about),
                exact_only,
            });
        }
        Table {
            tool,
            program,
            opts,
            bare_h_is_help: tool == Tool::Pmq,
        }
    }

    fn short(&self, c: u8) -> Option<&Opt> {
        self.opts.iter().find(|o| o.short == Some(c))
    }

    /// getopt_long's matching: the exact name, else the one option the prefix starts
    /// (among the rt-tests program's names first, then all).
    fn long(&self, name: &[u8]) -> Found<'_> {
        if let Some(o) = self
            .opts
            .iter()
            .find(|o| o.names().any(|n| n.as_bytes() == name))
        {
            return Found::One(o);
        }
        if name.is_empty() {
            return Found::Unknown;
        }
        for rt_tests_only in [true, false] {
            let hits: Vec<&Opt> = self
                .opts
                .iter()
                .filter(|o| !o.exact_only && (o.rt_tests || !rt_tests_only))
                .filter(|o| o.names().any(|n| n.as_bytes().starts_with(name)))
                .collect();
            match hits.len() {
                0 => continue,
                1 => return Found::One(hits[0]),
                _ => return Found::Ambiguous(hits.iter().map(|o| o.long.as_str()).collect()),
            }
        }
        Found::Unknown
    }

    /// Refuses an rt-tests option rtbench does not implement; `written` is the option
    /// as the user wrote it.
    fn implemented(&self, o: &Opt, written: &str) -> Result<(), UsageError> {
        let Some(about) = o.missing else {
            return Ok(());
        };
        let long = format!("--{}", o.long);
        let named = if written == long {
            String::new()
        } else {
            format!(" {long}")
        };
        Err(UsageError {
            flag: written.to_string(),
            value: String::new(),
            message: format!(
                "{} option{named} ({about}) is not implemented by rtbench",
                self.program
            ),
        })
    }

    /// The error for a word that is neither an option nor the value of one (`w` as
    /// written, quoted), naming what the rt-tests program would do with it.
    fn unexpected(&self, w: &OsString) -> UsageError {
        UsageError {
            flag: format!("'{}'", crate::error::echo(&w.to_string_lossy())),
            value: String::new(),
            message: match self.tool {
                Tool::Oslat => "unexpected argument: not an option nor the value of one (oslat would ignore it; rtbench refuses it)".into(),
                Tool::Pipe => "unexpected argument: not an option nor the value of one".into(),
                _ => format!(
                    "unexpected argument: not an option nor the value of one ({} would ignore it; rtbench refuses it)",
                    self.program
                ),
            },
        }
    }

    /// Rewrites `args` (the arguments after the subcommand) into `--long` and
    /// `--long=VALUE`, in order; see the module documentation for the rules.
    pub fn normalise(&self, args: &[OsString]) -> Result<Vec<OsString>, UsageError> {
        let mut out = Vec::new();
        let mut words: Vec<&OsString> = Vec::new();
        let mut unknown = false;
        let mut i = 0;
        while i < args.len() {
            let whole = &args[i];
            let arg = whole.as_bytes();
            i += 1;
            if arg == b"--" {
                words.extend(&args[i..]);
                break;
            }
            if let Some(body) = arg.strip_prefix(b"--") {
                let (name, attached) = match body.iter().position(|&b| b == b'=') {
                    Some(p) => (&body[..p], Some(&body[p + 1..])),
                    None => (body, None),
                };
                let o = match self.long(name) {
                    Found::One(o) => o,
                    Found::Unknown => {
                        unknown = true;
                        out.push(whole.clone());
                        continue;
                    }
                    Found::Ambiguous(c) => return Err(ambiguous(name, &c)),
                };
                self.implemented(o, &format!("--{}", String::from_utf8_lossy(name)))?;
                let value = match (o.value, attached) {
                    (_, Some(v)) => Some(v),
                    (Value::No, None) => None,
                    (Value::Required, None) => args.get(i).map(|v| {
                        i += 1;
                        v.as_bytes()
                    }),
                    (Value::Optional, None) => look_ahead(args.get(i)).map(|v| {
                        i += 1;
                        v
                    }),
                };
                out.push(canonical(o, value));
            } else if arg.len() > 1 && arg[0] == b'-' {
                let mut j = 1;
                while j < arg.len() {
                    let c = arg[j];
                    j += 1;
                    let rest = &arg[j..];
                    if self.bare_h_is_help
                        && c == b'h'
                        && rest.is_empty()
                        && !args.get(i).is_some_and(reads_as_number)
                    {
                        out.push(OsString::from("--help"));
                        continue;
                    }
                    let Some(o) = self.short(c) else {
                        // Left as written for clap to report (a non-ASCII byte with
                        // the rest of its character).
                        unknown = true;
                        let end = if c.is_ascii() { j } else { arg.len() };
                        let mut w = vec![b'-'];
                        w.extend_from_slice(&arg[j - 1..end]);
                        out.push(OsString::from_vec(w));
                        j = end;
                        continue;
                    };
                    self.implemented(o, &format!("-{}", c as char))?;
                    let value = match o.value {
                        Value::No => None,
                        _ if !rest.is_empty() => {
                            j = arg.len();
                            Some(trim_c_space(rest))
                        }
                        Value::Required => args.get(i).map(|v| {
                            i += 1;
                            v.as_bytes()
                        }),
                        Value::Optional => look_ahead(args.get(i)).map(|v| {
                            i += 1;
                            v
                        }),
                    };
                    out.push(canonical(o, value));
                }
            } else if !arg.is_empty() {
                words.push(whole);
            }
        }
        histofall_takes_the_last(&mut out);
        let words: Vec<&OsString> = words.into_iter().filter(|w| !w.is_empty()).collect();
        if let Some(w) = words.first() {
            if unknown {
                // clap reports the unknown option first; the words follow `--` so
                // that no option takes them as its value.
                out.push(OsString::from("--"));
                out.extend(words.into_iter().cloned());
            } else {
                return Err(self.unexpected(w));
            }
        }
        Ok(out)
    }
}

/// cyclictest's `-h N` and `-H N` together (`-h 30 -H 30`): `-H` anywhere adds the
/// summary column and the last of them sets the buckets (`process_options` in
/// cyclictest.c, rt-tests 2.4: `-H` sets `histofall` and `histogram`, `-h` only
/// `histogram`). Rewritten into the one `--histofall=N` that means the same.
fn histofall_takes_the_last(out: &mut Vec<OsString>) {
    const H: &[u8] = b"--histogram=";
    const HALL: &[u8] = b"--histofall=";
    let either = |a: &OsString| a.as_bytes().starts_with(H) || a.as_bytes().starts_with(HALL);
    let value_of = |a: &OsString| {
        let b = a.as_bytes();
        let eq = b.iter().position(|&c| c == b'=').unwrap_or(b.len());
        b[(eq + 1).min(b.len())..].to_vec()
    };
    if out.iter().filter(|a| either(a)).count() < 2 {
        return;
    }
    // cyclictest stops at the first `-h`/`-H` whose value it cannot use (`atoi` reads
    // 0: its usage, exit 1): the first one rtbench cannot use either is kept as
    // written, the others dropped, for the plan to refuse it by its own name.
    let unusable = out.iter().position(|a| {
        either(a)
            && std::str::from_utf8(&value_of(a))
                .ok()
                .and_then(|v| super::number::us_usize_arg(v).ok())
                .map_or(true, |n| n == 0)
    });
    let keep = |out: &mut Vec<OsString>, k: usize| {
        let mut i = 0;
        out.retain(|a| {
            i += 1;
            i - 1 == k || !either(a)
        });
    };
    if let Some(z) = unusable {
        keep(out, z);
        return;
    }
    // Both flags: `-H` anywhere adds its column, the last one sets the buckets (the
    // same flag repeated is left to clap: the last one wins, as with getopt).
    if !out.iter().any(|a| a.as_bytes().starts_with(HALL))
        || !out.iter().any(|a| a.as_bytes().starts_with(H))
    {
        return;
    }
    let Some(last) = out.iter().rposition(either) else {
        return;
    };
    let mut value = HALL.to_vec();
    value.extend_from_slice(&value_of(&out[last]));
    out[last] = OsString::from_vec(value);
    keep(out, last);
}

/// The error for `--NAME` that abbreviates several long options (`candidates`, their
/// full names), as getopt_long reports it.
fn ambiguous(name: &[u8], candidates: &[&str]) -> UsageError {
    UsageError {
        flag: format!("--{}", String::from_utf8_lossy(name)),
        value: String::new(),
        message: format!(
            "ambiguous abbreviation; possibilities: --{}",
            candidates.join(" --")
        ),
    }
}

/// `--long` or `--long=VALUE`.
fn canonical(o: &Opt, value: Option<&[u8]>) -> OsString {
    let mut s = format!("--{}", o.long).into_bytes();
    if let Some(v) = value {
        s.push(b'=');
        s.extend_from_slice(v);
    }
    OsString::from_vec(s)
}

/// `s` without leading C white space (`"-h 3500"` → `3500`).
fn trim_c_space(s: &[u8]) -> &[u8] {
    let n = s
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
        .count();
    &s[n..]
}

/// Whether `a` starts with a number as `atoi` reads it.
fn reads_as_number(a: &OsString) -> bool {
    super::number::leading_integer(&a.to_string_lossy()).is_ok()
}

/// The value of `-a`/`-t` given without one: the next argument, unless it is an
/// option. cyclictest takes it when `atoi` reads a non-zero number from it (for `-a`
/// also when it starts with `0` or `!`) and silently ignores any other word; rtbench
/// takes every word that is not an option — a number, a cpu-list like `all`, `0x3`,
/// `!2` or `N`, and also `-t x` or `-a abc`, which it then refuses by name — and a
/// negative number (`-t -1`, which cyclictest takes too).
fn look_ahead(next: Option<&OsString>) -> Option<&[u8]> {
    let n = next?;
    (!n.as_bytes().starts_with(b"-") || reads_as_number(n)).then_some(n.as_bytes())
}

#[cfg(test)]
#[path = "getopt_tests.rs"]
mod tests;

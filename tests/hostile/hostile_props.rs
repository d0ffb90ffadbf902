//! Property tests of every parser and every CPU-list, duration and size conversion:
//! generated odd and hostile input — numbers at and around 2^31, 2^32,
//! 2^63, 2^64 and the ×1000 boundaries, multi-byte and control characters, truncated
//! and corrupted documents — must never panic, and whatever is accepted must carry the
//! exact value of the input (computed here in 128-bit arithmetic), never a wrapped or
//! saturated one. Refusals are one line.
//!
//! The runs are deterministic: a fixed ChaCha seed ([`SEED`], or
//! `RTBENCH_PROPTEST_SEED=N` for another one), and a case count per property that
//! finds every one of the faults fixed with these tests when its fix is reverted
//! (docs/TESTING.md has the
//! figures). `PROPTEST_CASES=N` (proptest's own variable) sets the count for every
//! property but those that build files for each case, whose count is
//! `RTBENCH_PROPTEST_FILE_CASES=N`; the long run:
//!
//! ```sh
//! PROPTEST_CASES=100000 RTBENCH_PROPTEST_FILE_CASES=5000 \
//!     cargo test --release --locked --test hostile hostile_props -- --nocapture
//! ```
//!
//! Each property prints `NAME: N cases, 0 failures` on standard error (`--nocapture`),
//! or, when it fails, the case at which the first failure was generated and the
//! shrunk input.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use rtbench::cpuset::CpuSet;
use std::ffi::OsString;
use std::sync::atomic::{AtomicU64, Ordering};

/// The fixed seed of the CI runs.
const SEED: [u8; 32] = *b"rtbench issue 17: hostile input!";

fn seed() -> [u8; 32] {
    match std::env::var("RTBENCH_PROPTEST_SEED") {
        Ok(s) => {
            let n: u64 = s.trim().parse().expect("RTBENCH_PROPTEST_SEED: a number");
            let mut out = SEED;
            out[..8].copy_from_slice(&n.to_le_bytes());
            out
        }
        Err(_) => SEED,
    }
}

/// Runs `test` on `cases` values of `strategy` (or `PROPTEST_CASES`) from the fixed
/// seed; a failure (assertion or panic) fails the test with the number of the case
/// that first failed and the shrunk input.
fn check<S: Strategy>(
    name: &str,
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    run(
        name,
        env_cases("PROPTEST_CASES").unwrap_or(cases),
        strategy,
        test,
    )
}

/// [`check`] for a property whose every case builds files (a fake `/proc`+`/sys` tree,
/// a monitor directory with FIFOs, links and devices) and runs tuning, diagnose or the
/// monitor's file handling on them: tens of milliseconds a case instead of
/// microseconds, so its count for the long run is `RTBENCH_PROPTEST_FILE_CASES`, not
/// `PROPTEST_CASES`.
fn check_on_files<S: Strategy>(
    name: &str,
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let n = env_cases("RTBENCH_PROPTEST_FILE_CASES").unwrap_or(cases);
    run(name, n, strategy, test)
}

fn env_cases(var: &str) -> Option<u32> {
    std::env::var(var).ok().and_then(|c| c.trim().parse().ok())
}

fn run<S: Strategy>(
    name: &str,
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed()));
    // Calls of `test` (generated cases, then shrinking) and the first one that failed.
    let calls = AtomicU64::new(0);
    let first = AtomicU64::new(u64::MAX);
    let result = runner.run(&strategy, |v| {
        let n = calls.fetch_add(1, Ordering::Relaxed) + 1;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| test(v))).unwrap_or_else(
            |p| {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                Err(TestCaseError::fail(format!("panicked: {msg}")))
            },
        );
        if r.is_err() {
            first.fetch_min(n, Ordering::Relaxed);
        }
        r
    });
    match result {
        Ok(()) => eprintln!("{name}: {cases} cases, 0 failures"),
        Err(e) => panic!(
            "{name}: first failure at case {} of {cases}: {e}",
            first.load(Ordering::Relaxed)
        ),
    }
}

/// A parser's refusal as the user sees it (the flag, the value, the message: one line
/// on standard error) has no line break or other control character.
fn one_line_error(flag: &str, value: &str, message: &str) -> Result<(), TestCaseError> {
    let shown = rtbench::error::Error::usage(flag, value, message).to_string();
    prop_assert!(
        !shown.contains(|c: char| (c.is_control() && c != '\t') || c == '\u{2028}'),
        "not one line: {shown:?}"
    );
    Ok(())
}

// ---- Generators ----

/// Numbers where conversions break: the int/long limits, the ×1000 and ×1024 limits,
/// the largest duration in ns, and values around them.
const EDGES: &[u128] = &[
    0,
    1,
    4095,
    4096,
    4097,
    1_000_000,
    1 << 31,
    1 << 32,
    1 << 53,
    1 << 59,
    1 << 63,
    u64::MAX as u128,
    1 << 64,
    (u64::MAX / 1000) as u128,
    (u64::MAX / 1024) as u128,
    (u64::MAX / 1_000_000_000) as u128,
    (i64::MAX / 1_000_000_000) as u128,
    (i64::MAX / 86_400_000_000_000) as u128,
    (isize::MAX as u128) / 1024,
    100_000_000_000_000_000_000,
];

/// A non-negative number as decimal digits: small, an edge ±2, any u64, or longer than
/// any integer type.
fn digits() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0u64..3000).prop_map(|n| n.to_string()),
        4 => (proptest::sample::select(EDGES), -2i32..=2)
            .prop_map(|(e, d)| e.saturating_add_signed(d as i128).to_string()),
        2 => any::<u64>().prop_map(|n| n.to_string()),
        1 => "[0-9]{20,40}",
    ]
}

/// A u64 that is often an edge.
fn hostile_u64() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => 0u64..3000,
        4 => (proptest::sample::select(EDGES), -2i32..=2).prop_map(|(e, d)| {
            u64::try_from(e.saturating_add_signed(d as i128)).unwrap_or(u64::MAX)
        }),
        2 => any::<u64>(),
    ]
}

/// Odd text: printable and control characters, multi-byte ones, line separators.
fn odd_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,12}",
        "[ -~]{0,12}",
        proptest::collection::vec(
            proptest::sample::select(vec![
                "é", "\n", "\r", "\t", "\u{2028}", "\x1b[31m", "\u{0}", "\"\"\"", "0", "-", ":",
                "/", ",", "+", "ÿ", "💥", "\u{85}",
            ]),
            0..6
        )
        .prop_map(|v| v.concat()),
    ]
}

/// A number as a C `atoi` reader might get it: white space, a sign, leading zeros,
/// trailing junk.
fn c_number() -> impl Strategy<Value = String> {
    (
        "[ \t]{0,2}",
        proptest::sample::select(vec!["", "", "+", "-"]),
        "0{0,2}",
        digits(),
        prop_oneof![3 => Just(String::new()), 1 => odd_text()],
    )
        .prop_map(|(ws, sign, z, d, junk)| format!("{ws}{sign}{z}{d}{junk}"))
}

/// A duration as `-D` or `duration =` might be written.
fn duration_text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (digits(), proptest::sample::select(vec!["", "s", "S", "m", "M", "h", "H", "d", "D"]))
            .prop_map(|(n, s)| format!("{n}{s}")),
        1 => odd_text(),
        1 => c_number(),
    ]
}

/// A CPU list in the kernel syntax with hostile numbers and strides.
fn cpu_list() -> impl Strategy<Value = String> {
    let num = prop_oneof![4 => (0u64..10).prop_map(|n| n.to_string()), 2 => digits(), 1 => Just("N".to_string())];
    let region = (
        prop_oneof![
            3 => num.clone(),
            3 => (num.clone(), num.clone()).prop_map(|(a, b)| format!("{a}-{b}")),
            1 => Just("all".to_string()),
        ],
        prop_oneof![
            3 => Just(String::new()),
            2 => (digits(), digits()).prop_map(|(g, w)| format!(":{g}/{w}")),
            1 => (1u64..4, 1u64..6).prop_map(|(g, w)| format!(":{g}/{w}")),
        ],
    )
        .prop_map(|(r, s)| format!("{r}{s}"));
    prop_oneof![
        8 => proptest::collection::vec(region, 1..4).prop_map(|v| v.join(",")),
        1 => "0x[0-9a-fA-F,]{0,20}",
        1 => odd_text(),
    ]
}

/// What `CpuSet::parse_list(s, nr)` must give, computed independently with 128-bit
/// arithmetic from the kernel's definition (`bitmap_parselist()`), or `None` for an
/// error. Keeps the model's own cost bounded: a region is walked group by group.
fn cpu_list_model(s: &str, nr: u128) -> Option<Vec<u128>> {
    let s = s.trim();
    let mut out = std::collections::BTreeSet::new();
    if s.is_empty() {
        return Some(vec![]);
    }
    let num = |t: &str| -> Option<u128> {
        let t = t.trim();
        if t == "N" {
            return nr.checked_sub(1);
        }
        // usize in the implementation: the model refuses what usize cannot hold.
        Some(t.parse::<usize>().ok()? as u128)
    };
    // A stride's numbers are plain numbers (no N).
    let plain = |t: &str| -> Option<u128> { Some(t.trim().parse::<usize>().ok()? as u128) };
    for region in s.split(',') {
        let region = region.trim();
        let (range, stride) = match region.split_once(':') {
            Some((r, st)) => (r, Some(st)),
            None => (region, None),
        };
        let (a, b) = if range.eq_ignore_ascii_case("all") {
            (0, nr.checked_sub(1)?)
        } else {
            match range.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => {
                    let a = num(range)?;
                    (a, a)
                }
            }
        };
        if a > b || b >= nr {
            return None;
        }
        let (g, w) = match stride {
            None => (1, 1),
            Some(st) => {
                let (g, w) = st.split_once('/')?;
                let (g, w) = (plain(g)?, plain(w)?);
                if g == 0 || w == 0 || g > w {
                    return None;
                }
                (g, w)
            }
        };
        let mut start = a;
        while start <= b {
            let mut c = start;
            while c < start + g && c <= b {
                out.insert(c);
                c += 1;
            }
            start += w;
        }
    }
    Some(out.into_iter().collect())
}

// ---- CPU lists ----

#[test]
fn cpu_lists_parse_to_exactly_the_kernels_set() {
    let nrs = proptest::sample::select(vec![0usize, 1, 2, 8, 64, 1024]);
    check("cpu lists", 3000, (cpu_list(), nrs), |(s, nr)| {
        let got = CpuSet::parse_list(&s, nr);
        // "N" and "all" use nr here (Keywords::Kernel).
        let model = cpu_list_model(&s, nr as u128);
        match (&got, &model) {
            (Ok(set), Some(m)) => {
                let v: Vec<u128> = set.iter().map(|c| c as u128).collect();
                prop_assert_eq!(&v, m, "{:?} with {} CPUs", s, nr);
            }
            (Err(e), None) => one_line_error("-a", &s, &e.0)?,
            (Ok(set), None) => {
                return Err(TestCaseError::fail(format!(
                    "{s:?} with {nr} CPUs: accepted as {} but the kernel refuses it",
                    set.to_list()
                )))
            }
            (Err(e), Some(m)) => {
                return Err(TestCaseError::fail(format!(
                    "{s:?} with {nr} CPUs: refused ({e}) but is {m:?}"
                )))
            }
        }
        // Whatever is accepted lies below nr_cpu_ids.
        if let Ok(set) = got {
            prop_assert!(set.last().map_or(true, |l| l < nr.max(1)));
        }
        Ok(())
    });
}

#[test]
fn cpu_lists_where_to_run_stay_within_the_online_cpus() {
    use rtbench::sys::cpus::CpuTopology;
    let shapes = proptest::sample::select(vec![1usize, 2, 4, 112]);
    check(
        "cpu lists (where to run)",
        2000,
        (cpu_list(), shapes),
        |(s, n)| {
            let topo = CpuTopology::uniform(n, "");
            match topo.where_to_run(&s) {
                Ok(set) => {
                    prop_assert!(!set.is_empty());
                    prop_assert!(set.is_subset(&topo.online), "{s:?}: {set:?}");
                    prop_assert!(set.is_subset(&topo.allowed), "{s:?}: {set:?}");
                }
                Err(e) => one_line_error("-a", &s, &e.message())?,
            }
            let _ = topo.boot_list(&s);
            Ok(())
        },
    );
}

// ---- Durations and sizes ----

#[test]
fn durations_are_exact_and_never_wrap_the_clock() {
    check("durations", 3000, duration_text(), |s| {
        let got = rtbench::duration::parse(&s);
        // The model: digits and one suffix, in 128 bits.
        let t = s.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, suffix) = t.split_at(split);
        let mult: Option<u128> = match suffix {
            "" | "s" | "S" => Some(1),
            "m" | "M" => Some(60),
            "h" | "H" => Some(3600),
            "d" | "D" => Some(86_400),
            _ => None,
        };
        let secs = match (num.parse::<u128>(), mult) {
            (Ok(n), Some(m)) if !num.is_empty() => n.checked_mul(m),
            _ => None,
        };
        match got {
            Ok(d) => {
                prop_assert_eq!(Some(d.as_secs() as u128), secs, "{:?}", s);
                // Added to the monotonic clock in ns (an i64) it must not wrap.
                prop_assert!(d.as_nanos() < (1u128 << 62), "{s:?} accepted as {d:?}");
            }
            Err(e) => {
                one_line_error("-D", &s, &e)?;
                // A well-formed duration is refused only when it is longer than
                // cyclictest's int of seconds (2^31 - 1 s).
                if let Some(v) = secs {
                    prop_assert!(v > i32::MAX as u128, "{s:?} refused: {e}");
                }
            }
        }
        Ok(())
    });
}

#[test]
fn load_specs_and_sizes_are_exact() {
    use rtbench::load::{parse_labelled, parse_size, Worker};
    let suffix = proptest::sample::select(vec![
        "", "B", "K", "k", "KiB", "M", "MB", "G", "gib", "T", "Q",
    ]);
    let size = (digits(), suffix)
        .prop_map(|(n, s)| format!("{n}{s}"))
        .boxed();
    let item = prop_oneof![
        (
            proptest::sample::select(vec!["cpu", "io", "vm", "disk"]),
            digits()
        )
            .prop_map(|(k, n)| format!("{k}:{n}")),
        (digits(), size.clone()).prop_map(|(n, s)| format!("vm:{n}:{s}")),
        odd_text(),
    ];
    let spec = proptest::collection::vec(item, 1..4).prop_map(|v| v.join(","));
    check(
        "load specs and sizes",
        3000,
        (spec, size),
        |(spec, size)| {
            match parse_size(&size) {
                Ok(b) => {
                    let t = size.trim();
                    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
                    let n: u128 = t[..split].parse().unwrap();
                    let mult: u128 = match t[split..].to_ascii_uppercase().as_str() {
                        "" | "B" => 1,
                        "K" | "KB" | "KIB" => 1 << 10,
                        "M" | "MB" | "MIB" => 1 << 20,
                        "G" | "GB" | "GIB" => 1 << 30,
                        _ => 1 << 40,
                    };
                    prop_assert_eq!(b as u128, n * mult, "{:?}", size);
                    // The mapping length is a size_t / isize: the size must convert exactly.
                    prop_assert!(b <= isize::MAX as u64, "{size:?} accepted as {b} bytes");
                }
                Err(e) => one_line_error("--load", &size, &e)?,
            }
            match parse_labelled(&spec) {
                Ok(v) => {
                    prop_assert!(!v.is_empty() && v.len() <= 1024);
                    for (w, _) in &v {
                        if let Worker::Vm { bytes } = w {
                            prop_assert!(*bytes <= isize::MAX as u64);
                        }
                    }
                }
                Err(e) => one_line_error("--load", &spec, &e)?,
            }
            let _ = rtbench::load::split_command(&spec);
            Ok(())
        },
    );
}

#[test]
fn c_numbers_read_as_strtol_without_wrapping() {
    use rtbench::cli::number::{i32_arg, leading_integer, u64_arg, usize_arg};
    check(
        "atoi-style numbers",
        3000,
        prop_oneof![c_number(), odd_text()],
        |s| {
            let model: Option<i128> = {
                let t = s.trim_start_matches([' ', '\t', '\n', '\u{b}', '\u{c}', '\r']);
                let (neg, t) = match t.as_bytes().first() {
                    Some(b'-') => (true, &t[1..]),
                    Some(b'+') => (false, &t[1..]),
                    _ => (false, t),
                };
                let d: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
                d.parse::<i128>().ok().map(|v| if neg { -v } else { v })
            };
            let got = leading_integer(&s).ok();
            if let Some(g) = got {
                prop_assert_eq!(Some(g), model, "{:?}", s);
            }
            match u64_arg(&s) {
                Ok(v) => prop_assert_eq!(Some(v as i128), model),
                Err(e) => one_line_error("-i", &s, &e)?,
            }
            if let Ok(v) = usize_arg(&s) {
                prop_assert_eq!(Some(v as i128), model);
            }
            if let Ok(v) = i32_arg(&s) {
                prop_assert_eq!(Some(v as i128), model);
            }
            Ok(())
        },
    );
}

// ---- Command lines: getopt → clap → plan ----

/// An argv of a measuring command: flags getopt-style (separate, attached, `=`), with
/// hostile values. No output paths (planning probes them in the file system).
fn argv(cmd: &'static str) -> impl Strategy<Value = Vec<String>> {
    let flag = prop_oneof![
        (
            proptest::sample::select(vec![
                "-t",
                "-i",
                "-d",
                "-h",
                "-H",
                "-b",
                "-p",
                "-l",
                "--latency",
                "-T",
                "-f"
            ]),
            c_number()
        ),
        (Just("-a"), cpu_list()),
        (Just("--mainaffinity"), cpu_list()),
        (Just("-D"), duration_text()),
        (
            Just("--load"),
            proptest::sample::select(vec!["cpu:1", "vm:1:18014398509481983K", "vm:1:64M", "io:0"])
                .prop_map(String::from)
        ),
        (
            proptest::sample::select(vec!["-m", "-q", "-N", "-S", "-t"]),
            Just(String::new())
        ),
    ];
    let style = 0u8..3;
    proptest::collection::vec((flag, style), 0..6).prop_map(move |flags| {
        let mut v = vec!["rtbench".to_string(), cmd.to_string()];
        for ((f, val), style) in flags {
            if val.is_empty() {
                v.push(f.to_string());
            } else if style == 0 || !f.starts_with("--") && style == 2 {
                v.push(f.to_string());
                v.push(val);
            } else if f.starts_with("--") {
                v.push(format!("{f}={val}"));
            } else {
                v.push(format!("{f}{val}"));
            }
        }
        v
    })
}

fn parse_cli(words: &[String]) -> Option<rtbench::cli::Command> {
    use clap::Parser;
    let os: Vec<OsString> = words.iter().map(OsString::from).collect();
    let inv = rtbench::cli::getopt::prepare(&os).ok()?;
    rtbench::cli::Cli::try_parse_from(&inv.args)
        .ok()
        .map(|c| c.command)
}

/// The values of `flag` in `words` as the flag was given (last one wins).
fn value_of(words: &[String], flag: &str) -> Option<String> {
    let mut found = None;
    for (i, w) in words.iter().enumerate() {
        if w == flag {
            found = words.get(i + 1).cloned();
        } else if let Some(rest) = w.strip_prefix(flag).filter(|_| flag.len() == 2) {
            found = Some(rest.to_string());
        } else if let Some(rest) = w.strip_prefix(&format!("{flag}=")) {
            found = Some(rest.to_string());
        }
    }
    found
}

#[test]
fn cyclic_command_lines_plan_exact_values_or_refuse() {
    use rtbench::cli::Command;
    use rtbench::sys::cpus::CpuTopology;
    let shapes = proptest::sample::select(vec![1usize, 2, 8]);
    check(
        "cyclic argv",
        2000,
        (argv("cyclic"), shapes),
        |(words, n)| {
            let topo = CpuTopology::uniform(n, "");
            let Some(Command::Cyclic(args)) = parse_cli(&words) else {
                return Ok(());
            };
            let Ok(plan) = rtbench::plan::cyclic::cyclic(&args, &topo) else {
                return Ok(());
            };
            let spec = &plan.spec;
            prop_assert!(spec.threads.len() <= rtbench::plan::MAX_THREADS);
            for t in &spec.threads {
                prop_assert!(t.cpu.map_or(true, |c| topo.online.contains(c)), "{words:?}");
                prop_assert!(t.interval_us <= rtbench::plan::MAX_INTERVAL_US);
            }
            if let Some(d) = spec.control.duration {
                prop_assert!(
                    d.as_nanos() < 1u128 << 62,
                    "{words:?}: -D accepted as {d:?}"
                );
            }
            if let (Some(b), Some(ns)) = (value_of(&words, "-b"), spec.control.break_ns) {
                let us = rtbench::cli::number::leading_integer(&b).unwrap_or(0);
                let unit = if words.iter().any(|w| w == "-N") {
                    1
                } else {
                    1000
                };
                prop_assert_eq!(ns as i128, us * unit, "{:?}", words);
            }
            Ok(())
        },
    );
}

#[test]
fn pmq_and_load_command_lines_plan_exact_values_or_refuse() {
    use rtbench::cli::Command;
    use rtbench::sys::cpus::CpuTopology;
    let cmd = proptest::sample::select(vec!["pmq", "pipe", "load"]);
    let gen = cmd.prop_flat_map(argv);
    check("pmq/pipe/load argv", 1500, gen, |words| {
        let topo = CpuTopology::uniform(2, "");
        match parse_cli(&words) {
            Some(Command::Pmq(a)) => {
                if let Ok(p) = rtbench::plan::pair::pmq(&a, &topo) {
                    prop_assert!(p.spec.pairs.len() <= rtbench::plan::MAX_THREADS);
                    if let Some(d) = p.spec.control.duration {
                        prop_assert!(d.as_nanos() < 1u128 << 62, "{words:?}");
                    }
                }
            }
            Some(Command::Pipe(a)) => {
                if let Ok(p) = rtbench::plan::pair::pipe(&a, &topo) {
                    prop_assert!(p.spec.pairs.len() <= rtbench::plan::MAX_THREADS);
                }
            }
            Some(Command::Load(a)) => {
                if let Ok(p) = rtbench::plan::load::load_only(&a, &topo) {
                    if let Some(d) = p.duration {
                        prop_assert!(d.as_nanos() < 1u128 << 62, "{words:?}: {d:?}");
                    }
                    for w in &p.spec.workers {
                        if let rtbench::load::Worker::Vm { bytes } = w {
                            prop_assert!(*bytes <= isize::MAX as u64, "{words:?}");
                        }
                    }
                }
            }
            _ => {}
        }
        Ok(())
    });
}

#[test]
fn any_argv_words_never_panic() {
    let word = prop_oneof![
        odd_text(),
        proptest::sample::select(vec![
            "-", "--", "-t", "-a", "-h", "-D", "--json", "cyclic", "pmq", "-q"
        ])
        .prop_map(String::from),
        c_number(),
    ];
    let first = proptest::sample::select(vec!["rtbench", "cyclictest", "/usr/bin/pmqtest", "x"]);
    check(
        "argv words",
        3000,
        (first, proptest::collection::vec(word, 0..6)),
        |(a0, rest)| {
            let mut v = vec![OsString::from(a0)];
            v.extend(rest.iter().map(OsString::from));
            if let Err(e) = rtbench::cli::getopt::prepare(&v) {
                prop_assert!(!e.to_string().contains('\n'), "{e}");
            }
            Ok(())
        },
    );
}

// ---- Plot inputs ----

/// A cyclictest `-h`/`-H` dump: threads, rows, trailer, with hostile numbers; `cut`
/// truncates it, `garble` replaces one line.
#[derive(Debug, Clone)]
struct Dump {
    threads: usize,
    legacy: bool,
    sum_column: bool,
    rows: Vec<(u64, Vec<u64>)>,
    maxs: Vec<u64>,
    ovfs: Vec<u64>,
    cut: Option<usize>,
    garble: Option<(usize, String)>,
}

fn dump() -> impl Strategy<Value = Dump> {
    (1usize..4).prop_flat_map(|threads| {
        (
            Just(threads),
            any::<bool>(),
            any::<bool>(),
            proptest::collection::vec(
                (
                    hostile_u64(),
                    proptest::collection::vec(hostile_u64(), threads),
                ),
                0..5,
            ),
            proptest::collection::vec(hostile_u64(), threads),
            proptest::collection::vec(hostile_u64(), threads),
            prop_oneof![4 => Just(None), 1 => any::<usize>().prop_map(Some)],
            prop_oneof![4 => Just(None), 1 => (any::<usize>(), odd_text()).prop_map(Some)],
        )
            .prop_map(
                |(threads, legacy, sum_column, rows, maxs, ovfs, cut, garble)| Dump {
                    threads,
                    legacy,
                    sum_column,
                    rows,
                    maxs,
                    ovfs,
                    cut,
                    garble,
                },
            )
    })
}

impl Dump {
    /// Rows in bucket order, distinct buckets.
    fn sorted_rows(&self) -> Vec<(u64, Vec<u64>)> {
        let mut r = self.rows.clone();
        r.sort_by_key(|x| x.0);
        r.dedup_by_key(|x| x.0);
        r
    }

    fn text(&self) -> String {
        let mut s = String::from("# Histogram\n");
        let rows = self.sorted_rows();
        for (b, counts) in &rows {
            let mut cols: Vec<String> = counts.iter().map(|c| format!("{c:06}")).collect();
            if self.sum_column {
                // The sum as a 64-bit writer would print it (wrapping).
                let sum = counts.iter().fold(0u64, |a, c| a.wrapping_add(*c));
                cols.push(format!("{sum:06}"));
            }
            s.push_str(&format!("{b:06} {}\n", cols.join("\t")));
        }
        let join = |v: &[u64]| {
            v.iter()
                .map(|x| format!("{x:05}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        if self.legacy {
            let totals: Vec<u64> = (0..self.threads)
                .map(|t| rows.iter().fold(0u64, |a, r| a.wrapping_add(r.1[t])))
                .collect();
            s.push_str(&format!("# Total: {}\n", join(&totals)));
        }
        let ones = vec![1u64; self.threads];
        s.push_str(&format!("# Min Latencies: {}\n", join(&ones)));
        s.push_str(&format!("# Avg Latencies: {}\n", join(&ones)));
        s.push_str(&format!("# Max Latencies: {}\n", join(&self.maxs)));
        s.push_str(&format!("# Histogram Overflows: {}\n", join(&self.ovfs)));
        s.push_str("# Histogram Overflow at cycle number:\n");
        for t in 0..self.threads {
            s.push_str(&format!("# Thread {t}:\n"));
        }
        if let Some((i, g)) = &self.garble {
            let mut lines: Vec<String> = s.lines().map(String::from).collect();
            let n = lines.len();
            lines[i % n] = g.clone();
            s = lines.join("\n") + "\n";
        }
        if let Some(c) = self.cut {
            let mut c = c % (s.len() + 1);
            while !s.is_char_boundary(c) {
                c -= 1;
            }
            s.truncate(c);
        }
        s
    }
}

/// Checks that an accepted plot carries exact values and renders.
fn render_ok(
    plot: &rtbench::results::read::Histograms,
    x_max: Option<f64>,
) -> Result<(), TestCaseError> {
    let svg = rtbench::plot::svg::render(plot, None, x_max);
    prop_assert!(svg.ends_with("</svg>\n"));
    prop_assert!(roxmltree::Document::parse(&svg).is_ok(), "not XML");
    Ok(())
}

fn odd_f64() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![
        3 => Just(None),
        1 => proptest::sample::select(vec![5e-324, 0.0, -1.0, f64::NAN, f64::INFINITY, 1e300, 1e-9, 0.001, 100.0, rtbench::plot::svg::MAX_X_MAX_US]).prop_map(Some),
        1 => any::<f64>().prop_map(Some),
    ]
}

#[test]
fn cyclictest_dumps_parse_to_exact_numbers_or_refuse() {
    check("plot: -h dumps", 3000, (dump(), odd_f64()), |(d, x_max)| {
        let text = d.text();
        let Ok(plot) = rtbench::results::read::parse("d", text.as_bytes(), None) else {
            return Ok(());
        };
        render_ok(&plot, x_max)?;
        if d.cut.is_some() || d.garble.is_some() {
            return Ok(());
        }
        let rows = d.sorted_rows();
        for (t, c) in plot.curves.iter().enumerate() {
            let want: Vec<(u128, u64)> = rows
                .iter()
                .filter(|r| r.1[t] > 0)
                .map(|r| (r.0 as u128 * 1000, r.1[t]))
                .collect();
            let got: Vec<(u128, u64)> = c.buckets.iter().map(|b| (b.0 as u128, b.1)).collect();
            prop_assert_eq!(got, want, "thread {}", t);
            prop_assert_eq!(
                c.max_ns as u128,
                d.maxs[t] as u128 * 1000,
                "thread {} max",
                t
            );
            // Every bucket's end and every sample count fit (nothing wrapped).
            prop_assert!(rows
                .iter()
                .all(|r| (r.0 as u128 + 1) * 1000 <= u64::MAX as u128));
            let samples: u128 =
                rows.iter().map(|r| r.1[t] as u128).sum::<u128>() + d.ovfs[t] as u128;
            prop_assert!(
                samples <= u64::MAX as u128,
                "thread {t}: {samples} samples accepted"
            );
        }
        // An -H sum column equals its row only when the row's true sum fits: a column
        // that matches after wrapping is not a valid dump.
        if d.sum_column {
            for r in &rows {
                let sum: u128 = r.1.iter().map(|&c| c as u128).sum();
                prop_assert!(
                    sum <= u64::MAX as u128,
                    "bucket {}: -H sum column accepted for counts adding up to {}",
                    r.0,
                    sum
                );
            }
        }
        Ok(())
    });
}

/// An rt-tests / rtbench `--json` document with hostile numbers and dates.
fn rt_tests_json() -> impl Strategy<Value = (serde_json::Value, bool)> {
    let date = prop_oneof![
        (0i64..253_402_300_799).prop_map(rtbench::date::rfc2822_utc),
        (0i64..4_000_000_000, odd_text()).prop_map(|(s, z)| {
            let d = rtbench::date::rfc2822_utc(s);
            format!("{} {z}", &d[..d.len() - 6])
        }),
        odd_text(),
    ];
    let thread = (
        proptest::collection::vec((hostile_u64(), hostile_u64()), 0..5),
        hostile_u64(),
        hostile_u64(),
    );
    (
        proptest::collection::vec(thread, 1..3),
        any::<bool>(),
        prop_oneof![2 => Just(None), 1 => hostile_u64().prop_map(Some)],
        date.clone(),
        date,
        prop_oneof![Just(None), digits().prop_map(Some)],
    )
        .prop_map(|(threads, ns, ext_bucket, start, end, h)| {
            let mut map = serde_json::Map::new();
            let mut ext = Vec::new();
            for (i, (hist, cycles, max)) in threads.iter().enumerate() {
                let h: serde_json::Map<String, serde_json::Value> = hist
                    .iter()
                    .map(|(k, n)| (k.to_string(), (*n).into()))
                    .collect();
                map.insert(
                    i.to_string(),
                    serde_json::json!({"histogram": h, "cycles": cycles, "max": max, "cpu": i}),
                );
                if let Some(b) = ext_bucket {
                    ext.push(serde_json::json!({"thread": i, "histogram_bucket_ns": b}));
                }
            }
            let mut doc = serde_json::json!({
                "file_version": 1,
                "start_time": start,
                "end_time": end,
                "thread": map,
            });
            if ns {
                doc["resolution_in_ns"] = 1.into();
            }
            if let Some(h) = h {
                doc["cmdline:"] = format!("cyclictest -q -h {h}").into();
            }
            if ext_bucket.is_some() {
                doc["rtbench"] = serde_json::json!({ "threads": ext });
            }
            (doc, ns)
        })
}

#[test]
fn rt_tests_json_parses_to_exact_numbers_or_refuses() {
    check(
        "plot: rt-tests JSON",
        2000,
        (rt_tests_json(), odd_f64()),
        |((doc, ns), x_max)| {
            let text = doc.to_string();
            let Ok(plot) = rtbench::results::read::parse("j", text.as_bytes(), None) else {
                return Ok(());
            };
            render_ok(&plot, x_max)?;
            let unit: u128 = if ns { 1 } else { 1000 };
            for c in &plot.curves {
                let t = &doc["thread"][c.thread.to_string()];
                let bucket = doc["rtbench"]["threads"][c.thread]["histogram_bucket_ns"]
                    .as_u64()
                    .map_or(unit, u128::from);
                let mut want: Vec<(u128, u64)> = t["histogram"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(_, n)| n.as_u64() != Some(0))
                    .map(|(k, n)| (k.parse::<u128>().unwrap() * bucket, n.as_u64().unwrap()))
                    .collect();
                want.sort_unstable();
                let got: Vec<(u128, u64)> = c.buckets.iter().map(|b| (b.0 as u128, b.1)).collect();
                prop_assert_eq!(got, want);
                prop_assert!(c
                    .buckets
                    .iter()
                    .all(|b| b.0 as u128 + bucket <= u64::MAX as u128));
                let binned: u128 = c.buckets.iter().map(|b| b.1 as u128).sum();
                prop_assert!(binned + c.overflows as u128 <= u64::MAX as u128);
                if let Some(m) = t["max"].as_u64() {
                    prop_assert_eq!(c.max_ns as u128, m as u128 * unit, "max");
                }
            }
            Ok(())
        },
    );
}

#[test]
fn dates_parse_exactly_or_not_at_all() {
    use rtbench::results::read::json::parse_rfc2822;
    let text = prop_oneof![
        (i64::MIN / 2..i64::MAX / 2).prop_map(|s| (Some(s), rtbench::date::rfc2822_utc(s))),
        odd_text().prop_map(|t| (None, t)),
        (0i64..4_000_000_000, 0usize..31, odd_text()).prop_map(|(s, at, junk)| {
            let mut d = rtbench::date::rfc2822_utc(s);
            let mut at = at.min(d.len());
            while !d.is_char_boundary(at) {
                at -= 1;
            }
            d.insert_str(at, &junk);
            (None, d)
        }),
        // The zone: a sign and digits mixed with multi-byte characters.
        (
            0i64..4_000_000_000,
            proptest::sample::select(vec!["+", "-"]),
            proptest::collection::vec(
                proptest::sample::select(vec!["0", "1", "5", "é", "💥"]),
                1..5
            ),
        )
            .prop_map(|(s, sign, zone)| {
                let d = rtbench::date::rfc2822_utc(s);
                (
                    None,
                    format!("{}{sign}{}", &d[..d.len() - 5], zone.concat()),
                )
            }),
    ];
    check("dates", 3000, text, |(secs, t)| {
        let got = parse_rfc2822(&t);
        // Years 0..=9999 are read back exactly; others are not dates.
        if let Some(s) = secs {
            let year: i64 = t.split_whitespace().nth(3).unwrap().parse().unwrap();
            if (0..=9999).contains(&year) {
                prop_assert_eq!(got, Some(s), "{}", t);
            }
        }
        let _ = rtbench::date::utc_stamp(secs.unwrap_or(i64::MIN));
        let _ = rtbench::date::utc_stamp(i64::MAX);
        Ok(())
    });
}

// ---- Stored results ----

/// This machine's snapshot, read once.
fn sysinfo() -> rtbench::sys::info::SysInfo {
    static SI: std::sync::OnceLock<rtbench::sys::info::SysInfo> = std::sync::OnceLock::new();
    SI.get_or_init(|| rtbench::sys::info::SysInfo::read(&rtbench::sys::SysRoot::host()))
        .clone()
}

fn stored_run() -> impl Strategy<Value = rtbench::results::store::StoredRun> {
    use rtbench::results::summary::{TestSummary, ThreadSummary, Verdict};
    let thread = (
        proptest::collection::vec(hostile_u64(), 9),
        proptest::collection::vec((hostile_u64(), hostile_u64()), 0..4),
    )
        .prop_map(|(v, h)| ThreadSummary {
            thread: 0,
            cpu: Some(0),
            priority: 98,
            interval_us: v[8],
            count: v[0],
            min_ns: v[1],
            avg_ns: v[2],
            p50_ns: v[3],
            p90_ns: v[3],
            p99_ns: v[4],
            p999_ns: v[5],
            p9999_ns: v[6],
            high_nines_ns: None,
            max_ns: v[7],
            overruns: v[8],
            missed_periods: Some(v[8]),
            histogram: h.into_iter().map(|(a, b)| [a, b]).collect(),
        });
    (proptest::collection::vec(thread, 1..3), any::<i64>()).prop_map(|(threads, start)| {
        let threads: Vec<ThreadSummary> = threads
            .into_iter()
            .enumerate()
            .map(|(i, t)| ThreadSummary { thread: i, ..t })
            .collect();
        rtbench::results::store::StoredRun {
            rtbench_version: "t".into(),
            start_s: start,
            duration_s: 1.0,
            sysinfo: sysinfo(),
            config: serde_json::json!({}),
            tuning: serde_json::json!([]),
            load: String::new(),
            tests: vec![TestSummary {
                condition: None,
                msg_size: None,
                duration_s: None,
                histogram_us: None,
                test: "cyclic".into(),
                threads,
                explain: None,
            }],
            verdict: Verdict::new(vec![], vec![], vec![]),
            interrupted: false,
            origin: Default::default(),
            exit_code: Some(0),
            store_error: None,
            results_dir: None,
            hardware: None,
            conditions: Vec::new(),
            unit: None,
            attempt: None,
            unwritten: Vec::new(),
        }
    })
}

/// The figure a `report` table cell stands for, in ns, and how far it may be from the
/// exact value (its rounding).
fn cell_ns(cell: &str) -> (f64, f64) {
    if let Some(d) = cell.strip_suffix('d') {
        (d.parse::<f64>().unwrap() * 86_400e9, 43_200e9)
    } else if let Some(s) = cell.strip_suffix('s') {
        (s.parse::<f64>().unwrap() * 1e9, 0.5e9)
    } else {
        (cell.parse::<f64>().unwrap() * 1e3, 500.0)
    }
}

#[test]
fn stored_results_report_and_plot_their_exact_values() {
    check("stored results", 1500, stored_run(), |run| {
        let table = rtbench::report::table::render(&run);
        for (th, line) in run.tests[0]
            .threads
            .iter()
            .zip(table.lines().filter(|l| l.starts_with("cyclic")))
        {
            let cells: Vec<&str> = line.split_whitespace().collect();
            prop_assert_eq!(cells.len(), 10, "columns run together: {:?}", line);
            let (got, slack) = cell_ns(cells[6]);
            let want = th.max_ns as f64;
            prop_assert!(
                (got - want).abs() <= slack * 1.01 + want * 1e-12,
                "max {} ns shown as {:?}",
                th.max_ns,
                cells[6]
            );
        }
        let _ = rtbench::report::prometheus::render(&run);
        let text = serde_json::to_string(&run).unwrap();
        if let Ok(plot) = rtbench::results::read::parse("s", text.as_bytes(), None) {
            render_ok(&plot, None)?;
            for (c, th) in plot.curves.iter().zip(&run.tests[0].threads) {
                let want: u128 = th.histogram.iter().map(|p| p[1] as u128).sum();
                let got: u128 = c.buckets.iter().map(|b| b.1 as u128).sum();
                prop_assert_eq!(got, want);
            }
        }
        Ok(())
    });
}

// ---- Configuration ----

/// A TOML string value in one of its quotings; the triple-quoted one may span lines.
fn toml_string(s: String) -> impl Strategy<Value = String> {
    let escaped = s
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    let ok_literal = !s.contains(['\'', '\n']);
    let raw = s.clone();
    prop_oneof![
        Just(format!("\"{escaped}\"")),
        Just(if ok_literal {
            format!("'{raw}'")
        } else {
            format!("\"{escaped}\"")
        }),
        Just(format!(
            "\"\"\"{}\"\"\"",
            s.replace('\\', "\\\\").replace('"', "\\\"")
        )),
    ]
}

fn config_text() -> impl Strategy<Value = String> {
    let int_key = proptest::sample::select(vec![
        ("cyclic", "priority"),
        ("cyclic", "interval_us"),
        ("output", "keep"),
        ("limits", "max_us"),
        ("limits", "p999_us"),
        ("limits", "overruns"),
        ("limits.cyclic", "avg_us"),
        ("monitor", "store_kib"),
        ("monitor", "interval_us"),
        ("tuning.sysctl", "sched_rt_runtime_us"),
    ]);
    let int_value = prop_oneof![digits(), digits().prop_map(|d| format!("-{d}"))];
    let str_key = proptest::sample::select(vec![
        ("selftest", "duration", 0u8),
        ("monitor", "window", 0),
        ("cyclic", "cpus", 1),
        ("load", "cpus", 1),
        ("tuning", "isolated", 1),
        ("tuning", "housekeeping", 1),
        ("monitor", "cpus", 1),
        ("load", "spec", 2),
        ("output", "prometheus", 2),
        ("output", "results_dir", 2),
    ]);
    let str_entry = str_key.prop_flat_map(|(sec, key, kind)| {
        let v = match kind {
            0 => duration_text().boxed(),
            1 => cpu_list().boxed(),
            _ => odd_text().boxed(),
        };
        v.prop_flat_map(toml_string)
            .prop_map(move |v| (sec.to_string(), format!("{key} = {v}")))
    });
    let int_entry =
        (int_key, int_value).prop_map(|((s, k), v)| (s.to_string(), format!("{k} = {v}")));
    let limits_cpus = (cpu_list(), digits()).prop_flat_map(|(c, d)| {
        toml_string(c).prop_map(move |c| {
            (
                "[limits.cpus]".to_string(),
                format!("cpus = {c}\nmax_us = {d}"),
            )
        })
    });
    let entry = prop_oneof![3 => str_entry, 3 => int_entry, 1 => limits_cpus];
    proptest::collection::vec(entry, 1..4).prop_map(|entries| {
        // One header per section, keys in the order generated; `[[limits.cpus]]` is
        // an array of tables (each entry its own element), written last.
        let mut sections: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        let mut arrays = Vec::new();
        for (sec, kv) in entries {
            if sec.starts_with('[') {
                arrays.push(format!("[{sec}]\n{kv}\n"));
            } else {
                sections.entry(sec).or_default().push(kv);
            }
        }
        let mut s = String::new();
        for (sec, kvs) in sections {
            s.push_str(&format!("[{sec}]\n{}\n", kvs.join("\n")));
        }
        s.extend(arrays);
        s
    })
}

#[test]
fn configurations_hold_exact_values_or_refuse_on_one_line() {
    let root = rtbench::sys::SysRoot::host();
    check("configurations", 1500, config_text(), |text| {
        match rtbench::config::parse(&text, "c.toml", &root) {
            Ok(c) => {
                prop_assert!(
                    c.duration.as_nanos() < 1u128 << 62,
                    "{text}: {:?}",
                    c.duration
                );
                let l = &c.limits.default;
                for v in [l.max_us, l.avg_us, l.p99_us, l.p999_us, l.p9999_us]
                    .into_iter()
                    .flatten()
                {
                    prop_assert!(v as u128 * 1000 <= u64::MAX as u128, "{text}: limit {v} µs");
                }
                for r in &c.limits.per_cpus {
                    if let Some(v) = r.limits.max_us {
                        prop_assert!(v as u128 * 1000 <= u64::MAX as u128, "{text}: limit {v} µs");
                    }
                }
                for t in c.limits.per_test.values() {
                    if let Some(v) = t.avg_us {
                        prop_assert!(v as u128 * 1000 <= u64::MAX as u128, "{text}: limit {v} µs");
                    }
                }
            }
            Err(e) => {
                let s = e.to_string();
                prop_assert!(
                    !s.contains(|c: char| c.is_control() && c != '\t'),
                    "not one line: {s:?}"
                );
            }
        }
        Ok(())
    });
}

// ---- One-line messages ----

#[test]
fn one_line_leaves_no_line_break() {
    check("one_line", 3000, odd_text(), |s| {
        let o = rtbench::error::one_line(&s);
        prop_assert!(!o.contains(|c: char| c.is_control() && c != '\t'), "{o:?}");
        prop_assert!(!o.contains(['\u{2028}', '\u{2029}']), "{:?}", o);
        if !s.contains(|c: char| c.is_control() || c == '\u{2028}' || c == '\u{2029}') {
            prop_assert_eq!(o.as_ref(), s.as_str());
        }
        Ok(())
    });
}

// ---- Files rtbench keeps and files it reads (src/sys/kept.rs, SysRoot) ----

/// Runs `f` on a thread of its own and fails the case when it has not returned within
/// common::BOUND: blocking on a FIFO is one of the faults these properties look for
/// (the thread is left blocked; the test fails).
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(crate::common::BOUND) {
        Ok(Ok(v)) => v,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("{what}: still running after {:?}", crate::common::BOUND),
    }
}

/// What a hostile tree puts in place of a file.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Node {
    Fifo,
    Dangling,
    Loop,
    LinkToZero,
    Directory,
    /// A character device made with mknod(2) in the tree: 1,5 (zero) or 1,3 (null).
    Device(u32),
}

fn node() -> impl Strategy<Value = Node> {
    proptest::sample::select(vec![
        Node::Fifo,
        Node::Dangling,
        Node::Loop,
        Node::LinkToZero,
        Node::Directory,
        Node::Device(5),
        Node::Device(3),
    ])
}

/// Puts `node` at `path` (whatever was there removed).
fn place(path: &std::path::Path, node: Node) {
    use std::os::unix::ffi::OsStrExt;
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_dir_all(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let link = |to: &str| std::os::unix::fs::symlink(to, path).unwrap();
    match node {
        // SAFETY: a valid C string.
        Node::Fifo => assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0),
        Node::Dangling => link("no-such-file"),
        Node::Loop => link(path.file_name().unwrap().to_str().unwrap()),
        Node::LinkToZero => link("/dev/zero"),
        Node::Directory => std::fs::create_dir(path).unwrap(),
        Node::Device(minor) => {
            // SAFETY: a valid C string; mknod has no other preconditions.
            let rc =
                unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, minor)) };
            assert_eq!(rc, 0, "mknod {}", path.display());
        }
    }
}

/// Files below a tree root, relative, regular files only.
fn tree_files(root: &std::path::Path) -> Vec<String> {
    fn walk(base: &std::path::Path, p: &std::path::Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(p).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                walk(base, &e.path(), out);
            } else if t.is_file() {
                out.push(e.path().strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut v = Vec::new();
    walk(root, root, &mut v);
    v.sort();
    v
}

fn one_line(what: &str, text: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        !text.trim_end().contains('\n'),
        "{what}: not one line: {text:?}"
    );
    Ok(())
}

/// A monitor plan for CPU 0 with its files in `dir`.
fn monitor_plan(
    dir: &std::path::Path,
    prometheus: Option<std::path::PathBuf>,
) -> rtbench::monitor::MonitorPlan {
    use rtbench::measure::{RunControl, ThreadSpec};
    rtbench::monitor::MonitorPlan {
        spec: rtbench::measure::monitor::MonitorSpec {
            threads: vec![ThreadSpec {
                index: 0,
                cpu: Some(0),
                policy: rtbench::sys::sched::Policy::Fifo,
                priority: 98,
                interval_us: 1000,
            }],
            control: RunControl {
                duration: None,
                loops: None,
                mlockall: true,
                pm_qos_us: None,
                main_cpus: None,
                report_every: None,
                break_ns: None,
                tracemark: false,
                histogram: None,
                explain: None,
            },
        },
        window: std::time::Duration::from_secs(300),
        rolling: std::time::Duration::from_secs(3600),
        dir: dir.to_path_buf(),
        store_bytes: 1 << 20,
        prometheus,
        limits: rtbench::config::limits::Limits {
            max_us: Some(50),
            ..Default::default()
        },
        sharing: Vec::new(),
    }
}

/// One window's figures: `n` samples of `v` ns.
fn window_stats(n: u64, v: u64) -> rtbench::measure::stats::LatencyStats {
    let mut s = rtbench::measure::stats::LatencyStats::new(None);
    s.hist.record_n(v, n);
    s.count = n;
    s.sum_ns = (v as u128) * n as u128;
    s.min_ns = v;
    s.max_ns = v;
    s
}

const T0_S: i64 = 1_800_000_000;

/// A state file the monitor saved (CPU 0, a few windows): the base that the state
/// property damages.
fn saved_state() -> Vec<u8> {
    use rtbench::monitor::aggregate::{Aggregator, STATE_FILE};
    let t = crate::common::TempDir::new("props-state-base");
    let plan = monitor_plan(&t, None);
    let mut journal = rtbench::report::journal::Journal::Memory(Vec::new());
    let mut agg = Aggregator::new(&plan, &mut journal, &[0], T0_S);
    for w in 0..3 {
        let s = window_stats(1000, 3_000 + w * 1_000);
        let start = T0_S + w as i64 * 300;
        agg.window(&[&s], start, start + 300, 300.0, &[]);
    }
    agg.save_state(T0_S + 900).unwrap();
    std::fs::read(t.join(STATE_FILE)).unwrap()
}

/// A state file: as saved, cut short, a byte changed (a bit flip on flash: often not
/// UTF-8), its last window near 2^64, its numbers huge, garbage, or empty.
fn state_bytes(base: Vec<u8>) -> impl Strategy<Value = Option<Vec<u8>>> {
    let len = base.len();
    let b = base.clone();
    let b2 = base.clone();
    let b3 = base.clone();
    let b4 = base;
    prop_oneof![
        1 => Just(None),
        2 => Just(Some(b.clone())),
        2 => (0..len).prop_map(move |n| Some(b[..n].to_vec())),
        3 => (0..len, any::<u8>()).prop_map(move |(i, x)| {
            let mut v = b2.clone();
            v[i] = x;
            Some(v)
        }),
        3 => hostile_u64().prop_map(move |seq| {
            let mut v: serde_json::Value = serde_json::from_slice(&b3).unwrap();
            v["last_window"] = serde_json::json!(u64::MAX - seq.min(3));
            Some(serde_json::to_vec(&v).unwrap())
        }),
        2 => (hostile_u64(), hostile_u64(), any::<i64>()).prop_map(move |(a, b, at)| {
            let mut v: serde_json::Value = serde_json::from_slice(&b4).unwrap();
            if let Some(c) = v["cpus"].get_mut(0) {
                c["alltime_max_ns"] = serde_json::json!(a);
                c["alltime_samples"] = serde_json::json!(b);
                c["alltime_max_at_s"] = serde_json::json!(at);
                c["windows"] = serde_json::json!(u64::MAX - b.min(1));
            }
            Some(serde_json::to_vec(&v).unwrap())
        }),
        1 => proptest::collection::vec(any::<u8>(), 0..64).prop_map(Some),
    ]
}

/// A window store: lines that are records (sequence numbers near 2^64 too, numbers
/// that do not fit when added), garbage, bytes that are not UTF-8, a line cut short.
fn store_bytes() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        4 => (hostile_u64(), hostile_u64(), hostile_u64(), 0i64..10_000).prop_map(|(seq, max, samples, k)| {
            let end = T0_S - 10_000 + k;
            format!(
                "{{\"seq\":{seq},\"start_s\":{},\"end_s\":{end},\"duration_s\":300.0,\"cpus\":[{{\"cpu\":0,\"samples\":{samples},\"min_ns\":1,\"avg_ns\":2,\"p99_ns\":3,\"p999_ns\":4,\"max_ns\":{max},\"overruns\":{samples}}}]}}\n",
                end - 300
            )
            .into_bytes()
        }),
        1 => (0u64..4).prop_map(|d| format!("{{\"seq\":{},\"start_s\":0,\"end_s\":1,\"duration_s\":1,\"cpus\":[]}}\n", u64::MAX - d).into_bytes()),
        1 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(|mut v| {
            v.retain(|&b| b != b'\n');
            v.push(b'\n');
            v
        }),
        1 => Just(b"{\"seq\": 7, \"sta".to_vec()),
    ];
    proptest::collection::vec(line, 0..6).prop_map(|v| v.concat())
}

/// Monitor state files and window stores, valid and damaged: loading never panics, a
/// state file that is not a state (cut short, not UTF-8, garbage) is kept as
/// `state.json.bad.*` with its exact bytes before anything replaces it, a valid one
/// is not; the next window's number is the last one plus one, never wrapped (at 2^64
/// − 1 nothing is stored); what is said is one line; `report --since`'s summary of
/// the store is a summary or a one-line refusal.
#[test]
fn monitor_state_and_store_load_without_loss_or_wrap() {
    use rtbench::monitor::aggregate::{Aggregator, STATE_FILE};
    use rtbench::monitor::history::State;
    use rtbench::results::window::{WindowStore, CURRENT};
    let base = saved_state();
    check_on_files(
        "monitor_state_and_store_load_without_loss_or_wrap",
        600,
        (state_bytes(base), store_bytes()),
        |(state, store)| {
            let t = crate::common::TempDir::new("props-state");
            let dir = t.join("mon");
            std::fs::create_dir_all(&dir).unwrap();
            if let Some(b) = &state {
                std::fs::write(dir.join(STATE_FILE), b).unwrap();
            }
            std::fs::write(dir.join(CURRENT), &store).unwrap();
            let plan = monitor_plan(&dir, Some(t.join("monitor.prom")));
            let mut journal = rtbench::report::journal::Journal::Memory(Vec::new());
            let now = T0_S + 1_000;
            let mut agg = Aggregator::new(&plan, &mut journal, &[0], now);
            one_line("restored", &agg.restored)?;
            let valid = state.as_ref().map(|b| {
                std::str::from_utf8(b)
                    .ok()
                    .and_then(|t| serde_json::from_str::<State>(t).ok())
                    .is_some()
            });
            let bad: Vec<_> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.to_string_lossy().contains("state.json.bad"))
                .collect();
            match valid {
                Some(false) => {
                    prop_assert_eq!(bad.len(), 1, "{}", agg.restored);
                    prop_assert_eq!(&std::fs::read(&bad[0]).unwrap(), state.as_ref().unwrap());
                    prop_assert!(agg.restored.contains("kept as"), "{}", agg.restored);
                }
                _ => prop_assert!(bad.is_empty(), "{bad:?}"),
            }
            let last = agg.last_seq;
            let before = std::fs::read(dir.join(CURRENT)).unwrap();
            let s = window_stats(100, 70_000);
            let r = agg.window(&[&s], now, now + 300, 300.0, &[]);
            if last == u64::MAX {
                prop_assert!(agg.exhausted);
                prop_assert_eq!(std::fs::read(dir.join(CURRENT)).unwrap(), before);
            } else {
                prop_assert!(!agg.exhausted);
                prop_assert_eq!(r.seq, last + 1);
                agg.save_state(now + 300).unwrap();
                let saved = std::fs::read_to_string(dir.join(STATE_FILE)).unwrap();
                let st: State = serde_json::from_str(&saved).unwrap();
                prop_assert_eq!(st.last_window, last + 1);
            }
            drop(agg);
            if let rtbench::report::journal::Journal::Memory(v) = &journal {
                for e in v {
                    one_line("entry", &e.to_text())?;
                }
            }
            let (summary, _) = WindowStore::new(&dir, u64::MAX)
                .since(0, now + 300)
                .unwrap();
            if let Err(e) = summary {
                one_line("since", &e)?;
            }
            Ok(())
        },
    );
}

/// A tune tree with the files `tune check` and `diagnose` read: the 4-CPU board of
/// tests/common/tune_tree plus a running irqbalance, its environment file and the
/// files diagnose copies.
fn hostile_tree() -> crate::common::tune_tree::Tree {
    let t = crate::common::tune_tree::Tree::new("props-tree");
    t.file("proc/4242/comm", "irqbalance\n");
    t.file(
        "proc/4242/stat",
        "4242 (irqbalance) S 1 4242 4242 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 100 0 0\n",
    );
    t.file("etc/default/irqbalance", "IRQBALANCE_BANNED_CPULIST=2-3\n");
    t.file("sys/devices/system/cpu/isolated", "2-3\n");
    t.file("sys/devices/system/cpu/nohz_full", "\n");
    for (f, text) in [
        ("proc/cmdline", "isolcpus=2-3\n"),
        ("proc/version", "Linux version 6.6.0-rt\n"),
        ("etc/os-release", "NAME=test\n"),
        ("proc/loadavg", "0.00 0.00 0.00 1/1 1\n"),
        ("proc/uptime", "100.00 100.00\n"),
        ("proc/softirqs", "CPU0\n"),
        ("proc/interrupts", "           CPU0       CPU1       CPU2       CPU3\n 10:          1          0          5          0   GIC  eth0\n"),
        ("dev/kmsg", "[  1.000000] ok\n"),
        ("sys/kernel/realtime", "1\n"),
        ("proc/sys/kernel/sched_rt_runtime_us", "950000\n"),
    ] {
        t.file(f, text);
    }
    t
}

/// Fake /proc and /sys trees where files `tune check`, `tune apply` and `diagnose`
/// read or write are FIFOs, links (dangling, looping, to /dev/zero), directories or
/// devices: each finishes (bounded time: [`within`]), without a panic, and every line
/// it says is one line.
#[test]
fn tune_and_diagnose_finish_on_trees_with_fifos_links_and_devices() {
    let _no_forks = crate::common::no_forks();
    let files = tree_files(&hostile_tree().join("root"));
    let n = files.len();
    check_on_files(
        "tune_and_diagnose_finish_on_trees_with_fifos_links_and_devices",
        200,
        proptest::collection::vec((0..n, node()), 1..4),
        |nodes| {
            let t = hostile_tree();
            let spec = t.spec("");
            let root = t.join("root");
            for (i, node) in &nodes {
                place(&root.join(&files[*i]), *node);
            }
            let sys = t.root();
            let (check, apply, snapshot) = within("tune check, apply, diagnose", move || {
                let check = rtbench::tune::check(&sys, &spec);
                let apply = rtbench::tune::apply(&sys, &spec, &Default::default());
                let mut out = Vec::new();
                let snapshot = rtbench::diagnose::system::collect(&sys, &mut out);
                (check, apply.map_err(|e| e.to_string()), snapshot)
            });
            for i in check
                .items
                .iter()
                .chain(apply.iter().flat_map(|r| r.items.iter()))
            {
                one_line(&i.item, &i.detail)?;
            }
            if let Err(e) = &apply {
                one_line("apply", e)?;
            }
            for m in &snapshot.missing {
                one_line("diagnose", m)?;
            }
            Ok(())
        },
    );
}

/// The files the monitor and the self-test keep (state, window store, Prometheus
/// textfile, the fallback copy), each possibly a FIFO, a link or a device: the start
/// check refuses on one line naming the file, and a run that goes ahead anyway (the
/// node put there after the check) never blocks, never writes through a link, never
/// panics, and says what failed on one line.
#[test]
fn kept_files_that_are_fifos_links_or_devices_never_block_or_follow() {
    use rtbench::monitor::aggregate::{Aggregator, STATE_FILE};
    use rtbench::results::window::{WindowStore, CURRENT, PREVIOUS};
    let names = [
        STATE_FILE,
        CURRENT,
        PREVIOUS,
        "monitor.prom",
        "unstored-run.json",
    ];
    check_on_files(
        "kept_files_that_are_fifos_links_or_devices_never_block_or_follow",
        300,
        proptest::collection::vec((0..names.len(), node()), 1..4),
        move |nodes| {
            let t = crate::common::TempDir::new("props-kept");
            let dir = t.join("mon");
            std::fs::create_dir_all(&dir).unwrap();
            let prom = dir.join("monitor.prom");
            for (i, node) in &nodes {
                place(&dir.join(names[*i]), *node);
            }
            let before = tree_snapshot(&t);
            // Refused at start, on one line naming the file, when a file the monitor
            // keeps in its directory is not a regular file.
            let odd: Vec<&str> = nodes
                .iter()
                .filter(|(i, _)| *i < 3)
                .map(|(i, _)| names[*i])
                .collect();
            match rtbench::plan::monitor::check_dir("--dir", &dir) {
                Err(e) => {
                    one_line("check_dir", &e.to_string())?;
                    prop_assert!(odd.iter().any(|n| e.to_string().contains(n)), "{e}");
                }
                Ok(()) => prop_assert!(odd.is_empty(), "{odd:?} not refused"),
            }
            if let Err(e) = rtbench::plan::monitor::check_prometheus("--prometheus", &prom) {
                one_line("check_prometheus", &e.to_string())?;
                prop_assert!(e.to_string().contains("monitor.prom"), "{e}");
            }
            let d = dir.clone();
            let said = within("the monitor's writes", move || {
                let plan = monitor_plan(&d, Some(d.join("monitor.prom")));
                let mut journal = rtbench::report::journal::Journal::Memory(Vec::new());
                let mut agg = Aggregator::new(&plan, &mut journal, &[0], T0_S);
                let mut said = vec![agg.restored.clone()];
                for w in 0..2 {
                    let s = window_stats(10, 1_000);
                    let start = T0_S + w * 300;
                    agg.window(&[&s], start, start + 300, 300.0, &[]);
                }
                if let Err(e) = agg.save_state(T0_S + 600) {
                    said.push(e.to_string());
                }
                if let Err(e) = WindowStore::new(&d, 1 << 20).since(0, T0_S + 600) {
                    said.push(e.to_string());
                }
                let run = crate::hostile_props::minimal_run();
                if let Err(e) = rtbench::results::store::save_fallback(&d, &run) {
                    said.push(e.to_string());
                }
                drop(agg);
                if let rtbench::report::journal::Journal::Memory(v) = journal {
                    said.extend(v.iter().map(|e| e.to_text()));
                }
                said
            });
            for s in &said {
                one_line("said", s)?;
            }
            // Nothing was written through a link: every link is still a link to what it
            // pointed to, and nothing was created where a dangling one points.
            let after = tree_snapshot(&t);
            for (p, kind) in &before {
                if kind.starts_with("link") {
                    prop_assert_eq!(after.get(p), Some(kind), "{}", p.display());
                }
            }
            prop_assert!(!dir.join("no-such-file").exists());
            Ok(())
        },
    );
}

/// Every path below `t` with what it is (`link → target` for links, else the kind).
fn tree_snapshot(t: &std::path::Path) -> std::collections::BTreeMap<std::path::PathBuf, String> {
    let mut m = std::collections::BTreeMap::new();
    let mut stack = vec![t.to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).into_iter().flatten().flatten() {
            let path = e.path();
            let ft = e.file_type().unwrap();
            let kind = if ft.is_symlink() {
                format!("link → {}", std::fs::read_link(&path).unwrap().display())
            } else if ft.is_dir() {
                stack.push(path.clone());
                "dir".into()
            } else {
                "other".into()
            };
            m.insert(path, kind);
        }
    }
    m
}

/// A stored run with nothing in it, for the fallback copy.
fn minimal_run() -> rtbench::results::store::StoredRun {
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &SEED),
    );
    proptest::strategy::ValueTree::current(&stored_run().new_tree(&mut runner).unwrap())
}

/// Values of any length made of what must never reach a terminal as itself: control
/// characters (C0, DEL, C1), bidirectional formatting characters, line separators,
/// multi-byte characters, and digits and letters in long runs.
fn hostile_value() -> impl Strategy<Value = String> {
    let piece = proptest::sample::select(vec![
        "\u{202e}",
        "\u{202a}",
        "\u{2066}",
        "\u{2069}",
        "\u{200e}",
        "\u{200f}",
        "\u{9b}",
        "\u{7f}",
        "\u{1b}[2J",
        "\n",
        "\u{2028}",
        "é",
        "💥",
        "0",
        "1-3",
        ",",
        ":",
        "x",
        "vm:1:",
        "d",
    ]);
    (
        proptest::collection::vec(piece, 0..12),
        proptest::sample::select(vec![0usize, 1, 70, 5000]),
        proptest::sample::select(vec!["7", "a", "\u{202e}"]),
    )
        .prop_map(|(v, n, run)| format!("{}{}", v.concat(), run.repeat(n)))
}

/// The longest a refusal may be, in characters: a fixed text (up to about 150) and the
/// value (shortened to
/// rtbench::error::ECHO_CHARS) with at most two parts of it (PART_CHARS each).
const REFUSAL_CHARS: usize = 280;

/// Every refusal of a value — a CPU list, a duration, a load spec, and clap's own for a
/// number or a word — is one line of at most REFUSAL_CHARS characters with no raw
/// control or bidirectional formatting character, whatever the value's length.
#[test]
fn refusals_are_short_and_show_every_character() {
    use rtbench::sys::cpus::CpuTopology;
    let topo = CpuTopology::uniform(4, "");
    let kinds = proptest::sample::select(vec![0u8, 1, 2, 3, 4]);
    check(
        "short refusals",
        2000,
        (hostile_value(), kinds),
        |(v, kind)| {
            let shown = match kind {
                0 => topo
                    .where_to_run(&v)
                    .err()
                    .map(|e| rtbench::error::Error::usage("-a", &v, e.message()).to_string()),
                1 => rtbench::duration::parse(&v)
                    .err()
                    .map(|e| rtbench::error::Error::usage("-D", &v, e).to_string()),
                2 => rtbench::load::parse_labelled(&v)
                    .err()
                    .map(|e| rtbench::error::Error::usage("--load", &v, e).to_string()),
                _ => {
                    use clap::Parser;
                    let flag = if kind == 3 {
                        "--interval"
                    } else {
                        "--frobnicate"
                    };
                    let words = ["rtbench", "monitor", flag, v.as_str()];
                    rtbench::cli::Cli::try_parse_from(words)
                        .err()
                        .map(|e| rtbench::cli::parse::one_line(&e))
                }
            };
            let Some(shown) = shown else {
                return Ok(());
            };
            prop_assert!(
                shown.chars().count() <= REFUSAL_CHARS,
                "{} characters: {shown}",
                shown.chars().count()
            );
            let hidden = |c: char| {
                (c != '\t' && c.is_control())
                    || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
            };
            prop_assert!(!shown.contains(hidden), "raw character in {shown:?}");
            Ok(())
        },
    );
}

//! The spellings getopt_long accepts, each normalised to rtbench's canonical form; the
//! rt-tests option tables against rtbench's clap definitions; and a property test that
//! every mix of spellings of the same options gives the same canonical arguments.

use super::*;
use proptest::prelude::*;

fn os(v: &[&str]) -> Vec<OsString> {
    v.iter().map(OsString::from).collect()
}

fn norm(tool: Tool, args: &[&str]) -> Result<Vec<String>, String> {
    Table::new(tool)
        .normalise(&os(args))
        .map(|v| v.iter().map(|a| a.to_string_lossy().into_owned()).collect())
        .map_err(|e| e.to_string())
}

/// (argv after the subcommand, canonical arguments for clap) for `rtbench cyclic`.
const CYCLIC_SPELLINGS: &[(&[&str], &[&str])] = &[
    // rteval 3.x `_WorkloadPrepare`: bundled flags, "-h 3500" as one argument, the
    // empty argument of an unset interval, -t/-a attached.
    (
        &["-i100", "-qmu", "-h 3500", "-p95", "-t2", "-a0-1"],
        &[
            "--interval=100",
            "--quiet",
            "--mlockall",
            "--unbuffered",
            "--histogram=3500",
            "--priority=95",
            "--threads=2",
            "--affinity=0-1",
        ],
    ),
    (&["", "-qmu"], &["--quiet", "--mlockall", "--unbuffered"]),
    // rteval <= 3.6 without a CPU list: bare -t and -a.
    (&["-t", "-a"], &["--threads", "--affinity"]),
    (
        &["-t", "-a", "-b5"],
        &["--threads", "--affinity", "--breaktrace=5"],
    ),
    (
        &["-b100", "--tracemark"],
        &["--breaktrace=100", "--tracemark"],
    ),
    (&["--default-system"], &["--default-system"]),
    // rteval 2.x: --smp.
    (&["--smp"], &["--smp"]),
    // The guide's classic line.
    (
        &["-m", "-Sp99", "-i1000", "-h800", "-D12h", "-q"],
        &[
            "--mlockall",
            "--smp",
            "--priority=99",
            "--interval=1000",
            "--histogram=800",
            "--duration=12h",
            "--quiet",
        ],
    ),
    // Linaro test-definitions: separate values.
    (
        &[
            "-p", "98", "-i", "1000", "-t", "1", "-a", "0", "-D", "1m", "-m",
        ],
        &[
            "--priority=98",
            "--interval=1000",
            "--threads=1",
            "--affinity=0",
            "--duration=1m",
            "--mlockall",
        ],
    ),
    // Values attached, separate, after spaces in the same argument, after =.
    (&["-h3500"], &["--histogram=3500"]),
    (&["-h", "3500"], &["--histogram=3500"]),
    (&["-h \t3500"], &["--histogram=3500"]),
    (&["--histogram=3500"], &["--histogram=3500"]),
    (&["--histogram", "3500"], &["--histogram=3500"]),
    (&["-qh3500"], &["--quiet", "--histogram=3500"]),
    (&["-qh", "3500"], &["--quiet", "--histogram=3500"]),
    // A required value is the next argument whatever it is.
    (&["--latency", "-1"], &["--latency=-1"]),
    (&["-p", "-5"], &["--priority=-5"]),
    (&["--json", "-"], &["--json=-"]),
    (&["--json=-"], &["--json=-"]),
    (&["--json", "--quiet"], &["--json=--quiet"]),
    (&["--histfile=a=b"], &["--histfile=a=b"]),
    // Abbreviations: unique prefixes; cyclictest's own names first.
    (&["--int=100"], &["--interval=100"]),
    (&["--du", "10s"], &["--duration=10s"]),
    (&["--lo", "5"], &["--loops=5"]),
    (&["--prior", "80"], &["--priority=80"]),
    (&["--def"], &["--default-system"]),
    (&["--he"], &["--help"]),
    (&["--histogram-l", "legacy"], &["--histogram-layout=legacy"]),
    (
        &["--histogram-layout=legacy"],
        &["--histogram-layout=legacy"],
    ),
    (&["--load", "cpu:1"], &["--load=cpu:1"]),
    (&["--load-cm", "true"], &["--load-cmd=true"]),
    (&["--no-m"], &["--no-mlockall"]),
    // Optional values: attached, or cyclictest's look-ahead.
    (&["-t4"], &["--threads=4"]),
    (&["-t", "4"], &["--threads=4"]),
    (&["--threads", "4"], &["--threads=4"]),
    (&["--threads=4"], &["--threads=4"]),
    (&["-t", "-q"], &["--threads", "--quiet"]),
    (&["-t", "0"], &["--threads=0"]),
    (&["-t", "x"], &["--threads=x"]),
    (&["-t", "-1"], &["--threads=-1"]),
    (&["-a", "abc"], &["--affinity=abc"]),
    (&["-a", "2-3"], &["--affinity=2-3"]),
    (&["-a", "0"], &["--affinity=0"]),
    (&["-a", "0x3"], &["--affinity=0x3"]),
    (&["-a", "all"], &["--affinity=all"]),
    (&["-a", "N"], &["--affinity=N"]),
    (&["-a", "!2"], &["--affinity=!2"]),
    (&["--affinity", "1"], &["--affinity=1"]),
    (&["-a"], &["--affinity"]),
    // The last one wins (clap's args_override_self), repeated options pass through.
    (&["-t2", "-t4"], &["--threads=2", "--threads=4"]),
    // rtbench's own: -n, -N, --nsecs.
    (&["-nN"], &["--nanosleep", "--nsecs"]),
    (&["-V"], &["--version"]),
    // `--` ends the options; empty words are dropped.
    (&["-q", "--"], &["--quiet"]),
    (&["-q", "--", ""], &["--quiet"]),
    // Unknown options stay as written for clap (which suggests --interval).
    (&["--inteval", "5"], &["--inteval", "--", "5"]),
    (&["-z"], &["-z"]),
    (&["-qzm"], &["--quiet", "-z", "--mlockall"]),
    (&["--quiet=1"], &["--quiet=1"]),
    // -h and -H together: -H's summary column, the last one's buckets (cyclictest).
    (&["-h", "30", "-H", "30"], &["--histofall=30"]),
    (&["-H5", "-q", "-h8"], &["--quiet", "--histofall=8"]),
    (&["-h", "8", "-H", "5"], &["--histofall=5"]),
    (&["--histofall=5", "--histogram=9"], &["--histofall=9"]),
    // cyclictest stops at the first 0 (its usage): that one is kept, as written.
    (&["-H", "0", "-h", "5"], &["--histofall=0"]),
    (&["-h", "7", "-h", "0", "-H", "5"], &["--histogram=0"]),
    (&["-h", "0", "-h", "5"], &["--histogram=0"]),
    (&["-H", "0", "-H", "5"], &["--histofall=0"]),
    (&["-h", "x", "-H", "5"], &["--histogram=x"]),
    (&["-H", "5", "-h", "abc"], &["--histogram=abc"]),
    (&["-h", "5", "-h", "9"], &["--histogram=5", "--histogram=9"]),
];

#[test]
fn cyclictest_spellings_normalise() {
    for (args, want) in CYCLIC_SPELLINGS {
        assert_eq!(
            norm(Tool::Cyclic, args).as_deref(),
            Ok(&want.iter().map(|s| s.to_string()).collect::<Vec<_>>()[..]),
            "{args:?}"
        );
    }
}

#[test]
fn pmqtest_spellings_normalise() {
    let cases: &[(&[&str], &[&str])] = &[
        // pmqtest(8)'s example.
        (
            &["-Sp99", "-i100", "-d0"],
            &["--smp", "--priority=99", "--interval=100", "--distance=0"],
        ),
        (
            &["-S", "-p", "80", "-i", "1000", "-D", "3", "-q"],
            &[
                "--smp",
                "--priority=80",
                "--interval=1000",
                "--duration=3",
                "--quiet",
            ],
        ),
        (&["-S", "-D", "5m"], &["--smp", "--duration=5m"]),
        (&["--prio=80"], &["--priority=80"]),
        (&["--pri", "80"], &["--priority=80"]),
        (&["-T", "1", "-f1"], &["--timeout=1", "--forcetimeout=1"]),
        (
            &["--for=1", "--tim=2"],
            &["--forcetimeout=1", "--timeout=2"],
        ),
        (&["-t", "2", "-a", "1"], &["--threads=2", "--affinity=1"]),
        // pmqtest's -h is help; rtbench's pmq -h US (a histogram) when a number follows.
        (&["-h"], &["--help"]),
        (&["-qh"], &["--quiet", "--help"]),
        (&["-h", "-q"], &["--help", "--quiet"]),
        (&["-h", "50"], &["--histogram=50"]),
        (&["-h50"], &["--histogram=50"]),
        (&["--histogram=50"], &["--histogram=50"]),
    ];
    for (args, want) in cases {
        assert_eq!(
            norm(Tool::Pmq, args).as_deref(),
            Ok(&want.iter().map(|s| s.to_string()).collect::<Vec<_>>()[..]),
            "{args:?}"
        );
    }
}

#[test]
fn rt_tests_options_rtbench_lacks_are_refused_by_name() {
    let err = |tool, a: &[&str]| norm(tool, a).unwrap_err();
    assert_eq!(
        err(Tool::Cyclic, &["-s"]),
        "-s: cyclictest option --system (sys_nanosleep and sys_setitimer) is not implemented by rtbench"
    );
    assert_eq!(
        err(Tool::Cyclic, &["--smi"]),
        "--smi: cyclictest option (SMI counting) is not implemented by rtbench"
    );
    // -v and -o are implemented: getopt spellings reach clap.
    assert!(norm(Tool::Cyclic, &["-qvm", "-o10"]).is_ok());
    assert!(err(Tool::Cyclic, &["-M"]).starts_with("-M: cyclictest option --refresh_on_max"));
    assert!(err(Tool::Cyclic, &["--sys"]).starts_with("--sys: cyclictest option --system"));
    assert!(err(Tool::Cyclic, &["--spike=5"]).starts_with("--spike: cyclictest option"));
    assert!(err(Tool::Cyclic, &["--sec"]).starts_with("--sec: cyclictest option --secaligned"));
    assert!(err(Tool::Cyclic, &["-x"]).contains("--posix_timers"));
    assert!(err(Tool::Cyclic, &["-F", "/tmp/f"]).contains("--fifo"));
    assert!(err(Tool::Cyclic, &["--numa"]).contains("removed in rt-tests 2.0"));
    assert!(err(Tool::Cyclic, &["--notrace"]).contains("removed in rt-tests 2.0"));
    for e in [err(Tool::Cyclic, &["-s"]), err(Tool::Cyclic, &["--laptop"])] {
        assert!(e.ends_with("is not implemented by rtbench"), "{e}");
    }
}

#[test]
fn ambiguous_abbreviations_and_stray_words_are_one_line_errors() {
    let err = |tool, a: &[&str]| norm(tool, a).unwrap_err();
    assert_eq!(
        err(Tool::Cyclic, &["--hist=5"]),
        "--hist: ambiguous abbreviation; possibilities: --histogram --histofall --histfile"
    );
    // As getopt: --prio is priority or priospread in cyclictest.
    assert!(err(Tool::Cyclic, &["--prio=5"]).contains("--priority --priospread"));
    assert!(err(Tool::Cyclic, &["--load-c", "0"]).contains("--load-cmd --load-cpus"));
    assert_eq!(
        err(Tool::Cyclic, &["-p", "80", "foo"]),
        "'foo': unexpected argument: not an option nor the value of one (cyclictest would ignore it; rtbench refuses it)"
    );
    assert!(err(Tool::Cyclic, &["--", "foo"]).starts_with("'foo'"));
    assert!(err(Tool::Pmq, &["-q", "x"]).contains("pmqtest would ignore it"));
    assert_eq!(
        err(Tool::Pipe, &["-q", "x"]),
        "'x': unexpected argument: not an option nor the value of one"
    );
}

#[test]
fn rt_tests_tables_agree_with_rtbench_options() {
    use clap::CommandFactory;
    let mut cmd = crate::cli::Cli::command();
    cmd.build();
    let mut lacking = Vec::new();
    for (sub, table) in [("cyclic", rt_tests::CYCLICTEST), ("pmq", rt_tests::PMQTEST)] {
        let c = cmd.find_subcommand(sub).unwrap();
        for r in table {
            let Some(a) = c.get_arguments().find(|a| {
                a.get_long() == Some(r.long)
                    || a.get_all_aliases().unwrap_or_default().contains(&r.long)
            }) else {
                lacking.push(format!("{sub} --{}", r.long));
                // A letter rtbench uses for something else would hide the refusal.
                if let Some(s) = r.short {
                    assert!(
                        c.get_arguments().all(|a| a.get_short() != Some(s)),
                        "{sub} -{s}"
                    );
                }
                continue;
            };
            assert_eq!(a.get_short(), r.short, "{sub} --{}", r.long);
            let n = a.get_num_args().unwrap_or_default();
            let kind = if !a.get_action().takes_values() {
                HasArg::No
            } else if n.min_values() == 0 {
                HasArg::Optional
            } else {
                HasArg::Required
            };
            assert_eq!(kind, r.has_arg, "{sub} --{}", r.long);
        }
    }
    assert_eq!(
        lacking.join(" "),
        "cyclic --aligned cyclic --fifo cyclic --laptop cyclic --refresh_on_max \
         cyclic --relative cyclic --resolution cyclic --secaligned \
         cyclic --system cyclic --smi cyclic --spike cyclic --spike-nodes \
         cyclic --dbg_cyclictest cyclic --posix_timers"
    );
}

#[test]
fn argv0_dispatch() {
    let p = |a: &[&str]| prepare(&os(a)).unwrap();
    let i = p(&["/usr/bin/cyclictest", "-qmu", "-h 3500"]);
    assert_eq!(i.as_rt_tests, Some(Tool::Cyclic));
    assert_eq!(
        i.args,
        os(&[
            "rtbench",
            "cyclic",
            "--quiet",
            "--mlockall",
            "--unbuffered",
            "--histogram=3500"
        ])
    );
    let i = p(&["pmqtest", "-Sp99"]);
    assert_eq!(i.as_rt_tests, Some(Tool::Pmq));
    assert_eq!(i.args, os(&["rtbench", "pmq", "--smp", "--priority=99"]));
    let i = p(&["./rtbench", "pipe", "-a", "1"]);
    assert_eq!(i.as_rt_tests, None);
    assert_eq!(i.args, os(&["rtbench", "pipe", "--affinity=1"]));
    // Other subcommands, and names that only resemble the programs, are left to clap.
    for a in [
        &["rtbench", "tune", "check"][..],
        &["cyclictest.sh", "-q"],
        &["rtbench"],
        &["cyclictest2", "-h"],
    ] {
        assert_eq!(
            p(a),
            Invocation {
                args: os(a),
                as_rt_tests: None
            }
        );
    }
}

#[test]
fn non_utf8_values_pass_unchanged() {
    use std::os::unix::ffi::OsStringExt;
    let path = OsString::from_vec(b"/tmp/\xff.json".to_vec());
    let out = Table::new(Tool::Cyclic)
        .normalise(&[OsString::from("--json"), path])
        .unwrap();
    assert_eq!(out[0].as_bytes(), b"--json=/tmp/\xff.json");
}

/// An option of the property test: long name, short letter, a unique abbreviation,
/// and the values it gets (`None`: a flag).
struct Spec {
    long: &'static str,
    short: char,
    abbrev: &'static str,
    value: Option<Value>,
}

const SPECS: &[Spec] = &[
    Spec {
        long: "interval",
        short: 'i',
        abbrev: "int",
        value: Some(Value::Required),
    },
    Spec {
        long: "histogram",
        short: 'h',
        abbrev: "histog",
        value: Some(Value::Required),
    },
    Spec {
        long: "priority",
        short: 'p',
        abbrev: "prior",
        value: Some(Value::Required),
    },
    Spec {
        long: "loops",
        short: 'l',
        abbrev: "lo",
        value: Some(Value::Required),
    },
    Spec {
        long: "distance",
        short: 'd',
        abbrev: "dis",
        value: Some(Value::Required),
    },
    Spec {
        long: "breaktrace",
        short: 'b',
        abbrev: "br",
        value: Some(Value::Required),
    },
    Spec {
        long: "threads",
        short: 't',
        abbrev: "thr",
        value: Some(Value::Optional),
    },
    Spec {
        long: "affinity",
        short: 'a',
        abbrev: "aff",
        value: Some(Value::Optional),
    },
    Spec {
        long: "quiet",
        short: 'q',
        abbrev: "qu",
        value: None,
    },
    Spec {
        long: "mlockall",
        short: 'm',
        abbrev: "ml",
        value: None,
    },
    Spec {
        long: "smp",
        short: 'S',
        abbrev: "smp",
        value: None,
    },
    Spec {
        long: "nsecs",
        short: 'N',
        abbrev: "ns",
        value: None,
    },
    Spec {
        long: "unbuffered",
        short: 'u',
        abbrev: "unb",
        value: None,
    },
];

/// One option with its value, spelled in one of the ways getopt accepts (index
/// `how`); flags may be bundled with the previous flag (`bundle`).
fn spell(s: &Spec, v: &str, how: usize, out: &mut Vec<String>, bundle: bool) {
    match s.value {
        None => match how % 3 {
            0 if bundle && out.last().is_some_and(|l| is_flag_bundle(l)) => {
                out.last_mut().unwrap().push(s.short)
            }
            0 => out.push(format!("-{}", s.short)),
            1 => out.push(format!("--{}", s.long)),
            _ => out.push(format!("--{}", s.abbrev)),
        },
        Some(Value::Required) => match how % 7 {
            0 => out.push(format!("-{}{v}", s.short)),
            1 => out.extend([format!("-{}", s.short), v.to_string()]),
            2 => out.push(format!("-{} {v}", s.short)),
            3 => out.push(format!("--{}={v}", s.long)),
            4 => out.extend([format!("--{}", s.long), v.to_string()]),
            5 => out.push(format!("--{}={v}", s.abbrev)),
            _ => out.extend([format!("--{}", s.abbrev), v.to_string()]),
        },
        // The values of the property test are non-zero numbers: the look-ahead takes them.
        Some(_) => match how % 5 {
            0 => out.push(format!("-{}{v}", s.short)),
            1 => out.extend([format!("-{}", s.short), v.to_string()]),
            2 => out.push(format!("--{}={v}", s.long)),
            3 => out.extend([format!("--{}", s.long), v.to_string()]),
            _ => out.push(format!("--{}={v}", s.abbrev)),
        },
    }
}

/// `-qm`-like: a bundle of flags without values.
fn is_flag_bundle(a: &str) -> bool {
    a.len() > 1
        && a.starts_with('-')
        && !a.starts_with("--")
        && a[1..]
            .chars()
            .all(|c| SPECS.iter().any(|s| s.short == c && s.value.is_none()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any sequence of options, each spelled in any accepted way (bundles included),
    /// normalises to the same canonical arguments; normalising those changes nothing.
    #[test]
    fn every_spelling_gives_the_canonical_form(
        picks in proptest::collection::vec((0..SPECS.len(), 1u32..100_000, 0usize..35, any::<bool>()), 0..12)
    ) {
        let mut args = Vec::new();
        let mut want = Vec::new();
        for &(k, v, how, bundle) in &picks {
            let s = &SPECS[k];
            let v = v.to_string();
            spell(s, &v, how, &mut args, bundle);
            want.push(match s.value {
                None => format!("--{}", s.long),
                Some(_) => format!("--{}={v}", s.long),
            });
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let got = norm(Tool::Cyclic, &refs);
        prop_assert_eq!(got.as_ref(), Ok(&want), "{:?}", args);
        let again: Vec<&str> = want.iter().map(String::as_str).collect();
        prop_assert_eq!(norm(Tool::Cyclic, &again), Ok(want.clone()));
    }
}

//! Golden outputs of the real binary, captured on main at bc6443b (before the code was
//! split into the cli/plan/app layers of docs/ARCHITECTURE.md) and kept identical since: `--help` of every command, one-line errors
//! and exit codes, `tune check`/`status` on a fixed fake /proc+/sys tree, the self-test's
//! journal entries (the key=value lines it writes to standard error without journald),
//! its results file, Prometheus textfile and `report` table, the text and `-h` dump of
//! real `cyclic`, `pmq` and `pipe` runs, their JSON, and a plot of a fixed dump.
//!
//! Measured numbers differ from run to run: [`shape`] replaces them (and tids, times,
//! paths) before comparing; everything else must match byte for byte. The expected
//! files are `tests/golden/*.txt`. `RTBENCH_BLESS=1 cargo test --test golden` rewrites
//! them — only for a deliberate change of output, and the diff is then part of the review.
//!
//! The same binary holds what else is checked against files in the repository: the
//! byte-exact sink goldens (`golden_sinks`), the generated man pages and completions
//! (`generated_docs`, which RTBENCH_BLESS=1 regenerates too), the layering rules of
//! docs/ARCHITECTURE.md (`architecture`), and the commands and links of README.md and
//! docs/*.md against the parser and the files (`doc_commands`), and the function-length
//! budget (`function_length`, with `long_functions.txt`).

#[path = "../common/mod.rs"]
mod common;

mod architecture;
mod doc_commands;
mod function_length;
mod generated_docs;
mod golden_sinks;

use common::tune_tree;

use common::*;
use regex_lite::Regex;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Compares `actual` with `tests/golden/NAME.txt` (or writes it with RTBENCH_BLESS=1).
fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.txt"));
    if std::env::var_os("RTBENCH_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (RTBENCH_BLESS=1 writes it)", path.display()));
    if want != actual {
        let first = want
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| want.lines().count().min(actual.lines().count()));
        panic!(
            "{name}: output differs from {} at line {}:\n  want: {:?}\n  got:  {:?}\n--- got (whole) ---\n{actual}",
            path.display(),
            first + 1,
            want.lines().nth(first),
            actual.lines().nth(first)
        );
    }
}

/// The binary's path as it appears in argv-echoing output.
fn exe() -> String {
    env!("CARGO_BIN_EXE_rtbench").to_string()
}

/// Numbers become `N` (with the spaces that pad them: widths are checked by the
/// library's byte-exact tests), `-h` bucket rows and overflow cycle lists are dropped
/// (their count depends on the samples; [`dump_adds_up`] checks them instead).
fn shape(text: &str) -> String {
    let num = Regex::new(r"[ ]*\d+(\.\d+)?").unwrap();
    let mut out = String::new();
    for l in text.lines() {
        if l.len() >= 7 && l.as_bytes()[..6].iter().all(u8::is_ascii_digit) {
            continue; // a histogram row: `%06d %06lu\t...`
        }
        let l = match l.strip_prefix("# Thread ") {
            Some(rest) if rest.contains(':') => "# Thread N: <overflow cycles>".to_string(),
            _ => num.replace_all(l, " N").into_owned(),
        };
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// Checks a `-h` dump: per thread, bucket counts plus overflows equal `samples`.
fn dump_adds_up(text: &str, threads: usize, samples: u64) {
    let mut sums = vec![0u64; threads];
    for l in text.lines() {
        if l.len() >= 7 && l.as_bytes()[..6].iter().all(u8::is_ascii_digit) {
            let cols: Vec<u64> = l[7..].split('\t').map(|c| c.parse().unwrap()).collect();
            for (s, c) in sums.iter_mut().zip(cols) {
                *s += c;
            }
        }
    }
    let ovf = text
        .lines()
        .find_map(|l| l.strip_prefix("# Histogram Overflows:"))
        .expect("overflow line");
    for (i, o) in ovf.split_whitespace().take(threads).enumerate() {
        sums[i] += o.parse::<u64>().unwrap();
    }
    assert_eq!(sums, vec![samples; threads], "{text}");
}

fn run_output(args: &[&str]) -> Output {
    rtbench().args(args).output().expect("run rtbench")
}

/// `exit N`, then standard output and standard error as given.
fn transcript(o: &Output) -> String {
    format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        o.status.code().unwrap_or(-1),
        stdout(o),
        stderr(o)
    )
}

#[test]
fn help_of_every_command() {
    let mut all = String::new();
    for args in [
        &["--help"][..],
        &["cyclic", "--help"],
        &["pmq", "--help"],
        &["pipe", "--help"],
        &["oslat", "--help"],
        &["load", "--help"],
        &["sysinfo", "--help"],
        &["selftest", "--help"],
        &["report", "--help"],
        &["plot", "--help"],
        &["tune", "--help"],
        &["tune", "check", "--help"],
        &["tune", "apply", "--help"],
        &["tune", "revert", "--help"],
        &["tune", "status", "--help"],
        &["config", "--help"],
        &["config", "check", "--help"],
        &[],
        &["tune"],
    ] {
        let o = run_output(args);
        all.push_str(&format!(
            "=== rtbench {}\n{}",
            args.join(" "),
            transcript(&o)
        ));
    }
    golden("help", &all);
}

#[test]
fn usage_errors_are_one_line_with_exit_codes() {
    let dir = TempDir::new("golden-usage");
    let d = dir.display().to_string();
    let cases: Vec<String> = [
        "cyclic -p 100",
        "cyclic -i 0",
        "cyclic -i 3600000001",
        "cyclic -D 5x",
        "cyclic -h 0",
        "cyclic -h 10 -H 0",
        "cyclic --histfile x.hist",
        "cyclic --tracemark",
        "cyclic -b 0",
        "cyclic --policy deadline",
        "cyclic --policy other -p 5",
        "cyclic --policy fifo -p 0",
        "cyclic -c 7",
        "cyclic -t 0",
        "cyclic -t x",
        "cyclic -a abc",
        "cyclic -a 3-1",
        "cyclic -m --no-mlockall",
        "cyclic --report-interval 0",
        "cyclic --latency -1",
        "cyclic -t 3 -p 2 --priospread",
        "cyclic --json /nonexistent-rtbench-dir/out.json",
        "cyclic --json {DIR}",
        "cyclic --load disk:2",
        "cyclic --load vm:1:10Q",
        "cyclic --load cpu:0",
        "cyclic --load-cmd no-such-rtbench-cmd",
        "cyclic --load-cpus 0",
        "cyclic --bogus",
        // rt-tests options rtbench lacks (docs/COMPAT.md), getopt's own
        // errors, and clap's whole message (the tip, the missing arguments) on one line.
        "cyclic -s",
        "cyclic -qMm",
        "cyclic -o 10",
        "cyclic -v -o 0",
        "cyclic --smi",
        "cyclic --numa",
        "cyclic --hist 5",
        "cyclic -p 80 foo",
        "cyclic --inteval 5",
        "cyclic -i abc",
        "cyclic -l",
        "cyclic --quiet=1",
        "cyclic --histogram-layout bad",
        "pmq --forcetimeout",
        "plot",
        "pmq -i 0",
        "pmq -p 100",
        "pmq -T 0",
        "pmq -f 1",
        "pmq -T 1 -f 0",
        "pmq -T 100000",
        "pmq -t 5000",
        "pmq -h 0",
        "pmq -b 0",
        "pipe -i 3600000001",
        "pipe --load-cpus 0",
        "load",
        "load -D 5x --load cpu:1",
        "load-worker vm x",
        "load-worker disk",
        "report --dir {DIR}",
        "plot {DIR}/missing.json -o {DIR}/x.svg",
        "plot {DIR} -o {DIR}/x.svg",
        "plot - -o {DIR}/x.svg --x-max 0",
        "plot - -o {DIR}/x.svg --x-max -inf",
        "report --since -1d",
        "monitor -i -1",
        "monitor -a -1",
        "cyclic -i 1ms -l 1",
        "monitor --window -5m",
        "load -D -3s --load cpu:1",
        "tune check --config {DIR}/missing.toml",
        "selftest --config {DIR}/missing.toml",
        "frobnicate",
    ]
    .iter()
    .map(|s| s.replace("{DIR}", &d))
    .collect();
    let mut all = String::new();
    for args in &cases {
        let o = rtbench()
            .args(args.split_whitespace())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        all.push_str(&format!("=== rtbench {args}\n{}", transcript(&o)));
    }
    golden("usage_errors", &all.replace(&d, "$DIR"));
}

/// Runs `rtbench tune ARGS --config FILE --sysroot TREE` on the 4-CPU fake tree.
fn tune_on_tree(t: &tune_tree::Tree, config: &str, args: &[&str]) -> String {
    let cfg = t.join("rtbench.toml");
    std::fs::write(&cfg, config).unwrap();
    let o = rtbench()
        .args(args)
        .arg("--config")
        .arg(&cfg)
        .arg("--sysroot")
        .arg(t.join("root"))
        .output()
        .unwrap();
    transcript(&o).replace(&t.display().to_string(), "$TREE")
}

#[test]
fn tune_check_and_status_on_a_fake_tree() {
    let t = tune_tree::Tree::new("golden-tune");
    t.file(
        "proc/cmdline",
        "BOOT_IMAGE=/vmlinuz root=/dev/vda1 isolcpus=3\n",
    );
    t.file("sys/devices/system/cpu/isolated", "3\n");
    t.file("sys/devices/system/cpu/nohz_full", "(null)\n");
    let full = format!(
        "{}[tuning.boot]\nisolcpus = [\"domain\", \"managed_irq\"]\nnohz_full = true\n\
         rcu_nocbs = true\nirqaffinity = true\n[tuning.memory]\nthp = \"never\"\n",
        t.config_text("")
    );
    let mut all = String::new();
    for (name, cfg, args) in [
        ("check", full.as_str(), &["tune", "check"][..]),
        ("check --json", full.as_str(), &["tune", "check", "--json"]),
        ("status (no journal)", full.as_str(), &["tune", "status"]),
        (
            "status --json (no journal)",
            full.as_str(),
            &["tune", "status", "--json"],
        ),
        ("check, empty config", "", &["tune", "check"]),
    ] {
        all.push_str(&format!("=== {name}\n{}", tune_on_tree(&t, cfg, args)));
    }
    golden("tune_tree", &all);
}

#[test]
fn configuration_errors_name_file_line_key() {
    let t = tune_tree::Tree::new("golden-cfg");
    let cases = [
        "[tuning]\nisolatd = \"1\"\n",
        "[tunning]\n",
        "[tuning.sysctl]\n\nprintk = \"one\"\n",
        "[tuning.sysctl]\nprintk = 9\n",
        "[tuning]\nisolated = \"5\"\n",
        "[tuning]\nisolated = \"0-1\"\n",
        "[tuning]\nisolated = \"2\"\nhousekeeping = \"1-2\"\n",
        "[tuning.irq]\naffinity = true\n",
        "[tuning.boot]\nisolcpus = [\"domain\", \"bogus\"]\n",
        "[tuning]\nisolated = \"2\"\n[tuning.sysctl]\nsched_rt_runtime_us = -1\n",
        "[tuning.power]\ngovernor = \"perf ormance\"\n",
        "[tuning]\njournal_dir = \"run/rtbench\"\n",
        "[selftest]\nduration = \"5x\"\n",
        "[selftest]\nduration = \"0s\"\n",
        "[selftest]\nmode = \"sometimes\"\n",
        "[cyclic]\npriority = 0\n",
        "[cyclic]\n# the interval\ninterval_us = 0\n",
        "[cyclic]\ncpus = \"7\"\n",
        "[cyclic]\ncpus = \"x-y\"\n",
        "[cyclic]\nprioriti = 5\n",
        "[load]\nspec = \"disk:2\"\n",
        "[load]\ncmd = \"no-such-rtbench-cmd --x\"\n",
        "[load]\nspec = \"cpu:1\"\ncpus = \"9\"\n",
        "[load]\ncpus = \"0\"\n",
        "[limits]\nmax_us = -5\n",
        "[limits.pmq]\nmax_us = 5\n",
        "[limits]\nmax_us = 100\n\n[limits.pipe]\np99_us = 5\n",
        "[[limits.cpus]]\ncpus = \"0\"\ntest = \"pmqtest\"\n",
        "[[limits.cpus]]\ncpus = \"0\"\nmax_us = 5\n[[limits.cpus]]\ncpus = \"4\"\n",
        "[output]\nkeep = 0\n",
        "[output]\nresults_dir = \"results\"\n",
        "[output]\nprometheus = \"/nonexistent-rtbench-dir/x.prom\"\n",
        "[cyclic\n",
        // An array of tables where a table is expected.
        "[[cyclic]]\ncpus = \"0\"\n",
        // Inside a condition: its own section keyed in it, an inherited one named as
        // inherited, both naming the condition.
        "[[condition]]\nname = \"idle\"\n[[condition]]\nname = \"stress\"\n[[condition.limits.cpus]]\ncpus = \"9\"\nmax_us = 5\n",
        "[[limits.cpus]]\ncpus = \"9\"\nmax_us = 5\n[[condition]]\nname = \"idle\"\n",
        "[[condition]]\nname = \"idle\"\n[condition.load]\nspec = \"cpu:x\"\n",
    ];
    let mut all = String::new();
    for cfg in cases {
        all.push_str(&format!(
            "=== {cfg:?}\n{}",
            tune_on_tree(&t, cfg, &["tune", "check"])
        ));
    }
    golden("config_errors", &all);
}

/// The self-test's configuration errors as journal entries (key=value lines on stderr).
#[test]
fn selftest_configuration_errors_as_journal_entries() {
    let dir = TempDir::new("golden-st-cfg");
    let cases = [
        "[tuning]\nisolatd = \"1\"\n",
        "[tuning.sysctl]\n\nprintk = \"one\"\n",
        "[tuning.sysctl]\nprintk = 9\n",
        "[tuning]\nisolated = \"0\"\n",
        "[selftest]\nduration = \"5x\"\n",
        "[cyclic]\npriority = 0\n",
        "[cyclic]\n# the interval\ninterval_us = 0\n",
        "[cyclic]\nprioriti = 5\n",
        "[load]\nspec = \"disk:2\"\n",
        "[load]\ncmd = \"no-such-rtbench-cmd --x\"\n",
        "[load]\ncpus = \"0\"\n",
        "[limits.pmq]\nmax_us = 5\n",
        "[[limits.cpus]]\ncpus = \"0\"\ntest = \"pmqtest\"\n",
        "[pmq]\ninterval_us = 0\n",
        "[pipe]\ninterval_us = 0\n",
        "[[limits.cpus]]\ncpus = \"0\"\ntest = \"pipe\"\nmax_us = 150\n",
        "[cyclic]\ncpus = \"0\"\n[[limits.cpus]]\ncpus = \"1\"\nmax_us = 30\n",
        "[[limits.cpus]]\ncpus = \"0\"\n",
        "[pipe]\nmsgsize = 64\n",
        "[pmq]\ncpus = \"0\"\npairs = 2\n",
        "[output]\nkeep = 0\n",
        "[output]\nresults_dir = \"results\"\n",
        "[cyclic\n",
    ];
    let cfg = dir.join("rtbench.toml");
    let mut all = String::new();
    for text in cases {
        std::fs::write(&cfg, text).unwrap();
        let o = rtbench()
            .args(["selftest", "--log-format", "logfmt", "--config"])
            .arg(&cfg)
            .output()
            .unwrap();
        all.push_str(&format!("=== {text:?}\n{}", transcript(&o)));
    }
    golden(
        "selftest_config_errors",
        &all.replace(&dir.display().to_string(), "$DIR"),
    );
}

/// Numbers in one logfmt field value become N; paths and the kernel are masked.
fn shape_logfmt(line: &str, dir: &str) -> String {
    let masked = Regex::new(r#"RTBENCH_KERNEL=("[^"]*"|\S+)"#)
        .unwrap()
        .replace_all(line, "RTBENCH_KERNEL=<release>")
        .replace(dir, "$DIR");
    // The verdict line names the kernel and its preemption model: this machine's.
    let masked = Regex::new(r"\b(PREEMPT_\w+|PREEMPT|unknown) kernel \S+( \(not PREEMPT_RT\))?")
        .unwrap()
        .replace_all(&masked, "<model> kernel <release>");
    let masked = Regex::new(r"RTBENCH_BOOT_ID=\S+")
        .unwrap()
        .replace_all(&masked, "RTBENCH_BOOT_ID=<boot>");
    let stamp = Regex::new(r"run-\d{6}-\d{8}T\d{6}Z").unwrap();
    let masked = stamp.replace_all(&masked, "run-<seq>-<stamp>");
    let num = Regex::new(r"\d+(\.\d+)?").unwrap();
    // MESSAGE_ID is hex: keep it as it is.
    let (id, rest) = masked.split_at(masked.find(' ').unwrap_or(masked.len()));
    format!("{id}{}", num.replace_all(rest, "N"))
}

#[test]
fn selftest_journal_entries_results_file_prometheus_and_report() {
    let dir = TempDir::new("golden-st");
    let d = dir.display().to_string();
    let cfg = dir.join("rtbench.toml");
    std::fs::write(&cfg, crate::common::on_any_kernel(&format!(
            "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[cyclic]\ncpus = \"0\"\ninterval_us = 500\n\
             [load]\nspec = \"cpu:1\"\ncpus = \"0\"\n[limits]\nmax_us = 60000000\n\
             [output]\nresults_dir = \"{d}/results\"\nkeep = 2\nprometheus = \"{d}/rtbench.prom\"\n"
        )))
    .unwrap();
    let o = rtbench()
        .args(["selftest", "--log-format", "logfmt", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    let journal: Vec<String> = err
        .lines()
        .filter(|l| l.starts_with("MESSAGE_ID="))
        .map(|l| shape_logfmt(l, &d))
        .collect();
    let other_stderr: Vec<String> = err
        .lines()
        .filter(|l| !l.starts_with("MESSAGE_ID="))
        .map(|l| shape(l).trim_end().to_string())
        .collect();
    let kernel = Regex::new(r"(?m)^kernel .*$").unwrap();
    let boot = Regex::new(r"\bboot [0-9a-f]{8}\b").unwrap();
    let mut all = format!(
        "=== stdout\n{}=== stderr, journal entries\n{}\n=== stderr, other\n{}\n",
        shape(&boot.replace_all(
            &kernel.replace_all(&stdout(&o), "kernel <release>"),
            "boot <boot>"
        )),
        journal.join("\n"),
        other_stderr.join("\n")
    );
    // The results file: its keys and the values that do not depend on the run.
    let files: Vec<PathBuf> = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let stored = std::fs::read_to_string(&files[0]).unwrap();
    serde_json::from_str::<Value>(&stored).expect("the results file is JSON");
    // The sample count depends on the duration here (no -l): mask it too.
    let count = Regex::new(r#""count": \d+"#).unwrap();
    let stored = count.replace_all(&stored, "\"count\": \"<number>\"");
    all.push_str(&format!("=== results file\n{}", json_shape(&stored)));
    let prom = std::fs::read_to_string(dir.join("rtbench.prom")).unwrap();
    let release = Regex::new(r#"release="[^"]*""#).unwrap();
    let num = Regex::new(r"\s[-+0-9.e]+$").unwrap();
    let prom: Vec<String> = prom
        .lines()
        .map(|l| {
            let l = release.replace_all(l, "release=\"<release>\"");
            if l.starts_with('#') {
                l.into_owned()
            } else {
                num.replace_all(&l, " N").into_owned()
            }
        })
        .collect();
    all.push_str(&format!("=== prometheus\n{}\n", prom.join("\n")));
    // report reads results_dir from the configuration.
    let rep = rtbench()
        .args(["report", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    let rep_text = transcript(&rep).replace(&d, "$DIR");
    let stamp = Regex::new(r"run-\d{6}-\d{8}T\d{6}Z").unwrap();
    let rep_text = stamp.replace_all(&rep_text, "run-<seq>-<stamp>");
    let rep_text = boot.replace_all(&rep_text, "boot <boot>");
    all.push_str(&format!(
        "=== report\n{}",
        shape(&kernel.replace_all(&rep_text, "kernel <release>"))
    ));
    golden("selftest_run", &all);
}

/// Pretty-printed JSON (as rtbench writes it, keys in its order) with run-dependent
/// values replaced: times, tids/pids, measured figures, the machine's snapshot (each
/// value becomes its type), histogram buckets. Keys, their order and every value the
/// command line decides are kept.
fn json_shape(text: &str) -> String {
    const KEEP: &[&str] = &[
        "file_version",
        "num_threads",
        "resolution_in_ns",
        "return_code",
        "cpu",
        "node",
        "priority",
        "interval",
        "interval_us",
        "thread",
        "pair",
        "pm_qos_us",
        "histogram_bucket_ns",
        "samples",
        "cycles",
        "count",
        "keep",
        "limit",
        "exit_code",
    ];
    const SKIP: &[&str] = &["histogram", "pids", "histogram_overflow_cycles", "tuning"];
    let re = Regex::new(r#"^(\s*)(?:"((?:[^"\\]|\\.)*)": )?(.*?)(,?)$"#).unwrap();
    let mut out: Vec<String> = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    let mut skipping: Option<usize> = None;
    for line in text.lines() {
        let c = re.captures(line).unwrap();
        let indent = &c[1];
        let key = c.get(2).map(|m| m.as_str().to_string());
        let keypart = key
            .as_ref()
            .map(|k| format!("\"{k}\": "))
            .unwrap_or_default();
        let value = &c[3];
        let comma = &c[4];
        let ctx = key
            .clone()
            .or_else(|| stack.last().cloned())
            .unwrap_or_default();
        if value == "}" || value == "]" {
            let depth = stack.len();
            stack.pop();
            if skipping == Some(depth) {
                skipping = None;
                out.last_mut().unwrap().push_str(comma);
            } else if skipping.is_none() {
                out.push(line.to_string());
            }
            continue;
        }
        if value == "{" || value == "[" {
            let in_sysinfo = stack.iter().any(|k| k == "sysinfo");
            stack.push(ctx.clone());
            if skipping.is_none() {
                if SKIP.contains(&ctx.as_str()) || in_sysinfo {
                    skipping = Some(stack.len());
                    let what = if in_sysinfo {
                        sysinfo_type(&ctx, value)
                    } else {
                        "<run-dependent>"
                    };
                    out.push(format!("{indent}{keypart}\"{what}\""));
                } else {
                    out.push(line.to_string());
                }
            }
            continue;
        }
        if skipping.is_some() {
            continue;
        }
        let v = if SKIP.contains(&ctx.as_str()) {
            "\"<run-dependent>\"".to_string()
        } else if stack.iter().any(|k| k == "sysinfo") || ctx == "sysinfo" {
            format!("\"{}\"", sysinfo_type(&ctx, value))
        } else if value.starts_with('"') {
            match ctx.as_str() {
                "start_time" | "end_time" | "rt_test_version:" | "version" | "rtbench_version"
                | "boot_id" | "machine_id" | "invocation_id" | "unit" => {
                    "\"<run-dependent>\"".to_string()
                }
                "cmdline:" => value.replace(&exe(), "rtbench"),
                "text" | "path" => "\"<config>\"".to_string(),
                _ => value.to_string(),
            }
        } else if value.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
            if KEEP.contains(&ctx.as_str()) {
                value.to_string()
            } else {
                "\"<number>\"".to_string()
            }
        } else {
            value.to_string()
        };
        out.push(format!("{indent}{keypart}{v}{comma}"));
    }
    out.join("\n") + "\n"
}

/// The JSON type of a system snapshot value; `cpuset` is `null` in the top cpuset and
/// an object inside one, which depends on where the tests run, as do the CPU model and
/// the kernel configuration (`null` where the machine does not say).
fn sysinfo_type(key: &str, v: &str) -> &'static str {
    if key == "cpuset" {
        "null or object"
    } else if key == "cpu_model" || key == "kernel_config_hash" {
        "null or string"
    } else {
        type_name(v)
    }
}

fn type_name(v: &str) -> &'static str {
    match v.chars().next() {
        Some('"') => "string",
        Some('t') | Some('f') => "bool",
        Some('n') => "null",
        Some('[') => "array",
        Some('{') => "object",
        _ => "number",
    }
}

/// A real run: standard output and error in [`shape`], plus the JSON file's shape.
fn measured(name: &str, args: &[&str], json: bool) -> String {
    let dir = TempDir::new(&format!("golden-run-{name}"));
    let json_path = dir.join("out.json");
    let mut cmd = rtbench();
    cmd.args(args);
    if json {
        cmd.arg("--json").arg(&json_path);
    }
    let o = cmd.output().unwrap();
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(1),
        "{args:?}: {}",
        stderr(&o)
    );
    let mut s = format!(
        "=== rtbench {}\nexit {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        o.status.code().unwrap_or(-1),
        shape(&stdout(&o)),
        shape(&stderr(&o))
    );
    if json {
        let text = std::fs::read_to_string(&json_path).unwrap();
        serde_json::from_str::<Value>(&text).expect("the --json file is JSON");
        s.push_str(&format!("--- json\n{}", json_shape(&text)));
    }
    s.replace(&dir.display().to_string(), "$DIR")
}

#[test]
fn cyclic_text_dump_and_json() {
    let mut all = String::new();
    all += &measured(
        "q",
        &[
            "cyclic", "-a", "0", "-t", "2", "-l", "30", "-i", "500", "-q", "-p", "90",
        ],
        true,
    );
    all += &measured(
        "qn",
        &[
            "cyclic", "-a", "0", "-t", "2", "-l", "30", "-i", "500", "-q", "-N", "--policy", "rr",
        ],
        true,
    );
    all += &measured(
        "spread",
        &[
            "cyclic",
            "-a",
            "0",
            "-t",
            "3",
            "-l",
            "10",
            "-q",
            "-p",
            "80",
            "--priospread",
            "-d",
            "100",
        ],
        false,
    );
    for (name, extra) in [
        ("h", &["-h", "20000"][..]),
        ("hq", &["-h", "20000", "-q"]),
        ("H", &["-H", "20000", "-q"]),
        (
            "Hlegacy",
            &["-H", "20000", "-q", "--histogram-layout", "legacy"],
        ),
        ("hN", &["-h", "20000", "-q", "-N"]),
    ] {
        let mut args = vec![
            "cyclic", "-a", "0", "-t", "2", "-l", "30", "-i", "500", "-p", "90",
        ];
        args.extend_from_slice(extra);
        // Live lines depend on timing; -l 30 at 500 µs ends before the first report.
        let o = rtbench().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        dump_adds_up(&stdout(&o), 2, 30);
        all += &measured(name, &args, name == "hq");
    }
    // --json -: standard output holds exactly the document.
    let o = run_output(&[
        "cyclic", "-a", "0", "-l", "10", "-i", "500", "-p", "90", "--json", "-",
    ]);
    assert_eq!(o.status.code(), Some(0));
    serde_json::from_slice::<Value>(&o.stdout).expect("stdout is one JSON document");
    all += &format!(
        "=== rtbench cyclic ... --json -\n--- stderr\n{}--- stdout (json)\n{}",
        shape(&stderr(&o)),
        json_shape(&stdout(&o))
    );
    golden("cyclic_runs", &all);
}

#[test]
fn pair_text_dump_and_json() {
    let mut all = String::new();
    all += &measured(
        "pmq",
        &["pmq", "-a", "0", "-t", "2", "-l", "20", "-i", "100", "-q"],
        true,
    );
    all += &measured(
        "pmq-S",
        &[
            "pmq", "-a", "0", "-t", "2", "-l", "20", "-i", "100", "-q", "-p", "70", "-h", "20000",
        ],
        true,
    );
    all += &measured(
        "pmq-N",
        &[
            "pmq", "-a", "0", "-l", "20", "-i", "100", "-q", "-N", "-T", "5",
        ],
        true,
    );
    all += &measured("pipe", &["pipe", "-a", "0", "-l", "50", "-q"], true);
    all += &measured(
        "pipe-fork",
        &[
            "pipe", "--fork", "-a", "0", "-l", "50", "-q", "-p", "0", "-h", "20000",
        ],
        true,
    );
    golden("pair_runs", &all);
}

#[test]
fn plot_of_a_fixed_dump() {
    let dir = TempDir::new("golden-plot");
    let dump = "# /dev/cpu_dma_latency set to 0us\n# Histogram\n\
        000003 000010\t000002\n000004 000120\t000090\n000005 000030\t000050\n\
        000009 000001\t000000\n000012 000000\t000003\n\
        # Min Latencies: 00003 00003\n# Avg Latencies: 00004 00005\n\
        # Max Latencies: 00031 00012\n# Histogram Overflows: 00001 00000\n\
        # Histogram Overflow at cycle number:\n# Thread 0: 00077\n# Thread 1:\n\n";
    let input = dir.join("hist.txt");
    std::fs::write(&input, dump).unwrap();
    let o = rtbench()
        .args(["plot"])
        .arg(&input)
        .args(["-o", "-", "--title", "golden"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    golden(
        "plot",
        &transcript(&o).replace(&dir.display().to_string(), "$DIR"),
    );
}

#[test]
fn sysinfo_keys() {
    let o = run_output(&["sysinfo"]);
    let text = stdout(&o);
    let keys: Vec<&str> = text
        .lines()
        .map(|l| l.split(':').next().unwrap_or(""))
        .collect();
    let o = run_output(&["sysinfo", "--json"]);
    serde_json::from_slice::<Value>(&o.stdout).expect("sysinfo --json is JSON");
    // The snapshot's values depend on the machine: keep keys and types.
    let typed = format!("{{\n  \"sysinfo\": {}}}\n", stdout(&o));
    golden(
        "sysinfo",
        &format!("{}\n{}", keys.join("\n"), json_shape(&typed)),
    );
}

//! The man pages (`docs/man/*.1`) and shell completions (`docs/completions/`) are
//! generated from the clap definitions in `src/cli/` — the same ones `--help` prints —
//! by clap_mangen and clap_complete, and checked in so that the Yocto recipe and the
//! Buildroot package install them without running anything on the build host.
//! `docs/man/rtbench.toml.5` is generated from the configuration template
//! (`systemd/rtbench.toml`, which `rtbench config template` prints): one source for
//! the file, the command and the page.
//!
//! This test regenerates them and fails when a checked-in file differs (a flag or help
//! text changed without regenerating). To regenerate:
//!
//! ```sh
//! RTBENCH_BLESS=1 cargo test --test golden generated_docs
//! ```
//!
//! It also checks the pages with `man` (`groff` warnings) when it is installed, and the
//! bash completion with `bash -n`.
// The checked-in pages and completions are those of the default features.
#![cfg(all(feature = "plot", feature = "monitor", feature = "diagnose"))]

use clap::CommandFactory;
use clap_complete::Shell;
use clap_mangen::roff::{roman, Roff};
use clap_mangen::Man;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The exit codes every rtbench command shares (src/error.rs, `exit`).
const EXIT_STATUS: &str = "\
0   success: the measurement ran, the self-test passed, no deviation
1   a limit was exceeded (-b, [limits]), the self-test failed or judged nothing
    (unjudged), tuning deviates or tune check compared nothing; report: this
    boot's run failed or is missing
2   bad command line or configuration; nothing was started or changed
3   the environment refused (SCHED_FIFO, mlockall, not root, lock or journal, a
    kernel write of tune apply or revert: apply rolls back what it changed)
4   selftest: invalid, every limit was exceeded only by samples that are not the
    system's latency (a stopped process, RT throttling); measure again
130 interrupted by SIGINT (143: SIGTERM), after writing what was measured";

/// The exit codes of `rtbench config` (src/app/config.rs).
const CONFIG_EXIT_STATUS: &str = "\
0   the template was printed, or the file is valid (or absent: the defaults apply)
2   the file is not valid: one line names file, line, key and what was expected";

/// Files a command reads or writes, by subcommand name (top-level page: every one).
fn files(name: &str) -> &'static [(&'static str, &'static str)] {
    const CONFIG: (&str, &str) = (
        "/etc/rtbench/rtbench.toml",
        "configuration of rtbench selftest, monitor and tune",
    );
    const STORE: (&str, &str) = (
        "/var/lib/rtbench/",
        "stored self-test results (run-*.json); monitor/: the monitor's window store \
         (windows.jsonl) and state (state.json)",
    );
    const RUN: (&str, &str) = (
        "/run/rtbench/",
        "tuning transaction journal and lock; unstored-run.json, this boot's self-test result when the store could not take it",
    );
    const PMQOS: (&str, &str) = (
        "/dev/cpu_dma_latency",
        "PM QoS request held while measuring",
    );
    match name {
        "rtbench" => &[CONFIG, STORE, RUN, PMQOS],
        "cyclic" | "pmq" | "pipe" => &[PMQOS],
        "selftest" => &[CONFIG, STORE, RUN, PMQOS],
        "monitor" => &[CONFIG, STORE, PMQOS],
        "tune" | "check" | "apply" | "revert" | "status" => &[CONFIG, RUN],
        "report" | "diagnose" => &[CONFIG, STORE],
        _ => &[],
    }
}

/// One man page per visible command, named like git's (`rtbench-tune-check.1`).
fn man_pages() -> BTreeMap<String, Vec<u8>> {
    let mut cmd = rtbench::cli::Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut pages = BTreeMap::new();
    let names: Vec<String> = std::iter::once("rtbench".to_string())
        .chain(all(&cmd).iter().map(page_name))
        .collect();
    add_pages(&cmd, &names, &mut pages);
    pages.insert("rtbench.toml.5".to_string(), config_page());
    pages
}

fn all(cmd: &clap::Command) -> Vec<clap::Command> {
    let mut v = Vec::new();
    for s in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        v.push(s.clone());
        v.extend(all(s));
    }
    v
}

fn page_name(cmd: &clap::Command) -> String {
    cmd.get_display_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_string()
}

fn add_pages(cmd: &clap::Command, names: &[String], pages: &mut BTreeMap<String, Vec<u8>>) {
    let name = page_name(cmd);
    let man = Man::new(cmd.clone())
        // The version without the revision: the pages change with releases, not commits.
        .source(format!("rtbench {}", env!("CARGO_PKG_VERSION")))
        .manual("rtbench manual");
    let mut out = Vec::new();
    man.render_title(&mut out).unwrap();
    man.render_name_section(&mut out).unwrap();
    man.render_synopsis_section(&mut out).unwrap();
    man.render_description_section(&mut out).unwrap();
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out).unwrap();
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut out).unwrap();
    }
    let mut roff = Roff::new();
    if let Some(after) = cmd.get_after_help() {
        after_help(&mut roff, &after.to_string());
    }
    roff.control("SH", ["EXIT STATUS"]);
    // `config` prints or checks a file: its own two codes, as its --help says.
    let status = if page_name(cmd).starts_with("rtbench-config") {
        CONFIG_EXIT_STATUS
    } else {
        EXIT_STATUS
    };
    preformatted(&mut roff, status);
    let short = cmd.get_name();
    let f = files(short);
    if !f.is_empty() {
        roff.control("SH", ["FILES"]);
        for (path, what) in f {
            roff.control("TP", []);
            roff.text([clap_mangen::roff::bold(*path)]);
            roff.text([roman(*what)]);
        }
    }
    roff.control("SH", ["SEE ALSO"]);
    let mut see: Vec<String> = names
        .iter()
        .filter(|n| **n != name)
        .map(|n| format!("{n}(1)"))
        .collect();
    see.extend(
        [
            "rtbench.toml(5)",
            "cyclictest(8)",
            "pmqtest(8)",
            "journalctl(1)",
        ]
        .map(String::from),
    );
    roff.text([roman(see.join(", "))]);
    roff.control("PP", []);
    roff.text([roman(
        "README.md and docs/ in the rtbench source; rtbench.toml(5) and \
         `rtbench config template` document every configuration key.",
    )]);
    roff.to_writer(&mut out).unwrap();
    pages.insert(format!("{name}.1"), out);
    for s in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        add_pages(s, names, pages);
    }
}

/// rtbench.toml(5): the template's opening comment is the description, and each of its
/// sections (`[cyclic]`, or commented out as `# [pmq]`) a subsection with its lines as
/// written — the keys, their defaults and the comments that say what they do.
fn config_page() -> Vec<u8> {
    // groff reads its input as Latin-1: µ is in it, the em dash is not.
    let template = rtbench::config::TEMPLATE.replace('—', "-");
    let mut roff = Roff::new();
    let source = format!("rtbench {}", env!("CARGO_PKG_VERSION"));
    roff.control(
        "TH",
        ["rtbench.toml", "5", "", source.as_str(), "rtbench manual"],
    );
    roff.control("SH", ["NAME"]);
    roff.text([roman(
        "rtbench.toml - configuration of rtbench selftest, monitor and tune",
    )]);
    roff.control("SH", ["SYNOPSIS"]);
    preformatted(
        &mut roff,
        "/etc/rtbench/rtbench.toml\n\
         rtbench config template      print this page's text, the installed default file\n\
         rtbench config check [FILE]  validate a file on this machine; run nothing",
    );
    roff.control("SH", ["DESCRIPTION"]);
    let header = |l: &str| -> Option<String> {
        let h = l.trim_start_matches('#').trim();
        let name = h.split("  #").next().unwrap_or(h).trim();
        let inner = name.strip_prefix('[')?.strip_suffix(']')?;
        let inner = inner.trim_matches(|c| c == '[' || c == ']');
        inner
            .chars()
            .all(|c| c.is_ascii_lowercase() || c == '.' || c == '_')
            .then(|| name.to_string())
    };
    let mut lines = template.lines().peekable();
    let mut intro = Vec::new();
    while let Some(l) = lines.next_if(|l| header(l).is_none()) {
        if let Some(t) = l.strip_prefix('#') {
            intro.push(t.trim());
        }
    }
    roff.text([roman(intro.join(" "))]);
    roff.control("PP", []);
    roff.text([roman(
        "The sections follow as the template writes them: a key's value is its default \
         unless its comment says \"example\"; a commented-out section or key is not set.",
    )]);
    roff.control("SH", ["SECTIONS"]);
    let mut body: Vec<&str> = Vec::new();
    let flush = |roff: &mut Roff, body: &mut Vec<&str>| {
        while body.last().is_some_and(|l| l.trim().is_empty()) {
            body.pop();
        }
        if !body.is_empty() {
            roff.control("nf", []);
            for l in body.iter() {
                if l.trim().is_empty() {
                    roff.control("sp", []);
                } else {
                    roff.text([roman(*l)]);
                    roff.control("br", []);
                }
            }
            roff.control("fi", []);
        }
        body.clear();
    };
    for l in lines {
        match header(l) {
            Some(name) => {
                flush(&mut roff, &mut body);
                roff.control("SS", [name.as_str()]);
                body.push(l);
            }
            None => body.push(l),
        }
    }
    flush(&mut roff, &mut body);
    roff.control("SH", ["FILES"]);
    roff.control("TP", []);
    roff.text([clap_mangen::roff::bold("/etc/rtbench/rtbench.toml")]);
    roff.text([roman(
        "read by rtbench selftest (rtbench.service), monitor, tune, report and diagnose; \
         --config FILE names another",
    )]);
    roff.control("SH", ["SEE ALSO"]);
    roff.text([roman(
        "rtbench(1), rtbench-config(1), rtbench-selftest(1), rtbench-tune(1), \
         rtbench-monitor(1), systemd.unit(5)",
    )]);
    let mut out = Vec::new();
    roff.to_writer(&mut out).unwrap();
    out
}

/// The `after_help` text (examples, notes): each paragraph that starts with a heading
/// line (`Examples:`, `Differences from cyclictest (on purpose):`) becomes a section of
/// that name; the other paragraphs belong to the section before them.
fn after_help(roff: &mut Roff, text: &str) {
    let mut first = true;
    for para in text.split("\n\n") {
        let (head, body) = para.split_once('\n').unwrap_or((para, ""));
        if !head.starts_with(' ') && head.ends_with(':') {
            let title = head.trim_end_matches(':').to_uppercase();
            roff.control("SH", [title.as_str()]);
            preformatted(roff, body);
        } else {
            if first {
                roff.control("SH", ["NOTES"]);
            } else {
                roff.control("PP", []);
            }
            preformatted(roff, para);
        }
        first = false;
    }
}

/// Lines as they are (examples are aligned in columns).
fn preformatted(roff: &mut Roff, text: &str) {
    roff.control("nf", []);
    for line in text.lines() {
        roff.text([roman(line)]);
        roff.control("br", []);
    }
    roff.control("fi", []);
}

fn completions() -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for (shell, name) in [
        (Shell::Bash, "rtbench.bash"),
        (Shell::Zsh, "_rtbench"),
        (Shell::Fish, "rtbench.fish"),
    ] {
        let mut cmd = rtbench::cli::Cli::command();
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut cmd, "rtbench", &mut out);
        files.insert(name.to_string(), out);
    }
    files
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs")
}

/// Compares `files` with directory `dir` (exactly that set of files), or rewrites the
/// directory with `RTBENCH_BLESS=1`.
fn check(dir: &Path, files: &BTreeMap<String, Vec<u8>>) {
    let bless = std::env::var_os("RTBENCH_BLESS").is_some();
    if bless {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).unwrap();
        for (name, bytes) in files {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
        return;
    }
    let mut on_disk: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let wanted: Vec<String> = files.keys().cloned().collect();
    let hint = "regenerate with: RTBENCH_BLESS=1 cargo test --test golden generated_docs";
    assert_eq!(
        on_disk,
        wanted,
        "{}: file set differs; {hint}",
        dir.display()
    );
    for (name, bytes) in files {
        let old = std::fs::read(dir.join(name)).unwrap();
        assert!(
            old == *bytes,
            "{}/{name} is stale (the clap definitions changed); {hint}",
            dir.display()
        );
    }
}

#[test]
fn man_pages_match_the_clap_definitions() {
    let pages = man_pages();
    // One page per visible command and subcommand.
    for name in [
        "rtbench.1",
        "rtbench-cyclic.1",
        "rtbench-tune-check.1",
        "rtbench-selftest.1",
        "rtbench-config-check.1",
        "rtbench.toml.5",
    ] {
        assert!(
            pages.contains_key(name),
            "{name} missing: {:?}",
            pages.keys()
        );
    }
    assert!(
        !pages.contains_key("rtbench-load-worker.1"),
        "hidden command has a page"
    );
    let cyclic = String::from_utf8(pages["rtbench-cyclic.1"].clone()).unwrap();
    assert!(cyclic.contains(".SH EXAMPLES"), "{cyclic}");
    assert!(cyclic.contains("\\-\\-mainaffinity"), "{cyclic}");
    assert!(!cyclic.contains("(rev "), "revision leaked into a page");
    // Every key of the template is in rtbench.toml(5), each section a subsection.
    let toml5 = String::from_utf8(pages["rtbench.toml.5"].clone()).unwrap();
    for needle in [
        ".SS [selftest]",
        ".SS [[limits.cpus]]",
        ".SS [tuning.boot]",
        "isolcpus = [\"domain\", \"managed_irq\"]",
        "buffer_kib = 512",
    ] {
        assert!(toml5.contains(needle), "{needle}: {toml5}");
    }
    check(&root().join("man"), &pages);
}

#[test]
fn completions_match_the_clap_definitions() {
    let files = completions();
    let bash = String::from_utf8(files["rtbench.bash"].clone()).unwrap();
    for word in ["cyclic", "selftest", "--mainaffinity", "--histogram-layout"] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    check(&root().join("completions"), &files);
}

/// The pages are valid roff for the board's `man` (groff warns about bad requests).
#[test]
fn man_pages_render_without_warnings() {
    if std::process::Command::new("groff")
        .arg("-v")
        .output()
        .is_err()
    {
        crate::common::skip("groff not installed: rendering not checked");
        return;
    }
    for (name, bytes) in man_pages() {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg("groff -man -Tutf8 -ww -z 2>&1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(&bytes)?;
                c.wait_with_output()
            })
            .unwrap();
        let warnings = String::from_utf8_lossy(&out.stdout);
        assert!(warnings.trim().is_empty(), "{name}: {warnings}");
    }
}

/// The bash completion parses.
#[test]
fn bash_completion_parses() {
    let path = root().join("completions/rtbench.bash");
    let st = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .status()
        .unwrap();
    assert!(st.success(), "bash -n {}", path.display());
}

/// `rtbench --version` names the source revision: in a git checkout, its commit.
#[test]
fn version_names_the_source_revision() {
    let out = std::process::Command::new(crate::common::exe())
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let prefix = format!("rtbench {} (rev ", env!("CARGO_PKG_VERSION"));
    let rev = text
        .strip_prefix(&prefix)
        .and_then(|r| r.strip_suffix(")\n"))
        .unwrap_or_else(|| panic!("{text:?}"));
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("RTBENCH_REVISION").is_none() && manifest.join(".git").exists() {
        let head = std::process::Command::new("git")
            .arg("-C")
            .arg(manifest)
            .args(["rev-parse", "--short=12", "HEAD"])
            .output()
            .unwrap();
        let head = String::from_utf8(head.stdout).unwrap();
        assert_eq!(rev.trim_end_matches("-dirty"), head.trim(), "{text:?}");
    } else {
        assert!(!rev.is_empty() && !rev.contains(' '), "{text:?}");
    }
}

//! The documentation cannot drift from the binary. For README.md and every docs/*.md:
//!
//! - every command line of a fenced code block that runs rtbench — `rtbench …`,
//!   `cargo run … -- …`, and `cyclictest …`/`pmqtest …`, which the docs present as
//!   rtbench called by those names (argv\[0\] dispatch, docs/COMPAT.md) — parses with
//!   rtbench's own command-line parser: [`rtbench::cli::getopt::prepare_with_command`]
//!   and then clap's tree, exactly as `src/app/mod.rs` `main` and
//!   `src/cli/parse.rs` `parse` do, without running anything. A misspelled option, a
//!   value of the wrong type or a removed subcommand fails the test with the file and
//!   line. In a `sh`/`bash`/`shell` block every line is a command; in any other block
//!   only a line after a `$ ` prompt is. Shell syntax is taken apart as sh would:
//!   continuation lines (`\`) joined, heredoc bodies skipped, comments dropped, pipes,
//!   `;`, `&&`, `||` and `&` split, quotes and escapes read by `shlex`, environment
//!   assignments, `sudo`/`env`/`nohup`/`exec`/`time` and redirections removed.
//! - every relative link and image (`[text](path#anchor)`) outside code, in those files
//!   and in benches/README.md, resolves to a file or directory of the repository, and its anchor to a heading of the target
//!   Markdown file (GitHub's slugs).
//! - the quick commands of README's "Quick start on a board" that need nothing
//!   root-only and change nothing run, in the order written, and do what the comments
//!   beside them say ([`readme_quick_commands_run`]).
//!
//! There is no dry-run flag in rtbench (a parse that stops before the plan), so the
//! parse is called through the library, as `main` calls it; the plan (which reads this
//! machine's CPUs) is not part of the check.

use rtbench::cli::getopt::{prepare_with_command, Tool};
use rtbench::cli::Cli;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Commands written in the docs that are deliberately not accepted by the parser, each
/// with why: `(file, the command as extracted, reason)`. Empty: every command shown is
/// one a user can type as written (placeholders such as FILE or N appear in prose
/// only, never in a fenced block).
const NOT_PARSED: &[(&str, &str, &str)] = &[];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and docs/*.md, repository-relative.
fn doc_files() -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| {
            p.strip_prefix(repo())
                .expect("under the repository")
                .to_path_buf()
        })
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// A fenced code block: its info string's first word and its lines (1-based numbers).
struct Block {
    lang: String,
    lines: Vec<(usize, String)>,
}

/// The fenced code blocks of `text` (``` or ~~~, also indented inside a list item),
/// and the text outside them with each block's lines blanked (line numbers kept).
fn split_fences(text: &str) -> (Vec<Block>, String) {
    let mut blocks = Vec::new();
    let mut outside = String::new();
    // The open block and its fence (``` or ~~~, three or more).
    let mut open: Option<(String, Block)> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let fence: String = match t.chars().next() {
            Some(c @ ('`' | '~')) => t.chars().take_while(|&x| x == c).collect(),
            _ => String::new(),
        };
        let is_fence = fence.len() >= 3;
        match open.take() {
            None if is_fence => {
                let lang = t[fence.len()..].split_whitespace().next().unwrap_or("");
                let lines = Vec::new();
                open = Some((
                    fence,
                    Block {
                        lang: lang.into(),
                        lines,
                    },
                ));
            }
            None => outside.push_str(line),
            // The closing fence: the same character, at least as long, nothing after.
            Some((f, b)) if is_fence && fence.starts_with(&f) && t.trim_end() == fence => {
                blocks.push(b)
            }
            Some((f, mut b)) => {
                b.lines.push((i + 1, line.to_string()));
                open = Some((f, b));
            }
        }
        outside.push('\n');
    }
    if let Some((_, b)) = open {
        blocks.push(b); // an unclosed fence runs to the end, as CommonMark says
    }
    (blocks, outside)
}

/// The command lines of a block: every line of a shell block, the `$ ` lines of any
/// other; continuation lines joined; heredoc bodies left out.
fn command_lines(block: &Block) -> Vec<(usize, String)> {
    let shell = matches!(block.lang.as_str(), "sh" | "bash" | "shell");
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut heredoc: Option<String> = None;
    let mut pending: Option<(usize, String)> = None;
    for (n, raw) in &block.lines {
        if let Some(end) = &heredoc {
            if raw.trim() == end {
                heredoc = None;
            }
            continue;
        }
        let line = match pending.take() {
            Some((first, mut acc)) => {
                acc.push(' ');
                acc.push_str(raw.trim());
                (first, acc)
            }
            None => {
                let t = raw.trim_start();
                let cmd = if let Some(rest) = t.strip_prefix("$ ") {
                    rest
                } else if shell {
                    t
                } else {
                    continue;
                };
                (*n, cmd.to_string())
            }
        };
        if let Some(body) = line.1.strip_suffix('\\') {
            pending = Some((line.0, body.trim_end().to_string()));
            continue;
        }
        if let Some(end) = heredoc_end(&line.1) {
            heredoc = Some(end);
        }
        out.push(line);
    }
    out.extend(pending);
    out
}

/// The terminator of a heredoc the line starts (`<<EOF`, `<<'EOF'`, `<<-"EOF"`).
fn heredoc_end(line: &str) -> Option<String> {
    let i = line.find("<<")?;
    let rest = line[i + 2..].trim_start_matches('-').trim_start();
    let word: String = rest
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != ';' && *c != '|' && *c != '&')
        .filter(|c| *c != '\'' && *c != '"')
        .collect();
    (!word.is_empty()).then_some(word)
}

/// `line` cut into simple commands at unquoted `|`, `||`, `&&`, `;` and `&`, up to an
/// unquoted `#` that starts a word (a comment).
fn simple_commands(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if escaped {
            escaped = false;
            cur.push(c);
            continue;
        }
        match c {
            '\\' if !single => {
                escaped = true;
                cur.push(c);
            }
            '\'' if !double => {
                single = !single;
                cur.push(c);
            }
            '"' if !single => {
                double = !double;
                cur.push(c);
            }
            '#' if !single && !double && cur.chars().last().map_or(true, char::is_whitespace) => {
                break;
            }
            '|' | ';' | '&' if !single && !double => {
                // `2>&1`, `>&2`: a redirection, not a separator.
                if c == '&' && (cur.ends_with('>') || cur.ends_with('<')) {
                    cur.push(c);
                    continue;
                }
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                out.push(std::mem::take(&mut cur));
            }
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The argv a simple command gives rtbench (argv\[0\] first: `rtbench`, or the
/// rt-tests name it is called by), or `None` when the command does not run rtbench.
fn rtbench_argv(words: &[String]) -> Option<Vec<String>> {
    let mut w: Vec<String> = Vec::new();
    let mut it = words.iter().peekable();
    while let Some(word) = it.next() {
        // Redirections: `>`, `2>`, `<`, `>>` with the target apart or attached.
        let op_len = word
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .chars()
            .take_while(|&c| c == '>' || c == '<' || c == '&')
            .count();
        let digits = word.len() - word.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if op_len > 0 {
            if digits + op_len == word.len() {
                it.next(); // the target is the next word
            }
            continue;
        }
        w.push(word.clone());
    }
    let mut w = w.as_slice();
    loop {
        match w.first().map(String::as_str) {
            Some(first) if is_assignment(first) => w = &w[1..],
            Some("sudo" | "env" | "nohup" | "exec" | "time") => w = &w[1..],
            _ => break,
        }
    }
    let program = Path::new(w.first()?).file_name()?.to_str()?.to_string();
    match program.as_str() {
        "rtbench" => Some(
            std::iter::once("rtbench".to_string())
                .chain(w[1..].iter().cloned())
                .collect(),
        ),
        "cargo" if w.get(1).is_some_and(|s| s == "run") => {
            let dashes = w.iter().position(|s| s == "--")?;
            Some(
                std::iter::once("rtbench".to_string())
                    .chain(w[dashes + 1..].iter().cloned())
                    .collect(),
            )
        }
        // Called by an rt-tests name (argv[0] dispatch); `oslat` once rtbench answers
        // to it: a name rtbench does not answer to is reported by `parses`.
        "cyclictest" | "pmqtest" | "oslat" => Some(w.to_vec()),
        _ => None,
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// Whether rtbench's parser accepts `argv`, as `main` parses it: argv\[0\] dispatch
/// and getopt normalisation, then the measuring command's own tree, then the whole
/// tree (`src/cli/parse.rs`). `--help` and `--version` are accepted; anything else clap
/// refuses — including a missing subcommand, which prints the help with exit 2 — is
/// `Err` with clap's message.
fn parses(argv: &[String]) -> Result<(), String> {
    use clap::{FromArgMatches, Parser};
    let program = Path::new(&argv[0]).file_name().and_then(|f| f.to_str());
    if program != Some("rtbench") && program.and_then(Tool::by_program_name).is_none() {
        return Err(format!(
            "rtbench does not answer to the name {:?} (src/cli/getopt.rs, Tool::by_program_name)",
            argv[0]
        ));
    }
    let args: Vec<OsString> = argv.iter().map(OsString::from).collect();
    let (invocation, alone) = prepare_with_command(&args).map_err(|e| e.to_string())?;
    if let Some(cmd) = alone {
        let fast = cmd
            .try_get_matches_from(&invocation.args)
            .ok()
            .and_then(|m| Cli::from_arg_matches(&m).ok());
        if fast.is_some() {
            return Ok(());
        }
    }
    match Cli::try_parse_from(&invocation.args) {
        Ok(_) => Ok(()),
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                Ok(())
            } else {
                Err(e.to_string().lines().next().unwrap_or("").to_string())
            }
        }
    }
}

/// One command that runs rtbench, where it is written.
struct DocCommand {
    file: PathBuf,
    line: usize,
    text: String,
    argv: Vec<String>,
}

/// Every command of a fenced block of `file` that runs rtbench.
fn commands_in(file: &Path) -> Vec<DocCommand> {
    let text = std::fs::read_to_string(repo().join(file)).expect("read a doc");
    let (blocks, _) = split_fences(&text);
    let mut out = Vec::new();
    for block in &blocks {
        for (line, cmdline) in command_lines(block) {
            for simple in simple_commands(&cmdline) {
                let words = shlex::split(&simple).unwrap_or_else(|| {
                    panic!("{}:{line}: unbalanced quotes in {simple:?}", file.display())
                });
                if let Some(argv) = rtbench_argv(&words) {
                    out.push(DocCommand {
                        file: file.to_path_buf(),
                        line,
                        text: simple.clone(),
                        argv,
                    });
                }
            }
        }
    }
    out
}

#[test]
fn every_documented_command_parses() {
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut excused = vec![false; NOT_PARSED.len()];
    for file in doc_files() {
        for c in commands_in(&file) {
            let at = format!("{}:{}: {:?}", c.file.display(), c.line, c.text);
            let excuse = NOT_PARSED
                .iter()
                .position(|(f, cmd, _)| Path::new(f) == c.file && *cmd == c.text);
            match (parses(&c.argv), excuse) {
                (Ok(()), None) => checked += 1,
                (Err(_), Some(i)) => excused[i] = true,
                (Ok(()), Some(i)) => failures.push(format!(
                    "{at} parses now: remove it from NOT_PARSED ({})",
                    NOT_PARSED[i].2
                )),
                (Err(e), None) => failures.push(format!("{at} does not parse: {e}")),
            }
        }
    }
    for (i, used) in excused.iter().enumerate() {
        if !used {
            failures.push(format!(
                "NOT_PARSED entry {:?} in {} matches no command of the docs",
                NOT_PARSED[i].1, NOT_PARSED[i].0
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The docs show more than twenty: an extractor that finds nothing fails here.
    assert!(checked >= 20, "only {checked} commands found in the docs");
    eprintln!("doc_commands: {checked} documented commands parse");
}

/// GitHub's anchor of a heading: lower case, everything but letters, digits, `-`, `_`
/// and spaces dropped, spaces become `-`; a repeated anchor gets `-1`, `-2`, ….
fn anchors(markdown: &str) -> std::collections::HashSet<String> {
    let (_, outside) = split_fences(markdown);
    let mut seen = std::collections::HashMap::<String, usize>::new();
    let mut out = std::collections::HashSet::new();
    for line in outside.lines() {
        let t = line.trim_start();
        let hashes = t.chars().take_while(|&c| c == '#').count();
        if hashes == 0 || hashes > 6 || !t[hashes..].starts_with(' ') {
            continue;
        }
        let title = t[hashes..].trim().trim_end_matches('#').trim();
        // A link in a heading contributes its text only.
        let title = regex_lite::Regex::new(r"\[([^\]]*)\]\([^)]*\)")
            .unwrap()
            .replace_all(title, "$1");
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        let unique = if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        };
        *n += 1;
        out.insert(unique);
    }
    out
}

/// The link targets of `markdown` outside code blocks and code spans, with the line
/// each is on.
fn links(markdown: &str) -> Vec<(usize, String)> {
    let (_, outside) = split_fences(markdown);
    let code = regex_lite::Regex::new(r"`[^`]*`").unwrap();
    let inline = regex_lite::Regex::new(r#"\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)"#).unwrap();
    let reference = regex_lite::Regex::new(r"^\s*\[[^\]]+\]:\s*(\S+)").unwrap();
    let mut out = Vec::new();
    for (i, line) in outside.lines().enumerate() {
        let line = code.replace_all(line, "``");
        for c in inline.captures_iter(&line) {
            out.push((i + 1, c[1].to_string()));
        }
        if let Some(c) = reference.captures(&line) {
            out.push((i + 1, c[1].to_string()));
        }
    }
    out
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut failures = Vec::new();
    let mut checked = 0;
    // benches/README.md holds the figures the guides link to.
    let mut files = doc_files();
    files.push(PathBuf::from("benches/README.md"));
    for file in files {
        let text = std::fs::read_to_string(repo().join(&file)).expect("read a doc");
        let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                file.clone()
            } else {
                dir.join(path)
            };
            let full = repo().join(&resolved);
            if !full.exists() {
                failures.push(format!(
                    "{}:{line}: {target}: {} does not exist",
                    file.display(),
                    resolved.display()
                ));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if full.extension().map_or(true, |x| x != "md") {
                failures.push(format!(
                    "{}:{line}: {target}: an anchor into a file that is not Markdown",
                    file.display()
                ));
                continue;
            }
            let target_text = std::fs::read_to_string(&full).expect("read a link target");
            if !anchors(&target_text).contains(anchor) {
                failures.push(format!(
                    "{}:{line}: {target}: no heading of {} has the anchor #{anchor}",
                    file.display(),
                    resolved.display()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        checked >= 20,
        "only {checked} relative links found in the docs"
    );
    eprintln!("doc_commands: {checked} relative links resolve");
}

/// The commands README's "Quick start on a board" block shows that need nothing
/// root-only and change nothing, run as written (in the test's private mount
/// namespace `/etc/rtbench` is an empty directory, tests/common/isolate.rs, so the
/// host's configuration never reaches them). The file the block writes to
/// `/etc/rtbench/rtbench.toml` with `config template` goes to a temporary directory,
/// and the commands after it are given that file (`config check FILE`, `tune check
/// --config FILE`), as they would read the default path. Not run, because they need root-only changes, take minutes or read state
/// the test cannot own: `rtbench cyclic`/`cargo run … cyclic` (SCHED_FIFO for 10–30 s),
/// `rtbench selftest` (tunes the machine), `rtbench report`, `report --since`,
/// `plot /var/lib/rtbench/monitor` (a machine's stored runs), `rtbench diagnose`
/// (collects this machine's journal), `systemctl`, and the harness lines (measure
/// until `-D`); each of them is parsed by [`every_documented_command_parses`].
#[test]
fn readme_quick_commands_run() {
    use crate::common::{rtbench, stdout, TempDir};
    let readme: Vec<Vec<String>> = commands_in(Path::new("README.md"))
        .into_iter()
        .map(|c| c.argv)
        .collect();
    let shown = |argv: &[&str]| {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        assert!(
            readme.contains(&argv),
            "README no longer shows {argv:?}: update readme_quick_commands_run"
        );
    };
    let dir = TempDir::new("doc-commands");
    let cfg = dir.join("rtbench.toml");

    shown(&["rtbench", "sysinfo"]);
    let o = rtbench()
        .arg("sysinfo")
        .output()
        .expect("run rtbench sysinfo");
    assert_eq!(o.status.code(), Some(0), "sysinfo: {o:?}");
    // "kernel, PREEMPT_RT, isolated and housekeeping CPUs": PREEMPT_RT or not is the
    // preemption line.
    for key in ["kernel", "preemption", "isolated", "housekeeping"] {
        assert!(
            stdout(&o).contains(key),
            "README says sysinfo shows {key}:\n{}",
            stdout(&o)
        );
    }

    // "no configuration yet: the generic real-time audit; exit 1 when something deviates"
    shown(&["rtbench", "tune", "check"]);
    let o = rtbench()
        .args(["tune", "check"])
        .output()
        .expect("run tune check");
    assert!(matches!(o.status.code(), Some(0 | 1)), "tune check: {o:?}");
    assert!(
        stdout(&o).contains("the generic real-time audit"),
        "README says tune check without a file is the generic audit:\n{}",
        stdout(&o)
    );

    // "every key, its default, what it does"
    shown(&["rtbench", "config", "template"]);
    let o = rtbench()
        .args(["config", "template"])
        .output()
        .expect("run config template");
    assert_eq!(o.status.code(), Some(0), "config template: {o:?}");
    assert_eq!(
        o.stdout,
        std::fs::read(repo().join("systemd/rtbench.toml")).expect("systemd/rtbench.toml"),
        "config template prints systemd/rtbench.toml"
    );
    std::fs::write(&cfg, &o.stdout).expect("write the template");

    // "validate it on this board: "…: ok" …; runs and writes nothing"
    shown(&["rtbench", "config", "check"]);
    let o = rtbench()
        .args(["config", "check"])
        .arg(&cfg)
        .output()
        .expect("run config check");
    assert_eq!(
        o.status.code(),
        Some(0),
        "config check of the template: {o:?}"
    );
    assert!(stdout(&o).contains("ok"), "{}", stdout(&o));
    assert_eq!(
        dir.entries(),
        vec!["rtbench.toml".to_string()],
        "config check wrote"
    );

    // "compare the board with its [tuning]" (the template's: nothing configured).
    let o = rtbench()
        .args(["tune", "check", "--config"])
        .arg(&cfg)
        .output()
        .expect("run tune check");
    assert!(matches!(o.status.code(), Some(0 | 1)), "tune check: {o:?}");
    assert!(
        stdout(&o).starts_with("rtbench tune check"),
        "{}",
        stdout(&o)
    );
}

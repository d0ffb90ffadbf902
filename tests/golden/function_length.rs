//! The function-length budget: no function in `src/` is longer than [`LIMIT`] lines
//! (counted as clippy's `too_many_lines` counts them: lines of the item that hold code,
//! not blank and not only a comment), unless `tests/golden/long_functions.txt` names it
//! with its reason and its length. The list only shrinks:
//!
//! - a function over the limit that the list does not name fails (split it, or add it
//!   with its reason in the same commit);
//! - a listed function longer than its listed length fails (growth is a decision: raise
//!   the number with the reason);
//! - a listed function at or under the limit, or gone, fails (remove its line).
//!
//! Functions are found on the source with comments, strings and char literals blanked:
//! each `fn NAME` with a body, from its line to its closing brace. Several functions of
//! one name in one file are `NAME#2`, `NAME#3` in source order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Lines a function may have (clippy's `too-many-lines-threshold` default).
const LIMIT: usize = 100;

/// `text` with every comment, string and char literal replaced by spaces (newlines
/// kept), so braces and `fn` in them do not count.
fn blank(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let wipe = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        let rest = &text[i..];
        let end = if rest.starts_with("//") {
            i + rest.find('\n').unwrap_or(rest.len())
        } else if rest.starts_with("/*") {
            let mut depth = 0;
            let mut j = i;
            while j < b.len() {
                if text[j..].starts_with("/*") {
                    depth += 1;
                    j += 2;
                } else if text[j..].starts_with("*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            j
        } else if (rest.starts_with("r\"") || rest.starts_with("r#"))
            && !text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            let hashes = rest[1..].bytes().take_while(|&c| c == b'#').count();
            if rest[1 + hashes..].starts_with('"') {
                let close = format!("\"{}", "#".repeat(hashes));
                let from = i + 2 + hashes;
                from + text[from..]
                    .find(&close)
                    .map_or(text.len() - from, |e| e + close.len())
            } else {
                i + 1
            }
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            j + 1
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            if b.get(i + 1) == Some(&b'\\') {
                i + 2 + text[i + 2..].find('\'').map_or(0, |e| e + 1)
            } else {
                let c = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                if b.get(i + 1 + c) == Some(&b'\'') {
                    i + 2 + c
                } else {
                    i + 1
                }
            }
        } else {
            i += 1;
            continue;
        };
        wipe(&mut out, i, end);
        i = end.max(i + 1);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The functions of one file: name (`NAME#N` for the N-th of that name) → lines.
fn functions(text: &str) -> Vec<(String, usize)> {
    let code = blank(text);
    let b = code.as_bytes();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(at) = code[i..].find("fn ") {
        let start = i + at;
        i = start + 3;
        let word_start =
            start == 0 || !(b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_');
        if !word_start {
            continue;
        }
        let name: String = code[i..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body: the first `{` outside (), [] and <> after the name, unless a `;`
        // ends the item first (a declaration without a body).
        let mut j = i + name.len();
        let mut depth = 0i32;
        let body = loop {
            match b.get(j) {
                None => break None,
                Some(b'(' | b'[') => depth += 1,
                Some(b')' | b']') => depth -= 1,
                Some(b';') if depth == 0 => break None,
                Some(b'{') if depth == 0 => break Some(j),
                _ => {}
            }
            j += 1;
        };
        let Some(open) = body else { continue };
        let mut depth = 0i32;
        let mut k = open;
        while k < b.len() {
            match b[k] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            k += 1;
        }
        let line_start = code[..start].rfind('\n').map_or(0, |p| p + 1);
        let lines = code[line_start..=k.min(b.len() - 1)]
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count();
        let n = seen.entry(name.clone()).or_insert(0);
        *n += 1;
        let key = if *n == 1 { name } else { format!("{name}#{n}") };
        out.push((key, lines));
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every function of `src/` over [`LIMIT`]: `path:NAME` → lines.
fn long_functions() -> BTreeMap<String, usize> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut long = BTreeMap::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        for (name, lines) in functions(&text) {
            if lines > LIMIT {
                long.insert(format!("{rel}:{name}"), lines);
            }
        }
    }
    long
}

/// The allow-list: `path:NAME  LINES  reason`, `#` comments.
fn allowed() -> BTreeMap<String, (usize, String)> {
    let text = include_str!("long_functions.txt");
    let mut m = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let (key, len) = (words.next(), words.next());
        let reason = words.collect::<Vec<_>>().join(" ");
        let (Some(key), Some(len)) = (key, len) else {
            panic!(
                "long_functions.txt:{}: expected `path:NAME LINES reason`: {line}",
                n + 1
            );
        };
        let len: usize = len
            .parse()
            .unwrap_or_else(|_| panic!("long_functions.txt:{}: {len} is not a number", n + 1));
        assert!(
            !reason.is_empty(),
            "long_functions.txt:{}: no reason",
            n + 1
        );
        assert!(
            m.insert(key.to_string(), (len, reason)).is_none(),
            "long_functions.txt:{}: {key} twice",
            n + 1
        );
    }
    m
}

#[test]
fn the_scanner_counts_code_lines_of_each_function() {
    let src = "fn a() {\n    let s = \"fn b() { }\";\n\n    // fn c() {\n    x();\n}\nfn d(x: [u8; 2]) -> u8 { x[0] }\ntrait T { fn e(&self); }\nimpl T for u8 { fn e(&self) {} }\nfn a() { '}' ; }\n";
    let f = functions(src);
    assert_eq!(
        f,
        vec![
            ("a".to_string(), 4),
            ("d".to_string(), 1),
            ("e".to_string(), 1),
            ("a#2".to_string(), 1)
        ]
    );
}

#[test]
fn no_function_is_over_the_limit_unless_listed_and_the_list_only_shrinks() {
    let long = long_functions();
    let allowed = allowed();
    let mut problems = Vec::new();
    for (key, lines) in &long {
        match allowed.get(key) {
            None => problems.push(format!(
                "{key}: {lines} lines, over {LIMIT}: split it, or list it in tests/golden/long_functions.txt with its reason"
            )),
            Some((max, _)) if lines > max => problems.push(format!(
                "{key}: {lines} lines, longer than its listed {max}: shorten it, or raise the number with the reason"
            )),
            Some(_) => {}
        }
    }
    for key in allowed.keys() {
        if !long.contains_key(key) {
            problems.push(format!(
                "{key}: listed in tests/golden/long_functions.txt but no longer over {LIMIT} lines (or gone): remove its line"
            ));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

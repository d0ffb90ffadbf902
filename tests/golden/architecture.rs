//! The layering rules of docs/ARCHITECTURE.md, checked on the source text:
//!
//! - the module table ("Module map"): each top-level module has one row, each row names
//!   a module, and every `crate::X` (or `super::…` reaching X) in a module's code names
//!   a module its "uses" column lists (`everything`, `—` for none) or one of the last
//!   row, the foundation every module may use (CPU lists, durations, dates, errors);
//!   the binary (`main.rs`) reaches the library as `rtbench::X`;
//! - only `cli/` (the definitions), `plan/` (which reads them) and `app/` (the glue) use
//!   clap or the `cli` types; every other module is usable without a command line;
//! - no import cycles: among the modules of one directory (siblings), and among the
//!   top-level modules, the "uses" relation has no cycle. A module may use its parent's
//!   shared items (a `mod.rs`) — that is what the parent is for.
//!
//! The modules are found as the compiler finds them: from `src/lib.rs` and
//! `src/main.rs`, every `mod NAME;` (and `#[path]`) declaration; every `.rs` file in
//! `src/` must be one of them. Test code is left out by its `#[cfg(test)]` attribute —
//! a test module's file, or an inline `#[cfg(test)]` item — never by a file name.
//! Paths are read from `crate::…`, `super::…` (and in the binary `rtbench::…`)
//! references outside test code and comments, resolved to the deepest module they name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Removes comments and every `#[cfg(test)]` item (an inline test module, a test-only
/// function or `use`) from Rust source: string and char literals are skipped while
/// looking for the item's end, so braces in them do not count.
fn without_tests_and_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    // Copies or skips one token starting at i; returns its end.
    let token_end = |i: usize| -> usize {
        let rest = &text[i..];
        if rest.starts_with("//") {
            return i + rest.find('\n').unwrap_or(rest.len());
        }
        if rest.starts_with("/*") {
            let (mut depth, mut j) = (0, i);
            while j < b.len() {
                if text[j..].starts_with("/*") {
                    depth += 1;
                    j += 2;
                } else if text[j..].starts_with("*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        return j;
                    }
                } else {
                    j += 1;
                }
            }
            return j;
        }
        // Raw strings: r"…", r#"…"#.
        if rest.starts_with("r\"") || rest.starts_with("r#") {
            let hashes = rest[1..].bytes().take_while(|&c| c == b'#').count();
            if rest[1 + hashes..].starts_with('"') {
                let close = format!("\"{}", "#".repeat(hashes));
                let from = i + 2 + hashes;
                return from
                    + text[from..]
                        .find(&close)
                        .map_or(text.len() - from, |e| e + close.len());
            }
        }
        if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            return j + 1;
        }
        if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            if b.get(i + 1) == Some(&b'\\') {
                return i + 2 + text[i + 2..].find('\'').map_or(0, |e| e + 1);
            }
            let c = text[i + 1..].chars().next().map_or(1, char::len_utf8);
            if b.get(i + 1 + c) == Some(&b'\'') {
                return i + 2 + c;
            }
        }
        i + text[i..].chars().next().map_or(1, char::len_utf8)
    };
    while i < b.len() {
        if text[i..].starts_with("#[cfg(test)]") {
            // Skip the item: up to its `;` or its balanced `{…}`, whichever ends it.
            let mut j = i + "#[cfg(test)]".len();
            let mut depth = 0;
            while j < b.len() {
                let e = token_end(j);
                match b[j] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            j = e;
                            break;
                        }
                    }
                    b';' if depth == 0 => {
                        j = e;
                        break;
                    }
                    _ => {}
                }
                j = e;
            }
            i = j;
            continue;
        }
        let e = token_end(i);
        if !(text[i..].starts_with("//") || text[i..].starts_with("/*")) {
            out.push_str(&text[i..e]);
        }
        i = e;
    }
    out
}

/// A module of the library (or the binary's root) as the compiler sees it.
struct Module {
    file: PathBuf,
    /// Its source without test code and comments.
    code: String,
    /// Declared under `#[cfg(test)]` (itself or an ancestor).
    test_only: bool,
}

/// The `mod NAME;` declarations of `text`: (name, its `#[path]` if any, `#[cfg(test)]`).
fn declarations(text: &str) -> Vec<(String, Option<String>, bool)> {
    let mut out = Vec::new();
    let mut attrs: Vec<&str> = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with("#[") {
            attrs.push(l);
            continue;
        }
        let decl = l
            .strip_prefix("pub ")
            .or_else(|| l.strip_prefix("pub(crate) "))
            .or_else(|| l.strip_prefix("pub(super) "))
            .unwrap_or(l);
        if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            let path = attrs.iter().find_map(|a| {
                let v = a.strip_prefix("#[path = \"")?.strip_suffix("\"]")?;
                Some(v.to_string())
            });
            let test = attrs.contains(&"#[cfg(test)]");
            out.push((name.trim().to_string(), path, test));
        }
        if !l.is_empty() {
            attrs.clear();
        }
    }
    out
}

/// Module path (`["measure", "pair", "sender"]`) → module, found from `file` down.
fn walk(file: &Path, path: Vec<String>, test_only: bool, out: &mut BTreeMap<Vec<String>, Module>) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let dir = file.parent().unwrap();
    let stem = file.file_stem().unwrap().to_string_lossy();
    let children = if matches!(&*stem, "mod" | "lib" | "main") {
        dir.to_path_buf()
    } else {
        dir.join(&*stem)
    };
    for (name, at, test) in declarations(&text) {
        let f = match at {
            Some(p) => dir.join(p),
            None if children.join(format!("{name}.rs")).exists() => {
                children.join(format!("{name}.rs"))
            }
            None => children.join(&name).join("mod.rs"),
        };
        let mut p = path.clone();
        p.push(name);
        walk(&f, p, test_only || test, out);
    }
    out.insert(
        path,
        Module {
            file: file.to_path_buf(),
            code: without_tests_and_comments(&text),
            test_only,
        },
    );
}

/// The library's modules outside test code, by module path.
fn modules() -> BTreeMap<Vec<String>, String> {
    let mut all = BTreeMap::new();
    walk(&src().join("lib.rs"), Vec::new(), false, &mut all);
    all.into_iter()
        .filter(|(_, m)| !m.test_only)
        .map(|(p, m)| (p, m.code))
        .collect()
}

#[test]
fn every_source_file_is_a_module_of_the_library_or_the_binary() {
    let mut all = BTreeMap::new();
    walk(&src().join("lib.rs"), Vec::new(), false, &mut all);
    let mut reached: BTreeSet<PathBuf> = all.values().map(|m| m.file.clone()).collect();
    let mut bin = BTreeMap::new();
    walk(
        &src().join("main.rs"),
        vec!["main.rs".into()],
        false,
        &mut bin,
    );
    reached.extend(bin.values().map(|m| m.file.clone()));
    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut on_disk = Vec::new();
    files(&src(), &mut on_disk);
    let stray: Vec<_> = on_disk.iter().filter(|f| !reached.contains(*f)).collect();
    assert!(stray.is_empty(), "files no crate declares: {stray:?}");
    assert!(
        all.values().any(|m| m.test_only),
        "test modules are found by their #[cfg(test)]"
    );
}

/// docs/ARCHITECTURE.md's module table: module → the modules it may use (None:
/// everything), the foundation (the last row's modules) included in each.
fn table() -> BTreeMap<String, Option<BTreeSet<String>>> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md"))
            .unwrap();
    let names = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(|n| n.trim_end_matches('/').to_string())
            .collect()
    };
    let mut rows = BTreeMap::new();
    let mut lines = doc
        .lines()
        .skip_while(|l| !l.starts_with("| module | owns | uses |"));
    assert!(
        lines.next().is_some(),
        "no module table in docs/ARCHITECTURE.md"
    );
    let lines: Vec<&str> = lines.skip(1).take_while(|l| l.starts_with('|')).collect();
    let foundation = lines
        .last()
        .map(|l| names(l.trim_matches('|').split('|').next().unwrap_or("")))
        .unwrap_or_default();
    for l in lines {
        let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 3, "{l}");
        let uses = match cells[2] {
            "everything" => None,
            "—" => Some(foundation.iter().cloned().collect()),
            c => Some(names(c).into_iter().chain(foundation.clone()).collect()),
        };
        for m in names(cells[0]) {
            assert!(
                rows.insert(m.clone(), uses.clone()).is_none(),
                "{m}: two rows"
            );
        }
    }
    rows
}

#[test]
fn every_module_uses_only_what_its_row_of_the_module_table_allows() {
    let rows = table();
    let mods = modules();
    let known: BTreeSet<Vec<String>> = mods.keys().cloned().collect();
    let tops: BTreeSet<String> = known
        .iter()
        .filter(|p| p.len() == 1)
        .map(|p| p[0].clone())
        .collect();
    let mut want: BTreeSet<String> = tops.clone();
    want.insert("main.rs".into());
    let listed: BTreeSet<String> = rows.keys().cloned().collect();
    assert_eq!(
        listed, want,
        "the table's modules are the crate's top-level modules and main.rs"
    );
    for (m, uses) in &rows {
        for u in uses.iter().flatten() {
            assert!(tops.contains(u), "row {m}: uses `{u}`, which is no module");
        }
    }
    let mut bad = BTreeSet::new();
    let mut checked = 0;
    for (me, code) in &mods {
        let Some(top) = me.first() else { continue };
        for target in references(me, code, &known) {
            if target[0] == *top {
                continue;
            }
            checked += 1;
            if rows[top].as_ref().is_some_and(|u| !u.contains(&target[0])) {
                bad.insert(format!("{} uses {}", me.join("::"), target[0]));
            }
        }
    }
    // The binary reaches the library by its crate name.
    let main = without_tests_and_comments(&std::fs::read_to_string(src().join("main.rs")).unwrap());
    for (at, _) in main.match_indices("rtbench::") {
        let name: String = main[at + 9..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if tops.contains(&name) && rows["main.rs"].as_ref().is_some_and(|u| !u.contains(&name)) {
            bad.insert(format!("main.rs uses {name}"));
        }
    }
    assert!(checked > 50, "the reference scan found only {checked} uses");
    assert!(
        bad.is_empty(),
        "not in the module's \"uses\" column of docs/ARCHITECTURE.md:\n{}",
        bad.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// The module paths `code` of module `me` refers to (`crate::a::b`, `super::c`).
fn references(me: &[String], code: &str, known: &BTreeSet<Vec<String>>) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    let bytes = code.as_bytes();
    for (start, prefix) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            continue;
        }
        let mut base: Vec<String> = if prefix == "crate::" {
            Vec::new()
        } else {
            me[..me.len().saturating_sub(1)].to_vec()
        };
        let rest = &code[start + prefix.len()..];
        let mut rest = rest;
        // super::super::x
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        let segs: Vec<&str> = rest
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .next()
            .unwrap_or("")
            .split("::")
            .collect();
        // `use crate::a::{b, c}` lists several: the brace follows the path.
        let after = &rest[segs.join("::").len()..];
        let mut targets = vec![segs.clone()];
        if after.starts_with('{') || (segs.last() == Some(&"") && after.starts_with('{')) {
            let inner = &after[1..after.find('}').unwrap_or(after.len())];
            for item in inner.split(',') {
                let item = item.trim();
                let first = item.split("::").collect::<Vec<_>>();
                let mut t: Vec<&str> = segs.iter().copied().filter(|s| !s.is_empty()).collect();
                t.extend(first);
                targets.push(t);
            }
        }
        for t in targets {
            let mut full = base.clone();
            full.extend(t.iter().filter(|s| !s.is_empty()).map(|s| s.to_string()));
            // The deepest known module this path names.
            while !full.is_empty() && !known.contains(&full) {
                full.pop();
            }
            if !full.is_empty() && full != me {
                out.insert(full);
            }
        }
    }
    out
}

#[test]
fn only_cli_plan_and_app_know_the_command_line() {
    let mut bad = Vec::new();
    for (path, code) in modules() {
        let top = path.first().map(String::as_str).unwrap_or("");
        if matches!(top, "cli" | "plan" | "app") || path.is_empty() {
            continue;
        }
        for needle in ["clap::", "use clap", "crate::cli"] {
            if code.contains(needle) {
                bad.push(format!("{}: {needle}", path.join("/")));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "library modules must not depend on the command line:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_import_cycles_between_sibling_modules() {
    let mods = modules();
    let known: BTreeSet<Vec<String>> = mods.keys().cloned().collect();
    // parent module → (child → children it uses)
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut edges = 0;
    for (me, code) in &mods {
        for target in references(me, code, &known) {
            let common = me.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common == me.len() || common == target.len() {
                continue; // an ancestor's shared items, or a parent using its child
            }
            let parent = me[..common].to_vec();
            graphs
                .entry(parent)
                .or_default()
                .entry(me[common].clone())
                .or_default()
                .insert(target[common].clone());
            edges += 1;
        }
    }
    assert!(edges > 50, "the reference scan found only {edges} edges");
    let mut cycles = Vec::new();
    for (parent, g) in &graphs {
        // Depth-first search for a back edge.
        fn visit(
            n: &str,
            g: &BTreeMap<String, BTreeSet<String>>,
            state: &mut BTreeMap<String, u8>,
            stack: &mut Vec<String>,
            found: &mut Vec<String>,
        ) {
            state.insert(n.to_string(), 1);
            stack.push(n.to_string());
            for m in g.get(n).into_iter().flatten() {
                match state.get(m.as_str()).copied().unwrap_or(0) {
                    0 => visit(m, g, state, stack, found),
                    1 => {
                        let i = stack.iter().position(|s| s == m).unwrap();
                        let mut c = stack[i..].to_vec();
                        c.push(m.clone());
                        found.push(c.join(" -> "));
                    }
                    _ => {}
                }
            }
            stack.pop();
            state.insert(n.to_string(), 2);
        }
        let mut state = BTreeMap::new();
        let mut found = Vec::new();
        for n in g.keys() {
            if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
                visit(n, g, &mut state, &mut Vec::new(), &mut found);
            }
        }
        for c in found {
            let at = if parent.is_empty() {
                "crate".to_string()
            } else {
                parent.join("::")
            };
            cycles.push(format!("in {at}: {c}"));
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_reference_scan_sees_use_lists_and_super() {
    let known: BTreeSet<Vec<String>> = [
        vec!["a"],
        vec!["a", "b"],
        vec!["a", "c"],
        vec!["d"],
        vec!["d", "e"],
    ]
    .into_iter()
    .map(|v| v.into_iter().map(String::from).collect())
    .collect();
    let me: Vec<String> = vec!["a".into(), "b".into()];
    let r = references(
        &me,
        "use super::c::X;\nuse crate::d::{e::Y, Z};\nfn f() { crate::d::e::g(); }",
        &known,
    );
    let r: Vec<String> = r.into_iter().map(|v| v.join("::")).collect();
    assert_eq!(r, vec!["a::c", "d", "d::e"]);
}

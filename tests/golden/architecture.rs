//! The layering rules of docs/ARCHITECTURE.md, checked on the source text:
//!
//! - only `cli/` (the definitions), `plan/` (which reads them) and `app/` (the glue) use
//!   clap or the `cli` types; every other module is usable without a command line;
//! - no import cycles: among the modules of one directory (siblings), and among the
//!   top-level modules, the "uses" relation has no cycle. A module may use its parent's
//!   shared items (a `mod.rs`) — that is what the parent is for.
//!
//! Paths are read from `crate::…` and `super::…` references outside `#[cfg(test)]`
//! code, resolved to the deepest module file they name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`["measure", "pair", "sender"]`) → its source without test code.
fn modules() -> BTreeMap<Vec<String>, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut m = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let name = rel.to_string_lossy();
        if name == "main.rs" || name.ends_with("_tests.rs") {
            continue; // the binary is glue; `*_tests.rs` are test modules
        }
        let mut path: Vec<String> = rel
            .with_extension("")
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        if path.last().is_some_and(|l| l == "mod" || l == "lib") {
            path.pop();
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let code = match text.find("#[cfg(test)]\nmod tests") {
            Some(i) => text[..i].to_string(),
            None => text,
        };
        // Comments (and doc comments) name modules without using them.
        let code: String = code
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        m.insert(path, code);
    }
    m
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

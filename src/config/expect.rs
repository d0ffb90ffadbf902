//! What a key accepts, in words, for the TOML parser's type errors: serde says
//! `invalid type: boolean `true`, expected a sequence` or `wanted string or table`,
//! which names Rust's types, not the file's. [`reword`] replaces such a message with
//! the values the key allows (`expected a list of flags from domain, nohz,
//! managed_irq`), by the key's last name, which means the same in every section
//! (`cpus` is a CPU list wherever it is written); keys not listed get serde's type in
//! the file's words (`true or false`, `a whole number`, `a list`).
//!
//! Checks after parsing (a CPU list this machine does not have, a value out of
//! range) are the sections' own and already say what is allowed. Every key of
//! `systemd/rtbench.toml` is checked with a value of the wrong type by the test below.

/// The values of the keys whose type alone does not say what is allowed: enums,
/// lists, strings with a syntax. Kept beside the types they describe by the test
/// `every_listed_value_is_accepted`.
const BY_KEY: &[(&str, &str)] = &[
    ("mode", "one of \"apply\", \"check\", \"off\""),
    ("isolcpus", "a list of flags from domain, nohz, managed_irq"),
    ("thp", "one of \"always\", \"madvise\", \"never\""),
    ("irqbalance", "one of \"fail\", \"warn\""),
    ("test", "one of \"cyclic\", \"pmq\", \"pipe\""),
    ("exclude", "a list of IRQ numbers, e.g. [24, 25]"),
    (
        "cpus",
        "a CPU list in quotes, e.g. \"2-3\" (the kernel's cpu-list syntax; \"all\", \"N\" = the last CPU)",
    ),
    ("isolated", "a CPU list in quotes, e.g. \"2-3\""),
    ("housekeeping", "a CPU list in quotes, e.g. \"0-1\""),
    ("cpuidle_cpus", "a CPU list in quotes, e.g. \"2-3\""),
    (
        "duration",
        "a duration in quotes: seconds with an optional s, m, h or d suffix, e.g. \"30s\"",
    ),
    ("hwlat", "a duration in quotes, e.g. \"10s\""),
    ("window", "a duration in quotes, e.g. \"5m\""),
    ("rolling", "a duration in quotes, e.g. \"24h\""),
    (
        "spec",
        "a load in quotes: cpu:N, vm:N:SIZE, io:N, comma-separated, e.g. \"cpu:1,io:1\"",
    ),
    ("cmd", "a command line in quotes, e.g. \"stress-ng --cpu 1\""),
    ("governor", "a cpufreq governor in quotes, e.g. \"performance\""),
    (
        "journal_dir",
        "an absolute directory in quotes, e.g. \"/run/rtbench\"",
    ),
    ("priority", "a SCHED_FIFO priority, a whole number 1..99"),
    ("printk", "a console log level, a whole number 1..8"),
];

/// serde's words for a type, and the file's.
const BY_TYPE: &[(&str, &str)] = &[
    ("a boolean", "true or false"),
    ("a sequence", "a list"),
    ("a string", "a string in quotes"),
    ("path string", "a path in quotes"),
    ("u8", "a whole number"),
    ("u16", "a whole number"),
    ("u32", "a whole number"),
    ("u64", "a whole number"),
    ("usize", "a whole number"),
    ("i32", "a whole number"),
    ("i64", "a whole number"),
];

/// The parser's `message` for `key` (the key as written on the line, perhaps dotted)
/// in the file's words: a type or variant error becomes `expected …` with what the
/// key allows; any other message (unknown key, syntax, a duplicate) is kept.
pub(super) fn reword(message: &str, key: Option<&str>) -> String {
    let is_type_error = message.starts_with("invalid type:")
        || message.starts_with("invalid value:")
        || message.starts_with("unknown variant")
        || message.starts_with("wanted string or table");
    if !is_type_error {
        return message.to_string();
    }
    let leaf = key.map(|k| k.rsplit('.').next().unwrap_or(k).trim_matches('"'));
    if let Some(words) = leaf.and_then(|l| BY_KEY.iter().find(|(k, _)| *k == l)) {
        return format!("expected {}", words.1);
    }
    let serde_expected = message.rsplit_once(", expected ").map(|(_, e)| e.trim());
    match serde_expected {
        // A section written as a value (`tuning = 5`): serde names the Rust struct.
        Some(e) if e.starts_with("struct ") => {
            "expected a table of keys, e.g. [section] or key = { … }".to_string()
        }
        Some(e) => match BY_TYPE.iter().find(|(t, _)| *t == e) {
            Some((_, words)) => format!("expected {words}"),
            None => message.to_string(),
        },
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::sys::SysRoot;

    /// The template's keys, written or commented out (`# key = value`), each with the
    /// dotted section it is in: `("tuning.boot", "isolcpus", "[\"domain\"]")`.
    fn template_keys() -> Vec<(String, String, String)> {
        let mut section = String::new();
        let mut keys = Vec::new();
        for line in super::super::TEMPLATE.lines() {
            let l = line.trim_start_matches('#').trim();
            if l.starts_with('[') {
                let name = l.split('#').next().unwrap().trim();
                section = name.trim_matches(|c| c == '[' || c == ']').to_string();
                continue;
            }
            let Some((k, v)) = l.split_once(" = ") else {
                continue;
            };
            if k.contains(' ')
                || !k
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit())
            {
                continue;
            }
            let v = v.split("  #").next().unwrap().trim();
            keys.push((section.clone(), k.to_string(), v.to_string()));
        }
        keys
    }

    /// The wrong type for `value`'s type: a table for anything else.
    fn wrong(value: &str) -> &'static str {
        match value.chars().next() {
            Some('"') | Some('[') => "7",
            _ => "\"x\"",
        }
    }

    /// Every key of the template with a value of the wrong type: the error names the
    /// key's line and says what is allowed in the file's words, never a Rust type.
    #[test]
    fn every_template_key_of_the_wrong_type_says_what_is_allowed() {
        let root = SysRoot::host();
        let mut keys = template_keys();
        assert!(keys.len() > 60, "{}", keys.len());
        // Keys the template does not show.
        for (section, key, value) in [
            ("tuning", "housekeeping", "\"0\""),
            ("tuning", "journal_dir", "\"/run/rtbench\""),
            ("tuning", "allow_unthrottled_rt", "true"),
            ("tuning.sysctl", "overcommit_ratio", "50"),
            ("tuning.irq", "exclude", "[24]"),
            ("tuning.irq", "irqbalance", "\"warn\""),
            ("tuning.power", "cpuidle_cpus", "\"1\""),
            ("pmq", "pairs", "1"),
            ("limits", "p9999_us", "1"),
            ("limits", "cyclic", "{}"),
        ] {
            keys.push((section.into(), key.into(), value.into()));
        }
        for (section, key, value) in keys {
            let header = if section == "limits.cpus" && key == "cpus" {
                "[[limits.cpus]]\n".to_string()
            } else if section == "limits.cpus" {
                "[[limits.cpus]]\ncpus = \"0\"\n".to_string()
            } else {
                format!("[{section}]\n")
            };
            let text = format!("{header}{key} = {}\n", wrong(&value));
            let e = parse_err(&text, &root);
            for rust in [
                "u64", "i64", "i32", "u32", "usize", "sequence", "wanted", "variant", "struct",
            ] {
                assert!(!e.contains(rust), "{text:?}: {e}");
            }
            assert!(e.contains(": expected "), "{text:?}: {e}");
        }
    }

    fn parse_err(text: &str, root: &SysRoot) -> String {
        match super::super::parse(text, "f", root) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{text:?} was accepted"),
        }
    }

    #[test]
    fn enum_and_list_keys_list_their_values() {
        let root = SysRoot::host();
        for (text, want) in [
            (
                "[tuning.boot]\nisolcpus = true\n",
                "f:2: isolcpus = true: expected a list of flags from domain, nohz, managed_irq",
            ),
            (
                "[selftest]\nmode = 1\n",
                "f:2: mode = 1: expected one of \"apply\", \"check\", \"off\"",
            ),
            (
                "[selftest]\nmode = \"aply\"\n",
                "f:2: mode = \"aply\": expected one of \"apply\", \"check\", \"off\"",
            ),
            (
                "[[limits.cpus]]\ncpus = \"0\"\ntest = 1\n",
                "f:3: test = 1: expected one of \"cyclic\", \"pmq\", \"pipe\"",
            ),
            (
                "[tuning.memory]\nthp = \"sometimes\"\n",
                "f:2: thp = \"sometimes\": expected one of \"always\", \"madvise\", \"never\"",
            ),
            (
                "[tuning.irq]\nirqbalance = true\n",
                "f:2: irqbalance = true: expected one of \"fail\", \"warn\"",
            ),
            (
                "[cyclic]\nenabled = \"yes\"\n",
                "f:2: enabled = \"yes\": expected true or false",
            ),
            (
                "[limits]\nmax_us = -5\n",
                "f:2: max_us = -5: expected a whole number",
            ),
            (
                "[limits]\ncyclic = 5\n",
                "f:2: cyclic = 5: expected a table of keys, e.g. [section] or key = { … }",
            ),
            (
                "tuning.boot.isolcpus = \"domain\"\n",
                "f:1: tuning.boot.isolcpus = \"domain\": expected a list of flags from domain, nohz, managed_irq",
            ),
        ] {
            assert_eq!(parse_err(text, &root), want, "{text:?}");
        }
    }

    /// The values [`BY_KEY`] lists are the ones the types accept.
    #[test]
    fn every_listed_value_is_accepted() {
        let root = SysRoot::host();
        for text in [
            "[selftest]\nmode = \"apply\"\n",
            "[selftest]\nmode = \"check\"\n",
            "[selftest]\nmode = \"off\"\n",
            "[tuning]\nisolated = \"1\"\n[tuning.boot]\nisolcpus = [\"domain\", \"nohz\", \"managed_irq\"]\n",
            "[tuning.memory]\nthp = \"always\"\n",
            "[tuning.memory]\nthp = \"madvise\"\n",
            "[tuning.memory]\nthp = \"never\"\n",
            "[tuning.irq]\nirqbalance = \"fail\"\n",
            "[tuning.irq]\nirqbalance = \"warn\"\n",
            "[tuning.irq]\nexclude = [24, 25]\n",
            "[[limits.cpus]]\ncpus = \"0\"\ntest = \"cyclic\"\nmax_us = 1\n",
            "[pmq]\n[[limits.cpus]]\ncpus = \"0\"\ntest = \"pmq\"\nmax_us = 1\n",
            "[pipe]\n[[limits.cpus]]\ncpus = \"0\"\ntest = \"pipe\"\nmax_us = 1\n",
        ] {
            if let Err(e) = super::super::parse(text, "f", &root) {
                panic!("{text:?}: {e}");
            }
        }
    }
}

//! Shell-style environment files (`/etc/default/irqbalance`,
//! `/etc/sysconfig/irqbalance`) read as `sh` reads them when it sources them: the
//! words of each line are split by the shlex crate (single and double quotes,
//! backslashes, `#` comments, a backslash-newline or an open quote continuing the line
//! — POSIX.1 XCU 2.2 and 2.3), `export` is a no-op for the value, and the last
//! assignment of a name wins.
//!
//! What a shell would compute but rtbench does not — a `$` or backtick expansion, or a
//! command (`. other-file`, `[ … ] && X=…`, `unset X`) that may change the variables
//! — makes a value [`Value::Unreadable`], never a guess: its reader must say it cannot
//! tell, not treat it as unset. (After quote removal a `$` made literal by single
//! quotes looks the same; it is unreadable too — no value rtbench reads has one.)

use std::collections::BTreeMap;

/// One variable of an environment file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Not assigned in the file.
    Unset,
    /// Assigned on `line` (1-based, the first line of its statement).
    Set {
        /// The value after quote removal.
        value: String,
        /// Where.
        line: usize,
    },
    /// rtbench cannot know what the shell would make of it: `why`, at `line`.
    Unreadable {
        /// 1-based line of the statement that makes it unknowable.
        line: usize,
        /// E.g. `a "$" expansion` or `a command ('.')`.
        why: String,
    },
}

/// A parsed environment file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvFile {
    vars: BTreeMap<String, (String, usize)>,
    /// The first statement that is not an assignment (a command), if any.
    command: Option<(usize, String)>,
    /// A statement whose quotes or backslash are not closed at the end of the file.
    unclosed: Option<usize>,
}

fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

impl EnvFile {
    /// Splits `text` into statements (a physical line, joined with the next ones while
    /// a quote or a trailing backslash is open) and records each assignment.
    pub fn parse(text: &str) -> EnvFile {
        let mut env = EnvFile::default();
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let first = i + 1;
            let mut stmt = lines[i].to_string();
            let mut words = shlex::split(&stmt);
            while words.is_none() && i + 1 < lines.len() {
                i += 1;
                stmt.push('\n');
                stmt.push_str(lines[i]);
                words = shlex::split(&stmt);
            }
            i += 1;
            let Some(words) = words else {
                env.unclosed.get_or_insert(first);
                break;
            };
            env.statement(first, &words);
        }
        env
    }

    fn statement(&mut self, line: usize, words: &[String]) {
        let mut export = false;
        for (n, w) in words.iter().enumerate() {
            if n == 0 && w == "export" {
                export = true;
                continue;
            }
            match w.split_once('=') {
                Some((name, value)) if is_name(name) => {
                    self.vars
                        .insert(name.to_string(), (value.to_string(), line));
                }
                None if export && is_name(w) => {}
                _ => {
                    self.command.get_or_insert((line, w.clone()));
                    return;
                }
            }
        }
    }

    /// The variable `name` as the shell would have it after sourcing the file.
    pub fn get(&self, name: &str) -> Value {
        if let Some(line) = self.unclosed {
            return Value::Unreadable {
                line,
                why: "a quote or backslash that is never closed".into(),
            };
        }
        if let Some((line, word)) = &self.command {
            return Value::Unreadable {
                line: *line,
                why: format!("a command ('{word}') rtbench does not run, which may change it"),
            };
        }
        match self.vars.get(name) {
            None => Value::Unset,
            Some((v, line)) if v.contains(['$', '`']) => Value::Unreadable {
                line: *line,
                why: format!("{name}={v:?}: a shell expansion rtbench does not perform"),
            },
            Some((v, line)) => Value::Set {
                value: v.clone(),
                line: *line,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &str, line: usize) -> Value {
        Value::Set {
            value: v.into(),
            line,
        }
    }

    #[test]
    fn quotes_comments_export_and_continuations_as_sh_reads_them() {
        let text = "# irqbalance defaults\n\
            #IRQBALANCE_BANNED_CPULIST=0\n\
            export IRQBALANCE_BANNED_CPULIST=\"2-3\"   # the isolated CPUs\n\
            IRQBALANCE_ARGS='--policyscript=/x y'\n\
            A=1 B=\"two words\" ; \n\
            C=\"a\\\n\
            b\"\n\
            D=c\\\n\
            d\n\
            E='#not a comment'#x\n\
            export F\n\
            G=\n";
        // `;` separates commands in sh; rtbench does not run them: nothing is known.
        let e = EnvFile::parse(text);
        assert!(matches!(e.get("A"), Value::Unreadable { line: 5, .. }));
        assert!(matches!(
            e.get("IRQBALANCE_BANNED_CPULIST"),
            Value::Unreadable { line: 5, .. }
        ));
        let e = EnvFile::parse(&text.replace(" ; ", " "));
        assert_eq!(e.get("IRQBALANCE_BANNED_CPULIST"), set("2-3", 3));
        assert_eq!(e.get("IRQBALANCE_ARGS"), set("--policyscript=/x y", 4));
        assert_eq!(e.get("B"), set("two words", 5));
        assert_eq!(e.get("C"), set("ab", 6));
        assert_eq!(e.get("D"), set("cd", 8));
        assert_eq!(e.get("E"), set("#not a comment#x", 10));
        assert_eq!(e.get("F"), Value::Unset);
        assert_eq!(e.get("G"), set("", 12));
        assert_eq!(e.get("H"), Value::Unset);
        // The last assignment wins; a quoted newline continues the statement.
        let e = EnvFile::parse("X=1\nX='2\n3'\nY=4\n");
        assert_eq!(e.get("X"), set("2\n3", 2));
        assert_eq!(e.get("Y"), set("4", 4));
    }

    #[test]
    fn what_a_shell_would_compute_is_unreadable() {
        let e = EnvFile::parse("ISOL=2-3\nIRQBALANCE_BANNED_CPULIST=\"$ISOL\"\nZ='$lit'\n");
        match e.get("IRQBALANCE_BANNED_CPULIST") {
            Value::Unreadable { line: 2, why } => assert!(why.contains("expansion"), "{why}"),
            v => panic!("{v:?}"),
        }
        assert!(matches!(e.get("Z"), Value::Unreadable { .. }));
        let e = EnvFile::parse("X=1\n. /etc/irqbalance.local\n");
        match e.get("X") {
            Value::Unreadable { line: 2, why } => assert!(why.contains("('.')"), "{why}"),
            v => panic!("{v:?}"),
        }
        let e = EnvFile::parse("X=\"open\nY=1\n");
        assert!(matches!(e.get("Y"), Value::Unreadable { line: 1, .. }));
    }
}

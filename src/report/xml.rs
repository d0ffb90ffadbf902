//! XML escaping for every XML rtbench writes (the JUnit report, the SVG plots).

/// `v` as XML attribute or text content: `& < > " '` escaped, and the characters XML
/// 1.0 does not allow (C0 controls but tab, newline and carriage return; U+FFFE,
/// U+FFFF) as U+FFFD, so that no stored or measured value makes a document unreadable
/// (XML 1.0, section 2.2 "Characters").
pub fn escape(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&apos;"),
            '\t' | '\n' | '\r' => s.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => s.push('\u{fffd}'),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_every_value_well_formed() {
        assert_eq!(
            escape("a<b & \"c\" 'd'>"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;"
        );
        assert_eq!(escape("x\u{1b}[2J\u{0}y\n"), "x\u{fffd}[2J\u{fffd}y\n");
    }
}

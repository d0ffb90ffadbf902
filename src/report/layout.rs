//! The two rules of fitting text into a width, for every fixed-width output (the
//! report table, the compare table, the plot's header and legend): [`clip`] a line,
//! [`wrap`] a text. Widths are in characters (Unicode scalar values), not bytes.

/// `s` cut to at most `n` characters, ending in `…` when cut; empty for `n` = 0.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    if n == 0 {
        return String::new();
    }
    let mut t: String = s.chars().take(n - 1).collect();
    t.push('…');
    t
}

/// `s` in lines of at most `width` characters, the lines after the first starting with
/// `indent`: broken after `; ` where that keeps more than a third of the line, else at
/// the last space; a word longer than a line is cut with `…` ([`clip`]) and the text
/// goes on after it, so nothing but that word's end is lost. An `indent` as wide as
/// `width` or wider is dropped (a continuation line must hold something).
pub fn wrap(s: &str, width: usize, indent: &str) -> Vec<String> {
    let indent = if indent.chars().count() < width {
        indent
    } else {
        ""
    };
    let mut lines = Vec::new();
    let mut rest = s.trim();
    let mut lead = "";
    while !rest.is_empty() {
        let room = width.saturating_sub(lead.chars().count());
        if room == 0 {
            break;
        }
        if rest.chars().count() <= room {
            lines.push(format!("{lead}{rest}"));
            break;
        }
        let head: String = rest.chars().take(room + 1).collect();
        let head = head.as_str();
        // A break at index i keeps rest[..i] (i ≤ room characters, a char boundary).
        let fits = |i: &usize| rest[..*i].chars().count() <= room;
        let cut = head
            .rfind("; ")
            .map(|i| i + 1)
            .filter(|i| *i > room / 3 && fits(i))
            .or_else(|| head.rfind(' ').filter(|i| *i > 0 && fits(i)));
        match cut {
            Some(i) => {
                lines.push(format!("{lead}{}", rest[..i].trim_end()));
                rest = rest[i..].trim_start();
            }
            None => {
                // One word longer than the line: cut it, go on after it.
                let end = rest.find(' ').unwrap_or(rest.len());
                lines.push(format!("{lead}{}", clip(&rest[..end], room)));
                rest = rest[end..].trim_start();
            }
        }
        lead = indent;
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn clip_cuts_with_an_ellipsis_and_survives_zero() {
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abc", 0), "");
        assert_eq!(clip("", 0), "");
        assert_eq!(clip("µµµµ", 2), "µ…");
    }

    #[test]
    fn wrap_prefers_clause_ends_and_indents() {
        assert_eq!(
            wrap("FAIL: a b; c d; e", 11, ""),
            vec!["FAIL: a b;", "c d; e"]
        );
        assert_eq!(wrap("short", 11, ""), vec!["short"]);
        assert_eq!(wrap("unbreakable-word", 6, ""), vec!["unbre…"]);
        assert_eq!(wrap("aa bb cc dd", 5, "  "), vec!["aa bb", "  cc", "  dd"]);
        assert_eq!(wrap("longword tail", 5, ""), vec!["long…", "tail"]);
        assert!(wrap("", 10, "  ").is_empty());
        assert!(wrap("abc", 0, "").is_empty());
    }

    proptest! {
        /// Every line fits, continuation lines carry the indent, and (without an
        /// indent) every word that fits on a line comes out whole, in order.
        #[test]
        fn wrap_fits_and_keeps_the_words(
            words in proptest::collection::vec("[a-zµ;]{1,12}", 0..20),
            width in 0usize..30,
            indent in 0usize..4,
        ) {
            let s = words.join(" ");
            let ind = " ".repeat(indent);
            let lines = wrap(&s, width, &ind);
            for (i, l) in lines.iter().enumerate() {
                prop_assert!(l.chars().count() <= width, "{l:?} over {width}");
                if i > 0 && indent < width {
                    prop_assert!(l.starts_with(&ind));
                }
            }
            let room = width.saturating_sub(if indent < width { indent } else { 0 });
            let out: Vec<&str> = lines.iter().flat_map(|l| l.split_whitespace()).collect();
            let kept: Vec<&str> = words.iter().map(String::as_str)
                .filter(|w| w.chars().count() <= room).collect();
            let whole: Vec<&str> = out.iter().copied().filter(|w| !w.ends_with('…')).collect();
            if width > 0 && indent == 0 {
                prop_assert_eq!(whole, kept);
            }
        }
    }
}

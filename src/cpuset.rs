//! The one CPU-set type: the kernel's cpu-list syntax and hex masks, both directions.
//!
//! Cpu-list syntax follows `bitmap_parselist()` as documented in the kernel's
//! `Documentation/admin-guide/kernel-parameters.rst` ("cpu lists"): comma-separated
//! regions `A`, `A-B` or `A-B:G/W` (from A to B, in groups of W CPUs use the first G),
//! where `N` stands for the last possible CPU and `all` for `0-N`.
//! Hex masks follow `bitmap_parse()` / `%*pb`: comma-separated 32-bit groups, most
//! significant first, as in `/proc/irq/*/smp_affinity`.

use std::fmt;

/// A set of CPU numbers (0-based logical CPU ids as the kernel numbers them).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct CpuSet {
    words: Vec<u64>,
}

/// CPU ids accepted where a kernel file is read without knowing `nr_cpu_ids`
/// (`smp_affinity_list`, `possible`): Linux's `NR_CPUS` is at most 8192 on the
/// architectures rtbench targets; twice that leaves room.
pub const MAX_CPU_IDS: usize = 1 << 16;

/// A cpu-list or mask that does not parse; the message says what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

fn err<T>(msg: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError(msg.into()))
}

impl CpuSet {
    /// The empty set.
    pub fn new() -> Self {
        CpuSet::default()
    }

    /// The set `0..n` (e.g. every possible CPU when `n` is `nr_cpu_ids`).
    pub fn first_n(n: usize) -> Self {
        (0..n).collect()
    }

    /// Adds `cpu` to the set.
    pub fn insert(&mut self, cpu: usize) {
        let (w, b) = (cpu / 64, cpu % 64);
        if self.words.len() <= w {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << b;
    }

    /// Removes `cpu` from the set (no-op if absent).
    pub fn remove(&mut self, cpu: usize) {
        if let Some(w) = self.words.get_mut(cpu / 64) {
            *w &= !(1 << (cpu % 64));
        }
        self.trim();
    }

    fn trim(&mut self) {
        while self.words.last() == Some(&0) {
            self.words.pop();
        }
    }

    /// Whether `cpu` is in the set.
    pub fn contains(&self, cpu: usize) -> bool {
        self.words
            .get(cpu / 64)
            .is_some_and(|w| w & (1 << (cpu % 64)) != 0)
    }

    /// Number of CPUs in the set.
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// The CPUs in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            (0..64)
                .filter(move |b| w & (1u64 << b) != 0)
                .map(move |b| i * 64 + b)
        })
    }

    /// The lowest CPU, if any.
    pub fn first(&self) -> Option<usize> {
        self.iter().next()
    }

    /// The highest CPU, if any.
    pub fn last(&self) -> Option<usize> {
        self.iter().last()
    }

    /// CPUs in `self` but not in `other`.
    pub fn difference(&self, other: &CpuSet) -> CpuSet {
        self.zip_words(other, |a, b| a & !b)
    }

    /// CPUs in both sets.
    pub fn intersection(&self, other: &CpuSet) -> CpuSet {
        self.zip_words(other, |a, b| a & b)
    }

    /// CPUs in either set.
    pub fn union(&self, other: &CpuSet) -> CpuSet {
        self.zip_words(other, |a, b| a | b)
    }

    /// Whether every CPU of `self` is in `other`.
    pub fn is_subset(&self, other: &CpuSet) -> bool {
        self.difference(other).is_empty()
    }

    /// Whether the sets have a CPU in common.
    pub fn intersects(&self, other: &CpuSet) -> bool {
        !self.intersection(other).is_empty()
    }

    /// Word by word `f(self, other)` (64 CPUs at a time), trailing zero words trimmed.
    fn zip_words(&self, other: &CpuSet, f: impl Fn(u64, u64) -> u64) -> CpuSet {
        let n = self.words.len().max(other.words.len());
        let word = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
        let mut out = CpuSet {
            words: (0..n)
                .map(|i| f(word(&self.words, i), word(&other.words, i)))
                .collect(),
        };
        out.trim();
        out
    }

    /// Parses the kernel cpu-list syntax (`0-3,5`, `1-7:2/4`, `N`, `all`, `0-N`, or the
    /// empty string for the empty set). `nr_cpu_ids` is the number of possible CPUs
    /// (`/sys/devices/system/cpu/possible` + 1): `N` means `nr_cpu_ids - 1`, and any CPU
    /// at or above it is out of range, as in `bitmap_parselist()`.
    pub fn parse_list(s: &str, nr_cpu_ids: usize) -> Result<CpuSet, ParseError> {
        CpuSet::parse_list_with(s, nr_cpu_ids, Keywords::Kernel)
    }

    /// Parses a cpu-list like [`CpuSet::parse_list`], with `N` and `all` meaning what
    /// `keywords` says. Numbers at or above `nr_cpu_ids` are out of range either way.
    pub fn parse_list_with(
        s: &str,
        nr_cpu_ids: usize,
        keywords: Keywords<'_>,
    ) -> Result<CpuSet, ParseError> {
        let s = s.trim();
        let mut set = CpuSet::new();
        if s.is_empty() {
            return Ok(set);
        }
        let last = match keywords {
            Keywords::Kernel => nr_cpu_ids.checked_sub(1),
            Keywords::Within(within) => within.last(),
        };
        // A message names the region only when the list has several (the caller
        // echoes the whole list already).
        let several = s.contains(',');
        for region in s.split(',') {
            let region = region.trim();
            let named = |e: ParseError| {
                let quoted = format!("'{}'", crate::error::echo_part(region));
                // Not twice: a region that is one word is named by the error already.
                if several && !e.0.starts_with(&quoted) {
                    ParseError(format!("{quoted}: {}", e.0))
                } else {
                    e
                }
            };
            let r = Region::parse(region, last).map_err(named)?;
            // With no possible CPU (nr_cpu_ids 0) every CPU is out of range, as in
            // bitmap_parselist() with nbits 0.
            match nr_cpu_ids.checked_sub(1) {
                Some(l) if r.end > l => {
                    return Err(named(ParseError(format!(
                        "CPU {} is beyond the last possible CPU {l}",
                        r.end
                    ))))
                }
                None => {
                    return Err(named(ParseError(format!(
                        "CPU {} is beyond the possible CPUs (none)",
                        r.start
                    ))))
                }
                _ => {}
            }
            match keywords {
                Keywords::Within(within) if r.all => {
                    let mut part = CpuSet::new();
                    r.insert_into(&mut part);
                    set = set.union(&part.intersection(within));
                }
                _ => r.insert_into(&mut set),
            }
        }
        Ok(set)
    }

    /// Parses a hex mask: comma-separated groups of up to 8 hex digits (32 bits each),
    /// most significant group first, leading zeros allowed (`/proc/irq/*/smp_affinity`
    /// format). An optional `0x` prefix is accepted.
    pub fn parse_mask(s: &str) -> Result<CpuSet, ParseError> {
        let s = s.trim();
        let body = s
            .strip_prefix("0x")
            .or_else(|| s.strip_prefix("0X"))
            .unwrap_or(s);
        if body.is_empty() {
            return err("empty mask: expected hex digits like 'f' or 'ffffffff,00000003'");
        }
        let groups: Vec<&str> = body.split(',').collect();
        let mut set = CpuSet::new();
        for (i, g) in groups.iter().rev().enumerate() {
            if g.is_empty() || g.len() > 8 || !g.chars().all(|c| c.is_ascii_hexdigit()) {
                return err("mask groups must be 1-8 hex digits separated by commas");
            }
            let v = u32::from_str_radix(g, 16).map_err(|e| ParseError(e.to_string()))?;
            for b in 0..32 {
                if v & (1 << b) != 0 {
                    set.insert(i * 32 + b);
                }
            }
        }
        Ok(set)
    }

    /// Parses a command-line CPU set: a hex mask when it starts with `0x`, else a cpu-list.
    pub fn parse(s: &str, nr_cpu_ids: usize) -> Result<CpuSet, ParseError> {
        let t = s.trim();
        if t.starts_with("0x") || t.starts_with("0X") {
            let set = CpuSet::parse_mask(t)?;
            if let (Some(l), Some(max)) = (nr_cpu_ids.checked_sub(1), set.last()) {
                if max > l {
                    return err(format!("CPU {max} is beyond the last possible CPU {l}"));
                }
            }
            Ok(set)
        } else {
            CpuSet::parse_list(t, nr_cpu_ids)
        }
    }

    /// The kernel cpu-list form with ranges collapsed, e.g. `0-3,5` (empty string for
    /// the empty set), as `/sys/devices/system/cpu/online` prints it.
    pub fn to_list(&self) -> String {
        let mut out = String::new();
        let mut it = self.iter().peekable();
        while let Some(start) = it.next() {
            let mut end = start;
            while it.peek() == Some(&(end + 1)) {
                end = it.next().unwrap_or(end);
            }
            if !out.is_empty() {
                out.push(',');
            }
            if start == end {
                out.push_str(&start.to_string());
            } else {
                out.push_str(&format!("{start}-{end}"));
            }
        }
        out
    }

    /// The shortest cpu-list the kernel parses back to this set, using ranges and
    /// strides (`A-B:USED/GROUP`, in `bitmap_parselist()` since Linux 4.9 at the latest)
    /// — for boot parameters, where a list of hundreds of numbers would overflow the
    /// command line: every odd CPU of 0-1023 is `1-1023:1/2`, not 512 numbers. Never
    /// longer than [`CpuSet::to_list`]; never uses `N` or `all` (`isolcpus=` takes a
    /// leading word for a flag, and `N` depends on the booted kernel's `nr_cpu_ids`).
    ///
    /// Shortest among lists whose regions each cover consecutive members of the set:
    /// a dynamic programme over the sorted CPUs, where a region starting at a CPU is
    /// either its run of consecutive CPUs or the strided region that repeats that run
    /// at the distance of the next run (cut after any whole or partial group).
    pub fn to_compact_list(&self) -> String {
        let v: Vec<usize> = self.iter().collect();
        let n = v.len();
        if n == 0 {
            return String::new();
        }
        // run_end[i]: index of the last CPU of the consecutive run starting at v[i].
        let mut run_end = vec![0; n];
        for i in (0..n).rev() {
            run_end[i] = if i + 1 < n && v[i + 1] == v[i] + 1 {
                run_end[i + 1]
            } else {
                i
            };
        }
        let digits = |x: usize| x.to_string().len();
        let range_len = |a: usize, b: usize| {
            if a == b {
                digits(a)
            } else {
                digits(a) + 1 + digits(b)
            }
        };
        // best[i] = (length of the shortest text for v[i..], end index of its first
        // region, stride of that region (used, group) or None for a plain range).
        type Choice = (usize, usize, Option<(usize, usize)>);
        let mut best: Vec<Choice> = vec![(0, 0, None); n + 1];
        for i in (0..n).rev() {
            let tail = |j: usize, best: &[Choice]| {
                if j + 1 < n {
                    1 + best[j + 1].0
                } else {
                    0
                }
            };
            let r = run_end[i];
            let mut choice = (range_len(v[i], v[r]) + tail(r, &best), r, None);
            let used = r - i + 1;
            if r + 1 < n {
                let group = v[r + 1] - v[i];
                // Walk whole groups: group k starts at v[i] + k·group and holds
                // exactly `used` consecutive CPUs.
                let mut pos = i;
                let mut start = v[i];
                let mut groups = 0;
                loop {
                    let whole = pos + used <= n
                        && v[pos + used - 1] == start + used - 1
                        && run_end[pos] >= pos + used - 1;
                    if !whole {
                        // A partial last group: the CPUs of a cut group.
                        if groups >= 1 && pos < n && v[pos] == start {
                            let end = run_end[pos].min(pos + used - 1);
                            let text =
                                range_len(v[i], v[end]) + 1 + digits(used) + 1 + digits(group);
                            let total = text + tail(end, &best);
                            if total < choice.0 {
                                choice = (total, end, Some((used, group)));
                            }
                        }
                        break;
                    }
                    groups += 1;
                    let end = pos + used - 1;
                    if groups >= 2 {
                        let text = range_len(v[i], v[end]) + 1 + digits(used) + 1 + digits(group);
                        let total = text + tail(end, &best);
                        if total < choice.0 {
                            choice = (total, end, Some((used, group)));
                        }
                    }
                    pos = end + 1;
                    match start.checked_add(group) {
                        Some(next) if pos < n && v[pos] == next => start = next,
                        _ => break,
                    }
                }
            }
            best[i] = choice;
        }
        let mut out = String::new();
        let mut i = 0;
        while i < n {
            let (_, end, stride) = best[i];
            if !out.is_empty() {
                out.push(',');
            }
            if v[i] == v[end] {
                out.push_str(&v[i].to_string());
            } else {
                out.push_str(&format!("{}-{}", v[i], v[end]));
            }
            if let Some((used, group)) = stride {
                out.push_str(&format!(":{used}/{group}"));
            }
            i = end + 1;
        }
        out
    }

    /// The hex mask form for `nbits` CPUs, as the kernel prints it with `%*pb`
    /// (e.g. `3` for CPUs 0-1 of 2, `f,ffffffff` for 36 CPUs). `nbits` is raised to
    /// cover the highest CPU in the set.
    pub fn to_mask(&self, nbits: usize) -> String {
        let nbits = nbits.max(self.last().map_or(1, |l| l + 1)).max(1);
        let ngroups = nbits.div_ceil(32);
        let mut parts = Vec::with_capacity(ngroups);
        for g in (0..ngroups).rev() {
            let mut v: u32 = 0;
            for b in 0..32 {
                if self.contains(g * 32 + b) {
                    v |= 1 << b;
                }
            }
            if g == ngroups - 1 {
                let rem = nbits - g * 32;
                let digits = rem.min(32).div_ceil(4);
                parts.push(format!("{v:0digits$x}"));
            } else {
                parts.push(format!("{v:08x}"));
            }
        }
        parts.join(",")
    }
}

/// What `N` and `all` stand for in a cpu-list.
#[derive(Debug, Clone, Copy)]
pub enum Keywords<'a> {
    /// The kernel's meaning (`bitmap_parselist()`, boot parameters, sysfs files):
    /// `N` is the last possible CPU (`nr_cpu_ids - 1`) and `all` is `0-N`.
    Kernel,
    /// Where something runs (`-a`, `[cyclic] cpus`, …): `N` is the last CPU of the
    /// given set (online CPUs this process may use) and `all` is every CPU of it, so
    /// `all` never names an offline CPU or one outside the cpuset. Numbers and ranges
    /// are taken as written (a CPU outside the set is for the caller to report).
    Within(&'a CpuSet),
}

/// One comma-separated region: CPUs `start..=end`, in groups of `group` CPUs of which
/// the first `used` are taken (`used == group == 1` without a stride).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Region {
    start: usize,
    end: usize,
    used: usize,
    group: usize,
    /// Written as `all` (with or without a stride).
    all: bool,
}

impl Region {
    /// Parses `A`, `A-B`, `all` or `N`, each optionally followed by `:USED/GROUP`;
    /// `last` is what `N` stands for (`None`: no CPU, so `N` and `all` are errors).
    fn parse(region: &str, last: Option<usize>) -> Result<Region, ParseError> {
        let (range, stride) = match region.split_once(':') {
            Some((r, st)) => (r, Some(st)),
            None => (region, None),
        };
        let all = range.eq_ignore_ascii_case("all");
        let (start, end) = if all {
            match last {
                Some(l) => (0, l),
                None => return err("'all' with no CPUs to stand for"),
            }
        } else {
            match range.split_once('-') {
                Some((a, _)) if a.trim().is_empty() => {
                    return err(format!(
                        "'{}' is negative or has no start",
                        crate::error::echo_part(range)
                    ))
                }
                Some((a, b)) => (parse_cpu(a, last)?, parse_cpu(b, last)?),
                None => {
                    let a = parse_cpu(range, last)?;
                    (a, a)
                }
            }
        };
        if start > end {
            return err(format!("range start {start} is greater than end {end}"));
        }
        let (used, group) = match stride {
            None => (1, 1),
            Some(st) => {
                let Some((g, w)) = st.split_once('/') else {
                    return err("stride must be USED/GROUP, e.g. 1-7:2/4");
                };
                let g: usize = parse_num(g)?;
                let w: usize = parse_num(w)?;
                if w == 0 || g == 0 || g > w {
                    return err(format!("stride {g}/{w} needs 0 < used <= group size"));
                }
                (g, w)
            }
        };
        Ok(Region {
            start,
            end,
            used,
            group,
            all,
        })
    }

    /// Adds the region's CPUs to `set`: from each group start (`start`, `start +
    /// group`, … up to `end`) the first `used` CPUs, the last group cut at `end`
    /// (`bitmap_set_region()` in lib/bitmap-str.c). The arithmetic cannot overflow:
    /// a group start past `usize::MAX` ends the region.
    fn insert_into(&self, set: &mut CpuSet) {
        let mut first = self.start;
        loop {
            let stop = first.saturating_add(self.used - 1).min(self.end);
            for c in first..=stop {
                set.insert(c);
            }
            match first.checked_add(self.group) {
                Some(next) if next <= self.end => first = next,
                _ => break,
            }
        }
    }
}

fn parse_num(s: &str) -> Result<usize, ParseError> {
    let t = s.trim();
    t.parse().map_err(|_| {
        ParseError(if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
            format!(
                "a CPU number of {} digits is out of range (at most {})",
                t.len(),
                usize::MAX
            )
        } else {
            format!(
                "'{}' is not a CPU number (expected e.g. 0-3,5 or 1-7:2/4)",
                crate::error::echo_part(s)
            )
        })
    })
}

fn parse_cpu(s: &str, last: Option<usize>) -> Result<usize, ParseError> {
    if s.trim() == "N" {
        return match last {
            Some(l) => Ok(l),
            None => err("'N' with no CPUs to stand for"),
        };
    }
    parse_num(s)
}

impl FromIterator<usize> for CpuSet {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Self {
        let mut s = CpuSet::new();
        for c in iter {
            s.insert(c);
        }
        s
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_list())
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuSet({})", self.to_list())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn l(s: &str, n: usize) -> Vec<usize> {
        CpuSet::parse_list(s, n).unwrap().iter().collect()
    }

    #[test]
    fn kernel_doc_examples() {
        // Documentation/admin-guide/kernel-parameters.rst, "cpu lists".
        assert_eq!(l("0-3,8-11", 16), vec![0, 1, 2, 3, 8, 9, 10, 11]);
        let v = l("100-2000:2/25", 2048);
        assert_eq!(&v[..4], &[100, 101, 125, 126]);
        // 77 groups start at 100, 125, …, 2000; the last one holds only 2000.
        assert_eq!(v.len(), 76 * 2 + 1);
        assert_eq!(l("N", 8), vec![7]);
        assert_eq!(l("0-N", 4), vec![0, 1, 2, 3]);
        assert_eq!(l("all", 3), vec![0, 1, 2]);
        assert_eq!(l("1-7:2/4", 8), vec![1, 2, 5, 6]);
        assert_eq!(l("all:1/2", 6), vec![0, 2, 4]);
        assert_eq!(l("", 4), Vec::<usize>::new());
        assert_eq!(l("5", 8), vec![5]);
    }

    #[test]
    fn list_errors_name_the_region() {
        let e = CpuSet::parse_list("3-1", 8).unwrap_err();
        assert_eq!(e.0, "range start 3 is greater than end 1");
        // With several regions, the message names the one at fault.
        let e = CpuSet::parse_list("0,3-1", 8).unwrap_err();
        assert_eq!(e.0, "'3-1': range start 3 is greater than end 1");
        // No possible CPU: every CPU is out of range (bitmap_parselist, nbits 0).
        assert!(CpuSet::parse_list("0-18446744073709551614", 0).is_err());
        let e = CpuSet::parse_list("9", 2).unwrap_err();
        assert!(e.0.contains("beyond the last possible CPU 1"), "{e}");
        let e = CpuSet::parse_list("4-N", 2).unwrap_err();
        assert!(e.0.contains("greater"), "{e}");
        assert!(CpuSet::parse_list("abc", 4).is_err());
        assert!(CpuSet::parse_list("1-3:0/4", 4).is_err());
        assert!(CpuSet::parse_list("1-3:3/2", 4).is_err());
        assert!(CpuSet::parse_list("1,,2", 4).is_err());
    }

    #[test]
    fn masks_as_the_kernel_prints_them() {
        let s: CpuSet = [0, 1].into_iter().collect();
        assert_eq!(s.to_mask(2), "3");
        let all36 = CpuSet::first_n(36);
        assert_eq!(all36.to_mask(36), "f,ffffffff");
        assert_eq!(CpuSet::first_n(64).to_mask(64), "ffffffff,ffffffff");
        assert_eq!(CpuSet::new().to_mask(8), "00");
        let m = CpuSet::parse_mask("00000000,00000003").unwrap();
        assert_eq!(m.to_list(), "0-1");
        let m = CpuSet::parse_mask("1,00000000").unwrap();
        assert_eq!(m.to_list(), "32");
        assert_eq!(CpuSet::parse("0x5", 4).unwrap().to_list(), "0,2");
        assert!(CpuSet::parse_mask("xyz").is_err());
        assert!(CpuSet::parse_mask("123456789").is_err());
        assert!(CpuSet::parse("0x10", 4).is_err());
    }

    #[test]
    fn keywords_within_a_set() {
        let within: CpuSet = [1, 3, 5].into_iter().collect();
        let w = |s: &str| {
            CpuSet::parse_list_with(s, 8, Keywords::Within(&within))
                .unwrap()
                .to_list()
        };
        assert_eq!(w("all"), "1,3,5");
        assert_eq!(w("ALL"), "1,3,5");
        assert_eq!(w("N"), "5");
        // Numbers and ranges are taken as written; N is the last CPU of the set.
        assert_eq!(w("0-N"), "0-5");
        assert_eq!(w("all:1/4"), ""); // 0 and 4 are not in the set
        assert_eq!(w("all:2/4"), "1,5");
        assert_eq!(w("7"), "7");
        let none = CpuSet::new();
        assert!(CpuSet::parse_list_with("all", 8, Keywords::Within(&none)).is_err());
        assert!(CpuSet::parse_list_with("N", 8, Keywords::Within(&none)).is_err());
        // The kernel's meaning: N is the last possible CPU.
        assert_eq!(CpuSet::parse_list("all", 8).unwrap().to_list(), "0-7");
    }

    #[test]
    fn stride_arithmetic_does_not_overflow() {
        // A group larger than any CPU id ends the region after its first group.
        let huge = format!("1-1:1/{}", usize::MAX);
        assert_eq!(CpuSet::parse_list(&huge, 8).unwrap().to_list(), "1");
        let set = CpuSet::parse_list(&format!("0-7:{0}/{0}", usize::MAX), 8).unwrap();
        assert_eq!(set.to_list(), "0-7");
    }

    #[test]
    fn compact_lists() {
        let c = |cpus: &[usize]| cpus.iter().copied().collect::<CpuSet>().to_compact_list();
        assert_eq!(c(&[]), "");
        assert_eq!(c(&[2]), "2");
        assert_eq!(c(&[0, 1, 2, 3]), "0-3");
        assert_eq!(c(&[0, 1, 4, 5, 8, 9]), "0-9:2/4");
        let odd: Vec<usize> = (1..1024).step_by(2).collect();
        assert_eq!(c(&odd), "1-1023:1/2");
        // SMT siblings numbered n and n + 56 on a 112-CPU machine: the second halves.
        let upper: Vec<usize> = (57..112).collect();
        assert_eq!(c(&upper), "57-111");
        // The kernel doc's example.
        let doc = CpuSet::parse_list("100-2000:2/25", 2048).unwrap();
        assert_eq!(doc.to_compact_list(), "100-2000:2/25");
        // A cut last group.
        assert_eq!(c(&[1, 2, 5, 6, 9]), "1-9:2/4");
        // Mixed: a range, then a stride.
        assert_eq!(c(&[0, 1, 2, 3, 10, 20, 30, 40]), "0-3,10-40:1/10");
    }

    proptest! {
        #[test]
        fn list_round_trip(cpus in proptest::collection::btree_set(0usize..300, 0..40)) {
            let set: CpuSet = cpus.iter().copied().collect();
            let text = set.to_list();
            prop_assert_eq!(CpuSet::parse_list(&text, 300).unwrap(), set.clone());
            let mask = set.to_mask(300);
            prop_assert_eq!(CpuSet::parse_mask(&mask).unwrap(), set);
        }

        #[test]
        fn stride_matches_definition(a in 0usize..64, len in 0usize..64, g in 1usize..8, extra in 0usize..8) {
            let w = g + extra;
            let b = a + len;
            let set = CpuSet::parse_list(&format!("{a}-{b}:{g}/{w}"), 256).unwrap();
            let want: CpuSet = (a..=b).filter(|c| (c - a) % w < g).collect();
            prop_assert_eq!(set, want);
        }

        #[test]
        fn compact_list_parses_back_and_is_never_longer(
            cpus in proptest::collection::btree_set(0usize..300, 0..80),
            a in 0usize..40, len in 0usize..200, g in 1usize..6, extra in 0usize..6,
        ) {
            // Random sets, and strided sets (the shapes boot parameters take).
            let random: CpuSet = cpus.iter().copied().collect();
            let strided = CpuSet::parse_list(&format!("{a}-{}:{g}/{}", a + len, g + extra), 300).unwrap();
            for set in [random.clone(), strided, random.union(&CpuSet::first_n(8))] {
                let text = set.to_compact_list();
                prop_assert_eq!(CpuSet::parse_list(&text, 300).unwrap(), set.clone(), "{}", text);
                prop_assert!(text.len() <= set.to_list().len(), "{} vs {}", text, set.to_list());
            }
        }
    }
}

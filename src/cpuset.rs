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
        self.iter().filter(|&c| !other.contains(c)).collect()
    }

    /// CPUs in both sets.
    pub fn intersection(&self, other: &CpuSet) -> CpuSet {
        self.iter().filter(|&c| other.contains(c)).collect()
    }

    /// CPUs in either set.
    pub fn union(&self, other: &CpuSet) -> CpuSet {
        self.iter().chain(other.iter()).collect()
    }

    /// Whether every CPU of `self` is in `other`.
    pub fn is_subset(&self, other: &CpuSet) -> bool {
        self.iter().all(|c| other.contains(c))
    }

    /// Parses the kernel cpu-list syntax (`0-3,5`, `1-7:2/4`, `N`, `all`, `0-N`, or the
    /// empty string for the empty set). `nr_cpu_ids` is the number of possible CPUs
    /// (`/sys/devices/system/cpu/possible` + 1): `N` means `nr_cpu_ids - 1`, and any CPU
    /// at or above it is out of range, as in `bitmap_parselist()`.
    pub fn parse_list(s: &str, nr_cpu_ids: usize) -> Result<CpuSet, ParseError> {
        let s = s.trim();
        let mut set = CpuSet::new();
        if s.is_empty() {
            return Ok(set);
        }
        let last = nr_cpu_ids.checked_sub(1);
        for region in s.split(',') {
            let region = region.trim();
            let (range, stride) = match region.split_once(':') {
                Some((r, st)) => (r, Some(st)),
                None => (region, None),
            };
            let (start, end) = if range == "all" {
                match last {
                    Some(l) => (0, l),
                    None => return err("'all' with no possible CPUs"),
                }
            } else {
                match range.split_once('-') {
                    Some((a, b)) => (parse_cpu(a, last)?, parse_cpu(b, last)?),
                    None => {
                        let a = parse_cpu(range, last)?;
                        (a, a)
                    }
                }
            };
            if start > end {
                return err(format!(
                    "'{region}': range start {start} is greater than end {end}"
                ));
            }
            if let Some(l) = last {
                if end > l {
                    return err(format!(
                        "'{region}': CPU {end} is beyond the last possible CPU {l}"
                    ));
                }
            }
            let (used, group) = match stride {
                None => (1, 1),
                Some(st) => {
                    let Some((g, w)) = st.split_once('/') else {
                        return err(format!(
                            "'{region}': stride must be USED/GROUP, e.g. 1-7:2/4"
                        ));
                    };
                    let g: usize = parse_num(g, region)?;
                    let w: usize = parse_num(w, region)?;
                    if w == 0 || g == 0 || g > w {
                        return err(format!(
                            "'{region}': stride {g}/{w} needs 0 < used <= group size"
                        ));
                    }
                    (g, w)
                }
            };
            let mut cpu = start;
            while cpu <= end {
                for c in cpu..(cpu + used).min(end + 1) {
                    set.insert(c);
                }
                cpu += group;
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
                return err(format!(
                    "'{s}': mask groups must be 1-8 hex digits separated by commas"
                ));
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
                    return err(format!(
                        "'{t}': CPU {max} is beyond the last possible CPU {l}"
                    ));
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

fn parse_num(s: &str, region: &str) -> Result<usize, ParseError> {
    s.trim().parse().map_err(|_| {
        ParseError(format!(
            "'{region}': '{s}' is not a CPU number (expected e.g. 0-3,5 or 1-7:2/4)"
        ))
    })
}

fn parse_cpu(s: &str, last: Option<usize>) -> Result<usize, ParseError> {
    if s.trim() == "N" {
        return match last {
            Some(l) => Ok(l),
            None => err("'N' with no possible CPUs"),
        };
    }
    parse_num(s, s)
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
        assert!(e.0.contains("3-1") && e.0.contains("greater"), "{e}");
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
    }
}

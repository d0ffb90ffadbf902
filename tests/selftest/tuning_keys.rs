//! Every `[tuning]` key of a self-test is checked or named "not checked, because …"
//! (making the verdict unjudged): `[tuning] isolated` alone is compared with the
//! kernel's isolated CPUs (`boot.isolated`, as `rtbench tune check` judges it), and the
//! summary never says `[tuning]` is empty when it is not (src/tune/isolated.rs,
//! src/selftest/unchecked.rs).

use crate::common::*;
use std::path::Path;

const SUMMARY: &str = "7b1dd0eea94d4cc4bd8f9e6c91b6465d";

/// The CPUs of a sysfs cpu-list file (`1-3,5`; empty, `(null)` or absent: none).
fn sysfs_cpus(path: &str) -> Vec<usize> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut v = Vec::new();
    for part in text
        .trim()
        .split(',')
        .filter(|p| !p.is_empty() && *p != "(null)")
    {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        v.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap());
    }
    v
}

fn config(dir: &Path, name: &str, tuning: &str) -> std::path::PathBuf {
    let text = format!(
        "[selftest]\nmode = \"check\"\nduration = \"1s\"\n[tuning]\n{tuning}[limits]\n\
         max_us = 10000000\n[output]\nresults_dir = \"{}\"\nfallback_dir = \"{}\"\n",
        dir.join("results").display(),
        dir.join("run").display(),
    );
    let p = dir.join(name);
    std::fs::write(&p, on_any_kernel(&text)).unwrap();
    p
}

#[test]
fn tuning_isolated_alone_is_checked_against_the_kernels_isolated_cpus() {
    let taken: Vec<usize> = sysfs_cpus("/sys/devices/system/cpu/isolated")
        .into_iter()
        .chain(sysfs_cpus("/sys/devices/system/cpu/nohz_full"))
        .collect();
    // A CPU this host does not isolate (never the boot CPU 0).
    let Some(cpu) = (1..online_cpus()).find(|c| !taken.contains(c)) else {
        return skip("every CPU but 0 is isolated on this host");
    };
    let dir = TempDir::new("st-tuning-isolated");
    let cfg = config(&dir, "iso.toml", &format!("isolated = \"{cpu}\"\n"));
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = entries(&o);
    let s = with_id(&e, SUMMARY)[0];
    assert_eq!(s["RTBENCH_VERDICT"], "fail", "{s:?}");
    assert_eq!(
        s["RTBENCH_TUNING_STATE"],
        "tuning check: 1 item, 1 deviation"
    );
    assert!(
        s["MESSAGE"].contains("tuning boot.isolated deviation"),
        "{s:?}"
    );
    assert!(!stderr(&o).contains("is empty"), "{}", stderr(&o));
    // `rtbench tune check` judges the same file the same way.
    let t = run(&["tune", "check", "--config", &cfg.display().to_string()]);
    assert_eq!(t.status.code(), Some(1), "{}", stdout(&t));
    assert!(
        stdout(&t).contains("deviation       boot.isolated"),
        "{}",
        stdout(&t)
    );
}

#[test]
fn a_tuning_key_nothing_checked_makes_the_verdict_unjudged_and_says_why() {
    let dir = TempDir::new("st-tuning-unchecked");
    let cfg = config(&dir, "hk.toml", "housekeeping = \"0\"\n");
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = entries(&o);
    let s = with_id(&e, SUMMARY)[0];
    assert_eq!(s["RTBENCH_VERDICT"], "unjudged", "{s:?}");
    assert!(
        s["RTBENCH_UNJUDGED"].contains("tuning.housekeeping: not checked, because"),
        "{s:?}"
    );
    assert_eq!(s["RTBENCH_TUNING_STATE"], "tuning check: no item checked");
    assert!(!stderr(&o).contains("is empty"), "{}", stderr(&o));
}

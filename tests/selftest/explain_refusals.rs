//! Explain's own refusals in the self-test's stored results: with tracefs mounted
//! read-only (a bind mount made read-only in a private mount namespace, so the host's
//! tracefs is untouched), the flight recorder cannot make its instance; the failed
//! maximum then has no cause, and the stored run and `rtbench report` say why.

use crate::common::*;
use std::process::Command;

#[test]
fn a_read_only_tracefs_is_why_a_failed_maximum_has_no_cause() {
    if !std::path::Path::new("/sys/kernel/tracing/instances").is_dir() {
        eprintln!("skipped: no tracefs with instances at /sys/kernel/tracing on this machine");
        return;
    }
    let t = TempDir::new("explain-ro");
    let results = t.join("results");
    let cfg = t.join("rtbench.toml");
    // A limit every sample exceeds: the maximum fails, and would be explained.
    std::fs::write(
        &cfg,
        on_any_kernel(&format!(
            "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[cyclic]\ncpus = \"0\"\n\
             [limits]\nmax_us = 1\n[output]\nresults_dir = \"{}\"\n",
            results.display()
        )),
    )
    .unwrap();
    let script = format!(
        "mount --bind /sys/kernel/tracing /sys/kernel/tracing\n\
         mount -o remount,ro,bind /sys/kernel/tracing\n\
         \"$RTBENCH\" selftest --config '{c}' >/dev/null 2>&1 || echo \"selftest exit $?\"\n\
         \"$RTBENCH\" report --config '{c}' 2>&1 || true\n",
        c = cfg.display()
    );
    let o = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-ec", &script])
        .env("RTBENCH", exe())
        .env_remove("NOTIFY_SOCKET")
        .env_remove("INVOCATION_ID")
        .env_remove("JOURNAL_STREAM")
        .output()
        .expect("unshare (util-linux)");
    let out = stdout(&o);
    assert!(
        out.contains("selftest exit 1"),
        "a failed run: {out}{}",
        stderr(&o)
    );
    // The report's failure line says why the maximum has no cause.
    let fail: Vec<&str> = out.lines().filter(|l| l.starts_with("FAIL")).collect();
    let text = out.replace("\n     ", " ");
    assert!(
        text.contains("not explained: cannot explain:") && text.contains("Read-only"),
        "{fail:?}\n{out}"
    );
    // And the stored run keeps it.
    let stored = std::fs::read_dir(&results)
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().starts_with("run-"))
        .expect("the run was stored");
    let json = std::fs::read_to_string(stored.path()).unwrap();
    assert!(json.contains("\"unavailable\""), "{json}");
}

//! Crash recovery with the real binary: SIGKILL `rtbench tune apply` between two
//! writes (the hidden `--pause-after-writes N` makes it stop right after write N), then
//! the next `revert` or `apply` restores the originals before doing anything else.

use crate::common::tune_tree;

use rtbench::tune::journal::{Journal, JournalState};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use tune_tree::Tree;

fn rtbench(t: &Tree, args: &[&str]) -> Command {
    let mut c = Command::new(crate::common::exe());
    c.args(args)
        .arg("--config")
        .arg(t.join("rtbench.toml"))
        .arg("--sysroot")
        .arg(t.join("root"));
    c
}

/// Starts `apply` paused after write `k`, waits for it to say so, and SIGKILLs it.
fn apply_and_kill_after(t: &Tree, k: usize) {
    let mut child = rtbench(
        t,
        &["tune", "apply", "--pause-after-writes", &k.to_string()],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let want = format!("paused after write {k}");
    loop {
        match rx.recv_timeout(crate::common::BOUND) {
            Ok(l) if l.contains(&want) => break,
            Ok(_) => continue,
            Err(e) => {
                let _ = child.kill();
                panic!("apply never paused after write {k}: {e}");
            }
        }
    }
    child.kill().unwrap(); // SIGKILL: no destructor, no cleanup runs
    let st = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(st.signal(), Some(libc::SIGKILL));
}

#[test]
fn sigkill_between_writes_then_next_start_restores_originals() {
    let t = Tree::new("crash");
    std::fs::write(t.join("rtbench.toml"), t.config_text("")).unwrap();
    let before = t.snapshot();

    // Killed after 5 of 13 writes: 5 files changed, journal left `applying`.
    apply_and_kill_after(&t, 5);
    let j = Journal::load(&t.journal_dir()).unwrap().unwrap();
    assert_eq!(j.state, JournalState::Applying);
    assert_eq!(j.entries.len(), 5);
    let changed = t
        .snapshot()
        .iter()
        .filter(|(p, v)| before.get(*p) != Some(v))
        .count();
    assert_eq!(changed, 5);
    let st = rtbench(&t, &["tune", "status"]).output().unwrap();
    assert_eq!(st.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&st.stdout).contains("applying"));

    // `revert` first rolls the interrupted apply back: every byte as before.
    let out = rtbench(&t, &["tune", "revert"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("recovered: an interrupted apply was rolled back"),
        "{text}"
    );
    assert_eq!(t.snapshot(), before);

    // Killed again after 9 writes; this time `apply` recovers, then applies from the
    // true originals (the journal must not record the half-applied values).
    apply_and_kill_after(&t, 9);
    let out = rtbench(&t, &["tune", "apply", "--json"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["recovered"].as_array().unwrap().len(), 9);
    assert_eq!(v["writes"], 9 + 13);
    let j = Journal::load(&t.journal_dir()).unwrap().unwrap();
    assert_eq!(j.state, JournalState::Committed);
    for e in &j.entries {
        let key = t.join("root").join(e.step.path.trim_start_matches('/'));
        assert_eq!(
            e.step.original.as_bytes(),
            &before[&key][..],
            "{}",
            e.step.path
        );
    }
    let out = rtbench(&t, &["tune", "revert"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(t.snapshot(), before);
}

#[test]
fn config_errors_exit_2_and_write_nothing() {
    let t = Tree::new("badcfg");
    let before = t.snapshot();
    for (text, want) in [
        (
            "[tuning]\nisolated = \"5\"\n",
            "rtbench.toml:2: tuning.isolated = \"5\"",
        ),
        (
            "[tuning.sysctl]\nprintk = 12\n",
            "rtbench.toml:2: tuning.sysctl.printk = 12",
        ),
        (
            "[tuning]\nisolated = \"2\"\nhousekeeping = \"\"\n",
            "rtbench.toml:3: tuning.housekeeping",
        ),
        (
            "[tuning]\nisolated = \"0\"\n",
            "boot CPU 0 cannot be isolated",
        ),
        ("[tuning]\nisolcpus = \"1\"\n", "unknown field `isolcpus`"),
    ] {
        std::fs::write(t.join("rtbench.toml"), text).unwrap();
        let out = rtbench(&t, &["tune", "apply"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {err}");
        assert!(err.contains(want), "{text}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    assert_eq!(t.snapshot(), before);
    assert!(!t.journal_dir().exists());
}

#[test]
fn not_root_apply_and_revert_exit_3_check_runs() {
    // As user nobody (setpriv from util-linux), on the host: apply/revert refuse before
    // reading anything else, check only reads.
    let t = Tree::new("nobody");
    let cfg = t.join("rtbench.toml");
    std::fs::write(
        &cfg,
        "[tuning]\nisolated = \"1\"\n[tuning.sysctl]\nprintk = 1\n",
    )
    .unwrap();
    let as_nobody = |action: &str| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(crate::common::exe())
            .args(["tune", action, "--config"])
            .arg(&cfg)
            .output()
            .unwrap()
    };
    for action in ["apply", "revert"] {
        let out = as_nobody(action);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{action}: {err}");
        assert!(err.contains("run it as root"), "{err}");
    }
    let out = as_nobody("check");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("sysctl.kernel.printk"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(matches!(out.status.code(), Some(0 | 1)));
}

//! `rtbench config template|check`: the configuration's documentation and its check
//! come with the binary, for someone who holds a release binary or an image and not
//! the source tree.

use crate::common::{run, TempDir};

/// The template is the source tree's `systemd/rtbench.toml`, byte for byte, and is a
/// valid configuration on this machine.
#[test]
fn template_is_the_documented_file_and_checks_ok() {
    let o = run("config template");
    assert!(o.status.success(), "{o:?}");
    let shipped = include_str!("../../systemd/rtbench.toml");
    assert_eq!(String::from_utf8(o.stdout.clone()).unwrap(), shipped);
    let dir = TempDir::new("config-template");
    let file = dir.join("rtbench.toml");
    std::fs::write(&file, &o.stdout).unwrap();
    let o = run(&["config", "check", file.to_str().unwrap()][..]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(o.stderr.is_empty(), "{o:?}");
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        format!("{}: ok\n", file.display())
    );
}

/// Every section is validated (a wrong value in the last ones too), as one line with
/// file, line, key and value, exit 2; nothing is run or written (the results and
/// journal directories it names are not created).
#[test]
fn check_validates_every_section_and_writes_nothing() {
    let dir = TempDir::new("config-check");
    let file = dir.join("rtbench.toml");
    let results = dir.join("results");
    for (body, line) in [
        ("[tuning.boot]\nisolcpus = true\n", "rtbench.toml:6: isolcpus = true: expected a list of flags from domain, nohz, managed_irq"),
        ("[monitor]\ninterval_us = 1\n", "rtbench.toml:6: monitor.interval_us = 1:"),
        ("[explain]\nbuffer_kib = 1\n", "rtbench.toml:6: explain.buffer_kib = 1:"),
        ("[[limits.cpus]]\ncpus = \"0\"\ntest = \"cyc\"\n", "rtbench.toml:7: limits.cpus[0].test = \"cyc\":"),
        ("[cyclic]\ncpus = \"4095\"\n", "rtbench.toml:6: cyclic.cpus = \"4095\":"),
    ] {
        let text = format!(
            "[output]\nresults_dir = \"{}\"\n[tuning]\njournal_dir = \"{}\"\n{body}",
            results.display(),
            dir.join("journal").display()
        );
        std::fs::write(&file, text).unwrap();
        let o = run(&["config", "check", file.to_str().unwrap()][..]);
        let err = String::from_utf8(o.stderr.clone()).unwrap();
        assert_eq!(o.status.code(), Some(2), "{body:?}: {o:?}");
        assert!(o.stdout.is_empty(), "{o:?}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(line), "{body:?}: {err}");
    }
    assert!(!results.exists() && !dir.join("journal").exists());
}

/// Without a file, `check` reads the default path; where there is none (the tests'
/// mount namespace hides the host's /etc/rtbench) the documented defaults apply and
/// it says so. A named file that does not exist is an error.
#[test]
fn check_without_a_file_says_the_defaults_apply() {
    let o = run("config check");
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "/etc/rtbench/rtbench.toml: no such file; the documented defaults apply (rtbench config template)\n"
    );
    let o = run("config check /nonexistent/rtbench.toml");
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.starts_with("rtbench: /nonexistent/rtbench.toml: cannot read the configuration: "),
        "{err}"
    );
}

/// A valid file with a priority the template advises against gets advice, not an
/// error: `config check` prints it under the ok line, the self-test warns.
#[test]
fn priority_99_is_advised_against_where_it_is_written() {
    let dir = TempDir::new("config-advice");
    let file = dir.join("rtbench.toml");
    std::fs::write(
        &file,
        "[cyclic]\npriority = 99\n[pipe]\ncpus = \"0\"\npriority = 99\n",
    )
    .unwrap();
    let o = run(&["config", "check", file.to_str().unwrap()][..]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[1].contains("advice: cyclic.priority = 99: "), "{out}");
    assert!(lines[2].contains("advice: pipe.priority = 99: "), "{out}");
    std::fs::write(&file, "[cyclic]\npriority = 98\n").unwrap();
    let o = run(&["config", "check", file.to_str().unwrap()][..]);
    assert_eq!(String::from_utf8(o.stdout).unwrap().lines().count(), 1);
}

//! Every refusal reproduced for real on this machine — resource limits
//! (prlimit), a non-root user and capability drops (setpriv), a cpu cgroup without RT
//! runtime, a seccomp filter, errno injection (strace -e inject=), strict overcommit,
//! the RT runtime held by the root cpu cgroup and the fair server — each checked for
//! its exit code (3: the environment refused), the errno the call returned, and the
//! cause named with its numbers. Settings changed here are restored on drop, also
//! when an assertion fails.

use crate::common::cgroup::Cgroup;
use crate::common::*;
use std::path::Path;
use std::process::{Command, Output};

fn bin() -> &'static str {
    crate::common::exe()
}

/// `setpriv` arguments that make rtbench run as user and group nobody (65534), with no
/// supplementary groups.
const NOBODY: [&str; 3] = ["--reuid=65534", "--regid=65534", "--clear-groups"];

/// Runs `rtbench ARGS` under `prlimit LIMIT setpriv SETPRIV…`: prlimit sets one resource
/// limit (`--rtprio=0`, `--memlock=BYTES`), setpriv changes the user or drops
/// capabilities, then execs rtbench; waits for it.
fn limited(limit: &str, setpriv: &[&str], args: &[&str]) -> Output {
    Command::new("prlimit")
        .args([limit, "setpriv"])
        .args(setpriv)
        .arg(bin())
        .args(args)
        .output()
        .unwrap()
}

/// The one error line (`rtbench: …`) of a run, and its exit code.
fn refusal(o: &Output) -> (Option<i32>, String) {
    let err = stderr(o);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("rtbench: ")).collect();
    assert_eq!(lines.len(), 1, "one error line: {err}");
    (o.status.code(), lines[0].to_string())
}

/// As user nobody, RLIMIT_RTPRIO 0 (prlimit lowers it, so the test holds wherever
/// it runs): SCHED_FIFO is refused with EPERM, and the message says it is the limit
/// without CAP_SYS_NICE (an earlier rtbench printed EAGAIN here, a later call's errno).
#[test]
fn sched_fifo_as_a_user_names_rlimit_rtprio() {
    for cmd in ["cyclic", "pmq", "pipe"] {
        let o = limited(
            "--rtprio=0",
            &NOBODY,
            &[cmd, "-p", "90", "-l", "20", "-q", "--no-mlockall"],
        );
        let (code, line) = refusal(&o);
        assert_eq!(code, Some(3), "{cmd}: {line}");
        assert!(
            line.contains("sched_setscheduler(SCHED_FIFO, 90)")
                && line.contains(": Operation not permitted (os error 1); RLIMIT_RTPRIO is 0 (ulimit -r), below priority 90, and the thread lacks CAP_SYS_NICE")
                && line.contains("LimitRTPRIO=90")
                && line.ends_with(", or run as root"),
            "{cmd}: {line}"
        );
    }
    // The pipe pair again and again: the responder thread, still starting when the
    // refused sender's pipes close, must not kill rtbench with SIGPIPE (exit 141; seen
    // about once in 30 runs before its thread blocked SIGPIPE).
    for i in 0..60 {
        let o = limited(
            "--rtprio=0",
            &NOBODY,
            &["pipe", "-p", "90", "-l", "20", "-q", "--no-mlockall"],
        );
        assert_eq!(o.status.code(), Some(3), "run {i}: {}", stderr(&o));
    }
}

/// Root without CAP_SYS_NICE (dropped from the bounding set): the same cause, without
/// "run as root".
#[test]
fn sched_fifo_without_cap_sys_nice_names_it() {
    let o = limited(
        "--rtprio=0",
        &["--bounding-set=-sys_nice", "--inh-caps=-sys_nice"],
        &["cyclic", "-p", "80", "-l", "20", "-q"],
    );
    let (code, line) = refusal(&o);
    assert_eq!(code, Some(3), "{line}");
    assert!(
        line.contains("(os error 1); RLIMIT_RTPRIO is 0 (ulimit -r), below priority 80, and the thread lacks CAP_SYS_NICE (CapEff ")
            && !line.contains("run as root"),
        "{line}"
    );
}

/// As a user with a 1 MiB RLIMIT_MEMLOCK, mlockall fails with ENOMEM: the limit is
/// named with rtbench's mapped size, not a guess.
#[test]
fn mlockall_names_rlimit_memlock_with_the_mapped_size() {
    let o = limited(
        "--memlock=1048576",
        &NOBODY,
        &["cyclic", "-p", "90", "-l", "20", "-q"],
    );
    let (code, line) = refusal(&o);
    assert_eq!(code, Some(3), "{line}");
    assert!(
        line.starts_with("rtbench: mlockall(MCL_CURRENT|MCL_FUTURE): Cannot allocate memory (os error 12); RLIMIT_MEMLOCK is 1048576 bytes (1 MiB) (ulimit -l), below the ")
            && line.contains("rtbench has mapped (VmSize")
            && line.contains("lacks CAP_IPC_LOCK"),
        "{line}"
    );
}

/// A new child of the root v1 cpu cgroup, which starts with cpu.rt_runtime_us = 0;
/// `None` where the kernel has no RT group scheduling.
fn cpu_cgroup(tag: &str) -> Option<Cgroup> {
    let top = Path::new("/sys/fs/cgroup/cpu");
    if !top.join("cpu.rt_runtime_us").exists() {
        return None;
    }
    Some(Cgroup::new(top, tag).expect("a child of the cpu cgroup"))
}

/// Root with CAP_SYS_NICE in a cpu cgroup without RT runtime (CONFIG_RT_GROUP_SCHED):
/// EPERM, and the cgroup and its file are named. The self-test in it exits 3 after
/// READY, its "stopped before a verdict" entry carrying RTBENCH_ERRNO=1 and
/// RTBENCH_CAUSE.
#[test]
fn a_cgroup_without_rt_runtime_is_named() {
    let Some(cg) = cpu_cgroup("nort") else {
        crate::common::skip("no RT group scheduling (cpu.rt_runtime_us) on this kernel");
        return;
    };
    assert_eq!(
        std::fs::read_to_string(cg.path().join("cpu.rt_runtime_us"))
            .unwrap()
            .trim(),
        "0"
    );
    let o = cg.run(&["cyclic", "-p", "90", "-l", "20", "-q"]);
    let (code, line) = refusal(&o);
    assert_eq!(code, Some(3), "{line}");
    let want = format!(
        "(os error 1); cgroup {} has cpu.rt_runtime_us = 0 (RT group scheduling, CONFIG_RT_GROUP_SCHED) and the thread holds CAP_SYS_NICE",
        cg.path().display()
    );
    assert!(line.contains(&want), "{line}");
    // The self-test: READY first, then the refusal, exit 3.
    let tmp = TempDir::new("nort-selftest");
    let cfg = tmp.join("rtbench.toml");
    std::fs::write(
        &cfg,
        format!(
            "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[output]\nresults_dir = \"{}\"\n",
            tmp.join("results").display()
        ),
    )
    .unwrap();
    let o = cg.run(&[
        "selftest",
        "--log-format",
        "logfmt",
        "--config",
        cfg.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    let ready = err.find("READY: ").expect("READY before the refusal");
    let entry_at = err
        .find("MESSAGE_ID=11388322edd8448fb26766740685d2fb")
        .unwrap_or_else(|| panic!("no 'stopped before a verdict' entry: {err}"));
    assert!(entry_at > ready, "{err}");
    let entry = err[entry_at..].lines().next().unwrap();
    assert!(
        entry.contains("RTBENCH_STAGE=measurement")
            && entry.contains("RTBENCH_EXIT_STATUS=3")
            && entry.contains("RTBENCH_ERRNO=1")
            && entry.contains("RTBENCH_CAUSE=cpu.rt_runtime_us")
            && entry.contains("sched_setscheduler(SCHED_FIFO")
            && entry.contains("has cpu.rt_runtime_us = 0"),
        "{entry}"
    );
}

/// A seccomp filter (installed in the child before exec, as systemd's
/// RestrictRealtime= or a container runtime does) returns EPERM for
/// sched_setscheduler: with the capability held and RT runtime available, the filter
/// is named.
#[test]
fn a_seccomp_filter_is_named() {
    use std::os::unix::process::CommandExt;
    #[repr(C)]
    struct SockFilter {
        code: u16,
        jt: u8,
        jf: u8,
        k: u32,
    }
    #[repr(C)]
    struct SockFprog {
        len: u16,
        filter: *const SockFilter,
    }
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const RET_ERRNO: u32 = 0x0005_0000; // SECCOMP_RET_ERRNO
    const RET_ALLOW: u32 = 0x7fff_0000; // SECCOMP_RET_ALLOW
    let filter = [
        // seccomp_data.nr
        SockFilter {
            code: LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        SockFilter {
            code: JEQ_K,
            jt: 0,
            jf: 1,
            k: libc::SYS_sched_setscheduler as u32,
        },
        SockFilter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: RET_ERRNO | libc::EPERM as u32,
        },
        SockFilter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: RET_ALLOW,
        },
    ];
    let prog = SockFprog {
        len: filter.len() as u16,
        filter: filter.as_ptr(),
    };
    let prog_addr = &prog as *const SockFprog as usize;
    let mut cmd = rtbench();
    cmd.args(["cyclic", "-p", "70", "-l", "20", "-q"]);
    // SAFETY: between fork and exec only prctl(2) runs, on memory that outlives the
    // spawn (the filter and program are on this thread's stack until output() returns).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, 2, prog_addr, 0, 0) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    let (code, line) = refusal(&o);
    assert_eq!(code, Some(3), "{line}");
    assert!(
        line.contains("sched_setscheduler(SCHED_FIFO, 70): Operation not permitted (os error 1); a seccomp filter is installed on this thread (Seccomp: 2, Seccomp_filters: 1 in /proc/self/status)")
            && line.contains("the thread holds CAP_SYS_NICE"),
        "{line}"
    );
}

/// strace's -e inject= makes a call return an errno no limit explains: the message
/// shows exactly that errno, not one read after something else overwrote it.
#[test]
fn the_errno_shown_is_the_one_the_call_returned() {
    let strace = |inject: &str, args: &[&str]| {
        Command::new("strace")
            .args([
                "-f",
                "-qq",
                "-o",
                "/dev/null",
                "-e",
                &format!("inject={inject}"),
            ])
            .arg(bin())
            .args(args)
            .output()
            .expect("strace runs (apt-get install strace)")
    };
    let cases: [(&str, &[&str], &str); 3] = [
        (
            "sched_setscheduler:error=EBUSY",
            &["cyclic", "-p", "90", "-l", "20", "-q"],
            "rtbench: sched_setscheduler(SCHED_FIFO, 90): Device or resource busy (os error 16)",
        ),
        (
            "mlockall:error=EAGAIN",
            &["cyclic", "-p", "90", "-l", "20", "-q"],
            "rtbench: mlockall(MCL_CURRENT|MCL_FUTURE): Resource temporarily unavailable (os error 11)",
        ),
        (
            "clone3,clone:error=EAGAIN",
            &["cyclic", "-p", "90", "-l", "20", "-q"],
            "rtbench: spawning a measuring thread: Resource temporarily unavailable (os error 11); no task limit is reached",
        ),
    ];
    for (inject, args, want) in cases {
        let o = strace(inject, args);
        let (code, line) = refusal(&o);
        assert_eq!(code, Some(3), "{inject}: {line}");
        assert!(line.starts_with(want), "{inject}: {line}");
    }
}

/// Writes `value` to a kernel file on construction and the original back on drop.
struct Restore {
    path: &'static str,
    original: String,
}

impl Restore {
    fn set(path: &'static str, value: &str) -> Restore {
        let original = std::fs::read_to_string(path).unwrap().trim().to_string();
        let r = Restore { path, original };
        std::fs::write(path, value).unwrap_or_else(|e| panic!("{path} = {value}: {e}"));
        r
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(self.path, &self.original) {
            eprintln!("could not restore {} to {}: {e}", self.path, self.original);
        }
    }
}

fn meminfo_kb(key: &str) -> u64 {
    let m = std::fs::read_to_string("/proc/meminfo").unwrap();
    m.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

/// Under overcommit_memory = 2 a vm load larger than what is left under CommitLimit
/// fails its mmap with ENOMEM: CommitLimit and Committed_AS are named, exit 3. Mode 2
/// is on for about a second and restored; the load asked for is what strict
/// accounting refuses, nothing else on the machine is pushed.
#[test]
fn strict_overcommit_names_commit_limit_for_the_load() {
    // Machine-wide: no other test may measure meanwhile (common::lock).
    let _machine = exclusive();
    if meminfo_kb("Committed_AS") * 2 > meminfo_kb("CommitLimit") {
        crate::common::skip("Committed_AS is too close to CommitLimit to switch to mode 2 safely");
        return;
    }
    let gib = meminfo_kb("CommitLimit") / (1 << 20) + 2;
    let _mode = Restore::set("/proc/sys/vm/overcommit_memory", "2");
    let tmp = TempDir::new("commit");
    let o = rtbench()
        .args([
            "cyclic",
            "-p",
            "90",
            "-l",
            "50",
            "-q",
            "--no-mlockall",
            "--load",
        ])
        .arg(format!("vm:1:{gib}G"))
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    drop(_mode);
    let (code, line) = refusal(&o);
    assert_eq!(code, Some(3), "{line}");
    assert!(
        line.starts_with(&format!(
            "rtbench: --load 'vm:1:{gib}G': exited at once with status 3"
        )) && line.contains(
            "Cannot allocate memory (os error 12); overcommit_memory = 2 (strict): Committed_AS "
        ) && line.contains(&format!(
            " kB + {} kB asked exceeds CommitLimit ",
            gib << 20
        )),
        "{line}"
    );
}

/// `sched_rt_runtime_us` below the root cpu cgroup's 950000 µs: the kernel says
/// EINVAL (RT group scheduling). `tune check` predicts it with the numbers, `apply`
/// refuses before writing (exit 3), the value is unchanged. With the root group
/// lowered first, a value below the fair server's 50 ms per second is refused as
/// SCHED_DEADLINE bandwidth: predicted from debugfs where it is mounted, else written,
/// refused by the kernel with EBUSY, explained, and rolled back.
#[test]
fn rt_runtime_refusals_are_predicted_and_explained() {
    // Machine-wide: no other test may measure meanwhile (common::lock).
    let _machine = exclusive();
    let root_group = "/sys/fs/cgroup/cpu/cpu.rt_runtime_us";
    let global = "/proc/sys/kernel/sched_rt_runtime_us";
    if !Path::new(root_group).exists() {
        crate::common::skip("no RT group scheduling on this kernel");
        return;
    }
    let before = std::fs::read_to_string(global).unwrap();
    let tmp = TempDir::new("rtruntime");
    let cfg = |v: i64| {
        let p = tmp.join(format!("rt{v}.toml"));
        std::fs::write(
            &p,
            format!(
                "[tuning]\njournal_dir = \"{}\"\n[tuning.sysctl]\nsched_rt_runtime_us = {v}\n",
                tmp.join("journal").display()
            ),
        )
        .unwrap();
        p
    };
    let group_runtime: i64 = std::fs::read_to_string(root_group)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let below = group_runtime - 50_000;
    let c = cfg(below);
    let o = run(&["tune", "check", "--config", c.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(&format!("refused: RT group scheduling: cgroup /sys/fs/cgroup/cpu holds cpu.rt_runtime_us = {group_runtime} of cpu.rt_period_us = 1000000"))
            && out.contains(&format!("lower /sys/fs/cgroup/cpu/cpu.rt_runtime_us to {below} or less first")),
        "{out}"
    );
    let o = run(&["tune", "apply", "--config", c.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    assert_eq!(std::fs::read_to_string(global).unwrap(), before);
    // The fair server (Linux >= 6.12) reserves 50000 µs per second on each CPU.
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let mut v = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().unwrap_or(0));
    if (v.next().unwrap_or(0), v.next().unwrap_or(0)) < (6, 12) {
        crate::common::skip("the fair server part: kernel before 6.12");
        return;
    }
    let _group = Restore::set(root_group, "40000");
    let c = cfg(40_000);
    let o = run(&["tune", "apply", "--config", c.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{out}");
    // With debugfs mounted, the admitted deadline bandwidth is read from
    // /sys/kernel/debug/sched/debug and the refusal predicted before any write; without
    // it, the write is tried and the kernel's EBUSY explained. Either way the same cause.
    let predicted = out.contains("refused: SCHED_DEADLINE bandwidth: ");
    assert!(
        (predicted || out.contains("write failed: EBUSY writing \"40000\""))
            && out.contains("SCHED_DEADLINE bandwidth: ")
            && out.contains("keep sched_rt_runtime_us at 50000 µs or more"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(global).unwrap(), before);
}

/// A self-test whose tuning the system refuses (here the RT runtime the root cpu
/// cgroup holds) still measures the untuned system, cannot pass, and exits 3; the
/// tuning entry says why, and nothing was written.
#[test]
fn a_selftest_with_refused_tuning_exits_3() {
    // Machine-wide: no other test may measure meanwhile (common::lock).
    let _machine = exclusive();
    let root_group = "/sys/fs/cgroup/cpu/cpu.rt_runtime_us";
    if !Path::new(root_group).exists() {
        crate::common::skip("no RT group scheduling on this kernel");
        return;
    }
    let global = "/proc/sys/kernel/sched_rt_runtime_us";
    let before = std::fs::read_to_string(global).unwrap();
    let group_runtime: i64 = std::fs::read_to_string(root_group)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let tmp = TempDir::new("refused-tuning");
    let cfg = tmp.join("rtbench.toml");
    std::fs::write(
        &cfg,
        format!(
            "[selftest]\nmode = \"apply\"\nduration = \"1s\"\n[tuning]\njournal_dir = \"{}\"\n\
             [tuning.sysctl]\nsched_rt_runtime_us = {}\n[limits]\nmax_us = 10000000\n\
             [output]\nresults_dir = \"{}\"\n",
            tmp.join("journal").display(),
            group_runtime - 50_000,
            tmp.join("results").display()
        ),
    )
    .unwrap();
    let o = selftest_logfmt(&cfg);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.lines().any(
            |l| l.contains("RTBENCH_TUNE_ITEM=sysctl.kernel.sched_rt_runtime_us")
                && l.contains("RTBENCH_TUNE_STATUS=failed")
                && l.contains("holds cpu.rt_runtime_us")
        ),
        "{err}"
    );
    assert!(err.contains("READY: "), "measured after the refusal: {err}");
    assert!(err.contains("RTBENCH_VERDICT=fail"), "{err}");
    assert_eq!(std::fs::read_to_string(global).unwrap(), before);
}

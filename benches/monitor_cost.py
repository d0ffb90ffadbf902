#!/usr/bin/env python3
"""The cost of `rtbench monitor` itself, side by side with an idle system.

Interleaves three arms for --seconds each, --rounds times (A B C, then C B A, ...):
  idle     nothing started: the system's own CPU use;
  monitor  `rtbench monitor` as the unit runs it (every online CPU, SCHED_FIFO 98,
           1 ms interval, 5-minute windows), with a temporary --dir;
  cyclic   `cyclictest -m -S -p 98 -i 1000 -q` for the same time, the reference tool
           doing the same wakeups.
For each arm: the CPU time of the process itself (user + system, from wait4's rusage,
scaled to seconds per hour), the whole system's busy time (/proc/stat: every field but
idle and iowait, so timer interrupts and softirqs count), and the resident set size
(VmRSS half way, VmHWM near the end). Prints every run, the medians, and the
monitor's cost as (monitor - idle) per hour.

Usage: sudo benches/monitor_cost.py [--rtbench PATH] [--seconds 60] [--rounds 3]
"""
import argparse, os, shutil, statistics, subprocess, tempfile, time

def busy_ticks():
    f = open("/proc/stat").readline().split()[1:]
    v = [int(x) for x in f]
    # user nice system idle iowait irq softirq steal guest guest_nice
    return sum(v[:8]) - v[3] - v[4]

def status_kib(pid, field):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0

def run_arm(arm, a, tmp):
    hz = os.sysconf("SC_CLK_TCK")
    cmd = None
    if arm == "monitor":
        d = tempfile.mkdtemp(dir=tmp)
        cmd = [a.rtbench, "monitor", "--config", os.path.join(tmp, "empty.toml"),
               "--dir", d, "-D", f"{a.seconds}s"]
    elif arm == "cyclic":
        cmd = ["cyclictest", "-m", "-S", "-p", "98", "-i", "1000", "-q", "-D", f"{a.seconds}s"]
    b0, t0 = busy_ticks(), time.monotonic()
    rss = peak = 0
    if cmd:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(a.seconds / 2)
        rss = status_kib(p.pid, "VmRSS")
        time.sleep(a.seconds * 0.4)
        # VmHWM, not wait4's ru_maxrss: that counts the forked Python before exec.
        peak = status_kib(p.pid, "VmHWM")
        _, status, ru = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{arm}: {cmd} exited {status}")
        cpu = ru.ru_utime + ru.ru_stime
    else:
        time.sleep(a.seconds)
        cpu = 0.0
    wall = time.monotonic() - t0
    busy = (busy_ticks() - b0) / hz
    return {"cpu_s_per_h": cpu / wall * 3600, "busy_s_per_h": busy / wall * 3600,
            "rss_kib": rss, "peak_kib": peak}

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rtbench", default=os.environ.get("RTBENCH", "target/release/rtbench"))
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    if shutil.which("cyclictest") is None:
        raise SystemExit("cyclictest (Debian package rt-tests) is needed")
    tmp = tempfile.mkdtemp(prefix="rtbench-monitor-cost-")
    open(os.path.join(tmp, "empty.toml"), "w").close()
    arms = ["idle", "monitor", "cyclic"]
    res = {k: [] for k in arms}
    try:
        for r in range(a.rounds):
            order = arms if r % 2 == 0 else arms[::-1]
            for arm in order:
                m = run_arm(arm, a, tmp)
                res[arm].append(m)
                print(f"round {r + 1} {arm:8} process {m['cpu_s_per_h']:7.1f} CPU-s/h, "
                      f"system busy {m['busy_s_per_h']:7.1f} CPU-s/h, "
                      f"RSS {m['rss_kib']} KiB (peak {m['peak_kib']} KiB)", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = lambda arm, k: statistics.median(x[k] for x in res[arm])
    ncpu = os.cpu_count()
    print(f"\nmedians over {a.rounds} rounds of {a.seconds} s, {ncpu} CPUs, 1 ms interval:")
    print(f"{'arm':8} {'process CPU-s/h':>16} {'system busy CPU-s/h':>20} {'RSS KiB':>8} {'peak KiB':>9}")
    for arm in arms:
        print(f"{arm:8} {med(arm, 'cpu_s_per_h'):16.1f} {med(arm, 'busy_s_per_h'):20.1f} "
              f"{med(arm, 'rss_kib'):8.0f} {med(arm, 'peak_kib'):9.0f}")
    extra = med("monitor", "busy_s_per_h") - med("idle", "busy_s_per_h")
    print(f"monitor cost: {med('monitor', 'cpu_s_per_h'):.1f} CPU-s/h in its own process "
          f"({med('monitor', 'cpu_s_per_h') / 36 / ncpu:.2f} % of {ncpu} CPUs), "
          f"{extra:.1f} CPU-s/h more system busy time than idle, "
          f"RSS {med('monitor', 'rss_kib'):.0f} KiB; cyclictest: "
          f"{med('cyclic', 'cpu_s_per_h'):.1f} CPU-s/h, RSS {med('cyclic', 'rss_kib'):.0f} KiB")

if __name__ == "__main__":
    main()

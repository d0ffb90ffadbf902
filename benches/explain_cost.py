#!/usr/bin/env python3
"""Benchmark: what the flight recorder (`rtbench cyclic --explain`) costs.

Three variants measure the same CPU in rounds whose order rotates (A B C, B C A,
C A B, ...) so that drift of a shared machine falls on all alike:

- `cyclictest -m -p 98 -a 1 -t 1 -i INTERVAL -h HIST -q -D DURATION` (the reference),
- `rtbench cyclic` with the same flags (recorder off),
- the same with `--explain 1000000` (recorder on: the tracefs instance records the
  measured CPU's scheduler, timer, IRQ, softirq and workqueue events the whole run; the
  1-s threshold is never reached, so this is the recording's steady cost, not an
  analysis's).

At 1 kHz and 10 kHz (`-i 1000`, `-i 100`) it takes per run, from each tool's `-h` dump:
p99 and p99.9 in µs, cycles; from the kernel, over the steady part of the run (from 2 s
after the start to 1 s before the end, so the recorder's setup and teardown are not
in it): the CPU time of all the process's threads per cycle (`/proc/PID/task/*/schedstat`,
ns: the trace events logged in the measuring thread's own context are charged there)
and the measured CPU's busy time per cycle (the elapsed time less the time in its
cpuidle states, `/sys/devices/system/cpu/cpuN/cpuidle/state*/time`, µs: the events
logged in interrupt context on an otherwise idle CPU are charged only there). The whole
run's CPU time (wait4 rusage) is kept too: its difference is the setup and teardown.
It prints the medians per variant, the ratios recorder-on / recorder-off and rtbench /
cyclictest, and writes a markdown summary and the raw figures under benches/results/.

Targets: CPU per cycle with the recorder ≤ 1.05 × without; p99.9 unchanged beyond the
spread of the runs. Also reported: how long one analysis takes (a FIFO 99 busy loop
of 0.2 s on the measured CPU at the end of the run, `--explain 2000`; the `"explain"`
object's `analysis_max_ms`).

Needs root, cyclictest (Debian: rt-tests) and 2 CPUs (CPU 1 is measured, CPU 0 runs
the main thread). A benchmark, not a test: exit 0 whatever the figures; 1 only when a
tool cannot run.

    sudo benches/explain_cost.py                      # builds rtbench first
    sudo benches/explain_cost.py --rtbench target/release/rtbench --rounds 10 -D 10
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cyclic_vs_cyclictest import build_rtbench, fmt, run_tool  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "benches" / "results" / "explain_cost.md"
CPU = 1
HIST_US = 2000


def idle_ns(cpu):
    """Time `cpu` spent in its cpuidle states, ns (None without cpuidle)."""
    d = Path(f"/sys/devices/system/cpu/cpu{cpu}/cpuidle")
    states = sorted(d.glob("state*/time"))
    if not states:
        return None
    return sum(int(p.read_text()) for p in states) * 1000


def child_pid():
    """The pid of this process's one child (the tool run_tool started), or None."""
    me = str(os.getpid())
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if (p / "stat").read_text().rsplit(")", 1)[1].split()[1] == me:
                    return int(p.name)
            except (OSError, IndexError):
                pass
    return None


def process_cpu_ns(pid):
    """CPU time of all threads of `pid` (schedstat's first field), ns."""
    total = 0
    for t in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((t / "schedstat").read_text().split()[0])
        except (OSError, ValueError):
            pass
    return total


def sample(pid):
    return time.monotonic_ns(), process_cpu_ns(pid), idle_ns(CPU)


def run(variant, cmd, duration, interval_us):
    steady = {}

    def sampler():
        time.sleep(2.0)
        pid = child_pid()
        if pid is None:
            return
        try:
            a = sample(pid)
            time.sleep(duration - 3.0)
            b = sample(pid)
        except OSError:
            return
        cycles = (b[0] - a[0]) / (interval_us * 1000)
        steady["cpu_ns_per_cycle"] = (b[1] - a[1]) / cycles
        if a[2] is not None:
            steady["cpu1_busy_ns_per_cycle"] = ((b[0] - a[0]) - (b[2] - a[2])) / cycles

    th = threading.Thread(target=sampler)
    th.start()
    r = run_tool(variant, cmd, HIST_US, duration + 60)
    th.join()
    h = r.hist
    return {
        "variant": variant,
        "cmd": cmd,
        "cycles": r.cycles,
        "p99_us": h.quantile_us(0.99),
        "p999_us": h.quantile_us(0.999),
        "max_us": r.max_us,
        "cpu_ns_per_cycle": steady.get("cpu_ns_per_cycle"),
        "cpu1_busy_ns_per_cycle": steady.get("cpu1_busy_ns_per_cycle"),
        "whole_run_cpu_ns_per_cycle": r.cpu_ns_per_cycle,
        "load1_before": r.load1,
    }


def analysis_ms(rtbench):
    """One explained spike: a FIFO 99 busy loop of 0.2 s on CPU 1 (ended by `timeout`
    on CPU 0) while rtbench measures it with --explain 2000; the analysis time the
    run reports."""
    with tempfile.TemporaryDirectory() as d:
        js = Path(d) / "r.json"
        p = subprocess.Popen(
            [rtbench, "cyclic", "-m", "-p", "98", "-a", str(CPU), "-i", "1000", "-q",
             "-D", "3s", "--explain", "2000", "--json", str(js)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        subprocess.run(["taskset", "-c", "0", "timeout", "-k", "1", "0.2", "chrt", "-f", "99",
                        "taskset", "-c", str(CPU), "sh", "-c", "while :; do :; done"])
        p.wait()
        x = json.loads(js.read_text())["rtbench"].get("explain") or {}
        return x.get("analysis_max_ms"), [e["cause"]["kind"] for e in x.get("explained", [])]


def med(rows, key):
    v = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(v) if v else None


def spread(rows, key):
    v = [r[key] for r in rows if r.get(key) is not None]
    return (min(v), max(v)) if v else (None, None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rtbench", help="rtbench executable (default: build release)")
    ap.add_argument("-D", "--duration", type=int, default=10, help="seconds per run")
    ap.add_argument("--rounds", type=int, default=10, help="rounds per interval")
    ap.add_argument("--intervals", default="1000,100", help="µs, comma-separated")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (SCHED_FIFO, mlockall, tracefs)")
    rtbench = a.rtbench or os.environ.get("RTBENCH") or build_rtbench()
    results = {}
    lines = []
    for interval in [int(x) for x in a.intervals.split(",")]:
        base = ["-m", "-p", "98", "-a", str(CPU), "-t", "1", "-i", str(interval),
                "-h", str(HIST_US), "-q", "-D", f"{a.duration}s"]
        variants = [
            ("cyclictest", ["cyclictest"] + base[:-1] + [str(a.duration)]),
            ("rtbench", [rtbench, "cyclic"] + base + ["--mainaffinity", "0"]),
            ("rtbench --explain", [rtbench, "cyclic"] + base + ["--mainaffinity", "0",
                                                                "--explain", "1000000"]),
        ]
        rows = []
        for i in range(a.rounds):
            k = i % len(variants)
            for name, cmd in variants[k:] + variants[:k]:
                r = run(name, cmd, a.duration, interval)
                r["round"] = i
                rows.append(r)
                print(f"-i {interval} round {i} {name:18} p99.9 {r['p999_us']:8.1f} µs  "
                      f"cpu/cycle {r['cpu_ns_per_cycle'] or 0:7.0f} ns  "
                      f"cpu{CPU} busy/cycle {r['cpu1_busy_ns_per_cycle'] or 0:7.0f} ns",
                      file=sys.stderr)
        results[interval] = rows
        by = {n: [r for r in rows if r["variant"] == n] for n, _ in variants}
        lines.append(f"\n### `-i {interval}` ({1e6 / interval:.0f} Hz), {a.rounds} rounds of "
                     f"{a.duration} s\n")
        lines.append("| variant | p99 µs | p99.9 µs (min–max) | max µs | CPU ns/cycle (min–max) "
                     f"| CPU {CPU} busy ns/cycle | whole run CPU ns/cycle |")
        lines.append("|---|---|---|---|---|---|---|")
        for n, _ in variants:
            rs = by[n]
            lo, hi = spread(rs, "p999_us")
            clo, chi = spread(rs, "cpu_ns_per_cycle")
            lines.append(
                f"| {n} | {med(rs, 'p99_us'):.1f} | {med(rs, 'p999_us'):.1f} ({lo:.1f}–{hi:.1f}) "
                f"| {med(rs, 'max_us'):.0f} | {med(rs, 'cpu_ns_per_cycle'):.0f} ({clo:.0f}–{chi:.0f}) "
                f"| {fmt(med(rs, 'cpu1_busy_ns_per_cycle'), 0)} "
                f"| {med(rs, 'whole_run_cpu_ns_per_cycle'):.0f} |")
        on, off, ct = by["rtbench --explain"], by["rtbench"], by["cyclictest"]
        for key, label in [("cpu_ns_per_cycle", "CPU per cycle"),
                           ("cpu1_busy_ns_per_cycle", f"CPU {CPU} busy per cycle"),
                           ("whole_run_cpu_ns_per_cycle", "whole run CPU per cycle"),
                           ("p999_us", "p99.9")]:
            if med(on, key) is None or med(ct, key) is None:
                continue
            lines.append(f"- {label}: recorder on / off = {med(on, key) / med(off, key):.3f}; "
                         f"rtbench off / cyclictest = {med(off, key) / med(ct, key):.3f}")
    ms, kinds = analysis_ms(rtbench)
    lines.append(f"\nOne analysis (FIFO 99 busy loop of 0.2 s, `--explain 2000`): "
                 f"{ms} ms; causes named: {', '.join(kinds) or 'none'}.")
    uname = os.uname()
    head = [
        "# Flight recorder cost (`benches/explain_cost.py`)",
        "",
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, kernel {uname.release}, "
        f"{os.cpu_count()} CPUs, load average before {os.getloadavg()[0]:.1f}; rtbench {rtbench}",
        "",
        "Medians over the rounds. CPU per cycle: the CPU time of the process's threads "
        "(schedstat) over the steady part of the run (2 s after the start to 1 s before the "
        f"end), per cycle; CPU {CPU} busy: the measured CPU's time outside its cpuidle states "
        "over the same part, per cycle (interrupt-context events land there); whole run: "
        "wait4's user + sys over all cycles, setup and teardown included.",
    ]
    out = Path(a.out)
    out.write_text("\n".join(head + lines) + "\n")
    out.with_suffix(".json").write_text(json.dumps(
        {"analysis_ms": ms, "causes": kinds,
         "runs": {str(k): v for k, v in results.items()}}, indent=1) + "\n")
    print("\n".join(head + lines))
    print(f"\nwritten: {out} and {out.with_suffix('.json')}", file=sys.stderr)


if __name__ == "__main__":
    main()

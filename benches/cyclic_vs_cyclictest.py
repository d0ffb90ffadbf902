#!/usr/bin/env python3
"""Benchmark: `rtbench cyclic` against rt-tests' cyclictest with identical flags.

For each interval (default 1000 µs and 200 µs) both tools run as
`-m -S -p 98 -i INTERVAL -h HIST -q -D DURATION`, in at least 5 interleaved pairs;
the order alternates pair by pair (A B, B A, A B, ...) so that slow drift of a shared
machine falls on both tools equally. Per run it takes, from each tool's own `-h`
histogram dump (rtbench's stdout is byte-compatible with cyclictest's):

- p50 and p99 latency in µs, pooled over all threads, interpolated linearly inside
  the 1 µs bucket (both tools get the same estimator, so 1 µs bucket steps do not
  dominate a ~15 µs median);
- avg latency in µs, each sample counted at its bucket's midpoint (histogram
  overflows at the histogram limit);
- cycles = all histogram counts + overflows;

and, from the kernel:

- CPU time (user + sys) of the child process per cycle, in ns: `os.wait4()` of the
  directly spawned tool (spawned with vfork/exec, so no copy of this script's memory
  is charged to it);
- peak RSS in KiB: the tool's `VmHWM` read from /proc/PID/status while its main
  thread is stopped at exit (PTRACE_O_TRACEEXIT; only the main thread is traced, the
  measuring threads never are). `ru_maxrss` of the child is NOT used: Linux carries
  the pre-exec memory high-water mark across execve (exec_mmap ->
  setmax_mm_hiwater_rss), so for a child of this Python process it would report
  Python's RSS (tens of MiB) instead of the tool's.

It prints a per-pair table, medians and rtbench/cyclictest ratios with PASS/MISS
against rtbench's targets (benches/README.md, "Summary": median p50 ratio <= 1.05,
CPU-per-cycle ratio <= 1.0, peak RSS with -m <= cyclictest's), and writes a markdown summary (date, kernel, CPU,
exact command lines) plus the raw figures as JSON under benches/results/.

This is a benchmark, not a test: it exits 0 whatever the figures are; it exits 1 only
when a tool could not be run or its output could not be read.

Needs root (SCHED_FIFO priority 98, mlockall, ptrace of its own children) and
cyclictest (Debian: `apt-get install rt-tests`). Python 3 standard library only.

    sudo benches/cyclic_vs_cyclictest.py                     # builds rtbench first
    sudo benches/cyclic_vs_cyclictest.py --rtbench target/release/rtbench -D 10 --pairs 5
"""

import argparse
import ctypes
import datetime
import json
import os
import platform
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "benches" / "results" / "cyclic_vs_cyclictest.md"

# rtbench's targets (benches/README.md, "Summary").
TARGET_P50_RATIO = 1.05
TARGET_CPU_RATIO = 1.0
TARGET_RSS_RATIO = 1.0

# ptrace(2) constants (linux/ptrace.h).
PTRACE_CONT = 7
PTRACE_SEIZE = 0x4206
PTRACE_O_TRACEEXIT = 0x40
PTRACE_O_EXITKILL = 0x100000
PTRACE_EVENT_EXIT = 6
PTRACE_EVENT_STOP = 128

_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.restype = ctypes.c_long
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]


def ptrace(request, pid, addr=0, data=0):
    """Calls ptrace(2); raises OSError on failure."""
    rc = _libc.ptrace(request, pid, ctypes.c_void_p(addr), ctypes.c_void_p(data))
    if rc == -1:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return rc


def read_status_kib(pid, key):
    """A `kB` field (e.g. VmHWM) of /proc/PID/status, in KiB, or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


class RunResult:
    """One run of one tool: its histogram figures and its kernel-side costs."""

    def __init__(self, tool, cmd, hist, cpu_s, rss_kib, wall_s, load1, exitcode, nvcsw, nivcsw):
        self.tool = tool
        self.cmd = cmd
        self.hist = hist
        self.cpu_s = cpu_s
        self.rss_kib = rss_kib
        self.wall_s = wall_s
        self.load1 = load1
        self.exitcode = exitcode
        self.nvcsw = nvcsw
        self.nivcsw = nivcsw
        self.cycles = hist.cycles()
        self.p50_us = hist.quantile_us(0.50)
        self.p99_us = hist.quantile_us(0.99)
        self.avg_us = hist.mean_us()
        self.max_us = hist.max_us()
        self.cpu_ns_per_cycle = cpu_s * 1e9 / self.cycles if self.cycles else float("nan")

    def as_dict(self):
        return {
            "tool": self.tool,
            "cmd": self.cmd,
            "exitcode": self.exitcode,
            "cycles": self.cycles,
            "overflows": self.hist.overflows,
            "p50_us": self.p50_us,
            "p99_us": self.p99_us,
            "avg_us": self.avg_us,
            "max_us": self.max_us,
            "cpu_s": self.cpu_s,
            "cpu_ns_per_cycle": self.cpu_ns_per_cycle,
            "peak_rss_kib": self.rss_kib,
            "wall_s": self.wall_s,
            "load1_before": self.load1,
            "voluntary_ctxsw": self.nvcsw,
            "involuntary_ctxsw": self.nivcsw,
        }


class Histogram:
    """A cyclictest `-h` dump pooled over threads: 1 µs buckets plus an overflow count."""

    def __init__(self, limit_us):
        self.limit_us = limit_us
        self.buckets = {}  # bucket (µs) -> count, all threads
        self.overflows = 0
        self.threads = 0

    @classmethod
    def parse(cls, text, limit_us):
        """Parses the `# Histogram` block of cyclictest 2.x / rtbench `-h` output
        (either layout: all rows with `# Total:`, or zero rows omitted)."""
        h = cls(limit_us)
        lines = text.splitlines()
        try:
            start = lines.index("# Histogram")
        except ValueError:
            raise ValueError("no '# Histogram' line in the output")
        found_overflows = False
        for line in lines[start + 1 :]:
            if line[:1].isdigit():
                cols = line.split()
                counts = [int(c) for c in cols[1:]]
                h.threads = max(h.threads, len(counts))
                n = sum(counts)
                if n:
                    b = int(cols[0])
                    h.buckets[b] = h.buckets.get(b, 0) + n
            elif line.startswith("# Histogram Overflows:"):
                h.overflows = sum(int(c) for c in line.split(":", 1)[1].split())
                found_overflows = True
        if not found_overflows:
            raise ValueError("no '# Histogram Overflows:' line in the output")
        if not h.buckets and not h.overflows:
            raise ValueError("the histogram is empty")
        return h

    def cycles(self):
        return sum(self.buckets.values()) + self.overflows

    def quantile_us(self, q):
        """Value at quantile q in µs: rank q·n located in its 1 µs bucket and
        interpolated linearly inside it; overflows sit at the histogram limit."""
        n = self.cycles()
        rank = q * n
        cum = 0
        for b in sorted(self.buckets):
            c = self.buckets[b]
            if cum + c >= rank:
                return b + (rank - cum) / c
            cum += c
        return float(self.limit_us)

    def mean_us(self):
        n = self.cycles()
        s = sum((b + 0.5) * c for b, c in self.buckets.items()) + self.overflows * self.limit_us
        return s / n

    def max_us(self):
        if self.overflows:
            return float(self.limit_us)
        return float(max(self.buckets)) if self.buckets else 0.0


def run_tool(tool, cmd, hist_us, timeout_s):
    """Runs one tool as a direct child; returns a RunResult (raises RuntimeError)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        load1 = os.getloadavg()[0]
        t0 = time.monotonic()
        # No preexec_fn/close_fds tricks: Popen then uses vfork+exec, so the child
        # starts with no copy of this process's memory or page tables.
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        pid = proc.pid
        rss_kib = None
        traced = False
        try:
            ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)
            traced = True
        except OSError as e:
            print(f"warning: cannot ptrace {tool} ({e}); peak RSS not measured", file=sys.stderr)
        # A tool that overstays -D by a minute is killed (and then fails the run).
        killer = threading.Timer(timeout_s, os.kill, (pid, signal.SIGKILL))
        killer.start()
        while True:
            wpid, status, ru = os.wait4(pid, 0)
            if os.WIFSTOPPED(status):
                sig = os.WSTOPSIG(status)
                event = status >> 16
                deliver = 0
                if sig == signal.SIGTRAP and event == PTRACE_EVENT_EXIT:
                    # Main thread stopped in do_exit before exit_mm: the address space
                    # (and its high-water mark) is still there.
                    rss_kib = read_status_kib(pid, "VmHWM")
                elif event != PTRACE_EVENT_STOP:
                    # Signal-delivery stop (e.g. cyclictest's SIGALRM for -D): deliver it.
                    deliver = sig
                try:
                    ptrace(PTRACE_CONT, pid, 0, deliver)
                except OSError:
                    pass  # already gone (SIGKILL by the timeout); wait4 reports it
                continue
            break
        killer.cancel()
        wall_s = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(
            f"{tool} exited with {proc.returncode}: {shlex.join(cmd)}\n{stderr.strip()[:2000]}"
        )
    try:
        hist = Histogram.parse(stdout, hist_us)
    except ValueError as e:
        raise RuntimeError(f"{tool}: cannot read its histogram ({e}): {shlex.join(cmd)}")
    if not traced:
        rss_kib = None
    return RunResult(
        tool,
        cmd,
        hist,
        ru.ru_utime + ru.ru_stime,
        rss_kib,
        wall_s,
        load1,
        proc.returncode,
        ru.ru_nvcsw,
        ru.ru_nivcsw,
    )


def build_rtbench():
    """`cargo build --release` of this repository (honours CARGO_TARGET_DIR); returns
    the path of the rtbench executable cargo reports."""
    cmd = [
        "cargo",
        "build",
        "--release",
        "--bin",
        "rtbench",
        "--message-format=json-render-diagnostics",
        "--manifest-path",
        str(REPO / "Cargo.toml"),
    ]
    print("building:", shlex.join(cmd), file=sys.stderr)
    res = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if res.returncode != 0:
        sys.exit(f"cargo build failed ({res.returncode})")
    exe = None
    for line in res.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
            if msg.get("target", {}).get("name") == "rtbench":
                exe = msg["executable"]
    if not exe:
        sys.exit("cargo build did not report an rtbench executable")
    return exe


def fmt(v, nd=1):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def ratio(a, b):
    if a is None or b is None or not b:
        return None
    return a / b


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


METRICS = [
    # key, header, decimals
    ("cycles", "cycles", 0),
    ("p50_us", "p50 µs", 2),
    ("p99_us", "p99 µs", 2),
    ("avg_us", "avg µs", 2),
    ("max_us", "max µs", 0),
    ("cpu_ns_per_cycle", "CPU ns/cycle", 0),
    ("rss_kib", "peak RSS KiB", 0),
]


def pair_rows(pairs):
    """Rows of the per-pair table: one per run."""
    rows = []
    for i, (first, second) in enumerate(pairs):
        for pos, r in enumerate((first, second)):
            rows.append(
                [str(i + 1), "1st" if pos == 0 else "2nd", r.tool]
                + [fmt(getattr(r, k), nd) for k, _, nd in METRICS]
                + [fmt(r.load1, 2)]
            )
    return rows


def summarize(pairs):
    """Medians per tool and the rtbench/cyclictest ratios of the medians, plus the
    median of the per-pair ratios (a cross-check less sensitive to drift)."""
    by_tool = {"rtbench": [], "cyclictest": []}
    for a, b in pairs:
        for r in (a, b):
            by_tool[r.tool].append(r)
    med = {
        tool: {k: median([getattr(r, k) for r in runs]) for k, _, _ in METRICS}
        for tool, runs in by_tool.items()
    }
    ratios = {k: ratio(med["rtbench"][k], med["cyclictest"][k]) for k, _, _ in METRICS}
    pair_ratios = {}
    for k, _, _ in METRICS:
        rs = []
        for a, b in pairs:
            rt = a if a.tool == "rtbench" else b
            ct = b if a.tool == "rtbench" else a
            rs.append(ratio(getattr(rt, k), getattr(ct, k)))
        rs = [x for x in rs if x is not None]
        pair_ratios[k] = (median(rs), min(rs, default=None), max(rs, default=None))
    verdicts = [
        ("median p50 ratio", ratios["p50_us"], TARGET_P50_RATIO),
        ("CPU-per-cycle ratio", ratios["cpu_ns_per_cycle"], TARGET_CPU_RATIO),
        ("peak RSS ratio (-m)", ratios["rss_kib"], TARGET_RSS_RATIO),
    ]
    return med, ratios, pair_ratios, verdicts


def text_table(headers, rows):
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    out = ["  ".join(h.rjust(w) for h, w in zip(headers, widths))]
    out.append("  ".join("-" * w for w in widths))
    for r in rows:
        out.append("  ".join(c.rjust(w) for c, w in zip(r, widths)))
    return "\n".join(out)


def md_table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---:" for _ in headers) + "|"]
    for r in rows:
        out.append("| " + " | ".join(r) + " |")
    return "\n".join(out)


def verdict_str(value, target):
    if value is None:
        return "n/a"
    return "PASS" if value <= target else "MISS"


def config_report(interval, pairs, md):
    """Prints one interval's tables and appends their markdown to md; returns verdicts."""
    headers = ["pair", "order", "tool"] + [h for _, h, _ in METRICS] + ["load1"]
    rows = pair_rows(pairs)
    med, ratios, pair_ratios, verdicts = summarize(pairs)
    mheaders = ["", *(h for _, h, _ in METRICS)]
    mrows = [
        ["rtbench (median)"] + [fmt(med["rtbench"][k], nd) for k, _, nd in METRICS],
        ["cyclictest (median)"] + [fmt(med["cyclictest"][k], nd) for k, _, nd in METRICS],
        ["ratio of medians"] + [fmt(ratios[k], 3) for k, _, _ in METRICS],
        ["median of pair ratios"] + [fmt(pair_ratios[k][0], 3) for k, _, _ in METRICS],
        ["pair ratios min..max"]
        + [f"{fmt(pair_ratios[k][1], 2)}..{fmt(pair_ratios[k][2], 2)}" for k, _, _ in METRICS],
    ]
    vrows = [[name, fmt(v, 3), f"<= {t:g}", verdict_str(v, t)] for name, v, t in verdicts]

    print(f"\n=== -i {interval} µs: {len(pairs)} pairs ===")
    print(text_table(headers, rows))
    print()
    print(text_table(mheaders, mrows))
    print()
    for name, v, t in verdicts:
        print(f"{verdict_str(v, t)}  {name} = {fmt(v, 3)} (target <= {t:g})")

    md.append(f"\n## `-i {interval}`\n")
    md.append("Per run (pairs alternate which tool goes first):\n")
    md.append(md_table(headers, rows))
    md.append("\nMedians and rtbench/cyclictest ratios:\n")
    md.append(md_table(mheaders, mrows))
    md.append("\nTargets (benches/README.md, \"Summary\"):\n")
    md.append(md_table(["target", "value", "limit", "verdict"], vrows))
    return verdicts


def machine_info(rtbench, cyclictest):
    def first_line(cmd):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
            return (r.stdout or r.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            return "unknown"

    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    rev = first_line(["git", "-C", str(REPO), "describe", "--always", "--dirty"])
    try:
        built = datetime.datetime.fromtimestamp(
            os.stat(rtbench).st_mtime, datetime.timezone.utc
        ).strftime("%Y-%m-%d %H:%M UTC")
    except OSError:
        built = "unknown"
    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "kernel": " ".join(platform.uname()[i] for i in (2, 3, 4)),
        "cpu": f"{cpu} × {os.cpu_count()} online CPUs",
        "rtbench": f"{rtbench} ({first_line([rtbench, '--version'])}, binary built {built}; "
        f"repository at git {rev} when run)",
        "cyclictest": f"{cyclictest} ({first_line([cyclictest, '--help'])})",
    }


def main():
    ap = argparse.ArgumentParser(
        description="rtbench cyclic vs cyclictest with identical flags (the benchmark of benches/README.md, \"Summary\")"
    )
    ap.add_argument(
        "--rtbench",
        default=os.environ.get("RTBENCH"),
        help="rtbench binary (default: $RTBENCH, else `cargo build --release` of this repo)",
    )
    ap.add_argument(
        "--cyclictest",
        default=os.environ.get("CYCLICTEST", "/usr/bin/cyclictest"),
        help="cyclictest binary (default: $CYCLICTEST or /usr/bin/cyclictest)",
    )
    ap.add_argument("-D", "--duration", type=int, default=10, help="seconds per run (default 10)")
    ap.add_argument("--pairs", type=int, default=5, help="pairs per interval (default 5, min 5)")
    ap.add_argument(
        "--intervals", default="1000,200", help="comma-separated -i values in µs (default 1000,200)"
    )
    ap.add_argument("--hist", type=int, default=20000, help="-h buckets in µs (default 20000)")
    ap.add_argument("--priority", type=int, default=98, help="-p (default 98)")
    ap.add_argument("--gap", type=float, default=1.0, help="seconds of rest between runs (default 1)")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help=f"markdown summary (default {DEFAULT_OUT})")
    ap.add_argument("--no-write", action="store_true", help="print only; write no results files")
    args = ap.parse_args()

    if args.pairs < 5:
        ap.error("--pairs: at least 5 pairs are needed for a meaningful median")
    try:
        intervals = [int(x) for x in args.intervals.split(",") if x.strip()]
    except ValueError:
        ap.error(f"--intervals: expected comma-separated µs values, got {args.intervals!r}")
    if os.geteuid() != 0:
        print("warning: not root; SCHED_FIFO 98 and mlockall will probably be refused", file=sys.stderr)
    if not os.access(args.cyclictest, os.X_OK):
        sys.exit(f"cyclictest not found at {args.cyclictest} (Debian: apt-get install rt-tests)")
    rtbench = args.rtbench or build_rtbench()
    if not os.access(rtbench, os.X_OK):
        sys.exit(f"rtbench binary not executable: {rtbench}")

    tools = {"rtbench": [rtbench, "cyclic"], "cyclictest": [args.cyclictest]}
    info = machine_info(rtbench, args.cyclictest)
    timeout_s = args.duration + 60

    md = [
        "# rtbench cyclic vs cyclictest",
        "",
        "Generated by `benches/cyclic_vs_cyclictest.py`; do not edit by hand.",
        "",
        f"- Date: {info['date_utc']}",
        f"- Kernel: {info['kernel']}",
        f"- CPU: {info['cpu']}",
        f"- rtbench: `{info['rtbench']}`",
        f"- cyclictest: `{info['cyclictest']}`",
        f"- Runs: {args.pairs} interleaved pairs per interval, {args.duration} s each, "
        f"{args.gap:g} s rest between runs, order alternating per pair",
        "- p50/p99: pooled over threads from each tool's `-h` dump, linear inside the 1 µs bucket; "
        "avg: bucket midpoints; cycles: histogram counts + overflows",
        "- CPU: user+sys of the tool process (`wait4`) / cycles; peak RSS: the tool's `VmHWM` "
        "at exit (ptrace exit stop; `ru_maxrss` would include this script's pre-exec RSS)",
        "",
        "Command lines:",
        "",
    ]
    cmds = {}
    for interval in intervals:
        flags = ["-m", "-S", "-p", str(args.priority), "-i", str(interval),
                 "-h", str(args.hist), "-q", "-D", str(args.duration)]
        cmds[interval] = {t: base + flags for t, base in tools.items()}
        for t in ("rtbench", "cyclictest"):
            md.append(f"    {shlex.join(cmds[interval][t])}")
    print("\n".join(md[4:]))

    raw = {"info": info, "args": vars(args), "intervals": {}}
    all_verdicts = []
    failed = False
    for interval in intervals:
        pairs = []
        for i in range(args.pairs):
            order = ["rtbench", "cyclictest"] if i % 2 == 0 else ["cyclictest", "rtbench"]
            pair = []
            for tool in order:
                time.sleep(args.gap)
                try:
                    r = run_tool(tool, cmds[interval][tool], args.hist, timeout_s)
                except RuntimeError as e:
                    print(f"error: {e}", file=sys.stderr)
                    failed = True
                    break
                print(
                    f"-i {interval} pair {i + 1} {tool:10s} cycles={r.cycles} p50={r.p50_us:.2f} "
                    f"p99={r.p99_us:.2f} avg={r.avg_us:.2f} cpu={r.cpu_ns_per_cycle:.0f}ns/cycle "
                    f"rss={fmt(r.rss_kib)}KiB load1={r.load1:.2f}",
                    file=sys.stderr,
                )
                pair.append(r)
            if failed:
                break
            pairs.append(tuple(pair))
        if failed:
            break
        verdicts = config_report(interval, pairs, md)
        all_verdicts += [(interval, *v) for v in verdicts]
        raw["intervals"][str(interval)] = [[r.as_dict() for r in p] for p in pairs]

    if failed:
        sys.exit(1)
    md.append("\n## Verdicts\n")
    md.append(
        md_table(
            ["interval", "target", "value", "limit", "verdict"],
            [[f"-i {i}", n, fmt(v, 3), f"<= {t:g}", verdict_str(v, t)] for i, n, v, t in all_verdicts],
        )
    )
    if not args.no_write:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(md) + "\n")
        out.with_suffix(".json").write_text(json.dumps(raw, indent=1) + "\n")
        print(f"\nwrote {out} and {out.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

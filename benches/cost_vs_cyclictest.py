#!/usr/bin/env python3
"""Benchmark: what `rtbench cyclic` costs against rt-tests' cyclictest, side by side.

Four sections, each comparing the two tools in the same run (`--only` picks some):

fidelity   High-rate A/B: at `-i 100` (10 kHz) and `-i 50` (20 kHz), 1 and 2 threads
           (`-t N -a 0-(N-1)`, so each thread has a CPU of its own), with and without
           `-h`: `-m -p 98 -q -D DURATION`, in PAIRS interleaved ABBA pairs (A B, B A,
           ...). Per run: p99, p99.9 (from the `-h` dump, 1 µs classes, pooled over the
           threads, linear inside the class — both tools alike), max (the dump's
           `# Max Latencies:`, or without `-h` the final `T:` lines' `Max:`: the largest
           of every thread), and CPU time (user + sys, wait4) per cycle. Printed: per configuration the median of the per-pair
           rtbench/cyclictest ratios and their scatter (min..max).
rss        Peak RSS (VmHWM at exit, read while the main thread is stopped there; see
           benches/cyclic_vs_cyclictest.py) of `-m -p 80 -i 10000 -q -t N -D 2` for N = 1,
           8, 64, 256, and of `-m --policy other -i 1000000 -q -t 1024 -D 3` (1024 threads
           on any machine: memory, not latency), ROUNDS interleaved rounds, medians; and
           the locked memory per thread, (RSS(256) - RSS(1)) / 255.
callgrind  Instructions (user space, valgrind --tool=callgrind, deterministic): per
           cycle = (Ir at `-l 12000` - Ir at `-l 2000`) / 10000 with `-m -p 80 -i 200 -q
           -t 1`; startup = Ir up to the first clock_nanosleep(2) call of the process
           (`--dump-before=clock_nanosleep`), i.e. up to the first measuring sleep.
startup    Wall time from exec to the end of a `-l 1 -i 1000 -t 256 -m -p 80 -q` run
           (start-up of 256 threads, one sample each, exit), ROUNDS interleaved, medians.

Targets (benches/README.md, "Cost per measuring thread"): p99.9 and max ratios <= 1.05 at 10 kHz, CPU per cycle
<= 1.0; instructions per cycle <= cyclictest's; startup <= 2x cyclictest's instructions
at 1 thread and <= 2x its wall time at 256 threads; RSS at 256 threads <= cyclictest's.

A benchmark, not a test: it exits 0 whatever the figures are, 1 when a tool could not
run or its output could not be read. Needs root, cyclictest (rt-tests), valgrind for the
callgrind section. Writes benches/results/cost_vs_cyclictest.{md,json} unless --no-write.

    sudo benches/cost_vs_cyclictest.py --rtbench target/release/rtbench
    sudo benches/cost_vs_cyclictest.py --only rss,callgrind
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cyclic_vs_cyclictest as cvc  # noqa: E402  (shares the runner and the parser)

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benches" / "results"
SECTIONS = ("fidelity", "rss", "callgrind", "startup")
T_LINE = re.compile(r"^T:\s*\d+\s.*?C:\s*(\d+).*?Max:\s*(\d+)", re.M)


def run(cmd, timeout_s):
    """Runs `cmd` as a direct child; returns (stdout, cpu_s, wall_s, rss_kib)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        try:
            cvc.ptrace(cvc.PTRACE_SEIZE, proc.pid, 0, cvc.PTRACE_O_TRACEEXIT | cvc.PTRACE_O_EXITKILL)
            traced = True
        except OSError:
            traced = False
        rss = None
        deadline = t0 + timeout_s
        while True:
            wpid, status, ru = os.wait4(proc.pid, 0)
            if os.WIFSTOPPED(status):
                sig, event = os.WSTOPSIG(status), status >> 16
                deliver = 0
                if sig == 5 and event == cvc.PTRACE_EVENT_EXIT:
                    rss = cvc.read_status_kib(proc.pid, "VmHWM")
                elif event != cvc.PTRACE_EVENT_STOP:
                    deliver = sig
                if time.monotonic() > deadline:
                    os.kill(proc.pid, 9)
                try:
                    cvc.ptrace(cvc.PTRACE_CONT, proc.pid, 0, deliver)
                except OSError:
                    pass
                continue
            break
        wall = time.monotonic() - t0
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    if code != 0:
        raise RuntimeError(f"exit {code}: {shlex.join(cmd)}\n{stderr.strip()[:1500]}")
    return stdout, ru.ru_utime + ru.ru_stime, wall, rss if traced else None


def ratio(a, b):
    return a / b if a is not None and b else None


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def f(v, nd=3):
    return "n/a" if v is None else f"{v:.{nd}f}"


# --- fidelity ---------------------------------------------------------------------


def fidelity_run(tool_cmd, interval, threads, hist, duration):
    cpus = "0" if threads == 1 else f"0-{threads - 1}"
    cmd = tool_cmd + ["-m", "-p", "98", "-i", str(interval), "-t", str(threads), "-a", cpus,
                      "-q", "-D", str(duration)]
    if hist:
        cmd += ["-h", str(hist)]
    out, cpu, _, _ = run(cmd, duration + 60)
    if hist:
        # `-q -h`: the dump only (both tools); every thread's maximum on its
        # `# Max Latencies:` line.
        h = cvc.Histogram.parse(out, hist)
        m = re.search(r"^# Max Latenc(?:ies|ys):(.*)$", out, re.M)
        if not m:
            raise RuntimeError(f"no '# Max Latencies:' line: {shlex.join(cmd)}")
        cycles = h.cycles()
        r = {"cycles": cycles, "max_us": max(int(v) for v in m.group(1).split()),
             "p99_us": h.quantile_us(0.99), "p999_us": h.quantile_us(0.999)}
    else:
        tl = T_LINE.findall(out)
        if not tl:
            raise RuntimeError(f"no final T: lines: {shlex.join(cmd)}")
        cycles = sum(int(c) for c, _ in tl)
        r = {"cycles": cycles, "max_us": max(int(m) for _, m in tl)}
    r["cpu_ns_per_cycle"] = cpu * 1e9 / cycles if cycles else None
    return r


def fidelity(tools, args, log):
    configs = [(i, t, h) for i in (100, 50) for t in (1, 2) for h in (args.hist, 0)]
    if os.cpu_count() < 2:
        configs = [c for c in configs if c[1] == 1]
    results = []
    for interval, threads, hist in configs:
        pairs = []
        for p in range(args.pairs):
            order = ("rtbench", "cyclictest") if p % 2 == 0 else ("cyclictest", "rtbench")
            pair = {}
            for name in order:
                pair[name] = fidelity_run(tools[name], interval, threads, hist, args.duration)
                time.sleep(args.gap)
            pairs.append(pair)
        keys = ["p99_us", "p999_us", "max_us", "cpu_ns_per_cycle"] if hist else ["max_us", "cpu_ns_per_cycle"]
        summary = {}
        for k in keys:
            rs = [ratio(p["rtbench"][k], p["cyclictest"][k]) for p in pairs]
            rs = [x for x in rs if x is not None]
            summary[k] = {"median_ratio": med(rs), "min": min(rs, default=None), "max": max(rs, default=None),
                          "rtbench_median": med([p["rtbench"][k] for p in pairs]),
                          "cyclictest_median": med([p["cyclictest"][k] for p in pairs])}
        row = {"interval_us": interval, "threads": threads, "hist_us": hist or None, "pairs": pairs,
               "summary": summary}
        results.append(row)
        log(f"fidelity -i {interval} -t {threads} {'-h ' + str(hist) if hist else 'no -h'}: "
            + ", ".join(f"{k} {f(v['median_ratio'])} ({f(v['min'], 2)}..{f(v['max'], 2)})"
                        for k, v in summary.items()))
    return results


# --- rss --------------------------------------------------------------------------


def rss(tools, args, log):
    shapes = [(n, ["-m", "-p", "80", "-i", "10000", "-q", "-t", str(n), "-D", "2"]) for n in (1, 8, 64, 256)]
    shapes.append((1024, ["-m", "--policy", "other", "-i", "1000000", "-q", "-t", "1024", "-D", "3"]))
    out = []
    for n, flags in shapes:
        got = {"rtbench": [], "cyclictest": []}
        for r in range(args.rounds):
            order = ("rtbench", "cyclictest") if r % 2 == 0 else ("cyclictest", "rtbench")
            for name in order:
                try:
                    got[name].append(run(tools[name] + flags, 120)[3])
                except RuntimeError as e:
                    log(f"rss -t {n}: {name} failed: {str(e).splitlines()[0]}")
                    got[name].append(None)
        row = {"threads": n, "flags": shlex.join(flags), "rtbench_kib": med(got["rtbench"]),
               "cyclictest_kib": med(got["cyclictest"]), "runs": got}
        row["ratio"] = ratio(row["rtbench_kib"], row["cyclictest_kib"])
        out.append(row)
        log(f"rss -t {n}: rtbench {row['rtbench_kib']} KiB, cyclictest {row['cyclictest_kib']} KiB, "
            f"ratio {f(row['ratio'])}")
    one = {r["threads"]: r for r in out}
    per = {}
    for name in ("rtbench", "cyclictest"):
        a, b = one[1][f"{name}_kib"], one[256][f"{name}_kib"]
        per[name] = (b - a) / 255 if a and b else None
    log(f"rss per thread (1 -> 256): rtbench {f(per['rtbench'], 1)} KiB, cyclictest {f(per['cyclictest'], 1)} KiB")
    return {"shapes": out, "per_thread_kib": per}


# --- callgrind --------------------------------------------------------------------


def callgrind_total(cmd, extra=()):
    with tempfile.TemporaryDirectory() as d:
        outf = os.path.join(d, "cg.out")
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={outf}", *extra] + cmd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
        if p.returncode != 0:
            raise RuntimeError(f"valgrind exit {p.returncode}: {shlex.join(cmd)}\n{p.stderr[-1500:]}")
        parts = {}
        for name in os.listdir(d):
            with open(os.path.join(d, name)) as fh:
                for line in fh:
                    if line.startswith("summary:") or line.startswith("totals:"):
                        parts[name] = int(line.split()[1])
                        break
        return parts


def callgrind(tools, args, log):
    flags = ["-m", "-p", "80", "-i", "200", "-q", "-t", "1"]
    res = {}
    for name, base in tools.items():
        lo = sum(callgrind_total(base + flags + ["-l", "2000"]).values())
        hi = sum(callgrind_total(base + flags + ["-l", "12000"]).values())
        parts = callgrind_total(base + flags + ["-l", "100"], ["--dump-before=clock_nanosleep*"])
        # cg.out.1 is the first dump: everything before the first clock_nanosleep.
        first = [v for k, v in parts.items() if k.endswith(".1")]
        res[name] = {"ir_2000": lo, "ir_12000": hi, "per_cycle": (hi - lo) / 10000,
                     "startup": first[0] if first else None}
    res["ratio_per_cycle"] = ratio(res["rtbench"]["per_cycle"], res["cyclictest"]["per_cycle"])
    res["ratio_startup"] = ratio(res["rtbench"]["startup"], res["cyclictest"]["startup"])
    log(f"callgrind per cycle: rtbench {f(res['rtbench']['per_cycle'], 1)}, cyclictest "
        f"{f(res['cyclictest']['per_cycle'], 1)} instructions, ratio {f(res['ratio_per_cycle'])}")
    log(f"callgrind startup: rtbench {res['rtbench']['startup']}, cyclictest {res['cyclictest']['startup']} "
        f"instructions, ratio {f(res['ratio_startup'])}")
    return res


# --- startup ----------------------------------------------------------------------


def startup(tools, args, log):
    flags = ["-m", "-p", "80", "-i", "1000", "-q", "-t", "256", "-l", "1"]
    got = {"rtbench": [], "cyclictest": []}
    for r in range(args.rounds):
        order = ("rtbench", "cyclictest") if r % 2 == 0 else ("cyclictest", "rtbench")
        for name in order:
            got[name].append(run(tools[name] + flags, 120)[2])
    res = {"flags": shlex.join(flags), "rtbench_s": med(got["rtbench"]), "cyclictest_s": med(got["cyclictest"]),
           "runs": got}
    res["ratio"] = ratio(res["rtbench_s"], res["cyclictest_s"])
    log(f"startup -t 256 -l 1 wall: rtbench {f(res['rtbench_s'])} s, cyclictest {f(res['cyclictest_s'])} s, "
        f"ratio {f(res['ratio'])}")
    return res


# --- report -----------------------------------------------------------------------


def markdown(meta, res):
    L = [f"# rtbench cyclic vs cyclictest: cost and fidelity ({meta['date']})", "",
         f"Machine: {meta['machine']}; kernel {meta['kernel']}; {meta['cyclictest']}; rtbench {meta['rtbench']}.",
         f"Command: `{meta['command']}`; load average (1 min) {meta['load1']}.", ""]
    if "fidelity" in res:
        L += ["## Fidelity at high rates (median of per-pair ratios rtbench/cyclictest, min..max)", "",
              "| -i µs | threads | -h | pairs | p99 | p99.9 | max | CPU/cycle |", "|---:|---:|---|---:|---|---|---|---|"]
        for r in res["fidelity"]:
            s = r["summary"]

            def c(k):
                v = s.get(k)
                return f"{f(v['median_ratio'])} ({f(v['min'], 2)}..{f(v['max'], 2)})" if v else "—"
            L.append(f"| {r['interval_us']} | {r['threads']} | {'yes' if r['hist_us'] else 'no'} | {len(r['pairs'])} "
                     f"| {c('p99_us')} | {c('p999_us')} | {c('max_us')} | {c('cpu_ns_per_cycle')} |")
        L.append("")
    if "rss" in res:
        L += ["## Peak RSS (KiB, medians)", "", "| threads | flags | rtbench | cyclictest | ratio |",
              "|---:|---|---:|---:|---:|"]
        for r in res["rss"]["shapes"]:
            L.append(f"| {r['threads']} | `{r['flags']}` | {r['rtbench_kib']} | {r['cyclictest_kib']} | {f(r['ratio'])} |")
        p = res["rss"]["per_thread_kib"]
        L += ["", f"Per measuring thread (RSS(256) − RSS(1)) / 255: rtbench {f(p['rtbench'], 1)} KiB, "
              f"cyclictest {f(p['cyclictest'], 1)} KiB.", ""]
    if "callgrind" in res:
        c = res["callgrind"]
        L += ["## Instructions (callgrind, user space)", "", "| | rtbench | cyclictest | ratio |", "|---|---:|---:|---:|",
              f"| per cycle (`-i 200`, (12,000 − 2,000 loops) / 10,000) | {f(c['rtbench']['per_cycle'], 1)} | "
              f"{f(c['cyclictest']['per_cycle'], 1)} | {f(c['ratio_per_cycle'])} |",
              f"| startup (to the first clock_nanosleep) | {c['rtbench']['startup']} | {c['cyclictest']['startup']} | "
              f"{f(c['ratio_startup'])} |", ""]
    if "startup" in res:
        s = res["startup"]
        L += ["## Start-up wall time at 256 threads (`" + s["flags"] + "`, medians)", "",
              f"rtbench {f(s['rtbench_s'])} s, cyclictest {f(s['cyclictest_s'])} s, ratio {f(s['ratio'])}.", ""]
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rtbench", help="rtbench executable (default: cargo build --release)")
    ap.add_argument("--cyclictest", default="cyclictest")
    ap.add_argument("--only", default=",".join(SECTIONS), help="sections, comma-separated: " + ",".join(SECTIONS))
    ap.add_argument("-D", "--duration", type=int, default=5, help="seconds per fidelity run (default 5)")
    ap.add_argument("--pairs", type=int, default=10, help="ABBA pairs per fidelity configuration (default 10)")
    ap.add_argument("--hist", type=int, default=2000, help="-h buckets (µs) for the fidelity runs with -h")
    ap.add_argument("--rounds", type=int, default=3, help="rounds for rss and startup (default 3)")
    ap.add_argument("--gap", type=float, default=0.5, help="seconds between fidelity runs")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    only = [s for s in args.only.split(",") if s]
    bad = [s for s in only if s not in SECTIONS]
    if bad:
        ap.error(f"--only: unknown section {bad[0]!r} (expected some of {', '.join(SECTIONS)})")
    rt = args.rtbench or cvc.build_rtbench()
    tools = {"rtbench": [str(rt), "cyclic"], "cyclictest": [args.cyclictest]}

    def log(s):
        print(s, flush=True)

    res = {}
    load_before = os.getloadavg()[0]
    try:
        for s in only:
            res[s] = globals()[s](tools, args, log)
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    ver = subprocess.run([str(rt), "--version"], capture_output=True, text=True).stdout.strip()
    ct = subprocess.run([args.cyclictest, "--help"], capture_output=True, text=True)
    ctv = next((l for l in (ct.stdout + ct.stderr).splitlines() if "cyclictest" in l and "V" in l), "cyclictest")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{os.cpu_count()} CPUs, {cpu}", "kernel": platform.release(), "cyclictest": ctv.strip(),
            "rtbench": ver, "command": shlex.join(["benches/cost_vs_cyclictest.py"] + sys.argv[1:]),
            "load1": f"{load_before:.1f} -> {os.getloadavg()[0]:.1f}"}
    md = markdown(meta, res)
    print()
    print(md)
    if not args.no_write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "cost_vs_cyclictest.md").write_text(md + "\n")
        (RESULTS / "cost_vs_cyclictest.json").write_text(json.dumps({"meta": meta, "results": res}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

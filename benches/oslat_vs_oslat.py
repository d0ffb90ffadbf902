#!/usr/bin/env python3
"""rtbench oslat against rt-tests' oslat: the same CPU, bucket width and duration.

pairs     Interleaved runs (oslat, rtbench, rtbench, oslat, ... ABBA, so drift on a
          shared machine hits both alike): per run the maximum, p99.99 and minimum read
          from the --json of each (oslat's 1-us buckets for both: the p99.99 is the upper
          edge of the bucket holding it, computed the same way for both), rtbench's own
          p99.99 and minimum in ns beside; medians over the runs and the median of the
          per-pair ratios rtbench/oslat.
callgrind User-space instructions per loop iteration (valgrind --tool=callgrind): two runs
          of each, -D 1 and -D 4, (Ir(4) - Ir(1)) / (gaps(4) - gaps(1)); the pre-heat (1 s)
          is in both and cancels, to within its own iteration count's scatter.

Needs root (mlockall, -f), python3, oslat (Debian: rt-tests), valgrind. Writes
benches/results/oslat_vs_oslat.{md,json} unless --no-write.

    sudo benches/oslat_vs_oslat.py --rtbench target/release/rtbench --pairs 10 -D 5
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run_json(cmd):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "out.json")
        p = subprocess.run(cmd + ["--json", path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=900)
        if p.returncode != 0:
            raise RuntimeError(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stderr[-1500:]}")
        with open(path) as fh:
            return json.load(fh)


def quantile_from_buckets(hist, q):
    """The upper edge (us) of the bucket holding quantile q of {label_us: count}."""
    items = sorted((float(k), v) for k, v in hist.items())
    total = sum(v for _, v in items)
    need = q * total
    seen = 0
    for label, v in items:
        seen += v
        if seen >= need:
            return label
    return items[-1][0] if items else 0.0


def figures(doc):
    t = doc["thread"]["0"]
    out = {"max_us": t["max"], "min_us": t["min"],
           "p9999_us": quantile_from_buckets(t["histogram"], 0.9999),
           "gaps": sum(t["histogram"].values())}
    rb = doc.get("rtbench")
    if rb:
        th = rb["threads"][0]
        out.update({"rtbench_min_ns": th["min_ns"], "rtbench_p9999_ns": th["p9999_ns"],
                    "rtbench_max_ns": th["max_ns"]})
    return out


def ratio(a, b):
    return a / b if b else None


def pairs(tools, common, n, log):
    runs = {"oslat": [], "rtbench": []}
    order = ["oslat", "rtbench"]
    for i in range(n):
        seq = order if i % 2 == 0 else order[::-1]
        for name in seq:
            runs[name].append(figures(run_json(tools[name] + common)))
        o, r = runs["oslat"][-1], runs["rtbench"][-1]
        log(f"pair {i + 1}: max oslat {o['max_us']} rtbench {r['max_us']} us; "
            f"p99.99 {o['p9999_us']} / {r['p9999_us']} us; gaps {o['gaps']} / {r['gaps']}")
    res = {}
    for key in ("max_us", "p9999_us", "min_us", "gaps"):
        med = {k: statistics.median(x[key] for x in v) for k, v in runs.items()}
        per_pair = [ratio(r[key], o[key]) for o, r in zip(runs["oslat"], runs["rtbench"])]
        per_pair = [x for x in per_pair if x is not None]
        res[key] = {"median_oslat": med["oslat"], "median_rtbench": med["rtbench"],
                    "median_ratio": statistics.median(per_pair) if per_pair else None,
                    "ratio_min": min(per_pair, default=None), "ratio_max": max(per_pair, default=None)}
    for key in ("rtbench_min_ns", "rtbench_p9999_ns", "rtbench_max_ns"):
        res[key] = statistics.median(x[key] for x in runs["rtbench"])
    res["runs"] = runs
    return res


def callgrind_ir(cmd):
    with tempfile.TemporaryDirectory() as d:
        outf = os.path.join(d, "cg.out")
        js = os.path.join(d, "out.json")
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={outf}"] + cmd
                           + ["--json", js], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, timeout=900)
        if p.returncode != 0:
            raise RuntimeError(f"valgrind exit {p.returncode}: {' '.join(cmd)}\n{p.stderr[-1500:]}")
        ir = 0
        for name in os.listdir(d):
            if name.startswith("cg.out"):
                with open(os.path.join(d, name)) as fh:
                    for line in fh:
                        if line.startswith(("summary:", "totals:")):
                            ir += int(line.split()[1])
                            break
        with open(js) as fh:
            gaps = sum(json.load(fh)["thread"]["0"]["histogram"].values())
        return ir, gaps


def callgrind(tools, cpu, log):
    res = {}
    for name, base in tools.items():
        ir1, g1 = callgrind_ir(base + ["-c", cpu, "-q", "-D", "1"])
        ir4, g4 = callgrind_ir(base + ["-c", cpu, "-q", "-D", "4"])
        res[name] = {"ir_1": ir1, "gaps_1": g1, "ir_4": ir4, "gaps_4": g4,
                     "per_iteration": (ir4 - ir1) / (g4 - g1) if g4 > g1 else None}
        log(f"callgrind {name}: {res[name]['per_iteration']:.1f} instructions per iteration")
    res["ratio"] = ratio(res["rtbench"]["per_iteration"], res["oslat"]["per_iteration"])
    return res


def markdown(meta, res):
    L = ["# rtbench oslat against rt-tests oslat", "",
         f"{meta['machine']}, kernel {meta['kernel']}, {meta['oslat']}; CPU {meta['cpu']}, "
         f"-D {meta['duration']}, 1-us buckets, {meta['pairs']} interleaved pairs (ABBA).", ""]
    if "pairs" in res:
        p = res["pairs"]
        L += ["| figure | oslat (median) | rtbench (median) | ratio rtbench/oslat (median, min..max) |",
              "|---|---:|---:|---:|"]
        for key, label in (("max_us", "max (us)"), ("p9999_us", "p99.99 (us, 1-us buckets)"),
                           ("min_us", "min (us, oslat's started us)"), ("gaps", "gaps per run")):
            x = p[key]
            fr = lambda v: "-" if v is None else f"{v:.3f}"
            L.append(f"| {label} | {x['median_oslat']} | {x['median_rtbench']} | "
                     f"{fr(x['median_ratio'])} ({fr(x['ratio_min'])}..{fr(x['ratio_max'])}) |")
        L += ["", f"rtbench's own figures (median): min {p['rtbench_min_ns']} ns (the loop's cost), "
              f"p99.99 {p['rtbench_p9999_ns']} ns, max {p['rtbench_max_ns']} ns.", ""]
    if "callgrind" in res:
        c = res["callgrind"]
        L += ["## Instructions per loop iteration (callgrind, user space)", "",
              "| | rtbench | oslat | ratio |", "|---|---:|---:|---:|",
              f"| per iteration | {c['rtbench']['per_iteration']:.1f} | {c['oslat']['per_iteration']:.1f} | "
              f"{c['ratio']:.3f} |", ""]
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rtbench", default=os.environ.get("RTBENCH", "target/release/rtbench"))
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("-D", "--duration", default="5")
    ap.add_argument("--cpu", help="CPU to poll (default: the last allowed)")
    ap.add_argument("--only", default="pairs,callgrind")
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    cpu = a.cpu or str(max(os.sched_getaffinity(0)))
    main_cpu = str(min(os.sched_getaffinity(0)))
    tools = {"oslat": ["oslat"], "rtbench": [a.rtbench, "oslat"]}
    common = ["-c", cpu, "-C", main_cpu, "-D", a.duration, "-q"]
    log = lambda s: print(s, file=sys.stderr, flush=True)
    res = {}
    only = a.only.split(",")
    if "pairs" in only:
        res["pairs"] = pairs(tools, common, a.pairs, log)
    if "callgrind" in only:
        res["callgrind"] = callgrind(tools, cpu, log)
    ver = subprocess.run(["oslat", "-v"], capture_output=True, text=True).stdout.strip()
    cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                      if l.startswith("model name")), "?")
    meta = {"machine": f"{os.cpu_count()} CPUs, {cpu_model}", "kernel": os.uname().release,
            "oslat": ver, "cpu": cpu, "duration": a.duration, "pairs": a.pairs}
    md = markdown(meta, res)
    print(md)
    if not a.no_write:
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
        with open(os.path.join(here, "oslat_vs_oslat.json"), "w") as fh:
            json.dump({"meta": meta, **res}, fh, indent=1)
        with open(os.path.join(here, "oslat_vs_oslat.md"), "w") as fh:
            fh.write(md)


if __name__ == "__main__":
    main()

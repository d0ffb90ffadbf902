#!/usr/bin/env python3
"""A/B of two rtbench builds' `cyclic` measurement, e.g. before and after a refactor
of the measuring code, with cyclictest in the same interleaved rounds as the anchor.

Each round runs A, B and cyclictest with identical flags
(`-m -S -p 98 -i INTERVAL -h HIST -q -D DURATION`); the order rotates round by round
(A B C, B C A, C A B, ...) so drift on a shared machine falls on all three. Figures per
run come from `cyclic_vs_cyclictest.py` (same estimators: p50/p99 from the `-h` dump,
linear inside the 1 µs bucket; avg at bucket midpoints; CPU user+sys per cycle from
`wait4`; peak RSS `VmHWM` at exit). It prints medians per build and the B/A ratios of
the medians and the median of the per-round B/A ratios. A benchmark, not a test: it
exits 0 whatever the figures; 1 when a tool could not run.

Needs root and cyclictest (Debian: rt-tests).

    sudo benches/ab_rtbench_builds.py OLD/rtbench NEW/rtbench -D 8 --rounds 6
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cyclic_vs_cyclictest as bench  # noqa: E402

KEYS = ["p50_us", "p99_us", "avg_us", "cpu_ns_per_cycle", "rss_kib", "cycles"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", help="rtbench build A (baseline)")
    ap.add_argument("b", help="rtbench build B (candidate)")
    ap.add_argument("--cyclictest", default="/usr/bin/cyclictest")
    ap.add_argument("-D", "--duration", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--intervals", default="1000,200")
    ap.add_argument("--hist", type=int, default=20000)
    ap.add_argument("--gap", type=float, default=1.0)
    args = ap.parse_args()
    tools = {
        "A": [args.a, "cyclic"],
        "B": [args.b, "cyclic"],
        "cyclictest": [args.cyclictest],
    }
    names = list(tools)
    for interval in [int(x) for x in args.intervals.split(",")]:
        flags = ["-m", "-S", "-p", "98", "-i", str(interval), "-h", str(args.hist), "-q",
                 "-D", str(args.duration)]
        runs = {n: [] for n in names}
        for r in range(args.rounds):
            order = names[r % 3:] + names[:r % 3]
            for n in order:
                time.sleep(args.gap)
                try:
                    res = bench.run_tool(n, tools[n] + flags, args.hist, args.duration + 60)
                except RuntimeError as e:
                    print(f"error: {e}", file=sys.stderr)
                    return 1
                runs[n].append(res)
                print(f"-i {interval} round {r + 1} {n:10s} p50={res.p50_us:.2f} "
                      f"avg={res.avg_us:.2f} cpu={res.cpu_ns_per_cycle:.0f}ns/cycle "
                      f"rss={bench.fmt(res.rss_kib)}KiB load1={res.load1:.2f}", file=sys.stderr)
        print(f"\n-i {interval}: medians over {args.rounds} rounds")
        print(f"{'':12s}" + "".join(f"{k:>18s}" for k in KEYS))
        med = {n: {k: bench.median([getattr(x, k) for x in runs[n]]) for k in KEYS} for n in names}
        for n in names:
            print(f"{n:12s}" + "".join(f"{bench.fmt(med[n][k], 2):>18s}" for k in KEYS))
        print(f"{'B/A medians':12s}" + "".join(
            f"{bench.fmt(bench.ratio(med['B'][k], med['A'][k]), 3):>18s}" for k in KEYS))
        per_round = {
            k: statistics.median(
                [getattr(b, k) / getattr(a, k) for a, b in zip(runs["A"], runs["B"])
                 if getattr(a, k) and getattr(b, k) is not None])
            for k in KEYS
        }
        print(f"{'B/A per-rnd':12s}" + "".join(f"{per_round[k]:>18.3f}" for k in KEYS))
        print(f"{'B/cyclictest':12s}" + "".join(
            f"{bench.fmt(bench.ratio(med['B'][k], med['cyclictest'][k]), 3):>18s}" for k in KEYS))
        print(f"{'A/cyclictest':12s}" + "".join(
            f"{bench.fmt(bench.ratio(med['A'][k], med['cyclictest'][k]), 3):>18s}" for k in KEYS))
    return 0


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("warning: not root; SCHED_FIFO 98 and mlockall will probably be refused",
              file=sys.stderr)
    sys.exit(main())

#!/bin/sh
# pipe vs `perf bench sched pipe`: mean time per task switch, PAIRS interleaved runs of
# each, in three set-ups (both ends pinned to CPU $CPU):
#   processes, SCHED_OTHER:   taskset -c CPU perf bench sched pipe -l N
#                             rtbench pipe --fork -a CPU -p 0 -l N
#   threads, SCHED_OTHER:     taskset -c CPU perf bench sched pipe -T -l N
#                             rtbench pipe -a CPU -p 0 -l N
#   processes, SCHED_FIFO 98: chrt -f 98 taskset -c CPU perf bench sched pipe -l N
#                             rtbench pipe --fork -a CPU -p 98 -l N
# perf's switch time = usecs/op / 2 (one op = one round trip = two switches); rtbench's
# = total round-trip time / (2 x round trips).
#
#   benches/pipe_vs_perf.sh [PAIRS] [LOOPS] [CPU]     defaults: 5 100000 1
set -eu
PAIRS=${1:-5}
LOOPS=${2:-100000}
CPU=${3:-1}
cd "$(dirname "$0")/.."
RTBENCH=${RTBENCH:-target/release/rtbench}
[ -x "$RTBENCH" ] || cargo build --release --quiet
command -v perf > /dev/null || { echo "perf is not installed (Debian: linux-perf)"; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

perf_switch_us() { # usecs/op / 2
    "$@" 2>&1 | awk '/usecs\/op/ {printf "%.4f\n", $1 / 2}'
}
ours_switch_us() {
    "$@" --json "$TMP/p.json" > /dev/null
    python3 -c 'import json,sys; print("%.4f" % (json.load(open(sys.argv[1]))["rtbench"]["pairs"][0]["switch_mean_ns"] / 1000))' "$TMP/p.json"
}

echo "# $PAIRS interleaved pairs, $LOOPS round trips each, CPU $CPU; $(perf version)"
for setup in "processes-other" "threads-other" "processes-fifo98"; do
    case $setup in
        processes-other) P="taskset -c $CPU perf bench sched pipe -l $LOOPS"; R="$RTBENCH pipe --fork -a $CPU -p 0 -l $LOOPS -q" ;;
        threads-other) P="taskset -c $CPU perf bench sched pipe -T -l $LOOPS"; R="$RTBENCH pipe -a $CPU -p 0 -l $LOOPS -q" ;;
        processes-fifo98) P="chrt -f 98 taskset -c $CPU perf bench sched pipe -l $LOOPS"; R="$RTBENCH pipe --fork -a $CPU -p 98 -l $LOOPS -q" ;;
    esac
    : > "$TMP/r"
    i=1
    while [ "$i" -le "$PAIRS" ]; do
        # shellcheck disable=SC2086
        a=$(perf_switch_us $P)
        # shellcheck disable=SC2086
        b=$(ours_switch_us $R)
        echo "$a $b" >> "$TMP/r"
        i=$((i + 1))
    done
    python3 - "$TMP/r" "$setup" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
p = statistics.median(r[0] for r in rows)
o = statistics.median(r[1] for r in rows)
ratio = statistics.median(r[1] / r[0] for r in rows)
print(f"{sys.argv[2]:17s} perf {p:7.3f} us/switch  rtbench {o:7.3f} us/switch  median ratio {ratio:.3f}  "
      f"(runs: {', '.join(f'{a:.3f}/{b:.3f}' for a, b in rows)})")
PY
done

#!/bin/sh
# pmq vs pmqtest: the same flags, PAIRS interleaved runs of each, median ratio of the
# average latency (rtbench / pmqtest; target <= 1.05).
#
#   benches/pmq_vs_pmqtest.sh [PAIRS] [-- PMQTEST FLAGS]
#   default flags: -S -p 80 -i 500 -l 3000 -q
# Needs root (SCHED_FIFO), rt-tests' pmqtest and python3; RTBENCH=path overrides the
# binary (default: target/release/rtbench, built if missing).
set -eu
PAIRS=${1:-5}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
if [ $# -gt 0 ]; then FLAGS="$*"; else FLAGS="-S -p 80 -i 500 -l 3000 -q"; fi
cd "$(dirname "$0")/.."
RTBENCH=${RTBENCH:-target/release/rtbench}
[ -x "$RTBENCH" ] || cargo build --release --quiet
PMQTEST=${PMQTEST:-$(command -v pmqtest)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

avg() { # mean of thread.*.receiver.avg (µs) in a file_version 1 JSON
    python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["thread"]; print(sum(v["receiver"]["avg"] for v in t.values())/len(t))' "$1"
}

echo "# flags: $FLAGS; $PAIRS interleaved pairs; $($PMQTEST --help 2>&1 | head -1 || true); rtbench $($RTBENCH --version | cut -d' ' -f2)"
echo "# pair  pmqtest_avg_us  rtbench_avg_us  ratio"
i=1
: > "$TMP/ratios"
while [ "$i" -le "$PAIRS" ]; do
    # shellcheck disable=SC2086
    "$PMQTEST" $FLAGS --json="$TMP/ref.json" > /dev/null
    # shellcheck disable=SC2086
    "$RTBENCH" pmq $FLAGS --json "$TMP/ours.json" > /dev/null
    a=$(avg "$TMP/ref.json"); b=$(avg "$TMP/ours.json")
    r=$(python3 -c "print(f'{$b/$a:.3f}')")
    echo "$r" >> "$TMP/ratios"
    printf '%5d  %14.2f  %14.2f  %s\n' "$i" "$a" "$b" "$r"
    i=$((i + 1))
done
python3 - "$TMP/ratios" <<'PY'
import statistics, sys
r = [float(x) for x in open(sys.argv[1])]
m = statistics.median(r)
print(f"# median ratio rtbench/pmqtest (average latency): {m:.3f} (target <= 1.05: {'met' if m <= 1.05 else 'NOT met'})")
PY

#!/bin/sh
# Wall time of `rtbench tune check` with every item configured (target: < 50 ms).
# Usage: benches/tune_check.sh [RUNS]   (default 50; uses hyperfine when installed)
# Prints the median in ms. Exit status of `check` is ignored (deviations are expected
# on a machine that is not tuned).
set -eu
runs=${1:-50}
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=$PWD/target/release/rtbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Isolate the last online CPU (never the boot CPU 0).
last=$(sed 's/.*[-,]//' /sys/devices/system/cpu/online)
[ "$last" -gt 0 ] || { echo "needs 2 or more CPUs" >&2; exit 3; }
cat >"$tmp/rtbench.toml" <<EOF
[tuning]
isolated = "$last"
require_preempt_rt = true
journal_dir = "$tmp/run"
[tuning.boot]
isolcpus = ["domain", "managed_irq"]
nohz_full = true
rcu_nocbs = true
irqaffinity = true
[tuning.irq]
affinity = true
default_affinity = true
irqbalance = "warn"
[tuning.sysctl]
printk = 1
overcommit_memory = 2
overcommit_ratio = 80
timer_migration = 0
stat_interval = 10
[tuning.power]
governor = "performance"
cpuidle_max_latency_us = 0
[tuning.memory]
thp = "never"
[tuning.workqueue]
cpumask = true
EOF
cmd="$bin tune check --config $tmp/rtbench.toml"
echo "items checked: $($cmd | grep -c '^  ')"
if command -v hyperfine >/dev/null 2>&1; then
    hyperfine --style basic -N -i --warmup 5 --runs "$runs" \
        --export-json "$tmp/h.json" "$cmd" >&2
    python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print('median: %.2f ms (min %.2f, max %.2f, %d runs)' % (r['median']*1e3, r['min']*1e3, r['max']*1e3, len(r['times'])))" "$tmp/h.json"
else
    i=0
    : >"$tmp/t"
    while [ $i -lt "$runs" ]; do
        a=$(date +%s%N); $cmd >/dev/null || true; b=$(date +%s%N)
        echo $(( (b - a) / 1000 )) >>"$tmp/t"; i=$((i + 1))
    done
    sort -n "$tmp/t" | awk '{v[NR]=$1} END {printf "median: %.2f ms (%d runs)\n", v[int((NR+1)/2)]/1000, NR}'
fi

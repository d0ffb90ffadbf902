#!/usr/bin/env bash
# rtbench's BusyBox-init boot test: the path of a Buildroot image with BR2_INIT_BUSYBOX, booted
# for real. A guest without systemd or journald (an initramfs with BusyBox init, syslogd, glibc
# and rtbench) runs the real buildroot-package/package/rtbench/S95rtbench from rcS at boot, with
# Debian's PREEMPT_RT kernel (the x86 boot test's image, tests/vm/build-image.sh) and
# `isolcpus=1 nohz_full=1 rcu_nocbs=1 irqaffinity=0`. Asserted: the guest has no systemd; the
# self-test ran at boot and its key=value lines reached syslog (READY, a per-CPU line for every
# online CPU including the isolated one, the summary), the script logged the verdict "pass" to
# syslog, `S95rtbench status` reports it, and the results were stored (the results file and
# `rtbench report --json` say pass). No assertion looks at a latency value (TCG emulation).
#
#   tests/vm/busybox-boot-test.sh [BIN] [--config PATH] [--timeout S]
#     BIN       rtbench x86_64 binary (default target/release/rtbench)
#     --config  rtbench.toml of the guest (default tests/vm/pass.toml)
#     --timeout whole boot, default 600 s
# Run as root (the kernel comes from the image cache, which build-image.sh makes as root).
# One PASS/FAIL line per assertion; exit 0 all passed, 1 an assertion failed, 2 could not run.
# Needs qemu-system-x86, cpio, jq, busybox (the host's, dynamically linked: its libraries and
# rtbench's are copied into the initramfs). Cost: ~1 min (no disk image, kernel + 10 s test).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/target/release/rtbench config=$here/pass.toml timeout=600
while [ $# -gt 0 ]; do
  case $1 in
    --config) config=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "busybox-boot-test.sh: unknown option '$1'" >&2; exit 2 ;;
    *) bin=$1; shift ;;
  esac
done
for f in "$bin" "$config"; do
  [ -f "$f" ] || { echo "busybox-boot-test.sh: $f: no such file" >&2; exit 2; }
done
missing=()
for tool in qemu-system-x86_64:qemu-system-x86 cpio:cpio jq:jq busybox:busybox; do
  command -v "${tool%%:*}" > /dev/null || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}" >&2
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    --no-install-recommends "${missing[@]}" > /dev/null
fi
image=$("$here/build-image.sh") || { echo "FAIL: building the guest image (for its kernel)"; exit 2; }

cache=${RTBENCH_VM_DIR:-/var/tmp/rtbench-vm}
run=$cache/busybox-runs/$(date -u +%Y%m%dT%H%M%SZ)-$$
mkdir -p "$run"
{ ls -1d "$cache"/busybox-runs/*/ 2> /dev/null || true; } | sort | head -n -5 | xargs -r rm -rf
root=$run/root

# ---- the initramfs: BusyBox (init, sh, syslogd, logger, ...), rtbench, the real init script ----
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,etc/init.d,etc/rtbench,etc/rtbench-vm,usr/bin,usr/libexec/rtbench-vm,var/lib,var/log,var/run}
# pass.toml's Prometheus textfile goes where node_exporter's textfile collector reads (no
# exporter in this guest: the file is only written)
mkdir -p "$root/var/lib/prometheus/node-exporter"
cp /bin/busybox "$root/bin/busybox"
for applet in $(busybox --list); do
  [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
ln -s ../bin/busybox "$root/sbin/init"
install -m 0755 "$bin" "$root/usr/bin/rtbench"
# glibc and the rest of what the two dynamic executables load, at the host's paths
for lib in $(ldd /bin/busybox "$bin" | grep -oE '/[^ ]+\.so[^ ]*' | sort -u); do
  cp --parents -L "$lib" "$root"
done
install -m 0755 "$repo/buildroot-package/package/rtbench/S95rtbench" "$root/etc/init.d/S95rtbench"
install -m 0755 "$here/busybox/S01syslogd" "$root/etc/init.d/S01syslogd"
install -m 0755 "$here/busybox/rcS" "$root/etc/init.d/rcS"
install -m 0644 "$here/busybox/inittab" "$root/etc/inittab"
install -m 0755 "$here/busybox/collect" "$root/usr/libexec/rtbench-vm/collect"
install -m 0644 "$config" "$root/etc/rtbench/rtbench.toml"
echo "WAIT_S=$((timeout - 60))" > "$root/etc/rtbench-vm/env"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$run/initramfs.cpio.gz"
rm -rf "$root"

# ---- boot ---------------------------------------------------------------------------------
isolation=${RTBENCH_VM_CMDLINE:-isolcpus=1 nohz_full=1 rcu_nocbs=1 irqaffinity=0}
cmdline="console=ttyS0,115200 rdinit=/sbin/init panic=-1 $isolation"
echo "--- BusyBox-init boot: $(basename "$config"), kernel $(sed -n 's/^kernel //p' "$image/manifest.txt") (qemu TCG)"
t0=$SECONDS
# shellcheck disable=SC2054  # the commas are qemu's
timeout "$timeout" qemu-system-x86_64 -accel tcg,thread=multi,tb-size=512 -cpu max -smp 2 -m 1G \
  -nodefaults -no-user-config -display none -no-reboot \
  -kernel "$image/vmlinuz" -initrd "$run/initramfs.cpio.gz" -append "$cmdline" \
  -serial "file:$run/console.log" -serial "file:$run/archive.txt" > "$run/qemu.log" 2>&1 || true
echo "qemu ran $((SECONDS - t0)) s; run directory $run"

sum=$(tr -d '\r' < "$run/archive.txt" 2> /dev/null | sed -n 's/^==== rtbench-busybox archive end sha256=\([0-9a-f]*\) ====$/\1/p')
awk '/^==== rtbench-busybox archive end/ { on = 0 } on; /^==== rtbench-busybox archive begin ====/ { on = 1 }' \
  "$run/archive.txt" 2> /dev/null | tr -d '\r' | base64 -d > "$run/archive.tar" 2> /dev/null || true
if [ -z "$sum" ] || [ "$(sha256sum < "$run/archive.tar" | cut -d' ' -f1)" != "$sum" ]; then
  echo "FAIL: the guest sent no complete results archive; last console lines:"
  tail -n 30 "$run/console.log" | sed 's/^/  | /'
  exit 1
fi
tar -C "$run" -xf "$run/archive.tar" && rm -f "$run/archive.tar" "$run/archive.txt"

# ---- assertions ---------------------------------------------------------------------------
failures=0 total=0
check() {  # check NAME DETAIL-ON-FAILURE COMMAND...
  local name=$1 detail=$2; shift 2
  total=$((total + 1))
  if "$@" > /dev/null 2>&1; then echo "PASS $name"; else
    failures=$((failures + 1)); echo "FAIL $name: $(tr '\n' ' ' <<< "$detail")"; fi
}
fact() { sed -n "s/^$1=//p" "$run/guest.txt"; }
# rtbench's key=value lines in syslog: "... daemon.info rtbench: MESSAGE_ID=<id> KEY=VALUE ..."
lines() { grep -E "rtbench: MESSAGE_ID=$1( |$)" "$run/messages" || true; }
line_no() { grep -nE "rtbench: MESSAGE_ID=$1( |$)" "$run/messages" | head -n1 | cut -d: -f1; }
ID_SUMMARY=7b1dd0eea94d4cc4bd8f9e6c91b6465d ID_CPU=b338a16c561342608e6e5ef41b0a0813
ID_READY=6a9954f26ad8443b8423171c8abd3682

check "guest runs BusyBox init without systemd" "pid1=$(fact pid1) systemd=$(fact systemd)" \
  test "$(fact pid1)" = /bin/busybox -a "$(fact systemd)" = no
check "guest runs the PREEMPT_RT kernel with CPU 1 isolated" \
  "realtime=$(fact realtime) isolated=$(fact isolated)" test "$(fact realtime)" = 1 -a "$(fact isolated)" = 1
check "the self-test finished at boot (S95rtbench's status file)" "$(cat "$run/wait-timeout" 2> /dev/null)" \
  test ! -e "$run/wait-timeout"
check "syslog: S95rtbench logged 'self-test verdict: pass (exit 0)'" \
  "rtbench lines: $(grep -c ' rtbench: ' "$run/messages" 2> /dev/null); verdict lines: $(grep 'verdict' "$run/messages" 2> /dev/null)" \
  grep -q 'rtbench: self-test verdict: pass (exit 0)$' "$run/messages"
check "syslog: the summary line (MESSAGE_ID=$ID_SUMMARY) with RTBENCH_VERDICT=pass" \
  "$(lines $ID_SUMMARY | cut -c1-300)" bash -c "grep -qE 'rtbench: MESSAGE_ID=$ID_SUMMARY .*RTBENCH_VERDICT=pass( |$)' '$run/messages'"
cpus=()
for part in $(fact online | tr ',' ' '); do  # "0-1,3" -> 0 1 3
  if [[ $part == *-* ]]; then mapfile -t -O "${#cpus[@]}" cpus < <(seq "${part%-*}" "${part#*-}"); else cpus+=("$part"); fi
done
for cpu in "${cpus[@]}"; do
  check "syslog: per-CPU line (MESSAGE_ID=$ID_CPU) for CPU $cpu with RTBENCH_TEST=cyclic and integer RTBENCH_MAX_NS, RTBENCH_P99_NS, RTBENCH_P999_NS" \
    "$(lines $ID_CPU | cut -c1-400)" \
    bash -c "grep -E 'rtbench: MESSAGE_ID=$ID_CPU .*RTBENCH_TEST=cyclic RTBENCH_CPU=$cpu ' '$run/messages' |
             grep -E ' RTBENCH_MAX_NS=[0-9]+ ' | grep -E ' RTBENCH_P99_NS=[0-9]+ ' | grep -qE ' RTBENCH_P999_NS=[0-9]+ '"
done
ready=$(line_no $ID_READY) summary=$(line_no $ID_SUMMARY)
check "syslog: READY (MESSAGE_ID=$ID_READY) before the summary" "READY at line ${ready:-none}, summary at line ${summary:-none}" \
  test -n "$ready" -a -n "$summary" -a "${ready:-0}" -lt "${summary:-0}"
check "S95rtbench status: not running, last verdict pass (exit 0), LSB status 3" \
  "exit $(cat "$run/status.rc"): $(cat "$run/status.txt")" \
  bash -c "grep -q 'last verdict: pass (exit 0)' '$run/status.txt' && test \"\$(cat '$run/status.rc')\" = 3"
check "results stored: the newest /var/lib/rtbench/*.json has verdict pass" "ls: $(tr '\n' ' ' < "$run/ls.txt")" \
  jq -e '.verdict.pass == true' "$run/results.json"
check "rtbench report --json in the guest: verdict pass" \
  "exit $(cat "$run/report.rc"): $(head -c 300 "$run/report.err")" jq -e '.verdict.pass == true' "$run/report.json"
want=$(sed -n 's/^printk *= *\([0-9]*\).*/\1/p' "$config")
[ -n "$want" ] && check "the self-test applied its tuning: console loglevel $want" "printk: $(cat "$run/printk")" \
  test "$(cut -f1 "$run/printk")" = "$want"

echo "--- $((total - failures)) of $total assertions passed ($SECONDS s)"
[ "$failures" = 0 ]

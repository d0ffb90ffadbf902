#!/usr/bin/env bash
# Boot the boot-test guest once with rtbench installed, and collect what rtbench.service did.
#
#   tests/vm/boot.sh --bin PATH --unit PATH --config PATH [--catalog PATH]
#                    [--append "ARGS"] [--timeout S] [--out DIR] [--keep-disk]
#
#   --bin PATH      rtbench executable, installed as /usr/bin/rtbench (0755)
#   --unit PATH     systemd unit, installed as /etc/systemd/system/rtbench.service whatever
#                   the file is called, and enabled through its [Install] WantedBy=/RequiredBy=
#                   (as `systemctl enable` would); a unit without them is an error
#   --config PATH   installed as /etc/rtbench/rtbench.toml
#   --catalog PATH  journal message catalog, installed as /usr/lib/systemd/catalog/rtbench.catalog
#   --append ARGS   more kernel command line (after the isolation arguments)
#   --culprit       also install and start tests/vm/culprit/ (vendord: periodic SCHED_FIFO
#                   99 bursts on CPU 1 once rtbench.service is READY), for the explain boot
#   --monitor PATH  also install PATH as /etc/systemd/system/rtbench-monitor.service (not
#                   enabled); the collector starts it after rtbench.service has finished, runs
#                   vendord-burn bursts beside it and stops it (monitor.json, monitor-*.txt)
#   --ptest PATH    also install PATH as /usr/lib/rtbench/ptest/run-ptest (rtbench-ptest's
#                   script, meta-rtbench/recipes-rt/rtbench/files/run-ptest); the collector
#                   runs it after rtbench.service has finished (ptest.txt, ptest.rc)
#   --timeout S     host-side limit for the whole boot (default 600); the guest waits for the
#                   unit up to S - 60 s, then collects anyway
#   --out DIR       run directory (default $RTBENCH_VM_DIR/runs/<UTC time>-<pid>); must be
#                   empty or an earlier run directory, whose contents are replaced
#   --keep-disk     keep the guest disk (run dir/disk.raw, ~700 MB) for offline reading
#
# stdout: the run directory, nothing else. stderr: progress and the unit's final state.
# Exit: 0 the results were collected (whatever the unit's verdict), 1 usage or no results,
# 124 timeout. The run directory then holds (from the guest, see guest/collect):
#   unit.json     journalctl -b -o json -u rtbench.service
#   systemd.json  journalctl -b -o json _PID=1 UNIT=rtbench.service (systemd's messages)
#   show.txt      systemctl show rtbench.service (Result, ExecMainStatus, ActiveState, ...)
#   printk, printk.before   /proc/sys/kernel/printk after rtbench, and before it started
#   guest.txt     kernel, /sys/kernel/realtime, online/isolated CPUs, /proc/cmdline
#   ls.txt, results.json, results.path   /var/lib/rtbench and its newest *.json
#   report.json, report.rc, report.err, report.txt   rtbench report [--json]
#   catalog-*.txt, unit-x.txt   with --catalog: journalctl --update-catalog/--list-catalog/-x
#   status.txt, unit.txt, boot.txt, full.log   for people: status, journal text, boot time
# and from the host: console.log (ttyS0), serial-full.log (ttyS2), qemu.log, time.txt.
#
# Environment: RTBENCH_VM_ARCH (x86_64 or aarch64: the guest, and the architecture --bin must
# be built for; default x86_64), RTBENCH_VM_DIR (cache, default /var/tmp/rtbench-vm, for aarch64
# /var/tmp/rtbench-vm-aarch64), RTBENCH_VM_CMDLINE
# (default "isolcpus=1 nohz_full=1 rcu_nocbs=1 irqaffinity=0"), RTBENCH_VM_SMP (2),
# RTBENCH_VM_MEM (1G), RTBENCH_VM_ACCEL (auto|tcg|kvm; auto = KVM only with vmx/svm and no
# kvm_pvm, i.e. TCG on this project's machines), RTBENCH_VM_KEEP_RUNS (20 run dirs kept).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
arch=${RTBENCH_VM_ARCH:-x86_64}
case $arch in
  x86_64) cache=${RTBENCH_VM_DIR:-/var/tmp/rtbench-vm} elf_machine=3e ;;
  aarch64) cache=${RTBENCH_VM_DIR:-/var/tmp/rtbench-vm-aarch64} elf_machine=b7 ;;
  armv7) cache=${RTBENCH_VM_DIR:-/var/tmp/rtbench-vm-armv7} elf_machine=28 ;;
  *) echo "boot.sh: RTBENCH_VM_ARCH=$arch: expected x86_64, aarch64 or armv7" >&2; exit 1 ;;
esac
isolation=${RTBENCH_VM_CMDLINE:-isolcpus=1 nohz_full=1 rcu_nocbs=1 irqaffinity=0}
say() { printf '[boot %3ss] %s\n' "$SECONDS" "$*" >&2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 1; }

bin="" unit="" config="" catalog="" append="" timeout=600 out="" keep_disk=0 culprit=0 monitor="" ptest=""
while [ $# -gt 0 ]; do
  case $1 in
    --bin | --unit | --config | --catalog | --append | --timeout | --out)
      [ $# -ge 2 ] || { echo "boot.sh: $1 needs a value" >&2; exit 1; }
      v=$2
      case $1 in
        --bin) bin=$v ;; --unit) unit=$v ;; --config) config=$v ;; --catalog) catalog=$v ;;
        --append) append=$v ;; --timeout) timeout=$v ;; --out) out=$v ;;
      esac
      shift 2 ;;
    --keep-disk) keep_disk=1; shift ;;
    --culprit) culprit=1; shift ;;
    --monitor) monitor=$2; shift 2 ;;
    --ptest) ptest=$2; shift 2 ;;
    -h | --help) usage ;;
    *) echo "boot.sh: unknown argument '$1' (see --help)" >&2; exit 1 ;;
  esac
done
for pair in "--bin:$bin" "--unit:$unit" "--config:$config"; do
  [ -n "${pair#*:}" ] || { echo "boot.sh: ${pair%%:*} PATH is required (see --help)" >&2; exit 1; }
done
for f in "$bin" "$unit" "$config" ${catalog:+"$catalog"} ${ptest:+"$ptest"}; do
  [ -f "$f" ] || { echo "boot.sh: $f: no such file" >&2; exit 1; }
done
# ELF e_machine (bytes 18-19, little endian): 0x3e x86-64, 0xb7 AArch64
[ "$(od -An -tx1 -j18 -N1 "$bin" | tr -d ' ')" = "$elf_machine" ] ||
  { echo "boot.sh: --bin $bin is not an $arch executable (RTBENCH_VM_ARCH=$arch)" >&2; exit 1; }
[[ $timeout =~ ^[0-9]+$ ]] && [ "$timeout" -ge 120 ] ||
  { echo "boot.sh: --timeout $timeout: expected whole seconds, at least 120" >&2; exit 1; }
image=$cache/image
for f in vmlinuz initrd.img base.raw .ok; do
  [ -e "$image/$f" ] || { echo "boot.sh: $image/$f missing: run tests/vm/build-image.sh first" >&2; exit 1; }
done

# ---- run directory ------------------------------------------------------------------------
if [ -z "$out" ]; then
  mkdir -p "$cache/runs"
  # keep the newest RTBENCH_VM_KEEP_RUNS - 1 old runs
  { ls -1d "$cache"/runs/*/ 2>/dev/null || true; } | sort |
    head -n "-$(( ${RTBENCH_VM_KEEP_RUNS:-20} - 1 ))" | xargs -r rm -rf
  out=$cache/runs/$(date -u +%Y%m%dT%H%M%SZ)-$$
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
# reuse only an empty directory or an earlier run directory (never wipe anything else)
if [ -n "$(ls -A "$out")" ]; then
  [ -e "$out/.rtbench-vm-run" ] ||
    { echo "boot.sh: --out $out is not empty and not a run directory of boot.sh" >&2; exit 1; }
  find "$out" -mindepth 1 -delete
fi
touch "$out/.rtbench-vm-run"
disk=$out/disk.raw

# ---- the guest disk: a copy of the image, files injected with debugfs (no mount, no loop) ----
exec 9>"$cache/.lock"
flock -s 9   # build-image.sh replaces the image under an exclusive lock
cp --sparse=always "$image/base.raw" "$disk"
cp "$image/vmlinuz" "$image/initrd.img" "$out/"
flock -u 9

cmds=$out/debugfs.cmds
: > "$cmds"
declare -A made=()
mkdir_p() {  # debugfs mkdir for each missing parent of guest path $1
  local dir=${1%/*} part path=""
  local -a parts
  IFS=/ read -ra parts <<< "${dir#/}"
  for part in "${parts[@]}"; do
    path=$path/$part
    [ -n "${made[$path]:-}" ] && continue
    made[$path]=1
    echo "mkdir $path" >> "$cmds"   # "already exists" errors are expected and harmless
  done
}
installed=()
install_file() {  # host file, guest path, octal permissions
  mkdir_p "$2"
  printf 'rm %s\nwrite %s %s\nsif %s mode 0100%s\nsif %s uid 0\nsif %s gid 0\n' \
    "$2" "$(realpath "$1")" "$2" "$2" "$3" "$2" "$2" >> "$cmds"
  installed+=("$2")
}
enable_link() {  # guest directory, unit name: symlink as `systemctl enable` makes it
  mkdir_p "$1/$2"
  echo "symlink $1/$2 /etc/systemd/system/$2" >> "$cmds"
}

install_file "$bin" /usr/bin/rtbench 755
install_file "$config" /etc/rtbench/rtbench.toml 644
[ -n "$catalog" ] && install_file "$catalog" /usr/lib/systemd/catalog/rtbench.catalog 644
install_file "$unit" /etc/systemd/system/rtbench.service 644
enabled=0
while read -r key targets; do
  case $key in WantedBy) suffix=wants ;; RequiredBy) suffix=requires ;; *) continue ;; esac
  for target in $targets; do
    enable_link "/etc/systemd/system/$target.$suffix" rtbench.service
    enabled=1
  done
done < <(awk '/^[[:space:]]*\[/ { sect = $0; gsub(/[[:space:]]/, "", sect); next }
              sect == "[Install]" && /^[[:space:]]*(WantedBy|RequiredBy)[[:space:]]*=/ {
                k = $0; sub(/[[:space:]]*=.*/, "", k); gsub(/[[:space:]]/, "", k)
                v = $0; sub(/^[^=]*=/, "", v); print k, v }' "$unit")
[ $enabled = 1 ] ||
  { echo "boot.sh: $unit has no [Install] WantedBy= or RequiredBy=, so it would never start" >&2; exit 1; }

# the harness (guest/), and how long the guest waits for the unit
for f in rtbench-vm.target rtbench-vm-before.service rtbench-vm-collect.service; do
  install_file "$here/guest/$f" "/etc/systemd/system/$f" 644
done
install_file "$here/guest/before" /usr/libexec/rtbench-vm/before 755
install_file "$here/guest/collect" /usr/libexec/rtbench-vm/collect 755
if [ $culprit = 1 ]; then
  install_file "$here/culprit/vendord" /usr/libexec/rtbench-vm/vendord 755
  install_file "$here/culprit/vendord-burn" /usr/libexec/rtbench-vm/vendord-burn 755
  install_file "$here/culprit/rtbench-vm-vendord.service" /etc/systemd/system/rtbench-vm-vendord.service 644
  enable_link /etc/systemd/system/rtbench-vm.target.wants rtbench-vm-vendord.service
fi
if [ -n "$monitor" ]; then
  install_file "$monitor" /etc/systemd/system/rtbench-monitor.service 644
fi
[ -n "$ptest" ] && install_file "$ptest" /usr/lib/rtbench/ptest/run-ptest 755
# Where the collector sends the archive and the boot journal: x86 has four UARTs, arm64 "virt"
# one (the console), so there they are virtio-serial ports (named below, udev's symlinks).
case $arch in
  x86_64) archive_dev=/dev/ttyS1 full_dev=/dev/ttyS2 ;;
  aarch64 | armv7) archive_dev=/dev/virtio-ports/rtbench-vm.archive full_dev=/dev/virtio-ports/rtbench-vm.full ;;
esac
printf 'UNIT=rtbench.service\nWAIT_S=%s\nARCHIVE_DEV=%s\nFULL_DEV=%s\n' $(( timeout - 60 )) \
  "$archive_dev" "$full_dev" > "$out/guest.env"
install_file "$out/guest.env" /etc/rtbench-vm/env 644

debugfs -w -f "$cmds" "$disk" > "$out/debugfs.log" 2>&1
# debugfs exits 0 even when a command failed: check that every file is there, with its size
for guest in "${installed[@]}"; do
  host=$(awk -v g="$guest" '$1 == "write" && $3 == g { print $2 }' "$cmds")
  size=$(debugfs -R "stat $guest" "$disk" 2>/dev/null | sed -n 's/.*Size: \([0-9]*\).*/\1/p' | head -n1)
  [ "$size" = "$(stat -c %s "$host")" ] ||
    { cat "$out/debugfs.log" >&2; echo "boot.sh: injecting $guest failed" >&2; exit 1; }
done
for link in $(awk '$1 == "symlink" { print $2 }' "$cmds"); do
  debugfs -R "stat $link" "$disk" 2>/dev/null | grep -q 'Type: symlink' ||
    { cat "$out/debugfs.log" >&2; echo "boot.sh: enabling link $link failed" >&2; exit 1; }
done
say "injected ${installed[*]}"
say "enabled rtbench.service: $(awk '$1 == "symlink" { printf "%s ", $2 }' "$cmds")"

# ---- boot ----------------------------------------------------------------------------------
accel=${RTBENCH_VM_ACCEL:-auto}
[ "$arch" = "$(uname -m)" ] || accel=tcg
if [ "$accel" = auto ]; then
  # /dev/kvm on these machines comes from kvm_pvm, which runs a stock kernel's ring 0 emulated
  # and far slower than TCG: use KVM only with hardware virtualisation and no kvm_pvm.
  accel=tcg
  if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo && [ ! -d /sys/module/kvm_pvm ]; then
    accel=kvm
  fi
fi
# shellcheck disable=SC2054  # the commas are qemu's
case $accel in
  kvm) qaccel=(-enable-kvm -cpu host,-arch-capabilities) ;;
  tcg) qaccel=(-accel tcg,thread=multi,tb-size=512 -cpu max) ;;
  *) echo "boot.sh: RTBENCH_VM_ACCEL=$accel: expected auto, tcg or kvm" >&2; exit 1 ;;
esac
# Per architecture: qemu, machine, console, and the two result channels (see guest.env above).
# shellcheck disable=SC2054  # the commas are qemu's
case $arch in
  x86_64)
    qemu_bin=qemu-system-x86_64 console=ttyS0,115200
    qmachine=()
    channels=(-serial "file:$out/serial-archive.txt" -serial "file:$out/serial-full.log") ;;
  aarch64)
    # pauth=off: emulated pointer authentication makes a boot ~4x slower
    # (../../shared/tools/vmboot/AARCH64.md; 237 s vs 44 s).
    qemu_bin=qemu-system-aarch64 console=ttyAMA0
    qaccel=(-accel tcg,thread=multi,tb-size=512 -cpu max,pauth=off)
    qmachine=(-M virt)
    channels=(-device virtio-serial-pci
              -chardev "file,id=archive,path=$out/serial-archive.txt"
              -device virtserialport,chardev=archive,name=rtbench-vm.archive
              -chardev "file,id=full,path=$out/serial-full.log"
              -device virtserialport,chardev=full,name=rtbench-vm.full) ;;
  armv7)
    # The armhf guest: Debian's armmp kernel on the same "virt" board, a Cortex-A15 (ARMv7 with
    # the virtualization extensions, the arch timer), the same virtio-serial channels.
    qemu_bin=qemu-system-arm console=ttyAMA0
    qaccel=(-accel tcg,thread=multi,tb-size=512 -cpu cortex-a15)
    qmachine=(-M virt,highmem=off)
    channels=(-device virtio-serial-pci
              -chardev "file,id=archive,path=$out/serial-archive.txt"
              -device virtserialport,chardev=archive,name=rtbench-vm.archive
              -chardev "file,id=full,path=$out/serial-full.log"
              -device virtserialport,chardev=full,name=rtbench-vm.full) ;;
esac
cmdline="console=$console root=/dev/vda rw rootfstype=ext4 panic=-1"
cmdline+=" systemd.unit=rtbench-vm.target $isolation${append:+ $append}"
echo "$cmdline" > "$out/cmdline"
say "$qemu_bin ($accel, ${RTBENCH_VM_SMP:-2} CPUs, ${RTBENCH_VM_MEM:-1G}): $cmdline"

start=$(date +%s.%N)
"$qemu_bin" "${qmachine[@]}" "${qaccel[@]}" -smp "${RTBENCH_VM_SMP:-2}" -m "${RTBENCH_VM_MEM:-1G}" \
  -nodefaults -no-user-config -display none -no-reboot \
  -kernel "$out/vmlinuz" -initrd "$out/initrd.img" -append "$cmdline" \
  -drive "file=$disk,format=raw,if=virtio,cache=unsafe" \
  -serial "file:$out/console.log" "${channels[@]}" \
  > "$out/qemu.log" 2>&1 &
qemu=$!
trap 'kill "$qemu" 2>/dev/null || true' EXIT INT TERM

rc=0
t0=$SECONDS
collected_at=""
while kill -0 "$qemu" 2>/dev/null; do
  sleep 1
  elapsed=$(( SECONDS - t0 ))
  if [ -z "$collected_at" ] &&
     grep -q '^==== rtbench-vm archive end sha256=' "$out/serial-archive.txt" 2>/dev/null; then
    collected_at=$elapsed
    say "results received after ${elapsed}s"
  fi
  if [ -n "$collected_at" ] && [ $(( elapsed - collected_at )) -gt 60 ]; then
    say "the guest did not power off within 60 s of sending the results: stopping qemu"
    break
  fi
  if [ -z "$collected_at" ] && [ "$elapsed" -gt "$timeout" ]; then
    say "timeout: no results after ${timeout}s; last console lines:"
    tail -n 30 "$out/console.log" | sed 's/^/  | /' >&2
    rc=124
    break
  fi
done
kill "$qemu" 2>/dev/null || true
wait "$qemu" 2>/dev/null || true
trap - EXIT INT TERM
wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
echo "qemu_wall_s=$wall" > "$out/time.txt"
[ -s "$out/qemu.log" ] && sed 's/^/  qemu: /' "$out/qemu.log" >&2
[ $keep_disk = 1 ] || rm -f "$disk"
rm -f "$out/vmlinuz" "$out/initrd.img"

# ---- unpack the archive ---------------------------------------------------------------------
if [ $rc = 0 ]; then
  sum=$(sed -n 's/^==== rtbench-vm archive end sha256=\([0-9a-f]*\) ====$/\1/p' \
          "$out/serial-archive.txt" 2>/dev/null | head -n1)
  sed -n '/^==== rtbench-vm archive begin ====$/,/^==== rtbench-vm archive end/p' \
    "$out/serial-archive.txt" 2>/dev/null | sed '1d;$d' | base64 -d > "$out/archive.tar" 2>/dev/null || true
  if [ -z "$sum" ] || [ "$(sha256sum < "$out/archive.tar" | cut -d' ' -f1)" != "$sum" ]; then
    say "no complete results archive on $archive_dev (qemu ran ${wall}s); last console lines:"
    tail -n 30 "$out/console.log" | sed 's/^/  | /' >&2
    rc=1
  else
    tar -C "$out" -xf "$out/archive.tar"
    rm -f "$out/archive.tar" "$out/serial-archive.txt"
  fi
fi
if [ $rc = 0 ]; then
  say "qemu ran ${wall}s; guest (uptime s): $(awk -F= '/Monotonic=|target=/ {
        n = $1; sub(/TimestampMonotonic/, "", n); printf "%s %.1f, ", n, $2 / 1e6 }' "$out/boot.txt")collected at $(cut -d' ' -f1 "$out/collect-times.txt" | tail -n1)"
  say "rtbench.service: $(tr '\n' ' ' < "$out/show.txt")"
  say "journal: $(wc -l < "$out/unit.json") entries for the unit, printk $(cat "$out/printk.before" 2>/dev/null) -> $(cat "$out/printk")"
  [ -e "$out/wait-timeout" ] && say "warning: the guest stopped waiting for the unit ($(cat "$out/wait-timeout"))"
fi
say "run directory: $out"
echo "$out"
exit $rc

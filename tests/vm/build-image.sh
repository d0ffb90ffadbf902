#!/usr/bin/env bash
# Build the cached guest image of rtbench's boot test: Debian bookworm (minbase) with systemd,
# udev, kmod and Debian's PREEMPT_RT kernel (linux-image-rt-amd64, linux-image-rt-arm64 for
# RTBENCH_VM_ARCH=aarch64, linux-image-rt-armmp for RTBENCH_VM_ARCH=armv7). Nothing of rtbench is in the image; boot.sh injects the binary, unit
# and config into a per-run copy.
#
#   tests/vm/build-image.sh            # as root; prints the image directory on stdout
#
# Cache ($RTBENCH_VM_DIR, default /var/tmp/rtbench-vm):
#   rootfs-<P>/   debootstrap output, P = hash of the suite + packages.txt   (~3 min cold)
#   image-<I>/    vmlinuz, initrd.img, base.raw (sparse ext4), manifest.txt,
#                 I = hash of P + this script                                 (~15 s)
# aarch64: the same under qemu-user (binfmt_misc): debootstrap ~4-5 min, initrd ~40 s.
#   image         symlink to the current image-<I>
# A complete stage is marked by a .ok file and reused; re-running is a no-op (< 1 s) when
# nothing changed. Stale rootfs-*/image-* directories are removed after a successful build.
#
# Environment:
#   RTBENCH_VM_ARCH     x86_64 (default), aarch64 (arm64 guest for qemu-system-aarch64) or
#                       armv7 (armhf guest for qemu-system-arm; cache /var/tmp/rtbench-vm-armv7)
#   RTBENCH_VM_DIR      cache directory (default /var/tmp/rtbench-vm, /var/tmp/rtbench-vm-aarch64)
#   RTBENCH_VM_MIRROR   Debian mirror (default: the first .../debian URI of the host's apt sources)
#   RTBENCH_VM_SUITE    Debian suite (default bookworm)
#   RTBENCH_VM_REBUILD  1 = ignore the cache and debootstrap again
#   RTBENCH_VM_NO_APT   1 = never apt-get install missing host tools, fail instead
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
arch=${RTBENCH_VM_ARCH:-x86_64}
case $arch in
  x86_64) debarch=amd64 cache=${RTBENCH_VM_DIR:-/var/tmp/rtbench-vm}
          qemu_tool=qemu-system-x86_64:qemu-system-x86 ;;
  aarch64) debarch=arm64 cache=${RTBENCH_VM_DIR:-/var/tmp/rtbench-vm-aarch64}
           qemu_tool="qemu-system-aarch64:qemu-system-arm qemu-aarch64-static:qemu-user-static" ;;
  # armhf: Debian's rt kernel flavour is armmp (ARMv7 multiplatform, -M virt included).
  armv7) debarch=armhf kflavour=armmp cache=${RTBENCH_VM_DIR:-/var/tmp/rtbench-vm-armv7}
         qemu_tool="qemu-system-arm:qemu-system-arm qemu-arm-static:qemu-user-static" ;;
  *) echo "build-image.sh: RTBENCH_VM_ARCH=$arch: expected x86_64, aarch64 or armv7" >&2; exit 1 ;;
esac
suite=${RTBENCH_VM_SUITE:-bookworm}
say() { printf '[build-image %3ss] %s\n' "$SECONDS" "$*" >&2; }
die() { say "error: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap and chroot need it)"

# ---- host tools ---------------------------------------------------------------------------
missing=()
for tool in $qemu_tool debootstrap:debootstrap mkfs.ext4:e2fsprogs \
            debugfs:e2fsprogs jq:jq flock:util-linux; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "${RTBENCH_VM_NO_APT:-0}" = 1 ] && die "missing host packages: ${missing[*]}"
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  say "installing host packages: ${missing[*]}"
  # a concurrent apt (CI setup) may hold the dpkg lock: wait for it rather than fail
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9   # one build at a time; boot.sh takes this lock shared while it copies the image

# A foreign-architecture rootfs runs its maintainer scripts under qemu-user: binfmt_misc must
# know the qemu-aarch64 interpreter (the F flag in qemu-user-static's entry makes it work in
# the chroot). Containers may have binfmt_misc unmounted.
binfmt=$arch
[ "$arch" = armv7 ] && binfmt=arm   # qemu-user-static's entry for 32-bit ARM
if [ "$arch" != "$(uname -m)" ]; then
  [ -e /proc/sys/fs/binfmt_misc/register ] ||
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null ||
    die "binfmt_misc is not mounted and cannot be mounted: no way to run $arch programs"
  if [ ! -e "/proc/sys/fs/binfmt_misc/qemu-$binfmt" ]; then
    conf=/usr/lib/binfmt.d/qemu-$binfmt.conf
    [ -r "$conf" ] || die "$conf missing (qemu-user-static)"
    cat "$conf" > /proc/sys/fs/binfmt_misc/register || die "registering $conf with binfmt_misc failed"
  fi
fi

# ---- cache keys ---------------------------------------------------------------------------
# packages.txt names the kernel package linux-image-rt-@DEBARCH@.
mapfile -t pkgs < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e "s/@DEBARCH@/${kflavour:-$debarch}/g" "$here/packages.txt" |
                    grep -v '^$')
[ ${#pkgs[@]} -gt 0 ] || die "$here/packages.txt lists no packages"
pkey=$(printf '%s\n' "suite=$suite" "${pkgs[@]}" | sha256sum | cut -c1-16)
ikey=$( { echo "$pkey"; cat "$0"; } | sha256sum | cut -c1-16)
rootfs=$cache/rootfs-$pkey
image=$cache/image-$ikey

if [ -e "$image/.ok" ] && [ "${RTBENCH_VM_REBUILD:-0}" != 1 ]; then
  ln -sfn "image-$ikey" "$cache/image"
  say "cached: $image"
  echo "$image"
  exit 0
fi

# ---- stage 1: debootstrap (the slow part, keyed by the package list) ----------------------
unmount_under() {  # anything a failed debootstrap left mounted inside $1
  local m
  for m in $(awk -v r="$1/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do
    umount -l "$m" || true
  done
}
if [ ! -e "$rootfs/.ok" ] || [ "${RTBENCH_VM_REBUILD:-0}" = 1 ]; then
  mirror=${RTBENCH_VM_MIRROR:-}
  if [ -z "$mirror" ]; then
    mirror=$( { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
                   /etc/apt/sources.list.d/*.sources 2>/dev/null || true; } |
             grep -oE 'https?://[^[:space:]]+/debian/?([[:space:]]|$)' | head -n1 | tr -d '[:space:]')
    [ -n "$mirror" ] || die "no Debian mirror in the host's apt sources; set RTBENCH_VM_MIRROR"
  fi
  say "debootstrap $suite from $mirror: ${pkgs[*]} (takes ~3 min)"
  unmount_under "$rootfs"
  rm -rf "$rootfs"
  mkdir -p "$rootfs"
  include=$(IFS=,; echo "${pkgs[*]}")
  # INITRD=No: under qemu-user the kernel package would build a full initrd twice (> 20 min);
  # stage 2 builds the small one.
  if ! INITRD=No debootstrap --arch="$debarch" --variant=minbase --include="$include" "$suite" \
       "$rootfs" "$mirror" > "$cache/debootstrap.log" 2>&1; then
    tail -n 25 "$cache/debootstrap.log" >&2
    unmount_under "$rootfs"
    die "debootstrap failed (full log: $cache/debootstrap.log)"
  fi
  unmount_under "$rootfs"
  touch "$rootfs/.ok"
  say "debootstrap done"
fi

# ---- stage 2: configure a copy of the rootfs and make the ext4 image ----------------------
rm -rf "$image" "$image.tmp"
mkdir -p "$image.tmp"
stage=$image.tmp/rootfs
say "configuring a copy of $rootfs"
cp -a "$rootfs" "$stage"
rm -f "$stage/.ok"

echo rtbench-vm > "$stage/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\trtbench-vm\n' > "$stage/etc/hosts"
printf '/dev/vda\t/\text4\trw,noatime\t0\t1\n' > "$stage/etc/fstab"
# A fixed machine id: with an empty or "uninitialized" one systemd treats every boot as the
# first boot (ConditionFirstBoot units, preset-all).
tr -d '-' < /proc/sys/kernel/random/uuid > "$stage/etc/machine-id"
chroot "$stage" passwd -d root >/dev/null   # debugging: boot with --append systemd.unit=rescue.target
# The journal stays in /run: the collector reads it before power-off, and disk writes are
# slow under emulation.
mkdir -p "$stage/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\nForwardToConsole=no\n' \
  > "$stage/etc/systemd/journald.conf.d/rtbench-vm.conf"
# Units that only cost boot time under emulation, or would prompt on the serial console.
# ConditionNeedsUpdate= units (hwdb, ldconfig, catalog) would run on every boot of a fresh copy.
for unit in getty@tty1.service serial-getty@ttyS0.service console-getty.service \
            getty-static.service systemd-firstboot.service systemd-binfmt.service \
            proc-sys-fs-binfmt_misc.automount systemd-pstore.service \
            systemd-hwdb-update.service ldconfig.service systemd-journal-catalog-update.service \
            systemd-update-done.service e2scrub_reap.service \
            apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
            fstrim.timer; do
  ln -sfn /dev/null "$stage/etc/systemd/system/$unit"
done
# Generators for what this guest does not have (GPT auto-mounts, LUKS, dm-verity, hibernation,
# boot counting, gettys, SysV scripts): each is a process start under TCG.
mkdir -p "$stage/etc/systemd/system-generators"
for gen in systemd-gpt-auto-generator systemd-cryptsetup-generator systemd-veritysetup-generator \
           systemd-integritysetup-generator systemd-hibernate-resume-generator \
           systemd-bless-boot-generator systemd-getty-generator systemd-sysv-generator \
           systemd-rc-local-generator systemd-system-update-generator; do
  ln -sfn /dev/null "$stage/etc/systemd/system-generators/$gen"
done
# Drivers for emulated hardware that the test does not use (floppy, IDE, SMBus, PC speaker,
# cpufreq, KVM, CPU-accelerated crypto): udev would load them while rtbench measures, each
# costing seconds under TCG.
printf 'blacklist %s\n' floppy pcspkr i2c_piix4 ata_piix pata_acpi ata_generic sr_mod sg \
  kvm kvm_amd kvm_intel powernow_k8 acpi_cpufreq aesni_intel ghash_clmulni_intel \
  sha1_ssse3 sha256_ssse3 sha512_ssse3 crc32_pclmul crct10dif_pclmul polyval_clmulni \
  serio_raw psmouse joydev evdev > "$stage/etc/modprobe.d/rtbench-vm.conf"
# Small initrd: only what mounting /dev/vda needs (virtio and ext4 are modules in Debian's
# kernel). MODULES=most gives 36 MB and ~12 s in the initramfs under TCG; MODULES=dep would
# look at the build host's hardware from inside the chroot.
sed -i 's/^MODULES=.*/MODULES=list/' "$stage/etc/initramfs-tools/initramfs.conf"
printf '%s\n' virtio_pci virtio_blk ext4 crc32c_generic > "$stage/etc/initramfs-tools/modules"
# The arm64 guest has one UART: boot.sh gives it virtio-serial ports for the results.
[ "$arch" != x86_64 ] && echo virtio_console > "$stage/etc/modules-load.d/rtbench-vm.conf"
kver=$(cd "$stage/lib/modules" && ls | sort -V | tail -n1)
[ -n "$kver" ] && [ -e "$stage/boot/vmlinuz-$kver" ] || die "no kernel found in $stage/boot"
mode=-u
[ -e "$stage/boot/initrd.img-$kver" ] || mode=-c   # INITRD=No above
chroot "$stage" update-initramfs "$mode" -k "$kver" > "$image.tmp/update-initramfs.log" 2>&1 ||
  { cat "$image.tmp/update-initramfs.log" >&2; die "update-initramfs failed"; }
cp "$stage/boot/vmlinuz-$kver" "$image.tmp/vmlinuz"
cp "$stage/boot/initrd.img-$kver" "$image.tmp/initrd.img"
chroot "$stage" dpkg-query -W -f '${Package} ${Version}\n' > "$image.tmp/manifest.txt"
{ echo "kernel $kver"; echo "suite $suite"; echo "arch $debarch"; echo "packages-key $pkey"; } >> "$image.tmp/manifest.txt"
rm -rf "$stage"/var/cache/apt/archives/*.deb "$stage"/var/lib/apt/lists/* \
       "$stage"/usr/share/doc/* "$stage"/usr/share/man/* "$stage"/usr/share/info/* \
       "$stage"/usr/share/locale/*

say "mkfs.ext4 -d (kernel $kver)"
truncate -s 2G "$image.tmp/base.raw"
mkfs.ext4 -q -F -L rtbench-vm -E root_owner=0:0 -d "$stage" "$image.tmp/base.raw"
rm -rf "$stage"
touch "$image.tmp/.ok"
mv "$image.tmp" "$image"
ln -sfn "image-$ikey" "$cache/image"

# Drop what the current keys no longer name (old package lists, old versions of this script).
for old in "$cache"/rootfs-* "$cache"/image-*; do
  [ -e "$old" ] || continue
  case $old in "$rootfs" | "$image") continue ;; esac
  unmount_under "$old"
  rm -rf "$old"
done
say "done: $image (base.raw $(du -h "$image/base.raw" | cut -f1) used; cache $(du -sh "$cache" | cut -f1))"
echo "$image"

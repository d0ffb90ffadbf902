#!/bin/sh
# Boot the qemu_aarch64_virt_rtbench_defconfig images. The kernel command line
# is where isolcpus= goes on this boot path (QEMU -append); CPUs 2-3 are
# isolated for real-time work and IRQs stay on CPUs 0-1.
# Usage: start-qemu.sh [IMAGES_DIR]   (default: output/images)
set -eu
images=${1:-output/images}
exec qemu-system-aarch64 -M virt -cpu cortex-a53 -smp 4 -m 512 -nographic \
	-kernel "$images/Image" \
	-append "rootwait root=/dev/vda console=ttyAMA0 isolcpus=domain,managed_irq,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1" \
	-drive file="$images/rootfs.ext4",if=none,format=raw,id=hd0 \
	-device virtio-blk-device,drive=hd0 \
	-netdev user,id=eth0 -device virtio-net-device,netdev=eth0

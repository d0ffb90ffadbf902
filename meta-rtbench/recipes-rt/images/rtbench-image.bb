SUMMARY = "Minimal real-time image with the rtbench self-test"
DESCRIPTION = "A core-image-minimal style image with a PREEMPT_RT kernel, \
               rtbench (systemd unit or SysV init script, configuration, \
               journal catalog) and rt-tests. Like oe-core's core-image-rt it \
               is skipped unless the real-time kernel (RTBENCH_RT_KERNEL) is \
               the preferred kernel."
HOMEPAGE = "https://git.example.org/rtbench"
BUGTRACKER = "https://git.example.org/rtbench/issues"
SECTION = "images"
CVE_PRODUCT = ""
LICENSE = "MIT"

# What core-image-minimal installs, plus rtbench and cyclictest (rt-tests).
IMAGE_INSTALL = "packagegroup-core-boot rtbench rt-tests ${CORE_IMAGE_EXTRA_INSTALL}"
# No locales, as core-image-minimal (a space: the variable is set, and empty).
# nooelint: oelint.vars.notneededspace
IMAGE_LINGUAS = " "

inherit core-image

# testimage (IMAGE_CLASSES += "testimage", then bitbake rtbench-image -c testimage):
# its runtime tests log in over ssh, and the layer's lib/oeqa/runtime/cases/rtbench.py
# checks the self-test's unit, verdict, journal entries and report on the booted
# image. ptest-pkgs (IMAGE_FEATURES) adds rtbench-ptest, which that test also runs.
IMAGE_FEATURES += "${@'ssh-server-dropbear' if bb.data.inherits_class('testimage', d) else ''}"

IMAGE_ROOTFS_SIZE ?= "8192"
IMAGE_ROOTFS_EXTRA_SPACE:append = " ${@bb.utils.contains('DISTRO_FEATURES', 'systemd', '+ 4096', '', d)}"

# The kernel that makes this image real-time: oe-core's linux-yocto-rt, or a
# vendor kernel made real-time with a PREEMPT_RT configuration fragment
# (README.md), named in local.conf, a distro or a machine configuration:
#     RTBENCH_RT_KERNEL = "linux-imx"
RTBENCH_RT_KERNEL ??= "linux-yocto-rt"

# Kernel arguments for CPU isolation (isolcpus=, nohz_full=, rcu_nocbs=,
# irqaffinity=): empty unless conf/include/rtbench-isolation.inc is required,
# which also adds the kernel configuration they need. They go on every boot
# path oe-core generates for the image: the kickstart rtbench-image.wks.in
# (WKS_FILE = "rtbench-image.wks.in", IMAGE_FSTYPES += "wic"), the grub-efi,
# systemd-boot and syslinux configurations (APPEND) and runqemu; for U-Boot,
# UKI and others see README.md, "Kernel command line".
RTBENCH_KERNEL_ARGS ??= ""
APPEND:append = " ${RTBENCH_KERNEL_ARGS}"
QB_KERNEL_CMDLINE_APPEND:append = " ${RTBENCH_KERNEL_ARGS}"

# console= for each of the machine's serial consoles (SERIAL_CONSOLES =
# "115200;ttyS0 115200;ttyAMA0"), for the kickstart's command line.
# nooelint: oelint.vars.mispell.unknown - the layer's own variable
RTBENCH_CONSOLE_ARGS = "${@' '.join('console=%s,%s' % (c.split(';')[1], c.split(';')[0]) for c in (d.getVar('SERIAL_CONSOLES') or '').split() if ';' in c)}"

# Same test as oe-core's core-image-rt: build only with the real-time kernel.
# nooelint: oelint.task.noanonpython
python __anonymous() {
    kernel = d.getVar("RTBENCH_RT_KERNEL")
    if d.getVar("PREFERRED_PROVIDER_virtual/kernel") != kernel:
        msg = "Set PREFERRED_PROVIDER_virtual/kernel to %s, or name your real-time kernel in RTBENCH_RT_KERNEL" % kernel
        raise bb.parse.SkipRecipe(msg)
}

SUMMARY = "Minimal real-time image with the rtbench self-test"
DESCRIPTION = "A core-image-minimal style image with a PREEMPT_RT kernel, \
               rtbench (systemd unit or SysV init script, configuration, \
               journal catalog) and rt-tests. Like oe-core's core-image-rt it \
               is skipped unless linux-yocto-rt is the preferred kernel."
HOMEPAGE = "https://git.example.org/rtbench"
BUGTRACKER = "https://git.example.org/rtbench/issues"
SECTION = "images"
CVE_PRODUCT = ""
LICENSE = "MIT"

# What core-image-minimal installs, plus rtbench and cyclictest (rt-tests).
IMAGE_INSTALL = "packagegroup-core-boot rtbench rt-tests ${CORE_IMAGE_EXTRA_INSTALL}"
IMAGE_LINGUAS = " "

inherit core-image

IMAGE_ROOTFS_SIZE ?= "8192"
IMAGE_ROOTFS_EXTRA_SPACE:append = "${@bb.utils.contains("DISTRO_FEATURES", "systemd", " + 4096", "", d)}"

# Kernel command line (isolcpus= etc.) for wic images: set
# WKS_FILE = "rtbench-isolcpus.wks.in" and IMAGE_FSTYPES += "wic", and adapt the
# CPU lists to the board; other boot paths: README.md, "Kernel command line".

# Same test as oe-core's core-image-rt: build only with the PREEMPT_RT kernel.
# nooelint: oelint.task.noanonpython
python __anonymous() {
    if d.getVar("PREFERRED_PROVIDER_virtual/kernel") != "linux-yocto-rt":
        msg = "Set PREFERRED_PROVIDER_virtual/kernel to linux-yocto-rt to enable it"
        raise bb.parse.SkipRecipe(msg)
}

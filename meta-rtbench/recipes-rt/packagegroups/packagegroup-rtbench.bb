SUMMARY = "rtbench: latency benchmark, boot self-test and field monitor"
DESCRIPTION = "What the image feature rtbench installs (FEATURE_PACKAGES_rtbench, \
               conf/layer.conf): rtbench with its configuration, unit or init \
               script, and the field monitor rtbench-monitor (disabled unless \
               RTBENCH_MONITOR_AUTOSTART is 1; absent when rtbench is built \
               without the monitor, PACKAGECONFIG)."
HOMEPAGE = "https://git.example.org/rtbench"
BUGTRACKER = "https://git.example.org/rtbench/issues"
SECTION = "benchmark/tests"
LICENSE = "MIT"
# No sources: the licence text is oe-core's.
# nooelint: oelint.var.licenseremotefile
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/MIT;md5=0835ade698e0bcf8506ecda2f7b4f302"

# rtbench is built per tune (PACKAGE_ARCH), so the group is too.
PACKAGE_ARCH = "${TUNE_PKGARCH}"

inherit packagegroup

RDEPENDS:${PN} = "rtbench"
# A recommendation: with PACKAGECONFIG without "monitor" the package does not exist.
RRECOMMENDS:${PN} = "rtbench-monitor"

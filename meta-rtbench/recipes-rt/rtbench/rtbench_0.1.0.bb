# A target tool only (no BBCLASSEXTEND): its unit, init script and tuning
# make no sense for native or nativesdk builds.
SUMMARY = "Real-time Linux latency benchmark, tuning and boot self-test"
DESCRIPTION = "rtbench measures timer wake-up latency like cyclictest, \
               applies and reverts real-time tuning (IRQ affinity, sysctls, \
               cpufreq, cpuidle, workqueues), and runs a boot-time self-test \
               under systemd whose verdict and per-CPU results land in the \
               journal and in /var/lib/rtbench."
HOMEPAGE = "https://git.example.org/rtbench"
BUGTRACKER = "https://git.example.org/rtbench/issues"
SECTION = "benchmark/tests"
CVE_PRODUCT = "rtbench"
# rtbench itself is MIT OR Apache-2.0. The binary also links crates that are
# MIT only (nix, libm, simd-adler32, strsim, zmij); every other linked crate
# offers MIT too. Their license texts are in the crates (cargo_home/bitbake).
LICENSE = "(MIT | Apache-2.0) & MIT"
LIC_FILES_CHKSUM = "file://LICENSE-MIT;md5=c9c073ac51524943272cc3eb0f84b7a1 \
                    file://LICENSE-APACHE;md5=3b83ef96387f14655fc854ddc3c6bd57"

# Placeholder address of the rtbench repository: point it at your mirror.
# SRCREV must name a commit that contains systemd/ and this layer (a release
# tag once there is one; then add ";tag=v${PV}" so bitbake checks it).
# destsuffix=${BP}: the default S on scarthgap and wrynose alike.
SRC_URI = "git://git.example.org/rtbench.git;protocol=https;branch=main;destsuffix=${BP}"
SRCREV = "0000000000000000000000000000000000000000"

# Generated from Cargo.lock: `bitbake -c update_crates rtbench`, or without a
# build directory scripts/gen-crates-inc.py in the rtbench repository.
require ${BPN}-crates.inc

inherit cargo cargo-update-recipe-crates systemd update-rc.d

# The self-test tunes the system at every boot, so it only starts when the
# integrator asks for it: RTBENCH_AUTOSTART = "1" in local.conf or a distro
# configuration (rtbench-image does not change it).
# nooelint: oelint.vars.mispell.unknown - the recipe's own switch
RTBENCH_AUTOSTART ??= "0"

SYSTEMD_SERVICE:${PN} = "rtbench.service"
SYSTEMD_AUTO_ENABLE:${PN} = "${@'enable' if d.getVar('RTBENCH_AUTOSTART') == '1' else 'disable'}"

# SysV init (e.g. the Poky distro): the same script as Buildroot's; it runs
# the self-test once in the background and logs to syslog.
INITSCRIPT_NAME = "rtbench"
INITSCRIPT_PARAMS = "${@'start 95 2 3 4 5 .' if d.getVar('RTBENCH_AUTOSTART') == '1' else 'stop 05 0 1 6 .'}"

do_install:append() {
    install -d ${D}${sysconfdir}/rtbench
    install -m 0644 ${S}/systemd/rtbench.toml ${D}${sysconfdir}/rtbench/rtbench.toml
    if ${@bb.utils.contains('DISTRO_FEATURES', 'systemd', 'true', 'false', d)}; then
        install -d ${D}${systemd_system_unitdir}
        install -m 0644 ${S}/systemd/rtbench.service ${D}${systemd_system_unitdir}/rtbench.service
        # journalctl --update-catalog reads /usr/lib/systemd/catalog
        install -d ${D}${nonarch_libdir}/systemd/catalog
        install -m 0644 ${S}/systemd/rtbench.catalog ${D}${nonarch_libdir}/systemd/catalog/rtbench.catalog
    fi
    if ${@bb.utils.contains('DISTRO_FEATURES', 'sysvinit', 'true', 'false', d)}; then
        install -d ${D}${sysconfdir}/init.d
        install -m 0755 ${S}/buildroot-package/package/rtbench/S95rtbench ${D}${sysconfdir}/init.d/rtbench
    fi
}

# Package upgrades on a running target: recompile the journal catalog. In a
# new image, systemd-journal-catalog-update.service does it at first boot.
pkg_postinst:${PN}() {
    if [ -z "$D" ] && [ -e ${nonarch_libdir}/systemd/catalog/rtbench.catalog ] && command -v journalctl >/dev/null; then
        journalctl --update-catalog
    fi
}

FILES:${PN} += "${nonarch_libdir}/systemd/catalog/rtbench.catalog"
CONFFILES:${PN} = "${sysconfdir}/rtbench/rtbench.toml"

# No RRECOMMENDS: rtbench needs nothing at run time beyond libc (its load
# generators are built in, stress-ng is only used when the configuration
# names it). rtbench-image adds rt-tests for cross-checks with cyclictest.

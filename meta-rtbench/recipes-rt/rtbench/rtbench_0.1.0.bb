# A target tool only (no BBCLASSEXTEND): its unit, init script and tuning
# make no sense for native or nativesdk builds.
SUMMARY = "Real-time Linux latency benchmark, tuning and boot self-test"
SUMMARY:${PN}-rt-tests-names = "rtbench installed as cyclictest and pmqtest"
SUMMARY:${PN}-journal-persistent = "journald drop-in that keeps the journal across reboots (rtbench)"
DESCRIPTION = "rtbench measures timer wake-up latency like cyclictest, \
               applies and reverts real-time tuning (IRQ affinity, sysctls, \
               cpufreq, cpuidle, workqueues), and runs a boot-time self-test \
               under systemd whose verdict and per-CPU results land in the \
               journal and in /var/lib/rtbench."
HOMEPAGE = "https://git.example.org/rtbench"
BUGTRACKER = "https://git.example.org/rtbench/issues"
SECTION = "benchmark/tests"
CVE_PRODUCT = "rtbench"
# rtbench itself is MIT OR Apache-2.0; the binary also links crates that offer
# MIT but no Apache-2.0 (every linked crate offers MIT). Their licence texts
# are in the crates (cargo_home/bitbake). CI checks this list against
# Cargo.lock (scripts/release-packaging.py check):
# Linked crates without an Apache-2.0 choice, used under MIT: memchr, nix, simd-adler32, strsim, winnow, zmij.
LICENSE = "(MIT | Apache-2.0) & MIT"
LIC_FILES_CHKSUM = "file://LICENSE-MIT;md5=c9c073ac51524943272cc3eb0f84b7a1 \
                    file://LICENSE-APACHE;md5=3b83ef96387f14655fc854ddc3c6bd57"

# The rtbench repository at the release tag v${PV}; bitbake checks that SRCREV
# is the tag's commit. The
# address, SRCREV, HOMEPAGE and BUGTRACKER are filled in for each release by
# scripts/release-packaging.py (docs/RELEASING.md); until the first release
# they are placeholders: point SRC_URI at your mirror and SRCREV at a commit.
# destsuffix=${BP}: the default S on scarthgap and wrynose alike.
# The tag is named from bitbake 2.10 on only: scarthgap's bitbake (2.8) takes
# tag= as the revision itself and refuses it next to a SRCREV ("Conflicting
# revisions"), so there SRCREV alone names the release commit.
RTBENCH_GIT_TAG = "${@'' if 'scarthgap' in (d.getVar('LAYERSERIES_CORENAMES') or '').split() else ';tag=v' + d.getVar('PV')}"
SRC_URI = "git://git.example.org/rtbench.git;protocol=https;branch=main;destsuffix=${BP}${RTBENCH_GIT_TAG} \
           file://rtbench.init \
           file://rtbench-monitor.init \
           file://run-ptest \
           "
SRCREV = "0000000000000000000000000000000000000000"

# Generated from Cargo.lock: `bitbake -c update_crates rtbench`, or without a
# build directory scripts/gen-crates-inc.py in the rtbench repository.
require ${BPN}-crates.inc

inherit cargo cargo-update-recipe-crates systemd update-rc.d bash-completion ptest

# Build options, the Cargo features of Cargo.toml; the default is everything. The
# smallest useful build is PACKAGECONFIG = "monitor" (the self-test and the field
# monitor); the repository's benches/README.md, "Binary size", has the size of
# each option per target.
#   plot      rtbench plot (SVG latency plots)
#   monitor   rtbench monitor and rtbench report --since; the package rtbench-monitor
#   diagnose  rtbench diagnose (the .tar.gz bundle); includes monitor
#   explain   the flight recorder that names why a late sample was late (--explain,
#             [explain]); without it runs say "cannot explain" and go on
PACKAGECONFIG ??= "plot monitor diagnose explain"
PACKAGECONFIG[plot] = "--features plot"
PACKAGECONFIG[monitor] = "--features monitor"
PACKAGECONFIG[diagnose] = "--features diagnose"
PACKAGECONFIG[explain] = "--features explain"
CARGO_BUILD_FLAGS += "--no-default-features"
# wrynose's cargo class passes PACKAGECONFIG_CONFARGS to `cargo build`, scarthgap's
# does not: there the features are appended here.
CARGO_BUILD_FLAGS:append = " ${@d.getVar('PACKAGECONFIG_CONFARGS') if 'scarthgap' in (d.getVar('LAYERSERIES_CORENAMES') or '').split() else ''}"
# The monitor is in the binary with "monitor" or "diagnose".
RTBENCH_MONITOR = "${@bb.utils.contains_any('PACKAGECONFIG', 'monitor diagnose', '1', '0', d)}"

# Nothing to set for `rtbench --version`: build.rs reads the source revision
# (this recipe's SRCREV) from the git checkout the fetcher leaves in ${S}, and
# never from a repository above it (build/revision.rs).

# Cargo.toml's release profile strips the binary (strip = true) for plain
# `cargo build`; here the build system strips and splits the debug info into
# ${PN}-dbg itself, and a binary cargo already stripped fails do_package QA
# (already-stripped, an ERROR_QA on scarthgap and wrynose). Line tables give
# ${PN}-dbg source lines for gdb and perf without full debug info.
export CARGO_PROFILE_RELEASE_STRIP = "false"
export CARGO_PROFILE_RELEASE_DEBUG ?= "line-tables-only"

# The self-test tunes the system at every boot, so it only starts when the
# integrator asks for it: RTBENCH_AUTOSTART = "1" in local.conf or a distro
# configuration (rtbench-image does not change it).
# nooelint: oelint.vars.mispell.unknown - the recipe's own switch
RTBENCH_AUTOSTART ??= "0"

SYSTEMD_SERVICE:${PN} = "rtbench.service"
SYSTEMD_AUTO_ENABLE:${PN} = "${@'enable' if d.getVar('RTBENCH_AUTOSTART') == '1' else 'disable'}"

# Field latency monitoring (rtbench monitor): its unit is a package of its own,
# disabled unless RTBENCH_MONITOR_AUTOSTART = "1"
# (IMAGE_INSTALL:append = " rtbench-monitor"; [monitor] in rtbench.toml).
# nooelint: oelint.vars.mispell.unknown - the recipe's own switch
RTBENCH_MONITOR_AUTOSTART ??= "0"
SYSTEMD_PACKAGES = "${PN} ${@'${PN}-monitor' if d.getVar('RTBENCH_MONITOR') == '1' else ''}"
SYSTEMD_SERVICE:${PN}-monitor = "rtbench-monitor.service"
SYSTEMD_AUTO_ENABLE:${PN}-monitor = "${@'enable' if d.getVar('RTBENCH_MONITOR_AUTOSTART') == '1' else 'disable'}"

# SysV init (e.g. the Poky distro): files/rtbench.init (the same file as the
# Buildroot package's S95rtbench) runs the self-test once in the background and
# logs to syslog with logger; files/rtbench-monitor.init runs the monitor in
# ${PN}-monitor, under the same switches as the units.
INITSCRIPT_PACKAGES = "${PN} ${@'${PN}-monitor' if d.getVar('RTBENCH_MONITOR') == '1' else ''}"
INITSCRIPT_NAME:${PN} = "rtbench"
INITSCRIPT_PARAMS:${PN} = "${@'start 95 2 3 4 5 .' if d.getVar('RTBENCH_AUTOSTART') == '1' else 'stop 05 0 1 6 .'}"
INITSCRIPT_NAME:${PN}-monitor = "rtbench-monitor"
INITSCRIPT_PARAMS:${PN}-monitor = "${@'start 96 2 3 4 5 . stop 04 0 1 6 .' if d.getVar('RTBENCH_MONITOR_AUTOSTART') == '1' else 'stop 04 0 1 6 .'}"

# /etc/rtbench/rtbench.toml is the repository's systemd/rtbench.toml unless a
# bbappend ships its own:
#     FILESEXTRAPATHS:prepend := "${THISDIR}/files:"
#     SRC_URI += "file://rtbench.toml"
# file:// sources unpack into the directory that holds ${S} on both releases
# (scarthgap: WORKDIR; wrynose: WORKDIR/sources), because the git source
# unpacks into ${BP} there (destsuffix above), so one path fits both.
RTBENCH_CONFIG = "${@os.path.join(os.path.dirname(d.getVar('S')), 'rtbench.toml') \
                    if 'file://rtbench.toml' in [u.split(';')[0] for u in d.getVar('SRC_URI').split()] \
                    else os.path.join(d.getVar('S'), 'systemd', 'rtbench.toml')}"
# Where this recipe's own file:// sources unpack, beside ${S} (the init scripts;
# the ptest class installs run-ptest itself).
RTBENCH_FILES = "${@os.path.dirname(d.getVar('S'))}"

do_install:append() {
    install -d ${D}${sysconfdir}/rtbench
    install -m 0644 ${RTBENCH_CONFIG} ${D}${sysconfdir}/rtbench/rtbench.toml
    if ${@bb.utils.contains('DISTRO_FEATURES', 'systemd', 'true', 'false', d)}; then
        install -d ${D}${systemd_system_unitdir}
        install -m 0644 ${S}/systemd/rtbench.service ${D}${systemd_system_unitdir}/rtbench.service
        if [ "${RTBENCH_MONITOR}" = 1 ]; then
            install -m 0644 ${S}/systemd/rtbench-monitor.service ${D}${systemd_system_unitdir}/rtbench-monitor.service
        fi
        # journalctl --update-catalog reads /usr/lib/systemd/catalog
        install -d ${D}${nonarch_libdir}/systemd/catalog
        install -m 0644 ${S}/systemd/rtbench.catalog ${D}${nonarch_libdir}/systemd/catalog/rtbench.catalog
        # packaged separately in ${PN}-journal-persistent (opt-in)
        install -d ${D}${nonarch_libdir}/systemd/journald.conf.d
        install -m 0644 ${S}/systemd/journald-rtbench-persistent.conf \
            ${D}${nonarch_libdir}/systemd/journald.conf.d/50-rtbench-persistent.conf
    fi
    if ${@bb.utils.contains('DISTRO_FEATURES', 'sysvinit', 'true', 'false', d)}; then
        install -d ${D}${sysconfdir}/init.d
        install -m 0755 ${RTBENCH_FILES}/rtbench.init ${D}${sysconfdir}/init.d/rtbench
        if [ "${RTBENCH_MONITOR}" = 1 ]; then
            install -m 0755 ${RTBENCH_FILES}/rtbench-monitor.init ${D}${sysconfdir}/init.d/rtbench-monitor
        fi
    fi
    # A man page per command and the shell completions, generated from the
    # command line's definitions (docs/man, docs/completions), and rtbench.toml(5),
    # generated from the configuration template: ${PN}-doc,
    # ${PN}-bash-completion (bash-completion class), ${PN}-zsh-completion,
    # ${PN}-fish-completion.
    install -d ${D}${mandir}/man1 ${D}${mandir}/man5
    install -m 0644 ${S}/docs/man/*.1 ${D}${mandir}/man1/
    install -m 0644 ${S}/docs/man/*.5 ${D}${mandir}/man5/
    install -d ${D}${datadir}/bash-completion/completions
    install -m 0644 ${S}/docs/completions/rtbench.bash ${D}${datadir}/bash-completion/completions/rtbench
    install -d ${D}${datadir}/zsh/site-functions
    install -m 0644 ${S}/docs/completions/_rtbench ${D}${datadir}/zsh/site-functions/_rtbench
    install -d ${D}${datadir}/fish/vendor_completions.d
    install -m 0644 ${S}/docs/completions/rtbench.fish ${D}${datadir}/fish/vendor_completions.d/rtbench.fish
    # Packaged apart in ${PN}-rt-tests-names (below).
    ln -sf rtbench ${D}${bindir}/cyclictest
    ln -sf rtbench ${D}${bindir}/pmqtest
}

# Package upgrades on a running target: recompile the journal catalog. In a
# new image, systemd-journal-catalog-update.service does it at first boot.
pkg_postinst:${PN}() {
    if [ -z "$D" ] && [ -e ${nonarch_libdir}/systemd/catalog/rtbench.catalog ] && command -v journalctl >/dev/null; then
        journalctl --update-catalog
    fi
}

# rtbench as cyclictest and pmqtest for harnesses written for rt-tests (rteval,
# LAVA test definitions; the repository's docs/COMPAT.md): called by those
# names, rtbench is "rtbench cyclic" / "rtbench pmq". The links are a package
# of their own that no image gets unless it asks for it
# (IMAGE_INSTALL:append = " rtbench-rt-tests-names"); rt-tests installs the
# real programs under the same names, so the two conflict.
PACKAGES =+ "${PN}-rt-tests-names"
PACKAGES =+ "${PN}-monitor ${PN}-zsh-completion ${PN}-fish-completion"

# Opt-in: keep the journal across reboots (journald Storage=persistent), so the
# self-test entries of earlier boots stay readable (`journalctl -b -1 -u
# rtbench`). Add it with IMAGE_INSTALL:append = " rtbench-journal-persistent",
# and keep /var/log on persistent storage: VOLATILE_LOG_DIR = "no".
PACKAGES =+ "${PN}-journal-persistent"
FILES:${PN}-journal-persistent += "${nonarch_libdir}/systemd/journald.conf.d/50-rtbench-persistent.conf"

FILES:${PN} += "${nonarch_libdir}/systemd/catalog/rtbench.catalog"
FILES:${PN}-rt-tests-names += "${bindir}/cyclictest ${bindir}/pmqtest"
FILES:${PN}-monitor += "${systemd_system_unitdir}/rtbench-monitor.service ${sysconfdir}/init.d/rtbench-monitor"
FILES:${PN}-zsh-completion += "${datadir}/zsh"
FILES:${PN}-fish-completion += "${datadir}/fish"
CONFFILES:${PN} = "${sysconfdir}/rtbench/rtbench.toml"

RDEPENDS:${PN}-rt-tests-names = "${PN}"
RDEPENDS:${PN}-monitor = "${PN}"
# The SysV init scripts send rtbench's output to syslog with logger(1).
RDEPENDS:${PN} += "${@bb.utils.contains('DISTRO_FEATURES', 'sysvinit', 'util-linux-logger', '', d)}"
RCONFLICTS:${PN}-rt-tests-names = "rt-tests"

# No RRECOMMENDS: rtbench needs nothing at run time beyond libc and, with SysV
# init, logger (its load generators are built in, stress-ng is only used when the
# configuration names it). rtbench-image adds rt-tests for cross-checks with
# cyclictest.

# ptest (DISTRO_FEATURES ptest; IMAGE_FEATURES ptest-pkgs): files/run-ptest drives
# the installed rtbench (measurement, pmq, pipe, tune check, a 2 s self-test in
# check mode, report, plot) and prints one PASS:/FAIL:/SKIP: line per test for
# ptest-runner. It writes only below a temporary directory and needs a POSIX sh,
# grep, sed, cut, tail and mktemp (busybox has them).

import os

import infra.basetest


class TestRtbench(infra.basetest.BRTest):
    # An ARMv7 glibc target with Rust (as test_rust.py), BusyBox init and
    # the self-test's init script installed but not started at boot.
    config = \
        """
        BR2_arm=y
        BR2_cortex_a9=y
        BR2_ARM_ENABLE_NEON=y
        BR2_ARM_ENABLE_VFP=y
        BR2_TOOLCHAIN_EXTERNAL=y
        BR2_TARGET_GENERIC_GETTY_PORT="ttyAMA0"
        BR2_TARGET_ROOTFS_CPIO=y
        # BR2_TARGET_ROOTFS_TAR is not set
        BR2_PACKAGE_RTBENCH=y
        """

    def test_run(self):
        cpio_file = os.path.join(self.builddir, "images", "rootfs.cpio")
        self.emulator.boot(arch="armv7",
                           kernel="builtin",
                           options=["-initrd", cpio_file])
        self.emulator.login()

        # As for rt-tests (test_rt_tests.py), real-time properties cannot
        # be tested in an emulator: short runs of each measurement, which
        # must succeed, and a self-test that must store a passing verdict
        # with limits no emulated target misses. The builtin kernel is not
        # PREEMPT_RT, hence require_preempt_rt = false.
        test_cmds = [
            "rtbench --version",
            "rtbench cyclic -m -S -p 80 -i 1000 -l 200 -q",
            "rtbench pmq -S -p 80 -i 1000 -l 100 -q",
            "rtbench pipe -S -p 80 -i 1000 -l 100 -q",
            "rtbench config check /etc/rtbench/rtbench.toml",
        ]
        for cmd in test_cmds:
            self.assertRunOk(cmd, timeout=60)

        # "tune check" compares the live system with the configuration:
        # deviations (exit 1) are the system's, not a failure.
        _, exit_code = self.emulator.run("rtbench tune check")
        self.assertIn(exit_code, [0, 1])

        conf = [
            "[selftest]",
            "mode = \\\"off\\\"",
            "duration = \\\"2s\\\"",
            "require_preempt_rt = false",
            "[limits]",
            "max_us = 10000000",
            "[output]",
            "results_dir = \\\"/tmp/rtbench\\\"",
        ]
        self.assertRunOk("printf '%s\\n' {} > /tmp/rtbench.toml".format(
            " ".join("\"{}\"".format(line) for line in conf)))
        self.assertRunOk("rtbench selftest --config /tmp/rtbench.toml "
                         "--log-format logfmt", timeout=120)
        out, exit_code = self.emulator.run(
            "rtbench report --config /tmp/rtbench.toml")
        self.assertEqual(exit_code, 0)
        self.assertIn("self-test PASS", "\n".join(out))

        # The init script is installed for enabling by hand
        # (BR2_PACKAGE_RTBENCH_AUTOSTART is not set).
        self.assertRunOk("test -x /usr/share/rtbench/S95rtbench")
        self.assertRunOk("test ! -e /etc/init.d/S95rtbench")

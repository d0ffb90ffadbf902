#
# SPDX-License-Identifier: MIT
#
# Runtime tests of rtbench on a booted image (testimage; modelled on oe-core's
# meta/lib/oeqa/runtime/cases/rt.py). They start the boot self-test the way the
# image starts it (rtbench.service, or /etc/init.d/rtbench on SysV init) and check
# what it leaves: the unit's exit status, the verdict in the journal, in the
# results store and in `rtbench report`, and that they agree. No test asserts a
# latency or a passing verdict: a QEMU target under emulation may well miss the
# limits of its /etc/rtbench/rtbench.toml. rtbench's repository runs the same checks
# on an emulated Debian guest (tests/vm/selftest-boot-test.sh), and both run the
# package's ptest (files/run-ptest of the recipe), whose every line must be PASS.
#
#   IMAGE_CLASSES += "testimage"     (rtbench-image adds an ssh server then)
#   bitbake rtbench-image -c testimage

import json

from oeqa.runtime.case import OERuntimeTestCase
from oeqa.core.decorator.depends import OETestDepends
from oeqa.runtime.decorator.package import OEHasPackage

# MESSAGE_IDs of rtbench's journal entries (src/report/journal/mod.rs).
SUMMARY_ID = "7b1dd0eea94d4cc4bd8f9e6c91b6465d"
PER_CPU_ID = "b338a16c561342608e6e5ef41b0a0813"
# `rtbench selftest` exit status -> verdict outcome (rtbench selftest --help).
VERDICT_OF_EXIT = {0: "pass", 1: ("fail", "unjudged")}


class RtbenchTest(OERuntimeTestCase):
    """rtbench's boot self-test on the target."""

    def run_ok(self, cmd, timeout=None):
        status, output = self.target.run(cmd, timeout=timeout)
        self.assertEqual(status, 0, msg="%s: exit %d\n%s" % (cmd, status, output))
        return output

    def systemd(self):
        status, _ = self.target.run("test -d /run/systemd/system")
        return status == 0

    @OETestDepends(['ssh.SSHTest.test_ssh'])
    @OEHasPackage(['rtbench'])
    def test_rtbench_installed(self):
        """The binary runs, the configuration the self-test reads is valid."""
        self.run_ok("rtbench --version")
        self.run_ok("rtbench config check /etc/rtbench/rtbench.toml")

    @OETestDepends(['rtbench.RtbenchTest.test_rtbench_installed'])
    def test_rtbench_selftest(self):
        """Start the self-test as the image does and check unit, journal, results, report."""
        if self.systemd():
            # Type=notify: start returns at READY=1 (tuned); wait for the run to end.
            self.target.run("systemctl start rtbench.service", timeout=600)
            self.run_ok("for i in $(seq 600); do s=$(systemctl show -P ActiveState rtbench.service); "
                        "[ \"$s\" = activating ] || [ \"$s\" = active ] || break; sleep 1; done",
                        timeout=660)
            show = self.run_ok("systemctl show rtbench.service -p Type -p Result -p ExecMainStatus")
            fields = dict(line.split("=", 1) for line in show.splitlines() if "=" in line)
            self.assertEqual(fields.get("Type"), "notify", msg=show)
            status = int(fields.get("ExecMainStatus", "-1"))
            self.assertEqual(fields.get("Result"), "success" if status == 0 else "exit-code", msg=show)
            # The summary entry and one per-CPU entry per online CPU, from this boot.
            summary = self.journal(SUMMARY_ID)
            self.assertTrue(summary, msg="no summary entry (MESSAGE_ID=%s)" % SUMMARY_ID)
            journal_verdict = summary[-1].get("RTBENCH_VERDICT")
            per_cpu = self.journal(PER_CPU_ID)
            cpus = {e.get("RTBENCH_CPU") for e in per_cpu if e.get("RTBENCH_TEST") == "cyclic"}
            online = int(self.run_ok("getconf _NPROCESSORS_ONLN").strip())
            self.assertEqual(len(cpus), online, msg="per-CPU cyclic entries for CPUs %s, %d online" % (sorted(cpus), online))
            for e in per_cpu:
                for f in ("RTBENCH_MAX_NS", "RTBENCH_P99_NS", "RTBENCH_P999_NS"):
                    self.assertTrue(str(e.get(f, "")).isdigit(), msg="%s in %s" % (f, e))
        else:
            # SysV init: the script in the foreground (RTBENCH_WAIT=yes) returns the
            # self-test's exit status; its lines go to syslog.
            status, output = self.target.run("RTBENCH_WAIT=yes /etc/init.d/rtbench start", timeout=660)
            self.assertIn("rtbench", output)
            journal_verdict = None
        self.assertIn(status, VERDICT_OF_EXIT, msg="self-test exit status %d" % status)

        # The results store and `rtbench report` name the same verdict.
        report = json.loads(self.run_ok("rtbench report --json"))
        outcome = report.get("verdict", {}).get("outcome")
        expected = VERDICT_OF_EXIT[status]
        self.assertIn(outcome, expected if isinstance(expected, tuple) else (expected,),
                      msg="report says %s, the self-test exited %d" % (outcome, status))
        if journal_verdict is not None:
            self.assertEqual(journal_verdict, outcome, msg="journal and results disagree")
        text_status, text = self.target.run("rtbench report")
        self.assertEqual(text_status == 0, outcome == "pass", msg=text)
        self.assertIn("this boot", text)

    @OETestDepends(['rtbench.RtbenchTest.test_rtbench_installed'])
    @OEHasPackage(['rtbench-ptest'])
    def test_rtbench_ptest(self):
        """The package's ptest: every line PASS (or SKIP), none FAIL."""
        status, output = self.target.run("/usr/lib/rtbench/ptest/run-ptest", timeout=600)
        lines = [line for line in output.splitlines() if line.split(":")[0] in ("PASS", "FAIL", "SKIP")]
        self.assertTrue(lines, msg=output)
        self.assertFalse([line for line in lines if line.startswith("FAIL:")], msg=output)
        self.assertEqual(status, 0, msg=output)

    def journal(self, message_id):
        """This boot's entries with MESSAGE_ID, as dicts (journalctl -o json)."""
        output = self.run_ok("journalctl -b -o json --no-pager MESSAGE_ID=%s" % message_id)
        return [json.loads(line) for line in output.splitlines() if line.startswith("{")]

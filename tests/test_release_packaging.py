"""Tests for scripts/release-packaging.py (run: python3 -m unittest discover -s tests -p 'test_*.py').

Each test copies the repository's real packaging files, Cargo.toml, Cargo.lock and src/
into a temporary git repository, changes one thing, and runs the script there
(`cargo metadata --offline` reads the crates cargo has already fetched).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
COPY = ["Cargo.toml", "Cargo.lock", "src", "meta-rtbench", "buildroot-package", "LICENSE-MIT", "LICENSE-APACHE"]
RECIPE = "meta-rtbench/recipes-rt/rtbench/rtbench_{}.bb"
MK = "buildroot-package/package/rtbench/rtbench.mk"
HASH = "buildroot-package/package/rtbench/rtbench.hash"


def cargo_version():
    with open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8") as f:
        return re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)


class ReleasePackagingTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rtbench-release-test-")
        os.makedirs(os.path.join(self.tmp, "scripts"))
        for script in ("release-packaging.py", "gen-crates-inc.py"):
            shutil.copy(os.path.join(ROOT, "scripts", script), os.path.join(self.tmp, "scripts"))
        for item in COPY:
            src, dst = os.path.join(ROOT, item), os.path.join(self.tmp, item)
            (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, dst)
        self.git("init", "-q")
        self.git("add", "-A")
        self.git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "tree")
        self.version = cargo_version()
        self.recipe = RECIPE.format(self.version)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def git(self, *args):
        subprocess.run(["git", "-C", self.tmp, *args], check=True, capture_output=True)

    def run_script(self, *args):
        p = subprocess.run([sys.executable, os.path.join(self.tmp, "scripts", "release-packaging.py"), *args],
                           capture_output=True, text=True, check=False)
        return p.returncode, p.stdout + p.stderr

    def edit(self, path, old, new):
        full = os.path.join(self.tmp, path)
        with open(full, encoding="utf-8") as f:
            text = f.read()
        self.assertIn(old, text, f"{path} no longer contains {old!r}: update the test")
        with open(full, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))

    def test_repository_state_passes(self):
        rc, out = self.run_script("check")
        self.assertEqual(rc, 0, out)
        self.assertIn("not tagged yet", out)

    def test_version_bump_without_packaging_is_reported(self):
        self.edit("Cargo.toml", f'version = "{self.version}"', 'version = "9.8.7"')
        self.edit("Cargo.lock", f'name = "rtbench"\nversion = "{self.version}"', 'name = "rtbench"\nversion = "9.8.7"')
        rc, out = self.run_script("check")
        self.assertEqual(rc, 1, out)
        self.assertIn("expected rtbench_9.8.7.bb", out)
        self.assertIn("RTBENCH_VERSION is not v9.8.7", out)
        self.assertIn("rtbench-v9.8.7-git4-cargo4.tar.gz", out)

    def test_missing_lts_hash_line_is_reported(self):
        self.edit(HASH, f"  rtbench-v{self.version}-git4-cargo4.tar.gz\n", "  rtbench-other.tar.gz\n")
        rc, out = self.run_script("check")
        self.assertEqual(rc, 1, out)
        self.assertIn("rtbench.hash: source lines", out)

    def test_homepage_that_is_not_the_repository_is_reported(self):
        self.edit(self.recipe, 'HOMEPAGE = "https://git.example.org/rtbench"', 'HOMEPAGE = "https://example.com/x"')
        rc, out = self.run_script("check")
        self.assertEqual(rc, 1, out)
        self.assertIn("HOMEPAGE is not", out)

    def test_licence_list_missing_a_crate_is_reported(self):
        self.edit(MK, "MIT (crates memchr, ", "MIT (crates ")
        rc, out = self.run_script("check")
        self.assertEqual(rc, 1, out)
        self.assertIn("RTBENCH_LICENSE = MIT or Apache-2.0 (rtbench), MIT (crates memchr,", out)

    def test_tag_then_set_fills_srcrev_and_leaves_only_the_hashes(self):
        self.git("tag", f"v{self.version}")
        commit = subprocess.run(["git", "-C", self.tmp, "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
        rc, out = self.run_script("check")
        self.assertEqual(rc, 1, out)
        self.assertIn(f"is not the commit of tag v{self.version}", out)
        self.edit("Cargo.toml", 'repository = "https://git.example.org/rtbench"',
                  'repository = "https://git.vendor.example/bsp/rtbench"')
        rc, out = self.run_script("set")
        self.assertEqual(rc, 0, out)
        with open(os.path.join(self.tmp, self.recipe), encoding="utf-8") as f:
            recipe = f.read()
        self.assertIn(f'SRCREV = "{commit}"', recipe)
        self.assertIn('SRC_URI = "git://git.vendor.example/bsp/rtbench.git;protocol=https;', recipe)
        self.assertIn('BUGTRACKER = "https://git.vendor.example/bsp/rtbench/issues"', recipe)
        with open(os.path.join(self.tmp, MK), encoding="utf-8") as f:
            self.assertIn("RTBENCH_SITE = https://git.vendor.example/bsp/rtbench.git", f.read())
        rc, out = self.run_script("check")
        self.assertEqual(rc, 1, out)
        problems = [l for l in out.splitlines() if l.startswith("release-packaging: ") and "problems" not in l]
        self.assertEqual(len(problems), 1, out)
        self.assertIn("hashes are placeholders", problems[0])

    def fake_buildroot(self, suffix):
        """A directory that answers `make rtbench-source` as a Buildroot whose cargo format is
        SUFFIX would (BR_FMT_VERSION_cargo), with a tarball of its own content."""
        br = tempfile.mkdtemp(prefix="fake-buildroot-", dir=self.tmp)
        os.makedirs(os.path.join(br, "package"))
        with open(os.path.join(br, "package", "pkg-download.mk"), "w", encoding="utf-8") as f:
            f.write(f"BR_FMT_VERSION_cargo = {suffix}\n")
        with open(os.path.join(br, "Makefile"), "w", encoding="utf-8") as f:
            f.write("qemu_aarch64_virt_rtbench_defconfig:\n\ttest -d $(BR2_EXTERNAL)/package/rtbench\n"
                    "rtbench-source:\n\tmkdir -p $(BR2_DL_DIR)/rtbench\n"
                    f"\techo $(RTBENCH_SITE) $(RTBENCH_VERSION) {suffix} > "
                    f"$(BR2_DL_DIR)/rtbench/rtbench-$(RTBENCH_VERSION)-git4{suffix}.tar.gz\n")
        return br

    def test_one_set_command_fills_every_placeholder(self):
        # docs/RELEASING.md: after the tag, one `set` with a tree of each supported Buildroot
        # fills SRC_URI's host, SRCREV, HOMEPAGE/BUGTRACKER, the Buildroot version, site and
        # every hash line, and regenerates the crates list; `check` then finds nothing.
        self.git("tag", f"v{self.version}")
        self.edit("Cargo.toml", 'repository = "https://git.example.org/rtbench"',
                  'repository = "https://git.vendor.example/bsp/rtbench"')
        trees = []
        for suffix in ("-cargo4", "-cargo5", "-cargo6"):
            trees += ["--buildroot", self.fake_buildroot(suffix)]
        rc, out = self.run_script("set", *trees)
        self.assertEqual(rc, 0, out)
        rc, out = self.run_script("check")
        self.assertEqual(rc, 0, out)
        with open(os.path.join(self.tmp, HASH), encoding="utf-8") as f:
            self.assertNotIn("0" * 64, f.read())
        for path in (self.recipe, "meta-rtbench/recipes-rt/images/rtbench-image.bb",
                     "meta-rtbench/recipes-rt/packagegroups/packagegroup-rtbench.bb"):
            with open(os.path.join(self.tmp, path), encoding="utf-8") as f:
                text = f.read()
            self.assertNotIn("git.example.org", text, path)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Release data of the Yocto recipe and the Buildroot package, in step with Cargo.toml/Cargo.lock.

What a release changes in meta-rtbench/ and buildroot-package/ (docs/RELEASING.md):

  recipe rtbench_<version>.bb   file name = Cargo.toml version; SRC_URI = the repository
                                (git://HOST/PATH.git;protocol=https) with tag=v${PV} (added on
                                bitbake >= 2.10); SRCREV = the tag's commit; HOMEPAGE,
                                BUGTRACKER (also in rtbench-image.bb)
  rtbench.mk                    RTBENCH_VERSION = v<version>, RTBENCH_SITE = the repository
  rtbench.hash                  sha256 of rtbench-v<version>-git4-cargoN.tar.gz, one line per
                                supported Buildroot (BUILDROOTS below), as that Buildroot
                                makes it (`make rtbench-source`: git tarball + `cargo vendor`)
  Config.in                     the repository address in the help text
  licences                      the recipe's LICENSE comment and RTBENCH_LICENSE name the linked
                                crates that offer MIT but no Apache-2.0 (from `cargo metadata`,
                                i.e. Cargo.lock); a linked crate that does not offer MIT fails

The repository address comes from Cargo.toml (`repository`); the version from Cargo.toml.

Usage:
  scripts/release-packaging.py check
      CI: exit 1 with one line per field that disagrees with Cargo.toml/Cargo.lock.
      Before the tag v<version> exists, SRCREV and the tarball hashes may be placeholders
      (zeros); once it exists they must be the release's.
  scripts/release-packaging.py set [--srcrev SHA] [--buildroot DIR ...] [--site URL-OR-PATH]
      Fill the fields for the tag v<version> (SRCREV defaults to the tag's commit in this
      repository). With --buildroot (a Buildroot source tree, once per supported release),
      download and vendor the release with that Buildroot and write its hash line; this
      needs what any Buildroot download needs (network for host-rustc and the crates).
      --site makes Buildroot fetch from a local clone or mirror instead of the repository
      address (the tarball is the same: Buildroot archives the tagged tree).

Exit status: 0 ok, 1 a check failed, 2 bad usage or input.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECIPE_DIR = os.path.join(ROOT, "meta-rtbench", "recipes-rt", "rtbench")
IMAGE = os.path.join(ROOT, "meta-rtbench", "recipes-rt", "images", "rtbench-image.bb")
PACKAGEGROUP = os.path.join(ROOT, "meta-rtbench", "recipes-rt", "packagegroups", "packagegroup-rtbench.bb")
# The layer's other recipes that name the project (HOMEPAGE, BUGTRACKER).
OTHER_RECIPES = (IMAGE, PACKAGEGROUP)
PKG_DIR = os.path.join(ROOT, "buildroot-package", "package", "rtbench")
MK = os.path.join(PKG_DIR, "rtbench.mk")
HASH = os.path.join(PKG_DIR, "rtbench.hash")
CONFIG_IN = os.path.join(PKG_DIR, "Config.in")

# Supported Buildroot releases and the cargo suffix of their vendored tarballs
# (BR_FMT_VERSION_cargo in package/pkg-download.mk of each).
BUILDROOTS = [
    ("2026.02.x (LTS)", "-cargo4"),
    ("2026.05.x", "-cargo5"),
    ("2026.08 and later (master)", "-cargo6"),
]
ZERO_SHA256 = "0" * 64
ZERO_SRCREV = "0" * 40


class Problem(Exception):
    """Bad input: the message is one line naming the file and what was expected."""


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise Problem(f"{path}: cannot read: {e.strerror}") from None


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def cargo_package():
    """(version, repository) from Cargo.toml's [package]."""
    text = read(os.path.join(ROOT, "Cargo.toml"))
    m = re.search(r"^\[package\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if not m:
        raise Problem("Cargo.toml: no [package] table")
    fields = dict(re.findall(r'^(\w[\w-]*)\s*=\s*"([^"]*)"', m.group(1), re.M))
    for key in ("version", "repository"):
        if key not in fields:
            raise Problem(f'Cargo.toml: [package] has no {key} = "..."')
    repo = fields["repository"].rstrip("/")
    if not re.fullmatch(r"https://[^/\s]+/\S+", repo):
        raise Problem(f"Cargo.toml: repository = {repo!r}: expected https://HOST/PATH")
    return fields["version"], repo


def recipe_path():
    recipes = sorted(f for f in os.listdir(RECIPE_DIR) if re.fullmatch(r"rtbench_[^_]+\.bb", f))
    if len(recipes) != 1:
        raise Problem(f"{RECIPE_DIR}: expected one rtbench_<version>.bb, found {recipes}")
    return os.path.join(RECIPE_DIR, recipes[0])


def var(text, name, path, sep="="):
    """Value of the one `NAME = "value"` (bitbake) or `NAME = value` (make) line."""
    if sep == "=":
        found = re.findall(rf'^{re.escape(name)}\s*=\s*"([^"]*)"\s*$', text, re.M)
    else:
        found = re.findall(rf"^{re.escape(name)}\s*=\s*(.*?)\s*$", text, re.M)
    if len(found) != 1:
        raise Problem(f"{path}: expected one {name} assignment, found {len(found)}")
    return found[0]


def git_url(repo):
    """The recipe's SRC_URI prefix for the repository https://HOST/PATH."""
    return "git://" + repo[len("https://"):] + ".git;protocol=https"


def tag_commit(tag):
    """Commit of the tag in this repository, or None when there is no such tag."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}"],
                             capture_output=True, text=True, check=False)
    except OSError:
        return None
    return out.stdout.strip() or None


def mit_only_crates():
    """Names of the crates linked into the binary whose licence offers MIT but no Apache-2.0.

    Linked = reached from rtbench through normal dependencies (not build or dev ones),
    proc-macro crates excluded (they run in the compiler). A linked crate whose
    licence does not offer MIT is an error: the recipe's licence would be wrong.
    """
    try:
        out = subprocess.run(["cargo", "metadata", "--format-version", "1", "--locked", "--offline",
                              "--filter-platform", "x86_64-unknown-linux-gnu",
                              "--manifest-path", os.path.join(ROOT, "Cargo.toml")],
                             capture_output=True, text=True, check=False)
    except OSError as e:
        raise Problem(f"cargo metadata: {e.strerror}") from None
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        raise Problem(f"cargo metadata failed (run `cargo fetch --locked` first): {last}")
    meta = json.loads(out.stdout)
    packages = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    root = meta["resolve"]["root"]
    def proc_macro(pid):
        return any("proc-macro" in t["kind"] for t in packages[pid]["targets"])

    seen, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in seen or proc_macro(pid):
            continue
        seen.add(pid)
        for dep in nodes[pid]["deps"]:
            if any(k["kind"] is None for k in dep["dep_kinds"]):
                todo.append(dep["pkg"])
    mit_only, not_mit = set(), []
    for pid in seen - {root}:
        p = packages[pid]
        expr = p.get("license") or ""
        # Only plain choices ("A OR B", the old "A/B", "X WITH exception") are
        # understood; anything else (AND, a licence file) needs a person to read it.
        alternatives = set(re.split(r"\s+OR\s+|/", expr))
        plain = r"[A-Za-z0-9.+-]+(\s+WITH\s+[A-Za-z0-9.+-]+)?"
        if any(not re.fullmatch(plain, a) for a in alternatives) or "MIT" not in alternatives:
            not_mit.append(f"{p['name']} ({expr or 'no licence field'})")
        elif "Apache-2.0" not in alternatives:
            mit_only.add(p["name"])
    if not_mit:
        raise Problem("linked crates whose licence is not a plain choice that offers MIT "
                      "(read it, then update LICENSE, RTBENCH_LICENSE and this check): "
                      + ", ".join(sorted(not_mit)))
    return sorted(mit_only)


def expected_license_lines(crates):
    listed = ", ".join(crates)
    return (f"# Linked crates without an Apache-2.0 choice, used under MIT: {listed}.",
            f"RTBENCH_LICENSE = MIT or Apache-2.0 (rtbench), MIT (crates {listed})")


def hash_lines(text):
    """{tarball name: sha256} of the source tarball lines of rtbench.hash."""
    return {m.group(2): m.group(1)
            for m in re.finditer(r"^sha256  ([0-9a-f]{64})  (rtbench-\S+\.tar\.gz)$", text, re.M)}


def check():
    problems = []
    version, repo = cargo_package()
    tag = f"v{version}"
    recipe = recipe_path()
    rtext, mk, htext, ctext = read(recipe), read(MK), read(HASH), read(CONFIG_IN)

    def expect(ok, msg):
        if not ok:
            problems.append(msg)

    expect(os.path.basename(recipe) == f"rtbench_{version}.bb",
           f"{os.path.relpath(recipe, ROOT)}: expected rtbench_{version}.bb (Cargo.toml version {version})")
    src_uri = var(rtext, "SRC_URI", recipe)
    expect(src_uri.startswith(git_url(repo) + ";"),
           f"{os.path.relpath(recipe, ROOT)}: SRC_URI {src_uri!r} does not start with {git_url(repo)!r} (Cargo.toml repository)")
    expect("${RTBENCH_GIT_TAG}" in src_uri and "';tag=v' + d.getVar('PV')" in rtext,
           f"{os.path.relpath(recipe, ROOT)}: SRC_URI must name the tag v${{PV}} (RTBENCH_GIT_TAG)")
    srcrev = var(rtext, "SRCREV", recipe)
    expect(re.fullmatch(r"[0-9a-f]{40}", srcrev) is not None,
           f"{os.path.relpath(recipe, ROOT)}: SRCREV {srcrev!r}: expected 40 hex digits")
    for path, text in [(recipe, rtext)] + [(p, read(p)) for p in OTHER_RECIPES]:
        expect(var(text, "HOMEPAGE", path) == repo,
               f"{os.path.relpath(path, ROOT)}: HOMEPAGE is not {repo!r} (Cargo.toml repository)")
        expect(var(text, "BUGTRACKER", path) == repo + "/issues",
               f"{os.path.relpath(path, ROOT)}: BUGTRACKER is not {repo + '/issues'!r}")
    expect(var(mk, "RTBENCH_VERSION", MK, sep=":") == tag,
           f"buildroot-package/package/rtbench/rtbench.mk: RTBENCH_VERSION is not {tag} (Cargo.toml version)")
    expect(var(mk, "RTBENCH_SITE", MK, sep=":") == repo + ".git",
           f"buildroot-package/package/rtbench/rtbench.mk: RTBENCH_SITE is not {repo + '.git'} (Cargo.toml repository)")
    expect(re.search(rf"^\t  {re.escape(repo)}$", ctext, re.M) is not None,
           f"buildroot-package/package/rtbench/Config.in: help text does not end with {repo}")

    hashes = hash_lines(htext)
    wanted = {f"rtbench-{tag}-git4{suffix}.tar.gz" for _, suffix in BUILDROOTS}
    expect(set(hashes) == wanted,
           f"buildroot-package/package/rtbench/rtbench.hash: source lines {sorted(hashes)}, expected {sorted(wanted)}")

    commit = tag_commit(tag)
    if commit:
        expect(srcrev == commit, f"{os.path.relpath(recipe, ROOT)}: SRCREV {srcrev} is not the commit of tag {tag} ({commit}): run scripts/release-packaging.py set")
        zero = sorted(n for n, h in hashes.items() if h == ZERO_SHA256)
        expect(not zero, f"rtbench.hash: {tag} is tagged but these hashes are placeholders: {', '.join(zero)}")

    crates = mit_only_crates()
    comment, br_license = expected_license_lines(crates)
    expect(var(rtext, "LICENSE", recipe) == "(MIT | Apache-2.0) & MIT",
           f"{os.path.relpath(recipe, ROOT)}: LICENSE is not \"(MIT | Apache-2.0) & MIT\"")
    expect(comment in rtext, f"{os.path.relpath(recipe, ROOT)}: expected the comment line {comment!r}")
    expect(re.search(rf"^{re.escape(br_license)}$", mk, re.M) is not None,
           f"buildroot-package/package/rtbench/rtbench.mk: expected {br_license!r}")

    for p in problems:
        print(f"release-packaging: {p}", file=sys.stderr)
    state = f"tag {tag} at {commit[:12]}" if commit else f"{tag} not tagged yet: SRCREV and hashes may be placeholders"
    if problems:
        print(f"release-packaging: {len(problems)} problems ({state})")
        return 1
    print(f"release-packaging: recipe and Buildroot package agree with Cargo.toml {version} and Cargo.lock "
          f"({state}; MIT-only linked crates: {', '.join(crates)})")
    return 0


def sub(text, pattern, repl, path, count=1):
    new, n = re.subn(pattern, repl, text, flags=re.M)
    if n != count:
        raise Problem(f"{os.path.relpath(path, ROOT)}: expected {count} match(es) of {pattern!r}, found {n}")
    return new


def buildroot_hash(br, tag, site):
    """(tarball name, sha256) of the vendored release tarball as Buildroot tree BR makes it."""
    fmt = read(os.path.join(br, "package", "pkg-download.mk"))
    m = re.search(r"^BR_FMT_VERSION_cargo\s*=\s*(\S+)", fmt, re.M)
    if not m:
        raise Problem(f"{br}/package/pkg-download.mk: no BR_FMT_VERSION_cargo")
    name = f"rtbench-{tag}-git4{m.group(1)}.tar.gz"
    with tempfile.TemporaryDirectory(prefix="rtbench-release-") as work:
        # An external tree without the tarball lines: the download must not be
        # checked against the old (placeholder) hash.
        ext = os.path.join(work, "external")
        shutil.copytree(os.path.join(ROOT, "buildroot-package"), ext)
        hfile = os.path.join(ext, "package", "rtbench", "rtbench.hash")
        write(hfile, "".join(l for l in read(hfile).splitlines(True) if "rtbench-" not in l or l.startswith("#")))
        out, dl = os.path.join(work, "output"), os.path.join(work, "dl")
        make = ["make", "-C", br, f"O={out}", f"BR2_EXTERNAL={ext}", f"BR2_DL_DIR={dl}"]
        for args in (["qemu_aarch64_virt_rtbench_defconfig"],
                     ["rtbench-source", f"RTBENCH_VERSION={tag}", f"RTBENCH_SITE={site}"]):
            run = subprocess.run(make + args, capture_output=True, text=True, check=False)
            if run.returncode != 0:
                tail = " | ".join(run.stdout.strip().splitlines()[-3:] + run.stderr.strip().splitlines()[-3:])
                raise Problem(f"{br}: make {args[0]} failed: {tail}")
        tarball = os.path.join(dl, "rtbench", name)
        if not os.path.exists(tarball):
            raise Problem(f"{br}: make rtbench-source made no {name}")
        with open(tarball, "rb") as f:
            return name, hashlib.sha256(f.read()).hexdigest()


def set_release(args):
    version, repo = cargo_package()
    tag = f"v{version}"
    srcrev = args.srcrev or tag_commit(tag)
    if not srcrev or not re.fullmatch(r"[0-9a-f]{40}", srcrev):
        raise Problem(f"no commit for {tag}: tag the release (git tag -a {tag}) or pass --srcrev SHA")
    recipe = recipe_path()
    want = os.path.join(RECIPE_DIR, f"rtbench_{version}.bb")
    if recipe != want:
        subprocess.run(["git", "-C", ROOT, "mv", recipe, want], check=True)
        recipe = want
    rtext = read(recipe)
    rtext = sub(rtext, r'^SRC_URI = "git://[^;"]*;protocol=https;', f'SRC_URI = "{git_url(repo)};', recipe)
    rtext = sub(rtext, r'^SRCREV = "[^"]*"$', f'SRCREV = "{srcrev}"', recipe)
    crates = mit_only_crates()
    comment, br_license = expected_license_lines(crates)
    rtext = sub(rtext, r"^# Linked crates without an Apache-2.0 choice, .*$", comment, recipe)
    for path in (recipe,) + OTHER_RECIPES:
        text = rtext if path == recipe else read(path)
        text = sub(text, r'^HOMEPAGE = "[^"]*"$', f'HOMEPAGE = "{repo}"', path)
        text = sub(text, r'^BUGTRACKER = "[^"]*"$', f'BUGTRACKER = "{repo}/issues"', path)
        write(path, text)
    mk = read(MK)
    mk = sub(mk, r"^RTBENCH_VERSION = .*$", f"RTBENCH_VERSION = {tag}", MK)
    mk = sub(mk, r"^RTBENCH_SITE = .*$", f"RTBENCH_SITE = {repo}.git", MK)
    mk = sub(mk, r"^RTBENCH_LICENSE = .*$", br_license, MK)
    write(MK, mk)
    write(CONFIG_IN, sub(read(CONFIG_IN), r"^\t  https://\S+$", f"\t  {repo}", CONFIG_IN))

    htext = read(HASH)
    # Rename the tarball lines to the new version; a Buildroot given here replaces its hash.
    htext = re.sub(r"^sha256  [0-9a-f]{64}  rtbench-v[^-]+(-git4-cargo\d+\.tar\.gz)$",
                   lambda m: f"sha256  {ZERO_SHA256}  rtbench-{tag}{m.group(1)}", htext, flags=re.M)
    for br in args.buildroot:
        name, sha = buildroot_hash(os.path.abspath(br), tag, args.site or repo + ".git")
        htext = sub(htext, rf"^sha256  [0-9a-f]{{64}}  {re.escape(name)}$", f"sha256  {sha}  {name}", HASH)
        print(f"release-packaging: {name} {sha} ({br})")
    write(HASH, htext)
    # The crates list of the recipe, from Cargo.lock (what `bitbake -c update_crates` writes).
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen-crates-inc.py")], check=True)
    print(f"release-packaging: {tag} filled in (SRCREV {srcrev[:12]}); now run: scripts/release-packaging.py check")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    cmd = parser.add_subparsers(dest="cmd", required=True)
    cmd.add_parser("check", help="CI: the packaging's release data agree with Cargo.toml/Cargo.lock")
    s = cmd.add_parser("set", help="fill the release data for the tag v<Cargo.toml version>")
    s.add_argument("--srcrev", help="commit of the release (default: the tag's)")
    s.add_argument("--buildroot", action="append", default=[], metavar="DIR",
                   help="Buildroot source tree whose vendored tarball hash to compute (repeat per release)")
    s.add_argument("--site", help="where Buildroot fetches the tag from (default: the repository address)")
    args = parser.parse_args()
    try:
        return check() if args.cmd == "check" else set_release(args)
    except Problem as e:
        print(f"release-packaging: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

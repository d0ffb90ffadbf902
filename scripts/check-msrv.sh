#!/usr/bin/env bash
# check-msrv.sh — check, without a Rust 1.75 toolchain, that the locked dependency graph
# can still be built by Rust/Cargo 1.75 (Yocto scarthgap's Rust).
#
# What it checks (each offence is one line "MSRV: <crate> <version>: <why>"):
#   * Cargo.lock is `version = 3` (or older): cargo 1.75 cannot read lock version 4.
#   * Cargo.lock is in sync with Cargo.toml (`cargo metadata --locked`).
#   * the root package's own rust-version is exactly $MSRV, so clippy's incompatible_msrv
#     lint (run by `cargo clippy --all-targets -- -D warnings`) checks std API use
#     against the right release. That lint is not duplicated here.
#   * every package in Cargo.lock (all platforms, dev-dependencies included) declares
#     rust-version <= $MSRV, or none (listed as a note: such crates are covered only by
#     the other checks).
#   * no package or target uses edition 2024 (needs 1.85), and no manifest sets
#     `resolver = "3"` (needs 1.84); cargo 1.75 refuses both when it parses the manifest.
#
# Usage: bash scripts/check-msrv.sh          Env: RTBENCH_MSRV (default 1.75)
# Exit:  0 ok; 1 some package does not fit; 2 the check itself could not run.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MSRV=${RTBENCH_MSRV:-1.75}
cd "$ROOT"

command -v python3 >/dev/null || { echo "check-msrv: python3 is required" >&2; exit 2; }
meta=$(mktemp); trap 'rm -f "$meta"' EXIT
if ! cargo metadata --format-version 1 --locked >"$meta" 2>"$meta.err"; then
  echo "MSRV: Cargo.lock: \`cargo metadata --locked\` failed (lock file out of date or unreadable):" >&2
  sed 's/^/  /' "$meta.err" >&2; rm -f "$meta.err"
  exit 1
fi
rm -f "$meta.err"

exec python3 - "$MSRV" "$meta" "$ROOT/Cargo.lock" <<'PY'
import json, re, sys, tomllib

msrv_s, meta_path, lock_path = sys.argv[1:4]

def ver(s):
    """'1.75' / '1.75.0' -> (1, 75, 0); rust-version has no pre-release part."""
    parts = [int(p) for p in s.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))

msrv = ver(msrv_s)
bad, notes = [], []

with open(lock_path, "rb") as f:
    lock = tomllib.load(f)
lock_version = lock.get("version", 1)  # v1/v2 lock files have no version key
if lock_version > 3:
    bad.append(f"Cargo.lock: lock file version = {lock_version}; cargo {msrv_s} reads only versions 1-3 "
               f"(regenerate with cargo {msrv_s} or keep `version = 3`)")

with open(meta_path) as f:
    meta = json.load(f)
pkgs = meta["packages"]
root_ids = set(meta.get("workspace_members", []))

locked = {(p["name"], p["version"]) for p in lock.get("package", [])}
seen = {(p["name"], p["version"]) for p in pkgs}
for name, v in sorted(locked - seen):
    bad.append(f"{name} {v}: in Cargo.lock but not in `cargo metadata` (cannot check it)")

resolver3 = re.compile(r'^\s*resolver\s*=\s*["\']3["\']', re.M)
for p in sorted(pkgs, key=lambda p: (p["name"], p["version"])):
    who = f'{p["name"]} {p["version"]}'
    rv = p.get("rust_version")
    if p["id"] in root_ids:
        if rv is None or ver(rv) != msrv:
            bad.append(f"{who}: own rust-version is {rv!r}, expected {msrv_s!r} (clippy's incompatible_msrv "
                       "lint checks against it)")
    elif rv is None:
        notes.append(who)
    elif ver(rv) > msrv:
        bad.append(f"{who}: rust-version = {rv} > {msrv_s} (pin an older version: "
                   f"cargo update -p {p['name']}@{p['version']} --precise <older>)")
    editions = {p["edition"]} | {t["edition"] for t in p.get("targets", [])}
    for e in sorted(editions):
        if e.isdigit() and int(e) >= 2024:
            bad.append(f"{who}: edition = \"{e}\" (needs Rust 1.85; cargo {msrv_s} cannot parse the manifest)")
    try:
        with open(p["manifest_path"], encoding="utf-8") as f:
            if resolver3.search(f.read()):
                bad.append(f"{who}: resolver = \"3\" in {p['manifest_path']} (needs cargo 1.84)")
    except OSError as e:
        bad.append(f"{who}: cannot read manifest {p['manifest_path']}: {e}")

for line in bad:
    print(f"MSRV: {line}", file=sys.stderr)
print(f"check-msrv: {len(pkgs)} packages, Cargo.lock version {lock_version}, MSRV {msrv_s}: "
      f"{'FAILED, ' + str(len(bad)) + ' problem(s)' if bad else 'ok'}")
if notes:
    print(f"check-msrv: note: {len(notes)} crate(s) declare no rust-version (not checkable here): "
          + ", ".join(notes))
sys.exit(1 if bad else 0)
PY

#!/usr/bin/env bash
# cross-test.sh — build rtbench release binaries for the boards and run the
# unit tests (`cargo test --lib`) under qemu-user, on Debian 12 (bookworm) x86_64 as root.
#
#   aarch64-unknown-linux-gnu       RK3588, i.MX93
#   armv7-unknown-linux-gnueabihf   RK3506
#
# Toolchain: Debian's rustc-web/cargo-web (bookworm-security) plus the target std rlibs
# from the *same* source version of libstd-rust-web-dev:{arm64,armhf}. rustup cannot add
# targets on these machines, and a rustc of another version rejects those rlibs (E0514),
# so everything here runs /usr/bin/cargo with RUSTC=/usr/bin/rustc; the rustup toolchains
# are not touched. The foreign std .debs are fetched from the archive apt already uses
# and unpacked into /usr/lib/rustlib/<triple> (no dpkg multiarch: it would pull ~20
# foreign runtime libraries and break when amd64/arm security versions differ).
# Download trust chain: InRelease signature (gpgv, Debian archive keyring, Valid-Until)
# -> sha256+size of the Packages index -> sha256+size of the .deb.
# Linker and qemu runner per target come from .cargo/config.toml.
#
# Idempotent: a second run installs nothing and only rebuilds what changed.
#
# Usage:  bash scripts/cross-test.sh
# Env:    CARGO_TARGET_DIR                  build dir (default <repo>/target/cross-debian; kept apart
#                                           from the host build because the compiler differs)
#         RTBENCH_CROSS_TARGETS             space-separated subset of the two triples
#         RTBENCH_CROSS_UNVERIFIED_INDEX=allow
#                                           proceed (with a warning) when the mirror's Packages index
#                                           for an arch does not match the signed InRelease. The .deb
#                                           is then only checked against that unsigned index.
#         RTBENCH_CROSS_TEST_TIMEOUT        seconds per `cargo test` run (default 1200)
#         RTBENCH_CROSS_UNIT_TESTS          space-separated triples whose unit tests run under
#                                           qemu-user (default: every built target); CI runs
#                                           armv7's only (32-bit usize and time_t, where x86_64
#                                           and aarch64 differ from it): aarch64's release build
#                                           is still made and booted by the boot test
# Exit:   0 all builds and unit tests passed; 1 a target std install, build or test failed;
#         2 host setup failed (not root, not bookworm amd64, apt, missing runner config).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ALL_TARGETS="aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf"
TARGETS=${RTBENCH_CROSS_TARGETS:-$ALL_TARGETS}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target/cross-debian}
TEST_TIMEOUT=${RTBENCH_CROSS_TEST_TIMEOUT:-1200}
UNIT_TESTS=${RTBENCH_CROSS_UNIT_TESTS:-$ALL_TARGETS}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
export DEBIAN_FRONTEND=noninteractive

debian_arch() { case $1 in aarch64-*) echo arm64 ;; armv7-*) echo armhf ;; *) return 1 ;; esac; }
gnu_triple() { case $1 in aarch64-*) echo aarch64-linux-gnu ;; armv7-*) echo arm-linux-gnueabihf ;; *) return 1 ;; esac; }

T_START=$(date +%s)
SUMMARY=()
log() { printf '[cross-test +%4ss] %s\n' "$(($(date +%s) - T_START))" "$*" >&2; }
die() { log "ERROR: $*"; exit 2; }
# record LABEL T0 RC : add "LABEL  Ns  ok|FAILED" to the summary.
record() {
  SUMMARY+=("$(printf '%-52s %4ss  %s' "$1" "$(($(date +%s) - $2))" "$([ "$3" = 0 ] && echo ok || echo "FAILED (exit $3)")")")
}
# timed LABEL CMD... : run CMD, record it, return its status.
timed() {
  local label=$1 t0 rc=0; shift
  t0=$(date +%s)
  "$@" || rc=$?
  record "$label" "$t0" "$rc"
  return $rc
}

[ "$(id -u)" = 0 ] || die "run as root (installs packages and writes /usr/lib/rustlib)"
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] || die "needs an amd64 Debian host"
grep -qs '^VERSION_CODENAME=bookworm' /etc/os-release || die "needs Debian 12 (bookworm)"
for t in $TARGETS; do
  debian_arch "$t" >/dev/null || die "unsupported target '$t' (expected one of: $ALL_TARGETS)"
  grep -q "^\[target\.$t\]" "$ROOT/.cargo/config.toml" \
    || die "no [target.$t] linker/runner in $ROOT/.cargo/config.toml"
done

# ---------------------------------------------------------------------------
# 1. Host packages.
# ---------------------------------------------------------------------------
PKGS="rustc-web cargo-web gcc-aarch64-linux-gnu libc6-dev-arm64-cross
      gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user-static
      curl ca-certificates xz-utils gpgv debian-archive-keyring"
install_host_packages() {
  local p missing=()
  for p in $PKGS; do
    dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
  done
  if [ ${#missing[@]} = 0 ]; then log "host packages present"; return 0; fi
  log "apt-get update"
  apt-get -o DPkg::Lock::Timeout=600 update -qq || log "WARNING: apt-get update reported errors; trying the install anyway"
  log "apt-get install ${missing[*]}"
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
timed "setup: host packages (apt)" install_host_packages || die "apt-get install failed"

RUST_VER=$(dpkg-query -W -f='${Version}' rustc-web)   # e.g. 1.96.0+dfsg1-1~deb12u2
{ [ -x /usr/bin/cargo ] && [ -x /usr/bin/rustc ]; } || die "rustc-web/cargo-web did not provide /usr/bin/{cargo,rustc}"
log "Debian rustc-web $RUST_VER: $(/usr/bin/rustc -V)"

# ---------------------------------------------------------------------------
# 2. Target std rlibs (libstd-rust-web-dev, exactly $RUST_VER) into /usr/lib/rustlib/<triple>.
# ---------------------------------------------------------------------------
WORK=$(mktemp -d /tmp/rtbench-cross.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# Where apt got rustc-web $RUST_VER from: "<archive base URL> <suite> <component>".
archive_of_rustc() {
  apt-cache madison rustc-web | awk -F' [|] ' -v v="$RUST_VER" '
    $2 == v { split($3, a, " "); split(a[2], s, "/"); print a[1], s[1], s[2]; exit }'
}

# signed_release BASE SUITE -> path of the verified (signed part only) Release text.
signed_release() {
  local base=$1 suite=$2 out="$WORK/Release-$2" until
  [ -s "$out" ] && { echo "$out"; return 0; }
  curl -fsS --retry 3 -o "$WORK/InRelease-$suite" "$base/dists/$suite/InRelease" || return 1
  gpgv --keyring "$KEYRING" --output "$out" "$WORK/InRelease-$suite" 2>"$WORK/gpgv-$suite.log" || {
    log "ERROR: InRelease signature check failed for $base/dists/$suite:"; cat "$WORK/gpgv-$suite.log" >&2; return 1; }
  until=$(sed -n 's/^Valid-Until: //p' "$out")
  if [ -n "$until" ] && [ "$(date -d "$until" +%s)" -lt "$(date +%s)" ]; then
    log "ERROR: $base/dists/$suite/InRelease expired ($until)"; return 1
  fi
  echo "$out"
}

# signed_hash RELEASE PATH -> "sha256 size" from the SHA256 section of RELEASE.
signed_hash() {
  awk -v f="$2" '/^SHA256:/ {s = 1; next} /^[^ ]/ {s = 0} s && $3 == f {print $1, $2; exit}' "$1"
}

# fetch_index BASE SUITE COMP ARCH -> path of the uncompressed Packages file, verified
# against the signed Release (tries .xz, .gz, plain, each also by-hash). Returns 3 if only
# an unverifiable index exists and RTBENCH_CROSS_UNVERIFIED_INDEX=allow (then it is used).
fetch_index() {
  local base=$1 suite=$2 comp=$3 arch=$4 rel dir name want sha size f url got
  rel=$(signed_release "$base" "$suite") || return 1
  dir="$comp/binary-$arch"
  for name in Packages.xz Packages.gz Packages; do
    want=$(signed_hash "$rel" "$dir/$name"); [ -n "$want" ] || continue
    read -r sha size <<<"$want"
    f="$WORK/$suite-$arch-$name"
    for url in "$base/dists/$suite/$dir/$name" "$base/dists/$suite/$dir/by-hash/SHA256/$sha"; do
      curl -fsS --retry 3 -o "$f" "$url" 2>/dev/null || continue
      got="$(sha256sum "$f" | cut -d' ' -f1) $(stat -c %s "$f")"
      if [ "$got" = "$sha $size" ]; then
        case $name in *.xz) xz -dc "$f" ;; *.gz) gzip -dc "$f" ;; *) cat "$f" ;; esac >"$WORK/Packages-$suite-$arch"
        echo "$WORK/Packages-$suite-$arch"; return 0
      fi
      log "index mismatch: $url is sha256/size $got, signed InRelease says $sha $size"
    done
  done
  log "no $suite/$dir Packages index on the mirror matches the signed InRelease (mirror out of sync?)"
  [ "${RTBENCH_CROSS_UNVERIFIED_INDEX:-}" = allow ] || return 1
  curl -fsS --retry 3 -o "$WORK/$suite-$arch-unverified.xz" "$base/dists/$suite/$dir/Packages.xz" || return 1
  xz -dc "$WORK/$suite-$arch-unverified.xz" >"$WORK/Packages-$suite-$arch"
  log "WARNING: RTBENCH_CROSS_UNVERIFIED_INDEX=allow: using the UNSIGNED $suite/$dir index; the .deb is checked only against it"
  echo "$WORK/Packages-$suite-$arch"; return 3
}

install_target_std() {
  local triple=$1 arch dest stamp origin base suite comp idx rc=0 trust entry file sha size deb
  arch=$(debian_arch "$triple"); dest=/usr/lib/rustlib/$triple; stamp=$dest/.rtbench-std
  if [ -f "$stamp" ] && compgen -G "$dest/lib/libstd-*.rlib" >/dev/null; then
    read -r s_ver s_trust _ <"$stamp" || true
    if [ "$s_ver" = "$RUST_VER" ] && { [ "$s_trust" = verified ] || [ "${RTBENCH_CROSS_UNVERIFIED_INDEX:-}" = allow ]; }; then
      log "$triple std $RUST_VER present ($s_trust)"; return 0
    fi
  fi
  origin=$(archive_of_rustc); [ -n "$origin" ] || { log "ERROR: apt-cache madison does not list rustc-web $RUST_VER"; return 1; }
  read -r base suite comp <<<"$origin"
  log "fetching libstd-rust-web-dev:$arch $RUST_VER from $base $suite/$comp"
  idx=$(fetch_index "$base" "$suite" "$comp" "$arch") || rc=$?
  case $rc in 0) trust=verified ;; 3) trust=unverified-index ;; *)
    log "ERROR: cannot get a verified $suite/$comp/binary-$arch index (set RTBENCH_CROSS_UNVERIFIED_INDEX=allow to accept the mirror's unsigned one)"
    return 1 ;; esac
  entry=$(awk -v v="$RUST_VER" '
    /^Package: / {p = $2; ver = f = h = s = ""}
    /^Version: / {ver = $2} /^Filename: / {f = $2} /^SHA256: / {h = $2} /^Size: / {s = $2}
    /^$/ && p == "libstd-rust-web-dev" && ver == v {print f, h, s; found = 1; exit}
    END {if (!found && p == "libstd-rust-web-dev" && ver == v) print f, h, s}' "$idx")
  [ -n "$entry" ] || { log "ERROR: libstd-rust-web-dev $RUST_VER ($arch) not in $suite/$comp"; return 1; }
  read -r file sha size <<<"$entry"
  deb="$WORK/$(basename "$file")"
  curl -fsS --retry 3 -o "$deb" "$base/$file" || { log "ERROR: download of $base/$file failed"; return 1; }
  if [ "$(sha256sum "$deb" | cut -d' ' -f1) $(stat -c %s "$deb")" != "$sha $size" ]; then
    log "ERROR: $deb does not match the index (sha256 $sha, size $size)"; return 1
  fi
  rm -rf "$WORK/x-$arch"; dpkg-deb -x "$deb" "$WORK/x-$arch"
  compgen -G "$WORK/x-$arch/usr/lib/rustlib/$triple/lib/libstd-*.rlib" >/dev/null \
    || { log "ERROR: $deb has no usr/lib/rustlib/$triple/lib/libstd-*.rlib"; return 1; }
  rm -rf "$dest.new" && cp -a "$WORK/x-$arch/usr/lib/rustlib/$triple" "$dest.new"
  echo "$RUST_VER $trust $sha $(basename "$file")" >"$dest.new/.rtbench-std"
  rm -rf "$dest" && mv "$dest.new" "$dest"
  log "installed $dest ($(du -sh "$dest" | cut -f1), index $trust, .deb sha256 $sha)"
}
FAILED=()
READY=()
for t in $TARGETS; do
  if timed "setup: $t std rlibs" install_target_std "$t"; then READY+=("$t"); else
    log "ERROR: target std for $t not installed; skipping $t (the run will fail)"; FAILED+=("setup $t")
  fi
done

# ---------------------------------------------------------------------------
# 3. Build release binaries, run unit tests under qemu-user (runner from .cargo/config.toml).
# ---------------------------------------------------------------------------
cd "$ROOT"
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
CARGO=/usr/bin/cargo
log "$($CARGO -V) / $($RUSTC -V); CARGO_TARGET_DIR=$CARGO_TARGET_DIR"

size_of() { stat -c %s "$1"; }
human() { numfmt --to=iec-i --suffix=B "$1"; }

SIZES=()
TESTS=()
for t in "${READY[@]}"; do
  gnu=$(gnu_triple "$t")
  if ! timed "build --release $t" $CARGO build --release --locked --target "$t"; then
    FAILED+=("build $t"); continue
  fi
  bin=$CARGO_TARGET_DIR/$t/release/rtbench
  # The release profile already strips; strip a copy with the target binutils to be sure.
  "$gnu-strip" -o "$WORK/rtbench-$t" "$bin"
  # build.rs links release binaries without DWARF unwind tables (build/no-unwind-tables.ld;
  # benches/README.md, "Binary size"): 270 KB of the aarch64 binary. ARM's .ARM.exidx is kept.
  sections=$("$gnu-readelf" -SW "$bin")
  if grep -qE ' \.(eh_frame|eh_frame_hdr|gcc_except_table) ' <<<"$sections"; then
    log "ERROR: the $t release binary has unwind tables (.eh_frame): build.rs did not drop them"
    FAILED+=("unwind tables $t")
  fi
  SIZES+=("$(printf '%-32s %9s bytes (%s) stripped; as built %s bytes; %s' "$t" \
    "$(size_of "$WORK/rtbench-$t")" "$(human "$(size_of "$WORK/rtbench-$t")")" "$(size_of "$bin")" \
    "$(file -b "$bin" | cut -d, -f1-2)")")

  if [[ " $UNIT_TESTS " != *" $t "* ]]; then
    TESTS+=("$(printf '%-32s %s' "$t" "not run (RTBENCH_CROSS_UNIT_TESTS=$UNIT_TESTS)")")
    continue
  fi
  log "cargo test --lib --target $t (under $(grep -A3 "^\[target\.$t\]" .cargo/config.toml | sed -n 's/^runner *= *//p'))"
  t0=$(date +%s)
  set +e
  timeout "$TEST_TIMEOUT" $CARGO test --locked --lib --target "$t" 2>&1 | tee "$WORK/test-$t.log"
  rc=${PIPESTATUS[0]}
  set -e
  record "test --lib $t (qemu-user)" "$t0" "$rc"
  res=$(grep -E '^test result:' "$WORK/test-$t.log" | tail -1 || true)
  TESTS+=("$(printf '%-32s %s' "$t" "${res:-no test result line (exit $rc)}")")
  if [ "$rc" != 0 ]; then
    FAILED+=("test $t")
    grep -E '^test .* FAILED$|^---- .* stdout ----$|panicked at' "$WORK/test-$t.log" >&2 || true
  fi
done

echo
echo "== cross-test summary ($(/usr/bin/rustc -V), Debian $RUST_VER)"
printf '  %s\n' "${SUMMARY[@]}"
echo "== release binary sizes"
printf '  %s\n' "${SIZES[@]}"
if [ -x "$ROOT/target/release/rtbench" ]; then
  printf '  %-32s %9s bytes (%s) as built by the host toolchain (not rebuilt here)\n' x86_64-unknown-linux-gnu \
    "$(size_of "$ROOT/target/release/rtbench")" "$(human "$(size_of "$ROOT/target/release/rtbench")")"
fi
echo "== unit tests under qemu-user"
printf '  %s\n' "${TESTS[@]}"
echo "== total $(($(date +%s) - T_START))s"
if [ ${#FAILED[@]} != 0 ]; then
  echo "FAILED: ${FAILED[*]}" >&2
  exit 1
fi

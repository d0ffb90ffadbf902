#!/usr/bin/env bash
# size-table.sh — the stripped release binary's size per target and build option, one
# table (Markdown, on standard output), and with --check each build against its budget
# in scripts/size-budget.txt.
#
#   x86_64-unknown-linux-gnu        the host's cargo (rustup), --target-dir target/size (host build)
#   aarch64-unknown-linux-gnu       Debian's cross toolchain as scripts/cross-test.sh sets
#   armv7-unknown-linux-gnueabihf   it up (/usr/bin/cargo, RUSTC=/usr/bin/rustc, the target
#                                   std in /usr/lib/rustlib/<triple>, <gnu>-gcc as linker);
#                                   without it the target is skipped and the table says why
#
# Build options are Cargo feature sets (the packages' build options of the same names):
# none, monitor, monitor,explain, monitor,plot, diagnose, default (plot, monitor,
# diagnose, explain). Each build is `cargo build --release --locked
# --no-default-features --features …` (default: no feature flags), stripped again with the
# target's strip to be sure (the release profile strips already).
#
# Budget (--check): every line `TARGET FEATURES BYTES REASON` of scripts/size-budget.txt is
# built and measured; a build more than 3 % over its budget fails. Raise the budget in the
# same commit as the growth, with the reason. Only the budgeted builds are made with
# --check (CI); without it every target and option is (the full table).
#
# Usage:  bash scripts/size-table.sh [--check]
# Env:    CARGO_TARGET_DIR        the cross builds' directory (default
#                                 /var/tmp/rtbench-cross-target, as .ci/run's cross step);
#                                 default-feature builds reuse scripts/cross-test.sh's there,
#                                 the other options build in its size-options/ so the boot
#                                 tests' binaries stay the default build
#         RTBENCH_SIZE_TARGETS    space-separated subset of the three triples
#         RTBENCH_SIZE_OPTIONS    space-separated subset of the options (without --check)
# Exit:   0 the table was made (and every budgeted build is within its budget);
#         1 a build failed or is over its budget; 2 usage or a budget file error.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUDGET=$ROOT/scripts/size-budget.txt
TOLERANCE_PCT=3
ALL_TARGETS="x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf"
ALL_OPTIONS="none monitor monitor,explain monitor,plot diagnose default"
CROSS_DIR=${CARGO_TARGET_DIR:-/var/tmp/rtbench-cross-target}
HOST_DIR=$ROOT/target/size
unset CARGO_TARGET_DIR

check=0
case ${1:-} in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

log() { printf '[size-table] %s\n' "$*" >&2; }
gnu_triple() {
  case $1 in
    aarch64-*) echo aarch64-linux-gnu ;;
    armv7-*) echo arm-linux-gnueabihf ;;
    *) echo "" ;;
  esac
}

# why_not TARGET: empty when TARGET can be built here, else why not.
why_not() {
  local t=$1 gnu
  gnu=$(gnu_triple "$t")
  case $t in
    x86_64-unknown-linux-gnu)
      [ "$(uname -m)" = x86_64 ] || { echo "not an x86_64 host"; return; }
      command -v cargo >/dev/null || echo "no cargo on PATH" ;;
    *)
      if ! [ -x /usr/bin/cargo ] || ! [ -x /usr/bin/rustc ]; then
        echo "no Debian cross toolchain (/usr/bin/cargo, /usr/bin/rustc): run scripts/cross-test.sh"
      elif ! [ -d "/usr/lib/rustlib/$t" ]; then
        echo "no $t std in /usr/lib/rustlib: run scripts/cross-test.sh"
      elif ! command -v "$gnu-gcc" >/dev/null; then
        echo "no $gnu-gcc linker: run scripts/cross-test.sh"
      fi ;;
  esac
}

# build TARGET OPTION: prints the stripped size in bytes, or fails.
build() {
  local t=$1 opt=$2 flags=() dir bin gnu strip_cmd tmp
  case $opt in
    default) ;;
    none) flags=(--no-default-features) ;;
    *) flags=(--no-default-features --features "$opt") ;;
  esac
  gnu=$(gnu_triple "$t")
  if [ "$t" = x86_64-unknown-linux-gnu ]; then
    dir=$HOST_DIR
    (cd "$ROOT" && cargo build -q --release --locked --target-dir "$dir" "${flags[@]}") >&2
    bin=$dir/release/rtbench
    strip_cmd="strip"
  else
    dir=$CROSS_DIR
    [ "$opt" = default ] || dir=$CROSS_DIR/size-options
    (cd "$ROOT" && RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc /usr/bin/cargo build -q --release \
      --locked --target "$t" --target-dir "$dir" "${flags[@]}") >&2
    bin=$dir/$t/release/rtbench
    strip_cmd=$gnu-strip
  fi
  tmp=$(mktemp)
  if command -v "$strip_cmd" >/dev/null; then
    "$strip_cmd" -o "$tmp" "$bin"
  else
    cp "$bin" "$tmp"
  fi
  stat -c %s "$tmp"
  rm -f "$tmp"
}

# The budget: "TARGET OPTION" -> bytes.
declare -A BUDGETS=()
if [ -f "$BUDGET" ]; then
  n=0
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    line=${line%%#*}
    [ -n "${line//[[:space:]]/}" ] || continue
    read -r t opt bytes reason <<<"$line"
    if ! [[ $bytes =~ ^[0-9]+$ ]] || [ -z "${reason:-}" ]; then
      echo "$BUDGET:$n: expected TARGET OPTION BYTES REASON: $line" >&2
      exit 2
    fi
    case " $ALL_TARGETS " in *" $t "*) ;; *) echo "$BUDGET:$n: unknown target $t" >&2; exit 2 ;; esac
    case " $ALL_OPTIONS " in *" $opt "*) ;; *) echo "$BUDGET:$n: unknown option $opt" >&2; exit 2 ;; esac
    BUDGETS["$t $opt"]=$bytes
  done <"$BUDGET"
elif [ $check = 1 ]; then
  echo "$BUDGET: missing" >&2
  exit 2
fi

TARGETS=${RTBENCH_SIZE_TARGETS:-$ALL_TARGETS}
OPTIONS=${RTBENCH_SIZE_OPTIONS:-$ALL_OPTIONS}
rc=0
over=()
printf '| target | build option | stripped bytes | budget | |\n|---|---|---|---|---|\n'
for t in $TARGETS; do
  why=$(why_not "$t")
  if [ -n "$why" ]; then
    printf '| %s | all | skipped: %s | | |\n' "$t" "$why"
    log "$t skipped: $why"
    continue
  fi
  for opt in $OPTIONS; do
    budget=${BUDGETS["$t $opt"]:-}
    [ $check = 0 ] || [ -n "$budget" ] || continue
    log "building $t $opt"
    if ! size=$(build "$t" "$opt"); then
      printf '| %s | %s | build failed | %s | |\n' "$t" "$opt" "${budget:-—}"
      rc=1
      continue
    fi
    verdict=""
    if [ -n "$budget" ]; then
      limit=$((budget + budget * TOLERANCE_PCT / 100))
      pct=$(awk -v s="$size" -v b="$budget" 'BEGIN { printf "%+.1f %%", (s - b) * 100 / b }')
      if [ "$size" -gt "$limit" ]; then
        verdict="OVER by more than $TOLERANCE_PCT % ($pct)"
        over+=("$t $opt: $size B, budget $budget B ($pct): raise scripts/size-budget.txt with the reason, or shrink it")
        rc=1
      else
        verdict="ok ($pct)"
      fi
    fi
    printf '| %s | %s | %s | %s | %s |\n' "$t" "$opt" "$size" "${budget:-—}" "$verdict"
  done
done
for o in "${over[@]}"; do
  log "OVER BUDGET: $o"
done
if [ $check = 1 ]; then
  for key in "${!BUDGETS[@]}"; do
    t=${key%% *}
    why=$(why_not "$t")
    [ -z "$why" ] || log "not checked: $key ($why)"
  done
fi
exit $rc

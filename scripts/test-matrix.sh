#!/usr/bin/env bash
# test-matrix.sh — the test suite (`cargo test --locked`) in the host states a board or a
# fresh machine may be in, so that no test depends on how this host happens to be set up:
#
#   mounted    a private mount namespace (unshare -m) with tracefs at /sys/kernel/tracing
#              and debugfs at /sys/kernel/debug (mounted there first if the host has not:
#              what systemd mounts)
#   unmounted  a private mount namespace with neither tracefs nor debugfs anywhere (a
#              fresh VM without systemd as PID 1 looks like this): rtbench mounts
#              tracefs itself where it needs it, in the test
#              binaries' own namespaces (tests/common/isolate.rs), never on the host
#   loaded     the host's mounts, beside a SCHED_OTHER CPU load on every online CPU
#              (stress-ng --cpu N at nice 0, ended by its pid after the run)
#
# Every state must pass. A test that cannot check something in a state says why
# (tests/common/mod.rs `skip`): its lines are collected through RTBENCH_IT_SKIPS and
# listed, and the count printed, after each state: skipped, never silently passed.
#
#   bash scripts/test-matrix.sh [STATE...]        (default: mounted unmounted loaded)
#   extra arguments for cargo test: TEST_MATRIX_ARGS="--test cli" bash scripts/test-matrix.sh
# A state that runs longer than TEST_MATRIX_TIMEOUT seconds (default 1500; one state takes
# ~4 min on a quiet 2-CPU machine) is ended with everything it started (`timeout` signals
# its process group) and fails: a test that hangs costs one state, not the CI's time.
# Needs root (unshare -m, mount), util-linux, stress-ng for `loaded`.
# Exit: 0 all states passed; 1 a state failed (the others still run); 2 setup failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
states=("$@")
[ ${#states[@]} -gt 0 ] || states=(mounted unmounted loaded)
read -r -a extra <<< "${TEST_MATRIX_ARGS:-}"
limit=${TEST_MATRIX_TIMEOUT:-1500}
case $limit in '' | *[!0-9]*) echo "test-matrix: TEST_MATRIX_TIMEOUT=$limit: expected whole seconds" >&2; exit 2 ;; esac
tests=(timeout -k 30 "$limit" cargo test --locked --no-fail-fast)
tmp=$(mktemp -d /tmp/rtbench-test-matrix.XXXXXX) || exit 2
load_pid=""
cleanup() {
  [ -n "$load_pid" ] && kill -TERM "$load_pid" 2> /dev/null && wait "$load_pid" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# Runs cargo test in a private mount namespace after SETUP (shell text) ran in it.
in_namespace() {
  local setup=$1
  shift
  unshare --mount --propagation private bash -c "$setup"' && exec "$@"' bash "$@"
}

# shellcheck disable=SC2016 # awk's fields, expanded by awk in the namespace's shell
tracefs_mounts='awk '\''$3 == "tracefs" || $3 == "debugfs" { print $2 }'\'' /proc/self/mounts'
mount_it="grep -q ' /sys/kernel/tracing tracefs ' /proc/self/mounts || mount -t tracefs nodev /sys/kernel/tracing
  grep -q ' /sys/kernel/debug debugfs ' /proc/self/mounts || mount -t debugfs nodev /sys/kernel/debug"
unmount_all="for m in \$($tracefs_mounts | sort -r); do umount -l \"\$m\" || exit 2; done
  if [ -n \"\$($tracefs_mounts)\" ]; then echo 'test-matrix: tracefs still mounted' >&2; exit 2; fi"

failed=()
for state in "${states[@]}"; do
  skips=$tmp/skips-$state
  : > "$skips"
  printf '\n--- test suite: %s (%ss)\n' "$state" "$SECONDS"
  rc=0
  case $state in
    mounted)
      RTBENCH_IT_SKIPS=$skips in_namespace "$mount_it" "${tests[@]}" "${extra[@]}" || rc=$?
      ;;
    unmounted)
      RTBENCH_IT_SKIPS=$skips in_namespace "$unmount_all" "${tests[@]}" "${extra[@]}" || rc=$?
      ;;
    loaded)
      command -v stress-ng > /dev/null || { echo "test-matrix: stress-ng not installed" >&2; exit 2; }
      n=$(nproc)
      stress-ng --cpu "$n" --cpu-method loop --timeout 2h --quiet &
      load_pid=$!
      RTBENCH_IT_SKIPS=$skips "${tests[@]}" "${extra[@]}" || rc=$?
      kill -TERM "$load_pid" 2> /dev/null
      wait "$load_pid" 2> /dev/null
      load_pid=""
      ;;
    *)
      echo "test-matrix: $state: expected mounted, unmounted or loaded" >&2
      exit 2
      ;;
  esac
  n_skips=$(wc -l < "$skips")
  if [ "$n_skips" -gt 0 ]; then
    echo "--- $state: skipped checks, with the reason each gave:"
    sed 's/^/    /' "$skips"
  fi
  if [ "$rc" -eq 0 ]; then
    echo "--- $state: passed, $n_skips skipped"
  else
    [ "$rc" -eq 124 ] && echo "--- $state: ran over ${limit}s (TEST_MATRIX_TIMEOUT): ended"
    echo "--- $state: FAILED (cargo test exit $rc), $n_skips skipped"
    failed+=("$state")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "test-matrix: failed in: ${failed[*]}" >&2
  exit 1
fi

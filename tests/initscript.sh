#!/bin/bash
# Test of buildroot-package/package/rtbench/S95rtbench under BusyBox.
#
# Runs the init script with BusyBox `sh` the way BusyBox init's rcS does
# ("S95rtbench start", later "stop"/"restart"/"status"), with only BusyBox
# applets on PATH plus two stubs: `rtbench` (behaviour set per case through
# STUB_* variables: exit status, run time, SIGTERM handling) and `logger`
# (appends "PRIORITY TAG: MESSAGE" lines to a file instead of syslog).
# Checks the printed result, the exit status of every action, what reached
# syslog, the pid/status files and that no self-test is left running.
#
# The script writes /var/run/rtbench.{pid,status} and reads
# /etc/default/rtbench, as on the target; the test runs in a private mount
# namespace (unshare -m, needs root) with temporary directories mounted over
# /var/run and /etc/default, so the host is not touched.
#
# Usage: tests/initscript.sh            (exit 0 = all passed)
# Needs: busybox (Debian package "busybox"), unshare and mount (util-linux).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
script="$here/buildroot-package/package/rtbench/S95rtbench"

if [ -z "${RTBENCH_INITTEST_NS:-}" ]; then
	busybox=$(command -v busybox) || { echo "initscript: busybox not installed" >&2; exit 1; }
	if [ "$(id -u)" -ne 0 ]; then
		echo "initscript: needs root (private mount namespace over /var/run)" >&2
		exit 1
	fi
	RTBENCH_INITTEST_NS=1 BUSYBOX="$busybox" exec unshare --mount --propagation private "$0" "$@"
fi

: "${BUSYBOX:?set by the outer invocation}"
work=$(mktemp -d /tmp/rtbench-initscript.XXXXXX)
cleanup() {
	# Every stub rtbench records its PID: kill exactly those still running.
	local pid
	if [ -s "$work/all-pids" ]; then
		while read -r pid; do
			# only if the PID still is one of our stubs (not reused)
			if tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF "$work/stub/rtbench"; then
				kill -KILL "$pid" 2>/dev/null || true
			fi
		done < "$work/all-pids"
	fi
	rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/bb" "$work/stub" "$work/run" "$work/default" "$work/out"
mount --bind "$work/run" /var/run
mount --bind "$work/default" /etc/default
"$BUSYBOX" --install -s "$work/bb"
rm -f "$work/bb/logger"

cat > "$work/stub/rtbench" <<EOF
#!$BUSYBOX sh
# Stub rtbench: records its arguments, prints key=value lines on stderr
# like rtbench without journald, runs STUB_RUN_S seconds, exits STUB_EXIT.
echo "\$*" > "$work/out/args"
echo "\$\$" >> "$work/out/pids"
echo "\$\$" >> "$work/all-pids"
trap 'echo "event=interrupted" >&2; exit 130' TERM
echo "event=tuning item=sysctl.printk state=ok" >&2
n=\$(( \${STUB_RUN_S:-0} * 10 ))
while [ "\$n" -gt 0 ]; do
	sleep 0.1 & wait \$!
	n=\$((n - 1))
done
echo "event=summary RTBENCH_VERDICT=stub-\${STUB_EXIT:-0}" >&2
exit "\${STUB_EXIT:-0}"
EOF
cat > "$work/stub/logger" <<EOF
#!$BUSYBOX sh
# Stub logger: "logger -t TAG -p PRIO [MESSAGE]" or lines from stdin.
tag=logger; prio=user.notice
while getopts t:p:s o; do
	case "\$o" in
		t) tag=\$OPTARG;;
		p) prio=\$OPTARG;;
		*) ;;
	esac
done
shift \$((OPTIND - 1))
if [ "\$#" -gt 0 ]; then
	echo "\$prio \$tag: \$*" >> "$work/out/syslog"
else
	while IFS= read -r line; do
		echo "\$prio \$tag: \$line" >> "$work/out/syslog"
	done
fi
EOF
chmod 755 "$work/stub/rtbench" "$work/stub/logger"

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1" >&2; }
check() { # check NAME COMMAND...
	local name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}

# run ACTION [VAR=VALUE...]: the init script under BusyBox sh, BusyBox-only
# PATH; sets $out and $rc.
run() {
	local action=$1
	shift
	set +e
	out=$(env -i PATH="$work/stub:$work/bb" "$@" "$BUSYBOX" sh "$script" "$action" 2>&1)
	rc=$?
	set -e
}

reset() {
	rm -f "$work/out/"* /var/run/rtbench.* /etc/default/rtbench
}

# Wait (max 10 s) until the background self-test has finished.
wait_done() {
	for _ in $(seq 100); do
		[ -s /var/run/rtbench.status ] && [ ! -e /var/run/rtbench.pid ] && return 0
		sleep 0.1
	done
	return 1
}

stub_alive() {
	local pid
	[ -s "$work/out/pids" ] || return 1
	while read -r pid; do
		kill -0 "$pid" 2>/dev/null && return 0
	done < "$work/out/pids"
	return 1
}

no_stub_alive() { ! stub_alive; }

syslog_has() { grep -qF -- "$1" "$work/out/syslog"; }

# 1. Boot, passing self-test: start returns 0 at once, output and verdict in syslog.
reset
run start
check "start prints OK and exits 0" test "$rc" -eq 0 -a "$out" = "Starting rtbench: OK"
check "self-test finishes in the background" wait_done
check "rtbench ran 'selftest --log-format logfmt' (key=value lines for syslog) with no extra arguments" test "$(cat "$work/out/args")" = "selftest --log-format logfmt"
check "rtbench output reaches syslog (daemon.info, tag rtbench)" \
	syslog_has "daemon.info rtbench: event=tuning item=sysctl.printk state=ok"
check "pass verdict logged as daemon.notice" syslog_has "daemon.notice rtbench: self-test verdict: pass (exit 0)"
check "status file holds exit status 0" test "$(cat /var/run/rtbench.status)" = "0"
run status
check "status after a pass: exit 3 (not running), shows verdict" \
	test "$rc" -eq 3 -a "$out" = "rtbench self-test is not running; last verdict: pass (exit 0)"

# 2. Failing limits (exit 1) and configuration error (exit 2).
for case in "1 fail or unjudged" "2 configuration error" "3 environment refused" "4 invalid measurement, measure again"; do
	code=${case%% *}
	word=${case#* }
	reset
	run start STUB_EXIT="$code"
	check "exit $code: start still exits 0 (background)" test "$rc" -eq 0
	check "exit $code: finishes" wait_done
	check "exit $code: verdict '$word' logged as daemon.err" \
		syslog_has "daemon.err rtbench: self-test verdict: $word (exit $code)"
	run status
	check "exit $code: status exit 3 and shows '$word'" \
		test "$rc" -eq 3 -a "$out" = "rtbench self-test is not running; last verdict: $word (exit $code)"
done

# 3. A long self-test: status while running, second start, stop, stop again.
reset
run start STUB_RUN_S=30
check "long run: start exits 0" test "$rc" -eq 0
check "long run: pid file names the running rtbench" \
	test "$(cat /var/run/rtbench.pid)" = "$(tail -n1 "$work/out/pids")"
run status
check "status while running: exit 0" test "$rc" -eq 0
check "status while running: names the pid" test "$out" = "rtbench self-test is running (pid $(cat /var/run/rtbench.pid))"
run start STUB_RUN_S=30
check "second start: exit 0, 'already running'" test "$rc" -eq 0 -a "$out" = "Starting rtbench: already running"
check "second start: no second rtbench" test "$(wc -l < "$work/out/pids")" -eq 1
run stop
check "stop: exit 0, OK" test "$rc" -eq 0 -a "$out" = "Stopping rtbench: OK"
check "stop: rtbench is gone" no_stub_alive
check "stop: pid file removed" test ! -e /var/run/rtbench.pid
check "stop: rtbench got SIGTERM and said so" syslog_has "daemon.info rtbench: event=interrupted"
check "stop: interrupted verdict logged" syslog_has "daemon.err rtbench: self-test verdict: interrupted (exit 130)"
check "stop: 'stopped' logged" syslog_has "daemon.notice rtbench: self-test stopped"
run stop
check "stop when not running: exit 0" test "$rc" -eq 0 -a "$out" = "Stopping rtbench: OK (not running)"

# 4. restart while running: a new self-test replaces the old one.
reset
run start STUB_RUN_S=30
first=$(cat /var/run/rtbench.pid)
run restart STUB_RUN_S=30
check "restart: exit 0" test "$rc" -eq 0
check "restart: prints stop then start" test "$out" = "Stopping rtbench: OK
Starting rtbench: OK"
check "restart: old rtbench gone" bash -c "! kill -0 $first 2>/dev/null"
second=$(cat /var/run/rtbench.pid 2>/dev/null || echo none)
check "restart: a new rtbench runs" bash -c "[ '$second' != '$first' ] && kill -0 '$second' 2>/dev/null"
run reload
check "reload = restart: exit 0" test "$rc" -eq 0
run stop
check "stop after restart: exit 0" test "$rc" -eq 0
check "stop after restart: nothing left running" no_stub_alive

# 5. /etc/default/rtbench: extra arguments and foreground mode.
reset
printf 'RTBENCH_ARGS="--config /etc/rtbench/lab.toml"\nRTBENCH_WAIT=yes\n' > /etc/default/rtbench
run start
check "RTBENCH_WAIT=yes, pass: start exits 0 after the run" test "$rc" -eq 0 -a "$out" = "Starting rtbench: OK"
check "RTBENCH_ARGS passed word-split" test "$(cat "$work/out/args")" = "selftest --log-format logfmt --config /etc/rtbench/lab.toml"
check "RTBENCH_WAIT=yes: finished when start returns" test -s /var/run/rtbench.status -a ! -e /var/run/rtbench.pid
rm -f /var/run/rtbench.*
run start STUB_EXIT=1
check "RTBENCH_WAIT=yes, fail: start exits 1 and says FAIL (fail or unjudged)" \
	test "$rc" -eq 1 -a "$out" = "Starting rtbench: FAIL (fail or unjudged)"

# 6. Errors.
reset
run status
check "status before any run: exit 3" test "$rc" -eq 3 -a "$out" = "rtbench self-test is not running; no run since boot"
echo 999999 > /var/run/rtbench.pid
run status
check "status with stale pid file: exit 1" test "$rc" -eq 1
reset
mkdir -p "$work/nortbench"
ln -sf "$work/stub/logger" "$work/nortbench/logger"
set +e
out=$(env -i PATH="$work/nortbench:$work/bb" "$BUSYBOX" sh "$script" start 2>&1)
rc=$?
set -e
check "start without rtbench installed: exit 1, FAIL" test "$rc" -eq 1 -a "$out" = "Starting rtbench: FAIL (rtbench not found)"
check "start without rtbench installed: logged as daemon.err" syslog_has "daemon.err rtbench: rtbench not found, self-test not run"
run frobnicate
check "unknown action: usage, exit 1" test "$rc" -eq 1 -a "${out#Usage: }" != "$out"

echo "initscript: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

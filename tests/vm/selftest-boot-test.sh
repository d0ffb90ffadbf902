#!/usr/bin/env bash
# rtbench's boot test (CI): boot a Debian bookworm PREEMPT_RT guest under qemu with
# `isolcpus=1 nohz_full=1 rcu_nocbs=1 irqaffinity=0`, rtbench and its unit installed, and
# check what `rtbench selftest` left in the guest. Three boots:
#   pass  tests/vm/pass.toml (cyclic, pmq and pipe; limits no emulated system exceeds, printk =
#         3, prometheus set): verdict pass over the three tests, per-CPU entries for every
#         online CPU including the isolated one for cyclic and per pair for pmq and pipe, READY
#         before the end of the measurement, unit succeeded, results file, printk read back in
#         the guest; the Prometheus textfile written under the shipped unit's hardening and
#         served by Debian's prometheus-node-exporter on localhost:9100/metrics; no irq/N-*
#         thread on the isolated CPU after [tuning.irq], and rtbench cyclic -S in a cgroup v2
#         cpuset of CPU 1 measuring CPU 1 only
#   fail  tests/vm/fail.toml (max_us = 1): verdict fail, unit failed with exit status 1, the
#         failed check named (test, CPU, statistic, µs) in the summary and in `rtbench report`
#   unjudged  tests/vm/unjudged.toml (no [limits]): verdict unjudged with its reason, exit 1
#   conditions  tests/vm/conditions.toml ([[condition]] idle, stress, isolated; only stress has
#         max_us = 1): verdict fail, each per-CPU entry with its RTBENCH_CONDITION, the summary
#         naming only the stress condition's failures, the report's vendors' table
#   explain   tests/vm/explain.toml with a culprit (tests/vm/culprit/vendord: 600 ms busy at
#         SCHED_FIFO 99 on CPU 1 every 3 s, timed in the guest; the limit is 100 ms): the failure and a "late sample explained" entry
#         name the culprit task (vendord-burn, kind task, CPU 1), the results file has
#         timerlat's figures beside rtbench's, the hwlat gate ran, no tracefs instance is left
# Every boot: the run's boot ID and trigger (systemd, rtbench.service) in the results file,
# `rtbench report`'s exit code, and no bare @FIELD@ in `journalctl -x`.
# Assertions are on journal fields and unit state, never on latency values (TCG emulation).
#
#   tests/vm/selftest-boot-test.sh [BIN] [--arch x86_64|aarch64|armv7] [--unit PATH] [--catalog PATH]
#                                  [--only pass|fail|unjudged|explain|conditions] [--timeout S]
#     BIN        rtbench binary (default target/release/rtbench), built for --arch
#     --arch     the guest: x86_64 (default; Debian's linux-image-rt-amd64) or aarch64 (arm64
#                guest, linux-image-rt-arm64, qemu-system-aarch64 -M virt); the same assertions
#     --unit     default systemd/rtbench.service
#     --catalog  default systemd/rtbench.catalog when it exists; its MESSAGE_IDs are checked
#     --only     run one of the boots
#     --timeout  per boot, default 600 s
#     --pass-run DIR, --fail-run DIR, --unjudged-run DIR, --explain-run DIR, --conditions-run DIR   check an existing run directory of
#                boot.sh instead of booting (for working on the assertions)
# Run as root from anywhere in the repository. One PASS/FAIL line per assertion on stdout;
# exit 0 when all pass, 1 when any fails, 2 when the test could not run.
# Cost on a 2-core machine without KVM: image ~3-4 min once (cached in
# $RTBENCH_VM_DIR, default /var/tmp/rtbench-vm, ~1.3 GB), then ~1 min per boot.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/target/release/rtbench unit=$repo/systemd/rtbench.service catalog="" only="" timeout=600
export RTBENCH_VM_ARCH=${RTBENCH_VM_ARCH:-x86_64}
pass_run="" fail_run="" unjudged_run="" explain_run="" conditions_run=""
[ -f "$repo/systemd/rtbench.catalog" ] && catalog=$repo/systemd/rtbench.catalog
while [ $# -gt 0 ]; do
  case $1 in
    --arch) RTBENCH_VM_ARCH=$2; shift 2 ;;
    --unit) unit=$2; shift 2 ;;
    --catalog) catalog=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --pass-run) pass_run=$(cd "$2" && pwd); shift 2 ;;
    --fail-run) fail_run=$(cd "$2" && pwd); shift 2 ;;
    --unjudged-run) unjudged_run=$(cd "$2" && pwd); shift 2 ;;
    --explain-run) explain_run=$(cd "$2" && pwd); shift 2 ;;
    --conditions-run) conditions_run=$(cd "$2" && pwd); shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "selftest-boot-test.sh: unknown option '$1'" >&2; exit 2 ;;
    *) bin=$1; shift ;;
  esac
done
case $only in "" | pass | fail | unjudged | explain | conditions) ;; *) echo "--only $only: expected pass, fail, unjudged, explain or conditions" >&2; exit 2 ;; esac
case $RTBENCH_VM_ARCH in x86_64 | aarch64 | armv7) ;; *) echo "--arch $RTBENCH_VM_ARCH: expected x86_64, aarch64 or armv7" >&2; exit 2 ;; esac
for f in "$bin" "$unit" ${catalog:+"$catalog"}; do
  [ -f "$f" ] || { echo "selftest-boot-test.sh: $f: no such file" >&2; exit 2; }
done

# MESSAGE_IDs of rtbench selftest (systemd/rtbench.catalog) and of systemd itself.
ID_SUMMARY=7b1dd0eea94d4cc4bd8f9e6c91b6465d
ID_CPU=b338a16c561342608e6e5ef41b0a0813
ID_READY=6a9954f26ad8443b8423171c8abd3682
ID_JOB_DONE=39f53479d3a045ac8e11786248231fbf   # systemd: "Started <unit>" (start job done)
ID_EXPLAINED=8d09e443b62944249b71ee2f6aa7adff

failures=0 total=0
pass() { total=$((total + 1)); printf 'PASS %s\n' "$1"; }
fail() { total=$((total + 1)); failures=$((failures + 1)); printf 'FAIL %s: %s\n' "$1" "$(tr '\n' ' ' <<< "$2")"; }
# check NAME DETAIL-ON-FAILURE COMMAND...: PASS when COMMAND succeeds
check() { local name=$1 detail=$2; shift 2; if "$@" > /dev/null 2>&1; then pass "$name"; else fail "$name" "$detail"; fi; }

command -v jq > /dev/null || {
  echo "installing jq" >&2
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends jq > /dev/null
}

# ---- helpers over one run directory ---------------------------------------------------------
show() { sed -n "s/^$1=//p" "$run/show.txt"; }           # systemctl show property
guest() { sed -n "s/^$1=//p" "$run/guest.txt"; }         # guest facts from the collector
toml_value() {  # toml_value FILE SECTION KEY: a scalar, quotes and comment removed
  awk -v want="[$2]" -v key="$3" '
    { line = $0; sub(/[[:space:]]*#.*/, "", line) }
    line ~ /^[[:space:]]*\[/ { sect = line; gsub(/[[:space:]]/, "", sect); next }
    sect == want && line ~ "^[[:space:]]*" key "[[:space:]]*=" {
      sub(/^[^=]*=[[:space:]]*/, "", line); gsub(/"/, "", line); print line; exit }' "$1"
}
expand_cpus() {  # "0-2,5" -> "0 1 2 5"
  local part parts
  IFS=, read -ra parts <<< "$1"
  for part in "${parts[@]}"; do
    if [[ $part == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
  done | tr '\n' ' '
}
# journal entries as one JSON array (journalctl -o json writes one object per line)
entries() { jq -cs "[.[] | select(.MESSAGE_ID == \"$1\")]" "$run/unit.json"; }
elsewhere() {  # entries with MESSAGE_ID $1 that the boot journal has but not as the unit's
  [ -s "$run/ids.json" ] || return 0
  jq -rs --arg id "$1" '[.[] | select(.MESSAGE_ID == $id and ._SYSTEMD_UNIT != "rtbench.service")]
    | if length > 0 then "; \(length) more in the boot journal without _SYSTEMD_UNIT=rtbench.service (from \([.[] | "\(._COMM // "?")[\(._PID // "?")] unit \(._SYSTEMD_UNIT // "none")"] | unique | join(", ")))" else "" end' \
    "$run/ids.json" 2> /dev/null
}
verdict_in() {  # pass|fail|unjudged: the first "verdict" anywhere in a JSON file, either a
                # word or an object with "outcome" (rtbench's StoredRun) or a boolean "pass"
  jq -er 'def word: if type == "string" then .
                    elif type == "object" and (.outcome | type) == "string" then .outcome
                    elif type == "object" and (.pass | type) == "boolean"
                    then (if .pass then "pass" else "fail" end) else empty end;
          first(.. | objects | select(has("verdict")) | .verdict | word)' "$1" 2> /dev/null
}

catalog_gaps() {  # "<MESSAGE_ID> <FIELD>" for each @FIELD@ of the catalog that an entry of
                  # that MESSAGE_ID in the unit's journal does not carry
  awk '/^-- [0-9a-f]+[[:space:]]*$/ { id = $2; next }
       id != "" { line = $0
                  while (match(line, /@[A-Za-z0-9_]+@/)) {
                    print id, substr(line, RSTART + 1, RLENGTH - 2)
                    line = substr(line, RSTART + RLENGTH) } }' "$catalog" | sort -u |
  while read -r id field; do
    jq -r --arg id "$id" --arg f "$field" \
      'select(.MESSAGE_ID == $id and (has($f) | not)) | "\($id) \($f)"' "$run/unit.json"
  done | sort -u | tr '\n' ' '
}

boot() {  # boot NAME CONFIG [RUN-DIR] [BOOT.SH ARGS...]: sets $run, returns non-zero when the
          # boot gave no results
  local name=$1 config=$2 existing=${3:-} t0=$SECONDS
  shift 2; [ $# -gt 0 ] && shift
  if [ -n "$existing" ]; then run=$existing; echo "--- '$name': checking $run (no boot)"; return 0; fi
  echo "--- boot '$name': $(basename "$config") ($RTBENCH_VM_ARCH guest, qemu TCG, ~1 min)"
  if run=$("$here/boot.sh" --bin "$bin" --unit "$unit" --config "$config" \
             ${catalog:+--catalog "$catalog"} --timeout "$timeout" "$@"); then
    pass "$name: guest booted, ran rtbench.service and sent its results ($((SECONDS - t0)) s, $run)"
  else
    fail "$name: guest booted, ran rtbench.service and sent its results" \
         "boot.sh failed after $((SECONDS - t0)) s; see ${run:-the messages above}"
    return 1
  fi
}

common_checks() {  # assertions shared by both boots; $1 = name, $2 = expected verdict
  local name=$1 want=$2 online cpu
  check "$name: guest runs the PREEMPT_RT kernel with CPU 1 isolated" \
        "guest.txt: realtime=$(guest realtime) isolated=$(guest isolated)" \
        test "$(guest realtime)" = 1 -a "$(guest isolated)" = 1
  check "$name: rtbench.service is Type=notify and its main process ran" \
        "Type=$(show Type) ExecMainStartTimestampMonotonic=$(show ExecMainStartTimestampMonotonic)" \
        test "$(show Type)" = notify -a "$(show ExecMainStartTimestampMonotonic)" -gt 0
  [ -e "$run/wait-timeout" ] &&
    fail "$name: rtbench.service finished in time" "still $(cat "$run/wait-timeout") when collected"

  local summary
  summary=$(entries $ID_SUMMARY)
  check "$name: one summary entry (MESSAGE_ID=$ID_SUMMARY) with RTBENCH_VERDICT=$want" \
        "summary entries: $(jq -c '[.[] | {RTBENCH_VERDICT, MESSAGE}]' <<< "$summary")$(elsewhere $ID_SUMMARY)" \
        jq -e --arg v "$want" 'length == 1 and .[0].RTBENCH_VERDICT == $v' <<< "$summary"

  # one cyclic entry per online CPU, with the statistics fields as integers
  online=$(guest online)
  local cpus
  cpus=$(entries $ID_CPU)
  for cpu in $(expand_cpus "$online"); do
    check "$name: per-CPU entry (MESSAGE_ID=$ID_CPU) for CPU $cpu: RTBENCH_TEST=cyclic, RTBENCH_MAX_NS, RTBENCH_P99_NS, RTBENCH_P999_NS" \
          "entries for CPU $cpu: $(jq -c --arg c "$cpu" '[.[] | select(.RTBENCH_CPU == $c) | with_entries(select(.key | startswith("RTBENCH_")))]' <<< "$cpus")$(elsewhere $ID_CPU)" \
          jq -e --arg c "$cpu" '[.[] | select(.RTBENCH_CPU == $c and .RTBENCH_TEST == "cyclic")
              | select([.RTBENCH_MAX_NS, .RTBENCH_P99_NS, .RTBENCH_P999_NS]
                       | all(type == "string" and test("^[0-9]+$")))] | length >= 1' <<< "$cpus"
  done

  # READY=1 (rtbench's READY entry and/or systemd's "Started", which for Type=notify it logs
  # when READY=1 arrives) must come before the end of the measurement (the summary entry)
  local order
  order=$(jq -cs --arg s $ID_SUMMARY --arg r $ID_READY --arg j $ID_JOB_DONE '
    def t: .__MONOTONIC_TIMESTAMP | tonumber;
    { summary: ([.[] | select(.MESSAGE_ID == $s) | t] | min),
      first_cpu_entry: ([.[] | select(.MESSAGE_ID == "'$ID_CPU'") | t] | min),
      ready_entry: ([.[] | select(.MESSAGE_ID == $r) | t] | min),
      started: ([.[] | select(.MESSAGE_ID == $j and ._PID == "1" and .JOB_TYPE == "start"
                              and .JOB_RESULT == "done") | t] | min) }' "$run/unit.json")
  check "$name: READY (rtbench's READY entry or systemd's \"Started\") before the summary entry" \
        "monotonic µs: $order" \
        jq -e '. as $o | [.ready_entry, .started] | map(select(. != null)) as $ready
               | $o.summary != null and ($ready | length) > 0
               and ($ready | all(. < $o.summary and . < ($o.first_cpu_entry // $o.summary)))' <<< "$order"

  check "$name: results file in /var/lib/rtbench parses as JSON with verdict \"$want\"" \
        "$(cat "$run/results.path" 2>/dev/null || echo 'no *.json'): verdict $(verdict_in "$run/results.json" 2>&1 | head -c 200); ls: $(tr '\n' ' ' < "$run/ls.txt")" \
        test "$(verdict_in "$run/results.json")" = "$want"
  check "$name: rtbench report --json in the guest parses, verdict \"$want\"" \
        "exit $(cat "$run/report.rc"), stderr: $(head -c 300 "$run/report.err"); verdict: $(verdict_in "$run/report.json" 2>&1 | head -c 200)" \
        test "$(verdict_in "$run/report.json")" = "$want"
  if [ -n "$catalog" ]; then
    check "$name: journalctl --update-catalog accepts the catalog, which explains the summary, per-CPU and READY entries" \
          "update-catalog exit $(cat "$run/catalog-update.rc" 2>/dev/null): $(head -c 300 "$run/catalog-update.txt" 2>/dev/null)" \
          bash -c "test \"\$(cat '$run/catalog-update.rc')\" = 0 &&
                   grep -q '^$ID_SUMMARY ' '$run/catalog-list.txt' &&
                   grep -q '^$ID_CPU ' '$run/catalog-list.txt' &&
                   grep -q '^$ID_READY ' '$run/catalog-list.txt'"
    local gaps
    gaps=$(catalog_gaps)
    check "$name: every @FIELD@ in the catalog is a field of the logged entries it explains" \
          "placeholders with no such field in the entry (MESSAGE_ID FIELD): $gaps" \
          test -z "$gaps"
    check "$name: journalctl -x shows no bare @FIELD@ (every placeholder filled)" \
          "$(grep -o '@[A-Z0-9_]*@' "$run/unit-x.txt" 2>/dev/null | sort -u | tr '\n' ' ')" \
          bash -c "test -s '$run/unit-x.txt' && ! grep -q '@RTBENCH_[A-Z0-9_]*@' '$run/unit-x.txt'"
  fi
  # The run names its boot and what started it (report never shows another boot's run as
  # this one's), and `rtbench report` exits as the verdict says (0 only for pass).
  check "$name: the results file names this boot (boot_id) and trigger systemd/rtbench.service" \
        "origin: $(jq -c .origin "$run/results.json" 2>&1 | head -c 300); guest boot_id=$(guest boot_id)" \
        jq -e --arg b "$(guest boot_id)" '.origin.boot_id == $b and .origin.trigger == "systemd"
                                          and .origin.unit == "rtbench.service"' "$run/results.json"
  local rc=1
  [ "$want" = pass ] && rc=0
  check "$name: rtbench report in the guest exits $rc and shows this boot's run" \
        "exit $(cat "$run/report-text.rc" 2>/dev/null); $(head -c 400 "$run/report.txt")" \
        bash -c "test \"\$(cat '$run/report-text.rc')\" = $rc && grep -q ', this boot)' '$run/report.txt' &&
                 grep -q '^rtbench self-test ${want^^} ' '$run/report.txt'"
}

pair_test_checks() {  # pass boot: pass.toml runs cyclic, pmq and pipe one after the other
  local summary cpus test cpu
  summary=$(entries $ID_SUMMARY)
  check "pass: the summary covers the three tests (RTBENCH_TESTS=cyclic,pmq,pipe)" \
        "$(jq -c '[.[] | {RTBENCH_TESTS, RTBENCH_THREADS}]' <<< "$summary")" \
        jq -e '.[0].RTBENCH_TESTS == "cyclic,pmq,pipe"' <<< "$summary"
  cpus=$(entries $ID_CPU)
  for test in pmq pipe; do
    for cpu in $(expand_cpus "$(guest online)"); do
      check "pass: $test entry (MESSAGE_ID=$ID_CPU, RTBENCH_TEST=$test) for the pair on CPU $cpu with RTBENCH_VERDICT=pass and samples" \
            "$test entries: $(jq -c --arg t "$test" '[.[] | select(.RTBENCH_TEST == $t) | {RTBENCH_CPU, RTBENCH_THREAD, RTBENCH_SAMPLES, RTBENCH_VERDICT, MESSAGE}]' <<< "$cpus" | head -c 600)" \
            jq -e --arg t "$test" --arg c "$cpu" '[.[] | select(.RTBENCH_TEST == $t and .RTBENCH_CPU == $c
                and .RTBENCH_VERDICT == "pass" and (.RTBENCH_SAMPLES | test("^[1-9][0-9]*$")))] | length == 1' <<< "$cpus"
    done
  done
  check "pass: the results file and rtbench report hold cyclic, pmq and pipe" \
        "tests: $(jq -c '[.tests[].test]' "$run/results.json" 2>&1 | head -c 200); report rows: $(grep -cE '^(pmq|pipe) ' "$run/report.txt")" \
        bash -c "jq -e '[.tests[].test] == [\"cyclic\", \"pmq\", \"pipe\"]' '$run/results.json' > /dev/null &&
                 grep -qE '^pmq +[0-9]+ .* pass\$' '$run/report.txt' && grep -qE '^pipe +[0-9]+ .* pass\$' '$run/report.txt'"
}

irq_thread_checks() {  # pass boot: [tuning.irq] affinity moved IRQ threads with their IRQs
  # One item per line: a handler's name may hold spaces (arm64 virt: "irq/24-GPIO Key Poweroff").
  local items bad outside=""
  items=$(jq -rs '[.[] | select((.RTBENCH_TUNE_ITEM // "") | startswith("irq-thread."))]
                  | map("\(.RTBENCH_TUNE_ITEM)=\(.RTBENCH_TUNE_STATUS)") | join("\n")' "$run/unit.json")
  bad=$(grep -Ev '=(ok|unsupported|not-applicable)$' <<< "$items" | paste -sd ';' || true)
  check "pass: the tuning reported every irq/N-* handler thread of the PREEMPT_RT guest, none deviating or failed" \
        "irq-thread items: $(paste -sd ';' <<< "${items:-none}"); bad: $bad" \
        test -n "$items" -a -z "$bad"
  local isolated
  isolated=$(guest isolated)
  while IFS=$'\t' read -r comm allowed irq_aff; do
    local a irq=${comm#irq/}
    irq=${irq%%-*}
    # A thread the kernel refused to move (reported unsupported) may stay. The item names the
    # IRQ's full action name; comm is cut at 15 characters, so match on the IRQ number.
    grep -q "^irq-thread\.irq/$irq-.*=unsupported\$" <<< "$items" && continue
    for a in $(expand_cpus "$allowed"); do
      if [[ " $(expand_cpus "$isolated") " == *" $a "* ]]; then
        outside+="$comm allowed on $allowed (IRQ on $irq_aff); "
      fi
    done
  done < "$run/irq-threads.txt"
  check "pass: no irq/N-* thread may run on the isolated CPU $isolated after tuning, unless reported unsupported ($(wc -l < "$run/irq-threads.txt") threads, managed IRQs included)" \
        "$outside" test -s "$run/irq-threads.txt" -a -z "$outside"
}

cpuset_checks() {  # pass boot: rtbench cyclic -S in a cgroup v2 cpuset of CPU 1
  local rc tlines cpu version
  rc=$(cat "$run/cpuset-run.rc" 2>/dev/null || echo missing)
  tlines=$(grep -c '^T:' "$run/cpuset-run.out" 2>/dev/null || true)
  cpu=$(jq -r '.thread["0"].cpu' "$run/cpuset.json" 2>/dev/null || echo none)
  version=$(jq -r '.rtbench.sysinfo.cpuset.version' "$run/cpuset.json" 2>/dev/null || echo none)
  check "pass: rtbench cyclic -S inside a cgroup v2 cpuset of CPU 1 measures CPU 1 only and records the cpuset" \
        "exit $rc, $tlines T: lines, thread 0 on CPU $cpu, cpuset version $version; setup: $(head -c 200 "$run/cpuset-setup.txt" 2>/dev/null); stderr: $(head -c 300 "$run/cpuset-run.err" 2>/dev/null)" \
        test "$rc" = 0 -a "$tlines" = 1 -a "$cpu" = 1 -a "$version" = v2
}

explain_checks() {  # explain boot: the culprit named, timerlat beside, hwlat ran, nothing left
  local explained failed
  explained=$(entries $ID_EXPLAINED)
  check "explain: a late-sample entry (MESSAGE_ID=$ID_EXPLAINED) names the culprit: RTBENCH_CULPRIT_COMM=vendord-burn, RTBENCH_EXPLAIN_KIND=task, RTBENCH_CPU=1, valid" \
        "explained entries: $(jq -c '[.[] | {RTBENCH_CPU, RTBENCH_EXPLAIN_KIND, RTBENCH_CULPRIT_COMM, RTBENCH_EXPLANATION}]' <<< "$explained" | head -c 800)$(elsewhere $ID_EXPLAINED)" \
        jq -e '[.[] | select(.RTBENCH_CULPRIT_COMM == "vendord-burn" and .RTBENCH_EXPLAIN_KIND == "task"
                             and .RTBENCH_CPU == "1" and .RTBENCH_EXPLAIN_VALID == "1")] | length >= 1' <<< "$explained"
  failed=$(entries $ID_SUMMARY | jq -r '.[0].RTBENCH_FAILED // ""')
  # The field's question, what keeps failing the unit: the summary's cause with the most
  # samples over the limit is the culprit's bursts on CPU 1, each a new process of the name.
  top=$(entries $ID_SUMMARY | jq -r '.[0].RTBENCH_TOP_CAUSES // ""')
  check "explain: the summary's top cause (RTBENCH_TOP_CAUSES) is vendord-burn on CPU 1, its bursts counted under one name" \
        "$(head -c 600 <<< "$top")" \
        grep -qE '^cyclic CPU 1: [0-9]+× task vendord-burn \(' <<< "$top"
  # The maximum itself: explained as the culprit, or said why it could not be (under
  # emulation, reading one sample's trace can take the recorder away for ~2 s: the burst
  # that falls there is counted as not analysed, never blamed on something else).
  check "explain: the summary's failure for CPU 1 names the culprit, or why its maximum was not analysed" \
        "$(head -c 600 <<< "$failed")" \
        grep -qE 'cyclic CPU 1 max [0-9.]+ µs > limit 100000 µs: (.*CPU 1 ran vendord-burn \(pid [0-9]+, (FIFO|RT) 99\)|not recorded: |the maximum was not explained \()' <<< "$failed"
  check "explain: the kernel's timerlat tracer gave its figures beside rtbench's (results file: an explanation with timerlat samples)" \
        "tracers: $(tr '\n' ' ' < "$run/tracers.txt" 2>/dev/null); timerlat: $(jq -c '[.tests[] | select(.test == "cyclic") | .explain.explained[]? | .timerlat]' "$run/results.json" 2>&1 | head -c 300); notes: $(jq -c '[.tests[].explain.notes?]' "$run/results.json" 2>&1 | head -c 300)" \
        jq -e '[.tests[] | select(.test == "cyclic") | .explain.explained[]? | select(.timerlat.samples > 0)] | length >= 1' "$run/results.json"
  # The margin, measured where it happened: every burst the guest logged stalled CPU 1 for
  # at least 5 times the 100 ms limit (START END in centiseconds of the guest's uptime).
  check "explain: the culprit's bursts, timed in the guest, were each >= 500 ms (5 x the limit)" \
        "bursts (start end, cs): $(tr '\n' ';' < "$run/bursts.txt" 2>/dev/null | head -c 400)" \
        bash -c "test -s '$run/bursts.txt' && awk '\$2 - \$1 < 50 { bad = 1 } END { exit bad }' '$run/bursts.txt'"
  local hwlat_field
  hwlat_field=$(entries $ID_SUMMARY | jq -r '.[0].RTBENCH_HWLAT // "absent"')
  check "explain: the hwlat gate ran before the tests (results file hardware.hwlat, journal RTBENCH_HWLAT)" \
        "hardware: $(jq -c .hardware "$run/results.json" 2>&1 | head -c 300); RTBENCH_HWLAT=$hwlat_field" \
        bash -c "jq -e '.hardware.hwlat.ran_ms > 0 and (.hardware.hwlat.unsupported == null)' '$run/results.json' &&
                 [[ \"$hwlat_field\" == hwlat* ]]"
  check "explain: no rtbench tracefs instance is left after the self-test" \
        "instances: $(tr '\n' ' ' < "$run/instances.txt" 2>/dev/null)" \
        bash -c "test -f '$run/instances.txt' && ! grep -q '^rtbench-' '$run/instances.txt'"
  # The shipped monitor unit, its sandbox included (tracefs writable under ProtectSystem=):
  # started after the self-test, bursts of vendord-burn beside it (guest/collect).
  local mon
  mon=$(jq -cs "[.[] | select(.MESSAGE_ID == \"$ID_EXPLAINED\")]" "$run/monitor.json" 2>/dev/null || echo '[]')
  check "explain: rtbench-monitor.service explains a window's maximum as the culprit (MESSAGE_ID=$ID_EXPLAINED, RTBENCH_CULPRIT_COMM=vendord-burn, CPU 1)" \
        "start rc $(cat "$run/monitor-start.rc" 2>/dev/null), bursts $(cat "$run/monitor-bursts.txt" 2>/dev/null); explained: $(jq -c '[.[] | {RTBENCH_EXPLAIN_KIND, RTBENCH_CULPRIT_COMM, RTBENCH_EXPLANATION}]' <<< "$mon" | head -c 600); monitor said: $(grep -v ' systemd\[' "$run/monitor.txt" 2>/dev/null | grep -i 'explain\|tracefs\|error\|warn' | head -c 600)" \
        jq -e '[.[] | select(.RTBENCH_CULPRIT_COMM == "vendord-burn" and .RTBENCH_CPU == "1")] | length >= 1' <<< "$mon"
  check "explain: the monitor said nothing like 'cannot explain'" \
        "$(grep -i 'cannot explain' "$run/monitor.txt" 2>/dev/null | head -c 600)" \
        bash -c "test -s '$run/monitor.txt' && ! grep -qi 'cannot explain' '$run/monitor.txt'"
  check "explain: the monitor stopped cleanly (SIGTERM, exit 143 = success) and left no tracefs instance" \
        "$(tr '\n' ' ' < "$run/monitor-show.txt" 2>/dev/null); instances: $(tr '\n' ' ' < "$run/monitor-instances.txt" 2>/dev/null)" \
        bash -c "grep -qx 'Result=success' '$run/monitor-show.txt' && test -f '$run/monitor-instances.txt' && ! grep -q '^rtbench-' '$run/monitor-instances.txt'"
}

if [ -z "$pass_run$fail_run$unjudged_run$explain_run$conditions_run" ]; then
  "$here/build-image.sh" > /dev/null || { echo "FAIL: building the guest image"; exit 2; }
fi

# rtbench-ptest's run-ptest (the Yocto package's ptest), run in the pass boot's guest after
# the self-test: every result line must be PASS (SKIP only for what the build lacks).
ptest_checks() {
  local lines bad
  lines=$(grep -cE '^(PASS|FAIL|SKIP): ' "$run/ptest.txt" 2>/dev/null || true)
  bad=$(grep -E '^(FAIL|SKIP): ' "$run/ptest.txt" 2>/dev/null | tr '\n' ' ' || true)
  check "pass: run-ptest (rtbench-ptest) in the guest: every line PASS ($lines lines), exit 0" \
        "exit $(cat "$run/ptest.rc" 2>/dev/null || echo missing); not PASS: $bad; output: $(grep -vE '^PASS: ' "$run/ptest.txt" 2>/dev/null | head -c 1200)" \
        test "$(cat "$run/ptest.rc" 2>/dev/null)" = 0 -a "${lines:-0}" -ge 10 -a -z "$bad"
}

if [ -z "$only" ] || [ "$only" = pass ]; then
  if boot pass "$here/pass.toml" "$pass_run" --ptest "$repo/meta-rtbench/recipes-rt/rtbench/files/run-ptest"; then
    common_checks pass pass
    check "pass: unit Result=success, ExecMainStatus=0" \
          "Result=$(show Result) ExecMainStatus=$(show ExecMainStatus) ActiveState=$(show ActiveState)" \
          test "$(show Result)" = success -a "$(show ExecMainStatus)" = 0
    want=$(toml_value "$here/pass.toml" tuning.sysctl printk)
    got=$(cut -f1 "$run/printk")
    before=$(cut -f1 "$run/printk.before" 2>/dev/null || echo '?')
    check "pass: console loglevel in the guest is the configured printk = $want (was $before before rtbench)" \
          "/proc/sys/kernel/printk before: '$(cat "$run/printk.before" 2>/dev/null)', after: '$(cat "$run/printk")'" \
          test "$got" = "$want" -a "$before" != "$want"
    # [output] prometheus under the shipped unit (ProtectSystem=strict + ReadWritePaths=)
    prom=$(toml_value "$here/pass.toml" output prometheus)
    check "pass: $prom written under the shipped unit, mode 0644 (node_exporter reads it as user prometheus)" \
          "ls: $(tr '\n' ' ' < "$run/prom-ls.txt" 2>/dev/null); output-not-written entries: $(jq -c '[.[] | select(.MESSAGE_ID == "4ac37d680e7a4865822e0b39e581b9e0") | .MESSAGE]' <<< "$(jq -cs . "$run/unit.json")")" \
          grep -qE "^-rw-r--r-- .* $(basename "$prom")\$" "$run/prom-ls.txt"
    # node_exporter gives every series of a family the same label names: a cyclic series
    # gets pair="", a pair's thread="" (empty labels, the same series to PromQL).
    check "pass: node_exporter's /metrics on localhost serves the rtbench metrics (verdict pass, stored, cyclic, pmq and pipe, the pairs labelled pair=)" \
          "node_exporter: $(tr '\n' ' ' < "$run/prom-show.txt" 2>/dev/null); rtbench lines: $(grep -c '^rtbench_' "$run/metrics.txt" 2>/dev/null); textfile: $(grep '^node_textfile' "$run/metrics.txt" 2>/dev/null | tr '\n' ' '); $(head -c 200 "$run/metrics.err" 2>/dev/null)" \
          bash -c "grep -qx 'rtbench_selftest_pass 1' '$run/metrics.txt' &&
                   grep -qx 'rtbench_selftest_verdict{verdict=\"pass\"} 1' '$run/metrics.txt' &&
                   grep -qx 'rtbench_selftest_stored 1' '$run/metrics.txt' &&
                   grep -qE '^rtbench_latency_max_seconds\\{cpu=\"1\",(pair=\"\",)?test=\"cyclic\",thread=\"1\"\\} ' '$run/metrics.txt' &&
                   grep -qE '^rtbench_latency_max_seconds\\{cpu=\"1\",pair=\"1\",test=\"pmq\"(,thread=\"\")?\\} ' '$run/metrics.txt' &&
                   grep -qE '^rtbench_latency_max_seconds\\{cpu=\"1\",pair=\"1\",test=\"pipe\"(,thread=\"\")?\\} ' '$run/metrics.txt' &&
                   grep -qE '^rtbench_cpu_verdict\\{cpu=\"1\",(pair=\"\",)?test=\"cyclic\",thread=\"1\",verdict=\"pass\"\\} 1$' '$run/metrics.txt' &&
                   ! grep -q '^node_textfile_scrape_error 1' '$run/metrics.txt'"
    pair_test_checks
    irq_thread_checks
    cpuset_checks
    ptest_checks
  fi
fi
if [ -z "$only" ] || [ "$only" = fail ]; then
  if boot fail "$here/fail.toml" "$fail_run"; then
    common_checks fail fail
    check "fail: unit failed with Result=exit-code, ExecMainStatus=1" \
          "Result=$(show Result) ExecMainStatus=$(show ExecMainStatus) ActiveState=$(show ActiveState)" \
          test "$(show Result)" = exit-code -a "$(show ExecMainStatus)" = 1 -a "$(show ActiveState)" = failed
    # What failed, by name: max_us = 1 fails the max of every CPU (µs for people).
    msg=$(entries $ID_SUMMARY | jq -r '.[0].MESSAGE // ""')
    named=1
    for cpu in $(expand_cpus "$(guest online)"); do
      grep -qE "cyclic CPU $cpu max [0-9.]+ µs > limit 1 µs" <<< "$msg" || named=0
    done
    check "fail: the summary names each failed check (cyclic CPU N max ... µs > limit 1 µs)" \
          "$(head -c 400 <<< "$msg")" test $named = 1
    check "fail: rtbench report names the failed checks (with their explained causes)" \
          "$(grep '^FAIL' "$run/report.txt" | head -n 4 | tr '\n' '|')" \
          grep -qE '^FAIL cyclic CPU [0-9]+ max [0-9.]+ µs > limit 1 µs(: .+)?$' "$run/report.txt"
  fi
fi
if [ -z "$only" ] || [ "$only" = unjudged ]; then
  if boot unjudged "$here/unjudged.toml" "$unjudged_run"; then
    common_checks unjudged unjudged
    check "unjudged: the summary says why (RTBENCH_UNJUDGED: no [limits])" \
          "$(entries $ID_SUMMARY | jq -c '[.[] | {RTBENCH_UNJUDGED, MESSAGE}]' | head -c 400)" \
          jq -e '.[0].RTBENCH_UNJUDGED | test("no \\[limits\\]")' <<< "$(entries $ID_SUMMARY)"
    check "unjudged: fails closed: unit Result=exit-code, ExecMainStatus=1" \
          "Result=$(show Result) ExecMainStatus=$(show ExecMainStatus) ActiveState=$(show ActiveState)" \
          test "$(show Result)" = exit-code -a "$(show ExecMainStatus)" = 1 -a "$(show ActiveState)" = failed
  fi
fi

if [ -z "$only" ] || [ "$only" = conditions ]; then
  if boot conditions "$here/conditions.toml" "$conditions_run"; then
    common_checks conditions fail
    check "conditions: per-CPU entries of each condition (RTBENCH_CONDITION idle, stress, isolated)" \
          "$(entries $ID_CPU | jq -c '[.[] | {RTBENCH_CONDITION, RTBENCH_CPU, RTBENCH_VERDICT}]' | head -c 600)" \
          jq -e '[.[] | .RTBENCH_CONDITION] | unique == ["idle", "isolated", "stress"]' <<< "$(entries $ID_CPU)"
    msg=$(entries $ID_SUMMARY | jq -r '.[0].MESSAGE // ""')
    check "conditions: the summary names the stress condition's failures, and no other condition's" \
          "$(head -c 600 <<< "$msg")" \
          bash -c 'grep -qE "stress: cyclic CPU [0-9]+ max [0-9.]+ µs > limit 1 µs" <<< "$1" && ! grep -qE "(idle|isolated): cyclic CPU" <<< "$1"' _ "$msg"
    check "conditions: rtbench report prints the vendors' table (cyclic, condition × min/avg/max/p99.9)" \
          "$(head -c 800 "$run/report.txt")" \
          bash -c "grep -q '^cyclic (µs)' '$run/report.txt' && grep -q 'condition stress, load: cpu:1' '$run/report.txt'"
  fi
fi

if [ -z "$only" ] || [ "$only" = explain ]; then
  if boot explain "$here/explain.toml" "$explain_run" --culprit \
       --monitor "$repo/systemd/rtbench-monitor.service"; then
    common_checks explain fail
    explain_checks
  fi
fi

echo "--- $((total - failures)) of $total assertions passed ($SECONDS s)"
[ "$failures" = 0 ]

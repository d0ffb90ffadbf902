#!/bin/bash
# Packaging checks run by CI (.ci/run): the Yocto layer, the Buildroot tree,
# the systemd unit and catalog, and the SysV init script.
#
#  1. oelint-adv on the recipes, once per supported release (scarthgap, wrynose)
#  2. rtbench-crates.inc matches Cargo.lock (scripts/gen-crates-inc.py --check,
#     and the generator's own tests), the release data (source address, version,
#     SRCREV, Buildroot hash lines, licences) agree with Cargo.toml/Cargo.lock
#     (scripts/release-packaging.py check, and its tests),
#     the recipe's version matches Cargo.toml, license checksums match the files
#  3. shellcheck on the init script and the repository's shell scripts
#  4. systemd-analyze verify and security (exposure <= 5.0) for rtbench.service,
#     and the journal catalog compiles with all its MESSAGE_IDs
#  5. Buildroot conventions check-package would enforce (hash format, tabs,
#     BR2_DOWNLOAD_FORCE_CHECK_HASHES in defconfigs)
#  6. tests/initscript.sh: the init script under BusyBox sh;
#     tests/buildroot-install.sh: rtbench.mk's install steps and systemd preset
#
# Installs only what is missing: oelint-adv (pip, pinned 9.11.2), shellcheck and busybox
# (apt-get). Exits non-zero on any finding; prints "N passed, N failed".
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

passed=0
failed=0
step() { echo; echo "== $*"; }
pass() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*" >&2; }

# --- tools ----------------------------------------------------------------
if ! command -v oelint-adv >/dev/null 2>&1; then
	# Debian 12's own python3 refuses pip installs (PEP 668) unless told otherwise.
	python3 -m pip install --quiet "oelint-adv==9.11.2" 2>/dev/null \
		|| python3 -m pip install --quiet --break-system-packages "oelint-adv==9.11.2" \
		|| { echo "cannot install oelint-adv" >&2; exit 2; }
fi
missing=()
command -v shellcheck >/dev/null 2>&1 || missing+=(shellcheck)
command -v busybox >/dev/null 2>&1 || missing+=(busybox)
if [ "${#missing[@]}" -gt 0 ]; then
	{ apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}"; } >/dev/null \
		|| { echo "cannot install ${missing[*]}" >&2; exit 2; }
fi

# --- 1. oelint-adv ------------------------------------------------------------
# Suppressed for every file, with the reason:
#  oelint.vars.homepageping      needs the network; the URL is a placeholder
#  oelint.var.bbclassextend      rtbench is a target-only tool (unit, tuning); a
#                                file-level finding, which no inline comment reaches
# Not counted in rtbench-crates.inc only (shown): oelint.vars.inconspaces and
# oelint.vars.notneededspace. The file is generated in exactly the format of
# oe-core's `bitbake -c update_crates` (SRC_URI += " \), which these rules
# dislike; in any other file they count. Other suppressions are inline
# (# nooelint: RULE) next to the line they concern.
recipes=(meta-rtbench/recipes-*/*/*.bb)
crates_only='^[^:]*-crates\.inc:[0-9]+:[a-z]+:oelint\.vars\.(inconspaces|notneededspace):'
for release in scarthgap wrynose; do
	step "oelint-adv --release $release"
	out=$(oelint-adv --release "$release" --mode all --quiet --relpaths \
		--suppress oelint.vars.homepageping \
		--suppress oelint.var.bbclassextend \
		"${recipes[@]}" 2>&1)
	rc=$?
	[ -n "$out" ] && printf '%s\n' "$out"
	counted=$(printf '%s\n' "$out" | grep ':oelint\.' | grep -Ev "$crates_only" || true)
	n=$(printf '%s' "$counted" | grep -c ':oelint\.' || true)
	# oelint-adv exits non-zero on any finding, the generated file's too: judge by
	# the counted findings, and fail on anything else it printed (a crash) or an
	# exit status with nothing printed.
	other=$(printf '%s\n' "$out" | grep -v '^$' | grep -Ev '^[^:]+:[0-9]+:[a-z]+:oelint\.' || true)
	if [ "$n" -eq 0 ] && [ -z "$other" ] && { [ "$rc" -eq 0 ] || [ -n "$out" ]; }; then
		pass "oelint-adv $release: 0 findings in ${#recipes[@]} recipes (generated crates.inc: $(printf '%s\n' "$out" | grep -cE "$crates_only") layout findings not counted)"
	else
		fail "oelint-adv $release: $n findings (exit $rc)"
	fi
done

# --- 2. recipe data vs. the source tree -----------------------------------------
step "crates.inc, version, license checksums"
if python3 -m unittest discover -s tests -p 'test_gen_crates_inc.py'; then
	pass "gen-crates-inc.py unit tests"
else
	fail "gen-crates-inc.py unit tests"
fi
if python3 scripts/gen-crates-inc.py --check; then
	pass "rtbench-crates.inc matches Cargo.lock"
else
	fail "rtbench-crates.inc is stale: run scripts/gen-crates-inc.py"
fi
if python3 -m unittest discover -s tests -p 'test_release_packaging.py'; then
	pass "release-packaging.py unit tests"
else
	fail "release-packaging.py unit tests"
fi
if python3 scripts/release-packaging.py check; then
	pass "recipe and Buildroot package release data agree with Cargo.toml and Cargo.lock"
else
	fail "release data: run scripts/release-packaging.py check (docs/RELEASING.md)"
fi
cargo_version=$(sed -n '/^\[package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml | head -n1)
if [ -e "meta-rtbench/recipes-rt/rtbench/rtbench_${cargo_version}.bb" ]; then
	pass "recipe rtbench_${cargo_version}.bb matches Cargo.toml version"
else
	fail "no meta-rtbench/recipes-rt/rtbench/rtbench_${cargo_version}.bb for Cargo.toml version $cargo_version"
fi
recipe=$(ls meta-rtbench/recipes-rt/rtbench/rtbench_*.bb)
for f in LICENSE-MIT LICENSE-APACHE; do
	md5=$(md5sum "$f" | cut -d' ' -f1)
	if grep -q "file://$f;md5=$md5" "$recipe"; then
		pass "LIC_FILES_CHKSUM md5 of $f"
	else
		fail "LIC_FILES_CHKSUM for $f does not match md5 $md5"
	fi
	sha=$(sha256sum "$f" | cut -d' ' -f1)
	if grep -qx "sha256  $sha  $f" buildroot-package/package/rtbench/rtbench.hash; then
		pass "rtbench.hash sha256 of $f"
	else
		fail "rtbench.hash has no 'sha256  $sha  $f'"
	fi
done

# --- 3. shellcheck ---------------------------------------------------------------
step "shellcheck"
scripts=(buildroot-package/package/rtbench/S95rtbench tests/*.sh scripts/*.sh
	buildroot-package/board/*/*.sh meta-rtbench/recipes-rt/rtbench/files/*.init
	meta-rtbench/recipes-rt/rtbench/files/run-ptest)
if shellcheck "${scripts[@]}"; then
	pass "shellcheck: ${#scripts[@]} scripts clean"
else
	fail "shellcheck findings"
fi

# --- 4. systemd unit and catalog -----------------------------------------------
step "systemd-analyze"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# verify wants ExecStart's binary to exist: check a copy whose ExecStart
# points at an executable stand-in, the rest of the unit unchanged.
printf '#!/bin/sh\nexit 0\n' > "$tmp/rtbench"
chmod 755 "$tmp/rtbench"
sed "s|^ExecStart=/usr/bin/rtbench |ExecStart=$tmp/rtbench |" systemd/rtbench.service > "$tmp/rtbench.service"
if out=$(systemd-analyze verify "$tmp/rtbench.service" 2>&1) && [ -z "$out" ]; then
	pass "systemd-analyze verify rtbench.service: clean"
else
	printf '%s\n' "$out"
	fail "systemd-analyze verify rtbench.service"
fi
exposure=$(systemd-analyze security --offline=true systemd/rtbench.service 2>&1 |
	sed -n 's/.*Overall exposure level for rtbench.service: \([0-9.]*\).*/\1/p')
if [ -n "$exposure" ] && awk -v e="$exposure" 'BEGIN { exit !(e <= 5.0) }'; then
	pass "systemd-analyze security rtbench.service: exposure $exposure (<= 5.0)"
else
	fail "systemd-analyze security rtbench.service: exposure '${exposure:-?}' (want <= 5.0)"
fi
mkdir -p "$tmp/root/usr/lib/systemd/catalog" "$tmp/root/var/lib/systemd/catalog"
cp systemd/rtbench.catalog "$tmp/root/usr/lib/systemd/catalog/"
# Every MESSAGE_ID of src/report/journal/mod.rs (ALL_IDS: the self-test's and the
# monitor's).
ids=(b338a16c561342608e6e5ef41b0a0813 7b1dd0eea94d4cc4bd8f9e6c91b6465d 872270459a844055a01dbd7e3ccfd9a5
	007f10bc07da46b6b3fc256220fca838 6a9954f26ad8443b8423171c8abd3682 ccf6df43a9334ab7b3aa20e9f71826dd
	4ac37d680e7a4865822e0b39e581b9e0 11388322edd8448fb26766740685d2fb e677ff564d274fdaa78418a6ad5240c9
	c235ff9bebdd447a895829d54b7b1aa9 cc642425788247bfaec2950f5114111e a694d7ed549d47af8e69c18a54fad1a8
	d4afd97974874b9781398c86865fe1c7 37e4093074a449328d450b9a6e3f66f8 8d09e443b62944249b71ee2f6aa7adff)
if journalctl --root="$tmp/root" --update-catalog 2>&1 | tee "$tmp/catalog.log" | grep -q .; then
	cat "$tmp/catalog.log"
	fail "journalctl --update-catalog printed warnings"
else
	listed=$(journalctl --root="$tmp/root" --list-catalog)
	n=0
	for id in "${ids[@]}"; do
		grep -q "^$id " <<<"$listed" && n=$((n + 1))
	done
	if [ "$n" -eq "${#ids[@]}" ] && [ "$(wc -l <<<"$listed")" -eq "${#ids[@]}" ]; then
		pass "rtbench.catalog compiles: ${#ids[@]} MESSAGE_IDs"
	else
		printf '%s\n' "$listed"
		fail "rtbench.catalog: $n of ${#ids[@]} MESSAGE_IDs compiled"
	fi
fi

# --- 5. Buildroot conventions (a subset of utils/check-package) -------------------
step "Buildroot tree"
bad_hash=$(grep -vE '^(#.*|sha256  [0-9a-f]{64}  [^ ]+)$' buildroot-package/package/*/*.hash)
if [ -z "$bad_hash" ]; then pass ".hash files: 'sha256  <64 hex>  <file>' lines"; else printf '%s\n' "$bad_hash"; fail ".hash format"; fi
bad_mk=$(grep -nE '^ +[^ ]' buildroot-package/package/*/*.mk)
if [ -z "$bad_mk" ]; then pass ".mk files: tab indentation"; else printf '%s\n' "$bad_mk"; fail ".mk indentation"; fi
bad_var=$(grep -hoE '^[A-Z0-9_]+ *[+:?]?=' buildroot-package/package/rtbench/rtbench.mk | grep -v '^RTBENCH_' || true)
if [ -z "$bad_var" ]; then pass "rtbench.mk: all variables start with RTBENCH_"; else fail "rtbench.mk variables: $bad_var"; fi
for d in buildroot-package/configs/*_defconfig; do
	if grep -qx 'BR2_DOWNLOAD_FORCE_CHECK_HASHES=y' "$d"; then pass "$(basename "$d"): BR2_DOWNLOAD_FORCE_CHECK_HASHES=y"; else fail "$d lacks BR2_DOWNLOAD_FORCE_CHECK_HASHES=y"; fi
done
mapfile -t br_files < <(find buildroot-package -type f ! -name '*.md')
bad_ws=$(grep -nE '[[:space:]]+$' "${br_files[@]}"; for f in "${br_files[@]}"; do
	[ -n "$(tail -c1 "$f")" ] && echo "$f: no newline at end of file"
	# Python files follow flake8 (two empty lines before a class), as check-package runs it.
	case $f in *.py) ;; *) awk -v f="$f" 'prev == "" && $0 == "" && NR > 1 { print f ":" NR ": consecutive empty lines" } { prev = $0 }' "$f" ;; esac
	[ -z "$(tail -n1 "$f")" ] && echo "$f: empty last line"
done)
if [ -z "$bad_ws" ]; then pass "Buildroot files: no trailing space, empty last line or double empty lines"; else printf '%s\n' "$bad_ws"; fail "Buildroot whitespace"; fi
bad_help=$(awk '/^[^\t#]/ { help = 0 } /^\thelp$/ { help = 1; next } help && /^\t  / && length($0) > 65 && !/^\t  (http|https|git):\/\/[^ ]*$/ { print FILENAME ":" FNR ": help text over 62 chars" }' buildroot-package/Config.in buildroot-package/package/*/Config.in)
if [ -z "$bad_help" ]; then pass "Config.in help text: <tab><2 spaces><62 chars>"; else printf '%s\n' "$bad_help"; fail "Config.in help text"; fi
init=buildroot-package/package/rtbench/S95rtbench
# shellcheck disable=SC2016 # the literal $DAEMON is what the script must contain
if grep -qx 'DAEMON="rtbench"' "$init" && grep -qx 'PIDFILE="/var/run/$DAEMON.pid"' "$init" &&
	! grep -qP '^\t* ' "$init"; then
	pass "S95rtbench: DAEMON, PIDFILE and tab indentation as check-package wants"
else
	fail "S95rtbench: DAEMON=\"rtbench\", PIDFILE=\"/var/run/\$DAEMON.pid\" or tab indentation"
fi
# One SysV script for both trees: each is sent upstream on its own, so each has a copy.
if cmp -s "$init" meta-rtbench/recipes-rt/rtbench/files/rtbench.init; then
	pass "meta-rtbench's rtbench.init is Buildroot's S95rtbench"
else
	fail "meta-rtbench/recipes-rt/rtbench/files/rtbench.init differs from $init: copy it"
fi
if [ ! -x buildroot-package/package/rtbench/S95rtbench ]; then pass "S95rtbench not executable in the tree (installed -m 0755)"; else fail "S95rtbench must not be executable in the tree"; fi

# --- 6. init script under BusyBox, Buildroot install steps ----------------------
step "tests/initscript.sh"
if bash tests/initscript.sh; then pass "init script test under BusyBox sh"; else fail "init script test"; fi
step "tests/buildroot-install.sh"
if bash tests/buildroot-install.sh; then pass "rtbench.mk install steps and preset"; else fail "rtbench.mk install steps and preset"; fi

echo
echo "lint-packaging: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

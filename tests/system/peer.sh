#!/bin/sh
# make check-peer: CPython's own regression tests for threads, subprocesses, signals, mmap,
# ctypes, sqlite3 and more, run plain and under the profiler; every test case must end the
# same way (ok, failure, error, skipped) both times, compared from regrtest's JUnit XML, and
# the profiled run must leave readable profiles. Environment: MF_LIB, MF_PRINT. Ends with
# "N passed, N failed" (one per module, one for the profiles).
set -u
modules="test_threading test_thread test_threading_local test_subprocess test_signal test_mmap
test_ctypes test_sqlite3 test_queue test_select test_fork1 test_wait4 test_faulthandler
test_json test_re test_zlib test_os"
py=""
for cand in "$(command -v python3)" /usr/bin/python3; do
	[ -x "$cand" ] || continue
	if "$cand" -c "import test.test_sqlite3, test.test_threading, test.test_ctypes" 2>/dev/null; then
		py=$("$cand" -c 'import sys; print(sys.executable)') # past any shim script
		break
	fi
done
if [ -z "$py" ]; then
	echo "check-peer: no python3 with its regression tests (test.test_sqlite3 ...);"
	echo "  Debian's libpython3.11-testsuite leaves out test_sqlite3"
	echo "0 passed, 1 failed"
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/mf_peer.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "check-peer: $("$py" --version) ($py), $(echo $modules | wc -w) modules"

(cd "$work" && "$py" -m test -j2 --timeout 1200 --junit-xml "$work/plain.xml" $modules > "$work/plain.log" 2>&1)
mkdir "$work/profiles"
(cd "$work" && MALLOC_FREQ_DIR="$work/profiles" LD_PRELOAD="$MF_LIB" \
	"$py" -m test -j2 --timeout 1200 --junit-xml "$work/prof.xml" $modules > "$work/prof.log" 2>&1)
# One line per module: "ok - MODULE: N cases, the same both times" or what differs.
"$py" - "$work/plain.xml" "$work/prof.xml" $modules > "$work/compare" <<'PY'
import sys, xml.etree.ElementTree as ET
mods = sys.argv[3:]
def kind(tc):
    for child in tc:
        if child.tag in ("failure", "error", "skipped"):
            return child.tag
    return "ok"
def cases(path):
    """module -> {test case: outcome}; each <testsuite> is one module's run (unnamed, so it
    is told by its cases: test.test_os.*, or ctypes.test.* for test_ctypes)"""
    try:
        root = ET.parse(path).getroot()
    except Exception:
        return None
    out = {}
    for suite in root.iter("testsuite"):
        names = [tc.get("name") or "" for tc in suite.iter("testcase")]
        mod = next((m for m in mods if any((".%s." % m) in n for n in names)), None)
        if mod is None and any(n.startswith("ctypes.test.") for n in names):
            mod = "test_ctypes"
        for tc in suite.iter("testcase"):
            out.setdefault(mod, {})[tc.get("name")] = kind(tc)
    return out
# Cases whose outcome varies between plain runs too, and why.
FLAKY = {
    "test.test_os.FileTests.test_closerange":
        "skips when two consecutive descriptors cannot be had, which depends on timing",
    "test.test_os.TestInvalidFD.test_closerange":
        "skips unless the descriptors just above a fresh one are all free, which depends on "
        "what else is open at that moment",
}
plain, prof = cases(sys.argv[1]), cases(sys.argv[2])
for m in mods:
    if plain is None or prof is None:
        print("not ok - %s: no JUnit report" % m)
        continue
    a, b = plain.get(m, {}), prof.get(m, {})
    diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k) and k not in FLAKY)
    for k in sorted(set(a) | set(b)):
        if k in FLAKY and a.get(k) != b.get(k):
            print("# %s: plain %s, profiled %s (known to vary: %s)" % (k, a.get(k), b.get(k), FLAKY[k]))
    if not a:
        print("not ok - %s: no test cases ran" % m)
    elif diff:
        print("not ok - %s: %d cases differ: %s" % (m, len(diff), "; ".join(
            "%s: plain %s, profiled %s" % (k, a.get(k), b.get(k)) for k in diff[:8])))
    else:
        kinds = {}
        for v in a.values():
            kinds[v] = kinds.get(v, 0) + 1
        print("ok - %s: %d cases, the same both times (%s)" %
              (m, len(a), ", ".join("%d %s" % (n, k) for k, n in sorted(kinds.items()))))
PY
cat "$work/compare"
passed=$(grep -c '^ok' "$work/compare")
failed=$(grep -c '^not ok' "$work/compare")
dirs=$(ls -d "$work"/profiles/malloc_freq.* 2>/dev/null | wc -l)
if [ "$dirs" -gt 0 ] && "$MF_PRINT" --collapsed "$work/profiles" > /dev/null 2> "$work/print.err"; then
	echo "ok - mf_print reads all $dirs profile directories of the profiled run"
	passed=$((passed + 1))
else
	echo "not ok - mf_print on the profiled run's $dirs directories: $(head -3 "$work/print.err")"
	failed=$((failed + 1))
fi
grep -h "^Tests result\|Total duration" "$work/plain.log" "$work/prof.log" | sed 's/^/# /'
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

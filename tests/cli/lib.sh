# shellcheck shell=bash
# tests/cli/lib.sh - shared by the zkl tool's shell tests (sourced).
#
# Provides:
#   zkl ARGS...            runs the tool (under $ZKL_CLI_WRAPPER, e.g. valgrind,
#                          when set), bounded by $T_CMD seconds
#   zkl_bg OUT ERR ARGS... the same in the background; sets $! and records the
#                          PID so that the EXIT trap stops it if still running
#   expect_rc WANT WHAT CMD...  runs CMD, fails the test unless it exits WANT
#   wait_for SECS WHAT CMD...   polls CMD every 0.05 s until it succeeds
#   fail MSG / ok MSG / scale N
#   $W (a fresh work directory), $ROOT (a fresh ZooKeeper path)
#
# Every process a test starts is stopped by PID on exit; nothing else is.

set -euo pipefail

# The test's own stderr, kept: fail() and the report of a failed run go
# there even from a command whose stderr a test redirects
# (`expect_rc 64 ... 2>/dev/null` must still say why it failed).
exec {test_stderr}>&2

: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
me=$(basename "$0")

# Under valgrind (or ZKL_TEST_SLOW) everything takes longer.
wrapper=${ZKL_CLI_WRAPPER:-${ZKL_TEST_WRAPPER:-}}
SLOW=1
if [[ -n $wrapper || -n ${ZKL_TEST_SLOW:-} ]]; then SLOW=5; fi
scale() { echo $(($1 * SLOW)); }
T_CMD=$(scale 60) # no single zkl run may take longer

ZKL_BIN=$top_builddir/cli/zkl
ZKL_CMD=("$ZKL_BIN")
if [[ -n $wrapper ]]; then
    read -r -a wrapper_words <<<"$wrapper"
    ZKL_CMD=("${LIBTOOL:-$top_builddir/libtool}" --mode=execute "${wrapper_words[@]}" "$ZKL_BIN")
fi
PY=/usr/bin/python3

W=$(mktemp -d "${TMPDIR:-/tmp}/zkl-cli-test.XXXXXX")
ROOT=/zkl-cli-test/$me-$$-$RANDOM
started=()

cleanup() {
    local rc=$? pid alive i
    trap - EXIT TERM
    # TERM first (zkl passes it on to CMD and cleans up), KILL what is left.
    for pid in "${started[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for ((i = 0; i < 40; i++)); do
        alive=0
        for pid in "${started[@]}"; do
            if running "$pid"; then alive=1; fi
        done
        [[ $alive -eq 1 ]] || break
        sleep 0.05
    done
    for pid in "${started[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    for pid in "${started[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [[ $rc -ne 0 ]]; then
        printf '%s: FAILED; files of the run kept in %s\n' "$me" "$W" >&"$test_stderr"
        # what a memory checker said, so that a CI log shows it
        for f in "$W"/*.err; do
            [[ -f $f ]] && grep -qE '^==[0-9]+==' "$f" || continue
            printf -- '--- %s (memory checker) ---\n' "$f" >&"$test_stderr"
            grep -E '^==[0-9]+==' "$f" | head -n 80 >&"$test_stderr"
        done
    else
        rm -rf "$W"
    fi
    exit "$rc"
}
trap cleanup EXIT

# running PID - the process exists and is no zombie (kill -0 cannot tell).
running() {
    [[ -r /proc/$1/stat ]] && [[ $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1) != Z ]]
}

fail() {
    printf '%s: FAIL: %s\n' "$me" "$*" >&"$test_stderr"
    exit 1
}
ok() { printf '%s: ok (%ss): %s\n' "$me" "$SECONDS" "$*"; }

zkl() { timeout -k 5 "$T_CMD" "${ZKL_CMD[@]}" "$@"; }

# zkl_bg OUT ERR ARGS... - zkl in the background; $! is its PID (the zkl
# process itself when there is no wrapper).
zkl_bg() {
    local out=$1 err=$2
    shift 2
    timeout -k 5 "$T_CMD" "${ZKL_CMD[@]}" "$@" >"$out" 2>"$err" &
    started+=("$!")
}

# bg CMD... - any other background process, stopped on exit.
bg() {
    "$@" &
    started+=("$!")
}

# watchdog SECS - the whole test fails if it runs longer than SECS (scaled).
watchdog() {
    local secs
    secs=$(scale "$1")
    trap 'fail "took longer than '"$secs"'s"' TERM
    # shellcheck disable=SC2016  # $s is the subshell's
    bg bash -c 'trap "kill \$s 2>/dev/null; exit 0" TERM; sleep "$1" & s=$!; wait $s; kill -TERM "$2"' \
        watchdog "$secs" "$$"
}

# now_ms - wall-clock milliseconds, for durations.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

expect_rc() {
    local want=$1 what=$2 rc=0
    shift 2
    "$@" || rc=$?
    [[ $rc -eq $want ]] || fail "$what: exit $rc, wanted $want"
}

wait_for() {
    local secs what end
    secs=$(scale "$1")
    what=$2
    shift 2
    end=$((SECONDS + secs))
    until "$@"; do
        [[ $SECONDS -lt $end ]] || fail "timed out after ${secs}s waiting for: $what"
        sleep 0.05
    done
}

# The PID of the zkl process run by zkl_bg's timeout (its only child).
zkl_pid_of() {
    local t=$1 kid
    kid=$(pgrep -P "$t" | head -n 1) || true
    [[ -n $kid ]] || fail "no zkl process under $t"
    printf '%s\n' "$kid"
}

# contenders PATH - how many contenders `zkl status --json` shows at PATH.
contenders() {
    zkl status --json "$1" | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))'
}
has_contenders() { [[ $(contenders "$1") -eq $2 ]]; }

if [[ -n ${ZKL_TEST_HOSTS:-} ]]; then export ZKL_SERVERS=$ZKL_TEST_HOSTS; fi
[[ -x $ZKL_BIN ]] || fail "$ZKL_BIN is not built"

#!/usr/bin/env bash
# harness-selftest.sh - exercise tests/zkharness.sh and tests/with-zookeeper against real
# ZooKeeper servers. Prints "N passed, N failed" last; exits non-zero on any failure
# (77 = skipped because java/ZooKeeper are missing and CI is not set).
#
# Set ZKH_SELFTEST_VERBOSE=1 to see the servers' log tails on failures.

# shellcheck disable=SC2016  # single-quoted snippets are expanded by child shells

set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=zkharness.sh source-path=SCRIPTDIR disable=SC1091
. "$here/zkharness.sh"

pass=0
fail=0
ok() { pass=$((pass + 1)); printf 'ok %d - %s\n' "$((pass + fail))" "$*"; }
not_ok() { fail=$((fail + 1)); printf 'not ok %d - %s\n' "$((pass + fail))" "$*"; }
# check DESCRIPTION COMMAND... - run COMMAND (errexit off inside), record the outcome
check() {
    local desc=$1
    shift
    if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
note() { printf '# %s\n' "$*"; }
finish() {
    printf '%d passed, %d failed\n' "$pass" "$fail"
    ((fail == 0))
}

if ! zkh_available; then
    case ${CI:-} in
        '' | false | 0) printf 'SKIP: ZooKeeper not available\n0 passed, 0 failed\n'; exit 77 ;;
        *) not_ok "ZooKeeper available (CI is set, must not skip)"; finish; exit 1 ;;
    esac
fi

base=$(mktemp -d "${TMPDIR:-/tmp}/zkh-selftest.XXXXXX")
base=$(cd -- "$base" && pwd -P)
sdir=$base/standalone
edir=$base/ensemble
# Everything this script starts lives under $base (with-zookeeper's temp dirs too).
export TMPDIR=$base

# shellcheck disable=SC2317  # invoked from the trap
on_exit() {
    local rc=$?
    trap - EXIT
    zkh_stop "$sdir" >/dev/null 2>&1 || true
    zkh_stop "$edir" >/dev/null 2>&1 || true
    zkh_stop "$base/cli" >/dev/null 2>&1 || true
    zkh_stop "$base/keep" >/dev/null 2>&1 || true
    rm -rf -- "$base"
    exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# PIDs of every server started, as "DIR PID" lines, to prove at the end that none survived.
tracked=()
track() {
    local pid
    while read -r pid; do tracked+=("$1 $pid"); done < <(zkh_pids "$1")
}

# processes (any) whose command line mentions $base, except this script's own
leaked() {
    local p cmd out=
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [[ $p == "$$" || $p == "$BASHPID" ]] && continue
        cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") || continue
        [[ $cmd == *java*"$base/"* ]] && out+="$p "
    done
    printf '%s' "$out"
}

ms() { zkh__now_ms; }

# ------------------------------------------------------------------ free ports
ports=()
for _ in 1 2 3 4 5 6 7 8 9 10; do ports+=("$(zkh_free_port)"); done
uniq_ports=$(printf '%s\n' "${ports[@]}" | sort -u | wc -l)
check "zkh_free_port: 10 calls in subshells give 10 distinct ports (${ports[*]})" \
    test "$uniq_ports" -eq 10
bad=0
for p in "${ports[@]}"; do [[ $p =~ ^[0-9]+$ ]] && ((p >= 1024 && p < 65536)) || bad=1; done
check "zkh_free_port: ports are numeric and unprivileged" test "$bad" -eq 0

# ------------------------------------------------------------------ standalone
t0=$(ms)
if zkh_start_standalone "$sdir"; then
    st_ms=$(($(ms) - t0))
    ok "zkh_start_standalone ($st_ms ms, of which readiness polling $ZKH_START_MS ms)"
else
    st_ms=-1
    not_ok "zkh_start_standalone"
fi
track "$sdir"
check "ZKH_HOSTS exported and written to DIR/hosts ($ZKH_HOSTS)" \
    test "${ZKH_HOSTS:-}" = "$(cat "$sdir/hosts" 2>/dev/null)"
check "ZKH_HOSTS is exported to child processes" \
    bash -c '[[ -n ${ZKH_HOSTS:-} ]]'
srvr=$(zkh_4lw "$ZKH_HOSTS" srvr || true)
check "srvr on the standalone server says Mode: standalone" grep -qx 'Mode: standalone' <<<"$srvr"
check "ruok answers imok" test "$(zkh_4lw "$ZKH_HOSTS" ruok || true)" = imok
check "DIR/pids holds exactly one running server" \
    test "$(wc -l <"$sdir/pids")" -eq 1 -a "$(zkh_pids "$sdir" | wc -l)" -eq 1
check "zkh_leader_id on a standalone server prints 1" test "$(zkh_leader_id "$sdir" || true)" = 1
check "zoo.cfg has the required settings" \
    grep -q '^4lw.commands.whitelist=\*$' "$sdir/zoo.cfg"
check "server.log carries the server's log" grep -q 'binding to port' "$sdir/server.log"

have_kazoo=0
if /usr/bin/python3 -c 'import kazoo' 2>/dev/null; then have_kazoo=1; fi

kz() { # kz HOSTS PYTHON-CODE(using zk) - run kazoo code, connected
    timeout 30 /usr/bin/python3 -c '
import sys, logging
logging.basicConfig(level=logging.CRITICAL)
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1], timeout=5)
zk.start(timeout=10)
try:
    exec(sys.argv[2])
finally:
    zk.stop(); zk.close()
' "$@"
}

old_pid=$(zkh_pids "$sdir" || true)
if ((have_kazoo)); then
    check "kazoo can create a znode on the standalone server" \
        kz "$ZKH_HOSTS" 'zk.create("/selftest", b"hello")'
fi
t0=$(ms)
check "zkh_restart on the standalone server" zkh_restart "$sdir" 1
note "standalone restart ready in $(($(ms) - t0)) ms"
track "$sdir"
check "restart gave a new pid" test "$(zkh_pids "$sdir" || true)" != "$old_pid"
check "restarted standalone server serves on the same port" \
    grep -qx 'Mode: standalone' <<<"$(zkh_4lw "$ZKH_HOSTS" srvr || true)"
if ((have_kazoo)); then
    check "data survives the restart (same dataDir)" \
        kz "$ZKH_HOSTS" 'assert zk.get("/selftest")[0] == b"hello"'
fi

# failure paths: a port that is already taken
rc=0
t0=$(ms)
ZKH_STANDALONE_PORT=${ZKH_HOSTS##*:} zkh_start_standalone "$base/clash" 2>/dev/null || rc=$?
check "start on a fixed port already in use fails (rc $rc, $(($(ms) - t0)) ms)" test "$rc" -ne 0
# ... and the race where the port gets taken after the check: the srvr answer comes from the
# other server, which must not be mistaken for ours.
rc=0
t0=$(ms)
(
    # shellcheck disable=SC2317  # called from zkh_start_standalone
    zkh__check_ports() { :; }
    ZKH_STANDALONE_PORT=${ZKH_HOSTS##*:} zkh_start_standalone "$base/clash2"
) >/dev/null 2>&1 || rc=$?
check "a server that lost its port is not taken as ready (rc $rc, $(($(ms) - t0)) ms)" test "$rc" -ne 0
check "...and nothing of it is left running" test -z "$(zkh_pids "$base/clash2")"
zkh_stop "$base/clash" 2>/dev/null || true
zkh_stop "$base/clash2" 2>/dev/null || true

check "functions work when called plainly under set -euo pipefail" bash -c '
    set -euo pipefail
    . "$1"
    d=$2
    zkh_start_standalone "$d"
    zkh_kill "$d" 1
    zkh_restart "$d" 1
    zkh_pause "$d" 1
    zkh_resume "$d" 1
    zkh_wait_ready "$d" 10
    [[ $(zkh_leader_id "$d") == 1 ]]
    zkh_4lw "$ZKH_HOSTS" ruok >/dev/null
    zkh_stop "$d"
    [[ ! -e $d ]]' _ "$here/zkharness.sh" "$base/plain"

# ------------------------------------------------------------------ ensemble
t0=$(ms)
if zkh_start_ensemble "$edir"; then
    en_ms=$(($(ms) - t0))
    ok "zkh_start_ensemble ($en_ms ms, of which readiness polling $ZKH_START_MS ms)"
else
    en_ms=-1
    not_ok "zkh_start_ensemble"
fi
track "$edir"
IFS=, read -r -a ehosts <<<"${ZKH_HOSTS:-}"
check "ZKH_HOSTS lists 3 client addresses ($ZKH_HOSTS)" test "${#ehosts[@]}" -eq 3
check "DIR/hosts matches ZKH_HOSTS" test "$ZKH_HOSTS" = "$(cat "$edir/hosts" 2>/dev/null)"
check "DIR/ports has 3 lines of 5 fields" \
    test "$(awk 'NF == 5' "$edir/ports" | wc -l)" -eq 3
check "all 9 ensemble ports are distinct" \
    test "$(awk '{print $2; print $3; print $4}' "$edir/ports" | sort -u | wc -l)" -eq 9
check "each server has its own myid" \
    test "$(cat "$edir/1/data/myid" "$edir/2/data/myid" "$edir/3/data/myid" | tr -d '\n')" = 123
modes=()
for hp in "${ehosts[@]}"; do modes+=("$(zkh_mode "$hp" || echo none)"); done
leaders=0 followers=0
for m in "${modes[@]}"; do
    [[ $m == leader ]] && leaders=$((leaders + 1))
    [[ $m == follower ]] && followers=$((followers + 1))
done
check "srvr: exactly one leader and two followers (${modes[*]})" \
    test "$leaders" -eq 1 -a "$followers" -eq 2
leader=$(zkh_leader_id "$edir" || echo none)
check "zkh_leader_id agrees ($leader)" test "${modes[$((leader - 1))]:-}" = leader

if ((have_kazoo)); then
    check "kazoo: write through one server, read through another" \
        kz "${ehosts[0]}" 'zk.create("/ens", b"x")'
    check "kazoo: read back via server 3" \
        kz "${ehosts[2]}" 'zk.sync("/ens"); assert zk.get("/ens")[0] == b"x"'
fi

# kill the leader
t0=$(ms)
check "zkh_kill the leader ($leader)" zkh_kill "$edir" "$leader"
check "killed leader is gone and marked '-' in DIR/ports" \
    test "$(zkh__field "$edir" "$leader" 5)" = -
new_leader=$(zkh_wait_leader "$edir" 10 "$leader" || echo none)
fo_ms=$(($(ms) - t0))
check "a new leader ($new_leader) is elected within 10 s ($fo_ms ms)" \
    test "$new_leader" != none -a "$new_leader" != "$leader"

# restart it
t0=$(ms)
check "zkh_restart the old leader" zkh_restart "$edir" "$leader"
rs_ms=$(($(ms) - t0))
track "$edir"
check "restarted server rejoins as follower ($rs_ms ms)" \
    test "$(zkh_server_mode "$edir" "$leader" || true)" = follower
check "still exactly one leader ($new_leader)" test "$(zkh_leader_id "$edir" || true)" = "$new_leader"
check "zkh_wait_ready: whole ensemble serving again" zkh_wait_ready "$edir" 10

# pause / resume a follower
follower=
for id in 1 2 3; do [[ $id != "$new_leader" ]] && follower=$id && break; done
fport=$(zkh__field "$edir" "$follower" 2)
t0=$(ms)
check "zkh_pause follower $follower" zkh_pause "$edir" "$follower"
silent() { ! ZKH_4LW_TIMEOUT=1 zkh_mode "$1" >/dev/null; }
check "paused follower does not answer srvr (times out)" silent "127.0.0.1:$fport"
check "leader still serves while a follower is paused" \
    test "$(zkh_leader_id "$edir" || true)" = "$new_leader"
lport=$(zkh__field "$edir" "$new_leader" 2)
synced() { zkh_4lw "127.0.0.1:$lport" mntr | awk '$1 == "zk_synced_followers" { print $2 }'; }
# wait_synced N SECS - poll the leader's mntr until it counts N synced followers
wait_synced() {
    local deadline=$(($(ms) + $2 * 1000))
    while [[ $(synced || true) != "$1" ]]; do
        (($(ms) < deadline)) || return 1
        sleep 0.05
    done
}
check "leader drops the paused follower (syncLimit) within 10 s" wait_synced 1 10
note "paused follower dropped $(($(ms) - t0)) ms after the pause"
check "zkh_resume follower $follower" zkh_resume "$edir" "$follower"
t0=$(ms)
check "resumed follower serves again" zkh_wait_serving "$edir" "$follower" 15
check "leader counts 2 synced followers again" wait_synced 2 15
check "zkh_wait_ready: ensemble ready after resume" zkh_wait_ready "$edir" 15
note "resumed follower back in sync after $(($(ms) - t0)) ms"
if ((have_kazoo)); then
    check "kazoo: data written before the failover is still there" \
        kz "$ZKH_HOSTS" 'zk.sync("/ens"); assert zk.get("/ens")[0] == b"x"'
fi

# a paused server must not block zkh_stop
check "pause a server again before stopping" zkh_pause "$edir" "$follower"

# ------------------------------------------------------------------ stop
t0=$(ms)
check "zkh_stop ensemble (one server paused)" zkh_stop "$edir"
check "zkh_stop standalone" zkh_stop "$sdir"
note "stop took $(($(ms) - t0)) ms"
check "harness directories removed" test ! -e "$edir" -a ! -e "$sdir"
check "zkh_stop of a missing directory succeeds" zkh_stop "$edir"
alive=
for entry in "${tracked[@]}"; do
    if zkh__ours "${entry#* }" "${entry%% *}"; then alive+="${entry#* } "; fi
done
check "none of the ${#tracked[@]} server processes started is alive" test -z "$alive"

# ZKH_KEEP
if ZKH_KEEP=1 zkh_start_standalone "$base/keep" >/dev/null; then
    track "$base/keep"
    ZKH_KEEP=1 zkh_stop "$base/keep" 2>/dev/null || true
    check "ZKH_KEEP=1: directory kept, server stopped" \
        test -s "$base/keep/server.log" -a -z "$(zkh_pids "$base/keep")"
    zkh_stop "$base/keep"
else
    not_ok "ZKH_KEEP=1: start"
fi

# ------------------------------------------------------------------ CLI
cli_hosts=$("$here/zkharness.sh" start-standalone "$base/cli" || true)
check "CLI start-standalone prints the host list ($cli_hosts)" \
    test -n "$cli_hosts" -a "$cli_hosts" = "$(cat "$base/cli/hosts" 2>/dev/null)"
track "$base/cli"
check "CLI leader prints 1" test "$("$here/zkharness.sh" leader "$base/cli" || true)" = 1
check "CLI stop" "$here/zkharness.sh" stop "$base/cli"
check "CLI-started server is gone" test ! -e "$base/cli"

# ------------------------------------------------------------------ with-zookeeper
wz=$here/with-zookeeper
out=$base/wz.out
rc=0
"$wz" bash -c 'printf "%s\n%s\n%s\n" "$ZKL_TEST_HOSTS" "$ZKL_TEST_ZKDIR" "$(cat "$ZKL_TEST_ZKDIR/pids")"
               [[ $("$ZKL_TEST_HARNESS" mode "$ZKL_TEST_ZKDIR" 1) == standalone ]] || exit 42
               exit 3' >"$out" 2>&1 || rc=$?
check "with-zookeeper preserves the exit status (3, got $rc)" test "$rc" -eq 3
mapfile -t lines <"$out"
check "with-zookeeper exports ZKL_TEST_HOSTS/ZKL_TEST_ZKDIR" \
    test "${lines[0]:-}" != "" -a "${lines[1]:-}" != ""
check "with-zookeeper removed its server dir" test -n "${lines[1]:-}" -a ! -e "${lines[1]:-/}"
check "with-zookeeper's server is dead" bash -c '! kill -0 "$1" 2>/dev/null' _ "${lines[2]:-0}"

rc=0
fixed="$(zkh_free_port) $(zkh_free_port) $(zkh_free_port)"
ZKH_ENSEMBLE_CLIENT_PORTS=$fixed ZKL_TEST_ENSEMBLE=1 ZKL_TEST_WRAPPER="env ZKH_SELFTEST_WRAPPED=yes" \
    "$wz" bash -c '
    [[ ${ZKH_SELFTEST_WRAPPED:-} == yes ]] || exit 11
    [[ $ZKL_TEST_HOSTS == "127.0.0.1:${1// /,127.0.0.1:}" ]] || exit 15
    [[ $ZKL_TEST_ENSEMBLE_DIR == "$ZKL_TEST_ZKDIR" ]] || exit 12
    IFS=, read -r -a h <<<"$ZKL_TEST_HOSTS"; [[ ${#h[@]} -eq 3 ]] || exit 13
    "$ZKL_TEST_HARNESS" leader "$ZKL_TEST_ZKDIR" >/dev/null || exit 14' _ "$fixed" >"$out" 2>&1 || rc=$?
check "with-zookeeper: ZKL_TEST_ENSEMBLE=1 + ZKL_TEST_WRAPPER + fixed client ports (rc $rc)" test "$rc" -eq 0
rc=0
ZKH_ENSEMBLE_CLIENT_PORTS="1 2" zkh_start_ensemble "$base/bad" 2>/dev/null || rc=$?
check "zkh_start_ensemble rejects a port list that is not 3 long (rc $rc)" test "$rc" -eq 2
rm -rf -- "$base/bad"

rc=0
ZKL_TEST_HOSTS=127.0.0.1:1 "$wz" bash -c '[[ -z ${ZKL_TEST_ZKDIR:-} && $ZKL_TEST_HOSTS == 127.0.0.1:1 ]]' || rc=$?
check "with-zookeeper: ZKL_TEST_HOSTS set -> no server started (rc $rc)" test "$rc" -eq 0

rc=0
(unset CI; ZKH_JAVA=/nonexistent/java "$wz" true) >/dev/null 2>&1 || rc=$?
check "with-zookeeper: no java, CI unset -> 77 (got $rc)" test "$rc" -eq 77
rc=0
CI=true ZKH_ZK_JAR=/nonexistent/zookeeper.jar "$wz" true >/dev/null 2>&1 || rc=$?
check "with-zookeeper: no jar, CI=true -> 99 (got $rc)" test "$rc" -eq 99

# TERM to the wrapper while the test runs: server must be stopped, status 143
info=$base/wz.info
rc=0
"$wz" bash -c 'printf "%s\n%s\n" "$ZKL_TEST_ZKDIR" "$(cat "$ZKL_TEST_ZKDIR/pids")" >"$1.tmp"
               mv "$1.tmp" "$1"; exec sleep 60' _ "$info" >/dev/null 2>&1 &
wpid=$!
deadline=$(($(ms) + 30000))
while [[ ! -s $info ]] && (($(ms) < deadline)); do sleep 0.05; done
t0=$(ms)
kill -TERM "$wpid" 2>/dev/null || true
wait "$wpid" || rc=$?
mapfile -t lines <"$info" 2>/dev/null || lines=()
check "with-zookeeper: TERM -> exit 143 (got $rc, $(($(ms) - t0)) ms)" test "$rc" -eq 143
check "with-zookeeper: TERM -> server dir removed" test -n "${lines[0]:-}" -a ! -e "${lines[0]:-/}"
check "with-zookeeper: TERM -> server dead" bash -c '! kill -0 "$1" 2>/dev/null' _ "${lines[1]:-0}"

# ------------------------------------------------------------------ final sweep
alive=
for entry in "${tracked[@]}"; do
    if zkh__ours "${entry#* }" "${entry%% *}"; then alive+="${entry#* } "; fi
done
check "no tracked server process alive at the end (${#tracked[@]} tracked)" test -z "$alive"
lk=$(leaked)
check "no java process with a command line under $base is alive ${lk:+(pids $lk)}" test -z "$lk"

note "timings: standalone ${st_ms} ms, ensemble ${en_ms} ms, leader failover ${fo_ms} ms, ensemble member restart ${rs_ms} ms"
finish

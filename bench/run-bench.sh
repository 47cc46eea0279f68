#!/usr/bin/env bash
# bench/run-bench.sh - the standard zkl-bench run (issue 6), as `make bench`
# runs it.
#
#   bench/run-bench.sh [--quick] [--out DIR] [--bench PATH]
#                      [--configs "fsync nosync ensemble"] [--only LIST]
#                      [-- ZKL-BENCH ARGS...]
#
# For each server config it starts throwaway ZooKeeper servers on
# 127.0.0.1 (tests/zkharness.sh; stopped again on every exit path):
#   fsync     one server, forceSync=yes: every transaction is fsync'ed
#             (ZooKeeper's default)
#   nosync    one server, forceSync=no: the harness's default for tests
#   ensemble  three servers (forceSync=yes), the clients spread over the
#             two followers (the leader's address is not given to them):
#             writes go through the leader, reads are served by the
#             follower a client is connected to; scenarios 1, 3 and 14
#             only, the server rows summed over the three (every server
#             fsyncs every transaction; ZKL_BENCH_SERVERS names them to the
#             bench programs)
# and runs zkl-bench against them.  zkl-bench itself runs kazoo's side
# (bench/kazoo_bench.py: scenarios 1, 3, 6, 9 to 14 with Debian's
# python3-kazoo, /usr/bin/python3) and Curator's (bench/CuratorBench.java:
# S1, S3, S6 and S11-S14, compiled with javac into a temporary directory;
# not with --quick, unless "-- --curator yes") and merges their rows into
# its table, CSV and targets; in S1, S3 and S14 the peers take turns with
# the floor and zkl, run by run (bench/peers.c).  It checks from the
# server's own fsync counter that the config took effect.
#
# --only LIST (e.g. 1,3,6,14) runs those scenarios only, the peers' too
# (the ensemble: those of 1, 3 and 14 among them).
#
# Writes into DIR (default bench-out):
#   table-<config>.txt    zkl-bench's table and targets
#   zkl-bench-<config>.csv every row of the config, the peers' too
#   bench.csv             every row of every config
#   summary.md            configs side by side (markdown), targets first
#   handoffs.png          handoffs/s vs N: floor, zkl, kazoo, zkl-loop, Curator
#   aggregate.png         cycles/s vs T threads on distinct keys (S14)
#   wake-bytes.png        server bytes per handoff vs queue length
#   herd-bytes.png        server bytes per put vs blocked consumers (S10)
# Exit status: 0 when every run completed (missed targets are reported, not
# failures), 1 otherwise.
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
top=$(cd -- "$here/.." && pwd -P)
# shellcheck source=../tests/zkharness.sh disable=SC1091
. "$top/tests/zkharness.sh"

me=run-bench
out=bench-out
bench=
quick=()
configs="fsync nosync ensemble"
only_arg=
extra=()
while (($#)); do
    case $1 in
        --quick | -q) quick=(--quick) ;;
        --out) out=$2; shift ;;
        --bench) bench=$2; shift ;;
        --configs) configs=$2; shift ;;
        --only) only_arg=$2; shift ;;
        --) shift; extra=("$@"); break ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) printf '%s: unknown argument %s\n' "$me" "$1" >&2; exit 2 ;;
    esac
    shift
done
if [[ -z $bench ]]; then
    for b in "$top/build/bench/zkl-bench" "$top/build-bench/bench/zkl-bench" "$PWD/bench/zkl-bench"; do
        if [[ -x $b ]]; then bench=$b; break; fi
    done
fi
if [[ -z $bench || ! -x $bench ]]; then
    printf '%s: zkl-bench not found: build it (make bench/zkl-bench) or pass --bench\n' "$me" >&2
    exit 1
fi
if ! zkh_available; then
    printf '%s: cannot start ZooKeeper (see above)\n' "$me" >&2
    exit 1
fi
py=/usr/bin/python3   # Debian's python, where python3-kazoo lives
if ! "$py" -c 'import kazoo' 2>/dev/null; then
    printf '%s: warning: %s has no kazoo (apt-get install python3-kazoo): kazoo columns stay empty\n' "$me" "$py" >&2
fi
mkdir -p -- "$out"
out=$(cd -- "$out" && pwd -P)

zkdir=
child=
# shellcheck disable=SC2317  # invoked from traps
cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    if [[ -n $child ]] && kill -0 "$child" 2>/dev/null; then
        kill -TERM "$child" 2>/dev/null || true
        wait "$child" 2>/dev/null || true
    fi
    if [[ -n $zkdir ]]; then zkh_stop "$zkdir" || true; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# run CMD...: in the background and wait, so that a signal is acted on at once
run() {
    "$@" &
    child=$!
    local rc=0
    wait "$child" || rc=$?
    child=
    return "$rc"
}

mntr_value() { zkh_4lw "$1" mntr | awk -v k="$2" '$1 == k { print $2 }'; }

status=0
for config in $configs; do
    only=()
    case $config in
        fsync) cfg='forceSync=yes' ;;
        nosync) cfg='forceSync=no' ;;
        ensemble) cfg='forceSync=yes'; only=(--only 1,3,14) ;;
        *) printf '%s: unknown config %s (fsync, nosync, ensemble)\n' "$me" "$config" >&2; exit 2 ;;
    esac
    if [[ -n $only_arg ]]; then
        sel=$only_arg
        if [[ $config == ensemble ]]; then  # its own three, of those asked
            sel=$(tr ',' '\n' <<<"$only_arg" | grep -xE '1|3|14' | paste -sd, -)
            if [[ -z $sel ]]; then
                printf '%s: ensemble: none of scenarios 1, 3, 14 in --only %s: skipped\n' "$me" "$only_arg"
                continue
            fi
        fi
        only=(--only "$sel")
    fi
    zkdir=$(mktemp -d "${TMPDIR:-/tmp}/zkl-bench.XXXXXX")
    # appended after the harness's own forceSync=no: the last one wins
    if [[ $config == ensemble ]]; then
        ZKH_EXTRA_CFG=$cfg zkh_start_ensemble "$zkdir"
    else
        ZKH_EXTRA_CFG=$cfg zkh_start_standalone "$zkdir"
    fi
    hosts=$ZKH_HOSTS
    unset ZKL_BENCH_SERVERS
    if [[ $config == ensemble ]]; then
        # the clients connect to the two followers only: a single session
        # (S1, S14) would otherwise land on the leader in one run and on a
        # follower in the next, and compare a write that goes through the
        # leader with one made on it; the counters still come from all three
        followers=()
        IFS=, read -ra members <<<"$ZKH_HOSTS"
        for hp in "${members[@]}"; do
            if [[ $(zkh_mode "$hp" || true) == follower ]]; then followers+=("$hp"); fi
        done
        if ((${#followers[@]} != 2)); then
            printf '%s: ensemble: %s followers among %s, not 2\n' "$me" "${#followers[@]}" "$ZKH_HOSTS" >&2
            zkh_stop "$zkdir"
            zkdir=
            status=1
            continue
        fi
        hosts=$(IFS=,; printf '%s' "${followers[*]}")
        export ZKL_BENCH_SERVERS=$ZKH_HOSTS
    fi
    printf '%s: %s: ZooKeeper on %s (%s), data in %s; clients on %s\n' "$me" "$config" "$ZKH_HOSTS" "$cfg" "$zkdir" "$hosts"
    rc=0
    run "$bench" -s "$hosts" --config "$config" "${quick[@]}" "${only[@]}" \
        --csv "$out/zkl-bench-$config.csv" "${extra[@]}" >"$out/table-$config.txt" || rc=$?
    if ((rc != 0)); then
        if ((rc > 128)); then why="killed by SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))"; else why="exit status $rc"; fi
        printf '%s: %s: zkl-bench failed (%s)\n' "$me" "$config" "$why" >&2
        status=1
    fi
    cat -- "$out/table-$config.txt"
    fsyncs=$(mntr_value "${ZKH_HOSTS%%,*}" zk_cnt_fsynctime)
    printf '%s: %s: the server fsync-ed %s times\n' "$me" "$config" "${fsyncs:-?}" |
        tee -a "$out/table-$config.txt"
    if [[ $config != nosync && ${fsyncs:-0} == 0 ]] || [[ $config == nosync && ${fsyncs:-0} != 0 ]]; then
        printf '%s: %s: the server config did not take effect (fsyncs: %s)\n' "$me" "$config" "${fsyncs:-?}" >&2
        status=1
    fi
    zkh_stop "$zkdir"
    zkdir=
done

# ---- one CSV, a side-by-side summary, the plots ----------------------------
csvs=()
done_configs=
for config in $configs; do
    if [[ -s $out/zkl-bench-$config.csv ]]; then
        csvs+=("$out/zkl-bench-$config.csv")
        done_configs+="${done_configs:+ }$config"
    fi
done
if ((${#csvs[@]} == 0)); then exit 1; fi
configs=$done_configs   # summary and plots: the configs that have results
awk 'FNR > 1 || NR == 1' "${csvs[@]}" >"$out/bench.csv"

# summary.md: targets, then every measurement, one column pair per config
awk -F, -v configs="$configs" '
    BEGIN { nc = split(configs, cfg, " ") }
    NR == 1 { next }
    $2 == "t" { k = $3 "|" $6 "|" $12
                if (!(k in tseen)) { tseen[k] = 1; torder[++nt] = k }
                tval[k, $1] = $8; tver[k, $1] = $13; next }
    $2 == "m" { k = $3 "|" $4 "|" $5 "|" $6 "|" $7
                if (!(k in mseen)) { mseen[k] = 1; morder[++nm] = k }
                med[k, $1] = $8; p99[k, $1] = $9; rat[k, $1] = $11 }
    function num(x) { return x == "" ? "-" : (x + 0 >= 100 || x == int(x) ? sprintf("%.0f", x) : sprintf("%.3g", x)) }
    END {
        printf "| S | target | limit |"; for (c = 1; c <= nc; c++) printf " %s |", cfg[c]; print ""
        printf "|---|---|---|"; for (c = 1; c <= nc; c++) printf "---|"; print ""
        for (i = 1; i <= nt; i++) { split(torder[i], f, "|")
            printf "| %s | %s | %s |", f[1], f[2], f[3]
            for (c = 1; c <= nc; c++) printf " %s %s |", num(tval[torder[i], cfg[c]]), tver[torder[i], cfg[c]]
            print "" }
        print ""
        printf "| S | case | impl | metric | unit |"
        for (c = 1; c <= nc; c++) printf " %s median | p99 | x floor |", cfg[c]; print ""
        printf "|---|---|---|---|---|"; for (c = 1; c <= nc; c++) printf "---:|---:|---:|"; print ""
        for (i = 1; i <= nm; i++) { split(morder[i], f, "|")
            printf "| %s | %s | %s | %s | %s |", f[1], f[2], f[3], f[4], f[5]
            for (c = 1; c <= nc; c++) { k = morder[i]
                r = rat[k, cfg[c]]
                printf " %s | %s | %s |", num(med[k, cfg[c]]), num(p99[k, cfg[c]]), r == "" ? "" : sprintf("%.2f", r) }
            print "" }
    }' "$out/bench.csv" >"$out/summary.md"

# series CONFIG SCENARIO METRIC X IMPL...: the plot data of a metric, a
# row per case "<X>=<n>" (n, then each IMPL's median, "?" where missing)
series() {
    local config=$1 sc=$2 metric=$3 x=$4
    shift 4
    awk -F, -v c="$config" -v sc="$sc" -v m="$metric" -v x="$x" -v impls="$*" '
        BEGIN { ni = split(impls, im, " ") }
        $1 == c && $2 == "m" && $3 == sc && $6 == m && $4 ~ ("^" x "=[0-9]+$") {
            n = substr($4, 3) + 0; if (!(n in seen)) { seen[n] = 1; ns[++k] = n }
            v[n, $5] = $8 }
        END { print "# " x " " impls
              for (i = 1; i <= k; i++) { n = ns[i]; printf "%d", n
                  for (j = 1; j <= ni; j++) printf " %s", ((n, im[j]) in v) ? v[n, im[j]] : "?"
                  print "" } }
    ' "$out/bench.csv"
}
wconfigs=   # the configs that ran S4 and S10 (not the ensemble)
for config in $configs; do
    series "$config" 3 handoffs/s N floor zkl kazoo zkl-loop curator >"$out/handoffs-$config.dat"
    series "$config" 14 cycles/s T floor zkl zkl-sessions kazoo curator >"$out/aggregate-$config.dat"
    series "$config" 4 bytes/handoff Q floor zkl >"$out/wake-$config.dat"
    series "$config" 10 bytes/put C floor zkl zkl-claim kazoo >"$out/herd-$config.dat"
    if (($(wc -l <"$out/wake-$config.dat") > 1)); then wconfigs+="${wconfigs:+ }$config"; fi
done
if command -v gnuplot >/dev/null 2>&1; then
    if ! gnuplot -e "dir='$out'; configs='$configs'; wconfigs='$wconfigs'" "$here/plot.gp"; then
        printf '%s: gnuplot failed\n' "$me" >&2
        status=1
    fi
else
    printf '%s: warning: no gnuplot (apt-get install gnuplot-nox): no plots\n' "$me" >&2
fi
printf '%s: results in %s (summary.md, bench.csv, handoffs.png, aggregate.png, wake-bytes.png, herd-bytes.png)\n' "$me" "$out"
exit "$status"

#!/usr/bin/env bash
# zkharness.sh - start/stop/abuse throw-away ZooKeeper servers for zkl tests.
#
# Meant to be SOURCED by test scripts (works under `set -euo pipefail`):
#
#     . tests/zkharness.sh
#     zkh_start_standalone "$dir"        # exports ZKH_HOSTS=127.0.0.1:PORT
#     ...
#     zkh_stop "$dir"
#
# and runnable as a command (also handy from C tests via system()):
#
#     tests/zkharness.sh start-standalone DIR   # prints the host list
#     tests/zkharness.sh start-ensemble DIR     # prints the host list
#     tests/zkharness.sh stop DIR
#     tests/zkharness.sh kill|restart|pause|resume DIR ID
#     tests/zkharness.sh leader DIR             # prints the leader's id
#     tests/zkharness.sh mode DIR ID            # standalone|leader|follower
#     tests/zkharness.sh pids DIR               # PIDs of the running servers
#     tests/zkharness.sh wait-ready DIR [SECS] | wait-leader DIR [SECS] [NOT_ID]
#     tests/zkharness.sh wait-serving DIR ID [SECS]
#     tests/zkharness.sh 4lw HOST:PORT WORD | free-port | available
#
# Layout of a harness directory DIR (all paths absolute):
#     DIR/.zkharness      marker, contains "standalone" or "ensemble"
#     DIR/hosts           the client host list (same as $ZKH_HOSTS)
#     DIR/ports           one line per server: id client_port quorum_port election_port pid
#                         (standalone: "1 PORT - - PID"; pid is "-" once killed)
#     DIR/pids            the PIDs of the live servers this harness started, one per line
#     standalone: DIR/zoo.cfg DIR/data/ DIR/server.log
#     ensemble:   DIR/N/zoo.cfg DIR/N/data/myid DIR/N/server.log   (N = 1..3)
#
# Processes are only ever signalled by PID, and only when /proc/PID/cmdline
# still names this DIR (protection against PID reuse).
#
# Environment (all optional):
#     ZKH_JAVA              java binary (default: $JAVA_HOME/bin/java, else `java` on PATH)
#     ZKH_ZK_JAR            default /usr/share/java/zookeeper.jar (its manifest pulls the deps)
#     ZKH_SLF4J_JAR         slf4j binding; default slf4j-simple.jar (server logs readable in
#                           server.log), falls back to slf4j-nop.jar
#     ZKH_CLASSPATH         full class path; overrides the two above
#     ZKH_LOG_LEVEL         slf4j-simple level (default info)
#     ZKH_JAVA_OPTS         JVM options, replacing the default
#                           "-Xms16m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto"
#     ZKH_TICK_TIME         default 500 (ms)
#     ZKH_EXTRA_CFG         extra zoo.cfg lines (newline separated), appended to every config
#     ZKH_START_TIMEOUT     seconds to wait for readiness (default 30)
#     ZKH_STOP_TIMEOUT      seconds between TERM and KILL in zkh_stop (default 5)
#     ZKH_4LW_TIMEOUT       seconds for one four-letter-word exchange (default 2)
#     ZKH_LOG_TAIL          lines of server.log shown on a failure (default 40)
#     ZKH_KEEP              if non-empty, zkh_stop leaves DIR (logs, data) in place
#     ZKH_STANDALONE_PORT   fixed client port for zkh_start_standalone
#     ZKH_ENSEMBLE_CLIENT_PORTS / ZKH_ENSEMBLE_QUORUM_PORTS / ZKH_ENSEMBLE_ELECTION_PORTS
#                           "p1 p2 p3" fixed ports for zkh_start_ensemble (default: free ports).
#                           Recommended fixed values (what a docker-compose file with the same
#                           shape would publish on one host):
#                               ZKH_ENSEMBLE_CLIENT_PORTS="2181 2182 2183"
#                               ZKH_ENSEMBLE_QUORUM_PORTS="2888 2889 2890"
#                               ZKH_ENSEMBLE_ELECTION_PORTS="3888 3889 3890"
#                           (inside compose each container can keep 2181/2888/3888 on its own
#                           IP; on one loopback address they must all differ.)
#     ZKH_PORT_MIN / ZKH_PORT_MAX   range for zkh_free_port (default 20000..32000, i.e. below
#                           Linux's ephemeral range 32768-60999)
#     ZKH_PORT_REGISTRY     file recording handed-out ports (default
#                           ${TMPDIR:-/tmp}/zkharness-ports.UID), shared by subshells and
#                           parallel test processes; entries expire after ZKH_PORT_TTL s (600)
#
# Exported by the start functions: ZKH_HOSTS. Set (not exported): ZKH_START_MS, the time the
# last start/restart took to become ready, in milliseconds.

# Not `set -e` here: this file is sourced; every function guards its own failures.

ZKH_SELF=${BASH_SOURCE[0]}
case $ZKH_SELF in /*) ;; *) ZKH_SELF=$PWD/$ZKH_SELF ;; esac
ZKH_START_MS=${ZKH_START_MS:-0}
ZKH__LAST_PID=

# ---------------------------------------------------------------- utilities

zkh__err() { printf 'zkharness: %s\n' "$*" >&2; }

# zkh__now_ms - milliseconds since the epoch
zkh__now_ms() {
    if [[ -n ${EPOCHREALTIME:-} ]]; then
        local t=${EPOCHREALTIME/[.,]/}
        printf '%s\n' "$((t / 1000))"
    else
        date +%s%3N
    fi
}

zkh__nap() { sleep 0.05; }

# zkh__abs DIR - absolute, physical path of DIR (creates it)
zkh__abs() {
    mkdir -p -- "$1" && (cd -- "$1" && pwd -P)
}

zkh__java() {
    if [[ -n ${ZKH_JAVA:-} ]]; then
        printf '%s\n' "$ZKH_JAVA"
    elif [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]]; then
        printf '%s\n' "$JAVA_HOME/bin/java"
    else
        command -v java || return 1
    fi
}

zkh__classpath() {
    if [[ -n ${ZKH_CLASSPATH:-} ]]; then
        printf '%s\n' "$ZKH_CLASSPATH"
        return 0
    fi
    local jar=${ZKH_ZK_JAR:-/usr/share/java/zookeeper.jar} log=${ZKH_SLF4J_JAR:-}
    if [[ -z $log ]]; then
        for log in /usr/share/java/slf4j-simple.jar /usr/share/java/slf4j-nop.jar ''; do
            [[ -z $log || -r $log ]] && break
        done
    fi
    printf '%s\n' "$jar${log:+:$log}"
}

# zkh_available - succeeds if java and the ZooKeeper jar are present (reason on stderr if not)
zkh_available() {
    local java jar=${ZKH_ZK_JAR:-/usr/share/java/zookeeper.jar}
    if ! java=$(zkh__java) || [[ ! -x $java ]]; then
        zkh__err "no java found (set ZKH_JAVA or JAVA_HOME, or install default-jre-headless)"
        return 1
    fi
    if [[ -z ${ZKH_CLASSPATH:-} && ! -r $jar ]]; then
        zkh__err "ZooKeeper jar $jar not found (install the 'zookeeper' package or set ZKH_ZK_JAR)"
        return 1
    fi
    return 0
}

# zkh__mode DIR - "standalone" or "ensemble" (fails if DIR is not a harness dir)
zkh__mode() {
    local m
    [[ -r $1/.zkharness ]] || { zkh__err "$1 is not a zkharness directory"; return 1; }
    m=$(<"$1/.zkharness")
    printf '%s\n' "$m"
}

# zkh__srvdir DIR ID - directory holding zoo.cfg / server.log of server ID
zkh__srvdir() {
    local mode
    mode=$(zkh__mode "$1") || return 1
    if [[ $mode == standalone ]]; then
        [[ $2 == 1 ]] || { zkh__err "standalone server has only id 1"; return 1; }
        printf '%s\n' "$1"
    else
        [[ -d $1/$2 ]] || { zkh__err "no server $2 in $1"; return 1; }
        printf '%s\n' "$1/$2"
    fi
}

# zkh__field DIR ID COLUMN - a column of DIR/ports for server ID (2=client 3=quorum 4=election 5=pid)
zkh__field() {
    local id cp qp ep pid
    [[ -r $1/ports ]] || return 1
    while read -r id cp qp ep pid; do
        if [[ $id == "$2" ]]; then
            case $3 in
                2) printf '%s\n' "$cp" ;;
                3) printf '%s\n' "$qp" ;;
                4) printf '%s\n' "$ep" ;;
                5) printf '%s\n' "$pid" ;;
            esac
            return 0
        fi
    done <"$1/ports"
    zkh__err "no server $2 in $1/ports"
    return 1
}

# zkh__ids DIR - the server ids of DIR, one per line
zkh__ids() {
    local id _rest
    [[ -r $1/ports ]] || return 1
    while read -r id _rest; do printf '%s\n' "$id"; done <"$1/ports"
}

# zkh__set_pid DIR ID PID - record PID (or "-") for server ID; regenerates DIR/pids
zkh__set_pid() {
    local dir=$1 want=$2 newpid=$3 id cp qp ep pid
    local tmp=$dir/.ports.$$ tmpp=$dir/.pids.$$
    : >"$tmp" && : >"$tmpp" || return 1
    while read -r id cp qp ep pid; do
        [[ $id == "$want" ]] && pid=$newpid
        printf '%s %s %s %s %s\n' "$id" "$cp" "$qp" "$ep" "$pid" >>"$tmp"
        [[ $pid == - ]] || printf '%s\n' "$pid" >>"$tmpp"
    done <"$dir/ports"
    mv -f -- "$tmp" "$dir/ports" && mv -f -- "$tmpp" "$dir/pids"
}

# zkh__ours PID DIR - succeeds if PID is alive (not a zombie) and its command line names DIR
zkh__ours() {
    local pid=$1 dir=$2 cmd
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    if [[ -d /proc/self ]]; then
        [[ -r /proc/$pid/cmdline ]] || return 1
        cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
        [[ $cmd == *"$dir/"* ]]
    else
        kill -0 "$pid" 2>/dev/null
    fi
}

# zkh__gone PID - succeeds if PID no longer exists or is a zombie
zkh__gone() {
    local stat rest
    [[ -d /proc/self ]] || { kill -0 "$1" 2>/dev/null && return 1; return 0; }
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    rest=${stat##*) }
    [[ ${rest:0:1} == [ZzXx] ]]
}

# zkh__stopped PID - succeeds if PID is stopped (SIGSTOP)
zkh__stopped() {
    local stat rest
    [[ -r /proc/$1/stat ]] || return 1
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    rest=${stat##*) }
    [[ ${rest:0:1} == [Tt] ]]
}

# zkh__reap PID - collect the exit status if PID is a child of this shell (never blocks on a
# live process: only call once it is gone)
zkh__reap() { wait "$1" 2>/dev/null || true; }

# zkh__terminate DIR TIMEOUT_S PID... - TERM (+CONT), wait, then KILL; only PIDs that are ours.
# Fails if something survived.
zkh__terminate() {
    local dir=$1 secs=$2 pid deadline left
    shift 2
    local -a live=()
    for pid in "$@"; do
        if zkh__ours "$pid" "$dir"; then
            kill -TERM "$pid" 2>/dev/null || true
            kill -CONT "$pid" 2>/dev/null || true   # a paused JVM cannot act on TERM
            live+=("$pid")
        fi
    done
    ((${#live[@]})) || return 0
    deadline=$(($(zkh__now_ms) + secs * 1000))
    while :; do
        left=0
        for pid in "${live[@]}"; do zkh__ours "$pid" "$dir" && left=1; done
        ((left)) || break
        (($(zkh__now_ms) < deadline)) || break
        zkh__nap
    done
    if ((left)); then
        for pid in "${live[@]}"; do
            if zkh__ours "$pid" "$dir"; then
                zkh__err "pid $pid did not exit after TERM within ${secs}s, sending KILL"
                kill -KILL "$pid" 2>/dev/null || true
            fi
        done
        deadline=$(($(zkh__now_ms) + 5000))
        while :; do
            left=0
            for pid in "${live[@]}"; do zkh__ours "$pid" "$dir" && left=1; done
            ((left)) || break
            (($(zkh__now_ms) < deadline)) || break
            zkh__nap
        done
    fi
    for pid in "${live[@]}"; do zkh__ours "$pid" "$dir" || zkh__reap "$pid"; done
    if ((left)); then
        zkh__err "could not terminate all of: ${live[*]}"
        return 1
    fi
    return 0
}

# zkh__launch CFG LOG - start a server in the background; sets ZKH__LAST_PID
zkh__launch() {
    local cfg=$1 log=$2 java cp
    local -a opts=()
    java=$(zkh__java) || { zkh__err "no java"; return 1; }
    cp=$(zkh__classpath) || return 1
    read -r -a opts <<<"${ZKH_JAVA_OPTS:--Xms16m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto}"
    (
        # Do not leak the caller's descriptors (e.g. a C test's client sockets when it calls
        # the harness through system()) into the long-lived JVM.
        for fd in /proc/"$BASHPID"/fd/*; do
            fd=${fd##*/}
            if [[ $fd =~ ^[0-9]+$ ]] && ((fd > 2)); then exec {fd}>&-; fi
        done
        # Empty CONTAINER nodes are reaped every ZKH_CONTAINER_CHECK_MS
        # (server default 60 s) so tests can see lock roots go away.
        # setsid: its own session and process group, so that a test runner
        # killing its test's process group (Check's fork mode) does not take
        # a server restarted from inside a test with it.  This subshell is
        # not a group leader, so setsid execs in place: the PID stays ours.
        exec setsid "$java" "${opts[@]}" \
            -Dznode.container.checkIntervalMs="${ZKH_CONTAINER_CHECK_MS:-1000}" \
            -Dorg.slf4j.simpleLogger.defaultLogLevel="${ZKH_LOG_LEVEL:-info}" \
            -Dorg.slf4j.simpleLogger.showDateTime=true \
            -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS \
            -cp "$cp" org.apache.zookeeper.server.quorum.QuorumPeerMain "$cfg"
    ) </dev/null >>"$log" 2>&1 &
    ZKH__LAST_PID=$!
    # Wait (bounded) until the forked shell has become the JVM, so that ownership checks,
    # which look for the config path in /proc/PID/cmdline, hold from now on.
    local deadline=$(($(zkh__now_ms) + 5000))
    until zkh__ours "$ZKH__LAST_PID" "${cfg%/*}"; do
        if zkh__gone "$ZKH__LAST_PID" || (($(zkh__now_ms) >= deadline)); then
            zkh__err "could not start $java (see $log)"
            # Our own, just-forked child: safe to kill by PID without the ownership check.
            kill -KILL "$ZKH__LAST_PID" 2>/dev/null || true
            zkh__reap "$ZKH__LAST_PID"
            return 1
        fi
        zkh__nap
    done
}

# zkh__common_cfg DATADIR CLIENTPORT - the zoo.cfg lines shared by all servers
zkh__common_cfg() {
    cat <<EOF
tickTime=${ZKH_TICK_TIME:-500}
dataDir=$1
clientPort=$2
clientPortAddress=127.0.0.1
4lw.commands.whitelist=*
admin.enableServer=false
minSessionTimeout=1000
maxSessionTimeout=60000
maxClientCnxns=0
forceSync=no
EOF
    if [[ -n ${ZKH_EXTRA_CFG:-} ]]; then printf '%s\n' "$ZKH_EXTRA_CFG"; fi
}

# zkh__log_tail DIR - print the tail of every server log of DIR to stderr
zkh__log_tail() {
    local log
    for log in "$1"/server.log "$1"/*/server.log; do
        [[ -r $log ]] || continue
        printf '%s\n' "---- tail of $log ----" >&2
        tail -n "${ZKH_LOG_TAIL:-40}" -- "$log" >&2 || true
    done
}

# zkh__check_fresh DIR - refuse to reuse a DIR that still has live servers
zkh__check_fresh() {
    local pid
    if [[ -r $1/pids ]]; then
        while read -r pid; do
            if zkh__ours "$pid" "$1"; then
                zkh__err "$1 still has a running server (pid $pid); zkh_stop it first"
                return 1
            fi
        done <"$1/pids"
    fi
    return 0
}

# zkh__tcp_table - print "port state inode" for every local TCP socket listed in /proc/net
# (state 0A = LISTEN). Prints nothing where /proc/net is not available.
zkh__tcp_table() {
    local f tab laddr st inode
    for f in /proc/net/tcp /proc/net/tcp6; do
        [[ -r $f ]] || continue
        # Slurp first: bash reads a /proc file byte by byte, which is very slow.
        tab=$(<"$f") || continue
        while read -r _ laddr _ st _ _ _ _ _ inode _; do
            [[ $laddr == *:* ]] || continue
            printf '%s %s %s\n' "$((16#${laddr##*:}))" "$st" "$inode"
        done <<<"$tab"
    done
}

# zkh__port_in_use PORT - succeeds if some TCP socket on this host is bound to PORT
zkh__port_in_use() {
    local p _x
    while read -r p _x; do [[ $p == "$1" ]] && return 0; done < <(zkh__tcp_table)
    return 1
}

# zkh__owns_port PID PORT - succeeds if PID holds the socket listening on PORT (so that a
# srvr answer on PORT really comes from PID, not from some other server). Succeeds when this
# cannot be checked (no /proc).
zkh__owns_port() {
    local pid=$1 port=$2 p st inode fd link
    local -A want=()
    [[ -r /proc/net/tcp ]] || return 0   # cannot tell: trust srvr
    [[ -d /proc/$pid/fd ]] || return 1   # died meanwhile: not ours
    while read -r p st inode; do
        [[ $p == "$port" && $st == 0A ]] && want[$inode]=1
    done < <(zkh__tcp_table)
    ((${#want[@]})) || return 1
    for fd in /proc/"$pid"/fd/*; do
        link=$(readlink -- "$fd" 2>/dev/null) || continue
        [[ $link == socket:\[*\] ]] || continue
        link=${link#socket:[}
        [[ -n ${want[${link%]}]:-} ]] && return 0
    done
    return 1
}

# zkh__check_ports PORT... - fail if one of the (fixed) PORTs is already in use
zkh__check_ports() {
    local p
    for p in "$@"; do
        if zkh__port_in_use "$p"; then
            zkh__err "port $p is already in use"
            return 1
        fi
    done
}

# ---------------------------------------------------------------- public API

# zkh_free_port - print a TCP port that is free on 127.0.0.1 and has not been handed out
# recently (by this shell, its subshells or any other harness user of the same registry)
zkh_free_port() {
    local min=${ZKH_PORT_MIN:-20000} max=${ZKH_PORT_MAX:-32000} ttl=${ZKH_PORT_TTL:-600}
    local reg=${ZKH_PORT_REGISTRY:-${TMPDIR:-/tmp}/zkharness-ports.${EUID:-$(id -u)}}
    (
        exec 9>>"$reg" || exit 1
        if command -v flock >/dev/null 2>&1; then flock -w 10 9 || true; fi
        now=$(($(zkh__now_ms) / 1000))
        declare -A busy=()
        # Anything bound on this host, in any TCP state.
        while read -r p _ _; do busy[$p]=1; done < <(zkh__tcp_table)
        # Recently handed-out ports (someone may be about to bind them); drop stale entries.
        keep=
        while read -r p t; do
            [[ $p =~ ^[0-9]+$ && $t =~ ^[0-9]+$ ]] || continue
            if ((now - t < ttl)); then
                busy[$p]=1
                keep+="$p $t"$'\n'
            fi
        done <"$reg"
        py=
        for c in /usr/bin/python3 python3; do
            if command -v "$c" >/dev/null 2>&1; then py=$c; break; fi
        done
        for ((try = 0; try < 200; try++)); do
            port=$((min + ((RANDOM << 15) | RANDOM) % (max - min + 1)))
            [[ -z ${busy[$port]:-} ]] || continue
            busy[$port]=1
            if [[ -n $py ]]; then
                "$py" -c 'import socket,sys
s=socket.socket()
s.bind(("127.0.0.1",int(sys.argv[1])))' "$port" 2>/dev/null || continue
            elif (exec 8<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
                continue   # somebody is listening
            fi
            printf '%s%s %s\n' "$keep" "$port" "$now" >"$reg"
            printf '%s\n' "$port"
            exit 0
        done
        exit 1
    ) || { zkh__err "no free port found in $min..$max"; return 1; }
}

# zkh_4lw HOST:PORT WORD - print a four-letter word's answer (fails if no connection/timeout)
zkh_4lw() {
    local hp=$1 word=$2
    # shellcheck disable=SC2016  # expanded by the inner shell
    timeout "${ZKH_4LW_TIMEOUT:-2}" "${BASH:-bash}" -c \
        'exec 3<>"/dev/tcp/$1/$2" || exit 1; printf "%s" "$3" >&3; exec cat <&3' \
        zkh-4lw "${hp%:*}" "${hp##*:}" "$word" 2>/dev/null
}

# zkh_mode HOST:PORT - print "standalone", "leader", "follower" or "observer" when the server
# is serving; fails (printing nothing) otherwise
zkh_mode() {
    local out line
    out=$(zkh_4lw "$1" srvr) || return 1
    while IFS= read -r line; do
        if [[ $line == Mode:* ]]; then
            line=${line#Mode:}
            line=${line//[[:space:]]/}
            printf '%s\n' "$line"
            return 0
        fi
    done <<<"$out"
    return 1
}

# zkh_server_mode DIR ID - zkh_mode of server ID of DIR; skips dead or paused servers (fails)
zkh_server_mode() {
    local dir=$1 id=$2 pid cp
    pid=$(zkh__field "$dir" "$id" 5) || return 1
    cp=$(zkh__field "$dir" "$id" 2) || return 1
    zkh__ours "$pid" "$dir" || return 1
    zkh__stopped "$pid" && return 1
    zkh_mode "127.0.0.1:$cp"
}

# zkh_leader_id DIR - print the id of the server that reports Mode: leader (standalone: 1).
# Fails if there is not exactly one. Dead and paused servers are not asked.
zkh_leader_id() {
    local dir=$1 id mode n=0 leader=
    local -a ids=()
    mapfile -t ids < <(zkh__ids "$dir")
    for id in "${ids[@]}"; do
        mode=$(zkh_server_mode "$dir" "$id") || continue
        if [[ $mode == leader || $mode == standalone ]]; then
            n=$((n + 1))
            leader=$id
        fi
    done
    ((n == 1)) || return 1
    printf '%s\n' "$leader"
}

# zkh_wait_leader DIR [TIMEOUT_S] [NOT_ID] - wait until exactly one live server is leader (and
# it is not NOT_ID); print its id
zkh_wait_leader() {
    local dir=$1 secs=${2:-${ZKH_START_TIMEOUT:-30}} not=${3:-} id deadline
    deadline=$(($(zkh__now_ms) + secs * 1000))
    while :; do
        if id=$(zkh_leader_id "$dir") && [[ $id != "$not" ]]; then
            printf '%s\n' "$id"
            return 0
        fi
        (($(zkh__now_ms) < deadline)) || break
        zkh__nap
    done
    zkh__err "no single leader in $dir after ${secs}s"
    return 1
}

# zkh_wait_serving DIR ID [TIMEOUT_S] - wait until server ID serves clients (fails early if its
# process died)
zkh_wait_serving() {
    local dir=$1 id=$2 secs=${3:-${ZKH_START_TIMEOUT:-30}} pid cp deadline
    deadline=$(($(zkh__now_ms) + secs * 1000))
    while :; do
        pid=$(zkh__field "$dir" "$id" 5) || return 1
        cp=$(zkh__field "$dir" "$id" 2) || return 1
        if ! zkh__ours "$pid" "$dir"; then
            zkh__err "server $id of $dir (pid $pid) is not running"
            return 1
        fi
        if zkh_mode "127.0.0.1:$cp" >/dev/null; then
            zkh__owns_port "$pid" "$cp" && return 0
            # Somebody else answers on our port: ours will fail to bind and exit.
        fi
        (($(zkh__now_ms) < deadline)) || break
        zkh__nap
    done
    zkh__err "server $id of $dir not serving after ${secs}s"
    return 1
}

# zkh_wait_ready DIR [TIMEOUT_S] - wait until every server of DIR serves and (ensemble) exactly
# one is leader. Fails early if a server process died.
zkh_wait_ready() {
    local dir=$1 secs=${2:-${ZKH_START_TIMEOUT:-30}} deadline id pid cp mode leaders serving
    local -a ids=()
    mapfile -t ids < <(zkh__ids "$dir")
    ((${#ids[@]})) || { zkh__err "no servers in $dir"; return 1; }
    deadline=$(($(zkh__now_ms) + secs * 1000))
    while :; do
        leaders=0 serving=0
        for id in "${ids[@]}"; do
            pid=$(zkh__field "$dir" "$id" 5) || return 1
            cp=$(zkh__field "$dir" "$id" 2) || return 1
            if ! zkh__ours "$pid" "$dir"; then
                zkh__err "server $id of $dir (pid $pid) is not running"
                return 1
            fi
            mode=$(zkh_mode "127.0.0.1:$cp") || continue
            zkh__owns_port "$pid" "$cp" || continue
            serving=$((serving + 1))
            [[ $mode == leader || $mode == standalone ]] && leaders=$((leaders + 1))
        done
        ((serving == ${#ids[@]} && leaders == 1)) && return 0
        (($(zkh__now_ms) < deadline)) || break
        zkh__nap
    done
    zkh__err "$dir not ready after ${secs}s ($serving/${#ids[@]} serving, $leaders leader(s))"
    return 1
}

# zkh_start_standalone DIR - start one standalone server; exports ZKH_HOSTS
zkh_start_standalone() {
    local dir port t0 attempt fixed=${ZKH_STANDALONE_PORT:-}
    [[ $# -eq 1 && -n $1 ]] || { zkh__err "usage: zkh_start_standalone DIR"; return 2; }
    zkh_available || return 1
    dir=$(zkh__abs "$1") || return 1
    zkh__check_fresh "$dir" || return 1
    t0=$(zkh__now_ms)
    for attempt in 1 2 3; do
        if [[ -n $fixed ]]; then
            port=$fixed
            zkh__check_ports "$port" || return 1
        else
            port=$(zkh_free_port) || return 1
        fi
        mkdir -p -- "$dir/data" || return 1
        printf 'standalone\n' >"$dir/.zkharness"
        zkh__common_cfg "$dir/data" "$port" >"$dir/zoo.cfg" || return 1
        printf '1 %s - - -\n' "$port" >"$dir/ports"
        : >"$dir/pids"
        : >>"$dir/server.log"
        ZKH__LAST_PID=
        if zkh__launch "$dir/zoo.cfg" "$dir/server.log" &&
            zkh__set_pid "$dir" 1 "$ZKH__LAST_PID" &&
            zkh_wait_serving "$dir" 1; then
            ZKH_START_MS=$(($(zkh__now_ms) - t0))
            export ZKH_HOSTS=127.0.0.1:$port
            printf '%s\n' "$ZKH_HOSTS" >"$dir/hosts"
            return 0
        fi
        [[ -z $ZKH__LAST_PID ]] || zkh__terminate "$dir" 2 "$ZKH__LAST_PID" || true
        zkh__set_pid "$dir" 1 - || true
        # A port grabbed by somebody else between the check and the bind: try other ports.
        if [[ -z $fixed && $attempt -lt 3 ]] && grep -q 'Address already in use' "$dir/server.log"; then
            zkh__err "port $port was taken, retrying with another one"
            continue
        fi
        break
    done
    zkh__err "standalone ZooKeeper in $dir failed to start"
    zkh__log_tail "$dir"
    return 1
}

# zkh_start_ensemble DIR - start a 3-node ensemble on 127.0.0.1; exports ZKH_HOSTS
zkh_start_ensemble() {
    local dir t0 attempt i id var hosts env_cp=${ZKH_ENSEMBLE_CLIENT_PORTS:-}
    local env_qp=${ZKH_ENSEMBLE_QUORUM_PORTS:-} env_ep=${ZKH_ENSEMBLE_ELECTION_PORTS:-}
    local -a cps=() qps=() eps=()
    [[ $# -eq 1 && -n $1 ]] || { zkh__err "usage: zkh_start_ensemble DIR"; return 2; }
    zkh_available || return 1
    dir=$(zkh__abs "$1") || return 1
    zkh__check_fresh "$dir" || return 1
    t0=$(zkh__now_ms)
    for attempt in 1 2 3; do
        read -r -a cps <<<"$env_cp"
        read -r -a qps <<<"$env_qp"
        read -r -a eps <<<"$env_ep"
        for var in cps qps eps; do
            local -n arr=$var
            if ((${#arr[@]} == 0)); then
                for i in 0 1 2; do arr[i]=$(zkh_free_port) || return 1; done
            elif ((${#arr[@]} != 3)); then
                zkh__err "ZKH_ENSEMBLE_*_PORTS must list exactly 3 ports (got '${arr[*]}')"
                return 2
            fi
            unset -n arr
        done
        zkh__check_ports "${cps[@]}" "${qps[@]}" "${eps[@]}" || return 1
        printf 'ensemble\n' >"$dir/.zkharness"
        : >"$dir/ports"
        : >"$dir/pids"
        hosts=
        for id in 1 2 3; do
            i=$((id - 1))
            mkdir -p -- "$dir/$id/data" || return 1
            printf '%s\n' "$id" >"$dir/$id/data/myid"
            {
                zkh__common_cfg "$dir/$id/data" "${cps[i]}"
                # Two ticks per initLimit/syncLimit step: 10 s to sync, 2.5 s heartbeat slack.
                printf 'initLimit=20\nsyncLimit=5\n'
                printf 'server.1=127.0.0.1:%s:%s\n' "${qps[0]}" "${eps[0]}"
                printf 'server.2=127.0.0.1:%s:%s\n' "${qps[1]}" "${eps[1]}"
                printf 'server.3=127.0.0.1:%s:%s\n' "${qps[2]}" "${eps[2]}"
            } >"$dir/$id/zoo.cfg" || return 1
            : >>"$dir/$id/server.log"
            printf '%s %s %s %s -\n' "$id" "${cps[i]}" "${qps[i]}" "${eps[i]}" >>"$dir/ports"
            hosts+=${hosts:+,}127.0.0.1:${cps[i]}
        done
        local launched=1
        for id in 1 2 3; do
            if ! zkh__launch "$dir/$id/zoo.cfg" "$dir/$id/server.log" ||
                ! zkh__set_pid "$dir" "$id" "$ZKH__LAST_PID"; then
                launched=0
                break
            fi
        done
        if ((launched)) && zkh_wait_ready "$dir"; then
            ZKH_START_MS=$(($(zkh__now_ms) - t0))
            export ZKH_HOSTS=$hosts
            printf '%s\n' "$ZKH_HOSTS" >"$dir/hosts"
            return 0
        fi
        local -a started=()
        mapfile -t started <"$dir/pids"
        zkh__terminate "$dir" 2 "${started[@]}" || true
        for id in 1 2 3; do zkh__set_pid "$dir" "$id" - || true; done
        if [[ -z "$env_cp$env_qp$env_ep" && $attempt -lt 3 ]] &&
            grep -q 'Address already in use' "$dir"/*/server.log; then
            zkh__err "a port was taken, retrying with other ones"
            continue
        fi
        break
    done
    zkh__err "ZooKeeper ensemble in $dir failed to start"
    zkh__log_tail "$dir"
    return 1
}

# zkh_kill DIR ID - SIGKILL server ID and wait until it is gone
zkh_kill() {
    local dir pid deadline
    [[ $# -eq 2 ]] || { zkh__err "usage: zkh_kill DIR ID"; return 2; }
    dir=$(cd -- "$1" && pwd -P) || return 1
    pid=$(zkh__field "$dir" "$2" 5) || return 1
    if ! zkh__ours "$pid" "$dir"; then
        zkh__err "server $2 of $dir is not running"
        return 1
    fi
    kill -KILL "$pid" || return 1
    deadline=$(($(zkh__now_ms) + 5000))
    while zkh__ours "$pid" "$dir"; do
        (($(zkh__now_ms) < deadline)) || { zkh__err "pid $pid survived SIGKILL"; return 1; }
        zkh__nap
    done
    zkh__reap "$pid"
    zkh__set_pid "$dir" "$2" -
}

# zkh_restart DIR ID - (stop if running, then) start server ID again with the same config and
# data, wait until it serves
zkh_restart() {
    local dir sdir pid t0
    [[ $# -eq 2 ]] || { zkh__err "usage: zkh_restart DIR ID"; return 2; }
    dir=$(cd -- "$1" && pwd -P) || return 1
    sdir=$(zkh__srvdir "$dir" "$2") || return 1
    pid=$(zkh__field "$dir" "$2" 5) || return 1
    if zkh__ours "$pid" "$dir"; then
        zkh__terminate "$dir" "${ZKH_STOP_TIMEOUT:-5}" "$pid" || return 1
    fi
    t0=$(zkh__now_ms)
    printf '==== zkharness restart %s ====\n' "$(date '+%H:%M:%S')" >>"$sdir/server.log"
    ZKH__LAST_PID=
    # ZKH_NO_WAIT=1: do not wait until it serves (a lone ensemble member
    # cannot before a quorum is back: restart them all, then wait-ready)
    if zkh__launch "$sdir/zoo.cfg" "$sdir/server.log" &&
        zkh__set_pid "$dir" "$2" "$ZKH__LAST_PID" &&
        { [[ -n ${ZKH_NO_WAIT:-} ]] || zkh_wait_serving "$dir" "$2"; }; then
        ZKH_START_MS=$(($(zkh__now_ms) - t0))
        return 0
    fi
    [[ -z $ZKH__LAST_PID ]] || zkh__terminate "$dir" 2 "$ZKH__LAST_PID" || true
    zkh__set_pid "$dir" "$2" - || true
    zkh__err "restart of server $2 in $dir failed"
    ZKH_LOG_TAIL=${ZKH_LOG_TAIL:-60} zkh__log_tail "$sdir"
    return 1
}

# zkh__signal DIR ID SIG
zkh__signal() {
    local dir pid
    dir=$(cd -- "$1" && pwd -P) || return 1
    pid=$(zkh__field "$dir" "$2" 5) || return 1
    if ! zkh__ours "$pid" "$dir"; then
        zkh__err "server $2 of $dir is not running"
        return 1
    fi
    kill "-$3" "$pid"
}

# zkh_pause DIR ID / zkh_resume DIR ID - SIGSTOP / SIGCONT server ID
zkh_pause() {
    [[ $# -eq 2 ]] || { zkh__err "usage: zkh_pause DIR ID"; return 2; }
    zkh__signal "$1" "$2" STOP
}
zkh_resume() {
    [[ $# -eq 2 ]] || { zkh__err "usage: zkh_resume DIR ID"; return 2; }
    zkh__signal "$1" "$2" CONT
}

# zkh_pids DIR - print the PIDs of the servers of DIR that are still running
zkh_pids() {
    local dir pid
    dir=$(cd -- "$1" && pwd -P) || return 1
    [[ -r $dir/pids ]] || return 0
    while read -r pid; do
        if zkh__ours "$pid" "$dir"; then printf '%s\n' "$pid"; fi
    done <"$dir/pids"
}

# zkh_stop DIR - stop the servers recorded in DIR/pids (TERM, then KILL after ZKH_STOP_TIMEOUT
# seconds); remove DIR unless ZKH_KEEP is set. A missing DIR is not an error.
zkh_stop() {
    local dir rc=0
    local -a pids=()
    [[ $# -eq 1 && -n $1 ]] || { zkh__err "usage: zkh_stop DIR"; return 2; }
    [[ -d $1 ]] || return 0
    dir=$(cd -- "$1" && pwd -P) || return 1
    if [[ -r $dir/pids ]]; then
        mapfile -t pids <"$dir/pids"
        zkh__terminate "$dir" "${ZKH_STOP_TIMEOUT:-5}" "${pids[@]}" || rc=1
        if ((rc == 0)) && [[ -r $dir/ports ]]; then
            local id
            while read -r id; do zkh__set_pid "$dir" "$id" - || true; done < <(zkh__ids "$dir")
        fi
    fi
    if ((rc == 0)) && [[ -z ${ZKH_KEEP:-} && -e $dir/.zkharness ]]; then
        rm -rf -- "$dir" || rc=1
    elif [[ -n ${ZKH_KEEP:-} ]]; then
        zkh__err "keeping $dir (ZKH_KEEP is set)"
    fi
    return "$rc"
}

# ---------------------------------------------------------------- command-line entry point

zkh__main() {
    local cmd=${1:-}
    shift || true
    case $cmd in
        start-standalone) zkh_start_standalone "$@" && printf '%s\n' "$ZKH_HOSTS" ;;
        start-ensemble) zkh_start_ensemble "$@" && printf '%s\n' "$ZKH_HOSTS" ;;
        stop) zkh_stop "$@" ;;
        kill) zkh_kill "$@" ;;
        restart) zkh_restart "$@" ;;
        pause) zkh_pause "$@" ;;
        resume) zkh_resume "$@" ;;
        leader) zkh_leader_id "$@" ;;
        wait-leader) zkh_wait_leader "$@" ;;
        wait-ready) zkh_wait_ready "$@" ;;
        wait-serving) zkh_wait_serving "$@" ;;
        pids) zkh_pids "$@" ;;
        mode) zkh_server_mode "$@" ;;
        4lw) zkh_4lw "$@" ;;
        free-port) zkh_free_port ;;
        available) zkh_available ;;
        *)
            printf 'usage:\n' >&2
            sed -n 's|^#     tests/zkharness.sh|  zkharness.sh|p' "$ZKH_SELF" >&2
            return 2
            ;;
    esac
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    set -uo pipefail
    zkh__main "$@"
    exit $?
fi

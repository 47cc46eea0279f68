#!/usr/bin/env bash
# tests/cli/usage.sh - the zkl tool without a server: every usage error
# exits 64 with a one-line hint, --help and --version exit 0, and an
# unreachable ensemble exits 69 naming its hosts.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/lib.sh"

# usage_error HINT_PIECE ARGS... - exit 64, one line on stderr, nothing on
# stdout, and the line says what is wrong and where help is.
usage_error() {
    local piece=$1 rc=0
    shift
    zkl "$@" >"$W/out" 2>"$W/err" || rc=$?
    [[ $rc -eq 64 ]] || fail "zkl $*: exit $rc, wanted 64 ($(cat "$W/err"))"
    [[ ! -s $W/out ]] || fail "zkl $*: wrote to stdout"
    [[ $(wc -l <"$W/err") -eq 1 ]] || fail "zkl $*: not one line: $(cat "$W/err")"
    grep -qF -- "$piece" "$W/err" || fail "zkl $*: '$piece' not in: $(cat "$W/err")"
    grep -qF -- "--help'" "$W/err" || fail "zkl $*: no hint: $(cat "$W/err")"
}

usage_error "COMMAND is missing"
usage_error "unknown command 'frob'" frob /p
usage_error "unknown option -x" -x status /p
usage_error "unknown option --nope" --nope status /p
usage_error "option -s needs a value" -s
usage_error "--session-timeout needs" --session-timeout 0 status /p
usage_error "--connect-timeout needs" --connect-timeout x status /p
usage_error "--auth needs USER:PASS" --auth user status /p
usage_error "PATH is missing" lock
usage_error "CMD is missing" lock /p
usage_error "CMD is missing" lock /p --
usage_error "bad PATH 'rel'" lock rel true
usage_error "bad PATH" lock /a/ true
usage_error "bad PATH" status /zookeeper/quota
usage_error "-t needs SECONDS" lock -t never /p true
usage_error "-E needs an exit code" lock -E 300 /p true
usage_error "--grace needs SECONDS" lock --grace -1 /p true
usage_error "exclude each other" lock --read --write /p true
usage_error "one of -n and -t" lock -n -t 1 /p true
usage_error "unknown option --bogus" lock --bogus /p true
usage_error "PATH is missing" lock --all
usage_error "PATH is missing before '--'" lock --all -- true
usage_error "'--' is missing after the PATHs" lock --all /a /b true
usage_error "CMD is missing" lock --all /a /b --
usage_error "PATH '/a' is given twice" lock --all /a /b /a -- true
usage_error "bad PATH 'b'" lock --all /a b -- true
usage_error "--all takes exclusive locks only, not --read" lock --all --read /a /b -- true
usage_error "--all takes exclusive locks only, not --write" lock --write --all /a -- true
usage_error "unexpected '-n' among the PATHs" lock --all /a -n /b -- true
usage_error "give --all once" lock --all --all /a -- true
usage_error "one of -n and -t" lock --all -n -t 1 /a /b -- true
# shellcheck disable=SC2046  # 65 words
usage_error "65 PATHs: --all takes at most 64" lock --all $(seq -f /p%g 65) -- true
usage_error "CMD is missing" elect /e
usage_error "ID must not be empty" elect -i "" /e true
usage_error "runs no command" elect --observe /e true
usage_error "takes no --id" elect --observe -i x /e
usage_error "PATH is missing" status
usage_error "unexpected 'more'" status /p more
usage_error "unknown option --yaml" status --yaml /p
usage_error "SUBCOMMAND is missing" queue
usage_error "unknown subcommand 'pop'" queue pop /q
usage_error "PATH is missing" queue take
usage_error "bad PATH 'q'" queue put q data
usage_error "unexpected 'b' after DATA" queue put /q a b
usage_error "options go before PATH" queue take /q -n
usage_error "--batch reads the items from stdin" queue put --batch /q x
usage_error "-n does not apply to put" queue put -n /q x
usage_error "--json does not apply to size" queue size --json /q
usage_error "--format needs qn, kazoo or locking" queue take --format xml /q
usage_error "--priority needs --format kazoo" queue put --priority 3 /q x
usage_error "--priority needs 0..999" queue put --format kazoo --priority 1000 /q x
usage_error "--max needs 1..1000" queue take --max 1001 /q
usage_error "one of -n and -t" queue take -n -t 2 /q
usage_error "NAME is missing" queue rm /q
usage_error "--priority needs --format kazoo or locking" queue put --format qn --priority 3 /q x
usage_error "--soft-max needs 0..1000000000, not 'x'" queue put --soft-max x /q a
usage_error "--soft-max does not apply to take" queue take --soft-max 3 /q
usage_error "CMD is missing" queue claim /q
usage_error "CMD is missing" queue claim -n /q --
usage_error "claims need --format locking" queue claim --format qn /q true
usage_error "claims need --format locking" queue claim --format kazoo -n /q true
usage_error "--grace needs SECONDS" queue claim --grace soon /q true
usage_error "one of -n and -t" queue claim -n -t 1 /q true
usage_error "--json does not apply to claim" queue claim --json /q true
usage_error "--nack-tail does not apply to take" queue take --nack-tail /q
usage_error "--grace does not apply to put" queue put --grace 1 /q x
usage_error "--format needs --counter" status --format int64 /p
usage_error "-t needs --watch" status -t 5 /p
usage_error "--watch shows contenders" status --watch --counter /p
usage_error "--watch shows contenders" status --watch --sem /p
usage_error "--format needs int32, int64 or text" status --counter --format qn /p
usage_error "SUBCOMMAND is missing" counter
usage_error "unknown subcommand 'incr'" counter incr /c
usage_error "PATH is missing" counter get
usage_error "bad PATH 'c'" counter get c
usage_error "unexpected 'x' after PATH" counter get /c x
usage_error "options go before PATH" counter get /c --json
usage_error "VALUE is missing" counter set /c
usage_error "VALUE needs a decimal integer, not '12x'" counter set /c 12x
usage_error "VALUE needs a decimal integer, not '1 '" counter set /c "1 "
usage_error "VALUE 2147483648 is out of range: an int32 counter holds (-2147483648..2147483647)" counter set /c 2147483648
usage_error "VALUE -9223372036854775809 is out of range: an int64 counter holds" counter set --format int64 /c -9223372036854775809
usage_error "unexpected '2' after VALUE" counter set /c 1 2
usage_error "--initial does not apply to set" counter set --initial 1 /c 2
usage_error "DELTA is missing" counter add /c
usage_error "DELTA needs a decimal integer, not '0x1'" counter add /c 0x1
usage_error "DELTA 4294967296 is out of range: no int32 counter could take it" counter add /c 4294967296
usage_error "--initial 2147483648 is out of range" counter add --initial 2147483648 /c 1
usage_error "--initial needs a decimal integer, not 'zero'" counter get --initial zero /c
usage_error "-t needs SECONDS" counter add -t 1ms /c 1
usage_error "give -t once" counter wait -t 1 --timeout 2 /c
usage_error "-t does not apply to get" counter get -t 1 /c
usage_error "-t does not apply to cas" counter cas --timeout 1 /c 1 2
usage_error "VERSION is missing" counter cas /c
usage_error "VALUE is missing" counter cas /c 4
usage_error "VERSION needs a data version" counter cas /c four 5
usage_error "VERSION needs a data version" counter cas /c NONE 5
usage_error "VALUE needs a decimal integer" counter cas /c none 5.0
usage_error "--format needs int32, int64 or text, not 'long'" counter get --format long /c
usage_error "unexpected '1' after PATH" counter wait /c 1
usage_error "--counter and --barrier exclude each other" status --counter --barrier /p
usage_error "SUBCOMMAND is missing" barrier
usage_error "unknown subcommand 'leave'" barrier leave /b
usage_error "PATH is missing" barrier set
usage_error "bad PATH 'b'" barrier remove b
usage_error "unexpected 'x' after PATH" barrier set /b x
usage_error "options go before PATH" barrier wait /b -t 1
usage_error "-t does not apply to remove" barrier remove -t 1 /b
usage_error "-t needs SECONDS" barrier wait -t 1s /b
usage_error "give -t once" barrier wait -t 1 -t 2 /b
usage_error "-n MEMBERS is missing" barrier enter /b true
usage_error "-n needs MEMBERS, 1..2147483647, not '0'" barrier enter -n 0 /b true
usage_error "-n needs MEMBERS" barrier enter --members=many /b true
usage_error "CMD is missing" barrier enter -n 2 /b
usage_error "CMD is missing" barrier enter -n 2 /b --
usage_error "options go before PATH" barrier enter -n 2 /b -t 5 -- true
usage_error "--leave-timeout needs SECONDS" barrier enter -n 2 --leave-timeout x /b true
usage_error "-E needs an exit code" barrier enter -n 2 -E 300 /b true
usage_error "--grace needs SECONDS" barrier enter -n 2 --grace -1 /b true
usage_error "-n does not apply to wait" barrier wait -n 2 /b
usage_error "-n MAX is missing" sem /s true
usage_error "-n MAX is missing" sem --qty 2 /s true
usage_error "-n needs MAX, 1..2147483647, not '0'" sem -n 0 /s true
usage_error "-n needs MAX" sem -n five /s true
usage_error "-n needs MAX" sem --max=2.0 /s true
usage_error "--qty needs 1..1000, not '0'" sem -n 2 --qty 0 /s true
usage_error "--qty needs 1..1000" sem -n 2 --qty 2x /s true
usage_error "--qty needs 1..1000, not '1001'" sem --count-path /c --qty 1001 /s true
usage_error "--qty 3 is more than -n 2" sem -n 2 --qty 3 /s true
usage_error "give --qty once" sem -n 2 --qty 1 --qty 2 /s true
usage_error "bad --count-path 'c'" sem --count-path c /s true
usage_error "-t needs SECONDS" sem -n 2 -t 1s /s true
usage_error "-E needs an exit code" sem -n 2 -E 300 /s true
usage_error "--grace needs SECONDS" sem -n 2 --grace -1 /s true
usage_error "PATH is missing" sem -n 2
usage_error "bad PATH 's'" sem -n 2 s true
usage_error "CMD is missing" sem -n 2 /s
usage_error "CMD is missing" sem -n 2 /s --
usage_error "options go before PATH" sem -n 2 /s --qty 2 true
usage_error "unknown option --json" sem -n 2 --json /s true
usage_error "--count-path needs --sem" status --count-path /c /s
usage_error "--kazoo and --count-path exclude each other" sem --kazoo --count-path /c /s true
usage_error "--qty 3 is more than -n 2" sem --kazoo -n 2 --qty 3 /s true
usage_error "--kazoo needs --sem" status --kazoo /s
usage_error "--kazoo and --count-path exclude each other" status --sem --kazoo --count-path /c /s
usage_error "unknown option --kazoo" lock --kazoo /s true
usage_error "--counter, --barrier and --sem exclude each other" status --sem --counter /s
usage_error "--format needs --counter" status --sem --format int32 /s
# whether NAME is an item of the format is the library's to say: that
# usage error (64 too) needs the server, see tests/cli/queue.zksh
# DATA past ZKL_QUEUE_MAX_BYTES: an argument that long does not fit
# Linux's limit on one argument (128 KiB), so the rule is unit-tested
ok "usage errors exit 64 with a one-line hint"

for c in "" lock elect status queue counter barrier sem; do
    # shellcheck disable=SC2086  # "" is no command
    expect_rc 0 "zkl $c --help" zkl $c --help >"$W/out" 2>"$W/err"
    grep -q "^Usage: zkl" "$W/out" || fail "zkl $c --help: no usage"
    [[ ! -s $W/err ]] || fail "zkl $c --help wrote to stderr"
done
zkl lock --help | grep -q "SUSPENDED\|suspended connection" || fail "lock --help says nothing of suspension"
zkl lock --help >"$W/lock-help"
for v in --all ZKL_LOCK_PATHS ZKL_LOCK_NODES ZKL_FENCING_TOKENS; do
    grep -q -- "$v" "$W/lock-help" || fail "zkl lock --help does not name $v"
done
grep -q "^ *zkl \[OPTIONS\] lock --all " "$W/lock-help" || fail "zkl lock --help: no usage of --all"
zkl elect --help | grep -q "suspended connection" || fail "elect --help says nothing of suspension"
# (the help is read whole first: grep -q may end before a long one is
# written, and zkl would die of SIGPIPE)
zkl queue --help >"$W/queue-help"
for v in ZKL_QUEUE_PATH ZKL_ITEM_NAME ZKL_ITEM_TOKEN; do
    grep -q "$v" "$W/queue-help" || fail "zkl queue --help does not name $v"
done
zkl --help >"$W/top-help"
for sub in put take claim peek size ls rm; do
    zkl queue "$sub" --help >"$W/sub-help"
    grep -q "^ *zkl \[OPTIONS\] queue $sub " "$W/sub-help" || fail "zkl queue $sub --help: no usage of $sub"
    grep -q "queue .*$sub" "$W/top-help" || fail "zkl --help does not name queue $sub"
done
for sub in get set add cas wait; do
    zkl counter "$sub" --help >"$W/sub-help"
    grep -qE "^(Usage:)? *zkl \[OPTIONS\] counter $sub " "$W/sub-help" || fail "zkl counter $sub --help: no usage of $sub"
    grep -q "counter .*$sub" "$W/top-help" || fail "zkl --help does not name counter $sub"
done
grep -q "status --counter" "$W/top-help" || fail "zkl --help does not name status --counter"
# (into a file: a help longer than a pipe's first write would meet grep -q's
# early exit as SIGPIPE)
zkl status --help >"$W/status-help"
grep -q "status --stats \[--json\] FILE" "$W/status-help" || fail "zkl status --help does not show --stats"
grep -q "status --stats FILE" "$W/top-help" || fail "zkl --help does not name status --stats"
grep -q -- "--stats-file FILE" "$W/top-help" || fail "zkl --help does not name --stats-file"
grep -q "status --counter" "$W/status-help" || fail "zkl status --help does not show --counter"
for sub in set remove wait enter; do
    zkl barrier "$sub" --help >"$W/sub-help"
    grep -qE "^(Usage:)? *zkl \[OPTIONS\] barrier $sub " "$W/sub-help" || fail "zkl barrier $sub --help: no usage of $sub"
    grep -q "barrier .*$sub" "$W/top-help" || fail "zkl --help does not name barrier $sub"
done
grep -q "status --barrier" "$W/top-help" || fail "zkl --help does not name status --barrier"
grep -q "status --barrier" "$W/status-help" || fail "zkl status --help does not show --barrier"
zkl barrier --help >"$W/barrier-help"
for v in ZKL_BARRIER_PATH ZKL_BARRIER_MEMBERS; do
    grep -q "$v" "$W/barrier-help" || fail "zkl barrier --help does not name $v"
done
grep -q "suspended connection" "$W/barrier-help" || fail "barrier --help says nothing of suspension"
zkl sem --help >"$W/sem-help"
for v in ZKL_SEM_PATH ZKL_SEM_LEASES ZKL_SEM_TOKEN --count-path --qty --kazoo; do
    grep -q -- "$v" "$W/sem-help" || fail "zkl sem --help does not name $v"
done
grep -q "suspended connection" "$W/sem-help" || fail "sem --help says nothing of suspension"
grep -q "sem -n MAX" "$W/top-help" || fail "zkl --help does not name sem"
grep -q "lock --all PATH" "$W/top-help" || fail "zkl --help does not name lock --all"
grep -q "status --sem" "$W/top-help" || fail "zkl --help does not name status --sem"
grep -q "status --sem" "$W/status-help" || fail "zkl status --help does not show --sem"
expect_rc 0 "zkl -h" zkl -h >/dev/null
version=$(sed -n 's/^#define ZKL_VERSION_STRING "\(.*\)"/\1/p' "$top_srcdir/include/zkl/version.h")
[[ $(zkl --version) == "zkl $version "* ]] || fail "--version: $(zkl --version), wanted $version"
[[ $(zkl -V) == "zkl $version "* ]] || fail "-V"
ok "--help, each command's --help, --version"

# Nothing listens on port 1: refused at once, retried until the connect
# timeout, then 69 with the hosts named.
unreachable() {
    local rc=0 hosts=$1
    shift
    "$@" >"$W/out" 2>"$W/err" || rc=$?
    [[ $rc -eq 69 ]] || fail "$*: exit $rc, wanted 69 ($(cat "$W/err"))"
    grep -qF "$hosts" "$W/err" || fail "$*: hosts not named: $(cat "$W/err")"
}
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 status /p
unreachable 127.0.0.1:1,127.0.0.1:2 zkl -s 127.0.0.1:1,127.0.0.1:2 --connect-timeout 500 lock /p true
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 lock --all /p /q -- touch "$W/ran"
[[ ! -e $W/ran ]] || fail "unreachable: lock --all ran CMD"
ZKL_SERVERS=127.0.0.1:1 unreachable 127.0.0.1:1 zkl --connect-timeout 500 elect /e true
ZKL_SERVERS=127.0.0.1:1 unreachable 127.0.0.1:1 zkl --connect-timeout 500 elect --observe /e
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 queue put /q data
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 queue take /q
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 queue ls /q
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 queue claim /q touch "$W/ran"
[[ ! -e $W/ran ]] || fail "unreachable: claim ran CMD"
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 status /q
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 status --counter /c
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 counter get /c
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 counter add /c 1
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 counter wait /c
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 status --barrier /b
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 barrier set /b
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 barrier wait /b
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 barrier enter -n 1 /b touch "$W/ran"
[[ ! -e $W/ran ]] || fail "unreachable: barrier enter ran CMD"
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 status --sem /s
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 status --sem --count-path /c /s
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 sem -n 1 /s touch "$W/ran"
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 sem --count-path /c -t 0 /s touch "$W/ran"
[[ ! -e $W/ran ]] || fail "unreachable: sem ran CMD"
[[ ! -s $W/out ]] || fail "unreachable: wrote to stdout"
ok "unreachable servers exit 69 naming the hosts"

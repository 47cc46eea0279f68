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
usage_error "--format needs qn or kazoo" queue take --format xml /q
usage_error "--priority needs --format kazoo" queue put --priority 3 /q x
usage_error "--priority needs 0..999" queue put --format kazoo --priority 1000 /q x
usage_error "--max needs 1..1000" queue take --max 1001 /q
usage_error "one of -n and -t" queue take -n -t 2 /q
usage_error "NAME is missing" queue rm /q
usage_error "not the name of a qn item" queue rm /q entry-100-0000000001
usage_error "not the name of a kazoo item" queue rm --format kazoo /q qn-0000000001
# DATA past ZKL_QUEUE_MAX_BYTES: an argument that long does not fit
# Linux's limit on one argument (128 KiB), so the rule is unit-tested
ok "usage errors exit 64 with a one-line hint"

for c in "" lock elect status queue; do
    # shellcheck disable=SC2086  # "" is no command
    expect_rc 0 "zkl $c --help" zkl $c --help >"$W/out" 2>"$W/err"
    grep -q "^Usage: zkl" "$W/out" || fail "zkl $c --help: no usage"
    [[ ! -s $W/err ]] || fail "zkl $c --help wrote to stderr"
done
zkl lock --help | grep -q "SUSPENDED\|suspended connection" || fail "lock --help says nothing of suspension"
zkl elect --help | grep -q "suspended connection" || fail "elect --help says nothing of suspension"
for sub in put take peek size ls rm; do
    zkl queue "$sub" --help | grep -q "^ *zkl \[OPTIONS\] queue $sub " || fail "zkl queue $sub --help: no usage of $sub"
    zkl --help | grep -q "queue .*$sub" || fail "zkl --help does not name queue $sub"
done
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
ZKL_SERVERS=127.0.0.1:1 unreachable 127.0.0.1:1 zkl --connect-timeout 500 elect /e true
ZKL_SERVERS=127.0.0.1:1 unreachable 127.0.0.1:1 zkl --connect-timeout 500 elect --observe /e
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 queue put /q data
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 queue take /q
unreachable 127.0.0.1:1 zkl -s 127.0.0.1:1 --connect-timeout 500 queue ls /q
[[ ! -s $W/out ]] || fail "unreachable: wrote to stdout"
ok "unreachable servers exit 69 naming the hosts"

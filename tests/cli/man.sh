#!/usr/bin/env bash
# tests/cli/man.sh - zkl(1) formats without a warning, and names every
# option and environment variable the tool's --help texts name.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/lib.sh"

page=$top_srcdir/cli/zkl.1
command -v groff >/dev/null || fail "groff is missing (Debian: man-db pulls in groff-base)"
groff -man -ww -z "$page" 2>"$W/groff" || fail "groff failed: $(cat "$W/groff")"
[[ ! -s $W/groff ]] || fail "groff warns: $(cat "$W/groff")"
if command -v man >/dev/null; then
    MANWIDTH=100 man -l --warnings "$page" >"$W/man.txt" 2>"$W/man.err" || fail "man -l failed"
    [[ ! -s $W/man.err ]] || fail "man warns: $(cat "$W/man.err")"
fi
ok "zkl.1 formats without warnings"

# The page as plain text, words only.
groff -man -Tutf8 -P-cbou "$page" 2>/dev/null | tr -s ' \n' ' ' >"$W/page.txt"
for c in "" lock elect status queue counter barrier sem; do
    # shellcheck disable=SC2086  # "" is no command
    zkl $c --help
done >"$W/help.txt"
grep -oE -- '--[a-z][a-z-]+|-[a-zA-Z]\b|ZKL_[A-Z_]+' "$W/help.txt" | sort -u >"$W/names"
[[ $(wc -l <"$W/names") -gt 25 ]] || fail "too few names found in --help: $(cat "$W/names")"
while read -r name; do
    grep -qF -- "$name" "$W/page.txt" || fail "zkl.1 does not mention $name"
done <"$W/names"
ok "zkl.1 names every option and variable of --help ($(wc -l <"$W/names"))"

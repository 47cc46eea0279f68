#!/bin/sh
# The shared library must export exactly the public API: every defined
# dynamic symbol starts with "zkl_" and none with "zkl__" (internal).
set -eu
lib="${top_builddir:-.}/lib/.libs/libzkl.so"
[ -f "$lib" ] || { echo "missing $lib"; exit 99; }
syms=$(${NM:-nm} -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}')
bad=$(printf '%s\n' "$syms" | grep -v '^zkl_' || true)
internal=$(printf '%s\n' "$syms" | grep '^zkl__' || true)
count=$(printf '%s\n' "$syms" | grep -c '^zkl_' || true)
fail=0
[ -z "$bad" ] || { echo "exported non-zkl symbols:"; echo "$bad"; fail=1; }
[ -z "$internal" ] || { echo "exported internal symbols:"; echo "$internal"; fail=1; }
[ "$count" -ge 10 ] || { echo "only $count zkl_ symbols exported"; fail=1; }
echo "libzkl exports $count symbols, all zkl_*"
if [ $fail -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $fail

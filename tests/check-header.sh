#!/bin/sh
# The public header compiles on its own, pedantically, as C99, C11 and C++.
set -u
src="${top_srcdir:-.}/tests/header-pedantic.c"
inc="-I${top_srcdir:-.}/include"
pass=0 fail=0
try() {
  if "$@" >/tmp/zkl-hdr.$$ 2>&1; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAILED: $*"; cat /tmp/zkl-hdr.$$; fi
  rm -f /tmp/zkl-hdr.$$
}
for std in c99 c11 c17; do
  # shellcheck disable=SC2086  # CC and inc may hold several words
  try ${CC:-cc} -std=$std -pedantic -Wall -Wextra -Werror $inc -fsyntax-only "$src"
done
if command -v "${CXX:-c++}" >/dev/null 2>&1; then
  try "${CXX:-c++}" -x c++ -std=c++11 -pedantic -Wall -Wextra -Werror "$inc" -fsyntax-only "$src"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

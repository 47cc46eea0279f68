#!/usr/bin/env bash
# tests/check-install.sh - the installed tree works: `make install
# DESTDIR=<tmp>` puts the headers, library, zkl.pc, man pages and
# zkl-election-demo where configure said, and a program compiled with
# nothing but `pkg-config --cflags --libs zkl` (pointed into DESTDIR) links
# and runs against the installed library.  Works in `make distcheck` (other
# build directory, read-only sources); leaves nothing behind.
# Skips (77) without pkg-config, unless CI is set: then it fails.
set -euo pipefail

: "${top_builddir:?run through make check (top_builddir is not set)}"
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
pkg_config=${PKG_CONFIG:-pkg-config}
read -r -a cc <<<"${CC:-cc}"

if ! command -v "$pkg_config" >/dev/null 2>&1; then
    case ${CI:-} in
        '' | false | 0) printf 'SKIP: pkg-config not installed\n'; exit 77 ;;
        *) printf 'FAIL: pkg-config not installed (CI is set: must not skip)\n'; exit 1 ;;
    esac
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zkl-check-install.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
dest=$tmp/destdir

pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    printf 'FAIL: %s\n' "$*"
}
finish() {
    printf '%d passed, %d failed\n' "$pass" "$fail"
    ((fail == 0))
    exit
}

# A make of our own, not a sub-make of the running `make check`: it must
# not try to use that one's job server.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top_builddir" "$@"; }

# ---- install
if mk install DESTDIR="$dest" >"$tmp/install.log" 2>&1; then ok; else
    bad "make install DESTDIR=$dest failed:"
    tail -n 40 "$tmp/install.log"
    finish
fi

# ---- where configure said things go (the Makefile's own variables)
# shellcheck disable=SC2016  # make variables, expanded by make
printf 'zkl-print-dirs:\n\t@echo "$(libdir)|$(includedir)|$(bindir)|$(man3dir)|$(pkgconfigdir)|$(SAN_CFLAGS)"\n' \
    >"$tmp/print.mk"
IFS='|' read -r libdir includedir bindir man3dir pkgconfigdir san_cflags \
    < <(mk -s -f Makefile -f "$tmp/print.mk" zkl-print-dirs)
[[ -n $libdir && -n $includedir ]] || { bad "cannot read the install directories from $top_builddir/Makefile"; finish; }

# exists WHAT FILE - FILE exists in the DESTDIR tree
exists() {
    if [[ -e $dest$2 ]]; then ok; else bad "$1 not installed: $2"; fi
}
exists "umbrella header" "$includedir/zkl.h"
for h in "$srcdir"/include/zkl/*.h; do
    f=$includedir/zkl/${h##*/}
    if cmp -s -- "$h" "$dest$f"; then ok; else bad "header $f missing or not the source's"; fi
done
exists "pkg-config file" "$pkgconfigdir/zkl.pc"
exists "election demo" "$bindir/zkl-election-demo"
if [[ -x $dest$bindir/zkl-election-demo ]]; then ok; else
    bad "$bindir/zkl-election-demo is not executable"
fi
for page in "$srcdir"/man/*.3; do
    exists "man page" "$man3dir/${page##*/}"
done
# `man NAME` finds every page, the .so aliases included, in the installed tree
if command -v man >/dev/null 2>&1; then
    for page in "$srcdir"/man/*.3; do
        name=${page##*/}
        name=${name%.3}
        if MANWIDTH=80 MANPAGER=cat man -M "$dest${man3dir%/*}" 3 "$name" >"$tmp/man.out" 2>&1 &&
            grep -q '^NAME' "$tmp/man.out"; then ok; else
            bad "man -M ${man3dir%/*} 3 $name does not show the page:"
            head -n 5 "$tmp/man.out"
        fi
    done
fi
shared=0
if [[ -e $dest$libdir/libzkl.so ]]; then shared=1; ok
elif [[ -e $dest$libdir/libzkl.a ]]; then ok
else bad "no libzkl.so or libzkl.a in $libdir"; fi

# ---- build a program against the installed tree, with pkg-config only
export PKG_CONFIG_SYSROOT_DIR=$dest
export PKG_CONFIG_PATH=$dest$pkgconfigdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
# keep -I/usr/include-like flags even for a --prefix=/usr build, so that the
# sysroot is put in front of them instead of a system zkl being used
export PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
static=
((shared)) || static=--static
# shellcheck disable=SC2086  # $static is empty or one word
if flags=$("$pkg_config" $static --cflags --libs zkl 2>"$tmp/pc.err"); then ok; else
    bad "$pkg_config --cflags --libs zkl failed:"
    cat "$tmp/pc.err"
    finish
fi
printf 'pkg-config --cflags --libs zkl: %s\n' "$flags"
if [[ $flags == *"-I$dest$includedir"* && $flags == *"-L$dest$libdir"* ]]; then ok; else
    bad "pkg-config flags do not point into DESTDIR ($dest): $flags"
fi
read -r -a flagv <<<"$flags"
read -r -a sanv <<<"$san_cflags"   # a sanitizer build's library needs its runtime
if (cd "$tmp" && "${cc[@]}" "${sanv[@]}" -o smoke "$srcdir/tests/install-smoke.c" "${flagv[@]}") \
    >"$tmp/cc.log" 2>&1; then ok; else
    bad "tests/install-smoke.c does not build with those flags:"
    cat "$tmp/cc.log"
    finish
fi

# ---- run it on the installed library
export LD_LIBRARY_PATH=$dest$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if ((shared)) && command -v ldd >/dev/null 2>&1; then
    used=$(ldd "$tmp/smoke" | awk '/libzkl\.so/ {print $3}')
    if [[ $used == "$dest$libdir"/* ]]; then ok; else
        bad "the program would load libzkl from '$used', not from $dest$libdir"
    fi
fi
if "$tmp/smoke" 127.0.0.1:1; then ok; else bad "the installed program failed"; fi

# ---- the installed election demo runs too (its usage error: exit 64)
rc=0
"$dest$bindir/zkl-election-demo" >/dev/null 2>&1 || rc=$?
if ((rc == 64)); then ok; else bad "zkl-election-demo without arguments exited $rc, want 64"; fi

finish

#!/usr/bin/env bash
# tests/check-man.sh - the section-3 man pages in man/ against the public
# headers, which are the source of truth:
#   - every page renders without a warning (groff -man -ww -z, and man -l
#     --warnings=w when man-db is there) and has the usual sections;
#   - every ZKL_EXTERN function of include/zkl/*.h, and every static inline
#     zkl_* function of the header-only adapters (include/zkl/adapters/*.h),
#     has man/NAME.3, a page or a one-line ".so man3/PAGE.3" alias whose
#     target exists; the page names the function under NAME and shows its
#     prototype, exactly as the header declares it, under SYNOPSIS;
#   - every field of an options struct is described on its page, and every
#     code of the error table is listed in zkl_errors(3) with its value and
#     message;
#   - every zkl_*(3) page referred to exists, every page is installed
#     (dist_man3_MANS in man/local.mk), .TH carries the library's version;
#   - the C code of every EXAMPLES section compiles (an example that
#     includes an event loop's header not installed here is skipped).
# Skips (77) without groff, unless CI is set: then it fails.
set -euo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
mandir=$srcdir/man
incdir=$srcdir/include
cc=${CC:-cc}

if ! command -v groff >/dev/null 2>&1; then
    case ${CI:-} in
        '' | false | 0) printf 'SKIP: groff not installed\n'; exit 77 ;;
        *) printf 'FAIL: groff not installed (CI is set: must not skip)\n'; exit 1 ;;
    esac
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zkl-check-man.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    printf 'FAIL: %s\n' "$*"
}

# text PAGE - the page rendered as plain ASCII, one long line per paragraph
# as far as possible (whitespace is normalized by the callers anyway)
text() {
    groff -man -Tascii -P-c -P-b -P-u -P-o -rLL=250n -rcR=1 "$1" 2>/dev/null
}
# squeeze - every run of white space to one space
squeeze() { tr -s ' \t\n' '   '; }
# section TEXTFILE NAME - one section of a rendered page
section() {
    awk -v want="$2" '/^[A-Z][A-Z ]*$/ { on = ($0 == want); next } on' "$1"
}

# ---- pages and aliases
declare -A alias_of=()   # NAME -> PAGE for "NAME.3: .so man3/PAGE.3"
declare -a pages=()
shopt -s nullglob
for f in "$mandir"/*.3; do
    name=${f##*/}
    name=${name%.3}
    first=$(head -n 1 -- "$f")
    if [[ $first == .so* ]]; then
        if [[ $(wc -l <"$f") -eq 1 && $first =~ ^\.so\ man3/([A-Za-z0-9_]+)\.3$ ]]; then
            alias_of[$name]=${BASH_REMATCH[1]}
        else
            bad "$name.3: an alias must be the one line '.so man3/PAGE.3'"
        fi
    else
        pages+=("$name")
    fi
done
((${#pages[@]})) || { bad "no man pages in $mandir"; printf '%d passed, %d failed\n' "$pass" "$fail"; exit 1; }

for name in "${!alias_of[@]}"; do
    target=${alias_of[$name]}
    if [[ ! -f $mandir/$target.3 ]]; then
        bad "$name.3: .so target man3/$target.3 does not exist"
    elif [[ -n ${alias_of[$target]:-} ]]; then
        bad "$name.3: .so target $target.3 is itself an alias"
    else
        ok
    fi
done

# ---- every page renders without warnings, has its sections and version
version=$(sed -n 's/^#define ZKL_VERSION_STRING "\(.*\)"$/\1/p' "$incdir/zkl/version.h")
have_man=0
command -v man >/dev/null 2>&1 && have_man=1
for name in "${pages[@]}"; do
    f=$mandir/$name.3
    if ! groff -man -ww -z "$f" >"$tmp/warn" 2>&1 || [[ -s $tmp/warn ]]; then
        bad "$name.3: groff -man -ww -z says:"
        cat "$tmp/warn"
    else
        ok
    fi
    if ((have_man)); then
        if ! MANWIDTH=80 MANPAGER=cat man -l --warnings=w "$f" >/dev/null 2>"$tmp/warn" ||
            [[ -s $tmp/warn ]]; then
            bad "$name.3: man -l --warnings=w says:"
            cat "$tmp/warn"
        else
            ok
        fi
    fi
    text "$f" >"$tmp/$name.txt"
    for sh in NAME SYNOPSIS DESCRIPTION 'RETURN VALUE' 'THREAD SAFETY' EXAMPLES 'SEE ALSO'; do
        if grep -qx -- "$sh" "$tmp/$name.txt"; then ok; else bad "$name.3: no $sh section"; fi
    done
    th=$(grep -m1 '^\.TH ' "$f" || true)
    if [[ $th == *"\"zkl $version\""* ]]; then ok; else
        bad "$name.3: .TH does not say \"zkl $version\" (include/zkl/version.h): $th"
    fi
    # zkl pages it refers to exist (section 1 belongs to the CLI)
    while read -r ref; do
        if [[ -f $mandir/$ref.3 ]]; then ok; else bad "$name.3: refers to $ref(3), which does not exist"; fi
    done < <(grep -o 'zkl[a-z_]*(3)' "$tmp/$name.txt" | sed 's/(3)$//' | sort -u)
done

# ---- the public API, read from the headers
# One record per function: NAME<TAB>prototype (whitespace squeezed, no
# ZKL_EXTERN).
perl -0777 -ne '
    while (/^ZKL_EXTERN\s+([^;]*?\b(zkl_\w+)\s*\([^;]*\);)/mg) {
        my ($proto, $name) = ($1, $2);
        $proto =~ s/\s+/ /g;
        print "$name\t$proto\n";
    }' "$incdir"/zkl/*.h >"$tmp/functions"
[[ -s $tmp/functions ]] || bad "no ZKL_EXTERN function found in $incdir/zkl/*.h"
# The adapters' functions are static inline (no ZKL_EXTERN): their
# definitions, the page showing them as declarations (no "static inline",
# a ";" for the body).  Their helpers (zkl_uv__ready...) are not API.
perl -0777 -ne '
    while (/^static\s+inline\s+([^;{]*?\b(zkl_\w+)\s*\([^;{]*\))\s*\{/mg) {
        my ($proto, $name) = ($1, $2);
        next if $name =~ /__/;
        $proto =~ s/\s+/ /g;
        print "$name\t$proto;\n";
    }' "$incdir"/zkl/adapters/*.h >"$tmp/adapters"
[[ -s $tmp/adapters ]] || bad "no static inline function found in $incdir/zkl/adapters/*.h"
cat "$tmp/adapters" >>"$tmp/functions"

# page_of NAME - the page that documents NAME (following an alias)
page_of() {
    if [[ -n ${alias_of[$1]:-} ]]; then printf '%s\n' "${alias_of[$1]}"
    elif [[ -f $mandir/$1.3 ]]; then printf '%s\n' "$1"
    else return 1; fi
}

while IFS=$'\t' read -r fn proto; do
    if ! page=$(page_of "$fn"); then
        bad "$fn: no man/$fn.3 (page or .so alias)"
        continue
    fi
    if [[ ! -f $tmp/$page.txt ]]; then
        bad "$fn: its page $page.3 was not rendered"
        continue
    fi
    if section "$tmp/$page.txt" NAME | squeeze | grep -Eq "(^|[ ,])$fn(,|[ ]|$)"; then ok; else
        bad "$page.3: NAME does not list $fn"
    fi
    if section "$tmp/$page.txt" SYNOPSIS | squeeze | grep -Fq -- "$proto"; then ok; else
        bad "$page.3: SYNOPSIS lacks the header's prototype: $proto"
    fi
done <"$tmp/functions"

# ---- options structs: every field is described on the page of its _init
perl -0777 -ne '
    while (/typedef struct (zkl_\w+_opts) \{(.*?)\}/sg) {
        my ($type, $body) = ($1, $2);
        $body =~ s{/\*.*?\*/}{}sg;
        for my $decl (split /;/, $body) {
            next unless $decl =~ /\S/;
            my $field = $decl =~ /\(\s*\*\s*(\w+)\s*\)/ ? $1 : ($decl =~ /(\w+)\s*$/)[0];
            print "${type}_init\t$field\n";
        }
    }' "$incdir"/zkl/*.h >"$tmp/fields"
while IFS=$'\t' read -r init field; do
    if ! page=$(page_of "$init") || [[ ! -f $tmp/$page.txt ]]; then
        bad "$init: no page (needed for its field $field)"
    elif grep -Eq "(^|[^A-Za-z0-9_])$field([^A-Za-z0-9_]|$)" "$tmp/$page.txt"; then
        ok
    else
        bad "$page.3: does not describe the field $field of ${init%_init}_t"
    fi
done <"$tmp/fields"

# ---- every error code, with its value and message
perl -ne 'print "ZKL_$1 ($2) \"$3\"\n" if /^\s*XX\((\w+),\s*(-?\d+),\s*"([^"]*)"\)/' \
    "$incdir/zkl/errors.h" >"$tmp/codes"
[[ -s $tmp/codes ]] || bad "no error code found in $incdir/zkl/errors.h"
if [[ -f $tmp/zkl_errors.txt ]]; then
    squeeze <"$tmp/zkl_errors.txt" >"$tmp/errors.flat"
    while IFS= read -r code; do
        if grep -Fq -- "$code" "$tmp/errors.flat"; then ok; else
            bad "zkl_errors.3: does not list $code"
        fi
    done <"$tmp/codes"
else
    bad "no zkl_errors.3"
fi

# ---- every page is installed, and every installed page exists
mk=$mandir/local.mk
listed=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$mk" |
    sed -n 's/^dist_man3_MANS[[:space:]]*+\{0,1\}=//p' | tr -s ' \t' '\n' | sed -n 's|^man/||p')
for f in "$mandir"/*.3; do
    f=${f##*/}
    if grep -qx -- "$f" <<<"$listed"; then ok; else bad "$f is not in dist_man3_MANS (man/local.mk): not installed"; fi
done
while read -r f; do
    [[ -z $f || -f $mandir/$f ]] || bad "man/local.mk installs man/$f, which does not exist"
done <<<"$listed"

# ---- the examples compile
read -r -a ccw <<<"$cc"
# the event loops' flags, for the adapters' examples (none when absent)
loopflags=()
if command -v pkg-config >/dev/null 2>&1; then
    for pc in libuv libevent; do
        read -r -a more <<<"$(pkg-config --cflags "$pc" 2>/dev/null || true)"
        loopflags+=(${more[@]+"${more[@]}"})
    done
fi
# has_header H - the compiler finds <H>
has_header() {
    printf '#include <%s>\n' "$1" |
        "${ccw[@]}" ${loopflags[@]+"${loopflags[@]}"} -fsyntax-only -x c - >/dev/null 2>&1
}
for name in "${pages[@]}"; do
    # each .EX/.EE block of the EXAMPLES section, rendered on its own
    awk -v dir="$tmp" -v page="$name" '
        /^\.SH / { inex = ($0 ~ /^\.SH "?EXAMPLES"?$/); next }
        inex && /^\.EX/ { n++; f = dir "/" page "-ex" n ".roff"; print ".nf" > f; inblk = 1; next }
        inblk && /^\.EE/ { print ".fi" > f; close(f); inblk = 0; next }
        inblk { print > f }
    ' "$mandir/$name.3"
    for roff in "$tmp/$name"-ex*.roff; do
        src=${roff%.roff}.c
        groff -Tascii -P-c -P-b -P-u -P-o "$roff" 2>/dev/null | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$src"
        missing=
        for h in uv.h event2/event.h ev.h; do
            if grep -qx "#include <$h>" "$src" && ! has_header "$h"; then missing=$h; fi
        done
        if [[ -n $missing ]]; then
            printf 'SKIP: %s.3: an example needs <%s>, not installed\n' "$name" "$missing"
            continue
        fi
        if "${ccw[@]}" -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror \
            -I"$incdir" ${loopflags[@]+"${loopflags[@]}"} -fsyntax-only -x c "$src" >"$tmp/cc.out" 2>&1; then
            ok
        else
            bad "$name.3: an example does not compile (${roff##*/}):"
            cat -n "$src"
            cat "$tmp/cc.out"
        fi
    done
done

printf '%d passed, %d failed\n' "$pass" "$fail"
((fail == 0))

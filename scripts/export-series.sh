#!/bin/bash
# Export the project as an upstream-style patch series against QEMU.
#
#   scripts/export-series.sh [--check] [OUTDIR]
#
# Each line of patches/series becomes one commit: the patch's message and
# hook edits plus the overlay files the line names, as real files.  The
# result is written with `git format-patch` to OUTDIR (default
# build/series), against the pristine base (tag rvpa-base of qemu/src).
# With --check, QEMU's scripts/checkpatch.pl runs on every patch and any
# error fails the run.  Every overlay file must belong to exactly one line.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
. "$RVPA_ROOT/scripts/series-lib.sh"

check=0
out=
while [ $# -gt 0 ]; do
    case "$1" in
    --check) check=1; shift ;;
    -*) die "unknown option '$1'" ;;
    *) out=$1; shift ;;
    esac
done
out=${out:-$RVPA_BUILD/series}

src=$RVPA_QEMU/src
git -C "$src" rev-parse -q --verify rvpa-base >/dev/null 2>&1 ||
    die "no QEMU tree in $src: run scripts/fetch-qemu.sh"
gitdir=$(git -C "$src" rev-parse --absolute-git-dir)

# Every overlay file in exactly one series line.
declare -A owner=()
while read -r patch files; do
    for f in $files; do
        [ -z "${owner[$f]+x}" ] ||
            die "patches/series: $f is listed by both ${owner[$f]} and $patch"
        owner[$f]=$patch
    done
done < <(series_entries)
missing=0
while read -r f; do
    if [ -z "${owner[$f]+x}" ]; then
        echo "export-series: $f is not listed in patches/series" >&2
        missing=1
    fi
done < <(overlay_files)
[ $missing = 0 ] || die "add the files above to a line of patches/series"

head=$(build_series_chain "$gitdir" 1)
rm -rf "$out"
mkdir -p "$out"
git -C "$src" format-patch -q --no-signature -o "$out" rvpa-base.."$head"
n=$(find "$out" -name '*.patch' | wc -l)
info "$n patches in $out (base: QEMU $(cat "$src/VERSION"), tag rvpa-base)"

[ $check = 1 ] || exit 0
errors=0
for p in "$out"/*.patch; do
    # checkpatch.pl finds the QEMU tree from the current directory; its
    # exit status is not needed, the "total:" line is the verdict.
    report=$(cd "$src" && perl scripts/checkpatch.pl "$p" 2>&1) || true
    e=$(echo "$report" | sed -n 's/^total: \([0-9]*\) errors.*/\1/p')
    echo "$(basename "$p"): $(echo "$report" | grep '^total:' || echo 'no verdict')"
    if [ "${e:-1}" != 0 ]; then
        echo "$report"
        errors=$((errors + ${e:-1}))
    fi
done
[ $errors = 0 ] || die "checkpatch.pl found $errors errors"
info "checkpatch.pl: 0 errors in $n patches"

#!/bin/bash
# Build every commit of the exported series in turn, so that the series
# is bisectable as QEMU asks of a submission: the commits
# scripts/export-series.sh writes, checked out one after the other in a
# worktree of qemu/src and built incrementally (ccache) with the
# project's configuration (scripts/build-qemu.sh).
#
#   scripts/build-series.sh [DIR]       (default build/series-build)
#
# The test 'series-builds' of the series suite runs it.  Logs: DIR/*.log.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
. "$RVPA_ROOT/scripts/series-lib.sh"

dir=${1:-$RVPA_BUILD/series-build}
src=$RVPA_QEMU/src
git -C "$src" rev-parse -q --verify rvpa-base >/dev/null 2>&1 ||
    die "no QEMU tree in $src: run scripts/fetch-qemu.sh"
gitdir=$(git -C "$src" rev-parse --absolute-git-dir)
head=$(build_series_chain "$gitdir" 1)

wt=$dir/src
mkdir -p "$dir"
git --git-dir="$gitdir" worktree prune
if [ ! -e "$wt/.git" ]; then
    rm -rf "$wt"
    git --git-dir="$gitdir" worktree add -q --detach "$wt" rvpa-base
fi
# What build-qemu.sh expects beside the sources: the tree's marker and
# the build-only device configuration (never part of the series).
cp "$src/.rvpa-source" "$wt/"
for pair in "${BUILD_ONLY_OVERLAY[@]}"; do
    ln -sfn "$RVPA_ROOT/${pair%%:*}" "$wt/${pair#*:}"
done

n=0
for commit in $(git --git-dir="$gitdir" rev-list --reverse \
                rvpa-base.."$head"); do
    n=$((n + 1))
    subject=$(git --git-dir="$gitdir" log -1 --format=%s "$commit")
    git -C "$wt" checkout -q --detach "$commit"
    info "patch $n: $subject"
    if ! RVPA_QEMU_SRC=$wt RVPA_QEMU_BUILD=$dir/build \
         "$RVPA_ROOT/scripts/build-qemu.sh" > "$dir/patch-$n.log" 2>&1; then
        tail -30 "$dir/patch-$n.log" >&2
        die "patch $n of the series does not build: $subject" \
            "(log: $dir/patch-$n.log)"
    fi
done
info "each of the $n patches of the series builds"

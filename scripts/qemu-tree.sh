#!/bin/bash
# Bring qemu/src to the state of the project: rvpa-base + patches/series,
# with the overlay files linked in.
#
#   scripts/qemu-tree.sh           sync (idempotent, only changed files are
#                                  rewritten so rebuilds stay incremental)
#   scripts/qemu-tree.sh --force   also discard edits made in place
#
# Edits belong in the project, not in qemu/src: a file of qemu/src that
# differs from what the series says stops the sync with its name (refresh
# the patch with `git -C qemu/src diff FILE`, or pass --force to drop it).
set -euo pipefail

. "$(dirname "$0")/lib.sh"
. "$RVPA_ROOT/scripts/series-lib.sh"

force=0
case "${1:-}" in
--force) force=1 ;;
"") ;;
*) die "unknown argument '$1'" ;;
esac

src=$RVPA_QEMU/src
git -C "$src" rev-parse -q --verify rvpa-base >/dev/null 2>&1 ||
    die "no QEMU tree in $src: run scripts/fetch-qemu.sh"
gitdir=$(git -C "$src" rev-parse --absolute-git-dir)
state=$gitdir/rvpa-applied

# 1. Edits in place are never silently kept or lost.
dirty=$(git -C "$src" status --porcelain --untracked-files=no)
if [ -n "$dirty" ]; then
    if [ $force = 0 ]; then
        die "files of $src were edited in place:"$'\n'"$dirty"$'\n'"Move the" \
            "edits into patches/ (git -C $src diff > ...) or rerun with --force" \
            "to discard them."
    fi
    info "discarding edits in place:"$'\n'"$dirty"
    git -C "$src" checkout -q -f HEAD
fi

# 2. Patches: rebuild the commit chain only when the series changed.
key=$(series_key)
head=$(git -C "$src" rev-parse HEAD)
if [ "$(sed -n 1p "$state" 2>/dev/null)" != "$key" ] ||
   [ "$(sed -n 2p "$state" 2>/dev/null)" != "$head" ]; then
    commit=$(build_series_chain "$gitdir" 0)
    # Only files that differ between HEAD and the new chain are written.
    git -C "$src" checkout -q -B rvpa "$commit"
    printf '%s\n%s\n' "$key" "$commit" > "$state"
    info "applied $(series_entries | wc -l) series entries to $src"
fi

# 3. Overlay: one symlink per project file, stale links removed.
links=$gitdir/rvpa-overlay
declare -A want=()
while read -r f; do
    want[$(overlay_dest "$f")]=$RVPA_ROOT/$f
done < <(overlay_files)
for pair in "${BUILD_ONLY_OVERLAY[@]}"; do
    want[${pair#*:}]=$RVPA_ROOT/${pair%%:*}
done
if [ -f "$links" ]; then
    while read -r dest; do
        if [ -z "${want[$dest]+x}" ] && [ -L "$src/$dest" ]; then
            rm -f "$src/$dest"
        fi
    done < "$links"
fi
for dest in "${!want[@]}"; do
    if [ -e "$src/$dest" ] && [ ! -L "$src/$dest" ]; then
        die "overlay file ${want[$dest]#"$RVPA_ROOT"/} would replace QEMU's" \
            "own $dest: edit QEMU files through patches/"
    fi
    if [ "$(readlink "$src/$dest" 2>/dev/null)" != "${want[$dest]}" ]; then
        mkdir -p "$(dirname "$src/$dest")"
        ln -sfn "${want[$dest]}" "$src/$dest"
    fi
done
printf '%s\n' "${!want[@]}" | LC_ALL=C sort > "$links"
# Keep the links out of `git status` in qemu/src.
{ echo "/.rvpa-*"; sed 's|^|/|' "$links"; } > "$gitdir/info/exclude"

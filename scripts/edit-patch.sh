#!/bin/bash
# Turn edits made in qemu/src into a patch of the series.
#
#   scripts/edit-patch.sh new NAME "Subject line"   new last patch from the
#                                                   edits (message to edit)
#   scripts/edit-patch.sh amend                     fold the edits into the
#                                                   last patch of the series
#
# Edit QEMU's own files in qemu/src, then run one of these: the edits move
# into patches/ and qemu/src is clean again (scripts/qemu-tree.sh refuses
# to build over edits that are not in a patch).
set -euo pipefail

. "$(dirname "$0")/lib.sh"
. "$RVPA_ROOT/scripts/series-lib.sh"

src=$RVPA_QEMU/src
cd "$src"
[ -n "$(git status --porcelain --untracked-files=no)" ] ||
    die "no edits in $src to turn into a patch"
# New QEMU files belong in the project's folders, not in patches.
untracked=$(git ls-files --others --exclude-standard)
[ -z "$untracked" ] || die "new files in $src: move them to the project's" \
    "overlay folders (see docs/development.rst):"$'\n'"$untracked"

case "${1:-}" in
new)
    name=${2:?name of the patch}
    subject=${3:?subject line}
    n=$(series_entries | wc -l)
    file=$(printf '%04d-%s.patch' $((n + 1)) "$name")
    {
        echo "From: rvpa developers <rvpa@example.org>"
        echo "Date: $(date -R)"
        echo "Subject: [PATCH] $subject"
        echo
        echo "Say what this changes and why."
        echo
        echo "Signed-off-by: rvpa developers <rvpa@example.org>"
        echo "---"
        git diff HEAD
    } > "$RVPA_ROOT/patches/$file"
    echo "$file" >> "$SERIES_FILE"
    info "wrote patches/$file and added it to patches/series; edit its message"
    ;;
amend)
    last=$(series_entries | tail -1 | cut -d' ' -f1)
    [ -n "$last" ] || die "the series is empty: use 'new'"
    pf=$RVPA_ROOT/patches/$last
    # The last commit of qemu/src is the last patch: diff from its parent.
    { sed '/^---$/q' "$pf"; git diff HEAD~1 -- . ; } > "$pf.new"
    mv "$pf.new" "$pf"
    info "folded the edits into patches/$last"
    ;;
*)
    die "usage: $0 new NAME \"Subject\" | amend"
    ;;
esac
git checkout -q -f HEAD
"$RVPA_ROOT/scripts/qemu-tree.sh"

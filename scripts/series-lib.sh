# The series: patches/series, the patches it lists and the overlay files.
# Sourced by qemu-tree.sh and export-series.sh (after lib.sh).
#
# patches/series has one line per commit of the series:
#
#     <patch file> [<overlay file>...]
#
# The patch file (in patches/) is a `git format-patch` mail: its message is
# the commit message, its diff the hook edits to existing QEMU files (it may
# have no diff).  The overlay files are the project's new files that the
# same commit adds to QEMU; where they land is given by overlay_dest().

SERIES_FILE=$RVPA_ROOT/patches/series

# Project folders whose files are new QEMU files, and where they go.
OVERLAY_DIRS=(
    "target-riscv:target/riscv"
    "hw-riscv-trace:hw/riscv"
    "tests-qtest:tests/qtest"
    "docs/qemu:docs"
)
# Files that only configure the project's build: linked into the tree but
# never part of the exported series.
BUILD_ONLY_OVERLAY=(
    "scripts/qemu-config/rvpa-minimal.mak:configs/devices/riscv64-softmmu/rvpa-minimal.mak"
)

# Files of the overlay folders that QEMU does not use: the codec library's
# decoder side (decoder, deframer, per-source demultiplexer), which only
# the host tools build.  Never linked, never exported.
HOST_ONLY_FILES=(
    "hw-riscv-trace/codec/etrace-decoder.c"
    "hw-riscv-trace/codec/include/etrace-decoder.h"
    "hw-riscv-trace/codec/include/etrace-dec-report.h"
    "hw-riscv-trace/codec/etrace-dec-data.c"
    "hw-riscv-trace/codec/include/etrace-dec-data.h"
    "hw-riscv-trace/codec/etrace-deframe.c"
    "hw-riscv-trace/codec/include/etrace-deframe.h"
    "hw-riscv-trace/codec/etrace-demux.c"
    "hw-riscv-trace/codec/include/etrace-demux.h"
    "hw-riscv-trace/codec/ntrace-decoder.c"
    "hw-riscv-trace/codec/include/ntrace-decoder.h"
)

# overlay_dest PROJECT-RELATIVE-PATH: the path inside QEMU, or nothing.
overlay_dest() {
    local map
    for map in "${OVERLAY_DIRS[@]}"; do
        case "$1" in
        "${map%%:*}"/*) echo "${map#*:}/${1#"${map%%:*}"/}"; return ;;
        esac
    done
}

# overlay_files: every project file that belongs in the QEMU tree.
overlay_files() {
    local map
    for map in "${OVERLAY_DIRS[@]}"; do
        [ -d "$RVPA_ROOT/${map%%:*}" ] || continue
        (cd "$RVPA_ROOT" && find "${map%%:*}" -type f ! -name README.md \
             ! -name '*~' ! -name '.*' | LC_ALL=C sort)
    done | grep -vxF "$(printf '%s\n' "${HOST_ONLY_FILES[@]}")"
}

# series_entries: "patch overlay..." lines of patches/series.
series_entries() {
    [ -f "$SERIES_FILE" ] || return 0
    sed -e 's/#.*//' -e 's/[[:space:]]\+/ /g' -e 's/^ //' -e 's/ $//' \
        "$SERIES_FILE" | grep -v '^$' || true
}

# series_key: changes whenever the series, a patch in it or the way the
# chain is built changes.
series_key() {
    {
        cat "${BASH_SOURCE[0]}"
        git -C "$RVPA_QEMU/src" rev-parse rvpa-base
        cat "$SERIES_FILE" 2>/dev/null || true
        series_entries | while read -r patch _; do
            cat "$RVPA_ROOT/patches/$patch" 2>/dev/null || echo "missing $patch"
        done
    } | sha256sum | cut -d' ' -f1
}

# build_series_chain GIT_DIR WITH_OVERLAY: commit the series on top of
# rvpa-base without touching any work tree (a private index is used) and
# print the last commit.  WITH_OVERLAY=1 also adds each entry's overlay
# files to its commit (the exported series); 0 leaves them to the links.
build_series_chain() {
    local gitdir=$1 with_overlay=$2
    local tmp parent tree patch overlay f dest blob err
    tmp=$(mktemp -d)
    # shellcheck disable=SC2064
    trap "rm -rf '$tmp'" RETURN
    local -x GIT_INDEX_FILE=$tmp/index GIT_DIR=$gitdir
    git read-tree rvpa-base
    local -a overlay_dests=()
    if [ "$with_overlay" = 0 ]; then
        while read -r f; do
            overlay_dests+=("$(overlay_dest "$f")")
        done < <(overlay_files)
    fi
    parent=$(git rev-parse rvpa-base^{commit})
    while read -r patch overlay; do
        local pf=$RVPA_ROOT/patches/$patch
        [ -f "$pf" ] || die "patches/series names $patch, which is not in patches/"
        git mailinfo -b "$tmp/msg" "$tmp/diff" < "$pf" > "$tmp/info" ||
            die "patches/$patch is not a git format-patch mail"
        local subject author email date
        subject=$(sed -n 's/^Subject: //p' "$tmp/info")
        author=$(sed -n 's/^Author: //p' "$tmp/info")
        email=$(sed -n 's/^Email: //p' "$tmp/info")
        date=$(sed -n 's/^Date: //p' "$tmp/info")
        [ -n "$subject" ] || die "patches/$patch has no Subject: header"
        if [ -s "$tmp/diff" ]; then
            if ! err=$(git apply --cached "$tmp/diff" 2>&1); then
                local file
                file=$(echo "$err" | sed -n \
                    -e 's/^error: patch failed: \([^:]*\):.*/\1/p' \
                    -e 's/^error: \([^:]*\): does not exist in index/\1/p' \
                    -e 's/^error: \([^:]*\): already exists in index/\1/p' | head -1)
                die "patch patches/$patch does not apply to ${file:-the QEMU tree}" \
                    "(QEMU base $(git describe --always rvpa-base)):" $'\n'"$err"
            fi
        fi
        if [ "$with_overlay" = 0 ]; then
            # A patch may create a file that a project file replaces later
            # (code motion first, then the change): the link is what the
            # tree holds, so the chain never does.
            git update-index -q --force-remove -- "${overlay_dests[@]}"
        else
            for f in $overlay; do
                dest=$(overlay_dest "$f")
                [ -n "$dest" ] || die "patches/series: $f is not in an overlay folder"
                [ -f "$RVPA_ROOT/$f" ] || die "patches/series: no such file $f"
                blob=$(git hash-object -w "$RVPA_ROOT/$f")
                git update-index --add --cacheinfo "100644,$blob,$dest"
            done
        fi
        tree=$(git write-tree)
        { echo "$subject"; echo; cat "$tmp/msg"; } > "$tmp/message"
        parent=$(GIT_AUTHOR_NAME=${author:-rvpa} GIT_AUTHOR_EMAIL=${email:-rvpa@localhost} \
                 GIT_AUTHOR_DATE=${date:-} GIT_COMMITTER_NAME=rvpa \
                 GIT_COMMITTER_EMAIL=rvpa@localhost \
                 git commit-tree "$tree" -p "$parent" -F "$tmp/message")
    done < <(series_entries)
    echo "$parent"
}

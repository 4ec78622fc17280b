# Shared settings of the project's shell scripts (sourced, not run).

RVPA_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The QEMU source tree (qemu/src) and build (qemu/build) of this checkout.
RVPA_QEMU=${RVPA_QEMU:-$RVPA_ROOT/qemu}
# Downloads shared by every checkout of the project on this machine.
RVPA_CACHE=${RVPA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rvpa}
# The top-level meson build directory.
RVPA_BUILD=${RVPA_BUILD:-$RVPA_ROOT/build}

# ccache: let every clone of the project share hits (paths are relative to
# the checkout, and the build directory's name is not hashed).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$RVPA_ROOT}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}

# QEMU's configure needs Debian's python (it imports Debian's meson).
RVPA_PYTHON=${RVPA_PYTHON:-/usr/bin/python3}

die() {
    echo "${0##*/}: error: $*" >&2
    exit 1
}

info() {
    echo "${0##*/}: $*"
}

# For the interop scripts: the folder PATH ("." for all) of REPO, a
# checkout or a bare git directory of another project, copied into DEST
# (made if missing): as much of it as the scripts read.  Fails unless
# the folder holds the file MARKER, checked before a checkout is copied.
#   copy_repo_folder REPO PATH MARKER DEST
copy_repo_folder() {
    local repo=$1 path=$2 marker=$3 dest=$4

    mkdir -p "$dest"
    if [ -f "$repo/$path/$marker" ]; then
        cp -r "$repo/$path/." "$dest"
    elif [ -f "$repo/HEAD" ] && [ "$path" = . ]; then
        git --git-dir="$repo" archive HEAD | tar -x -C "$dest"
    elif [ -f "$repo/HEAD" ]; then
        git --git-dir="$repo" archive "HEAD:$path" | tar -x -C "$dest"
    fi 2>/dev/null
    [ -f "$dest/$marker" ]
}

# For the N-trace scripts: NexRv, the N-trace task group's reference
# code, built as it is from REPO (a checkout of riscv-non-isa/
# tg-nexus-trace or its bare git directory) into DIR/NexRv; its sources
# go to DIR/nexrv, nothing of them into the project.
#   build_nexrv REPO DIR
build_nexrv() {
    local repo=$1 dir=$2 f

    mkdir "$dir/nexrv"
    if [ -d "$repo/refcode/c" ]; then
        cp "$repo"/refcode/c/*.[ch] "$dir/nexrv/"
    else
        for f in $(git --git-dir="$repo" ls-tree --name-only HEAD \
                       refcode/c/ | grep '\.[ch]$'); do
            git --git-dir="$repo" show "HEAD:$f" \
                > "$dir/nexrv/$(basename "$f")"
        done
    fi
    gcc -O2 -w -o "$dir/NexRv" "$dir"/nexrv/*.c || die "NexRv does not build"
}

# For the interop scripts: one e2e guest run (tests-e2e/run-e2e.py, which
# checks the decoded trace against QEMU's execlog), its files kept in DIR
# for a reference decoder, its output in LOG.  APPEND is the guest's
# command line with '_' for spaces; more run-e2e.py arguments may follow.
#   interop_e2e DIR LOG ELF XLEN APPEND [ARG...]
interop_e2e() {
    local dir=$1 log=$2 elf=$3 xlen=$4 append=$5

    shift 5
    python3 "$RVPA_ROOT/tests-e2e/run-e2e.py" \
        --qemu "$RVPA_QEMU/build/qemu-system-riscv64" \
        --plugin "$RVPA_QEMU/build/contrib/plugins/libexeclog.so" \
        --decoder "$RVPA_BUILD/rvtrace-decode" --elf "$elf" \
        --cpu "rv$xlen" --append "${append//_/ }" --workdir "$dir" --keep \
        --compare-arg=--segments=1 "$@" > "$log" 2>&1
}

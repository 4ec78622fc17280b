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

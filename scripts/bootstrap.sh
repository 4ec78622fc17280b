#!/bin/bash
# The main job, on a fresh Debian 12 machine, as root: install every
# dependency from Debian's archive, fetch and patch QEMU 10.0, build QEMU
# and everything else, and run the demo.  Idempotent and incremental.
#
#   scripts/bootstrap.sh [--tarball qemu-10.0.x.tar.xz] [--no-demo]
#
# --no-demo (scripts/run-tests.sh) builds, instead of running the demo,
# the QEMU with ThreadSanitizer that the test 'tsan' runs.
set -euo pipefail

. "$(dirname "$0")/lib.sh"

fetch_args=()
demo=1
while [ $# -gt 0 ]; do
    case "$1" in
    --tarball) fetch_args=(--tarball "${2:?--tarball needs a file}"); shift 2 ;;
    --no-demo) demo=0; shift ;;
    *) die "unknown argument '$1'" ;;
    esac
done

step() {
    local t0=$SECONDS
    info "== $1"
    shift
    "$@"
    info "   done in $((SECONDS - t0)) s"
}

cd "$RVPA_ROOT"
step "dependencies (Debian packages)" "$RVPA_ROOT/scripts/install-deps.sh"
step "QEMU source" "$RVPA_ROOT/scripts/fetch-qemu.sh" "${fetch_args[@]}"
step "series applied to qemu/src" "$RVPA_ROOT/scripts/qemu-tree.sh"
if [ ! -f "$RVPA_BUILD/build.ninja" ]; then
    step "meson setup $RVPA_BUILD" meson setup "$RVPA_BUILD" >/dev/null
fi
step "build QEMU (qemu/build) and the project (build)" \
    ninja -C "$RVPA_BUILD" qemu.stamp all
if [ $demo = 1 ]; then
    "$RVPA_ROOT/scripts/demo.sh"
else
    # for the test 'tsan' (scripts/test-tsan.sh), built before the tests run
    step "QEMU with ThreadSanitizer (build/qemu-tsan)" \
        "$RVPA_ROOT/scripts/build-qemu.sh" --tsan
fi

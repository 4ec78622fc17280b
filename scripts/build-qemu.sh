#!/bin/bash
# Configure (once) and build the patched QEMU in qemu/build.
#
#   scripts/build-qemu.sh [--tsan] [ninja targets...]
#
# riscv64-softmmu only, the virt board's devices only, TCG plugins on,
# ccache when installed.  Reconfigures when the options below change.
# RVPA_QEMU_SRC and RVPA_QEMU_BUILD name another tree and build directory
# (scripts/build-series.sh builds each commit of the series so).  --tsan
# builds with ThreadSanitizer, by default in build/qemu-tsan, and without
# -Werror (GCC warns that TSan does not see atomic_thread_fence), for
# scripts/test-tsan.sh.
set -euo pipefail

. "$(dirname "$0")/lib.sh"

tsan=false
if [ "${1:-}" = --tsan ]; then
    tsan=true
    shift
fi
src=${RVPA_QEMU_SRC:-$RVPA_QEMU/src}
if $tsan; then
    build=${RVPA_QEMU_BUILD:-$RVPA_BUILD/qemu-tsan}
else
    build=${RVPA_QEMU_BUILD:-$RVPA_QEMU/build}
fi
[ -f "$src/.rvpa-source" ] || die "no QEMU tree in $src: run scripts/fetch-qemu.sh"
[ -L "$src/configs/devices/riscv64-softmmu/rvpa-minimal.mak" ] ||
    die "the series is not applied to $src: run scripts/qemu-tree.sh"

configure_opts=(
    --target-list=riscv64-softmmu
    --without-default-devices --with-devices-riscv64=rvpa-minimal
    --without-default-features
    --enable-tcg --enable-plugins --enable-fdt=system
    --disable-tools --disable-docs --disable-install-blobs
    --disable-download --disable-containers --disable-rust
    --enable-werror
    --python="$RVPA_PYTHON"
)
if $tsan; then
    configure_opts=("${configure_opts[@]/--enable-werror/--enable-tsan}")
fi
want="${configure_opts[*]}"
# QEMU's configure names the compiler, so meson never adds ccache itself:
# Debian's ccache masquerade directory in PATH makes cc ccache.
if [ -d /usr/lib/ccache ] && [ -z "${RVPA_NO_CCACHE:-}" ]; then
    export PATH=/usr/lib/ccache:$PATH
    want="$want (ccache)"
fi

if [ ! -f "$build/build.ninja" ] || [ "$(cat "$build/.rvpa-configure" 2>/dev/null)" != "$want" ]; then
    rm -rf "$build"
    mkdir -p "$build"
    info "configuring QEMU in $build"
    (cd "$build" && "$src/configure" "${configure_opts[@]}") > "$build/configure.log" 2>&1 || {
        tail -30 "$build/configure.log" >&2
        die "QEMU configure failed; full log in $build/configure.log"
    }
    echo "$want" > "$build/.rvpa-configure"
fi

ninja -C "$build" "${@:-qemu-system-riscv64}" ||
    die "QEMU build failed (ninja -C $build)"

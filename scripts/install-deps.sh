#!/bin/bash
# Install every build and test dependency from Debian's archive.
#
# Debian 12 (bookworm) packages, meson and python3-pycotap from
# bookworm-backports, and a deb-src entry for trixie (QEMU 10.0 source
# only: no trixie binary package is ever installed).
#
# Idempotent: re-running it only installs what is missing.
set -euo pipefail

die() { echo "install-deps: error: $*" >&2; exit 1; }

[ -r /etc/debian_version ] || die "not a Debian system; see README (Without Debian)"

SRC_LIST=/etc/apt/sources.list.d/rvpa-qemu.sources
PIN=/etc/apt/preferences.d/rvpa-no-trixie-binaries
want_sources() {
    cat <<'EOS'
# Added by rvpa scripts/install-deps.sh
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

# QEMU 10.0 source package only (apt-get source); no trixie binaries.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
}

updated=0
cmp -s <(want_sources) "$SRC_LIST" 2>/dev/null || updated=1
[ -f "$PIN" ] || updated=1

PKGS=(
    build-essential pkg-config ninja-build ccache git dpkg-dev xz-utils
    python3 python3-venv python3-setuptools
    libglib2.0-dev libpixman-1-dev libfdt-dev zlib1g-dev
    gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf
    device-tree-compiler
    # scripts/fuzz-decoder.sh (libFuzzer) and scripts/bench-decoder.sh
    clang libclang-rt-14-dev time
    # --insns of scripts/bench-codec.sh and scripts/bench-trace.sh
    valgrind
    # scripts/test-sanitizers.sh (gcc's -fsanitize=address,undefined)
    libasan8 libubsan1
    # tests-scripts/test-docs.py (the rst in docs/ parses cleanly)
    python3-docutils
    # scripts/linux-perf.sh (the guest's initramfs)
    cpio
    # scripts/bench.sh (its plot)
    gnuplot-nox
)
BPO_PKGS=(meson python3-pycotap)

missing=()
for p in "${PKGS[@]}" "${BPO_PKGS[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' \
        || missing+=("$p")
done
# meson must be >= 1.5 (QEMU 10.0 requires it); bookworm has 1.0.
if command -v meson >/dev/null && \
   ! dpkg --compare-versions "$(meson --version)" ge 1.5; then
    missing+=(meson)
fi
# The trixie source index must be present for fetch-qemu.sh.
if [ ! -d /var/lib/apt/lists ] || \
   ! ls /var/lib/apt/lists/*trixie*Sources* >/dev/null 2>&1; then
    updated=1
fi

if [ ${#missing[@]} -eq 0 ] && [ $updated = 0 ]; then
    echo "install-deps: all dependencies present"
    exit 0
fi
[ "$(id -u)" = 0 ] || die "run as root: missing ${missing[*]:-apt sources}"

want_sources > "$SRC_LIST"
# Trixie binaries must never be picked: pin them out in case an admin
# adds a binary entry for trixie.
printf 'Package: *\nPin: release n=trixie\nPin-Priority: -1\n' > "$PIN"

export DEBIAN_FRONTEND=noninteractive
apt-get update -q || die "apt-get update failed (no network to Debian's archive?)"
if [ ${#missing[@]} -gt 0 ]; then
    apt-get install -y -q --no-install-recommends "${PKGS[@]}" \
        || die "apt-get install failed"
    apt-get install -y -q --no-install-recommends -t bookworm-backports \
        "${BPO_PKGS[@]}" || die "apt-get install from bookworm-backports failed"
fi
dpkg --compare-versions "$(meson --version)" ge 1.5 \
    || die "meson $(meson --version) is older than 1.5"
echo "install-deps: done"

#!/bin/bash
# Bring the patched QEMU up to date: sync qemu/src with the project
# (scripts/qemu-tree.sh) and build the given ninja targets incrementally.
# Called by the top-level meson build before any test that runs QEMU.
#
#   scripts/qemu-update.sh STAMP [ninja targets...]
set -euo pipefail

. "$(dirname "$0")/lib.sh"

stamp=$1
shift
"$RVPA_ROOT/scripts/qemu-tree.sh"
"$RVPA_ROOT/scripts/build-qemu.sh" "$@"
touch "$stamp"

#!/bin/sh
# Run an S-mode payload under Debian's OpenSBI (fw_dynamic, trixie's
# opensbi package, fetched and extracted by scripts/fetch-trixie.sh);
# the payload's exit through the virt test finisher is the verdict.
#
#   run-sbi.sh QEMU ELF CPU XLEN
set -eu
qemu=$1 elf=$2 cpu=$3 xlen=$4
root=$(cd "$(dirname "$0")/.." && pwd)
opensbi=$("$root/scripts/fetch-trixie.sh" opensbi)
case $xlen in
64) fw=$opensbi/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin ;;
32) fw=$opensbi/usr/lib/riscv32-linux-gnu/opensbi/generic/fw_dynamic.bin ;;
esac
exec "$root/tests-tcg/run-guest.sh" "$qemu" "$elf" "$cpu" -- -bios "$fw"

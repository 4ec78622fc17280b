#!/bin/bash
# The demo: the bundled guest program on the built QEMU, showing what the
# CPU offers.  Run scripts/bootstrap.sh first.
set -euo pipefail

. "$(dirname "$0")/lib.sh"

qemu=$RVPA_QEMU/build/qemu-system-riscv64
elf=$RVPA_BUILD/tests-tcg/demo-rv64.elf
[ -x "$qemu" ] && [ -f "$elf" ] || die "nothing built yet: run scripts/bootstrap.sh"

cpu=rv64,h=on,sscofpmf=on,ctr=on
echo "\$ qemu-system-riscv64 -M virt,rvtrace=on -bios none -cpu $cpu -kernel demo-rv64.elf"
"$RVPA_ROOT/tests-tcg/run-guest.sh" "$qemu" "$elf" "$cpu" -- -machine rvtrace=on

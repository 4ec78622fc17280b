#!/bin/sh
# Run one bare-metal guest test on the virt machine; the exit status of
# QEMU (the virt test finisher) is the verdict.
#
#   run-guest.sh QEMU ELF CPU [--expect-fail TEXT] [-- QEMU-ARGS...]
#
# --expect-fail inverts it: the guest must fail and print TEXT, which is how
# the suite checks that a failing check fails the run and is named.
set -u
qemu=$1 elf=$2 cpu=$3
shift 3
expect=
if [ "${1:-}" = --expect-fail ]; then
    expect=$2
    shift 2
fi
[ "${1:-}" = -- ] && shift

out=$("$qemu" -M virt -bios none -display none -monitor none -serial stdio \
      -cpu "$cpu" -kernel "$elf" "$@" 2>&1)
status=$?
printf '%s\n' "$out"
if [ -z "$expect" ]; then
    exit $status
fi
if [ $status = 0 ]; then
    echo "run-guest: expected the guest to fail, it passed"
    exit 1
fi
case "$out" in
*"$expect"*) echo "run-guest: failed as expected, naming: $expect"; exit 0 ;;
esac
echo "run-guest: the guest failed (status $status) without printing: $expect"
exit 1

#!/bin/sh
# Build one guest test outside meson and run it: for the edit-run loop
# while writing a test.  meson test builds and runs the registered ones.
#
#   tests-tcg/run-one.sh SRC.c XLEN CPU-OPTIONS [-- QEMU-ARGS...]
#   e.g. tests-tcg/run-one.sh tests-tcg/ctr/ctr_fields.c 64 ctr=on,h=on
# EXTRA_SRC adds sources (e.g. hw-riscv-trace/codec/etrace-packet.c).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
src=$1 xlen=$2 opts=$3
shift 3
case $xlen in
64) march=rv64imac abi=lp64 ;;
32) march=rv32imac abi=ilp32 ;;
*) echo "run-one.sh: XLEN is 64 or 32" >&2; exit 2 ;;
esac
cc=riscv64-unknown-elf-gcc
lib=$root/tests-tcg/lib
elf=${TMPDIR:-/tmp}/run-one-$(basename "$src" .c)-rv$xlen.elf
$cc -march=${march}_zicsr_zifencei -mabi=$abi -O2 -g -ffreestanding \
    -nostdlib -nostartfiles -static -mcmodel=medany -Wall -Wextra -Werror \
    -I"$lib" -I"$lib/shim" -I"$root/hw-riscv-trace/codec/include" \
    -I"$root/target-riscv" -idirafter "$root/tools/host-shim" \
    -I"$(dirname "$src")" \
    -T "$lib/link.ld" \
    -Wl,--no-warn-rwx-segments -fmacro-prefix-map="$root/=" \
    "$lib/crt0.S" "$lib/fdt.c" "$lib/io.c" "$lib/trap.c" "$src" ${EXTRA_SRC:-} \
    "$($cc -march=$march -mabi=$abi -print-libgcc-file-name)" -o "$elf"
cpu=rv$xlen
[ -n "$opts" ] && cpu=$cpu,$opts
exec "$root/tests-tcg/run-guest.sh" "${QEMU:-$root/qemu/build/qemu-system-riscv64}" \
    "$elf" "$cpu" "$@"

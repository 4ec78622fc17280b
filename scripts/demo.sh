#!/bin/bash
# The demo: the bundled guest program on the built QEMU, showing what the
# CPU offers.  Run scripts/bootstrap.sh first.
set -euo pipefail

. "$(dirname "$0")/lib.sh"

qemu=$RVPA_QEMU/build/qemu-system-riscv64
elf=$RVPA_BUILD/tests-tcg/demo-rv64.elf
[ -x "$qemu" ] && [ -f "$elf" ] || die "nothing built yet: run scripts/bootstrap.sh"

cpu=rv64,h=on,sscofpmf=on,ctr=on,sspesa=on,ssplcofi=on,pdis=on
echo "\$ qemu-system-riscv64 -M virt,rvtrace=on -bios none -cpu $cpu -kernel demo-rv64.elf"
out=$("$RVPA_ROOT/tests-tcg/run-guest.sh" "$qemu" "$elf" "$cpu" -- \
      -machine rvtrace=on) || { echo "$out"; exit 1; }
grep -v '^pdis-record ' <<<"$out"

# The PMU samples, by function (the guest prints their PCs).
pcs=$(sed -n 's/^  sample \(0x[0-9a-f]*\)$/\1/p' <<<"$out")
if [ -n "$pcs" ]; then
    echo
    echo "\$ riscv64-unknown-elf-addr2line -f -s -e demo-rv64.elf SAMPLES"
    # shellcheck disable=SC2086 # one argument per sampled PC
    riscv64-unknown-elf-addr2line -f -s -e "$elf" $pcs | paste - - |
        awk '{ n[$1]++; at[$1] = $2 } END {
                 for (f in n) printf "  %3d samples in %-12s (%s)\n", n[f], f, at[f] }' |
        sort -rn
fi

# The PDIS records the guest printed, as a profile (docs/pdis.rst).
if grep -q '^pdis-record ' <<<"$out"; then
    echo
    echo "\$ pdis-profile --hex -e demo-rv64.elf RECORDS"
    sed -n 's/^pdis-record //p' <<<"$out" |
        "$RVPA_BUILD/pdis-profile" --hex --top 6 -e "$elf" -
fi

# The same run captured whole from reset through the PIB sink, decoded on
# the host with the guest's ELF (and virt's reset vector, saved first).
work=$RVPA_BUILD/demo-trace
mkdir -p "$work"
args=(-M virt,rvtrace=on,rvtrace-chardev=tr -bios none -display none
      -cpu "$cpu" -kernel "$elf")
echo 'pmemsave 0x1000 0x100 "'"$work"'/rom.bin"
quit' | "$qemu" "${args[@]}" -chardev null,id=tr -S -monitor stdio \
    -serial none > /dev/null
"$qemu" "${args[@]}" -chardev file,id=tr,path="$work/trace.bin" \
    -monitor none -serial none
echo
echo "\$ qemu-system-riscv64 -M virt,rvtrace=on,rvtrace-chardev=tr -chardev file,id=tr,path=trace.bin ..."
echo "\$ rvtrace-decode --summary --keep-going -e demo-rv64.elf -r rom.bin@0x1000 trace.bin"
"$RVPA_BUILD/rvtrace-decode" --summary --keep-going -e "$elf" -r "$work/rom.bin@0x1000" \
    "$work/trace.bin"

# The guest traced running_dot() with data trace on: its accesses on the
# instructions that made them.
echo
echo "\$ rvtrace-decode -d --keep-going -e demo-rv64.elf -r rom.bin@0x1000 trace.bin | grep -m 20 '<running_dot'"
"$RVPA_BUILD/rvtrace-decode" -d --keep-going -e "$elf" \
    -r "$work/rom.bin@0x1000" "$work/trace.bin" > "$work/decoded.txt"
grep -m 20 '<running_dot' "$work/decoded.txt"

# The same run in N-trace (history trace messages): the encoders' default
# trTeFormat set to N-trace.
"$qemu" "${args[@]}" -global riscv-trace-encoder.format=ntrace \
    -chardev file,id=tr,path="$work/ntrace.bin" -monitor none -serial none
echo
echo "\$ qemu-system-riscv64 ... -global riscv-trace-encoder.format=ntrace ..."
echo "\$ rvtrace-decode --format ntrace --summary --keep-going -e demo-rv64.elf -r rom.bin@0x1000 ntrace.bin"
"$RVPA_BUILD/rvtrace-decode" --format ntrace --summary --keep-going \
    -e "$elf" -r "$work/rom.bin@0x1000" "$work/ntrace.bin"

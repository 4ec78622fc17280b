#!/bin/bash
# Trace the N-trace task group's own CoreMark binary and compare the
# bytes with the figures the task group publishes for it, and with its
# reference encoder (NexRv -enco) on the same instructions.
#
#   scripts/coremark-ref.sh TG_NEXUS_TRACE
#
# TG_NEXUS_TRACE is a checkout (or bare git directory) of
# riscv-non-isa/tg-nexus-trace.  Its refcode/c/examples/all holds the
# CoreMark ELF it measured under spike (from_etrace/test_files/
# coremark.riscv, 33399227 instructions) and its results (all0.txt to
# all4.txt: BTM 1.511, HTM 0.380, HTM with repeat 0.366, with an
# 8-deep call stack 0.308, with both 0.294 bits per instruction).
# Nothing of it is copied into the project: the ELF and NexRv's sources
# are read into a temporary directory.
#
# The ELF talks to spike's HTIF: its trap handler writes tohost and
# waits for fromhost, and tohost_exit writes tohost and spins.  On virt
# two patches make it run: the wait on fromhost becomes a nop (the
# write system call returns at once, its output is lost), and
# tohost_exit writes the test device's power-off code (0x5555 at
# 0x100000) and waits in wfi.  The instructions it retires between
# 0x80000000 and the end of its text are then spike's: 33399227.
#
# Each mode traces the hart from reset into the PIB chardev, without
# periodic sync (as NexRv -enco has none): -global
# riscv-trace-encoder.format, .inst-mode, .inst-features,
# .inst-sync-mode=0.  rvtrace-decode decodes each capture (it must
# report no error); its instructions from 0x80000000 on are given to
# NexRv -enco with the task group's options.  Needs a built project
# (build/, qemu/build) and gcc; KEEP=1 keeps the files in the temporary
# directory.
set -euo pipefail

. "$(dirname "$0")/lib.sh"

[ $# = 1 ] || die "usage: $0 TG_NEXUS_TRACE (a checkout or git directory)"
repo=$1
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
examples=refcode/c/examples/all

# A file of the task group's repository, from a checkout or a git dir
tg_file() {
    if [ -d "$repo/refcode" ]; then
        cat "$repo/$1"
    else
        git --git-dir="$repo" show "HEAD:$1"
    fi
}

build_nexrv "$repo" "$work"
tg_file "$examples/from_etrace/test_files/coremark.riscv" > "$work/ref.elf"

# The two patches, at the addresses of this ELF's symbols
nm=${RVTRACE_NM:-riscv64-unknown-elf-nm}
objdump=${RVTRACE_OBJDUMP:-riscv64-unknown-elf-objdump}
"$objdump" -d "$work/ref.elf" > "$work/ref-objdump.txt"
"$RVPA_PYTHON" - "$work/ref.elf" "$work/coremark.elf" \
    "$work/ref-objdump.txt" "$($nm "$work/ref.elf" | grep ' tohost_exit$')" \
    <<'EOF'
import re
import struct
import sys

src, dst, dump, exit_sym = sys.argv[1:]
elf = bytearray(open(src, 'rb').read())
phoff, = struct.unpack_from('<Q', elf, 0x20)
phnum, = struct.unpack_from('<H', elf, 0x38)
loads = []
for i in range(phnum):
    p_type, _, offset, vaddr, _, filesz = struct.unpack_from(
        '<IIQQQQ', elf, phoff + 56 * i)
    if p_type == 1:
        loads.append((vaddr, offset, filesz))


def patch(addr, old, new):
    for vaddr, offset, size in loads:
        if vaddr <= addr < vaddr + size:
            at = offset + addr - vaddr
            if elf[at:at + len(old)] != old:
                sys.exit('coremark-ref: unexpected code at %#x' % addr)
            elf[at:at + len(new)] = new
            return
    sys.exit('coremark-ref: %#x is in no segment' % addr)


# the wait for fromhost: "ld a3,0(a4); beqz a3,<that ld>" (c.beqz)
text = open(dump).read()
m = re.search(r'([0-9a-f]+):\s+6314\s+ld\s+a3,0\(a4\)\n\s+([0-9a-f]+):'
              r'\s+defd\s+beqz', text)
if not m:
    sys.exit('coremark-ref: no wait for fromhost in this ELF')
patch(int(m.group(2), 16), b'\xfd\xde', b'\x01\x00')        # c.nop
# tohost_exit: lui a5,0x100; c.lui a4,0x5; addi a4,a4,0x555; c.sw a4,0(a5);
# wfi, before its own "j ." (its first 16 bytes)
exit_at = int(exit_sym.split()[0], 16)
at = next(o + exit_at - v for v, o, s in loads if v <= exit_at < v + s)
patch(exit_at, bytes(elf[at:at + 16]),
      bytes.fromhex('b7071000' '1567' '13075755' '98c3' '73005010'))
open(dst, 'wb').write(elf)
EOF

qemu=$RVPA_QEMU/build/qemu-system-riscv64
decode=$RVPA_BUILD/rvtrace-decode

# name format inst-mode inst-features decoder-options NexRv-options
# published (bytes of the task group's all*.txt; NexRv's -cs 8 for our
# call stack of 32: CoreMark's calls nest less than 8 deep)
modes=(
    "BTM ntrace 3 0 - -nobhm 6308812"
    "HTM ntrace 6 0 - -cs_0_-rpt_0 1586381"
    "HTM,repeat ntrace 6 256 - -cs_0_-rpt_2 1529254"
    "HTM,call-stack ntrace 6 200 --implicit-return=stack -cs_8_-rpt_0 1286129"
    "HTM,call-stack,repeat ntrace 6 456 --implicit-return=stack -cs_8_-rpt_2 1227088"
)
"$objdump" -d "$work/coremark.elf" > "$work/objdump.txt"
"$work/NexRv" -conv -objd "$work/objdump.txt" -pcinfo "$work/pcinfo.txt" \
    > /dev/null
printf '%-24s %10s %10s %10s %10s %8s %8s\n' mode instr "this QEMU" \
    "NexRv" published "bits" "pub."
# a QEMU that stops early must not kill the script as it writes to it
trap '' PIPE
i=0
for m in "${modes[@]}"; do
    read -r name format mode features dopts nopts published <<< "$m"
    i=$((i + 1))
    dir=$work/mode$i
    mkdir "$dir"
    # the ROM is saved before the hart starts (-S), for the decoder
    mkfifo "$dir/monitor"
    timeout 120 "$qemu" -M virt,rvtrace=on,rvtrace-chardev=tr \
        -chardev "file,id=tr,path=$dir/trace.bin" \
        -global riscv-trace-encoder.format="$format" \
        -global riscv-trace-encoder.inst-mode="$mode" \
        -global riscv-trace-encoder.inst-features="$features" \
        -global riscv-trace-encoder.inst-sync-mode=0 \
        -bios none -display none -monitor stdio -S -serial none \
        -cpu rv64 -icount shift=0 -kernel "$work/coremark.elf" \
        < "$dir/monitor" > "$dir/qemu.log" 2>&1 &
    exec 3> "$dir/monitor"
    echo "pmemsave 0x1000 0xf000 \"$dir/rom.bin\"" >&3 || true
    sleep 1
    echo cont >&3 || true
    wait $! || die "$name: QEMU failed ($(tail -1 "$dir/qemu.log"))"
    exec 3>&-
    [ "$dopts" = - ] && dopts=
    # shellcheck disable=SC2086
    "$decode" --format "$format" -e "$work/coremark.elf" \
        -r "$dir/rom.bin@0x1000" $dopts "$dir/trace.bin" \
        > "$dir/decoded.txt" 2> "$dir/decode-errors.txt" ||
        die "$name: rvtrace-decode failed: $(head -3 "$dir/decode-errors.txt")"
    "$RVPA_PYTHON" - "$dir/decoded.txt" "$dir/pconly.txt" <<'EOF'
import sys
with open(sys.argv[2], 'w') as out:
    for line in open(sys.argv[1]):
        if line.startswith('0x') and int(line.split()[0], 16) >= 0x80000000:
            out.write('0x%X\n' % int(line.split()[0], 16))
EOF
    n=$(wc -l < "$dir/pconly.txt")
    "$work/NexRv" -conv -pcinfo "$work/pcinfo.txt" -pconly "$dir/pconly.txt" \
        -pcseq "$dir/pcseq.txt" > /dev/null
    # shellcheck disable=SC2086
    "$work/NexRv" -enco "$dir/pcseq.txt" -nex "$dir/ref.nex" ${nopts//_/ } \
        > "$dir/enco.txt" 2>&1 || die "$name: NexRv -enco failed"
    ours=$(stat -c %s "$dir/trace.bin")
    printf '%-24s %10d %10d %10d %10d %8.4f %8.4f\n' "$name" "$n" "$ours" \
        "$(stat -c %s "$dir/ref.nex")" "$published" \
        "$(echo "8 * $ours / $n" | bc -l)" \
        "$(echo "8 * $published / 33399227" | bc -l)"
done

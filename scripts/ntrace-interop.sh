#!/bin/bash
# Decode this QEMU's N-trace with the N-trace task group's reference
# decoder (riscv-non-isa/tg-nexus-trace, refcode/c: NexRv) and compare
# its instruction sequence with rvtrace-decode's, which the e2e suite
# checks against QEMU's execution log.
#
#   scripts/ntrace-interop.sh TG_NEXUS_TRACE
#
# TG_NEXUS_TRACE is a checkout (or bare git directory) of
# riscv-non-isa/tg-nexus-trace; nothing of it is copied into the project:
# NexRv is built from it in a temporary directory.  Each case runs an e2e
# guest (tests-e2e/run-e2e.py --keep), converts the guest ELF's objdump
# with NexRv -conv, decodes the captured trace with NexRv -deco (-cs 32
# with implicit return: our call stack is 32 deep) and compares: BTM, HTM,
# implicit return, repeat, traps with M/S/U, RV32 with periodic sync.  Needs
# a built project (build/, qemu/build).
set -euo pipefail

. "$(dirname "$0")/lib.sh"

[ $# = 1 ] || die "usage: $0 TG_NEXUS_TRACE (a checkout or git directory)"
repo=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

build_nexrv "$repo" "$work"

elfs=$RVPA_BUILD/tests-e2e
objdump=${RVTRACE_OBJDUMP:-riscv64-unknown-elf-objdump}

# name guest xlen append [NexRv options]
cases=(
    "btm-coremark workloads 64 work=coremark_iters=4_trace=0_ntrace=3"
    "htm-coremark workloads 64 work=coremark_iters=4_trace=0_ntrace=6"
    "btm-ir-recursion workloads 64 work=recursion_iters=3_trace=200_ntrace=3 -cs 32"
    "htm-ir-recursion workloads 64 work=recursion_iters=3_trace=200_ntrace=6 -cs 32"
    "htm-traps traps 64 rounds=1_trace=0_ntrace=6"
    "btm-traps traps 64 rounds=1_trace=0_ntrace=3"
    "htm-resync-rv32 workloads 32 work=sort_iters=2_trace=0_ntrace=6_syncmode=3_syncmax=1"
    "btm-repeat-coremark workloads 64 work=coremark_iters=4_trace=256_ntrace=3"
    "htm-ir-repeat-coremark workloads 64 work=coremark_iters=4_trace=456_ntrace=6 -cs 32"
    "btm-random-2 random-2 64 rounds=6_modes=1_irq=200_seed=2_trace=0_ntrace=3"
    "htm-random-8-link-regs random-8 64 rounds=6_modes=1_irq=200_seed=8_trace=0_ntrace=6"
    "htm-repeat-random-9-rv32 random-9 32 rounds=6_modes=1_irq=200_seed=9_trace=256_ntrace=6"
)
# The random programs (tests-e2e/gen-random-guest.py) have traps too, and
# program 8's and 9's calls through x5 and co-routine swaps: without
# implicit return.  Not compared: traps with implicit return.  NexRv -conv classifies by
# mnemonic: ecall is a call (it pushes), mret a return (it pops), which
# the spec's itype table does not say, so its call stack and the
# encoder's part at the first ecall.
failed=0
for c in "${cases[@]}"; do
    read -r name guest xlen append opts <<< "$c"
    elf=$elfs/e2e-$guest-rv$xlen.elf
    dir=$work/$name
    if ! interop_e2e "$dir" "$work/$name.log" "$elf" "$xlen" "$append"; then
        echo "$name: the e2e run failed (log: kept below)"
        tail -5 "$work/$name.log"
        failed=1
        continue
    fi
    "$objdump" -d "$elf" > "$dir/objdump.txt"
    "$work/NexRv" -conv -objd "$dir/objdump.txt" -pcinfo "$dir/pcinfo.txt" \
        > /dev/null
    # shellcheck disable=SC2086
    "$work/NexRv" -deco "$dir/trace-hart0.bin" -pcinfo "$dir/pcinfo.txt" \
        -pcout "$dir/ref.txt" $opts -stat > "$dir/nexrv.txt" 2>&1 || true
    if python3 - "$dir/ref.txt" "$dir/decoded-hart0.txt" <<'EOF'
import sys
ref = [int(l.split(',')[0], 16) for l in open(sys.argv[1])
       if l.startswith('0x')]
ours = [int(l, 16) for l in open(sys.argv[2]) if l.startswith('0x')]
same = ref == ours
print('%d instructions from NexRv, %d from rvtrace-decode: %s' %
      (len(ref), len(ours), 'identical' if same else 'DIFFERENT'))
sys.exit(0 if same and ref else 1)
EOF
    then
        echo "$name: $(grep -h '^Stat' "$dir/nexrv.txt")"
    else
        echo "$name: NexRv disagrees"
        tail -3 "$dir/nexrv.txt"
        failed=1
    fi
done
[ $failed = 0 ] || die "the reference decoder disagreed on some cases"
info "NexRv decodes every case to the same instructions"

# name append NexRv -enco options (no periodic sync on either side)
enco_cases=(
    "BTM trace=0_ntrace=3 -nobhm"
    "HTM trace=0_ntrace=6"
    "HTM,call-stack trace=200_ntrace=6 -cs 32"
    "HTM,call-stack,repeat trace=456_ntrace=6 -cs 32 -rpt 3"
    "HTM,repeat trace=256_ntrace=6 -rpt 3"
    "BTM,repeat trace=256_ntrace=3 -nobhm -rpt 3"
)
elf=$elfs/e2e-workloads-rv64.elf
printf '%-24s %12s %12s %12s\n' mode instructions "this QEMU" "NexRv -enco"
for c in "${enco_cases[@]}"; do
    read -r name append opts <<< "$c"
    dir=$work/enco-$name
    interop_e2e "$dir" "$work/enco-$name.log" "$elf" 64 \
        "work=coremark_iters=4_syncmode=0_$append" ||
        die "$name: the e2e run failed ($(tail -1 "$work/enco-$name.log"))"
    "$objdump" -d "$elf" > "$dir/objdump.txt"
    "$work/NexRv" -conv -objd "$dir/objdump.txt" -pcinfo "$dir/pcinfo.txt" \
        > /dev/null
    # shellcheck disable=SC2046
    "$work/NexRv" -deco "$dir/trace-hart0.bin" -pcinfo "$dir/pcinfo.txt" \
        -pcout "$dir/ref.txt" $(grep -o -- '-cs [0-9]*' <<< "$opts") -none \
        > /dev/null 2>&1 || true
    "$work/NexRv" -conv -pcinfo "$dir/pcinfo.txt" -pconly "$dir/ref.txt" \
        -pcseq "$dir/pcseq.txt" > /dev/null
    # shellcheck disable=SC2086
    "$work/NexRv" -enco "$dir/pcseq.txt" -nex "$dir/ref.nex" $opts -stat \
        > "$dir/enco.txt" 2>&1 || die "$name: NexRv -enco failed"
    n=$(grep -c '^0x' "$dir/ref.txt")
    printf '%-24s %12d %12.3f %12.3f\n' "$name" "$n" \
        "$(echo "8 * $(stat -c %s "$dir/trace-hart0.bin") / $n" | bc -l)" \
        "$(echo "8 * $(stat -c %s "$dir/ref.nex") / $n" | bc -l)"
done

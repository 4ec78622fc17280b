#!/bin/sh
# The instruction events count the same whatever the translation blocks:
# the workload guest (bench/workloads.c) under -icount shift=0,sleep=off
# (deterministic, interrupts included), and without it where no timer
# interrupt comes, counts each event, samples it with small periods,
# and samples with PDIS, once with QEMU's blocks and once with one
# instruction per block; every line of the two runs must be the same.
# Blocks of many instructions count at their start and run again in
# parts near an overflow (docs/pmu.rst); one-instruction blocks take
# neither path.  Last, the blocks run in parts only for the wraps that
# come.
#
#   run-count-blocks.sh QEMU ELF
set -u
qemu=$1 elf=$2
pmu=rv64,sscofpmf=on,sspesa=on,ssplcofi=on
pdis=rv64,sscofpmf=on,smcsrind=on,sscsrind=on,pdis=on
both=$pmu,smcsrind=on,sscsrind=on,pdis=on       # two classes at once
fail=0 runs=0

# the guest's result lines of one run; without -icount, less minstret
# and mtime (QEMU's, which count host time then)
run() {
    cpu=$1 args=$2 icount=$3
    shift 3
    if [ "$icount" = icount ]; then
        set -- -icount shift=0,sleep=off "$@"
    fi
    "$qemu" -M virt -bios none -display none -monitor none -serial stdio \
        -cpu "$cpu" "$@" -kernel "$elf" -append "$args" 2>&1 |
        grep -E '^(work|samples|count|pdis records)' |
        if [ "$icount" = icount ]; then cat; else
            sed 's/ insns [0-9]* ticks [0-9]*//'
        fi
}

# compare CPU ARGS [free]: under -icount, or without it (free: its
# blocks run again in parts with what translated code takes back, not
# with a restore; only for runs without timer interrupts)
compare() {
    cpu=$1 args=$2 icount=${3:-icount}
    blocks=$(run "$cpu" "$args" $icount)
    single=$(run "$cpu" "$args" $icount -accel tcg,one-insn-per-tb=on)
    runs=$((runs + 1))
    if [ -z "$blocks" ] || [ "$blocks" != "$single" ]; then
        echo "FAIL $cpu $args ($icount)"
        echo "  blocks: $blocks"
        echo "  single: $single"
        fail=1
    else
        echo "ok   $args ($icount): $(echo "$blocks" | tr '\n' ' ')"
    fi
}

# timer interrupts at many points (irq=), and an OS in S and U mode
for work in "work=coremark iters=20 irq=40 seed=3 irqmax=5000" \
            "work=sort iters=6 irq=25 seed=7 irqmax=5000" \
            "work=os iters=60"; do
    # INST.RET, INST.BRJMP, INST.BRJMP.TK, INST.DEC.* (decimal)
    for ev in 2 5 19 256 512 768 1024 1280; do
        compare $pmu "$work count=$ev"
    done
    compare $pmu "$work pmu=2 period=997"
    compare $pmu "$work pmu=19 period=101"
    compare $pmu "$work pmu=1024 period=53"
    compare $pdis "$work pdis=97"
done
# without -icount, where no timer interrupt comes
for work in "work=coremark iters=20" "work=sort iters=6"; do
    compare $pmu "$work pmu=2 period=997" free
    compare $pmu "$work pmu=19 period=101" free
    compare $pmu "$work pmu=1024 period=53" free
    compare $pdis "$work pdis=97" free
    compare $both "$work pmu=19 period=101 pdis=97" free
done

# Each instruction found near a wrap of INST.RET runs alone and wraps
# its counter: a block that runs again in parts for a wrap that does not
# come (as after every xRET until 2026-11-26) shows as more of the first.
# (An instruction that traps instead of retiring would too: these
# workloads have none.  Without the log trace backend both are 0.)
log=$(mktemp)
for work in "work=coremark iters=40" "work=sort iters=6"; do
    "$qemu" -M virt -bios none -display none -monitor none -serial null \
        -cpu $pmu -kernel "$elf" -append "$work pmu=2 period=997" \
        -trace riscv_pmu_events_near -trace riscv_pmu_events_wrap -D "$log"
    near=$(grep -c riscv_pmu_events_near "$log")
    wraps=$(grep -c riscv_pmu_events_wrap "$log")
    runs=$((runs + 1))
    if [ "$wraps" -lt 100 ] || [ "$near" != "$wraps" ]; then
        echo "FAIL $work: $near instructions near a wrap, $wraps wraps"
        fail=1
    else
        echo "ok   $work: $near instructions near a wrap, $wraps wraps"
    fi
done
rm -f "$log"

[ $fail = 0 ] && echo "PASS: $runs checks" && exit 0
exit 1

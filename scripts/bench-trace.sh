#!/bin/bash
# Trace benchmark, on the workload guest (tests-tcg/bench/workloads.c):
#
# 1. speed: each workload (a CoreMark-like branchy mix, a sort, a
#    call-heavy recursion; iterations for about 0.1 s untraced) without
#    trace devices, with them idle, and tracing with the default and
#    with all optimisations, and with data trace (data=1: every load,
#    store, atomic and CSR access too), in interleaved rounds; the median of
#    per-round ratios to "off", and the ratio of the fastest runs (noise
#    only adds time);
# 2. trace size: bits per instruction of each workload for each mode
#    combination (-icount shift=0, so minstret counts instructions).
#
#   scripts/bench-trace.sh [ROUNDS [WORKLOAD...]]   (default 7, all)
#   scripts/bench-trace.sh --insns [WORKLOAD...]
#       host instructions of the vCPU thread and of the encoding thread,
#       untraced and tracing, a quarter of the iterations (valgrind
#       --tool=callgrind: exact, unlike the timings, but blind to cache
#       misses and waiting);
#
# The guest times its workload with mtime, so QEMU start-up is not
# counted.  Run it on an otherwise idle machine.  On a virtual machine the
# host may take CPU time (steal time), which makes two-thread runs slower
# out of proportion: a workload's round that lost more than 3% (or
# RVPA_BENCH_STEAL_MAX) is run again, up to four times, and the steal
# time is printed.  Results in docs/rvtrace.rst.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-lib.sh"

# workload | iterations (about 0.1 s untraced)
declare -A iterations=([coremark]=4000 [sort]=1600 [recursion]=2000)
insns_mode=false
rounds=7
if [ "${1:-}" = --insns ]; then
    insns_mode=true
    shift
elif [ $# -gt 0 ]; then
    rounds=$1
    shift
fi
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(coremark sort recursion)
for w in "${workloads[@]}"; do
    [ -n "${iterations[$w]:-}" ] || die "unknown workload $w"
done
qemu=$RVPA_QEMU/build/qemu-system-riscv64
elf=$RVPA_BUILD/tests-tcg/bench-workloads-rv64.elf
[ -x "$qemu" ] && [ -f "$elf" ] ||
    die "build first (scripts/run-tests.sh or meson compile -C build)"

# trTeInstFeatures bits (docs/rvtrace.rst)
full_address=1 implicit_exception=2 sijump=4 implicit_return=8
branch_prediction=16 jump_target_cache=32 ir_counter=64 ir_stack=192
all=$((implicit_exception | sijump | implicit_return | ir_stack |
       branch_prediction | jump_target_cache))

# ---------------------------------------------------- host instructions

# "vCPU encoder" millions of host instructions of one run under callgrind
thread_insns() {
    local dir f total vcpu=0 enc=0
    dir=$(mktemp -d)
    valgrind --tool=callgrind --separate-threads=yes \
        --callgrind-out-file="$dir/cg" --smc-check=all-non-file \
        "$qemu" -M "$1" -bios none -display none -monitor none \
        -serial stdio -cpu rv64 -kernel "$elf" -append "$2" \
        >/dev/null 2>&1 || die "valgrind failed ($1, $2)"
    for f in "$dir"/cg-*; do
        total=$(callgrind_annotate "$f" 2>/dev/null |
                awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
        if grep -q 'te_worker' "$f"; then
            enc=$total
        elif grep -q 'cpu_exec' "$f" && [ "$total" -gt "$vcpu" ]; then
            vcpu=$total
        fi
    done
    rm -rf "$dir"
    awk -v v="$vcpu" -v e="$enc" 'BEGIN { printf "%.0f %.0f\n", v / 1e6, e / 1e6 }'
}

if $insns_mode; then
    command -v valgrind >/dev/null || die "--insns needs valgrind"
    echo "Host instructions (millions), a quarter of the iterations"
    printf '%-10s %-24s %8s %8s %10s\n' workload configuration vCPU \
        encoder "max / off"
    for w in "${workloads[@]}"; do
        args="work=$w iters=$((iterations[$w] / 4))"
        read -r off _ < <(thread_insns virt "$args")
        printf '%-10s %-24s %8s %8s %10s\n' "$w" off "$off" - 1.00
        for c in "default modes|0" "all modes|$all"; do
            IFS='|' read -r name f <<<"$c"
            read -r v e < <(thread_insns virt,rvtrace=on "$args trace=$f")
            printf '%-10s %-24s %8s %8s %10s\n' "$w" "tracing, $name" \
                "$v" "$e" "$(awk -v v="$v" -v e="$e" -v o="$off" \
                'BEGIN { printf "%.2f", (v > e ? v : e) / o }')"
        done
    done
    exit 0
fi

run_guest() {
    local machine=$1 append=$2 out
    shift 2
    out=$("$qemu" -M "$machine" -bios none -display none -monitor none \
          -serial stdio -cpu rv64 -kernel "$elf" "$@" -append "$append") ||
        die "guest failed ($machine, $append): $out"
    grep '^work:' <<<"$out" || die "no result ($machine, $append): $out"
}

# ------------------------------------------------------------- 1. speed

# name | machine | guest arguments
configs=(
    "off|virt|"
    "rvtrace=on, idle|virt,rvtrace=on|"
    "tracing, default modes|virt,rvtrace=on|trace=0"
    "tracing, all modes|virt,rvtrace=on|trace=$all"
    "tracing + data accesses|virt,rvtrace=on|trace=0 data=1"
)

declare -A times
n=${#configs[@]}
# A workload's round whose runs lost more than this share of the CPU to
# the host (steal time, in percent) is run again, up to 4 more times.
steal_max=${RVPA_BENCH_STEAL_MAX:-3}
steal_start=$(cpu_steal)
cross_start=$(cross_core_ns)
retried=0
for ((r = 1; r <= rounds; r++)); do
    for w in "${workloads[@]}"; do
        for ((attempt = 0; attempt < 5; attempt++)); do
            before=$(cpu_steal)
            round=()
            for ((k = 0; k < n; k++)); do
                IFS='|' read -r name machine args <<<"${configs[(r + k) % n]}"
                line=$(run_guest "$machine" \
                       "work=$w iters=${iterations[$w]} $args")
                round+=("$name|$(awk '{ print $6 }' <<<"$line")")
            done
            steal=$(steal_share "$before" "$(cpu_steal)")
            awk -v s="${steal%\%}" -v m="$steal_max" 'BEGIN { exit !(s > m) }' ||
                break
            retried=$((retried + 1))
        done
        for entry in "${round[@]}"; do
            times[$w,${entry%|*}]+="${entry##*|} "
        done
    done
    info "round $r of $rounds done"
done

echo "Speed over $rounds rounds: ratio to off, the median of each round's" \
     "and the fastest run's (ticks: median, 100 ns)"
echo "Host steal time: $(steal_share "$steal_start" "$(cpu_steal)") of the" \
     "CPU time; $retried workload rounds above ${steal_max}% run again" \
     "(the tracing figures need both cores); a cache line's round trip" \
     "between the cores $cross_start and $(cross_core_ns) ns before and after"
printf '%-10s %-24s %12s %10s %10s\n' workload configuration ticks median \
    fastest
for w in "${workloads[@]}"; do
    for c in "${configs[@]}"; do
        IFS='|' read -r name machine args <<<"$c"
        printf '%-10s %-24s %12s %10s %10s\n' "$w" "$name" \
            "$(median "${times[$w,$name]}")" \
            "$(paired_ratio "${times[$w,$name]}" "${times[$w,off]}")" \
            "$(best_ratio "${times[$w,$name]}" "${times[$w,off]}")"
    done
done
echo

# --------------------------------------------------------- 2. trace size

# name | trTeInstFeatures
modes=(
    "default (delta addresses)|0"
    "full address|$full_address"
    "implicit exception|$implicit_exception"
    "sequentially inferable jumps|$sijump"
    "implicit return, call counter|$((implicit_return | ir_counter))"
    "implicit return, return stack|$((implicit_return | ir_stack))"
    "branch prediction|$branch_prediction"
    "jump target cache|$jump_target_cache"
    "all but full address, counter|$((all & ~ir_stack | ir_counter))"
    "all but full address, stack|$all"
)
workloads=(coremark sort recursion)

echo "Trace size: bits per instruction (10 iterations, -icount shift=0)"
printf '%-32s' mode
printf '%12s' "${workloads[@]}"
echo
for m in "${modes[@]}"; do
    IFS='|' read -r name features <<<"$m"
    printf '%-32s' "$name"
    for w in "${workloads[@]}"; do
        line=$(run_guest virt,rvtrace=on "work=$w iters=10 trace=$features" \
               -icount shift=0)
        awk '{ if ($10 != 0) print "wrapped"; else printf "%12.3f", $8 * 8 / $4 }' \
            <<<"$line"
    done
    echo
done

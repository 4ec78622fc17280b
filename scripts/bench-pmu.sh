#!/bin/bash
# PMU events benchmark: the workload guest (tests-tcg/bench/workloads.c:
# CoreMark-like, sort, recursion) with the Sscofpmf/Sspesa/Ssplcofi
# extensions off, on but unused, and sampling an instruction event every
# 100000 events (mhpmcounter3 reloaded by the LCOFI handler); and with
# PDIS on but unused, and sampling every 100000 and 10000 instructions
# into a memory buffer (docs/pdis.rst), in interleaved rounds; prints the
# median guest time (mtime) of each and the median of its per-round
# ratios to the extensions off.
#
#   scripts/bench-pmu.sh [ROUNDS [ITERATIONS]]      (default 7, 20000)
#   scripts/bench-pmu.sh --insns [ITERATIONS]       (default 3000)
#
# Goals (docs/pmu.rst, docs/pdis.rst): no event programmed <= 1.01x, an
# event sampled every 100k events <= 1.1x; PDIS unused <= 1.01x, every
# 100k <= 1.1x, every 10k <= 1.3x.  --insns counts host instructions with
# valgrind (callgrind) instead, which do not move with the host: each
# run minus its run of 1 iteration, over the same for the baseline.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-lib.sh"

bench_options 7 20000 3000 "$@"
qemu=$RVPA_QEMU/build/qemu-system-riscv64
elf=$RVPA_BUILD/tests-tcg/bench-workloads-rv64.elf
[ -x "$qemu" ] && [ -f "$elf" ] ||
    die "build first (scripts/run-tests.sh or meson compile -C build)"

ext=rv64,sscofpmf=on,sspesa=on,ssplcofi=on
pdis=rv64,sscofpmf=on,smcsrind=on,sscsrind=on,pdis=on
# name | -cpu | kernel arguments
configs=(
    "off|rv64|"
    "on, no event|$ext|"
    "INST.RET / 100k|$ext|pmu=2"
    "INST.BRJMP / 100k|$ext|pmu=5"
    "INST.DEC.LDST / 100k|$ext|pmu=1280"
    "pdis on, unused|$pdis|"
    "PDIS / 100k|$pdis|pdis=100000"
    "PDIS / 10k|$pdis|pdis=10000"
)
works=(coremark sort recursion)

run_one() {
    local cpu=$1 work=$2 args=$3 out
    out=$("$qemu" -M virt -bios none -display none -monitor none \
          -serial stdio -cpu "$cpu" -kernel "$elf" \
          -append "work=$work iters=$iters $args") ||
        die "guest failed ($cpu, $work $args): $out"
    sed -n 's/^work: .* ticks \([0-9]*\) .*/\1/p' <<<"$out"
}

count_insns() {
    local cpu=$1 work=$2 args=$3 n=$4 out
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$out" "$qemu" -M virt \
        -bios none -display none -monitor none -serial null -cpu "$cpu" \
        -kernel "$elf" -append "work=$work iters=$n $args" \
        >/dev/null 2>&1 || die "valgrind failed ($cpu, $work $args)"
    callgrind_total "$out"
    rm -f "$out"
}

if [ $insns = 1 ]; then
    printf '%-24s' configuration
    printf ' %12s' "${works[@]}"
    echo
    declare -A base
    for c in "${configs[@]}"; do
        IFS='|' read -r name cpu args <<<"$c"
        printf '%-24s' "$name"
        for w in "${works[@]}"; do
            n=$(( $(count_insns "$cpu" "$w" "$args" "$iters") -
                  $(count_insns "$cpu" "$w" "$args" 1) ))
            [ -n "${base[$w]:-}" ] || base[$w]=$n
            printf ' %12s' "$(awk -v a="$n" -v b="${base[$w]}" \
                              'BEGIN { printf "%.3fx", a / b }')"
        done
        echo
    done
    echo "(host instructions of $iters iterations minus those of 1," \
         "relative to 'off')"
    exit 0
fi

declare -A times
steal0=$(cpu_steal)
n=${#configs[@]}
for ((r = 1; r <= rounds; r++)); do
    for w in "${works[@]}"; do
        for ((k = 0; k < n; k++)); do
            IFS='|' read -r name cpu args <<<"${configs[(r + k) % n]}"
            times[$name/$w]+="$(run_one "$cpu" "$w" "$args") "
        done
    done
    info "round $r of $rounds done"
done

printf '%-24s' configuration
printf ' %22s' "${works[@]}"
echo
for c in "${configs[@]}"; do
    IFS='|' read -r name cpu args <<<"$c"
    printf '%-24s' "$name"
    for w in "${works[@]}"; do
        printf ' %13s %8s' "$(median "${times[$name/$w]}")" \
            "$(paired_ratio "${times[$name/$w]}" "${times[off/$w]}")"
    done
    echo
done
echo "(median mtime ticks of 100 ns and paired ratio to 'off';" \
     "$rounds rounds of $iters iterations; host steal" \
     "$(steal_share "$steal0" "$(cpu_steal)"))"

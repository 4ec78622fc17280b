#!/bin/bash
# CTR benchmark: the same guest (tests-tcg/bench/branchy.c, a branch- and
# call-heavy loop) under eight configurations, run in interleaved rounds;
# prints the median loop time of each and the median of its per-round
# ratios to its baseline: CTR absent, or, for a guest that writes its
# control register every iteration (another type filter each time), CTR
# absent with the same loop writing mscratch.
#
#   scripts/bench-ctr.sh [ROUNDS [ITERATIONS]]     (default 7, 20000000)
#   scripts/bench-ctr.sh --insns [ITERATIONS]       (default 300000)
#
# The guest times its loop with mtime, so QEMU start-up is not counted.
# Run it on an otherwise idle machine; see docs/ctr.rst for results.
# --insns counts host instructions instead (valgrind --tool=callgrind),
# which do not move with the host: each configuration's run minus its
# run of 1000 iterations (QEMU's start-up), divided by the same for its
# baseline.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-lib.sh"

bench_options 7 20000000 300000 "$@"
qemu=$RVPA_QEMU/build/qemu-system-riscv64
elf=$RVPA_BUILD/tests-tcg/bench-branchy-rv64.elf
[ -x "$qemu" ] && [ -f "$elf" ] ||
    die "build first (scripts/run-tests.sh or meson compile -C build)"

# name | -cpu | what the guest records | control rewritten every | baseline
configs=(
    "off|rv64|none|0|off"
    "ctr=on, idle|rv64,ctr=on|none|0|off"
    "ctr=on, recording all|rv64,ctr=on|draft|0|off"
    "smctr=on, idle|rv64,smctr=on,ssctr=on|none|0|off"
    "smctr=on, recording all|rv64,smctr=on,ssctr=on|ratified|0|off"
    "off, mscratch rewritten|rv64|none|1|off, mscratch rewritten"
    "ctr=on, control rewritten|rv64,ctr=on|draft|1|off, mscratch rewritten"
    "smctr=on, ctl rewritten|rv64,smctr=on,ssctr=on|ratified|1|off, mscratch rewritten"
)

run_one() {
    local cpu=$1 record=$2 rewrite=$3 out
    out=$("$qemu" -M virt -bios none -display none -monitor none \
          -serial stdio -cpu "$cpu" -kernel "$elf" \
          -append "record=$record iters=$iters rewrite=$rewrite") ||
        die "guest failed ($cpu, record=$record): $out"
    sed -n 's/^branchy: .* \([0-9]*\) ticks$/\1/p' <<<"$out"
}

# Host instructions of one run (callgrind's total).
count_insns() {
    local cpu=$1 record=$2 rewrite=$3 n=$4 out
    out=$(mktemp)
    valgrind --tool=callgrind --smc-check=all-non-file \
        --callgrind-out-file="$out" "$qemu" -M virt -bios none \
        -display none -monitor none -serial null -cpu "$cpu" \
        -kernel "$elf" -append "record=$record iters=$n rewrite=$rewrite" \
        >/dev/null 2>&1 || die "valgrind failed ($cpu, record=$record)"
    callgrind_total "$out"
    rm -f "$out"
}

if [ $insns = 1 ]; then
    declare -A loop
    printf '%-28s %14s %14s\n' configuration "loop insns" "ratio"
    for c in "${configs[@]}"; do
        IFS='|' read -r name cpu record rewrite base <<<"$c"
        loop[$name]=$(( $(count_insns "$cpu" "$record" "$rewrite" "$iters") -
                        $(count_insns "$cpu" "$record" "$rewrite" 1000) ))
        printf '%-28s %14s %14s\n' "$name" "${loop[$name]}" \
            "$(awk -v a="${loop[$name]}" -v b="${loop[$base]}" \
               'BEGIN { printf "%.3fx", a / b }')"
    done
    echo "(host instructions of $iters iterations minus those of 1000)"
    exit 0
fi

declare -A times
# Each round starts at another configuration, so none always runs first.
n=${#configs[@]}
for ((r = 1; r <= rounds; r++)); do
    for ((k = 0; k < n; k++)); do
        IFS='|' read -r name cpu record rewrite base \
            <<<"${configs[(r + k) % n]}"
        times[$name]+="$(run_one "$cpu" "$record" "$rewrite") "
    done
    info "round $r of $rounds done"
done

printf '%-28s %14s %14s\n' configuration "median ticks" "paired ratio"
for c in "${configs[@]}"; do
    IFS='|' read -r name cpu record rewrite base <<<"$c"
    printf '%-28s %14s %14s\n' "$name" "$(median "${times[$name]}")" \
        "$(paired_ratio "${times[$name]}" "${times[$base]}")"
done
echo "($rounds rounds of $iters iterations; mtime ticks are 100 ns)"

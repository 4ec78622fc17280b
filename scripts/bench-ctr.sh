#!/bin/bash
# CTR benchmark: the same guest (tests-tcg/bench/branchy.c, a branch- and
# call-heavy loop) under five configurations, run in interleaved rounds;
# prints the median loop time of each and its ratio to CTR absent.
#
#   scripts/bench-ctr.sh [ROUNDS [ITERATIONS]]     (default 7, 20000000)
#
# The guest times its loop with mtime, so QEMU start-up is not counted.
# Run it on an otherwise idle machine; see docs/ctr.rst for results.
set -euo pipefail

. "$(dirname "$0")/lib.sh"

rounds=${1:-7}
iters=${2:-20000000}
qemu=$RVPA_QEMU/build/qemu-system-riscv64
elf=$RVPA_BUILD/tests-tcg/bench-branchy-rv64.elf
[ -x "$qemu" ] && [ -f "$elf" ] ||
    die "build first (scripts/run-tests.sh or meson compile -C build)"

# name | -cpu | what the guest records
configs=(
    "off|rv64|none"
    "ctr=on, idle|rv64,ctr=on|none"
    "ctr=on, recording all|rv64,ctr=on|draft"
    "smctr=on, idle|rv64,smctr=on,ssctr=on|none"
    "smctr=on, recording all|rv64,smctr=on,ssctr=on|ratified"
)

run_one() {
    local cpu=$1 record=$2 out
    out=$("$qemu" -M virt -bios none -display none -monitor none \
          -serial stdio -cpu "$cpu" -kernel "$elf" \
          -append "record=$record iters=$iters") ||
        die "guest failed ($cpu, record=$record): $out"
    sed -n 's/^branchy: .* \([0-9]*\) ticks$/\1/p' <<<"$out"
}

declare -A times
for ((r = 1; r <= rounds; r++)); do
    for c in "${configs[@]}"; do
        IFS='|' read -r name cpu record <<<"$c"
        times[$name]+="$(run_one "$cpu" "$record") "
    done
    info "round $r of $rounds done"
done

median() {
    tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -n |
        awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

base=$(median "${times[off]}")
printf '%-26s %14s %8s\n' configuration "median ticks" ratio
for c in "${configs[@]}"; do
    IFS='|' read -r name cpu record <<<"$c"
    m=$(median "${times[$name]}")
    printf '%-26s %14s %8s\n' "$name" "$m" \
        "$(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.3fx", a / b }')"
done
echo "($rounds rounds of $iters iterations; mtime ticks are 100 ns)"

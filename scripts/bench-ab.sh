#!/bin/bash
# Two builds of QEMU against each other on the workload guest: what a
# change did to one configuration, which scripts/bench.sh's table can
# not say (its rows move between runs by more than most changes).  Each
# round runs A's untraced guest, then the configuration on A and on B in
# turn (B first in every other round); the figures are the medians of
# each build's ratio to the untraced run of its round.
#
#   scripts/bench-ab.sh QEMU_A QEMU_B WORKLOAD ROUNDS [GUEST ARGS...]
#
# BENCH_CPU sets -cpu for every run (default rv64), for example
# BENCH_CPU=rv64,ctr=on with record=draft.
#
# WORKLOAD is one of the guest's (coremark, sort, recursion, branchy,
# os), with scripts/bench.sh's iterations; GUEST ARGS are the guest's
# -append words, for example trace=0 (the default modes) or trace=254.
# Example: the build before a change against the one after it,
#
#   cp qemu/build/qemu-system-riscv64 /tmp/qemu-before   (then rebuild)
#   scripts/bench-ab.sh /tmp/qemu-before qemu/build/qemu-system-riscv64 \
#       recursion 21 trace=0
set -euo pipefail

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-lib.sh"

[ $# -ge 4 ] || die "usage: $0 QEMU_A QEMU_B WORKLOAD ROUNDS [GUEST ARGS...]"
qemu_a=$1 qemu_b=$2 work=$3 rounds=$4
shift 4
declare -A iterations=([coremark]=18000 [sort]=7200 [recursion]=9000
                       [branchy]=4500 [os]=15000)
[ -n "${iterations[$work]:-}" ] || die "unknown workload $work"
elf=$RVPA_BUILD/tests-tcg/bench-workloads-rv64.elf
[ -f "$elf" ] || die "build first: no $elf"

# The guest's time for its work, in mtime ticks.
ticks() {
    "$1" -M virt,rvtrace=on -bios none -display none -monitor none \
        -serial stdio -cpu "${BENCH_CPU:-rv64}" -kernel "$elf" \
        -append "work=$work iters=${iterations[$work]} ${*:2}" |
        awk '/^work:/ { print $6 }'
}

cross0=$(cross_core_ns)
off="" a="" b=""
for ((i = 0; i < rounds; i++)); do
    off+="$(ticks "$qemu_a") "
    if ((i % 2)); then
        b+="$(ticks "$qemu_b" "$@") "
        a+="$(ticks "$qemu_a" "$@") "
    else
        a+="$(ticks "$qemu_a" "$@") "
        b+="$(ticks "$qemu_b" "$@") "
    fi
done
echo "$work, $*, $rounds rounds: A $(paired_ratio "$a" "$off")," \
     "B $(paired_ratio "$b" "$off") (ratios to A untraced; cross-core" \
     "round trip $cross0 and $(cross_core_ns) ns)"

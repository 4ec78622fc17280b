#!/bin/bash
# Codec microbenchmark (tests-unit/bench-etrace.c): the E-trace encoder
# and packet packer on synthetic block streams (a call-heavy recursion,
# branchy loops, a mix of calls, and a jump per block), without QEMU.
#
#   scripts/bench-codec.sh [-r ROUNDS] [-n BLOCKS] [-w WORKLOAD|pack]
#                          [-c OPTIONS]
#       ns per block (best of the rounds), packets and bytes per block,
#       and ns per packet of the generic and the fast packer;
#   scripts/bench-codec.sh --insns [-w WORKLOAD] [-c OPTIONS]
#       host instructions per block in etrace_encoder_block() and what it
#       calls (valgrind --tool=callgrind; exact, unlike the timings);
#   scripts/bench-codec.sh --digest
#       one hash per random stream of the bytes emitted, for every option
#       combination on 16 parameter sets: two versions of the codec that
#       print the same digests emit the same bytes.
#
# Builds only the host parts (meson compile bench-etrace in $RVPA_BUILD),
# never QEMU.  The timings of a shared or virtual machine vary by 20% or
# more from run to run; --insns does not.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-lib.sh"

mode=timing
if [ "${1:-}" = --insns ] || [ "${1:-}" = --digest ]; then
    mode=${1#--}
    shift
fi

if [ ! -f "$RVPA_BUILD/build.ninja" ]; then
    meson setup "$RVPA_BUILD" "$RVPA_ROOT" >/dev/null ||
        die "meson setup $RVPA_BUILD failed"
fi
meson compile -C "$RVPA_BUILD" bench-etrace >/dev/null ||
    die "building bench-etrace failed"
bench=$RVPA_BUILD/bench-etrace

case $mode in
timing)
    exec "$bench" "$@"
    ;;
digest)
    exec "$bench" --digest "$@"
    ;;
esac

command -v valgrind >/dev/null || die "--insns needs valgrind"
blocks=100000
out=$(mktemp)
trap 'rm -f "$out"' EXIT
printf '%-10s %-13s %12s\n' workload options insns/block
"$bench" --list "$@" | while read -r workload options; do
    valgrind --tool=callgrind --callgrind-out-file="$out" \
        --toggle-collect=etrace_encoder_block \
        "$bench" -n $blocks -r 1 -w "$workload" -c "$options" \
        >/dev/null 2>&1 || die "valgrind failed on $workload $options"
    insns=$(callgrind_total "$out")
    printf '%-10s %-13s %12.1f\n' "$workload" "$options" \
        "$(echo "$insns / $blocks" | bc -l)"
done

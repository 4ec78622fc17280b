#!/bin/bash
# Decoder benchmark: reconstructed instructions per second and peak
# memory of tools/rvtrace-decode on traces of at least MIN instructions
# (default 1e8), captured from the workload guest (tests-tcg/bench/
# workloads.c, built with the e2e save hook) in QEMU's RAM sink.
#
#   scripts/bench-decoder.sh [MIN [WORKLOAD...]]
#       WORKLOAD: coremark, sort or recursion (default: all three)
#
# For each workload and for the default modes and all modes (features
# 254), it prints the trace size, bits per instruction, and the decoder's
# time and peak RSS (/usr/bin/time -v) for --summary (counting, symbol
# lookups) and for the default output (one address per line to
# /dev/null).  Memory must not grow with the trace (streaming).  Run it on
# an otherwise idle machine; results in docs/rvtrace.rst.
set -euo pipefail

. "$(dirname "$0")/lib.sh"

min=${1:-100000000}
shift || true
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(coremark sort recursion)
qemu=$RVPA_QEMU/build/qemu-system-riscv64
decoder=$RVPA_BUILD/rvtrace-decode
elf=$RVPA_BUILD/tests-e2e/e2e-workloads-rv64.elf
work=${RVPA_BENCH_DIR:-/tmp/rvpa-bench-decoder}
bufsize=$((768 << 20))
[ -x "$qemu" ] && [ -x "$decoder" ] && [ -f "$elf" ] ||
    die "build first (meson compile -C build rvtrace-decode" \
        "tests-e2e/e2e-workloads-rv64.elf)"
[ -x /usr/bin/time ] || die "/usr/bin/time (Debian package time) is needed"
mkdir -p "$work"
cd "$work"

# Capture a trace of workload $1 with features $2, iterations $3.
capture() {
    rm -f trace-hart0.bin
    "$qemu" -M virt,rvtrace=on -m 2G -bios none -display none \
        -monitor none -serial stdio -cpu rv64 -kernel "$elf" \
        -semihosting-config enable=on,target=native \
        -append "work=$1 iters=$3 trace=$2 bufsize=$bufsize" >qemu.log ||
        die "the guest failed: $(cat qemu.log)"
    grep -q 'wrapped 0' qemu.log || die "the buffer wrapped: fewer iterations"
}

instructions() {
    "$decoder" -s -e "$elf" trace-hart0.bin | awk '/^instructions/ { print $2 }'
}

# "cpu-seconds wall-seconds peak-KiB" of a decoder run (the decoder is
# single-threaded: CPU time is what it costs, also on a busy machine)
timed() {
    /usr/bin/time -v "$@" >/dev/null 2>time.log || {
        cat time.log >&2
        die "the decoder failed"
    }
    awk -F': ' '/User time|System time/ { cpu += $2 }
                /Elapsed \(wall clock\)/ { n = split($2, t, ":");
                    s = t[n] + (n > 1 ? 60 * t[n - 1] : 0) }
                /Maximum resident/ { kb = $2 }
                END { print cpu, s, kb }' time.log
}

# the best of 3 runs: other processes only ever slow it down
report() {
    local name=$1 insns=$2 cpu secs kb c s k
    shift 2
    cpu=1e9
    for _ in 1 2 3; do
        read -r c s k < <(timed "$@")
        if awk -v a="$c" -v b="$cpu" 'BEGIN { exit !(a < b) }'; then
            cpu=$c secs=$s kb=$k
        fi
    done
    awk -v n="$name" -v i="$insns" -v c="$cpu" -v s="$secs" -v kb="$kb" \
        'BEGIN { printf "  %-9s %6.2f s CPU (%6.2f s wall)  %6.1f M " \
                 "instructions/s  peak %5.1f MiB\n", n, c, s,
                 i / c / 1e6, kb / 1024 }'
}

for w in "${workloads[@]}"; do
    for f in 0 254; do
        iters=20
        capture "$w" "$f" "$iters"
        n=$(instructions)
        # scale the iterations up to MIN instructions (and a bit more)
        iters=$(awk -v m="$min" -v n="$n" -v i="$iters" \
                'BEGIN { printf "%d", i * m * 1.05 / n + 1 }')
        capture "$w" "$f" "$iters"
        n=$(instructions)
        bytes=$(stat -c %s trace-hart0.bin)
        info "$w, features $f: $n instructions, $bytes bytes," \
             "$(awk -v b="$bytes" -v n="$n" 'BEGIN { printf "%.3f", 8 * b / n }')" \
             "bits/instruction"
        report summary "$n" "$decoder" -s -e "$elf" trace-hart0.bin
        report addresses "$n" "$decoder" --no-events -e "$elf" \
            trace-hart0.bin
    done
done
rm -f trace-hart0.bin

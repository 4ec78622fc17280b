#!/bin/bash
# Fuzz the trace devices' registers for longer than the test suite does:
# the qtest /riscv/trace/fuzz-registers (tests-qtest/riscv-trace-test.c)
# with many seeds and cases, while the hart runs and traces.  QEMU must
# survive and the RAM sink must write nowhere but inside a buffer it was
# enabled with.
#
#   scripts/fuzz-devices.sh [SEEDS [CASES [FIRST_SEED]]]
#                                           (default 50 seeds of 200 cases)
#
# A failing seed is printed with the command that repeats it.
set -euo pipefail

. "$(dirname "$0")/lib.sh"

seeds=${1:-50}
cases=${2:-200}
first=${3:-$(date +%s)}
qtest=$RVPA_QEMU/build/tests/qtest/riscv-trace-test
[ -x "$qtest" ] || die "build first (scripts/run-tests.sh or scripts/bootstrap.sh)"
export QTEST_QEMU_BINARY=$RVPA_QEMU/build/qemu-system-riscv64
export RVPA_TRACE_FUZZ_CASES=$cases

failed=0
for ((seed = first; seed < first + seeds; seed++)); do
    if ! out=$(RVPA_TRACE_FUZZ_SEED=$seed "$qtest" \
               -p /riscv64/riscv/trace/fuzz-registers 2>&1); then
        failed=$((failed + 1))
        printf '%s\n' "$out" | tail -5
        info "seed $seed failed; repeat with: RVPA_TRACE_FUZZ_SEED=$seed" \
             "RVPA_TRACE_FUZZ_CASES=$cases QTEST_QEMU_BINARY=$QTEST_QEMU_BINARY" \
             "$qtest -p /riscv64/riscv/trace/fuzz-registers"
    fi
done
info "$seeds seeds of $cases cases from seed $first: $failed failed"
[ $failed = 0 ]

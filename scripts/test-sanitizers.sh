#!/bin/bash
# The host parts (classifier, codec, decoder library and tool) and their
# unit tests, built with AddressSanitizer and UndefinedBehaviorSanitizer
# (any report is fatal) in a build directory of their own, then the unit
# suite run there: an out-of-bounds access or undefined behaviour that a
# plain build survives fails here.  The test 'sanitizers' of the unit
# suite runs it; by hand:
#
#   scripts/test-sanitizers.sh [BUILD_DIR]      (default build/sanitize)
set -euo pipefail

. "$(dirname "$0")/lib.sh"

dir=${1:-$RVPA_BUILD/sanitize}
if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$RVPA_ROOT" -Dhost_only=true \
        -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args=-fno-sanitize-recover=all >/dev/null
fi
ninja -C "$dir" >/dev/null
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1
# Sanitized code runs 3-5 times slower, and this runs beside the other
# suites on two cores: on 2026-11-28 the round trip took 27 s there, and
# timed out once, against meson's default limit of 30 s.  Every limit is
# five times the plain one.
meson test -C "$dir" --suite unit --print-errorlogs --timeout-multiplier 5

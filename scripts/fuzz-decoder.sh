#!/bin/bash
# Fuzz the trace decoder with libFuzzer (clang -fsanitize=fuzzer,address,
# undefined, Debian's clang and libclang-rt-dev; scripts/install-deps.sh):
#
#   decoder  the packet parser, the decoder library and the data access
#            matcher on inputs of
#            tests-unit/fuzz-decoder.h (configuration + trace), seeded with
#            valid traces of its image and the regression corpus;
#   elf      the decoder tool's ELF loader (tools/rvtrace-image.c), seeded
#            with the guest ELF files of the build;
#   ntrace   the N-trace message parser and decoder (tests-unit/
#            fuzz-ntrace.c), seeded with tests-unit/ntrace-corpus.
#
#   scripts/fuzz-decoder.sh [SECONDS [TARGET...]]    (default 120, all)
#
# Each target runs for SECONDS on one core.  Every crash, leak or timeout
# libFuzzer finds is minimised and copied to tests-unit/decoder-corpus/
# (decoder), tests-unit/elf-corpus/ (elf) or tests-unit/ntrace-corpus/
# (ntrace) as crash-*.bin or, for timeouts, hang-*.bin, where the unit
# tests decoder-corpus, decoder-corpus-hangs and ntrace run them (meson
# test --suite unit).  Work files go to
# $RVPA_FUZZ_DIR (default /tmp/rvpa-fuzz).
set -euo pipefail

. "$(dirname "$0")/lib.sh"

seconds=${1:-120}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decoder elf ntrace)
root=$RVPA_ROOT
work=${RVPA_FUZZ_DIR:-/tmp/rvpa-fuzz}
build=$RVPA_BUILD

command -v clang >/dev/null ||
    die "clang not found: run scripts/install-deps.sh (clang, libclang-rt-dev)"
mkdir -p "$work"

cflags=(-g -O1 -fsanitize=fuzzer,address,undefined
        -fno-sanitize-recover=undefined
        -I"$root/tools/host-shim" -I"$root/tests-unit"
        -I"$root/hw-riscv-trace/codec/include" -I"$root/target-riscv"
        -I"$root/tools")

build_target() {
    case $1 in
    decoder)
        clang "${cflags[@]}" "$root/tests-unit/fuzz-decoder.c" \
            "$root/hw-riscv-trace/codec/etrace-packet.c" \
            "$root/hw-riscv-trace/codec/etrace-data.c" \
            "$root/hw-riscv-trace/codec/etrace-decoder.c" \
            "$root/hw-riscv-trace/codec/etrace-dec-data.c" \
            "$root/hw-riscv-trace/codec/etrace-deframe.c" \
            "$root/target-riscv/insn_class.c" -o "$work/fuzz-decoder" ;;
    elf)
        clang "${cflags[@]}" "$root/tests-unit/fuzz-elf.c" \
            "$root/tools/rvtrace-image.c" -o "$work/fuzz-elf" ;;
    ntrace)
        clang "${cflags[@]}" "$root/tests-unit/fuzz-ntrace.c" \
            "$root/hw-riscv-trace/codec/ntrace-message.c" \
            "$root/hw-riscv-trace/codec/ntrace-decoder.c" \
            "$root/target-riscv/insn_class.c" -o "$work/fuzz-ntrace" ;;
    *) die "unknown target $1 (decoder, elf or ntrace)" ;;
    esac
}

# Seeds: valid traces of the harness image, the regression inputs.
seed_target() {
    local corpus=$work/corpus-$1
    mkdir -p "$corpus"
    case $1 in
    decoder)
        if [ -x "$build/test-decoder-corpus" ]; then
            "$build/test-decoder-corpus" --write-seeds "$corpus"
        else
            info "warning: no $build/test-decoder-corpus: no generated seeds"
        fi
        cp "$root"/tests-unit/decoder-corpus/*.bin "$corpus/" 2>/dev/null || true
        ;;
    elf)
        find "$build" -name '*.elf' -size -256k -exec cp {} "$corpus/" \; \
            2>/dev/null || true
        cp "$root"/tests-unit/elf-corpus/*.bin "$corpus/" 2>/dev/null || true
        ;;
    ntrace)
        cp "$root"/tests-unit/ntrace-corpus/*.bin "$corpus/" 2>/dev/null ||
            true
        ;;
    esac
}

# Keep what libFuzzer found as regression inputs: crashes and leaks
# minimised (crash-*.bin), inputs that ran into the timeout as they are
# (hang-*.bin: minimising them would cost a timeout per try).
keep_findings() {
    local name=$1 dest=$root/tests-unit/$2 f min kind
    mkdir -p "$dest"
    for f in "$work/$name"/crash-* "$work/$name"/leak-* \
             "$work/$name"/oom-* "$work/$name"/timeout-*; do
        [ -e "$f" ] || continue
        case $(basename "$f") in
        timeout-*) kind=hang min=$f ;;
        *)
            kind=crash min=$f.min
            "$work/fuzz-$name" -minimize_crash=1 -runs=1000 -timeout=10 \
                -exact_artifact_path="$min" "$f" >/dev/null 2>&1 || true
            [ -s "$min" ] || min=$f
            ;;
        esac
        cp "$min" "$dest/$kind-$(sha1sum "$min" | cut -c1-12).bin"
        info "$name: kept $(basename "$f") as $dest/$kind-*.bin"
        found=1
    done
}

found=0
for t in "${targets[@]}"; do
    info "building the $t fuzzer"
    build_target "$t"
    seed_target "$t"
    rm -rf "${work:?}/$t"
    mkdir -p "$work/$t"
    info "fuzzing $t for $seconds s"
    # -timeout: an input that takes longer is a hang (the decoder must
    # give up on paths that never reach the reported address)
    (cd "$work/$t" &&
     "$work/fuzz-$t" -max_total_time="$seconds" -timeout=10 \
         -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
         -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
         "$work/corpus-$t" 2>&1 | tail -20) || true
    case $t in
    decoder) keep_findings decoder decoder-corpus ;;
    elf) keep_findings elf elf-corpus ;;
    ntrace) keep_findings ntrace ntrace-corpus ;;
    esac
done
if [ $found = 1 ]; then
    info "warning: findings were added to tests-unit/*-corpus: see meson test --suite unit"
    exit 1
fi
info "no crash, leak or timeout found"

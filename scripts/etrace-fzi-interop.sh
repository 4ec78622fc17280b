#!/bin/bash
# Decode this QEMU's E-trace with a decoder written elsewhere that, unlike
# the task group's reference models (scripts/etrace-interop.sh), follows
# implicit return and sequentially inferable jumps: the riscv-etrace Rust
# crate of FZI (fzi-forschungszentrum-informatik/riscv-etrace, a packet
# decoder and the spec's tracer), and compare the instructions it
# rebuilds with rvtrace-decode's, which the e2e suite checks against
# QEMU's own logs.
#
#   scripts/etrace-fzi-interop.sh RISCV_ETRACE
#
# RISCV_ETRACE is a checkout (or bare git directory) of the crate; it is
# copied into a temporary directory and built there with a small driver
# of this project (scripts/etrace-fzi/main.rs), nothing of it enters the
# project.  Needs cargo and rustc 1.85 or later (the crate is Rust 2024:
# Debian 12's rustc 1.63 is too old; rustup's is used where it is on
# PATH) and no crates.io: the crate's optional dependencies stay off.
#
# Each case runs an e2e guest (tests-e2e/run-e2e.py --keep) with the 2.0
# packet layout (riscv-trace-encoder.arch=1, the crate's), then the driver
# reads the RAM sink's bytes: encapsulated packets (flow 0 instruction
# trace, source id of 0 bits, no trace type field), this encoder's support
# options (hw-riscv-trace/codec/include/etrace.h: the crate reads them
# through a trace unit of the driver's), the discovery registers'
# parameters, and the ELF's loadable segments.  The crate's tracer refuses
# implicit exception, branch prediction and the jump target cache, so the
# cases use the other modes, and none has traps or resyncs inside calls:
# there the crate departs from the spec's pseudo-code, which in one case
# departs from the spec's text (docs/decoder.rst, "Another decoder:
# FZI's riscv-etrace").  Needs a built project (build/, qemu/build).
set -euo pipefail

. "$(dirname "$0")/lib.sh"

[ $# = 1 ] || die "usage: $0 RISCV_ETRACE (a checkout or git directory)"
repo=$1
command -v cargo >/dev/null || die "no cargo on PATH (rustc 1.85 or later)"
work=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

mkdir -p "$work/driver/src"
copy_repo_folder "$repo" . src/tracer.rs "$work/crate" ||
    die "no riscv-etrace crate in $repo"
cp "$RVPA_ROOT/scripts/etrace-fzi/main.rs" "$work/driver/src/main.rs"
cat > "$work/driver/Cargo.toml" <<EOT
[package]
name = "rvpa-etrace-fzi"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
riscv-etrace = { path = "$work/crate", features = ["alloc"] }
EOT
info "building the driver with $(cargo --version)"
CARGO_TARGET_DIR=$RVPA_BUILD/etrace-fzi cargo build --quiet --release \
    --offline --manifest-path "$work/driver/Cargo.toml" ||
    die "the driver does not build (rustc 1.85 or later?)"
driver=$RVPA_BUILD/etrace-fzi/release/rvpa-etrace-fzi

# trTeInstFeatures (docs/rvtrace.rst): 1 full address, 4 sijump,
# 72 implicit return with the call counter, 200 with the return stack
cases=(
    "coremark workloads 64 work=coremark_iters=2_trace=0"
    "sort-sijump workloads 64 work=sort_iters=1_trace=4"
    "sort-full-address workloads 64 work=sort_iters=1_trace=1"
    "recursion-ir-counter workloads 64 work=recursion_iters=2_trace=72"
    "recursion-ir-stack workloads 64 work=recursion_iters=2_trace=200"
    "coremark-ir-sijump workloads 64 work=coremark_iters=2_trace=204"
)
failed=0
for c in "${cases[@]}"; do
    read -r name guest xlen append <<< "$c"
    elf=$RVPA_BUILD/tests-e2e/e2e-$guest-rv$xlen.elf
    dir=$work/$name
    if ! interop_e2e "$dir" "$work/$name.log" "$elf" "$xlen" "$append" \
            --qemu-arg=-global --qemu-arg=riscv-trace-encoder.arch=1 \
            --decode-arg=--arch --decode-arg=2.0; then
        echo "$name: the e2e run failed"
        tail -5 "$work/$name.log"
        failed=1
        continue
    fi
    grep '^0x' "$dir/decoded-hart0.txt" | awk '{ print $1 }' > "$dir/ours.txt"
    if ! "$driver" "$xlen" "$dir/trace-hart0.bin" "$elf" \
            > "$dir/fzi.txt" 2> "$dir/fzi.log"; then
        echo "$name: the crate stopped: $(tail -1 "$dir/fzi.log")"
        failed=1
    fi
    n=$(wc -l < "$dir/fzi.txt")
    if cmp -s "$dir/fzi.txt" "$dir/ours.txt" && [ "$n" -gt 0 ]; then
        echo "$name: $n instructions from the crate and rvtrace-decode: identical"
    else
        echo "$name: $n instructions from the crate, $(wc -l < "$dir/ours.txt")" \
             "from rvtrace-decode: DIFFERENT"
        diff "$dir/fzi.txt" "$dir/ours.txt" | head -3 || true
        failed=1
    fi
done
[ $failed = 0 ] || die "the crate disagreed on some cases"
info "the riscv-etrace crate decodes every case as rvtrace-decode does"

/*
 * libFuzzer harness of the trace decoder (scripts/fuzz-decoder.sh): an
 * input is a configuration and a trace (tests-unit/fuzz-decoder.h),
 * decoded over the fixed image with a budget of FUZZ_BUDGET instructions
 * (so that a timeout is a decoder that stops making progress, not a long
 * but valid run); the packet parser also runs at every offset of the
 * trace.  Built with clang -fsanitize=fuzzer,address,undefined.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "fuzz-decoder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzConfig c;
    FuzzResult r;

    if (!fuzz_decode(data, size, &r, FUZZ_BUDGET, 0) ||
        !fuzz_config(data, size, &c)) {
        return 0;
    }
    for (size_t i = FUZZ_HEADER; i < size; i++) {
        ETracePacket pkt;
        const char *err;

        etrace_packet_unpack(&c.params, &c.options, data + i, size - i,
                             &pkt, &err);
    }
    return 0;
}

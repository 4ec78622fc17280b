/*
 * An N-trace fuzz input, shared by the fuzzer (fuzz-ntrace.c) and the
 * regression test of what it found (test-ntrace.c, tests-unit/
 * ntrace-corpus): the first byte chooses the SRC width (mod 13), RV32
 * (bit 7), implicit return (bit 6) and a stream that may start inside a
 * message (bit 5); the rest is the byte stream, decoded over the
 * E-trace decoder harness's image (fuzz-decoder.h), a byte at a time
 * until FUZZ_BUDGET instructions were decoded (each message may follow
 * as many), so that a timeout is a decoder that stops making progress,
 * not a long but valid run.  The message parser also runs at every
 * offset.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FUZZ_NTRACE_H
#define FUZZ_NTRACE_H

#include "fuzz-decoder.h"
#include "ntrace-decoder.h"

static inline void fuzz_ntrace_count(void *opaque, const ETraceDecInsn *insn)
{
    (void)insn;
    (*(uint64_t *)opaque)++;
}

/* Decode the input; returns the instructions it decoded. */
static inline uint64_t fuzz_ntrace_run(const uint8_t *data, size_t size)
{
    NTraceDecoderConfig cfg = {
        .read_parcel = fuzz_read_parcel, .insn = fuzz_ntrace_count,
        .max_walk = FUZZ_BUDGET,
    };
    uint64_t insns = 0;
    NTraceDecoder *d;

    if (size < 1) {
        return 0;
    }
    cfg.params.src_bits = data[0] % 13;
    cfg.params.xlen = data[0] & 0x80 ? 32 : 64;
    cfg.implicit_return = data[0] & 0x40;
    cfg.find_start = data[0] & 0x20;
    cfg.opaque = &insns;
    d = ntrace_decoder_new(&cfg);
    if (!d) {
        return 0;
    }
    for (size_t i = 1; i < size && insns < FUZZ_BUDGET; i++) {
        ntrace_decoder_feed(d, data + i, 1);
    }
    ntrace_decoder_finish(d);
    ntrace_decoder_free(d);
    for (size_t i = 1; i < size; i++) {
        NTraceMessage m;
        const char *err;

        ntrace_message_unpack(&cfg.params, data + i, size - i, &m, &err);
    }
    return insns;
}

#endif /* FUZZ_NTRACE_H */

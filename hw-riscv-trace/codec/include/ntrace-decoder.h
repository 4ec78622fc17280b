/*
 * N-trace decoder: rebuild the executed instruction sequence from
 * N-trace 1.0 messages
 *
 * The decoder the N-trace spec describes ("I-CNT details", "HIST field
 * generation"): each message's I-CNT half-words are followed through the
 * program image from the last known address, conditional branches taken
 * as HIST says (HTM) or, in BTM, the last one of a DirectBranch taken and
 * the others not; an uninferable jump or a trap ends the walk and the
 * message's address follows.  ResourceFull I-CNT adds to the next
 * message's count; ResourceFull HIST is followed until its last branch.
 * With implicit return, a return inside I-CNT goes to the address its
 * call pushed (the same call stack as the encoder, etrace-model.h).
 *
 * Results leave through the E-trace decoder's callbacks and elements
 * (etrace-decoder.h), so that tools print both formats alike.  Host only.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_NTRACE_DECODER_H
#define RISCV_NTRACE_DECODER_H

#include "ntrace.h"
#include "etrace-decoder.h"

typedef struct NTraceDecoder NTraceDecoder;

typedef struct NTraceDecoderConfig {
    NTraceParams params;
    /* The encoder's trTeInstEnImplicitReturn (not in the stream). */
    bool implicit_return;
    /* The hart's RISCV_INSN_ISA_* extensions (etrace-decoder.h) */
    unsigned isa;
    /* Only messages whose SRC is this (when params.src_bits > 0). */
    unsigned src;
    /*
     * The stream may start inside a message (a wrapped buffer): the bytes
     * up to the first message end are skipped.
     */
    bool find_start;
    ETraceReadParcelFn *read_parcel;    /* required */
    ETraceInsnFn *insn;                 /* may be NULL */
    ETraceEventFn *event;               /* may be NULL */
    /*
     * Instructions followed for one message (all its repeats included)
     * before the decoder gives up: bounds the work of hostile input; 0
     * picks 2^27.
     */
    uint64_t max_walk;
    void *opaque;
} NTraceDecoderConfig;

typedef struct NTraceDecStats {
    uint64_t messages;          /* decoded (of this source) */
    uint64_t bytes;             /* consumed, idle included */
    uint64_t skipped;           /* before the first message (find_start) */
    uint64_t instructions;      /* reconstructed */
    uint64_t other_sources;     /* messages of other sources */
    uint64_t errors;
} NTraceDecStats;

NTraceDecoder *ntrace_decoder_new(const NTraceDecoderConfig *cfg);
void ntrace_decoder_free(NTraceDecoder *d);

/*
 * Decode len more bytes of the stream (a message may be split across
 * calls).  Returns 0, or -1 if an error was found in these bytes (an
 * ERROR event); decoding goes on from the next sync message.
 */
int ntrace_decoder_feed(NTraceDecoder *d, const uint8_t *bytes, size_t len);
/* End of the stream: an unfinished message is an error. */
int ntrace_decoder_finish(NTraceDecoder *d);
/* Decode one already unpacked message (tests). */
int ntrace_decoder_message(NTraceDecoder *d, const NTraceMessage *m);

const char *ntrace_decoder_error(const NTraceDecoder *d, uint64_t *offset,
                                 uint64_t *message);
void ntrace_decoder_stats(const NTraceDecoder *d, NTraceDecStats *s);

#endif /* RISCV_NTRACE_DECODER_H */

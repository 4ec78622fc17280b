/*
 * RISC-V E-trace: the encapsulation of a byte stream into frames
 * (chapter 6 of the E-trace draft), undone as the bytes arrive.
 *
 * The one deframer of the host side: the decoder library feeds it, the
 * decoder CLI reads files through it.  It cuts the stream into whole
 * frames (header, source, optional timestamp, payload), skips padding,
 * can start inside a packet by searching for a boundary, and reports a
 * header that cannot start a frame: the framing is lost there, and it
 * either stops or searches for the next boundary.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_ETRACE_DEFRAME_H
#define RISCV_ETRACE_DEFRAME_H

#include "etrace.h"

/* One whole frame of the stream. */
typedef struct ETraceFrame {
    const uint8_t *bytes;       /* from its header */
    unsigned len;
    unsigned source;            /* the SrcID field, all its bits */
    uint64_t offset;            /* of its header in the stream */
    uint64_t number;            /* frames before it */
} ETraceFrame;

typedef struct ETraceDeframerOps {
    void (*frame)(void *opaque, const ETraceFrame *f);
    /* a header byte that starts no frame, at offset (frames before it) */
    void (*lost)(void *opaque, uint64_t offset, uint64_t number,
                 uint8_t header);
} ETraceDeframerOps;

/* Flags of etrace_deframer_new() */
#define ETRACE_DEFRAME_SEARCH   (1u << 0)   /* start with a boundary search */
#define ETRACE_DEFRAME_RESYNC   (1u << 1)   /* search again, framing lost */

/* The bytes a boundary search looks at (a search needs that many or EOF). */
#define ETRACE_DEFRAME_WINDOW   (2u << 20)

/* How the stream ended (etrace_deframer_finish). */
typedef enum ETraceDeframeEnd {
    ETRACE_DEFRAME_END_OK,
    ETRACE_DEFRAME_END_TRUNCATED,       /* a frame cut by the end */
    ETRACE_DEFRAME_END_NO_BOUNDARY,     /* a search found no boundary */
    ETRACE_DEFRAME_END_STOPPED,         /* lost framing, or a consumer stop */
} ETraceDeframeEnd;

typedef struct ETraceDeframeStats {
    uint64_t offset;            /* bytes consumed: frames, padding, skipped */
    uint64_t frames;
    uint64_t padding;           /* zero bytes where a header was due */
    uint64_t skipped;           /* bytes dropped by boundary searches */
} ETraceDeframeStats;

typedef struct ETraceDeframer ETraceDeframer;

/*
 * p: the encapsulation's parameters (source and timestamp bytes); o: the
 * packet layout a boundary search tries packets with.  Both are copied.
 */
ETraceDeframer *etrace_deframer_new(const ETraceParams *p,
                                    const ETraceOptions *o, unsigned flags,
                                    const ETraceDeframerOps *ops,
                                    void *opaque);
void etrace_deframer_free(ETraceDeframer *df);

/* More bytes: the whole frames among them are reported before it returns. */
void etrace_deframer_feed(ETraceDeframer *df, const uint8_t *bytes,
                          size_t len);
/* The end of the stream. */
ETraceDeframeEnd etrace_deframer_finish(ETraceDeframer *df);
/* From a callback: no more frames (the rest of the stream is ignored). */
void etrace_deframer_stop(ETraceDeframer *df);
/* Whether it stopped (lost framing without RESYNC, or a stop). */
bool etrace_deframer_stopped(const ETraceDeframer *df);
const ETraceDeframeStats *etrace_deframer_stats(const ETraceDeframer *df);

#endif /* RISCV_ETRACE_DEFRAME_H */

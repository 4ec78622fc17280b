/*
 * RISC-V E-trace: one stream, several sources (harts), a decoder each
 *
 * The frames of an encapsulated stream (etrace-deframe.h) carry a source
 * index; this routes each to a decoder of its own, made the first time
 * the source appears, unpacks its packet, and starts that decoder afresh
 * when a packet does not unpack or the framing was lost.  Its statistics
 * add up over such restarts.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_ETRACE_DEMUX_H
#define RISCV_ETRACE_DEMUX_H

#include "etrace-decoder.h"
#include "etrace-deframe.h"

typedef struct ETraceDemuxOps {
    /*
     * Source id appears: fill in its decoder's configuration (callbacks,
     * opaque; params and options come preset).  Returns false to leave
     * the source out: its frames are then only counted.
     */
    bool (*source)(void *opaque, unsigned id, ETraceDecoderConfig *cfg);
    /* A packet of a source, unpacked, before its decoder gets it. */
    void (*packet)(void *opaque, unsigned id, const ETraceFrame *f,
                   const ETracePacket *pkt);
    /* A frame of a source that does not unpack as a packet. */
    void (*bad_packet)(void *opaque, unsigned id, const ETraceFrame *f,
                       const char *err);
} ETraceDemuxOps;

typedef struct ETraceDemux ETraceDemux;

/* p, o: the stream's parameters and the packet layout to start with. */
ETraceDemux *etrace_demux_new(const ETraceParams *p, const ETraceOptions *o,
                              const ETraceDemuxOps *ops, void *opaque);
void etrace_demux_free(ETraceDemux *dm);

/*
 * A frame (from the deframer).  Returns false if its source could not be
 * given a decoder (out of memory, parameters the decoder refuses).
 */
bool etrace_demux_frame(ETraceDemux *dm, const ETraceFrame *f);
/* The framing was lost: every decoder waits for its next sync. */
void etrace_demux_restart_all(ETraceDemux *dm);

/* Whether source id has a decoder, and its statistics over restarts. */
bool etrace_demux_has(const ETraceDemux *dm, unsigned id);
void etrace_demux_stats(const ETraceDemux *dm, unsigned id,
                        ETraceDecStats *st);
/* Bytes of frames of sources left out. */
uint64_t etrace_demux_other_bytes(const ETraceDemux *dm);

#endif /* RISCV_ETRACE_DEMUX_H */

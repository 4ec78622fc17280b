/*
 * RISC-V E-trace: one stream, several sources, a decoder each
 *
 * See etrace-demux.h.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "etrace-demux.h"

typedef struct DemuxSource {
    bool seen;                  /* the ops have been asked */
    ETraceDecoder *dec;         /* NULL: left out */
    ETraceDecoderConfig cfg;
    ETraceDecStats before;      /* of the decoders it replaced */
} DemuxSource;

struct ETraceDemux {
    ETraceParams p;
    ETraceOptions o;
    ETraceDemuxOps ops;
    void *opaque;
    unsigned nsources;          /* 2^src_bits */
    DemuxSource *src;
    uint64_t other_bytes;
};

ETraceDemux *etrace_demux_new(const ETraceParams *p, const ETraceOptions *o,
                              const ETraceDemuxOps *ops, void *opaque)
{
    ETraceDemux *dm = calloc(1, sizeof(*dm));

    if (!dm) {
        return NULL;
    }
    dm->p = *p;
    dm->o = *o;
    dm->ops = *ops;
    dm->opaque = opaque;
    dm->nsources = 1u << p->src_bits;
    dm->src = calloc(dm->nsources, sizeof(*dm->src));
    if (!dm->src) {
        free(dm);
        return NULL;
    }
    return dm;
}

void etrace_demux_free(ETraceDemux *dm)
{
    if (!dm) {
        return;
    }
    for (unsigned i = 0; i < dm->nsources; i++) {
        etrace_decoder_free(dm->src[i].dec);
    }
    free(dm->src);
    free(dm);
}

static void stats_add(ETraceDecStats *sum, const ETraceDecStats *st)
{
    for (unsigned i = 0; i < 4; i++) {
        sum->packets[i] += st->packets[i];
        sum->f3_subformats[i] += st->f3_subformats[i];
    }
    sum->f0_subformats[0] += st->f0_subformats[0];
    sum->f0_subformats[1] += st->f0_subformats[1];
    sum->bytes += st->bytes;
    sum->instructions += st->instructions;
    sum->skipped += st->skipped;
    sum->errors += st->errors;
}

/* A new decoder for the source, its statistics kept. */
static bool demux_restart(DemuxSource *s)
{
    ETraceDecStats st;

    if (s->dec) {
        etrace_decoder_stats(s->dec, &st);
        stats_add(&s->before, &st);
        /* the layout of the last support packet stays in force */
        s->cfg.options = *etrace_decoder_options(s->dec);
        etrace_decoder_free(s->dec);
    }
    s->dec = etrace_decoder_new(&s->cfg);
    return s->dec != NULL;
}

/* The source's entry, its decoder made if it is wanted; NULL if not. */
static DemuxSource *demux_source(ETraceDemux *dm, unsigned id, bool *ok)
{
    DemuxSource *s = &dm->src[id];

    *ok = true;
    if (!s->seen) {
        s->seen = true;
        s->cfg = (ETraceDecoderConfig) { .params = dm->p, .options = dm->o };
        if (!dm->ops.source(dm->opaque, id, &s->cfg)) {
            return NULL;
        }
        *ok = demux_restart(s);
    }
    return s->dec ? s : NULL;
}

bool etrace_demux_frame(ETraceDemux *dm, const ETraceFrame *f)
{
    unsigned id = f->source & (dm->nsources - 1);
    const char *err = "bad packet";
    ETracePacket pkt;
    DemuxSource *s;
    bool ok;

    s = demux_source(dm, id, &ok);
    if (!s) {
        dm->other_bytes += f->len;
        return ok;
    }
    if (etrace_packet_unpack(&dm->p, etrace_decoder_options(s->dec),
                             f->bytes, f->len, &pkt, &err) != (int)f->len) {
        if (dm->ops.bad_packet) {
            dm->ops.bad_packet(dm->opaque, id, f, err);
        }
        /* the decoder cannot know a packet was lost: start it afresh */
        return demux_restart(s);
    }
    if (dm->ops.packet) {
        dm->ops.packet(dm->opaque, id, f, &pkt);
    }
    etrace_decoder_packet(s->dec, &pkt);
    return true;
}

void etrace_demux_restart_all(ETraceDemux *dm)
{
    for (unsigned i = 0; i < dm->nsources; i++) {
        if (dm->src[i].dec) {
            demux_restart(&dm->src[i]);
        }
    }
}

bool etrace_demux_has(const ETraceDemux *dm, unsigned id)
{
    return id < dm->nsources && dm->src[id].dec;
}

void etrace_demux_stats(const ETraceDemux *dm, unsigned id,
                        ETraceDecStats *st)
{
    const DemuxSource *s = &dm->src[id];

    *st = s->before;
    if (s->dec) {
        ETraceDecStats now;

        etrace_decoder_stats(s->dec, &now);
        stats_add(st, &now);
    }
}

uint64_t etrace_demux_other_bytes(const ETraceDemux *dm)
{
    return dm->other_bytes;
}

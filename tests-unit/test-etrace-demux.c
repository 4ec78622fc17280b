/*
 * Unit tests of the per-source demultiplexer (etrace-demux.h): frames of
 * three sources go to three decoders; a source left out is only counted;
 * a frame that is not a packet is reported and restarts its source's
 * decoder, whose statistics go on adding up; a lost framing restarts all.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <glib.h>
#include "etrace.h"
#include "etrace-demux.h"

#define NSRC 4

typedef struct Seen {
    unsigned sources_asked;
    unsigned packets[NSRC], bad[NSRC];
    unsigned left_out;          /* this source is refused */
} Seen;

/* The decoder reads no code: every packet here is a sync of format 3. */
static bool no_code(void *opaque, uint64_t addr, uint16_t *parcel)
{
    (void)opaque;
    (void)addr;
    *parcel = 0x0001;           /* c.nop */
    return true;
}

static bool on_source(void *opaque, unsigned id, ETraceDecoderConfig *cfg)
{
    Seen *s = opaque;

    s->sources_asked++;
    cfg->read_parcel = no_code;
    return id != s->left_out;
}

static void on_packet(void *opaque, unsigned id, const ETraceFrame *f,
                      const ETracePacket *pkt)
{
    Seen *s = opaque;

    g_assert_cmpuint(pkt->format, ==, 3);
    g_assert_cmpuint(f->source, ==, id);
    s->packets[id]++;
}

static void on_bad(void *opaque, unsigned id, const ETraceFrame *f,
                   const char *err)
{
    Seen *s = opaque;

    g_assert_cmpuint(f->source, ==, id);
    g_assert_nonnull(err);
    s->bad[id]++;
}

static const ETraceDemuxOps ops = {
    .source = on_source, .packet = on_packet, .bad_packet = on_bad,
};

/* A sync packet (format 3.0) of source src, packed into a frame. */
static size_t sync_frame(const ETraceParams *base, unsigned src,
                         uint8_t *buf)
{
    ETraceParams p = *base;
    ETracePacket pkt = {
        .format = 3, .subformat = 0, .privilege = 3, .address = 0x80000000,
    };

    p.src_id = src;
    return etrace_packet_pack(&p, NULL, &pkt, buf);
}

static void test_sources(void)
{
    ETraceParams p;
    ETraceOptions o = { 0 };
    Seen seen = { .left_out = 2 };
    ETraceDemux *dm;
    uint8_t buf[ETRACE_MAX_PACKET];
    uint64_t other = 0;

    etrace_params_default(&p, 64);
    p.src_bits = 2;
    dm = etrace_demux_new(&p, &o, &ops, &seen);
    g_assert_nonnull(dm);
    for (unsigned i = 0; i < 30; i++) {
        unsigned src = i % 3;
        ETraceFrame f = { .bytes = buf, .source = src, .number = i };

        f.len = sync_frame(&p, src, buf);
        if (src == seen.left_out) {
            other += f.len;
        }
        g_assert_true(etrace_demux_frame(dm, &f));
    }
    /* each source is asked once */
    g_assert_cmpuint(seen.sources_asked, ==, 3);
    g_assert_cmpuint(seen.packets[0], ==, 10);
    g_assert_cmpuint(seen.packets[1], ==, 10);
    g_assert_cmpuint(seen.packets[2], ==, 0);
    g_assert_true(etrace_demux_has(dm, 0));
    g_assert_false(etrace_demux_has(dm, 2));
    g_assert_false(etrace_demux_has(dm, 3));
    g_assert_cmpuint(etrace_demux_other_bytes(dm), ==, other);
    etrace_demux_free(dm);
}

static void test_bad_packet_restarts(void)
{
    ETraceParams p;
    ETraceOptions o = { 0 };
    Seen seen = { .left_out = NSRC };
    ETraceDemux *dm;
    ETraceDecStats st;
    uint8_t buf[ETRACE_MAX_PACKET];
    ETraceFrame f = { .bytes = buf, .source = 1 };

    etrace_params_default(&p, 64);
    p.src_bits = 1;
    dm = etrace_demux_new(&p, &o, &ops, &seen);
    f.len = sync_frame(&p, 1, buf);
    g_assert_true(etrace_demux_frame(dm, &f));
    g_assert_true(etrace_demux_frame(dm, &f));
    /* the same frame cut short: it does not unpack */
    f.len = 2;
    buf[0] = (buf[0] & ~0x1f) | 1;          /* payload length 1 */
    g_assert_true(etrace_demux_frame(dm, &f));
    g_assert_cmpuint(seen.bad[1], ==, 1);
    f.len = sync_frame(&p, 1, buf);
    g_assert_true(etrace_demux_frame(dm, &f));
    etrace_demux_restart_all(dm);
    g_assert_true(etrace_demux_frame(dm, &f));
    /* four packets decoded over three decoders */
    etrace_demux_stats(dm, 1, &st);
    g_assert_cmpuint(st.packets[3], ==, 4);
    g_assert_cmpuint(st.f3_subformats[0], ==, 4);
    etrace_demux_free(dm);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/etrace-demux/sources", test_sources);
    g_test_add_func("/etrace-demux/bad-packet-restarts",
                    test_bad_packet_restarts);
    return g_test_run();
}

/*
 * Unit tests of the E-trace deframer (etrace-deframe.h): the frames of a
 * stream whatever pieces it arrives in, padding, two sources, a boundary
 * search from inside a packet, a header that starts no frame (stop, or
 * search again), the ends of a stream, and a consumer that stops.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <glib.h>
#include "etrace.h"
#include "etrace-deframe.h"

#define NPACKETS 200

typedef struct Seen {
    GArray *frames;         /* ETraceFrame, bytes not kept */
    GArray *lost;           /* uint64_t offsets */
    ETraceDeframer *df;
    unsigned stop_after;    /* 0: never */
} Seen;

static void on_frame(void *opaque, const ETraceFrame *f)
{
    Seen *s = opaque;
    ETraceFrame copy = *f;

    copy.bytes = NULL;
    g_array_append_val(s->frames, copy);
    if (s->stop_after && s->frames->len == s->stop_after) {
        etrace_deframer_stop(s->df);
    }
}

static void on_lost(void *opaque, uint64_t offset, uint64_t number,
                    uint8_t header)
{
    Seen *s = opaque;

    g_assert_cmpuint(number, ==, s->frames->len);
    g_assert_cmpuint(header & 0x1f, ==, 0);    /* no payload length */
    g_array_append_val(s->lost, offset);
}

static const ETraceDeframerOps ops = { .frame = on_frame, .lost = on_lost };

static ETraceParams params(unsigned src_bits)
{
    ETraceParams p;

    etrace_params_default(&p, 64);
    p.src_bits = src_bits;
    return p;
}

/*
 * A stream of format 2 packets (address i * 4), source i % 2 if there are
 * source bits, with a zero byte of padding after every seventh; offsets[]
 * gets each packet's.
 */
static GByteArray *stream(const ETraceParams *base, uint64_t *offsets)
{
    GByteArray *b = g_byte_array_new();

    for (unsigned i = 0; i < NPACKETS; i++) {
        ETraceParams p = *base;
        ETracePacket pkt = { .format = 2, .address = i * 4 };
        uint8_t buf[ETRACE_MAX_PACKET];
        size_t n;

        p.src_id = p.src_bits ? i % 2 : 0;
        n = etrace_packet_pack(&p, NULL, &pkt, buf);
        g_assert_cmpuint(n, >, 0);
        offsets[i] = b->len;
        g_byte_array_append(b, buf, n);
        if (i % 7 == 6) {
            g_byte_array_append(b, (const uint8_t *)"", 1);
        }
    }
    return b;
}

static void seen_init(Seen *s)
{
    s->frames = g_array_new(false, false, sizeof(ETraceFrame));
    s->lost = g_array_new(false, false, sizeof(uint64_t));
    s->stop_after = 0;
}

static void seen_free(Seen *s)
{
    g_array_free(s->frames, true);
    g_array_free(s->lost, true);
    etrace_deframer_free(s->df);
}

/* Feed the stream in pieces of step bytes (0: whole). */
static ETraceDeframeEnd run(Seen *s, const ETraceParams *p, unsigned flags,
                            const uint8_t *bytes, size_t len, size_t step)
{
    seen_init(s);
    s->df = etrace_deframer_new(p, NULL, flags, &ops, s);
    g_assert_nonnull(s->df);
    for (size_t at = 0; at < len; at += step ? step : len) {
        size_t n = step && step < len - at ? step : len - at;

        etrace_deframer_feed(s->df, bytes + at, n);
    }
    return etrace_deframer_finish(s->df);
}

/*
 * Frames from index from on are the stream's last packets (their offsets
 * less base), beginning after packet after: a search found the framing.
 */
static void check_suffix(const Seen *s, unsigned from, const uint64_t *offsets,
                         uint64_t base, unsigned after)
{
    unsigned k = NPACKETS - (s->frames->len - from);

    g_assert_cmpuint(s->frames->len, >, from + NPACKETS / 2);
    g_assert_cmpuint(k, >, after);
    for (unsigned i = from; i < s->frames->len; i++, k++) {
        g_assert_cmpuint(g_array_index(s->frames, ETraceFrame, i).offset, ==,
                         offsets[k] - base);
    }
}

static void test_pieces(void)
{
    ETraceParams p = params(8);
    uint64_t offsets[NPACKETS];
    g_autoptr(GByteArray) b = stream(&p, offsets);
    static const size_t steps[] = { 0, 1, 2, 3, 5, 7, 33, 34, 35, 1000 };

    for (unsigned k = 0; k < G_N_ELEMENTS(steps); k++) {
        Seen s;
        const ETraceDeframeStats *st;

        g_assert_cmpint(run(&s, &p, 0, b->data, b->len, steps[k]), ==,
                        ETRACE_DEFRAME_END_OK);
        g_assert_cmpuint(s.frames->len, ==, NPACKETS);
        for (unsigned i = 0; i < NPACKETS; i++) {
            ETraceFrame *f = &g_array_index(s.frames, ETraceFrame, i);

            g_assert_cmpuint(f->offset, ==, offsets[i]);
            g_assert_cmpuint(f->number, ==, i);
            g_assert_cmpuint(f->source, ==, i % 2);
        }
        st = etrace_deframer_stats(s.df);
        g_assert_cmpuint(st->offset, ==, b->len);
        g_assert_cmpuint(st->frames, ==, NPACKETS);
        g_assert_cmpuint(st->padding, ==, NPACKETS / 7);
        g_assert_cmpuint(st->skipped, ==, 0);
        seen_free(&s);
    }
}

static void test_truncated(void)
{
    ETraceParams p = params(0);
    uint64_t offsets[NPACKETS];
    g_autoptr(GByteArray) b = stream(&p, offsets);
    Seen s;

    /* the last packet without its last byte */
    g_assert_cmpint(run(&s, &p, 0, b->data, b->len - 1, 4), ==,
                    ETRACE_DEFRAME_END_TRUNCATED);
    g_assert_cmpuint(s.frames->len, ==, NPACKETS - 1);
    g_assert_cmpuint(etrace_deframer_stats(s.df)->offset, ==,
                     offsets[NPACKETS - 1]);
    seen_free(&s);
}

static void test_lost(void)
{
    ETraceParams p = params(0);
    uint64_t offsets[NPACKETS];
    g_autoptr(GByteArray) b = stream(&p, offsets);
    Seen s;

    /* packet 50's header: flow bits, no payload length */
    b->data[offsets[50]] = 0x20;
    g_assert_cmpint(run(&s, &p, 0, b->data, b->len, 9), ==,
                    ETRACE_DEFRAME_END_STOPPED);
    g_assert_cmpuint(s.frames->len, ==, 50);
    g_assert_cmpuint(s.lost->len, ==, 1);
    g_assert_cmpuint(g_array_index(s.lost, uint64_t, 0), ==, offsets[50]);
    g_assert_true(etrace_deframer_stopped(s.df));
    seen_free(&s);

    /*
     * With RESYNC: the search finds a true boundary after it (where all
     * the framings it tries meet), and every packet from there on.
     */
    g_assert_cmpint(run(&s, &p, ETRACE_DEFRAME_RESYNC, b->data, b->len, 9),
                    ==, ETRACE_DEFRAME_END_OK);
    g_assert_cmpuint(s.lost->len, ==, 1);
    check_suffix(&s, 50, offsets, 0, 50);
    seen_free(&s);
}

static void test_search(void)
{
    ETraceParams p = params(0);
    uint64_t offsets[NPACKETS];
    g_autoptr(GByteArray) b = stream(&p, offsets);
    g_autoptr(GByteArray) noise = g_byte_array_new();
    Seen s;

    /* from the middle of packet 10 */
    g_assert_cmpint(run(&s, &p, ETRACE_DEFRAME_SEARCH,
                        b->data + offsets[10] + 1,
                        b->len - offsets[10] - 1, 64), ==,
                    ETRACE_DEFRAME_END_OK);
    check_suffix(&s, 0, offsets, offsets[10] + 1, 10);
    g_assert_cmpuint(etrace_deframer_stats(s.df)->skipped, ==,
                     g_array_index(s.frames, ETraceFrame, 0).offset);
    seen_free(&s);

    /* headers that start no frame everywhere: no boundary */
    for (unsigned i = 0; i < 100; i++) {
        g_byte_array_append(noise, (const uint8_t *)"\x20", 1);
    }
    g_assert_cmpint(run(&s, &p, ETRACE_DEFRAME_SEARCH, noise->data,
                        noise->len, 0), ==, ETRACE_DEFRAME_END_NO_BOUNDARY);
    g_assert_cmpuint(s.frames->len, ==, 0);
    g_assert_cmpuint(etrace_deframer_stats(s.df)->skipped, ==, noise->len);
    seen_free(&s);
}

static void test_stop(void)
{
    ETraceParams p = params(0);
    uint64_t offsets[NPACKETS];
    g_autoptr(GByteArray) b = stream(&p, offsets);
    Seen s;

    seen_init(&s);
    s.stop_after = 20;
    s.df = etrace_deframer_new(&p, NULL, 0, &ops, &s);
    etrace_deframer_feed(s.df, b->data, b->len);
    g_assert_cmpint(etrace_deframer_finish(s.df), ==,
                    ETRACE_DEFRAME_END_STOPPED);
    g_assert_cmpuint(s.frames->len, ==, 20);
    seen_free(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/etrace-deframe/pieces", test_pieces);
    g_test_add_func("/etrace-deframe/truncated", test_truncated);
    g_test_add_func("/etrace-deframe/lost", test_lost);
    g_test_add_func("/etrace-deframe/search", test_search);
    g_test_add_func("/etrace-deframe/stop", test_stop);
    return g_test_run();
}

/*
 * RISC-V E-trace: the encapsulation of a byte stream into frames, undone
 * as the bytes arrive (see etrace-deframe.h).
 *
 * The bytes wait in a buffer until they make whole frames: a partial
 * frame at most, but a whole window while a boundary is searched, so that
 * the search sees as much of the stream as it needs to tell the true
 * framing from a false one.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "etrace-deframe.h"

/* What the buffer holds at most while no boundary is searched. */
#define DEFRAME_CHUNK   (64u << 10)

struct ETraceDeframer {
    ETraceParams p;
    ETraceOptions o;
    unsigned flags;
    ETraceDeframerOps ops;
    void *opaque;
    uint8_t *buf;
    size_t len, size;
    bool search;            /* a boundary must be found first */
    bool stopped;
    bool no_boundary;       /* a search at the end found none */
    ETraceDeframeStats st;
};

ETraceDeframer *etrace_deframer_new(const ETraceParams *p,
                                    const ETraceOptions *o, unsigned flags,
                                    const ETraceDeframerOps *ops,
                                    void *opaque)
{
    ETraceDeframer *df = calloc(1, sizeof(*df));

    if (!df) {
        return NULL;
    }
    df->p = *p;
    if (o) {
        df->o = *o;
    }
    df->flags = flags;
    df->ops = *ops;
    df->opaque = opaque;
    df->search = flags & ETRACE_DEFRAME_SEARCH;
    return df;
}

void etrace_deframer_free(ETraceDeframer *df)
{
    if (df) {
        free(df->buf);
        free(df);
    }
}

void etrace_deframer_stop(ETraceDeframer *df)
{
    df->stopped = true;
}

bool etrace_deframer_stopped(const ETraceDeframer *df)
{
    return df->stopped;
}

const ETraceDeframeStats *etrace_deframer_stats(const ETraceDeframer *df)
{
    return &df->st;
}

/* Drop n bytes from the buffer's start. */
static void drop(ETraceDeframer *df, size_t n)
{
    if (n) {
        memmove(df->buf, df->buf + n, df->len - n);
        df->len -= n;
    }
}

/* Bytes dropped in front of a boundary, or at a header that starts none. */
static void skip(ETraceDeframer *df, size_t n)
{
    drop(df, n);
    df->st.skipped += n;
    df->st.offset += n;
}

/*
 * Report the whole frames at the buffer's start and drop them.  Returns
 * false at a header byte that starts no frame (left at the start).
 */
static bool deframe(ETraceDeframer *df)
{
    size_t at = 0;
    bool framed = true;

    while (at < df->len && !df->stopped) {
        const uint8_t *b = df->buf + at;
        unsigned n = etrace_frame_length(&df->p, b[0]);

        if (!n) {
            framed = false;
            break;
        }
        if (n > df->len - at) {
            break;
        }
        if (n == 1 && !b[0]) {
            df->st.padding++;
        } else {
            ETraceFrame f = {
                .bytes = b, .len = n,
                .source = etrace_frame_source(&df->p, b),
                .offset = df->st.offset, .number = df->st.frames,
            };

            df->ops.frame(df->opaque, &f);
            df->st.frames++;
        }
        at += n;
        df->st.offset += n;
    }
    drop(df, at);
    return framed;
}

/*
 * Search the buffer for a boundary: keep what follows it.  At the end of
 * the stream a search that finds none ends the deframing.
 */
static void search_boundary(ETraceDeframer *df, bool end)
{
    long at = etrace_frame_boundary(&df->p, &df->o, df->buf, df->len);

    if (at < 0) {
        skip(df, df->len);
        if (end) {
            df->no_boundary = df->stopped = true;
        }
        return;
    }
    skip(df, at);
    df->search = false;
}

/* What the buffered bytes make; end: no more will come. */
static void process(ETraceDeframer *df, bool end)
{
    while (!df->stopped) {
        if (df->search) {
            if (!df->len || (!end && df->len < ETRACE_DEFRAME_WINDOW)) {
                return;
            }
            search_boundary(df, end);
            continue;
        }
        if (deframe(df)) {
            return;
        }
        df->ops.lost(df->opaque, df->st.offset, df->st.frames, df->buf[0]);
        skip(df, 1);
        if (!(df->flags & ETRACE_DEFRAME_RESYNC)) {
            df->stopped = true;
            return;
        }
        df->search = true;
    }
}

void etrace_deframer_feed(ETraceDeframer *df, const uint8_t *bytes,
                          size_t len)
{
    while (len && !df->stopped) {
        size_t cap = df->search ? ETRACE_DEFRAME_WINDOW : DEFRAME_CHUNK;
        size_t take = cap > df->len ? cap - df->len : 0;

        if (take > len) {
            take = len;
        }
        if (df->len + take > df->size) {
            size_t size = df->len + take < DEFRAME_CHUNK ? DEFRAME_CHUNK :
                                                           df->len + take;
            uint8_t *buf = realloc(df->buf, size);

            if (!buf) {
                df->stopped = true;
                return;
            }
            df->buf = buf;
            df->size = size;
        }
        memcpy(df->buf + df->len, bytes, take);
        df->len += take;
        bytes += take;
        len -= take;
        process(df, false);
    }
}

ETraceDeframeEnd etrace_deframer_finish(ETraceDeframer *df)
{
    process(df, true);
    if (df->no_boundary) {
        return ETRACE_DEFRAME_END_NO_BOUNDARY;
    }
    if (df->stopped) {
        return ETRACE_DEFRAME_END_STOPPED;
    }
    return df->len ? ETRACE_DEFRAME_END_TRUNCATED : ETRACE_DEFRAME_END_OK;
}

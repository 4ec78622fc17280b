/*
 * Trace decoders: what the E-trace and the N-trace decoder share in
 * telling their user what happened (ETraceEventFn): where the packet
 * (message) being decoded is, the events' common fields, bad input (the
 * first error is kept) and gaps where no image holds the code.  Each
 * decoder keeps one ETraceDecReport and wraps these with its own flow
 * fields and its own state to drop.  Host only, like the decoders.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_ETRACE_DEC_REPORT_H
#define RISCV_ETRACE_DEC_REPORT_H

#include "etrace-decoder.h"

typedef struct ETraceDecReport {
    ETraceEventFn *event;       /* may be NULL */
    void *opaque;
    uint64_t offset;            /* of the packet (message) being decoded */
    uint64_t number;            /* ... and its number */
    bool err_now;               /* it was bad input */
    bool gap_now;               /* its walk left the image */
    bool gap_open;              /* no instruction since a no-image gap */
    const char *first_error;
    uint64_t first_error_offset, first_error_number;
} ETraceDecReport;

/* A packet (message) starts: no error, no gap in it yet. */
static inline void etrace_dec_clear(ETraceDecReport *r)
{
    r->err_now = false;
    r->gap_now = false;
}

/* An event of type, at the decoder's privilege, context and address. */
static inline void etrace_dec_event_init(const ETraceDecReport *r,
                                         ETraceDecEvent *ev,
                                         ETraceDecEventType type,
                                         unsigned priv, uint64_t context,
                                         uint64_t addr, bool addr_valid)
{
    memset(ev, 0, sizeof(*ev));
    ev->type = type;
    ev->offset = r->offset;
    ev->packet = r->number;
    ev->privilege = priv;
    ev->context = context;
    ev->address = addr;
    ev->last_valid = addr_valid;
}

static inline void etrace_dec_report(const ETraceDecReport *r,
                                     ETraceDecEvent *ev)
{
    if (r->event) {
        r->event(r->opaque, ev);
    }
}

/* Bad input (ev: an ETRACE_DEC_ERROR event): report it, keep the first. */
static inline void etrace_dec_error(ETraceDecReport *r, ETraceDecEvent *ev,
                                    const char *msg)
{
    ev->error = msg;
    etrace_dec_report(r, ev);
    if (!r->first_error) {
        r->first_error = msg;
        r->first_error_offset = r->offset;
        r->first_error_number = r->number;
    }
    r->err_now = true;
}

/*
 * The walk needs the instruction at addr and no image holds it (ev: an
 * ETRACE_DEC_GAP event): the hart ran code the decoder was not given.  A
 * gap, not bad input, reported once until an instruction is decoded
 * again (etrace_dec_resumed()).
 */
static inline void etrace_dec_no_image(ETraceDecReport *r, ETraceDecEvent *ev,
                                       uint64_t addr)
{
    if (!r->gap_open) {
        ev->gap_reason = ETRACE_GAP_NO_IMAGE;
        ev->gap_addr = addr;
        etrace_dec_report(r, ev);
    }
    r->gap_open = true;
    r->gap_now = true;
}

/* A sync: instructions are decoded again. */
static inline void etrace_dec_resumed(ETraceDecReport *r)
{
    r->gap_open = false;
}

/* The first error (NULL: none), at *offset in packet (message) *number. */
static inline const char *etrace_dec_first_error(const ETraceDecReport *r,
                                                 uint64_t *offset,
                                                 uint64_t *number)
{
    if (r->first_error) {
        if (offset) {
            *offset = r->first_error_offset;
        }
        if (number) {
            *number = r->first_error_number;
        }
    }
    return r->first_error;
}

#endif /* RISCV_ETRACE_DEC_REPORT_H */

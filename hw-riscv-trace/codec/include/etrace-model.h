/*
 * RISC-V E-trace: the models encoder and decoder keep identically
 *
 * A decoder follows a trace only if it predicts what the encoder
 * predicted: the branch predictor (3.2.6), the jump target cache (3.2.7)
 * and the implicit-return call stack (3.2.5).  Each is defined here once,
 * inline, because both sides run them per instruction.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_ETRACE_MODEL_H
#define RISCV_ETRACE_MODEL_H

#include "etrace.h"

/*
 * A table of 2^size_p entries is indexed by the address bits above
 * iaddress_lsb_p, masked with etrace_table_mask(size_p) (which hot paths
 * keep rather than compute per lookup).
 */
static inline uint32_t etrace_table_mask(unsigned size_p)
{
    return (1u << size_p) - 1;
}

static inline uint32_t etrace_table_index(const ETraceParams *p,
                                          uint32_t mask, uint64_t addr)
{
    return (addr >> p->iaddress_lsb_p) & mask;
}

static inline uint32_t etrace_bpred_index(const ETraceParams *p,
                                          uint64_t addr)
{
    return etrace_table_index(p, etrace_table_mask(p->bpred_size_p), addr);
}

/*
 * Whether the predictor entries of an indexed run (etrace-record.h) are
 * those of the encoder's predictor: 2^bpred_size_p entries indexed from
 * address bit iaddress_lsb_p.
 */
static inline bool etrace_run_indexes_fit(const ETraceParams *p)
{
    return p->iaddress_lsb_p == 1 && p->bpred_size_p <= ETRACE_RUN_INDEX_BITS;
}

static inline uint32_t etrace_jtc_index(const ETraceParams *p, uint64_t addr)
{
    return etrace_table_index(p, etrace_table_mask(p->cache_size_p), addr);
}

/*
 * A branch predictor entry (3.2.6): bit 1 is the prediction, bit 0 the
 * last outcome; the prediction flips after two failures in a row.  Every
 * entry is ETRACE_BPRED_INIT after a format 3.0/3.1.
 */
#define ETRACE_BPRED_INIT   1

static inline bool etrace_bpred_taken(uint8_t state)
{
    return state >> 1;
}

static inline uint8_t etrace_bpred_next(uint8_t state, bool taken)
{
    /* by state << 1 | taken */
    static const uint8_t next[8] = { 0, 1, 0, 3, 0, 3, 2, 3 };

    return next[(state & 3) << 1 | taken];
}

/*
 * etrace_bpred_next() in bits 1:0 and whether the entry predicted right
 * in bit 2, with one table load (the encoder's loop over a run's
 * branches).
 */
static inline unsigned etrace_bpred_step(uint8_t state, bool taken)
{
    static const uint8_t step[8] = { 4, 1, 4, 3, 0, 7, 2, 7 };

    return step[(state & 3) << 1 | taken];
}

/*
 * The implicit-return call stack (3.2.5): the return address of every
 * call (itype 8 and 9) not yet returned from, or with a call counter only
 * their number.  A call when full drops the oldest entry (the counter
 * saturates).  Its largest depth is etrace_callstack_max().
 */
typedef struct ETraceCallStack {
    uint64_t *entry;        /* mask + 1 entries; NULL: count calls only */
    uint32_t mask;
    uint32_t base;          /* the oldest entry */
    uint32_t depth;
    uint32_t max;
} ETraceCallStack;

/*
 * The largest depth: 2^return_stack_size_p entries (RETURN_STACK) or
 * 2^call_counter_size_p - 1 calls (CALL_COUNTER, the largest irdepth
 * value of that width).
 */
static inline uint32_t etrace_callstack_max(const ETraceParams *p,
                                            ETraceIRMode mode)
{
    switch (mode) {
    case ETRACE_IR_RETURN_STACK:
        return p->return_stack_size_p ? 1u << p->return_stack_size_p : 0;
    case ETRACE_IR_CALL_COUNTER:
        return p->call_counter_size_p ?
               (1u << p->call_counter_size_p) - 1 : 0;
    default:
        return 0;
    }
}

/* Empty, holding at most max calls in entry[mask + 1] (or none). */
static inline void etrace_callstack_reset(ETraceCallStack *s,
                                          uint64_t *entry, uint32_t mask,
                                          uint32_t max)
{
    s->entry = entry;
    s->mask = mask;
    s->max = max;
    s->base = 0;
    s->depth = 0;
}

/* Entry i from the bottom, i < depth (with entries). */
static inline uint64_t etrace_callstack_at(const ETraceCallStack *s,
                                           uint32_t i)
{
    return s->entry[(s->base + i) & s->mask];
}

static inline void etrace_callstack_push(ETraceCallStack *s, uint64_t link)
{
    if (s->depth == s->max) {
        if (!s->max) {
            return;
        }
        s->base = (s->base + 1) & s->mask;
        s->depth--;
    }
    if (s->entry) {
        s->entry[(s->base + s->depth) & s->mask] = link;
    }
    s->depth++;
}

/* The newest return address (with entries), which goes; depth > 0. */
static inline uint64_t etrace_callstack_pop(ETraceCallStack *s)
{
    s->depth--;
    return s->entry ? s->entry[(s->base + s->depth) & s->mask] : 0;
}

#endif /* RISCV_ETRACE_MODEL_H */

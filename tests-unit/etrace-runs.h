/*
 * Runs of branch blocks as QEMU's hart makes them, for the codec tests
 *
 * The hart (target/riscv/trace_ingress.c) hands over blocks that end
 * with a conditional branch in bulk: it holds them back, and when a
 * block of another kind comes, sends the held ones as a run (etrace.h):
 * all of them before a plain block its translated code appends, all but
 * the newest, then the newest whole, before a trap or a context change
 * (from C).  The first branch block after any other block goes out
 * whole, and so does every 63rd branch block in a row.  With branch
 * prediction (indexed) the runs carry each branch's predictor entry
 * (run_entries, valid during the call), and after a full run the next
 * branch block goes out whole too.  For N-trace's BTM (counted) they
 * carry the run's half-words up to each branch instead (etrace-record.h),
 * and end before they would pass 0xffff half-words.
 * RunMaker does the same to a stream of ETraceBlocks.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef ETRACE_RUNS_H
#define ETRACE_RUNS_H

#include "insn_class.h"
#include "etrace.h"

#define RUN_MAX 62  /* RISCV_TRACE_RUN_MAX */

typedef void RunOutFn(void *opaque, const ETraceBlock *b);

typedef struct RunMaker {
    ETraceBlock run;        /* the held blocks but the newest */
    ETraceBlock newest;
    bool holding;           /* newest is held */
    bool need_address;      /* the next branch block goes out whole */
    bool indexed;           /* runs carry predictor entries */
    bool counted;           /* runs carry half-word counts */
    /* the run's, oldest first (run.run_entries): entries or counts */
    uint8_t entries[2 * 64];
    RunOutFn *out;
    void *opaque;
} RunMaker;

static inline void run_maker_init(RunMaker *m, RunOutFn *out, void *opaque)
{
    *m = (RunMaker) {
        .need_address = true, .out = out, .opaque = opaque,
    };
    /* past a run's branches the bytes are arbitrary */
    memset(m->entries, 0xa5, sizeof(m->entries));
}

/* The predictor entry of b's last instruction, as the hart records it */
static inline uint64_t run_maker_index(const ETraceBlock *b)
{
    uint64_t last = b->iaddr + b->iretire * 2 - (b->ilastsize ? 4 : 2);

    return last >> 1 & ((1u << ETRACE_RUN_INDEX_BITS) - 1);
}

/* The newest held block joins the run. */
static inline void run_maker_join_newest(RunMaker *m)
{
    ETraceBlock *r = &m->run;

    if (!r->run) {
        *r = (ETraceBlock) {
            .priv = m->newest.priv, .context = m->newest.context,
            .qualified = true, .run_indexed = m->indexed,
            .run_counted = m->counted,
        };
    }
    r->iretire += m->newest.iretire;
    r->ninsns += m->newest.ninsns;
    if (m->indexed) {
        m->entries[r->run] = run_maker_index(&m->newest);
        r->run_entries = m->entries;
    }
    if (m->counted) {
        m->entries[2 * r->run] = r->iretire;
        m->entries[2 * r->run + 1] = r->iretire >> 8;
        r->run_entries = m->entries;
    }
    r->run_map |= (uint64_t)(m->newest.itype ==
                             RISCV_ITYPE_NOT_TAKEN_BRANCH) << r->run;
    r->run++;
    m->holding = false;
}

/*
 * Send what is held: from C, the run, if any, then the newest branch
 * block; before a block of translated code (all), one run of them all.
 */
static inline void run_maker_end(RunMaker *m, bool all)
{
    if (all && m->holding) {
        run_maker_join_newest(m);
    }
    if (m->run.run) {
        m->out(m->opaque, &m->run);
    }
    if (m->holding) {
        m->out(m->opaque, &m->newest);
    }
    m->run.run = 0;
    m->holding = false;
}

static inline void run_maker_flush(RunMaker *m)
{
    run_maker_end(m, false);
}

/* A plain conditional branch block, the kind the hart holds back. */
static inline bool run_maker_holds_kind(const ETraceBlock *b)
{
    return (b->itype == RISCV_ITYPE_TAKEN_BRANCH ||
            b->itype == RISCV_ITYPE_NOT_TAKEN_BRANCH) &&
           b->qualified && !b->notify && !b->ctype && !b->run &&
           b->iretire && b->ninsns && b->ilastsize <= 1 && b->priv < 8;
}

/* A block the hart's translated code appends (not a trap, from C) */
static inline bool run_maker_translated(const ETraceBlock *b)
{
    return b->itype != RISCV_ITYPE_EXCEPTION &&
           b->itype != RISCV_ITYPE_INTERRUPT && b->itype < 16 &&
           b->qualified && !b->notify && !b->ctype && !b->run &&
           b->iretire && b->ninsns && b->ilastsize <= 1 && b->priv < 8;
}

/* Whether the hart would hold b back. */
static inline bool run_maker_holds(const RunMaker *m, const ETraceBlock *b)
{
    return run_maker_holds_kind(b) && !m->need_address &&
           (!m->holding || (b->priv == m->newest.priv &&
                            b->context == m->newest.context));
}

static inline void run_maker_block(RunMaker *m, const ETraceBlock *b)
{
    if (m->counted && m->holding && run_maker_holds(m, b) &&
        m->run.iretire + m->newest.iretire + b->iretire > 0xffff) {
        /* a counted run's half-words must fit 16 bits: one of them all */
        run_maker_end(m, true);
    }
    if (run_maker_holds(m, b)) {
        if (m->holding && m->run.run == RUN_MAX - 1) {
            /* full: the held ones go, and this one whole */
            run_maker_end(m, true);
            m->out(m->opaque, b);
            /* with prediction, the next one too */
            m->need_address = m->indexed;
            return;
        }
        if (m->holding) {
            run_maker_join_newest(m);
        }
        m->newest = *b;
        m->holding = true;
        return;
    }
    run_maker_end(m, run_maker_translated(b) &&
                     (!m->holding || (b->priv == m->newest.priv &&
                                      b->context == m->newest.context)));
    m->out(m->opaque, b);
    /* after a branch block that could have been held, the next can be */
    m->need_address = !run_maker_holds_kind(b);
}

#endif /* ETRACE_RUNS_H */

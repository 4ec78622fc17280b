/*
 * Runs of branch blocks as QEMU's hart makes them, for the codec tests
 *
 * The hart (target/riscv/trace_ingress.c) hands over blocks that end
 * with a conditional branch in bulk: it holds them back, and when a
 * block of another kind comes, sends the held ones as a run (etrace.h)
 * followed by the newest of them with its address.  The block after an
 * uninferable discontinuity, a trap, an untraced block or the start of
 * tracing goes out whole, and so does every 64th branch block in a row.
 * RunMaker does the same to a stream of ETraceBlocks.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef ETRACE_RUNS_H
#define ETRACE_RUNS_H

#include "insn_class.h"
#include "etrace.h"

#define RUN_MAX 63

typedef void RunOutFn(void *opaque, const ETraceBlock *b);

typedef struct RunMaker {
    ETraceBlock run;        /* the held blocks but the newest */
    ETraceBlock newest;
    bool holding;           /* newest is held */
    bool need_address;      /* the next branch block goes out whole */
    RunOutFn *out;
    void *opaque;
} RunMaker;

static inline void run_maker_init(RunMaker *m, RunOutFn *out, void *opaque)
{
    *m = (RunMaker) { .need_address = true, .out = out, .opaque = opaque };
}

/* Send what is held: the run, if any, then the newest branch block. */
static inline void run_maker_flush(RunMaker *m)
{
    if (m->run.run) {
        m->out(m->opaque, &m->run);
    }
    if (m->holding) {
        m->out(m->opaque, &m->newest);
    }
    m->run.run = 0;
    m->holding = false;
}

/* Whether the hart would hold b back: a plain conditional branch block. */
static inline bool run_maker_holds(const RunMaker *m, const ETraceBlock *b)
{
    return (b->itype == RISCV_ITYPE_TAKEN_BRANCH ||
            b->itype == RISCV_ITYPE_NOT_TAKEN_BRANCH) &&
           b->qualified && !b->notify && !b->ctype && !b->run &&
           b->iretire && b->ninsns && b->ilastsize <= 1 && b->priv < 8 &&
           !m->need_address &&
           (!m->holding || (b->priv == m->newest.priv &&
                            b->context == m->newest.context));
}

static inline bool run_maker_needs_address_after(const ETraceBlock *b)
{
    switch (b->itype) {
    case RISCV_ITYPE_EXCEPTION:
    case RISCV_ITYPE_INTERRUPT:
    case RISCV_ITYPE_TRAP_RETURN:
    case RISCV_ITYPE_UNINFERABLE_JUMP_3BIT:
    case RISCV_ITYPE_UNINFERABLE_CALL:
    case RISCV_ITYPE_UNINFERABLE_TAIL_CALL:
    case RISCV_ITYPE_COROUTINE_SWAP:
    case RISCV_ITYPE_RETURN:
    case RISCV_ITYPE_OTHER_UNINFERABLE_JUMP:
        return true;
    default:
        return !b->qualified || b->itype > 15;
    }
}

static inline void run_maker_block(RunMaker *m, const ETraceBlock *b)
{
    if (run_maker_holds(m, b)) {
        if (m->holding && m->run.run == RUN_MAX - 1) {
            /* full: the held ones go, and this one whole */
            run_maker_flush(m);
            m->out(m->opaque, b);
            return;
        }
        if (m->holding) {
            ETraceBlock *r = &m->run;

            if (!r->run) {
                *r = (ETraceBlock) {
                    .priv = m->newest.priv, .context = m->newest.context,
                    .qualified = true,
                };
            }
            r->run_map |= (uint64_t)(m->newest.itype ==
                                     RISCV_ITYPE_NOT_TAKEN_BRANCH) << r->run;
            r->run++;
            r->iretire += m->newest.iretire;
            r->ninsns += m->newest.ninsns;
        }
        m->newest = *b;
        m->holding = true;
        return;
    }
    run_maker_flush(m);
    m->out(m->opaque, b);
    m->need_address = run_maker_needs_address_after(b);
}

#endif /* ETRACE_RUNS_H */

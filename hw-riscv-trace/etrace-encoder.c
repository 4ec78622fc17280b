/*
 * E-trace encoder: the instruction-delta algorithm of chapter 8 on
 * retirement blocks
 *
 * Figure 8.1 looks at three instructions: previous, current and next.
 * On blocks (section 8.3) only the first and the last instruction of a
 * block can make a packet, so the encoder keeps one block pending: its
 * last instruction is evaluated when the next block (or trap, or the end
 * of tracing) shows what follows it.  The first instruction of a block is
 * evaluated on arrival when the block has more than one instruction.
 *
 * Decisions for the current instruction, in the order of figure 8.1 as
 * reconstructed from chapters 3, 6, 8 and 11 (first match emits):
 *   1. a trap came before it              -> format 3.1 (trap)
 *   2. first traced, privilege change, precise or asynchronous context
 *      change, or resync due (see resync_here()) -> format 3.0 (sync)
 *   3. previous is an uninferable discontinuity -> format 0/1/2
 *   4. resync due with branches pending, or notify -> format 0/1/2
 *   5. next is a trap, an asynchronous context change, untraced, or a
 *      privilege/precise context change with branches pending
 *                                          -> format 0/1/2
 *   6. branch map full (31, not all predicted) or a misprediction after
 *      31 or more predicted branches      -> format 1 or 0.0, no address
 *   7. imprecise context change pending   -> format 3.2
 * and after the last traced instruction, a support packet.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "target/riscv/insn_class.h"
#include "etrace.h"

#define MAX_MAP_BRANCHES    31
#define CTYPE_IMPRECISE     1
#define CTYPE_PRECISE       2
#define CTYPE_ASYNC         3
#define BPRED_INIT          1       /* 01: predict not taken (3.2.6) */

/* Why an address is reported (decides notify, updiscon, irreport). */
typedef enum Reason {
    REASON_UPDISCON,        /* target of an uninferable discontinuity */
    REASON_NOTIFY,          /* trigger[2] */
    REASON_INFERRED,        /* last before a format 3, resync or the end */
} Reason;

/* The instruction under evaluation: figure 8.1's "current". */
typedef struct Insn {
    uint64_t addr;
    uint64_t context;
    uint8_t size;           /* bytes; known for last instructions */
    uint8_t itype;          /* 0 unless last of its block */
    uint8_t priv;
    uint8_t ctype;          /* first of its block only; 0 if no context */
    bool sijump;
    bool notify;
    bool last;              /* last of its block: resync is checked here */
} Insn;

/* What is known about the instruction after the current one. */
typedef struct Next {
    bool traced;            /* false: untraced or end of trace */
    bool trap;              /* a trap comes before it */
    uint8_t priv;
    uint8_t ctype;
    uint64_t addr;          /* its address (trap: the EPC) */
} Next;

typedef struct Trap {
    bool pending;           /* taken after the last evaluated instruction */
    bool reported;          /* 2.0: already sent with thaddr 0 */
    bool interrupt;
    uint64_t cause;
    uint64_t tval;
    uint64_t epc;
} Trap;

struct ETraceEncoder {
    ETraceParams p;
    ETraceOptions o;
    ETraceEmitFn *emit;
    void *opaque;
    uint64_t addr_mask;
    bool enabled;

    /* the block whose last instruction waits for its successor */
    bool have_pending;
    Insn pending;

    /* the previous instruction and the run it belongs to */
    bool in_run;            /* an instruction traced since the last end */
    bool need_sync;         /* the next traced instruction is the first */
    bool sync_next;         /* resync at the next instruction */
    bool lost_pending;      /* support(trace_lost) before the next packet */
    bool prev_updiscon;
    bool prev_ret_miss;     /* return stack misprediction to report */
    bool prev_implicit_ret;
    bool prev_exact;        /* a packet pinned the previous instruction */
    uint8_t prev_priv;
    uint64_t prev_context;
    bool last_report_updiscon;
    bool ambiguous_report;  /* last address: a jump target, updiscon 0 */
    bool context_pending;
    Trap trap;

    /* branches not yet reported */
    uint64_t branches;
    uint32_t branch_map;
    uint64_t pbc;           /* leading correctly predicted branches */
    bool cur_mispredicted;

    /* optional modes */
    uint8_t *bpred;         /* 2-bit counters, 2^bpred_size_p */
    uint64_t *jtc;          /* jump targets, 2^cache_size_p */
    uint8_t *jtc_valid;
    uint64_t *ras;          /* return addresses, 2^return_stack_size_p */
    unsigned ras_top;
    unsigned depth;         /* stack entries or call count */
    unsigned depth_max;
    bool ret_since_call;
    bool branch_since_ret;

    uint64_t resync_count;
    uint64_t resync_max;
    uint64_t last_addr;     /* reference of differential addresses */
    ETraceStats stats;
};

/* --------------------------------------------------------- small tools */

static bool is_branch_itype(unsigned itype)
{
    return itype == RISCV_ITYPE_NOT_TAKEN_BRANCH ||
           itype == RISCV_ITYPE_TAKEN_BRANCH;
}

static bool is_call_itype(unsigned itype)
{
    return itype == RISCV_ITYPE_UNINFERABLE_CALL ||
           itype == RISCV_ITYPE_INFERABLE_CALL;
}

/* itypes whose target the decoder can not infer from the binary. */
static bool is_updiscon_itype(unsigned itype)
{
    return itype == RISCV_ITYPE_TRAP_RETURN ||
           itype == RISCV_ITYPE_UNINFERABLE_JUMP_3BIT ||
           itype == RISCV_ITYPE_UNINFERABLE_CALL ||
           itype == RISCV_ITYPE_UNINFERABLE_TAIL_CALL ||
           itype == RISCV_ITYPE_COROUTINE_SWAP ||
           itype == RISCV_ITYPE_RETURN ||
           itype == RISCV_ITYPE_OTHER_UNINFERABLE_JUMP;
}

static unsigned table_index(const ETraceEncoder *e, uint64_t addr,
                            unsigned size_log2)
{
    return (addr >> e->p.iaddress_lsb_p) & ((1u << size_log2) - 1);
}

/* 3.2.6: MSB = prediction, LSB = last outcome; two misses flip it. */
static uint8_t bpred_next(uint8_t state, bool taken)
{
    bool predict = state >> 1, last = state & 1;

    if (predict != taken && last == taken) {
        predict = taken;
    }
    return predict << 1 | taken;
}

static bool resync_due(const ETraceEncoder *e)
{
    return e->o.sync_mode != ETRACE_SYNC_OFF &&
           e->resync_count >= e->resync_max;
}

/* Whether a resync follows once one more te_inst has been sent. */
static bool resync_due_after_packet(const ETraceEncoder *e)
{
    return resync_due(e) || (e->o.sync_mode == ETRACE_SYNC_PACKETS &&
                             e->resync_count + 1 >= e->resync_max);
}

/* The branch count of format 0 subformat 0 can not go further. */
static bool branch_count_full(const ETraceEncoder *e)
{
    return e->pbc == MAX_MAP_BRANCHES + (uint64_t)UINT32_MAX;
}

static uint64_t reported_address(const ETraceEncoder *e, uint64_t addr)
{
    return e->o.full_address ? addr : (addr - e->last_addr) & e->addr_mask;
}

/* ------------------------------------------------------------- output */

static void emit_packet(ETraceEncoder *e, const ETracePacket *k);

static void send_support(ETraceEncoder *e, bool enable,
                         ETraceQualStatus qual)
{
    ETracePacket k = {
        .format = 3, .subformat = 3, .enable = enable,
        .qual_status = qual, .options = etrace_options_pack(&e->p, &e->o),
    };

    emit_packet(e, &k);
}

static void emit_packet(ETraceEncoder *e, const ETracePacket *k)
{
    uint8_t buf[ETRACE_MAX_PACKET];
    size_t n;

    if (e->lost_pending) {
        e->lost_pending = false;
        send_support(e, e->enabled, ETRACE_QUAL_TRACE_LOST);
    }
    n = etrace_packet_pack(&e->p, &e->o, k, buf);
    if (!n) {
        return;     /* not for valid parameters and packets */
    }
    e->stats.packets[k->format & 3]++;
    e->stats.bytes += n;
    if (e->o.sync_mode == ETRACE_SYNC_PACKETS &&
        !(k->format == 3 && k->subformat == 3)) {
        e->resync_count++;
    }
    e->emit(e->opaque, buf, n);
}

static void clear_branches(ETraceEncoder *e)
{
    e->branches = 0;
    e->branch_map = 0;
    e->pbc = 0;
}

/* State every synchronisation packet (format 3.0, 3.1) resets. */
static void sync_reset(ETraceEncoder *e)
{
    clear_branches(e);
    if (e->bpred) {
        memset(e->bpred, BPRED_INIT, 1u << e->p.bpred_size_p);
    }
    if (e->jtc_valid) {
        memset(e->jtc_valid, 0, 1u << e->p.cache_size_p);
    }
    e->depth = 0;
    e->ret_since_call = false;
    e->branch_since_ret = false;
    e->resync_count = 0;
    e->need_sync = false;
    e->sync_next = false;
    e->context_pending = false;
    e->last_report_updiscon = false;
    e->ambiguous_report = false;
}

/* Format 3.0 or 3.1 fields common to both. */
static void sync_fields(ETracePacket *k, const Insn *c)
{
    k->format = 3;
    k->branch = c->itype != RISCV_ITYPE_TAKEN_BRANCH;
    k->privilege = c->priv;
    k->context = c->context;
    k->address = c->addr;
}

static void send_sync(ETraceEncoder *e, const Insn *c)
{
    ETracePacket k = { .subformat = 0 };

    sync_fields(&k, c);
    emit_packet(e, &k);
    sync_reset(e);
    e->last_addr = c->addr;
}

/* Format 3.1 for the first instruction of a trap handler. */
static void send_trap(ETraceEncoder *e, const Insn *c)
{
    ETracePacket k = { .subformat = 1 };
    const Trap *t = &e->trap;

    if (e->p.arch == ETRACE_ARCH_2_0 && t->reported) {
        send_sync(e, c);    /* the cause went out with thaddr 0 */
        return;
    }
    sync_fields(&k, c);
    k.ecause = t->cause;
    k.interrupt = t->interrupt;
    if (e->p.arch == ETRACE_ARCH_2_0) {
        k.thaddr = true;
        k.tvalepc = t->tval;
    } else {
        /* 6.3.1: the EPC of illegal instructions, else the trap value */
        k.tvalepc = t->cause == 2 && !t->interrupt ? t->epc : t->tval;
    }
    emit_packet(e, &k);
    sync_reset(e);
    e->last_addr = c->addr;
}

/* 2.0: a trap reported before its handler retires (thaddr 0). */
static void send_trap_early(ETraceEncoder *e)
{
    ETracePacket k = {
        .format = 3, .subformat = 1, .branch = true,
        .privilege = e->prev_priv, .context = e->prev_context,
        .ecause = e->trap.cause, .interrupt = e->trap.interrupt,
        .thaddr = false, .address = e->trap.epc, .tvalepc = e->trap.tval,
    };

    emit_packet(e, &k);
    e->trap.reported = true;
}

/*
 * irreport and irdepth of a packet (6.6.3): a failed return prediction,
 * or the depth the decoder needs to stop in the right call before a
 * format 3 or the end of tracing.
 */
static bool ir_report(const ETraceEncoder *e, Reason why, bool final)
{
    if (e->o.implicit_return == ETRACE_IR_OFF) {
        return false;
    }
    if (why == REASON_UPDISCON) {
        return e->prev_ret_miss;
    }
    if (!final) {
        return false;
    }
    if (e->prev_implicit_ret) {
        return e->depth != 0;
    }
    return e->ret_since_call && !e->branch_since_ret;
}

/* A jump target cache hit for an uninferable target; updates the cache. */
static bool jtc_lookup(ETraceEncoder *e, uint64_t addr, unsigned *index)
{
    unsigned i = table_index(e, addr, e->p.cache_size_p);
    bool hit = e->jtc_valid[i] && e->jtc[i] == addr;

    e->jtc[i] = addr;
    e->jtc_valid[i] = 1;
    *index = i;
    return hit;
}

/*
 * Report the current instruction's address with the pending branches:
 * format 0.0 once 31 or more branches were predicted, 0.1 for a cached
 * jump target, else 1 or 2 (section 8.1).
 */
static bool send_address(ETraceEncoder *e, const Insn *c, Reason why,
                         bool next_f3, bool final)
{
    ETracePacket k = { 0 };
    bool updiscon = why == REASON_UPDISCON && next_f3;
    bool irreport = ir_report(e, why, next_f3 || final);
    bool cached = false;
    unsigned index = 0;

    if (why == REASON_UPDISCON && e->o.jump_target_cache) {
        cached = jtc_lookup(e, c->addr, &index);
    }
    if (e->pbc >= MAX_MAP_BRANCHES) {
        k.format = 0;
        k.subformat = 0;
        k.branch_count = e->pbc - MAX_MAP_BRANCHES;
        k.branch_fmt = e->cur_mispredicted ? 3 : 2;
        k.address = reported_address(e, c->addr);
    } else if (cached && !updiscon) {
        /* format 0.1 has no updiscon bit: only when none is needed */
        k.format = 0;
        k.subformat = 1;
        k.index = index;
        k.branches = e->branches;
        k.branch_map = e->branch_map;
    } else {
        k.format = e->branches ? 1 : 2;
        k.branches = e->branches;
        k.branch_map = e->branch_map;
        k.address = reported_address(e, c->addr);
    }
    etrace_packet_set_flags(&e->p, &k, why == REASON_NOTIFY, updiscon,
                            irreport, e->depth);
    emit_packet(e, &k);
    clear_branches(e);
    e->last_addr = c->addr;
    e->last_report_updiscon = why == REASON_UPDISCON;
    e->ambiguous_report = why == REASON_UPDISCON && !updiscon;
    return updiscon;        /* exact: the decoder will stop right there */
}

/* Step 6: a full branch map, or the end of a run of predictions. */
static bool branches_to_report(const ETraceEncoder *e)
{
    return (e->branches == MAX_MAP_BRANCHES && e->pbc < MAX_MAP_BRANCHES) ||
           (e->pbc >= MAX_MAP_BRANCHES && e->cur_mispredicted);
}

static void send_branches(ETraceEncoder *e)
{
    ETracePacket k = { .format = 1 };

    if (e->pbc >= MAX_MAP_BRANCHES) {
        /* 6.8: the failed branch is implied by the count */
        k.format = 0;
        k.subformat = 0;
        k.branch_count = e->pbc - MAX_MAP_BRANCHES;
        k.branch_fmt = 0;
    } else {
        k.branches = 0;             /* 0 = 31 branches, no address */
        k.branch_map = e->branch_map;
    }
    emit_packet(e, &k);
    clear_branches(e);
    e->ambiguous_report = false;
}

static void send_context(ETraceEncoder *e, const Insn *c)
{
    ETracePacket k = { .format = 3, .subformat = 2, .privilege = c->priv,
                       .context = c->context };

    emit_packet(e, &k);
    e->context_pending = false;
}

/* ----------------------------------------------------- the algorithm */

static void add_branch(ETraceEncoder *e, const Insn *c)
{
    bool taken = c->itype == RISCV_ITYPE_TAKEN_BRANCH;

    if (e->branches < MAX_MAP_BRANCHES) {
        e->branch_map |= (uint32_t)!taken << e->branches;
    }
    if (e->o.branch_prediction) {
        unsigned i = table_index(e, c->addr, e->p.bpred_size_p);
        uint8_t state = e->bpred[i];
        bool hit = (state >> 1) == taken;

        if (hit && e->pbc == e->branches) {
            e->pbc++;
        }
        e->cur_mispredicted = !hit;
        e->bpred[i] = bpred_next(state, taken);
    }
    e->branches++;
    e->branch_since_ret = true;
}

static void ras_push(ETraceEncoder *e, uint64_t addr)
{
    if (e->o.implicit_return == ETRACE_IR_RETURN_STACK) {
        unsigned mask = (1u << e->p.return_stack_size_p) - 1;

        e->ras[e->ras_top] = addr;
        e->ras_top = (e->ras_top + 1) & mask;
    }
    if (e->depth < e->depth_max) {
        e->depth++;
    }
}

static void ras_pop(ETraceEncoder *e)
{
    unsigned mask = (1u << e->p.return_stack_size_p) - 1;

    e->ras_top = (e->ras_top - 1) & mask;
    e->depth--;
}

/* A return goes where the counter or the stack predicts (3.2.5). */
static bool return_predicted(const ETraceEncoder *e, const Next *nx)
{
    if (e->depth == 0) {
        return false;
    }
    if (e->o.implicit_return == ETRACE_IR_RETURN_STACK) {
        unsigned mask = (1u << e->p.return_stack_size_p) - 1;

        return nx->traced && e->ras[(e->ras_top - 1) & mask] == nx->addr;
    }
    return true;
}

/* The decoder sees the constant load only if it precedes c's packet. */
static bool sijump_usable(const ETraceEncoder *e, const Insn *c,
                          bool sent_f3)
{
    return c->sijump && e->o.sijump && !sent_f3 &&
           is_updiscon_itype(c->itype) &&
           c->itype != RISCV_ITYPE_TRAP_RETURN;
}

/* Whether c leaves an uninferable discontinuity for its successor. */
static bool leaves_updiscon(const ETraceEncoder *e, const Insn *c,
                            const Next *nx, bool sent_f3)
{
    if (!is_updiscon_itype(c->itype) || sijump_usable(e, c, sent_f3)) {
        return false;
    }
    return c->itype != RISCV_ITYPE_RETURN ||
           e->o.implicit_return == ETRACE_IR_OFF ||
           !return_predicted(e, nx);
}

/*
 * Whether a pending resync may be placed on c.  A decoder follows the
 * code to a format 3 address and stops at its first occurrence, so the
 * target of an uninferable jump qualifies only when the decoder stands
 * exactly on the jump (else it could stop at an earlier occurrence:
 * 6.6.2's looplabel case, which only formats 0..2 can tell apart), and
 * never after a mispredicted return (format 3 has no irreport: the
 * decoder would pop its stack).  Otherwise c is reported as usual, with
 * the updiscon bit, and the resync moves on by one instruction.
 */
static bool resync_here(const ETraceEncoder *e)
{
    return !e->prev_updiscon || (e->prev_exact && !e->prev_ret_miss);
}

/*
 * After the current instruction: calls and returns (3.2.5), and whether
 * it leaves an uninferable discontinuity for the next one to report.
 */
static void update_after(ETraceEncoder *e, const Insn *c, const Next *nx,
                         bool sent_f3)
{
    unsigned itype = c->itype;
    bool updiscon = leaves_updiscon(e, c, nx, sent_f3);

    e->prev_ret_miss = false;
    e->prev_implicit_ret = false;
    if (e->o.implicit_return != ETRACE_IR_OFF) {
        if (is_call_itype(itype)) {
            ras_push(e, (c->addr + c->size) & e->addr_mask);
            e->ret_since_call = false;
        } else if (itype == RISCV_ITYPE_RETURN &&
                   !sijump_usable(e, c, sent_f3)) {
            if (!updiscon) {
                ras_pop(e);
                e->prev_implicit_ret = true;
                e->ret_since_call = true;
                e->branch_since_ret = false;
            } else if (e->depth) {
                /* the stack predicted elsewhere: report with the depth */
                e->prev_ret_miss = nx->traced;
            }
        }
    }
    e->prev_updiscon = updiscon;
    e->prev_priv = c->priv;
    e->prev_context = c->context;
    if (c->last) {
        /*
         * Pending branches first go out with a resync_br report, or with
         * the report of the jump target when c is an uninferable jump.
         */
        e->sync_next = resync_due(e) && (!e->branches || updiscon);
    }
}

/* One instruction through figure 8.1. */
static void evaluate(ETraceEncoder *e, const Insn *c, const Next *nx)
{
    bool due = c->last && resync_due(e);
    bool ctx_sync = c->ctype == CTYPE_PRECISE || c->ctype == CTYPE_ASYNC;
    /* a format 3 follows the address packet this instruction may send */
    bool next_f3 = nx->traced &&
                   (nx->trap || nx->priv != c->priv ||
                    nx->ctype == CTYPE_PRECISE || nx->ctype == CTYPE_ASYNC ||
                    (c->last && resync_due_after_packet(e)));
    bool next_forces, sent_f3 = false, exact = false;

    if (!e->in_run) {
        e->in_run = true;   /* stores only on change: this is hot */
    }
    if (e->cur_mispredicted) {
        e->cur_mispredicted = false;
    }
    if (is_branch_itype(c->itype)) {
        add_branch(e, c);
    }
    if (c->ctype == CTYPE_IMPRECISE) {
        e->context_pending = true;
    }
    /* figure 8.1's green diamond: what follows needs c reported */
    next_forces = !nx->traced || nx->trap || nx->ctype == CTYPE_ASYNC ||
                  (e->branches && (nx->priv != c->priv ||
                                   nx->ctype == CTYPE_PRECISE));
    /*
     * The last report was a jump target without the updiscon bit: the
     * decoder may have stopped at an earlier occurrence of it and takes
     * a format 3 next as confirmation (6.6.2 case 3).  A report of c in
     * between tells it to go on (case 1).
     */
    next_forces = next_forces ||
                  (e->ambiguous_report && nx->traced &&
                   (nx->priv != c->priv || nx->ctype == CTYPE_PRECISE ||
                    (due && !leaves_updiscon(e, c, nx, false))));

    if (e->trap.pending) {
        send_trap(e, c);
        e->trap.pending = false;
        sent_f3 = true;
    } else if (e->need_sync || (e->sync_next && resync_here(e)) ||
               ctx_sync || c->priv != e->prev_priv) {
        send_sync(e, c);
        sent_f3 = true;
    } else if (e->prev_updiscon) {
        exact = send_address(e, c, REASON_UPDISCON,
                             next_f3 || e->sync_next, !nx->traced);
    } else if (c->notify) {
        send_address(e, c, REASON_NOTIFY, next_f3, !nx->traced);
    } else if ((due && e->branches && !leaves_updiscon(e, c, nx, false)) ||
               next_forces || branch_count_full(e)) {
        send_address(e, c, REASON_INFERRED, next_f3, !nx->traced);
    } else if (branches_to_report(e)) {
        send_branches(e);
    } else if (e->context_pending) {
        send_context(e, c);
    }
    update_after(e, c, nx, sent_f3);
    e->prev_exact = sent_f3 || exact;
}

/* Evaluate the pending block's last instruction, now that nx is known. */
static void finish_pending(ETraceEncoder *e, const Next *nx)
{
    if (e->have_pending) {
        e->have_pending = false;
        evaluate(e, &e->pending, nx);
    }
}

/* Tracing stops after the last evaluated instruction (6.5.1). */
static void end_run(ETraceEncoder *e, bool enable)
{
    static const Next untraced = { .traced = false };

    finish_pending(e, &untraced);
    if (e->in_run) {
        send_support(e, enable, e->last_report_updiscon ?
                     ETRACE_QUAL_ENDED_UPD : ETRACE_QUAL_ENDED_REP);
    } else if (!enable) {
        send_support(e, false, ETRACE_QUAL_NO_CHANGE);
    }
    e->in_run = false;
    e->need_sync = true;
    e->trap.pending = false;
    clear_branches(e);
}

static void take_trap(ETraceEncoder *e, const ETraceBlock *b)
{
    Trap t = {
        .pending = true, .interrupt = b->itype == RISCV_ITYPE_INTERRUPT,
        .cause = b->cause, .tval = b->tval, .epc = b->epc & e->addr_mask,
    };
    Next nx = { .traced = true, .trap = true, .addr = t.epc };
    bool v2 = e->p.arch == ETRACE_ARCH_2_0;

    if (e->trap.pending) {
        /* the first handler did not retire anything */
        if (v2 && e->in_run && !e->trap.reported) {
            send_trap_early(e);
        }
        e->trap = t;
        return;
    }
    finish_pending(e, &nx);
    e->trap = t;
    if (v2 && e->in_run && e->prev_updiscon) {
        /* the EPC is the target of an uninferable jump: send it now */
        send_trap_early(e);
    }
}

static void count_units(ETraceEncoder *e, const ETraceBlock *b)
{
    uint32_t insns = b->ninsns ? b->ninsns : 1;

    e->stats.halfwords += b->iretire;
    e->stats.instructions += insns;
    if (e->o.sync_mode == ETRACE_SYNC_CYCLES) {
        e->resync_count += insns;
    } else if (e->o.sync_mode == ETRACE_SYNC_HALFWORDS) {
        e->resync_count += b->iretire;
    }
}

/* The retired instructions of a qualified or unqualified block. */
static void take_insns(ETraceEncoder *e, const ETraceBlock *b)
{
    unsigned size = b->ilastsize ? 4 : 2;
    uint64_t bytes = (uint64_t)b->iretire * 2;
    bool single = bytes <= size;
    uint8_t ctype = e->p.context_width_p ? b->ctype & 3 : 0;
    Next nx = {
        .traced = b->qualified, .trap = e->trap.pending, .priv = b->priv,
        .ctype = ctype, .addr = b->iaddr & e->addr_mask,
    };
    Insn first = {
        .addr = nx.addr, .context = b->context, .priv = b->priv,
        .ctype = ctype, .size = size,
    };

    if (!b->qualified) {
        if (e->in_run || e->have_pending) {
            end_run(e, true);
        }
        e->trap.pending = false;
        return;
    }
    finish_pending(e, &nx);
    e->pending = first;
    e->pending.last = true;
    e->pending.itype = b->itype;
    e->pending.sijump = b->sijump;
    e->pending.notify = b->notify;
    if (!single) {
        static const Insn plain;
        Next inside = { .traced = true, .priv = b->priv };

        evaluate(e, &first, &inside);
        e->pending = plain;
        e->pending.addr = (nx.addr + bytes - size) & e->addr_mask;
        e->pending.context = b->context;
        e->pending.priv = b->priv;
        e->pending.size = size;
        e->pending.itype = b->itype;
        e->pending.sijump = b->sijump;
        e->pending.notify = b->notify;
        e->pending.last = true;
    }
    /* after a sync of the first instruction, which restarts the count */
    count_units(e, b);
    e->have_pending = true;
}

/*
 * The common case, in a few dozen instructions: the pending instruction
 * is a branch or an inferable jump with room in the branch map, and
 * neither it nor the new block's first instruction can make a packet
 * (no trap, sync, context, notify, resync, privilege change or pending
 * discontinuity).  Returns false to take the general path.
 */
static bool take_quiet_block(ETraceEncoder *e, const ETraceBlock *b)
{
    const Insn *c = &e->pending;
    unsigned itype = c->itype, size = b->ilastsize ? 4 : 2;
    uint64_t bytes = (uint64_t)b->iretire * 2;
    bool branch = is_branch_itype(itype);

    if (!e->have_pending || !b->qualified || b->iretire == 0 ||
        b->itype == RISCV_ITYPE_EXCEPTION ||
        b->itype == RISCV_ITYPE_INTERRUPT ||
        b->priv != c->priv || c->priv != e->prev_priv ||
        (b->ctype && e->p.context_width_p) || c->ctype || c->notify ||
        e->trap.pending || e->need_sync || e->sync_next || e->lost_pending ||
        e->prev_updiscon || e->prev_ret_miss || e->prev_implicit_ret ||
        e->context_pending || resync_due(e)) {
        return false;
    }
    if (branch) {
        if (e->o.branch_prediction || e->branches + 1 >= MAX_MAP_BRANCHES) {
            return false;
        }
        e->branch_map |= (uint32_t)(itype == RISCV_ITYPE_NOT_TAKEN_BRANCH) <<
                         e->branches;
        e->branches++;
        e->branch_since_ret = true;
    } else if (itype != RISCV_ITYPE_NONE &&
               itype != RISCV_ITYPE_INFERABLE_TAIL_CALL &&
               itype != RISCV_ITYPE_OTHER_INFERABLE_JUMP &&
               (itype != RISCV_ITYPE_INFERABLE_CALL ||
                e->o.implicit_return != ETRACE_IR_OFF)) {
        return false;
    }
    /* c, then the new block's first instruction if not its last */
    e->prev_context = bytes > size ? b->context : c->context;
    e->pending.addr = (b->iaddr + (bytes > size ? bytes - size : 0)) &
                      e->addr_mask;
    e->pending.context = b->context;
    e->pending.size = size;
    e->pending.itype = b->itype;
    e->pending.sijump = b->sijump;
    e->pending.notify = b->notify;
    count_units(e, b);
    return true;
}

/* ---------------------------------------------------------------- API */

ETraceEncoder *etrace_encoder_new(const ETraceParams *p,
                                  ETraceEmitFn *emit, void *opaque)
{
    ETraceEncoder *e;

    if (!etrace_params_check(p, NULL) || !emit) {
        return NULL;
    }
    e = calloc(1, sizeof(*e));
    if (!e) {
        return NULL;
    }
    e->p = *p;
    e->emit = emit;
    e->opaque = opaque;
    e->addr_mask = p->iaddress_width_p == 64 ? UINT64_MAX :
                   (UINT64_C(1) << p->iaddress_width_p) - 1;
    if (p->bpred_size_p) {
        e->bpred = malloc(1u << p->bpred_size_p);
    }
    if (p->cache_size_p) {
        e->jtc = calloc(1u << p->cache_size_p, sizeof(*e->jtc));
        e->jtc_valid = calloc(1u << p->cache_size_p, 1);
    }
    if (p->return_stack_size_p) {
        e->ras = calloc(1u << p->return_stack_size_p, sizeof(*e->ras));
    }
    if ((p->bpred_size_p && !e->bpred) ||
        (p->cache_size_p && (!e->jtc || !e->jtc_valid)) ||
        (p->return_stack_size_p && !e->ras)) {
        etrace_encoder_free(e);
        return NULL;
    }
    return e;
}

void etrace_encoder_free(ETraceEncoder *e)
{
    if (e) {
        free(e->bpred);
        free(e->jtc);
        free(e->jtc_valid);
        free(e->ras);
        free(e);
    }
}

void etrace_encoder_start(ETraceEncoder *e, const ETraceOptions *o)
{
    ETraceQualStatus qual = ETRACE_QUAL_NO_CHANGE;
    unsigned sync_max = o->sync_max > 27 ? 27 : o->sync_max;

    if (e->enabled) {
        /* new options: report the last instruction under the old ones */
        static const Next untraced = { .traced = false };

        finish_pending(e, &untraced);
        if (e->in_run) {
            qual = e->last_report_updiscon ? ETRACE_QUAL_ENDED_UPD :
                   ETRACE_QUAL_ENDED_REP;
        }
    }
    /* modes without hardware are off; the sync settings stay */
    etrace_options_unpack(&e->p, etrace_options_pack(&e->p, o), &e->o);
    e->o.sync_mode = o->sync_mode & 3;
    e->o.sync_max = sync_max;
    e->resync_max = UINT64_C(1) << (sync_max + 4);
    e->depth_max = e->o.implicit_return == ETRACE_IR_RETURN_STACK ?
                   1u << e->p.return_stack_size_p :
                   (1u << e->p.call_counter_size_p) - 1;
    e->enabled = true;
    e->in_run = false;
    e->have_pending = false;
    e->trap.pending = false;
    e->prev_updiscon = false;
    sync_reset(e);
    e->need_sync = true;
    send_support(e, true, qual);
}

void etrace_encoder_block(ETraceEncoder *e, const ETraceBlock *b)
{
    if (!e->enabled || take_quiet_block(e, b)) {
        return;
    }
    if (b->itype == RISCV_ITYPE_EXCEPTION ||
        b->itype == RISCV_ITYPE_INTERRUPT) {
        if (b->iretire) {
            ETraceBlock insns = *b;

            insns.itype = RISCV_ITYPE_NONE;
            insns.sijump = false;
            take_insns(e, &insns);
            if (!b->qualified) {
                return;     /* the trap belongs to untraced code */
            }
        }
        take_trap(e, b);
        return;
    }
    if (b->iretire) {
        take_insns(e, b);
    }
}

void etrace_encoder_stop(ETraceEncoder *e)
{
    if (e->enabled) {
        end_run(e, false);
        e->enabled = false;
    }
}

void etrace_encoder_lost(ETraceEncoder *e)
{
    if (!e->enabled) {
        return;
    }
    e->have_pending = false;
    e->in_run = false;
    e->trap.pending = false;
    e->need_sync = true;
    e->lost_pending = true;
    clear_branches(e);
}

void etrace_encoder_stats(const ETraceEncoder *e, ETraceStats *s)
{
    *s = e->stats;
}

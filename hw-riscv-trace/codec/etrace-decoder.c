/*
 * E-trace decoder: rebuild the executed instruction sequence from packets
 *
 * Reference: Efficient Trace for RISC-V v1.1.1 draft, chapter 11 (decoder
 * pseudo code), 3.2 (modes), 6 (packets) and 8 (the encoder it mirrors).
 *
 * The decoder keeps the position of the last retired instruction it has
 * reported (pc) and, for each te_inst packet, walks the program image from
 * there to the instruction the packet reports: branches take their
 * outcome from the packet's branch map or branch count, inferable jumps
 * their target from the opcode, uninferable ones the packet's address.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "target/riscv/insn_class.h"
#include "etrace-decoder.h"
#include "etrace-data.h"
#include "etrace-dec-report.h"
#include "etrace-deframe.h"
#include "etrace-model.h"

/* Decoded instructions, cached per address (direct mapped). */
#define ICACHE_BITS         13
#define ICACHE_SIZE         (1u << ICACHE_BITS)
#define ICACHE_EMPTY_TAG    1   /* no instruction has an odd address */

#define DEFAULT_STRAIGHT_RUN    (1ull << 22)
#define DEFAULT_PACKET_WALK     (1ull << 27)

/* What an instruction does to the walk. */
typedef enum InsnKind {
    KIND_SEQUENTIAL,    /* falls through */
    KIND_CONSTANT,      /* lui, auipc, c.lui: falls through, sijump source */
    KIND_BRANCH,
    KIND_JUMP,          /* inferable: jal, c.j, c.jal */
    KIND_INDIRECT,      /* uninferable: jalr, c.jr, c.jalr */
    KIND_TRAP_RETURN,   /* mret, sret, mnret */
    KIND_TRAP,          /* ecall, ebreak, c.ebreak: retire, then trap */
    KIND_NO_RETIRE,     /* the defined illegal instruction 0 */
} InsnKind;

/* 16 bytes: the walk copies one per instruction. */
typedef struct DecInsn {
    uint64_t addr;          /* tag */
    int32_t imm;            /* branch/jal offset, jalr or constant imm */
    uint8_t len;
    uint8_t kind;           /* InsnKind */
    uint8_t reg;            /* jalr rs1, constant rd */
    uint8_t call:1;         /* pushes a return address (itype 8, 9) */
    uint8_t ret:1;          /* may pop one (itype 13) */
    uint8_t auipc:1;        /* constant is pc-relative */
    uint8_t itype:4;        /* of a jump or trap return, for tools */
} DecInsn;

/*
 * Straight-line code: the instructions from addr on that fall through
 * without a call (KIND_SEQUENTIAL), at most RUN_MAX of them.  The walk
 * passes over them without stepping through each (skip_run()).
 */
#define RUN_MAX             64
typedef struct RunInfo {
    uint64_t addr;          /* tag */
    uint64_t lens4;         /* bit i: instruction i is 4 bytes long */
    uint32_t last;          /* offset of the last instruction */
    uint32_t n;
} RunInfo;

/*
 * Where the walk for the current packet must stop, from its fields.
 * Flags are already compared with their preceding bit (6.6.1-6.6.3).
 */
typedef struct Target {
    uint64_t addr;
    bool has_addr;
    bool sync;              /* format 3 subformat 0 */
    bool successor;         /* it reports the instruction after pc */
    bool notify;
    bool updiscon;
    bool irreport;
    uint32_t irdepth;
    unsigned priv;
} Target;

/* Outcomes still to be taken, oldest first: bits, predicted, one miss. */
typedef struct BranchQueue {
    uint64_t map;           /* bit 0 first; 1 = not taken */
    unsigned nmap;
    uint64_t npred;         /* then this many correctly predicted */
    bool miss;              /* then one that failed the prediction */
    bool sync_first;        /* the first bit is a sync's branch field */
} BranchQueue;

struct ETraceDecoder {
    ETraceDecoderConfig cfg;
    ETraceParams p;
    ETraceOptions opt;
    uint64_t addr_mask;     /* XLEN bits */
    uint64_t max_run;
    uint64_t max_walk;      /* instructions followed for one packet */
    uint64_t walked;

    /* stream */
    ETraceDeframer *deframer;   /* created by the first etrace_decoder_feed */
    ETraceDecReport rep;    /* the packet being decoded, events */
    ETraceDataState dstate; /* data trace: since the last format 3 */

    /* instruction flow */
    bool synced;
    bool have_pc;
    uint64_t pc;
    DecInsn cur;            /* the instruction at pc */
    unsigned priv;
    uint64_t context;
    uint64_t last_addr;     /* base of differential addresses */
    bool popped;            /* pc was reached by an implicit return */
    bool prev_const;        /* previous instruction set a constant */
    unsigned prev_const_reg;
    uint64_t prev_const_value;
    BranchQueue bq;
    bool stop_at_last_branch;
    /* stopped at an address that may recur before the real stop (6.6.2) */
    bool inferred;
    Target inferred_target;
    /* 2.0: a trap came before its handler retired; its format 3.0 next */
    bool trap_before_handler;

    /* implicit return: the call stack and its storage */
    ETraceCallStack calls;
    uint64_t *irstack;      /* max(2^return_stack_size_p, 2^ccs) entries */
    /* branch predictor (3.2.6) and jump target cache (3.2.7) */
    uint8_t *bpred;
    uint32_t bpred_mask;
    uint64_t *jtc;
    bool *jtc_valid;
    uint32_t jtc_mask;

    ETraceDecStats stats;
    DecInsn icache[ICACHE_SIZE];
    RunInfo runs[ICACHE_SIZE];
};

/* ------------------------------------------------------------- helpers */

static uint64_t sext(uint64_t v, unsigned bits)
{
    if (bits >= 64) {
        return v;
    }
    return (uint64_t)((int64_t)(v << (64 - bits)) >> (64 - bits));
}

static void report(ETraceDecoder *d, ETraceDecEvent *ev)
{
    etrace_dec_report(&d->rep, ev);
}

static void event_init(ETraceDecoder *d, ETraceDecEvent *ev,
                       ETraceDecEventType type)
{
    etrace_dec_event_init(&d->rep, ev, type, d->priv, d->context, d->pc,
                          d->have_pc);
    ev->options = d->opt;
}

/*
 * Bad input: report it and wait for the next synchronisation packet.
 * Returns false so that callers can write "return error(d, ...)".
 */
static bool error(ETraceDecoder *d, const char *msg)
{
    ETraceDecEvent ev;

    event_init(d, &ev, ETRACE_DEC_ERROR);
    etrace_dec_error(&d->rep, &ev, msg);
    d->stats.errors++;
    d->synced = false;
    d->inferred = false;
    return false;
}

/*
 * No image holds the instruction at addr (etrace_dec_no_image()): a
 * gap; wait for the next synchronisation packet.  Returns false like
 * error().
 */
static bool no_image(ETraceDecoder *d, uint64_t addr)
{
    ETraceDecEvent ev;

    event_init(d, &ev, ETRACE_DEC_GAP);
    etrace_dec_no_image(&d->rep, &ev, addr);
    d->synced = false;
    d->inferred = false;
    return false;
}

/* --------------------------------------------------------- instructions */

static bool fetch_insn(ETraceDecoder *d, uint64_t addr, uint32_t *insn)
{
    uint16_t lo, hi = 0;

    if (!d->cfg.read_parcel(d->cfg.opaque, addr, &lo)) {
        return false;
    }
    if (riscv_insn_len(lo) == 4 &&
        !d->cfg.read_parcel(d->cfg.opaque, (addr + 2) & d->addr_mask,
                            &hi)) {
        return false;
    }
    *insn = lo | (uint32_t)hi << 16;
    return true;
}

/*
 * The constant a lui, auipc or c.lui writes (relative to pc for auipc),
 * sign-extended from 32 bits; RV32 addresses are masked where used.
 */
static void decode_constant(uint32_t insn, DecInsn *di)
{
    if (riscv_insn_len(insn) == 2) {
        /* c.lui: nzimm[17] = insn[12], nzimm[16:12] = insn[6:2] */
        di->imm = sext((insn >> 12 & 1) << 17 | (insn >> 2 & 0x1f) << 12, 18);
    } else {
        di->imm = (int32_t)(insn & 0xfffff000u);
        di->auipc = (insn & 0x7f) == 0x17;
    }
}

static void decode_insn(ETraceDecoder *d, uint64_t addr, uint32_t insn,
                        DecInsn *di)
{
    RISCVInsnClass c;
    bool valid = riscv_classify_insn_isa(insn, d->p.iaddress_width_p,
                                         d->cfg.isa, &c);

    memset(di, 0, sizeof(*di));
    di->addr = addr;
    di->len = c.len;
    di->kind = KIND_SEQUENTIAL;
    if (!valid && c.len == 2 && (insn & 0xffff) == 0) {
        di->kind = KIND_NO_RETIRE;  /* the defined illegal instruction */
        return;
    }
    switch (c.flow) {
    case RISCV_FLOW_SEQUENTIAL:
        if (c.sets_constant) {
            di->kind = KIND_CONSTANT;
            di->reg = (insn >> 7) & 0x1f;
            decode_constant(insn, di);
        }
        break;
    case RISCV_FLOW_BRANCH:
        di->kind = KIND_BRANCH;
        di->imm = c.offset;
        break;
    case RISCV_FLOW_JUMP:
        di->itype = c.itype;
        di->call = c.itype == RISCV_ITYPE_UNINFERABLE_CALL ||
                   c.itype == RISCV_ITYPE_INFERABLE_CALL;
        di->ret = c.itype == RISCV_ITYPE_RETURN;
        if (c.inferable) {
            di->kind = KIND_JUMP;
            di->imm = c.offset;
        } else if (riscv_itype_is_uninferable(c.itype)) {
            di->kind = KIND_INDIRECT;
            di->reg = c.rs1;
            /* jalr imm[11:0]; the compressed forms have none */
            di->imm = c.len == 4 ? (int32_t)sext(insn >> 20, 12) : 0;
        }
        break;
    case RISCV_FLOW_TRAP_RETURN:
        di->kind = KIND_TRAP_RETURN;
        di->itype = RISCV_ITYPE_TRAP_RETURN;
        break;
    case RISCV_FLOW_TRAP:
        di->kind = KIND_TRAP;
        break;
    }
}

static DecInsn *icache_slot(ETraceDecoder *d, uint64_t addr)
{
    return &d->icache[(addr >> 1) & (ICACHE_SIZE - 1)];
}

/* The decoded instruction at addr, or NULL if it is not in the image. */
static const DecInsn *peek(ETraceDecoder *d, uint64_t addr)
{
    DecInsn *di = icache_slot(d, addr);
    uint32_t insn;

    if (di->addr == addr) {
        return di;
    }
    if ((addr & 1) || !fetch_insn(d, addr, &insn)) {
        return NULL;
    }
    decode_insn(d, addr, insn, di);
    return di;
}

/* The instruction at addr; NULL after a gap if it is not in the image. */
static const DecInsn *lookup(ETraceDecoder *d, uint64_t addr)
{
    const DecInsn *di = peek(d, addr);

    if (!di) {
        no_image(d, addr);
    }
    return di;
}

/* -------------------------------------------------------------- emission */

void etrace_decoder_run_insns(ETraceInsnFn *insn, void *opaque,
                              uint64_t addr, unsigned privilege, unsigned n,
                              uint64_t lens4)
{
    ETraceDecInsn e = { .addr = addr, .privilege = privilege };

    for (unsigned i = 0; i < n; i++) {
        e.len = lens4 >> i & 1 ? 4 : 2;
        insn(opaque, &e);
        e.addr += e.len;
    }
}

static void emit(ETraceDecoder *d)
{
    d->stats.instructions++;
    if (d->cfg.insn) {
        ETraceDecInsn insn = {
            .addr = d->pc, .privilege = d->priv, .len = d->cur.len,
            .branch = d->cur.kind == KIND_BRANCH, .itype = d->cur.itype,
        };

        d->cfg.insn(d->cfg.opaque, &insn);
    }
}

/* ---------------------------------------------------- implicit returns */

/*
 * The decoder keeps return addresses with a call counter too: it needs
 * them to follow the returns the encoder only counted.
 */
static void ir_reset(ETraceDecoder *d)
{
    uint32_t max = etrace_callstack_max(&d->p, d->opt.implicit_return);
    uint32_t mask = 0;

    while (mask + 1 < max) {
        mask = mask << 1 | 1;
    }
    etrace_callstack_reset(&d->calls, d->irstack, mask, max);
}

/* ------------------------------------------------------------- branches */

static uint64_t bq_total(const BranchQueue *q)
{
    return q->nmap + q->npred + q->miss;
}

static void bq_clear(BranchQueue *q)
{
    memset(q, 0, sizeof(*q));
}

static void bq_add_bits(BranchQueue *q, uint32_t bits, unsigned n)
{
    q->map |= (uint64_t)(bits & ((1ull << n) - 1)) << q->nmap;
    q->nmap += n;
}

static uint8_t *bpred_entry(ETraceDecoder *d, uint64_t addr)
{
    if (!d->opt.branch_prediction || !d->bpred) {
        return NULL;
    }
    return &d->bpred[etrace_table_index(&d->p, d->bpred_mask, addr)];
}

static void bpred_reset(ETraceDecoder *d)
{
    if (d->bpred) {
        memset(d->bpred, ETRACE_BPRED_INIT, (size_t)d->bpred_mask + 1);
    }
}

/* The outcome of the branch at pc, oldest queued first. */
static bool take_branch(ETraceDecoder *d, uint64_t pc, bool *taken)
{
    BranchQueue *q = &d->bq;
    uint8_t *state = bpred_entry(d, pc);

    if (q->nmap) {
        *taken = !(q->map & 1);
        q->map >>= 1;
        q->nmap--;
    } else if (q->npred || q->miss) {
        if (!state) {
            return error(d, "predicted branches without a branch predictor");
        }
        *taken = etrace_bpred_taken(*state) ^ !q->npred;
        if (q->npred) {
            q->npred--;
        } else {
            q->miss = false;
        }
    } else {
        return error(d, "branch without an outcome in the trace");
    }
    /*
     * The encoder updated the predictor with the outcome of the branch a
     * sync packet reports before that packet reset the table.
     */
    if (state && !q->sync_first) {
        *state = etrace_bpred_next(*state, *taken);
    }
    q->sync_first = false;
    return true;
}

/*
 * A packet ended the walk on a branch whose outcome it gave by prediction
 * (branch_fmt 2 or 3, or a failed prediction without address): turn it
 * into a plain bit before the next packet queues its own outcomes.
 */
static bool bq_settle(ETraceDecoder *d)
{
    BranchQueue *q = &d->bq;
    uint8_t *state;
    bool taken = false;

    if (!q->npred && !q->miss) {
        return true;
    }
    if (q->nmap || bq_total(q) > 1 || d->cur.kind != KIND_BRANCH) {
        return error(d, "unprocessed branches");
    }
    state = bpred_entry(d, d->pc);
    if (!state) {
        return error(d, "predicted branches without a branch predictor");
    }
    taken = (*state >> 1) ^ q->miss;
    bq_clear(q);
    bq_add_bits(q, !taken, 1);
    return true;
}

/* ------------------------------------------------------------------ walk */

/* Where an uninferable discontinuity goes: the packet's address. */
static bool reported_target(ETraceDecoder *d, const Target *t,
                            uint64_t *next)
{
    if (d->stop_at_last_branch) {
        return error(d, "unexpected uninferable discontinuity");
    }
    if (!t->has_addr) {
        return error(d, "uninferable discontinuity without an address");
    }
    *next = t->addr;
    return true;
}

#define LOOKAHEAD_STEPS     1024
#define LOOKAHEAD_CALLS     16

/*
 * irdepth names a stack depth, not a return (6.6.3; 2.0 counts returns
 * instead): the return found at that depth may be an earlier one than
 * the return that failed, or the packet may only report the depth.
 * Could this return be implicit?  Follow its predicted target without
 * outcomes (none is left): it could if that reaches the reported address
 * or another return at the reported depth before anything that would
 * have needed an outcome or an address of its own.  Past a call, only
 * the reported address counts: after a predicted return with no branch
 * since, the encoder reports a call with notify (it repeats code at the
 * same depth) before any later address, so the return that failed is
 * not beyond it.
 */
static bool implicit_possible(ETraceDecoder *d, const Target *t)
{
    uint64_t calls[LOOKAHEAD_CALLS];
    unsigned ncalls = 0;
    uint32_t depth = d->calls.depth - 1;    /* below the popped entry */
    uint64_t pc = etrace_callstack_at(&d->calls, depth);
    bool prev_const = false;
    unsigned const_reg = 0;
    uint64_t const_value = 0;
    bool called = false;

    for (unsigned n = 0; n < LOOKAHEAD_STEPS; n++) {
        const DecInsn *di = peek(d, pc);
        uint64_t next;

        if (!di) {
            return false;
        }
        if (pc == t->addr && depth + ncalls == t->irdepth) {
            return true;
        }
        next = pc + di->len;
        switch (di->kind) {
        case KIND_JUMP:
            next = pc + di->imm;
            break;
        case KIND_INDIRECT:
            if (d->opt.sijump && prev_const && const_reg == di->reg) {
                next = (const_value + di->imm) & ~(uint64_t)1;
            } else if (di->ret && depth + ncalls == t->irdepth && !called) {
                return true;    /* the return that failed may be this one */
            } else if (di->ret && ncalls) {
                next = calls[--ncalls];
            } else if (di->ret && depth) {
                next = etrace_callstack_at(&d->calls, --depth);
            } else {
                return false;
            }
            break;
        case KIND_SEQUENTIAL:
        case KIND_CONSTANT:
            break;
        default:    /* a branch, trap return or trap */
            return false;
        }
        if (di->call) {
            if (ncalls == LOOKAHEAD_CALLS) {
                return false;
            }
            calls[ncalls++] = (pc + di->len) & d->addr_mask;
            called = true;
        }
        prev_const = di->kind == KIND_CONSTANT;
        if (prev_const) {
            const_reg = di->reg;
            const_value = di->imm + (di->auipc ? pc : 0);
        }
        pc = next & d->addr_mask;
    }
    return false;
}

/*
 * Is this return implicit (its target the top of the return stack)?  In
 * return stack mode, a return whose prediction failed is reported with
 * irreport and the stack depth it found (6.6.3): that is this return if
 * the depth matches, no branch is left before the reported address, the
 * stack did not predict that address and the return cannot be implicit.
 * A format 3 for the next instruction says it by its address.
 */
static bool implicit_return(ETraceDecoder *d, const Target *t)
{
    const DecInsn *at;
    uint64_t left;

    if (d->opt.implicit_return == ETRACE_IR_OFF || !d->calls.depth) {
        return false;
    }
    if (t->successor) {
        /* the target is the packet's address: predicted or not? */
        return etrace_callstack_at(&d->calls, d->calls.depth - 1) == t->addr;
    }
    if (d->opt.implicit_return != ETRACE_IR_RETURN_STACK ||
        !t->irreport || !t->has_addr || t->irdepth != d->calls.depth ||
        etrace_callstack_at(&d->calls, d->calls.depth - 1) == t->addr) {
        return true;
    }
    at = peek(d, t->addr);
    left = bq_total(&d->bq);
    return !at || left != (at->kind == KIND_BRANCH) ||
           implicit_possible(d, t);
}

/* Make the instruction at next (in the image) the current one. */
static inline bool step_to(ETraceDecoder *d, uint64_t next)
{
    const DecInsn *ni = icache_slot(d, next);

    if (unlikely(ni->addr != next)) {
        ni = lookup(d, next);
        if (!ni) {
            return false;
        }
    }
    if (unlikely(ni->kind == KIND_NO_RETIRE)) {
        return error(d, "the path reaches an instruction that cannot retire");
    }
    d->cur = *ni;
    d->pc = next;
    return true;
}

/* step() for all but sequential instructions. */
static bool __attribute__((noinline))
step_transfer(ETraceDecoder *d, const Target *t, bool *jumped)
{
    const DecInsn cur = d->cur;
    uint64_t pc = d->pc, next = pc + cur.len;
    bool taken = false;

    switch (cur.kind) {
    case KIND_BRANCH:
        if (!take_branch(d, pc, &taken)) {
            return false;
        }
        if (taken) {
            next = pc + cur.imm;
        }
        break;
    case KIND_JUMP:
        next = pc + cur.imm;
        break;
    case KIND_INDIRECT:
        if (d->opt.sijump && d->prev_const && d->prev_const_reg == cur.reg) {
            /* 4.1.1: the constant of the instruction just before */
            next = (d->prev_const_value + cur.imm) & ~(uint64_t)1;
        } else if (cur.ret && implicit_return(d, t)) {
            next = etrace_callstack_pop(&d->calls);
            d->popped = true;
        } else {
            /* a failed prediction leaves the stack as it is (11.1) */
            if (!reported_target(d, t, &next)) {
                return false;
            }
            *jumped = true;
        }
        break;
    case KIND_TRAP_RETURN:
    case KIND_TRAP:
        /*
         * Uninferable discontinuities (11, is_uninferable_discon): an
         * ecall's or ebreak's next instruction is the handler, which its
         * trap packet gives; past one, only a reported address leads on.
         */
        if (!reported_target(d, t, &next)) {
            return false;
        }
        *jumped = true;
        break;
    default:
        break;
    }
    if (cur.call) {
        etrace_callstack_push(&d->calls, (pc + cur.len) & d->addr_mask);
    }
    d->prev_const = cur.kind == KIND_CONSTANT;
    if (d->prev_const) {
        d->prev_const_reg = cur.reg;
        d->prev_const_value = cur.imm + (cur.auipc ? pc : 0);
    }
    next &= d->addr_mask;
    if (*jumped && d->jtc && d->opt.jump_target_cache) {
        /* 3.2.7: every reported uninferable target enters the cache */
        uint32_t i = etrace_table_index(&d->p, d->jtc_mask, next);

        d->jtc[i] = next;
        d->jtc_valid[i] = true;
    }
    return step_to(d, next);
}

/*
 * Move to the next retired instruction.  *jumped: it is the packet's
 * address, reached through an uninferable discontinuity.  Most
 * instructions fall through: they take the short way.
 */
static inline bool step(ETraceDecoder *d, const Target *t, bool *jumped)
{
    *jumped = false;
    d->popped = false;
    if (likely(d->cur.kind == KIND_SEQUENTIAL && !d->cur.call)) {
        d->prev_const = false;
        return step_to(d, (d->pc + d->cur.len) & d->addr_mask);
    }
    return step_transfer(d, t, jumped);
}

static const RunInfo *run_info(ETraceDecoder *d, uint64_t pc)
{
    RunInfo *r = &d->runs[(pc >> 1) & (ICACHE_SIZE - 1)];
    uint64_t a = pc;

    if (r->addr == pc) {
        return r;
    }
    r->addr = pc;
    r->lens4 = 0;
    r->last = 0;
    for (r->n = 0; r->n < RUN_MAX; r->n++) {
        const DecInsn *di = peek(d, a);
        uint64_t next;

        if (!di || di->kind != KIND_SEQUENTIAL || di->call) {
            break;
        }
        r->last = a - pc;
        r->lens4 |= (uint64_t)(di->len == 4) << r->n;
        next = (a + di->len) & d->addr_mask;
        if (next < a) {
            r->n++;
            break;      /* the end of the address space */
        }
        a = next;
    }
    return r;
}

/*
 * The current instruction falls through: retire the straight-line
 * instructions after it in one go, up to the last one before the next
 * control transfer, which becomes the current instruction.  Nothing of
 * walk()'s checks applies to them unless the packet's address is among
 * them, or a limit would be reached: then the walk steps as usual.
 */
static void skip_run(ETraceDecoder *d, const Target *t, uint64_t *run)
{
    const RunInfo *r = run_info(d, d->pc);
    unsigned k = r->n ? r->n - 1 : 0;   /* after the current one */
    uint64_t first, last;

    if (k == 0 || d->walked + k > d->max_walk || *run + k > d->max_run) {
        return;
    }
    first = d->pc + (r->lens4 & 1 ? 4 : 2);
    last = d->pc + r->last;
    if (t->has_addr && t->addr >= first && t->addr <= last) {
        return;
    }
    d->walked += k;
    *run += k;
    d->stats.instructions += k;
    if (d->cfg.insn_run) {
        d->cfg.insn_run(d->cfg.opaque, first, d->priv, k, r->lens4 >> 1);
    } else if (d->cfg.insn) {
        etrace_decoder_run_insns(d->cfg.insn, d->cfg.opaque, first, d->priv,
                                 k, r->lens4 >> 1);
    }
    d->cur = (DecInsn) {
        .addr = last, .len = r->lens4 >> k & 1 ? 4 : 2,
        .kind = KIND_SEQUENTIAL,
    };
    d->pc = last;
}

static inline bool no_progress(ETraceDecoder *d, uint64_t *run,
                               bool branch)
{
    if (++d->walked > d->max_walk) {
        return !error(d, "more instructions for one packet than the limit "
                      "(max_packet_walk)");
    }
    *run = branch ? 0 : *run + 1;
    if (*run > d->max_run) {
        return !error(d, "the path does not reach the reported address");
    }
    return false;
}

/*
 * 6.6.2 case 1: the previous packet reported the target of an uninferable
 * jump that the walk had already met by falling through; the address it
 * meant is the next one reached through that jump.
 */
static bool walk_again(ETraceDecoder *d)
{
    Target t = d->inferred_target;
    uint64_t run = 0;
    bool jumped, branch;

    d->inferred = false;
    do {
        branch = d->cur.kind == KIND_BRANCH;
        if (!step(d, &t, &jumped) || no_progress(d, &run, branch)) {
            return false;
        }
        emit(d);
    } while (!jumped);
    return true;
}

static void arrive_sync(ETraceDecoder *d, const Target *t);

/*
 * A walk that takes no branch outcome and pops no implicit return
 * follows one path only: if it comes back to an instruction at the same
 * call depth, it goes round that loop for ever without reaching the
 * packet's address (a wrong path, after text that changed at run time:
 * a spin loop such as cpu_relax()'s).  Brent's check, from the last
 * branch or implicit return on: a mark at 1, 2, 4... steps, and a
 * return to it is the loop.  Without it the walk went round until
 * max_run, and retired millions of instructions that never ran.
 */
typedef struct LoopCheck {
    uint64_t pc;
    uint32_t depth;
    bool marked;
    uint64_t steps, power;
} LoopCheck;

/* After a step that took the decoder to pc; true if it closed a loop */
static bool loop_closed(LoopCheck *lc, const ETraceDecoder *d, bool branch)
{
    if (branch || d->popped) {
        *lc = (LoopCheck) { .power = 1 };
        return false;
    }
    if (lc->marked && d->pc == lc->pc && d->calls.depth == lc->depth) {
        return true;
    }
    if (++lc->steps >= lc->power) {
        *lc = (LoopCheck) {
            .pc = d->pc, .depth = d->calls.depth, .marked = true,
            .power = lc->power * 2,
        };
    }
    return false;
}

/* Follow the program from pc to the instruction the packet reports. */
static bool walk(ETraceDecoder *d, const Target *t)
{
    uint64_t run = 0;
    bool jumped, branch;
    LoopCheck lc = { .power = 1 };

    for (;;) {
        uint64_t left;
        bool at_branch;

        if (d->cur.kind == KIND_SEQUENTIAL && !d->cur.call) {
            skip_run(d, t, &run);
        }
        branch = d->cur.kind == KIND_BRANCH;
        if (!step(d, t, &jumped) || no_progress(d, &run, branch)) {
            return false;
        }
        /* (the first visit of an instruction decides as well) */
        if (!jumped && loop_closed(&lc, d, branch)) {
            return error(d, "the path does not reach the reported address "
                         "(a loop without branches)");
        }
        left = bq_total(&d->bq);
        at_branch = d->cur.kind == KIND_BRANCH;
        if (d->stop_at_last_branch) {
            if (left == 1 && at_branch) {
                /* its outcome comes with the next packet */
                d->stop_at_last_branch = false;
                emit(d);
                return true;
            }
            emit(d);
            continue;
        }
        if (jumped) {
            if (left > at_branch) {
                return error(d, "unprocessed branches");
            }
            if (t->sync) {
                arrive_sync(d, t);
            }
            emit(d);
            return true;
        }
        if (d->pc == t->addr && t->has_addr && left == at_branch) {
            /* a new privilege is only reached through a jump (2.0) */
            if (t->sync && t->priv == d->priv) {
                arrive_sync(d, t);
                emit(d);
                return true;
            }
            if (t->sync) {
                emit(d);
                continue;
            }
            /*
             * A notify report before a trap, a resync or the end carries
             * the depth too (6.6.3): after an implicit return the same
             * address may have come first in the call that return left.
             */
            if (t->notify && (!t->irreport || t->irdepth == d->calls.depth)) {
                ETraceDecEvent ev;

                emit(d);
                event_init(d, &ev, ETRACE_DEC_NOTIFY);
                report(d, &ev);
                return true;
            }
            /*
             * 6.6.3: after an implicit return, the depth is always
             * reported (the encoder left out depth 0 until 2026-11-28,
             * which this still reads); without it, this is not the
             * reported instance.
             */
            if (!t->updiscon &&
                (t->irreport ? t->irdepth == d->calls.depth :
                 !d->popped || !d->calls.depth)) {
                emit(d);
                /*
                 * A branch with only its own outcome left is this
                 * instance: a jump target's outcome comes with the
                 * packet too, so an earlier instance would leave two.
                 * Such a packet is a count filled on a branch (6.8.2).
                 */
                if (at_branch) {
                    return true;
                }
                /* not after a jump: the address may come round again */
                d->inferred = true;
                d->inferred_target = *t;
                return true;
            }
        }
        emit(d);
    }
}

/* ------------------------------------------------------------ te_inst */

/* notify, updiscon and irreport: the bits differ from the one before. */
static void packet_flags(const ETraceDecoder *d, const ETracePacket *pkt,
                         Target *t)
{
    etrace_packet_get_flags(&d->p, pkt, &t->notify, &t->updiscon,
                            &t->irreport);
    t->irdepth = pkt->irdepth;
}

/* Addresses are byte values, absolute or from the last one reported. */
static uint64_t packet_address(const ETraceDecoder *d, uint64_t field,
                               bool differential)
{
    return (differential ? d->last_addr + field : field) & d->addr_mask;
}

static bool format0(ETraceDecoder *d, const ETracePacket *pkt, Target *t)
{
    unsigned sub = pkt->subformat;

    if (!d->p.f0s_width_p) {
        /* one optional format only: the options say which (6.8.1) */
        sub = d->opt.branch_prediction ? 0 : 1;
    }
    d->stats.f0_subformats[sub & 1]++;
    if (sub == 0) {
        if (!d->opt.branch_prediction || !d->bpred) {
            return error(d, "branch count without branch prediction");
        }
        /* correctly predicted branches, minus 31 (6.8) */
        d->bq.npred = (uint64_t)pkt->branch_count + 31;
        switch (pkt->branch_fmt) {
        case 0:     /* then one that failed; no address */
            d->bq.miss = true;
            d->stop_at_last_branch = true;
            return true;
        case 3:     /* the reported address is a branch that failed */
            d->bq.miss = true;
            /* fall through */
        case 2:
            t->has_addr = true;
            t->addr = packet_address(d, pkt->address, !d->opt.full_address);
            packet_flags(d, pkt, t);
            return true;
        default:
            return error(d, "reserved branch_fmt");
        }
    }
    if (sub != 1 || !d->opt.jump_target_cache || !d->jtc) {
        return error(d, "jump target index without a jump target cache");
    }
    if (pkt->index > d->jtc_mask || !d->jtc_valid[pkt->index]) {
        return error(d, "jump target cache index of an empty entry");
    }
    if (pkt->branches > 31) {
        return error(d, "branch count out of range");
    }
    t->has_addr = true;
    t->addr = d->jtc[pkt->index];
    bq_add_bits(&d->bq, pkt->branch_map, pkt->branches);
    packet_flags(d, pkt, t);
    return true;
}

static bool te_inst(ETraceDecoder *d, const ETracePacket *pkt)
{
    Target t = { 0 };

    /*
     * A format 0/1/2 after a stop at an address met without a jump: that
     * address was the jump target of 6.6.2 case 1.  Go round first: the
     * jump target cache gets the address on the way.
     */
    if (d->inferred && !walk_again(d)) {
        return false;
    }
    if (!bq_settle(d)) {
        return false;
    }
    switch (pkt->format) {
    case 0:
        if (!format0(d, pkt, &t)) {
            return false;
        }
        break;
    case 1:
        if (pkt->branches == 0) {
            /* a full map and no address: stop at its last branch */
            bq_add_bits(&d->bq, pkt->branch_map, 31);
            d->stop_at_last_branch = true;
            break;
        }
        if (pkt->branches > 31) {
            return error(d, "branch count out of range");
        }
        bq_add_bits(&d->bq, pkt->branch_map, pkt->branches);
        /* fall through */
    case 2:
        t.has_addr = true;
        t.addr = packet_address(d, pkt->address, !d->opt.full_address);
        packet_flags(d, pkt, &t);
        break;
    default:
        return error(d, "bad format");
    }
    if (t.has_addr) {
        d->last_addr = t.addr;
    }
    return walk(d, &t);
}

/* ---------------------------------------------------------- format 3 */

static void arrive_sync(ETraceDecoder *d, const Target *t)
{
    ETraceDecEvent ev;

    d->priv = t->priv;
    event_init(d, &ev, ETRACE_DEC_SYNC);
    report(d, &ev);
}

/* Sync packets reset the state that both sides keep (3.2.5-3.2.7). */
static void sync_reset(ETraceDecoder *d)
{
    ir_reset(d);
    bpred_reset(d);
    if (d->jtc_valid) {
        memset(d->jtc_valid, 0, sizeof(bool) * ((size_t)d->jtc_mask + 1));
    }
    d->prev_const = false;
    d->stop_at_last_branch = false;
    d->inferred = false;
}

/* The handler of a trap whose address the packet omits (3.2.3). */
static bool trap_handler(ETraceDecoder *d, const ETracePacket *pkt,
                         uint64_t *addr)
{
    uint64_t tvec;

    if (d->cfg.trap_vector) {
        return d->cfg.trap_vector(d->cfg.opaque, pkt->privilege,
                                  pkt->ecause, pkt->interrupt, addr);
    }
    tvec = d->cfg.xtvec[pkt->privilege & 3];
    *addr = tvec & ~(uint64_t)3;
    if ((tvec & 3) == 1 && pkt->interrupt) {
        *addr += 4 * pkt->ecause;
    }
    *addr &= d->addr_mask;
    return true;
}

static void trap_event(ETraceDecoder *d, const ETracePacket *pkt,
                       uint64_t handler, bool handler_valid)
{
    ETraceDecEvent ev;

    event_init(d, &ev, ETRACE_DEC_TRAP);
    ev.address = handler;
    ev.handler_valid = handler_valid;
    ev.privilege = pkt->privilege;
    ev.context = pkt->context;
    ev.cause = pkt->ecause;
    ev.interrupt = pkt->interrupt;
    ev.tvalepc = pkt->tvalepc;
    ev.trap_from = d->pc;
    ev.trap_from_valid = d->synced;
    report(d, &ev);
}

static bool sync_packet(ETraceDecoder *d, const ETracePacket *pkt)
{
    bool trap = pkt->subformat == 1, resync;
    const DecInsn *di;
    DecInsn at = { 0 };
    Target t = { 0 };

    if (trap && d->p.arch == ETRACE_ARCH_2_0 && !pkt->thaddr) {
        /* 2.0: the handler trapped before retiring anything */
        trap_event(d, pkt, pkt->address & d->addr_mask, false);
        d->trap_before_handler = true;
        return true;
    }
    t.sync = true;
    t.has_addr = true;
    t.priv = pkt->privilege;
    if (trap && d->opt.implicit_exception) {
        if (!trap_handler(d, pkt, &t.addr)) {
            return error(d, "unknown trap handler address");
        }
    } else {
        t.addr = pkt->address & d->addr_mask;
    }
    di = peek(d, t.addr);
    if (di) {
        at = *di;   /* the walk may reuse the cache slot */
    }
    if (di && at.kind == KIND_NO_RETIRE) {
        return error(d, "sync at an instruction that cannot retire");
    }
    if (trap) {
        trap_event(d, pkt, t.addr, true);
    }
    d->context = pkt->context;
    /*
     * After a trap that came before its handler retired, the format 3.0
     * is the handler's first instruction: the instruction before the
     * trap was the last one reported (an uninferable jump, 2.0's thaddr),
     * and its target, the EPC, did not retire.  Nothing to walk: were
     * the jump a return, the walk would take the return stack's target.
     */
    resync = d->synced && !trap && !d->trap_before_handler;
    d->trap_before_handler = false;
    if (resync) {
        /*
         * A resync or privilege change: follow the path up to it.  After
         * an address without updiscon, a format 3 is for the instruction
         * that follows it (6.6.2 case 3).  A path out of the image ends
         * in a gap where it leaves it; the sync starts afresh.
         */
        t.successor = d->inferred;
        d->inferred = false;
        if (!bq_settle(d)) {
            return false;
        }
        if (at.kind == KIND_BRANCH) {
            bq_add_bits(&d->bq, pkt->branch, 1);
        }
        if (!walk(d, &t)) {
            if (!d->rep.gap_now || !di) {
                return false;
            }
            resync = false;
        }
    }
    if (!di) {
        return no_image(d, t.addr);
    }
    if (!resync) {
        bq_clear(&d->bq);
        if (at.kind == KIND_BRANCH) {
            bq_add_bits(&d->bq, pkt->branch, 1);
        }
        d->pc = t.addr;
        d->cur = at;
        d->have_pc = true;
        if (trap) {
            d->priv = t.priv;
        } else {
            arrive_sync(d, &t);
        }
        emit(d);
    }
    d->synced = true;
    etrace_dec_resumed(&d->rep);
    d->last_addr = t.addr;
    sync_reset(d);
    d->bq.sync_first = at.kind == KIND_BRANCH;
    return true;
}

static bool support_packet(ETraceDecoder *d, const ETracePacket *pkt)
{
    ETraceDecEvent ev;
    bool ended = !pkt->enable || pkt->qual_status != ETRACE_QUAL_NO_CHANGE;
    ETraceIRMode ir = d->opt.implicit_return;
    bool ok = true;

    etrace_options_unpack(&d->p, pkt->options, &d->opt);
    if (d->opt.implicit_return != ir) {
        ir_reset(d);
    }
    event_init(d, &ev, ETRACE_DEC_SUPPORT);
    ev.enable = pkt->enable;
    ev.qual_status = pkt->qual_status;
    report(d, &ev);
    if (!ended) {
        return true;
    }
    /* 6.5.1: ended_upd means the last address came round again */
    if (d->synced && d->inferred) {
        if (pkt->qual_status == ETRACE_QUAL_ENDED_UPD) {
            ok = walk_again(d);
        }
        d->inferred = false;
    }
    event_init(d, &ev, pkt->enable ? ETRACE_DEC_GAP : ETRACE_DEC_END);
    ev.gap_reason = pkt->qual_status == ETRACE_QUAL_TRACE_LOST ?
                    ETRACE_GAP_TRACE_LOST : ETRACE_GAP_QUALIFICATION;
    ev.enable = pkt->enable;
    ev.qual_status = pkt->qual_status;
    report(d, &ev);
    d->synced = false;
    bq_clear(&d->bq);
    return ok;
}

static bool context_packet(ETraceDecoder *d, const ETracePacket *pkt)
{
    ETraceDecEvent ev;

    d->context = pkt->context;
    event_init(d, &ev, ETRACE_DEC_CONTEXT);
    ev.privilege = pkt->privilege;
    report(d, &ev);
    return true;
}

/*
 * A data packet: its access, in stream order (etrace-dec-data.h pairs it
 * with its instruction).  Before the first sync it belongs to no
 * instruction the decoder will show, but it says what a support packet
 * lost with the start of a wrapped buffer would have said: data trace is
 * on (the events from the sync on carry it in their options), so that
 * the accesses of the sync's own instruction and those after it find
 * their instructions.
 */
static void data_packet(ETraceDecoder *d, const ETracePacket *pkt)
{
    ETraceDecEvent ev;
    ETraceDataAccess a;
    const char *err;

    d->stats.data_packets++;
    if (!d->synced) {
        d->opt.data = true;
        d->stats.skipped++;
        return;
    }
    if (etrace_data_expand(&d->p, &d->opt, &d->dstate, &pkt->dp, &a, &err)) {
        error(d, err);
        return;
    }
    event_init(d, &ev, ETRACE_DEC_DATA);
    ev.data = a;
    report(d, &ev);
}

int etrace_decoder_packet(ETraceDecoder *d, const ETracePacket *pkt)
{
    etrace_dec_clear(&d->rep);
    d->walked = 0;
    if (pkt->data) {
        data_packet(d, pkt);
        d->rep.number++;
        return d->rep.err_now ? -1 : 0;
    }
    d->stats.packets[pkt->format & 3]++;
    if (pkt->format == 3) {
        /* the encoder sends each size in full after any format 3 */
        etrace_data_sync(&d->dstate);
        d->stats.f3_subformats[pkt->subformat & 3]++;
        switch (pkt->subformat) {
        case 3:
            support_packet(d, pkt);
            break;
        case 2:
            context_packet(d, pkt);
            break;
        default:
            sync_packet(d, pkt);
            break;
        }
    } else if (!d->synced) {
        d->stats.skipped++;     /* waiting for a sync packet */
    } else {
        te_inst(d, pkt);
    }
    d->rep.number++;
    return d->rep.err_now ? -1 : 0;
}

/* ------------------------------------------------------------- stream */

/* Lost framing: the deframer ignores the rest of the stream. */
static void framing_error(ETraceDecoder *d, uint64_t offset, const char *msg)
{
    d->rep.offset = offset;
    error(d, msg);
}

/* ETraceDeframerOps: a whole frame is a packet. */
static void decoder_frame(void *opaque, const ETraceFrame *f)
{
    ETraceDecoder *d = opaque;
    ETracePacket pkt;
    const char *err = "bad packet";

    if (etrace_packet_unpack(&d->p, &d->opt, f->bytes, f->len, &pkt, &err) !=
        (int)f->len) {
        framing_error(d, f->offset, err);
        etrace_deframer_stop(d->deframer);
        return;
    }
    d->rep.offset = f->offset;
    etrace_decoder_packet(d, &pkt);
}

/* ETraceDeframerOps: a header that starts no frame. */
static void decoder_lost(void *opaque, uint64_t offset, uint64_t number,
                         uint8_t header)
{
    (void)number;
    (void)header;
    framing_error(opaque, offset, "header with payload length 0");
}

/* The bytes consumed: the deframer's, but the header that lost framing. */
static void stream_stats(ETraceDecoder *d)
{
    const ETraceDeframeStats *st = etrace_deframer_stats(d->deframer);

    d->stats.bytes = st->offset - st->skipped;
}

int etrace_decoder_feed(ETraceDecoder *d, const uint8_t *bytes, size_t len)
{
    static const ETraceDeframerOps ops = {
        .frame = decoder_frame, .lost = decoder_lost,
    };
    uint64_t errors = d->stats.errors;

    if (!d->deframer) {
        d->deframer = etrace_deframer_new(&d->p, &d->opt, 0, &ops, d);
        if (!d->deframer) {
            framing_error(d, 0, "out of memory");
            return -1;
        }
    }
    etrace_deframer_feed(d->deframer, bytes, len);
    stream_stats(d);
    return d->stats.errors != errors ? -1 : 0;
}

int etrace_decoder_finish(ETraceDecoder *d)
{
    const ETraceDeframeStats *st;

    if (!d->deframer) {
        return 0;
    }
    st = etrace_deframer_stats(d->deframer);
    if (etrace_deframer_finish(d->deframer) == ETRACE_DEFRAME_END_TRUNCATED) {
        framing_error(d, st->offset,
                      "truncated packet at the end of the stream");
        return -1;
    }
    return 0;
}

/* --------------------------------------------------------------- setup */

static bool params_ok(const ETraceParams *p)
{
    return (p->iaddress_width_p == 32 || p->iaddress_width_p == 64) &&
           (p->iaddress_lsb_p == 1 || p->iaddress_lsb_p == 2) &&
           p->bpred_size_p <= 20 && p->cache_size_p <= 20 &&
           p->call_counter_size_p <= 20 && p->return_stack_size_p <= 20;
}

ETraceDecoder *etrace_decoder_new(const ETraceDecoderConfig *cfg)
{
    ETraceDecoder *d;
    uint32_t irmax;

    if (!cfg->read_parcel || !params_ok(&cfg->params)) {
        return NULL;
    }
    d = calloc(1, sizeof(*d));
    if (!d) {
        return NULL;
    }
    d->cfg = *cfg;
    d->rep.event = cfg->event;
    d->rep.opaque = cfg->opaque;
    d->p = cfg->params;
    d->opt = cfg->options;
    d->addr_mask = d->p.iaddress_width_p == 64 ? UINT64_MAX : UINT32_MAX;
    d->max_run = cfg->max_straight_run ? cfg->max_straight_run
                                       : DEFAULT_STRAIGHT_RUN;
    d->max_walk = cfg->max_packet_walk ? cfg->max_packet_walk
                                       : DEFAULT_PACKET_WALK;
    for (unsigned i = 0; i < ICACHE_SIZE; i++) {
        d->icache[i].addr = ICACHE_EMPTY_TAG;
        d->runs[i].addr = ICACHE_EMPTY_TAG;
    }
    irmax = 1u << d->p.return_stack_size_p;
    if (irmax < 1u << d->p.call_counter_size_p) {
        irmax = 1u << d->p.call_counter_size_p;
    }
    d->irstack = calloc(irmax, sizeof(*d->irstack));
    if (d->p.bpred_size_p) {
        d->bpred_mask = etrace_table_mask(d->p.bpred_size_p);
        d->bpred = malloc((size_t)d->bpred_mask + 1);
    }
    if (d->p.cache_size_p) {
        d->jtc_mask = etrace_table_mask(d->p.cache_size_p);
        d->jtc = calloc((size_t)d->jtc_mask + 1, sizeof(*d->jtc));
        d->jtc_valid = calloc((size_t)d->jtc_mask + 1, sizeof(bool));
    }
    if (!d->irstack || (d->p.bpred_size_p && !d->bpred) ||
        (d->p.cache_size_p && (!d->jtc || !d->jtc_valid))) {
        etrace_decoder_free(d);
        return NULL;
    }
    sync_reset(d);
    return d;
}

void etrace_decoder_free(ETraceDecoder *d)
{
    if (d) {
        free(d->irstack);
        free(d->bpred);
        free(d->jtc);
        free(d->jtc_valid);
        etrace_deframer_free(d->deframer);
        free(d);
    }
}

const char *etrace_decoder_error(const ETraceDecoder *d, uint64_t *offset,
                                 uint64_t *packet)
{
    return etrace_dec_first_error(&d->rep, offset, packet);
}

void etrace_decoder_stats(const ETraceDecoder *d, ETraceDecStats *s)
{
    *s = d->stats;
}

const ETraceOptions *etrace_decoder_options(const ETraceDecoder *d)
{
    return &d->opt;
}

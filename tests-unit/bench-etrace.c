/*
 * Microbenchmark of the E-trace encoder and packet packer (not a test)
 *
 * Synthetic programs (a call-heavy recursion, branchy loops in the manner
 * of CoreMark, a mix of direct and indirect calls, and a jalr ending every
 * block, which makes a packet per block) are walked into block streams as
 * QEMU's trace ingress produces them; the streams are generated before
 * the clock starts, then fed to the encoder under several option
 * combinations.  The emit callback copies the packets to a buffer, as the
 * QEMU device does.
 *
 *   bench-etrace [-n BLOCKS] [-r ROUNDS] [-w WORKLOAD|pack] [-c OPTIONS]
 *       ns per block (best of the rounds), packets and bytes per block;
 *       ns per packet of etrace_packet_pack() and the fast packer
 *   bench-etrace --list [-w WORKLOAD] [-c OPTIONS]
 *       the workload and option names
 *   bench-etrace --digest [-n BLOCKS]
 *       a hash of every byte emitted
 *
 * --digest feeds random programs with traps, privilege and context
 * changes, notify, filtering, lost packets, restarts and garbage blocks,
 * for every option combination on many parameter sets, and packs and
 * unpacks random packets; it prints one hash per stream, using only the
 * API that predates the fast paths: two versions of the codec that print
 * the same digests emit the same bytes (scripts/bench-codec.sh).  Every
 * random draw is its own statement, so that the streams do not depend on
 * the compiler's order of evaluation.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <time.h>
#include "insn_class.h"
#include "etrace.h"

/* ------------------------------------------------------------- random */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static unsigned rng_below(uint64_t *s, unsigned n)
{
    return rng_next(s) % n;
}

/* A random value of a random width. */
static uint64_t rng_value(uint64_t *rng)
{
    uint64_t v = rng_next(rng);

    return v >> rng_below(rng, 64);
}

/* True with probability per_mille / 1000. */
static bool rng_chance(uint64_t *s, unsigned per_mille)
{
    return rng_below(s, 1000) < per_mille;
}

/* ------------------------------------------------------------ programs */

/* How a basic block ends. */
typedef enum SiteEnd {
    END_FALL,           /* itype 0: split without a control transfer */
    END_BRANCH,         /* taken with probability bias / 256 */
    END_BASE_CASE,      /* branch taken once the call depth hit its limit */
    END_CALL,           /* jal (itype 9), returns to the next site */
    END_ICALL,          /* jalr (itype 8), returns to the next site */
    END_RETURN,
    END_JUMP,           /* jal (itype 15) */
    END_SWITCH,         /* jalr to one of four targets (itype 14) */
    END_TAIL,           /* tail call (itype 11) */
    END_ITAIL,          /* indirect tail call (itype 10) */
    END_MRET,           /* trap return (itype 3) */
    END_KINDS,
} SiteEnd;

typedef struct Site {
    uint64_t addr;
    uint32_t iretire;
    uint32_t ninsns;
    bool ilastsize;
    bool sijump;
    uint8_t end;
    uint8_t bias;
    uint32_t target[4]; /* site indexes */
} Site;

#define MAX_SITES 4096

typedef struct Program {
    Site site[MAX_SITES];
    unsigned nsites;
    unsigned handler;   /* trap handler (ends with mret) */
} Program;

/* A random block of 1..max_insns instructions at addr. */
static Site *add_site(Program *g, uint64_t *rng, uint64_t addr,
                      unsigned max_insns)
{
    Site *s = &g->site[g->nsites++];
    unsigned n = 1 + rng_below(rng, max_insns);

    memset(s, 0, sizeof(*s));
    s->addr = addr;
    s->ninsns = n;
    for (unsigned i = 0; i < n; i++) {
        s->ilastsize = rng_below(rng, 10) < 6;
        s->iretire += s->ilastsize ? 2 : 1;
    }
    return s;
}

/* Block weights of a generated function's inner blocks, per SiteEnd. */
typedef struct Shape {
    unsigned functions;
    unsigned min_blocks, max_blocks;
    unsigned max_insns;
    unsigned weight[END_KINDS];
} Shape;

static unsigned pick_end(const Shape *sh, uint64_t *rng)
{
    unsigned sum = 0, r;

    for (unsigned k = 0; k < END_KINDS; k++) {
        sum += sh->weight[k];
    }
    r = rng_below(rng, sum);
    for (unsigned k = 0; k < END_KINDS; k++) {
        if (r < sh->weight[k]) {
            return k;
        }
        r -= sh->weight[k];
    }
    return END_FALL;
}

static const uint8_t branch_bias[] = { 4, 128, 230, 250, 255, 0, 255, 16 };

/*
 * Functions at random addresses (a few far away, in the upper half), each
 * a run of consecutive blocks; calls and tail calls go to later functions
 * only, so every walk returns to main (function 0), which loops.
 */
static void gen_program(Program *g, const Shape *sh, uint64_t seed,
                        uint64_t addr_mask)
{
    uint64_t rng = seed;
    unsigned first[64], count[64], nf = sh->functions;
    uint64_t addr;

    g->nsites = 0;
    for (unsigned f = 0; f < nf; f++) {
        unsigned n = sh->min_blocks +
                     rng_below(&rng, sh->max_blocks - sh->min_blocks + 1);

        addr = 0x80000000u + rng_below(&rng, 1 << 20) * 4;
        if (rng_chance(&rng, 100)) {
            addr |= UINT64_C(0xffffffff00000000) & addr_mask;
        }
        first[f] = g->nsites;
        count[f] = n;
        for (unsigned i = 0; i < n; i++) {
            Site *s = add_site(g, &rng, addr & addr_mask, sh->max_insns);

            addr += s->iretire * 2;
        }
    }
    for (unsigned f = 0; f < nf; f++) {
        for (unsigned i = 0; i < count[f]; i++) {
            Site *s = &g->site[first[f] + i];
            bool last = i == count[f] - 1;
            unsigned end = last ? END_RETURN : pick_end(sh, &rng);
            unsigned later = nf - f - 1;

            if ((end == END_CALL || end == END_ICALL || end == END_TAIL ||
                 end == END_ITAIL) && !later) {
                end = END_BRANCH;
            }
            if (f == 0 && last) {
                end = END_JUMP;     /* main loops */
            }
            if ((end == END_TAIL || end == END_ITAIL) && !last &&
                rng_chance(&rng, 500)) {
                end = END_CALL;
            }
            s->end = end;
            s->bias = branch_bias[rng_below(&rng, sizeof(branch_bias))];
            s->sijump = rng_chance(&rng, 300);
            for (unsigned t = 0; t < 4; t++) {
                unsigned callee = later ? f + 1 + rng_below(&rng, later) : 0;

                switch (end) {
                case END_CALL:
                case END_ICALL:
                case END_TAIL:
                case END_ITAIL:
                    s->target[t] = first[callee];
                    break;
                case END_JUMP:
                    s->target[t] = f == 0 && last ? first[0] :
                                   first[f] + i + 1 +
                                   rng_below(&rng, count[f] - i - 1);
                    break;
                default:
                    s->target[t] = first[f] + rng_below(&rng, count[f]);
                }
            }
        }
    }
    /* the trap handler: a branch or two, then mret */
    g->handler = g->nsites;
    addr = 0x1000;
    for (unsigned i = 0; i < 3; i++) {
        Site *s = add_site(g, &rng, addr, 4);

        s->end = i == 2 ? END_MRET : END_BRANCH;
        s->bias = 128;
        s->target[0] = g->handler + 2;
        addr += s->iretire * 2;
    }
}

/* fib(): test the depth, two recursive calls, return; main calls it. */
static void gen_recursion(Program *g, uint64_t seed)
{
    static const uint8_t ends[] = {
        END_CALL, END_BRANCH, END_JUMP,                     /* main */
        END_BASE_CASE, END_CALL, END_CALL, END_RETURN,      /* fib */
    };
    uint64_t rng = seed, addr = 0x80000000;

    g->nsites = 0;
    for (unsigned i = 0; i < sizeof(ends); i++) {
        Site *s;

        if (i == 3) {
            addr = 0x80001000;
        }
        s = add_site(g, &rng, addr, 4);
        s->end = ends[i];
        s->bias = 255;
        addr += s->iretire * 2;
    }
    g->site[0].target[0] = 3;
    g->site[1].target[0] = 0;
    g->site[2].target[0] = 0;
    g->site[3].target[0] = 6;
    g->site[4].target[0] = 3;
    g->site[5].target[0] = 3;
    g->handler = 0;
}

/* ------------------------------------------------------------- walking */

#define STACK_DEPTH 64

typedef struct Guest {
    const Program *prog;
    uint64_t rng;
    unsigned pc;
    unsigned stack[STACK_DEPTH];
    unsigned depth, depth_limit;
    unsigned priv;
    /* trap frames: where mret goes back to, at which privilege */
    unsigned frame_pc[4], frame_priv[4], frames;
} Guest;

static void guest_init(Guest *w, const Program *prog, uint64_t seed)
{
    memset(w, 0, sizeof(*w));
    w->prog = prog;
    w->rng = seed;
    w->depth_limit = 4;
}

static void guest_call(Guest *w, unsigned ret)
{
    if (w->depth == STACK_DEPTH) {
        memmove(w->stack, w->stack + 1, sizeof(w->stack[0]) * --w->depth);
    }
    w->stack[w->depth++] = ret;
}

/* The block at the guest's pc; moves the pc to its successor. */
static void guest_step(Guest *w, ETraceBlock *b)
{
    const Site *s = &w->prog->site[w->pc];
    static const uint8_t itype[END_KINDS] = {
        [END_FALL] = RISCV_ITYPE_NONE,
        [END_CALL] = RISCV_ITYPE_INFERABLE_CALL,
        [END_ICALL] = RISCV_ITYPE_UNINFERABLE_CALL,
        [END_RETURN] = RISCV_ITYPE_RETURN,
        [END_JUMP] = RISCV_ITYPE_OTHER_INFERABLE_JUMP,
        [END_SWITCH] = RISCV_ITYPE_OTHER_UNINFERABLE_JUMP,
        [END_TAIL] = RISCV_ITYPE_INFERABLE_TAIL_CALL,
        [END_ITAIL] = RISCV_ITYPE_UNINFERABLE_TAIL_CALL,
        [END_MRET] = RISCV_ITYPE_TRAP_RETURN,
    };
    bool taken = false;
    unsigned next = w->pc + 1;

    memset(b, 0, sizeof(*b));
    b->iaddr = s->addr;
    b->iretire = s->iretire;
    b->ninsns = s->ninsns;
    b->ilastsize = s->ilastsize;
    b->itype = itype[s->end];
    b->priv = w->priv;
    b->qualified = true;
    switch (s->end) {
    case END_BRANCH:
        taken = rng_below(&w->rng, 256) < s->bias;
        break;
    case END_BASE_CASE:
        taken = w->depth >= w->depth_limit;
        break;
    case END_CALL:
    case END_ICALL:
        guest_call(w, w->pc + 1);
        next = s->target[s->end == END_ICALL ? rng_below(&w->rng, 4) : 0];
        b->sijump = s->sijump && s->end == END_ICALL;
        break;
    case END_RETURN:
        if (w->depth) {
            next = w->stack[--w->depth];
        } else {
            next = 0;
        }
        if (!w->depth) {
            w->depth_limit = 3 + rng_below(&w->rng, 9);
        }
        break;
    case END_JUMP:
    case END_TAIL:
        next = s->target[0];
        break;
    case END_SWITCH:
    case END_ITAIL:
        next = s->target[rng_below(&w->rng, s->end == END_SWITCH ? 4 : 2)];
        b->sijump = s->sijump;
        break;
    case END_MRET:
        if (w->frames) {
            w->frames--;
            next = w->frame_pc[w->frames];
            w->priv = w->frame_priv[w->frames];
        } else {
            next = 0;
        }
        break;
    }
    if (s->end == END_BRANCH || s->end == END_BASE_CASE) {
        b->itype = taken ? RISCV_ITYPE_TAKEN_BRANCH :
                   RISCV_ITYPE_NOT_TAKEN_BRANCH;
        next = taken ? s->target[0] : w->pc + 1;
    }
    w->pc = next < w->prog->nsites ? next : 0;
}

/*
 * A trap after the last block: the handler runs in M mode and mret goes
 * to the instruction the trap interrupted.
 */
static void guest_trap(Guest *w, ETraceBlock *b, bool interrupt)
{
    memset(b, 0, sizeof(*b));
    b->itype = interrupt ? RISCV_ITYPE_INTERRUPT : RISCV_ITYPE_EXCEPTION;
    b->priv = w->priv;
    b->qualified = true;
    b->cause = rng_below(&w->rng, 24);
    b->tval = rng_chance(&w->rng, 500) ? rng_next(&w->rng) : 0;
    b->epc = w->prog->site[w->pc].addr;
    if (w->frames < 4) {
        w->frame_pc[w->frames] = w->pc;
        w->frame_priv[w->frames] = w->priv;
        w->frames++;
    }
    w->pc = w->prog->handler;
    w->priv = 3;
}

/* ----------------------------------------------------------- output */

typedef struct Sink {
    uint64_t hash;
    uint64_t bytes;
    uint8_t buf[4096];
    size_t used;
} Sink;

static void sink_digest(void *opaque, const uint8_t *bytes, size_t len)
{
    Sink *k = opaque;

    k->hash = (k->hash ^ len) * UINT64_C(0x100000001b3);
    for (size_t i = 0; i < len; i++) {
        k->hash = (k->hash ^ bytes[i]) * UINT64_C(0x100000001b3);
    }
}

/* What the QEMU device does: copy to a staging buffer. */
static void sink_copy(void *opaque, const uint8_t *bytes, size_t len)
{
    Sink *k = opaque;

    if (k->used + len > sizeof(k->buf)) {
        k->used = 0;
    }
    memcpy(k->buf + k->used, bytes, len);
    k->used += len;
    k->bytes += len;
}

static void hash_u64(uint64_t *h, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++) {
        *h = (*h ^ ((v >> (8 * i)) & 0xff)) * UINT64_C(0x100000001b3);
    }
}

/* ------------------------------------------------------------ options */

/* Option combination number i (0..383), every mode and sync mode. */
static ETraceOptions options_of(unsigned i, unsigned sync_max)
{
    ETraceOptions o = {
        .full_address = i & 1,
        .implicit_exception = (i >> 1) & 1,
        .sijump = (i >> 2) & 1,
        .branch_prediction = (i >> 3) & 1,
        .jump_target_cache = (i >> 4) & 1,
        .sync_mode = (i >> 5) & 3,
        .implicit_return = (i >> 7) % 3,
        .sync_max = sync_max,
    };

    return o;
}

#define OPTION_COMBINATIONS 384

/* ------------------------------------------------------------- digest */

/* Parameter sets of the digest run, each modifying the defaults. */
static void digest_params(unsigned i, ETraceParams *p)
{
    etrace_params_default(p, i % 2 ? 32 : 64);
    switch (i / 2) {
    case 1:
        p->arch = ETRACE_ARCH_2_0;
        break;
    case 2:
        p->context_width_p = i % 2 ? 8 : 32;
        break;
    case 3:
        p->f0s_width_p = 0;
        p->src_bits = i % 2 ? 5 : 12;
        p->src_id = 0x15;
        break;
    case 4:
        p->bpred_size_p = 1;
        p->cache_size_p = 1;
        p->return_stack_size_p = 1;
        p->call_counter_size_p = 1;
        break;
    case 5:
        p->bpred_size_p = 0;
        p->cache_size_p = 0;
        p->return_stack_size_p = 0;
        p->call_counter_size_p = 0;
        p->sijump_p = false;
        break;
    case 6:
        p->iaddress_lsb_p = i % 2 ? 0 : 2;
        p->iaddress_width_p = i % 2 ? 48 : 40;
        break;
    case 7:
        p->arch = ETRACE_ARCH_2_0;
        p->context_width_p = 16;
        p->bpred_size_p = 10;
        p->cache_size_p = 9;
        p->return_stack_size_p = 8;
        p->call_counter_size_p = 7;
        break;
    }
}

#define DIGEST_PARAM_SETS 16

/* A block that QEMU would not produce, to check robustness. */
static void garbage_block(uint64_t *rng, ETraceBlock *b)
{
    b->itype = rng_chance(rng, 900) ? rng_below(rng, 16) : rng_next(rng);
    b->iretire = rng_chance(rng, 300) ? 0 : rng_value(rng);
    b->ninsns = rng_next(rng);
    b->ilastsize = rng_chance(rng, 900) ? rng_below(rng, 2) : rng_next(rng);
    b->priv = rng_chance(rng, 500) ? rng_below(rng, 8) : rng_next(rng);
    b->ctype = rng_below(rng, 8);
    b->sijump = rng_below(rng, 2);
    b->notify = rng_chance(rng, 200);
    b->qualified = rng_chance(rng, 800);
    b->iaddr = rng_chance(rng, 500) ? rng_next(rng) : b->iaddr + 2;
    b->context = rng_next(rng);
    b->epc = rng_next(rng);
}

/* Per-mille rates of the events a chaotic stream injects. */
typedef struct Chaos {
    unsigned trap, notify, ctype, unqualified, lost, restart, garbage;
} Chaos;

static Chaos chaos_of(uint64_t *rng)
{
    static const unsigned level[] = { 0, 0, 1, 5, 20, 80 };
    Chaos c;

    /* one statement each: the order of the draws is defined */
    c.trap = level[rng_below(rng, 6)];
    c.notify = level[rng_below(rng, 6)];
    c.ctype = level[rng_below(rng, 6)];
    c.unqualified = level[rng_below(rng, 6)] / 2;
    c.lost = level[rng_below(rng, 6)] / 8;
    c.restart = level[rng_below(rng, 6)] / 8;
    c.garbage = level[rng_below(rng, 6)] / 4;
    return c;
}

static void feed_chaos(ETraceEncoder *e, Guest *w, const Chaos *c,
                       uint64_t *rng, unsigned nblocks, unsigned combo,
                       unsigned sync_max)
{
    unsigned unqualified = 0;
    uint64_t context = 0;
    ETraceBlock b;

    for (unsigned i = 0; i < nblocks; i++) {
        unsigned ctype = 0;

        if (rng_chance(rng, c->ctype)) {
            ctype = 1 + rng_below(rng, 3);
            context = rng_chance(rng, 500) ? rng_below(rng, 8) :
                      rng_next(rng);
        }
        if (rng_chance(rng, c->trap)) {
            uint64_t at = w->prog->site[w->pc].addr;

            guest_trap(w, &b, rng_chance(rng, 400));
            if (rng_chance(rng, 300)) {
                /* a few ordinary instructions retire before the trap */
                b.iaddr = at;
                b.iretire = 1 + rng_below(rng, 8);
                b.ninsns = b.iretire;
                b.ilastsize = false;
                b.epc = at + b.iretire * 2;
            }
        } else {
            guest_step(w, &b);
        }
        if (rng_chance(rng, c->unqualified)) {
            unqualified = 1 + rng_below(rng, 6);
        }
        if (unqualified) {
            b.qualified = false;
            unqualified--;
        }
        b.ctype = ctype;
        b.context = context;
        b.notify = rng_chance(rng, c->notify);
        if (rng_chance(rng, c->garbage)) {
            garbage_block(rng, &b);
        }
        etrace_encoder_block(e, &b);
        if (rng_chance(rng, c->lost)) {
            etrace_encoder_lost(e);
        }
        if (rng_chance(rng, c->restart)) {
            ETraceOptions o = options_of(rng_chance(rng, 500) ? combo :
                                         rng_below(rng, OPTION_COMBINATIONS),
                                         sync_max);

            if (rng_chance(rng, 500)) {
                etrace_encoder_stop(e);
            }
            etrace_encoder_start(e, &o);
        }
    }
}

static const Shape chaos_shape = {
    .functions = 12, .min_blocks = 2, .max_blocks = 12, .max_insns = 6,
    .weight = {
        [END_FALL] = 2, [END_BRANCH] = 12, [END_CALL] = 3, [END_ICALL] = 2,
        [END_JUMP] = 2, [END_SWITCH] = 2, [END_TAIL] = 1, [END_ITAIL] = 1,
        [END_RETURN] = 1, [END_MRET] = 1,
    },
};

static void hash_packet(uint64_t *h, const ETracePacket *pkt)
{
    uint64_t v[] = {
        pkt->format, pkt->subformat, pkt->branch, pkt->privilege, pkt->context,
        pkt->ecause, pkt->interrupt, pkt->thaddr, pkt->tvalepc, pkt->enable,
        pkt->encoder_mode, pkt->qual_status, pkt->options, pkt->address, pkt->notify,
        pkt->updiscon, pkt->irreport, pkt->irdepth, pkt->branches, pkt->branch_map,
        pkt->branch_count, pkt->branch_fmt, pkt->index, pkt->has_address,
        pkt->src_id, pkt->padding,
    };

    for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        hash_u64(h, v[i]);
    }
}

/* Any packet, valid or not (one statement per draw: a defined order). */
static ETracePacket random_packet(uint64_t *rng)
{
    ETracePacket pkt = { 0 };

    pkt.format = rng_below(rng, 5);
    pkt.subformat = rng_below(rng, 5);
    pkt.branch = rng_below(rng, 2);
    pkt.privilege = rng_value(rng);
    pkt.context = rng_value(rng);
    pkt.ecause = rng_value(rng);
    pkt.interrupt = rng_below(rng, 2);
    pkt.thaddr = rng_below(rng, 2);
    pkt.tvalepc = rng_value(rng);
    pkt.enable = rng_below(rng, 2);
    pkt.encoder_mode = rng_below(rng, 3);
    pkt.qual_status = rng_below(rng, 4);
    pkt.options = rng_value(rng);
    pkt.address = rng_value(rng);
    pkt.notify = rng_below(rng, 2);
    pkt.updiscon = rng_below(rng, 2);
    pkt.irreport = rng_below(rng, 2);
    pkt.irdepth = rng_value(rng);
    pkt.branches = rng_below(rng, 40);
    pkt.branch_map = rng_value(rng);
    pkt.branch_count = rng_value(rng);
    pkt.branch_fmt = rng_below(rng, 5);
    pkt.index = rng_value(rng);
    return pkt;
}

/* Packing, flags and unpacking of random packets and bytes. */
static uint64_t digest_packets(const ETraceParams *p, uint64_t seed,
                               unsigned n)
{
    uint64_t rng = seed, h = UINT64_C(0xcbf29ce484222325);

    for (unsigned i = 0; i < n; i++) {
        ETraceOptions o = options_of(rng_below(&rng, OPTION_COMBINATIONS),
                                     0);
        ETracePacket pkt = random_packet(&rng);
        uint8_t buf[64];
        const char *err = NULL;
        size_t len;
        bool f[3];
        int r;

        if (rng_chance(&rng, 300)) {
            o.implicit_return = rng_below(&rng, 4);
        }
        if (rng_chance(&rng, 500)) {
            bool notify = rng_below(&rng, 2);
            bool updiscon = rng_below(&rng, 2);
            bool irreport = rng_below(&rng, 2);
            uint32_t irdepth = rng_value(&rng);

            etrace_packet_set_flags(p, &pkt, notify, updiscon, irreport,
                                    irdepth);
            hash_packet(&h, &pkt);
        }
        len = etrace_packet_pack(p, rng_chance(&rng, 100) ? NULL : &o, &pkt,
                                 buf);
        hash_u64(&h, len);
        for (size_t j = 0; j < len; j++) {
            hash_u64(&h, buf[j]);
        }
        etrace_packet_get_flags(p, &pkt, &f[0], &f[1], &f[2]);
        hash_u64(&h, f[0] | f[1] << 1 | f[2] << 2);
        if (!len || rng_chance(&rng, 300)) {
            len = 1 + rng_below(&rng, 40);
            for (size_t j = 0; j < len; j++) {
                buf[j] = rng_next(&rng);
            }
        } else if (rng_chance(&rng, 500)) {
            size_t at = rng_below(&rng, len);

            buf[at] ^= 1 << rng_below(&rng, 8);
        }
        r = etrace_packet_unpack(p, &o, buf, len - rng_chance(&rng, 100),
                                 &pkt, &err);
        hash_u64(&h, r);
        if (r < 0) {
            for (const char *c = err; *c; c++) {
                hash_u64(&h, *c);
            }
        } else {
            hash_packet(&h, &pkt);
        }
    }
    return h;
}

static const Shape branchy_shape = {
    .functions = 6, .min_blocks = 8, .max_blocks = 16, .max_insns = 6,
    .weight = {
        [END_FALL] = 1, [END_BRANCH] = 30, [END_CALL] = 2, [END_SWITCH] = 1,
        [END_JUMP] = 2,
    },
};

static const Shape calls_shape = {
    .functions = 40, .min_blocks = 2, .max_blocks = 6, .max_insns = 5,
    .weight = {
        [END_BRANCH] = 6, [END_CALL] = 6, [END_ICALL] = 2, [END_JUMP] = 1,
        [END_TAIL] = 1, [END_ITAIL] = 1, [END_SWITCH] = 1,
    },
};

static int run_digest(unsigned nblocks)
{
    static Program prog[3];
    const Shape *shapes[3] = { &chaos_shape, &branchy_shape, &calls_shape };
    static const unsigned sync_maxes[] = { 0, 1, 2, 3, 6, 0, 1, 2 };
    uint64_t all = 0;

    for (unsigned ps = 0; ps < DIGEST_PARAM_SETS; ps++) {
        ETraceParams p;

        digest_params(ps, &p);
        printf("params %2u packets: %016" PRIx64 "\n", ps,
               digest_packets(&p, ps + 1, 20000));
        for (unsigned i = 0; i < 3; i++) {
            gen_program(&prog[i], shapes[i], ps * 7919 + i + 1,
                        p.iaddress_width_p == 64 ? UINT64_MAX :
                        (UINT64_C(1) << p.iaddress_width_p) - 1);
        }
        for (unsigned combo = 0; combo < OPTION_COMBINATIONS; combo++) {
            uint64_t rng = ps * 1000003 + combo * 7 + 1;
            unsigned sync_max = sync_maxes[rng_below(&rng, 8)];
            ETraceOptions o = options_of(combo, sync_max);
            Chaos chaos = chaos_of(&rng);
            Sink sink = { .hash = UINT64_C(0xcbf29ce484222325) };
            ETraceEncoder *e = etrace_encoder_new(&p, sink_digest, &sink);
            ETraceStats st;
            Guest w;

            if (!e) {
                fprintf(stderr, "parameter set %u rejected\n", ps);
                return 1;
            }
            guest_init(&w, &prog[combo % 3], rng);
            etrace_encoder_start(e, &o);
            feed_chaos(e, &w, &chaos, &rng, nblocks, combo, sync_max);
            etrace_encoder_stop(e);
            etrace_encoder_stats(e, &st);
            for (unsigned f = 0; f < 4; f++) {
                hash_u64(&sink.hash, st.packets[f]);
            }
            hash_u64(&sink.hash, st.bytes);
            hash_u64(&sink.hash, st.halfwords);
            hash_u64(&sink.hash, st.instructions);
            etrace_encoder_free(e);
            printf("params %2u options %3u: %016" PRIx64 "\n", ps, combo,
                   sink.hash);
            all = (all ^ sink.hash) * UINT64_C(0x100000001b3);
        }
    }
    printf("all: %016" PRIx64 "\n", all);
    return 0;
}

/* -------------------------------------------------------------- timing */

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

typedef struct Workload {
    const char *name;
    ETraceBlock *blocks;
    unsigned n;
} Workload;

static void make_workload(Workload *wl, const char *name, const Program *g,
                          unsigned n)
{
    Guest w;

    guest_init(&w, g, 42);
    wl->name = name;
    wl->n = n;
    wl->blocks = calloc(n, sizeof(*wl->blocks));
    for (unsigned i = 0; i < n; i++) {
        guest_step(&w, &wl->blocks[i]);
    }
}

typedef struct Config {
    const char *name;
    ETraceOptions o;
} Config;

static const Config configs[] = {
    { "default", { .implicit_return = ETRACE_IR_OFF } },
    { "full-address", { .full_address = true } },
    { "ir-counter", { .implicit_return = ETRACE_IR_CALL_COUNTER } },
    { "ir-stack", { .implicit_return = ETRACE_IR_RETURN_STACK } },
    { "bpred", { .branch_prediction = true } },
    { "jtc", { .jump_target_cache = true } },
    { "sync-packets", { .sync_mode = ETRACE_SYNC_PACKETS, .sync_max = 6 } },
    { "sync-cycles", { .sync_mode = ETRACE_SYNC_CYCLES, .sync_max = 12 } },
    { "all", { .implicit_exception = true, .sijump = true,
               .implicit_return = ETRACE_IR_RETURN_STACK,
               .branch_prediction = true, .jump_target_cache = true } },
};

/* Best of rounds: ns per block and packets per block. */
static void time_stream(const ETraceParams *p, const Config *c,
                        const Workload *wl, unsigned rounds)
{
    static Sink sink;
    ETraceEncoder *e = etrace_encoder_new(p, sink_copy, &sink);
    double best = 0;
    ETraceStats st;
    uint64_t packets;

    for (unsigned r = 0; r < rounds; r++) {
        double t0 = now_ns(), t;

        etrace_encoder_start(e, &c->o);
        for (unsigned i = 0; i < wl->n; i++) {
            etrace_encoder_block(e, &wl->blocks[i]);
        }
        etrace_encoder_stop(e);
        t = now_ns() - t0;
        best = r == 0 || t < best ? t : best;
    }
    etrace_encoder_stats(e, &st);
    packets = st.packets[0] + st.packets[1] + st.packets[2] + st.packets[3];
    printf("%-10s %-13s %8.2f %11.3f %11.2f\n", wl->name, c->name,
           best / wl->n, (double)packets / rounds / wl->n,
           (double)st.bytes / rounds / wl->n);
    etrace_encoder_free(e);
}

/* Every block ends with a jalr to one of four blocks: a report each. */
static const Shape jumps_shape = {
    .functions = 1, .min_blocks = 16, .max_blocks = 16, .max_insns = 5,
    .weight = { [END_SWITCH] = 1 },
};

/* The packets of the packer timings, formats 1 and 2 without flags. */
static const struct {
    const char *name;
    ETracePacket pkt;
} timed_packets[] = {
    { "format 2, near", { .format = 2, .address = 0x40 } },
    { "format 2, far", { .format = 2, .address = 0xffffffff80001234 } },
    { "format 1, 3 branches", { .format = 1, .branches = 3,
                                .branch_map = 5, .address = 0x7f0 } },
    { "format 1, full map", { .format = 1, .branch_map = 0x5555555 } },
    { "format 3.0", { .format = 3, .privilege = 3, .address = 0x80001234 } },
};

#define PACKS_PER_ROUND 1000000

/*
 * ns per packet of etrace_packet_pack() and, for formats 1 and 2, of the
 * encoder's etrace_packet_pack_f12(); the address varies in its low bits
 * (the flags, relative to its top bit, stay right).
 */
static void time_pack(const ETraceParams *p, unsigned rounds)
{
    ETraceOptions o = { 0 };
    uint8_t buf[ETRACE_MAX_PACKET];
    ETracePacker pk;

    etrace_packer_init(&pk, p);
    printf("%-24s %12s %12s %7s\n", "packet", "generic ns", "fast ns",
           "bytes");
    for (unsigned i = 0; i < sizeof(timed_packets) / sizeof(timed_packets[0]);
         i++) {
        ETracePacket pkt = timed_packets[i].pkt;
        bool f12 = pkt.format == 1 || pkt.format == 2;
        double best[2] = { 0, 0 };
        size_t bytes = 0;

        /* no flags: the same packet as the fast packer's */
        etrace_packet_set_flags(p, &pkt, false, false, false, 0);

        for (unsigned r = 0; r < rounds; r++) {
            for (unsigned fast = 0; fast < 1u + f12; fast++) {
                double t0 = now_ns(), t;

                for (unsigned j = 0; j < PACKS_PER_ROUND; j++) {
                    pkt.address = timed_packets[i].pkt.address + (j & 0xff) * 2;
                    bytes = fast ?
                        etrace_packet_pack_f12(&pk, pkt.format, pkt.branches,
                                               pkt.branch_map, pkt.address,
                                               false, false, false, 0, buf) :
                        etrace_packet_pack(p, &o, &pkt, buf);
                }
                t = now_ns() - t0;
                best[fast] = r == 0 || t < best[fast] ? t : best[fast];
            }
        }
        printf("%-24s %12.2f ", timed_packets[i].name,
               best[0] / PACKS_PER_ROUND);
        if (f12) {
            printf("%12.2f", best[1] / PACKS_PER_ROUND);
        } else {
            printf("%12s", "-");
        }
        printf(" %7zu\n", bytes);
    }
}

#define WORKLOADS 4

static void make_workloads(Workload *wl, unsigned nblocks)
{
    static Program recursion, branchy, calls, jumps;

    gen_recursion(&recursion, 1);
    gen_program(&branchy, &branchy_shape, 2, UINT64_MAX);
    gen_program(&calls, &calls_shape, 3, UINT64_MAX);
    gen_program(&jumps, &jumps_shape, 4, UINT64_MAX);
    make_workload(&wl[0], "recursion", &recursion, nblocks);
    make_workload(&wl[1], "branchy", &branchy, nblocks);
    make_workload(&wl[2], "calls", &calls, nblocks);
    make_workload(&wl[3], "jumps", &jumps, nblocks);
}

/* Empty, or a name that must match. */
static bool selected(const char *filter, const char *name)
{
    return !filter || !strcmp(filter, name);
}

static int run_timing(unsigned nblocks, unsigned rounds, bool list,
                      const char *only_workload, const char *only_config)
{
    Workload wl[WORKLOADS];
    ETraceParams p;
    bool header = false;

    make_workloads(wl, list ? 1 : nblocks);
    etrace_params_default(&p, 64);
    for (unsigned w = 0; w < WORKLOADS; w++) {
        for (unsigned c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
            if (!selected(only_workload, wl[w].name) ||
                !selected(only_config, configs[c].name)) {
                continue;
            }
            if (list) {
                printf("%s %s\n", wl[w].name, configs[c].name);
                continue;
            }
            if (!header) {
                printf("%-10s %-13s %8s %11s %11s\n", "workload", "options",
                       "ns/block", "pkts/block", "bytes/block");
                header = true;
            }
            time_stream(&p, &configs[c], &wl[w], rounds);
        }
        free(wl[w].blocks);
    }
    if (!list && selected(only_workload, "pack")) {
        time_pack(&p, rounds);
    }
    return 0;
}

/* A command line count: decimal digits, 0 for anything else. */
static unsigned decimal(const char *s)
{
    unsigned v = 0;

    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (*s - '0');
    }
    return *s ? 0 : v;
}

int main(int argc, char **argv)
{
    unsigned nblocks = 0, rounds = 5;
    const char *only_workload = NULL, *only_config = NULL;
    bool digest = false, list = false;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--digest")) {
            digest = true;
        } else if (!strcmp(argv[i], "--list")) {
            list = true;
        } else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            nblocks = decimal(argv[++i]);
        } else if (!strcmp(argv[i], "-r") && i + 1 < argc) {
            rounds = decimal(argv[++i]);
        } else if (!strcmp(argv[i], "-w") && i + 1 < argc) {
            only_workload = argv[++i];
        } else if (!strcmp(argv[i], "-c") && i + 1 < argc) {
            only_config = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--digest|--list] [-n BLOCKS] "
                    "[-r ROUNDS] [-w WORKLOAD|pack] [-c OPTIONS]\n",
                    argv[0]);
            return 2;
        }
    }
    if (digest) {
        return run_digest(nblocks ? nblocks : 3000);
    }
    return run_timing(nblocks ? nblocks : 1000000, rounds ? rounds : 1, list,
                      only_workload, only_config);
}

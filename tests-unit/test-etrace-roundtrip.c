/*
 * Encode/decode round trip of E-trace on random programs
 *
 * Random RV64GC/RV32GC programs are "executed" by a small control-flow
 * interpreter (no data semantics: branch outcomes, indirect targets,
 * traps and privilege changes are drawn at random).  The retired
 * instructions are grouped into blocks the way QEMU's hart reports them
 * (etrace.h: a block ends at every control transfer and at random other
 * points; a trap is a block with itype 1/2 and iretire 0), fed to the
 * encoder, and the decoder's instruction sequence must equal the
 * interpreter's, for every combination of the optional modes (3.2).
 *
 * Set RT_VERBOSE=1 to print the blocks and packets of a failing run
 * (with RT_ALWAYS=1 of every run: to compare two builds' streams),
 * RT_ONLY=program:combo to run one, RT_PROGRAMS=n to run more programs
 * (RT_FIRST=m: from program m on, RT_INSNS=k: k instructions each),
 * RT_BENCH=1 to time the decoder on long runs.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <glib.h>
#include <time.h>
#include "insn_class.h"
#include "etrace-decoder.h"
#include "etrace-model.h"
#include "etrace-runs.h"
#include "ntrace-decoder.h"

/* ------------------------------------------------------------ encoding */

static uint32_t enc_i(unsigned op, unsigned rd, unsigned f3, unsigned rs1,
                      int32_t imm)
{
    return ((uint32_t)imm & 0xfff) << 20 | rs1 << 15 | f3 << 12 | rd << 7 |
           op;
}

static uint32_t enc_r(unsigned op, unsigned rd, unsigned f3, unsigned rs1,
                      unsigned rs2, unsigned f7)
{
    return f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op;
}

static uint32_t enc_s(unsigned rs2, unsigned rs1, unsigned f3, int32_t imm)
{
    return ((uint32_t)imm >> 5 & 0x7f) << 25 | rs2 << 20 | rs1 << 15 |
           f3 << 12 | ((uint32_t)imm & 0x1f) << 7 | 0x23;
}

static uint32_t enc_b(unsigned f3, unsigned rs1, unsigned rs2, int32_t off)
{
    uint32_t o = off;

    return (o >> 12 & 1) << 31 | (o >> 5 & 0x3f) << 25 | rs2 << 20 |
           rs1 << 15 | f3 << 12 | (o >> 1 & 0xf) << 8 | (o >> 11 & 1) << 7 |
           0x63;
}

static uint32_t enc_jal(unsigned rd, int32_t off)
{
    uint32_t o = off;

    return (o >> 20 & 1) << 31 | (o >> 1 & 0x3ff) << 21 |
           (o >> 11 & 1) << 20 | (o >> 12 & 0xff) << 12 | rd << 7 | 0x6f;
}

static uint32_t enc_u(unsigned op, unsigned rd, uint32_t hi20)
{
    return (hi20 & 0xfffff) << 12 | rd << 7 | op;
}

/* c.j / c.jal offset layout: [11|4|9:8|10|6|7|3:1|5] in bits 12:2 */
static uint16_t enc_cj(unsigned f3, int32_t off)
{
    uint32_t o = off;

    return f3 << 13 | (o >> 11 & 1) << 12 | (o >> 4 & 1) << 11 |
           (o >> 8 & 3) << 9 | (o >> 10 & 1) << 8 | (o >> 6 & 1) << 7 |
           (o >> 7 & 1) << 6 | (o >> 1 & 7) << 3 | (o >> 5 & 1) << 2 | 1;
}

/* c.beqz / c.bnez: [8|4:3] in 12:10, [7:6|2:1|5] in 6:2 */
static uint16_t enc_cb(unsigned f3, unsigned rs1c, int32_t off)
{
    uint32_t o = off;

    return f3 << 13 | (o >> 8 & 1) << 12 | (o >> 3 & 3) << 10 |
           rs1c << 7 | (o >> 6 & 3) << 5 | (o >> 1 & 3) << 3 |
           (o >> 5 & 1) << 2 | 1;
}

/* ------------------------------------------------------------- program */

typedef enum Kind {
    K_NONE,         /* not an instruction start */
    K_ALU,
    K_CONST,        /* lui/auipc/c.lui of a pair */
    K_BRANCH,
    K_JAL,          /* inferable jump or call: fixed target */
    K_RET,          /* return: the call stack */
    K_INDIRECT,     /* jalr/c.jr/c.jalr: a random target */
    K_MAIN_END,     /* jalr back to main */
    K_PAIR_JUMP,    /* jalr of a pair: its computed target */
    K_ECALL,
    K_MRET,
} Kind;

typedef struct Meta {
    uint8_t kind;
    uint8_t len;
    uint8_t itype;          /* from the classifier */
    uint8_t rs1;
    bool call;
    uint16_t bias;          /* branch: taken probability / 65536 */
    uint64_t target;
} Meta;

typedef struct Proto {
    Kind kind;
    unsigned len;
    unsigned func;
    uint64_t addr;
} Proto;

typedef struct Prog {
    unsigned xlen;
    uint64_t base;
    size_t nhalf;
    uint16_t *mem;
    Meta *meta;
    unsigned nfuncs;
    uint64_t *func_start;
    uint64_t exc_handler;
    uint64_t mtvec;         /* with the mode in bit 0 */
    GArray *starts;         /* every instruction start, uint64_t */
} Prog;

#define PROG_BYTES  0x10000
#define NFUNCS      24

static uint64_t xmask(const Prog *g)
{
    return g->xlen == 64 ? UINT64_MAX : UINT32_MAX;
}

static Meta *meta_at(const Prog *g, uint64_t addr)
{
    uint64_t i = (addr - g->base) / 2;

    if (addr < g->base || i >= g->nhalf || (addr & 1)) {
        return NULL;
    }
    return g->meta[i].kind == K_NONE ? NULL : &g->meta[i];
}

static void put32(Prog *g, uint64_t addr, uint32_t insn)
{
    size_t i = (addr - g->base) / 2;

    g->mem[i] = insn;
    g->mem[i + 1] = insn >> 16;
}

static void put16(Prog *g, uint64_t addr, uint16_t insn)
{
    g->mem[(addr - g->base) / 2] = insn;
}

/* Store insn at addr and check the classifier sees what was meant. */
static void place(Prog *g, uint64_t addr, uint32_t insn, unsigned len,
                  Kind kind, uint64_t target)
{
    Meta *m = &g->meta[(addr - g->base) / 2];
    RISCVInsnClass c;

    if (len == 4) {
        put32(g, addr, insn);
    } else {
        put16(g, addr, insn);
    }
    g_assert_cmpuint(riscv_insn_len(insn & 0xffff), ==, len);
    riscv_classify_insn(insn, g->xlen, &c);
    m->kind = kind;
    m->len = len;
    m->target = target;
    m->itype = c.itype;
    m->rs1 = c.rs1;
    m->call = c.flow == RISCV_FLOW_JUMP &&
              (c.itype == RISCV_ITYPE_INFERABLE_CALL ||
               c.itype == RISCV_ITYPE_UNINFERABLE_CALL);
    switch (kind) {
    case K_ALU:
        g_assert_cmpint(c.flow, ==, RISCV_FLOW_SEQUENTIAL);
        g_assert_false(c.sets_constant);
        break;
    case K_CONST:
        g_assert_true(c.sets_constant);
        break;
    case K_BRANCH:
        g_assert_cmpint(c.flow, ==, RISCV_FLOW_BRANCH);
        g_assert_cmphex((addr + c.offset) & xmask(g), ==, target);
        break;
    case K_JAL:
        g_assert_cmpint(c.flow, ==, RISCV_FLOW_JUMP);
        g_assert_true(c.inferable);
        g_assert_cmphex((addr + c.offset) & xmask(g), ==, target);
        break;
    case K_RET:
        g_assert_cmpint(c.itype, ==, RISCV_ITYPE_RETURN);
        break;
    case K_INDIRECT:
    case K_MAIN_END:
    case K_PAIR_JUMP:
        g_assert_cmpint(c.flow, ==, RISCV_FLOW_JUMP);
        g_assert_false(c.inferable);
        break;
    case K_ECALL:
        g_assert_cmpint(c.flow, ==, RISCV_FLOW_TRAP);
        break;
    case K_MRET:
        g_assert_cmpint(c.flow, ==, RISCV_FLOW_TRAP_RETURN);
        break;
    default:
        g_assert_not_reached();
    }
}

static unsigned reg_nolink(GRand *r)
{
    static const unsigned regs[] = { 6, 7, 8, 9, 10, 11, 12, 28, 29, 30 };

    return regs[g_rand_int_range(r, 0, G_N_ELEMENTS(regs))];
}

static void place_alu(Prog *g, GRand *r, uint64_t addr, unsigned len)
{
    unsigned rd = g_rand_int_range(r, 1, 32), rs = g_rand_int_range(r, 1, 32);
    uint32_t insn;

    if (len == 2) {
        switch (g_rand_int_range(r, 0, 4)) {
        case 0:         /* c.addi rd, imm */
            insn = 0x0001 | rd << 7 | (g_rand_int_range(r, 1, 31) << 2);
            break;
        case 1:         /* c.li */
            insn = 0x4001 | rd << 7 | (g_rand_int_range(r, 0, 31) << 2);
            break;
        case 2:         /* c.mv */
            insn = 0x8002 | rd << 7 | rs << 2;
            break;
        default:        /* c.add */
            insn = 0x9002 | rd << 7 | rs << 2;
            break;
        }
    } else {
        switch (g_rand_int_range(r, 0, 5)) {
        case 0:
            insn = enc_i(0x13, rd, 0, rs, g_rand_int_range(r, -2048, 2048));
            break;
        case 1:
            insn = enc_i(0x13, rd, 4, rs, g_rand_int_range(r, -2048, 2048));
            break;
        case 2:
            insn = enc_r(0x33, rd, 0, rs, g_rand_int_range(r, 0, 32),
                         g_rand_boolean(r) ? 0x20 : 0);
            break;
        case 3:         /* lw */
            insn = enc_i(0x03, rd, 2, rs, g_rand_int_range(r, -2048, 2048));
            break;
        default:        /* sw */
            insn = enc_s(rd, rs, 2, g_rand_int_range(r, -2048, 2048));
            break;
        }
    }
    place(g, addr, insn, len, K_ALU, 0);
}

/* Instruction starts of function f within [lo, hi]. */
static uint64_t pick_in_func(const Proto *pr, size_t npr, unsigned f,
                             int64_t lo, int64_t hi, uint64_t from,
                             GRand *r)
{
    uint64_t cand[64];
    unsigned n = 0;

    for (size_t i = 0; i < npr && n < G_N_ELEMENTS(cand); i++) {
        int64_t d = (int64_t)(pr[i].addr - from);

        if (pr[i].func == f && d >= lo && d <= hi && pr[i].kind != K_NONE) {
            cand[n++] = pr[i].addr;
        }
    }
    return n ? cand[g_rand_int_range(r, 0, n)] : 0;
}

/* A function start after f within reach, or 0. */
static uint64_t pick_forward(const Prog *g, unsigned f, uint64_t from,
                             int64_t reach, GRand *r)
{
    unsigned cand[NFUNCS], n = 0;

    for (unsigned i = f + 1; i < g->nfuncs; i++) {
        if ((int64_t)(g->func_start[i] - from) <= reach) {
            cand[n++] = i;
        }
    }
    return n ? g->func_start[cand[g_rand_int_range(r, 0, n)]] : 0;
}

typedef struct Mix {
    unsigned alu, branch, call, tail, indirect, pair, ecall;
} Mix;

static Kind pick_kind(GRand *r, const Mix *mix)
{
    unsigned total = mix->alu + mix->branch + mix->call + mix->tail +
                     mix->indirect + mix->pair + mix->ecall;
    unsigned x = g_rand_int_range(r, 0, total);

    if (x < mix->alu) {
        return K_ALU;
    }
    x -= mix->alu;
    if (x < mix->branch) {
        return K_BRANCH;
    }
    x -= mix->branch;
    if (x < mix->call) {
        return K_JAL;       /* a call */
    }
    x -= mix->call;
    if (x < mix->tail) {
        return K_MAIN_END;  /* stands for "tail jump" while laying out */
    }
    x -= mix->tail;
    if (x < mix->indirect) {
        return K_INDIRECT;
    }
    x -= mix->indirect;
    return x < mix->pair ? K_PAIR_JUMP : K_ECALL;
}

/* The constant half of a pair: lui, auipc or c.lui giving target. */
static bool place_pair(Prog *g, GRand *r, uint64_t at, unsigned clen,
                       unsigned jlen, uint64_t target)
{
    unsigned rs = g_rand_boolean(r) ? 6 : (g_rand_boolean(r) ? 7 : 28);
    uint64_t jat = at + clen;
    int64_t delta, lo;
    unsigned rd = 0;
    uint32_t hi;

    switch (g_rand_int_range(r, 0, 3)) {
    case 0:
        rd = 0;         /* tail */
        break;
    case 1:
        rd = 1;         /* call */
        break;
    default:
        rd = 7;         /* other */
        break;
    }
    if (clen == 2) {
        /* c.lui: a 4 KiB aligned target reachable with nzimm[17:12] */
        int64_t v = (int64_t)target;

        if ((target & 0xfff) || v < 0x1000 || v > 0x1f000 || jlen != 2) {
            return false;
        }
        place(g, at, 0x6001 | rs << 7 | (uint32_t)(v >> 17 & 1) << 12 |
              (uint32_t)(v >> 12 & 0x1f) << 2, 2, K_CONST, 0);
        place(g, jat, (rd ? 0x9002 : 0x8002) | rs << 7, 2, K_PAIR_JUMP,
              target);
        return true;
    }
    if (g_rand_boolean(r) && (g->xlen == 32 || target < 0x7ffff800)) {
        delta = (int64_t)target;    /* lui */
        hi = (uint32_t)((delta + 0x800) >> 12);
        place(g, at, enc_u(0x37, rs, hi), 4, K_CONST, 0);
    } else {
        delta = (int64_t)(target - at);
        if (g->xlen == 32) {
            delta = (int32_t)delta;
        }
        hi = (uint32_t)((delta + 0x800) >> 12);
        place(g, at, enc_u(0x17, rs, hi), 4, K_CONST, 0);
    }
    lo = delta - ((int64_t)(int32_t)(hi << 12));
    if (jlen == 2) {
        if (lo) {
            return false;
        }
        place(g, jat, (rd ? 0x9002 : 0x8002) | rs << 7, 2, K_PAIR_JUMP,
              target);
    } else {
        place(g, jat, enc_i(0x67, rd, 0, rs, (int32_t)lo), 4, K_PAIR_JUMP,
              target);
    }
    return true;
}

static void place_indirect(Prog *g, GRand *r, uint64_t at, unsigned len)
{
    unsigned rs = reg_nolink(r);
    /* rd: 0 tail, 1 call, 7 other; rs 5 with rd 1 swaps co-routines */
    unsigned rd = g_rand_int_range(r, 0, 3) == 0 ? 0 :
                  (g_rand_boolean(r) ? 1 : 7);

    if (g_rand_int_range(r, 0, 10) == 0) {
        rs = 5;
        rd = 1;
    }
    if (len == 2) {
        place(g, at, (rd ? 0x9002 : 0x8002) | rs << 7, 2, K_INDIRECT, 0);
    } else {
        place(g, at, enc_i(0x67, rd, 0, rs, 0), 4, K_INDIRECT, 0);
    }
}

static void place_ret(Prog *g, GRand *r, uint64_t at, unsigned len)
{
    unsigned link = g_rand_int_range(r, 0, 4) ? 1 : 5;

    if (len == 2) {
        place(g, at, 0x8002 | link << 7, 2, K_RET, 0);
    } else {
        place(g, at, enc_i(0x67, 0, 0, link, 0), 4, K_RET, 0);
    }
}

static void place_branch(Prog *g, GRand *r, const Proto *pr, size_t npr,
                         const Proto *p)
{
    Meta *m;
    uint64_t t;

    if (p->len == 2) {
        t = pick_in_func(pr, npr, p->func, -256, 254, p->addr, r);
        t = t ? t : p->addr + 2;
        place(g, p->addr, enc_cb(g_rand_boolean(r) ? 6 : 7,
                                 g_rand_int_range(r, 0, 8),
                                 (int32_t)(t - p->addr)),
              2, K_BRANCH, t);
    } else {
        static const unsigned f3[] = { 0, 1, 4, 5, 6, 7 };

        t = pick_in_func(pr, npr, p->func, -4096, 4094, p->addr, r);
        t = t ? t : p->addr + 4;
        place(g, p->addr, enc_b(f3[g_rand_int_range(r, 0, 6)],
                                g_rand_int_range(r, 0, 32),
                                g_rand_int_range(r, 0, 32),
                                (int32_t)(t - p->addr)),
              4, K_BRANCH, t);
    }
    m = meta_at(g, p->addr);
    /* mostly biased branches, so that prediction has work to do */
    switch (g_rand_int_range(r, 0, 4)) {
    case 0:
        m->bias = 65535;
        break;
    case 1:
        m->bias = 1000;
        break;
    case 2:
        m->bias = 60000;
        break;
    default:
        m->bias = g_rand_int_range(r, 0, 65536);
        break;
    }
}

/* Encode one laid-out instruction. */
static void encode_proto(Prog *g, GRand *r, const Proto *pr, size_t npr,
                         size_t i)
{
    const Proto *p = &pr[i];
    uint64_t t;

    switch (p->kind) {
    case K_ALU:
        place_alu(g, r, p->addr, p->len);
        break;
    case K_BRANCH:
        place_branch(g, r, pr, npr, p);
        break;
    case K_JAL:     /* a forward call */
        t = pick_forward(g, p->func, p->addr, p->len == 2 ? 2046 : 1 << 20,
                         r);
        if (p->len == 2 && (g->xlen != 32 || !t)) {
            place_alu(g, r, p->addr, 2);    /* c.jal is RV32 only */
        } else if (!t) {
            place_alu(g, r, p->addr, p->len);
        } else if (p->len == 2) {
            place(g, p->addr, enc_cj(1, (int32_t)(t - p->addr)), 2, K_JAL,
                  t);
        } else {
            place(g, p->addr, enc_jal(g_rand_int_range(r, 0, 4) ? 1 : 5,
                                      (int32_t)(t - p->addr)), 4, K_JAL, t);
        }
        break;
    case K_MAIN_END:    /* here: a forward tail jump */
        t = pick_forward(g, p->func, p->addr, p->len == 2 ? 2046 : 1 << 20,
                         r);
        if (!t) {
            place_alu(g, r, p->addr, p->len);
        } else if (p->len == 2) {
            place(g, p->addr, enc_cj(5, (int32_t)(t - p->addr)), 2, K_JAL,
                  t);
        } else {
            place(g, p->addr, enc_jal(g_rand_boolean(r) ? 0 : 7,
                                      (int32_t)(t - p->addr)), 4, K_JAL, t);
        }
        break;
    case K_INDIRECT:
        place_indirect(g, r, p->addr, p->len);
        break;
    case K_CONST:   /* a pair: this and the next proto */
        /* forward only: no cycle made of inferable jumps alone */
        t = p->func + 1 < g->nfuncs ?
            g->func_start[g_rand_int_range(r, p->func + 1, g->nfuncs)] : 0;
        if (!t || !place_pair(g, r, p->addr, p->len, pr[i + 1].len, t)) {
            place_alu(g, r, p->addr, p->len);
            place_indirect(g, r, pr[i + 1].addr, pr[i + 1].len);
        }
        break;
    case K_PAIR_JUMP:
        break;      /* placed with its K_CONST */
    case K_ECALL:
        place(g, p->addr, 0x00000073, 4, K_ECALL, 0);
        break;
    case K_RET:
        place_ret(g, r, p->addr, p->len);
        break;
    default:
        g_assert_not_reached();
    }
}

static void prog_free(Prog *g)
{
    g_free(g->mem);
    g_free(g->meta);
    g_free(g->func_start);
    g_array_free(g->starts, true);
}

/*
 * Lay out the vector table, the two handlers and NFUNCS functions, then
 * encode everything once all addresses are known.
 */
static void prog_generate(Prog *g, GRand *r, unsigned xlen, uint64_t base,
                          bool vectored, const Mix *mix)
{
    GArray *protos = g_array_new(false, false, sizeof(Proto));
    uint64_t at = base, int_handler;
    Proto *pr;
    size_t npr;

    memset(g, 0, sizeof(*g));
    g->xlen = xlen;
    g->base = base;
    g->nhalf = PROG_BYTES / 2;
    g->mem = g_new0(uint16_t, g->nhalf);
    g->meta = g_new0(Meta, g->nhalf);
    g->nfuncs = NFUNCS;
    g->func_start = g_new0(uint64_t, NFUNCS);
    g->starts = g_array_new(false, false, sizeof(uint64_t));
    for (size_t i = 0; i < g->nhalf; i++) {
        g->mem[i] = 0x0001;     /* c.nop padding, never executed */
    }

    /*
     * Handlers first; vectored mode puts a table of jumps at mtvec
     * before them: entry 0 for exceptions, entry n for interrupt n.
     */
    g->mtvec = base | vectored;
    at = base + (vectored ? 16 * 4 : 0);
    g->exc_handler = at;
    int_handler = at;
    for (unsigned h = 0; h < 2; h++) {
        unsigned n = g_rand_int_range(r, 1, 5);

        if (h == 1) {
            int_handler = at;
        }
        for (unsigned i = 0; i < n; i++) {
            unsigned len = g_rand_boolean(r) ? 2 : 4;

            place_alu(g, r, at, len);
            g_array_append_val(g->starts, at);
            at += len;
        }
        place(g, at, 0x30200073, 4, K_MRET, 0);
        g_array_append_val(g->starts, at);
        at += 4;
    }
    if (vectored) {
        for (unsigned i = 0; i < 16; i++) {
            uint64_t e = base + 4 * i;
            uint64_t t = i ? int_handler : g->exc_handler;

            place(g, e, enc_jal(0, (int32_t)(t - e)), 4, K_JAL, t);
        }
    }

    /* functions: lay out kinds and lengths */
    for (unsigned f = 0; f < NFUNCS; f++) {
        unsigned n = g_rand_int_range(r, 4, 40);

        at = (at + 3) & ~(uint64_t)3;
        if (xlen == 32 && g_rand_int_range(r, 0, 4) == 0) {
            at = (at + 0xfff) & ~(uint64_t)0xfff;   /* c.lui reachable */
        }
        g->func_start[f] = at;
        for (unsigned i = 0; i < n; i++) {
            Proto p = { pick_kind(r, mix), g_rand_boolean(r) ? 2 : 4, f, at };

            /*
             * Every function starts with a branch: the same instruction is
             * then never retired twice between two packets with nothing
             * but inferable jumps and implicit returns in between, which
             * no packet of 1.1.1 could tell apart (an address reported
             * without updiscon is taken at its first occurrence, 6.6.2).
             */
            if (i == 0) {
                p.kind = K_BRANCH;
            }

            if (p.kind == K_PAIR_JUMP) {
                Proto c = { K_CONST, g_rand_int_range(r, 0, 3) ? 4 : 2, f,
                            at };

                g_array_append_val(protos, c);
                at += c.len;
                p.addr = at;
            }
            if (p.kind == K_ECALL) {
                p.len = 4;
            }
            g_array_append_val(protos, p);
            at += p.len;
        }
        {
            Proto end = { f ? K_RET : K_INDIRECT, g_rand_boolean(r) ? 2 : 4,
                          f, at };

            g_array_append_val(protos, end);
            at += end.len;
        }
        g_assert_cmpuint(at - base, <, PROG_BYTES - 64);
    }

    pr = (Proto *)protos->data;
    npr = protos->len;
    for (size_t i = 0; i < npr; i++) {
        g_array_append_val(g->starts, pr[i].addr);
        encode_proto(g, r, pr, npr, i);
    }
    /* main's last instruction jumps back to main: c.jr or jalr x0 */
    for (size_t i = 0; i < npr; i++) {
        if (pr[i].func == 0 && (i + 1 == npr || pr[i + 1].func != 0)) {
            if (pr[i].len == 2) {
                place(g, pr[i].addr, 0x8002 | 6 << 7, 2, K_MAIN_END, 0);
            } else {
                place(g, pr[i].addr, enc_i(0x67, 0, 0, 6, 0), 4, K_MAIN_END,
                      0);
            }
            break;
        }
    }
    g_array_free(protos, true);
}

/* --------------------------------------------------------- interpreter */

typedef struct Retired {
    uint64_t addr;
    unsigned priv;
} Retired;

typedef struct TrapRec {
    uint64_t cause;
    bool interrupt;
    uint64_t handler;
} TrapRec;

typedef struct Run {
    const Prog *g;
    GRand *r;
    ETraceParams p;
    ETraceOptions o;
    bool filter;            /* toggle qualification now and then */
    bool lose;              /* the sink drops packets once */
    unsigned ninsns;

    /* the hart */
    uint64_t pc;
    unsigned priv;
    uint64_t stack[64];
    unsigned depth;
    bool in_handler;
    uint64_t resume;
    unsigned mpp;
    bool refault;           /* re-executing an instruction that faulted */
    unsigned since_trap;    /* instructions retired since the last trap */
    bool prev_const;
    unsigned prev_rd;
    bool qualified;
    ETraceBlock blk;
    bool open;
    bool trap_pending;
    TrapRec trap;
    unsigned retired;
    unsigned blocks_left_dropping;
    bool lost_done;
    size_t lost_at;         /* truth index of the sync after the loss */

    /* encoder output and ground truth */
    ETraceEncoder *enc;
    NTraceEncoder *nenc;    /* instead of enc: N-trace */
    NTraceOptions no;
    RunMaker runs;          /* branch blocks in bulk, without prediction */
    GByteArray *stream;
    GArray *blocks;         /* ETraceBlock */
    GArray *truth;          /* Retired */
    GArray *traps;          /* TrapRec */

    /* decoder output */
    GArray *out;            /* Retired */
    GArray *out_traps;      /* TrapRec */
    unsigned gaps, errors;
    const char *first_error;
    size_t out_at_gap;
} Run;

static bool chance(Run *run, unsigned one_in)
{
    return g_rand_int_range(run->r, 0, one_in) == 0;
}

static void emit_bytes(void *opaque, const uint8_t *bytes, size_t len)
{
    Run *run = opaque;

    if (!run->blocks_left_dropping) {
        g_byte_array_append(run->stream, bytes, len);
    }
}

static void encode(void *opaque, const ETraceBlock *b)
{
    Run *run = opaque;

    g_array_append_val(run->blocks, *b);
    if (run->nenc) {
        ntrace_encoder_block(run->nenc, b);
    } else {
        etrace_encoder_block(run->enc, b);
    }
}

/*
 * As the hart: in runs (indexed with prediction, counted for N-trace's
 * BTM) where the encoder can
 */
static void feed(Run *run, const ETraceBlock *b)
{
    if (run->runs.indexed || !run->o.branch_prediction) {
        run_maker_block(&run->runs, b);
    } else {
        encode(run, b);
    }
}

static void close_block(Run *run, unsigned itype, bool sijump)
{
    run->blk.itype = itype;
    run->blk.sijump = sijump;
    run->blk.notify = run->qualified && chance(run, 100);
    feed(run, &run->blk);
    run->open = false;

    if (run->filter && chance(run, 60)) {
        run->qualified = !run->qualified;
    }
    if (run->blocks_left_dropping == 1) {
        /* the blocks held back are lost with the others */
        run_maker_flush(&run->runs);
    }
    if (run->blocks_left_dropping && --run->blocks_left_dropping == 0) {
        if (run->nenc) {
            ntrace_encoder_lost(run->nenc);
        } else {
            etrace_encoder_lost(run->enc);
        }
        run->lost_at = run->truth->len;
    } else if (run->lose && !run->lost_done && run->retired > 500 &&
               chance(run, 50)) {
        run->lost_done = true;
        run->blocks_left_dropping = g_rand_int_range(run->r, 1, 20);
    }
}

static void retire(Run *run, const Meta *m)
{
    if (!run->open) {
        memset(&run->blk, 0, sizeof(run->blk));
        run->blk.iaddr = run->pc;
        run->blk.priv = run->priv;
        run->blk.qualified = run->qualified;
        run->open = true;
        if (run->trap_pending) {
            run->trap_pending = false;
            run->trap.handler = run->pc;
            if (run->qualified) {
                g_array_append_val(run->traps, run->trap);
            }
        }
    }
    run->since_trap++;
    run->blk.iretire += m->len / 2;
    run->blk.ninsns++;
    run->blk.ilastsize = m->len == 4;
    if (run->blk.qualified) {
        Retired t = { run->pc, run->priv };

        g_array_append_val(run->truth, t);
    }
    run->retired++;
}

static void take_trap(Run *run, bool interrupt, uint64_t cause,
                      uint64_t tval, uint64_t resume)
{
    ETraceBlock t = {
        .iaddr = run->pc, .itype = interrupt ? 2 : 1, .priv = run->priv,
        .cause = cause, .tval = tval, .epc = run->pc,
        .qualified = run->qualified,
    };
    uint64_t base = run->g->mtvec & ~(uint64_t)3;
    bool nested = run->in_handler;

    if (run->open) {
        close_block(run, 0, false);
    }
    feed(run, &t);
    /* a trap before the handler retired anything replaces the first */
    run->trap_pending = true;
    run->since_trap = 0;
    run->trap = (TrapRec) { cause, interrupt, 0 };
    if (!nested) {
        run->mpp = run->priv;
        run->resume = resume;
    }
    run->priv = 3;
    run->in_handler = true;
    run->prev_const = false;
    run->pc = (run->g->mtvec & 1) ? base + (interrupt ? 4 * cause : 0)
                                  : run->g->exc_handler;
    /*
     * Now and then the handler's first instruction faults (etrace.h: two
     * trap blocks in a row); the handler then returns where the first
     * trap would have (as if it had saved the first EPC).  1.1.1 only:
     * 2.0 reports the first trap with thaddr 0 as well.
     */
    if (!nested && run->p.arch == ETRACE_ARCH_1_1 && chance(run, 20)) {
        take_trap(run, false, 1, run->pc, 0);
    }
}

static void push(Run *run, uint64_t link)
{
    if (run->depth == G_N_ELEMENTS(run->stack)) {
        memmove(run->stack, run->stack + 1,
                sizeof(run->stack) - sizeof(run->stack[0]));
        run->depth--;
    }
    run->stack[run->depth++] = link;
}

static uint64_t random_target(Run *run)
{
    const Prog *g = run->g;

    if (chance(run, 3)) {
        GArray *s = g->starts;
        uint64_t a;

        do {
            a = g_array_index(s, uint64_t, g_rand_int_range(run->r, 0,
                                                             s->len));
        } while (a < g->func_start[0]);
        return a;
    }
    return g->func_start[g_rand_int_range(run->r, 0, g->nfuncs)];
}

/* Execute one instruction (or take a trap instead). */
static void step(Run *run)
{
    static const unsigned irqs[] = { 1, 3, 5, 7, 9, 11 };
    static const unsigned excs[] = { 2, 4, 5, 6, 7, 13, 15 };
    const Prog *g = run->g;
    const Meta *m = meta_at(g, run->pc);
    uint64_t pc = run->pc, next;
    unsigned itype = 0;
    bool sijump = false;

    if (!m) {
        fprintf(stderr, "# no instruction at %" PRIx64 "\n", run->pc);
    }
    g_assert_nonnull(m);
    /* QEMU takes interrupts between translation blocks only */
    if (!run->open && !run->in_handler && chance(run, 150)) {
        take_trap(run, true, irqs[g_rand_int_range(run->r, 0, 6)], 0, pc);
        return;
    }
    if (m->kind == K_ECALL) {
        take_trap(run, false, run->priv == 0 ? 8 : 9, 0, pc + 4);
        return;
    }
    /*
     * Now and then the handler's first instruction retires and the second
     * faults: the first trap's packet gives that instruction as its
     * handler, and then the nested trap's (the handler returns where the
     * first trap would have, as above).
     */
    if (run->in_handler && run->since_trap == 1 && run->open &&
        run->blk.ninsns == 1 && chance(run, 10)) {
        take_trap(run, false, 1, pc, 0);
        return;
    }
    if (m->kind == K_ALU && !run->in_handler && !run->refault &&
        chance(run, 250)) {
        bool again = g_rand_boolean(run->r);

        take_trap(run, false, excs[g_rand_int_range(run->r, 0, 7)],
                  g_rand_int(run->r), again ? pc : pc + m->len);
        run->refault = again;
        return;
    }
    run->refault = false;
    retire(run, m);
    next = pc + m->len;
    switch (m->kind) {
    case K_BRANCH:
        if (g_rand_int_range(run->r, 0, 65536) < m->bias) {
            next = m->target;
            itype = RISCV_ITYPE_TAKEN_BRANCH;
        } else {
            itype = RISCV_ITYPE_NOT_TAKEN_BRANCH;
        }
        break;
    case K_JAL:
        next = m->target;
        itype = m->itype;
        break;
    case K_RET:
        next = run->depth ? run->stack[--run->depth] : g->func_start[0];
        /*
         * longjmp and the like; not with a call counter, which assumes
         * that returns go where the calls said (3.2.5).  Only where the
         * predicted return lands on a branch: irdepth tells a depth, not
         * which return failed (6.6.3), and without a branch after it the
         * decoder can not tell a failed return from an earlier one that
         * found the same depth (it then assumes the earlier returned).
         */
        if (run->o.implicit_return != ETRACE_IR_CALL_COUNTER &&
            meta_at(g, next) && meta_at(g, next)->kind == K_BRANCH &&
            chance(run, 30)) {
            next = random_target(run);
        }
        itype = m->itype;
        break;
    case K_INDIRECT:
        next = random_target(run);
        itype = m->itype;
        break;
    case K_MAIN_END:
        next = g->func_start[0];
        itype = m->itype;
        break;
    case K_PAIR_JUMP:
        next = m->target;
        itype = m->itype;
        break;
    case K_MRET:
        next = run->resume;
        run->priv = run->mpp;
        if (run->priv != 3 && chance(run, 5)) {
            run->priv ^= 1;                 /* return to the other mode */
        }
        run->in_handler = false;
        itype = RISCV_ITYPE_TRAP_RETURN;
        break;
    default:
        break;
    }
    if (riscv_itype_is_uninferable(itype) && run->prev_const &&
        run->prev_rd == m->rs1) {
        sijump = true;
        g_assert_true(m->kind == K_PAIR_JUMP);
    }
    if (m->call) {
        push(run, pc + m->len);
    }
    run->prev_const = m->kind == K_CONST;
    if (run->prev_const) {
        uint32_t insn = g->mem[(pc - g->base) / 2];

        run->prev_rd = (insn >> 7) & 0x1f;
    }
    if (itype || chance(run, 12)) {
        close_block(run, itype, sijump);
    }
    run->pc = next & xmask(g);
}

/* ------------------------------------------------------------ decoding */

static bool rt_read(void *opaque, uint64_t addr, uint16_t *parcel)
{
    const Prog *g = ((Run *)opaque)->g;
    uint64_t i = (addr - g->base) / 2;

    if (addr < g->base || i >= g->nhalf) {
        return false;
    }
    *parcel = g->mem[i];
    return true;
}

static void rt_insn(void *opaque, const ETraceDecInsn *insn)
{
    Run *run = opaque;
    Retired t = { insn->addr, insn->privilege };

    g_array_append_val(run->out, t);
}

/* Runs expanded here: their addresses check the lengths they report. */
static void rt_insn_run(void *opaque, uint64_t addr, unsigned priv,
                        unsigned n, uint64_t lens4)
{
    etrace_decoder_run_insns(rt_insn, opaque, addr, priv, n, lens4);
}

static void rt_event(void *opaque, const ETraceDecEvent *ev)
{
    Run *run = opaque;

    switch (ev->type) {
    case ETRACE_DEC_TRAP: {
        /* 2.0 thaddr 0: the handler is not known yet */
        TrapRec t = { ev->cause, ev->interrupt,
                      ev->handler_valid ? ev->address : UINT64_MAX };

        g_array_append_val(run->out_traps, t);
        break;
    }
    case ETRACE_DEC_GAP:
        if (!run->gaps++) {
            run->out_at_gap = run->out->len;
        }
        break;
    case ETRACE_DEC_ERROR:
        if (g_getenv("RT_VERBOSE")) {
            fprintf(stderr, "# error @%" PRIu64 " packet %" PRIu64 ": %s\n",
                    ev->offset, ev->packet, ev->error);
        }
        if (!run->errors++) {
            run->first_error = ev->error;
        }
        break;
    default:
        break;
    }
}

/* The stream's next piece from at: random sizes split packets in feeds */
static size_t next_chunk(Run *run, size_t at)
{
    size_t n = g_rand_int_range(run->r, 1, 64);

    return MIN(n, run->stream->len - at);
}

/* Decode the N-trace stream into run->out, as decode_run() E-trace's */
static void decode_ntrace_run(Run *run)
{
    NTraceDecoderConfig cfg = {
        .params = { .xlen = run->p.iaddress_width_p },
        .implicit_return = run->no.implicit_return != ETRACE_IR_OFF,
        .read_parcel = rt_read,
        .insn = rt_insn,
        .event = rt_event,
        .opaque = run,
    };
    NTraceDecoder *d = ntrace_decoder_new(&cfg);

    g_assert_nonnull(d);
    for (size_t at = 0, n; at < run->stream->len; at += n) {
        n = next_chunk(run, at);
        ntrace_decoder_feed(d, run->stream->data + at, n);
    }
    ntrace_decoder_finish(d);
    ntrace_decoder_free(d);
}

static void decode_run(Run *run)
{
    ETraceDecoderConfig cfg = {
        .params = run->p,
        .read_parcel = rt_read,
        .insn = rt_insn,
        .event = rt_event,
        .opaque = run,
    };
    ETraceDecoder *d;

    cfg.xtvec[3] = run->g->mtvec;
    /* straight-line runs in one call, or one instruction at a time */
    if (g_rand_boolean(run->r)) {
        cfg.insn_run = rt_insn_run;
    }
    d = etrace_decoder_new(&cfg);
    g_assert_nonnull(d);
    for (size_t at = 0, n; at < run->stream->len; at += n) {
        n = next_chunk(run, at);
        etrace_decoder_feed(d, run->stream->data + at, n);
    }
    etrace_decoder_finish(d);
    etrace_decoder_free(d);
}

static void count_insn(void *opaque, const ETraceDecInsn *insn)
{
    (void)insn;
    (*(uint64_t *)opaque)++;
}

static bool bench_read(void *opaque, uint64_t addr, uint16_t *parcel);
static const Prog *bench_prog;

/* Decoder throughput with a callback that only counts (RT_BENCH). */
static void bench_decode(Run *run)
{
    ETraceDecoderConfig cfg = {
        .params = run->p, .read_parcel = bench_read, .insn = count_insn,
    };
    gint64 best = INT64_MAX;
    uint64_t n = 0;

    bench_prog = run->g;
    cfg.xtvec[3] = run->g->mtvec;
    for (unsigned i = 0; i < 5; i++) {
        clock_t t0 = clock();     /* CPU time: the machine may be busy */
        ETraceDecoder *d;

        n = 0;
        cfg.opaque = &n;
        d = etrace_decoder_new(&cfg);
        etrace_decoder_feed(d, run->stream->data, run->stream->len);
        etrace_decoder_free(d);
        best = MIN(best, (gint64)(clock() - t0) * 1000000 / CLOCKS_PER_SEC);
    }
    fprintf(stderr, "# decoded %" PRIu64 " insns from %u bytes in %" PRId64
            " us: %.1f M insns/s\n", n, run->stream->len, best,
            n / (double)(best + 1));
}

static bool bench_read(void *opaque, uint64_t addr, uint16_t *parcel)
{
    uint64_t i = (addr - bench_prog->base) / 2;

    (void)opaque;
    if (addr < bench_prog->base || i >= bench_prog->nhalf) {
        return false;
    }
    *parcel = bench_prog->mem[i];
    return true;
}

/* -------------------------------------------------------------- checks */

static const char *kind_name(const Prog *g, uint64_t addr)
{
    static const char *const names[] = {
        "-", "alu", "const", "branch", "jal", "ret", "indirect", "main-end",
        "pair-jump", "ecall", "mret",
    };
    const Meta *m = meta_at(g, addr);

    return m ? names[m->kind] : "?";
}

static void describe(const Run *run)
{
    const ETraceOptions *o = &run->o;

    if (run->nenc) {
        fprintf(stderr, "# xlen %u ntrace %u ir %d repeat %d context %d "
                "sync %d/%u filter %d lose %d\n", run->p.iaddress_width_p,
                run->no.mode, run->no.implicit_return, run->no.repeat,
                run->no.context, run->no.sync_mode, run->no.sync_max,
                run->filter, run->lose);
        return;
    }

    fprintf(stderr, "# xlen %u arch %u full %d iexc %d sijump %d ir %d "
            "bpred %d jtc %d sync %d/%u filter %d lose %d\n",
            run->p.iaddress_width_p, run->p.arch, o->full_address,
            o->implicit_exception, o->sijump, o->implicit_return,
            o->branch_prediction, o->jump_target_cache, o->sync_mode,
            o->sync_max, run->filter, run->lose);
}

static void dump_context(const Run *run, size_t at)
{
    size_t lo = at > 8 ? at - 8 : 0;

    fprintf(stderr, "#   %-4s %-28s %-28s\n", "i", "expected", "decoded");
    for (size_t i = lo; i < at + 6; i++) {
        char e[64] = "", d[64] = "";

        if (i < run->truth->len) {
            Retired *t = &g_array_index(run->truth, Retired, i);

            snprintf(e, sizeof(e), "%08" PRIx64 " p%u %s", t->addr, t->priv,
                     kind_name(run->g, t->addr));
        }
        if (i < run->out->len) {
            Retired *t = &g_array_index(run->out, Retired, i);

            snprintf(d, sizeof(d), "%08" PRIx64 " p%u %s", t->addr, t->priv,
                     kind_name(run->g, t->addr));
        }
        fprintf(stderr, "# %c %-4zu %-28s %-28s\n", i == at ? '>' : ' ', i,
                e, d);
    }
}

/* Decode message by message, printing how far each one takes the output */
static void dump_messages(Run *run)
{
    NTraceDecoderConfig cfg = {
        .params = { .xlen = run->p.iaddress_width_p },
        .implicit_return = run->no.implicit_return != ETRACE_IR_OFF,
        .read_parcel = rt_read, .insn = rt_insn, .event = rt_event,
        .opaque = run,
    };
    NTraceDecoder *d = ntrace_decoder_new(&cfg);
    size_t at = 0;

    while (at < run->stream->len) {
        NTraceMessage m;
        const char *err = NULL;
        int n = ntrace_message_unpack(&cfg.params, run->stream->data + at,
                                      run->stream->len - at, &m, &err);

        if (n <= 0) {
            fprintf(stderr, "# unpack: %s\n", err ? err : "truncated");
            break;
        }
        ntrace_decoder_message(d, &m);
        fprintf(stderr, "# -> %u insns, last %" PRIx64 "\n", run->out->len,
                run->out->len ? g_array_index(run->out, Retired,
                                              run->out->len - 1).addr : 0);
        fprintf(stderr, "# msg @%zu: %s sync %u b %u e %u r %u ev %u icnt %"
                PRIu64 " addr %" PRIx64 " hist %" PRIx64 " rdata %" PRIx64
                " hrep %" PRIu64 " bcnt %" PRIu64 "\n", at,
                ntrace_tcode_name(m.tcode), m.sync, m.btype, m.etype,
                m.rcode, m.evcode, m.icnt, m.addr, m.hist, m.rdata,
                m.hrepeat, m.bcnt);
        at += n;
    }
    ntrace_decoder_free(d);
}

/* Decode packet by packet, printing how far each one takes the output. */
static void dump_blocks_and_packets(Run *run)
{
    ETraceOptions o = { 0 };
    size_t at = 0;
    ETraceDecoderConfig cfg = {
        .params = run->p, .read_parcel = rt_read, .insn = rt_insn,
        .event = rt_event, .opaque = run,
    };
    ETraceDecoder *d;

    cfg.xtvec[3] = run->g->mtvec;
    d = etrace_decoder_new(&cfg);

    for (unsigned i = 0; i < run->blocks->len; i++) {
        const ETraceBlock *b = &g_array_index(run->blocks, ETraceBlock, i);

        fprintf(stderr, "# block %u: %08" PRIx64 " hw %u n %u last %u "
                "itype %u priv %u sij %d notify %d q %d cause %" PRIu64
                " run %u map %" PRIx64 "\n",
                i, b->iaddr, b->iretire, b->ninsns, b->ilastsize, b->itype,
                b->priv, b->sijump, b->notify, b->qualified, b->cause,
                b->run, b->run_map);
    }
    if (run->nenc) {
        etrace_decoder_free(d);
        dump_messages(run);
        return;
    }
    while (at < run->stream->len) {
        ETracePacket pkt;
        const char *err = NULL;
        int n = etrace_packet_unpack(&run->p, &o, run->stream->data + at,
                                     run->stream->len - at, &pkt, &err);

        if (n <= 0) {
            fprintf(stderr, "# unpack: %s\n", err ? err : "truncated");
            break;
        }
        if (pkt.format == 3 && pkt.subformat == 3) {
            etrace_options_unpack(&run->p, pkt.options, &o);
        }
        etrace_decoder_packet(d, &pkt);
        fprintf(stderr, "# -> %u insns, last %" PRIx64 "\n", run->out->len,
                run->out->len ? g_array_index(run->out, Retired,
                                              run->out->len - 1).addr : 0);
        fprintf(stderr, "# pkt @%zu: f%u.%u addr %" PRIx64 " br %u map %x "
                "cnt %u fmt %u idx %u n/u/i %d%d%d d %u b %d priv %u "
                "cause %" PRIu64 " q %u en %d\n", at, pkt.format, pkt.subformat,
                pkt.address, pkt.branches, pkt.branch_map, pkt.branch_count,
                pkt.branch_fmt, pkt.index, pkt.notify, pkt.updiscon,
                pkt.irreport, pkt.irdepth, pkt.branch, pkt.privilege,
                pkt.ecause, pkt.qual_status, pkt.enable);
        at += n;
    }
    etrace_decoder_free(d);
}

static size_t first_mismatch(const GArray *a, size_t a0, const GArray *b,
                             size_t b0, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const Retired *x = &g_array_index(a, Retired, a0 + i);
        const Retired *y = &g_array_index(b, Retired, b0 + i);

        if (x->addr != y->addr || x->priv != y->priv) {
            return i;
        }
    }
    return n;
}

/* Returns true if the decoder rebuilt exactly what the hart retired. */
static bool check_run(Run *run)
{
    size_t n, at;
    bool ok;

    if (run->nenc && !run->no.context) {
        /* N-trace says the privilege only in Ownership messages */
        for (unsigned i = 0; i < run->truth->len; i++) {
            g_array_index(run->truth, Retired, i).priv = 0;
        }
    }
    n = MIN(run->truth->len, run->out->len);
    at = first_mismatch(run->truth, 0, run->out, 0, n);
    ok = at == n && run->truth->len == run->out->len && !run->errors;

    if (run->lose && run->lost_done) {
        /*
         * A prefix, the gap, then everything from the sync on: at the
         * loss or, when runs of branches follow it (with prediction too,
         * indexed), at the first block with an address after them.
         */
        size_t pre = run->out_at_gap;
        size_t tail = run->out->len >= pre ? run->out->len - pre : 0;
        size_t from = run->truth->len - MIN(tail, run->truth->len);

        ok = run->gaps >= 1 && !run->errors && pre <= run->lost_at &&
             first_mismatch(run->truth, 0, run->out, 0, pre) == pre &&
             from >= run->lost_at &&
             (from == run->lost_at || run->runs.indexed ||
              !run->o.branch_prediction) &&
             first_mismatch(run->truth, from, run->out, pre, tail) == tail;
        at = pre;
        if (!ok && g_getenv("RT_VERBOSE")) {
            size_t after = MIN(tail, run->truth->len - run->lost_at);

            /* the listing below is aligned at 0: where do the tails part? */
            fprintf(stderr, "# loss: %zu decoded before the gap, %zu "
                    "expected; from there on (expected %zu, decoded %zu) "
                    "they differ after %zu\n", pre, (size_t)run->lost_at,
                    (size_t)run->lost_at, pre,
                    first_mismatch(run->truth, run->lost_at, run->out, pre,
                                   after));
        }
    } else if (run->nenc) {
        /*
         * N-trace has no cause, and a trap taken at the first instruction
         * of a handler is a message of its own: the instructions say it.
         * A trap the filter does not pass, before a handler it passes,
         * is a sync there (ProgTraceSync), not a trap.
         */
        ok = ok && (run->filter || run->out_traps->len >= run->traps->len);
    } else if (ok && run->traps->len == run->out_traps->len) {
        for (unsigned i = 0; i < run->traps->len; i++) {
            TrapRec *a = &g_array_index(run->traps, TrapRec, i);
            TrapRec *b = &g_array_index(run->out_traps, TrapRec, i);

            ok &= a->cause == b->cause && a->interrupt == b->interrupt &&
                  (a->handler == b->handler || b->handler == UINT64_MAX);
        }
    } else {
        ok = ok && run->traps->len == run->out_traps->len;
    }
    if (ok && !g_getenv("RT_ALWAYS")) {
        return true;
    }
    describe(run);
    fprintf(stderr, "# expected %u insns %u traps, decoded %u insns %u traps,"
            " %u errors (%s), first difference at %zu\n",
            run->truth->len, run->traps->len, run->out->len,
            run->out_traps->len, run->errors,
            run->first_error ? run->first_error : "-", at);
    dump_context(run, at);
    for (unsigned i = 0; i < MIN(run->traps->len, run->out_traps->len); i++) {
        TrapRec *a = &g_array_index(run->traps, TrapRec, i);
        TrapRec *b = &g_array_index(run->out_traps, TrapRec, i);

        if (a->cause != b->cause || a->interrupt != b->interrupt ||
            a->handler != b->handler) {
            fprintf(stderr, "# trap %u: expected %" PRIu64 "/%d at %" PRIx64
                    ", decoded %" PRIu64 "/%d at %" PRIx64 "\n", i, a->cause,
                    a->interrupt, a->handler, b->cause, b->interrupt,
                    b->handler);
            break;
        }
    }
    if (g_getenv("RT_VERBOSE")) {
        g_array_set_size(run->out, 0);
        dump_blocks_and_packets(run);
        g_file_set_contents("/tmp/rt-stream.bin", (char *)run->stream->data,
                            run->stream->len, NULL);
    }
    return ok;
}

/* ---------------------------------------------------------------- runs */

static void run_free(Run *run)
{
    if (run->nenc) {
        ntrace_encoder_free(run->nenc);
    } else {
        etrace_encoder_free(run->enc);
    }
    g_byte_array_free(run->stream, true);
    g_array_free(run->blocks, true);
    g_array_free(run->truth, true);
    g_array_free(run->traps, true);
    g_array_free(run->out, true);
    g_array_free(run->out_traps, true);
}

/* Execute, encode, decode and compare one program under one option set. */
/* no: N-trace's options, or NULL for E-trace */
static bool one_run(const Prog *g, GRand *r, const ETraceParams *p,
                    const ETraceOptions *o, const NTraceOptions *no,
                    bool filter, bool lose, unsigned ninsns)
{
    Run run = {
        .g = g, .r = r, .p = *p, .o = *o, .filter = filter, .lose = lose,
        .ninsns = ninsns, .qualified = true,
    };
    bool ok;

    run.stream = g_byte_array_new();
    run.blocks = g_array_new(false, false, sizeof(ETraceBlock));
    run.truth = g_array_new(false, false, sizeof(Retired));
    run.traps = g_array_new(false, false, sizeof(TrapRec));
    run.out = g_array_new(false, false, sizeof(Retired));
    run.out_traps = g_array_new(false, false, sizeof(TrapRec));
    run_maker_init(&run.runs, encode, &run);
    if (no) {
        NTraceParams np = { .xlen = p->iaddress_width_p };

        run.no = *no;
        run.runs.counted = no->mode == NTRACE_MODE_BTM;
        run.nenc = ntrace_encoder_new(&np, emit_bytes, &run);
        g_assert_nonnull(run.nenc);
        ntrace_encoder_start(run.nenc, no);
    } else {
        run.enc = etrace_encoder_new(p, emit_bytes, &run);
        run.runs.indexed = o->branch_prediction && etrace_run_indexes_fit(p);
        g_assert_nonnull(run.enc);
        etrace_encoder_start(run.enc, o);
    }
    run.pc = g->func_start[0];
    run.priv = g_rand_boolean(r) ? 1 : 0;
    while (run.retired < ninsns) {
        step(&run);
    }
    if (run.open) {
        close_block(&run, 0, false);
    }
    run_maker_flush(&run.runs);
    if (no) {
        ntrace_encoder_stop(run.nenc);
        decode_ntrace_run(&run);
    } else {
        etrace_encoder_stop(run.enc);
        if (g_getenv("RT_BENCH")) {
            bench_decode(&run);
        }
        decode_run(&run);
    }
    ok = check_run(&run);
    run_free(&run);
    return ok;
}

static ETraceOptions combo_options(unsigned combo, GRand *r)
{
    ETraceOptions o = {
        .full_address = combo & 1,
        .implicit_exception = (combo >> 1) & 1,
        .sijump = (combo >> 2) & 1,
        .branch_prediction = (combo >> 3) & 1,
        .jump_target_cache = (combo >> 4) & 1,
        .implicit_return = (combo >> 5) % 3,
        .sync_mode = g_rand_int_range(r, 0, 4),
        .sync_max = g_rand_int_range(r, 0, 3),
    };

    return o;
}

#define NCOMBOS 96

/*
 * N-trace: implicit return (off, counter, stack), repeat, Ownership; the
 * interpreter's options as E-trace's without any (only implicit return,
 * which decides whether returns may go astray)
 */
static NTraceOptions ntrace_combo_options(unsigned combo, NTraceMode mode,
                                          GRand *r, ETraceOptions *o)
{
    NTraceOptions no = {
        .mode = mode,
        .implicit_return = combo % 3,
        .repeat = (combo / 3) & 1,
        .context = (combo / 6) & 1,
        .sync_mode = g_rand_int_range(r, 0, 4),
        .sync_max = g_rand_int_range(r, 0, 3),
    };

    *o = (ETraceOptions) { .implicit_return = no.implicit_return };
    return no;
}

#define NTRACE_COMBOS 12

typedef struct Case {
    unsigned xlen;
    ETraceArch arch;
    bool filter;
    bool lose;
    unsigned programs;
    unsigned ninsns;
    unsigned first;         /* the first program's number */
    unsigned ntrace;        /* 0 E-trace, else N-trace's NTraceMode */
} Case;

static void test_roundtrip(const void *data)
{
    const Case *c = data;
    static const Mix mix = {
        .alu = 40, .branch = 14, .call = 5, .tail = 2, .indirect = 3,
        .pair = 3, .ecall = 1,
    };
    unsigned failures = 0, runs = 0;
    const char *only = g_getenv("RT_ONLY");     /* "program:combo" */
    int only_prog = -1, only_combo = -1;

    if (only) {
        sscanf(only, "%d:%d", &only_prog, &only_combo);
    }
    /*
     * RT_PROGRAMS=n soaks with more programs than the default, RT_FIRST=m
     * from program m on (programs the default runs have been seen
     * already), RT_INSNS=k with longer runs
     */
    const char *insns = g_getenv("RT_INSNS");
    unsigned ninsns = g_getenv("RT_BENCH") ? 4000000 :
                      insns ? (unsigned)atoi(insns) : c->ninsns;
    unsigned programs = g_getenv("RT_PROGRAMS") ?
                        (unsigned)atoi(g_getenv("RT_PROGRAMS")) : c->programs;
    unsigned first = g_getenv("RT_FIRST") ?
                     (unsigned)atoi(g_getenv("RT_FIRST")) : c->first;

    for (unsigned prog = first; prog < first + programs; prog++) {
        GRand *r = g_rand_new_with_seed(c->xlen * 1000 + prog * 7 +
                                        c->filter * 3 + c->lose * 5 +
                                        c->arch * 11);
        uint64_t base = c->xlen == 32 ? 0x10000 :
                        (prog & 1 ? 0x80000000 : 0x40000000);
        ETraceParams p;
        Prog g;

        etrace_params_default(&p, c->xlen);
        p.arch = c->arch;
        prog_generate(&g, r, c->xlen, base, prog & 1, &mix);
        for (unsigned combo = 0;
             combo < (c->ntrace ? NTRACE_COMBOS : NCOMBOS); combo++) {
            /* one generator per run, so that RT_ONLY replays it */
            GRand *rr = g_rand_new_with_seed(g_rand_int(r) ^ combo);
            ETraceOptions o;
            NTraceOptions no = { 0 };

            if (c->ntrace) {
                no = ntrace_combo_options(combo, c->ntrace, rr, &o);
            } else {
                o = combo_options(combo, rr);
            }

            if (only && (only_prog != (int)prog || only_combo != (int)combo)) {
                g_rand_free(rr);
                continue;
            }
            runs++;
            if (!one_run(&g, rr, &p, &o, c->ntrace ? &no : NULL, c->filter,
                         c->lose, ninsns)) {
                failures++;
                fprintf(stderr, "# ^ program %u combo %u\n", prog, combo);
            }
            g_rand_free(rr);
        }
        prog_free(&g);
        g_rand_free(r);
    }
    if (failures) {
        g_test_message("%u of %u runs differ", failures, runs);
        g_test_fail();
    }
}

int main(int argc, char **argv)
{
    static const Case cases[] = {
        { 64, ETRACE_ARCH_1_1, false, false, 6, 4000, 0, 0 },
        { 32, ETRACE_ARCH_1_1, false, false, 6, 4000, 0, 0 },
        { 64, ETRACE_ARCH_1_1, true, false, 2, 4000, 0, 0 },
        { 32, ETRACE_ARCH_1_1, true, false, 2, 4000, 0, 0 },
        { 64, ETRACE_ARCH_1_1, false, true, 2, 4000, 0, 0 },
        { 32, ETRACE_ARCH_1_1, false, true, 2, 4000, 0, 0 },
        { 64, ETRACE_ARCH_2_0, false, false, 1, 4000, 0, 0 },
        { 32, ETRACE_ARCH_2_0, false, false, 1, 4000, 0, 0 },
        /*
         * 2.0: a return the stack mispredicted, to an instruction that
         * traps: thaddr 0, then the handler's format 3.0, which the
         * decoder walked to from the return through the stack's target
         * until 2026-11-28 (found with RT_PROGRAMS=400)
         */
        { 64, ETRACE_ARCH_2_0, false, false, 1, 4000, 351, 0 },
        { 32, ETRACE_ARCH_2_0, false, false, 1, 4000, 245, 0 },
        { 32, ETRACE_ARCH_2_0, false, false, 1, 4000, 357, 0 },
        /*
         * a call of the next instruction (its return lands in the code
         * it just ran) with implicit return, then a resync: a format 3
         * has no depth, so the decoder met its address in the call
         */
        { 64, ETRACE_ARCH_1_1, false, true, 1, 4000, 188, 0 },
        /*
         * code after a call run twice at two depths (the call's return
         * lands there, runs it to an implicit return to the same
         * address, an older call's), the second run's return notified
         * before a trap: the report's irdepth names the second visit of
         * its address, the decoder stopped at the first until 2026-11-28
         * (found with RT_FIRST=400 RT_PROGRAMS=600)
         */
        { 32, ETRACE_ARCH_1_1, false, true, 1, 4000, 685, 0 },
        /*
         * a return to itself (its call's return address), then that
         * return again to an instruction that traps: the report of the
         * second, at depth 0 after an implicit return, carried no depth,
         * and the decoder stopped at the first (RT_FIRST=1000
         * RT_PROGRAMS=500, 2026-11-28; the encoder reports depth 0 too)
         */
        { 64, ETRACE_ARCH_1_1, false, false, 1, 4000, 1491, 0 },
        { 32, ETRACE_ARCH_1_1, false, true, 1, 4000, 1226, 0 },
        /* N-trace: the same programs, blocks and runs */
        { 64, ETRACE_ARCH_1_1, false, false, 6, 4000, 0, NTRACE_MODE_BTM },
        { 64, ETRACE_ARCH_1_1, false, false, 6, 4000, 0, NTRACE_MODE_HTM },
        { 32, ETRACE_ARCH_1_1, false, false, 6, 4000, 0, NTRACE_MODE_BTM },
        { 32, ETRACE_ARCH_1_1, false, false, 6, 4000, 0, NTRACE_MODE_HTM },
        { 64, ETRACE_ARCH_1_1, true, false, 4, 4000, 0, NTRACE_MODE_HTM },
        { 64, ETRACE_ARCH_1_1, false, true, 4, 4000, 0, NTRACE_MODE_BTM },
        { 32, ETRACE_ARCH_1_1, false, true, 4, 4000, 0, NTRACE_MODE_HTM },
    };
    static const char *const names[] = {
        "rv64", "rv32", "rv64-filter", "rv32-filter", "rv64-lost",
        "rv32-lost", "rv64-arch2", "rv32-arch2", "rv64-arch2-trap-return",
        "rv32-arch2-trap-return", "rv32-arch2-trap-return-2",
        "rv64-lost-call-next", "rv32-lost-notify-depth",
        "rv64-depth-0-report", "rv32-lost-depth-0-report",
        "ntrace-rv64-btm", "ntrace-rv64-htm", "ntrace-rv32-btm",
        "ntrace-rv32-htm", "ntrace-rv64-htm-filter", "ntrace-rv64-btm-lost",
        "ntrace-rv32-htm-lost",
    };

    g_test_init(&argc, &argv, NULL);
    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = g_strdup_printf("/etrace-roundtrip/%s",
                                                names[i]);

        g_test_add_data_func(path, &cases[i], test_roundtrip);
    }
    return g_test_run();
}

/*
 * Unit tests of the data trace matcher (etrace-dec-data.h): accesses
 * paired with the instructions that made them, whichever comes first.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <glib.h>
#include "etrace-dec-data.h"

#define LD_A0_A1    0x0005b503u     /* ld a0, 0(a1) */
#define SD_A0_A1    0x00a5b023u     /* sd a0, 0(a1) */
#define LR_W        0x1005a52fu     /* lr.w a0, (a1) */
#define SC_W        0x18a5a62fu     /* sc.w a2, a0, (a1) */
#define ADD         0x00b50533u     /* add a0, a0, a1 */
#define CSRR        0x30002573u     /* csrr a0, mstatus */
#define C_LW        0x4188u         /* c.lw a0, 0(a1) */
#define CM_PUSH     0xb862u         /* cm.push {ra, s0, s1}, -32 */
#define CM_POPRET   0xbe62u         /* cm.popret {ra, s0, s1}, 32 */

typedef struct Out {
    uint64_t addr[16];
    unsigned has[16];       /* accesses */
    uint64_t daddr[16], last_daddr[16];
    unsigned n;
} Out;

/* Each instruction, with its first access and how many it has */
static void on_insn(void *opaque, const ETraceDecInsn *insn, uint32_t bits,
                    const ETraceDataAccess *a, unsigned n)
{
    Out *o = opaque;

    (void)bits;
    g_assert_cmpuint(o->n, <, 16);
    g_assert_true(!a == !n);
    o->addr[o->n] = insn->addr;
    o->has[o->n] = n;
    o->daddr[o->n] = n ? a[0].daddr : 0;
    o->last_daddr[o->n] = n ? a[n - 1].daddr : 0;
    o->n++;
}

static void insn(ETraceDataMatch *m, uint64_t addr, uint32_t bits)
{
    ETraceDecInsn i = { .addr = addr, .len = (bits & 3) == 3 ? 4 : 2 };

    etrace_data_match_insn(m, &i, bits);
}

static void access(ETraceDataMatch *m, unsigned dtype, unsigned dsize,
                   uint64_t daddr)
{
    ETraceDataAccess a = { .dtype = dtype, .dsize = dsize, .daddr = daddr };

    etrace_data_match_access(m, &a, false);
}

/* Accesses ahead of their instructions, and instructions ahead. */
static void test_order(void)
{
    Out o = { 0 };
    ETraceDataMatch *m = etrace_data_match_new(64, 0, on_insn, &o);

    access(m, ETRACE_DTYPE_LOAD, 3, 0x1000);
    insn(m, 0x100, LD_A0_A1);
    g_assert_cmpuint(o.n, ==, 1);
    g_assert_true(o.has[0]);
    /* a store waits for its access, and the add after it too */
    insn(m, 0x104, SD_A0_A1);
    insn(m, 0x108, ADD);
    insn(m, 0x10c, C_LW);
    g_assert_cmpuint(o.n, ==, 1);
    access(m, ETRACE_DTYPE_STORE, 3, 0x2000);
    g_assert_cmpuint(o.n, ==, 3);
    g_assert_true(o.has[1] && !o.has[2]);
    g_assert_cmphex(o.daddr[1], ==, 0x2000);
    access(m, ETRACE_DTYPE_LOAD, 2, 0x3000);
    g_assert_cmpuint(o.n, ==, 4);
    g_assert_cmphex(o.daddr[3], ==, 0x3000);
    /* a CSR access, any size */
    insn(m, 0x10e, CSRR);
    access(m, ETRACE_DTYPE_CSR_RS, 3, 0x300);
    g_assert_cmpuint(o.n, ==, 5);
    g_assert_true(o.has[4]);
    g_assert_cmpuint(etrace_data_match_stats(m)->matched, ==, 4);
    etrace_data_match_free(m);
}

/* An SC takes a store at its LR's address only. */
static void test_store_conditional(void)
{
    Out o = { 0 };
    ETraceDataMatch *m = etrace_data_match_new(64, 0, on_insn, &o);

    insn(m, 0x100, LR_W);
    access(m, ETRACE_DTYPE_LOAD, 2, 0x1000);
    insn(m, 0x104, SC_W);                   /* waits: failed or not? */
    g_assert_cmpuint(o.n, ==, 1);
    access(m, ETRACE_DTYPE_STORE, 2, 0x1000);
    g_assert_cmpuint(o.n, ==, 2);
    g_assert_true(o.has[1]);
    /* this one fails: the next store is another instruction's */
    insn(m, 0x100, LR_W);
    access(m, ETRACE_DTYPE_LOAD, 2, 0x1000);
    insn(m, 0x104, SC_W);
    insn(m, 0x108, SD_A0_A1);
    access(m, ETRACE_DTYPE_STORE, 3, 0x1000);
    g_assert_cmpuint(o.n, ==, 5);
    g_assert_false(o.has[3]);
    g_assert_true(o.has[4]);
    g_assert_cmpuint(etrace_data_match_stats(m)->failed_sc, ==, 1);
    etrace_data_match_free(m);
}

/* A wrong type is dropped; a flush ends what waits. */
static void test_mismatch_and_flush(void)
{
    Out o = { 0 };
    ETraceDataMatch *m = etrace_data_match_new(64, 0, on_insn, &o);
    const ETraceDataMatchStats *st = etrace_data_match_stats(m);

    access(m, ETRACE_DTYPE_STORE, 3, 0x1000);
    insn(m, 0x100, LD_A0_A1);
    g_assert_cmpuint(o.n, ==, 1);
    g_assert_false(o.has[0]);
    g_assert_cmpuint(st->mismatched, ==, 1);
    insn(m, 0x104, LD_A0_A1);
    insn(m, 0x108, ADD);
    etrace_data_match_flush(m);
    g_assert_cmpuint(o.n, ==, 3);
    g_assert_cmpuint(st->missing, ==, 1);
    access(m, ETRACE_DTYPE_LOAD, 3, 0x1000);
    etrace_data_match_flush(m);
    g_assert_cmpuint(st->unmatched, ==, 1);
    etrace_data_match_free(m);
}

/*
 * Zcmp's push and pop: one access per word, all of them on their
 * instruction, which waits until the last has come.
 */
static void test_zcmp(void)
{
    Out o = { 0 };
    ETraceDataMatch *m = etrace_data_match_new(64, RISCV_INSN_ISA_ZCMP,
                                               on_insn, &o);
    const ETraceDataMatchStats *st = etrace_data_match_stats(m);

    insn(m, 0x100, CM_PUSH);
    access(m, ETRACE_DTYPE_STORE, 3, 0x1ff8);
    access(m, ETRACE_DTYPE_STORE, 3, 0x1ff0);
    g_assert_cmpuint(o.n, ==, 0);
    access(m, ETRACE_DTYPE_STORE, 3, 0x1fe8);
    g_assert_cmpuint(o.n, ==, 1);
    g_assert_cmpuint(o.has[0], ==, 3);
    g_assert_cmphex(o.daddr[0], ==, 0x1ff8);
    g_assert_cmphex(o.last_daddr[0], ==, 0x1fe8);
    /* a pop whose second word is a store: it goes on without any */
    access(m, ETRACE_DTYPE_LOAD, 3, 0x1fe8);
    access(m, ETRACE_DTYPE_STORE, 3, 0x1ff0);
    access(m, ETRACE_DTYPE_LOAD, 3, 0x1ff8);
    insn(m, 0x102, CM_POPRET);
    g_assert_cmpuint(o.n, ==, 2);
    g_assert_cmpuint(o.has[1], ==, 0);
    g_assert_cmpuint(st->matched, ==, 3);
    g_assert_cmpuint(st->mismatched, ==, 1);
    etrace_data_match_free(m);
}

/* The instructions that report an access, as the hart reports them. */
static void test_insn_kinds(void)
{
    static const struct {
        uint32_t bits;
        unsigned xlen;
        RISCVDataKind kind;
        unsigned size;
    } cases[] = {
        { LD_A0_A1, 64, RISCV_DATA_LOAD, 3 },
        { 0x0005c503, 64, RISCV_DATA_LOAD, 0 },      /* lbu */
        { SD_A0_A1, 64, RISCV_DATA_STORE, 3 },
        { SD_A0_A1, 32, RISCV_DATA_NONE, 0 },        /* sd: RV64 only */
        { 0x0005b507, 64, RISCV_DATA_LOAD, 3 },      /* fld */
        { 0x0005b507, 32, RISCV_DATA_NONE, 0 },      /* wider than XLEN */
        { 0x0005a527, 64, RISCV_DATA_STORE, 2 },     /* fsw */
        { 0x00059507, 64, RISCV_DATA_NONE, 0 },      /* flh: Zfh */
        { LR_W, 64, RISCV_DATA_LOAD, 2 },
        { SC_W, 64, RISCV_DATA_SC, 2 },
        { 0x00b5b52f, 64, RISCV_DATA_AMO, 3 },       /* amoadd.d */
        { 0xe0b5a52f, 64, RISCV_DATA_AMO, 2 },       /* amomaxu.w */
        { 0x28b5a52f, 64, RISCV_DATA_NONE, 0 },      /* amocas.w */
        { 0x00b5852f, 64, RISCV_DATA_NONE, 0 },      /* amoadd.b */
        { CSRR, 64, RISCV_DATA_CSR, 3 },
        { CSRR, 32, RISCV_DATA_CSR, 2 },
        { 0x00000073, 64, RISCV_DATA_NONE, 0 },      /* ecall */
        { C_LW, 64, RISCV_DATA_LOAD, 2 },
        { 0x6188, 64, RISCV_DATA_LOAD, 3 },          /* c.ld */
        { 0x6188, 32, RISCV_DATA_LOAD, 2 },          /* c.flw */
        { 0x2188, 32, RISCV_DATA_NONE, 0 },          /* c.fld */
        { 0xe188, 64, RISCV_DATA_STORE, 3 },         /* c.sd */
        { 0x8188, 64, RISCV_DATA_LOAD, 0 },          /* c.lbu */
        { 0x8d88, 64, RISCV_DATA_STORE, 1 },         /* c.sh */
        { 0x6502, 64, RISCV_DATA_LOAD, 3 },          /* c.ldsp */
        { 0x0505, 64, RISCV_DATA_NONE, 0 },          /* c.addi */
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        unsigned size;

        g_test_message("0x%08x RV%u", cases[i].bits, cases[i].xlen);
        g_assert_cmpint(riscv_insn_data_access(cases[i].bits, cases[i].xlen,
                                               &size), ==, cases[i].kind);
        if (cases[i].kind != RISCV_DATA_NONE) {
            g_assert_cmpuint(size, ==, cases[i].size);
        }
    }
}

/*
 * The words of Zcmp's push and pop, on a hart with Zcmp (without it their
 * encodings are c.fsdsp's); none for Zcmt's jumps and cm.mvsa01.
 */
static void test_zcmp_kinds(void)
{
    static const unsigned zcm = RISCV_INSN_ISA_ZCMP | RISCV_INSN_ISA_ZCMT;
    static const struct {
        uint32_t bits;
        unsigned xlen, isa;
        RISCVDataKind kind;
        unsigned size, count;
    } cases[] = {
        { CM_PUSH, 64, zcm, RISCV_DATA_STORE, 3, 3 },
        { CM_PUSH, 32, zcm, RISCV_DATA_STORE, 2, 3 },
        { CM_POPRET, 64, RISCV_INSN_ISA_ZCMP, RISCV_DATA_LOAD, 3, 3 },
        { 0xba42, 64, zcm, RISCV_DATA_LOAD, 3, 1 },     /* cm.pop {ra} */
        { 0xbcf2, 32, zcm, RISCV_DATA_LOAD, 2, 13 },    /* cm.popretz */
        { 0xb802, 64, zcm, RISCV_DATA_NONE, 0, 0 },     /* rlist 0 */
        { 0xac26, 64, zcm, RISCV_DATA_NONE, 0, 0 },     /* cm.mvsa01 */
        { 0xa016, 64, zcm, RISCV_DATA_NONE, 0, 0 },     /* cm.jt 5 */
        { CM_PUSH, 64, RISCV_INSN_ISA_ZCMT, RISCV_DATA_NONE, 0, 0 },
        { CM_PUSH, 64, 0, RISCV_DATA_STORE, 3, 1 },     /* c.fsdsp */
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        unsigned size, count;
        RISCVDataKind kind = riscv_insn_data_accesses(cases[i].bits,
                                                      cases[i].xlen,
                                                      cases[i].isa, &size,
                                                      &count);

        g_test_message("0x%04x RV%u isa %u", cases[i].bits, cases[i].xlen,
                       cases[i].isa);
        g_assert_cmpint(kind, ==, cases[i].kind);
        if (kind != RISCV_DATA_NONE) {
            g_assert_cmpuint(size, ==, cases[i].size);
            g_assert_cmpuint(count, ==, cases[i].count);
        }
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/etrace-dec-data/order", test_order);
    g_test_add_func("/etrace-dec-data/store-conditional",
                    test_store_conditional);
    g_test_add_func("/etrace-dec-data/mismatch-and-flush",
                    test_mismatch_and_flush);
    g_test_add_func("/etrace-dec-data/insn-kinds", test_insn_kinds);
    g_test_add_func("/etrace-dec-data/zcmp", test_zcmp);
    g_test_add_func("/etrace-dec-data/zcmp-kinds", test_zcmp_kinds);
    return g_test_run();
}

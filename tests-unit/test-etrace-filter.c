/*
 * Unit tests of the E-trace filters and comparators: WARL register
 * behaviour (Trace Control Interface 1.0, "Trace Encoder Filter
 * Registers") and qualification (E-trace v1.1.1 draft, tables 2.3 to 2.6
 * and chapter 5).  Register bits are written here as the TCI tables give
 * them, not through the library's macros.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <glib.h>
#include "etrace-filter.h"

/* Register offsets (TCI). */
#define INST_FILTERS        0x00c
#define DATA_FILTERS        0x01c
#define FREG(i, r)          (0x400 + 0x20 * (i) + (r))
#define CREG(j, r)          (0x600 + 0x20 * (j) + (r))
#define F_CONTROL           0x00
#define F_MATCH_INST        0x04
#define F_ECAUSE_LOW        0x08
#define F_ECAUSE_HIGH       0x0c
#define F_MATCH_DATA        0x18
#define C_CONTROL           0x00
#define C_PMATCH_LOW        0x10
#define C_PMATCH_HIGH       0x14
#define C_SMATCH_LOW        0x18
#define C_SMATCH_HIGH       0x1c

/* trTeFilter<i>Control bits. */
#define F_ENABLE            (1u << 0)
#define F_MATCH_PRIV        (1u << 1)
#define F_MATCH_ECAUSE      (1u << 2)
#define F_MATCH_INTERRUPT   (1u << 3)
#define F_COMP1(j)          ((1u << 4) | (uint32_t)(j) << 5)
#define F_COMP2(j)          ((1u << 8) | (uint32_t)(j) << 9)
#define F_COMP3(j)          ((1u << 12) | (uint32_t)(j) << 13)
#define MI_INTERRUPT        (1u << 8)
#define F_MATCH_DTYPE       (1u << 24)
#define F_MATCH_DSIZE       (1u << 25)

/* trTeComp<j>Control fields. */
enum { IN_IADDR, IN_CONTEXT, IN_TVAL, IN_DADDR };
enum { EQ, NE, LT, LE, GT, GE, FN6, TRUE7 };
enum { MODE_P, MODE_P_AND_S, MODE_NOT_P_AND_S, MODE_LATCH };
#define C_PNOTIFY           (1u << 14)
#define C_SNOTIFY           (1u << 15)

/* itype codes (table 4.1) and privilege values. */
enum { IT_NONE = 0, IT_EXC = 1, IT_INT = 2, IT_RET = 3, IT_TAKEN = 5 };
enum { PRIV_U = 0, PRIV_S = 1, PRIV_M = 3 };

static uint32_t comp_ctl(unsigned pin, unsigned pfunc, unsigned sin,
                         unsigned sfunc, unsigned mode)
{
    return pin | sin << 2 | pfunc << 4 | sfunc << 8 | mode << 12;
}

/* ------------------------------------------------------------ fixtures */

static const ETraceParams params64 = {
    .iaddress_width_p = 64, .iaddress_lsb_p = 1, .ecause_width_p = 6,
    .privilege_width_p = 2, .context_width_p = 32,
};

static const ETraceParams params32 = {
    .iaddress_width_p = 32, .iaddress_lsb_p = 1, .ecause_width_p = 4,
    .privilege_width_p = 3, .context_width_p = 0,
};

/*
 * The program the blocks come from: instruction lengths from base on;
 * past the listed ones every instruction has length tail_len.
 */
typedef struct Program {
    uint64_t base;
    const uint8_t *lens;
    size_t n;
    unsigned tail_len;
    unsigned calls;
} Program;

static unsigned program_insn_len(void *opaque, uint64_t addr)
{
    Program *p = opaque;
    uint64_t a = p->base;

    p->calls++;
    for (size_t i = 0; i < p->n; i++) {
        if (a == addr) {
            return p->lens[i];
        }
        a += p->lens[i];
    }
    /* The filter must only ask at instruction starts. */
    g_assert_cmpuint(addr, >=, a);
    g_assert_cmpuint((addr - a) % p->tail_len, ==, 0);
    return p->tail_len;
}

/* 0x1000: 4 2 2 4 2 4 2 (ends at 0x1014), then 4-byte instructions. */
static const uint8_t mixed_lens[] = { 4, 2, 2, 4, 2, 4, 2 };
static Program mixed = {
    .base = 0x1000, .lens = mixed_lens, .n = G_N_ELEMENTS(mixed_lens),
    .tail_len = 4,
};

typedef struct Collect {
    ETraceBlock b[64];
    const ETraceBlock *ptr[64];
    unsigned n;
} Collect;

static void collect(void *opaque, const ETraceBlock *b)
{
    Collect *c = opaque;

    g_assert_cmpuint(c->n, <, G_N_ELEMENTS(c->b));
    c->ptr[c->n] = b;
    c->b[c->n++] = *b;
}

static ETraceBlock block(uint64_t iaddr, uint32_t bytes, unsigned last_len,
                         unsigned itype, unsigned priv)
{
    return (ETraceBlock) {
        .iaddr = iaddr, .iretire = bytes / 2, .ninsns = 1,
        .ilastsize = last_len == 4, .itype = itype, .priv = priv,
    };
}

static ETraceBlock trap_block(uint64_t iaddr, unsigned itype,
                              uint64_t cause, uint64_t tval, unsigned priv)
{
    ETraceBlock b = block(iaddr, 4, 4, itype, priv);

    b.cause = cause;
    b.tval = tval;
    return b;
}

static Collect *run(ETraceFilter *f, const ETraceBlock *b)
{
    static Collect c;

    c.n = 0;
    etrace_filter_block(f, b, collect, &c);
    return &c;
}

/* Qualification of a block that must not be split. */
static bool qualified(ETraceFilter *f, ETraceBlock b)
{
    Collect *c = run(f, &b);

    g_assert_cmpuint(c->n, ==, 1);
    return c->b[0].qualified;
}

static void set_comp(ETraceFilter *f, unsigned j, uint32_t ctl,
                     uint64_t pmatch, uint64_t smatch)
{
    etrace_filter_write(f, CREG(j, C_PMATCH_LOW), (uint32_t)pmatch);
    etrace_filter_write(f, CREG(j, C_PMATCH_HIGH), pmatch >> 32);
    etrace_filter_write(f, CREG(j, C_SMATCH_LOW), (uint32_t)smatch);
    etrace_filter_write(f, CREG(j, C_SMATCH_HIGH), smatch >> 32);
    etrace_filter_write(f, CREG(j, C_CONTROL), ctl);
}

/* Filter i with these control bits, selected in trTeInstFilters. */
static void set_filter(ETraceFilter *f, unsigned i, uint32_t ctl)
{
    etrace_filter_write(f, FREG(i, F_CONTROL), ctl | F_ENABLE);
    etrace_filter_write(f, INST_FILTERS,
                        etrace_filter_read(f, INST_FILTERS) | 1u << i);
}

static void init(ETraceFilter *f, bool with_lengths)
{
    mixed.calls = 0;
    etrace_filter_init(f, &params64, with_lengths ? program_insn_len : NULL,
                       &mixed);
}

/* ----------------------------------------------------------------- WARL */

static void test_reset_reads_zero(void)
{
    ETraceFilter f;

    init(&f, false);
    for (unsigned off = 0; off < 0x1000; off += 4) {
        g_assert_cmphex(etrace_filter_read(&f, off), ==, 0);
    }
    g_assert_true(etrace_filter_is_reg(0x00c));
    g_assert_true(etrace_filter_is_reg(0x400));
    g_assert_true(etrace_filter_is_reg(0x7fc));
    g_assert_false(etrace_filter_is_reg(0x008));
    g_assert_false(etrace_filter_is_reg(0x3fc));
    g_assert_false(etrace_filter_is_reg(0x800));
    g_assert_false(etrace_filter_active(&f));
}

static void write_all(ETraceFilter *f, uint32_t value)
{
    for (unsigned off = 0; off < 0x1000; off += 4) {
        etrace_filter_write(f, off, value);
    }
}

/* Legal read-back of every register after writing all-ones. */
static uint32_t all_ones_filter(unsigned reg, const ETraceParams *p)
{
    bool wide_cause = p->ecause_width_p >= 6;

    switch (reg) {
    case F_CONTROL:
        /*
         * 0..16 but bits 7, 11, 15 (index MSBs) and 16 (impdef);
         * MatchDtype (24), MatchDsize (25)
         */
        return 0x0300777f;
    case F_MATCH_DATA:
        /* the dtypes of table 4.9, dsize 0..3 */
        return 0x000f7f73;
    case F_MATCH_INST:
        return MI_INTERRUPT | (p->privilege_width_p >= 3 ? 0xff : 0x0f);
    case F_ECAUSE_LOW:
        return wide_cause ? 0xffffffff : 0xffff;
    case F_ECAUSE_HIGH:
        return wide_cause ? 0xffffffff : 0;
    default:
        return 0;   /* impdef, reserved */
    }
}

static uint32_t all_ones_comp(unsigned reg, const ETraceParams *p)
{
    bool wide = p->iaddress_width_p > 32 || p->context_width_p > 32;

    switch (reg) {
    case C_CONTROL:
        /* bits 7, 11, 31:16 reserved */
        return 0xf77f;
    case C_PMATCH_LOW:
    case C_SMATCH_LOW:
        return 0xffffffff;
    case C_PMATCH_HIGH:
    case C_SMATCH_HIGH:
        return wide ? 0xffffffff : 0;
    default:
        return 0;
    }
}

static void check_all_ones(const ETraceParams *p)
{
    ETraceFilter f;

    etrace_filter_init(&f, p, NULL, NULL);
    write_all(&f, 0xffffffff);
    for (unsigned off = 0; off < 0x1000; off += 4) {
        uint32_t expect = 0;

        if (off == INST_FILTERS || off == DATA_FILTERS) {
            expect = 0xf;
        } else if (off >= 0x400 && off < 0x400 + 4 * 0x20) {
            expect = all_ones_filter(off % 0x20, p);
        } else if (off >= 0x600 && off < 0x600 + 4 * 0x20) {
            expect = all_ones_comp(off % 0x20, p);
        }
        if (etrace_filter_read(&f, off) != expect) {
            g_test_message("offset 0x%03x", off);
        }
        g_assert_cmphex(etrace_filter_read(&f, off), ==, expect);
    }
    write_all(&f, 0);
    for (unsigned off = 0; off < 0x1000; off += 4) {
        g_assert_cmphex(etrace_filter_read(&f, off), ==, 0);
    }
}

static void test_warl_all_ones(void)
{
    check_all_ones(&params64);
    check_all_ones(&params32);
}

static void test_warl_unaligned(void)
{
    ETraceFilter f;

    init(&f, false);
    etrace_filter_write(&f, FREG(0, F_CONTROL) + 1, 0xffffffff);
    etrace_filter_write(&f, INST_FILTERS + 2, 0xffffffff);
    g_assert_cmphex(etrace_filter_read(&f, FREG(0, F_CONTROL)), ==, 0);
    g_assert_cmphex(etrace_filter_read(&f, INST_FILTERS), ==, 0);
    etrace_filter_write(&f, FREG(0, F_CONTROL), 1);
    g_assert_cmphex(etrace_filter_read(&f, FREG(0, F_CONTROL) + 2), ==, 0);
}

/* Comp<k> index 4..7 is legalised to index & 3, in value and in effect. */
static void test_warl_comp_index(void)
{
    ETraceFilter f;

    init(&f, false);
    etrace_filter_write(&f, FREG(0, F_CONTROL),
                        F_COMP1(5) | F_COMP2(6) | F_COMP3(7));
    g_assert_cmphex(etrace_filter_read(&f, FREG(0, F_CONTROL)), ==,
                    F_COMP1(1) | F_COMP2(2) | F_COMP3(3));

    set_comp(&f, 1, comp_ctl(IN_IADDR, EQ, IN_IADDR, TRUE7, MODE_P),
             0x1000, 0);
    set_filter(&f, 0, F_COMP1(5));
    g_assert_true(qualified(&f, block(0x1000, 4, 4, IT_NONE, PRIV_U)));
    g_assert_false(qualified(&f, block(0x2000, 4, 4, IT_NONE, PRIV_U)));
}

/* PInput/SInput 3 (daddr) are inputs like the others. */
static void test_warl_daddr_input(void)
{
    ETraceFilter f;

    init(&f, false);
    etrace_filter_write(&f, CREG(2, C_CONTROL),
                        comp_ctl(IN_DADDR, NE, IN_DADDR, LT, MODE_P_AND_S));
    g_assert_cmphex(etrace_filter_read(&f, CREG(2, C_CONTROL)), ==,
                    comp_ctl(IN_DADDR, NE, IN_DADDR, LT, MODE_P_AND_S));
}

/*
 * Data filters: trTeDataFilters selects them; dtype and dsize bitmaps,
 * privilege, and comparators on daddr and iaddr, ANDed in a filter,
 * ORed between filters; without a data filter every access passes.
 */
static void test_data_filters(void)
{
    ETraceFilter f;

    init(&f, false);
    g_assert_true(etrace_filter_data(&f, 0, 3, 0x1000, 0x80, PRIV_M, 0));
    /* filter 0: stores of 4 or 8 bytes in S mode */
    etrace_filter_write(&f, FREG(0, F_CONTROL), F_ENABLE | F_MATCH_DTYPE |
                        F_MATCH_DSIZE | F_MATCH_PRIV);
    etrace_filter_write(&f, FREG(0, F_MATCH_DATA), 1u << 1 | 0xcu << 16);
    etrace_filter_write(&f, FREG(0, F_MATCH_INST), 1u << PRIV_S);
    etrace_filter_write(&f, DATA_FILTERS, 1);
    g_assert_false(etrace_filter_active(&f));   /* instructions: all */
    g_assert_true(etrace_filter_data(&f, 1, 3, 0x1000, 0x80, PRIV_S, 0));
    g_assert_true(etrace_filter_data(&f, 1, 2, 0x1000, 0x80, PRIV_S, 0));
    g_assert_false(etrace_filter_data(&f, 1, 1, 0x1000, 0x80, PRIV_S, 0));
    g_assert_false(etrace_filter_data(&f, 0, 3, 0x1000, 0x80, PRIV_S, 0));
    g_assert_false(etrace_filter_data(&f, 1, 3, 0x1000, 0x80, PRIV_M, 0));
    /* filter 1, ORed: any access to [0x2000, 0x2100) */
    set_comp(&f, 0, comp_ctl(IN_DADDR, GE, IN_DADDR, LT, MODE_P_AND_S),
             0x2000, 0x2100);
    etrace_filter_write(&f, FREG(1, F_CONTROL), F_ENABLE | F_COMP1(0));
    etrace_filter_write(&f, DATA_FILTERS, 3);
    g_assert_true(etrace_filter_data(&f, 0, 0, 0x20ff, 0x80, PRIV_M, 0));
    g_assert_false(etrace_filter_data(&f, 0, 0, 0x2100, 0x80, PRIV_M, 0));
    g_assert_true(etrace_filter_data(&f, 1, 3, 0x2100, 0x80, PRIV_S, 0));
    /* a filter not enabled matches nothing */
    etrace_filter_write(&f, FREG(1, F_CONTROL), F_COMP1(0));
    g_assert_false(etrace_filter_data(&f, 0, 0, 0x2000, 0x80, PRIV_M, 0));
    /* iaddr: the access's instruction */
    set_comp(&f, 1, comp_ctl(IN_IADDR, EQ, IN_IADDR, TRUE7, MODE_P),
             0x84, 0);
    etrace_filter_write(&f, FREG(1, F_CONTROL), F_ENABLE | F_COMP1(1));
    g_assert_true(etrace_filter_data(&f, 0, 0, 0, 0x84, PRIV_M, 0));
    g_assert_false(etrace_filter_data(&f, 0, 0, 0, 0x86, PRIV_M, 0));
}

/* ------------------------------------------------------- qualification */

static void check_same_but_qualified(const ETraceBlock *a,
                                     const ETraceBlock *b)
{
    g_assert_cmphex(a->iaddr, ==, b->iaddr);
    g_assert_cmpuint(a->iretire, ==, b->iretire);
    g_assert_cmpuint(a->ninsns, ==, b->ninsns);
    g_assert_cmpuint(a->ilastsize, ==, b->ilastsize);
    g_assert_cmpuint(a->itype, ==, b->itype);
    g_assert_cmpuint(a->priv, ==, b->priv);
    g_assert_cmpint(a->sijump, ==, b->sijump);
    g_assert_cmpint(a->notify, ==, b->notify);
    g_assert_cmpuint(a->ctype, ==, b->ctype);
    g_assert_cmphex(a->context, ==, b->context);
    g_assert_cmphex(a->cause, ==, b->cause);
    g_assert_cmphex(a->tval, ==, b->tval);
}

static void test_fast_path(void)
{
    ETraceFilter f;
    ETraceBlock b = block(0x1000, 20, 2, IT_TAKEN, PRIV_U);
    Collect *c;

    init(&f, true);
    /* Configured but not selected in trTeInstFilters: still off. */
    etrace_filter_write(&f, FREG(0, F_CONTROL), F_ENABLE | F_MATCH_PRIV);
    g_assert_false(etrace_filter_active(&f));

    c = run(&f, &b);
    g_assert_cmpuint(c->n, ==, 1);
    g_assert_true(c->b[0].qualified);
    check_same_but_qualified(&c->b[0], &b);

    b.qualified = true;
    c = run(&f, &b);
    g_assert_cmpuint(c->n, ==, 1);
    g_assert_true(c->ptr[0] == &b);
    g_assert_cmpuint(mixed.calls, ==, 0);
}

/* A selected filter with Enable clear matches nothing. */
static void test_selected_disabled(void)
{
    ETraceFilter f;

    init(&f, false);
    etrace_filter_write(&f, INST_FILTERS, 1);
    g_assert_true(etrace_filter_active(&f));
    g_assert_false(qualified(&f, block(0x1000, 4, 4, IT_NONE, PRIV_U)));
    /* Enabled with no condition: everything. */
    etrace_filter_write(&f, FREG(0, F_CONTROL), F_ENABLE);
    g_assert_true(qualified(&f, block(0x1000, 4, 4, IT_NONE, PRIV_U)));
}

static void test_privilege(void)
{
    ETraceFilter f;

    init(&f, false);
    etrace_filter_write(&f, FREG(0, F_MATCH_INST), 1u << PRIV_U);
    set_filter(&f, 0, F_MATCH_PRIV);
    g_assert_true(qualified(&f, block(0x1000, 4, 4, IT_NONE, PRIV_U)));
    g_assert_false(qualified(&f, block(0x1000, 4, 4, IT_NONE, PRIV_S)));
    g_assert_false(qualified(&f, block(0x1000, 4, 4, IT_NONE, PRIV_M)));

    etrace_filter_write(&f, FREG(0, F_MATCH_INST),
                        1u << PRIV_S | 1u << PRIV_M);
    g_assert_false(qualified(&f, block(0x1000, 4, 4, IT_NONE, PRIV_U)));
    g_assert_true(qualified(&f, block(0x1000, 4, 4, IT_NONE, PRIV_S)));
    g_assert_true(qualified(&f, block(0x1000, 4, 4, IT_NONE, PRIV_M)));
    /* A privilege value outside the bitmap never matches. */
    g_assert_false(qualified(&f, block(0x1000, 4, 4, IT_NONE, 200)));
}

/* Conditions inside a filter are ANDed, filters are ORed. */
static void test_and_or(void)
{
    ETraceFilter f;

    init(&f, false);
    set_comp(&f, 0, comp_ctl(IN_IADDR, GE, 0, TRUE7, MODE_P), 0x8000, 0);
    set_comp(&f, 1, comp_ctl(IN_IADDR, LT, 0, TRUE7, MODE_P), 0xa000, 0);
    etrace_filter_write(&f, FREG(0, F_MATCH_INST), 1u << PRIV_U);
    etrace_filter_write(&f, FREG(1, F_MATCH_INST), 1u << PRIV_M);
    set_filter(&f, 0, F_MATCH_PRIV | F_COMP1(0) | F_COMP2(1));

    g_assert_true(qualified(&f, block(0x9000, 4, 4, IT_NONE, PRIV_U)));
    g_assert_false(qualified(&f, block(0x1000, 4, 4, IT_NONE, PRIV_U)));
    g_assert_false(qualified(&f, block(0xb000, 4, 4, IT_NONE, PRIV_U)));
    g_assert_false(qualified(&f, block(0x9000, 4, 4, IT_NONE, PRIV_S)));
    /* Filter 1 configured but not selected yet. */
    etrace_filter_write(&f, FREG(1, F_CONTROL), F_ENABLE | F_MATCH_PRIV);
    g_assert_false(qualified(&f, block(0x1000, 4, 4, IT_NONE, PRIV_M)));
    etrace_filter_write(&f, INST_FILTERS, 3);
    g_assert_true(qualified(&f, block(0x1000, 4, 4, IT_NONE, PRIV_M)));
    g_assert_true(qualified(&f, block(0x9000, 4, 4, IT_NONE, PRIV_U)));
    g_assert_false(qualified(&f, block(0x9000, 4, 4, IT_NONE, PRIV_S)));
}

/* Table 2.6 functions on one-instruction blocks below, at and above V. */
static void test_comparator_functions(void)
{
    static const bool expect[8][3] = {
        [EQ] = { false, true, false },  [NE] = { true, false, true },
        [LT] = { true, false, false },  [LE] = { true, true, false },
        [GT] = { false, false, true },  [GE] = { false, true, true },
        [FN6] = { false, false, false }, [TRUE7] = { true, true, true },
    };
    static const uint64_t addr[3] = { 0x0ffe, 0x1000, 0x1002 };
    ETraceFilter f;

    init(&f, false);
    set_filter(&f, 0, F_COMP1(0));
    for (unsigned fn = 0; fn < 8; fn++) {
        set_comp(&f, 0, comp_ctl(IN_IADDR, fn, 0, TRUE7, MODE_P), 0x1000, 0);
        for (unsigned k = 0; k < 3; k++) {
            g_test_message("P function %u at 0x%" PRIx64, fn, addr[k]);
            g_assert_cmpint(qualified(&f, block(addr[k], 2, 2, 0, 0)), ==,
                            expect[fn][k]);
        }
        /* The same as secondary function, P always true, P && S. */
        set_comp(&f, 0, comp_ctl(0, TRUE7, IN_IADDR, fn, MODE_P_AND_S),
                 0, 0x1000);
        for (unsigned k = 0; k < 3; k++) {
            bool s = fn == FN6 ? true : expect[fn][k];  /* 6: mask, true */

            g_test_message("S function %u at 0x%" PRIx64, fn, addr[k]);
            g_assert_cmpint(qualified(&f, block(addr[k], 2, 2, 0, 0)), ==, s);
        }
    }
}

static void test_match_modes(void)
{
    static const struct {
        unsigned mode;
        bool below, inside, above;
    } cases[] = {
        { MODE_P, false, true, true },
        { MODE_P_AND_S, false, true, false },
        { MODE_NOT_P_AND_S, true, false, true },
    };
    ETraceFilter f;

    init(&f, false);
    set_filter(&f, 0, F_COMP1(2));
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        set_comp(&f, 2, comp_ctl(IN_IADDR, GE, IN_IADDR, LT, cases[i].mode),
                 0x2000, 0x3000);
        g_assert_cmpint(qualified(&f, block(0x1000, 4, 4, 0, 0)), ==,
                        cases[i].below);
        g_assert_cmpint(qualified(&f, block(0x2800, 4, 4, 0, 0)), ==,
                        cases[i].inside);
        g_assert_cmpint(qualified(&f, block(0x3800, 4, 4, 0, 0)), ==,
                        cases[i].above);
    }
}

/* SFunction 6: SMatch masks the primary compare (a 4 KiB page here). */
static void test_mask(void)
{
    ETraceFilter f;

    init(&f, false);
    set_filter(&f, 0, F_COMP1(0));
    set_comp(&f, 0, comp_ctl(IN_IADDR, EQ, IN_IADDR, FN6, MODE_P_AND_S),
             0x5123, 0xfffff000);
    g_assert_true(qualified(&f, block(0x5000, 2, 2, 0, 0)));
    g_assert_true(qualified(&f, block(0x5ffe, 2, 2, 0, 0)));
    g_assert_false(qualified(&f, block(0x4ffe, 2, 2, 0, 0)));
    g_assert_false(qualified(&f, block(0x6000, 2, 2, 0, 0)));
    g_assert_false(qualified(&f, block(0x105000, 2, 2, 0, 0)));
}

/* Context compare; match bits above the input's width are ignored. */
static void test_context(void)
{
    ETraceFilter f;
    ETraceBlock b = block(0x1000, 4, 4, 0, 0);

    init(&f, false);
    set_filter(&f, 0, F_COMP1(3));
    set_comp(&f, 3, comp_ctl(IN_CONTEXT, EQ, 0, TRUE7, MODE_P),
             UINT64_C(0x10000002a), 0);
    b.context = 42;
    g_assert_true(qualified(&f, b));
    b.context = 41;
    g_assert_false(qualified(&f, b));
    /* context_width_p is 32: bit 32 of the input is not compared. */
    b.context = UINT64_C(0x20000002a);
    g_assert_true(qualified(&f, b));
}

/* ------------------------------------------------------------ splitting */

typedef struct Part {
    uint64_t iaddr;
    uint32_t iretire, ninsns;
    unsigned ilastsize, itype;
    bool qualified;
} Part;

static void check_parts(const Collect *c, const Part *want, unsigned n)
{
    g_assert_cmpuint(c->n, ==, n);
    for (unsigned i = 0; i < n; i++) {
        g_test_message("part %u", i);
        g_assert_cmphex(c->b[i].iaddr, ==, want[i].iaddr);
        g_assert_cmpuint(c->b[i].iretire, ==, want[i].iretire);
        g_assert_cmpuint(c->b[i].ninsns, ==, want[i].ninsns);
        g_assert_cmpuint(c->b[i].ilastsize, ==, want[i].ilastsize);
        g_assert_cmpuint(c->b[i].itype, ==, want[i].itype);
        g_assert_cmpint(c->b[i].qualified, ==, want[i].qualified);
    }
}

/* The mixed program as one block ending with a taken branch. */
static ETraceBlock mixed_block(void)
{
    ETraceBlock b = block(0x1000, 0x14, 2, IT_TAKEN, PRIV_U);

    b.ninsns = 7;
    b.ctype = 2;
    b.sijump = true;
    b.context = 7;
    return b;
}

static void test_split_range(void)
{
    static const Part inside[] = {
        { 0x1000, 3, 2, 0, IT_NONE, false },   /* 4 2 */
        { 0x1006, 4, 3, 0, IT_NONE, true },    /* 2 4 2 */
        { 0x100e, 3, 2, 0, IT_TAKEN, false },  /* 4 2 */
    };
    static const Part mid_insn[] = {
        { 0x1000, 6, 4, 1, IT_NONE, false },   /* 4 2 2 4 */
        { 0x100c, 4, 3, 0, IT_TAKEN, true },   /* 2 4 2 */
    };
    ETraceFilter f;
    ETraceBlock b = mixed_block();
    Collect *c;

    init(&f, true);
    set_filter(&f, 0, F_COMP1(0));
    /* [0x1006, 0x100e) */
    set_comp(&f, 0, comp_ctl(IN_IADDR, GE, IN_IADDR, LT, MODE_P_AND_S),
             0x1006, 0x100e);
    c = run(&f, &b);
    check_parts(c, inside, G_N_ELEMENTS(inside));
    /* Per part: ctype on the first, cause/sijump on the last. */
    g_assert_cmpuint(c->b[0].ctype, ==, 2);
    g_assert_cmpuint(c->b[1].ctype, ==, 0);
    g_assert_false(c->b[1].sijump);
    g_assert_true(c->b[2].sijump);
    g_assert_cmpuint(c->b[1].context, ==, 7);

    /* A boundary inside the 4-byte instruction at 0x1008. */
    set_comp(&f, 0, comp_ctl(IN_IADDR, GE, IN_IADDR, LT, MODE_P_AND_S),
             0x100a, 0x2000);
    c = run(&f, &b);
    check_parts(c, mid_insn, G_N_ELEMENTS(mid_insn));
}

/* Without instruction lengths: never split, qualified if any matches. */
static void test_split_without_lengths(void)
{
    static const Part whole[] = { { 0x1000, 10, 7, 0, IT_TAKEN, true } };
    ETraceFilter f;
    ETraceBlock b = mixed_block();

    init(&f, false);
    set_filter(&f, 0, F_COMP1(0));
    set_comp(&f, 0, comp_ctl(IN_IADDR, GE, IN_IADDR, LT, MODE_P_AND_S),
             0x1006, 0x100e);
    check_parts(run(&f, &b), whole, 1);
    b.iaddr = 0x1100;
    g_assert_false(qualified(&f, b));
}

/* The block's last instruction wins over a callback that disagrees. */
static void test_split_callback_disagrees(void)
{
    static const Part parts[] = {
        { 0x1000, 3, 2, 0, IT_NONE, false },   /* 4, then 2 (not 4) */
        { 0x1006, 1, 1, 0, IT_TAKEN, true },
    };
    Program all4 = { .base = 0x1000, .tail_len = 4 };
    ETraceFilter f;
    ETraceBlock b = block(0x1000, 8, 2, IT_TAKEN, PRIV_U);

    etrace_filter_init(&f, &params64, program_insn_len, &all4);
    set_filter(&f, 0, F_COMP1(0));
    set_comp(&f, 0, comp_ctl(IN_IADDR, EQ, 0, TRUE7, MODE_P), 0x1006, 0);
    check_parts(run(&f, &b), parts, G_N_ELEMENTS(parts));
}

/* Whole blocks on one side of a boundary need no instruction lengths. */
static void test_uniform_blocks_not_walked(void)
{
    ETraceFilter f;

    init(&f, true);
    set_filter(&f, 0, F_COMP1(0));
    set_comp(&f, 0, comp_ctl(IN_IADDR, GE, IN_IADDR, LT, MODE_P_AND_S),
             0x1000, 0x1014);
    g_assert_true(qualified(&f, mixed_block()));
    g_assert_false(qualified(&f, block(0x1014, 16, 4, 0, 0)));
    g_assert_cmpuint(mixed.calls, ==, 0);
}

/* ---------------------------------------------------------------- latch */

static void test_latch_across_blocks(void)
{
    static const Part through_s[] = {
        { 0x1028, 6, 3, 1, IT_NONE, true },    /* 0x1028 .. 0x1030 (S) */
        { 0x1034, 2, 1, 1, IT_TAKEN, false },
    };
    ETraceFilter f;
    ETraceBlock b;

    init(&f, true);
    set_filter(&f, 0, F_COMP1(0));
    /* From 0x1020 until the instruction after 0x1030. */
    set_comp(&f, 0, comp_ctl(IN_IADDR, EQ, IN_IADDR, EQ, MODE_LATCH),
             0x1020, 0x1030);
    g_assert_false(qualified(&f, block(0x1018, 8, 4, IT_TAKEN, 0)));
    g_assert_true(qualified(&f, block(0x1020, 8, 4, IT_TAKEN, 0)));
    g_assert_true(qualified(&f, block(0x1100, 16, 4, IT_TAKEN, 0)));
    b = block(0x1028, 16, 4, IT_TAKEN, 0);
    b.ninsns = 4;
    check_parts(run(&f, &b), through_s, G_N_ELEMENTS(through_s));
    g_assert_false(qualified(&f, block(0x1100, 16, 4, IT_TAKEN, 0)));

    /* PFunction 6 with MatchMode 3 primes the latch: on until S. */
    set_comp(&f, 0, comp_ctl(IN_IADDR, FN6, IN_IADDR, EQ, MODE_LATCH),
             0, 0x1030);
    g_assert_true(qualified(&f, block(0x1100, 16, 4, IT_TAKEN, 0)));
    check_parts(run(&f, &b), through_s, G_N_ELEMENTS(through_s));
    g_assert_false(qualified(&f, block(0x1100, 16, 4, IT_TAKEN, 0)));
}

/* ---------------------------------------------------------------- traps */

static void test_trap_ecause(void)
{
    ETraceFilter f;

    init(&f, false);
    etrace_filter_write(&f, FREG(0, F_ECAUSE_LOW), 1u << 8);  /* U ecall */
    set_filter(&f, 0, F_MATCH_ECAUSE);

    g_assert_false(qualified(&f, block(0x1000, 8, 4, IT_TAKEN, PRIV_U)));
    /* The block before the trap is not part of the handler. */
    g_assert_false(qualified(&f, trap_block(0x1010, IT_EXC, 8, 0, PRIV_U)));
    g_assert_true(qualified(&f, block(0x8000, 8, 4, IT_NONE, PRIV_M)));
    /* A nested interrupt and its handler are inside the window. */
    g_assert_true(qualified(&f, trap_block(0x8008, IT_INT, 7, 0, PRIV_M)));
    g_assert_true(qualified(&f, block(0x9000, 8, 4, IT_RET, PRIV_M)));
    g_assert_true(qualified(&f, block(0x800c, 8, 4, IT_NONE, PRIV_M)));
    /* The return from the matching trap is the last one traced. */
    g_assert_true(qualified(&f, block(0x8014, 8, 4, IT_RET, PRIV_M)));
    g_assert_false(qualified(&f, block(0x1014, 8, 4, IT_NONE, PRIV_U)));

    /* Another cause: nothing. */
    g_assert_false(qualified(&f, trap_block(0x1020, IT_EXC, 2, 0, PRIV_U)));
    g_assert_false(qualified(&f, block(0x8000, 8, 4, IT_RET, PRIV_M)));
    g_assert_false(qualified(&f, block(0x1020, 8, 4, IT_NONE, PRIV_U)));

    /* Ten nested traps inside: the window ends at the right return. */
    g_assert_false(qualified(&f, trap_block(0x1030, IT_EXC, 8, 0, PRIV_U)));
    for (unsigned i = 0; i < 10; i++) {
        g_assert_true(qualified(&f, trap_block(0x8000, IT_INT, 7, 0, 3)));
    }
    for (unsigned i = 0; i < 10; i++) {
        g_assert_true(qualified(&f, block(0x9000, 4, 4, IT_RET, 3)));
    }
    g_assert_true(qualified(&f, block(0x8010, 4, 4, IT_RET, PRIV_M)));
    g_assert_false(qualified(&f, block(0x1034, 4, 4, IT_NONE, PRIV_U)));

    /* Traps are not tracked while no filter is selected: start afresh. */
    g_assert_false(qualified(&f, trap_block(0x1040, IT_EXC, 8, 0, PRIV_U)));
    g_assert_true(qualified(&f, block(0x8000, 4, 4, IT_NONE, PRIV_M)));
    etrace_filter_write(&f, INST_FILTERS, 0);
    g_assert_true(qualified(&f, block(0x8004, 4, 4, IT_RET, PRIV_M)));
    etrace_filter_write(&f, INST_FILTERS, 1);
    g_assert_false(qualified(&f, block(0x1044, 4, 4, IT_NONE, PRIV_U)));
}

static void test_trap_interrupt(void)
{
    ETraceFilter f;

    init(&f, false);
    /* Filter 0: interrupt handlers; filter 1: interrupt 7 only. */
    etrace_filter_write(&f, FREG(0, F_MATCH_INST), MI_INTERRUPT);
    set_filter(&f, 0, F_MATCH_INTERRUPT);
    g_assert_false(qualified(&f, trap_block(0x1000, IT_EXC, 7, 0, 0)));
    g_assert_false(qualified(&f, block(0x8000, 4, 4, IT_RET, PRIV_M)));
    g_assert_false(qualified(&f, trap_block(0x1000, IT_INT, 5, 0, 0)));
    g_assert_true(qualified(&f, block(0x8000, 4, 4, IT_RET, PRIV_M)));

    etrace_filter_write(&f, INST_FILTERS, 0);
    etrace_filter_write(&f, FREG(1, F_MATCH_INST), MI_INTERRUPT);
    etrace_filter_write(&f, FREG(1, F_ECAUSE_LOW), 1u << 7);
    set_filter(&f, 1, F_MATCH_INTERRUPT | F_MATCH_ECAUSE);
    g_assert_false(qualified(&f, trap_block(0x1000, IT_EXC, 7, 0, 0)));
    g_assert_false(qualified(&f, block(0x8000, 4, 4, IT_RET, PRIV_M)));
    g_assert_false(qualified(&f, trap_block(0x1000, IT_INT, 5, 0, 0)));
    g_assert_false(qualified(&f, block(0x8000, 4, 4, IT_RET, PRIV_M)));
    g_assert_false(qualified(&f, trap_block(0x1000, IT_INT, 7, 0, 0)));
    g_assert_true(qualified(&f, block(0x8000, 4, 4, IT_RET, PRIV_M)));
    /* Cause codes from 32 up are in MatchEcauseHigh. */
    etrace_filter_write(&f, FREG(1, F_ECAUSE_HIGH), 1u << (35 - 32));
    g_assert_false(qualified(&f, trap_block(0x1000, IT_INT, 35, 0, 0)));
    g_assert_true(qualified(&f, block(0x8000, 4, 4, IT_RET, PRIV_M)));
}

/* Handlers of traps with a particular tval: MatchEcause AND comparator. */
static void test_trap_tval(void)
{
    ETraceFilter f;

    init(&f, false);
    etrace_filter_write(&f, FREG(0, F_ECAUSE_LOW), 1u << 13);
    set_filter(&f, 0, F_MATCH_ECAUSE | F_COMP1(0));
    set_comp(&f, 0, comp_ctl(IN_TVAL, EQ, 0, TRUE7, MODE_P), 0xdead0000, 0);

    g_assert_false(qualified(&f, trap_block(0x1000, IT_EXC, 13, 0xbeef, 0)));
    g_assert_false(qualified(&f, block(0x8000, 4, 4, IT_RET, PRIV_S)));

    g_assert_false(qualified(&f,
                             trap_block(0x1000, IT_EXC, 13, 0xdead0000, 0)));
    g_assert_true(qualified(&f, block(0x8000, 4, 4, IT_NONE, PRIV_S)));
    /* A nested fault elsewhere: its handler has another tval. */
    g_assert_true(qualified(&f, trap_block(0x8004, IT_EXC, 13, 0x1234, 1)));
    g_assert_false(qualified(&f, block(0x8000, 4, 4, IT_RET, PRIV_S)));
    g_assert_true(qualified(&f, block(0x8008, 4, 4, IT_RET, PRIV_S)));
    g_assert_false(qualified(&f, block(0x1000, 4, 4, IT_NONE, PRIV_U)));
}

/* A trap without retirement goes with the instruction before it. */
static void test_trap_alone(void)
{
    ETraceFilter f;
    ETraceBlock alone = trap_block(0, IT_INT, 7, 0, PRIV_U);

    alone.iretire = 0;
    init(&f, false);
    etrace_filter_write(&f, FREG(0, F_MATCH_INST), 1u << PRIV_U);
    set_filter(&f, 0, F_MATCH_PRIV);
    g_assert_true(qualified(&f, block(0x1000, 4, 4, IT_NONE, PRIV_U)));
    g_assert_true(qualified(&f, alone));
    g_assert_false(qualified(&f, block(0x8000, 4, 4, IT_NONE, PRIV_M)));
    alone.priv = PRIV_M;
    g_assert_false(qualified(&f, alone));
}

/* --------------------------------------------------------------- notify */

static void test_notify(void)
{
    ETraceFilter f;
    ETraceBlock b = mixed_block();
    Collect *c;

    init(&f, true);
    /* A watchpoint alone turns the filter on, qualifying everything. */
    set_comp(&f, 0, comp_ctl(IN_IADDR, EQ, 0, TRUE7, MODE_P) | C_PNOTIFY,
             0x1008, 0);
    g_assert_true(etrace_filter_active(&f));
    c = run(&f, &b);
    g_assert_cmpuint(c->n, ==, 1);
    g_assert_true(c->b[0].qualified);
    g_assert_true(c->b[0].notify);
    c = run(&f, &(ETraceBlock) { .iaddr = 0x1014, .iretire = 8,
                                 .ilastsize = 1 });
    g_assert_cmpuint(c->n, ==, 1);
    g_assert_true(c->b[0].qualified);
    g_assert_false(c->b[0].notify);

    /* SNotify on the secondary match; P always true. */
    set_comp(&f, 0, 0, 0, 0);
    g_assert_false(etrace_filter_active(&f));
    set_comp(&f, 1, comp_ctl(0, TRUE7, IN_IADDR, EQ, MODE_P) | C_SNOTIFY,
             0, 0x100c);
    c = run(&f, &b);
    g_assert_true(c->b[0].notify);
    /* A function that ignores the input does not watch. */
    set_comp(&f, 1, comp_ctl(0, TRUE7, 0, TRUE7, MODE_P) | C_PNOTIFY, 0, 0);
    g_assert_false(etrace_filter_active(&f));

    /* No watchpoint on an unqualified block; the ingress's notify stays. */
    set_comp(&f, 1, comp_ctl(IN_IADDR, EQ, 0, TRUE7, MODE_P) | C_PNOTIFY,
             0x1008, 0);
    etrace_filter_write(&f, FREG(0, F_MATCH_INST), 1u << PRIV_M);
    set_filter(&f, 0, F_MATCH_PRIV);
    c = run(&f, &b);
    g_assert_false(c->b[0].qualified);
    g_assert_false(c->b[0].notify);
    b.notify = true;
    c = run(&f, &b);
    g_assert_true(c->b[0].notify);
    /* The same with a one-instruction block. */
    c = run(&f, &(ETraceBlock) { .iaddr = 0x1008, .iretire = 2,
                                 .ilastsize = 1 });
    g_assert_false(c->b[0].qualified);
    g_assert_false(c->b[0].notify);
}

/* ----------------------------------------------------- reset, migration */

static void test_reset_and_post_load(void)
{
    ETraceFilter f, loaded;

    init(&f, false);
    set_filter(&f, 2, F_MATCH_PRIV);
    g_assert_true(etrace_filter_active(&f));
    loaded = f;
    etrace_filter_reset(&f);
    g_assert_false(etrace_filter_active(&f));
    for (unsigned off = 0; off < 0x1000; off += 4) {
        g_assert_cmphex(etrace_filter_read(&f, off), ==, 0);
    }

    /* A migrated state: derived fields recomputed, values legalised. */
    loaded.active = false;
    loaded.comp_control[1] = 0xffffffff;
    loaded.filter_control[3] = 0xffffffff;
    loaded.filter_match_data[0] = 0xffffffff;
    loaded.data_filters = 0xffffffff;
    etrace_filter_post_load(&loaded);
    g_assert_cmphex(etrace_filter_read(&loaded, FREG(0, F_MATCH_DATA)), ==,
                    0x000f7f73);
    g_assert_cmphex(etrace_filter_read(&loaded, DATA_FILTERS), ==, 0xf);
    g_assert_true(etrace_filter_active(&loaded));
    g_assert_cmphex(etrace_filter_read(&loaded, CREG(1, C_CONTROL)), ==,
                    0xf77f);
    g_assert_cmphex(etrace_filter_read(&loaded, FREG(3, F_CONTROL)), ==,
                    0x0300777f);
}

/* ----------------------------------------------------------- robustness */

/* Lengths from the address bits, so any block has some layout. */
static unsigned hashed_len(void *opaque, uint64_t addr)
{
    (void)opaque;
    return (addr >> 1) % 3 ? 2 : 4;
}

static void check_cover(const ETraceBlock *b, const Collect *c)
{
    uint64_t next = b->iaddr;
    uint64_t halves = 0;

    g_assert_cmpuint(c->n, >=, 1);
    for (unsigned i = 0; i < c->n; i++) {
        const ETraceBlock *p = &c->b[i];

        g_assert_cmphex(p->iaddr, ==, next);
        if (i + 1 < c->n) {
            g_assert_cmpuint(p->ilastsize, <=, 1);
            g_assert_cmpuint(p->iretire, >, 0);
            g_assert_cmpuint(p->itype, ==, 0);
            g_assert_cmpint(p->qualified, !=, c->b[i + 1].qualified);
        }
        next += 2 * (uint64_t)p->iretire;
        halves += p->iretire;
    }
    g_assert_cmpuint(halves, ==, b->iretire);
    g_assert_cmpuint(c->b[c->n - 1].itype, ==, b->itype);
}

static uint64_t rand64(void)
{
    return (uint64_t)g_test_rand_int() << 32 | (uint32_t)g_test_rand_int();
}

/* Random register writes and blocks: defined results, full coverage. */
static void test_random(void)
{
    static const uint64_t near[] = { 0x1000, 0xfff0, UINT64_MAX - 16 };
    ETraceFilter f[2];
    Collect c;

    etrace_filter_init(&f[0], &params64, hashed_len, NULL);
    etrace_filter_init(&f[1], &params32, NULL, NULL);
    for (unsigned iter = 0; iter < 20000; iter++) {
        ETraceFilter *flt = &f[iter & 1];
        uint64_t base = near[g_test_rand_int_range(0, 3)];
        ETraceBlock b = {
            .iaddr = (base + g_test_rand_int_range(0, 64)) & ~1ull,
            .iretire = g_test_rand_int_range(0, 40),
            .ilastsize = g_test_rand_int_range(0, 3),
            .itype = g_test_rand_int_range(0, 16),
            .priv = g_test_rand_int_range(0, 256),
            .ctype = g_test_rand_int_range(0, 4),
            .context = rand64(),
            .cause = g_test_rand_bit() ? rand64() : rand64() % 70,
            .tval = rand64(),
        };
        uint32_t off = g_test_rand_bit() ? 0x00c
                       : 0x400 + 4 * g_test_rand_int_range(0, 256);
        uint32_t val = g_test_rand_bit() ? rand64() : rand64() & 0x3fff;

        etrace_filter_write(flt, off, val);
        if (g_test_rand_int_range(0, 8) == 0) {
            etrace_filter_write(flt, INST_FILTERS, 0);
        }
        c.n = 0;
        etrace_filter_block(flt, &b, collect, &c);
        check_cover(&b, &c);
    }
}

/* A register write likely to matter for blocks near 0x1000. */
static void random_write(ETraceFilter *a, ETraceFilter *b)
{
    uint32_t unit = g_test_rand_int_range(0, 4);
    uint32_t reg = 4 * g_test_rand_int_range(0, 8);
    uint32_t off, val = g_test_rand_int() & 0xffff;

    switch (g_test_rand_int_range(0, 4)) {
    case 0:
        off = INST_FILTERS;
        break;
    case 1:
        off = FREG(unit, reg);
        break;
    default:
        off = CREG(unit, reg);
        if (reg == C_PMATCH_LOW || reg == C_SMATCH_LOW) {
            val = 0x1000 + 2 * g_test_rand_int_range(0, 0x80);
        } else if (reg != C_CONTROL) {
            val = g_test_rand_int_range(0, 8) ? 0 : g_test_rand_int();
        }
        break;
    }
    etrace_filter_write(a, off, val);
    etrace_filter_write(b, off, val);
}

/*
 * The same ingress as whole blocks and as one-instruction blocks (never
 * split, never walked) must qualify every instruction alike: checks
 * splitting, the uniform-block shortcut and the latch against the
 * per-instruction definition.
 */
static void test_split_equals_single_steps(void)
{
    ETraceFilter whole, single;
    Collect c, one;

    etrace_filter_init(&whole, &params64, hashed_len, NULL);
    etrace_filter_init(&single, &params64, hashed_len, NULL);
    for (unsigned iter = 0; iter < 20000; iter++) {
        uint64_t addr = 0x1000 + 2 * g_test_rand_int_range(0, 0x90);
        unsigned n = g_test_rand_int_range(0, 12), part = 0;
        ETraceBlock b = {
            .iaddr = addr, .itype = g_test_rand_int_range(0, 16),
            .priv = g_test_rand_int_range(0, 4),
            .cause = g_test_rand_int_range(0, 16), .tval = 0x1000,
        };
        uint64_t part_end;
        bool notify = false;

        if (g_test_rand_int_range(0, 4) == 0) {
            random_write(&whole, &single);
        }
        for (unsigned i = 0; i < n; i++) {
            unsigned len = hashed_len(NULL, addr);

            b.iretire += len / 2;
            b.ilastsize = len == 4;
            addr += len;
        }
        c.n = 0;
        etrace_filter_block(&whole, &b, collect, &c);
        check_cover(&b, &c);
        if (n == 0) {
            one.n = 0;
            etrace_filter_block(&single, &b, collect, &one);
            g_assert_cmpint(one.b[0].qualified, ==, c.b[0].qualified);
            continue;
        }
        part_end = c.b[0].iaddr + 2 * c.b[0].iretire;
        for (addr = b.iaddr; addr < b.iaddr + 2 * b.iretire;) {
            unsigned len = hashed_len(NULL, addr);
            ETraceBlock insn = b;

            insn.iaddr = addr;
            insn.iretire = len / 2;
            insn.ilastsize = len == 4;
            addr += len;
            if (addr < b.iaddr + 2 * b.iretire) {
                insn.itype = 0;
            }
            one.n = 0;
            etrace_filter_block(&single, &insn, collect, &one);
            g_assert_cmpuint(one.n, ==, 1);
            g_assert_cmpint(one.b[0].qualified, ==, c.b[part].qualified);
            notify |= one.b[0].notify;
            if (addr == part_end) {
                g_assert_cmpint(notify, ==, c.b[part].notify);
                notify = false;
                if (++part < c.n) {
                    part_end += 2 * c.b[part].iretire;
                }
            }
        }
        g_assert_cmpuint(part, ==, c.n);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/etrace-filter/warl/reset", test_reset_reads_zero);
    g_test_add_func("/etrace-filter/warl/all-ones", test_warl_all_ones);
    g_test_add_func("/etrace-filter/warl/unaligned", test_warl_unaligned);
    g_test_add_func("/etrace-filter/warl/comp-index", test_warl_comp_index);
    g_test_add_func("/etrace-filter/warl/daddr-input",
                    test_warl_daddr_input);
    g_test_add_func("/etrace-filter/data", test_data_filters);
    g_test_add_func("/etrace-filter/fast-path", test_fast_path);
    g_test_add_func("/etrace-filter/selected-disabled",
                    test_selected_disabled);
    g_test_add_func("/etrace-filter/privilege", test_privilege);
    g_test_add_func("/etrace-filter/and-or", test_and_or);
    g_test_add_func("/etrace-filter/comparator-functions",
                    test_comparator_functions);
    g_test_add_func("/etrace-filter/match-modes", test_match_modes);
    g_test_add_func("/etrace-filter/mask", test_mask);
    g_test_add_func("/etrace-filter/context", test_context);
    g_test_add_func("/etrace-filter/split/range", test_split_range);
    g_test_add_func("/etrace-filter/split/without-lengths",
                    test_split_without_lengths);
    g_test_add_func("/etrace-filter/split/callback-disagrees",
                    test_split_callback_disagrees);
    g_test_add_func("/etrace-filter/split/uniform-not-walked",
                    test_uniform_blocks_not_walked);
    g_test_add_func("/etrace-filter/latch", test_latch_across_blocks);
    g_test_add_func("/etrace-filter/trap/ecause", test_trap_ecause);
    g_test_add_func("/etrace-filter/trap/interrupt", test_trap_interrupt);
    g_test_add_func("/etrace-filter/trap/tval", test_trap_tval);
    g_test_add_func("/etrace-filter/trap/alone", test_trap_alone);
    g_test_add_func("/etrace-filter/notify", test_notify);
    g_test_add_func("/etrace-filter/reset-post-load",
                    test_reset_and_post_load);
    g_test_add_func("/etrace-filter/random", test_random);
    g_test_add_func("/etrace-filter/split/equals-single-steps",
                    test_split_equals_single_steps);
    return g_test_run();
}

/*
 * Unit tests of the E-trace encoder (chapter 8 on blocks): hand-written
 * block sequences and the exact packets they must produce, unpacked with
 * the packet layer.  The worked examples at the end of the spec are
 * reproduced byte for byte.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <glib.h>
#include "insn_class.h"
#include "etrace.h"
#include "etrace-model.h"
#include "etrace-runs.h"

#define MAX_PKTS 4096

typedef struct Harness {
    ETraceParams p;
    ETraceOptions o;            /* as the last support packet says */
    ETraceEncoder *e;
    size_t n;
    ETracePacket pkt[MAX_PKTS];
    uint64_t abs[MAX_PKTS];     /* absolute address a decoder derives */
    uint8_t bytes[MAX_PKTS][ETRACE_MAX_PACKET];
    size_t len[MAX_PKTS];
    uint64_t last;
    /* jump targets, assuming every reported address was one */
    uint64_t jtc[16];
    unsigned priv;              /* privilege of the next blocks */
} Harness;

static void capture(void *opaque, const uint8_t *bytes, size_t len)
{
    Harness *h = opaque;
    ETracePacket *pkt = &h->pkt[h->n];
    const char *err = NULL;

    g_assert_cmpuint(h->n, <, MAX_PKTS);
    g_assert_cmpint(etrace_packet_unpack(&h->p, &h->o, bytes, len, pkt, &err),
                    ==, len);
    memcpy(h->bytes[h->n], bytes, len);
    h->len[h->n] = len;
    if (pkt->format == 3 && pkt->subformat == 3) {
        etrace_options_unpack(&h->p, pkt->options, &h->o);
    } else if (pkt->format == 3 && pkt->has_address && pkt->subformat < 2) {
        h->last = pkt->address;
        memset(h->jtc, 0, sizeof(h->jtc));
    } else if (pkt->format == 0 && pkt->subformat == 1) {
        h->last = h->jtc[pkt->index & 15];
    } else if (pkt->format < 3 && pkt->has_address) {
        h->last = h->o.full_address ? pkt->address : h->last + pkt->address;
        if (h->p.iaddress_width_p == 32) {
            h->last = (uint32_t)h->last;
        }
        h->jtc[(h->last >> 1) & 15] = h->last;
    }
    h->abs[h->n++] = h->last;
}

static Harness *h_new(unsigned xlen, ETraceArch arch)
{
    Harness *h = g_new0(Harness, 1);

    etrace_params_default(&h->p, xlen);
    h->p.arch = arch;
    h->priv = 3;
    return h;
}

static void h_start(Harness *h, ETraceOptions o)
{
    if (!h->e) {
        h->e = etrace_encoder_new(&h->p, capture, h);
        g_assert_nonnull(h->e);
    }
    etrace_encoder_start(h->e, &o);
}

static void h_free(Harness *h)
{
    etrace_encoder_free(h->e);
    g_free(h);
}

/* A block from first to last (an instruction of lastsize bytes). */
static ETraceBlock mk(Harness *h, uint64_t first, uint64_t last,
                      unsigned lastsize, unsigned itype)
{
    ETraceBlock b = {
        .iaddr = first, .iretire = (last - first + lastsize) / 2,
        .ilastsize = lastsize == 4, .itype = itype, .priv = h->priv,
        .qualified = true,
    };

    b.ninsns = (last - first) / lastsize + 1;   /* same-size instructions */
    return b;
}

static void blk(Harness *h, uint64_t first, uint64_t last,
                unsigned lastsize, unsigned itype)
{
    ETraceBlock b = mk(h, first, last, lastsize, itype);

    etrace_encoder_block(h->e, &b);
}

static void trap(Harness *h, unsigned itype, uint64_t cause, uint64_t tval,
                 uint64_t epc)
{
    ETraceBlock b = { .itype = itype, .cause = cause, .tval = tval,
                      .epc = epc, .priv = h->priv, .qualified = true };

    etrace_encoder_block(h->e, &b);
}

static const ETracePacket *expect(Harness *h, size_t i, unsigned format,
                                  unsigned subformat)
{
    const ETracePacket *pkt;

    if (i >= h->n) {
        g_test_message("packet %zu of %zu expected", i, h->n);
    }
    g_assert_cmpuint(i, <, h->n);
    pkt = &h->pkt[i];
    g_assert_cmpuint(pkt->format, ==, format);
    if (format == 0 || format == 3) {
        g_assert_cmpuint(pkt->subformat, ==, subformat);
    }
    return pkt;
}

/* A format 0/1/2 packet reporting absolute address addr. */
static const ETracePacket *expect_addr(Harness *h, size_t i,
                                       unsigned format, uint64_t addr)
{
    const ETracePacket *pkt = expect(h, i, format, 0);

    g_assert_true(pkt->has_address);
    g_assert_cmphex(h->abs[i], ==, addr);
    return pkt;
}

static void expect_flags(Harness *h, size_t i, bool notify, bool updiscon,
                         bool irreport)
{
    bool n, u, r;

    etrace_packet_get_flags(&h->p, &h->pkt[i], &n, &u, &r);
    g_assert_cmpint(n, ==, notify);
    g_assert_cmpint(u, ==, updiscon);
    g_assert_cmpint(r, ==, irreport);
}

static void expect_sync(Harness *h, size_t i, uint64_t addr)
{
    const ETracePacket *pkt = expect(h, i, 3, 0);

    g_assert_cmphex(pkt->address, ==, addr);
}

/* A trap packet (format 3.1) with its handler's address */
static const ETracePacket *expect_trap(Harness *h, size_t i, bool interrupt,
                                       uint64_t cause, uint64_t handler)
{
    const ETracePacket *pkt = expect(h, i, 3, 1);

    g_assert_cmpint(pkt->interrupt, ==, interrupt);
    g_assert_cmpuint(pkt->ecause, ==, cause);
    g_assert_cmphex(pkt->address, ==, handler);
    return pkt;
}

static void expect_support(Harness *h, size_t i, bool enable,
                           ETraceQualStatus qual)
{
    const ETracePacket *pkt = expect(h, i, 3, 3);

    g_assert_cmpint(pkt->enable, ==, enable);
    g_assert_cmpint(pkt->qual_status, ==, qual);
}

static void expect_count(Harness *h, size_t n)
{
    for (size_t i = n; i < h->n; i++) {
        g_test_message("extra packet %zu: format %u.%u", i,
                       h->pkt[i].format, h->pkt[i].subformat);
    }
    g_assert_cmpuint(h->n, ==, n);
}

static void expect_bytes(Harness *h, size_t i, const uint8_t *want,
                         size_t len)
{
    g_assert_cmpmem(h->bytes[i], h->len[i], want, len);
}

/* ------------------------------------------------- worked examples */

/* Example 2: a ret reported with format 2 (full address mode). */
static void test_example_ret(void)
{
    static const uint8_t f2[] = { 0x05, 0x12, 0x35, 0x00, 0x00, 0x01 };
    Harness *h = h_new(64, ETRACE_ARCH_1_1);

    h_start(h, (ETraceOptions){ .full_address = true });
    expect_support(h, 0, true, ETRACE_QUAL_NO_CHANGE);
    blk(h, 0x80001188, 0x8000118a, 2, RISCV_ITYPE_RETURN);
    expect_sync(h, 1, 0x80001188);
    blk(h, 0x80001a88, 0x80001a8c, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 2, 2, 0x80001a88);
    expect_flags(h, 2, false, false, false);
    expect_bytes(h, 2, f2, sizeof(f2));
    etrace_encoder_stop(h->e);
    expect_addr(h, 3, 2, 0x80001a8c);
    expect_support(h, 4, false, ETRACE_QUAL_ENDED_REP);
    expect_count(h, 5);
    h_free(h);
}

/* Example 3: a taken branch, then a ret: format 1, one branch. */
static void test_example_branch_ret(void)
{
    static const uint8_t f1[] = { 0x03, 0x05, 0x58, 0x05 };
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    const ETracePacket *pkt;

    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x800010da, 0x800010dc, 4, RISCV_ITYPE_TAKEN_BRANCH);
    expect_sync(h, 1, 0x800010da);
    blk(h, 0x800010ec, 0x800010f6, 2, RISCV_ITYPE_RETURN);
    expect_count(h, 2);
    blk(h, 0x80001b8a, 0x80001b8e, 4, RISCV_ITYPE_NONE);
    pkt = expect_addr(h, 2, 1, 0x80001b8a);
    g_assert_cmpuint(pkt->branches, ==, 1);
    g_assert_cmphex(pkt->branch_map, ==, 0);
    g_assert_cmphex(pkt->address, ==, 0xab0);
    expect_bytes(h, 2, f1, sizeof(f1));
    expect_count(h, 3);
    h_free(h);
}

/* Example 4: three branches (NT, NT, T), then a ret. */
static void test_example_three_branches(void)
{
    static const uint8_t f1[] = { 0x03, 0x8d, 0x91, 0x02 };
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    const ETracePacket *pkt;

    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x80001110, 0x80001116, 4, RISCV_ITYPE_NOT_TAKEN_BRANCH);
    blk(h, 0x8000111a, 0x8000111a, 2, RISCV_ITYPE_NOT_TAKEN_BRANCH);
    blk(h, 0x8000111c, 0x8000111e, 4, RISCV_ITYPE_TAKEN_BRANCH);
    blk(h, 0x8000115e, 0x80001168, 2, RISCV_ITYPE_RETURN);
    blk(h, 0x80001258, 0x8000125c, 4, RISCV_ITYPE_NONE);
    expect_sync(h, 1, 0x80001110);
    g_assert_true(h->pkt[1].branch);    /* not a branch */
    pkt = expect_addr(h, 2, 1, 0x80001258);
    g_assert_cmpuint(pkt->branches, ==, 3);
    g_assert_cmphex(pkt->branch_map, ==, 0x3);
    expect_bytes(h, 2, f1, sizeof(f1));
    expect_count(h, 3);
    h_free(h);
}

/* Example 5's code: 2 branches, 2 jal, a ret onto a branch. */
static void example5(Harness *h)
{
    blk(h, 0x8000121c, 0x8000121e, 2, RISCV_ITYPE_TAKEN_BRANCH);
    blk(h, 0x8000124a, 0x80001254, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x80001100, 0x8000110c, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x800010f8, 0x800010fe, 2, RISCV_ITYPE_RETURN);
    blk(h, 0x80001110, 0x80001110, 2, RISCV_ITYPE_NOT_TAKEN_BRANCH);
}

static void test_example_complex(void)
{
    static const uint8_t f1[] = { 0x03, 0x09, 0xe9, 0xfd };
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    const ETracePacket *pkt;

    h_start(h, (ETraceOptions){ 0 });
    example5(h);
    expect_sync(h, 1, 0x8000121c);
    expect_count(h, 2);
    blk(h, 0x80001112, 0x80001114, 2, RISCV_ITYPE_NONE);
    pkt = expect_addr(h, 2, 1, 0x80001110);
    g_assert_cmpuint(pkt->branches, ==, 2);
    g_assert_cmphex(pkt->branch_map, ==, 0x2);
    g_assert_true(pkt->updiscon);         /* raw bit = address MSB */
    expect_flags(h, 2, false, false, false);
    expect_bytes(h, 2, f1, sizeof(f1));
    h_free(h);
}

/* ---------------------------------------------------- implicit return */

static void test_implicit_return(void)
{
    static const ETraceIRMode modes[] = { ETRACE_IR_CALL_COUNTER,
                                          ETRACE_IR_RETURN_STACK };

    for (unsigned i = 0; i < G_N_ELEMENTS(modes); i++) {
        Harness *h = h_new(64, ETRACE_ARCH_1_1);
        const ETracePacket *pkt;

        h_start(h, (ETraceOptions){ .implicit_return = modes[i] });
        example5(h);        /* the ret returns to the second jal's site */
        blk(h, 0x80001112, 0x80001118, 4,
            RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);
        expect_count(h, 2);
        blk(h, 0x80002000, 0x80002002, 2, RISCV_ITYPE_NONE);
        pkt = expect_addr(h, 2, 1, 0x80002000);
        g_assert_cmpuint(pkt->branches, ==, 2);
        expect_flags(h, 2, false, false, false);
        expect_count(h, 3);
        h_free(h);
    }
}

/* A return to somewhere else than the stack says: irreport + depth. */
static void test_return_stack_miss(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    const ETracePacket *pkt;

    h_start(h, (ETraceOptions){ .implicit_return = ETRACE_IR_RETURN_STACK });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_INFERABLE_CALL);  /* push 1008 */
    blk(h, 0x2000, 0x2004, 4, RISCV_ITYPE_INFERABLE_CALL);  /* push 2008 */
    blk(h, 0x3000, 0x3002, 2, RISCV_ITYPE_RETURN);          /* to 2008 */
    blk(h, 0x2008, 0x200a, 2, RISCV_ITYPE_RETURN);          /* not 1008 */
    expect_count(h, 2);
    blk(h, 0x1100, 0x1102, 2, RISCV_ITYPE_NONE);
    pkt = expect_addr(h, 2, 2, 0x1100);
    expect_flags(h, 2, false, false, true);
    g_assert_cmpuint(pkt->irdepth, ==, 1);    /* the entry that failed */
    h_free(h);

    /* A sync forgets the calls before it: the return is reported. */
    h = h_new(64, ETRACE_ARCH_1_1);
    h_start(h, (ETraceOptions){ .implicit_return = ETRACE_IR_RETURN_STACK });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x2000, 0x2004, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_INTERRUPT, 7, 0, 0x2008);
    blk(h, 0x80000000, 0x80000002, 2, RISCV_ITYPE_RETURN);
    blk(h, 0x1008, 0x100c, 4, RISCV_ITYPE_NONE);
    expect(h, 3, 3, 1);
    expect_addr(h, 4, 2, 0x1008);
    h_free(h);

    h = h_new(64, ETRACE_ARCH_1_1);
    h_start(h, (ETraceOptions){ .implicit_return = ETRACE_IR_CALL_COUNTER });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x3000, 0x3002, 2, RISCV_ITYPE_RETURN);
    blk(h, 0x1100, 0x1100, 2, RISCV_ITYPE_NONE);
    expect_count(h, 2);
    /* With nothing counted the return is reported. */
    blk(h, 0x1200, 0x1202, 2, RISCV_ITYPE_RETURN);
    blk(h, 0x1300, 0x1302, 2, RISCV_ITYPE_NONE);
    expect_addr(h, 2, 2, 0x1300);
    expect_flags(h, 2, false, false, false);
    h_free(h);
}

/*
 * 17 nested calls, then 17 returns: the counter holds 15 calls, the
 * stack 16 return addresses; the returns beyond are reported.
 */
static void test_depth_limits(void)
{
    static const struct {
        ETraceIRMode mode;
        unsigned first_reported;    /* call whose return is reported */
    } cases[] = {
        { ETRACE_IR_CALL_COUNTER, 1 },
        { ETRACE_IR_RETURN_STACK, 0 },
    };

    for (unsigned c = 0; c < G_N_ELEMENTS(cases); c++) {
        Harness *h = h_new(64, ETRACE_ARCH_1_1);
        uint64_t ret_addr[17];

        h_start(h, (ETraceOptions){ .implicit_return = cases[c].mode });
        for (unsigned i = 0; i < 17; i++) {
            uint64_t call = 0x10000 + 0x100 * i;

            blk(h, call, call + 4, 4, RISCV_ITYPE_INFERABLE_CALL);
            ret_addr[i] = call + 8;
        }
        blk(h, 0x20000, 0x20002, 2, RISCV_ITYPE_RETURN);
        for (int i = 16; i >= 0; i--) {
            blk(h, ret_addr[i], ret_addr[i] + 2, 2, RISCV_ITYPE_RETURN);
        }
        blk(h, 0x30000, 0x30004, 4, RISCV_ITYPE_NONE);
        expect_addr(h, 2, 2, ret_addr[cases[c].first_reported]);
        h_free(h);
    }
}

/* The encoder counted the packets and bytes the harness received. */
static void expect_stats_match(Harness *h)
{
    ETraceStats st;
    uint64_t bytes = 0, packets[4] = { 0 };

    etrace_encoder_stats(h->e, &st);
    for (size_t i = 0; i < h->n; i++) {
        bytes += h->len[i];
        packets[h->pkt[i].format & 3]++;
    }
    g_assert_cmpuint(st.bytes, ==, bytes);
    for (unsigned f = 0; f < 4; f++) {
        g_assert_cmpuint(st.packets[f], ==, packets[f]);
    }
}

/*
 * A harness with a call counter after a call at 0x1004, one at 0x2004
 * and the return at 0x3000 to 0x2008: one call left, nothing reported
 * since the sync.
 */
static Harness *h_after_return(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);

    h_start(h, (ETraceOptions){ .implicit_return = ETRACE_IR_CALL_COUNTER });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x2000, 0x2004, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x3000, 0x3002, 2, RISCV_ITYPE_RETURN);
    return h;
}

/*
 * 6.6.3: before an exception, the depth is reported when the decoder
 * could stop in the wrong call: after a return with calls left.
 */
static void test_depth_report(void)
{
    Harness *h = h_after_return();
    const ETracePacket *pkt;

    blk(h, 0x2008, 0x200a, 2, RISCV_ITYPE_NONE);        /* depth 1 */
    trap(h, RISCV_ITYPE_INTERRUPT, 7, 0, 0x200c);
    pkt = expect_addr(h, 2, 2, 0x200a);
    expect_flags(h, 2, false, false, true);
    g_assert_cmpuint(pkt->irdepth, ==, 1);
    blk(h, 0x80000000, 0x80000004, 4, RISCV_ITYPE_NONE);
    expect(h, 3, 3, 1);
    h_free(h);

    /* Right after an implicit return: the depth if it is not 0. */
    h = h_after_return();
    blk(h, 0x2008, 0x2008, 2, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_INTERRUPT, 7, 0, 0x200a);
    pkt = expect_addr(h, 2, 2, 0x2008);
    expect_flags(h, 2, false, false, true);
    g_assert_cmpuint(pkt->irdepth, ==, 1);
    h_free(h);

    /* A branch after the return: the decoder stops in the right call. */
    h = h_after_return();
    blk(h, 0x2008, 0x200a, 2, RISCV_ITYPE_TAKEN_BRANCH);
    trap(h, RISCV_ITYPE_INTERRUPT, 7, 0, 0x2100);
    expect_addr(h, 2, 1, 0x200a);
    expect_flags(h, 2, false, false, false);
    h_free(h);

    /* The return itself last: decoder stops before popping, depth 2. */
    h = h_new(64, ETRACE_ARCH_1_1);
    h_start(h, (ETraceOptions){ .implicit_return = ETRACE_IR_CALL_COUNTER });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x2000, 0x2004, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x3000, 0x3004, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x4000, 0x4002, 2, RISCV_ITYPE_RETURN);
    blk(h, 0x3008, 0x300a, 2, RISCV_ITYPE_RETURN);
    trap(h, RISCV_ITYPE_INTERRUPT, 7, 0, 0x2008);
    pkt = expect_addr(h, 2, 2, 0x300a);
    expect_flags(h, 2, false, false, true);
    g_assert_cmpuint(pkt->irdepth, ==, 2);
    h_free(h);

    /*
     * A call after the return, with no branch in between, is reported
     * with notify (the code it calls may have run in the call that
     * returned); from it the decoder stops in the innermost call.
     */
    h = h_after_return();
    blk(h, 0x2008, 0x200c, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x5000, 0x5004, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_INTERRUPT, 7, 0, 0x5008);
    expect_addr(h, 2, 2, 0x200c);
    expect_flags(h, 2, true, false, false);
    expect_addr(h, 3, 2, 0x5004);
    expect_flags(h, 3, false, false, false);
    h_free(h);

    /*
     * The same with a branch after the call: the call's report waited,
     * and the branch made it unneeded (the decoder meets the branch in
     * the repeated code before it could stop in the earlier call).
     */
    h = h_after_return();
    blk(h, 0x2008, 0x200c, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x5000, 0x5004, 4, RISCV_ITYPE_NOT_TAKEN_BRANCH);
    blk(h, 0x5008, 0x500c, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_INTERRUPT, 7, 0, 0x5010);
    pkt = expect_addr(h, 2, 1, 0x500c);
    expect_flags(h, 2, false, false, false);
    g_assert_cmpuint(pkt->branches, ==, 1);
    g_assert_cmpuint(h->n, ==, 3);
    h_free(h);

    /*
     * Branches pending at the call: its dropped report leaves them
     * pending again, and the next report carries them with the new one.
     */
    h = h_new(64, ETRACE_ARCH_1_1);
    h_start(h, (ETraceOptions){ .implicit_return = ETRACE_IR_CALL_COUNTER });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x2000, 0x2004, 4, RISCV_ITYPE_NOT_TAKEN_BRANCH);
    blk(h, 0x2008, 0x200a, 2, RISCV_ITYPE_RETURN);
    blk(h, 0x1008, 0x100c, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x3000, 0x3004, 4, RISCV_ITYPE_TAKEN_BRANCH);
    blk(h, 0x3010, 0x3014, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_INTERRUPT, 7, 0, 0x3018);
    pkt = expect_addr(h, 2, 1, 0x3014);
    expect_flags(h, 2, false, false, false);
    g_assert_cmpuint(pkt->branches, ==, 2);
    g_assert_cmpuint(pkt->branch_map, ==, 1);   /* not taken, taken */
    g_assert_cmpuint(h->n, ==, 3);
    expect_stats_match(h);
    h_free(h);

    /* The same with 33 predicted branches: the count comes back too. */
    h = h_new(64, ETRACE_ARCH_1_1);
    h_start(h, (ETraceOptions){ .implicit_return = ETRACE_IR_CALL_COUNTER,
                                .branch_prediction = true });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_INFERABLE_CALL);
    for (unsigned i = 0; i < 33; i++) {
        blk(h, 0x2000, 0x2002, 2, RISCV_ITYPE_NOT_TAKEN_BRANCH);
    }
    blk(h, 0x2004, 0x2006, 2, RISCV_ITYPE_RETURN);
    blk(h, 0x1008, 0x100c, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x3000, 0x3002, 2, RISCV_ITYPE_NOT_TAKEN_BRANCH);
    blk(h, 0x3004, 0x3008, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_INTERRUPT, 7, 0, 0x300c);
    pkt = expect_addr(h, 2, 0, 0x3008);
    g_assert_cmpuint(pkt->branch_count, ==, 34 - 31);
    g_assert_cmpuint(pkt->branch_fmt, ==, 2);
    g_assert_cmpuint(h->n, ==, 3);
    h_free(h);

    /*
     * A loss while the report waits: it was made after the last packet
     * sent, which the sinks may have dropped, so it goes with the gap.
     */
    h = h_after_return();
    blk(h, 0x2008, 0x200c, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x5000, 0x5004, 4, RISCV_ITYPE_NONE);
    etrace_encoder_lost(h->e);
    blk(h, 0x6000, 0x6004, 4, RISCV_ITYPE_NONE);
    g_assert_cmpuint(h->n, ==, 4);
    g_assert_cmpuint(h->pkt[2].qual_status, ==, ETRACE_QUAL_TRACE_LOST);
    expect(h, 2, 3, 3);
    expect_sync(h, 3, 0x6000);
    h_free(h);

    /*
     * A second such call while the first one's report waits: both
     * reports, in order, then the last instruction before the trap.
     */
    h = h_after_return();
    blk(h, 0x2008, 0x200c, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x5000, 0x5004, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x6000, 0x6002, 2, RISCV_ITYPE_RETURN);
    blk(h, 0x5008, 0x500c, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x6000, 0x6004, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_INTERRUPT, 7, 0, 0x6008);
    expect_addr(h, 2, 2, 0x200c);
    expect_flags(h, 2, true, false, false);
    expect_addr(h, 3, 2, 0x500c);
    expect_flags(h, 3, true, false, false);
    expect_addr(h, 4, 2, 0x6004);
    expect_flags(h, 4, false, false, false);
    g_assert_cmpuint(h->n, ==, 5);
    h_free(h);

    /* The same with a branch between the return and the call: no notify */
    h = h_after_return();
    blk(h, 0x2008, 0x2008, 2, RISCV_ITYPE_NOT_TAKEN_BRANCH);
    blk(h, 0x200a, 0x200c, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x5000, 0x5004, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_INTERRUPT, 7, 0, 0x5008);
    expect_addr(h, 2, 1, 0x5004);
    expect_flags(h, 2, false, false, false);
    h_free(h);

    /* No return since the last call: no depth needed. */
    h = h_new(64, ETRACE_ARCH_1_1);
    h_start(h, (ETraceOptions){ .implicit_return = ETRACE_IR_CALL_COUNTER });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_INFERABLE_CALL);
    blk(h, 0x2000, 0x2004, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_INTERRUPT, 7, 0, 0x2008);
    expect_addr(h, 2, 2, 0x2004);
    expect_flags(h, 2, false, false, false);
    h_free(h);
}

/* ---------------------------------------------------------- traps */

static void test_exception_no_retire(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    const ETracePacket *pkt;

    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x1000, 0x1008, 4, RISCV_ITYPE_NONE);
    /* illegal instruction at 0x100c: tvalepc is the EPC (6.3.1) */
    trap(h, RISCV_ITYPE_EXCEPTION, 2, 0xdeadbeef, 0x100c);
    expect_sync(h, 1, 0x1000);
    expect_addr(h, 2, 2, 0x1008);
    expect_flags(h, 2, false, false, false);
    blk(h, 0x80000000, 0x80000004, 4, RISCV_ITYPE_NONE);
    pkt = expect_trap(h, 3, false, 2, 0x80000000);
    g_assert_cmphex(pkt->tvalepc, ==, 0x100c);
    g_assert_cmpuint(pkt->privilege, ==, 3);
    expect_count(h, 4);

    /* a load page fault: tvalepc is tval */
    blk(h, 0x80000008, 0x8000000c, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_EXCEPTION, 13, 0x5000, 0x80000010);
    blk(h, 0x80000100, 0x80000104, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 4, 2, 0x8000000c);
    pkt = expect(h, 5, 3, 1);
    g_assert_cmphex(pkt->tvalepc, ==, 0x5000);
    g_assert_cmpuint(pkt->ecause, ==, 13);
    h_free(h);
}

/* A trap block with retired instructions is the same as two blocks. */
static void test_exception_with_retire(void)
{
    Harness *a = h_new(64, ETRACE_ARCH_1_1), *b = h_new(64, ETRACE_ARCH_1_1);
    ETraceBlock t;

    h_start(a, (ETraceOptions){ 0 });
    h_start(b, (ETraceOptions){ 0 });
    blk(a, 0x1000, 0x1008, 4, RISCV_ITYPE_NONE);
    trap(a, RISCV_ITYPE_INTERRUPT, 11, 0, 0x100c);
    t = mk(b, 0x1000, 0x1008, 4, RISCV_ITYPE_INTERRUPT);
    t.cause = 11;
    t.epc = 0x100c;
    etrace_encoder_block(b->e, &t);
    blk(a, 0x80000000, 0x80000004, 4, RISCV_ITYPE_NONE);
    blk(b, 0x80000000, 0x80000004, 4, RISCV_ITYPE_NONE);
    expect_count(b, 4);
    g_assert_cmpuint(a->n, ==, b->n);
    for (size_t i = 0; i < a->n; i++) {
        g_assert_cmpmem(a->bytes[i], a->len[i], b->bytes[i], b->len[i]);
    }
    g_assert_true(b->pkt[3].interrupt);
    g_assert_cmpuint(b->pkt[3].ecause, ==, 11);
    h_free(a);
    h_free(b);
}

/* Implicit exception mode: the handler address is left out. */
static void test_implicit_exception(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    const ETracePacket *pkt;

    h_start(h, (ETraceOptions){ .implicit_exception = true });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_EXCEPTION, 8, 0, 0x1008);
    blk(h, 0x80000000, 0x80000004, 4, RISCV_ITYPE_NONE);
    pkt = expect(h, 3, 3, 1);
    g_assert_cmphex(pkt->address, ==, 0);
    g_assert_cmpuint(h->len[3], <, 6);
    /* the omitted handler address is the reference of the next delta */
    blk(h, 0x80000008, 0x8000000c, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);
    blk(h, 0x80000100, 0x80000102, 2, RISCV_ITYPE_NONE);
    pkt = expect(h, 4, 2, 0);
    g_assert_cmphex(pkt->address, ==, 0x100);
    h_free(h);
}

/* An exception right after an uninferable jump (updiscon bit, 6.6.2). */
static void test_updiscon_before_exception(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);

    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);
    blk(h, 0x1000, 0x1000, 4, RISCV_ITYPE_NONE);   /* looplabel again */
    trap(h, RISCV_ITYPE_EXCEPTION, 5, 0x40, 0x1004);
    expect_addr(h, 2, 2, 0x1000);
    expect_flags(h, 2, false, true, false);
    blk(h, 0x80000000, 0x80000004, 4, RISCV_ITYPE_NONE);
    expect(h, 3, 3, 1);

    /* The same without the exception: no updiscon. */
    blk(h, 0x80000008, 0x8000000c, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);
    blk(h, 0x1000, 0x1000, 4, RISCV_ITYPE_NONE);
    blk(h, 0x1004, 0x1004, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 4, 2, 0x1000);
    expect_flags(h, 4, false, false, false);
    h_free(h);
}

/* 1.1: a trap before the first handler instruction retires. */
static void test_double_trap(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);

    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_EXCEPTION, 8, 0, 0x1008);
    trap(h, RISCV_ITYPE_INTERRUPT, 3, 0, 0x80000000);
    blk(h, 0x80000400, 0x80000404, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 2, 2, 0x1004);
    expect_trap(h, 3, true, 3, 0x80000400);
    expect_count(h, 4);
    h_free(h);
}

/*
 * A handler whose first block is one instruction, and then a trap: that
 * instruction retired, so both traps are reported, the first with it as
 * its handler.
 */
static void test_trap_after_one_insn(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);

    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_EXCEPTION, 8, 0, 0x1008);
    blk(h, 0x80000000, 0x80000000, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_INTERRUPT, 3, 0, 0x80000004);
    blk(h, 0x80000400, 0x80000404, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 2, 2, 0x1004);
    expect_trap(h, 3, false, 8, 0x80000000);
    expect_trap(h, 4, true, 3, 0x80000400);
    expect_count(h, 5);
    h_free(h);
}

/* 2.0: thaddr, tval dropped for interrupts, traps reported early. */
static void test_arch2_traps(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_2_0);
    const ETracePacket *pkt;

    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_EXCEPTION, 8, 0, 0x1008);
    trap(h, RISCV_ITYPE_INTERRUPT, 3, 0, 0x80000000);
    blk(h, 0x80000400, 0x80000404, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 2, 2, 0x1004);
    pkt = expect(h, 3, 3, 1);                 /* the ecall, early */
    g_assert_false(pkt->thaddr);
    g_assert_cmpuint(pkt->ecause, ==, 8);
    g_assert_cmphex(pkt->address, ==, 0x1008);
    pkt = expect(h, 4, 3, 1);                 /* the interrupt */
    g_assert_true(pkt->thaddr && pkt->interrupt);
    g_assert_cmphex(pkt->address, ==, 0x80000400);
    expect_count(h, 5);

    /* A fault at the target of a jalr: EPC first, then a sync. */
    blk(h, 0x80000408, 0x8000040c, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);
    trap(h, RISCV_ITYPE_EXCEPTION, 12, 0x9000, 0x9000);
    expect_addr(h, 5, 2, 0x8000040c);
    pkt = expect(h, 6, 3, 1);
    g_assert_false(pkt->thaddr);
    g_assert_cmphex(pkt->address, ==, 0x9000);
    g_assert_cmphex(pkt->tvalepc, ==, 0x9000);
    blk(h, 0x80000000, 0x80000004, 4, RISCV_ITYPE_NONE);
    expect_sync(h, 7, 0x80000000);
    expect_count(h, 8);
    h_free(h);

    /* 1.1 reports the same fault with the handler only. */
    h = h_new(64, ETRACE_ARCH_1_1);
    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x80000404, 0x80000408, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);
    trap(h, RISCV_ITYPE_EXCEPTION, 12, 0x9000, 0x9000);
    blk(h, 0x80000000, 0x80000004, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 2, 2, 0x80000408);
    pkt = expect(h, 3, 3, 1);
    g_assert_cmphex(pkt->tvalepc, ==, 0x9000);
    expect_count(h, 4);
    h_free(h);
}

/* ------------------------------------------------------- privilege */

static void test_privilege_change(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    const ETracePacket *pkt;

    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x80000000, 0x80000008, 4, RISCV_ITYPE_TRAP_RETURN);  /* mret */
    h->priv = 1;
    blk(h, 0x4000, 0x4004, 4, RISCV_ITYPE_NONE);
    pkt = expect(h, 2, 3, 0);
    g_assert_cmphex(pkt->address, ==, 0x4000);
    g_assert_cmpuint(pkt->privilege, ==, 1);
    expect_count(h, 3);

    /* With a branch pending the last M-mode instruction is reported. */
    h->priv = 3;
    blk(h, 0x80000100, 0x80000104, 4, RISCV_ITYPE_TAKEN_BRANCH);
    blk(h, 0x80000200, 0x80000204, 4, RISCV_ITYPE_TRAP_RETURN);
    h->priv = 0;
    blk(h, 0x5000, 0x5002, 2, RISCV_ITYPE_NONE);
    /* the format 3 at 0x80000100: the privilege changed back to M */
    expect_sync(h, 3, 0x80000100);
    pkt = expect_addr(h, 4, 1, 0x80000204);
    g_assert_cmpuint(pkt->branches, ==, 1);
    pkt = expect(h, 5, 3, 0);
    g_assert_cmpuint(pkt->privilege, ==, 0);
    expect_count(h, 6);
    h_free(h);
}

/* ------------------------------------------------------- branch maps */

static void test_full_branch_map(void)
{
    Harness *h = h_new(32, ETRACE_ARCH_1_1);
    const ETracePacket *pkt;

    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x100, 0x100, 2, RISCV_ITYPE_NONE);
    for (unsigned i = 0; i < 31; i++) {
        blk(h, 0x200, 0x202, 2, i & 1 ? RISCV_ITYPE_TAKEN_BRANCH :
                                       RISCV_ITYPE_NOT_TAKEN_BRANCH);
    }
    expect_count(h, 2);
    blk(h, 0x200, 0x200, 2, RISCV_ITYPE_NONE);
    pkt = expect(h, 2, 1, 0);
    g_assert_cmpuint(pkt->branches, ==, 0);
    g_assert_false(pkt->has_address);
    g_assert_cmphex(pkt->branch_map, ==, 0x55555555 & 0x7fffffff);
    expect_count(h, 3);
    h_free(h);
}

/* 3.2.6 and 6.8: predicted branches are counted, not mapped. */
static void test_branch_prediction(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    const ETracePacket *pkt;

    h_start(h, (ETraceOptions){ .branch_prediction = true });
    blk(h, 0x100, 0x100, 2, RISCV_ITYPE_NONE);
    /* the table starts at 01: not taken is predicted */
    for (unsigned i = 0; i < 40; i++) {
        blk(h, 0x200, 0x202, 2, RISCV_ITYPE_NOT_TAKEN_BRANCH);
    }
    expect_count(h, 2);
    blk(h, 0x200, 0x202, 2, RISCV_ITYPE_TAKEN_BRANCH);  /* miss */
    blk(h, 0x300, 0x300, 2, RISCV_ITYPE_NONE);
    pkt = expect(h, 2, 0, 0);
    g_assert_cmpuint(pkt->branch_count, ==, 40 - 31);
    g_assert_cmpuint(pkt->branch_fmt, ==, 0);
    g_assert_false(pkt->has_address);

    /*
     * 00 -taken-> 01 still predicts not taken (two misses flip it):
     * 35 not taken are all predicted, then an uninferable jump.
     */
    for (unsigned i = 0; i < 35; i++) {
        blk(h, 0x200, 0x202, 2, RISCV_ITYPE_NOT_TAKEN_BRANCH);
    }
    blk(h, 0x300, 0x304, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);
    blk(h, 0x400, 0x402, 2, RISCV_ITYPE_NONE);
    pkt = expect_addr(h, 3, 0, 0x400);
    g_assert_cmpuint(pkt->branch_count, ==, 35 - 31);
    g_assert_cmpuint(pkt->branch_fmt, ==, 2);
    expect_count(h, 4);

    /* 00: the first taken misses, the map is sent at 31. */
    for (unsigned i = 0; i < 31; i++) {
        blk(h, 0x200, 0x202, 2, i == 3 ? RISCV_ITYPE_NOT_TAKEN_BRANCH :
                                         RISCV_ITYPE_TAKEN_BRANCH);
    }
    blk(h, 0x300, 0x300, 2, RISCV_ITYPE_NONE);
    pkt = expect(h, 4, 1, 0);
    g_assert_cmpuint(pkt->branches, ==, 0);
    g_assert_cmphex(pkt->branch_map, ==, 1u << 3);

    /*
     * 33 predicted taken, a jump, and its target a branch that fails:
     * the count with the address of the failed branch (branch_fmt 3).
     */
    for (unsigned i = 0; i < 33; i++) {
        blk(h, 0x200, 0x202, 2, RISCV_ITYPE_TAKEN_BRANCH);
    }
    blk(h, 0x300, 0x304, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);
    blk(h, 0x202, 0x202, 2, RISCV_ITYPE_NOT_TAKEN_BRANCH);
    blk(h, 0x500, 0x502, 2, RISCV_ITYPE_NONE);
    pkt = expect_addr(h, 5, 0, 0x202);
    g_assert_cmpuint(pkt->subformat, ==, 0);
    g_assert_cmpuint(pkt->branch_count, ==, 2);
    g_assert_cmpuint(pkt->branch_fmt, ==, 3);
    expect_count(h, 6);
    h_free(h);
}

/* 3.2.7: a jump target seen before is sent as its cache index. */
static void test_jump_target_cache(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    const ETracePacket *pkt;

    h_start(h, (ETraceOptions){ .jump_target_cache = true });
    blk(h, 0x100, 0x104, 4, RISCV_ITYPE_UNINFERABLE_CALL);
    blk(h, 0x2a0, 0x2a2, 2, RISCV_ITYPE_NOT_TAKEN_BRANCH);
    expect_addr(h, 2, 2, 0x2a0);                    /* miss: address */
    blk(h, 0x2a4, 0x2a6, 2, RISCV_ITYPE_RETURN);
    blk(h, 0x108, 0x10c, 4, RISCV_ITYPE_UNINFERABLE_CALL);
    expect_addr(h, 3, 1, 0x108);
    blk(h, 0x2a0, 0x2a2, 2, RISCV_ITYPE_TAKEN_BRANCH);
    pkt = expect(h, 4, 0, 1);                         /* hit: index */
    g_assert_cmpuint(pkt->index, ==, (0x2a0 >> 1) & 15);
    g_assert_cmpuint(pkt->branches, ==, 0);
    /* a hit with the taken branch at 0x2a2 pending */
    blk(h, 0x2a4, 0x2a6, 2, RISCV_ITYPE_RETURN);
    blk(h, 0x2a0, 0x2a2, 2, RISCV_ITYPE_NONE);
    pkt = expect(h, 5, 0, 1);
    g_assert_cmpuint(pkt->branches, ==, 1);
    g_assert_cmphex(pkt->branch_map, ==, 0);
    expect_flags(h, 5, false, false, false);
    expect_count(h, 6);
    /* a trap (format 3.1) empties the cache: 0x2a0 is sent again */
    blk(h, 0x2a4, 0x2a6, 2, RISCV_ITYPE_RETURN);
    blk(h, 0x108, 0x108, 4, RISCV_ITYPE_NONE);
    trap(h, RISCV_ITYPE_INTERRUPT, 7, 0, 0x10c);
    blk(h, 0x80000000, 0x80000004, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);
    blk(h, 0x2a0, 0x2a2, 2, RISCV_ITYPE_NONE);
    expect_addr(h, 6, 2, 0x108);     /* cached, but updiscon needed */
    expect_flags(h, 6, false, true, false);
    expect(h, 7, 3, 1);
    expect_addr(h, 8, 2, 0x2a0);
    h_free(h);
}

/* ----------------------------------------------- notify, sijump */

static void test_notify(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    ETraceBlock b;

    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x1000, 0x1000, 4, RISCV_ITYPE_NONE);
    b = mk(h, 0x1004, 0x100c, 4, RISCV_ITYPE_NONE);
    b.notify = true;
    etrace_encoder_block(h->e, &b);
    blk(h, 0x1010, 0x1010, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 2, 2, 0x100c);
    expect_flags(h, 2, true, false, false);
    expect_count(h, 3);
    h_free(h);
}

static void test_sijump(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    ETraceBlock b;

    h_start(h, (ETraceOptions){ .sijump = true });
    blk(h, 0x1000, 0x1000, 4, RISCV_ITYPE_NONE);
    b = mk(h, 0x1004, 0x1008, 4, RISCV_ITYPE_UNINFERABLE_CALL);
    b.sijump = true;                    /* lui t0; jalr t0 */
    etrace_encoder_block(h->e, &b);
    blk(h, 0x40000, 0x40004, 4, RISCV_ITYPE_NONE);
    expect_count(h, 2);
    /* Without the mode the target is reported. */
    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x1000, 0x1000, 4, RISCV_ITYPE_NONE);
    etrace_encoder_block(h->e, &b);
    blk(h, 0x40000, 0x40004, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 2, 2, 0x40004);         /* the restart ended a run */
    expect_support(h, 3, true, ETRACE_QUAL_ENDED_REP);
    expect_sync(h, 4, 0x1000);
    expect_addr(h, 5, 2, 0x40000);
    /* sijump on a trap return means nothing: mret is reported. */
    h_start(h, (ETraceOptions){ .sijump = true });
    b = mk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_TRAP_RETURN);
    b.sijump = true;
    etrace_encoder_block(h->e, &b);
    blk(h, 0x40000, 0x40004, 4, RISCV_ITYPE_NONE);
    expect_sync(h, 8, 0x1000);
    expect_addr(h, 9, 2, 0x40000);
    /* A jalr reported by a sync: its lui is not seen by the decoder. */
    h_start(h, (ETraceOptions){ .sijump = true });
    b = mk(h, 0x1008, 0x1008, 4, RISCV_ITYPE_UNINFERABLE_CALL);
    b.sijump = true;
    etrace_encoder_block(h->e, &b);
    blk(h, 0x40000, 0x40004, 4, RISCV_ITYPE_NONE);
    expect_sync(h, 12, 0x1008);
    expect_addr(h, 13, 2, 0x40000);
    h_free(h);
}

/* ----------------------------------------------------------- resync */

static void test_resync_packets(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    size_t syncs = 0, first = 0;

    h_start(h, (ETraceOptions){ .sync_mode = ETRACE_SYNC_PACKETS,
                                .sync_max = 0 });
    /* a jalr jumping to itself: every instruction is reported */
    for (unsigned i = 0; i < 40; i++) {
        blk(h, 0x1000, 0x1000, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);
    }
    for (size_t i = 2; i < h->n; i++) {
        if (h->pkt[i].format == 3) {
            syncs++;
            first = first ? first : i;
        }
    }
    /* the sync, 16 format 2 (counts 1..16), then the resync */
    g_assert_cmpuint(first, ==, 18);
    g_assert_cmpuint(syncs, ==, 2);
    expect_sync(h, 35, 0x1000);
    /* the packet just before a resync carries the updiscon bit */
    expect_flags(h, 16, false, false, false);
    expect_flags(h, 17, false, true, false);
    h_free(h);
}

/*
 * A resync due while branches are pending reports them with the address
 * of an instruction, but never of one right after an implicit return: the
 * spec's decoder (follow_execution_path) stops at such an inferred
 * address only if the instruction before it is no uninferable
 * discontinuity, which a return is by its opcode, so it would go past it
 * (6.6.3 asks for the report and its depth; its pseudo-code can not stop
 * there).  The report moves on to a later block.  Here every call of a
 * branch and a return comes back to a taken branch, and with a resync
 * due every 16 half-words many are due right there: their reports go to
 * the jump after it, with either implicit return.
 */
static void test_resync_after_implicit_return(void)
{
    static const ETraceIRMode modes[] = { ETRACE_IR_CALL_COUNTER,
                                          ETRACE_IR_RETURN_STACK };

    for (unsigned m = 0; m < G_N_ELEMENTS(modes); m++) {
        Harness *h = h_new(64, ETRACE_ARCH_1_1);
        size_t syncs = 0, moved = 0;

        h_start(h, (ETraceOptions){ .implicit_return = modes[m],
                                    .sync_mode = ETRACE_SYNC_HALFWORDS,
                                    .sync_max = 0 });
        for (unsigned i = 0; i < 100; i++) {
            blk(h, 0x1000, 0x1000, 4, RISCV_ITYPE_INFERABLE_CALL);
            blk(h, 0x2000, 0x2000, 4, RISCV_ITYPE_NOT_TAKEN_BRANCH);
            blk(h, 0x2004, 0x2004, 4, RISCV_ITYPE_RETURN);  /* to 0x1004 */
            blk(h, 0x1004, 0x1004, 4, RISCV_ITYPE_TAKEN_BRANCH);
            blk(h, 0x1010, 0x1010, 4, RISCV_ITYPE_OTHER_INFERABLE_JUMP);
        }
        for (size_t i = 1; i < h->n; i++) {
            bool notify, updiscon, irreport;

            if (h->pkt[i].format == 3) {
                syncs += h->pkt[i].subformat == 0;
                continue;
            }
            if (!h->pkt[i].has_address) {
                continue;
            }
            etrace_packet_get_flags(&h->p, &h->pkt[i], &notify, &updiscon,
                                    &irreport);
            g_assert_false(notify || updiscon || irreport);
            g_assert_cmphex(h->abs[i], !=, 0x1004);
            moved += h->abs[i] == 0x1010;
        }
        g_assert_cmpuint(syncs, >, 10);
        g_assert_cmpuint(moved, >, 10);
        h_free(h);
    }
}

/*
 * A context packet makes the resync due while a branch is pending: the
 * branch goes out first (with the next instruction's report), then the
 * sync.
 */
static void test_resync_after_context(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    ETraceBlock b;
    const ETracePacket *pkt;

    h->p.context_width_p = 8;
    h_start(h, (ETraceOptions){ .sync_mode = ETRACE_SYNC_PACKETS,
                                .sync_max = 0 });
    for (unsigned i = 0; i < 15; i++) {
        blk(h, 0x1000, 0x1000, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);
    }
    /* the sync and 13 format 2; the last jalr waits for its successor */
    expect_count(h, 15);
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 16, 2, 0x1000);      /* count 15 */
    b = mk(h, 0x1008, 0x1008, 4, RISCV_ITYPE_TAKEN_BRANCH);
    b.ctype = 1;
    b.context = 9;
    etrace_encoder_block(h->e, &b);
    blk(h, 0x1800, 0x1804, 4, RISCV_ITYPE_NONE);
    expect(h, 17, 3, 2);                /* count 16: due, branch pending */
    expect_count(h, 18);
    blk(h, 0x1900, 0x1904, 4, RISCV_ITYPE_NONE);
    /* the branch at 0x1008 is reported with 0x1804, then the sync */
    pkt = expect_addr(h, 18, 1, 0x1804);
    g_assert_cmpuint(pkt->branches, ==, 1);
    expect_sync(h, 19, 0x1900);
    expect_count(h, 20);
    h_free(h);
}

/*
 * A resync due at an uninferable jump does not land on its target (the
 * decoder could stop at an earlier occurrence of 0x1000): the target is
 * reported with the updiscon bit, the sync comes one instruction later.
 */
static void test_resync_jump_target(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);

    h_start(h, (ETraceOptions){ .sync_mode = ETRACE_SYNC_CYCLES,
                                .sync_max = 0 });
    blk(h, 0x1000, 0x101c, 4, RISCV_ITYPE_NONE);                    /* 8 */
    blk(h, 0x2000, 0x2020, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);  /* 17 */
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_NONE);
    blk(h, 0x3000, 0x3004, 4, RISCV_ITYPE_NONE);
    expect_sync(h, 1, 0x1000);
    expect_addr(h, 2, 2, 0x1000);
    expect_flags(h, 2, false, true, false);
    expect_sync(h, 3, 0x1004);
    expect_count(h, 4);
    h_free(h);

    /* Nor on the target of a mispredicted return: no irreport in f3. */
    h = h_new(64, ETRACE_ARCH_1_1);
    h_start(h, (ETraceOptions){ .sync_mode = ETRACE_SYNC_CYCLES,
                                .sync_max = 0,
                                .implicit_return = ETRACE_IR_RETURN_STACK });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_INFERABLE_CALL);          /* 2 */
    blk(h, 0x2000, 0x2038, 4, RISCV_ITYPE_RETURN);                  /* 17 */
    blk(h, 0x5000, 0x5004, 4, RISCV_ITYPE_NONE);
    blk(h, 0x6000, 0x6004, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 2, 2, 0x5000);
    expect_flags(h, 2, false, true, true);
    g_assert_cmpuint(h->pkt[2].irdepth, ==, 1);
    expect_sync(h, 3, 0x5004);
    expect_count(h, 4);
    h_free(h);

    /*
     * A mispredicted return that was itself reported exactly: its
     * target still gets no sync (the decoder would pop its stack).
     */
    h = h_new(64, ETRACE_ARCH_1_1);
    h_start(h, (ETraceOptions){ .sync_mode = ETRACE_SYNC_CYCLES,
                                .sync_max = 0,
                                .implicit_return = ETRACE_IR_RETURN_STACK });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_INFERABLE_CALL);          /* 2 */
    blk(h, 0x2000, 0x2038, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);  /* 17 */
    blk(h, 0x3000, 0x3000, 2, RISCV_ITYPE_RETURN);
    blk(h, 0x5000, 0x5004, 4, RISCV_ITYPE_NONE);
    blk(h, 0x6000, 0x6004, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 2, 2, 0x3000);           /* the return, exactly */
    expect_flags(h, 2, false, true, false);
    expect_addr(h, 3, 2, 0x5000);
    expect_flags(h, 3, false, true, true);
    expect_sync(h, 4, 0x5004);
    expect_count(h, 5);
    h_free(h);

    /*
     * Branches pending at the jump: they go out with its target's
     * report (the jump itself is not reported), then the sync.
     */
    h = h_new(64, ETRACE_ARCH_1_1);
    h_start(h, (ETraceOptions){ .sync_mode = ETRACE_SYNC_CYCLES,
                                .sync_max = 0 });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_TAKEN_BRANCH);            /* 2 */
    blk(h, 0x2000, 0x2038, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);  /* 17 */
    blk(h, 0x5000, 0x5004, 4, RISCV_ITYPE_NONE);
    blk(h, 0x6000, 0x6004, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 2, 1, 0x5000);
    g_assert_cmpuint(h->pkt[2].branches, ==, 1);
    expect_flags(h, 2, false, true, false);
    expect_sync(h, 3, 0x5004);
    expect_count(h, 4);
    h_free(h);
}

/*
 * A jump target reported without the updiscon bit, then a privilege
 * change with no branch pending: the instruction before the change is
 * reported too, or the decoder would take a stop at an earlier 0x1000
 * as final (6.6.2 case 3).
 */
static void test_ambiguous_then_format3(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);

    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);
    blk(h, 0x1000, 0x1008, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 2, 2, 0x1000);
    expect_flags(h, 2, false, false, false);
    h->priv = 1;
    blk(h, 0x4000, 0x4004, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 3, 2, 0x1008);
    expect_sync(h, 4, 0x4000);
    expect_count(h, 5);
    h_free(h);

    /* The same before a resync. */
    h = h_new(64, ETRACE_ARCH_1_1);
    h_start(h, (ETraceOptions){ .sync_mode = ETRACE_SYNC_CYCLES,
                                .sync_max = 0 });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);  /* 2 */
    blk(h, 0x1000, 0x1040, 4, RISCV_ITYPE_NONE);                    /* 19 */
    blk(h, 0x3000, 0x3004, 4, RISCV_ITYPE_NONE);
    expect_addr(h, 2, 2, 0x1000);
    expect_flags(h, 2, false, false, false);
    expect_addr(h, 3, 2, 0x1040);
    expect_sync(h, 4, 0x3000);
    expect_count(h, 5);
    h_free(h);
}

static void test_resync_cycles(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    const ETracePacket *pkt;

    /* 16 instructions, then a taken branch: format 1, then a sync. */
    h_start(h, (ETraceOptions){ .sync_mode = ETRACE_SYNC_CYCLES,
                                .sync_max = 0 });
    blk(h, 0x1000, 0x101c, 4, RISCV_ITYPE_NONE);       /* 8 */
    blk(h, 0x2000, 0x2018, 4, RISCV_ITYPE_TAKEN_BRANCH);   /* 15 */
    blk(h, 0x2020, 0x203c, 4, RISCV_ITYPE_TAKEN_BRANCH);   /* 23 */
    expect_count(h, 2);
    blk(h, 0x3000, 0x3004, 4, RISCV_ITYPE_NONE);
    pkt = expect_addr(h, 2, 1, 0x203c);
    g_assert_cmpuint(pkt->branches, ==, 2);
    expect_sync(h, 3, 0x3000);
    expect_count(h, 4);
    h_free(h);

    /* Half-words: 16 compressed instructions and no branch. */
    h = h_new(64, ETRACE_ARCH_1_1);
    h_start(h, (ETraceOptions){ .sync_mode = ETRACE_SYNC_HALFWORDS,
                                .sync_max = 0 });
    blk(h, 0x1000, 0x101e, 2, RISCV_ITYPE_NONE);
    blk(h, 0x1020, 0x1022, 2, RISCV_ITYPE_NONE);
    expect_sync(h, 2, 0x1020);
    h_free(h);
}

/* --------------------------------------- qualification, stop, lost */

static void test_qualification(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    ETraceBlock b;

    h_start(h, (ETraceOptions){ 0 });
    b = mk(h, 0x500, 0x504, 4, RISCV_ITYPE_NONE);
    b.qualified = false;
    etrace_encoder_block(h->e, &b);
    expect_count(h, 1);
    blk(h, 0x1000, 0x1008, 4, RISCV_ITYPE_NONE);
    expect_sync(h, 1, 0x1000);
    b = mk(h, 0x100c, 0x1010, 4, RISCV_ITYPE_NONE);
    b.qualified = false;
    etrace_encoder_block(h->e, &b);
    expect_addr(h, 2, 2, 0x1008);
    expect_support(h, 3, true, ETRACE_QUAL_ENDED_REP);
    expect_count(h, 4);
    blk(h, 0x1014, 0x1018, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);
    expect_sync(h, 4, 0x1014);

    /* Ending at the target of an uninferable jump: ended_upd. */
    blk(h, 0x1014, 0x1014, 4, RISCV_ITYPE_NONE);
    b.iaddr = 0x1018;
    etrace_encoder_block(h->e, &b);
    expect_addr(h, 5, 2, 0x1014);
    expect_support(h, 6, true, ETRACE_QUAL_ENDED_UPD);
    expect_count(h, 7);
    h_free(h);
}

static void test_stop_and_lost(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);

    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x1000, 0x1008, 4, RISCV_ITYPE_NONE);
    etrace_encoder_lost(h->e);
    expect_count(h, 2);
    blk(h, 0x3000, 0x3004, 4, RISCV_ITYPE_NONE);
    expect_support(h, 2, true, ETRACE_QUAL_TRACE_LOST);
    expect_sync(h, 3, 0x3000);
    blk(h, 0x3008, 0x300c, 4, RISCV_ITYPE_TAKEN_BRANCH);
    etrace_encoder_stop(h->e);
    expect_addr(h, 4, 1, 0x300c);
    expect_support(h, 5, false, ETRACE_QUAL_ENDED_REP);
    /* Stopped: blocks are ignored; a second stop says nothing. */
    blk(h, 0x4000, 0x4004, 4, RISCV_ITYPE_NONE);
    etrace_encoder_stop(h->e);
    expect_count(h, 6);
    h_free(h);
}

/* ---------------------------------------------------------- context */

static void test_context(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    ETraceBlock b;
    const ETracePacket *pkt;

    h->p.context_width_p = 16;
    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x1000, 0x1004, 4, RISCV_ITYPE_NONE);
    /* imprecise: a format 3.2 at the first quiet instruction */
    b = mk(h, 0x1008, 0x100c, 4, RISCV_ITYPE_NONE);
    b.ctype = 1;
    b.context = 0x42;
    etrace_encoder_block(h->e, &b);
    pkt = expect(h, 2, 3, 2);
    g_assert_cmphex(pkt->context, ==, 0x42);
    /* precise: a sync at the block, branches reported before it */
    blk(h, 0x1010, 0x1014, 4, RISCV_ITYPE_TAKEN_BRANCH);
    b = mk(h, 0x1020, 0x1024, 4, RISCV_ITYPE_NONE);
    b.ctype = 2;
    b.context = 0x43;
    etrace_encoder_block(h->e, &b);
    expect_addr(h, 3, 1, 0x1014);
    pkt = expect(h, 4, 3, 0);
    g_assert_cmphex(pkt->context, ==, 0x43);
    g_assert_cmphex(pkt->address, ==, 0x1020);
    /* asynchronous: like a trap, the last instruction is reported */
    b = mk(h, 0x2000, 0x2004, 4, RISCV_ITYPE_NONE);
    b.ctype = 3;
    b.context = 0x44;
    etrace_encoder_block(h->e, &b);
    expect_addr(h, 5, 2, 0x1024);
    pkt = expect(h, 6, 3, 0);
    g_assert_cmphex(pkt->context, ==, 0x44);
    expect_count(h, 7);
    h_free(h);
}

/* ------------------------------------------------- misc and stats */

static void test_stats_and_restart(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    ETraceStats s;
    uint64_t bytes = 0;

    h_start(h, (ETraceOptions){ 0 });
    blk(h, 0x1000, 0x1008, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP);
    blk(h, 0x2000, 0x2002, 2, RISCV_ITYPE_NONE);
    /* new options mid-run: last instruction, then the new support */
    h_start(h, (ETraceOptions){ .full_address = true });
    expect_addr(h, 2, 2, 0x2000);
    expect_addr(h, 3, 2, 0x2002);
    expect_support(h, 4, true, ETRACE_QUAL_ENDED_REP);
    g_assert_true(h->o.full_address);
    etrace_encoder_stats(h->e, &s);
    for (size_t i = 0; i < h->n; i++) {
        bytes += h->len[i];
    }
    g_assert_cmpuint(s.bytes, ==, bytes);
    g_assert_cmpuint(s.packets[3], ==, 3);
    g_assert_cmpuint(s.packets[2], ==, 2);
    g_assert_cmpuint(s.halfwords, ==, 6 + 2);
    g_assert_cmpuint(s.instructions, ==, 3 + 2);
    h_free(h);
}

/* Hostile blocks (odd sizes, huge values) never crash. */
static void test_garbage_blocks(void)
{
    GRand *r = g_rand_new_with_seed(3);
    Harness *h = h_new(64, ETRACE_ARCH_2_0);

    h->p.context_width_p = 8;
    h_start(h, (ETraceOptions){ .implicit_return = ETRACE_IR_RETURN_STACK,
                                .branch_prediction = true,
                                .jump_target_cache = true, .sijump = true,
                                .sync_mode = ETRACE_SYNC_PACKETS });
    for (unsigned i = 0; i < 200000; i++) {
        ETraceBlock b = {
            .iaddr = (uint64_t)g_rand_int(r) << 32 | g_rand_int(r),
            .iretire = g_rand_int_range(r, 0, 4) == 0 ? g_rand_int(r) :
                       (guint32)g_rand_int_range(r, 0, 8),
            .ninsns = g_rand_int(r), .ilastsize = g_rand_int(r),
            .itype = g_rand_int_range(r, 0, 17), .priv = g_rand_int(r),
            .sijump = g_rand_boolean(r), .notify = g_rand_int(r) % 7 == 0,
            .qualified = g_rand_int(r) % 9 != 0, .ctype = g_rand_int(r),
            .context = g_rand_int(r), .cause = g_rand_int(r),
            .epc = g_rand_int(r),
        };

        etrace_encoder_block(h->e, &b);
        if (i % 1000 == 0) {
            etrace_encoder_lost(h->e);
        }
        h->n = 0;       /* every packet was unpacked by capture() */
    }
    etrace_encoder_stop(h->e);
    h_free(h);
    g_rand_free(r);
}

/* ------------------------------------------------ fast path equivalence */

/* Everything one encoder emitted. */
typedef struct Output {
    GByteArray *bytes;
    size_t packets;
    GArray *done;           /* BlockDone: etrace_encoder_set_block_done() */
    uint64_t addr_mask;     /* iaddress_width_p, which done addresses keep */
    /* an output window (etrace_encoder_set_window()) of random room */
    GRand *window_rand;     /* NULL: none */
    ETraceWindow win;
    uint8_t wbuf[4 * ETRACE_MAX_PACKET];
} Output;

/* The packets in the window go to the bytes; it opens again. */
static void window_take(Output *out)
{
    g_byte_array_append(out->bytes, out->wbuf, out->win.pos - out->wbuf);
    out->win.pos = out->wbuf;
    out->win.end = out->wbuf + g_rand_int_range(out->window_rand, 0,
                                                sizeof(out->wbuf) + 1);
}

/* Bytes out, the window's with them */
static unsigned out_len(const Output *out)
{
    return out->bytes->len +
           (out->window_rand ? out->win.pos - out->wbuf : 0);
}

/* A block_done call: the block, and how many bytes were out then */
typedef struct BlockDone {
    uint64_t iaddr;
    uint32_t iretire;
    unsigned at;
} BlockDone;

static void record_done(void *opaque, const ETraceBlock *b)
{
    Output *out = opaque;
    BlockDone d = { b->iaddr & out->addr_mask, b->iretire, out_len(out) };

    g_array_append_val(out->done, d);
}

static void collect(void *opaque, const uint8_t *bytes, size_t len)
{
    Output *out = opaque;

    g_assert_cmpuint(len, >, 0);
    g_assert_cmpuint(len, <=, ETRACE_MAX_PACKET);
    if (out->window_rand) {
        window_take(out);
    }
    g_byte_array_append(out->bytes, bytes, len);
    out->packets++;
}

/*
 * A small random program: 48 blocks of straight-line code, each ending
 * in a branch, call, return or jump whose targets are a few other blocks,
 * so that branch predictions, return predictions and jump target cache
 * hits all happen.  Trap handlers run at privilege 3 and return with
 * mret to where the trap came from.
 */
#define PROG_BLOCKS 48

typedef struct Walker {
    GRand *r;
    uint64_t base;
    uint8_t itype[PROG_BLOCKS];
    uint8_t len[PROG_BLOCKS];   /* half-words */
    uint8_t target[PROG_BLOCKS][2];
    unsigned pc, priv;
    unsigned stack[16], depth;
    /*
     * where each call returns to (the end of its block), and the address
     * of the next block when it follows a return: a return stack predicts
     * those returns
     */
    uint64_t link[16], resume;
    unsigned trap_pc, trap_priv;
    uint8_t trips[PROG_BLOCKS];     /* of the loops: branches to themselves */
} Walker;

static uint64_t block_addr(const Walker *w, unsigned i)
{
    return w->base + i * 64;
}

static void walker_init(Walker *w, GRand *r, uint64_t base)
{
    static const uint8_t ends[] = {
        RISCV_ITYPE_NOT_TAKEN_BRANCH, RISCV_ITYPE_NOT_TAKEN_BRANCH,
        RISCV_ITYPE_NOT_TAKEN_BRANCH, RISCV_ITYPE_NOT_TAKEN_BRANCH,
        RISCV_ITYPE_INFERABLE_CALL, RISCV_ITYPE_UNINFERABLE_CALL,
        RISCV_ITYPE_RETURN, RISCV_ITYPE_RETURN, RISCV_ITYPE_NONE,
        RISCV_ITYPE_OTHER_INFERABLE_JUMP, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP,
        RISCV_ITYPE_INFERABLE_TAIL_CALL, RISCV_ITYPE_UNINFERABLE_TAIL_CALL,
        RISCV_ITYPE_COROUTINE_SWAP, RISCV_ITYPE_UNINFERABLE_JUMP_3BIT,
    };

    memset(w, 0, sizeof(*w));
    w->r = r;
    w->base = base;
    w->priv = 0;
    for (unsigned i = 0; i < PROG_BLOCKS; i++) {
        w->itype[i] = ends[g_rand_int_range(r, 0, G_N_ELEMENTS(ends))];
        w->len[i] = g_rand_int_range(r, 1, 12);
        w->target[i][0] = g_rand_int_range(r, 0, PROG_BLOCKS);
        w->target[i][1] = g_rand_int_range(r, 0, PROG_BLOCKS);
    }
    /* the trap handler, block 0: ends with mret */
    w->itype[0] = RISCV_ITYPE_TRAP_RETURN;
}

/* The block at pc; pc moves to where it goes. */
static ETraceBlock walker_block(Walker *w)
{
    unsigned i = w->pc, itype = w->itype[i];
    ETraceBlock b = {
        .iaddr = block_addr(w, i), .iretire = w->len[i],
        .ninsns = (w->len[i] + 1) / 2, .ilastsize = w->len[i] > 1,
        .itype = itype, .priv = w->priv, .qualified = true,
        .sijump = g_rand_int_range(w->r, 0, 4) == 0,
    };
    unsigned next = (i + 1) % PROG_BLOCKS;

    if (w->resume) {
        b.iaddr = w->resume;
        w->resume = 0;
    }
    switch (itype) {
    case RISCV_ITYPE_NOT_TAKEN_BRANCH:
        if (i % 5 == 0) {
            /*
             * A loop of 20-100 trips: long runs of predicted branches,
             * whose count may end with a misprediction or a full map
             */
            if (!w->trips[i]) {
                w->trips[i] = g_rand_int_range(w->r, 20, 100);
            }
            if (--w->trips[i]) {
                b.itype = RISCV_ITYPE_TAKEN_BRANCH;
                next = i;
            }
            break;
        }
        /* mostly the same way at each site: predictable */
        if ((i * 7 + g_rand_int_range(w->r, 0, 8)) % 8 < 6) {
            b.itype = RISCV_ITYPE_TAKEN_BRANCH;
            next = w->target[i][0];
        }
        break;
    case RISCV_ITYPE_INFERABLE_CALL:
    case RISCV_ITYPE_UNINFERABLE_CALL:
        if (w->depth < G_N_ELEMENTS(w->stack)) {
            w->link[w->depth] = b.iaddr + b.iretire * 2;
            w->stack[w->depth++] = next;
        }
        next = w->target[i][g_rand_int_range(w->r, 0, 2)];
        break;
    case RISCV_ITYPE_RETURN:
        if (w->depth && g_rand_int_range(w->r, 0, 16)) {
            next = w->stack[--w->depth];
            w->resume = w->link[w->depth];
        } else {
            next = w->target[i][0];
        }
        break;
    case RISCV_ITYPE_TRAP_RETURN:
        next = w->trap_pc;
        w->priv = w->trap_priv;
        break;
    case RISCV_ITYPE_NONE:
        break;
    default:
        next = w->target[i][g_rand_int_range(w->r, 0, 2)];
    }
    w->pc = next ? next : 1;    /* block 0 only after a trap */
    return b;
}

static ETraceBlock walker_trap(Walker *w)
{
    ETraceBlock b = {
        .itype = g_rand_boolean(w->r) ? RISCV_ITYPE_EXCEPTION :
                 RISCV_ITYPE_INTERRUPT,
        .priv = w->priv, .qualified = true,
        .cause = g_rand_int_range(w->r, 0, 24), .tval = g_rand_int(w->r),
        .epc = w->resume ? w->resume : block_addr(w, w->pc),
    };

    w->resume = 0;
    if (g_rand_int_range(w->r, 0, 4) == 0) {
        /* a few instructions retire before the trap */
        b.iaddr = b.epc;
        b.iretire = g_rand_int_range(w->r, 1, 4);
        b.ninsns = b.iretire;
        b.epc += b.iretire * 2;
    }
    w->trap_pc = w->pc;
    w->trap_priv = w->priv;
    w->pc = 0;
    w->priv = 3;
    return b;
}

/* Feed one stream of n blocks, with rare events, to both encoders. */
/*
 * Packed blocks waiting for etrace_encoder_packed(): the run of blocks
 * that have a packed form, of one context, the first with a ctype.
 */
typedef struct PackedRun {
    ETracePackedBlock pb[64];
    unsigned n;             /* entries: a trap takes two */
    uint64_t context;
    unsigned ctype;
    GRand *r;
} PackedRun;

/* A producer's bit on some blocks, which it wants to see before them. */
#define PACKED_STOP     (UINT64_C(1) << 62)

/*
 * Calls end at the end of the run or, one time in four, anywhere in it
 * (also between a trap's two entries, which must then wait).
 */
static void packed_flush(ETraceEncoder *e, PackedRun *run)
{
    size_t done = 0;

    while (done < run->n) {
        size_t end = g_rand_int(run->r) % 4 ? run->n :
                     (size_t)g_rand_int_range(run->r, done + 1, run->n + 1);

        done += etrace_encoder_packed(e, run->pb + done, end - done,
                                      run->context, done ? 0 : run->ctype,
                                      PACKED_STOP);
        g_assert_cmpuint(done, <=, end);
        g_assert(done == end || (run->pb[done].info & PACKED_STOP) ||
                 done + etrace_packed_len(run->pb[done].info) > end);
    }
    run->n = 0;
}

static unsigned packed_of(const ETraceBlock *b,
                          ETracePackedBlock pb[ETRACE_PACKED_LEN_MAX]);

/* b's packed form, if b has one: it unpacks to b.  Returns its entries. */
static unsigned pack_block(const ETraceParams *p, const ETraceBlock *b,
                           ETracePackedBlock *pb, GRand *r)
{
    uint64_t mask = p->iaddress_width_p == 64 ? UINT64_MAX :
                    (UINT64_C(1) << p->iaddress_width_p) - 1;
    bool trap = b->itype == 1 || b->itype == 2;
    ETraceBlock u;

    if (!b->qualified || b->notify || b->itype > 15 || b->ilastsize > 1 ||
        b->iretire > 0xffff || b->ninsns > 0xffff || b->priv > 7) {
        return 0;
    }
    if (b->run) {
        unsigned len = packed_of(b, pb);

        etrace_packed_to_block(p, pb, b->context, b->ctype, &u);
        g_assert_cmpuint(len, ==, etrace_packed_len(pb->info));
        g_assert_cmpuint(u.run, ==, b->run);
        g_assert_cmphex(u.run_map, ==, b->run_map);
        g_assert_cmpuint(u.iretire, ==, b->iretire);
        g_assert_cmpuint(u.run_indexed, ==, b->run_indexed);
        if (b->run_indexed) {
            g_assert_cmpmem(u.run_entries, b->run, b->run_entries, b->run);
        }
        return len;
    }
    pb[0] = (ETracePackedBlock) {
        .iaddr = trap ? b->epc : b->iaddr,
        .info = (uint64_t)b->iretire << ETRACE_PB_IRETIRE_SHIFT |
                (uint64_t)b->ninsns << ETRACE_PB_NINSNS_SHIFT |
                (uint64_t)b->itype << ETRACE_PB_ITYPE_SHIFT |
                (uint64_t)b->ilastsize << ETRACE_PB_ILASTSIZE_SHIFT |
                (uint64_t)b->priv << ETRACE_PB_PRIV_SHIFT |
                (uint64_t)b->sijump << ETRACE_PB_SIJUMP_SHIFT |
                /* the producer's own bits are ignored */
                UINT64_C(0x2d3) << ETRACE_PB_PRODUCER_SHIFT,
    };
    if (trap) {
        pb[1] = (ETracePackedBlock) { .cause = b->cause, .tval = b->tval };
    }
    if (b->iretire > b->ilastsize && b->ninsns && !trap &&
        g_rand_int(r) % 4) {
        pb->info |= ETRACE_PB_PLAIN;
    }
    if (g_rand_int(r) % 8 == 0) {
        pb->info |= PACKED_STOP;
    }
    etrace_packed_to_block(p, pb, b->context, b->ctype, &u);
    g_assert_cmpuint(etrace_packed_len(pb->info), ==, trap ? 2 : 1);
    /* a trap's iaddr is its EPC: without instructions before it */
    if (u.priv != b->priv ||
        !(trap ? !b->iretire && u.tval == b->tval && u.epc == b->epc &&
                 u.cause == b->cause :
                 u.iaddr == (b->iaddr & mask))) {
        return 0;
    }
    return trap ? 2 : 1;
}

/* Feed b to e, packed when it can be, as run's next block. */
static void feed_packed(ETraceEncoder *e, const ETraceParams *p,
                        PackedRun *run, const ETraceBlock *b, GRand *r)
{
    ETracePackedBlock pb[ETRACE_PACKED_LEN_MAX];
    unsigned len = pack_block(p, b, pb, r);

    if (!len) {
        packed_flush(e, run);
        etrace_encoder_block(e, b);
        return;
    }
    if (run->n + len > G_N_ELEMENTS(run->pb) || b->ctype ||
        b->context != run->context) {
        packed_flush(e, run);
    }
    if (!run->n) {
        run->context = b->context;
        run->ctype = b->ctype;
    }
    memcpy(&run->pb[run->n], pb, len * sizeof(pb[0]));
    run->n += len;
}

/*
 * e[0] takes the fast paths, e[1] the general one, e[2] the blocks in
 * packed form where they have one.
 */
typedef struct Encoders {
    ETraceEncoder **e;
    PackedRun run;
    const ETraceParams *p;
} Encoders;

static void feed_encoders(void *opaque, const ETraceBlock *b)
{
    Encoders *enc = opaque;

    feed_packed(enc->e[2], enc->p, &enc->run, b, enc->run.r);
    etrace_encoder_block(enc->e[0], b);
    etrace_encoder_block(enc->e[1], b);
}

/*
 * Runs of branch blocks as the hart makes them (with branch prediction,
 * indexed, where the predictor takes them: else none); event 7 makes one
 * where the hart would not.
 */
static void feed_both(ETraceEncoder **e, GRand *r, Walker *w, unsigned n,
                      unsigned events, const ETraceOptions *o,
                      const ETraceParams *p)
{
    uint64_t context = 0;
    unsigned unqualified = 0;
    Encoders enc = { .e = e, .run = { .n = 0, .r = r }, .p = p };
    PackedRun *run = &enc.run;
    RunMaker runs;

    run_maker_init(&runs, feed_encoders, &enc);
    runs.indexed = o->branch_prediction;

    for (unsigned i = 0; i < n; i++) {
        unsigned ev = g_rand_int(r) % 1000 < events ?
                      g_rand_int_range(r, 0, 8) : 8;
        ETraceBlock b = ev == 0 ? walker_trap(w) : walker_block(w);

        switch (ev) {
        case 1:
            b.notify = true;
            break;
        case 2:
            b.ctype = g_rand_int_range(r, 1, 4);
            b.context = context = g_rand_int(r);
            break;
        case 3:
            unqualified = g_rand_int_range(r, 1, 4);
            break;
        case 4:
            /* what QEMU never sends */
            b.itype = g_rand_int_range(r, 0, 20);
            b.iretire = g_rand_int_range(r, 0, 3);
            b.ilastsize = g_rand_int(r);
            b.priv = g_rand_int_range(r, 0, 8);
            break;
        }
        if (unqualified) {
            b.qualified = false;
            unqualified--;
        }
        if (!b.ctype) {
            b.context = context;
        }
        if (ev == 7) {
            runs.need_address = false;
        }
        if (o->branch_prediction && !etrace_run_indexes_fit(p)) {
            feed_encoders(&enc, &b);
        } else {
            run_maker_block(&runs, &b);
        }
        if (ev == 6) {
            run_maker_flush(&runs);
            runs.need_address = true;
        }
        if (ev == 5 || ev == 6) {
            packed_flush(e[2], run);
        }
        for (unsigned k = 0; k < 3; k++) {
            if (ev == 5) {
                etrace_encoder_lost(e[k]);
            } else if (ev == 6) {
                etrace_encoder_start(e[k], o);
            }
        }
    }
    run_maker_flush(&runs);
    packed_flush(e[2], run);
}

/*
 * The fast paths (plain blocks, the format 0.1, 1 and 2 packers, packed
 * blocks, the output window of random room) emit exactly what the general
 * algorithm and etrace_packet_pack() emit, for every option combination
 * on parameter sets that change the field widths, the layout and the
 * packer; with a block_done hook (data trace) on some, every path calls
 * it for the same blocks at the same points of the packet stream.
 */
static void test_fast_paths(void)
{
    GRand *r = g_rand_new_with_seed(21);

    for (unsigned ps = 0; ps < 6; ps++) {
        ETraceParams p;

        etrace_params_default(&p, ps & 1 ? 32 : 64);
        if (ps == 2) {
            p.arch = ETRACE_ARCH_2_0;
            p.context_width_p = 8;
            p.f0s_width_p = 0;
        } else if (ps == 3) {
            p.bpred_size_p = 1;
            p.cache_size_p = 1;
            p.return_stack_size_p = 1;
            p.src_bits = 9;
            p.src_id = 0x1a5;
        } else if (ps == 4) {
            /* formats 1 and 2 too wide for the 128-bit packer */
            p.iaddress_lsb_p = 0;
            p.return_stack_size_p = 15;
            p.call_counter_size_p = 15;
        }
        for (unsigned combo = 0; combo < 384; combo++) {
            ETraceOptions o = {
                .full_address = combo & 1,
                .implicit_exception = combo & 2,
                .sijump = combo & 4,
                .branch_prediction = combo & 8,
                .jump_target_cache = combo & 16,
                .sync_mode = (combo >> 5) & 3,
                .implicit_return = (combo >> 7) % 3,
                .sync_max = g_rand_int_range(r, 0, 3),
            };
            Output out[3];
            ETraceEncoder *e[3];
            ETraceStats st[3];
            bool hook = combo % 5 < 2;
            Walker w;

            walker_init(&w, r, ps == 5 ? 0xffffffff80000000ull : 0x80000000);
            for (unsigned k = 0; k < 3; k++) {
                out[k] = (Output) {
                    .bytes = g_byte_array_new(),
                    .done = g_array_new(false, false, sizeof(BlockDone)),
                    .addr_mask = UINT64_MAX >> (64 - p.iaddress_width_p),
                };
                e[k] = etrace_encoder_new(&p, collect, &out[k]);
                g_assert_nonnull(e[k]);
                etrace_encoder_set_fast_paths(e[k], k != 1);
                if (k == 2) {
                    /* the packed blocks' encoder, as QEMU's device */
                    out[k].window_rand = r;
                    out[k].win.pos = out[k].wbuf;
                    window_take(&out[k]);
                    etrace_encoder_set_window(e[k], &out[k].win);
                }
                if (hook) {
                    etrace_encoder_set_block_done(e[k], record_done, &out[k]);
                }
                etrace_encoder_start(e[k], &o);
            }
            feed_both(e, r, &w, 1500, combo % 4 == 0 ? 0 : 30, &o, &p);
            for (unsigned k = 0; k < 3; k++) {
                etrace_encoder_stop(e[k]);
                etrace_encoder_stats(e[k], &st[k]);
                etrace_encoder_free(e[k]);
            }
            window_take(&out[2]);
            g_assert_cmpmem(out[0].bytes->data, out[0].bytes->len,
                            out[1].bytes->data, out[1].bytes->len);
            g_assert_cmpmem(&st[0], sizeof(st[0]), &st[1], sizeof(st[1]));
            g_assert_cmpmem(out[0].bytes->data, out[0].bytes->len,
                            out[2].bytes->data, out[2].bytes->len);
            g_assert_cmpmem(&st[0], sizeof(st[0]), &st[2], sizeof(st[2]));
            g_assert_cmpuint(out[0].packets, >, 1);
            for (unsigned k = 1; k < 3; k++) {
                g_assert_cmpmem(out[0].done->data,
                                out[0].done->len * sizeof(BlockDone),
                                out[k].done->data,
                                out[k].done->len * sizeof(BlockDone));
            }
            g_assert_true(!hook || out[0].done->len > 100);
            for (unsigned k = 0; k < 3; k++) {
                g_byte_array_unref(out[k].bytes);
                g_array_unref(out[k].done);
            }
        }
    }
    g_rand_free(r);
}

/*
 * b, a plain block or a run, in the packed form of ETracePackedBlock at
 * pb; returns its entries.
 */
static unsigned packed_of(const ETraceBlock *b,
                          ETracePackedBlock pb[ETRACE_PACKED_LEN_MAX])
{
    uint64_t units = (uint64_t)b->iretire << ETRACE_PB_IRETIRE_SHIFT |
                     (uint64_t)b->ninsns << ETRACE_PB_NINSNS_SHIFT |
                     (uint64_t)b->priv << ETRACE_PB_PRIV_SHIFT;

    if (b->run) {
        unsigned slots = etrace_run_entry_slots(b->run);

        pb[0] = (ETracePackedBlock) {
            .iaddr = b->run_map | UINT64_C(1) << b->run,
            .info = units | ETRACE_PB_RUN,
        };
        if (!b->run_indexed) {
            return 1;
        }
        pb[0].info |= ETRACE_PB_RUN_INDEXED |
                      (uint64_t)slots << ETRACE_PB_ITYPE_SHIFT;
        /* the entries, then bytes the encoder must ignore */
        memset(&pb[1], 0x5a, slots * sizeof(pb[0]));
        memcpy(&pb[1], b->run_entries, b->run);
        return 1 + slots;
    }
    pb[0] = (ETracePackedBlock) {
        .iaddr = b->iaddr,
        .info = units | (uint64_t)b->itype << ETRACE_PB_ITYPE_SHIFT |
                (uint64_t)b->ilastsize << ETRACE_PB_ILASTSIZE_SHIFT |
                ETRACE_PB_PLAIN,
    };
    return 1;
}

/*
 * A run may leave its instruction totals 0 unless the resync counts
 * instructions or half-words: then it is a loss (a trace_lost support
 * packet), through the general and the packed path alike.
 */
static void test_run_totals(void)
{
    for (unsigned mode = 0; mode < 4; mode++) {
        for (unsigned packed = 0; packed < 2; packed++) {
            Harness *h = h_new(64, ETRACE_ARCH_1_1);
            ETraceBlock b[] = {
                mk(h, 0x1000, 0x1008, 4, RISCV_ITYPE_NONE),
                mk(h, 0x100c, 0x1010, 4, RISCV_ITYPE_TAKEN_BRANCH),
                /* three branch blocks, no totals */
                { .run = 3, .run_map = 5, .priv = h->priv,
                  .qualified = true },
                mk(h, 0x2000, 0x2004, 4, RISCV_ITYPE_NOT_TAKEN_BRANCH),
                mk(h, 0x2008, 0x200c, 4, RISCV_ITYPE_NONE),
            };
            bool lost = false;

            h_start(h, (ETraceOptions){ .sync_mode = mode, .sync_max = 15 });
            for (unsigned i = 0; i < G_N_ELEMENTS(b); i++) {
                ETracePackedBlock pb[ETRACE_PACKED_LEN_MAX];
                unsigned len = packed_of(&b[i], pb);

                if (packed) {
                    g_assert_cmpuint(etrace_encoder_packed(h->e, pb, len, 0,
                                                           0, 0), ==, len);
                } else {
                    etrace_encoder_block(h->e, &b[i]);
                }
            }
            etrace_encoder_stop(h->e);
            for (size_t i = 0; i < h->n; i++) {
                lost |= h->pkt[i].format == 3 && h->pkt[i].subformat == 3 &&
                        h->pkt[i].qual_status == ETRACE_QUAL_TRACE_LOST;
            }
            g_assert_cmpint(lost, ==,
                            mode == ETRACE_SYNC_CYCLES ||
                            mode == ETRACE_SYNC_HALFWORDS);
            h_free(h);
        }
    }
}

/*
 * The n blocks b, one at a time through the general path, and packed in
 * one call of etrace_encoder_packed() (into an output window of its own
 * when window, as QEMU's device gives it): the same bytes.  Returns how
 * many packets.
 */
static size_t packed_as_general(Harness *h, const ETraceOptions *o,
                                const ETraceBlock *b, unsigned n, bool window)
{
    ETracePackedBlock pb[64 * ETRACE_PACKED_LEN_MAX];
    Output out[2] = {
        { .bytes = g_byte_array_new() }, { .bytes = g_byte_array_new() },
    };
    uint8_t buf[4096];
    ETraceWindow win = { .pos = buf, .end = buf + sizeof(buf) };
    ETraceEncoder *e[2];
    size_t packets;

    unsigned m = 0;

    g_assert_cmpuint(n, <=, 64);
    for (unsigned k = 0; k < 2; k++) {
        e[k] = etrace_encoder_new(&h->p, collect, &out[k]);
        g_assert_nonnull(e[k]);
        etrace_encoder_set_fast_paths(e[k], k == 0);
        etrace_encoder_set_window(e[k], k == 0 && window ? &win : NULL);
        etrace_encoder_start(e[k], o);
    }
    for (unsigned i = 0; i < n; i++) {
        m += packed_of(&b[i], &pb[m]);
        etrace_encoder_block(e[1], &b[i]);
    }
    g_assert_cmpuint(etrace_encoder_packed(e[0], pb, m, 0, 0, 0), ==, m);
    for (unsigned k = 0; k < 2; k++) {
        etrace_encoder_stop(e[k]);
        etrace_encoder_free(e[k]);
    }
    /* (with the window, every packet went there) */
    g_assert_cmpuint(window ? out[0].bytes->len : 0, ==, 0);
    g_byte_array_append(out[0].bytes, buf, win.pos - buf);
    g_assert_cmpmem(out[0].bytes->data, out[0].bytes->len,
                    out[1].bytes->data, out[1].bytes->len);
    packets = out[1].packets;
    for (unsigned k = 0; k < 2; k++) {
        g_byte_array_unref(out[k].bytes);
    }
    return packets;
}

/*
 * With branch prediction, a loop predicted 40 times ends with a
 * misprediction, which sends the count of predicted branches: the same
 * bytes whether the blocks come one at a time through the general path
 * or packed in one batch, where the fast loop of quiet blocks must stop
 * before the misprediction also when the branch before it (predicted,
 * past 31) went through the general path.
 */
static void test_predicted_loop_packed(void)
{
    Harness *h = h_new(64, ETRACE_ARCH_1_1);
    ETraceOptions o = { .branch_prediction = true };
    ETraceBlock b[48];
    unsigned n = 0;

    b[n++] = mk(h, 0x1000, 0x1008, 4, RISCV_ITYPE_NONE);
    for (unsigned i = 0; i < 40; i++) {
        b[n++] = mk(h, 0x2000, 0x2008, 4, RISCV_ITYPE_TAKEN_BRANCH);
    }
    b[n++] = mk(h, 0x2000, 0x2008, 4, RISCV_ITYPE_NOT_TAKEN_BRANCH);
    for (unsigned i = 0; i < 4; i++) {
        b[n++] = mk(h, 0x200c + 0x10 * i, 0x2014 + 0x10 * i, 4,
                    RISCV_ITYPE_NONE);
    }
    /* the count went out: a format 0 packet among them */
    g_assert_cmpuint(packed_as_general(h, &o, b, n, false), >, 3);
    h_free(h);
}

/*
 * In the default modes the loop of packed blocks sends the reports of
 * returns and the full maps itself (quiet_run_reports()): a report, 31
 * branches whose map goes out (the last report is no longer ambiguous:
 * no report of the xRET is forced when the privilege changes after it),
 * a return to a block of one instruction (reported when the next block
 * comes), give exactly the bytes of the same blocks one at a time
 * through the general path, with or without full addresses.
 */
static void test_reports_packed(void)
{
    for (unsigned full = 0; full < 2; full++) {
        Harness *h = h_new(64, ETRACE_ARCH_1_1);
        ETraceOptions o = { .full_address = full };
        ETraceBlock b[48];
        unsigned n = 0;

        b[n++] = mk(h, 0x1000, 0x1008, 4, RISCV_ITYPE_NONE);
        b[n++] = mk(h, 0x1010, 0x1014, 4, RISCV_ITYPE_RETURN);
        b[n++] = mk(h, 0x3000, 0x3008, 4, RISCV_ITYPE_RETURN);
        b[n++] = mk(h, 0x3100, 0x3100, 4, RISCV_ITYPE_NOT_TAKEN_BRANCH);
        b[n++] = mk(h, 0x3104, 0x3108, 4, RISCV_ITYPE_NONE);
        for (unsigned i = 0; i < 31; i++) {
            b[n++] = mk(h, 0x4000, 0x4004, 4, i % 3 ?
                        RISCV_ITYPE_TAKEN_BRANCH :
                        RISCV_ITYPE_NOT_TAKEN_BRANCH);
        }
        b[n++] = mk(h, 0x4008, 0x400c, 4, RISCV_ITYPE_TRAP_RETURN);
        h->priv = 0;
        b[n++] = mk(h, 0x5000, 0x5004, 4, RISCV_ITYPE_NONE);
        /* (9 if the xRET were reported before the privilege change) */
        g_assert_cmpuint(packed_as_general(h, &o, b, n, true), ==, 8);
        h_free(h);
    }
}

/* Runs of a stream for test_predicted_runs(): packed, and counted. */
typedef struct RunsOut {
    ETraceEncoder *e;
    unsigned runs, run_branches, longest;
} RunsOut;

static void feed_packed_one(void *opaque, const ETraceBlock *b)
{
    RunsOut *ro = opaque;
    ETracePackedBlock pb[ETRACE_PACKED_LEN_MAX];
    unsigned len = packed_of(b, pb);

    g_assert_cmpuint(b->run, <=, ETRACE_RUN_INDEXED_MAX);
    ro->runs += b->run != 0;
    ro->run_branches += b->run;
    ro->longest = MAX(ro->longest, b->run);
    g_assert_cmpuint(etrace_encoder_packed(ro->e, pb, len, 0, 0, 0), ==, len);
}

/*
 * With branch prediction, indexed runs (at most 62 branches, each with
 * its predictor entry) give exactly the packets of the same blocks sent
 * one by one, in every mode combined with it, as long as no resync
 * moves (a resync waits for two addressed blocks in a row): the
 * predictor sees every branch at its own entry, and counts, maps and
 * mispredictions come out at the same branches.
 */
static void test_predicted_runs(void)
{
    GRand *r = g_rand_new_with_seed(23);
    ETraceParams p;

    etrace_params_default(&p, 64);
    for (unsigned combo = 0; combo < 24; combo++) {
        ETraceOptions o = {
            .branch_prediction = true,
            .jump_target_cache = combo & 1,
            .sijump = combo & 2,
            .implicit_exception = combo & 4,
            .implicit_return = combo / 8,
        };
        Output out[2] = {
            { .bytes = g_byte_array_new() }, { .bytes = g_byte_array_new() },
        };
        ETraceEncoder *whole = etrace_encoder_new(&p, collect, &out[0]);
        RunsOut ro = { .e = etrace_encoder_new(&p, collect, &out[1]) };
        RunMaker runs;
        Walker w;

        g_assert_nonnull(whole);
        g_assert_nonnull(ro.e);
        etrace_encoder_start(whole, &o);
        etrace_encoder_start(ro.e, &o);
        walker_init(&w, r, 0x80000000);
        /* mostly branches, so that the runs are long */
        for (unsigned i = 1; i < PROG_BLOCKS; i++) {
            if (g_rand_int_range(r, 0, 4)) {
                w.itype[i] = RISCV_ITYPE_NOT_TAKEN_BRANCH;
            }
        }
        run_maker_init(&runs, feed_packed_one, &ro);
        runs.indexed = true;
        for (unsigned i = 0; i < 4000; i++) {
            ETraceBlock b = walker_block(&w);

            /*
             * (the walker's sijump is random: one after a run may claim
             * a constant load the run left out)
             */
            b.sijump = false;
            etrace_encoder_block(whole, &b);
            run_maker_block(&runs, &b);
        }
        run_maker_flush(&runs);
        etrace_encoder_stop(whole);
        etrace_encoder_stop(ro.e);

        g_assert_cmpuint(ro.runs, >, 50);
        g_assert_cmpuint(ro.run_branches, >, 3 * ro.runs);
        g_assert_cmpuint(ro.longest, >, 48);    /* entries in every slot */
        g_assert_cmpuint(out[0].packets, >, 50);
        g_assert_cmpmem(out[0].bytes->data, out[0].bytes->len,
                        out[1].bytes->data, out[1].bytes->len);
        etrace_encoder_free(whole);
        etrace_encoder_free(ro.e);
        for (unsigned k = 0; k < 2; k++) {
            g_byte_array_unref(out[k].bytes);
        }
    }
    g_rand_free(r);
}

/* A Harness's encoder takes each block packed, one at a time. */
static void feed_harness_packed(void *opaque, const ETraceBlock *b)
{
    Harness *h = opaque;
    ETracePackedBlock pb[ETRACE_PACKED_LEN_MAX];
    unsigned len = packed_of(b, pb);

    g_assert_cmpuint(etrace_encoder_packed(h->e, pb, len, 0, 0, 0), ==, len);
}

/*
 * With branch prediction, a loop whose branch is always predicted keeps
 * its branches pending (a count that only grows), so only two blocks
 * with addresses in a row let a resync in: the hart sends two whole
 * branch blocks after every full indexed run (of 62), and the
 * periodic resync (here due every 16 instructions or half-words) comes
 * all along the loop, at each such pair, without a loss.  Without them
 * it never came.
 */
static void test_predicted_loop_resync(void)
{
    for (unsigned mode = ETRACE_SYNC_CYCLES; mode <= ETRACE_SYNC_HALFWORDS;
         mode++) {
        Harness *h = h_new(64, ETRACE_ARCH_1_1);
        ETraceBlock loop = mk(h, 0x2000, 0x2008, 4, RISCV_ITYPE_TAKEN_BRANCH);
        ETraceBlock start = mk(h, 0x1000, 0x1008, 4, RISCV_ITYPE_NONE);
        unsigned syncs = 0, lost = 0;
        RunMaker runs;

        h_start(h, (ETraceOptions){ .branch_prediction = true,
                                    .sync_mode = mode, .sync_max = 0 });
        run_maker_init(&runs, feed_harness_packed, h);
        runs.indexed = true;
        run_maker_block(&runs, &start);
        for (unsigned i = 0; i < 2000; i++) {
            run_maker_block(&runs, &loop);
        }
        run_maker_flush(&runs);
        etrace_encoder_stop(h->e);
        for (size_t i = 0; i < h->n; i++) {
            syncs += h->pkt[i].format == 3 && h->pkt[i].subformat == 0;
            lost += h->pkt[i].format == 3 && h->pkt[i].subformat == 3 &&
                    h->pkt[i].qual_status == ETRACE_QUAL_TRACE_LOST;
        }
        /* a resync at each pair of whole blocks: every 64 blocks */
        g_assert_cmpuint(syncs, >=, 2000 / (ETRACE_RUN_INDEXED_MAX + 2) - 1);
        g_assert_cmpuint(lost, ==, 0);
        h_free(h);
    }
}

/*
 * The sync hook (etrace_encoder_set_sync_hook()): before each sync or
 * trap packet, the index it gives is that of the entry whose block the
 * packet reports, counted from the entry the call began with, whatever
 * path (packed in calls of random length, or one block at a time) took
 * the blocks.
 */
typedef struct SyncHookRun {
    ETraceParams p;
    ETraceOptions o;            /* as the last support packet says */
    GArray *entries;            /* ETraceBlock per entry; a trap's twice */
    size_t call_base;           /* the entry the current call began with */
    long hooked;                /* entry of the last hook call, or -2 */
    unsigned checked;
} SyncHookRun;

static void sync_hook_called(void *opaque, long first_after)
{
    SyncHookRun *run = opaque;

    g_assert_cmpint(run->hooked, ==, -2);    /* one per packet */
    run->hooked = (long)run->call_base + first_after;
    g_assert_cmpint(run->hooked, >=, 0);
}

static void sync_hook_packet(void *opaque, const uint8_t *bytes, size_t len)
{
    SyncHookRun *run = opaque;
    ETracePacket pkt;
    const char *err = NULL;
    const ETraceBlock *b;
    long at = run->hooked;

    g_assert_cmpint(etrace_packet_unpack(&run->p, &run->o, bytes, len, &pkt,
                                         &err), ==, len);
    if (pkt.format == 3 && pkt.subformat == 3) {
        etrace_options_unpack(&run->p, pkt.options, &run->o);
        if (pkt.enable && pkt.qual_status != ETRACE_QUAL_ENDED_REP &&
            pkt.qual_status != ETRACE_QUAL_ENDED_UPD) {
            return;     /* (trace_lost goes out in front of the sync) */
        }
        /* the end: after the accesses of every block */
        g_assert_cmpint(at, ==, run->entries->len);
        run->hooked = -2;
        run->checked++;
        return;
    }
    run->hooked = -2;
    if (pkt.format != 3 || pkt.subformat > 1) {
        g_assert_cmpint(at, ==, -2);
        return;
    }
    g_assert_cmpint(at, <=, run->entries->len);
    if (pkt.subformat == 1 && run->p.arch == ETRACE_ARCH_2_0 &&
        !pkt.thaddr) {
        /* the trap before its handler: the entry after the trap's two */
        g_assert_cmpint(at, >=, 2);
        b = &g_array_index(run->entries, ETraceBlock, at - 2);
        g_assert_true(b->itype == 1 || b->itype == 2);
        g_assert_cmpuint(b->cause, ==, pkt.ecause);
        g_assert_cmphex(pkt.address, ==,
                        b->epc & (UINT64_MAX >> (64 -
                                                 run->p.iaddress_width_p)));
    } else {
        g_assert_cmpint(at, <, run->entries->len);
        b = &g_array_index(run->entries, ETraceBlock, at);
        /* (a trap's entry when instructions retired before it) */
        g_assert_cmpuint(b->iretire, >, 0);
        if (pkt.subformat == 0 || !run->o.implicit_exception) {
            /* (not a trap's handler address, which it leaves out) */
            g_assert_cmphex(pkt.address, >=, b->iaddr);
            g_assert_cmphex(pkt.address, <, b->iaddr + b->iretire * 2);
        }
    }
    run->checked++;
}

/* The buffered entries, which begin at entry base, in calls of any length */
static void sync_hook_flush(ETraceEncoder *e, SyncHookRun *run,
                            const ETracePackedBlock *pb, size_t *npb,
                            size_t base, GRand *r)
{
    for (size_t done = 0; done < *npb;) {
        size_t end = g_rand_int_range(r, done + 1, *npb + 1);

        run->call_base = base + done;
        done += etrace_encoder_packed(e, pb + done, end - done, 0, 0,
                                      PACKED_STOP);
    }
    *npb = 0;
}

static void test_sync_hook(void)
{
    GRand *r = g_rand_new_with_seed(23);

    for (unsigned combo = 0; combo < 96; combo++) {
        SyncHookRun run = { .hooked = -2 };
        ETraceOptions o = {
            .implicit_exception = combo & 1,
            .branch_prediction = combo & 2,
            .implicit_return = combo & 4 ? ETRACE_IR_RETURN_STACK : ETRACE_IR_OFF,
            .sync_mode = 1 + combo % 3,
            .sync_max = 0,
        };
        ETracePackedBlock pb[256];
        size_t npb = 0, base = 0;
        ETraceEncoder *e;
        Walker w;

        etrace_params_default(&run.p, combo & 8 ? 32 : 64);
        run.p.arch = combo & 16 ? ETRACE_ARCH_2_0 : ETRACE_ARCH_1_1;
        run.entries = g_array_new(false, false, sizeof(ETraceBlock));
        e = etrace_encoder_new(&run.p, sync_hook_packet, &run);
        etrace_encoder_set_sync_hook(e, sync_hook_called, &run);
        etrace_encoder_start(e, &o);
        walker_init(&w, r, 0x80000000);
        for (unsigned i = 0; i < 3000; i++) {
            unsigned ev = g_rand_int_range(r, 0, 100);
            ETraceBlock b = ev < 3 ? walker_trap(&w) : walker_block(&w);
            ETracePackedBlock one[ETRACE_PACKED_LEN_MAX];
            unsigned len = ev == 3 ? 0 : pack_block(&run.p, &b, one, r);
            size_t at = run.entries->len;

            g_array_append_val(run.entries, b);
            if (b.itype == 1 || b.itype == 2) {
                /* the second entry: no instruction */
                ETraceBlock second = { .itype = b.itype };

                g_array_append_val(run.entries, second);
            }
            if (!len || npb + len > G_N_ELEMENTS(pb)) {
                sync_hook_flush(e, &run, pb, &npb, base, r);
            }
            if (!len) {
                run.call_base = at;
                etrace_encoder_block(e, &b);
                continue;
            }
            if (!npb) {
                base = at;
            }
            memcpy(&pb[npb], one, len * sizeof(one[0]));
            npb += len;
            if (!g_rand_int_range(r, 0, 8)) {
                sync_hook_flush(e, &run, pb, &npb, base, r);
            }
            if (ev == 4) {
                sync_hook_flush(e, &run, pb, &npb, base, r);
                etrace_encoder_lost(e);
            }
        }
        sync_hook_flush(e, &run, pb, &npb, base, r);
        run.call_base = run.entries->len;
        etrace_encoder_stop(e);
        g_assert_cmpint(run.hooked, ==, -2);
        g_assert_cmpuint(run.checked, >, 20);
        etrace_encoder_free(e);
        g_array_unref(run.entries);
    }
    g_rand_free(r);
}

/* etrace_bpred_step() is etrace_bpred_next() and the hit, for every input */
static void test_bpred_step(void)
{
    for (unsigned state = 0; state < 4; state++) {
        for (unsigned taken = 0; taken < 2; taken++) {
            unsigned step = etrace_bpred_step(state, taken);

            g_assert_cmpuint(step & 3, ==, etrace_bpred_next(state, taken));
            g_assert_cmpuint(step >> 2, ==,
                             etrace_bpred_taken(state) == taken);
        }
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/etrace-encoder/example/ret", test_example_ret);
    g_test_add_func("/etrace-encoder/example/branch-ret",
                    test_example_branch_ret);
    g_test_add_func("/etrace-encoder/example/three-branches",
                    test_example_three_branches);
    g_test_add_func("/etrace-encoder/example/complex",
                    test_example_complex);
    g_test_add_func("/etrace-encoder/implicit-return",
                    test_implicit_return);
    g_test_add_func("/etrace-encoder/return-stack-miss",
                    test_return_stack_miss);
    g_test_add_func("/etrace-encoder/depth-report", test_depth_report);
    g_test_add_func("/etrace-encoder/depth-limits", test_depth_limits);
    g_test_add_func("/etrace-encoder/trap/no-retire",
                    test_exception_no_retire);
    g_test_add_func("/etrace-encoder/trap/with-retire",
                    test_exception_with_retire);
    g_test_add_func("/etrace-encoder/trap/implicit",
                    test_implicit_exception);
    g_test_add_func("/etrace-encoder/trap/updiscon",
                    test_updiscon_before_exception);
    g_test_add_func("/etrace-encoder/trap/double", test_double_trap);
    g_test_add_func("/etrace-encoder/trap/after-one-insn",
                    test_trap_after_one_insn);
    g_test_add_func("/etrace-encoder/trap/arch2", test_arch2_traps);
    g_test_add_func("/etrace-encoder/privilege", test_privilege_change);
    g_test_add_func("/etrace-encoder/branch-map-full", test_full_branch_map);
    g_test_add_func("/etrace-encoder/branch-prediction",
                    test_branch_prediction);
    g_test_add_func("/etrace-encoder/jump-target-cache",
                    test_jump_target_cache);
    g_test_add_func("/etrace-encoder/notify", test_notify);
    g_test_add_func("/etrace-encoder/sijump", test_sijump);
    g_test_add_func("/etrace-encoder/resync/packets", test_resync_packets);
    g_test_add_func("/etrace-encoder/resync/cycles", test_resync_cycles);
    g_test_add_func("/etrace-encoder/resync/after-implicit-return",
                    test_resync_after_implicit_return);
    g_test_add_func("/etrace-encoder/resync/jump-target",
                    test_resync_jump_target);
    g_test_add_func("/etrace-encoder/ambiguous-report",
                    test_ambiguous_then_format3);
    g_test_add_func("/etrace-encoder/resync/after-context",
                    test_resync_after_context);
    g_test_add_func("/etrace-encoder/qualification", test_qualification);
    g_test_add_func("/etrace-encoder/stop-lost", test_stop_and_lost);
    g_test_add_func("/etrace-encoder/context", test_context);
    g_test_add_func("/etrace-encoder/stats-restart", test_stats_and_restart);
    g_test_add_func("/etrace-encoder/garbage", test_garbage_blocks);
    g_test_add_func("/etrace-encoder/fast-paths", test_fast_paths);
    g_test_add_func("/etrace-encoder/predicted-loop-packed",
                    test_predicted_loop_packed);
    g_test_add_func("/etrace-encoder/run-totals", test_run_totals);
    g_test_add_func("/etrace-encoder/reports-packed", test_reports_packed);
    g_test_add_func("/etrace-encoder/predicted-runs", test_predicted_runs);
    g_test_add_func("/etrace-encoder/sync-hook", test_sync_hook);
    g_test_add_func("/etrace-encoder/bpred-step", test_bpred_step);
    g_test_add_func("/etrace-encoder/predicted-loop-resync",
                    test_predicted_loop_resync);
    return g_test_run();
}

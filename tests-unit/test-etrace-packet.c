/*
 * Unit tests of the E-trace packet layer: the payload layouts of
 * chapter 6 (v1.1.1 and the 2.0 variant), sign-based compression and the
 * figure 6.1 encapsulation.
 *
 * Known answers were assembled bit by bit from tables 6.1-6.11 by a
 * separate script (fields LSB first in table order, then the sign-based
 * compression of chapter 6); the four packets of "Example code and
 * packets" are among them.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <glib.h>
#include "insn_class.h"
#include "etrace.h"

static ETraceParams params64(void)
{
    ETraceParams p;

    etrace_params_default(&p, 64);
    return p;
}

/* Pack and compare with the expected bytes, then unpack them back. */
static void check_bytes(const ETraceParams *p, const ETraceOptions *o,
                        const ETracePacket *pkt, const uint8_t *want,
                        size_t want_len, ETracePacket *out)
{
    uint8_t buf[ETRACE_MAX_PACKET];
    size_t n = etrace_packet_pack(p, o, pkt, buf);
    const char *err = NULL;

    g_assert_cmpmem(buf, n, want, want_len);
    g_assert_cmpint(etrace_packet_unpack(p, o, want, want_len, out, &err),
                    ==, want_len);
    g_assert_null(err);
}

/* The fast packer of formats 1 and 2 against expected bytes. */
static void check_f12(const ETraceParams *p, unsigned format,
                      unsigned branches, uint32_t branch_map, uint64_t address,
                      bool notify, bool updiscon, bool irreport,
                      uint32_t irdepth, const uint8_t *want, size_t want_len)
{
    uint8_t buf[ETRACE_MAX_PACKET];
    ETracePacker pk;
    size_t n;

    g_assert_true(etrace_packer_init(&pk, p));
    g_assert_true(pk.fast);
    n = etrace_packet_pack_f12(&pk, format, branches, branch_map, address,
                               notify, updiscon, irreport, irdepth, buf);
    g_assert_cmpmem(buf, n, want, want_len);
}

/* Spec example 2: a ret, format 2, address 0x80001a88 (full address). */
static void test_example_ret_format2(void)
{
    static const uint8_t want[] = { 0x05, 0x12, 0x35, 0x00, 0x00, 0x01 };
    ETraceParams p = params64();
    ETraceOptions o = { .full_address = true };
    ETracePacket pkt = { .format = 2, .address = 0x80001a88 }, u;
    bool notify, updiscon, irreport;

    etrace_packet_set_flags(&p, &pkt, false, false, false, 0);
    check_bytes(&p, &o, &pkt, want, sizeof(want), &u);
    check_f12(&p, 2, 0, 0, 0x80001a88, false, false, false, 0, want,
              sizeof(want));
    g_assert_cmpint(u.format, ==, 2);
    g_assert_cmphex(u.address, ==, 0x80001a88);
    g_assert_true(u.has_address);
    etrace_packet_get_flags(&p, &u, &notify, &updiscon, &irreport);
    g_assert_false(notify || updiscon || irreport);
}

/* Spec examples 3 and 4: format 1 with 1 and 3 branches. */
static void test_example_branches_format1(void)
{
    static const uint8_t one[] = { 0x03, 0x05, 0x58, 0x05 };
    static const uint8_t three[] = { 0x03, 0x8d, 0x91, 0x02 };
    ETraceParams p = params64();
    ETracePacket pkt = { .format = 1, .branches = 1, .branch_map = 0,
                       .address = 0xab0 }, u;

    etrace_packet_set_flags(&p, &pkt, false, false, false, 0);
    check_bytes(&p, NULL, &pkt, one, sizeof(one), &u);
    check_f12(&p, 1, 1, 0, 0xab0, false, false, false, 0, one, sizeof(one));
    g_assert_cmpuint(u.branches, ==, 1);
    g_assert_cmphex(u.branch_map, ==, 0);
    g_assert_cmphex(u.address, ==, 0xab0);

    pkt.branches = 3;
    pkt.branch_map = 0x3;
    pkt.address = 0x148;
    etrace_packet_set_flags(&p, &pkt, false, false, false, 0);
    check_bytes(&p, NULL, &pkt, three, sizeof(three), &u);
    check_f12(&p, 1, 3, 3, 0x148, false, false, false, 0, three,
              sizeof(three));
    g_assert_cmpuint(u.branches, ==, 3);
    g_assert_cmphex(u.branch_map, ==, 0x3);
    g_assert_cmphex(u.address, ==, 0x148);
}

/*
 * Spec example 5: a negative difference; notify and updiscon repeat the
 * address MSB (the example's "updiscon=1"), irdepth repeats updiscon.
 */
static void test_example_negative_delta(void)
{
    static const uint8_t want[] = { 0x03, 0x09, 0xe9, 0xfd };
    ETraceParams p = params64();
    ETracePacket pkt = { .format = 1, .branches = 2, .branch_map = 0x2,
                       .address = -(uint64_t)0x10c }, u;

    etrace_packet_set_flags(&p, &pkt, false, false, false, 0);
    g_assert_true(pkt.notify && pkt.updiscon && pkt.irreport);
    g_assert_cmphex(pkt.irdepth, ==, 0x1ff);
    check_bytes(&p, NULL, &pkt, want, sizeof(want), &u);
    check_f12(&p, 1, 2, 2, -(uint64_t)0x10c, false, false, false, 0, want,
              sizeof(want));
    g_assert_cmphex(u.address, ==, 0xfffffffffffffef4ull);
    g_assert_true(u.updiscon);
    g_assert_cmphex(u.irdepth, ==, 0x1ff);
}

static void test_format3_layouts(void)
{
    static const uint8_t sync32[] = { 0x05, 0x73, 0x00, 0x00, 0x00, 0xc0 };
    static const uint8_t exc11[] = {
        0x0e, 0x77, 0x02, 0x40, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00,
        0x8d, 0x04, 0x00, 0x20 };
    static const uint8_t exc11_ie[] = { 0x04, 0x37, 0x05, 0x00, 0x08 };
    static const uint8_t irq20[] = {
        0x06, 0x77, 0xc7, 0x80, 0x00, 0x00, 0x40 };
    static const uint8_t support[] = { 0x02, 0x1f, 0x50 };
    static const uint8_t support20[] = { 0x02, 0x1f, 0x50 };
    ETraceParams p32, p = params64();
    ETraceOptions ie = { .implicit_exception = true };
    ETraceOptions o = { .implicit_return = ETRACE_IR_RETURN_STACK,
                        .jump_target_cache = true };
    ETracePacket pkt, u;

    /* 6.2 on RV32: the address MSB is the packet's sign bit. */
    etrace_params_default(&p32, 32);
    pkt = (ETracePacket){ .format = 3, .subformat = 0, .branch = true,
                        .privilege = 3, .address = 0x80000000 };
    check_bytes(&p32, NULL, &pkt, sync32, sizeof(sync32), &u);
    g_assert_cmphex(u.address, ==, 0x80000000);
    g_assert_cmpuint(u.privilege, ==, 3);
    g_assert_true(u.branch && u.has_address);

    /* 6.3: illegal instruction, tvalepc carries the EPC. */
    pkt = (ETracePacket){ .format = 3, .subformat = 1, .branch = true,
                        .privilege = 3, .ecause = 2,
                        .address = 0x80000100, .tvalepc = 0x80001234 };
    check_bytes(&p, NULL, &pkt, exc11, sizeof(exc11), &u);
    g_assert_cmphex(u.tvalepc, ==, 0x80001234);
    g_assert_cmphex(u.address, ==, 0x80000100);
    g_assert_cmpuint(u.ecause, ==, 2);

    /* Implicit exception mode: no address field (3.2.3). */
    pkt = (ETracePacket){ .format = 3, .subformat = 1, .branch = true,
                        .privilege = 1, .ecause = 5, .tvalepc = 0x1000 };
    check_bytes(&p, &ie, &pkt, exc11_ie, sizeof(exc11_ie), &u);
    g_assert_cmphex(u.tvalepc, ==, 0x1000);
    g_assert_cmphex(u.address, ==, 0);

    /* 2.0: thaddr, and no tval for interrupts. */
    p.arch = ETRACE_ARCH_2_0;
    pkt = (ETracePacket){ .format = 3, .subformat = 1, .branch = true,
                        .privilege = 3, .ecause = 7, .interrupt = true,
                        .thaddr = true, .address = 0x80000100,
                        .tvalepc = 0x1234 };
    check_bytes(&p, NULL, &pkt, irq20, sizeof(irq20), &u);
    g_assert_true(u.interrupt && u.thaddr);
    g_assert_cmphex(u.tvalepc, ==, 0);

    /* 6.5: support packet, options in the layout of etrace.h. */
    p.arch = ETRACE_ARCH_1_1;
    pkt = (ETracePacket){ .format = 3, .subformat = 3, .enable = true,
                        .options = etrace_options_pack(&p, &o) };
    g_assert_cmphex(pkt.options, ==, 0x50);
    check_bytes(&p, NULL, &pkt, support, sizeof(support), &u);
    g_assert_true(u.enable);
    g_assert_cmphex(u.options, ==, 0x50);

    /* 2.0 adds denable and dloss (0 without data trace). */
    p.arch = ETRACE_ARCH_2_0;
    check_bytes(&p, NULL, &pkt, support20, sizeof(support20), &u);
    g_assert_cmphex(u.options, ==, 0x50);
}

static void test_format0_and_full_map(void)
{
    static const uint8_t count[] = { 0x01, 0x28 };
    static const uint8_t jtc[] = { 0x02, 0x2c, 0x11 };
    static const uint8_t full_nt[] = { 0x01, 0x81 };
    static const uint8_t full_t[] = { 0x01, 0x01 };
    ETraceParams p = params64();
    ETracePacket pkt, u;
    bool n, d, r;

    pkt = (ETracePacket){ .format = 0, .subformat = 0, .branch_count = 5 };
    check_bytes(&p, NULL, &pkt, count, sizeof(count), &u);
    g_assert_cmpuint(u.branch_count, ==, 5);
    g_assert_false(u.has_address);

    pkt = (ETracePacket){ .format = 0, .subformat = 1, .index = 5,
                        .branches = 2, .branch_map = 1 };
    etrace_packet_set_flags(&p, &pkt, false, false, false, 0);
    check_bytes(&p, NULL, &pkt, jtc, sizeof(jtc), &u);
    g_assert_cmpuint(u.index, ==, 5);
    g_assert_cmpuint(u.branches, ==, 2);
    etrace_packet_get_flags(&p, &u, &n, &d, &r);
    g_assert_false(r);

    /* Table 6.7: 31 branches without an address compress to one byte. */
    pkt = (ETracePacket){ .format = 1, .branches = 0,
                        .branch_map = 0x7fffffff };
    check_bytes(&p, NULL, &pkt, full_nt, sizeof(full_nt), &u);
    g_assert_cmphex(u.branch_map, ==, 0x7fffffff);
    g_assert_false(u.has_address);
    pkt.branch_map = 0;
    check_bytes(&p, NULL, &pkt, full_t, sizeof(full_t), &u);
}

/* irreport/irdepth against a failed prediction and a depth report. */
static void test_flag_encoding(void)
{
    ETraceParams p = params64();
    ETracePacket pkt = { .format = 2, .address = 0x40 }, u;
    uint8_t buf[ETRACE_MAX_PACKET];
    const char *err;
    bool n, d, r;
    size_t len;

    etrace_packet_set_flags(&p, &pkt, true, true, true, 5);
    g_assert_true(pkt.notify && !pkt.updiscon && pkt.irreport);
    g_assert_cmpuint(pkt.irdepth, ==, 5);
    len = etrace_packet_pack(&p, NULL, &pkt, buf);
    g_assert_cmpint(etrace_packet_unpack(&p, NULL, buf, len, &u, &err), ==,
                    len);
    etrace_packet_get_flags(&p, &u, &n, &d, &r);
    g_assert_true(n && d && r);
    g_assert_cmpuint(u.irdepth, ==, 5);
    g_assert_cmpuint(etrace_irdepth_width(&p), ==, 9);
}

/* ---------------------------------------------------------- round trip */

static uint64_t rnd64(GRand *r)
{
    return (uint64_t)g_rand_int(r) << 32 | g_rand_int(r);
}

static unsigned legal_privilege(GRand *r, unsigned width)
{
    static const unsigned privs[] = { 0, 1, 3, 4, 5 };
    unsigned v = privs[g_rand_int_range(r, 0, 5)];

    return v & ((1u << width) - 1);
}

/* A random packet of a legal layout, only with fields it carries. */
static ETracePacket random_packet(GRand *r, const ETraceParams *p,
                                  const ETraceOptions *o)
{
    uint64_t amask = p->iaddress_width_p == 64 ? UINT64_MAX :
                     (UINT64_C(1) << p->iaddress_width_p) - 1;
    uint64_t addr = rnd64(r) & amask & ~((UINT64_C(1) << 1) - 1);
    ETracePacket pkt = { .format = g_rand_int_range(r, 0, 4) };
    bool v2 = p->arch == ETRACE_ARCH_2_0;
    unsigned w;

    if (g_rand_boolean(r)) {    /* small values compress */
        addr = (g_rand_int(r) & 0xffe) * (g_rand_boolean(r) ? 1 : -1);
        addr &= amask;
    }
    switch (pkt.format) {
    case 3:
        pkt.subformat = g_rand_int_range(r, 0, 4);
        if (pkt.subformat == 3) {
            ETraceOptions ro = { .full_address = g_rand_boolean(r),
                                 .sijump = g_rand_boolean(r),
                                 .implicit_return = g_rand_int_range(r, 0, 3),
                                 .branch_prediction = g_rand_boolean(r) };
            pkt.enable = g_rand_boolean(r);
            pkt.qual_status = g_rand_int_range(r, 0, 4);
            pkt.options = etrace_options_pack(p, &ro);
            break;
        }
        pkt.privilege = legal_privilege(r, p->privilege_width_p);
        pkt.context = p->context_width_p == 64 ? rnd64(r) :
                    rnd64(r) & ((UINT64_C(1) << p->context_width_p) - 1);
        if (pkt.subformat == 2) {
            break;
        }
        pkt.branch = g_rand_boolean(r);
        pkt.address = addr;
        pkt.has_address = true;
        if (pkt.subformat == 1) {
            pkt.ecause = g_rand_int_range(r, 0, 1 << p->ecause_width_p);
            pkt.interrupt = g_rand_boolean(r);
            pkt.thaddr = v2 && g_rand_boolean(r);
            pkt.tvalepc = v2 && pkt.interrupt ? 0 : rnd64(r) & amask;
            if (o->implicit_exception && (!v2 || pkt.thaddr)) {
                pkt.address = 0;
            }
            pkt.has_address = !v2 || pkt.thaddr;
        }
        break;
    case 0:
        pkt.subformat = g_rand_int_range(r, 0, 2);
        if (pkt.subformat == 1) {
            pkt.index = g_rand_int_range(r, 0, 1 << p->cache_size_p);
            pkt.branches = g_rand_int_range(r, 0, 32);
            w = pkt.branches ? 31 : 0;
            pkt.branch_map = g_rand_int(r) & ((1ull << w) - 1) &
                           ((1ull << pkt.branches) - 1);
            etrace_packet_set_flags(p, &pkt, false, false, g_rand_boolean(r),
                                    g_rand_int_range(r, 0, 17));
            pkt.has_address = true;
            break;
        }
        pkt.branch_count = g_rand_int(r);
        pkt.branch_fmt = g_rand_int_range(r, 0, 3);
        pkt.branch_fmt += pkt.branch_fmt != 0;     /* 0, 2 or 3 */
        if (pkt.branch_fmt == 0) {
            break;
        }
        /* the address tail of formats 0, 1 and 2 */
        /* fall through */
    case 2:
    case 1:
        if (pkt.format == 1) {
            pkt.branches = g_rand_int_range(r, 0, 32);
            pkt.branch_map = g_rand_int(r) &
                           (pkt.branches ? (1u << pkt.branches) - 1 : 0x7fffffff);
            if (pkt.branches == 0) {
                break;
            }
        }
        pkt.address = addr;
        pkt.has_address = true;
        etrace_packet_set_flags(p, &pkt, g_rand_boolean(r), g_rand_boolean(r),
                                g_rand_boolean(r), g_rand_int_range(r, 0, 17));
        break;
    }
    return pkt;
}

static void assert_same_packet(const ETracePacket *a, const ETracePacket *b)
{
    g_assert_cmpuint(a->format, ==, b->format);
    g_assert_cmpuint(a->subformat, ==, b->subformat);
    g_assert_cmpint(a->branch, ==, b->branch);
    g_assert_cmpuint(a->privilege, ==, b->privilege);
    g_assert_cmphex(a->context, ==, b->context);
    g_assert_cmpuint(a->ecause, ==, b->ecause);
    g_assert_cmpint(a->interrupt, ==, b->interrupt);
    g_assert_cmpint(a->thaddr, ==, b->thaddr);
    g_assert_cmphex(a->tvalepc, ==, b->tvalepc);
    g_assert_cmpint(a->enable, ==, b->enable);
    g_assert_cmpuint(a->encoder_mode, ==, b->encoder_mode);
    g_assert_cmpuint(a->qual_status, ==, b->qual_status);
    g_assert_cmphex(a->options, ==, b->options);
    g_assert_cmphex(a->address, ==, b->address);
    g_assert_cmpint(a->notify, ==, b->notify);
    g_assert_cmpint(a->updiscon, ==, b->updiscon);
    g_assert_cmpint(a->irreport, ==, b->irreport);
    g_assert_cmphex(a->irdepth, ==, b->irdepth);
    g_assert_cmpuint(a->branches, ==, b->branches);
    g_assert_cmphex(a->branch_map, ==, b->branch_map);
    g_assert_cmpuint(a->branch_count, ==, b->branch_count);
    g_assert_cmpuint(a->branch_fmt, ==, b->branch_fmt);
    g_assert_cmpuint(a->index, ==, b->index);
    g_assert_cmpint(a->has_address, ==, b->has_address);
    g_assert_false(a->padding);
}

static void roundtrip(const ETraceParams *p, const ETraceOptions *o,
                      GRand *r, unsigned count)
{
    for (unsigned i = 0; i < count; i++) {
        ETracePacket pkt = random_packet(r, p, o), u;
        uint8_t buf[ETRACE_MAX_PACKET], again[ETRACE_MAX_PACKET];
        const char *err = NULL;
        size_t n = etrace_packet_pack(p, o, &pkt, buf);
        int used;

        g_assert_cmpuint(n, >=, 2 + (p->src_bits + 7) / 8);
        g_assert_cmpuint(n, <=, ETRACE_MAX_PACKET);
        used = etrace_packet_unpack(p, o, buf, n, &u, &err);
        if (used != (int)n) {
            g_test_message("format %u.%u: %s", pkt.format, pkt.subformat, err);
        }
        g_assert_cmpint(used, ==, n);
        g_assert_cmpuint(u.src_id, ==, p->src_id);
        assert_same_packet(&u, &pkt);
        /* Every strict prefix is incomplete. */
        for (size_t cut = 1; cut < n; cut++) {
            g_assert_cmpint(etrace_packet_unpack(p, o, buf, cut, &u, &err),
                            ==, 0);
        }
        g_assert_cmpuint(etrace_packet_pack(p, o, &pkt, again), ==, n);
        g_assert_cmpmem(again, n, buf, n);
    }
}

static void test_roundtrip_random(void)
{
    GRand *r = g_rand_new_with_seed(1);
    static const ETraceOptions opts[] = {
        { 0 },
        { .implicit_exception = true },
        { .full_address = true, .implicit_exception = true },
    };

    for (unsigned arch = 0; arch < 2; arch++) {
        for (unsigned xlen = 32; xlen <= 64; xlen += 32) {
            for (unsigned i = 0; i < G_N_ELEMENTS(opts); i++) {
                ETraceParams p;

                etrace_params_default(&p, xlen);
                p.arch = arch;
                roundtrip(&p, &opts[i], r, 3000);
                /* Widest fields: context, index source ID. */
                p.context_width_p = 64;
                p.src_bits = 12;
                p.src_id = 0xabc;
                roundtrip(&p, &opts[i], r, 3000);
            }
        }
    }
    g_rand_free(r);
}

/* Format 0 subformat implied by the one optional format enabled. */
static void test_implied_f0_subformat(void)
{
    ETraceParams p = params64();
    ETraceOptions jtc = { .jump_target_cache = true };
    ETraceOptions both = { .jump_target_cache = true,
                           .branch_prediction = true };
    ETracePacket pkt = { .format = 0, .subformat = 1, .index = 3 }, u;
    uint8_t buf[ETRACE_MAX_PACKET];
    const char *err = NULL;
    size_t n;

    p.f0s_width_p = 0;
    n = etrace_packet_pack(&p, &jtc, &pkt, buf);
    g_assert_cmpuint(n, >, 0);
    g_assert_cmpint(etrace_packet_unpack(&p, &jtc, buf, n, &u, &err), ==, n);
    g_assert_cmpuint(u.subformat, ==, 1);
    g_assert_cmpuint(u.index, ==, 3);
    g_assert_cmpuint(etrace_packet_pack(&p, &both, &pkt, buf), ==, 0);
    g_assert_cmpint(etrace_packet_unpack(&p, &both, buf, n, &u, &err), ==,
                    -1);
    g_assert_nonnull(err);
}

/* ------------------------------------------------------- bad input */

static void expect_error(const ETraceParams *p, const uint8_t *buf,
                         size_t len)
{
    ETracePacket u;
    const char *err = NULL;

    g_assert_cmpint(etrace_packet_unpack(p, NULL, buf, len, &u, &err), ==,
                    -1);
    g_assert_nonnull(err);
    g_test_message("rejected: %s", err);
}

static void test_rejects(void)
{
    ETraceParams p = params64();
    /* header with flow bits but length 0 */
    static const uint8_t zero_len[] = { 0x20 };
    /* support packet (19 bits) in 4 bytes, correctly sign-extended */
    static const uint8_t too_long[] = { 0x04, 0x1f, 0x10, 0x00, 0x00 };
    /* support packet whose bit 23 is not a copy of bit 18 */
    static const uint8_t bad_pad[] = { 0x03, 0x1f, 0x50, 0x80 };
    /* format 0 subformat 0 with branch_fmt 01 */
    static const uint8_t bad_fmt[] = { 0x05, 0, 0, 0, 0, 0x08 };
    /* support packet with encoder_mode 1 */
    static const uint8_t bad_mode[] = { 0x01, 0x3f };
    /* support packet with implicit_return 3 */
    static const uint8_t bad_ir[] = { 0x02, 0x1f, 0x18 };
    /* sync with privilege 2 */
    static const uint8_t bad_priv[] = { 0x01, 0x53 };

    expect_error(&p, zero_len, sizeof(zero_len));
    expect_error(&p, too_long, sizeof(too_long));
    expect_error(&p, bad_pad, sizeof(bad_pad));
    expect_error(&p, bad_fmt, sizeof(bad_fmt));
    expect_error(&p, bad_mode, sizeof(bad_mode));
    expect_error(&p, bad_ir, sizeof(bad_ir));
    expect_error(&p, bad_priv, sizeof(bad_priv));
    /* A mode the hardware lacks: branch prediction without a predictor. */
    p.bpred_size_p = 0;
    expect_error(&p, (const uint8_t[]){ 0x02, 0x1f, 0x20 }, 3);
    /* Invalid parameters are refused by both directions. */
    p.context_width_p = 65;
    expect_error(&p, bad_priv, sizeof(bad_priv));
    {
        ETracePacket pkt = { .format = 2 };
        uint8_t buf[ETRACE_MAX_PACKET];

        g_assert_cmpuint(etrace_packet_pack(&p, NULL, &pkt, buf), ==, 0);
    }
}

/* Zero padding, timestamps, source index, partial packets. */
static void test_encapsulation(void)
{
    static const uint8_t stream[] = {
        0x00, 0x00, 0x00,                   /* padding */
        0x83, 0x34, 0x12, 0x05, 0x58, 0x05, /* timestamped example 3 */
    };
    ETraceParams p = params64();
    ETracePacket pkt = { .format = 2, .address = 8 }, u;
    uint8_t buf[ETRACE_MAX_PACKET];
    const char *err = NULL;
    size_t n;

    g_assert_cmpint(etrace_packet_unpack(&p, NULL, stream, sizeof(stream),
                                         &u, &err), ==, 3);
    g_assert_true(u.padding);
    g_assert_cmpint(etrace_packet_unpack(&p, NULL, stream + 3, 6, &u, &err),
                    ==, 6);
    g_assert_false(u.padding);
    g_assert_cmphex(u.address, ==, 0xab0);
    g_assert_cmpint(etrace_packet_unpack(&p, NULL, stream + 3, 5, &u, &err),
                    ==, 0);
    g_assert_cmpint(etrace_packet_unpack(&p, NULL, stream, 0, &u, &err),
                    ==, 0);

    p.src_bits = 12;
    p.src_id = 0x5a3;
    n = etrace_packet_pack(&p, NULL, &pkt, buf);
    g_assert_cmpuint(n, ==, 4);
    g_assert_cmphex(buf[0], ==, 1);
    g_assert_cmphex(buf[1], ==, 0xa3);
    g_assert_cmphex(buf[2], ==, 0x05);
    g_assert_cmpint(etrace_packet_unpack(&p, NULL, buf, n, &u, &err), ==, 4);
    g_assert_cmpuint(u.src_id, ==, 0x5a3);
    g_assert_cmphex(u.address, ==, 8);
}

/* Random bytes never crash, hang or claim more than they were given. */
static void test_garbage(void)
{
    GRand *r = g_rand_new_with_seed(7);
    ETraceParams p = params64();
    ETraceOptions o = { .implicit_exception = true };

    for (unsigned i = 0; i < 200000; i++) {
        uint8_t buf[40];
        size_t len = g_rand_int_range(r, 0, sizeof(buf) + 1);
        ETracePacket u;
        const char *err = NULL;
        int used;

        for (size_t j = 0; j < len; j++) {
            buf[j] = g_rand_int(r);
        }
        p.arch = i & 1;
        used = etrace_packet_unpack(&p, (i & 2) ? &o : NULL, buf, len, &u,
                                    &err);
        g_assert_cmpint(used, >=, -1);
        g_assert_cmpint(used, <=, (int)len);
        g_assert_true(used != -1 || err != NULL);
    }
    g_rand_free(r);
}

static void test_params(void)
{
    ETraceParams p = params64();
    ETraceOptions o = { .implicit_return = ETRACE_IR_CALL_COUNTER,
                        .branch_prediction = true, .sijump = true }, back;
    const char *err = NULL;

    g_assert_true(etrace_params_check(&p, &err));
    etrace_params_default(&p, 32);
    g_assert_true(etrace_params_check(&p, &err));
    g_assert_cmpuint(p.privilege_width_p, ==, 3);
    g_assert_cmpuint(p.ecause_width_p, ==, 6);
    etrace_options_unpack(&p, etrace_options_pack(&p, &o), &back);
    g_assert_true(back.sijump && back.branch_prediction);
    g_assert_cmpint(back.implicit_return, ==, ETRACE_IR_CALL_COUNTER);
    /* Modes without hardware are never on. */
    p.call_counter_size_p = 0;
    p.sijump_p = false;
    g_assert_cmphex(etrace_options_pack(&p, &o), ==, 0x20);
    p.ecause_width_p = 40;
    g_assert_false(etrace_params_check(&p, &err));
    g_assert_nonnull(err);
}

/* Parameter sets for the fast packers: the last one is too wide. */
static ETraceParams fast_params(unsigned i)
{
    ETraceParams p;

    etrace_params_default(&p, i & 1 ? 32 : 64);
    switch (i / 2) {
    case 1:
        p.iaddress_lsb_p = 0;
        p.src_bits = 12;
        p.src_id = 0xabc;
        break;
    case 2:
        p.iaddress_width_p = 40;
        p.iaddress_lsb_p = 2;
        p.src_bits = 5;
        p.src_id = 0x15;
        p.return_stack_size_p = 0;
        p.call_counter_size_p = 1;
        break;
    case 3:
        p.cache_size_p = 16;
        p.f0s_width_p = 0;
        break;
    case 4:
        /* format 1 reaches 136 bits: the generic packer takes it */
        p.iaddress_width_p = 64;
        p.iaddress_lsb_p = 0;
        p.return_stack_size_p = 15;
        p.call_counter_size_p = 15;
        break;
    }
    return p;
}

#define FAST_PARAM_SETS 10

/* A value that is often 0, all ones, a power of two or near the sign. */
static uint64_t edgy(GRand *r)
{
    uint64_t v = (uint64_t)g_rand_int(r) << 32 | g_rand_int(r);

    switch (g_rand_int_range(r, 0, 6)) {
    case 0:
        return 0;
    case 1:
        return UINT64_MAX;
    case 2:
        return UINT64_C(1) << g_rand_int_range(r, 0, 64);
    case 3:
        return v >> g_rand_int_range(r, 0, 64);
    case 4:
        return -(v >> g_rand_int_range(r, 0, 64));
    default:
        return v;
    }
}

/*
 * etrace_packet_pack_f12() writes what etrace_packet_set_flags() and
 * etrace_packet_pack() write, for every format 1 and 2 (and falls back
 * for anything else), and so does etrace_packet_pack_f12_plain() where
 * it applies.
 */
static void test_fast_f12(void)
{
    GRand *r = g_rand_new_with_seed(11);

    for (unsigned ps = 0; ps < FAST_PARAM_SETS; ps++) {
        ETraceParams p = fast_params(ps);
        ETracePacker pk;

        g_assert_true(etrace_packer_init(&pk, &p));
        g_assert_true(pk.fast == (ps / 2 != 4));
        for (unsigned i = 0; i < 20000; i++) {
            ETracePacket pkt = {
                .format = g_rand_int_range(r, 0, 10) ? 1 + (i & 1) :
                          g_rand_int(r) % 4,
                .branches = g_rand_int_range(r, 0, 10) ?
                            g_rand_int(r) % 32 : g_rand_int(r),
                .branch_map = edgy(r),
                .address = edgy(r),
            };
            bool notify = g_rand_int_range(r, 0, 4) == 0;
            bool updiscon = g_rand_int_range(r, 0, 4) == 0;
            bool irreport = g_rand_int_range(r, 0, 4) == 0;
            uint32_t irdepth = edgy(r);
            uint8_t want[ETRACE_MAX_PACKET], got[ETRACE_MAX_PACKET];
            size_t want_n, got_n;

            got_n = etrace_packet_pack_f12(&pk, pkt.format, pkt.branches,
                                           pkt.branch_map, pkt.address, notify,
                                           updiscon, irreport, irdepth, got);
            etrace_packet_set_flags(&p, &pkt, notify, updiscon, irreport,
                                    irdepth);
            want_n = etrace_packet_pack(&p, NULL, &pkt, want);
            g_assert_cmpmem(got, got_n, want, want_n);
            if (notify || updiscon || irreport) {
                continue;
            }
            /* the inline packer: the same, or 0 where it does not apply */
            got_n = etrace_packet_pack_f12_plain(&pk, pkt.format,
                                                 pkt.branches,
                                                 pkt.branch_map,
                                                 pkt.address, got);
            if (got_n) {
                g_assert_cmpmem(got, got_n, want, want_n);
            } else {
                g_assert_true(!pk.fast || pkt.format < 1 || pkt.format > 2 ||
                              (pkt.format == 1 &&
                               (pkt.branches == 0 || pkt.branches > 31)));
            }
        }
    }
    g_rand_free(r);
}

/* Likewise etrace_packet_pack_f01(), and known answers. */
static void test_fast_f01(void)
{
    /* index 5, branches 2, map 01 (test_format0_and_full_map) */
    static const uint8_t two[] = { 0x02, 0x2c, 0x11 };
    /* index 5, branches 3, map 101; irreport, irdepth: copies of 1 */
    static const uint8_t three[] = { 0x02, 0xac, 0xd1 };
    static const ETraceOptions jtc = { .jump_target_cache = true };
    static const ETraceOptions both = { .jump_target_cache = true,
                                        .branch_prediction = true };
    GRand *r = g_rand_new_with_seed(12);
    ETraceParams p = params64();
    uint8_t buf[ETRACE_MAX_PACKET];
    ETracePacker pk;

    g_assert_true(etrace_packer_init(&pk, &p));
    g_assert_cmpmem(buf, etrace_packet_pack_f01(&pk, NULL, 5, 2, 1, false, 0,
                                                buf), two, sizeof(two));
    g_assert_cmpmem(buf, etrace_packet_pack_f01(&pk, NULL, 5, 3, 5, false, 0,
                                                buf), three, sizeof(three));
    for (unsigned ps = 0; ps < FAST_PARAM_SETS; ps++) {
        p = fast_params(ps);
        g_assert_true(etrace_packer_init(&pk, &p));
        for (unsigned i = 0; i < 20000; i++) {
            const ETraceOptions *o = i % 3 == 0 ? &jtc :
                                     i % 3 == 1 ? &both : NULL;
            ETracePacket pkt = {
                .format = 0, .subformat = 1, .index = edgy(r),
                .branches = g_rand_int_range(r, 0, 10) ?
                            g_rand_int(r) % 32 : g_rand_int(r),
                .branch_map = edgy(r),
            };
            bool irreport = g_rand_boolean(r);
            uint32_t irdepth = edgy(r);
            uint8_t want[ETRACE_MAX_PACKET];
            size_t want_n, got_n;

            got_n = etrace_packet_pack_f01(&pk, o, pkt.index, pkt.branches,
                                           pkt.branch_map, irreport, irdepth,
                                           buf);
            etrace_packet_set_flags(&p, &pkt, false, false, irreport, irdepth);
            want_n = etrace_packet_pack(&p, o, &pkt, want);
            g_assert_cmpmem(buf, got_n, want, want_n);
        }
    }
    g_rand_free(r);
}

/* Likewise etrace_packet_pack_f00(), and known answers. */
static void test_fast_f00(void)
{
    /* 00, 0, count 0, branch_fmt 00: one zero byte */
    static const uint8_t none[] = { 0x01, 0x00 };
    /* count 0x1234: 0x1234 << 3, its top bit 15, then a 0 */
    static const uint8_t some[] = { 0x03, 0xa0, 0x91, 0x00 };
    static const ETraceOptions bpred = { .branch_prediction = true };
    GRand *r = g_rand_new_with_seed(13);
    ETraceParams p = params64();
    uint8_t buf[ETRACE_MAX_PACKET];
    ETracePacker pk;

    g_assert_true(etrace_packer_init(&pk, &p));
    g_assert_cmpmem(buf, etrace_packet_pack_f00(&pk, &bpred, 0, buf),
                    none, sizeof(none));
    g_assert_cmpmem(buf, etrace_packet_pack_f00(&pk, &bpred, 0x1234, buf),
                    some, sizeof(some));
    for (unsigned ps = 0; ps < FAST_PARAM_SETS; ps++) {
        p = fast_params(ps);
        g_assert_true(etrace_packer_init(&pk, &p));
        for (unsigned i = 0; i < 20000; i++) {
            ETracePacket pkt = {
                .format = 0, .subformat = 0, .branch_count = edgy(r),
            };
            uint8_t want[ETRACE_MAX_PACKET];
            size_t want_n, got_n;

            got_n = etrace_packet_pack_f00(&pk, &bpred, pkt.branch_count,
                                           buf);
            want_n = etrace_packet_pack(&p, &bpred, &pkt, want);
            g_assert_cmpmem(buf, got_n, want, want_n);
        }
    }
    g_rand_free(r);
}

/*
 * The discovery registers carry every parameter they name (the device
 * writes them, guests and the decoder read them): known values of the
 * layout in docs/rvtrace.rst, and a round trip.
 */
static void test_discovery(void)
{
    ETraceParams p, q;
    uint32_t d0, d1;

    etrace_params_default(&p, 32);
    p.iaddress_lsb_p = 1;
    p.ecause_width_p = 6;
    p.privilege_width_p = 3;
    p.context_width_p = 9;
    p.call_counter_size_p = 5;
    p.return_stack_size_p = 3;
    p.bpred_size_p = 7;
    p.cache_size_p = 4;
    p.sijump_p = true;
    p.f0s_width_p = 1;
    p.arch = ETRACE_ARCH_2_0;
    etrace_params_to_discovery(&p, &d0, &d1);
    g_assert_cmphex(d0, ==, 0x09306120);
    g_assert_cmphex(d1, ==, 0x00134735);
    etrace_params_from_discovery(&q, d0, d1);
    g_assert_cmpuint(q.iaddress_width_p, ==, 32);
    g_assert_cmpuint(q.iaddress_lsb_p, ==, 1);
    g_assert_cmpuint(q.ecause_width_p, ==, 6);
    g_assert_cmpuint(q.privilege_width_p, ==, 3);
    g_assert_cmpuint(q.context_width_p, ==, 9);
    g_assert_cmpuint(q.call_counter_size_p, ==, 5);
    g_assert_cmpuint(q.return_stack_size_p, ==, 3);
    g_assert_cmpuint(q.bpred_size_p, ==, 7);
    g_assert_cmpuint(q.cache_size_p, ==, 4);
    g_assert_true(q.sijump_p);
    g_assert_cmpuint(q.f0s_width_p, ==, 1);
    g_assert_cmpuint(q.arch, ==, ETRACE_ARCH_2_0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/etrace-packet/example/ret-format2",
                    test_example_ret_format2);
    g_test_add_func("/etrace-packet/example/branches-format1",
                    test_example_branches_format1);
    g_test_add_func("/etrace-packet/example/negative-delta",
                    test_example_negative_delta);
    g_test_add_func("/etrace-packet/format3", test_format3_layouts);
    g_test_add_func("/etrace-packet/discovery", test_discovery);
    g_test_add_func("/etrace-packet/format0-full-map",
                    test_format0_and_full_map);
    g_test_add_func("/etrace-packet/flags", test_flag_encoding);
    g_test_add_func("/etrace-packet/roundtrip", test_roundtrip_random);
    g_test_add_func("/etrace-packet/f0-implied-subformat",
                    test_implied_f0_subformat);
    g_test_add_func("/etrace-packet/rejects", test_rejects);
    g_test_add_func("/etrace-packet/encapsulation", test_encapsulation);
    g_test_add_func("/etrace-packet/garbage", test_garbage);
    g_test_add_func("/etrace-packet/params", test_params);
    g_test_add_func("/etrace-packet/fast-f12", test_fast_f12);
    g_test_add_func("/etrace-packet/fast-f00", test_fast_f00);
    g_test_add_func("/etrace-packet/fast-f01", test_fast_f01);
    return g_test_run();
}

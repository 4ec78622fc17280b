/*
 * Unit tests of E-trace data trace packets (chapter 7) and their
 * compression (etrace-data.h).
 *
 * Known answers were assembled bit by bit from tables 7.1, 7.6 and 7.11
 * by a separate script (fields LSB first in table order, then the
 * sign-based compression of chapter 6).  The first is also what the
 * trace task group's reference data encoder (referenceFlow,
 * data_encoder_model.py) writes for the same load, but for the diff code:
 * it sends a constant 1 where this packet is full (0).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <glib.h>
#include "etrace-data.h"

static ETraceParams params(unsigned xlen)
{
    ETraceParams p;

    etrace_params_default(&p, xlen);
    return p;
}

static const ETraceOptions data_on = { .data = true };

/*
 * Pack a with the encoder's state, compare with want, unpack the bytes
 * with the decoder's state and compare with a.
 */
static void check(const ETraceParams *p, const ETraceOptions *o,
                  ETraceDataState *enc, ETraceDataState *dec,
                  const ETraceDataAccess *a, const uint8_t *want,
                  size_t want_len)
{
    uint8_t buf[ETRACE_MAX_PACKET];
    ETraceDataAccess back;
    const char *err = NULL;
    size_t n = etrace_data_pack(p, o, enc, a, buf);

    g_assert_cmpmem(buf, n, want, want_len);
    g_assert_cmpint(etrace_data_unpack(p, o, dec, buf, n, &back, &err), ==,
                    n);
    g_assert_null(err);
    g_assert_cmpuint(back.dtype, ==, a->dtype);
    g_assert_cmpuint(back.dsize, ==, a->dsize);
    g_assert_cmphex(back.daddr, ==, a->daddr);
    g_assert_cmphex(back.data, ==, a->data);
    g_assert_cmphex(back.operand, ==, a->operand);
}

/* Table 7.1: a word load after a sync, RV32. */
static void test_load_full(void)
{
    static const uint8_t want[] = {
        0x69, 0x90, 0xf1, 0xac, 0x68, 0x24, 0x00, 0x08, 0x00, 0x40 };
    ETraceParams p = params(32);
    ETraceDataState enc = { 0 }, dec = { 0 };
    ETraceDataAccess a = { .dtype = ETRACE_DTYPE_LOAD, .dsize = 2,
                           .daddr = 0x80001000, .data = 0x12345678 };

    check(&p, &data_on, &enc, &dec, &a, want, sizeof(want));
}

/*
 * A double-word store, full, then the next one 8 bytes on: the address
 * difference in double words (1) and the data XOR (1, one byte) instead
 * of 8 bytes of full or differential data.
 */
static void test_store_differential(void)
{
    static const uint8_t full[] = {
        0x6d, 0x9a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x07,
        0x10, 0x00, 0x40 };
    static const uint8_t xor[] = { 0x63, 0x3a, 0x04, 0x04 };
    ETraceParams p = params(64);
    ETraceDataState enc = { 0 }, dec = { 0 };
    ETraceDataAccess a = { .dtype = ETRACE_DTYPE_STORE, .dsize = 3,
                           .daddr = 0x80002008, .data = UINT64_MAX };

    check(&p, &data_on, &enc, &dec, &a, full, sizeof(full));
    a.daddr += 8;
    a.data = UINT64_MAX - 1;
    check(&p, &data_on, &enc, &dec, &a, xor, sizeof(xor));
    /* after a sync the same access is full again */
    etrace_data_sync(&enc);
    etrace_data_sync(&dec);
    a.daddr -= 8;
    a.data = UINT64_MAX;
    check(&p, &data_on, &enc, &dec, &a, full, sizeof(full));
}

/* An unaligned half-word load: format 1, the byte address. */
static void test_load_unaligned(void)
{
    static const uint8_t want[] = {
        0x68, 0x89, 0xef, 0xbe, 0x01, 0x20, 0x00, 0x80, 0x00 };
    ETraceParams p = params(64);
    ETraceDataState enc = { 0 }, dec = { 0 };
    ETraceDataAccess a = { .dtype = ETRACE_DTYPE_LOAD, .dsize = 1,
                           .daddr = 0x80002001, .data = 0xbeef };

    check(&p, &data_on, &enc, &dec, &a, want, sizeof(want));
}

/* Table 7.11: csrrs of mstatus (0x300) with mask 8, value read 5 bytes. */
static void test_csr(void)
{
    static const uint8_t want[] = {
        0x68, 0x0d, 0x02, 0x02, 0x00, 0x00, 0x28, 0x30, 0x40 };
    ETraceParams p = params(64);
    ETraceDataState enc = { 0 }, dec = { 0 };
    ETraceDataAccess a = { .dtype = ETRACE_DTYPE_CSR_RS, .dsize = 3,
                           .daddr = 0x300, .data = 0xa00000080,
                           .operand = 8 };

    check(&p, &data_on, &enc, &dec, &a, want, sizeof(want));
}

/*
 * Table 7.13: csrrw of minstret (0xb02) with no_value: format, subtype,
 * a 1-bit diff (0: full address), address[11:6], address[5:0]; a diff of
 * 1 (a differential address, never sent) is refused.
 */
static void test_csr_address_only(void)
{
    static const uint8_t want[] = { 0x62, 0x05, 0x2b };
    static const uint8_t differential[] = { 0x62, 0x25, 0x2b };
    ETraceParams p = params(64);
    ETraceOptions o = { .data = true, .data_no_value = true };
    ETraceDataState enc = { 0 }, dec = { 0 };
    ETraceDataAccess a = { .dtype = ETRACE_DTYPE_CSR_RW, .dsize = 3,
                           .daddr = 0xb02 }, back;
    const char *err = NULL;

    check(&p, &o, &enc, &dec, &a, want, sizeof(want));
    g_assert_cmpint(etrace_data_unpack(&p, &o, &dec, differential,
                                       sizeof(differential), &back, &err),
                    ==, -1);
    g_assert_nonnull(err);
}

/* Table 7.6: amoadd.w, operand 5, loaded 0x10. */
static void test_atomic(void)
{
    static const uint8_t want[] = {
        0x68, 0x0e, 0x28, 0x00, 0x02, 0x80, 0x01, 0x00, 0x04 };
    ETraceParams p = params(64);
    ETraceDataState enc = { 0 }, dec = { 0 };
    ETraceDataAccess a = { .dtype = ETRACE_DTYPE_AMO_ADD, .dsize = 2,
                           .daddr = 0x80003000, .data = 0x10, .operand = 5 };

    check(&p, &data_on, &enc, &dec, &a, want, sizeof(want));
}

/* What no packet carries, and what a decoder must refuse. */
static void test_rejects(void)
{
    /* a differential load before any full one */
    static const uint8_t diff_first[] = { 0x63, 0x3a, 0x04, 0x04 };
    /* format 4, split load data */
    static const uint8_t split[] = { 0x61, 0x04 };
    /* an instruction packet */
    static const uint8_t inst[] = { 0x01, 0x04 };
    ETraceParams p = params(64), p32 = params(32);
    ETraceDataState st = { 0 };
    ETraceDataAccess a = { .dtype = ETRACE_DTYPE_AMO_SWAP, .dsize = 1 };
    uint8_t buf[ETRACE_MAX_PACKET];
    const char *err = NULL;

    g_assert_cmpuint(etrace_data_pack(&p, &data_on, &st, &a, buf), ==, 0);
    a = (ETraceDataAccess) { .dtype = ETRACE_DTYPE_LOAD, .dsize = 3 };
    g_assert_cmpuint(etrace_data_pack(&p32, &data_on, &st, &a, buf), ==, 0);
    a.dtype = 15;
    g_assert_cmpuint(etrace_data_pack(&p, &data_on, &st, &a, buf), ==, 0);
    g_assert_cmpint(etrace_data_unpack(&p, &data_on, &st, diff_first,
                                       sizeof(diff_first), &a, &err), ==, -1);
    g_assert_nonnull(err);
    g_test_message("rejected: %s", err);
    g_assert_cmpint(etrace_data_unpack(&p, &data_on, &st, split,
                                       sizeof(split), &a, &err), ==, -1);
    g_test_message("rejected: %s", err);
    g_assert_cmpint(etrace_data_unpack(&p, &data_on, &st, inst,
                                       sizeof(inst), &a, &err), ==, -1);
    g_test_message("rejected: %s", err);
    /* a part of a packet */
    g_assert_cmpint(etrace_data_unpack(&p, &data_on, &st, diff_first, 2, &a,
                                       &err), ==, 0);
}

static ETraceDataAccess random_access(GRand *r, unsigned xlen)
{
    static const uint8_t dtypes[] = {
        ETRACE_DTYPE_LOAD, ETRACE_DTYPE_STORE, ETRACE_DTYPE_CSR_RW,
        ETRACE_DTYPE_CSR_RS, ETRACE_DTYPE_CSR_RC, ETRACE_DTYPE_AMO_SWAP,
        ETRACE_DTYPE_AMO_ADD, ETRACE_DTYPE_AMO_AND, ETRACE_DTYPE_AMO_OR,
        ETRACE_DTYPE_AMO_XOR, ETRACE_DTYPE_AMO_MAX, ETRACE_DTYPE_AMO_MIN,
    };
    unsigned max_size = xlen == 64 ? 3 : 2;
    ETraceDataAccess a = {
        .dtype = dtypes[g_rand_int_range(r, 0, sizeof(dtypes))],
        .daddr = 0x80000000 + g_rand_int_range(r, 0, 4096),
        .data = (uint64_t)g_rand_int(r) << 32 | g_rand_int(r),
    };
    uint64_t mask;

    if (a.dtype >= ETRACE_DTYPE_AMO_SWAP) {
        a.dsize = g_rand_int_range(r, 2, max_size + 1);
        a.daddr &= ~(uint64_t)((1 << a.dsize) - 1);
    } else if (a.dtype >= ETRACE_DTYPE_CSR_RW) {
        a.dsize = max_size;
        a.daddr &= 0xfff;
    } else {
        a.dsize = g_rand_int_range(r, 0, max_size + 1);
    }
    if (g_rand_int_range(r, 0, 3) == 0) {
        a.data &= 0xff;     /* small values compress */
    }
    mask = a.dsize == 3 ? UINT64_MAX : (UINT64_C(1) << (8 << a.dsize)) - 1;
    a.data &= mask;
    if (a.dtype >= ETRACE_DTYPE_CSR_RW) {
        a.operand = ((uint64_t)g_rand_int(r) << 32 | g_rand_int(r)) & mask;
        if (a.dtype < ETRACE_DTYPE_AMO_SWAP && a.daddr >> 10 == 3) {
            a.operand = 0;      /* read-only CSR: no operand */
        }
    }
    if (xlen == 32) {
        a.daddr &= UINT32_MAX;
    }
    return a;
}

/*
 * Random accesses in every option combination, with syncs at the same
 * points on both sides: the decoder gets back what the options keep, and
 * the fast packer writes the walker's bytes.
 */
static void test_roundtrip(void)
{
    GRand *r = g_rand_new_with_seed(2026);

    for (unsigned round = 0; round < 64; round++) {
        unsigned xlen = round & 1 ? 64 : 32;
        ETraceParams p = params(xlen);
        ETraceOptions o = {
            .data = true, .data_full_address = round & 2,
            .data_no_address = (round & 12) == 4,
            .data_no_value = (round & 12) == 8,
        };
        ETraceDataState enc = { 0 }, dec = { 0 }, fast = { 0 };
        ETracePacker pk;

        p.src_bits = round % 3 * 4;
        p.src_id = round & ((1u << p.src_bits) - 1);
        g_assert_true(etrace_packer_init(&pk, &p));
        for (unsigned i = 0; i < 500; i++) {
            ETraceDataAccess a = random_access(r, xlen), back;
            uint8_t buf[ETRACE_MAX_PACKET], fbuf[ETRACE_MAX_PACKET];
            const char *err = NULL;
            size_t n;

            if (g_rand_int_range(r, 0, 50) == 0) {
                etrace_data_sync(&enc);
                etrace_data_sync(&dec);
                etrace_data_sync(&fast);
            }
            n = etrace_data_pack(&p, &o, &enc, &a, buf);
            g_assert_cmpuint(n, >, 0);
            g_assert_cmpmem(buf, n, fbuf,
                            etrace_data_pack_fast(&pk, &o, &fast, &a, fbuf));
            g_assert_cmpint(etrace_data_unpack(&p, &o, &dec, buf, n, &back,
                                               &err), ==, n);
            g_assert_cmpuint(back.dtype, ==, a.dtype);
            g_assert_cmpuint(back.dsize, ==, a.dsize);
            if (!o.data_no_address ||
                (a.dtype >= ETRACE_DTYPE_CSR_RW &&
                 a.dtype <= ETRACE_DTYPE_CSR_RC)) {
                g_assert_cmphex(back.daddr, ==, a.daddr);
            }
            if (!o.data_no_value) {
                g_assert_cmphex(back.data, ==, a.data);
                g_assert_cmphex(back.operand, ==, a.operand);
            }
        }
    }
    g_rand_free(r);
}

/*
 * etrace_data_pack_window(): the packets of etrace_data_pack_fast() one by
 * one, as long as the window has room for a whole one.
 */
static void test_pack_window(void)
{
    GRand *r = g_rand_new_with_seed(27);

    for (unsigned round = 0; round < 32; round++) {
        unsigned xlen = round & 1 ? 64 : 32;
        ETraceParams p = params(xlen);
        ETraceOptions o = { .data = true, .data_full_address = round & 2 };
        ETraceDataState one = { 0 }, many = { 0 };
        ETraceDataAccess a[64];
        uint8_t want[64 * ETRACE_MAX_PACKET], got[sizeof(want)];
        size_t want_len = 0, n, room = g_rand_int_range(r, 0, sizeof(got));
        ETraceWindow w = { got, got + room };
        ETracePacker pk;

        g_assert_true(etrace_packer_init(&pk, &p));
        for (unsigned i = 0; i < G_N_ELEMENTS(a); i++) {
            a[i] = random_access(r, xlen);
        }
        n = etrace_data_pack_window(&pk, &o, &many, a, G_N_ELEMENTS(a), &w);
        for (unsigned i = 0; i < n; i++) {
            g_assert_cmpuint(room - want_len, >=, ETRACE_MAX_PACKET);
            want_len += etrace_data_pack_fast(&pk, &o, &one, &a[i],
                                              want + want_len);
        }
        g_assert_true(n == G_N_ELEMENTS(a) ||
                      room - want_len < ETRACE_MAX_PACKET);
        g_assert_cmpmem(got, w.pos - got, want, want_len);
        g_assert_cmpmem(&many, sizeof(many), &one, sizeof(one));
    }
    g_rand_free(r);
}

/* Data options in the support packet: bits 7-10 (etrace.h). */
static void test_support_options(void)
{
    ETraceParams p = params(64);
    ETraceOptions o = { .data = true, .data_no_value = true }, back;

    g_assert_cmphex(etrace_options_pack(&p, &o), ==, 0x280);
    etrace_options_unpack(&p, 0x280, &back);
    g_assert_true(back.data && back.data_no_value);
    g_assert_false(back.data_no_address || back.data_full_address);
    /* without data trace the data bits mean nothing */
    o.data = false;
    g_assert_cmphex(etrace_options_pack(&p, &o), ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/etrace-data/load-full", test_load_full);
    g_test_add_func("/etrace-data/store-differential",
                    test_store_differential);
    g_test_add_func("/etrace-data/load-unaligned", test_load_unaligned);
    g_test_add_func("/etrace-data/csr", test_csr);
    g_test_add_func("/etrace-data/csr-address-only", test_csr_address_only);
    g_test_add_func("/etrace-data/atomic", test_atomic);
    g_test_add_func("/etrace-data/rejects", test_rejects);
    g_test_add_func("/etrace-data/roundtrip", test_roundtrip);
    g_test_add_func("/etrace-data/pack-window", test_pack_window);
    g_test_add_func("/etrace-data/support-options", test_support_options);
    return g_test_run();
}

/*
 * The PDIS sample record's layout in memory (pdis_record.h): the draft's
 * "PDIS Sample Record for RV64" (eight doublewords) and "for RV32" (eight
 * words, pdishdrev and pdislat split, time[31:0]), packed and unpacked by
 * the one codec the hart and the host tools share.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <glib.h>
#include "pdis_record.h"

static const uint64_t rec[PDIS_REC_FIELDS] = {
    0x0123456789abcdefULL,      /* pdishdrev */
    0x80001234ULL,              /* pdispc */
    0x1122334455667788ULL,      /* pdistime */
    0x00000000000000ffULL,      /* pdislat */
    0x80010000ULL,              /* pdisadr1 */
    0x80020000ULL,              /* pdisadr2 */
};

static void test_rv64(void)
{
    uint8_t buf[PDIS_RECORD_SIZE_RV64];
    uint64_t back[PDIS_REC_FIELDS];

    g_assert_cmpuint(pdis_record_size(false), ==, 64);
    memset(buf, 0xaa, sizeof(buf));
    pdis_record_pack(rec, false, buf);
    for (int i = 0; i < PDIS_REC_FIELDS; i++) {
        g_assert_cmphex(pdis_get_le(buf + 8 * i, 8), ==, rec[i]);
    }
    /* the two WPRI doublewords are written as 0 */
    for (int i = 48; i < 64; i++) {
        g_assert_cmphex(buf[i], ==, 0);
    }
    g_assert_cmphex(buf[0], ==, 0xef);          /* little endian */
    pdis_record_unpack(buf, false, back);
    g_assert_cmpmem(back, sizeof(back), rec, sizeof(rec));
}

static void test_rv32(void)
{
    static const uint32_t words[8] = {
        0x89abcdef, 0x01234567, 0x80001234, 0x55667788,
        0x000000ff, 0x00000000, 0x80010000, 0x80020000,
    };
    uint8_t buf[PDIS_RECORD_SIZE_RV32];
    uint64_t back[PDIS_REC_FIELDS];

    g_assert_cmpuint(pdis_record_size(true), ==, 32);
    pdis_record_pack(rec, true, buf);
    for (int i = 0; i < 8; i++) {
        g_assert_cmphex(pdis_get_le(buf + 4 * i, 4), ==, words[i]);
    }
    pdis_record_unpack(buf, true, back);
    g_assert_cmphex(back[PDIS_REC_HDREV], ==, rec[PDIS_REC_HDREV]);
    g_assert_cmphex(back[PDIS_REC_TIME], ==, (uint32_t)rec[PDIS_REC_TIME]);
    g_assert_cmphex(back[PDIS_REC_LAT], ==, rec[PDIS_REC_LAT]);
    g_assert_cmphex(back[PDIS_REC_ADR2], ==, rec[PDIS_REC_ADR2]);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/pdis-record/rv64", test_rv64);
    g_test_add_func("/pdis-record/rv32", test_rv32);
    return g_test_run();
}

/*
 * RISC-V Smpdis/Sspdis: the sample record (draft, "Sample Record")
 *
 * The record's fields and their bits, and its layout in memory (RV64: 64
 * bytes, RV32: 32 bytes, little endian), shared by the hart
 * (target/riscv/pdis.c) and the host tools that read a buffer of them
 * (tools/pdis-profile.c).  Plain C, no QEMU dependency.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_PDIS_RECORD_H
#define RISCV_PDIS_RECORD_H

/* mpdisctl.SEL and pdishdrev.TYPE */
enum {
    PDIS_TYPE_OTHER,
    PDIS_TYPE_LOAD,
    PDIS_TYPE_STORE,
    PDIS_TYPE_LDST,
    PDIS_TYPE_CTRL,
    PDIS_TYPE_RESERVED,
};

/* The record's fields, in order. */
enum {
    PDIS_REC_HDREV,
    PDIS_REC_PC,
    PDIS_REC_TIME,
    PDIS_REC_LAT,
    PDIS_REC_ADR1,
    PDIS_REC_ADR2,
    PDIS_REC_FIELDS,
};

#define PDIS_RECORD_SIZE_RV64   64
#define PDIS_RECORD_SIZE_RV32   32

/* pdishdrev: every type */
#define PDISHDR_TYPE            UINT64_C(0x7)
#define PDISHDR_HPM             UINT64_C(0xfffffff8)    /* HPM[31:3] */
#define PDISHDR_FLUSHED         (UINT64_C(1) << 32)
#define PDISHDR_PARTIAL         (UINT64_C(1) << 35)
#define PDISHDR_FUSED           (UINT64_C(1) << 36)
#define PDISHDR_ITMISS          (UINT64_C(1) << 37)
#define PDISHDR_ICMISS          (UINT64_C(1) << 38)
/* loads and stores */
#define PDISHDR_L1MISS          (UINT64_C(1) << 39)
#define PDISHDR_LLMISS          (UINT64_C(1) << 40)
#define PDISHDR_DSRC_SHIFT      41                      /* 4 bits */
#define PDISHDR_L1TLBMISS       (UINT64_C(1) << 45)
#define PDISHDR_LLTLBMISS       (UINT64_C(1) << 46)
/* control transfers */
#define PDISHDR_TRET            (UINT64_C(1) << 39)
#define PDISHDR_NTBR            (UINT64_C(1) << 40)
#define PDISHDR_TKBR            (UINT64_C(1) << 41)
#define PDISHDR_INDCALL         (UINT64_C(1) << 44)
#define PDISHDR_DIRCALL         (UINT64_C(1) << 45)
#define PDISHDR_INDJMP          (UINT64_C(1) << 46)
#define PDISHDR_DIRJMP          (UINT64_C(1) << 47)
#define PDISHDR_CORSWAP         (UINT64_C(1) << 48)
#define PDISHDR_RET             (UINT64_C(1) << 49)
#define PDISHDR_INDLJMP         (UINT64_C(1) << 50)
#define PDISHDR_DIRLJMP         (UINT64_C(1) << 51)
#define PDISHDR_MISPRED         (UINT64_C(1) << 52)

/* pdislat: TOTAL (the other latencies have valid bits) */
#define PDISLAT_TOTAL           UINT64_C(0xfff)

static inline unsigned pdis_record_size(bool rv32)
{
    return rv32 ? PDIS_RECORD_SIZE_RV32 : PDIS_RECORD_SIZE_RV64;
}

static inline void pdis_put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++) {
        p[i] = v >> (8 * i);
    }
}

static inline uint64_t pdis_get_le(const uint8_t *p, unsigned bytes)
{
    uint64_t v = 0;

    for (unsigned i = 0; i < bytes; i++) {
        v |= (uint64_t)p[i] << (8 * i);
    }
    return v;
}

/* A field's bytes in the record (RV32: pdistime keeps time[31:0]). */
static inline unsigned pdis_field_bytes(int field, bool rv32)
{
    return !rv32 || field == PDIS_REC_HDREV || field == PDIS_REC_LAT ? 8 : 4;
}

/* The record's bytes (pdis_record_size()) from its fields. */
static inline void pdis_record_pack(const uint64_t *rec, bool rv32,
                                    uint8_t *buf)
{
    unsigned off = 0;

    for (int i = 0; i < PDIS_REC_FIELDS; i++) {
        unsigned n = pdis_field_bytes(i, rv32);

        pdis_put_le(buf + off, rec[i], n);
        off += n;
    }
    for (; off < pdis_record_size(rv32); off++) {
        buf[off] = 0;           /* RV64: two doublewords WPRI */
    }
}

static inline void pdis_record_unpack(const uint8_t *buf, bool rv32,
                                      uint64_t *rec)
{
    unsigned off = 0;

    for (int i = 0; i < PDIS_REC_FIELDS; i++) {
        unsigned n = pdis_field_bytes(i, rv32);

        rec[i] = pdis_get_le(buf + off, n);
        off += n;
    }
}

#endif /* RISCV_PDIS_RECORD_H */

/*
 * What the PDIS guest tests share: the registers and bits of the
 * allocation (docs/pdis.rst), 64-bit access to them on RV64 and RV32,
 * and the sample record as the data registers or the buffer hold it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef PDIS_TEST_H
#define PDIS_TEST_H

#include "pmu_test.h"

#define CSR_SPDISCTL        0x5c8
#define CSR_SPDISCOUNTER    0x5c9
#define CSR_SPDISEVMASK     0x5ca
#define CSR_SPDISEVMATCH    0x5cb
#define CSR_SPDISFILTER     0x5cc
#define CSR_SPDISAMBCS      0x5cd
#define CSR_SPDISAMBADDR    0x5ce
#define CSR_VSPDISCTL       0x6c8
#define CSR_MPDISCTL        0xbc8
#define CSR_SCOUNTOVF       0xda0
#define CSR_MSTATEEN0       0x30c
#define CSR_MSTATEEN0H      0x31c
#define CSR_HSTATEEN0       0x60c
#define CSR_HSTATEEN0H      0x61c
#define CSR_HENVCFG         0x60a
#define CSR_HENVCFGH        0x61a
#define CSR_HCOUNTEREN      0x606
#define CSR_VSISELECT       0x250
#define CSR_VSIREG          0x251
#define CSR_MCOUNTINHIBIT   0x320

#define PDIS_SEL_ALL        0
#define PDIS_SEL_LOAD       1
#define PDIS_SEL_STORE      2
#define PDIS_SEL_LDST       3
#define PDIS_SEL_CTRL       4
#define PDIS_MEM            (1ULL << 32)
#define PDIS_ACC            (1ULL << 33)
#define PDIS_TS             (1ULL << 34)
#define PDIS_PA             (1ULL << 35)
#define PDIS_EPT            (1ULL << 36)
#define PDIS_U              (1ULL << 60)
#define PDIS_S              (1ULL << 61)
#define PDIS_M              (1ULL << 62)
#define PDIS_OF             (1ULL << 63)

#define AMB_EN              (1ULL << 0)
#define AMB_TF              (1ULL << 1)
#define AMB_BMI             (1ULL << 2)
#define AMB_SIZE(n)         ((uint64_t)(n) << 7)
#define AMB_TFPTR_SHIFT     12
#define AMB_BMITH(n)        ((uint64_t)(n) << 32)
#define AMB_BMIEN           (1ULL << 34)
#define AMB_SOF             (1ULL << 35)
#define AMB_WRAP            (1ULL << 61)
#define AMB_EMPTY           (1ULL << 62)
#define AMB_TRV             (1ULL << 63)

#define HDR_TYPE(h)         ((h) & 7)
#define HDR_PARTIAL         (1ULL << 35)
#define HDR_L1MISS          (1ULL << 39)
#define HDR_LLMISS          (1ULL << 40)
#define HDR_DSRC(h)         (((h) >> 41) & 15)
#define HDR_L1TLBMISS       (1ULL << 45)
#define HDR_LLTLBMISS       (1ULL << 46)
#define HDR_TRET            (1ULL << 39)
#define HDR_NTBR            (1ULL << 40)
#define HDR_TKBR            (1ULL << 41)
#define HDR_INDCALL         (1ULL << 44)
#define HDR_DIRCALL         (1ULL << 45)
#define HDR_RET             (1ULL << 49)
#define HDR_MISPRED         (1ULL << 52)
#define HDR_FMT_MASK        (0x3fULL << 58)

#define EV_PDIS_SAMPLES     0x600
#define EV_PDIS_COLLISIONS  0x700
#define EV_PDIS_FILTERED    0x800
#define EV_PDIS_DROPPED     0x900

#define STATEEN0_PDIS       (1ULL << 52)
#define STATEEN0_CSRIND     (1ULL << 60)
#define STATEEN0_SE0        (1ULL << 63)
#define ENVCFG_PDIS         (1ULL << 57)
#define ENVCFG_CDE          (1ULL << 60)
#define IRQ_LAMBI           14
#define LAMBIP              (1UL << IRQ_LAMBI)

enum { REC_HDR, REC_PC, REC_TIME, REC_LAT, REC_ADR1, REC_ADR2, REC_N };

/* A 64-bit PDIS register (the high half at +0x10 on RV32). */
static inline uint64_t pdis_read(unsigned csr)
{
    uint64_t v = (unsigned long)rv_csr_read_num(csr);

#if RV_XLEN == 32
    if (csr != CSR_SPDISFILTER && csr != CSR_SPDISAMBADDR) {
        v = (uint32_t)v | (uint64_t)rv_csr_read_num(csr + 0x10) << 32;
    }
#endif
    return v;
}

static inline void pdis_write(unsigned csr, uint64_t v)
{
#if RV_XLEN == 32
    if (csr != CSR_SPDISFILTER && csr != CSR_SPDISAMBADDR) {
        rv_csr_write_num(csr + 0x10, v >> 32);
    }
#endif
    rv_csr_write_num(csr, (unsigned long)v);
}

/* spdiscounter: COUNT so that the nth counted instruction overflows. */
static inline uint64_t pdis_counter(unsigned n, uint32_t period)
{
    return (uint64_t)(uint32_t)-period << 32 | (uint32_t)-n;
}

/* The sample data registers (siselect 0x60 and 0x61), as a record. */
static inline void pdis_read_data(uint64_t *rec)
{
    csr_write(0x150, 0x60);
#if RV_XLEN == 64
    rec[REC_HDR] = rv_csr_read_num(0x151);
    rec[REC_PC] = rv_csr_read_num(0x152);
    rec[REC_TIME] = rv_csr_read_num(0x153);
    rec[REC_LAT] = rv_csr_read_num(0x155);
    rec[REC_ADR1] = rv_csr_read_num(0x156);
    rec[REC_ADR2] = rv_csr_read_num(0x157);
#else
    rec[REC_HDR] = rv_csr_read_num(0x151) |
                   (uint64_t)rv_csr_read_num(0x152) << 32;
    rec[REC_PC] = rv_csr_read_num(0x153);
    rec[REC_TIME] = rv_csr_read_num(0x155);
    rec[REC_LAT] = rv_csr_read_num(0x156) |
                   (uint64_t)rv_csr_read_num(0x157) << 32;
    csr_write(0x150, 0x61);
    rec[REC_ADR1] = rv_csr_read_num(0x151);
    rec[REC_ADR2] = rv_csr_read_num(0x152);
#endif
}

/* A record the buffer holds (RV64: 8 doublewords, RV32: 8 words). */
#define PDIS_RECORD_SIZE    (RV_XLEN == 64 ? 64 : 32)

static inline void pdis_unpack(const volatile void *p, uint64_t *rec)
{
#if RV_XLEN == 64
    const volatile uint64_t *d = p;

    for (int i = 0; i < REC_N; i++) {
        rec[i] = d[i];
    }
#else
    const volatile uint32_t *w = p;

    rec[REC_HDR] = w[0] | (uint64_t)w[1] << 32;
    rec[REC_PC] = w[2];
    rec[REC_TIME] = w[3];
    rec[REC_LAT] = w[4] | (uint64_t)w[5] << 32;
    rec[REC_ADR1] = w[6];
    rec[REC_ADR2] = w[7];
#endif
}

#endif /* PDIS_TEST_H */

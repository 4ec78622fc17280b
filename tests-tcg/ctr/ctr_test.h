/*
 * Shared definitions for the CTR v0.1.4 draft guest tests (cpu ctr=on).
 * Register layouts: ../shared/design/ctr-v0.1.4-layout.md, from the draft
 * chapters 2 and 3.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CTR_TEST_H
#define CTR_TEST_H

#include "rvtest.h"

#define CSR_SCTRCONTROL     0x181
#define CSR_SCTRCONTROLH    0x182
#define CSR_SCTRSTATUS      0x183
#define CSR_VSCTRCONTROL    0x281
#define CSR_VSCTRCONTROLH   0x282
#define CSR_MCTRCONTROL     0x381
#define CSR_MCTRCONTROLH    0x382
#define CSR_MCTRSTATUS      0x383

#define CSR_MISELECT        0x350
#define CSR_MIREG           0x351
#define CSR_MIREG2          0x352
#define CSR_MIREG3          0x353
#define CSR_MIREG4          0x355
#define CSR_MIREG5          0x356
#define CSR_MIREG6          0x357
#define CSR_SISELECT        0x150
#define CSR_SIREG           0x151
#define CSR_SIREG2          0x152
#define CSR_SIREG3          0x153
#define CSR_SIREG4          0x155
#define CSR_SIREG5          0x156
#define CSR_SIREG6          0x157
#define CSR_VSISELECT       0x250
#define CSR_VSIREG          0x251
#define CSR_VSIREG2         0x252
#define CSR_VSIREG3         0x253
#define CSR_MSTATEEN0       0x30c
#define CSR_MSTATEEN0H      0x31c
#define CSR_HSTATEEN0       0x60c
#define CSR_HSTATEEN0H      0x61c
#define CSR_SSTATEEN0       0x10c

#define STATEEN0_CTR        (1ULL << 55)     /* draft chapter 4 */
#define STATEEN0_CSIND      (1ULL << 60)     /* Smcsrind's SVSLCT bit */
#define STATEEN0_SE         (1ULL << 63)

/* ctrcontrol (mctrcontrol; vsctrcontrol uses VS/VU/VSTE at S/U/STE). */
#define CTR_M               (1ULL << 0)
#define CTR_S               (1ULL << 1)
#define CTR_U               (1ULL << 2)
#define CTR_CLR             (1ULL << 7)
#define CTR_MTE             (1ULL << 8)
#define CTR_STE             (1ULL << 9)
#define CTR_RASEMU          (1ULL << 10)
#define CTR_BPFRZ           (1ULL << 11)
#define CTR_LCOFIFRZ        (1ULL << 12)
#define CTR_DEPTH_SHIFT     16
#define CTR_DEPTH_MASK      (0xfULL << CTR_DEPTH_SHIFT)
#define CTR_DEPTH(code)     ((unsigned long long)(code) << CTR_DEPTH_SHIFT)
#define CTR_EXCINH          (1ULL << 33)
#define CTR_INTRINH         (1ULL << 34)
#define CTR_TRETINH         (1ULL << 35)
#define CTR_NTBREN          (1ULL << 36)
#define CTR_TKBRINH         (1ULL << 37)
#define CTR_ETEN            (1ULL << 38)
#define CTR_INDCALLINH      (1ULL << 40)
#define CTR_DIRCALLINH      (1ULL << 41)
#define CTR_INDJUMPINH      (1ULL << 42)
#define CTR_DIRJUMPINH      (1ULL << 43)
#define CTR_CORSWAPINH      (1ULL << 44)
#define CTR_RETINH          (1ULL << 45)
#define CTR_INDOJMPINH      (1ULL << 46)
#define CTR_DIROJMPINH      (1ULL << 47)
/* Every type filter that inhibits (NTBREN, an enable, stays 0). */
#define CTR_INH_ALL (CTR_EXCINH | CTR_INTRINH | CTR_TRETINH | CTR_TKBRINH | \
                     CTR_INDCALLINH | CTR_DIRCALLINH | CTR_INDJUMPINH |     \
                     CTR_DIRJUMPINH | CTR_CORSWAPINH | CTR_RETINH |         \
                     CTR_INDOJMPINH | CTR_DIROJMPINH)
/* Type filter bit of a transfer type: 32 + TYPE (NTBREN enables). */
#define CTR_TYPE_BIT(type)  (1ULL << (32 + (type)))

/* mctrstatus */
#define CTRSTATUS_WRPTR     0xffUL
#define CTRSTATUS_WRAP      (1UL << 14)
#define CTRSTATUS_FROZEN    (1UL << 15)

/* Entry registers */
#define CTRSOURCE_V         1UL
#define CTRTARGET_MISP      1UL
#define CTRDATA_TYPE        0xfUL
#define CTRDATA_CCV         (1UL << 15)
#define CTRDATA_CCM(d)      (((d) >> 16) & 0xfff)
#define CTRDATA_CCE(d)      (((d) >> 28) & 0xf)

/* ctrdata.TYPE: the E-trace itype codes. */
enum ctr_type {
    CTR_TYPE_EXC = 1,
    CTR_TYPE_INTR = 2,
    CTR_TYPE_TRET = 3,
    CTR_TYPE_NTBR = 4,
    CTR_TYPE_TKBR = 5,
    CTR_TYPE_INDCALL = 8,
    CTR_TYPE_DIRCALL = 9,
    CTR_TYPE_INDJUMP = 10,
    CTR_TYPE_DIRJUMP = 11,
    CTR_TYPE_CORSWAP = 12,
    CTR_TYPE_RET = 13,
    CTR_TYPE_INDOJMP = 14,
    CTR_TYPE_DIROJMP = 15,
};

struct ctr_entry {
    unsigned long source, target, data;
};

/* Logical entry n read from M mode through miselect/mireg*. */
static inline struct ctr_entry ctr_read_entry(unsigned n)
{
    struct ctr_entry e;

    csr_write(CSR_MISELECT, 0x200 + n);
    e.source = csr_read(CSR_MIREG);
    e.target = csr_read(CSR_MIREG2);
    e.data = csr_read(CSR_MIREG3);
    return e;
}

/* 64-bit ctrcontrol value on RV64 and RV32 (h CSR for the upper half). */
static inline void ctr_write_mctrcontrol(unsigned long long v)
{
    csr_write(CSR_MCTRCONTROL, (unsigned long)v);
#if RV_XLEN == 32
    csr_write(CSR_MCTRCONTROLH, (unsigned long)(v >> 32));
#endif
}

static inline unsigned long long ctr_read_mctrcontrol(void)
{
    unsigned long long v = csr_read(CSR_MCTRCONTROL);
#if RV_XLEN == 32
    v |= (unsigned long long)csr_read(CSR_MCTRCONTROLH) << 32;
#endif
    return v;
}

/* From M mode: recording off, array and mctrstatus cleared, depth 16. */
static inline void ctr_reset(void)
{
    ctr_write_mctrcontrol(CTR_CLR);
    csr_write(CSR_MCTRSTATUS, 0);
}

#endif /* CTR_TEST_H */

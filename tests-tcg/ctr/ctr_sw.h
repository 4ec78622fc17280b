/*
 * Helpers for the CTR register tests (ctr_fields, ctr_status, ctr_qualify):
 * 64-bit control CSRs on RV32 and RV64, entry writes, state enables, the
 * field masks of implementation choice 2, and CSR access from S/VS mode.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CTR_SW_H
#define CTR_SW_H

#include "ctr_test.h"

/* Transfer-type filter fields, bits 47:32 (draft 2.1, choice 2). */
#define CTR_TYPE_FIELDS                                                 \
    (CTR_EXCINH | CTR_INTRINH | CTR_TRETINH | CTR_NTBREN | CTR_TKBRINH | \
     CTR_ETEN | CTR_INDCALLINH | CTR_DIRCALLINH | CTR_INDJUMPINH |       \
     CTR_DIRJUMPINH | CTR_CORSWAPINH | CTR_RETINH | CTR_INDOJMPINH |     \
     CTR_DIROJMPINH)

/* Every mctrcontrol field (choice 2); CLR reads 0 so it is not here. */
#define CTR_M_FIELDS                                                    \
    (CTR_M | CTR_S | CTR_U | CTR_MTE | CTR_STE | CTR_RASEMU | CTR_BPFRZ | \
     CTR_LCOFIFRZ | CTR_DEPTH_MASK | CTR_TYPE_FIELDS)
/* sctrcontrol: bits 0 (M) and 8 (MTE) read-only 0 (draft 2.2). */
#define CTR_S_FIELDS        (CTR_M_FIELDS & ~(CTR_M | CTR_MTE))
/* vsctrcontrol: VS, VU, VSTE sit at S, U, STE; 0 and 8 are 0 (draft 2.3). */
#define CTR_VS              CTR_S
#define CTR_VU              CTR_U
#define CTR_VSTE            CTR_STE
#define CTR_VS_FIELDS       CTR_S_FIELDS

/* DEPTH encodings of draft 2.1. */
#define CTR_DEPTH16         0x0
#define CTR_DEPTH32         0x1
#define CTR_DEPTH64         0x3
#define CTR_DEPTH128        0x7
#define CTR_DEPTH256        0xf

#define CTR_ALL_ONES        (~0ULL)

static inline unsigned ctr_depth_entries(unsigned code)
{
    return 16u << __builtin_popcount(code & 0xf);
}

/* Choice 3: a DEPTH write keeps the run of ones starting at bit 16. */
static inline unsigned ctr_depth_legal(unsigned code)
{
    unsigned n = 0;

    while (n < 4 && (code >> n) & 1) {
        n++;
    }
    return (1u << n) - 1;
}

/*
 * ctrcontrol filter bits that let only the transfer types in types
 * (a bit mask of TYPE codes, 1 << CTR_TYPE_x) be recorded; ETEN stays 0.
 */
static inline unsigned long long ctr_allow_only(unsigned types)
{
    static const unsigned char inh[] = {
        CTR_TYPE_EXC, CTR_TYPE_INTR, CTR_TYPE_TRET, CTR_TYPE_TKBR,
        CTR_TYPE_INDCALL, CTR_TYPE_DIRCALL, CTR_TYPE_INDJUMP,
        CTR_TYPE_DIRJUMP, CTR_TYPE_CORSWAP, CTR_TYPE_RET, CTR_TYPE_INDOJMP,
        CTR_TYPE_DIROJMP,
    };
    unsigned long long v = 0;

    for (unsigned i = 0; i < sizeof(inh); i++) {
        if (!(types & (1u << inh[i]))) {
            v |= CTR_TYPE_BIT(inh[i]);
        }
    }
    if (types & (1u << CTR_TYPE_NTBR)) {
        v |= CTR_NTBREN;
    }
    return v;
}

/*
 * A 64-bit control register through its XLEN CSR and, on RV32, the h CSR
 * for bits 63:32.  Writes go high half first, so filter bits are in place
 * before a mode enable in the low half takes effect.
 */
#define CTR_WRITE64(lo, hi, v) do {                                     \
        unsigned long long v_ = (v);                                    \
        if (RV_XLEN == 32) {                                            \
            csr_write(hi, (unsigned long)(v_ >> 32));                   \
        }                                                               \
        csr_write(lo, (unsigned long)v_);                               \
    } while (0)
#define CTR_READ64(lo, hi) ({                                           \
        unsigned long long r_ = csr_read(lo);                           \
        if (RV_XLEN == 32) {                                            \
            r_ |= (unsigned long long)csr_read(hi) << 32;               \
        }                                                               \
        r_; })

#define ctr_get_m()     CTR_READ64(CSR_MCTRCONTROL, CSR_MCTRCONTROLH)
#define ctr_set_m(v)    CTR_WRITE64(CSR_MCTRCONTROL, CSR_MCTRCONTROLH, v)
#define ctr_get_s()     CTR_READ64(CSR_SCTRCONTROL, CSR_SCTRCONTROLH)
#define ctr_set_s(v)    CTR_WRITE64(CSR_SCTRCONTROL, CSR_SCTRCONTROLH, v)
#define ctr_get_vs()    CTR_READ64(CSR_VSCTRCONTROL, CSR_VSCTRCONTROLH)
#define ctr_set_vs(v)   CTR_WRITE64(CSR_VSCTRCONTROL, CSR_VSCTRCONTROLH, v)

static inline unsigned long ctr_status(void)
{
    return csr_read(CSR_MCTRSTATUS);
}

static inline unsigned ctr_wrptr(void)
{
    return csr_read(CSR_MCTRSTATUS) & CTRSTATUS_WRPTR;
}

/* Logical entry n written from M mode through miselect/mireg*. */
static inline void ctr_write_entry(unsigned n, unsigned long source,
                                   unsigned long target, unsigned long data)
{
    csr_write(CSR_MISELECT, 0x200 + n);
    csr_write(CSR_MIREG, source);
    csr_write(CSR_MIREG2, target);
    csr_write(CSR_MIREG3, data);
}

/* ctrdata bits a software write keeps (choice 6): TYPE, CCV, CC. */
#define CTRDATA_RW          0xffff800fUL

/*
 * With Smstateen, let S and VS reach the CTR and indirect-CSR state
 * (draft chapter 4).  Without it the stateen CSRs do not exist: the
 * expected illegal-instruction trap is ignored.
 */
static inline void ctr_open_stateen(void)
{
    const unsigned long long bits = STATEEN0_CTR | STATEEN0_CSIND;

    rv_trap_expect();
    if (RV_XLEN == 32) {
        csr_set(CSR_MSTATEEN0H, (unsigned long)(bits >> 32));
    } else {
        csr_set(CSR_MSTATEEN0, (unsigned long)bits);
    }
    (void)rv_trap_cause();
    if (rv_has_ext('H')) {
        rv_trap_expect();
        if (RV_XLEN == 32) {
            csr_set(CSR_HSTATEEN0H, (unsigned long)(bits >> 32));
        } else {
            csr_set(CSR_HSTATEEN0, (unsigned long)bits);
        }
        (void)rv_trap_cause();
    }
}

/*
 * One access to sctrcontrol(h) or sctrstatus made by code running in S or
 * VS mode: run ctr_s_access through rv_run_in_mode with a pointer to this.
 * Reads before and after an optional write.
 */
enum ctr_s_reg { CTR_S_CONTROL, CTR_S_STATUS };

struct ctr_s_op {
    enum ctr_s_reg reg;
    bool write;
    unsigned long long value;
    unsigned long long before, after;
};

static inline unsigned long long ctr_s_read(enum ctr_s_reg reg)
{
    return reg == CTR_S_CONTROL ? ctr_get_s() : csr_read(CSR_SCTRSTATUS);
}

static inline unsigned long ctr_s_access(unsigned long arg)
{
    struct ctr_s_op *op = (struct ctr_s_op *)arg;

    op->before = ctr_s_read(op->reg);
    if (op->write) {
        if (op->reg == CTR_S_CONTROL) {
            ctr_set_s(op->value);
        } else {
            csr_write(CSR_SCTRSTATUS, (unsigned long)op->value);
        }
    }
    op->after = ctr_s_read(op->reg);
    return 0;
}

/* Read (and write, unless value is NULL) a S-level CTR CSR from mode. */
static inline struct ctr_s_op ctr_in_mode(enum rv_mode mode, enum ctr_s_reg reg,
                                          const unsigned long long *value)
{
    struct ctr_s_op op = {
        .reg = reg, .write = value != NULL, .value = value ? *value : 0,
    };

    rv_run_in_mode(mode, ctr_s_access, (unsigned long)&op);
    return op;
}

/* How many logical entries in [from, to) are not all zero. */
static inline unsigned nonzero(unsigned from, unsigned to)
{
    unsigned n = 0;

    for (unsigned i = from; i < to; i++) {
        struct ctr_entry e = ctr_read_entry(i);

        n += (e.source | e.target | e.data) != 0;
    }
    return n;
}

#endif /* CTR_SW_H */

/*
 * Helpers of ctr_hyp.c and ctr_access.c (CTR v0.1.4 draft with the H
 * extension): 64-bit control CSRs on RV32, state-enable bits, and a guest
 * function with known control transfers.  Include from one .c per test.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CTR_H_UTIL_H
#define CTR_H_UTIL_H

#include "ctr_test.h"

#if RV_XLEN == 32
#define WRITE64(c, ch, v) do {                                          \
        csr_write(c, (unsigned long)(v));                               \
        csr_write(ch, (unsigned long)((unsigned long long)(v) >> 32));  \
    } while (0)
#define READ64(c, ch)                                                   \
    (csr_read(c) | ((unsigned long long)csr_read(ch) << 32))
#define SET64(c, ch, v)   csr_set(ch, (unsigned long)((v) >> 32))
#define CLEAR64(c, ch, v) csr_clear(ch, (unsigned long)((v) >> 32))
#else
#define WRITE64(c, ch, v) csr_write(c, (v))
#define READ64(c, ch) ((unsigned long long)csr_read(c))
#define SET64(c, ch, v)   csr_set(c, (v))
#define CLEAR64(c, ch, v) csr_clear(c, (v))
#endif
/* SET64/CLEAR64 only for bits 63:32 (the stateen bits used here). */

#define WRITE_VSCTR(v)  WRITE64(CSR_VSCTRCONTROL, CSR_VSCTRCONTROLH, v)
#define READ_VSCTR()    READ64(CSR_VSCTRCONTROL, CSR_VSCTRCONTROLH)
#define WRITE_SCTR(v)   WRITE64(CSR_SCTRCONTROL, CSR_SCTRCONTROLH, v)
#define READ_SCTR()     READ64(CSR_SCTRCONTROL, CSR_SCTRCONTROLH)
#define READ_MSTATEEN0() READ64(CSR_MSTATEEN0, CSR_MSTATEEN0H)
#define READ_HSTATEEN0() READ64(CSR_HSTATEEN0, CSR_HSTATEEN0H)

/*
 * ctrh_jfn: j (skipping an unimp), then ret.  The library's trampoline
 * calls it with jalr ra, t0: E-trace 4.1.1 classifies jalr x1, x5 as a
 * co-routine swap (CTR type 12).
 */
asm(".pushsection .text\n"
    ".balign 4\n"
    ".globl ctrh_jfn\n"
    "ctrh_jfn:\n"
    "    j ctrh_jfn_ret\n"
    "    unimp\n"
    ".globl ctrh_jfn_ret\n"
    "ctrh_jfn_ret:\n"
    "    ret\n"
    ".popsection\n");
unsigned long ctrh_jfn(unsigned long);
extern char ctrh_jfn_ret[];

static inline unsigned long insn_len(unsigned long pc)
{
    return (*(volatile uint16_t *)pc & 3) == 3 ? 4 : 2;
}

/* Records since the last clear (depth 16, no wrap). */
static inline unsigned records(void)
{
    return csr_read(CSR_MCTRSTATUS) & CTRSTATUS_WRPTR;
}

/*
 * After ctrh_jfn ran in an enabled mode, with the modes around it
 * disabled: entry 2 the trampoline's call, entry 1 the j, entry 0 the ret.
 */
static inline void check_jfn_records(void)
{
    struct ctr_entry call = ctr_read_entry(2);
    struct ctr_entry jmp = ctr_read_entry(1);
    struct ctr_entry ret = ctr_read_entry(0);

    CHECK_EQ(records(), 3);
    CHECK_EQ(call.target, (unsigned long)ctrh_jfn);
    CHECK_EQ(call.data & CTRDATA_TYPE, CTR_TYPE_CORSWAP);
    CHECK_EQ(jmp.source, (unsigned long)ctrh_jfn | CTRSOURCE_V);
    CHECK_EQ(jmp.target, (unsigned long)ctrh_jfn_ret);
    CHECK_EQ(jmp.data & CTRDATA_TYPE, CTR_TYPE_DIRJUMP);
    CHECK_EQ(ret.source, (unsigned long)ctrh_jfn_ret | CTRSOURCE_V);
    CHECK_EQ(ret.target, (call.source & ~1UL) + insn_len(call.source & ~1UL));
    CHECK_EQ(ret.data & CTRDATA_TYPE, CTR_TYPE_RET);
}

static inline void check_no_records(void)
{
    CHECK_EQ(records(), 0);
    CHECK_EQ(csr_read(CSR_MCTRSTATUS) & CTRSTATUS_WRAP, 0);
    CHECK_EQ(ctr_read_entry(0).source, 0);
}

/* Whether Smstateen is there (mstateen0 readable from M). */
static inline bool stateen_present(void)
{
    rv_trap_expect();
    rv_csr_read_num(CSR_MSTATEEN0);
    return rv_trap_cause() == RV_NO_TRAP;
}

/*
 * With Smstateen: SVSLCT (bit 60) set in mstateen0 and hstateen0, CTR
 * (bit 55) as given.  hstateen0 is written while mstateen0.CTR=1 (its
 * bit is read-only 0 otherwise).  Checks the CTR bits read back; returns
 * whether both SVSLCT bits did (callers check that once).
 */
static inline bool stateen_set(bool m_ctr, bool h_ctr)
{
    const unsigned long long sv = STATEEN0_CSIND, ctr = STATEEN0_CTR;
    unsigned long long m, h;

    SET64(CSR_MSTATEEN0, CSR_MSTATEEN0H, sv | ctr);
    SET64(CSR_HSTATEEN0, CSR_HSTATEEN0H, sv | ctr);
    if (!h_ctr) {
        CLEAR64(CSR_HSTATEEN0, CSR_HSTATEEN0H, ctr);
    }
    if (!m_ctr) {
        CLEAR64(CSR_MSTATEEN0, CSR_MSTATEEN0H, ctr);
    }
    m = READ_MSTATEEN0();
    h = READ_HSTATEEN0();
    CHECK_EQ(m & ctr, m_ctr ? ctr : 0);
    if (m_ctr) {
        CHECK_EQ(h & ctr, h_ctr ? ctr : 0);
    }
    return (m & sv) && (h & sv);
}

#endif /* CTR_H_UTIL_H */

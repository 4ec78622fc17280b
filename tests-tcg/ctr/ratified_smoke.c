/*
 * QEMU 10.0's ratified Smctr/Ssctr 1.0 (smctr=on,ssctr=on) after the
 * engine was shared with the v0.1.4 draft: its CSRs, layout and
 * instruction behave as before, and none of the draft's state shows.
 * (Smctr/Ssctr 1.0: mctrctl 0x34e, sctrdepth 0x15f, sctrstatus 0x14f,
 * entries through siselect/sireg* only, SCTRCLR.)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_test.h"

#define CSR_MCTRCTL         0x34e
#define CSR_SCTRSTATUS_1_0  0x14f
#define CSR_SCTRDEPTH       0x15f

/* Ratified mctrctl bits (1.0 chapter 2.1). */
#define R_U         (1ULL << 0)
#define R_S         (1ULL << 1)
#define R_M         (1ULL << 2)
#define R_RASEMU    (1ULL << 7)
#define R_STE       (1ULL << 8)
#define R_MTE       (1ULL << 9)
#define R_BPFRZ     (1ULL << 11)
#define R_LCOFIFRZ  (1ULL << 12)
#define R_FILTERS   (0x1fULL << 33 | 0xffULL << 40)
#define R_FROZEN    (1UL << 31)

/* j over one instruction, in M with every type recorded; PCs out. */
static void jump_recorded(unsigned long *src, unsigned long *dst)
{
    asm volatile("csrw 0x34e, %2\n"
                 "la %0, 1f\n"
                 "la %1, 2f\n"
                 "1: j 2f\n"
                 "nop\n"
                 "2: csrw 0x34e, zero\n"
                 : "=&r"(*src), "=&r"(*dst)
                 : "r"(R_M) : "memory");
}

int main(void)
{
    unsigned long src, dst;

    /* 1.0 has no mctrctlh: RV32 reaches the low half only. */
    rv_rule("1.0 2.1: mctrctl has the ratified fields, no ETEN");
    csr_write(CSR_MCTRCTL, -1UL);
    CHECK_EQ(csr_read(CSR_MCTRCTL),
             (unsigned long)(R_U | R_S | R_M | R_RASEMU | R_STE | R_MTE |
                             R_BPFRZ | R_LCOFIFRZ | R_FILTERS));
    csr_write(CSR_MCTRCTL, 0);

    rv_rule("1.0 2.4: sctrdepth is WARL, 4 (256) at most");
    csr_write(CSR_SCTRDEPTH, 7);
    CHECK_EQ(csr_read(CSR_SCTRDEPTH), 4);
    csr_write(CSR_SCTRDEPTH, 0);

    rv_rule("1.0 2.5: sctrstatus has WRPTR and FROZEN (bit 31), no WRAP");
    csr_write(CSR_SCTRSTATUS_1_0, -1UL);
    CHECK_EQ(csr_read(CSR_SCTRSTATUS_1_0), R_FROZEN | 0xf);
    csr_write(CSR_SCTRSTATUS_1_0, 0);

    rv_rule("1.0: a jump in an enabled mode is recorded, read via sireg*");
    jump_recorded(&src, &dst);
    csr_write(CSR_SISELECT, 0x200);
    CHECK_EQ(csr_read(CSR_SIREG), src | CTRSOURCE_V);
    CHECK_EQ(csr_read(CSR_SIREG2), dst);
    CHECK_EQ(csr_read(CSR_SIREG3) & CTRDATA_TYPE, CTR_TYPE_DIRJUMP);
    CHECK_EQ(csr_read(CSR_SCTRSTATUS_1_0), 1);

    rv_rule("1.0 3: entries are not reachable through mireg");
    csr_write(CSR_MISELECT, 0x200);
    CHECK_TRAP(rv_csr_read_num(CSR_MIREG), CAUSE_ILLEGAL_INSN);

    rv_rule("1.0 4: SCTRCLR zeroes the entries");
    asm volatile(".word 0x10400073" ::: "memory");
    CHECK_EQ(csr_read(CSR_SIREG), 0);
    CHECK_EQ(csr_read(CSR_SIREG3), 0);

    rv_rule("the draft's CSRs do not exist with smctr=on");
    CHECK_TRAP(rv_csr_read_num(CSR_MCTRCONTROL), CAUSE_ILLEGAL_INSN);
    CHECK_TRAP(rv_csr_read_num(CSR_MCTRSTATUS), CAUSE_ILLEGAL_INSN);
    CHECK_TRAP(rv_csr_read_num(CSR_SCTRCONTROL), CAUSE_ILLEGAL_INSN);
    return 0;
}

/*
 * Zicfilp and Zicfiss for the guest tests of a hart that has them
 * (-cpu ...,zicfilp=true,zicfiss=true,zimop=true,zcmop=true): the
 * encodings the toolchain does not know, the CSRs and bits, U mode set
 * up for landing pads and a shadow stack (address translation off: QEMU
 * then makes shadow stack accesses to any memory), and a block with an
 * indirect jump to an instruction of the includer's choice.  The trap
 * hook clears mstatus.MPELP when a software-check exception is taken to
 * M, as the handler resumes after the faulting instruction.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RVTEST_CFI_H
#define RVTEST_CFI_H

#include "rvtest.h"

#define CSR_SSP             0x011
#define CSR_SENVCFG         0x10a
#define CSR_MENVCFG_CFI     0x30a
#define ENVCFG_LPE          (1UL << 2)
#define ENVCFG_SSE          (1UL << 3)
#define CAUSE_SW_CHECK      18
#define SW_CHECK_LANDING_PAD    2   /* xtval */
#define SW_CHECK_SHADOW_STACK   3
/* mstatus.MPELP, bit 41 (RV32: bit 9 of mstatush) */
#define MPELP_BIT           41

#define SSPUSH_RA           ".4byte 0xce104073\n"
#define SSPOPCHK_RA         ".4byte 0xcdc0c073\n"
#define SSPOPCHK_T0         ".4byte 0xcdc2c073\n"
#define LPAD_0              ".4byte 0x00000017\n"

static volatile unsigned long cfi_sw_checks;    /* the trap hook counts */

static inline void cfi_on_trap(const struct rv_trap *t)
{
    if (t->cause == CAUSE_SW_CHECK && t->to == RV_MODE_M) {
        cfi_sw_checks++;
#if RV_XLEN == 32
        csr_clear(CSR_MSTATUSH, 1UL << (MPELP_BIT - 32));
#else
        csr_clear(mstatus, 1UL << MPELP_BIT);
#endif
    }
}

/* Landing pads and shadow stacks in U mode; the trap hook */
static inline void cfi_setup_u(void)
{
    rv_trap_set_hook(cfi_on_trap);
    csr_set(CSR_MENVCFG_CFI, ENVCFG_LPE | ENVCFG_SSE);
    rv_csr_write_num(CSR_SENVCFG, ENVCFG_LPE | ENVCFG_SSE);
}

/*
 * name(x): x + 1, an indirect jump (through t1: a landing pad is
 * expected) to insn, then x + 3 more and a taken branch.  insn may use
 * %0 (x).
 */
#define CFI_JUMP_BLOCK(name, insn)                                      \
    static unsigned long name(unsigned long x)                          \
    {                                                                   \
        asm volatile("addi %0, %0, 1\n"                                 \
                     "lla t1, 2f\n"                                     \
                     "jr t1\n"                                          \
                     ".balign 4\n"                                      \
                     "2:\n"                                             \
                     insn                                               \
                     "addi %0, %0, 1\n"                                 \
                     "addi %0, %0, 1\n"                                 \
                     "addi %0, %0, 1\n"                                 \
                     "beqz zero, 1f\n"                                  \
                     "1:\n"                                             \
                     : "+r"(x) : : "t1", "memory");                     \
        return x;                                                       \
    }

#endif /* RVTEST_CFI_H */

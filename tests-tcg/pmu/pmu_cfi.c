/*
 * PMU events across the software-check exceptions of Zicfilp and
 * Zicfiss (-cpu ...,zicfilp=true,zicfiss=true): an sspopchk whose value
 * does not match the shadow stack's, in the middle of a block, and an
 * indirect jump to an instruction that is not a landing pad.  The
 * instruction whose check fails does not retire; the ones before it in
 * its block do, and the ones after it run only after the handler.  U
 * mode (senvcfg.SSE and LPE), address translation off (QEMU then makes
 * shadow stack accesses to any memory).  RV64 and RV32.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "pmu_test.h"
#include "cfi.h"

#define SS_VALUE            0x5a5a5a5aUL

static volatile unsigned long shadow[4];    /* read by sspopchk */

/*
 * Four instructions, sspopchk t0 against the shadow stack's SS_VALUE
 * (want in t0), three more and a taken branch: one block.
 */
static unsigned long sspopchk_block(unsigned long want)
{
    unsigned long t = 0;

    asm volatile("mv t0, %1\n"
                 "addi %0, %0, 1\n"
                 "addi %0, %0, 1\n"
                 "addi %0, %0, 1\n"
                 "addi %0, %0, 1\n"
                 SSPOPCHK_T0
                 "addi %0, %0, 1\n"
                 "addi %0, %0, 1\n"
                 "addi %0, %0, 1\n"
                 "beqz zero, 1f\n"
                 "1:\n"
                 : "+r"(t) : "r"(want) : "t0", "memory");
    return t;
}

/* An indirect jump to a landing pad, or to an instruction that is not */
CFI_JUMP_BLOCK(landing_block, LPAD_0)
CFI_JUMP_BLOCK(no_landing_block, "addi %0, %0, 1\n")

/* count_in_u(), the shadow stack pointer at SS_VALUE */
static uint64_t count_in_u_ss(uint64_t ev,
                              unsigned long (*block)(unsigned long),
                              unsigned long arg, unsigned long cause)
{
    shadow[0] = SS_VALUE;
    rv_csr_write_num(CSR_SSP, (unsigned long)&shadow[0]);
    return count_in_u(ev, block, arg, cause);
}

/*
 * The events the instruction whose check fails does not have; xtval
 * tells the check: 3 the shadow stack's, 2 the landing pad's.
 */
static uint64_t difference(uint64_t ev, bool shadow_stack)
{
    uint64_t d;

    if (shadow_stack) {
        d = count_in_u_ss(ev, sspopchk_block, SS_VALUE, RV_NO_TRAP) -
            count_in_u_ss(ev, sspopchk_block, ~SS_VALUE, CAUSE_SW_CHECK);
    } else {
        d = count_in_u_ss(ev, landing_block, 0, RV_NO_TRAP) -
            count_in_u_ss(ev, no_landing_block, 0, CAUSE_SW_CHECK);
    }
    CHECK_EQ(rv_last_trap.tval, shadow_stack ? SW_CHECK_SHADOW_STACK :
                                                SW_CHECK_LANDING_PAD);
    return d;
}

int main(void)
{
    stop_all();
    cfi_setup_u();
    CHECK_EQ(rv_csr_read_num(CSR_SENVCFG) & (ENVCFG_LPE | ENVCFG_SSE),
             ENVCFG_LPE | ENVCFG_SSE);

#if RV_XLEN == 32
    {
        /* (SD, bit 31, is read-only: the write sets nothing) */
        unsigned long m = csr_read(mstatus) | (1UL << 31);
        unsigned long mpelp = 1UL << (MPELP_BIT - 32);

        rv_rule("RV32: mstatush.MPELP is written through mstatush, and a "
                "write of mstatus leaves it as it was");
        csr_set(CSR_MSTATUSH, mpelp);
        CHECK_EQ(rv_csr_read_num(CSR_MSTATUSH) & mpelp, mpelp);
        csr_write(mstatus, m);
        CHECK_EQ(rv_csr_read_num(CSR_MSTATUSH) & mpelp, mpelp);
        csr_clear(CSR_MSTATUSH, mpelp);
        csr_write(mstatus, m);
        CHECK_EQ(rv_csr_read_num(CSR_MSTATUSH) & mpelp, 0);
    }
#endif
    for (int ss = 1; ss >= 0; ss--) {
        rv_rule(ss ? "an sspopchk that does not match, in the middle of a "
                     "block: a software-check exception" :
                     "an indirect jump to an instruction that is not a "
                     "landing pad: a software-check exception there");
        rv_rule("INST.RET counts the instructions before and after it, "
                "not it");
        CHECK_EQ(difference(EV_INST_RET, ss), 1);
        rv_rule("INST.DEC.SPEC counts it: it was decoded");
        CHECK_EQ(difference(EV_DEC, ss), 0);
        rv_rule("the branch that ends the block counts once");
        CHECK_EQ(difference(EV_BRJMP, ss), 0);
        CHECK_EQ(difference(EV_DEC_BRJMP, ss), 0);
    }
    stop_all();
    return 0;
}

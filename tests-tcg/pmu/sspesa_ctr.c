/*
 * Sspesa with Control Transfer Records and LCOFIFRZ: the LCOFI of a
 * precise event freezes CTR with the sampled instruction as the newest
 * record, so the history ends exactly at shpmspc (the note under
 * shpmspc in the draft).  Runs with the v0.1.4 draft (ctr=on) and with
 * the ratified Smctr/Ssctr 1.0 (smctr=on,ssctr=on); which one is found
 * by probing the draft's mctrcontrol.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "pmu_test.h"

#define CSR_MCTRCONTROL     0x381       /* draft */
#define CSR_MCTRSTATUS      0x383       /* draft */
#define CSR_MCTRCTL         0x34e       /* ratified */
#define CSR_SCTRSTATUS_1_0  0x14f       /* ratified */
#define CSR_SIREG2          0x152

#define DRAFT_M             (1UL << 0)
#define RATIFIED_M          (1UL << 2)
#define LCOFIFRZ            (1UL << 12)

/* Entry n of the CTR array (0: the newest), source and target. */
static void ctr_entry(unsigned n, unsigned long *src, unsigned long *dst)
{
    csr_write(CSR_SISELECT, 0x200 + n);
    *src = csr_read(CSR_SIREG);
    *dst = csr_read(CSR_SIREG2);
}

int main(void)
{
    unsigned long a[4], src, dst;
    bool draft;

    rv_trap_expect();
    rv_csr_read_num(CSR_MCTRCONTROL);
    draft = rv_trap_cause() == RV_NO_TRAP;
    rv_printf("  %s CTR\n", draft ? "draft (v0.1.4)" : "ratified (1.0)");

    rv_irq_set_handler(IRQ_LCOF, lcofi_record);
    csr_write(mcountinhibit, ~0UL);
    csr_write(CSR_MHPMEVENT3, EV_BRJMP_TK);
#if RV_XLEN == 32
    csr_write(mhpmcounter3h, ~0UL);     /* the asm writes the low half */
#endif
    csr_set(mie, LCOFIP);
    rv_irq_enable();
    if (draft) {
        csr_write(CSR_MCTRCONTROL, DRAFT_M | LCOFIFRZ);
    } else {
        csr_write(CSR_MCTRCTL, RATIFIED_M | LCOFIFRZ);
    }
    /* the second of three taken jumps overflows mhpmcounter3 */
    asm volatile("csrw mcountinhibit, %4\n"
                 "csrw mhpmcounter3, %5\n"
                 "0: j 1f\n"
                 "nop\n"
                 "1: j 2f\n"
                 "nop\n"
                 "2: j 3f\n"
                 "nop\n"
                 "3: lla %0, 0b\n"
                 "lla %1, 1b\n"
                 "lla %2, 2b\n"
                 "lla %3, 3b\n"
                 : "=&r"(a[0]), "=&r"(a[1]), "=&r"(a[2]), "=&r"(a[3])
                 : "r"(~(1UL << 3)), "r"(-2L) : "memory");
    rv_irq_disable();
    if (draft) {
        csr_write(CSR_MCTRCONTROL, 0);
    } else {
        csr_write(CSR_MCTRCTL, 0);
    }

    rv_rule("Sspesa: the sample is the second taken jump");
    CHECK_EQ(lcofi_taken, 1);
    CHECK_EQ(lcofi_spc, a[1]);
    rv_rule("Ssplcofi: the LCOFI is taken at the jump's target");
    CHECK_EQ(lcofi_epc, a[2]);
    ctr_entry(0, &src, &dst);
    rv_rule("LCOFIFRZ: the newest record is the sampled jump");
    CHECK_EQ(src & ~1UL, a[1]);
    CHECK_EQ(dst & ~1UL, a[2]);
    CHECK(src & 1);
    ctr_entry(1, &src, &dst);
    rv_rule("LCOFIFRZ: the record before it is the first jump");
    CHECK_EQ(src & ~1UL, a[0]);
    CHECK_EQ(dst & ~1UL, a[1]);
    if (draft) {
        csr_write(CSR_MCTRSTATUS, 0);
    } else {
        csr_write(CSR_SCTRSTATUS_1_0, 0);
    }
    return 0;
}

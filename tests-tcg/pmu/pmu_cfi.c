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

#define CSR_SSP             0x011
#define CSR_SENVCFG         0x10a
#define ENVCFG_LPE          (1UL << 2)
#define ENVCFG_SSE          (1UL << 3)
#define CAUSE_SW_CHECK      18
/* mstatus.MPELP, bit 41 (RV32: bit 9 of mstatush) */
#define MPELP_BIT           41

/* No assembler of the toolchain knows them: their encodings */
#define SSPOPCHK_T0         ".4byte 0xcdc2c073\n"
#define LPAD_0              ".4byte 0x00000017\n"

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

/*
 * An indirect jump (through t1: it expects a landing pad) to insn, then
 * three instructions and a taken branch: the target's block.
 */
#define LPAD_BLOCK(name, insn)                                          \
    static unsigned long name(unsigned long unused __attribute__((unused))) \
    {                                                                   \
        unsigned long t = 0;                                            \
                                                                        \
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
                     : "+r"(t) : : "t1", "memory");                     \
        return t;                                                       \
    }
LPAD_BLOCK(landing_block, LPAD_0)
LPAD_BLOCK(no_landing_block, "addi %0, %0, 1\n")

/* The handler skips the instruction; no landing pad is expected after */
static void clear_mpelp(const struct rv_trap *t)
{
    if (t->cause == CAUSE_SW_CHECK && t->to == RV_MODE_M) {
#if RV_XLEN == 32
        csr_clear(CSR_MSTATUSH, 1UL << (MPELP_BIT - 32));
#else
        csr_clear(mstatus, 1UL << MPELP_BIT);
#endif
    }
}

/*
 * Events of counter 3 (U mode only) while block(arg) runs in U, the
 * shadow stack pointer at SS_VALUE; the trap it takes, if cause is not
 * RV_NO_TRAP.
 */
static uint64_t count_in_u(uint64_t ev, unsigned long (*block)(unsigned long),
                           unsigned long arg, unsigned long cause)
{
    uint64_t c;

    shadow[0] = SS_VALUE;
    rv_csr_write_num(CSR_SSP, (unsigned long)&shadow[0]);
    set_event(3, ev | MINH | SINH);
    set_counter(3, 0);
    csr_write(mcountinhibit, ~(1UL << 3));
    if (cause != RV_NO_TRAP) {
        rv_trap_expect();
    }
    rv_run_in_mode(RV_MODE_U, block, arg);
    csr_write(mcountinhibit, ~0UL);
    c = get_counter(3);
    if (cause != RV_NO_TRAP) {
        CHECK_EQ(rv_trap_cause(), cause);
    }
    return c;
}

/*
 * The events the instruction whose check fails does not have; xtval
 * tells the check: 3 the shadow stack's, 2 the landing pad's.
 */
static uint64_t difference(uint64_t ev, bool shadow_stack)
{
    uint64_t d;

    if (shadow_stack) {
        d = count_in_u(ev, sspopchk_block, SS_VALUE, RV_NO_TRAP) -
            count_in_u(ev, sspopchk_block, ~SS_VALUE, CAUSE_SW_CHECK);
    } else {
        d = count_in_u(ev, landing_block, 0, RV_NO_TRAP) -
            count_in_u(ev, no_landing_block, 0, CAUSE_SW_CHECK);
    }
    CHECK_EQ(rv_last_trap.tval, shadow_stack ? 3 : 2);
    return d;
}

int main(void)
{
    stop_all();
    rv_trap_set_hook(clear_mpelp);
    csr_set(CSR_MENVCFG, ENVCFG_LPE | ENVCFG_SSE);
    rv_csr_write_num(CSR_SENVCFG, ENVCFG_LPE | ENVCFG_SSE);
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

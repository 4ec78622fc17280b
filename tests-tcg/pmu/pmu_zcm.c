/*
 * The instruction events, Sspesa, Ssplcofi and PDIS on a hart with Zcmp
 * and Zcmt (-cpu ...,zcmp=on,zcmt=on,zcd=off): cm.popret is a return and
 * a load, cm.push a store, cm.jalt a call and cm.jt a jump, not the
 * c.fsdsp stores their encodings would otherwise be (insn_class.h).  The
 * counts are exact, a sample lands on the cm.* instruction itself with
 * the LCOFI at its target, and a PDIS sample of control transfers
 * describes cm.popret as a return that went to its caller.  M mode, RV64
 * and RV32.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "pdis_test.h"
#include "zcm.h"

static volatile unsigned long scratch[4];   /* COUNT_BLOCK()'s %1 */

/* The events ev of one call (its li's and jal), from a block of its own */
#define COUNT_CALL(ev, call) ({                                         \
        unsigned long n_;                                               \
        set_event(3, (ev));                                             \
        COUNT_BLOCK(n_, call);                                          \
        n_;                                                             \
    })
#define ADD3        "li a0, 5\n li a1, 1\n jal add3\n"
#define VIA_JALT    "li a0, 5\n jal zcm_via_jalt\n"
#define VIA_JT      "li a0, 5\n jal zcm_via_jt\n"

static void test_counts(void)
{
    /* li, li, jal; add3: cm.push, mv, add, add, cm.popret */
    rv_rule("Zcmp: every instruction counts once (INST.DEC.SPEC, INST.RET)");
    CHECK_EQ(COUNT_CALL(EV_DEC, ADD3), 8);
    CHECK_EQ(COUNT_CALL(EV_INST_RET, ADD3), 8);
    rv_rule("Zcmp: cm.popret is a jump (INST.BRJMP, .TK, DEC.BRJMP)");
    CHECK_EQ(COUNT_CALL(EV_BRJMP, ADD3), 2);
    CHECK_EQ(COUNT_CALL(EV_BRJMP_TK, ADD3), 2);
    CHECK_EQ(COUNT_CALL(EV_DEC_BRJMP, ADD3), 2);
    rv_rule("Zcmp: cm.popret is one load, cm.push one store");
    CHECK_EQ(COUNT_CALL(EV_DEC_LOAD, ADD3), 1);
    CHECK_EQ(COUNT_CALL(EV_DEC_STORE, ADD3), 1);
    CHECK_EQ(COUNT_CALL(EV_DEC_LDST, ADD3), 2);

    /*
     * li, jal; push, li, cm.jalt; add3's five; addi, cm.popret: jumps
     * jal, cm.jalt and both cm.popret
     */
    rv_rule("Zcmt: cm.jalt is a jump (taken)");
    CHECK_EQ(COUNT_CALL(EV_DEC, VIA_JALT), 12);
    CHECK_EQ(COUNT_CALL(EV_BRJMP_TK, VIA_JALT), 4);
    CHECK_EQ(COUNT_CALL(EV_DEC_LOAD, VIA_JALT), 2);
    CHECK_EQ(COUNT_CALL(EV_DEC_STORE, VIA_JALT), 2);

    /* li, jal; li, cm.jt; add3's five */
    rv_rule("Zcmt: cm.jt is a jump (taken)");
    CHECK_EQ(COUNT_CALL(EV_DEC, VIA_JT), 9);
    CHECK_EQ(COUNT_CALL(EV_BRJMP_TK, VIA_JT), 3);
    stop_all();
}

/*
 * Events of counter 3 (U mode only) over zcm_via_jalt(5) in U, with
 * JVT.mode mode: 1 is reserved, and cm.jalt an illegal instruction
 * (raised by its helper), which the handler skips.
 */
static uint64_t count_jalt_in_u(uint64_t ev, unsigned mode)
{
    uint64_t c;

    asm volatile("csrw %0, %1" : : "i"(CSR_JVT),
                 "r"((unsigned long)zcm_jvt | mode) : "memory");
    c = count_in_u(ev, zcm_via_jalt, 5, mode ? 2 : RV_NO_TRAP);
    if (mode) {
        CHECK_EQ(rv_last_trap.tval, 0xa082);    /* cm.jalt 32 */
    }
    zcm_setup();
    return c;
}

static void test_jalt_fault(void)
{
    /* cm.jalt and add3's five, or nothing of them */
    rv_rule("Zcmt: a cm.jalt that faults in its helper (JVT.mode 1) does "
            "not retire, the instructions before it in its block do");
    CHECK_EQ(count_jalt_in_u(EV_INST_RET, 0) -
             count_jalt_in_u(EV_INST_RET, 1), 6);
    rv_rule("... and it was decoded");
    CHECK_EQ(count_jalt_in_u(EV_DEC, 0) - count_jalt_in_u(EV_DEC, 1), 5);
    stop_all();
}

/* ------------------------------------------------------------ samples */

/*
 * Counter 3 counts taken branches and jumps and overflows on the
 * second: the jal to fn, then the first taken transfer in fn.  *ret
 * gets the address after the jal.
 */
static void sample_second_jump(const void *fn, unsigned long *ret)
{
    unsigned long back;

    csr_write(CSR_SHPMSPC, 0);
    lcofi_taken = 0;
    set_event(3, EV_BRJMP_TK);
    set_counter(3, -2ULL);      /* the high half on RV32 */
    csr_set(mie, LCOFIP);
    rv_irq_enable();
    csr_write(mcountinhibit, ~(1UL << 3));
    asm volatile("csrw mhpmcounter3, %[n]\n"
                 "li a0, 5\n"
                 "li a1, 1\n"
                 "jalr %[fn]\n"
                 "1: lla %[back], 1b\n"
                 : [back] "=&r"(back)
                 : [n] "r"((unsigned long)-2L), [fn] "r"(fn)
                 : "ra", "a0", "a1", "memory");
    csr_write(mcountinhibit, ~0UL);
    rv_irq_disable();
    csr_clear(mie, LCOFIP);
    *ret = back;
}

static void test_samples(void)
{
    unsigned long ret;

    rv_irq_set_handler(IRQ_LCOF, lcofi_record);
    sample_second_jump((const void *)add3, &ret);
    rv_rule("Sspesa: cm.popret is the sample of its overflow");
    CHECK_EQ(lcofi_taken, 1);
    CHECK_EQ(lcofi_spc, (unsigned long)add3 + ZCM_ADD3_POPRET);
    rv_rule("Ssplcofi: epc is where cm.popret returned");
    CHECK_EQ(lcofi_epc, ret);

    sample_second_jump((const void *)zcm_via_jalt, &ret);
    rv_rule("Sspesa and Ssplcofi: cm.jalt, epc the table's target");
    CHECK_EQ(lcofi_spc, (unsigned long)zcm_via_jalt + ZCM_VIA_JALT_JALT);
    CHECK_EQ(lcofi_epc, (unsigned long)add3);

    sample_second_jump((const void *)zcm_via_jt, &ret);
    rv_rule("Sspesa and Ssplcofi: cm.jt, epc the table's target");
    CHECK_EQ(lcofi_spc, (unsigned long)zcm_via_jt + ZCM_VIA_JT_JT);
    CHECK_EQ(lcofi_epc, (unsigned long)add3);
    stop_all();
}

/* --------------------------------------------------------------- PDIS */

/*
 * PDIS selects the nth instruction of type sel in add3(5, 1) called by
 * a jal; rec gets its sample, *ret the address after the jal.
 */
static void pdis_sample_add3(unsigned sel, unsigned n, uint64_t *rec,
                             unsigned long *ret)
{
    unsigned long back;

    csr_write(mcountinhibit, ~0UL);
    pdis_write(CSR_MPDISCTL, PDIS_M | sel);
    pdis_write(CSR_SPDISCOUNTER, pdis_counter(n, 1000) & ~0xffffffffULL);
    csr_write(mcountinhibit, ~2UL);
    asm volatile("csrw 0x5c9, %[cnt]\n"
                 "li a0, 5\n"
                 "li a1, 1\n"
                 "jal add3\n"
                 "1: csrw mcountinhibit, %[all]\n"
                 "lla %[back], 1b\n"
                 : [back] "=&r"(back)
                 : [cnt] "r"((unsigned long)pdis_counter(n, 1000)),
                   [all] "r"(~0UL)
                 : "ra", "a0", "a1", "memory");
    pdis_read_data(rec);
    pdis_write(CSR_MPDISCTL, 0);
    *ret = back;
}

static void test_pdis(void)
{
    uint64_t rec[REC_N];
    unsigned long ret;

    pdis_sample_add3(PDIS_SEL_CTRL, 2, rec, &ret);
    rv_rule("PDIS SEL=4: cm.popret is the second control transfer, a "
            "return (RET), pdisadr1 where it returned");
    CHECK_EQ(rec[REC_PC], (unsigned long)add3 + ZCM_ADD3_POPRET);
    CHECK_EQ(HDR_TYPE(rec[REC_HDR]), PDIS_SEL_CTRL);
    CHECK(rec[REC_HDR] & HDR_RET);
    CHECK_EQ(rec[REC_ADR1], ret);

    pdis_sample_add3(PDIS_SEL_STORE, 1, rec, &ret);
    rv_rule("PDIS SEL=2: cm.push is the first store, several accesses "
            "(PARTIAL)");
    CHECK_EQ(rec[REC_PC], (unsigned long)add3);
    CHECK_EQ(HDR_TYPE(rec[REC_HDR]), PDIS_SEL_STORE);
    CHECK(rec[REC_HDR] & HDR_PARTIAL);

    pdis_sample_add3(PDIS_SEL_LOAD, 1, rec, &ret);
    rv_rule("PDIS SEL=1: cm.popret is the first load");
    CHECK_EQ(rec[REC_PC], (unsigned long)add3 + ZCM_ADD3_POPRET);
    CHECK_EQ(HDR_TYPE(rec[REC_HDR]), PDIS_SEL_LOAD);
    csr_write(mcountinhibit, ~0UL);
}

int main(void)
{
    zcm_setup();
    test_counts();
    test_jalt_fault();
    test_samples();
    test_pdis();
    return 0;
}

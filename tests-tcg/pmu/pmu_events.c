/*
 * The project's PMU instruction events (docs/pmu.rst, allocation.md):
 * exact counts whatever the translation blocks, a counter that overflows
 * on exactly the Nth event with that event's instruction as Sspesa's
 * sample and the LCOFI taken right after it (Ssplcofi), privilege
 * filtering, mcountinhibit, the Zicsr rule for CSR writes to a counter,
 * and an unknown event that counts nothing.  M mode, RV64 and RV32.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "pmu_test.h"

static volatile unsigned long scratch[4];   /* COUNT_BLOCK()'s %1 */

#if RV_XLEN == 32
#define LOAD lw
#define STORE sw
#else
#define LOAD ld
#define STORE sd
#endif

static unsigned long count_block(uint64_t ev)
{
    unsigned long n;

    set_event(3, ev);
    COUNT_BLOCK(n,
                "addi t0, zero, 1\n"
                RV_STR(LOAD) " t1, 0(%1)\n"
                "addi t0, t0, 1\n"
                RV_STR(STORE) " t0, 8(%1)\n"
                "amoadd.w t1, t0, (%1)\n"
                "lr.w t1, (%1)\n"
                "sc.w t1, t0, (%1)\n"
                "c.nop\n"
                "beq t0, zero, 1f\n"      /* not taken */
                "bne t0, zero, 1f\n"      /* taken */
                "nop\n"
                "1: j 2f\n"               /* taken jump */
                "nop\n"
                "2: nop\n");
    return n;
}

static void test_counts(void)
{
    /*
     * 12 instructions: 2 loads (ld, lr), 2 stores (sd, sc), 1 AMO, a
     * branch not taken, a branch and a jump taken
     */
    rv_rule("INST.DEC.SPEC counts every instruction, exactly");
    CHECK_EQ(count_block(EV_DEC), 12);
    rv_rule("INST.RET counts retired instructions, exactly");
    CHECK_EQ(count_block(EV_INST_RET), 12);
    rv_rule("INST.DEC.LOAD.SPEC counts loads, LR and AMOs");
    CHECK_EQ(count_block(EV_DEC_LOAD), 3);
    rv_rule("INST.DEC.STORE.SPEC counts stores, SC and AMOs");
    CHECK_EQ(count_block(EV_DEC_STORE), 3);
    rv_rule("INST.DEC.LDST.SPEC counts an AMO once");
    CHECK_EQ(count_block(EV_DEC_LDST), 5);
    rv_rule("INST.BRJMP counts branches and jumps retired");
    CHECK_EQ(count_block(EV_BRJMP), 3);
    rv_rule("INST.BRJMP.TK counts taken branches and jumps");
    CHECK_EQ(count_block(EV_BRJMP_TK), 2);
    rv_rule("INST.DEC.BRJMP.SPEC counts branches and jumps decoded");
    CHECK_EQ(count_block(EV_DEC_BRJMP), 3);
    rv_rule("an unknown event counts nothing");
    CHECK_EQ(count_block(0x123456), 0);
    CHECK_EQ(count_block(0xa00), 0);
    rv_rule("a counter with a PDIS event counts nothing without samples");
    CHECK_EQ(count_block(0x600), 0);
}

/* ----------------------------------------------------------- overflow */

/*
 * Counter 3 counts ev and overflows on the nth event of the block: the
 * sample is the nth instruction (when each counts once), and the LCOFI is
 * taken before the next one.  addr[] gets the block's addresses.
 */
static void overflow_at(uint64_t ev, unsigned n, unsigned long *addr)
{
    csr_write(CSR_SHPMSPC, 0);
    lcofi_taken = 0;
    set_event(3, ev);
    set_counter(3, -(uint64_t)n);
    csr_set(mie, LCOFIP);
    rv_irq_enable();
    csr_write(mcountinhibit, ~(1UL << 3));
    asm volatile("csrw mhpmcounter3, %7\n"
                 "0: addi t0, zero, 1\n"
                 "1: addi t0, t0, 1\n"
                 "2: bne t0, zero, 4f\n"
                 "3: nop\n"
                 "4: addi t0, t0, 1\n"
                 "5: j 7f\n"
                 "6: nop\n"
                 "7: addi t0, t0, 1\n"
                 "8: lla %0, 0b\n"
                 "lla %1, 1b\n"
                 "lla %2, 2b\n"
                 "lla %3, 4b\n"
                 "lla %4, 5b\n"
                 "lla %5, 7b\n"
                 "lla %6, 8b\n"
                 : "=&r"(addr[0]), "=&r"(addr[1]), "=&r"(addr[2]),
                   "=&r"(addr[3]), "=&r"(addr[4]), "=&r"(addr[5]),
                   "=&r"(addr[6])
                 : "r"((unsigned long)-(uint64_t)n) : "t0", "memory");
    csr_write(mcountinhibit, ~0UL);
    rv_irq_disable();
    csr_clear(mie, LCOFIP);
}

static void test_overflow(void)
{
    /* the block's instructions in order: 0, 1, 2 (taken), 4, 5 (jump), 7 */
    unsigned long a[7];

    rv_irq_set_handler(IRQ_LCOF, lcofi_record);
    for (unsigned n = 1; n <= 6; n++) {
        unsigned i = n - 1;

        overflow_at(EV_DEC, n, a);
        rv_printf("  INST.DEC.SPEC, overflow on event %u\n", n);
        rv_rule("Sspesa: shpmspc is the instruction of the Nth event");
        CHECK_EQ(lcofi_taken, 1);
        CHECK_EQ(lcofi_spc, a[i]);
        rv_rule("Sspesa: shpmsdata.CNTRID is the counter");
        CHECK_EQ(lcofi_sdata, 3);
        rv_rule("Ssplcofi: epc is the instruction after the sample "
                "(the target of a taken branch or jump)");
        CHECK_EQ(lcofi_epc, a[i + 1]);
        rv_rule("Sscofpmf: the overflow sets OF");
        CHECK(get_event(3) & OF);
    }

    /* taken transfers: the bne (2) then the j (5) */
    overflow_at(EV_BRJMP_TK, 1, a);
    rv_rule("Ssplcofi: a taken branch samples itself, epc is its target");
    CHECK_EQ(lcofi_spc, a[2]);
    CHECK_EQ(lcofi_epc, a[3]);
    overflow_at(EV_BRJMP_TK, 2, a);
    rv_rule("Ssplcofi: a jump samples itself, epc is its target");
    CHECK_EQ(lcofi_spc, a[4]);
    CHECK_EQ(lcofi_epc, a[5]);
    stop_all();
}

/* Two counters wrap on the same instruction; then a later one. */
static void test_simultaneous(void)
{
    unsigned long pc;

    csr_write(CSR_SHPMSPC, 0);
    set_event(4, EV_DEC);
    set_event(6, EV_DEC);
    set_event(5, EV_INST_RET);
    set_counter(4, -1ULL);
    set_counter(6, -1ULL);
    set_counter(5, -3ULL);
    /* LCOFI not enabled: the overflows stay pending */
    asm volatile("csrw mcountinhibit, %1\n"
                 "1: nop\n"
                 "nop\n"
                 "nop\n"
                 "nop\n"
                 "lla %0, 1b\n"
                 : "=&r"(pc) : "r"(~0x70UL) : "memory");
    csr_write(mcountinhibit, ~0UL);
    rv_rule("Sspesa: simultaneous overflows record the lowest counter");
    CHECK_EQ(csr_read(CSR_SHPMSDATA), 4);
    CHECK_EQ(csr_read(CSR_SHPMSPC), pc);
    rv_rule("Sspesa: a later overflow before the LCOFI is cleared "
            "does not overwrite the sample");
    CHECK(get_event(5) & OF);
    CHECK(csr_read(mip) & LCOFIP);
    stop_all();
}

/* Counters of two classes wrap on one instruction: the lower samples. */
static void test_simultaneous_classes(void)
{
    unsigned long pc;

    csr_write(CSR_SHPMSPC, 0);
    set_event(3, EV_DEC);
    set_event(4, EV_INST_RET);
    set_counter(3, -1ULL);
    set_counter(4, -1ULL);
    asm volatile("csrw mcountinhibit, %1\n"
                 "1: nop\n"
                 "lla %0, 1b\n"
                 : "=&r"(pc) : "r"(~0x18UL) : "memory");
    csr_write(mcountinhibit, ~0UL);
    rv_rule("Sspesa: counters of different events wrapping together "
            "record the lowest counter");
    CHECK(get_event(3) & OF);
    CHECK(get_event(4) & OF);
    CHECK_EQ(csr_read(CSR_SHPMSDATA), 3);
    CHECK_EQ(csr_read(CSR_SHPMSPC), pc);
    stop_all();
}

/*
 * A CSR write that starts a counter one event short of wrapping, in a
 * block that already counts its class: the write's own event wraps it.
 */
static void test_armed_by_csr_write(void)
{
    unsigned long pc;

    csr_write(CSR_SHPMSPC, 0);
    set_event(4, EV_DEC);
    set_event(3, EV_DEC);
    set_counter(3, -1ULL);
    csr_write(mcountinhibit, ~(1UL << 4));
    asm volatile("nop\n"
                 "1: csrw mcountinhibit, %1\n"
                 "nop\n"
                 "lla %0, 1b\n"
                 : "=&r"(pc) : "r"(~0x18UL) : "memory");
    csr_write(mcountinhibit, ~0UL);
    rv_rule("Sspesa: a counter that a CSR write starts wraps on the write's "
            "own event, which is the sample");
    CHECK(get_event(3) & OF);
    CHECK_EQ(csr_read(CSR_SHPMSDATA), 3);
    CHECK_EQ(csr_read(CSR_SHPMSPC), pc);
    stop_all();
}

/* ------------------------------------------------ CSR write rule, inh */

static void test_csr_write(void)
{
    unsigned long v;

    set_event(3, EV_INST_RET);
    csr_write(mcountinhibit, ~(1UL << 3));
    asm volatile("csrw mhpmcounter3, %1\n"
                 "csrr %0, mhpmcounter3\n"
                 : "=&r"(v) : "r"(1000UL));
    csr_write(mcountinhibit, ~0UL);
    rv_rule("Zicsr: a write to a counter is done instead of its increment");
    CHECK_EQ(v, 1000);

    set_counter(3, -1ULL);
    asm volatile("csrw mcountinhibit, %0\n"
                 "csrw mhpmcounter3, zero\n"
                 "nop\n" : : "r"(~(1UL << 3)));
    csr_write(mcountinhibit, ~0UL);
    rv_rule("Sscofpmf: a CSR write never causes an overflow");
    CHECK_EQ(get_event(3) & OF, 0);
    CHECK_EQ(csr_read(mip) & LCOFIP, 0);
    stop_all();

    set_event(3, EV_DEC);
    set_counter(3, 77);
    asm volatile("nop\nnop\nnop\n");
    rv_rule("mcountinhibit stops a counter");
    CHECK_EQ(get_counter(3), 77);
    stop_all();
}

/* n > 0 iterations of two instructions */
static unsigned long run_loop(unsigned long n)
{
    asm volatile("1: addi %0, %0, -1\n"
                 "bnez %0, 1b\n" : "+r"(n));
    return 0;
}

/* Events of counter 3 while run_loop(n) runs in mode m. */
static uint64_t count_in_mode(enum rv_mode m, unsigned long n)
{
    uint64_t c;

    set_counter(3, 0);
    csr_write(mcountinhibit, ~(1UL << 3));
    rv_run_in_mode(m, run_loop, n);
    csr_write(mcountinhibit, ~0UL);
    c = get_counter(3);
    return c;
}

static void test_filter(void)
{
    uint64_t d1, d2;

    set_event(3, EV_DEC | MINH);
    d1 = count_in_mode(RV_MODE_S, 10);
    d2 = count_in_mode(RV_MODE_S, 110);
    rv_rule("MINH: the count is S mode's only, exact in the loop");
    CHECK_EQ(d2 - d1, 200);
    CHECK_EQ(count_in_mode(RV_MODE_M, 100), 0);

    set_event(3, EV_DEC | MINH | SINH);
    rv_rule("MINH|SINH: S mode is not counted, U mode is");
    CHECK_EQ(count_in_mode(RV_MODE_S, 100), 0);
    d1 = count_in_mode(RV_MODE_U, 10);
    d2 = count_in_mode(RV_MODE_U, 20);
    CHECK_EQ(d2 - d1, 20);
    stop_all();

    /*
     * Counter 3 counts in S only, one event short; counter 4 in M only,
     * so that M-mode code counts the same event: the mret that enters S
     * runs in M.
     */
    set_event(3, EV_DEC | MINH | UINH);
    set_event(4, EV_DEC | SINH | UINH);
    set_counter(3, -1ULL);
    csr_write(CSR_SHPMSPC, 0);
    csr_write(mcountinhibit, ~0x18UL);
    rv_run_in_mode(RV_MODE_S, run_loop, 10);
    csr_write(mcountinhibit, ~0UL);
    rv_rule("SINH clear, MINH set: the mret into S counts in M, the first "
            "S-mode instruction wraps the counter");
    CHECK(get_event(3) & OF);
    CHECK(csr_read(CSR_SHPMSPC) != 0);
    /* (volatile: the instruction there, read as data) */
    CHECK(*(volatile uint32_t *)csr_read(CSR_SHPMSPC) != 0x30200073);
    stop_all();
}

/*
 * Four instructions, a load from addr, three more and a taken branch: one
 * block of translated code, which a load that faults leaves in its
 * middle.
 */
static unsigned long load_block(unsigned long addr)
{
    unsigned long t = 0;

    asm volatile("addi %0, %0, 1\n"
                 "addi %0, %0, 1\n"
                 "addi %0, %0, 1\n"
                 "addi %0, %0, 1\n"
                 RV_STR(LOAD) " t1, 0(%1)\n"
                 "addi %0, %0, 1\n"
                 "addi %0, %0, 1\n"
                 "addi %0, %0, 1\n"
                 "beqz zero, 1f\n"
                 "1:\n"
                 : "+r"(t) : "r"(addr) : "t1", "memory");
    return t;
}

/* The same with an illegal instruction (c.unimp) for the load, or c.nop. */
#define ILLEGAL_BLOCK(name, insn)                                       \
    static unsigned long name(unsigned long unused __attribute__((unused))) \
    {                                                                   \
        unsigned long t = 0;                                            \
                                                                        \
        asm volatile("addi %0, %0, 1\n"                                 \
                     "addi %0, %0, 1\n"                                 \
                     "addi %0, %0, 1\n"                                 \
                     "addi %0, %0, 1\n"                                 \
                     insn "\n"                                          \
                     "addi %0, %0, 1\n"                                 \
                     "addi %0, %0, 1\n"                                 \
                     "addi %0, %0, 1\n"                                 \
                     "beqz zero, 1f\n"                                  \
                     "1:\n"                                             \
                     : "+r"(t) : : "memory");                           \
        return t;                                                       \
    }
ILLEGAL_BLOCK(illegal_block, ".2byte 0")
ILLEGAL_BLOCK(legal_block, "c.nop")
/*
 * A trap register read from U: an illegal instruction raised by the CSR
 * helper, in a block that counts at its start (pmu_csr_is_quiet()).
 */
ILLEGAL_BLOCK(csr_block, "csrr zero, mscratch")

/* What traps in the middle of a block */
enum { TRAP_LOAD, TRAP_ILLEGAL, TRAP_CSR };

/*
 * Events that an instruction trapping in the middle of a block does not
 * have: the count without the trap minus the count with it.
 */
static uint64_t trap_difference(uint64_t ev, int kind)
{
    /* nothing on virt's bus at 0x8 */
    if (kind == TRAP_LOAD) {
        return count_in_u(ev, load_block, (unsigned long)&scratch,
                          RV_NO_TRAP) -
               count_in_u(ev, load_block, 0x8, 5);  /* load access fault */
    }
    return count_in_u(ev, legal_block, 0, RV_NO_TRAP) -
           count_in_u(ev, kind == TRAP_CSR ? csr_block : illegal_block, 0,
                      2);                           /* illegal instruction */
}

static void test_trap_in_block(void)
{
    static const char *const what[] = {
        [TRAP_LOAD] = "a load that faults in the middle of a block",
        [TRAP_ILLEGAL] = "an illegal instruction in the middle of a block",
        [TRAP_CSR] = "a CSR access from a helper that raises an illegal "
                     "instruction in the middle of a block",
    };

    for (int kind = TRAP_LOAD; kind <= TRAP_CSR; kind++) {
        rv_rule(what[kind]);
        rv_rule("INST.RET counts the instructions before and after it, "
                "not it");
        CHECK_EQ(trap_difference(EV_INST_RET, kind), 1);
        rv_rule("INST.DEC.SPEC counts it: it was decoded");
        CHECK_EQ(trap_difference(EV_DEC, kind), 0);
        rv_rule("INST.DEC.LOAD.SPEC and INST.DEC.LDST.SPEC count the load");
        CHECK_EQ(trap_difference(EV_DEC_LOAD, kind), 0);
        CHECK_EQ(trap_difference(EV_DEC_LDST, kind), 0);
        rv_rule("the branch that ends the block counts once");
        CHECK_EQ(trap_difference(EV_BRJMP, kind), 0);
        CHECK_EQ(trap_difference(EV_BRJMP_TK, kind), 0);
        CHECK_EQ(trap_difference(EV_DEC_BRJMP, kind), 0);
    }
    stop_all();
}

int main(void)
{
    stop_all();
    test_counts();
    test_overflow();
    test_simultaneous();
    test_simultaneous_classes();
    test_armed_by_csr_write();
    test_csr_write();
    test_filter();
    test_trap_in_block();
    return 0;
}

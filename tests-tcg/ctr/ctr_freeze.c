/*
 * CTR v0.1.4 draft, section 5.5 (Freeze), with 2.1 (LCOFIFRZ, BPFRZ) and
 * 2.4 (mctrstatus.FROZEN); implementation choice 9 (freeze uses the
 * control register of the mode the trap goes to).
 *
 * LCOFIFRZ and an LCOFI trap (Sscofpmf interrupt 13, from mhpmcounter3
 * counting instructions, event 2 of the SBI encoding QEMU's PMU takes),
 * into M and delegated into S; an LCOFI pending without a trap; BPFRZ and
 * ebreak, c.ebreak, an Sdtrig mcontrol6 trigger; FROZEN and recording.
 * Type filters keep the trap under test the only recordable transfer.
 * Run with -cpu rv64,ctr=on,sscofpmf=on (or rv32) -icount shift=0.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_test.h"

#define CSR_MCOUNTINHIBIT   0x320
#define CSR_MHPMEVENT3      0x323
#define CSR_MHPMEVENT3H     0x723
#define CSR_MHPMCOUNTER3    0xb03
#define CSR_MHPMCOUNTER3H   0xb83
#define CSR_TSELECT         0x7a0
#define CSR_TDATA1          0x7a1
#define CSR_TDATA2          0x7a2

#define HPM3                (1UL << 3)
#define PMU_EVENT_INSNS     2UL             /* SBI_PMU_HW_INSTRUCTIONS */
#if RV_XLEN == 64
#define CSR_OF_REG          CSR_MHPMEVENT3
#define RV_SX               "sd"
#define RV_LX               "ld"
#define RV_W                "8"
#else
#define CSR_OF_REG          CSR_MHPMEVENT3H
#define RV_SX               "sw"
#define RV_LX               "lw"
#define RV_W                "4"
#endif
#define HPMEVENT_OF         (1UL << (RV_XLEN - 1))  /* bit 63 of mhpmevent3 */
#define MIP_LCOFIP          (1UL << IRQ_LCOF)

/* Sdtrig mcontrol6: type 6, match in M, on execution, action 0. */
#define MCONTROL6_TYPE      (6UL << (RV_XLEN - 4))
#define MCONTROL6_M         (1UL << 6)
#define MCONTROL6_EXECUTE   (1UL << 2)

/* Record nothing but interrupts, or nothing but exceptions. */
#define ONLY_INTR   (CTR_INH_ALL & ~CTR_INTRINH)
#define ONLY_EXC    (CTR_INH_ALL & ~CTR_EXCINH)

/* Exception sources: one instruction at a known address, then ret. */
void bp_ebreak_fn(void), bp_cebreak_fn(void), bp_trigger_fn(void);
void bp_illegal_fn(void);
extern char bp_ebreak_insn[], bp_cebreak_insn[], bp_trigger_insn[];
extern char bp_illegal_insn[];
asm(".text\n.balign 4\n"
    "bp_ebreak_fn: bp_ebreak_insn:\n"
    ".option push\n.option norvc\n ebreak\n.option pop\n ret\n"
    "bp_cebreak_fn: bp_cebreak_insn: c.ebreak\n ret\n"
    "bp_trigger_fn: bp_trigger_insn: addi x0, x0, 0\n ret\n"
    "bp_illegal_fn: bp_illegal_insn: unimp\n ret\n");

/* Set by the M handler of the LCOFI (lcofi_taken: 1). */
static volatile unsigned long lcofi_taken, lcofi_epc, lcofi_status;

/* ------------------------------------------------------------ PMU */

/* mhpmcounter3 counts instructions and overflows ticks from now. */
static void pmu_arm(unsigned long ticks)
{
    csr_set(CSR_MCOUNTINHIBIT, HPM3);
    csr_write(CSR_MHPMEVENT3, PMU_EVENT_INSNS);     /* RV64: OF = 0 */
#if RV_XLEN == 32
    csr_write(CSR_MHPMEVENT3H, 0);                  /* OF = 0 */
    csr_write(CSR_MHPMCOUNTER3H, ~0UL);
#endif
    csr_write(CSR_MHPMCOUNTER3, -ticks);
    csr_clear(CSR_MIP, MIP_LCOFIP);
    csr_clear(CSR_MCOUNTINHIBIT, HPM3);
}

static void pmu_stop(void)
{
    csr_set(CSR_MCOUNTINHIBIT, HPM3);
    csr_clear(CSR_OF_REG, HPMEVENT_OF);
    csr_write(CSR_MHPMEVENT3, 0);
    csr_clear(CSR_MIP, MIP_LCOFIP);
    csr_clear(CSR_MIE, MIP_LCOFIP);
}

/* M: snapshot, clear OF and LCOFIP. */
static void lcofi_handler(unsigned irq)
{
    (void)irq;
    lcofi_status = csr_read(CSR_MCTRSTATUS);
    lcofi_epc = csr_read(CSR_MEPC);
    csr_clear(CSR_OF_REG, HPMEVENT_OF);
    csr_clear(CSR_MIP, MIP_LCOFIP);
    lcofi_taken = 1;
}

/*
 * S-mode vector for the delegated LCOFI (the library's S handler reads
 * misa, which traps in S): saves sepc and scause, masks sie.LCOFIE, sret.
 * s_lcofi[] = { t1 save, sepc, scause }.
 */
volatile unsigned long s_lcofi[3];
void s_lcofi_vector(void);
asm(".text\n.balign 4\n"
    "s_lcofi_vector: csrw sscratch, t0\n la t0, s_lcofi\n"
    RV_SX " t1, 0(t0)\n csrr t1, sepc\n " RV_SX " t1, " RV_W "(t0)\n"
    "csrr t1, scause\n " RV_SX " t1, 2*" RV_W "(t0)\n"
    "li t1, 0x2000\n csrc sie, t1\n"
    RV_LX " t1, 0(t0)\n csrr t0, sscratch\n sret\n");

/* Wait (in any mode) for a flag at address flag to become nonzero. */
static unsigned long wait_flag(unsigned long flag)
{
    for (unsigned long i = 0; i < 2000000; i++) {
        if (*(volatile unsigned long *)flag) {
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ probes */

static unsigned long wrptr(void)
{
    return csr_read(CSR_MCTRSTATUS) & CTRSTATUS_WRPTR;
}

static bool frozen(void)
{
    return csr_read(CSR_MCTRSTATUS) & CTRSTATUS_FROZEN;
}

/*
 * Turn M recording on, make one direct jump, turn M recording off; then
 * WRPTR must be n, and entry 0 that jump if it was to be recorded.
 */
static void probe(bool recorded, unsigned long n)
{
    unsigned long src, dst;
    struct ctr_entry e;

    asm volatile("csrsi 0x381, 1\n"
                 "1: j 2f\n"
                 "2: csrci 0x381, 1\n"
                 "la %0, 1b\n la %1, 2b\n"
                 : "=&r"(src), "=&r"(dst) : : "memory");
    e = ctr_read_entry(0);
    CHECK_EQ(wrptr(), n);
    if (recorded) {
        CHECK_EQ(e.source, src | CTRSOURCE_V);
        CHECK_EQ(e.target, dst);
    }
}

/* Entry 0 is a trap record of the given type, from epc to the vector. */
static void check_trap_record(unsigned type, unsigned long epc,
                              unsigned long vector)
{
    struct ctr_entry e = ctr_read_entry(0);

    CHECK_EQ(wrptr(), 1);
    CHECK_EQ(e.source, epc | CTRSOURCE_V);
    CHECK_EQ(e.target, vector & ~3UL);
    CHECK_EQ(e.data & CTRDATA_TYPE, type);
}

static void check_nothing_recorded(void)
{
    CHECK_EQ(wrptr(), 0);
    CHECK_EQ(csr_read(CSR_MCTRSTATUS) & CTRSTATUS_WRAP, 0);
    CHECK_EQ(ctr_read_entry(0).source, 0);
}

/* ------------------------------------------------------------ LCOFI */

/* Take one LCOFI trap in M with mctrcontrol = ctl; false if none came. */
static bool take_lcofi_m(unsigned long long ctl)
{
    bool ok;

    ctr_reset();
    lcofi_taken = 0;
    lcofi_status = ~0UL;
    pmu_arm(3000);
    csr_set(CSR_MIE, MIP_LCOFIP);
    ctr_write_mctrcontrol(ctl);
    rv_irq_enable();
    ok = wait_flag((unsigned long)&lcofi_taken);
    rv_irq_disable();
    ctr_write_mctrcontrol(ctl & ~CTR_M);
    pmu_stop();
    return ok;
}

static void test_lcofi_m(void)
{
    rv_rule("draft 5.5: LCOFIFRZ=0: the LCOFI trap is recorded, no freeze");
    if (CHECK(take_lcofi_m(CTR_M | ONLY_INTR))) {
        CHECK_EQ(lcofi_status & CTRSTATUS_FROZEN, 0);
        CHECK(!frozen());
        check_trap_record(CTR_TYPE_INTR, lcofi_epc, csr_read(CSR_MTVEC));
    }

    rv_rule("draft 5.5: BPFRZ=1 does not freeze on an LCOFI");
    if (CHECK(take_lcofi_m(CTR_M | CTR_BPFRZ | ONLY_INTR))) {
        CHECK(!frozen());
        check_trap_record(CTR_TYPE_INTR, lcofi_epc, csr_read(CSR_MTVEC));
    }

    rv_rule("draft 5.5: LCOFIFRZ=1: the LCOFI trap sets FROZEN, not recorded");
    if (CHECK(take_lcofi_m(CTR_M | CTR_LCOFIFRZ | ONLY_INTR))) {
        CHECK_EQ(lcofi_status & CTRSTATUS_FROZEN, CTRSTATUS_FROZEN);
        CHECK(frozen());
        check_nothing_recorded();
    }

    rv_rule("draft 5.5: FROZEN=1 inhibits recording until software clears it");
    /* Still frozen from the LCOFI; every type enabled, M on for the probe. */
    ctr_write_mctrcontrol(CTR_LCOFIFRZ);
    probe(false, 0);
    CHECK(frozen());
    check_nothing_recorded();
    csr_clear(CSR_MCTRSTATUS, CTRSTATUS_FROZEN);
    probe(true, 1);
    /* Set by software: the same, for a jump and for an exception. */
    csr_set(CSR_MCTRSTATUS, CTRSTATUS_FROZEN);
    probe(false, 1);
    ctr_write_mctrcontrol(CTR_M | ONLY_EXC);
    CHECK_TRAP(bp_ebreak_fn(), CAUSE_BREAKPOINT);
    ctr_write_mctrcontrol(CTR_LCOFIFRZ);
    CHECK(frozen());
    CHECK_EQ(wrptr(), 1);
    CHECK_EQ(ctr_read_entry(1).source, 0);
    csr_clear(CSR_MCTRSTATUS, CTRSTATUS_FROZEN);
    probe(true, 2);
    ctr_reset();
}

/* The overflow is pending (mip) but does not trap: no freeze. */
static void test_lcofi_no_trap(bool global_off)
{
    bool pending = false;

    rv_rule(global_off ? "draft 5.5: LCOFI pending in mip with mstatus.MIE=0 "
                      "does not freeze" :
                      "draft 5.5: LCOFI pending in mip with mie.LCOFIE=0 "
                      "does not freeze");
    ctr_reset();
    lcofi_taken = 0;
    pmu_arm(500);
    if (global_off) {
        csr_set(CSR_MIE, MIP_LCOFIP);
    } else {
        rv_irq_enable();
    }
    ctr_write_mctrcontrol(CTR_M | CTR_LCOFIFRZ | CTR_BPFRZ | ONLY_INTR);
    for (unsigned i = 0; i < 100000 && !pending; i++) {
        pending = csr_read(CSR_MIP) & MIP_LCOFIP;
    }
    ctr_write_mctrcontrol(CTR_LCOFIFRZ | CTR_BPFRZ);
    CHECK(pending);
    CHECK(csr_read(CSR_OF_REG) & HPMEVENT_OF);
    CHECK_EQ(lcofi_taken, 0);
    CHECK(!frozen());
    check_nothing_recorded();
    probe(true, 1);                             /* still recording */
    pmu_stop();
    rv_irq_disable();
    ctr_reset();
}

/* Delegated LCOFI from U into S: mctrcontrol governs it (choice 9). */
static void test_lcofi_s(bool frz)
{
    unsigned long stvec = csr_read(CSR_STVEC), sscratch, ok;

    rv_rule(frz ? "choice 9: LCOFI delegated U->S, mctrcontrol.LCOFIFRZ=1 "
                  "freezes, not recorded" :
                  "choice 9: LCOFI delegated U->S, LCOFIFRZ=0: recorded");
    ctr_reset();
    s_lcofi[1] = s_lcofi[2] = 0;
    sscratch = csr_read(CSR_SSCRATCH);
    csr_write(CSR_STVEC, (unsigned long)s_lcofi_vector);
    pmu_arm(4000);
    csr_set(CSR_MIDELEG, MIP_LCOFIP);
    csr_set(CSR_MIE, MIP_LCOFIP);
    ctr_write_mctrcontrol(CTR_S | CTR_U | ONLY_INTR |
                          (frz ? CTR_LCOFIFRZ : 0));
    ok = rv_run_in_mode(RV_MODE_U, wait_flag, (unsigned long)&s_lcofi[2]);
    ctr_write_mctrcontrol(ONLY_INTR);
    csr_clear(CSR_MIDELEG, MIP_LCOFIP);
    pmu_stop();
    csr_write(CSR_STVEC, stvec);
    csr_write(CSR_SSCRATCH, sscratch);
    if (!CHECK(ok)) {
        return;
    }
    CHECK_EQ(s_lcofi[2], CAUSE_IRQ_FLAG | IRQ_LCOF);
    if (frz) {
        CHECK(frozen());
        check_nothing_recorded();
    } else {
        CHECK(!frozen());
        check_trap_record(CTR_TYPE_INTR, s_lcofi[1],
                          (unsigned long)s_lcofi_vector);
    }
    ctr_reset();
}

/* ------------------------------------------------------- breakpoints */

static void trigger_set(unsigned long tdata1, unsigned long addr)
{
    csr_write(CSR_TSELECT, 0);
    csr_write(CSR_TDATA1, MCONTROL6_TYPE);      /* disabled while moved */
    csr_write(CSR_TDATA2, addr);
    csr_write(CSR_TDATA1, tdata1);
}

/* One exception from fn in M with mctrcontrol = ctl; returns its cause. */
static unsigned long take_exception(void (*fn)(void), unsigned long long ctl)
{
    ctr_reset();
    ctr_write_mctrcontrol(ctl);
    rv_trap_expect();
    fn();
    ctr_write_mctrcontrol(ctl & ~CTR_M);
    return rv_trap_cause();
}

static void test_breakpoints(void)
{
    static const struct { const char *name; void (*fn)(void); char *insn; }
    bps[] = {
        { "ebreak", bp_ebreak_fn, bp_ebreak_insn },
        { "c.ebreak", bp_cebreak_fn, bp_cebreak_insn },
        { "Sdtrig mcontrol6 execute trigger", bp_trigger_fn, bp_trigger_insn },
    };
    unsigned long mtvec = csr_read(CSR_MTVEC);
    unsigned long tdata1 = MCONTROL6_TYPE | MCONTROL6_M | MCONTROL6_EXECUTE;
    unsigned n = sizeof(bps) / sizeof(bps[0]);

    /* Patch 0008 fixed the RV32 trigger, which used to crash QEMU. */
    rv_rule("environment: an Sdtrig mcontrol6 execute trigger is armed");
    trigger_set(tdata1, (unsigned long)bp_trigger_insn);
    CHECK_EQ(csr_read(CSR_TDATA1), tdata1);
    CHECK_EQ(csr_read(CSR_TDATA2), (unsigned long)bp_trigger_insn);

    for (unsigned i = 0; i < n; i++) {
        unsigned long pc = (unsigned long)bps[i].insn;

        rv_printf("breakpoint source: %s\n", bps[i].name);
        rv_rule("draft 5.5: BPFRZ=0: a breakpoint exception is recorded, "
                "no freeze");
        CHECK_EQ(take_exception(bps[i].fn, CTR_M | ONLY_EXC),
                 CAUSE_BREAKPOINT);
        CHECK(!frozen());
        check_trap_record(CTR_TYPE_EXC, pc, mtvec);

        rv_rule("draft 5.5: LCOFIFRZ=1 does not freeze on a breakpoint");
        CHECK_EQ(take_exception(bps[i].fn, CTR_M | CTR_LCOFIFRZ | ONLY_EXC),
                 CAUSE_BREAKPOINT);
        CHECK(!frozen());
        check_trap_record(CTR_TYPE_EXC, pc, mtvec);

        rv_rule("draft 5.5: BPFRZ=1: a breakpoint exception sets FROZEN, "
                "not recorded");
        CHECK_EQ(take_exception(bps[i].fn, CTR_M | CTR_BPFRZ | ONLY_EXC),
                 CAUSE_BREAKPOINT);
        CHECK(frozen());
        check_nothing_recorded();

        rv_rule("draft 5.5: after a breakpoint freeze, clearing FROZEN "
                "resumes recording");
        ctr_write_mctrcontrol(CTR_BPFRZ);       /* every type enabled */
        probe(false, 0);
        check_nothing_recorded();
        csr_clear(CSR_MCTRSTATUS, CTRSTATUS_FROZEN);
        probe(true, 1);
    }
    trigger_set(MCONTROL6_TYPE, 0);             /* no mode: disabled */

    rv_rule("draft 5.5: BPFRZ=1 freezes on breakpoints only: an illegal "
            "instruction is recorded");
    CHECK_EQ(take_exception(bp_illegal_fn,
                            CTR_M | CTR_BPFRZ | CTR_LCOFIFRZ | ONLY_EXC),
             CAUSE_ILLEGAL_INSN);
    CHECK(!frozen());
    check_trap_record(CTR_TYPE_EXC, (unsigned long)bp_illegal_insn, mtvec);

    rv_rule("draft 5.5: BPFRZ=1 freezes with every type inhibited too");
    CHECK_EQ(take_exception(bp_ebreak_fn, CTR_M | CTR_BPFRZ | CTR_INH_ALL),
             CAUSE_BREAKPOINT);
    CHECK(frozen());
    check_nothing_recorded();
    ctr_reset();
}

int main(void)
{
    rv_irq_set_handler(IRQ_LCOF, lcofi_handler);
    test_lcofi_m();
    test_lcofi_no_trap(true);
    test_lcofi_no_trap(false);
    test_lcofi_s(false);
    test_lcofi_s(true);
    test_breakpoints();
    return 0;
}

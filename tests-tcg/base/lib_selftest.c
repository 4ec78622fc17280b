/*
 * The rvtest library against the privileged spec: trap causes and the
 * mode they come from, mode switching, CSR access by number, the machine
 * timer interrupt.  Every feature test relies on these.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"

#define CSR_CUSTOM_URW 0x8ff    /* custom read/write, not implemented */

static unsigned long twice_plus_one(unsigned long x)
{
    return 2 * x + 1;
}

static unsigned long do_ecall(unsigned long unused)
{
    (void)unused;
    asm volatile("li a7, 0; ecall" : : : "a7", "memory");
    return 0;
}

static unsigned long read_mscratch(unsigned long unused)
{
    (void)unused;
    CHECK_TRAP(csr_read(CSR_MSCRATCH), CAUSE_ILLEGAL_INSN);
    return rv_last_trap.from;
}

static unsigned long read_sscratch(unsigned long unused)
{
    (void)unused;
    rv_trap_expect();
    csr_read(CSR_SSCRATCH);
    return rv_trap_cause();
}

static unsigned long read_hstatus(unsigned long unused)
{
    (void)unused;
    rv_trap_expect();
    csr_read(CSR_HSTATUS);
    return rv_trap_cause();
}

/* Nothing is mapped at 0 on virt: fetching there is an access fault. */
static void (*volatile no_memory)(void) = (void (*)(void))0x0;

/* An illegal instruction in U mode; returns the mode that took it. */
static unsigned long illegal_in_u(unsigned long unused)
{
    (void)unused;
    /* unimp: csrrw x0, cycle, x0 writes a read-only CSR */
    CHECK_TRAP(asm volatile(".word 0xc0001073"), CAUSE_ILLEGAL_INSN);
    return rv_last_trap.to;
}

static volatile unsigned long timer_irqs;

static void on_timer(unsigned irq)
{
    CHECK_EQ(irq, IRQ_M_TIMER);
    timer_irqs++;
    rv_timer_disarm();
}

int main(void)
{
    static const struct {
        enum rv_mode mode;
        unsigned long ecall_cause;
    } modes[] = {
        { RV_MODE_U, CAUSE_ECALL_U },
        { RV_MODE_S, CAUSE_ECALL_S },
        { RV_MODE_VU, CAUSE_ECALL_U },
        { RV_MODE_VS, CAUSE_ECALL_VS },
    };
    unsigned i;

    rv_rule("run_in_mode returns the function's result");
    for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        CHECK_EQ(rv_run_in_mode(modes[i].mode, twice_plus_one, 20 + i),
                 41 + 2 * i);
    }

    rv_rule("ecall cause names the mode it comes from (priv 3.1.15)");
    for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        rv_trap_expect();
        rv_run_in_mode(modes[i].mode, do_ecall, 0);
        CHECK_EQ(rv_trap_cause(), modes[i].ecall_cause);
        CHECK_EQ(rv_last_trap.from, modes[i].mode);
        CHECK_EQ(rv_last_trap.to, RV_MODE_M);
    }

    rv_rule("M-level CSR from S or U is an illegal instruction");
    CHECK_EQ(rv_run_in_mode(RV_MODE_S, read_mscratch, 0), RV_MODE_S);
    CHECK_EQ(rv_run_in_mode(RV_MODE_U, read_mscratch, 0), RV_MODE_U);

    rv_rule("S CSR from U is illegal, from VU a virtual instruction (H 9.6.1)");
    CHECK_EQ(rv_run_in_mode(RV_MODE_U, read_sscratch, 0), CAUSE_ILLEGAL_INSN);
    CHECK_EQ(rv_run_in_mode(RV_MODE_VU, read_sscratch, 0), CAUSE_VIRTUAL_INSN);
    CHECK_EQ(rv_run_in_mode(RV_MODE_VS, read_sscratch, 0), RV_NO_TRAP);

    rv_rule("HS CSR from VS is a virtual instruction, from S it works");
    CHECK_EQ(rv_run_in_mode(RV_MODE_VS, read_hstatus, 0), CAUSE_VIRTUAL_INSN);
    CHECK_EQ(rv_run_in_mode(RV_MODE_S, read_hstatus, 0), RV_NO_TRAP);

    rv_rule("CSR access by run-time number");
    csr_write(CSR_MTVAL, 0x5a5a);   /* mscratch is the trap stack */
    CHECK_NO_TRAP(CHECK_EQ(rv_csr_read_num(CSR_MTVAL), 0x5a5a));
    rv_csr_write_num(CSR_MTVAL, 0x1234);
    CHECK_EQ(csr_read(CSR_MTVAL), 0x1234);
    CHECK_TRAP(rv_csr_read_num(CSR_CUSTOM_URW), CAUSE_ILLEGAL_INSN);
    CHECK_EQ(rv_last_trap.tval & 0xfff0007f, ((unsigned long)CSR_CUSTOM_URW << 20) | 0x73);

    rv_rule("a 2-byte trapping instruction resumes 2 bytes later");
    CHECK_TRAP(asm volatile(".option push; .option rvc; c.ebreak; .option pop"),
               CAUSE_BREAKPOINT);
    CHECK_TRAP(asm volatile("ebreak"), CAUSE_BREAKPOINT);

    rv_rule("a fetch fault resumes at the caller");
    CHECK_TRAP(no_memory(), CAUSE_FETCH_ACCESS);
    CHECK_EQ(rv_last_trap.epc, 0);

    rv_rule("a trap delegated to S is handled in S");
    csr_write(CSR_MEDELEG, 1UL << CAUSE_ILLEGAL_INSN);
    CHECK_EQ(rv_run_in_mode(RV_MODE_U, illegal_in_u, 0), RV_MODE_S);
    csr_write(CSR_MEDELEG, 0);

    rv_rule("machine timer interrupt (CLINT mtimecmp, mie.MTIE)");
    rv_irq_set_handler(IRQ_M_TIMER, on_timer);
    rv_timer_arm(1000);
    rv_irq_enable();
    CHECK(rv_wait_until(&timer_irqs, 1, 10000000));
    rv_irq_disable();
    CHECK_EQ(timer_irqs, 1);
    return 0;
}

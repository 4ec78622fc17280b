/*
 * Sspesa draft: who may access shpmspc (0x5e0) and shpmsdata (0x5e1) and
 * with which exception, what they hold (WARL), which overflows update
 * them under counter delegation (menvcfg.CDE); Ssplcofi with the LCOFI
 * delegated to S mode, and a VS-mode instruction sampled into M; and
 * which instruction events an instruction that traps counts (decoded,
 * not retired).
 * Runs with h=on,sscofpmf=on,smcdeleg=on,ssccfg=on,smcsrind=on,
 * sscsrind=on,sspesa=on,ssplcofi=on.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "pmu_test.h"

#define NONE    RV_NO_TRAP
#define ILL     CAUSE_ILLEGAL_INSN
#define VIRT    CAUSE_VIRTUAL_INSN

static void set_cde(bool on)
{
#if RV_XLEN == 32
    if (on) {
        csr_set(CSR_MENVCFGH, 1UL << 28);
    } else {
        csr_clear(CSR_MENVCFGH, 1UL << 28);
    }
#else
    if (on) {
        csr_set(CSR_MENVCFG, 1UL << 60);
    } else {
        csr_clear(CSR_MENVCFG, 1UL << 60);
    }
#endif
}

/* ------------------------------------------------------------- access */

static unsigned long access_csr(unsigned long csr_write_flag)
{
    unsigned csr = csr_write_flag >> 1;

    rv_trap_expect();
    if (csr_write_flag & 1) {
        rv_csr_write_num(csr, 0);
    } else {
        rv_csr_read_num(csr);
    }
    return rv_trap_cause();
}

static unsigned long expected(enum rv_mode m, bool cde)
{
    switch (m) {
    case RV_MODE_M:
        return NONE;
    case RV_MODE_S:
        return cde ? NONE : ILL;
    case RV_MODE_U:
        return ILL;
    default:
        return cde ? VIRT : ILL;
    }
}

static void test_access(void)
{
    static const enum rv_mode modes[] = {
        RV_MODE_M, RV_MODE_S, RV_MODE_U, RV_MODE_VS, RV_MODE_VU,
    };
    static const unsigned csrs[] = { CSR_SHPMSPC, CSR_SHPMSDATA };

    for (int cde = 0; cde <= 1; cde++) {
        set_cde(cde);
        for (unsigned i = 0; i < 5; i++) {
            for (unsigned c = 0; c < 2; c++) {
                for (unsigned w = 0; w <= 1; w++) {
                    unsigned long cause;

                    cause = rv_run_in_mode(modes[i], access_csr,
                                           csrs[c] << 1 | w);
                    rv_printf("  %s %s 0x%x with CDE=%d\n",
                              rv_mode_name(modes[i]), w ? "writes" : "reads",
                              csrs[c], cde);
                    rv_rule("Sspesa: M always; S only with CDE; VS and VU a "
                            "virtual instruction with CDE, else illegal");
                    CHECK_EQ(cause, expected(modes[i], cde));
                }
            }
        }
    }
    set_cde(false);
}

static void test_warl(void)
{
    unsigned long pc = (unsigned long)0x8000123456789abeULL;

    csr_write(CSR_SHPMSDATA, ~0UL);
    rv_rule("shpmsdata: CNTRID (bits 4:0) only, the other bits read 0");
    CHECK_EQ(csr_read(CSR_SHPMSDATA), 0x1f);
    csr_write(CSR_SHPMSPC, pc);
    rv_rule("shpmspc: holds any valid virtual address");
    CHECK_EQ(csr_read(CSR_SHPMSPC), pc);
    csr_write(CSR_SHPMSPC, 0);
    csr_write(CSR_SHPMSDATA, 0);
}

/* Counter n at -1 counting INST.RET overflows on the next instruction. */
static unsigned long overflow_now(unsigned n)
{
    unsigned long pc;

    set_event(n, EV_INST_RET);
    set_counter(n, -1ULL);
    asm volatile("csrw mcountinhibit, %1\n"
                 "1: nop\n"
                 "lla %0, 1b\n"
                 : "=&r"(pc) : "r"(~(1UL << n)) : "memory");
    csr_write(mcountinhibit, ~0UL);
    return pc;
}

static void test_delegated_only(void)
{
    unsigned long pc;

    set_cde(true);
    csr_write(CSR_MCOUNTEREN, 1UL << 3);
    csr_write(CSR_SHPMSPC, 0);
    overflow_now(4);
    rv_rule("Sspesa: with CDE, the overflow of a counter not delegated "
            "(mcounteren[i]=0) does not sample");
    CHECK(csr_read(mip) & LCOFIP);
    CHECK_EQ(csr_read(CSR_SHPMSPC), 0);
    stop_all();

    pc = overflow_now(3);
    rv_rule("Sspesa: with CDE, a delegated counter's overflow samples");
    CHECK_EQ(csr_read(CSR_SHPMSPC), pc);
    CHECK_EQ(csr_read(CSR_SHPMSDATA), 3);
    stop_all();

    set_cde(false);
    pc = overflow_now(4);
    rv_rule("Sspesa: without CDE, every counter's overflow samples");
    CHECK_EQ(csr_read(CSR_SHPMSPC), pc);
    CHECK_EQ(csr_read(CSR_SHPMSDATA), 4);
    stop_all();
    csr_write(CSR_MCOUNTEREN, 0);
}

/* ------------------------------------------------ LCOFI delegated to S */

static volatile unsigned long s_epc, s_spc, s_taken;

static void s_lcofi_handler(unsigned irq)
{
    (void)irq;
    csr_write(CSR_SCOUNTINHIBIT, 1UL << 3);
    s_epc = csr_read(sepc);
    s_spc = csr_read(CSR_SHPMSPC);
    s_taken++;
    csr_clear(sip, LCOFIP);
}

/*
 * In S mode: hpmcounter3 (delegated) is set through sireg to overflow on
 * the second instruction after the write, a taken branch.
 */
static unsigned long s_block(unsigned long arg)
{
    unsigned long *a = (unsigned long *)arg;

    csr_write(CSR_SISELECT, 0x43);
    csr_set(sie, LCOFIP);
    csr_set(sstatus, 1UL << 1);
    asm volatile("csrw " RV_STR(CSR_SIREG) ", %3\n"
                 "0: addi t0, zero, 1\n"
                 "1: bnez t0, 3f\n"
                 "2: nop\n"
                 "3: nop\n"
                 "lla %0, 0b\n"
                 "lla %1, 1b\n"
                 "lla %2, 3b\n"
                 : "=&r"(a[0]), "=&r"(a[1]), "=&r"(a[2])
                 : "r"(-2UL) : "t0", "memory");
    csr_clear(sstatus, 1UL << 1);
    return 0;
}

static void test_s_mode_lcofi(void)
{
    unsigned long a[3];

    set_cde(true);
    csr_write(CSR_MCOUNTEREN, 1UL << 3);
    csr_set(mideleg, LCOFIP);
    rv_irq_set_handler(IRQ_LCOF, s_lcofi_handler);
    set_event(3, EV_DEC | MINH);
#if RV_XLEN == 32
    set_counter(3, 0xffffffff00000000ULL);
#endif
    csr_write(mcountinhibit, ~(1UL << 3));
    csr_write(CSR_SHPMSPC, 0);
    rv_run_in_mode(RV_MODE_S, s_block, (unsigned long)a);
    csr_write(mcountinhibit, ~0UL);
    rv_rule("Ssplcofi: delegated LCOFI taken in S right after the sample");
    CHECK_EQ(s_taken, 1);
    rv_rule("Sspesa: S mode reads the sample of a delegated counter");
    CHECK_EQ(s_spc, a[1]);
    rv_rule("Ssplcofi: sepc is the taken branch's target");
    CHECK_EQ(s_epc, a[2]);
    csr_clear(mideleg, LCOFIP);
    csr_write(CSR_MCOUNTEREN, 0);
    set_cde(false);
    stop_all();
}

/* ------------------------------------------------------ VS mode samples */

static volatile unsigned long vs_epc, vs_spc, vs_mpv, vs_taken;

static void m_lcofi_handler(unsigned irq)
{
    (void)irq;
    csr_write(mcountinhibit, ~0UL);
    vs_epc = csr_read(mepc);
    vs_spc = csr_read(CSR_SHPMSPC);
#if RV_XLEN == 32
    vs_mpv = csr_read(0x310) & (1UL << 7);      /* mstatush.MPV */
#else
    vs_mpv = csr_read(mstatus) & (1UL << 39);   /* mstatus.MPV */
#endif
    vs_taken++;
    csr_clear(mip, LCOFIP);
}

/* 1000 iterations of three 4-byte instructions; a[] gets their addresses */
static unsigned long vs_loop(unsigned long arg)
{
    unsigned long *a = (unsigned long *)arg, n = 1000;

    asm volatile(".option push\n"
                 ".option norvc\n"
                 "1: addi %0, %0, -1\n"
                 "2: xori t0, %0, 1\n"
                 "3: bnez %0, 1b\n"
                 ".option pop\n"
                 "lla %1, 1b\n"
                 "lla %2, 2b\n"
                 "lla %3, 3b\n"
                 : "+r"(n), "=&r"(a[0]), "=&r"(a[1]), "=&r"(a[2]) : : "t0");
    return 0;
}

static void test_vs_sample(void)
{
    unsigned long a[3];

    /* counts in VS only; the LCOFI goes to M */
    set_event(3, EV_DEC | MINH | SINH | UINH | VUINH);
    set_counter(3, -1000ULL);
    rv_irq_set_handler(IRQ_LCOF, m_lcofi_handler);
    csr_set(mie, LCOFIP);
    csr_write(CSR_SHPMSPC, 0);
    csr_write(mcountinhibit, ~(1UL << 3));
    rv_run_in_mode(RV_MODE_VS, vs_loop, (unsigned long)a);
    csr_write(mcountinhibit, ~0UL);
    csr_clear(mie, LCOFIP);
    rv_printf("  VS sample 0x%lx, mepc 0x%lx\n", vs_spc, vs_epc);
    rv_rule("Sspesa: a VS-mode instruction is sampled (VSINH clear)");
    CHECK_EQ(vs_taken, 1);
    CHECK(vs_mpv);
    CHECK(vs_spc == a[0] || vs_spc == a[1] || vs_spc == a[2]);
    rv_rule("Ssplcofi: from VS, mepc is the next instruction");
    CHECK_EQ(vs_epc, vs_spc == a[2] ? a[0] : vs_spc + 4);
    stop_all();
}

/* ------------------------------------------------- instructions that trap */

static volatile unsigned long word, trap_cause;

/*
 * In S mode, hpmcounter3 (mcounteren[3]) read around one instruction: the
 * delta counts the first read and that instruction, not the trap into M
 * (MINH).
 */
static unsigned long around_load(unsigned long addr)
{
    unsigned long a, b, v;

    rv_trap_expect();
    asm volatile("csrr %0, hpmcounter3\n"
                 "lw %2, 0(%3)\n"
                 "csrr %1, hpmcounter3\n"
                 : "=&r"(a), "=&r"(b), "=&r"(v) : "r"(addr) : "memory");
    trap_cause = rv_trap_cause();
    return b - a;
}

static unsigned long around_ecall(unsigned long arg)
{
    unsigned long a, b;

    (void)arg;
    rv_trap_expect();
    asm volatile("li a7, 0\n"
                 "csrr %0, hpmcounter3\n"
                 "ecall\n"
                 "csrr %1, hpmcounter3\n"
                 : "=&r"(a), "=&r"(b) : : "a7", "memory");
    trap_cause = rv_trap_cause();
    return b - a;
}

static unsigned long delta_s(uint64_t ev, unsigned long (*fn)(unsigned long),
                             unsigned long arg)
{
    unsigned long d;

    set_event(3, ev | MINH);
    csr_write(mcountinhibit, ~(1UL << 3));
    d = rv_run_in_mode(RV_MODE_S, fn, arg);
    csr_write(mcountinhibit, ~0UL);
    return d;
}

static void test_trapping(void)
{
    unsigned long ok = (unsigned long)&word;

    csr_write(CSR_MCOUNTEREN, 1UL << 3);
    rv_rule("a load that completes: decoded, retired, a load");
    CHECK_EQ(delta_s(EV_DEC, around_load, ok), 2);
    CHECK_EQ(delta_s(EV_INST_RET, around_load, ok), 2);
    CHECK_EQ(delta_s(EV_DEC_LOAD, around_load, ok), 1);
    CHECK_EQ(trap_cause, NONE);

    rv_rule("a load that faults is decoded: INST.DEC.SPEC and "
            "INST.DEC.LOAD.SPEC count it");
    CHECK_EQ(delta_s(EV_DEC, around_load, 0), 2);
    CHECK_EQ(trap_cause, CAUSE_LOAD_ACCESS);
    CHECK_EQ(delta_s(EV_DEC_LOAD, around_load, 0), 1);
    rv_rule("a load that faults does not retire: INST.RET does not count it");
    CHECK_EQ(delta_s(EV_INST_RET, around_load, 0), 1);

    rv_rule("ecall is decoded and does not retire");
    CHECK_EQ(delta_s(EV_DEC, around_ecall, 0), 2);
    CHECK_EQ(trap_cause, CAUSE_ECALL_S);
    CHECK_EQ(delta_s(EV_INST_RET, around_ecall, 0), 1);
    csr_write(CSR_MCOUNTEREN, 0);
    stop_all();
}

int main(void)
{
    stop_all();
    test_access();
    test_warl();
    test_delegated_only();
    test_s_mode_lcofi();
    test_vs_sample();
    test_trapping();
    return 0;
}

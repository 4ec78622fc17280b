/*
 * End-to-end trace guest: traps and privilege changes.  Each round runs,
 * traced into hart 0's RAM sink:
 *
 * - synchronous exceptions in M: ecall, ebreak, an illegal instruction,
 *   a load access fault, an instruction access fault (a call to an
 *   address with no memory), and 600 ecalls back to back;
 * - machine timer interrupts arriving during a computation and in wfi;
 * - LR/SC pairs (one SC fails), AMOs and CSR read-modify-writes;
 * - a computation in S and in U (entered by mret, left by ecall), with
 *   exceptions taken in M and, delegated by medeleg, in S (sret), and a
 *   timer interrupt taken from U.
 *
 * Command line (-append): rounds=N (default 4), bufsize=BYTES (RAM sink
 * buffer, default 1 MiB; small values make it wrap), and the trace
 * options of e2e_guest.h (trace=, syncmode=, syncmax=, context=,
 * stoponwrap=).  The buffer is saved on the host at the end.
 * filtertoggle=1 turns on a filter that passes every privilege (0xff)
 * after the first round and off again after the second: the trace is
 * whole.  pmu=E has mhpmcounter3 count the instruction event E (decimal,
 * docs/pmu.rst) meanwhile: the blocks that trap are counted too.
 *
 * Without trace= the guest leaves its encoder alone (it traces from
 * reset into the PIB sink, -machine rvtrace-chardev); pibloss=1 then
 * disables the PIB sink during the first round: with no enabled sink
 * every packet is lost, and once it is enabled again the stream goes on
 * with a trace_lost support packet and a sync.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"
#include "e2e_guest.h"

#define TR_PIB 0x3500000UL     /* the PIB sink (rvtrace-chardev) */

static volatile unsigned long timer_ticks;  /* the handler counts */

static void on_timer(unsigned irq)
{
    (void)irq;
    timer_ticks++;
    rv_timer_disarm();
}

/* Some work whose branches depend on data: a small insertion sort. */
static unsigned long E2E_FILTERED compute(unsigned long seed)
{
    unsigned v[24];
    unsigned long sum = 0;

    for (unsigned i = 0; i < 24; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (seed >> 8) & 0xff;
    }
    for (unsigned i = 1; i < 24; i++) {
        unsigned x = v[i], j = i;

        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
    for (unsigned i = 0; i < 24; i++) {
        sum = sum * 3 + v[i];
    }
    return sum;
}

static void __attribute__((noinline)) do_ecall(void)
{
    asm volatile("ecall" : : : "memory");
}

static void __attribute__((noinline)) do_ebreak(void)
{
    asm volatile("ebreak" : : : "memory");
}

static void __attribute__((noinline)) do_illegal(void)
{
    /* csrrw x0, cycle, x0: writing a read-only CSR (the "unimp" insn) */
    asm volatile(".4byte 0xc0001073" : : : "memory");
}

static unsigned long __attribute__((noinline)) do_bad_load(void)
{
    unsigned long addr = 0x10;      /* no memory there */

    asm("" : "+r"(addr));           /* hidden from -Warray-bounds */
    return *(volatile unsigned long *)addr;     /* must not be elided */
}

/*
 * A fault two blocks into a call: the block that ends with the call is
 * held alone when the block before it went whole (while the encoder
 * counts half-words: N-trace, resync by instructions), the callee's
 * first block ends with a branch and is held after it, and the fault
 * ends both from C.
 */
static unsigned long __attribute__((noinline)) branch_then_bad_load(
    unsigned long x)
{
    unsigned long addr = 0x10;      /* no memory there */

    asm volatile("andi t0, %0, 1\n\t"
                 "beqz t0, 1f\n\t"
                 "addi %0, %0, 3\n"
                 "1:" : "+r"(x) : : "t0");
    asm("" : "+r"(addr));
    return x + *(volatile unsigned long *)addr;
}

static void held_call_then_fault(unsigned long arg)
{
    for (unsigned long i = 0; i < 4; i++) {
        rv_trap_expect();
        /* a branch block right after the return: it goes whole */
        asm volatile("andi t0, %0, 2\n\t"
                     "bnez t0, 1f\n\t"
                     "nop\n"
                     "1:" : : "r"(arg + i) : "t0");
        branch_then_bad_load(arg + i);
        rv_check_eq(rv_trap_cause(), CAUSE_LOAD_ACCESS,
                    "branch_then_bad_load() traps with", "CAUSE_LOAD_ACCESS",
                    __FILE__, __LINE__);
    }
}

/*
 * A function called twice with no branch in between, the second call
 * faulting after the instruction both calls retire: with implicit
 * return the decoder, walking to that instruction, meets it first in the
 * earlier call at the same depth (the encoder reports the second call
 * with notify).  e2e_load_twice (a0 ok, a1 bad): e2e_touch() of each.
 */
asm(".pushsection .text\n"
    "e2e_touch:\n"
    "    addi t1, t1, 1\n"
    "    lw t0, 0(a0)\n"
    "    ret\n"
    "e2e_load_twice:\n"
    "    mv t2, ra\n"
    "    mv t3, a1\n"
    "    call e2e_touch\n"
    "    mv a0, t3\n"
    "    call e2e_touch\n"
    "    jr t2\n"
    ".popsection");

static void repeated_call_then_fault(void)
{
    static uint32_t word;

    rv_trap_expect();
    asm volatile("mv a0, %0\n\t"
                 "li a1, 16\n\t"          /* no memory there */
                 "call e2e_load_twice"
                 : : "r"(&word)
                 : "a0", "a1", "t0", "t1", "t2", "t3", "ra", "memory");
    rv_check_eq(rv_trap_cause(), CAUSE_LOAD_ACCESS,
                "e2e_load_twice() traps with", "CAUSE_LOAD_ACCESS",
                __FILE__, __LINE__);
}

/* Exceptions of the current mode; they are taken in M or delegated. */
static unsigned long exceptions(unsigned long arg)
{
    unsigned long ecall = rv_current_mode == RV_MODE_M ? CAUSE_ECALL_M :
                          rv_current_mode == RV_MODE_S ? CAUSE_ECALL_S :
                          CAUSE_ECALL_U;

    if (rv_current_mode != RV_MODE_U) {
        CHECK_TRAP(do_ecall(), ecall);     /* U's ecall leaves the mode */
    }
    CHECK_TRAP(do_ebreak(), CAUSE_BREAKPOINT);
    CHECK_TRAP(do_illegal(), CAUSE_ILLEGAL_INSN);
    CHECK_TRAP(do_bad_load(), CAUSE_LOAD_ACCESS);
    held_call_then_fault(arg);
    repeated_call_then_fault();
    return compute(arg);
}

/* A call to an address without memory: the trap resumes at ra. */
static void fetch_fault(void)
{
    void (*nowhere)(void) = (void (*)(void))0x100;

    CHECK_TRAP(nowhere(), CAUSE_FETCH_ACCESS);
}

/*
 * Traps back to back, with one more block between them in the second
 * half: whatever the number of records an iteration makes, a trap's two
 * records (appended from C) land at every offset of the room the encoder
 * lends the hart, the last slot included (the pair then goes to the next
 * room), and the handler's first block follows them.
 */
static void trap_storm(void)
{
    for (unsigned extra = 0; extra < 2; extra++) {
        for (unsigned i = 0; i < 300; i++) {
            if (extra) {
                asm volatile("j 1f\n1:");      /* a block of its own */
            }
            CHECK_TRAP(do_ecall(), CAUSE_ECALL_M);
        }
    }
}

static unsigned long ticks_armed;

/* The interrupt may come before the code that waits for it runs. */
static void arm_timer(uint64_t ticks)
{
    ticks_armed = timer_ticks;
    rv_timer_arm(ticks);
}

/* Compute until the timer interrupt came (or give up). */
static unsigned long E2E_FILTERED compute_until_tick(unsigned long seed)
{
    unsigned long sum = 0;

    for (unsigned i = 0; i < 2000 && timer_ticks == ticks_armed; i++) {
        sum += compute(seed + i);
    }
    CHECK(timer_ticks != ticks_armed);
    return sum;
}

static void interrupts(unsigned long round)
{
    /* during a computation */
    arm_timer(20);
    rv_irq_enable();
    compute_until_tick(round);
    /*
     * In wfi: it retires, then the interrupt is taken.  With interrupts
     * off from the test to the wfi: one that came between the two would
     * leave the wfi waiting for ever (wfi wakes on a pending interrupt,
     * whatever mstatus.MIE says).
     */
    rv_irq_disable();
    arm_timer(20);
    while (timer_ticks == ticks_armed) {
        asm volatile("wfi");
        rv_irq_enable();
        rv_irq_disable();
    }
}

/* M interrupts are taken in U whatever mstatus.MIE says. */
static unsigned long user_with_timer(unsigned long arg)
{
    return compute_until_tick(arg) + exceptions(arg);
}

static void privilege_changes(unsigned long round)
{
    unsigned long delegated = 1UL << CAUSE_BREAKPOINT |
                              1UL << CAUSE_ILLEGAL_INSN |
                              1UL << CAUSE_LOAD_ACCESS;

    CHECK(rv_run_in_mode(RV_MODE_S, exceptions, round) != 1);
    arm_timer(50);        /* U cannot touch mie: armed from M */
    CHECK(rv_run_in_mode(RV_MODE_U, user_with_timer, round) != 1);
    /* the same exceptions from U, now taken in S */
    csr_write(CSR_MEDELEG, delegated);
    CHECK(rv_run_in_mode(RV_MODE_U, exceptions, round + 1) != 1);
    csr_write(CSR_MEDELEG, 0);
}

/*
 * Atomics and CSR accesses, for the data trace: an LR/SC pair that
 * succeeds, one whose SC fails (another address), the AMOs of A, and
 * read-modify-writes of mtval (free outside trap handlers).
 */
static void atomics(unsigned long round)
{
    static unsigned long cell[2];
    static unsigned word;
    unsigned long t, fail, old;

    asm volatile("lr.w %0, (%2)\n\t"
                 "addi %0, %0, 1\n\t"
                 "sc.w %1, %0, (%2)"
                 : "=&r"(t), "=&r"(fail) : "r"(&word) : "memory");
    CHECK(fail == 0);
    asm volatile("lr.w %0, (%2)\n\t"
                 "sc.w %1, %0, (%3)"
                 : "=&r"(t), "=&r"(fail) : "r"(&word), "r"(&cell[1])
                 : "memory");
    CHECK(fail != 0);
#if __riscv_xlen == 64
    asm volatile("lr.d %0, (%2)\n\t"
                 "addi %0, %0, 3\n\t"
                 "sc.d %1, %0, (%2)"
                 : "=&r"(t), "=&r"(fail) : "r"(&cell[0]) : "memory");
    CHECK(fail == 0);
    asm volatile("amoadd.d %0, %1, (%2)" : "=r"(old) : "r"(round + 5),
                 "r"(&cell[0]) : "memory");
    asm volatile("amomaxu.d %0, %1, (%2)" : "=r"(old) : "r"(-1UL),
                 "r"(&cell[1]) : "memory");
#endif
    asm volatile("amoswap.w %0, %1, (%2)" : "=r"(old) : "r"(round),
                 "r"(&word) : "memory");
    asm volatile("amoxor.w %0, %1, (%2)" : "=r"(old) : "r"(0x5a5a),
                 "r"(&word) : "memory");
    asm volatile("amoand.w %0, %1, (%2)" : "=r"(old) : "r"(0xff0f),
                 "r"(&word) : "memory");
    asm volatile("amoor.w %0, %1, (%2)" : "=r"(old) : "r"(0x100),
                 "r"(&word) : "memory");
    asm volatile("amomin.w %0, %1, (%2)" : "=r"(old) : "r"(-7),
                 "r"(&word) : "memory");
    asm volatile("amomax.w %0, %1, (%2)" : "=r"(old) : "r"(9),
                 "r"(&word) : "memory");
    csr_write(mtval, 0x1234 + round);
    csr_set(mtval, 0x10000);
    csr_clear(mtval, 0x4);
    old = csr_swap(mtval, round);
    CHECK(old == (((0x1234 + round) | 0x10000) & ~4UL) &&
          csr_read(mtval) == round);
    (void)t;
}

int main(void)
{
    unsigned long rounds = rv_arg_value("rounds=", 4);
    unsigned long size = rv_arg_value("bufsize=", 1 << 20);

    bool ram = rv_arg("trace=") != NULL;

    rv_irq_set_handler(IRQ_M_TIMER, on_timer);
    if (rv_arg("pmu=")) {
        csr_write(mhpmevent3, rv_arg_value("pmu=", 0));
        csr_write(mhpmcounter3, 0);
        csr_clear(mcountinhibit, 1UL << 3);
    }
    if (ram) {
        e2e_trace_start(0, __heap_start, size);
    } else if (rv_arg_value("pibloss=", 0)) {
        tr_write(TR_PIB, TR_CONTROL, TR_ACTIVE);
    }
    for (unsigned long r = 0; r < rounds; r++) {
        exceptions(r);
        fetch_fault();
        trap_storm();
        atomics(r);
        interrupts(r);
        privilege_changes(r);
        if (!ram && r == 0) {
            tr_write(TR_PIB, TR_CONTROL, TR_ACTIVE | TR_ENABLE);
        }
        if (ram && rv_arg_value("filtertoggle=", 0) && r < 2) {
            e2e_filter_priv(TR_ENC(0), 0xff, r == 0);
        }
    }
    if (ram) {
        e2e_trace_stop_and_save(0, __heap_start, size);
    } else {
        tr_encoder_stop(0);
    }
    rv_printf("e2e-traps: %lu rounds, %lu timer interrupts\n", rounds,
              timer_ticks);
    return 0;
}

/*
 * End-to-end trace guest: a random program (gen-random-guest.py, one
 * program per generator seed), traced into hart 0's RAM sink.  Its
 * branches, calls, jumps, loops, accesses and exceptions come in
 * combinations no hand-written guest has, so the encoder meets blocks,
 * runs and traps at points the other guests never give it.
 *
 * Command line (-append): rounds=N (default 6) runs of the program, with
 * the xorshift seed seed=S + round; round r runs in M, S and U in turn
 * (modes=1; M only without it); irq=N a machine timer interrupt every 1..N
 * mtime ticks (pseudo-random), at most irqmax=M (default 2000); bufsize=
 * and the trace options of e2e_guest.h.  Without trace=, the guest leaves
 * the encoder alone: the harts trace from reset into the PIB sink
 * (run-e2e.py --capture pib).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"
#include "e2e_guest.h"

/* Whether the program runs in M (it accesses mtval only then) */
volatile int rp_in_m;

static unsigned long irq_max, irq_left, irq_count;
static uint64_t irq_seed;

static void on_timer(unsigned irq)
{
    (void)irq;
    irq_count++;
    if (!irq_left--) {
        rv_timer_disarm();
        return;
    }
    irq_seed = irq_seed * 6364136223846793005ull + 1442695040888963407ull;
    rv_timer_arm(1 + (irq_seed >> 33) % irq_max);
}

int main(void)
{
    static const enum rv_mode modes[] = { RV_MODE_M, RV_MODE_S, RV_MODE_U };
    unsigned long rounds = rv_arg_value("rounds=", 6);
    unsigned long size = rv_arg_value("bufsize=", 1 << 20);
    unsigned long seed = rv_arg_value("seed=", 1);
    bool all_modes = rv_arg_value("modes=", 0);
    bool ram = rv_arg("trace=") != NULL;
    unsigned long sum = 0, traps;

    if (ram) {
        e2e_trace_start(0, __heap_start, size);
    }
    if (rv_arg("irq=")) {
        irq_max = rv_arg_value("irq=", 16) ?: 1;
        irq_seed = seed;
        irq_left = rv_arg_value("irqmax=", 2000);
        rv_irq_set_handler(IRQ_M_TIMER, on_timer);
        on_timer(IRQ_M_TIMER);
        rv_irq_enable();
    }
    traps = rv_trap_count;
    for (unsigned long r = 0; r < rounds; r++) {
        enum rv_mode mode = all_modes ? modes[r % 3] : RV_MODE_M;

        rp_in_m = mode == RV_MODE_M;
        if (rp_in_m) {
            sum += rp_run(seed + r);
        } else {
            sum += rv_run_in_mode(mode, rp_run, seed + r);
        }
    }
    rv_irq_disable();
    rv_timer_disarm();
    if (ram) {
        e2e_trace_stop_and_save(0, __heap_start, size);
    }
    rv_printf("e2e-random: %lu rounds, %lu exceptions, %lu interrupts, "
              "state 0x%lx\n", rounds, rv_trap_count - traps, irq_count,
              sum);
    return 0;
}

/*
 * The guest library's mode switches under M-mode interrupts: a timer
 * interrupt every few microseconds while rv_run_in_mode() enters S, U
 * (and VS, VU with H) thousands of times.  An interrupt taken between
 * the switch's setting of mepc/mstatus.MPP and its mret used to send the
 * hart to M-mode code in the lower mode (an illegal mret, or worse).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"

#define TICK    50              /* mtime ticks: 5 us */
#define ROUNDS  4000

static volatile unsigned long ticks;

static void on_timer(unsigned irq)
{
    (void)irq;
    ticks++;
    rv_timer_arm(TICK);
}

static unsigned long work(unsigned long x)
{
    for (unsigned i = 0; i < 20; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    }
    return x;
}

int main(void)
{
    static const enum rv_mode lower[] = {
        RV_MODE_S, RV_MODE_U, RV_MODE_VS, RV_MODE_VU,
    };
    unsigned nmodes = rv_has_ext('H') ? 4 : 2;
    unsigned long x = 1, want = 1;

    rv_irq_set_handler(IRQ_M_TIMER, on_timer);
    rv_timer_arm(TICK);
    rv_irq_enable();
    for (unsigned r = 0; r < ROUNDS; r++) {
        x = rv_run_in_mode(lower[r % nmodes], work, x);
        want = work(want);
    }
    rv_irq_disable();
    rv_timer_disarm();
    rv_printf("%u mode switches, %lu timer interrupts\n", ROUNDS, ticks);
    rv_rule("every switch came back with its result, under interrupts");
    CHECK_EQ(x, want);
    CHECK(ticks > 0);
    return 0;
}

/*
 * The instruction events across a migration: a loop long enough to be
 * migrated in the middle (run-guest.sh --migrate-after) is counted
 * exactly, and the counter, programmed to overflow near its end, samples
 * an instruction of the loop on the destination (the LCOFI stays
 * pending: a handler's instructions would count too).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "pmu_test.h"

#define ITERS       2000000000UL    /* two instructions each: a second or more */

int main(void)
{
    unsigned long n = ITERS, head, tail;
    uint64_t start = -(2 * (uint64_t)ITERS - 100);
    uint64_t end;

    set_event(3, EV_DEC);
    set_counter(3, start);
#if RV_XLEN == 32
    csr_write(mhpmcounter3h, (unsigned long)(start >> 32));
#endif
    /* the counter starts after the csrw that writes its low half */
    asm volatile("csrw mcountinhibit, %3\n"
                 "csrw mhpmcounter3, %4\n"
                 "1: addi %0, %0, -1\n"
                 "2: bnez %0, 1b\n"
                 "csrw mcountinhibit, %5\n"
                 "lla %1, 1b\n"
                 "lla %2, 2b\n"
                 : "+r"(n), "=&r"(head), "=&r"(tail)
                 : "r"(~(1UL << 3)), "r"((unsigned long)start), "r"(~0UL)
                 : "memory");
    end = get_counter(3);
    rv_rule("a migrated VM counts every instruction of the loop");
    CHECK_EQ(end - start, 2 * (uint64_t)ITERS);
    rv_rule("the overflow after the migration samples the loop");
    CHECK(get_event(3) & OF);
    CHECK(csr_read(mip) & LCOFIP);
    CHECK(csr_read(CSR_SHPMSPC) == head || csr_read(CSR_SHPMSPC) == tail);
    return 0;
}

/*
 * End-to-end trace guest for XTheadSync (-cpu thead-c906): th.sync and
 * th.sync.i end their translation block in QEMU without a branch, in
 * the middle of straight-line code and of loops.  The blocks they end
 * must reach the trace like any other: N-trace counts every half-word
 * of them (I-CNT), E-trace's resync by instructions counts them too.
 * M mode, RV64 (the C906 has no RV32).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "e2e_guest.h"

/* No assembler of the toolchain knows them: their encodings */
#define TH_SYNC     ".4byte 0x0180000b\n"
#define TH_SYNC_I   ".4byte 0x01a0000b\n"

static unsigned long __attribute__((noinline)) work(unsigned long i)
{
    unsigned long acc = i;

    asm volatile("addi %0, %0, 1\n"
                 TH_SYNC
                 "addi %0, %0, 2\n"
                 "andi t0, %0, 1\n"
                 "beqz t0, 1f\n"
                 "addi %0, %0, 3\n"
                 TH_SYNC_I
                 "1:\n"
                 "slli %0, %0, 1\n"
                 : "+r"(acc) : : "t0", "memory");
    return acc;
}

int main(void)
{
    unsigned long rounds = rv_arg_value("rounds=", 100);
    unsigned long size = rv_arg_value("bufsize=", 1 << 20);
    unsigned long sum = 0, want = 0;

    e2e_trace_start(0, __heap_start, size);
    for (unsigned long i = 0; i < rounds; i++) {
        unsigned long a = i + 3;

        sum += work(i);
        want += ((a & 1) ? a + 3 : a) << 1;
    }
    e2e_trace_stop_and_save(0, __heap_start, size);
    CHECK_EQ(sum, want);
    rv_printf("e2e-xthead: %lu rounds, sum %lu\n", rounds, sum);
    return 0;
}

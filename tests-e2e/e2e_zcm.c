/*
 * End-to-end trace guest for Zcmp and Zcmt (-cpu ...,zcmp=on,zcmt=on,
 * zcd=off): functions that save and restore with cm.push and cm.popret
 * and calls and tail calls through the jump table (cm.jalt, cm.jt), the
 * transfers a trace must show as a return, an uninferable call and an
 * uninferable tail call (tests-tcg/lib/zcm.h), and every tenth round a
 * cm.jalt that faults (JVT.mode 1) in the middle of its block.  The
 * decoder needs --zcmp --zcmt: c.fsdsp's encodings are these.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "e2e_guest.h"
#include "zcm.h"

/*
 * zcm_via_jalt(i) with JVT.mode 1 (reserved): its cm.jalt is an
 * illegal instruction, raised by the helper, after the instructions
 * before it in its block retired; the handler skips it, so add3 is not
 * called.
 */
static unsigned long __attribute__((noinline)) jalt_fault(unsigned long i)
{
    unsigned long r;

    asm volatile("csrw %0, %1" : : "i"(CSR_JVT),
                 "r"((unsigned long)zcm_jvt | 1) : "memory");
    rv_trap_expect();
    r = zcm_via_jalt(i);
    CHECK_EQ(rv_trap_cause(), 2);
    zcm_setup();
    return r;
}

static unsigned long __attribute__((noinline)) work(unsigned long i)
{
    unsigned long sum = add3(i, 1);

    if (i % 10 == 9) {
        sum += jalt_fault(i);
    } else if (i & 1) {
        sum += zcm_via_jalt(i);
    } else {
        sum += zcm_via_jt(i);
    }
    return sum;
}

int main(void)
{
    unsigned long rounds = rv_arg_value("rounds=", 100);
    unsigned long size = rv_arg_value("bufsize=", 1 << 20);
    unsigned long sum = 0, want = 0;

    zcm_setup();
    e2e_trace_start(0, __heap_start, size);
    for (unsigned long i = 0; i < rounds; i++) {
        sum += work(i);
        want += i + 2 + (i % 10 == 9 ? i + 1 : i & 1 ? i + 6 + 1 : i + 4);
    }
    e2e_trace_stop_and_save(0, __heap_start, size);
    CHECK_EQ(sum, want);
    rv_printf("e2e-zcm: %lu rounds, sum %lu\n", rounds, sum);
    return 0;
}

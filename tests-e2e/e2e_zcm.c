/*
 * End-to-end trace guest for Zcmp and Zcmt (-cpu ...,zcmp=on,zcmt=on,
 * zcd=off): functions that save and restore with cm.push and cm.popret
 * and calls and tail calls through the jump table (cm.jalt, cm.jt), the
 * transfers a trace must show as a return, an uninferable call and an
 * uninferable tail call.  The decoder needs --zcmp --zcmt: c.fsdsp's
 * encodings are these.  The toolchain knows neither extension, so the
 * cm.* instructions are written as their half-words; this guest is built
 * without D (no c.fsdsp of its own).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "e2e_guest.h"

#define CSR_JVT     0x017

/*
 * add3(a, b) = a + 2 * b, saving ra, s0 and s1: cm.push {ra, s0-s1}, -32
 * (RV64's frame; RV32 rounds the same list to 16 bytes), cm.popret
 * {ra, s0-s1}, 32 (16).  via_jalt(a) calls add3(a, 3) through table
 * entry 32 (cm.jalt), around cm.push {ra}, -16 and cm.popret {ra}, 16;
 * via_jt(a) tail-calls add3(a, 2) through entry 0 (cm.jt), so add3's
 * cm.popret returns to via_jt's caller.
 */
asm(".text\n"
    ".balign 4\n"
    ".globl add3\n"
    "add3:\n"
    "    .hword 0xb862\n"           /* cm.push {ra, s0-s1}, -32 (-16) */
    "    mv      s0, a0\n"
    "    add     s1, a1, a1\n"
    "    add     a0, s0, s1\n"
    "    .hword 0xbe62\n"           /* cm.popret {ra, s0-s1}, 32 (16) */
    ".globl via_jalt\n"
    "via_jalt:\n"
    "    .hword 0xb842\n"           /* cm.push {ra}, -16 */
    "    li      a1, 3\n"
    "    .hword 0xa082\n"           /* cm.jalt 32 */
    "    addi    a0, a0, 1\n"
    "    .hword 0xbe42\n"           /* cm.popret {ra}, 16 */
    ".globl via_jt\n"
    "via_jt:\n"
    "    li      a1, 2\n"
    "    .hword 0xa002\n");         /* cm.jt 0 */

unsigned long add3(unsigned long a, unsigned long b);
unsigned long via_jalt(unsigned long a);
unsigned long via_jt(unsigned long a);

/* The jump table: JVT.base is 64-byte aligned, mode 0 */
static unsigned long jvt[33] __attribute__((aligned(64)));

static unsigned long __attribute__((noinline)) work(unsigned long i)
{
    unsigned long sum = add3(i, 1);

    if (i & 1) {
        sum += via_jalt(i);
    } else {
        sum += via_jt(i);
    }
    return sum;
}

int main(void)
{
    unsigned long rounds = rv_arg_value("rounds=", 100);
    unsigned long size = rv_arg_value("bufsize=", 1 << 20);
    unsigned long sum = 0, want = 0;

    jvt[0] = jvt[32] = (unsigned long)add3;
    asm volatile("csrw %0, %1" : : "i"(CSR_JVT), "r"(jvt) : "memory");
    e2e_trace_start(0, __heap_start, size);
    for (unsigned long i = 0; i < rounds; i++) {
        sum += work(i);
        want += i + 2 + (i & 1 ? i + 6 + 1 : i + 4);
    }
    e2e_trace_stop_and_save(0, __heap_start, size);
    CHECK_EQ(sum, want);
    rv_printf("e2e-zcm: %lu rounds, sum %lu\n", rounds, sum);
    return 0;
}

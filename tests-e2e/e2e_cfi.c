/*
 * End-to-end trace guest for Zicfiss and Zicfilp (-cpu ...,zicfilp=true,
 * zicfiss=true,zimop=true,zcmop=true): in U mode (senvcfg.SSE and LPE,
 * address translation off), functions reached through landing pads that
 * push their return address to the shadow stack and check it on the way
 * out, and the software-check exceptions: an sspopchk that does not
 * match, in the middle of a block (the instructions before it retired),
 * and an indirect jump to an instruction that is not a landing pad.
 * The handler in M skips the instruction and clears mstatus.MPELP.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"
#include "e2e_guest.h"
#include "cfi.h"

static unsigned long shadow_stack[64];

/*
 * A function called through a pointer: a landing pad (4-byte aligned,
 * or it faults), then ra to the shadow stack and checked against it
 * before the return.
 */
static unsigned long __attribute__((noinline, naked, aligned(4)))
guarded(unsigned long x __attribute__((unused)))
{
    asm volatile(LPAD_0
                 SSPUSH_RA
                 "addi a0, a0, 3\n"
                 "andi t0, a0, 1\n"
                 "beqz t0, 1f\n"
                 "addi a0, a0, 5\n"
                 "1:\n"
                 SSPOPCHK_RA
                 "ret\n");
}

/*
 * sspopchk t0 with want in t0 against the shadow stack's top (value):
 * instructions before and after it in one block.  A mismatch is a
 * software-check exception at it.
 */
static unsigned long check_block(unsigned long want)
{
    unsigned long t = want;

    asm volatile("mv t0, %0\n"
                 "addi %0, %0, 1\n"
                 "addi %0, %0, 2\n"
                 "xori %0, %0, 4\n"
                 SSPOPCHK_T0
                 "addi %0, %0, 1\n"
                 "addi %0, %0, 1\n"
                 : "+r"(t) : : "t0", "memory");
    return t;
}

/* An indirect jump to a landing pad, or to an instruction that is not */
CFI_JUMP_BLOCK(landing_jump, LPAD_0)
CFI_JUMP_BLOCK(no_landing_jump, "addi %0, %0, 7\n")

static unsigned long user_work(unsigned long round)
{
    /* volatile: an indirect call, which the compiler can not make direct */
    unsigned long (*volatile fn)(unsigned long) = guarded;
    unsigned long sum = 0;

    for (unsigned long i = 0; i < 8; i++) {
        sum += fn(round + i);
        sum += landing_jump(i);
    }
    /* the top of the shadow stack is the last value pushed: round */
    sum += check_block(round);      /* matches: the top is popped */
    rv_trap_expect();
    sum += check_block(~round);     /* does not: a software check */
    rv_trap_expect();
    sum += no_landing_jump(round);  /* another */
    return sum;
}

int main(void)
{
    unsigned long rounds = rv_arg_value("rounds=", 4);
    unsigned long size = rv_arg_value("bufsize=", 1 << 20);
    unsigned long sum = 0;

    cfi_setup_u();
    e2e_trace_start(0, __heap_start, size);
    for (unsigned long r = 0; r < rounds; r++) {
        shadow_stack[62] = r;
        rv_csr_write_num(CSR_SSP, (unsigned long)&shadow_stack[62]);
        sum += rv_run_in_mode(RV_MODE_U, user_work, r);
    }
    e2e_trace_stop_and_save(0, __heap_start, size);
    CHECK_EQ(cfi_sw_checks, 2 * rounds);
    rv_printf("e2e-cfi: %lu rounds, sum %lu, %lu software checks\n",
              rounds, sum, cfi_sw_checks);
    return 0;
}

/*
 * End-to-end trace guest for two harts, one encoder each (-smp 2).  Both
 * harts compute (hart 0 sorts, hart 1 recurses), each stops its own
 * encoder, then hart 0 ends the run.
 *
 * rvtest runs main() on hart 0 only and parks the others, so this guest
 * has its own start-up: every hart gets a stack and runs smp_main(hart).
 * It links rvtest's output and device-tree code, not its trap code:
 * nothing here traps.
 *
 * Tracing: with -machine rvtrace-chardev every encoder traces from reset
 * into the PIB sink (SrcID = hart).  With trace=F on the command line
 * (and no chardev) each hart instead traces into its own RAM sink with
 * those options (e2e_guest.h) and saves it as trace-hartN.bin.
 *
 * poll=1: once its own work is done, hart 1 reads hart 0's encoder and
 * RAM sink registers as fast as it can until hart 0 is done, and hart 0
 * goes on working until hart 1 has read them POLL_READS times: each read
 * takes the locks hart 0's encoding thread holds while it encodes, from
 * another vCPU (docs/rvtrace.rst, Locks); hart 0's trace must stay whole.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"
#include "e2e_guest.h"

#define HARTS       2
#define STACK_SIZE  16384
#define BUF_SIZE    (1ul << 20)

/* Shared between the harts; not in .bss: nothing clears it. */
static volatile unsigned long done[HARTS]      /* polled by hart 0 */
    __attribute__((section(".data")));
static volatile unsigned long worked[HARTS]    /* polled with poll=1 */
    __attribute__((section(".data")));
static volatile unsigned long polls            /* hart 1's reads so far */
    __attribute__((section(".data")));
static volatile unsigned long tracing[HARTS]   /* its trace has started */
    __attribute__((section(".data")));
#define POLL_READS  2000
static volatile unsigned long fdt_ready        /* polled by the others */
    __attribute__((section(".data")));
uint8_t smp_stacks[HARTS * STACK_SIZE] __attribute__((aligned(16)));

asm(".section .text.init, \"ax\"\n"
    ".globl _start\n"
    "_start:\n"
    "    csrr    t0, mhartid\n"
    "    li      t1, " RV_STR(HARTS) "\n"
    "    bgeu    t0, t1, 2f\n"
    "    .option push\n"
    "    .option norelax\n"
    "    la      gp, __global_pointer$\n"
    "    .option pop\n"
    "    la      sp, smp_stacks\n"
    "    addi    t1, t0, 1\n"
    "    slli    t1, t1, 14\n"          /* STACK_SIZE */
    "    add     sp, sp, t1\n"
    "    mv      a0, t0\n"
    "    call    smp_main\n"
    "2:  wfi\n"
    "    j       2b\n"
    ".text\n");

static unsigned long __attribute__((noinline)) fib(unsigned long n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static unsigned long __attribute__((noinline)) sort_sum(unsigned long seed)
{
    unsigned v[32];
    unsigned long sum = 0;

    for (unsigned i = 0; i < 32; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = seed >> 16;
    }
    for (unsigned i = 1; i < 32; i++) {
        for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
            unsigned t = v[j];

            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    }
    for (unsigned i = 0; i < 32; i++) {
        sum = sum * 5 + v[i];
    }
    return sum;
}

static uint8_t *hart_buffer(unsigned long hart)
{
    return __heap_start + hart * BUF_SIZE;
}

static unsigned long work(unsigned long hart)
{
    unsigned long r = 0;

    if (hart == 0) {
        for (unsigned i = 0; i < 60; i++) {
            r += sort_sum(i);
        }
    } else {
        r = fib(15);
    }
    return r;
}

/*
 * poll=1 on hart 1: hart 0's registers until hart 0's work is done.
 * Returns the reads; each must see hart 0's encoder Active and tracing.
 */
static unsigned long poll_hart0(void)
{
    unsigned long reads = 0, idle = 0;

    while (!tracing[0]) {
        asm volatile("fence" : : : "memory");
    }
    while (!worked[0]) {
        idle += !(tr_read(TR_ENC(0), TR_CONTROL) & TE_INST_TRACING);
        (void)tr_read(TR_SINK(0), RAM_WP_LOW);
        (void)tr_read(TR_ENC(0), TE_INST_FEATURES);
        polls = ++reads;
    }
    CHECK_EQ(idle, 0);
    CHECK(reads >= POLL_READS);
    return reads;
}

/* Called from _start above, on every hart. */
static void __attribute__((used)) smp_main(unsigned long hart,
                                           const void *fdt)
{
    bool ram = false;
    unsigned long result;

    if (hart == 0) {
        rv_boot_fdt = fdt;
        asm volatile("fence" : : : "memory");
        fdt_ready = 1;
    }
    while (!fdt_ready) {
        asm volatile("fence" : : : "memory");
    }
    ram = rv_arg("trace=") != NULL;
    if (ram) {
        e2e_trace_start(hart, hart_buffer(hart), BUF_SIZE);
        asm volatile("fence" : : : "memory");
        tracing[hart] = 1;
    }
    result = work(hart);
    /* with poll=1, traced work until hart 1 has read enough */
    for (unsigned i = 0; hart == 0 && ram && rv_arg_value("poll=", 0) &&
                         polls < POLL_READS; i++) {
        result += sort_sum(i);
    }
    asm volatile("fence" : : : "memory");
    worked[hart] = 1;
    if (hart == 1 && ram && rv_arg_value("poll=", 0)) {
        rv_printf("e2e-smp: hart 1 read hart 0's registers %lu times\n",
                  poll_hart0());
    }
    if (hart == 0) {
        /* one hart at a time on the UART */
        for (unsigned h = 1; h < HARTS; h++) {
            while (!done[h]) {
                asm volatile("fence" : : : "memory");
            }
        }
    }
    if (ram) {
        e2e_trace_stop_and_save(hart, hart_buffer(hart), BUF_SIZE);
    } else {
        tr_encoder_stop(hart);
    }
    rv_printf("e2e-smp: hart %lu result %lu\n", hart, result);
    if (hart == 0) {
        rv_exit(rv_checks_failed ? 1 : 0);
    }
    asm volatile("fence" : : : "memory");
    done[hart] = 1;
}

/*
 * End-to-end trace guest for a resumable non-maskable interrupt (Smrnmi,
 * -cpu ...,smrnmi=on,rnmi-interrupt-vector=<rnmi_handler>): the guest
 * enables RNMIs (mnstatus.NMIE), says "rnmi: ready" and loops, traced,
 * until its handler has run; the host raises the hart's RNMI line then
 * (run-e2e.py --rnmi, through the qtest protocol: nothing on virt wires
 * it).  The line is a level: the handler marks rnmi_taken and waits for
 * the host to lower it and set rnmi_release before its mnret, which
 * would otherwise take the RNMI again at once.  The trace must show the
 * interrupt, the handler and its mnret.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "e2e_guest.h"

#define CSR_MNSTATUS    0x744
#define MNSTATUS_NMIE   (1u << 3)
#define ROUNDS_MAX      20000000UL

volatile unsigned int rnmi_taken, rnmi_release;

/*
 * The RNMI handler, with t0 in mnscratch: marks rnmi_taken (with its own
 * non-zero address), waits for rnmi_release, and returns with mnret,
 * which the assembler may not know.
 */
asm(".text\n"
    ".balign 4\n"
    ".globl rnmi_handler\n"
    "rnmi_handler:\n"
    "    csrw 0x740, t0\n"
    "    lla t0, rnmi_taken\n"
    "    sw t0, 0(t0)\n"
    "1:  lla t0, rnmi_release\n"
    "    lw t0, 0(t0)\n"
    "    beqz t0, 1b\n"
    "    csrr t0, 0x740\n"
    "    .word 0x70200073\n");  /* mnret */

static unsigned long __attribute__((noinline)) step(unsigned long i)
{
    return i & 1 ? i * 3 + 1 : i / 2;
}

int main(void)
{
    unsigned long size = rv_arg_value("bufsize=", 1 << 20);
    unsigned long i, x = 27;

    e2e_trace_start(0, __heap_start, size);
    csr_set(CSR_MNSTATUS, MNSTATUS_NMIE);
    rv_printf("rnmi: ready\n");
    for (i = 0; !rnmi_taken && i < ROUNDS_MAX; i++) {
        x = x > 1 ? step(x) : i + 27;
    }
    e2e_trace_stop_and_save(0, __heap_start, size);
    CHECK(rnmi_taken != 0);
    rv_printf("e2e-rnmi: the RNMI came after %lu rounds (x %lu)\n", i, x);
    return 0;
}

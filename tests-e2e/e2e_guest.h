/*
 * Guest helpers of the end-to-end trace tests: the kernel command line,
 * starting a trace into a hart's RAM sink, and saving the sink's buffer
 * on the host for the decoder.
 *
 * Saving: the guest writes the file trace-hartN.bin by semihosting (QEMU
 * -semihosting-config enable=on,target=native; RV32 guests too since
 * patch 0028), then prints "e2e: hart N saved L bytes wp W wrapped X".
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef E2E_GUEST_H
#define E2E_GUEST_H

#include "rvtest.h"
#include "../tests-tcg/trace/rvtrace.h"
#include "etrace-filter.h"
#include "semihost.h"

/* Free RAM after the program (tests-tcg/lib/link.ld): trace buffers. */
extern uint8_t __heap_start[];

/*
 * The random guest's program (gen-random-guest.py, e2e_random.c): every
 * function once from seed; returns its pseudo-random state.
 */
unsigned long rp_run(unsigned long seed);

/* The workload guest's hook (tests-tcg/bench/workloads.c, e2e_save.c). */
void e2e_save_trace(const uint8_t *buf, unsigned long size,
                    unsigned long wp, bool wrapped);

#define TE_CONTEXT      (1u << 9)
#define TE_SYNC_FIELDS  (TE_SYNC_MODE(3) | TE_SYNC_MAX(15))

/* ------------------------------------------------------------ tracing */

/*
 * Code that filter=range traces: the functions a guest places in section
 * e2e_filtered (E2E_FILTERED), which the linker brackets with these.
 */
#define E2E_FILTERED __attribute__((section("e2e_filtered"), noinline))
extern const char __start_e2e_filtered[] __attribute__((weak));
extern const char __stop_e2e_filtered[] __attribute__((weak));

/*
 * Filter 0 on, tracing the privilege levels whose bits are set in mask
 * (MatchInst), or off.  trTeInstFilters comes last on and first off: an
 * instruction filter in use but disabled would pass nothing in between.
 */
static inline void e2e_filter_priv(unsigned long enc, unsigned mask, bool on)
{
    unsigned long f0 = ETRACE_REG_FILTER_BASE;

    if (on) {
        tr_write(enc, f0 + ETRACE_FILTER_MATCH_INST, mask);
        tr_write(enc, f0 + ETRACE_FILTER_CONTROL,
                 ETRACE_FCTL_ENABLE | ETRACE_FCTL_MATCH_PRIV);
        tr_write(enc, ETRACE_REG_INST_FILTERS, 1);
    } else {
        tr_write(enc, ETRACE_REG_INST_FILTERS, 0);
        tr_write(enc, f0 + ETRACE_FILTER_CONTROL, 0);
    }
}

/*
 * filter=range: filter 0 with comparator 0 traces iaddr in
 * [__start_e2e_filtered, __stop_e2e_filtered).  filter=priv:M: filter 0
 * traces the privilege levels whose bits are set in M (MatchInst).  The
 * guest prints what it set up, for run-e2e.py.
 */
static inline void e2e_filter_setup(unsigned long enc)
{
    unsigned long lo = (unsigned long)__start_e2e_filtered;
    unsigned long hi = (unsigned long)__stop_e2e_filtered;
    unsigned long f0 = ETRACE_REG_FILTER_BASE, c0 = ETRACE_REG_COMP_BASE;

    if (rv_arg_is("filter=", "range")) {
        if (lo >= hi) {
            rv_printf("e2e: filter=range without an e2e_filtered section\n");
            rv_exit(1);
        }
        tr_write(enc, c0 + ETRACE_COMP_PMATCH_LOW, lo);
        tr_write(enc, c0 + ETRACE_COMP_PMATCH_HIGH, (uint64_t)lo >> 32);
        tr_write(enc, c0 + ETRACE_COMP_SMATCH_LOW, hi);
        tr_write(enc, c0 + ETRACE_COMP_SMATCH_HIGH, (uint64_t)hi >> 32);
        tr_write(enc, c0 + ETRACE_COMP_CONTROL,
                 ETRACE_COMP_IADDR << ETRACE_CCTL_PINPUT_SHIFT |
                 ETRACE_COMP_IADDR << ETRACE_CCTL_SINPUT_SHIFT |
                 ETRACE_COMP_GE << ETRACE_CCTL_PFUNC_SHIFT |
                 ETRACE_COMP_LT << ETRACE_CCTL_SFUNC_SHIFT |
                 ETRACE_COMP_P_AND_S << ETRACE_CCTL_MODE_SHIFT);
        tr_write(enc, f0 + ETRACE_FILTER_CONTROL,
                 ETRACE_FCTL_ENABLE | ETRACE_FCTL_MATCH_COMP(0));
        tr_write(enc, ETRACE_REG_INST_FILTERS, 1);
        rv_printf("e2e: filter range 0x%lx 0x%lx\n", lo, hi);
    } else if (rv_arg("filter=priv:")) {
        unsigned mask = rv_arg_value("filter=priv:", 0);

        e2e_filter_priv(enc, mask, true);
        rv_printf("e2e: filter privilege mask 0x%x\n", mask);
    }
}

/*
 * Trace hart into its RAM sink over buf[0..size), with the options of the
 * command line: trace=F (trTeInstFeatures), syncmode=M syncmax=N,
 * context=1 (trTeContext), stoponwrap=1, filter=range|priv:M, ntrace=M
 * (trTeFormat N-trace in trTeInstMode M: 3 BTM, 6 HTM), data=M (data
 * trace, tr_data_control()).
 */
static inline void e2e_trace_start(unsigned hart, void *buf,
                                   unsigned long size)
{
    unsigned long enc = TR_ENC(hart);
    uint32_t control;

    tr_sink_smem(hart, buf, size,
                 rv_arg_value("stoponwrap=", 0) ? RAM_STOP_ON_WRAP : 0);
    tr_encoder_setup(hart, rv_arg_value("trace=", 0),
                     rv_arg("ntrace=") ? TE_FORMAT(TE_FORMAT_NTRACE) |
                     TE_INST_MODE(rv_arg_value("ntrace=", 6) & 7) : 0);
    control = te_control(enc);
    if (rv_arg("syncmode=")) {
        control = (control & ~TE_SYNC_FIELDS) |
                  TE_SYNC_MODE(rv_arg_value("syncmode=", 1) & 3) |
                  TE_SYNC_MAX(rv_arg_value("syncmax=", 4) & 15);
    }
    if (rv_arg_value("context=", 0)) {
        control |= TE_CONTEXT;
    }
    e2e_filter_setup(enc);
    if (rv_arg("data=")) {
        tr_write(enc, TE_DATA_CONTROL,
                 tr_data_control(rv_arg_value("data=", 1)));
    }
    tr_write(enc, TR_CONTROL, control | TE_INST_TRACING);
}

/* ------------------------------------------------------------- saving */

static inline bool e2e_save_file(unsigned hart, const uint8_t *buf,
                                 unsigned long len)
{
    char name[] = "trace-hart0.bin";

    name[10] = '0' + hart % 10;
    return sh_write_file(name, buf, len);
}

/*
 * Save the sink's buffer (size bytes at buf; WP at offset wp): all of it
 * if it wrapped (the oldest byte is at wp), else the bytes before wp.
 */
static inline void e2e_save_buffer(unsigned hart, const uint8_t *buf,
                                   unsigned long size, unsigned long wp,
                                   bool wrapped)
{
    unsigned long len = wrapped ? size : wp;

    CHECK(e2e_save_file(hart, buf, len));
    rv_printf("e2e: hart %u saved %lu bytes wp %lu wrapped %u\n", hart, len,
              wp, (unsigned)wrapped);
}

/*
 * Stop hart's trace and save its RAM sink's buffer.  With StopOnWrap,
 * Wrap only says that the buffer filled up: its oldest byte is at Start.
 */
static inline void e2e_trace_stop_and_save(unsigned hart, void *buf,
                                           unsigned long size)
{
    unsigned long sink = TR_SINK(hart);
    bool stop_on_wrap = tr_read(sink, TR_CONTROL) & RAM_STOP_ON_WRAP;
    uint64_t wp;
    unsigned long used;
    bool wrapped;

    tr_encoder_stop(hart);
    wp = tr_read(sink, RAM_WP_LOW) |
         (uint64_t)tr_read(sink, RAM_WP_HIGH) << 32;
    wrapped = wp & RAM_WRAP;
    used = (wp & ~3ULL) - (unsigned long)buf;
    if (stop_on_wrap && wrapped) {
        used = size;
        wrapped = false;
    }
    e2e_save_buffer(hart, buf, size, used, wrapped);
}

#endif

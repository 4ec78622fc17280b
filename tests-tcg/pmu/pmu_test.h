/*
 * What the PMU guest tests share: the event values of the allocation
 * (docs/pmu.rst), the Sscofpmf bits, and programmable counters 3..7 as
 * 64-bit values on RV64 and RV32.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef PMU_TEST_H
#define PMU_TEST_H

#include "rvtest.h"

#define EV_INST_RET         0x2
#define EV_BRJMP            0x5
#define EV_BRJMP_TK         0x13
#define EV_DEC              0x100
#define EV_DEC_BRJMP        0x200
#define EV_DEC_LOAD         0x300
#define EV_DEC_STORE        0x400
#define EV_DEC_LDST         0x500

#define OF                  (1ULL << 63)
#define MINH                (1ULL << 62)
#define SINH                (1ULL << 61)
#define UINH                (1ULL << 60)
#define VSINH               (1ULL << 59)
#define VUINH               (1ULL << 58)
#define LCOFIP              (1UL << 13)

#define CSR_MHPMCOUNTER3    0xb03
#define CSR_MHPMCOUNTER3H   0xb83
#define CSR_MHPMEVENT3      0x323
#define CSR_MHPMEVENT3H     0x723
#define CSR_SHPMSPC         0x5e0
#define CSR_SHPMSDATA       0x5e1
#define CSR_MENVCFG         0x30a
#define CSR_MENVCFGH        0x31a
#define CSR_MCOUNTEREN      0x306
#define CSR_SISELECT        0x150
#define CSR_SIREG           0x151
#define CSR_SCOUNTINHIBIT   0x120

/* mhpmeventN (both halves on RV32); the counter inhibited meanwhile */
static inline void set_event(unsigned n, uint64_t ev)
{
    csr_set(mcountinhibit, 1UL << n);
#if RV_XLEN == 32
    rv_csr_write_num(CSR_MHPMEVENT3H + n - 3, ev >> 32);
#endif
    rv_csr_write_num(CSR_MHPMEVENT3 + n - 3, (unsigned long)ev);
}

static inline uint64_t get_event(unsigned n)
{
    uint64_t ev = rv_csr_read_num(CSR_MHPMEVENT3 + n - 3);

#if RV_XLEN == 32
    ev = (uint32_t)ev | (uint64_t)rv_csr_read_num(CSR_MHPMEVENT3H + n - 3)
                        << 32;
#endif
    return ev;
}

static inline void set_counter(unsigned n, uint64_t val)
{
#if RV_XLEN == 32
    rv_csr_write_num(CSR_MHPMCOUNTER3H + n - 3, val >> 32);
#endif
    rv_csr_write_num(CSR_MHPMCOUNTER3 + n - 3, (unsigned long)val);
}

static inline uint64_t get_counter(unsigned n)
{
#if RV_XLEN == 32
    uint32_t hi, lo;

    do {
        hi = rv_csr_read_num(CSR_MHPMCOUNTER3H + n - 3);
        lo = rv_csr_read_num(CSR_MHPMCOUNTER3 + n - 3);
    } while (hi != rv_csr_read_num(CSR_MHPMCOUNTER3H + n - 3));
    return (uint64_t)hi << 32 | lo;
#else
    return rv_csr_read_num(CSR_MHPMCOUNTER3 + n - 3);
#endif
}

static inline void stop_all(void)
{
    csr_write(mcountinhibit, ~0UL);
    for (unsigned n = 3; n <= 7; n++) {
        set_event(n, 0);
        set_counter(n, 0);
    }
    csr_clear(mip, LCOFIP);
}

#endif /* PMU_TEST_H */

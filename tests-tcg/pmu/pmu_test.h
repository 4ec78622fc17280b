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

/*
 * Counter 3 counts ev from 0 over a block of code started and read by
 * CSR instructions in the same asm: neither is counted (the write is done
 * instead of its own increment; a read sees the instructions before it).
 * The block may use t0, t1 and %1 (the includer's scratch array), and
 * call functions that use only ra, a0 and a1 and save the rest.
 */
#define COUNT_BLOCK(result, ...) do {                                   \
        unsigned long r_;                                               \
        csr_write(mcountinhibit, ~(1UL << 3));                          \
        asm volatile("csrw mhpmcounter3, zero\n"                        \
                     __VA_ARGS__                                        \
                     "csrr %0, mhpmcounter3\n"                          \
                     : "=&r"(r_) : "r"(&scratch)                        \
                     : "t0", "t1", "ra", "a0", "a1", "memory");         \
        csr_write(mcountinhibit, ~0UL);                                 \
        (result) = r_;                                                  \
    } while (0)

/* What lcofi_record() saw at the last LCOFI, and how many were taken */
static volatile unsigned long lcofi_epc, lcofi_spc, lcofi_sdata, lcofi_taken;

/*
 * The LCOFI handler of a hart with Sspesa (rv_irq_set_handler()): every
 * counter stops, and mepc, shpmspc and shpmsdata are recorded.
 */
static inline void lcofi_record(unsigned irq)
{
    (void)irq;
    csr_write(mcountinhibit, ~0UL);
    lcofi_epc = csr_read(mepc);
    lcofi_spc = csr_read(CSR_SHPMSPC);
    lcofi_sdata = csr_read(CSR_SHPMSDATA);
    lcofi_taken++;
    csr_clear(mip, LCOFIP);
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

/*
 * Events ev of counter 3 (U mode only) while block(arg) runs in U; the
 * trap it takes, if cause is not RV_NO_TRAP (the handler resumes after
 * the trapping instruction).
 */
static inline uint64_t count_in_u(uint64_t ev,
                                  unsigned long (*block)(unsigned long),
                                  unsigned long arg, unsigned long cause)
{
    uint64_t c;

    set_event(3, ev | MINH | SINH);
    set_counter(3, 0);
    csr_write(mcountinhibit, ~(1UL << 3));
    if (cause != RV_NO_TRAP) {
        rv_trap_expect();
    }
    rv_run_in_mode(RV_MODE_U, block, arg);
    csr_write(mcountinhibit, ~0UL);
    c = get_counter(3);
    if (cause != RV_NO_TRAP) {
        CHECK_EQ(rv_trap_cause(), cause);
    }
    return c;
}

#endif /* PMU_TEST_H */

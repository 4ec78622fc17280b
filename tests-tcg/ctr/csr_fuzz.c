/*
 * CSR fuzz: random accesses, from M, S, U, VS and VU, to every CSR the
 * project adds or changes (the draft and the ratified CTR, the indirect
 * registers and their selects, the state enables, LCOFIE, satp's ASID,
 * the PMU events and inhibits, counter delegation, Sspesa's and PDIS's
 * CSRs).
 * Whatever the values and the order, every access either completes or
 * raises the illegal-instruction or virtual-instruction exception; QEMU
 * never stops, and the run ends in bounded time (a guest that rewrites
 * the CTR control registers in a loop must not retranslate for ever).
 *
 * Command line (-append): seed=N (default 1), iters=N (default 20000).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_test.h"

#define EXC_ILLEGAL     2
#define EXC_VIRTUAL     22

#define CSR_SATP        0x180
#define CSR_SIE         0x104
#define CSR_MIE         0x304
#define MIE_LCOFIE      (1UL << 13)
/* The ratified CTR (Smctr/Ssctr 1.0) */
#define CSR_SCTRCTL     0x14e
#define CSR_SCTRSTATUS_R 0x14f
#define CSR_SCTRDEPTH   0x15f
#define CSR_VSCTRCTL    0x24e
#define CSR_MCTRCTL     0x34e
/* PMU events, counter delegation (menvcfg.CDE) and Sspesa */
#define CSR_MCOUNTINHIBIT 0x320
#define CSR_MCOUNTEREN  0x306
#define CSR_MHPMEVENT3  0x323
#define CSR_MHPMEVENT4  0x324
#define CSR_MHPMEVENT3H 0x723
#define CSR_MHPMCOUNTER3 0xb03
#define CSR_MHPMCOUNTER4 0xb04
#define CSR_MHPMCOUNTER3H 0xb83
#define CSR_MENVCFG     0x30a
#define CSR_MENVCFGH    0x31a
#define CSR_SHPMSPC     0x5e0
#define CSR_SHPMSDATA   0x5e1
/* Smpdis/Sspdis (RV32 high halves at +0x10) */
#define CSR_SPDISCTL    0x5c8
#define CSR_VSPDISCTL   0x6c8
#define CSR_MPDISCTL    0xbc8

enum kind {
    PLAIN, SELECT, STATEEN, SATP, INTR_ENABLE, EVENT, ENVCFG, PDISCTL,
    PDISCTLH,
};

static const struct {
    unsigned short csr;
    unsigned char kind;
} csrs[] = {
    { CSR_SCTRCONTROL, PLAIN }, { CSR_SCTRCONTROLH, PLAIN },
    { CSR_SCTRSTATUS, PLAIN }, { CSR_VSCTRCONTROL, PLAIN },
    { CSR_VSCTRCONTROLH, PLAIN }, { CSR_MCTRCONTROL, PLAIN },
    { CSR_MCTRCONTROLH, PLAIN }, { CSR_MCTRSTATUS, PLAIN },
    { CSR_SCTRCTL, PLAIN }, { CSR_SCTRSTATUS_R, PLAIN },
    { CSR_SCTRDEPTH, PLAIN }, { CSR_VSCTRCTL, PLAIN },
    { CSR_MCTRCTL, PLAIN },
    { CSR_MISELECT, SELECT }, { CSR_SISELECT, SELECT },
    { CSR_VSISELECT, SELECT },
    { CSR_MIREG, PLAIN }, { CSR_MIREG2, PLAIN }, { CSR_MIREG3, PLAIN },
    { CSR_MIREG4, PLAIN }, { CSR_MIREG5, PLAIN }, { CSR_MIREG6, PLAIN },
    { CSR_SIREG, PLAIN }, { CSR_SIREG2, PLAIN }, { CSR_SIREG3, PLAIN },
    { CSR_SIREG4, PLAIN }, { CSR_SIREG5, PLAIN }, { CSR_SIREG6, PLAIN },
    { CSR_VSIREG, PLAIN }, { CSR_VSIREG2, PLAIN }, { CSR_VSIREG3, PLAIN },
    { CSR_MSTATEEN0, STATEEN }, { CSR_MSTATEEN0H, STATEEN },
    { CSR_HSTATEEN0, STATEEN }, { CSR_HSTATEEN0H, STATEEN },
    { CSR_SSTATEEN0, STATEEN },
    { CSR_MIE, INTR_ENABLE }, { CSR_SIE, INTR_ENABLE },
    { CSR_SATP, SATP },
    { CSR_MHPMEVENT3, EVENT }, { CSR_MHPMEVENT4, EVENT },
    { CSR_MHPMEVENT3H, PLAIN },
    { CSR_MHPMCOUNTER3, PLAIN }, { CSR_MHPMCOUNTER4, PLAIN },
    { CSR_MHPMCOUNTER3H, PLAIN },
    { CSR_MCOUNTINHIBIT, PLAIN }, { CSR_MCOUNTEREN, PLAIN },
    { CSR_MENVCFG, ENVCFG }, { CSR_MENVCFGH, ENVCFG },
    { CSR_SHPMSPC, PLAIN }, { CSR_SHPMSDATA, PLAIN },
    { CSR_MPDISCTL, PDISCTL }, { CSR_SPDISCTL, PDISCTL },
    { CSR_VSPDISCTL, PDISCTL }, { CSR_MPDISCTL + 0x10, PDISCTLH },
    { CSR_SPDISCTL + 0x10, PDISCTLH }, { CSR_VSPDISCTL + 0x10, PDISCTLH },
    { 0x5c9, PLAIN }, { 0x5ca, PLAIN }, { 0x5cb, PLAIN }, { 0x5cc, PLAIN },
    { 0x5cd, PLAIN }, { 0x5ce, PLAIN }, { 0x5d9, PLAIN }, { 0x5da, PLAIN },
    { 0x5db, PLAIN }, { 0x5dd, PLAIN }, { 0xda0, PLAIN },
};

static unsigned long long rng;

static unsigned long next_random(void)
{
    /* xorshift64 */
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned long)rng;
}

static unsigned long random_below(unsigned long n)
{
    return next_random() % n;
}

/* A value a hostile guest would write to a CSR of this kind. */
static unsigned long random_value(unsigned kind)
{
    static const unsigned long interesting[] = {
        0, 1, ~0UL, ~0UL >> 1, 0x200, 0x2ff, 0x300,
        (unsigned long)CTR_M | CTR_S | CTR_U | CTR_DEPTH(0xf),
    };
    unsigned long v = random_below(2) ? next_random() :
        interesting[random_below(sizeof(interesting) /
                                 sizeof(interesting[0]))];

    switch (kind) {
    case SELECT:
        /* mostly the CTR range, the rest anywhere */
        return random_below(4) ? 0x200 + random_below(0x100) : v;
    case STATEEN:
        /* mostly everything on, so that the CTR CSRs stay reachable */
        return random_below(4) ? ~0UL : v;
    case SATP:
        /* Bare with any ASID: translation stays off */
        return RV_XLEN == 32 ? v & (0x1ffUL << 22) :
                               v & (0xffffUL << 44);
    case INTR_ENABLE:
        return v & MIE_LCOFIE;
    case EVENT:
        /* mostly an event of the allocation, with any filter bits */
        if (random_below(4)) {
            static const unsigned long events[] = {
                0x2, 0x5, 0x13, 0x100, 0x200, 0x300, 0x400, 0x500,
                0x600, 0x900,
            };
            return events[random_below(sizeof(events) / sizeof(events[0]))] |
                   (RV_XLEN == 64 ? v & (0xfcUL << 56) : 0);
        }
        return v;
    case ENVCFG:
        /* counter delegation (CDE) only: other bits change the machine */
        return RV_XLEN == 64 ? v & (1UL << 60) : v & (1UL << 28);
    case PDISCTL:
        /* samples to the data registers: MEM=1 would write records */
        return RV_XLEN == 64 ? v & ~(1UL << 32) : v;
    case PDISCTLH:
        return v & ~1UL;
    default:
        return v;
    }
}

static unsigned long accesses, traps, lcofis;

/* A counter the fuzz programmed overflowed, with the LCOFI enabled. */
static void lcofi_handler(unsigned irq)
{
    (void)irq;
    lcofis++;
    csr_clear(mip, 1UL << IRQ_LCOF);
}

/* One random access from the current mode; returns false on a bad trap. */
static bool random_access(void)
{
    unsigned i = random_below(sizeof(csrs) / sizeof(csrs[0]));
    unsigned csr = csrs[i].csr;
    unsigned long cause;

    rv_trap_expect();
    if (random_below(2)) {
        rv_csr_read_num(csr);
    } else {
        rv_csr_write_num(csr, random_value(csrs[i].kind));
    }
    cause = rv_trap_cause();
    accesses++;
    if (cause == RV_NO_TRAP) {
        return true;
    }
    traps++;
    if (cause == EXC_ILLEGAL ||
        (cause == EXC_VIRTUAL && rv_current_mode >= RV_MODE_VU)) {
        return true;
    }
    rv_printf("csr-fuzz: %s-mode access to CSR 0x%x raised cause %lu\n",
              rv_mode_name(rv_current_mode), csr, cause);
    return false;
}

/* A burst of accesses in the mode rv_run_in_mode() entered. */
static unsigned long burst(unsigned long n)
{
    unsigned long bad = 0;

    while (n--) {
        bad += !random_access();
    }
    return bad;
}

int main(void)
{
    static const enum rv_mode modes[] = {
        RV_MODE_M, RV_MODE_S, RV_MODE_U, RV_MODE_VS, RV_MODE_VU
    };
    unsigned nmodes = rv_has_ext('H') ? 5 : 3;
    unsigned long iters = rv_arg_value("iters=", 20000);
    unsigned long bad = 0, done;

    rng = rv_arg_value("seed=", 1) * 0x9e3779b97f4a7c15ULL | 1;
    rv_irq_set_handler(IRQ_LCOF, lcofi_handler);
    rv_rule("a CSR access completes or raises an illegal-instruction "
            "(virtual-instruction from VS/VU) exception");
    for (done = 0; done < iters; done += 16) {
        enum rv_mode mode = modes[random_below(nmodes)];

        bad += mode == RV_MODE_M ? burst(16) :
                                   rv_run_in_mode(mode, burst, 16);
    }
    rv_printf("csr-fuzz: %lu accesses, %lu traps, %lu LCOFIs\n", accesses,
              traps, lcofis);
    CHECK_EQ(bad, 0);
    CHECK(traps > 0 && traps < accesses);
    return 0;
}

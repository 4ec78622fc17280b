/*
 * CSR fuzz: random accesses, from M, S, U, VS and VU, to every CSR the
 * project adds or changes (the draft and the ratified CTR, the indirect
 * registers and their selects, the state enables, LCOFIE, satp's ASID).
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

enum kind { PLAIN, SELECT, STATEEN, SATP, INTR_ENABLE };

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
    default:
        return v;
    }
}

static unsigned long accesses, traps;

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
    rv_rule("a CSR access completes or raises an illegal-instruction "
            "(virtual-instruction from VS/VU) exception");
    for (done = 0; done < iters; done += 16) {
        enum rv_mode mode = modes[random_below(nmodes)];

        bad += mode == RV_MODE_M ? burst(16) :
                                   rv_run_in_mode(mode, burst, 16);
    }
    rv_printf("csr-fuzz: %lu accesses, %lu traps\n", accesses, traps);
    CHECK_EQ(bad, 0);
    CHECK(traps > 0 && traps < accesses);
    return 0;
}

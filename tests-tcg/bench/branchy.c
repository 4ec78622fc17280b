/*
 * A branch- and call-heavy loop for the CTR benchmark
 * (scripts/bench-ctr.sh): direct and indirect calls, returns, taken and
 * not-taken branches, jumps.  The kernel command line (-append) selects
 * what the guest asks of CTR before the loop:
 *
 *   record=none      nothing (CTR absent, or present and idle)
 *   record=draft     mctrcontrol (v0.1.4 draft): M mode, every type
 *   record=ratified  mctrctl (Smctr 1.0): M mode, every type
 *   iters=N          loop iterations (default 1000)
 *
 * It prints the loop's duration in mtime ticks and checks its result
 * and, when recording, that CTR recorded the loop's last transfers.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"

#define CSR_MCTRCONTROL     0x381       /* draft */
#define CSR_MCTRCTL         0x34e       /* ratified */
#define CSR_MISELECT        0x350
#define CSR_SISELECT        0x150
#define CSR_MIREG           0x351
#define CSR_SIREG           0x151

static unsigned long __attribute__((noinline)) mix(unsigned long x)
{
    return x ^ (x >> 3);
}

static unsigned long __attribute__((noinline)) twist(unsigned long x)
{
    return (x << 1) | (x >> 7);
}

static unsigned long (*volatile const ops[2])(unsigned long) = { mix, twist };

static unsigned long __attribute__((noinline)) kernel(unsigned long iters)
{
    unsigned long acc = 1;

    for (unsigned long i = 0; i < iters; i++) {
        acc += (i & 1) ? mix(acc) : ops[(acc >> 2) & 1](acc);
        if (acc & 4) {
            acc++;
        }
        if ((i & 7) == 3) {
            acc = twist(acc);
        }
    }
    return acc;
}

/* The same loop in plain C arithmetic, without calls: the reference. */
static unsigned long reference(unsigned long iters)
{
    unsigned long acc = 1;

    for (unsigned long i = 0; i < iters; i++) {
        unsigned long x = acc;
        bool odd = i & 1;

        if (!odd && ((acc >> 2) & 1)) {
            x = (x << 1) | (x >> 7);
        } else {
            x = x ^ (x >> 3);
        }
        acc += x;
        if (acc & 4) {
            acc++;
        }
        if ((i & 7) == 3) {
            acc = (acc << 1) | (acc >> 7);
        }
    }
    return acc;
}

int main(void)
{
    unsigned long iters, acc;
    unsigned select = 0, ireg = 0;
    uint64_t t0, t1;

    iters = rv_arg_value("iters=", 1000);

    if (rv_arg_is("record=", "draft")) {
        /* M, and every type: NTBREN (bit 36) on, no inhibit bit set. */
        csr_write(CSR_MCTRCONTROL, 1UL | (1ULL << 36));
        select = CSR_MISELECT;
        ireg = CSR_MIREG;
    } else if (rv_arg_is("record=", "ratified")) {
        csr_write(CSR_MCTRCTL, (1UL << 2) | (1ULL << 36));
        select = CSR_SISELECT;
        ireg = CSR_SIREG;
    }

    t0 = rv_mtime();
    acc = kernel(iters);
    t1 = rv_mtime();

    if (select) {
        rv_csr_write_num(select == CSR_MISELECT ? CSR_MCTRCONTROL :
                                                  CSR_MCTRCTL, 0);
    }
    rv_printf("branchy: %lu iterations, %lu ticks\n", iters,
              (unsigned long)(t1 - t0));

    rv_rule("the loop computes its reference result");
    CHECK_EQ(acc, reference(iters));
    if (select) {
        rv_rule("CTR recorded the loop (entry 0 valid)");
        rv_csr_write_num(select, 0x200);
        CHECK(rv_csr_read_num(ireg) & 1);
    }
    return 0;
}

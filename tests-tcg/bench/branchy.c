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
 *   rewrite=K        every K iterations, write the control register with
 *                    another type filter (mscratch with record=none):
 *                    the cost of a guest that reprograms CTR often
 *   recount=1        with record=, 256 entries, and the loop runs twice:
 *                    WRPTR must move as far in each run (then the timed
 *                    loop runs no iterations)
 *
 * It prints the loop's duration in mtime ticks and checks its result
 * and, when recording, that CTR recorded the transfers made right after
 * the loop (so also after a migration during it: tests-tcg/meson.build;
 * with recount=1, WRPTR counts the records made before the migration).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_record.h"

#define CSR_MISELECT        0x350
#define CSR_SISELECT        0x150
#define CSR_MIREG           0x351
#define CSR_SIREG           0x151
#define CSR_MCTRSTATUS      0x383       /* draft */
#define CSR_SCTRSTATUS      0x14f       /* ratified */
#define CSR_SCTRDEPTH       0x15f       /* ratified */

static unsigned long __attribute__((noinline)) mix(unsigned long x)
{
    return x ^ (x >> 3);
}

static unsigned long __attribute__((noinline)) twist(unsigned long x)
{
    return (x << 1) | (x >> 7);
}

static unsigned long (*volatile const ops[2])(unsigned long) = { mix, twist };

/* Iterations from..to-1 of the loop, from acc. */
static unsigned long __attribute__((noinline))
kernel(unsigned long acc, unsigned long from, unsigned long to)
{
    for (unsigned long i = from; i < to; i++) {
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

/* Called right after the loop: CTR must have recorded this call. */
static void __attribute__((noinline)) after_loop(void)
{
    asm volatile("" ::: "memory");
}

/*
 * The loop, with the control register rewritten every `every` iterations
 * (0: never), each time with another filter of the types 5 and 8..15.
 */
static unsigned long run(int record, unsigned long iters,
                         unsigned long every)
{
    unsigned long acc = 1, i = 0, n = 0;

    while (i < iters) {
        unsigned long to = every && iters - i > every ? i + every : iters;

        if (every) {
            n = n * 0x9e37 + 1;
            ctr_write_control(record, (n & 0xff20) & ~(1UL << 4));
        }
        acc = kernel(acc, i, to);
        i = to;
    }
    return acc;
}

/* WRPTR, of 256 entries */
static unsigned ctr_wrptr(int record)
{
    return (record == RECORD_DRAFT ? csr_read(CSR_MCTRSTATUS) :
                                     csr_read(CSR_SCTRSTATUS)) & 0xff;
}

/*
 * The loop, as far as WRPTR moves during it (mod 256).  TCG is
 * deterministic, so it moves as far each time: a migration in the middle
 * must not lose the records made before it.
 */
static unsigned long __attribute__((noinline))
run_counted(int record, unsigned long iters, unsigned *moved)
{
    unsigned start = ctr_wrptr(record);
    unsigned long acc = run(record, iters, 0);

    *moved = (ctr_wrptr(record) - start) & 0xff;
    return acc;
}

/* recount=1: the loop twice, with 256 entries */
static void recount(int record, unsigned long iters)
{
    unsigned moved[2];

    if (record == RECORD_DRAFT) {
        csr_set(CSR_MCTRCONTROL, 0xfUL << 16);
    } else {
        csr_write(CSR_SCTRDEPTH, 4);
    }
    rv_rule("the loop computes its reference result, twice");
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(run_counted(record, iters, &moved[i]), reference(iters));
    }
    rv_rule("WRPTR moves as far in both runs of the loop");
    rv_printf("branchy: WRPTR moved %u and %u\n", moved[0], moved[1]);
    CHECK_EQ(moved[0], moved[1]);

    /* back to 16: the loop after this one stops with DEPTH = 0 (draft) */
    if (record == RECORD_DRAFT) {
        csr_clear(CSR_MCTRCONTROL, 0xfUL << 16);
    } else {
        csr_write(CSR_SCTRDEPTH, 0);
    }
}

int main(void)
{
    unsigned long iters, every, acc, ctl = 0;
    unsigned select = 0, ireg = 0, ireg2 = 0;
    int record = RECORD_NONE;
    uint64_t t0, t1;

    iters = rv_arg_value("iters=", 1000);
    every = rv_arg_value("rewrite=", 0);

    if (rv_arg_is("record=", "draft")) {
        record = RECORD_DRAFT;
        ctl = CSR_MCTRCONTROL;
        select = CSR_MISELECT;
        ireg = CSR_MIREG;
        ireg2 = CSR_MIREG + 1;
    } else if (rv_arg_is("record=", "ratified")) {
        record = RECORD_RATIFIED;
        ctl = CSR_MCTRCTL;
        select = CSR_SISELECT;
        ireg = CSR_SIREG;
        ireg2 = CSR_SIREG + 1;
    }
    if (record != RECORD_NONE) {
        ctr_write_control(record, 0);
    }
    if (record != RECORD_NONE && rv_arg_value("recount=", 0)) {
        /* the migration must come during these two runs: none after */
        recount(record, iters);
        iters = 0;
    }

    t0 = rv_mtime();
    acc = run(record, iters, every);
    t1 = rv_mtime();

    if (record != RECORD_NONE) {
        if (every) {
            ctr_write_control(record, 0);
        }
        after_loop();
        rv_csr_write_num(ctl, 0);
    }
    rv_printf("branchy: %lu iterations, %lu ticks\n", iters,
              (unsigned long)(t1 - t0));

    rv_rule("the loop computes its reference result");
    CHECK_EQ(acc, reference(iters));
    if (select) {
        /* among the newest entries (then rv_csr_write_num() was called) */
        bool found = false;

        rv_rule("CTR recorded the call made after the loop");
        for (unsigned e = 0; e < 4; e++) {
            rv_csr_write_num(select, 0x200 + e);
            found |= (rv_csr_read_num(ireg) & 1) &&
                     rv_csr_read_num(ireg2) == (unsigned long)after_loop;
        }
        CHECK(found);
    }
    return 0;
}

/*
 * What a benchmark guest asks CTR to record before its loop (record= on
 * the kernel command line): nothing, the v0.1.4 draft's mctrcontrol or
 * the ratified mctrctl, M mode, every transfer type.  Shared by the
 * benchmark guests (branchy.c, workloads.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef BENCH_CTR_RECORD_H
#define BENCH_CTR_RECORD_H

#include "rvtest.h"

#define CSR_MCTRCONTROL     0x381       /* draft */
#define CSR_MCTRCTL         0x34e       /* ratified */

enum { RECORD_NONE, RECORD_DRAFT, RECORD_RATIFIED };

/* record=none|draft|ratified (default none; RV64 only) */
static inline int ctr_record_arg(void)
{
    if (RV_XLEN != 64) {
        return RECORD_NONE;
    }
    if (rv_arg_is("record=", "draft")) {
        return RECORD_DRAFT;
    }
    if (rv_arg_is("record=", "ratified")) {
        return RECORD_RATIFIED;
    }
    return RECORD_NONE;
}

/*
 * M mode, every type (NTBREN, bit 36, on) with the inhibits of filter;
 * with RECORD_NONE, the same value to mscratch (a CSR write of the same
 * cost, for a baseline: only where no trap can come, since the guest
 * library keeps the trap stack there).
 */
static inline void ctr_write_control(int record, unsigned long filter)
{
    unsigned long value = (unsigned long)((1ULL << 36) |
                                          (uint64_t)filter << 32);

    switch (record) {
    case RECORD_DRAFT:
        csr_write(CSR_MCTRCONTROL, value | 1);
        break;
    case RECORD_RATIFIED:
        csr_write(CSR_MCTRCTL, value | 1 << 2);
        break;
    default:
        csr_write(mscratch, value);
        break;
    }
}

/* Recording off again. */
static inline void ctr_stop(int record)
{
    if (record == RECORD_DRAFT) {
        csr_write(CSR_MCTRCONTROL, 0);
    } else if (record == RECORD_RATIFIED) {
        csr_write(CSR_MCTRCTL, 0);
    }
}

#endif /* BENCH_CTR_RECORD_H */

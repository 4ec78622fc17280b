/*
 * RISC-V E-trace: the packed block, the record a hart's retirement is
 * reported in
 *
 * The one definition of the layout QEMU's hart writes (the trace ingress,
 * target/riscv/trace_ingress.h, which adds its own bits above those of
 * the codec) and the encoder reads (etrace_encoder_packed(), etrace.h).
 * It is the form in which blocks are encoded without unpacking those that
 * make no packet: the fields of ETraceBlock, with notify false and
 * qualified true; a trap (itype 1 or 2) takes two entries, the second
 * holding its cause and tval.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_ETRACE_RECORD_H
#define RISCV_ETRACE_RECORD_H

#include <stdint.h>

typedef union ETracePackedBlock {
    struct {
        uint64_t iaddr;     /* the first instruction; xepc for a trap */
        uint64_t info;      /* ETRACE_PB_* */
    };
    struct {                /* the entry after a trap's */
        uint64_t cause;
        uint64_t tval;
    };
} ETracePackedBlock;

#define ETRACE_PB_IRETIRE_SHIFT     0   /* 16 bits: half-words */
#define ETRACE_PB_NINSNS_SHIFT      16  /* 16 bits: instructions */
#define ETRACE_PB_ITYPE_SHIFT       32  /* 4 bits: itype */
#define ETRACE_PB_ILASTSIZE_SHIFT   36  /* 1 bit: the last is 4 bytes */
#define ETRACE_PB_ILASTSIZE         (UINT64_C(1) << ETRACE_PB_ILASTSIZE_SHIFT)
/*
 * 3 bits, of which privilege_width_p are kept: the privilege mode, and V
 * in the third.
 */
#define ETRACE_PB_PRIV_SHIFT        37
#define ETRACE_PB_VIRT              (UINT64_C(1) << (ETRACE_PB_PRIV_SHIFT + 2))
#define ETRACE_PB_SIJUMP_SHIFT      40  /* 1 bit: sequentially inferable */
#define ETRACE_PB_SIJUMP            (UINT64_C(1) << ETRACE_PB_SIJUMP_SHIFT)
/*
 * A promise that lets the encoder skip checks on the blocks that make no
 * packet: iretire and ninsns are not 0 and itype is neither 1 nor 2.  A
 * block without it is encoded the same, only slower.
 */
#define ETRACE_PB_PLAIN             (UINT64_C(1) << 41)
/*
 * A run (see ETraceBlock): iaddr holds its branch map below a 1 bit that
 * ends it (63 branches at most), info its iretire, ninsns and priv.
 */
#define ETRACE_PB_RUN               (UINT64_C(1) << 42)
/* Bits 43 to 63 are the producer's own: the encoder ignores them. */
#define ETRACE_PB_PRODUCER_SHIFT    43

/* Entries of the packed block whose info word this is: 2 for a trap. */
static inline unsigned etrace_packed_len(uint64_t info)
{
    unsigned itype = (info >> ETRACE_PB_ITYPE_SHIFT) & 15;

    return itype == 1 || itype == 2 ? 2 : 1;
}

#endif /* RISCV_ETRACE_RECORD_H */

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
 * holding its cause and tval.  The data accesses of the data trace
 * interface (chapter 4.4) travel in the same stream, two entries each,
 * before the block of the instruction that made them.
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
    struct {                /* the entry after a data access's */
        uint64_t data;      /* loaded or stored; CSR: the value read */
        uint64_t operand;   /* atomics: rs2; CSR: the source operand */
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
 * packet: iretire and ninsns are not 0, iretire holds the last
 * instruction (ilastsize: 2 half-words or more) and itype is neither 1
 * nor 2.  A block without it is encoded the same, only slower.
 */
#define ETRACE_PB_PLAIN             (UINT64_C(1) << 41)
/*
 * A run (see ETraceBlock): iaddr holds its branch map below a 1 bit that
 * ends it (63 branches at most), info its iretire, ninsns and priv.
 */
#define ETRACE_PB_RUN               (UINT64_C(1) << 42)
/*
 * A data access: iaddr holds daddr (for a CSR, its number), info dtype,
 * dsize and where the instruction is: half-words from the iaddr of the
 * block that follows (the instruction's block, whose record comes after
 * its accesses).  The second entry holds data and operand.
 */
#define ETRACE_PB_DATA              (UINT64_C(1) << 43)
#define ETRACE_PB_DTYPE_SHIFT       0   /* 4 bits: dtype, table 4.9 */
#define ETRACE_PB_DSIZE_SHIFT       4   /* 3 bits: 2^dsize bytes */
#define ETRACE_PB_DOFFSET_SHIFT     8   /* 16 bits: half-words */

/* dtype (table 4.9) */
enum {
    ETRACE_DTYPE_LOAD = 0,
    ETRACE_DTYPE_STORE = 1,
    ETRACE_DTYPE_CSR_RW = 4,
    ETRACE_DTYPE_CSR_RS = 5,
    ETRACE_DTYPE_CSR_RC = 6,
    ETRACE_DTYPE_AMO_SWAP = 8,
    ETRACE_DTYPE_AMO_ADD = 9,
    ETRACE_DTYPE_AMO_AND = 10,
    ETRACE_DTYPE_AMO_OR = 11,
    ETRACE_DTYPE_AMO_XOR = 12,
    ETRACE_DTYPE_AMO_MAX = 13,
    ETRACE_DTYPE_AMO_MIN = 14,
};

/*
 * A run (ETRACE_PB_RUN) that also carries each branch's entry in the
 * branch predictor (3.2.6), which needs it: the entries after the run's
 * hold one byte per branch, the oldest first, ETRACE_RUN_ENTRIES_PER_SLOT
 * to an entry: byte i holds bits 6:1 of the address of the run's i-th
 * oldest branch (the bytes past its last are arbitrary).  They are as
 * many as its k branches need, 1 to 4 (etrace_run_entry_slots()), and
 * the itype field, which a run does not use, says how many.  Enough for
 * a predictor of up to 64 entries indexed from bit 1 (iaddress_lsb_p 1);
 * etrace_run_indexes_fit() says whether an encoder's is one.  Such a run
 * holds as many branches as any other.
 */
#define ETRACE_PB_RUN_INDEXED       (UINT64_C(1) << 44)
#define ETRACE_RUN_INDEXED_MAX      62
#define ETRACE_RUN_ENTRIES_PER_SLOT 16
#define ETRACE_RUN_INDEX_BITS       6

/* The entries after an indexed run of k branches */
static inline unsigned etrace_run_entry_slots(unsigned k)
{
    return (k + ETRACE_RUN_ENTRIES_PER_SLOT - 1) / ETRACE_RUN_ENTRIES_PER_SLOT;
}

/* The bytes of the entries after the indexed (or counted) run at pb */
static inline const uint8_t *etrace_run_entries(const ETracePackedBlock *pb)
{
    return (const uint8_t *)&pb[1];
}

/*
 * A run (ETRACE_PB_RUN) that also says where each taken branch is, for
 * N-trace's BTM, whose DirectBranch message counts the half-words up to
 * it: the entries after the run's hold a 16-bit little-endian count per
 * branch, ETRACE_RUN_COUNTS_PER_SLOT to an entry, the oldest first.
 * Count i is the run's half-words up to and including the i-th oldest
 * branch block, if that branch was taken (else arbitrary: the counts
 * past the last are arbitrary too).  The run's iretire (which must be
 * counted) is at most 0xffff, and its ETRACE_RUN_COUNTED_MAX branches at
 * most fill the entries the itype field counts, 1 to 8, as for an
 * indexed run; a run is not both.
 */
#define ETRACE_PB_RUN_COUNTED       (UINT64_C(1) << 45)
#define ETRACE_RUN_COUNTED_MAX      62
#define ETRACE_RUN_COUNTS_PER_SLOT  8

/* The entries after a counted run of k branches */
static inline unsigned etrace_run_count_slots(unsigned k)
{
    return (k + ETRACE_RUN_COUNTS_PER_SLOT - 1) / ETRACE_RUN_COUNTS_PER_SLOT;
}

/* Count i of a counted run's entries (etrace_run_entries()) */
static inline unsigned etrace_run_count(const uint8_t *entries, unsigned i)
{
    return entries[2 * i] | entries[2 * i + 1] << 8;
}

/* The longest record, in entries: a counted run of the most branches */
#define ETRACE_PACKED_LEN_MAX \
    (1 + (ETRACE_RUN_COUNTED_MAX + ETRACE_RUN_COUNTS_PER_SLOT - 1) / \
     ETRACE_RUN_COUNTS_PER_SLOT)

/* Bits 46 to 63 are the producer's own: the encoder ignores them. */
#define ETRACE_PB_PRODUCER_SHIFT    46

/*
 * A block's iretire (bits 0-31) and ninsns (bits 32-63) in one word, so
 * that the encoders' loops add up both with one addition: the sums of
 * ETRACE_PACKED_UNITS_MAX blocks (of at most 0xffff each) fit.
 */
#define ETRACE_PACKED_UNITS_MAX     0x10000

static inline uint64_t etrace_packed_units(uint64_t info)
{
    return ((info >> ETRACE_PB_IRETIRE_SHIFT) & 0xffff) |
           ((info >> ETRACE_PB_NINSNS_SHIFT) & 0xffff) << 32;
}

/*
 * Entries of the packed block whose info word this is: 2 for a trap and
 * a data access, 1 + its itype field for an indexed or counted run.
 */
static inline unsigned etrace_packed_len(uint64_t info)
{
    unsigned itype = (info >> ETRACE_PB_ITYPE_SHIFT) & 15;

    if (info & (ETRACE_PB_RUN_INDEXED | ETRACE_PB_RUN_COUNTED)) {
        return 1 + itype;
    }
    return itype == 1 || itype == 2 || (info & ETRACE_PB_DATA) ? 2 : 1;
}

#endif /* RISCV_ETRACE_RECORD_H */

/*
 * E-trace filters and comparators (trTeFilter<i>, trTeComp<j>)
 *
 * The trace-encoder device forwards the accesses to its filter registers
 * here and passes every retirement block through etrace_filter_block(),
 * which sets ETraceBlock.qualified (and .notify for watchpoints), split
 * at the instructions where qualification changes.
 *
 * Registers: RISC-V Trace Control Interface 1.0, "Trace Encoder Filter
 * Registers" (trTeInstFilters 0x00C, trTeFilter<i> 0x400 + 0x20 * i,
 * trTeComp<j> 0x600 + 0x20 * j).  Semantics: E-trace v1.1.1 draft,
 * section 2.3 (tables 2.3 to 2.6) and chapter 5.
 *
 * Implemented: ETRACE_NUM_FILTERS filters and ETRACE_NUM_COMPARATORS
 * comparators; privilege, exception cause / interrupt (trap handler)
 * and comparator conditions; comparator inputs iaddr, context, tval and
 * daddr; data filters (trTeDataFilters 0x01C, MatchDtype, MatchDsize,
 * MatchData: etrace_filter_data()).  Not implemented (read 0): impdef
 * matching (MatchImpdef, MatchValue/MaskImpdef).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_ETRACE_FILTER_H
#define RISCV_ETRACE_FILTER_H

#include "etrace.h"

/*
 * Counts.  The comparator index fields of trTeFilter<i>Control are 3 bits
 * wide; with 4 comparators only their low 2 bits are implemented, so an
 * index of 4..7 reads back (and acts) as index & 3.
 */
#define ETRACE_NUM_FILTERS      4
#define ETRACE_NUM_COMPARATORS  4
/* Nested traps whose cause and tval are remembered (2^filter_excint_p). */
#define ETRACE_TRAP_DEPTH       8

/* Register offsets in the encoder's 4 KiB block. */
#define ETRACE_REG_INST_FILTERS 0x00c
#define ETRACE_REG_DATA_FILTERS 0x01c
#define ETRACE_REG_FILTER_BASE  0x400
#define ETRACE_REG_COMP_BASE    0x600
#define ETRACE_REG_FILTER_END   0x800   /* exclusive */
#define ETRACE_REG_STRIDE       0x20

/* trTeFilter<i> registers, relative to the filter's base. */
#define ETRACE_FILTER_CONTROL       0x00
#define ETRACE_FILTER_MATCH_INST    0x04
#define ETRACE_FILTER_ECAUSE_LOW    0x08
#define ETRACE_FILTER_ECAUSE_HIGH   0x0c
#define ETRACE_FILTER_IMPDEF_VALUE  0x10
#define ETRACE_FILTER_IMPDEF_MASK   0x14
#define ETRACE_FILTER_MATCH_DATA    0x18

/* trTeFilter<i>Control fields. */
#define ETRACE_FCTL_ENABLE          (1u << 0)
#define ETRACE_FCTL_MATCH_PRIV      (1u << 1)
#define ETRACE_FCTL_MATCH_ECAUSE    (1u << 2)
#define ETRACE_FCTL_MATCH_INTERRUPT (1u << 3)
/* MatchComp<k> at bit 4 + 4 * k, Comp<k> index at bits 7 + 4 * k : 5 + 4 * k */
#define ETRACE_FCTL_MATCH_COMP(k)   (1u << (4 + 4 * (k)))
#define ETRACE_FCTL_COMP_SHIFT(k)   (5 + 4 * (k))
#define ETRACE_FCTL_MATCH_IMPDEF    (1u << 16)
#define ETRACE_FCTL_MATCH_DTYPE     (1u << 24)
#define ETRACE_FCTL_MATCH_DSIZE     (1u << 25)

/* trTeFilter<i>MatchInst fields. */
#define ETRACE_FMI_PRIV_MASK        0xffu
#define ETRACE_FMI_VALUE_INTERRUPT  (1u << 8)

/* trTeComp<j> registers, relative to the comparator's base. */
#define ETRACE_COMP_CONTROL         0x00
#define ETRACE_COMP_PMATCH_LOW      0x10
#define ETRACE_COMP_PMATCH_HIGH     0x14
#define ETRACE_COMP_SMATCH_LOW      0x18
#define ETRACE_COMP_SMATCH_HIGH     0x1c

/* trTeComp<j>Control fields. */
#define ETRACE_CCTL_PINPUT_SHIFT    0
#define ETRACE_CCTL_SINPUT_SHIFT    2
#define ETRACE_CCTL_PFUNC_SHIFT     4
#define ETRACE_CCTL_SFUNC_SHIFT     8
#define ETRACE_CCTL_MODE_SHIFT      12
#define ETRACE_CCTL_PNOTIFY         (1u << 14)
#define ETRACE_CCTL_SNOTIFY         (1u << 15)

typedef enum ETraceCompInput {
    ETRACE_COMP_IADDR = 0,
    ETRACE_COMP_CONTEXT = 1,
    ETRACE_COMP_TVAL = 2,
    ETRACE_COMP_DADDR = 3,      /* data filters only: 0 for instructions */
} ETraceCompInput;

typedef enum ETraceCompFunction {
    ETRACE_COMP_EQ = 0,
    ETRACE_COMP_NE = 1,
    ETRACE_COMP_LT = 2,
    ETRACE_COMP_LE = 3,
    ETRACE_COMP_GT = 4,
    ETRACE_COMP_GE = 5,
    ETRACE_COMP_FALSE = 6,      /* P: false, primes the latch; S: mask */
    ETRACE_COMP_TRUE = 7,
} ETraceCompFunction;

typedef enum ETraceCompMode {
    ETRACE_COMP_P = 0,
    ETRACE_COMP_P_AND_S = 1,
    ETRACE_COMP_NOT_P_AND_S = 2,
    ETRACE_COMP_LATCH = 3,      /* from P until the instruction after S */
} ETraceCompMode;

/*
 * Length in bytes (2 or 4) of the instruction at addr, which is inside a
 * block being filtered.  Any other value is read as 2.
 */
typedef unsigned ETraceInsnLenFn(void *opaque, uint64_t addr);

/* Receives the (sub-)blocks that etrace_filter_block() produces. */
typedef void ETraceBlockFn(void *opaque, const ETraceBlock *b);

/*
 * The state.  A device embeds it and migrates the fields of the first two
 * groups (plain arrays), then calls etrace_filter_post_load().
 */
typedef struct ETraceFilter {
    /* Registers, always holding legal values. */
    uint32_t inst_filters;
    uint32_t data_filters;
    uint32_t filter_control[ETRACE_NUM_FILTERS];
    uint32_t filter_match_data[ETRACE_NUM_FILTERS];
    uint32_t filter_match_inst[ETRACE_NUM_FILTERS];
    uint64_t filter_match_ecause[ETRACE_NUM_FILTERS];
    uint32_t comp_control[ETRACE_NUM_COMPARATORS];
    uint64_t comp_pmatch[ETRACE_NUM_COMPARATORS];
    uint64_t comp_smatch[ETRACE_NUM_COMPARATORS];

    /* Run-time state. */
    bool comp_latch[ETRACE_NUM_COMPARATORS];
    bool prev_qualified;        /* last retired instruction qualified */
    uint32_t trap_depth;        /* traps not returned from (saturates) */
    uint64_t trap_cause[ETRACE_TRAP_DEPTH];
    bool trap_interrupt[ETRACE_TRAP_DEPTH];
    uint64_t trap_tval[ETRACE_TRAP_DEPTH];

    /* Derived from the above by etrace_filter_post_load(). */
    bool active;                /* some filter or watchpoint is on */
    uint32_t comp_need[ETRACE_NUM_FILTERS];  /* comparators filter i ANDs */
    uint32_t comp_used;         /* comparators evaluated per instruction */
    uint32_t trap_window;       /* filters inside a matching handler */

    /* Configuration from etrace_filter_init(). */
    uint64_t iaddr_mask;
    uint64_t context_mask;
    uint64_t match_mask;        /* implemented bits of P/SMatch */
    uint64_t ecause_mask;       /* implemented bits of MatchEcause */
    uint32_t priv_mask;         /* implemented bits of MatchInst[7:0] */
    ETraceInsnLenFn *insn_len;
    void *insn_len_opaque;
} ETraceFilter;

/*
 * Set up f for an encoder with these parameters (iaddress_width_p,
 * context_width_p, ecause_width_p and privilege_width_p size the WARL
 * fields) and reset it.  insn_len tells the length of instructions inside
 * a block; without it (NULL) blocks are never split and a block is
 * qualified when any of its half-word addresses would be (E-trace 4.3:
 * "all instructions in a block are traced if any of the instructions in
 * that block match the filtering criteria").
 */
void etrace_filter_init(ETraceFilter *f, const ETraceParams *p,
                        ETraceInsnLenFn *insn_len, void *opaque);

/* All registers and state to 0: no filter selected, trace everything. */
void etrace_filter_reset(ETraceFilter *f);

/* True for offsets this module answers: 0x00C, 0x01C and 0x400..0x7FF. */
static inline bool etrace_filter_is_reg(uint64_t offset)
{
    return offset == ETRACE_REG_INST_FILTERS ||
           offset == ETRACE_REG_DATA_FILTERS ||
           (offset >= ETRACE_REG_FILTER_BASE &&
            offset < ETRACE_REG_FILTER_END);
}

/*
 * 32-bit register access at offset in the encoder's block.  Offsets that
 * are not 4-byte aligned, not implemented or reserved read 0 and ignore
 * writes; fields take only legal values (WARL), see the .c file.
 */
uint32_t etrace_filter_read(const ETraceFilter *f, uint64_t offset);
void etrace_filter_write(ETraceFilter *f, uint64_t offset, uint32_t value);

/* Recompute the derived fields after the others were loaded. */
void etrace_filter_post_load(ETraceFilter *f);

/* False when etrace_filter_block() would pass every block unchanged. */
static inline bool etrace_filter_active(const ETraceFilter *f)
{
    return f->active;
}

/*
 * Qualify block b: out() receives one or more blocks covering b's
 * instructions in order, each with .qualified set.  A block is split
 * where qualification changes; every part but the last ends with itype 0
 * and no cause/tval/sijump, the last keeps b's itype, and only the first
 * keeps b's ctype.  .notify is b's, ORed with comparator watchpoints
 * (PNotify/SNotify) that matched an instruction of a qualified part.
 * A block with iretire 0 (a trap alone) has the qualification of the
 * instruction retired before it.
 */
void etrace_filter_block(ETraceFilter *f, const ETraceBlock *b,
                         ETraceBlockFn *out, void *opaque);

/*
 * Whether a data access passes the data filters: with trTeDataFilters 0
 * every access does; else some selected, enabled filter whose conditions
 * all hold: privilege, the trap handler window (as for the instructions),
 * MatchDtype (MatchData[15:0], one bit per dtype), MatchDsize
 * (MatchData[23:16], one bit per dsize) and its comparators, evaluated
 * on the access (iaddr: its instruction; daddr; context; tval of the
 * handler) without moving their latches (a latch counts as it stands).
 * dtype and dsize as in etrace-data.h.
 */
bool etrace_filter_data(const ETraceFilter *f, unsigned dtype, unsigned dsize,
                        uint64_t daddr, uint64_t iaddr, unsigned priv,
                        uint64_t context);

#endif /* RISCV_ETRACE_FILTER_H */

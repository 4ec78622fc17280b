/*
 * RISC-V instruction trace ingress: per-block retirement records
 *
 * While a trace encoder traces a hart, the hart reports what it retires as
 * the blocks of the E-trace instruction trace interface (chapter 4.2):
 * translated code appends one record per executed translation block exit
 * to the room the encoder that attached itself (riscv_trace_attach) lends
 * it, traps append theirs from C, and the records are handed over when
 * the room is full, when tracing stops and when the encoder asks.  No
 * copy: the room is part of the encoder's queue.  While no
 * encoder traces the hart, translated code contains nothing of this: the
 * "trace on" bit of TranslationBlock.cs_base selects other TBs.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_TRACE_INGRESS_H
#define RISCV_TRACE_INGRESS_H

#include "hw/riscv/codec/include/etrace-record.h"
#include "insn_class.h"

/*
 * The RISCV_INSN_ISA_* bits (insn_class.h) of a hart's configuration:
 * what the shared classifier needs to read Zcmp's and Zcmt's encodings
 * (the trace ingress, the PMU events, PDIS)
 */
static inline unsigned riscv_insn_isa(const RISCVCPUConfig *cfg)
{
    return (cfg->ext_zcmp ? RISCV_INSN_ISA_ZCMP : 0) |
           (cfg->ext_zcmt ? RISCV_INSN_ISA_ZCMT : 0);
}

/*
 * One record, 16 bytes: the codec's packed block, whose ETRACE_PB_*
 * fields the hart fills.  A block: iaddr is its first instruction.  A
 * trap (itype 1 or 2) retires nothing itself: it follows the block ending
 * at the last retired instruction, iaddr is the trapping instruction
 * (xepc), and a second record after it holds cause and tval; the two are
 * never split over two rooms, nor are the two of a data access
 * (ETRACE_PB_DATA, trace_data_translate.c.inc), which go before the
 * record of their block.  A context record (RISCV_TRACE_CONTEXT)
 * carries the new context (satp.ASID) in iaddr.  The bits from
 * ETRACE_PB_PRODUCER_SHIFT up are the ingress's own, below.
 */
typedef ETracePackedBlock RISCVTraceRecord;

/*
 * A lui/auipc/c.lui and the jump using its register may be split over two
 * TBs: the block ending with the constant load names its rd, the block of
 * only the jump names its rs1, and the consumer pairs adjacent records
 * (5 bits each, 0: none).
 */
#define RISCV_TRACE_CONST_RD_SHIFT  ETRACE_PB_PRODUCER_SHIFT
#define RISCV_TRACE_JUMP_RS1_SHIFT  (RISCV_TRACE_CONST_RD_SHIFT + 5)
#define RISCV_TRACE_CONTEXT         BIT_ULL(RISCV_TRACE_JUMP_RS1_SHIFT + 5)

/*
 * Runs: a block that ends with a conditional branch needs no address as
 * long as the encoder does not report it, so translated code holds such
 * blocks back in env->trace_run instead of appending them: map collects
 * their outcomes, units their iretire and ninsns (only while the encoder
 * counts them, RISCV_CS_BASE_TRACE_UNITS: else 0), newest is the record
 * of the last of them.  Any other record (or a full map) first appends a
 * run record (ETRACE_PB_RUN: iaddr holds the outcomes, bit i = 1 when the
 * i-th oldest branch was not taken, below a 1 bit that ends them; info
 * their total iretire and ninsns, and their privilege): from translated
 * code, which appends a plain block right after, of all of them; from C
 * (a trap, a context change, a flush: what comes next may need the
 * address of the last instruction retired), of all but the newest, then
 * the newest whole.
 * The first branch block after any other record is appended whole (the
 * encoder may have to report its address: after an uninferable jump, a
 * trap, a context change or the start of tracing; elsewhere a run of one
 * block would save nothing), but after the record of a block that could
 * have been held (with units counted: below), and so is every 63rd
 * branch block in a row (a resync needs two addressed blocks in a row:
 * etrace.h).
 *
 * A block that ends with an inferable jump (jal without a link, an
 * inferable tail call), with no transfer at all (a TB that ends by
 * size, unless with a constant load) or with an inferable call while
 * calls are nothing to the encoder (no implicit return:
 * RISCV_CS_BASE_TRACE_CALLS) is held too, under the same rules, but only
 * as the newest: it adds no outcome, and vanishes from the trace when a
 * later block becomes the newest (its instructions are inferred, and
 * none of them can be reported).  While units are counted, such a block
 * is held only after a branch block of the run or with nothing held, and
 * while the units it adds keep the run's iretire below 1024
 * (trace_ingress_translate.c.inc): its units stay in the run's when it
 * vanishes.  Held alone, it stores its record at trace_ptr at once,
 * which stays there until the run ends: a run record covers it if a
 * branch followed, else it is taken as it is.  Where units keep it from
 * being held (a block is held alone already, or the limit), the run ends
 * and it goes whole, and the map becomes RISCV_TRACE_RUN_NONE, not
 * RISCV_TRACE_RUN_WHOLE: the next block may be held.  A held block is
 * one with newest.info non-zero (trace_run_end() clears it).
 *
 * map: 1 = hold nothing, append the next block that may be held whole;
 * 3 = the same for the next two (after a trap: the codec holds it until
 * the handler's first instruction is evaluated, which needs the next
 * instruction's address, and a single-instruction first block does not
 * provide it); otherwise a 1 bit at 63 - k above which the outcomes of
 * the k branch blocks held sit, the newest in bit 63, 1 = not taken.
 * Bit 0 is never set with blocks held, so bit 0 or 1 set sends a branch
 * exit to its slow path, and bit 0 a held jump's.
 */
#define RISCV_TRACE_RUN_NONE        BIT_ULL(63)     /* k = 0 */
#define RISCV_TRACE_RUN_WHOLE       1
#define RISCV_TRACE_RUN_WHOLE_TWICE 3
#define RISCV_TRACE_RUN_MAX         62              /* branches held */
/*
 * With branch prediction (RISCV_CS_BASE_TRACE_INDEX) the encoder needs
 * each branch's predictor entry too: a held branch block stores bits 6:1
 * of its branch's address straight into the room, as byte k of the
 * entries after the run record to come (trace_ptr[1], k the branches
 * held before it: from the map), and the run record says how many
 * entries they fill (ETRACE_PB_RUN_INDEXED).  Nothing else is appended
 * while blocks are held, and the room has space for the longest run and
 * the record after it (trace_take_room()), so the bytes stay where they
 * are until the run record is appended in front of them.  After a full
 * run the next block that could be held goes whole too: an encoder that
 * predicts every branch can resync only between two blocks with
 * addresses, which a loop of branch blocks would otherwise never give
 * it.
 */
QEMU_BUILD_BUG_ON(RISCV_TRACE_RUN_MAX > ETRACE_RUN_INDEXED_MAX);
/*
 * For N-trace's BTM (RISCV_CS_BASE_TRACE_COUNTS, with units counted) the
 * encoder needs the half-words up to each taken branch instead: a held
 * taken branch block stores the run's iretire so far, its own included,
 * as the 16-bit count k after the run record to come, the same way, and
 * the run record says how many entries the counts fill
 * (ETRACE_PB_RUN_COUNTED).  A not-taken branch stores nothing.
 */
QEMU_BUILD_BUG_ON(RISCV_TRACE_RUN_MAX > ETRACE_RUN_COUNTED_MAX);
/* iretire and ninsns: the sums of 61 blocks stay in their fields */
#define RISCV_TRACE_RUN_UNITS       MAKE_64BIT_MASK(0, 32)

/*
 * newest.info holds the newest block's info word in 31 bits, so that
 * translated code stores it with one 32-bit immediate: iretire in 11
 * bits (a TB's 512 instructions are at most 1024 half-words), ninsns in
 * 10, then bits 32 to 41 (itype to ETRACE_PB_PLAIN).  A block whose
 * info does not fit is never held.
 */
#define RISCV_TRACE_HELD_NINSNS_SHIFT   11
#define RISCV_TRACE_HELD_HIGH_SHIFT     21
#define RISCV_TRACE_HELD_PRIV_SHIFT \
    (RISCV_TRACE_HELD_HIGH_SHIFT + ETRACE_PB_PRIV_SHIFT - 32)

static inline bool riscv_trace_held_fits(uint64_t info)
{
    return extract64(info, ETRACE_PB_IRETIRE_SHIFT, 16) <
           BIT(RISCV_TRACE_HELD_NINSNS_SHIFT) &&
           extract64(info, ETRACE_PB_NINSNS_SHIFT, 16) <
           BIT(RISCV_TRACE_HELD_HIGH_SHIFT - RISCV_TRACE_HELD_NINSNS_SHIFT) &&
           !(info >> (32 + 31 - RISCV_TRACE_HELD_HIGH_SHIFT));
}

/* info (riscv_trace_held_fits()) as newest.info holds it */
static inline uint64_t riscv_trace_held_of(uint64_t info)
{
    return extract64(info, ETRACE_PB_IRETIRE_SHIFT, 16) |
           extract64(info, ETRACE_PB_NINSNS_SHIFT, 16) <<
           RISCV_TRACE_HELD_NINSNS_SHIFT |
           info >> 32 << RISCV_TRACE_HELD_HIGH_SHIFT;
}

/* The info word of newest.info */
static inline uint64_t riscv_trace_info_of_held(uint64_t held)
{
    return deposit64(0, ETRACE_PB_IRETIRE_SHIFT, 16,
                     extract64(held, 0, RISCV_TRACE_HELD_NINSNS_SHIFT)) |
           deposit64(0, ETRACE_PB_NINSNS_SHIFT, 16,
                     extract64(held, RISCV_TRACE_HELD_NINSNS_SHIFT,
                               RISCV_TRACE_HELD_HIGH_SHIFT -
                               RISCV_TRACE_HELD_NINSNS_SHIFT)) |
           held >> RISCV_TRACE_HELD_HIGH_SHIFT << 32;
}

typedef struct RISCVTraceRun {
    uint64_t map;
    uint64_t units;             /* RISCV_TRACE_RUN_UNITS of the k held */
    RISCVTraceRecord newest;
    bool enabled;               /* riscv_trace_set_runs() */
    bool count_units;           /* ... and units is counted */
    bool hold_calls;            /* ... and calls are held */
    bool index_branches;        /* ... and entries are kept */
    bool count_branches;        /* ... or counts (RISCV_CS_BASE_TRACE_COUNTS) */
    /*
     * riscv_trace_set_data(): data accesses are reported too (their
     * records go before their block's, which runs would reorder: no runs)
     */
    bool data;
    /*
     * What riscv_trace_cs_base() returns, from trace_on and the fields
     * above whenever one of them is set (always with the BQL held): one
     * load per TB lookup.
     */
    uint64_t cs_base;
} RISCVTraceRun;

/*
 * The cs_base bits of TBs translated for a traced hart, with runs, and
 * with runs that total the instructions held (three host instructions
 * per branch block, for the resync modes that count them).
 */
#define RISCV_CS_BASE_TRACE         BIT_ULL(32)
#define RISCV_CS_BASE_TRACE_RUNS    BIT_ULL(33)
#define RISCV_CS_BASE_TRACE_UNITS   BIT_ULL(34)
/* ... and with the records of data accesses (trace_data_translate.c.inc) */
#define RISCV_CS_BASE_TRACE_DATA    BIT_ULL(35)
/* ... and with runs that hold inferable calls (see RISCVTraceRun) */
#define RISCV_CS_BASE_TRACE_CALLS   BIT_ULL(36)
/* ... and with indexed runs, for the branch predictor */
#define RISCV_CS_BASE_TRACE_INDEX   BIT_ULL(37)
/* ... and with counted runs, for N-trace's BTM */
#define RISCV_CS_BASE_TRACE_COUNTS  BIT_ULL(38)

/*
 * insn_start data[0] of a traced TB: the page offset of the instruction
 * (CF_PCREL), then what a mid-block trap needs to report the instructions
 * of the TB that retired before it (riscv_trace_restore).
 */
#define RISCV_TRACE_START_PREV_RVC  BIT_ULL(12)  /* previous insn 2 bytes */
#define RISCV_TRACE_START_INDEX_SHIFT 13        /* insn index in the TB */
#define RISCV_TRACE_START_INDEX_BITS 9          /* TCG_MAX_INSNS - 1 */

/*
 * The consumer, on the hart's thread, with or without the BQL: the
 * records written since the last call end at end (NULL: none, the first
 * call).  It takes them and returns where the next ones go, with room
 * up to *limit (at least two records, a pair): env->trace_ptr,
 * and trace_limit one short of it (trace_take_room()).
 * Whoever reaches trace_limit hands the records over and asks for new
 * room: translated code stores a record before it checks.
 */
typedef RISCVTraceRecord *RISCVTraceConsumeFn(void *opaque,
                                              RISCVTraceRecord *end,
                                              RISCVTraceRecord **limit);

#ifndef CONFIG_USER_ONLY
struct CPUArchState;

/* For devices: the encoder of a hart attaches, then turns tracing on. */
void riscv_trace_attach(CPUState *cs, RISCVTraceConsumeFn *fn, void *opaque);
/* On the hart's thread: append a record of the consumer's own, hand over. */
void riscv_trace_append(CPUState *cs, const RISCVTraceRecord *rec);
void riscv_trace_set_active(CPUState *cs, bool on);
/*
 * Runs or not, and whether they total the instructions held: while
 * tracing, only on the hart's thread
 */
void riscv_trace_set_runs(CPUState *cs, bool on, bool count_units,
                          bool hold_calls, bool index_branches,
                          bool count_branches);
/* Data accesses reported or not: while tracing, only on the hart's thread */
void riscv_trace_set_data(CPUState *cs, bool on);
void riscv_trace_flush(CPUState *cs);
void riscv_trace_run_on_hart(CPUState *cs, void (*fn)(void *opaque),
                             void *opaque);

/* Hooks of the hart (cpu_helper.c, op_helper.c, tcg-cpu.c). */
uint64_t riscv_trace_cs_base(struct CPUArchState *env);
void riscv_trace_trap(struct CPUArchState *env, bool async, uint64_t cause,
                      uint64_t epc, uint64_t tval, unsigned prev_priv,
                      bool prev_virt);
void riscv_trace_restore(struct CPUArchState *env,
                         const TranslationBlock *tb, uint64_t data0,
                         uint64_t pc);
void riscv_trace_wfi(struct CPUArchState *env, uintptr_t ra);
void riscv_trace_context(struct CPUArchState *env, uint64_t asid);
#endif

#endif /* RISCV_TRACE_INGRESS_H */

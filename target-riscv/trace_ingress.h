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

/*
 * One record, 16 bytes.  A block: iaddr is its first instruction, info
 * packs the RISCV_TRACE_* fields below.  A trap (itype 1 or 2) retires
 * nothing itself: it follows the block ending at the last retired
 * instruction, iaddr is the trapping instruction (xepc), and a second
 * record after it holds cause and tval; the two are never split over
 * two rooms.  A context record (RISCV_TRACE_CONTEXT) carries the new
 * context (satp.ASID) in iaddr.
 */
typedef union RISCVTraceRecord {
    struct {
        uint64_t iaddr;
        uint64_t info;
    };
    struct {                    /* the record after a trap's */
        uint64_t cause;
        uint64_t tval;
    };
} RISCVTraceRecord;

#define RISCV_TRACE_IRETIRE_SHIFT   0   /* 16 bits: half-words */
#define RISCV_TRACE_NINSNS_SHIFT    16  /* 16 bits: instructions */
#define RISCV_TRACE_ITYPE_SHIFT     32  /* 4 bits: E-trace itype */
#define RISCV_TRACE_ILASTSIZE       BIT_ULL(36) /* last insn is 4 bytes */
#define RISCV_TRACE_PRIV_SHIFT      37  /* 2 bits: privilege mode */
#define RISCV_TRACE_VIRT            BIT_ULL(39) /* V=1 */
#define RISCV_TRACE_SIJUMP          BIT_ULL(40) /* sequentially inferable */
/* Set by translated code: iretire and ninsns > 0, not a trap record */
#define RISCV_TRACE_PLAIN           BIT_ULL(41)
/*
 * A lui/auipc/c.lui and the jump using its register may be split over two
 * TBs: the block ending with the constant load names its rd, the block of
 * only the jump names its rs1, and the consumer pairs adjacent records.
 */
#define RISCV_TRACE_CONST_RD_SHIFT  42  /* 5 bits, 0: none */
#define RISCV_TRACE_JUMP_RS1_SHIFT  47  /* 5 bits, 0: none */
#define RISCV_TRACE_CONTEXT         BIT_ULL(52) /* context record */

/* The cs_base bit of TBs translated for a traced hart. */
#define RISCV_CS_BASE_TRACE         BIT_ULL(32)

/*
 * insn_start data[0] of a traced TB: the page offset of the instruction
 * (CF_PCREL), then what a mid-block trap needs to report the instructions
 * of the TB that retired before it (riscv_trace_restore).
 */
#define RISCV_TRACE_START_PREV_RVC  BIT_ULL(12)  /* previous insn 2 bytes */
#define RISCV_TRACE_START_INDEX_SHIFT 13        /* insn index in the TB */

/*
 * The consumer, on the hart's thread, with or without the BQL: the
 * records written since the last call end at end (NULL: none, the first
 * call).  It takes them and returns where the next ones go, with room
 * up to *limit (at least two records, a trap's pair):
 * env->trace_ptr and trace_limit.
 * Whoever fills the last slot hands the records over and asks for new
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

/*
 * RISC-V PMU: exact, precisely attributed instruction events
 *
 * The events of the project's allocation (docs/pmu.rst): instructions
 * retired, branches and jumps retired (all, taken), and the "decoded"
 * events of the PDIS draft (instructions, control transfers, loads,
 * stores, loads-or-stores).  A counter programmed to overflow on the Nth
 * event overflows on exactly the Nth, and that event's instruction is the
 * sample (Sspesa) after which the LCOFI is taken (Ssplcofi).
 *
 * Counting is per class of instruction, not per counter: translated code
 * subtracts a block's events from env->pmu_ev.left[class], the events
 * left before the next counter of that class wraps, mostly all at the
 * block's start, and a block that may reach 0 is run one instruction at
 * a time.  The engine folds the events
 * into the counters whenever software or the mode can see them.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_PMU_EVENTS_H
#define RISCV_PMU_EVENTS_H

#include "trace_ingress.h"

/* mhpmevent[55:0] values of the events (Sscofpmf owns bits 63:56). */
#define RISCV_PMU_EV_INST_RET               0x2
#define RISCV_PMU_EV_INST_BRJMP             0x5
#define RISCV_PMU_EV_INST_BRJMP_TK          0x13
#define RISCV_PMU_EV_INST_DEC               0x100
#define RISCV_PMU_EV_INST_DEC_BRJMP         0x200
#define RISCV_PMU_EV_INST_DEC_LOAD          0x300
#define RISCV_PMU_EV_INST_DEC_STORE         0x400
#define RISCV_PMU_EV_INST_DEC_LDST          0x500
#define RISCV_PMU_EV_PDIS_SAMPLES           0x600
#define RISCV_PMU_EV_PDIS_COLLISIONS        0x700
#define RISCV_PMU_EV_PDIS_FILTERED          0x800
#define RISCV_PMU_EV_PDIS_DROPPED           0x900
#define RISCV_PMU_EV_SELECTOR_MASK          MAKE_64BIT_MASK(0, 56)

/* Sspesa CSRs (allocation.md) and the shpmsdata field this model has. */
#define CSR_SHPMSPC                 0x5e0
#define CSR_SHPMSDATA               0x5e1
#define SHPMSDATA_CNTRID            MAKE_64BIT_MASK(0, 5)

/*
 * The classes an instruction counts in.  Those of "retired" events count
 * an instruction that completes; the "decoded" ones also count one that
 * traps (ecall, ebreak, a faulting load).
 */
typedef enum RISCVPMUClass {
    RISCV_PMU_CLASS_RET,        /* retired */
    RISCV_PMU_CLASS_BRJMP,      /* branches and jumps retired */
    RISCV_PMU_CLASS_BRJMP_TK,   /* taken branches and jumps retired */
    RISCV_PMU_CLASS_DEC,        /* decoded */
    RISCV_PMU_CLASS_DEC_BRJMP,  /* branches, jumps, xRET decoded */
    RISCV_PMU_CLASS_DEC_LOAD,   /* explicit load decoded */
    RISCV_PMU_CLASS_DEC_STORE,  /* explicit store decoded */
    RISCV_PMU_CLASS_DEC_LDST,   /* explicit load or store decoded */
    RISCV_PMU_NCLASSES
} RISCVPMUClass;

#define RISCV_PMU_RETIRED_CLASSES \
    (BIT(RISCV_PMU_CLASS_RET) | BIT(RISCV_PMU_CLASS_BRJMP) | \
     BIT(RISCV_PMU_CLASS_BRJMP_TK))

/*
 * A counter of an extension that counts one of the classes and that the
 * engine counts precisely for it, at index 1 of mcountinhibit (PDIS's
 * spdiscounter.COUNT, pdis.c).
 */
#define RISCV_PMU_EXTRA_CTR 1

struct CPUArchState;
typedef struct RISCVPMUExtraCounter {
    /* the class it counts in a mode, or -1 */
    int (*class_in_mode)(struct CPUArchState *env, unsigned priv, bool virt);
    /* its events until the engine must hand it the next one */
    uint64_t (*events_to_next)(struct CPUArchState *env);
    /* n events, the last of them the instruction at pc */
    void (*count)(struct CPUArchState *env, uint64_t n, uint64_t pc);
    /* the instruction the engine runs alone next, before it runs */
    void (*preview)(struct CPUArchState *env, uint64_t pc, uint32_t insn);
    /* an xRET at pc, about to return to retpc */
    void (*preview_xret)(struct CPUArchState *env, uint64_t pc,
                         uint64_t retpc);
    /* the mode changed (a trap or a trap return) */
    void (*set_mode)(struct CPUArchState *env, bool newvirt);
} RISCVPMUExtraCounter;

/*
 * Bytes before left[], so that its offset in CPURISCVState is 0x100-0x1ff
 * modulo 1 KiB (QEMU_BUILD_BUG_ON in pmu_events.c).  Every counting TB
 * stores to left[]; a store whose address matches a later load's in
 * bits 9:0 delays that load on AMD Zen hosts, and the loads of translated
 * code are mostly of gpr[] (offsets 0-0xff) and pc (0x1230).  At 0x3c50,
 * which matches a0, PDIS sampling ran the branchy workload 1.6x slower
 * than untraced, against 1.15x at 0x3d50 (2026-11-26).  In the first
 * KiB of CPURISCVState, 0x100-0x1ff holds gprh[], which only RV128 uses.
 */
#define RISCV_PMU_LEFT_GAP  64

typedef struct RISCVPMUEvents {
    /* left[] when the events were last folded into the counters */
    int64_t folded[RISCV_PMU_NCLASSES];
    /* the classes some counter counts in the current mode: cs_base */
    uint32_t active;
    /* the counters that count one of them, and the class of each */
    uint32_t counting;
    uint8_t counter_class[32];
    /* counters a CSR instruction wrote: its own event is not counted */
    uint32_t written;
    /* classes whose next event an xRET counted ahead (in its old mode) */
    uint32_t credit;
    /* the instruction that may make a counter wrap (one-instruction TB) */
    uint64_t sample_pc;
    /* the instruction whose events are counted traps (restore) */
    bool trapping;
    /* the extension's counter (reset sets it), or NULL */
    const RISCVPMUExtraCounter *extra;
    uint8_t left_gap[RISCV_PMU_LEFT_GAP];
    /* events left before a counter wraps; translated code decrements */
    int64_t left[RISCV_PMU_NCLASSES];
} RISCVPMUEvents;

/* TranslationBlock cs_base: the active classes. */
#define RISCV_CS_BASE_PMU_SHIFT     40

/*
 * insn_start data[0] of a TB that counts, above the page offset and the
 * trace ingress's bits: what riscv_pmu_events_restore() needs to count
 * the instructions of the TB before one that traps.  In a TB with a
 * SYSTEM instruction, the events since the last fold (before each SYSTEM
 * instruction) are counted at its exits; so are, before this instruction,
 * RISCV_PMU_START_SINCE instructions, of which so many loaded and stored.
 * A TB without one counted its events at its start (AHEAD): the counts
 * are then those of the instructions after this one, and TB_CTRL and
 * TB_TAKEN say how the start counted the TB's last instruction.  CUR_*:
 * this instruction's own classes, active or not.
 */
#define RISCV_PMU_START_SINCE_SHIFT (RISCV_TRACE_START_INDEX_SHIFT + \
                                     RISCV_TRACE_START_INDEX_BITS)
#define RISCV_PMU_START_LOADS_SHIFT 31
#define RISCV_PMU_START_STORES_SHIFT 40
#define RISCV_PMU_START_LDST_SHIFT  49
#define RISCV_PMU_START_COUNT_BITS  9
#define RISCV_PMU_START_CUR_LOAD    BIT_ULL(58)
#define RISCV_PMU_START_CUR_STORE   BIT_ULL(59)
#define RISCV_PMU_START_CUR_CTRL    BIT_ULL(60)
#define RISCV_PMU_START_AHEAD       BIT_ULL(61)
#define RISCV_PMU_START_TB_CTRL     BIT_ULL(62)     /* a branch or jump */
#define RISCV_PMU_START_TB_TAKEN    BIT_ULL(63)     /* taken */

/*
 * Whether a TB that must run again in parts (helper_pmu_near()) restores
 * its state from its unwind data: under icount, whose count its start
 * took too, and where env->pc need not be its first instruction (without
 * CF_PCREL).  Otherwise nothing but its count has run, and its translated
 * code takes that back before the helper.
 */
#define RISCV_PMU_NEAR_RESTORES(cflags) \
    (((cflags) & CF_USE_ICOUNT) || !((cflags) & CF_PCREL))

#ifndef CONFIG_USER_ONLY
/* The classes an instruction counts in (a branch: taken or not). */
uint32_t riscv_pmu_insn_classes(uint32_t insn, unsigned xlen, unsigned isa,
                                bool taken);
/* Whether mhpmevent value selects an event of this engine. */
bool riscv_pmu_events_claims(uint64_t mhpmevent);
/* The raw events of the /pmu node (OpenSBI's binding) */
void riscv_pmu_events_generate_fdt(void *fdt, uint32_t cmask,
                                   const char *pmu_name);

/* Hooks of the PMU (pmu.c, csr.c) and the hart (cpu_helper.c, ...). */
uint64_t riscv_pmu_events_cs_base(struct CPUArchState *env);
void riscv_pmu_events_fold(struct CPUArchState *env);
void riscv_pmu_events_before_read(struct CPUArchState *env);
void riscv_pmu_events_update(struct CPUArchState *env);
void riscv_pmu_events_counter_written(struct CPUArchState *env,
                                      unsigned ctr_idx);
void riscv_pmu_events_set_mode(struct CPUArchState *env,
                               unsigned newpriv, bool newvirt);
void riscv_pmu_events_restore(struct CPUArchState *env,
                              const TranslationBlock *tb, uint64_t data0);
void riscv_pmu_events_wfi(struct CPUArchState *env);
void riscv_pmu_events_xret(struct CPUArchState *env, uint64_t retpc);
uint32_t riscv_pmu_events_counters_of(struct CPUArchState *env,
                                      uint32_t classes);
void riscv_pmu_events_count_other(struct CPUArchState *env, uint64_t event);
void riscv_pmu_events_reset(struct CPUArchState *env);
void riscv_pmu_events_post_load(struct CPUArchState *env);

/* Sspesa: a counter's overflow set its OF (any event, any path). */
void riscv_sspesa_sample(struct CPUArchState *env, unsigned ctr_idx,
                         uint64_t pc);
/* shpmspc and shpmsdata (csr.c's table) */
RISCVException riscv_sspesa_predicate(struct CPUArchState *env, int csrno);
RISCVException riscv_sspesa_read(struct CPUArchState *env, int csrno,
                                 target_ulong *val);
RISCVException riscv_sspesa_write(struct CPUArchState *env, int csrno,
                                  target_ulong val);
#endif

#endif /* RISCV_PMU_EVENTS_H */

/*
 * RISC-V Smpdis/Sspdis: Precise Decoded Instruction Sampling (draft)
 *
 * The PDIS counter counts decoded instructions of one type (mpdisctl.SEL)
 * in the modes mpdisctl and vspdisctl enable.  It is one more counter of
 * the PMU instruction-event engine (pmu_events.c), at index 1, the index
 * mcountinhibit gives it: the engine counts its class in translated code
 * and runs the instructions near its overflow one at a time, so that the
 * instruction that overflows it is the one selected.  The record of that
 * instruction is built when it completes, filtered, and delivered to the
 * sample data registers (siselect 0x60/0x61) or to the memory buffer
 * (Ssamb) at spdisambaddr.
 *
 * QEMU models no pipeline: the record's microarchitectural fields come
 * from a small deterministic model fed only by sampled instructions
 * (docs/pdis.rst), so nothing runs while no instruction is sampled.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_PDIS_H
#define RISCV_PDIS_H

#include "pdis_record.h"

/* CSR numbers (allocation.md); RV32 high halves at +0x10 */
#define CSR_SPDISCTL            0x5c8
#define CSR_SPDISCOUNTER        0x5c9
#define CSR_SPDISEVMASK         0x5ca
#define CSR_SPDISEVMATCH        0x5cb
#define CSR_SPDISFILTER         0x5cc
#define CSR_SPDISAMBCS          0x5cd
#define CSR_SPDISAMBADDR        0x5ce
#define CSR_SPDISCTLH           0x5d8
#define CSR_SPDISCOUNTERH       0x5d9
#define CSR_SPDISEVMASKH        0x5da
#define CSR_SPDISEVMATCHH       0x5db
#define CSR_SPDISAMBCSH         0x5dd
#define CSR_VSPDISCTL           0x6c8
#define CSR_VSPDISCTLH          0x6d8
#define CSR_MPDISCTL            0xbc8
#define CSR_MPDISCTLH           0xbd8

/* siselect/vsiselect values of the sample data registers */
#define ISELECT_PDIS_FIRST      0x60
#define ISELECT_PDIS_LAST       0x61

/* Bits other registers give PDIS (allocation.md) */
#define MENVCFG_PDISS           BIT_ULL(57)
#define HENVCFG_PDISV           BIT_ULL(57)
#define SMSTATEEN0_PDIS         BIT_ULL(52)
#define IRQ_LAMBI               14
#define MIP_LAMBIP              BIT_ULL(IRQ_LAMBI)
#define RISCV_PDIS_CTR          RISCV_PMU_EXTRA_CTR /* x{countinhibit,ovf} */

/* mpdisctl, spdisctl (M reads 0), vspdisctl (PA, S, U its own) */
#define PDISCTL_SEL             MAKE_64BIT_MASK(0, 3)
#define PDISCTL_HPM             MAKE_64BIT_MASK(3, 29)
#define PDISCTL_MEM             BIT_ULL(32)
#define PDISCTL_ACC             BIT_ULL(33)
#define PDISCTL_TS              BIT_ULL(34)
#define PDISCTL_PA              BIT_ULL(35)
#define PDISCTL_EPT             BIT_ULL(36)
#define PDISCTL_CUSTOM          MAKE_64BIT_MASK(57, 3)
#define PDISCTL_U               BIT_ULL(60)
#define PDISCTL_S               BIT_ULL(61)
#define PDISCTL_M               BIT_ULL(62)
#define PDISCTL_OF              BIT_ULL(63)
#define VSPDISCTL_OWN           (PDISCTL_PA | PDISCTL_S | PDISCTL_U)


/* spdiscounter */
#define PDISCOUNTER_COUNT       MAKE_64BIT_MASK(0, 32)
#define PDISCOUNTER_INITVAL     MAKE_64BIT_MASK(32, 32)

/* spdisfilter: LATSEL is read-only 0 (only TOTAL is modelled) */
#define PDISFILTER_THRESH       MAKE_64BIT_MASK(0, 12)
#define PDISFILTER_INV          BIT_ULL(12)

/* spdisambcs (Ssamb, spec-facts.md section 1) */
#define AMBCS_EN                BIT_ULL(0)
#define AMBCS_TF                BIT_ULL(1)
#define AMBCS_BMI               BIT_ULL(2)
#define AMBCS_SIZE              MAKE_64BIT_MASK(7, 5)
#define AMBCS_TFPTR             MAKE_64BIT_MASK(12, 20)
#define AMBCS_BMITH             MAKE_64BIT_MASK(32, 2)
#define AMBCS_BMIEN             BIT_ULL(34)
#define AMBCS_SOF               BIT_ULL(35)
#define AMBCS_WRAP              BIT_ULL(61)
#define AMBCS_EMPTY             BIT_ULL(62)
#define AMBCS_TRV               BIT_ULL(63)
#define AMBCS_SIZE_MAX          20      /* 4 GiB */

/* The deterministic cache and TLB model (docs/pdis.rst), tags only. */
#define PDIS_L1_SETS            512     /* 32 KiB of 64-byte lines */
#define PDIS_LL_SETS            4096    /* 256 KiB */
#define PDIS_L1TLB_SETS         32      /* of 4 KiB pages */
#define PDIS_LLTLB_SETS         512

typedef struct RISCVPDIS {
    uint64_t ctl;               /* mpdisctl */
    uint64_t vsctl;             /* vspdisctl's own PA, S and U */
    uint64_t counter;           /* spdiscounter */
    uint64_t evmask, evmatch;
    uint64_t filter;
    uint64_t ambcs, ambaddr;
    uint64_t data[PDIS_REC_FIELDS];     /* sample data registers */
    /* a discarded sample with ACC=1: select the next counted instruction */
    bool acc_select;
    /* counted instructions left in which a sample is still active */
    uint32_t active_left;
    /* a memory buffer write failed its G stage: the fault to raise */
    bool gpf_pending;
    uint64_t gpf_va, gpf_gpa;
    /* the model's tags: line or page number + 1, 0 is empty */
    uint32_t l1_tag[PDIS_L1_SETS];
    uint32_t ll_tag[PDIS_LL_SETS];
    uint32_t l1tlb_tag[PDIS_L1TLB_SETS];
    uint32_t lltlb_tag[PDIS_LLTLB_SETS];
    /*
     * Not migrated (a TB boundary lies between): what the instruction
     * the engine runs alone will do, seen before it runs.
     */
    struct {
        uint64_t pc;
        uint64_t va;            /* its data address */
        uint64_t target;        /* where a control transfer goes */
        uint32_t insn;
        bool valid;
    } next;
} RISCVPDIS;

/*
 * A sampled instruction stays active for this many further counted
 * instructions (the model's out-of-order window), or until a trap, a
 * trap return or a write to a PDIS register: a PDIS counter overflow
 * while it is active is a collision.
 */
#define PDIS_ACTIVE_WINDOW      8

#ifndef CONFIG_USER_ONLY
struct CPUArchState;


/* CSRs (csr.c's table and hooks) */
RISCVException riscv_pdis_predicate(struct CPUArchState *env, int csrno);
RISCVException riscv_pdis_read(struct CPUArchState *env, int csrno,
                               target_ulong *val);
RISCVException riscv_pdis_write(struct CPUArchState *env, int csrno,
                                target_ulong val);
bool riscv_pdis_ireg_select(struct CPUArchState *env, target_ulong isel);
RISCVException riscv_pdis_rmw_ireg(struct CPUArchState *env, int csrno,
                                   target_ulong isel, target_ulong *val,
                                   target_ulong new_val,
                                   target_ulong wr_mask);
uint64_t riscv_pdis_stateen_bits(struct CPUArchState *env);
uint64_t riscv_pdis_envcfg_bits(struct CPUArchState *env);
uint64_t riscv_pdis_irqs(struct CPUArchState *env);
bool riscv_pdis_inhibit_delegated(struct CPUArchState *env);

/* The hart */
bool riscv_pdis_take_fault(struct CPUArchState *env);
void riscv_pdis_reset(struct CPUArchState *env);
#endif

#endif /* RISCV_PDIS_H */

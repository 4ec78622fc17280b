/*
 * RISC-V Control Transfer Records: one recording engine, two front ends
 *
 * The engine records control transfers into the CTR array for both the
 * ratified Smctr/Ssctr 1.0 (cpu properties smctr/ssctr, CSRs 0x14e...)
 * and the v0.1.4 draft (cpu property ctr, CSRs 0x181...).  Its state is
 * kept in the ratified layout (env->mctrctl, vsctrctl, sctrdepth,
 * sctrstatus); the draft front end translates its own register layout to
 * and from it, and keeps its extra bits (ETEN, WRAP) in positions the
 * ratified layout leaves reserved.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_CTR_H
#define RISCV_CTR_H

#include "cpu.h"

/* Smctr/Ssctr v0.1.4 draft CSR numbers (chapter 2.6). */
#define CSR_SCTRCONTROL     0x181
#define CSR_SCTRCONTROLH    0x182
#define CSR_SCTRSTATUS_V0   0x183
#define CSR_VSCTRCONTROL    0x281
#define CSR_VSCTRCONTROLH   0x282
#define CSR_MCTRCONTROL     0x381
#define CSR_MCTRCONTROLH    0x382
#define CSR_MCTRSTATUS      0x383

/* The draft's CTR bit of mstateen0 and hstateen0 (the ratified uses 54). */
#define SMSTATEEN0_CTR_V0   (1ULL << 55)

/* Draft-only bits, kept in positions the ratified layout reserves. */
#define XCTRCTL_ETEN        BIT_ULL(38)
#define SCTRSTATUS_WRAP     BIT(14)

/*
 * TranslationBlock cs_base bits (riscv_ctr_cs_base): the current mode may
 * record transfers, RASEMU, not-taken branches are recorded, every other
 * type translated code records passes the filter (else that code tests
 * env->ctr_types), and sctrdepth's code.  Few bits, so that a guest
 * rewriting its filter does not get its code retranslated for every
 * value it writes.
 */
#define RISCV_CS_BASE_CTR               BIT_ULL(0)
#define RISCV_CS_BASE_CTR_RASEMU        BIT_ULL(1)
#define RISCV_CS_BASE_CTR_NTBR          BIT_ULL(2)
#define RISCV_CS_BASE_CTR_ALL_TYPES     BIT_ULL(3)
#define RISCV_CS_BASE_CTR_DEPTH_SHIFT   4

/*
 * Cycle counting (see ctr.c): a recorded entry's ctr_data is its type
 * with CTR_DATA_HW and, from CTR_DATA_TB_CYCLES_SHIFT up, the cycles of
 * its TB that the TB had not counted yet; its ctr_cc_delta, the count
 * before them, may be tagged CTR_CC_POISON.  CTR_DATA_HW is bits 63:31, so that
 * translated code stores the word as a sign-extended 32-bit immediate:
 * bit 63, which ctrdata reserves and software never writes, tells a
 * recorded entry (ctr_data_is_recorded()); the others are dropped when
 * CC is encoded on read.  A TB has at most TCG_MAX_INSNS instructions.
 */
#define CTR_DATA_HW                 MAKE_64BIT_MASK(31, 33)
#define CTR_DATA_TB_CYCLES_SHIFT    16
#define CTR_DATA_TB_CYCLES_BITS     15
#define CTR_CC_POISON               BIT_ULL(63)

/* The size of an element of env->ctr_src and the other entry arrays. */
#define CTR_ENTRY_BYTES     sizeof(uint64_t)

static inline bool riscv_ctr_present(const RISCVCPUConfig *cfg)
{
    return cfg->ext_ctr || cfg->ext_smctr || cfg->ext_ssctr;
}

/* The types RAS emulation acts on: calls, returns, co-routine swaps. */
static inline bool riscv_ctr_rasemu_type(CTRType type)
{
    return type == CTRDATA_TYPE_INDIRECT_CALL ||
           type == CTRDATA_TYPE_DIRECT_CALL ||
           type == CTRDATA_TYPE_RETURN ||
           type == CTRDATA_TYPE_CO_ROUTINE_SWAP;
}

#ifndef CONFIG_USER_ONLY
/*
 * The CTR bits of a TB's cs_base for the current state, kept in env so
 * that a TB lookup only loads them: riscv_ctr_update_tb_state() must run
 * after anything they depend on changes (control, depth, FROZEN, the
 * privilege mode or V, a reset, an incoming migration).
 */
static inline uint64_t riscv_ctr_cs_base(CPURISCVState *env)
{
    return env->ctr_cs_base;
}

void riscv_ctr_update_tb_state(CPURISCVState *env);
void riscv_ctr_add_entry(CPURISCVState *env, target_ulong src,
                         target_ulong dst, CTRType type,
                         target_ulong src_priv, bool src_virt);
void riscv_ctr_restore(CPURISCVState *env, const TranslationBlock *tb);
void riscv_ctr_trap(CPURISCVState *env, bool async, target_ulong cause,
                    target_ulong src, target_ulong src_priv, bool src_virt);
void riscv_ctr_clear(CPURISCVState *env);
void riscv_ctr_sync_status(CPURISCVState *env);
void riscv_ctr_status_written(CPURISCVState *env);
void riscv_ctr_control_written(CPURISCVState *env);
void riscv_ctr_reset(CPURISCVState *env);
uint64_t riscv_ctr_stateen_bits(CPURISCVState *env);

bool riscv_ctr_entry_select(CPURISCVState *env, int csrno, target_ulong isel);
RISCVException riscv_ctr_ireg_pred(CPURISCVState *env, int csrno);
RISCVException riscv_ctr_rmw_entry(CPURISCVState *env, int csrno,
                                   target_ulong isel, target_ulong *val,
                                   target_ulong new_val,
                                   target_ulong wr_mask);

/* Draft front end: predicates and handlers for the csr_ops table. */
RISCVException ctr_v0_mmode(CPURISCVState *env, int csrno);
RISCVException ctr_v0_smode(CPURISCVState *env, int csrno);
RISCVException ctr_v0_hmode(CPURISCVState *env, int csrno);
RISCVException ctr_v0_rmw_control(CPURISCVState *env, int csrno,
                                  target_ulong *val, target_ulong new_val,
                                  target_ulong wr_mask);
RISCVException ctr_v0_rmw_status(CPURISCVState *env, int csrno,
                                 target_ulong *val, target_ulong new_val,
                                 target_ulong wr_mask);
#endif

#endif /* RISCV_CTR_H */

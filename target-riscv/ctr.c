/*
 * RISC-V Control Transfer Records: recording engine and draft front end
 *
 * References:
 *  - RISC-V Control Transfer Records (Smctr/Ssctr) v0.1.4 draft: the
 *    "draft" or "v0" front end, cpu property ctr=on;
 *  - Smctr/Ssctr 1.0 (ratified): cpu properties smctr/ssctr, whose CSRs
 *    stay in csr.c.
 *
 * Both front ends drive the engine below.  Its control state is in the
 * ratified layout: mode enables U/S/M in bits 0/1/2, RASEMU 7, STE 8,
 * MTE 9, the type filters at 32 + CTR type, the depth as sctrdepth's
 * binary code, WRPTR and FROZEN (bit 31) in sctrstatus.  The draft moves
 * these bits around and adds ETEN (kept at bit 38) and WRAP (bit 14).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/host-utils.h"
#include "cpu.h"
#include "ctr.h"
#include "exec/translation-block.h"

static bool ctr_is_v0(CPURISCVState *env)
{
    return riscv_cpu_cfg(env)->ext_ctr;
}

/* The front end's CTR bit of mstateen0/hstateen0: 55 draft, 54 ratified. */
static uint64_t ctr_stateen_bit(CPURISCVState *env)
{
    return ctr_is_v0(env) ? SMSTATEEN0_CTR_V0 : SMSTATEEN0_CTR;
}

static unsigned ctr_depth(CPURISCVState *env)
{
    return 16u << get_field(env->sctrdepth, SCTRDEPTH_MASK);
}

static uint64_t ctr_mode_bit(target_ulong priv)
{
    switch (priv) {
    case PRV_M:
        return MCTRCTL_M;
    case PRV_S:
        return XCTRCTL_S;
    default:
        return XCTRCTL_U;
    }
}

/* The control register in charge of a mode: vsctrctl when V=1. */
static uint64_t ctr_control(CPURISCVState *env, target_ulong priv, bool virt)
{
    return virt && priv != PRV_M ? env->vsctrctl : env->mctrctl;
}

/* Bit t set: transfers of type t pass the type filter of ctl. */
static uint32_t ctr_recorded_types(uint64_t ctl)
{
    /* Inhibit bits at 32 + type, except NTBREN, an enable. */
    return (~extract64(ctl, XCTRCTL_INH_START, 16) & 0xffff) ^
           BIT(CTRDATA_TYPE_NONTAKEN_BRANCH);
}

/*
 * The types translated code records besides not-taken branches: taken
 * branches, jumps, calls, returns.
 */
#define CTR_INLINE_TYPES \
    (BIT(CTRDATA_TYPE_TAKEN_BRANCH) | \
     MAKE_64BIT_MASK(CTRDATA_TYPE_INDIRECT_CALL, 8))

static bool ctr_mode_enabled(CPURISCVState *env, target_ulong priv, bool virt)
{
    return ctr_control(env, priv, virt) & ctr_mode_bit(priv);
}

/*
 * What translated code needs to know to record transfers made within the
 * current mode: whether it may record at all, RASEMU, whether not-taken
 * branches are recorded, whether every other type passes the filter (else
 * which do: env->ctr_types, tested at run time) and the depth.  Anything
 * that changes it (a CSR write, a trap, a trap return) ends the TB, so the
 * next TB is looked up with the new value.
 */
void riscv_ctr_update_tb_state(CPURISCVState *env)
{
    uint64_t ctl;

    env->ctr_cs_base = 0;
    env->ctr_types = 0;
    if (!riscv_ctr_present(riscv_cpu_cfg(env)) ||
        (env->sctrstatus & SCTRSTATUS_FROZEN) ||
        !ctr_mode_enabled(env, env->priv, env->virt_enabled)) {
        return;
    }
    ctl = ctr_control(env, env->priv, env->virt_enabled);
    env->ctr_types = ctr_recorded_types(ctl);
    env->ctr_cs_base = RISCV_CS_BASE_CTR |
        (ctl & XCTRCTL_RASEMU ? RISCV_CS_BASE_CTR_RASEMU : 0) |
        (env->ctr_types & BIT(CTRDATA_TYPE_NONTAKEN_BRANCH) ?
         RISCV_CS_BASE_CTR_NTBR : 0) |
        ((env->ctr_types & CTR_INLINE_TYPES) == CTR_INLINE_TYPES ?
         RISCV_CS_BASE_CTR_ALL_TYPES : 0) |
        deposit64(0, RISCV_CS_BASE_CTR_DEPTH_SHIFT, 3,
                  get_field(env->sctrdepth, SCTRDEPTH_MASK));
}

/*
 * Cycle counting (draft 5.3, ratified 6.3).  A cycle is a retired
 * instruction, as mcycle counts with -icount shift=0, counted into
 * env->ctr_cycles by the TBs translated while their mode may record, so
 * only qualified cycles (an enabled mode, not frozen) are counted.  A
 * TB counts where it ends, not where it starts, so that a TB that ends
 * with a record, nearly every one while every type is recorded, pays
 * nothing for its count: a record takes the count since the previous
 * record into ctr_cc_delta and restarts it from 0, and its TB's own
 * instructions up to the transfer, a number known when the TB is
 * translated, go into bits CTR_DATA_TB_CYCLES_SHIFT up of the constant
 * ctr_data word that it stores with CTR_DATA_HW; the CC field is the
 * sum, encoded when ctrdata is read.  Its other exits add what they ran,
 * and so does translated code before each SYSTEM instruction, whose
 * helper may read or poison the count (an xRET's record, a control
 * write, sctrclr), and before an exception it raises (ecall, ebreak, an
 * illegal encoding, a misaligned jump target), whose trap the engine
 * may record.
 * The count is "poisoned" (bit 63 set) when the next record's count may
 * be wrong: that record then reads with CCV=0.  So it is when a TB is
 * left in its middle (riscv_ctr_restore()): what it ran since it last
 * counted may not be counted.  (Where the instruction that stopped it
 * is a SYSTEM one, or the TB's first, nothing was left out, but the
 * restore does not tell these cases apart.)
 */
static uint64_t ctr_cc_take(CPURISCVState *env)
{
    uint64_t delta = env->ctr_cycles;

    env->ctr_cycles = 0;
    return delta;
}

static void ctr_cycles_invalidate(CPURISCVState *env)
{
    env->ctr_cycles |= CTR_CC_POISON;
}

/* CC field: CCE = 0 below 4096 cycles, else the MSB index minus 11. */
static uint32_t ctr_cc_encode(uint64_t cycles)
{
    unsigned cce;

    if (cycles < 4096) {
        return cycles;
    }
    cce = 63 - clz64(cycles) - 11;
    if (cce > 15) {
        return 0xffff;
    }
    return cce << 12 | ((cycles >> (cce - 1)) & 0xfff);
}

static bool ctr_data_is_recorded(uint64_t data)
{
    return data & BIT_ULL(63);
}

/* ctrdata of a physical entry, with CC and CCV of a recorded transfer. */
static uint64_t ctr_data_read(CPURISCVState *env, unsigned slot)
{
    uint64_t data = env->ctr_data[slot];
    uint64_t delta = env->ctr_cc_delta[slot];
    uint64_t cycles;

    if (!ctr_data_is_recorded(data)) {
        return data;
    }
    cycles = (delta & ~CTR_CC_POISON) +
             extract64(data, CTR_DATA_TB_CYCLES_SHIFT, CTR_DATA_TB_CYCLES_BITS);
    data = (data & CTRDATA_TYPE_MASK) | (uint64_t)ctr_cc_encode(cycles) << 16;
    return delta & CTR_CC_POISON ? data : data | CTRDATA_CCV;
}

void riscv_ctr_control_written(CPURISCVState *env)
{
    ctr_cycles_invalidate(env);
    riscv_ctr_update_tb_state(env);
}

static void ctr_freeze(CPURISCVState *env)
{
    env->sctrstatus |= SCTRSTATUS_FROZEN;
    ctr_cycles_invalidate(env);
    riscv_ctr_update_tb_state(env);
}

/*
 * WRPTR and WRAP.  Translated code does not update sctrstatus: it writes
 * the entry at byte offset env->ctr_wr_offset (masked to the depth) of
 * the arrays and adds 8, never wrapping the offset.  So the offset is
 * 8 * (WRPTR + k * depth), k the number of times the array wrapped since
 * riscv_ctr_sync_status() last brought sctrstatus up to date: C code
 * calls that before it reads or writes WRPTR or WRAP, and
 * riscv_ctr_status_written() after it writes them.
 */
void riscv_ctr_sync_status(CPURISCVState *env)
{
    unsigned depth = ctr_depth(env);
    uint64_t next = env->ctr_wr_offset / CTR_ENTRY_BYTES;

    if (next >= depth && ctr_is_v0(env)) {
        env->sctrstatus |= SCTRSTATUS_WRAP;
    }
    env->sctrstatus = set_field(env->sctrstatus, SCTRSTATUS_WRPTR_MASK,
                                next & (depth - 1));
    riscv_ctr_status_written(env);
}

void riscv_ctr_status_written(CPURISCVState *env)
{
    env->ctr_wr_offset = get_field(env->sctrstatus, SCTRSTATUS_WRPTR_MASK) *
                         CTR_ENTRY_BYTES;
}

static unsigned ctr_wrptr(CPURISCVState *env)
{
    riscv_ctr_sync_status(env);
    return get_field(env->sctrstatus, SCTRSTATUS_WRPTR_MASK);
}

static void ctr_set_wrptr(CPURISCVState *env, unsigned wrptr)
{
    env->sctrstatus = set_field(env->sctrstatus, SCTRSTATUS_WRPTR_MASK,
                                wrptr);
    riscv_ctr_status_written(env);
}

/*
 * External traps (enabled mode to disabled mode).  The draft records them
 * when ETEN and the target mode's xTE are both set; the ratified needs
 * the xTE bit of the target mode and of every mode in between.
 */
static bool ctr_v0_external_trap_ok(CPURISCVState *env, uint64_t tgt_ctl)
{
    uint64_t xte = env->priv == PRV_M ? MCTRCTL_MTE : XCTRCTL_STE;

    return (tgt_ctl & XCTRCTL_ETEN) && (tgt_ctl & xte);
}

/*
 * Ratified table 8: a trap from a lower mode needs the xTE bit of every
 * mode above the source up to the target.  VS and U need the same bits,
 * so a VS source or a V=1 S target counts as U; a VU source also needs
 * vsctrctl.STE.
 */
static bool ctr_ratified_external_trap_ok(CPURISCVState *env,
                                          target_ulong src_priv,
                                          bool src_virt)
{
    target_ulong tgt_priv = env->priv;
    bool ok = true;

    if (src_virt && src_priv == PRV_S) {
        src_priv = PRV_U;
    } else if (env->virt_enabled && tgt_priv == PRV_S) {
        tgt_priv = PRV_U;
    }
    if (src_virt && src_priv == PRV_U) {
        ok = env->vsctrctl & XCTRCTL_STE;
    }
    if (src_priv == PRV_U && tgt_priv != PRV_U) {
        ok = ok && (env->mctrctl & XCTRCTL_STE);
    }
    if (src_priv != PRV_M && tgt_priv == PRV_M) {
        ok = ok && (env->mctrctl & MCTRCTL_MTE);
    }
    return ok;
}

static bool ctr_external_trap_ok(CPURISCVState *env, uint64_t tgt_ctl,
                                 target_ulong src_priv, bool src_virt)
{
    if (ctr_is_v0(env)) {
        return ctr_v0_external_trap_ok(env, tgt_ctl);
    }
    return ctr_ratified_external_trap_ok(env, src_priv, src_virt);
}

/* RAS emulation: a return pops the newest entry (draft 5.4). */
static void ctr_pop(CPURISCVState *env, unsigned depth)
{
    unsigned wrptr = ctr_wrptr(env);

    if (wrptr == 0) {
        env->sctrstatus &= ~SCTRSTATUS_WRAP;
    }
    wrptr = (wrptr - 1) & (depth - 1);
    env->ctr_src[wrptr] &= ~CTRSOURCE_VALID;
    ctr_set_wrptr(env, wrptr);
    /* The next call's parent was popped: its count is not the call's. */
    ctr_cycles_invalidate(env);
}

static void ctr_write(CPURISCVState *env, unsigned slot, target_ulong src,
                      target_ulong dst, CTRType type)
{
    env->ctr_src[slot] = src | CTRSOURCE_VALID;
    env->ctr_dst[slot] = dst & ~(target_ulong)CTRTARGET_MISP;
    env->ctr_data[slot] = type | CTR_DATA_HW;
    env->ctr_cc_delta[slot] = ctr_cc_take(env);
}

static void ctr_push(CPURISCVState *env, unsigned depth, target_ulong src,
                     target_ulong dst, CTRType type)
{
    unsigned wrptr = ctr_wrptr(env);

    ctr_write(env, wrptr, src, dst, type);
    if (wrptr == depth - 1 && ctr_is_v0(env)) {
        env->sctrstatus |= SCTRSTATUS_WRAP;
    }
    ctr_set_wrptr(env, (wrptr + 1) & (depth - 1));
}

/*
 * Record one control transfer.  The hart is already in the target mode
 * (env->priv, env->virt_enabled); src_priv/src_virt is the mode the
 * transfer left.  Privilege changes follow the table of draft 5.1
 * (ratified 6.1): partial records carry PC 0 for the disabled side.
 * Filtering and RAS emulation use the target mode's control register.
 */
void riscv_ctr_add_entry(CPURISCVState *env, target_ulong src,
                         target_ulong dst, CTRType type,
                         target_ulong src_priv, bool src_virt)
{
    uint64_t tgt_ctl = ctr_control(env, env->priv, env->virt_enabled);
    bool src_on = ctr_mode_enabled(env, src_priv, src_virt);
    bool tgt_on = tgt_ctl & ctr_mode_bit(env->priv);
    bool external = false;
    unsigned depth = ctr_depth(env);

    if (!src_on) {
        /* Cycles spent in a disabled mode are not qualified. */
        ctr_cycles_invalidate(env);
    }
    if ((!src_on && !tgt_on) || (env->sctrstatus & SCTRSTATUS_FROZEN)) {
        return;
    }

    if (type == CTRDATA_TYPE_EXCEPTION || type == CTRDATA_TYPE_INTERRUPT) {
        if (!src_on) {
            src = 0;
        } else if (!tgt_on) {
            if (!ctr_external_trap_ok(env, tgt_ctl, src_priv, src_virt)) {
                ctr_cycles_invalidate(env);
                return;
            }
            external = true;
            dst = 0;
        }
    } else if (type == CTRDATA_TYPE_EXCEP_INT_RET) {
        if (!src_on) {
            return;
        }
        if (!tgt_on) {
            dst = 0;
        }
    }

    if (tgt_ctl & XCTRCTL_RASEMU) {
        /* Only calls, returns and swaps; filter bits are ignored. */
        if (!riscv_ctr_rasemu_type(type)) {
            goto out;
        }
        if (type == CTRDATA_TYPE_RETURN) {
            ctr_pop(env, depth);
            goto out;
        }
        if (type == CTRDATA_TYPE_CO_ROUTINE_SWAP) {
            unsigned wrptr = ctr_wrptr(env);

            ctr_write(env, (wrptr - 1) & (depth - 1), src, dst, type);
            goto out;
        }
    } else if (!external && !(ctr_recorded_types(tgt_ctl) & BIT(type))) {
        goto out;
    }

    ctr_push(env, depth, src, dst, type);
out:
    if (!tgt_on) {
        ctr_cycles_invalidate(env);
    }
}

/*
 * A helper or a memory access stopped a TB in its middle
 * (riscv_restore_state_to_opc(): a page fault, an illegal CSR access, a
 * recompile for I/O): the instructions it ran since it last counted are
 * not counted.
 */
void riscv_ctr_restore(CPURISCVState *env, const TranslationBlock *tb)
{
    if (tb->cs_base & RISCV_CS_BASE_CTR) {
        ctr_cycles_invalidate(env);
    }
}

/*
 * A trap has been taken into env->priv/virt_enabled.  LCOFIFRZ and BPFRZ
 * of the target mode's control register freeze the array first, so that
 * the freezing trap itself is not recorded (draft 5.5).
 */
void riscv_ctr_trap(CPURISCVState *env, bool async, target_ulong cause,
                    target_ulong src, target_ulong src_priv, bool src_virt)
{
    uint64_t ctl = ctr_control(env, env->priv, env->virt_enabled);

    if ((async && cause == IRQ_PMU_OVF && (ctl & XCTRCTL_LCOFIFRZ)) ||
        (!async && cause == RISCV_EXCP_BREAKPOINT && (ctl & XCTRCTL_BPFRZ))) {
        ctr_freeze(env);
    }
    riscv_ctr_add_entry(env, src, env->pc,
                        async ? CTRDATA_TYPE_INTERRUPT :
                                CTRDATA_TYPE_EXCEPTION,
                        src_priv, src_virt);
}

/* Zero physical entries 0..n-1. */
static void ctr_zero_entries(CPURISCVState *env, unsigned n)
{
    memset(env->ctr_src, 0, n * sizeof(env->ctr_src[0]));
    memset(env->ctr_dst, 0, n * sizeof(env->ctr_dst[0]));
    memset(env->ctr_data, 0, n * sizeof(env->ctr_data[0]));
    memset(env->ctr_cc_delta, 0, n * sizeof(env->ctr_cc_delta[0]));
}

/* SCTRCLR (ratified): zero every entry; the next record has CCV=0. */
void riscv_ctr_clear(CPURISCVState *env)
{
    ctr_zero_entries(env, ARRAY_SIZE(env->ctr_src));
    riscv_ctr_control_written(env);
}

void riscv_ctr_reset(CPURISCVState *env)
{
    env->mctrctl = 0;
    env->vsctrctl = 0;
    env->sctrstatus = 0;
    riscv_ctr_status_written(env);
    ctr_cycles_invalidate(env);
    riscv_ctr_update_tb_state(env);
}

uint64_t riscv_ctr_stateen_bits(CPURISCVState *env)
{
    const RISCVCPUConfig *cfg = riscv_cpu_cfg(env);

    return (cfg->ext_ssctr ? SMSTATEEN0_CTR : 0) |
           (cfg->ext_ctr ? SMSTATEEN0_CTR_V0 : 0);
}

/*
 * Entry registers through the indirect CSR window 0x200..0x2ff.  The
 * ratified version reaches them only through sireg* and vsireg*; the
 * draft through mireg* as well.  Both check their state-enable bit
 * (draft chapter 4, ratified 2.5): mstateen0.CTR=0 makes accesses from
 * below M illegal, hstateen0.CTR=0 makes VS accesses virtual-instruction
 * faults.
 */
bool riscv_ctr_entry_select(CPURISCVState *env, int csrno, target_ulong isel)
{
    const RISCVCPUConfig *cfg = riscv_cpu_cfg(env);

    if (isel < CTR_ENTRIES_FIRST || isel > CTR_ENTRIES_LAST) {
        return false;
    }
    if (cfg->ext_ctr) {
        return true;
    }
    return (cfg->ext_smctr || cfg->ext_ssctr) && csrno < CSR_MIREG;
}

/*
 * mstateen0.CTR=0 makes entry accesses from below M illegal (draft
 * chapter 4, ratified 2.5).  The csr_ops predicates of sireg* and vsireg*
 * call this, so that it comes before the privilege check, which would
 * turn VS and VU accesses into virtual-instruction faults.
 */
RISCVException riscv_ctr_ireg_pred(CPURISCVState *env, int csrno)
{
    bool vs = (csrno & 0xf00) == 0x200 || env->virt_enabled;
    target_ulong isel = vs ? env->vsiselect : env->siselect;
    uint64_t bit = ctr_stateen_bit(env);

    if ((csrno & 0xff) < 0x51 || (csrno & 0xff) > 0x57) {
        return RISCV_EXCP_NONE;         /* siselect, vsiselect */
    }
    if (env->priv == PRV_M || !riscv_cpu_cfg(env)->ext_smstateen ||
        !riscv_ctr_entry_select(env, csrno, isel) ||
        (env->mstateen[0] & bit)) {
        return RISCV_EXCP_NONE;
    }
    return RISCV_EXCP_ILLEGAL_INST;
}

/* 1 for *ireg, 2 for *ireg2 ... 6 for *ireg6. */
static int ctr_ireg_index(int csrno)
{
    int off = csrno & 0xff;

    return off - 0x50 - (off >= 0x55);
}

RISCVException riscv_ctr_rmw_entry(CPURISCVState *env, int csrno,
                                   target_ulong isel, target_ulong *val,
                                   target_ulong new_val,
                                   target_ulong wr_mask)
{
    uint64_t bit = ctr_stateen_bit(env);
    RISCVException ret = smstateen_acc_ok(env, 0, bit);
    unsigned entry = isel - CTR_ENTRIES_FIRST;
    unsigned depth = ctr_depth(env);
    uint64_t *reg, mask, cur;
    unsigned slot;

    if (ret != RISCV_EXCP_NONE) {
        return ret;
    }
    switch (ctr_ireg_index(csrno)) {
    case 1:
        reg = env->ctr_src;
        mask = -1;
        break;
    case 2:
        reg = env->ctr_dst;
        mask = ~(uint64_t)CTRTARGET_MISP;
        break;
    case 3:
        reg = env->ctr_data;
        mask = CTRDATA_MASK;
        break;
    default:
        reg = NULL;
        mask = 0;
        break;
    }
    if (!reg || entry >= depth) {
        /* Entries at or above the depth, and *ireg4..6: read-only 0. */
        if (val) {
            *val = 0;
        }
        return RISCV_EXCP_NONE;
    }

    slot = (ctr_wrptr(env) - entry - 1) & (depth - 1);
    cur = reg == env->ctr_data ? ctr_data_read(env, slot) : reg[slot];
    if (val) {
        *val = cur;
    }
    mask &= wr_mask;
    if (mask) {
        reg[slot] = (cur & ~mask) | (new_val & mask);
        if (reg == env->ctr_data) {
            /* Software wrote CC: ctrdata holds it from now on. */
            env->ctr_cc_delta[slot] = 0;
        }
    }
    return RISCV_EXCP_NONE;
}

/*
 * Draft front end.  Its ctrcontrol layout (v0.1.4 chapter 2) differs from
 * the ratified one in the positions of M/U, MTE/STE and RASEMU, and holds
 * DEPTH (thermometer code) and the CLR action.
 */
#define V0_M            BIT_ULL(0)
#define V0_S            BIT_ULL(1)
#define V0_U            BIT_ULL(2)
#define V0_CLR          BIT_ULL(7)
#define V0_MTE          BIT_ULL(8)
#define V0_STE          BIT_ULL(9)
#define V0_RASEMU       BIT_ULL(10)
#define V0_DEPTH        MAKE_64BIT_MASK(16, 4)
/* Bits with the same position in both layouts. */
#define V0_SAME         (XCTRCTL_BPFRZ | XCTRCTL_LCOFIFRZ | \
                         MAKE_64BIT_MASK(33, 6) | MAKE_64BIT_MASK(40, 8))

#define V0_M_MASK       (V0_M | V0_S | V0_U | V0_CLR | V0_MTE | V0_STE | \
                         V0_RASEMU | V0_DEPTH | V0_SAME)
#define V0_S_MASK       (V0_M_MASK & ~(V0_M | V0_MTE))

#define V0_STATUS_FROZEN    BIT(15)
#define V0_STATUS_MASK      (SCTRSTATUS_WRPTR_MASK | SCTRSTATUS_WRAP | \
                             V0_STATUS_FROZEN)

static const struct {
    uint64_t v0, canon;
} ctr_v0_moved_bits[] = {
    { V0_M, MCTRCTL_M },
    { V0_S, XCTRCTL_S },
    { V0_U, XCTRCTL_U },
    { V0_MTE, MCTRCTL_MTE },
    { V0_STE, XCTRCTL_STE },
    { V0_RASEMU, XCTRCTL_RASEMU },
};

static uint64_t ctr_v0_to_canon(uint64_t v0)
{
    uint64_t canon = v0 & V0_SAME;

    for (int i = 0; i < ARRAY_SIZE(ctr_v0_moved_bits); i++) {
        if (v0 & ctr_v0_moved_bits[i].v0) {
            canon |= ctr_v0_moved_bits[i].canon;
        }
    }
    return canon;
}

static uint64_t ctr_canon_to_v0(uint64_t canon)
{
    uint64_t v0 = canon & V0_SAME;

    for (int i = 0; i < ARRAY_SIZE(ctr_v0_moved_bits); i++) {
        if (canon & ctr_v0_moved_bits[i].canon) {
            v0 |= ctr_v0_moved_bits[i].v0;
        }
    }
    return v0;
}

/*
 * DEPTH is WARL with the legal codes 0000, 0001, 0011, 0111 and 1111
 * (16..256 entries, all supported).  A write keeps the run of ones
 * starting at bit 0: 0101 becomes 0001, 0010 becomes 0000.
 */
static unsigned ctr_v0_depth_code(uint64_t v0)
{
    return cto32(extract64(v0, 16, 4));
}

static uint64_t ctr_v0_depth_field(CPURISCVState *env)
{
    unsigned code = get_field(env->sctrdepth, SCTRDEPTH_MASK);

    return deposit64(0, 16, 4, (1u << code) - 1);
}

/* CLR zeroes the entries up to depth, and mctrstatus. */
static void ctr_v0_clear(CPURISCVState *env, unsigned depth)
{
    ctr_zero_entries(env, depth);
    env->sctrstatus = 0;
    riscv_ctr_status_written(env);
}

RISCVException ctr_v0_mmode(CPURISCVState *env, int csrno)
{
    if (!riscv_cpu_cfg(env)->ext_ctr ||
        (csrno == CSR_MCTRCONTROLH && riscv_cpu_mxl(env) != MXL_RV32)) {
        return RISCV_EXCP_ILLEGAL_INST;
    }
    return RISCV_EXCP_NONE;
}

RISCVException ctr_v0_smode(CPURISCVState *env, int csrno)
{
    if (!riscv_cpu_cfg(env)->ext_ctr || !riscv_has_ext(env, RVS) ||
        (csrno == CSR_SCTRCONTROLH && riscv_cpu_mxl(env) != MXL_RV32)) {
        return RISCV_EXCP_ILLEGAL_INST;
    }
    return smstateen_acc_ok(env, 0, SMSTATEEN0_CTR_V0);
}

RISCVException ctr_v0_hmode(CPURISCVState *env, int csrno)
{
    if (!riscv_has_ext(env, RVH)) {
        return RISCV_EXCP_ILLEGAL_INST;
    }
    return ctr_v0_smode(env, csrno == CSR_VSCTRCONTROLH ? CSR_SCTRCONTROLH :
                                                          CSR_SCTRCONTROL);
}

/*
 * mctrcontrol, sctrcontrol (mctrcontrol with M and MTE hidden while V=0,
 * vsctrcontrol while V=1) and vsctrcontrol, whose DEPTH is a read-only
 * copy of mctrcontrol's.  CLR of vsctrcontrol acts only while V=1.
 */
static void ctr_v0_rmw_control64(CPURISCVState *env, int csrno,
                                 uint64_t *val, uint64_t new_val,
                                 uint64_t wr_mask)
{
    bool to_vs = csrno == CSR_VSCTRCONTROL || csrno == CSR_VSCTRCONTROLH ||
                 env->virt_enabled;
    uint64_t view = csrno == CSR_MCTRCONTROL || csrno == CSR_MCTRCONTROLH ?
                    V0_M_MASK : V0_S_MASK;
    uint64_t *ctl = &env->mctrctl;
    uint64_t old, new;
    unsigned old_depth;

    if (to_vs && view == V0_S_MASK) {
        ctl = &env->vsctrctl;
    }
    old = ctr_canon_to_v0(*ctl) | ctr_v0_depth_field(env);
    if (val) {
        *val = old & view & ~V0_CLR;
    }
    wr_mask &= view;
    if (!wr_mask) {
        return;
    }
    new = (old & ~wr_mask) | (new_val & wr_mask);
    *ctl = (*ctl & ~ctr_v0_to_canon(view)) | ctr_v0_to_canon(new & view);

    old_depth = ctr_depth(env);
    if (ctl == &env->mctrctl && (wr_mask & V0_DEPTH)) {
        unsigned wrptr = ctr_wrptr(env);

        env->sctrdepth = ctr_v0_depth_code(new);
        ctr_set_wrptr(env, wrptr & (ctr_depth(env) - 1));
    }
    if ((new & V0_CLR) && (ctl == &env->mctrctl || env->virt_enabled)) {
        /*
         * Up to the larger of the old and new depths: software lowering
         * DEPTH sets CLR so that nothing stays in the entries above the
         * new depth (draft 2.1).
         */
        ctr_v0_clear(env, MAX(old_depth, ctr_depth(env)));
    }
    riscv_ctr_control_written(env);
}

static bool ctr_v0_high_half(int csrno)
{
    return csrno == CSR_MCTRCONTROLH || csrno == CSR_SCTRCONTROLH ||
           csrno == CSR_VSCTRCONTROLH;
}

RISCVException ctr_v0_rmw_control(CPURISCVState *env, int csrno,
                                  target_ulong *val, target_ulong new_val,
                                  target_ulong wr_mask)
{
    unsigned shift = ctr_v0_high_half(csrno) ? 32 : 0;
    uint64_t mask = (uint64_t)wr_mask << shift;
    uint64_t old;

    if (riscv_cpu_mxl(env) == MXL_RV32) {
        mask &= MAKE_64BIT_MASK(shift, 32);
    }
    ctr_v0_rmw_control64(env, csrno, &old, (uint64_t)new_val << shift, mask);
    if (val) {
        *val = old >> shift;
    }
    return RISCV_EXCP_NONE;
}

/* mctrstatus and its alias sctrstatus. */
RISCVException ctr_v0_rmw_status(CPURISCVState *env, int csrno,
                                 target_ulong *val, target_ulong new_val,
                                 target_ulong wr_mask)
{
    uint32_t canon, old, new;

    riscv_ctr_sync_status(env);
    canon = env->sctrstatus;
    old = (canon & (SCTRSTATUS_WRPTR_MASK | SCTRSTATUS_WRAP)) |
          (canon & SCTRSTATUS_FROZEN ? V0_STATUS_FROZEN : 0);
    if (val) {
        *val = old;
    }
    wr_mask &= V0_STATUS_MASK;
    if (!wr_mask) {
        return RISCV_EXCP_NONE;
    }
    new = (old & ~wr_mask) | (new_val & wr_mask);
    /* WRPTR bits above those needed for depth-1 are read-only 0. */
    env->sctrstatus = (new & SCTRSTATUS_WRPTR_MASK & (ctr_depth(env) - 1)) |
                      (new & SCTRSTATUS_WRAP) |
                      (new & V0_STATUS_FROZEN ? SCTRSTATUS_FROZEN : 0);
    riscv_ctr_status_written(env);
    if (new & V0_STATUS_FROZEN) {
        ctr_cycles_invalidate(env);
    }
    riscv_ctr_update_tb_state(env);
    return RISCV_EXCP_NONE;
}

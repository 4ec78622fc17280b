/*
 * RISC-V PMU: exact, precisely attributed instruction events
 *
 * See pmu_events.h for the model.  Here: which counter counts which class
 * in which mode, folding the events translated code counted into the
 * counters, and what happens when one wraps (Sscofpmf's OF and LCOFI,
 * Sspesa's sample).
 *
 * The counters keep their values where the rest of the PMU keeps them
 * (env->pmu_ctrs), so reads, writes and migration go the usual way; the
 * engine only has to fold before they are looked at.  Translated code
 * folds before every SYSTEM instruction (CSR accesses, xRET, ecall, wfi),
 * the hart at every mode change, and a read from outside the hart (the
 * gdbstub) folds too.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "cpu.h"
#include "pmu.h"
#include "pmu_events.h"
#include "insn_class.h"
#include "exec/helper-proto.h"
#include "exec/exec-all.h"
#include "exec/translation-block.h"
#include "system/runstate.h"
#include "system/device_tree.h"
#include "trace.h"

#define NO_COUNTER      (-1)

/*
 * The classes an instruction counts in, from the shared classifier:
 * retired and decoded, as if it completes; a conditional branch counts as
 * taken if taken.  Translated code and the stepping helper agree on it.
 */
uint32_t riscv_pmu_insn_classes(uint32_t insn, unsigned xlen, unsigned isa,
                                bool taken)
{
    uint32_t classes = BIT(RISCV_PMU_CLASS_RET) | BIT(RISCV_PMU_CLASS_DEC);
    RISCVInsnClass c;

    if (!riscv_classify_insn_isa(insn, xlen, isa, &c)) {
        return classes;
    }
    switch (c.flow) {
    case RISCV_FLOW_BRANCH:
    case RISCV_FLOW_JUMP:
        classes |= BIT(RISCV_PMU_CLASS_BRJMP);
        if (c.flow == RISCV_FLOW_JUMP || taken) {
            classes |= BIT(RISCV_PMU_CLASS_BRJMP_TK);
        }
        /* fall through */
    case RISCV_FLOW_TRAP_RETURN:
        classes |= BIT(RISCV_PMU_CLASS_DEC_BRJMP);
        break;
    default:
        break;
    }
    if (c.loads) {
        classes |= BIT(RISCV_PMU_CLASS_DEC_LOAD);
    }
    if (c.stores) {
        classes |= BIT(RISCV_PMU_CLASS_DEC_STORE);
    }
    if (c.loads || c.stores) {
        classes |= BIT(RISCV_PMU_CLASS_DEC_LDST);
    }
    return classes;
}

/* The class an mhpmevent value counts in, or NO_COUNTER. */
static int pmu_event_class(uint64_t mhpmevent)
{
    switch (mhpmevent & RISCV_PMU_EV_SELECTOR_MASK) {
    case RISCV_PMU_EV_INST_RET:
        return RISCV_PMU_CLASS_RET;
    case RISCV_PMU_EV_INST_BRJMP:
        return RISCV_PMU_CLASS_BRJMP;
    case RISCV_PMU_EV_INST_BRJMP_TK:
        return RISCV_PMU_CLASS_BRJMP_TK;
    case RISCV_PMU_EV_INST_DEC:
        return RISCV_PMU_CLASS_DEC;
    case RISCV_PMU_EV_INST_DEC_BRJMP:
        return RISCV_PMU_CLASS_DEC_BRJMP;
    case RISCV_PMU_EV_INST_DEC_LOAD:
        return RISCV_PMU_CLASS_DEC_LOAD;
    case RISCV_PMU_EV_INST_DEC_STORE:
        return RISCV_PMU_CLASS_DEC_STORE;
    case RISCV_PMU_EV_INST_DEC_LDST:
        return RISCV_PMU_CLASS_DEC_LDST;
    default:
        return NO_COUNTER;
    }
}

bool riscv_pmu_events_claims(uint64_t mhpmevent)
{
    switch (mhpmevent & RISCV_PMU_EV_SELECTOR_MASK) {
    case RISCV_PMU_EV_PDIS_SAMPLES:
    case RISCV_PMU_EV_PDIS_COLLISIONS:
    case RISCV_PMU_EV_PDIS_FILTERED:
    case RISCV_PMU_EV_PDIS_DROPPED:
        /* PDIS's own events (riscv_pmu_events_count_other) */
        return true;
    default:
        return pmu_event_class(mhpmevent) != NO_COUNTER;
    }
}

/*
 * riscv,raw-event-to-mhpmcounters: <match_hi match_lo mask_hi mask_lo
 * counters>, one exact row per event that SBI has no general code for
 * (SBI maps INSTRUCTIONS and BRANCH_INSTRUCTIONS to INST.RET and
 * INST.BRJMP through riscv,event-to-mhpmcounters), so that OpenSBI
 * programs the raw event data into mhpmevent as it is.
 */
void riscv_pmu_events_generate_fdt(void *fdt, uint32_t cmask,
                                   const char *pmu_name)
{
    static const uint32_t raw[] = {
        RISCV_PMU_EV_INST_BRJMP_TK,
        RISCV_PMU_EV_INST_DEC, RISCV_PMU_EV_INST_DEC_BRJMP,
        RISCV_PMU_EV_INST_DEC_LOAD, RISCV_PMU_EV_INST_DEC_STORE,
        RISCV_PMU_EV_INST_DEC_LDST,
        RISCV_PMU_EV_PDIS_SAMPLES, RISCV_PMU_EV_PDIS_COLLISIONS,
        RISCV_PMU_EV_PDIS_FILTERED, RISCV_PMU_EV_PDIS_DROPPED,
    };
    uint32_t rows[ARRAY_SIZE(raw)][5];

    for (int i = 0; i < ARRAY_SIZE(raw); i++) {
        rows[i][0] = cpu_to_be32(0);
        rows[i][1] = cpu_to_be32(raw[i]);
        rows[i][2] = cpu_to_be32(UINT32_MAX);
        rows[i][3] = cpu_to_be32(UINT32_MAX);
        rows[i][4] = cpu_to_be32(cmask);
    }
    qemu_fdt_setprop(fdt, pmu_name, "riscv,raw-event-to-mhpmcounters",
                     rows, sizeof(rows));
}

static uint64_t pmu_mhpmevent(CPURISCVState *env, unsigned i)
{
    if (riscv_cpu_mxl(env) == MXL_RV32) {
        return (uint64_t)env->mhpmeventh_val[i] << 32 |
               (uint32_t)env->mhpmevent_val[i];
    }
    return env->mhpmevent_val[i];
}

/* The xINH bit of mhpmevent (Sscofpmf) for a mode. */
static uint64_t pmu_inhibit_bit(unsigned priv, bool virt)
{
    switch (priv) {
    case PRV_M:
        return MHPMEVENT_BIT_MINH;
    case PRV_S:
        return virt ? MHPMEVENT_BIT_VSINH : MHPMEVENT_BIT_SINH;
    default:
        return virt ? MHPMEVENT_BIT_VUINH : MHPMEVENT_BIT_UINH;
    }
}

/*
 * The class counter i (RISCV_PMU_EXTRA_CTR: an extension's) counts in the
 * mode, or NO_COUNTER.
 */
static int pmu_counter_class(CPURISCVState *env, unsigned i,
                             unsigned priv, bool virt)
{
    const RISCVPMUExtraCounter *extra = env->pmu_ev.extra;
    uint64_t event;

    if (i == RISCV_PMU_EXTRA_CTR) {
        return extra ? extra->class_in_mode(env, priv, virt) : NO_COUNTER;
    }
    if (!(env_archcpu(env)->pmu_avail_ctrs & BIT(i)) ||
        (env->mcountinhibit & BIT(i))) {
        return NO_COUNTER;
    }
    event = pmu_mhpmevent(env, i);
    if (event & pmu_inhibit_bit(priv, virt)) {
        return NO_COUNTER;
    }
    return pmu_event_class(event);
}

static uint64_t pmu_counter_get(CPURISCVState *env, unsigned i)
{
    PMUCTRState *c = &env->pmu_ctrs[i];

    if (riscv_cpu_mxl(env) == MXL_RV32) {
        return (uint64_t)c->mhpmcounterh_val << 32 |
               (uint32_t)c->mhpmcounter_val;
    }
    return c->mhpmcounter_val;
}

static void pmu_counter_set(CPURISCVState *env, unsigned i, uint64_t val)
{
    PMUCTRState *c = &env->pmu_ctrs[i];

    if (riscv_cpu_mxl(env) == MXL_RV32) {
        c->mhpmcounter_val = (uint32_t)val;
        c->mhpmcounterh_val = val >> 32;
        c->mhpmcounterh_prev = c->mhpmcounterh_val;
    } else {
        c->mhpmcounter_val = val;
    }
    c->mhpmcounter_prev = c->mhpmcounter_val;
}

/*
 * Sspesa: an overflow that sets OF from 0 to 1 while LCOFIP was 0 (so it
 * sets it too) samples the instruction, with counter delegation on
 * (menvcfg.CDE) only that of a delegated counter.  Returns whether it did.
 */
static bool sspesa_sample(CPURISCVState *env, unsigned ctr_idx, uint64_t pc,
                          bool lcofip_was)
{
    if (!riscv_cpu_cfg(env)->ext_sspesa || lcofip_was) {
        return false;
    }
    if ((env->menvcfg & MENVCFG_CDE) && !(env->mcounteren & BIT(ctr_idx))) {
        return false;
    }
    if (riscv_cpu_sxl(env) == MXL_RV32) {
        pc = (uint32_t)pc;
    }
    env->shpmspc = pc;
    env->shpmsdata = ctr_idx;
    trace_riscv_sspesa_sample(ctr_idx, pc);
    return true;
}

/* Any other path that sets OF (QEMU's own events) calls this first. */
void riscv_sspesa_sample(CPURISCVState *env, unsigned ctr_idx, uint64_t pc)
{
    sspesa_sample(env, ctr_idx, pc, env->mip & MIP_LCOFIP);
}

/*
 * M-mode always; S-mode only with counter delegation (menvcfg.CDE), else
 * they do not exist for it; VS and VU: a virtual instruction exception
 * with CDE (U-mode fails the privilege check after this).
 */
RISCVException riscv_sspesa_predicate(CPURISCVState *env, int csrno)
{
    if (!riscv_cpu_cfg(env)->ext_sspesa) {
        return RISCV_EXCP_ILLEGAL_INST;
    }
    if (env->priv == PRV_M) {
        return RISCV_EXCP_NONE;
    }
    if (!(env->menvcfg & MENVCFG_CDE)) {
        return RISCV_EXCP_ILLEGAL_INST;
    }
    if (env->virt_enabled) {
        return RISCV_EXCP_VIRT_INSTRUCTION_FAULT;
    }
    return RISCV_EXCP_NONE;
}

RISCVException riscv_sspesa_read(CPURISCVState *env, int csrno,
                                 target_ulong *val)
{
    *val = csrno == CSR_SHPMSPC ? env->shpmspc : env->shpmsdata;
    return RISCV_EXCP_NONE;
}

/* shpmspc holds any SXLEN value; of shpmsdata, only CNTRID exists. */
RISCVException riscv_sspesa_write(CPURISCVState *env, int csrno,
                                  target_ulong val)
{
    if (csrno == CSR_SHPMSDATA) {
        env->shpmsdata = val & SHPMSDATA_CNTRID;
    } else if (riscv_cpu_sxl(env) == MXL_RV32) {
        env->shpmspc = (uint32_t)val;
    } else {
        env->shpmspc = val;
    }
    return RISCV_EXCP_NONE;
}

/* Where left[] is (RISCV_PMU_LEFT_GAP): change the gap if this fails. */
QEMU_BUILD_BUG_ON(offsetof(CPURISCVState, pmu_ev.left) % 1024 < 0x100 ||
                  offsetof(CPURISCVState, pmu_ev.left) % 1024 +
                  sizeof(((CPURISCVState *)0)->pmu_ev.left) > 0x200);

/*
 * Of the counters that wrap together in one fold, the lowest that may
 * sample does; LCOFIP is read before the first sets it.
 */
typedef struct PMUWraps {
    bool sampled;       /* a counter sampled */
    bool read;          /* lcofip_was holds LCOFIP */
    bool lcofip_was;
} PMUWraps;

/*
 * Counter i wrapped: Sscofpmf's OF and LCOFI request, if OF was clear.
 * With the BQL: other threads (the main loop's timers) write mip and
 * QEMU's own counters' OF bits.
 */
static void pmu_counter_wrapped(CPURISCVState *env, unsigned i,
                                PMUWraps *w)
{
    trace_riscv_pmu_events_wrap(i, env->pmu_ev.sample_pc);
    if (!riscv_cpu_cfg(env)->ext_sscofpmf) {
        return;
    }
    BQL_LOCK_GUARD();
    if (!w->read) {
        w->lcofip_was = env->mip & MIP_LCOFIP;
        w->read = true;
    }
    if (!pmu_hpmevent_set_of_if_clear(env, i)) {
        return;
    }
    if (!w->sampled) {
        w->sampled = sspesa_sample(env, i, env->pmu_ev.sample_pc,
                                   w->lcofip_was);
    }
    riscv_cpu_update_mip(env, MIP_LCOFIP, BOOL_TO_MASK(1));
}

/*
 * Add the events translated code counted since the last fold to the
 * counters that count them in the current mode.  In counter order, so
 * that of simultaneous wraps, the lowest counter is the sample's.
 */
void riscv_pmu_events_fold(CPURISCVState *env)
{
    RISCVPMUEvents *ev = &env->pmu_ev;
    uint64_t events[RISCV_PMU_NCLASSES];
    PMUWraps wraps = { 0 };
    bool any = false;

    for (int c = 0; c < RISCV_PMU_NCLASSES; c++) {
        events[c] = ev->folded[c] - ev->left[c];
        ev->folded[c] = ev->left[c];
        if (events[c] && (ev->credit & BIT(c))) {
            /* an xRET's, which riscv_pmu_events_xret() counted */
            events[c]--;
            ev->credit &= ~BIT(c);
        }
        any |= events[c] != 0;
    }
    if (!any) {
        return;
    }
    for (uint32_t set = ev->counting; set; set &= set - 1) {
        unsigned i = ctz32(set);
        uint64_t n = events[ev->counter_class[i]], old;

        if (!n) {
            continue;
        }
        if (ev->written & BIT(i)) {
            /* the CSR write's own event, which the write replaced */
            ev->written &= ~BIT(i);
            n--;
        }
        if (i == RISCV_PMU_EXTRA_CTR) {
            ev->extra->count(env, n, ev->sample_pc);
            continue;
        }
        old = pmu_counter_get(env, i);
        pmu_counter_set(env, i, old + n);
        if (old + n < old) {
            pmu_counter_wrapped(env, i, &wraps);
        }
    }
}

/*
 * A counter is read through riscv_pmu_read_ctr(): fold first on the
 * hart's own thread or while it is stopped (the gdbstub), but not from
 * the PMU timer in the main loop while the hart updates the counts.
 */
void riscv_pmu_events_before_read(CPURISCVState *env)
{
    if (qemu_cpu_is_self(env_cpu(env)) || !runstate_is_running()) {
        riscv_pmu_events_fold(env);
    }
}

/*
 * The programmable counters (3..31) that may count: present, not
 * inhibited, with an event selected; nearly always few.  Every trap,
 * xRET, wrap and PDIS sample looks at them, not at all 29.
 */
static uint32_t pmu_counters_selected(CPURISCVState *env)
{
    uint32_t maybe = env_archcpu(env)->pmu_avail_ctrs & ~env->mcountinhibit &
                     ~MAKE_64BIT_MASK(0, 3);
    uint32_t set = 0;

    for (; maybe; maybe &= maybe - 1) {
        unsigned i = ctz32(maybe);

        if (env->mhpmevent_val[i] || env->mhpmeventh_val[i]) {
            set |= BIT(i);
        }
    }
    return set;
}

/* Which counter counts which class in a mode. */
static void pmu_events_classify(CPURISCVState *env, unsigned priv, bool virt)
{
    RISCVPMUEvents *ev = &env->pmu_ev;
    uint32_t maybe = pmu_counters_selected(env) | BIT(RISCV_PMU_EXTRA_CTR);

    ev->active = 0;
    ev->counting = 0;
    for (; maybe; maybe &= maybe - 1) {
        unsigned i = ctz32(maybe);
        int c = pmu_counter_class(env, i, priv, virt);

        if (c != NO_COUNTER) {
            ev->active |= BIT(c);
            ev->counting |= BIT(i);
            ev->counter_class[i] = c;
        }
    }
}

/*
 * After a fold: the classes counted in a mode, and the events left in
 * each before its first counter wraps.
 */
static void pmu_events_arm(CPURISCVState *env, unsigned priv, bool virt)
{
    RISCVPMUEvents *ev = &env->pmu_ev;

    pmu_events_classify(env, priv, virt);
    for (int c = 0; c < RISCV_PMU_NCLASSES; c++) {
        ev->left[c] = INT64_MAX;
    }
    for (uint32_t set = ev->counting; set; set &= set - 1) {
        unsigned i = ctz32(set), c = ev->counter_class[i];
        bool extra = i == RISCV_PMU_EXTRA_CTR;
        uint64_t val = extra ? 1 : pmu_counter_get(env, i);
        /* 2^64 - value events wrap it, one more after a write or an xRET */
        uint64_t to_wrap = extra ? ev->extra->events_to_next(env) : -val;

        to_wrap += !!(ev->written & BIT(i)) + !!(ev->credit & BIT(c));
        if (val && to_wrap && to_wrap < (uint64_t)ev->left[c]) {
            ev->left[c] = to_wrap;
        }
    }
    memcpy(ev->folded, ev->left, sizeof(ev->left));
}

/* Migrated in: the events not folded yet go to the counters loaded. */
void riscv_pmu_events_post_load(CPURISCVState *env)
{
    pmu_events_classify(env, env->priv, env->virt_enabled);
    riscv_pmu_events_update(env);
}

uint64_t riscv_pmu_events_cs_base(CPURISCVState *env)
{
    return (uint64_t)env->pmu_ev.active << RISCV_CS_BASE_PMU_SHIFT;
}

/* A counter, an event selector or the inhibits changed. */
void riscv_pmu_events_update(CPURISCVState *env)
{
    riscv_pmu_events_fold(env);
    pmu_events_arm(env, env->priv, env->virt_enabled);
}

/*
 * A CSR instruction wrote counter i: the write is done instead of that
 * instruction's own increment (Zicsr), which translated code counts at
 * the instruction's end if i counts its class (retired or decoded).
 */
void riscv_pmu_events_counter_written(CPURISCVState *env, unsigned ctr_idx)
{
    int c = pmu_counter_class(env, ctr_idx, env->priv, env->virt_enabled);

    riscv_pmu_events_fold(env);
    env->pmu_ev.written &= ~BIT(ctr_idx);
    /* not an instruction: the debugger's write (riscv_csrrw_debug) */
    if (!env->debugger &&
        (c == RISCV_PMU_CLASS_RET || c == RISCV_PMU_CLASS_DEC)) {
        env->pmu_ev.written |= BIT(ctr_idx);
    }
    pmu_events_arm(env, env->priv, env->virt_enabled);
}

/* Before the mode changes: the events so far are the old mode's. */
void riscv_pmu_events_set_mode(CPURISCVState *env, unsigned newpriv,
                               bool newvirt)
{
    riscv_pmu_events_fold(env);
    pmu_events_arm(env, newpriv, newvirt);
    if (env->pmu_ev.extra) {
        env->pmu_ev.extra->set_mode(env, newvirt);
    }
}

void riscv_pmu_events_reset(CPURISCVState *env)
{
    memset(&env->pmu_ev, 0, sizeof(env->pmu_ev));
    pmu_events_arm(env, env->priv, env->virt_enabled);
}

/* Events of one class counted by the hart outside translated code. */
static void pmu_events_count(CPURISCVState *env, int c, int64_t n)
{
    if (env->pmu_ev.active & BIT(c)) {
        env->pmu_ev.left[c] -= n;
    }
}

/* A counter may have wrapped (only in a one-instruction TB: see arm). */
static void pmu_events_check(CPURISCVState *env)
{
    for (int c = 0; c < RISCV_PMU_NCLASSES; c++) {
        if (env->pmu_ev.left[c] <= 0) {
            riscv_pmu_events_update(env);
            return;
        }
    }
}

/*
 * An instruction of a TB that counts did not complete: a helper raised an
 * exception from it, or QEMU restarts it (self-modifying code, I/O under
 * icount, helper_pmu_near() where RISCV_PMU_NEAR_RESTORES()).  The
 * instructions before it since the last fold completed; an exception
 * means it was decoded too.  A TB that counted ahead (pmu_events.h)
 * counted it and those after it as completing: they are taken back.
 */
void riscv_pmu_events_restore(CPURISCVState *env, const TranslationBlock *tb,
                              uint64_t data0)
{
    CPUState *cs = env_cpu(env);
    bool decoded, load, store, ctrl;
    int64_t insns, loads, stores, ldst, tb_ctrl, tb_taken;

    if (!extract64(tb->cs_base, RISCV_CS_BASE_PMU_SHIFT,
                   RISCV_PMU_NCLASSES)) {
        return;
    }
    decoded = (unsigned)cs->exception_index < EXCP_INTERRUPT;
    load = data0 & RISCV_PMU_START_CUR_LOAD;
    store = data0 & RISCV_PMU_START_CUR_STORE;
    ctrl = data0 & RISCV_PMU_START_CUR_CTRL;
    insns = extract64(data0, RISCV_PMU_START_SINCE_SHIFT,
                      RISCV_PMU_START_COUNT_BITS);
    loads = extract64(data0, RISCV_PMU_START_LOADS_SHIFT,
                      RISCV_PMU_START_COUNT_BITS);
    stores = extract64(data0, RISCV_PMU_START_STORES_SHIFT,
                       RISCV_PMU_START_COUNT_BITS);
    ldst = extract64(data0, RISCV_PMU_START_LDST_SHIFT,
                     RISCV_PMU_START_COUNT_BITS);
    tb_ctrl = tb_taken = 0;
    if (data0 & RISCV_PMU_START_AHEAD) {
        /* all of it from this instruction on, negated: taken back */
        insns = -(insns + 1);
        loads = -(loads + load);
        stores = -(stores + store);
        ldst = -(ldst + (load || store));
        tb_ctrl = -!!(data0 & RISCV_PMU_START_TB_CTRL);
        tb_taken = -!!(data0 & RISCV_PMU_START_TB_TAKEN);
    }
    pmu_events_count(env, RISCV_PMU_CLASS_RET, insns);
    pmu_events_count(env, RISCV_PMU_CLASS_BRJMP, tb_ctrl);
    pmu_events_count(env, RISCV_PMU_CLASS_BRJMP_TK, tb_taken);
    pmu_events_count(env, RISCV_PMU_CLASS_DEC, insns + decoded);
    pmu_events_count(env, RISCV_PMU_CLASS_DEC_BRJMP,
                     tb_ctrl + (decoded && ctrl));
    pmu_events_count(env, RISCV_PMU_CLASS_DEC_LOAD, loads + (decoded && load));
    pmu_events_count(env, RISCV_PMU_CLASS_DEC_STORE,
                     stores + (decoded && store));
    pmu_events_count(env, RISCV_PMU_CLASS_DEC_LDST,
                     ldst + (decoded && (load || store)));
    env->pmu_ev.trapping = decoded;
    pmu_events_check(env);
    env->pmu_ev.trapping = false;
}

/*
 * wfi retired and stops the hart from its helper, whose TB is left
 * without passing an exit; the instructions before it were folded (it is
 * a SYSTEM instruction).
 */
void riscv_pmu_events_wfi(CPURISCVState *env)
{
    pmu_events_count(env, RISCV_PMU_CLASS_RET, 1);
    pmu_events_count(env, RISCV_PMU_CLASS_DEC, 1);
    pmu_events_check(env);
}

/*
 * An xRET, in its helper, before it changes the mode: it executes in the
 * mode it leaves, so its events are that mode's.  Counted and folded now;
 * the exit of its TB counts them again, which the next fold takes back
 * (credit).  left[] is one more until that exit, as pmu_events_arm()
 * makes it after a mode change: else the TB after the xRET would find a
 * counter one event nearer its wrap than it is, and run in parts for a
 * wrap that does not come.  retpc: where it returns to, for the
 * extension's counter.
 */
void riscv_pmu_events_xret(CPURISCVState *env, uint64_t retpc)
{
    RISCVPMUEvents *ev = &env->pmu_ev;
    uint32_t classes = ev->active & (BIT(RISCV_PMU_CLASS_RET) |
                                     BIT(RISCV_PMU_CLASS_DEC) |
                                     BIT(RISCV_PMU_CLASS_DEC_BRJMP));

    if (ev->counting & BIT(RISCV_PMU_EXTRA_CTR)) {
        ev->extra->preview_xret(env, env->pc, retpc);
    }

    for (int c = 0; c < RISCV_PMU_NCLASSES; c++) {
        if (classes & BIT(c)) {
            ev->left[c]--;
        }
    }
    riscv_pmu_events_fold(env);
    ev->credit |= classes;
    for (int c = 0; c < RISCV_PMU_NCLASSES; c++) {
        if (classes & BIT(c)) {
            ev->left[c]++;
            ev->folded[c]++;
        }
    }
}

/* The counters (3..31) that count one of classes in the current mode. */
uint32_t riscv_pmu_events_counters_of(CPURISCVState *env, uint32_t classes)
{
    uint32_t set = 0;

    for (uint32_t maybe = pmu_counters_selected(env); maybe;
         maybe &= maybe - 1) {
        unsigned i = ctz32(maybe);
        int c = pmu_counter_class(env, i, env->priv, env->virt_enabled);

        if (c != NO_COUNTER && (classes & BIT(c))) {
            set |= BIT(i);
        }
    }
    return set;
}

/*
 * One event that is not an instruction's (PDIS's own): the counters that
 * count it in the current mode, overflow included.
 */
void riscv_pmu_events_count_other(CPURISCVState *env, uint64_t event)
{
    PMUWraps wraps = { 0 };

    for (uint32_t maybe = pmu_counters_selected(env); maybe;
         maybe &= maybe - 1) {
        unsigned i = ctz32(maybe);
        uint64_t sel = pmu_mhpmevent(env, i), val;

        if ((sel & RISCV_PMU_EV_SELECTOR_MASK) != event ||
            (sel & pmu_inhibit_bit(env->priv, env->virt_enabled))) {
            continue;
        }
        val = pmu_counter_get(env, i) + 1;
        pmu_counter_set(env, i, val);
        if (!val) {
            pmu_counter_wrapped(env, i, &wraps);
        }
    }
}

/* Translated code: before a SYSTEM instruction. */
void helper_pmu_fold(CPURISCVState *env)
{
    riscv_pmu_events_fold(env);
}

/* Translated code: at the exit of a one-instruction TB, a class hit 0. */
void helper_pmu_wrap(CPURISCVState *env)
{
    riscv_pmu_events_update(env);
}

/* The host page of code a TB reads, while its instructions are in it. */
typedef struct PMUCodePage {
    vaddr base;                 /* page aligned; -1: none */
    uint8_t *host;
} PMUCodePage;

/*
 * 16 bits of code the hart can fetch at addr, without a fault; a page
 * probed once for all the parcels of the TB in it (the TB was translated
 * from them), unless its permissions are finer than a page (PMP).
 */
static bool pmu_fetch_parcel(CPURISCVState *env, PMUCodePage *page,
                             vaddr addr, uint16_t *parcel)
{
    vaddr base = addr & TARGET_PAGE_MASK;
    CPUTLBEntryFull *full;
    void *host = NULL;
    int flags;

    if (page->base == base) {
        *parcel = lduw_le_p(page->host + (addr - base));
        return true;
    }
    flags = probe_access_full(env, addr, 2, MMU_INST_FETCH,
                              riscv_env_mmu_index(env, true), true,
                              &host, &full, 0);
    if ((flags & TLB_INVALID_MASK) || !host) {
        return false;
    }
    if (full->lg_page_size >= TARGET_PAGE_BITS) {
        page->base = base;
        page->host = (uint8_t *)host - (addr - base);
    }
    *parcel = lduw_le_p(host);
    return true;
}

/*
 * How many of the first n instructions at env->pc (a TB's) surely leave
 * every class above 0, a branch counted as taken: the one after them is
 * the first that may make a counter wrap.  Read from the code again (the
 * TB was just found, so it can be fetched); 0 if it cannot be.  Only
 * where the TB is split depends on it: a part that may still make a
 * counter wrap is split again.
 */
static unsigned pmu_safe_prefix(CPURISCVState *env, unsigned n)
{
    RISCVPMUEvents *ev = &env->pmu_ev;
    unsigned xlen = env->xl == MXL_RV32 ? 32 : 64;      /* the TB's */
    unsigned isa = riscv_insn_isa(riscv_cpu_cfg(env));
    vaddr pc = env->pc;
    int64_t left[RISCV_PMU_NCLASSES];
    PMUCodePage page = { .base = -1 };

    memcpy(left, ev->left, sizeof(left));
    for (unsigned i = 0; i < n; i++) {
        uint16_t lo, hi = 0;
        uint32_t classes;

        if (!pmu_fetch_parcel(env, &page, pc, &lo) ||
            (riscv_insn_len(lo) == 4 &&
             !pmu_fetch_parcel(env, &page, pc + 2, &hi))) {
            return 0;
        }
        classes = riscv_pmu_insn_classes(lo | (uint32_t)hi << 16, xlen, isa,
                                         true) & ev->active;
        for (; classes; classes &= classes - 1) {
            if (--left[ctz32(classes)] <= 0) {
                return i;
            }
        }
        pc += riscv_insn_len(lo);
    }
    return n;       /* none, as read now: the caller splits before the last */
}

/*
 * Translated code, at the start of a TB that may make a counter wrap:
 * with one instruction, that instruction is the sample (insn: it, which
 * the extension's counter looks at before it runs).  With insn
 * instructions, the TB runs again in parts (cflags for the next TB): the
 * instructions that cannot make a counter wrap, then, alone, the one that
 * may.  Its translated code has taken back what its start counted, and
 * env->pc is its first instruction, but where RISCV_PMU_NEAR_RESTORES():
 * there the restore does both, and gives its instructions back to icount.
 */
void helper_pmu_near(CPURISCVState *env, uint32_t cflags, uint32_t insn)
{
    CPUState *cs = env_cpu(env);
    unsigned prefix;

    if (!cflags) {
        trace_riscv_pmu_events_near(env->pc);
        env->pmu_ev.sample_pc = env->pc;
        if (env->pmu_ev.counting & BIT(RISCV_PMU_EXTRA_CTR)) {
            env->pmu_ev.extra->preview(env, env->pc, insn);
        }
        return;
    }
    if (RISCV_PMU_NEAR_RESTORES(cflags)) {
        cpu_restore_state(cs, GETPC());
    }
    prefix = MIN(pmu_safe_prefix(env, insn), insn - 1);
    trace_riscv_pmu_events_split(env->pc, insn, prefix);
    cs->cflags_next_tb = (cflags & ~CF_COUNT_MASK) | MAX(prefix, 1);
    cpu_loop_exit(cs);
}

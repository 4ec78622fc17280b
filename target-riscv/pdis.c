/*
 * RISC-V Smpdis/Sspdis: Precise Decoded Instruction Sampling (draft)
 *
 * See pdis.h for the model.  Here: the registers, the PDIS counter's
 * side of the PMU engine, the sample record and its delivery.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "cpu.h"
#include "internals.h"
#include "pmu.h"
#include "pdis.h"
#include "pmu_events.h"
#include "insn_class.h"
#include "exec/exec-all.h"
#include "exec/address-spaces.h"
#include "exec/memory.h"
#include "trace.h"

#define NO_CLASS        (-1)

static bool pdis_present(CPURISCVState *env)
{
    return riscv_cpu_cfg(env)->ext_smpdis;
}

static bool pdis_rv32(CPURISCVState *env)
{
    return riscv_cpu_mxl(env) == MXL_RV32;
}

/* PDIS state is S-mode's (mstateen0.PDIS, or no Smstateen to say). */
static bool pdis_delegated(CPURISCVState *env)
{
    return !riscv_cpu_cfg(env)->ext_smstateen ||
           (env->mstateen[0] & SMSTATEEN0_PDIS);
}

static uint64_t pdis_sxlen_mask(CPURISCVState *env)
{
    return riscv_cpu_sxl(env) == MXL_RV32 ? UINT32_MAX : UINT64_MAX;
}

/* An address as the hart's XLEN has it (QEMU sign-extends RV32 PCs). */
static uint64_t pdis_xlen_addr(CPURISCVState *env, uint64_t addr)
{
    return pdis_rv32(env) ? (uint32_t)addr : addr;
}

/* ---- The counter, as one more counter of the PMU engine ---- */

/* The class it counts in the mode, or NO_CLASS. */
static int pdis_class(CPURISCVState *env, unsigned priv, bool virt)
{
    static const int of_sel[] = {
        [PDIS_TYPE_OTHER] = RISCV_PMU_CLASS_DEC,
        [PDIS_TYPE_LOAD] = RISCV_PMU_CLASS_DEC_LOAD,
        [PDIS_TYPE_STORE] = RISCV_PMU_CLASS_DEC_STORE,
        [PDIS_TYPE_LDST] = RISCV_PMU_CLASS_DEC_LDST,
        [PDIS_TYPE_CTRL] = RISCV_PMU_CLASS_DEC_BRJMP,
    };
    RISCVPDIS *p = &env->pdis;
    uint64_t enable;

    if (!pdis_present(env) || (env->mcountinhibit & BIT(RISCV_PDIS_CTR))) {
        return NO_CLASS;
    }
    if (priv == PRV_M) {
        enable = p->ctl & PDISCTL_M;
    } else if (virt) {
        enable = p->vsctl & (priv == PRV_S ? PDISCTL_S : PDISCTL_U);
    } else {
        enable = p->ctl & (priv == PRV_S ? PDISCTL_S : PDISCTL_U);
    }
    return enable ? of_sel[p->ctl & PDISCTL_SEL] : NO_CLASS;
}

/* Events until the next selection: the overflow, or the next one (ACC). */
static uint64_t pdis_events_to_select(CPURISCVState *env)
{
    uint32_t count = env->pdis.counter;

    if (env->pdis.acc_select) {
        return 1;
    }
    return BIT_ULL(32) - count;
}

/* The shared classifier, with the hart's Zcmp and Zcmt */
static bool pdis_classify(CPURISCVState *env, uint32_t insn,
                          RISCVInsnClass *c)
{
    return riscv_classify_insn_isa(insn, pdis_rv32(env) ? 32 : 64,
                                   riscv_insn_isa(riscv_cpu_cfg(env)), c);
}

/*
 * A jump whose target is in memory (Zcmp's cm.popret, Zcmt's table
 * jumps): known only once it ran, as env->pc at the sample.
 */
static bool pdis_target_from_memory(const RISCVInsnClass *c)
{
    return c->flow == RISCV_FLOW_JUMP && !c->inferable && c->rs1 == 0;
}

/* The instruction the engine runs alone next, before it runs. */
static uint64_t pdis_jump_target(CPURISCVState *env, uint64_t pc,
                                 uint32_t insn, const RISCVInsnClass *c)
{
    if (c->inferable) {
        return pc + c->offset;
    }
    if (c->len == 4) {
        return (env->gpr[c->rs1] + sextract32(insn, 20, 12)) & ~1ULL;
    }
    return env->gpr[c->rs1] & ~1ULL;
}

static bool pdis_branch_taken(CPURISCVState *env, uint32_t insn)
{
    target_long a, b;

    if ((insn & 3) != 3) {      /* c.beqz, c.bnez */
        a = env->gpr[8 + extract32(insn, 7, 3)];
        return (a == 0) == !extract32(insn, 13, 1);
    }
    a = env->gpr[extract32(insn, 15, 5)];
    b = env->gpr[extract32(insn, 20, 5)];
    switch (extract32(insn, 12, 3)) {
    case 0:
        return a == b;
    case 1:
        return a != b;
    case 4:
        return a < b;
    case 5:
        return a >= b;
    case 6:
        return (target_ulong)a < (target_ulong)b;
    default:
        return (target_ulong)a >= (target_ulong)b;
    }
}

/* rs1 + offset of a compressed load or store; 0 for other encodings */
static uint64_t pdis_compressed_va(CPURISCVState *env, uint32_t insn)
{
    unsigned funct3 = extract32(insn, 13, 3);
    uint64_t base = env->gpr[8 + extract32(insn, 7, 3)];
    uint64_t sp = env->gpr[2];
    bool dword = !pdis_rv32(env) || funct3 == 1 || funct3 == 5;

    if ((insn & 3) == 0) {
        if (funct3 == 4) {      /* Zcb: c.lbu, c.lhu, c.lh, c.sb, c.sh */
            return base + (extract32(insn, 5, 1) << 1) +
                   (extract32(insn, 10, 1) ? 0 : extract32(insn, 6, 1));
        }
        if (funct3 == 2 || funct3 == 6 || !dword) {
            return base + (extract32(insn, 10, 3) << 3) +
                   (extract32(insn, 6, 1) << 2) + (extract32(insn, 5, 1) << 6);
        }
        return base + (extract32(insn, 10, 3) << 3) +
               (extract32(insn, 5, 2) << 6);
    }
    switch (funct3) {
    case 2:                     /* c.lwsp, c.flwsp */
        return sp + (extract32(insn, 12, 1) << 5) +
               (extract32(insn, 4, 3) << 2) + (extract32(insn, 2, 2) << 6);
    case 6:                     /* c.swsp */
        return sp + (extract32(insn, 9, 4) << 2) +
               (extract32(insn, 7, 2) << 6);
    case 1:
    case 3:
        if (dword) {            /* c.ldsp, c.fldsp */
            return sp + (extract32(insn, 12, 1) << 5) +
                   (extract32(insn, 5, 2) << 3) +
                   (extract32(insn, 2, 3) << 6);
        }
        return sp + (extract32(insn, 12, 1) << 5) +     /* c.flwsp */
               (extract32(insn, 4, 3) << 2) + (extract32(insn, 2, 2) << 6);
    case 5:
    case 7:
        if (dword) {            /* c.sdsp, c.fsdsp */
            return sp + (extract32(insn, 10, 3) << 3) +
                   (extract32(insn, 7, 3) << 6);
        }
        return sp + (extract32(insn, 9, 4) << 2) +      /* c.fswsp */
               (extract32(insn, 7, 2) << 6);
    default:
        return 0;
    }
}

/* Vector loads and stores: LOAD-FP and STORE-FP with a vector width. */
static bool pdis_is_vector_access(uint32_t insn)
{
    unsigned width = extract32(insn, 12, 3);

    return ((insn & 0x7f) == 0x07 || (insn & 0x7f) == 0x27) &&
           (width == 0 || width >= 5);
}

/*
 * The data address of a load or store: rs1 plus its offset (AMOs, LR, SC
 * and vector accesses: rs1, their first access).  0 where this model
 * does not capture one (Zcmp's push and pop: several words, c).
 */
static uint64_t pdis_data_va(CPURISCVState *env, uint32_t insn,
                             const RISCVInsnClass *c)
{
    uint64_t base = env->gpr[extract32(insn, 15, 5)];

    if ((insn & 3) != 3) {
        return c->several ? 0 : pdis_compressed_va(env, insn);
    }
    if (pdis_is_vector_access(insn)) {
        return base;
    }
    switch (insn & 0x7f) {
    case 0x03:
    case 0x07:
        return base + sextract32(insn, 20, 12);
    case 0x23:
    case 0x27:
        return base + (sextract32(insn, 25, 7) << 5) +
               extract32(insn, 7, 5);
    default:
        return base;
    }
}

static void pdis_preview(CPURISCVState *env, uint64_t pc, uint32_t insn)
{
    RISCVPDIS *p = &env->pdis;
    RISCVInsnClass c;

    pc = pdis_xlen_addr(env, pc);
    p->next.pc = pc;
    p->next.insn = insn;
    p->next.va = 0;
    p->next.target = 0;
    p->next.valid = true;
    if (!pdis_classify(env, insn, &c)) {
        return;
    }
    if (c.loads || c.stores) {
        p->next.va = pdis_data_va(env, insn, &c);
    }
    if (c.flow == RISCV_FLOW_BRANCH) {
        p->next.target = pdis_branch_taken(env, insn) ? pc + c.offset :
                         pc + c.len;
    } else if (c.flow == RISCV_FLOW_JUMP) {
        p->next.target = pdis_jump_target(env, pc, insn, &c);
    }
    p->next.va = pdis_xlen_addr(env, p->next.va);
    p->next.target = pdis_xlen_addr(env, p->next.target);
}

/* An xRET, in its helper: it returns to retpc. */
static void pdis_preview_xret(CPURISCVState *env, uint64_t pc, uint64_t retpc)
{
    RISCVPDIS *p = &env->pdis;

    p->next.pc = pdis_xlen_addr(env, pc);
    p->next.insn = 0x30200073;          /* mret: what matters is xRET */
    p->next.va = 0;
    p->next.target = pdis_xlen_addr(env, retpc);
    p->next.valid = true;
}

/* ---- The sample record ---- */

typedef struct PDISSample {
    uint64_t pc;
    RISCVInsnClass c;
    bool classified;
    uint32_t insn;
    uint64_t va, target;
    uint32_t classes;           /* RISCVPMUClass bits it counts in */
    uint64_t rec[PDIS_REC_FIELDS];
} PDISSample;

/* A direct-mapped tag array of the model: whether it held key. */
static bool pdis_model_hit(uint32_t *tags, unsigned sets, uint64_t key)
{
    uint32_t *tag = &tags[key % sets];
    bool hit = *tag == (uint32_t)(key + 1);

    *tag = key + 1;
    return hit;
}

static hwaddr pdis_translate(CPURISCVState *env, uint64_t va,
                             bool first_stage_only)
{
    hwaddr pa;

    if (riscv_cpu_translate_async(env, va, 1, MMU_DATA_LOAD,
                                  riscv_env_mmu_index(env, false),
                                  true, first_stage_only, &pa)) {
        return 0;
    }
    return pa;
}

/* Loads and stores: addresses, cache and TLB model, latency. */
static unsigned pdis_record_memory(CPURISCVState *env, PDISSample *s)
{
    RISCVPDIS *p = &env->pdis;
    uint64_t *hdr = &s->rec[PDIS_REC_HDREV];
    hwaddr pa = pdis_translate(env, s->va, false);
    uint64_t line = (pa ? pa : s->va) >> 6;
    unsigned lat = 3, dsrc = 1;

    s->rec[PDIS_REC_ADR1] = s->va;
    if (env->virt_enabled && (p->vsctl & PDISCTL_PA)) {
        s->rec[PDIS_REC_ADR2] = pdis_translate(env, s->va, true);
    } else if (p->ctl & PDISCTL_PA) {
        s->rec[PDIS_REC_ADR2] = pa;
    }
    /* several accesses (AMOs, vector, Zcmp): the model takes the first */
    if ((s->c.loads && s->c.stores) || s->c.several ||
        pdis_is_vector_access(s->insn)) {
        *hdr |= PDISHDR_PARTIAL;
    }
    if (!pdis_model_hit(p->l1tlb_tag, PDIS_L1TLB_SETS, s->va >> 12)) {
        *hdr |= PDISHDR_L1TLBMISS;
        lat += 6;
        if (!pdis_model_hit(p->lltlb_tag, PDIS_LLTLB_SETS, s->va >> 12)) {
            *hdr |= PDISHDR_LLTLBMISS;
            lat += 30;
        }
    }
    if (!pdis_model_hit(p->l1_tag, PDIS_L1_SETS, line)) {
        *hdr |= PDISHDR_L1MISS;
        lat += 12;
        dsrc = 2;
        if (!pdis_model_hit(p->ll_tag, PDIS_LL_SETS, line)) {
            *hdr |= PDISHDR_LLMISS;
            lat += 80;
            dsrc = 3;
        }
    }
    *hdr |= (uint64_t)dsrc << PDISHDR_DSRC_SHIFT;
    return lat;
}

/* Control transfers: the one-hot type, the target and the prediction. */
static unsigned pdis_record_transfer(CPURISCVState *env, PDISSample *s)
{
    static const uint64_t of_itype[16] = {
        [RISCV_ITYPE_UNINFERABLE_CALL] = PDISHDR_INDCALL,
        [RISCV_ITYPE_INFERABLE_CALL] = PDISHDR_DIRCALL,
        [RISCV_ITYPE_UNINFERABLE_TAIL_CALL] = PDISHDR_INDJMP,
        [RISCV_ITYPE_INFERABLE_TAIL_CALL] = PDISHDR_DIRJMP,
        [RISCV_ITYPE_COROUTINE_SWAP] = PDISHDR_CORSWAP,
        [RISCV_ITYPE_RETURN] = PDISHDR_RET,
        [RISCV_ITYPE_OTHER_UNINFERABLE_JUMP] = PDISHDR_INDLJMP,
        [RISCV_ITYPE_OTHER_INFERABLE_JUMP] = PDISHDR_DIRLJMP,
    };
    uint64_t *hdr = &s->rec[PDIS_REC_HDREV];
    bool mispredicted;

    switch (s->c.flow) {
    case RISCV_FLOW_BRANCH: {
        bool taken = s->target != s->pc + s->c.len;

        *hdr |= taken ? PDISHDR_TKBR : PDISHDR_NTBR;
        /* static prediction: backward taken, forward not taken */
        mispredicted = taken != (s->c.offset < 0);
        break;
    }
    case RISCV_FLOW_JUMP:
        *hdr |= of_itype[s->c.itype & 15];
        /* direct targets and returns (a return stack) are predicted */
        mispredicted = !s->c.inferable && s->c.itype != RISCV_ITYPE_RETURN;
        break;
    default:
        *hdr |= PDISHDR_TRET;
        mispredicted = true;
        break;
    }
    s->rec[PDIS_REC_ADR1] = s->target;
    if (mispredicted) {
        *hdr |= PDISHDR_MISPRED;
        return 1 + 14;
    }
    return 1;
}

/*
 * HPM[i]: counter i counts an event of this engine that the instruction
 * incurred, in its mode, and is delegated as PDIS is (docs/pdis.rst).
 */
static uint64_t pdis_record_hpm(CPURISCVState *env, uint32_t classes)
{
    bool pdis_to_s = pdis_delegated(env);
    uint32_t set = riscv_pmu_events_counters_of(env, classes) &
                   extract64(env->pdis.ctl, 0, 32) & ~7u;
    uint32_t bits = 0;

    for (; set; set &= set - 1) {
        unsigned i = ctz32(set);
        bool ctr_to_s = (env->menvcfg & MENVCFG_CDE) &&
                        (env->mcounteren & BIT(i));

        if (ctr_to_s == pdis_to_s) {
            bits |= BIT(i);
        }
    }
    return bits;
}

/* The mode PDIS is delegated to can read time: pdistime (TS=1). */
static uint64_t pdis_record_time(CPURISCVState *env)
{
    bool to_s = pdis_delegated(env);
    bool to_vs = to_s && riscv_has_ext(env, RVH) && env->virt_enabled &&
                 (!riscv_cpu_cfg(env)->ext_smstateen ||
                  (env->hstateen[0] & SMSTATEEN0_PDIS));
    uint64_t time;

    if (!(env->pdis.ctl & PDISCTL_TS) || !env->rdtime_fn ||
        (to_s && !(env->mcounteren & COUNTEREN_TM)) ||
        (to_vs && !(env->hcounteren & COUNTEREN_TM))) {
        return 0;
    }
    time = env->rdtime_fn(env->rdtime_fn_arg);
    return to_vs ? time + env->htimedelta : time;
}

/* The classes of the events the instruction counted in. */
static uint32_t pdis_sample_classes(CPURISCVState *env, const PDISSample *s)
{
    uint32_t classes = BIT(RISCV_PMU_CLASS_RET) | BIT(RISCV_PMU_CLASS_DEC);

    if (s->classified) {
        classes = riscv_pmu_insn_classes(s->insn, pdis_rv32(env) ? 32 : 64,
                                         riscv_insn_isa(riscv_cpu_cfg(env)),
                                         s->target != s->pc + s->c.len);
    }
    return env->pmu_ev.trapping ? classes & ~RISCV_PMU_RETIRED_CLASSES :
                                  classes;
}

static void pdis_build_record(CPURISCVState *env, PDISSample *s)
{
    uint64_t *hdr = &s->rec[PDIS_REC_HDREV];
    unsigned type = PDIS_TYPE_OTHER, lat = 1;
    /* cm.popret loads and returns: the type SEL counts describes it */
    bool as_transfer = s->c.flow == RISCV_FLOW_JUMP &&
                       (env->pdis.ctl & PDISCTL_SEL) == PDIS_TYPE_CTRL;

    memset(s->rec, 0, sizeof(s->rec));
    if (s->classified && (s->c.loads || s->c.stores) && !as_transfer) {
        type = s->c.loads && s->c.stores ? PDIS_TYPE_LDST :
               s->c.loads ? PDIS_TYPE_LOAD : PDIS_TYPE_STORE;
        lat = pdis_record_memory(env, s);
    } else if (s->classified && (s->c.flow == RISCV_FLOW_BRANCH ||
                                 s->c.flow == RISCV_FLOW_JUMP ||
                                 s->c.flow == RISCV_FLOW_TRAP_RETURN)) {
        type = PDIS_TYPE_CTRL;
        lat = pdis_record_transfer(env, s);
    }
    s->classes = pdis_sample_classes(env, s);
    *hdr |= type | (pdis_record_hpm(env, s->classes) & PDISHDR_HPM);
    s->rec[PDIS_REC_PC] = s->pc;
    s->rec[PDIS_REC_TIME] = pdis_record_time(env);
    s->rec[PDIS_REC_LAT] = MIN(lat, 4095);
}

/* spdisevmask/spdisevmatch and the latency filter (TOTAL only). */
static bool pdis_qualifies(CPURISCVState *env, const uint64_t *rec)
{
    RISCVPDIS *p = &env->pdis;
    uint64_t total = rec[PDIS_REC_LAT] & PDISLAT_TOTAL;
    bool above = total >= (p->filter & PDISFILTER_THRESH);

    if ((p->evmatch & p->evmask) != (rec[PDIS_REC_HDREV] & p->evmask)) {
        return false;
    }
    return (p->filter & PDISFILTER_INV) ? !above : above;
}

/* ---- Delivery to the memory buffer (Ssamb) ---- */

static void pdis_lambi(CPURISCVState *env, uint64_t cause)
{
    env->pdis.ambcs |= cause;
    riscv_cpu_update_mip(env, MIP_LAMBIP, MIP_LAMBIP);
}

/* The MMU index AMB writes use: menvcfg.PDISS, henvcfg.PDISV. */
static int pdis_amb_mmu_idx(CPURISCVState *env)
{
    if (!(env->menvcfg & MENVCFG_PDISS)) {
        return MMUIdx_M;
    }
    if (riscv_has_ext(env, RVH) && (env->henvcfg & HENVCFG_PDISV)) {
        return MMUIdx_S | MMU_2STAGE_BIT;
    }
    return MMUIdx_S;
}

static unsigned pdis_rec_size(CPURISCVState *env)
{
    return pdis_record_size(pdis_rv32(env));
}

/* Only RAM the hart may write takes records. */
static bool pdis_amb_store(CPURISCVState *env, hwaddr pa, const uint8_t *buf,
                           unsigned size)
{
    AddressSpace *as = env_cpu(env)->as;
    hwaddr xlat, len = size;
    MemoryRegion *mr;

    RCU_READ_LOCK_GUARD();
    mr = address_space_translate(as, pa, &xlat, &len, true,
                                 MEMTXATTRS_UNSPECIFIED);
    if (len < size || !memory_region_is_ram(mr) || mr->readonly ||
        memory_region_is_romd(mr)) {
        return false;
    }
    return address_space_write(as, pa, MEMTXATTRS_UNSPECIFIED, buf,
                               size) == MEMTX_OK;
}

/* The write pointer moves: WRAP, SOF, and the BMITH threshold. */
static void pdis_amb_advance(CPURISCVState *env, unsigned size)
{
    RISCVPDIS *p = &env->pdis;
    unsigned bits = 12 + extract64(p->ambcs, 7, 5);
    uint64_t mask = MAKE_64BIT_MASK(0, bits);
    uint64_t off = p->ambaddr & mask, next = (off + size) & mask;

    p->ambaddr = ((p->ambaddr & ~mask) | next) & pdis_sxlen_mask(env);
    if (next == 0) {
        p->ambcs |= AMBCS_WRAP;
    }
    if ((p->ambcs & AMBCS_BMIEN) && (off >> (bits - 2)) != (next >> (bits - 2))
        && (next >> (bits - 2)) == extract64(p->ambcs, 32, 2)) {
        pdis_lambi(env, AMBCS_BMI);
    }
}

static bool pdis_amb_write(CPURISCVState *env, const uint64_t *rec)
{
    RISCVPDIS *p = &env->pdis;
    unsigned size = pdis_rec_size(env);
    unsigned bits = 12 + extract64(p->ambcs, 7, 5);
    uint8_t buf[64];
    hwaddr pa;
    int ret;

    if (!(p->ambcs & AMBCS_EN) || (p->ambcs & AMBCS_TF) ||
        ((p->ambcs & AMBCS_SOF) && (p->ambcs & AMBCS_WRAP))) {
        return false;
    }
    ret = riscv_cpu_translate_async(env, p->ambaddr, size, MMU_DATA_STORE,
                                    pdis_amb_mmu_idx(env), false, false,
                                    &pa);
    if (ret == TRANSLATE_G_STAGE_FAIL) {
        /* a guest-page fault, raised when the hart runs the guest */
        p->gpf_pending = true;
        p->gpf_va = p->ambaddr;
        p->gpf_gpa = pa;
        trace_riscv_pdis_amb_fault(p->ambaddr, ret);
        if (env->virt_enabled) {
            BQL_LOCK_GUARD();
            cpu_interrupt(env_cpu(env), CPU_INTERRUPT_HARD);
        }
        return false;
    }
    pdis_record_pack(rec, pdis_rv32(env), buf);
    if (ret != TRANSLATE_SUCCESS || !pdis_amb_store(env, pa, buf, size)) {
        /* the first stage, PMP or PMA refused it: TF and TFPTR */
        p->ambcs = deposit64(p->ambcs, 12, 20,
                             (p->ambaddr & MAKE_64BIT_MASK(0, bits)) >> 12);
        trace_riscv_pdis_amb_fault(p->ambaddr, ret);
        pdis_lambi(env, AMBCS_TF);
        return false;
    }
    trace_riscv_pdis_amb_write(p->ambaddr, pa);
    pdis_amb_advance(env, size);
    return true;
}

/* A G-stage fault of a buffer write, once the hart runs the guest. */
bool riscv_pdis_take_fault(CPURISCVState *env)
{
    RISCVPDIS *p = &env->pdis;
    CPUState *cs = env_cpu(env);

    if (!p->gpf_pending || !env->virt_enabled) {
        return false;
    }
    p->gpf_pending = false;
    env->badaddr = p->gpf_va;
    env->guest_phys_fault_addr = p->gpf_gpa >> 2;
    env->two_stage_lookup = true;
    env->two_stage_indirect_lookup = false;
    cs->exception_index = RISCV_EXCP_STORE_GUEST_AMO_ACCESS_FAULT;
    riscv_cpu_do_interrupt(cs);
    riscv_cpu_interrupt(env);
    return true;
}

/*
 * A trap or a trap return: the sampled instruction has completed.  A
 * G-stage fault found while V=0 is held until the hart runs the guest.
 */
static void pdis_set_mode(CPURISCVState *env, bool newvirt)
{
    env->pdis.active_left = 0;
    if (env->pdis.gpf_pending && newvirt) {
        BQL_LOCK_GUARD();
        cpu_interrupt(env_cpu(env), CPU_INTERRUPT_HARD);
    }
}

/* ---- Selection ---- */

static void pdis_discard(CPURISCVState *env, uint64_t event)
{
    env->pdis.active_left = 0;
    if (env->pdis.ctl & PDISCTL_ACC) {
        env->pdis.acc_select = true;
    }
    riscv_pmu_events_count_other(env, event);
}

/* The instruction at pc was selected; it has completed. */
static void pdis_sample(CPURISCVState *env, uint64_t pc)
{
    RISCVPDIS *p = &env->pdis;
    PDISSample s = { .pc = pdis_xlen_addr(env, pc) };

    if (p->next.valid && p->next.pc == s.pc) {
        s.classified = pdis_classify(env, p->next.insn, &s.c);
        s.insn = p->next.insn;
        s.va = p->next.va;
        s.target = s.classified && pdis_target_from_memory(&s.c) ?
                   pdis_xlen_addr(env, env->pc) : p->next.target;
    }
    p->next.valid = false;
    p->active_left = PDIS_ACTIVE_WINDOW;
    pdis_build_record(env, &s);
    trace_riscv_pdis_sample(s.pc, s.rec[PDIS_REC_HDREV]);
    if (!pdis_qualifies(env, s.rec)) {
        pdis_discard(env, RISCV_PMU_EV_PDIS_FILTERED);
        return;
    }
    if (p->ctl & PDISCTL_MEM) {
        if (!pdis_amb_write(env, s.rec)) {
            pdis_discard(env, RISCV_PMU_EV_PDIS_DROPPED);
            return;
        }
    } else {
        memcpy(p->data, s.rec, sizeof(p->data));
    }
    riscv_pmu_events_count_other(env, RISCV_PMU_EV_PDIS_SAMPLES);
    if (!(p->ctl & PDISCTL_OF)) {
        p->ctl |= PDISCTL_OF;
        riscv_cpu_update_mip(env, MIP_LCOFIP, MIP_LCOFIP);
    }
}

/*
 * n events of the counter's class, the last at pc.  Precise: the engine
 * folds the events in the TB that overflows the counter one instruction
 * at a time, so an overflow is the last event, at pc.
 */
static void pdis_count(CPURISCVState *env, uint64_t n, uint64_t pc)
{
    RISCVPDIS *p = &env->pdis;
    uint64_t count = (uint32_t)p->counter;
    uint64_t to_overflow = BIT_ULL(32) - count;
    bool select = p->acc_select;

    p->acc_select = false;
    if (n >= to_overflow) {
        bool collision = to_overflow <= p->active_left;

        count = (p->counter >> 32) + n - to_overflow;
        trace_riscv_pdis_overflow(pc, collision);
        if (collision) {
            riscv_pmu_events_count_other(env, RISCV_PMU_EV_PDIS_COLLISIONS);
        } else {
            select = true;
        }
    } else {
        count += n;
    }
    p->counter = deposit64(p->counter, 0, 32, count);
    p->active_left = n < p->active_left ? p->active_left - n : 0;
    if (select) {
        pdis_sample(env, pc);
    }
}

/* ---- Registers ---- */

bool riscv_pdis_inhibit_delegated(CPURISCVState *env)
{
    return pdis_present(env) && (env->menvcfg & MENVCFG_CDE) &&
           pdis_delegated(env);
}

uint64_t riscv_pdis_stateen_bits(CPURISCVState *env)
{
    return pdis_present(env) ? SMSTATEEN0_PDIS : 0;
}

uint64_t riscv_pdis_envcfg_bits(CPURISCVState *env)
{
    return pdis_present(env) ? MENVCFG_PDISS : 0;
}

uint64_t riscv_pdis_irqs(CPURISCVState *env)
{
    return pdis_present(env) ? MIP_LAMBIP : 0;
}

static bool pdis_csr_rv32_high(int csrno)
{
    return (csrno & 0xff0) == 0x5d0 || csrno == CSR_VSPDISCTLH ||
           csrno == CSR_MPDISCTLH;
}

/*
 * M-mode: always.  Below M: mstateen0.PDIS (illegal instruction), and
 * with V=1 hstateen0.PDIS (virtual instruction); vspdisctl needs H.
 */
RISCVException riscv_pdis_predicate(CPURISCVState *env, int csrno)
{
    const RISCVCPUConfig *cfg = riscv_cpu_cfg(env);
    int low = pdis_csr_rv32_high(csrno) ? csrno - 0x10 : csrno;

    if (!pdis_present(env) ||
        (pdis_csr_rv32_high(csrno) && !pdis_rv32(env)) ||
        (low == CSR_VSPDISCTL && !riscv_has_ext(env, RVH)) ||
        (low != CSR_MPDISCTL && !riscv_has_ext(env, RVS))) {
        return RISCV_EXCP_ILLEGAL_INST;
    }
    if (env->priv == PRV_M || !cfg->ext_smstateen) {
        return RISCV_EXCP_NONE;
    }
    if (!(env->mstateen[0] & SMSTATEEN0_PDIS)) {
        return RISCV_EXCP_ILLEGAL_INST;
    }
    if (env->virt_enabled && !(env->hstateen[0] & SMSTATEEN0_PDIS)) {
        return RISCV_EXCP_VIRT_INSTRUCTION_FAULT;
    }
    return RISCV_EXCP_NONE;
}

static uint64_t pdis_ctl_writable(CPURISCVState *env)
{
    uint64_t mask = PDISCTL_SEL | PDISCTL_MEM | PDISCTL_ACC | PDISCTL_TS |
                    PDISCTL_PA | PDISCTL_M | PDISCTL_OF;

    mask |= (uint64_t)env_archcpu(env)->pmu_avail_ctrs & PDISCTL_HPM;
    if (riscv_has_ext(env, RVS)) {
        mask |= PDISCTL_S;
    }
    if (riscv_has_ext(env, RVU)) {
        mask |= PDISCTL_U;
    }
    return mask;
}

static uint64_t pdis_vsctl_read(CPURISCVState *env)
{
    RISCVPDIS *p = &env->pdis;

    return (p->ctl & ~(VSPDISCTL_OWN | PDISCTL_M)) |
           (p->vsctl & VSPDISCTL_OWN);
}

/* SEL's reserved values 5..7 are not taken: SEL keeps its value. */
static void pdis_ctl_write(CPURISCVState *env, uint64_t val, uint64_t mask)
{
    RISCVPDIS *p = &env->pdis;

    mask &= pdis_ctl_writable(env);
    if ((val & PDISCTL_SEL) >= PDIS_TYPE_RESERVED) {
        mask &= ~PDISCTL_SEL;
    }
    p->ctl = (p->ctl & ~mask) | (val & mask);
}

static void pdis_vsctl_write(CPURISCVState *env, uint64_t val, uint64_t mask)
{
    RISCVPDIS *p = &env->pdis;
    uint64_t own = mask & VSPDISCTL_OWN & pdis_ctl_writable(env);

    pdis_ctl_write(env, val, mask & ~(VSPDISCTL_OWN | PDISCTL_M));
    p->vsctl = (p->vsctl & ~own) | (val & own);
}

static uint64_t pdis_ambcs_read(CPURISCVState *env)
{
    RISCVPDIS *p = &env->pdis;
    uint64_t val = p->ambcs | AMBCS_EMPTY;
    hwaddr pa;

    /* records are written as they are made: always EMPTY */
    if ((p->ambcs & AMBCS_EN) && !(p->ambcs & AMBCS_TF) &&
        !riscv_cpu_translate_async(env, p->ambaddr, 1, MMU_DATA_STORE,
                                   pdis_amb_mmu_idx(env), true, false,
                                   &pa)) {
        val |= AMBCS_TRV;
    }
    return val;
}

static void pdis_ambcs_write(CPURISCVState *env, uint64_t val, uint64_t mask)
{
    RISCVPDIS *p = &env->pdis;

    mask &= AMBCS_EN | AMBCS_TF | AMBCS_BMI | AMBCS_SIZE | AMBCS_TFPTR |
            AMBCS_BMITH | AMBCS_BMIEN | AMBCS_SOF | AMBCS_WRAP;
    if (extract64(val, 7, 5) > AMBCS_SIZE_MAX) {
        val = deposit64(val, 7, 5, AMBCS_SIZE_MAX);
    }
    p->ambcs = (p->ambcs & ~mask) | (val & mask);
}

/* The 64-bit register behind a CSR, for reads and writes of it. */
static uint64_t pdis_reg_read(CPURISCVState *env, int csrno)
{
    RISCVPDIS *p = &env->pdis;

    switch (csrno) {
    case CSR_MPDISCTL:
        return p->ctl;
    case CSR_SPDISCTL:
        return env->virt_enabled ? pdis_vsctl_read(env) :
               p->ctl & ~PDISCTL_M;
    case CSR_VSPDISCTL:
        return pdis_vsctl_read(env);
    case CSR_SPDISCOUNTER:
        return p->counter;
    case CSR_SPDISEVMASK:
        return p->evmask;
    case CSR_SPDISEVMATCH:
        return p->evmatch;
    case CSR_SPDISFILTER:
        return p->filter;
    case CSR_SPDISAMBCS:
        return pdis_ambcs_read(env);
    default:
        return p->ambaddr;
    }
}

static void pdis_reg_write(CPURISCVState *env, int csrno, uint64_t val,
                           uint64_t mask)
{
    RISCVPDIS *p = &env->pdis;

    /* a write to a PDIS register waits for the sampled instruction */
    p->active_left = 0;
    switch (csrno) {
    case CSR_MPDISCTL:
        pdis_ctl_write(env, val, mask);
        break;
    case CSR_SPDISCTL:
        if (env->virt_enabled) {
            pdis_vsctl_write(env, val, mask);
        } else {
            pdis_ctl_write(env, val, mask & ~PDISCTL_M);
        }
        break;
    case CSR_VSPDISCTL:
        pdis_vsctl_write(env, val, mask);
        break;
    case CSR_SPDISCOUNTER:
        p->counter = (p->counter & ~mask) | (val & mask);
        riscv_pmu_events_counter_written(env, RISCV_PDIS_CTR);
        return;
    case CSR_SPDISEVMASK:
        p->evmask = ((p->evmask & ~mask) | (val & mask)) &
                    RISCV_PMU_EV_SELECTOR_MASK;
        return;
    case CSR_SPDISEVMATCH:
        p->evmatch = ((p->evmatch & ~mask) | (val & mask)) &
                     RISCV_PMU_EV_SELECTOR_MASK;
        return;
    case CSR_SPDISFILTER:
        p->filter = (p->filter & ~mask) | (val & mask &
                    (PDISFILTER_THRESH | PDISFILTER_INV));
        return;
    case CSR_SPDISAMBCS:
        pdis_ambcs_write(env, val, mask);
        return;
    default:
        /* bits 5:0 (RV32 4:0) are 0: see docs/pdis.rst */
        p->ambaddr = ((p->ambaddr & ~mask) | (val & mask)) &
                     pdis_sxlen_mask(env) &
                     ~(uint64_t)(pdis_rec_size(env) - 1);
        return;
    }
    /* what the counter counts may have changed */
    riscv_pmu_events_update(env);
}

RISCVException riscv_pdis_read(CPURISCVState *env, int csrno,
                               target_ulong *val)
{
    if (pdis_csr_rv32_high(csrno)) {
        *val = pdis_reg_read(env, csrno - 0x10) >> 32;
    } else {
        *val = pdis_reg_read(env, csrno);
    }
    return RISCV_EXCP_NONE;
}

RISCVException riscv_pdis_write(CPURISCVState *env, int csrno,
                                target_ulong val)
{
    if (pdis_csr_rv32_high(csrno)) {
        pdis_reg_write(env, csrno - 0x10, (uint64_t)val << 32,
                       MAKE_64BIT_MASK(32, 32));
    } else if (pdis_rv32(env) && csrno != CSR_SPDISFILTER &&
               csrno != CSR_SPDISAMBADDR) {
        pdis_reg_write(env, csrno, (uint32_t)val, MAKE_64BIT_MASK(0, 32));
    } else {
        pdis_reg_write(env, csrno, val, UINT64_MAX);
    }
    return RISCV_EXCP_NONE;
}

/* ---- Sample data registers: siselect/vsiselect 0x60 and 0x61 ---- */

bool riscv_pdis_ireg_select(CPURISCVState *env, target_ulong isel)
{
    return pdis_present(env) && isel >= ISELECT_PDIS_FIRST &&
           isel <= ISELECT_PDIS_LAST;
}

/* 1 for *ireg, 2 for *ireg2 ... 6 for *ireg6. */
static int pdis_ireg_index(int csrno)
{
    int off = csrno & 0xff;

    return off - 0x50 - (off >= 0x55);
}

/*
 * The record field behind (isel, ireg), and which half of it on RV32;
 * NULL for the WPRI and read-only-0 slots.
 */
static uint64_t *pdis_ireg_field(CPURISCVState *env, target_ulong isel,
                                 int ireg, bool *high)
{
    static const int8_t rv64[2][6] = {
        { PDIS_REC_HDREV, PDIS_REC_PC, PDIS_REC_TIME, PDIS_REC_LAT,
          PDIS_REC_ADR1, PDIS_REC_ADR2 },
        { -1, -1, -1, -1, -1, -1 },
    };
    static const int8_t rv32[2][6] = {
        { PDIS_REC_HDREV, PDIS_REC_HDREV, PDIS_REC_PC, PDIS_REC_TIME,
          PDIS_REC_LAT, PDIS_REC_LAT },
        { PDIS_REC_ADR1, PDIS_REC_ADR2, -1, -1, -1, -1 },
    };
    int row = isel - ISELECT_PDIS_FIRST, field;

    if (pdis_rv32(env)) {
        field = rv32[row][ireg - 1];
        *high = row == 0 && (ireg == 2 || ireg == 6);
    } else {
        field = rv64[row][ireg - 1];
        *high = false;
    }
    return field < 0 ? NULL : &env->pdis.data[field];
}

/*
 * Software may write the registers too (to clear or restore them); the
 * stateen checks come first, as for every PDIS register.
 */
RISCVException riscv_pdis_rmw_ireg(CPURISCVState *env, int csrno,
                                   target_ulong isel, target_ulong *val,
                                   target_ulong new_val,
                                   target_ulong wr_mask)
{
    RISCVException ret = riscv_pdis_predicate(env, CSR_SPDISCOUNTER);
    bool high;
    uint64_t *field;
    unsigned shift;
    uint64_t mask;

    if (ret != RISCV_EXCP_NONE) {
        return ret;
    }
    field = pdis_ireg_field(env, isel, pdis_ireg_index(csrno), &high);
    if (!field) {
        if (val) {
            *val = 0;
        }
        return RISCV_EXCP_NONE;
    }
    shift = high ? 32 : 0;
    mask = (uint64_t)(pdis_rv32(env) ? (uint32_t)wr_mask : wr_mask) << shift;
    if (val) {
        *val = *field >> shift;
    }
    *field = (*field & ~mask) | (((uint64_t)new_val << shift) & mask);
    return RISCV_EXCP_NONE;
}

static const RISCVPMUExtraCounter pdis_counter = {
    .class_in_mode = pdis_class,
    .events_to_next = pdis_events_to_select,
    .count = pdis_count,
    .preview = pdis_preview,
    .preview_xret = pdis_preview_xret,
    .set_mode = pdis_set_mode,
};

/* After riscv_pmu_events_reset(): the engine counts the PDIS counter. */
void riscv_pdis_reset(CPURISCVState *env)
{
    memset(&env->pdis, 0, sizeof(env->pdis));
    env->pmu_ev.extra = pdis_present(env) ? &pdis_counter : NULL;
}

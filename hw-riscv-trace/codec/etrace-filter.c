/*
 * E-trace filters and comparators (trTeFilter<i>, trTeComp<j>)
 *
 * Reference: RISC-V Trace Control Interface 1.0, "Trace Encoder Filter
 * Registers"; E-trace v1.1.1 draft, section 2.3 and chapter 5.
 *
 * WARL choices (what a guest reads back):
 * - trTeInstFilters: one bit per implemented filter.
 * - trTeFilter<i>Control: Enable, MatchPrivilege, MatchEcause,
 *   MatchInterrupt and the three MatchComp<k>/Comp<k> pairs; the top bit
 *   of each 3-bit Comp<k> index is not implemented (index & 3).
 *   MatchImpdef, MatchDtype, MatchDsize and reserved bits read 0.
 * - MatchInst: the privilege bits that privilege_width_p can encode, and
 *   MatchValueInterrupt.  MatchEcause: the cause codes that ecause_width_p
 *   can encode (all 64 from width 6).  Impdef, MatchData: read 0.
 * - trTeComp<j>Control: every field but bits 7, 11 and 31:16.  A PInput
 *   or SInput of 3 (daddr, no data trace) leaves that field unchanged.
 *   Writing the register re-arms the latch (set if PFunction is 6 and
 *   MatchMode is 3, clear otherwise).
 * - P/SMatch: max(iaddress_width_p, context_width_p) bits; a comparison
 *   uses only the bits of its input's width.
 *
 * Semantics:
 * - Filter i takes part when its trTeInstFilters bit is set; it matches
 *   an instruction when Enable is set and all its enabled conditions
 *   hold (a disabled selected filter matches nothing).  Filters are ORed;
 *   no selected filter means every instruction is qualified.
 * - MatchEcause/MatchInterrupt: the instructions of the handler of a
 *   trap (the first instruction after an itype 1/2 block) up to and
 *   including the trap return (itype 3) that leaves it, nested traps
 *   included.  The trap must have its cause bit set in MatchEcause (with
 *   MatchEcause) and be an interrupt/exception as MatchValueInterrupt says
 *   (with MatchInterrupt).  Traps are tracked on a stack of
 *   ETRACE_TRAP_DEPTH entries; deeper traps are counted but do not open a
 *   handler window.
 * - Comparator input tval: the tval of the innermost trap whose handler
 *   is running (0 outside handlers), so that "handlers of traps with
 *   particular tval values" is MatchEcause AND a tval comparator.
 * - Comparator state (the latch) only advances while the comparator is in
 *   use: referenced by an enabled selected filter, or watching (notify).
 *   Trap tracking starts when filtering becomes active.
 * - PNotify/SNotify (with input iaddr and a comparing function 0..5) set
 *   .notify on the qualified (sub-)block holding a matching instruction:
 *   as in table 2.6, the block's last instruction is reported, not
 *   necessarily the matching one.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "target/riscv/insn_class.h"
#include "etrace-filter.h"

#define ALL_FILTERS         ((1u << ETRACE_NUM_FILTERS) - 1)
#define COMP_INDEX_MASK     (ETRACE_NUM_COMPARATORS - 1)
#define COMP_CONTROL_MASK   0xf77fu
#define FIELD2(v, shift)    (((v) >> (shift)) & 3u)
#define FIELD3(v, shift)    (((v) >> (shift)) & 7u)

/* Comparator indices must be all the values of the low bits. */
_Static_assert((ETRACE_NUM_COMPARATORS & COMP_INDEX_MASK) == 0 &&
               ETRACE_NUM_COMPARATORS <= 8, "comparators: power of 2");
_Static_assert(ETRACE_NUM_FILTERS <= 16, "trTeInstFilters has 16 bits");

static uint64_t width_mask(unsigned width)
{
    return width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
}

/* MatchData: the dtypes of table 4.9 (15:0), dsize 0 to 3 (23:16) */
#define MATCH_DATA_MASK     0x000f7f73u
#define MATCH_DATA_DSIZE    16

static uint32_t filter_control_mask(void)
{
    uint32_t mask = ETRACE_FCTL_ENABLE | ETRACE_FCTL_MATCH_PRIV |
                    ETRACE_FCTL_MATCH_ECAUSE | ETRACE_FCTL_MATCH_INTERRUPT |
                    ETRACE_FCTL_MATCH_DTYPE | ETRACE_FCTL_MATCH_DSIZE;

    for (unsigned k = 0; k < 3; k++) {
        mask |= ETRACE_FCTL_MATCH_COMP(k) |
                COMP_INDEX_MASK << ETRACE_FCTL_COMP_SHIFT(k);
    }
    return mask;
}

/* ----------------------------------------------------------- comparators */

static unsigned comp_pinput(uint32_t ctl)
{
    return FIELD2(ctl, ETRACE_CCTL_PINPUT_SHIFT);
}

static unsigned comp_sinput(uint32_t ctl)
{
    return FIELD2(ctl, ETRACE_CCTL_SINPUT_SHIFT);
}

static unsigned comp_pfunc(uint32_t ctl)
{
    return FIELD3(ctl, ETRACE_CCTL_PFUNC_SHIFT);
}

static unsigned comp_sfunc(uint32_t ctl)
{
    return FIELD3(ctl, ETRACE_CCTL_SFUNC_SHIFT);
}

static unsigned comp_mode(uint32_t ctl)
{
    return FIELD2(ctl, ETRACE_CCTL_MODE_SHIFT);
}

/* A function that looks at its input (not 6 or 7). */
static bool func_compares(unsigned func)
{
    return func <= ETRACE_COMP_GE;
}

static bool comp_watches_p(uint32_t ctl)
{
    return (ctl & ETRACE_CCTL_PNOTIFY) && comp_pinput(ctl) == 0 &&
           func_compares(comp_pfunc(ctl));
}

static bool comp_watches_s(uint32_t ctl)
{
    return (ctl & ETRACE_CCTL_SNOTIFY) && comp_sinput(ctl) == 0 &&
           func_compares(comp_sfunc(ctl));
}

static bool compare(unsigned func, uint64_t x, uint64_t v)
{
    switch (func) {
    case ETRACE_COMP_EQ:
        return x == v;
    case ETRACE_COMP_NE:
        return x != v;
    case ETRACE_COMP_LT:
        return x < v;
    case ETRACE_COMP_LE:
        return x <= v;
    case ETRACE_COMP_GT:
        return x > v;
    case ETRACE_COMP_GE:
        return x >= v;
    case ETRACE_COMP_FALSE:
        return false;
    default:
        return true;
    }
}

/* Per-block values of the comparator inputs. */
typedef struct BlockInputs {
    uint32_t filters_ok;    /* selected filters whose block conditions hold */
    uint64_t context;
    uint64_t tval;
    uint64_t daddr;         /* a data access's; 0 for instructions */
} BlockInputs;

static uint64_t input_mask(const ETraceFilter *f, unsigned input)
{
    switch (input) {
    case ETRACE_COMP_IADDR:
    case ETRACE_COMP_TVAL:
    case ETRACE_COMP_DADDR:     /* daddress_width_p = iaddress_width_p */
        return f->iaddr_mask;
    case ETRACE_COMP_CONTEXT:
        return f->context_mask;
    default:
        return 0;
    }
}

static uint64_t input_value(unsigned input, uint64_t iaddr,
                            const BlockInputs *in)
{
    switch (input) {
    case ETRACE_COMP_IADDR:
        return iaddr;
    case ETRACE_COMP_CONTEXT:
        return in->context;
    case ETRACE_COMP_TVAL:
        return in->tval;
    default:
        return in->daddr;
    }
}

/* The primary and secondary results of comparator j at one instruction. */
static void comp_eval(const ETraceFilter *f, unsigned j, uint64_t iaddr,
                      const BlockInputs *in, bool *p, bool *s)
{
    uint32_t ctl = f->comp_control[j];
    unsigned pfunc = comp_pfunc(ctl), sfunc = comp_sfunc(ctl);

    if (func_compares(pfunc)) {
        uint64_t mask = input_mask(f, comp_pinput(ctl));

        if (sfunc == ETRACE_COMP_FALSE) {
            /* SFunction 6: SMatch masks both sides of the P compare. */
            mask &= f->comp_smatch[j];
        }
        *p = compare(pfunc, input_value(comp_pinput(ctl), iaddr, in) & mask,
                     f->comp_pmatch[j] & mask);
    } else {
        *p = pfunc == ETRACE_COMP_TRUE;
    }
    if (func_compares(sfunc)) {
        uint64_t mask = input_mask(f, comp_sinput(ctl));

        *s = compare(sfunc, input_value(comp_sinput(ctl), iaddr, in) & mask,
                     f->comp_smatch[j] & mask);
    } else {
        *s = true;
    }
}

/* The comparator output for one instruction; advances the latch. */
static bool comp_step(ETraceFilter *f, unsigned j, bool p, bool s)
{
    bool out;

    switch (comp_mode(f->comp_control[j])) {
    case ETRACE_COMP_P:
        return p;
    case ETRACE_COMP_P_AND_S:
        return p && s;
    case ETRACE_COMP_NOT_P_AND_S:
        return !(p && s);
    default:
        /* Asserted from P up to and including the instruction with S. */
        out = f->comp_latch[j] || p;
        f->comp_latch[j] = out && !s;
        return out;
    }
}

/* ----------------------------------------------------------------- traps */

static bool trap_opens_window(const ETraceFilter *f, unsigned i, unsigned e)
{
    uint32_t ctl = f->filter_control[i];
    uint64_t cause = f->trap_cause[e];

    if ((ctl & ETRACE_FCTL_MATCH_ECAUSE) &&
        !(cause < 64 && (f->filter_match_ecause[i] >> cause & 1))) {
        return false;
    }
    if ((ctl & ETRACE_FCTL_MATCH_INTERRUPT) &&
        f->trap_interrupt[e] !=
        !!(f->filter_match_inst[i] & ETRACE_FMI_VALUE_INTERRUPT)) {
        return false;
    }
    return true;
}

static unsigned traps_tracked(const ETraceFilter *f)
{
    return f->trap_depth < ETRACE_TRAP_DEPTH ? f->trap_depth
                                             : ETRACE_TRAP_DEPTH;
}

/* A filter's window is open while a trap that matches it is unreturned. */
static void update_trap_window(ETraceFilter *f)
{
    unsigned n = traps_tracked(f);

    f->trap_window = 0;
    for (unsigned i = 0; i < ETRACE_NUM_FILTERS; i++) {
        if (!(f->filter_control[i] &
              (ETRACE_FCTL_MATCH_ECAUSE | ETRACE_FCTL_MATCH_INTERRUPT))) {
            continue;
        }
        for (unsigned e = 0; e < n; e++) {
            if (trap_opens_window(f, i, e)) {
                f->trap_window |= 1u << i;
                break;
            }
        }
    }
}

static void trap_enter(ETraceFilter *f, const ETraceBlock *b)
{
    if (f->trap_depth < ETRACE_TRAP_DEPTH) {
        f->trap_cause[f->trap_depth] = b->cause;
        f->trap_interrupt[f->trap_depth] = b->itype == RISCV_ITYPE_INTERRUPT;
        f->trap_tval[f->trap_depth] = b->tval;
    }
    if (f->trap_depth < UINT32_MAX) {
        f->trap_depth++;
    }
    update_trap_window(f);
}

static void trap_return(ETraceFilter *f)
{
    if (f->trap_depth > 0) {
        f->trap_depth--;
        update_trap_window(f);
    }
}

static uint64_t handler_tval(const ETraceFilter *f)
{
    unsigned n = traps_tracked(f);

    return n ? f->trap_tval[n - 1] : 0;
}

/* ------------------------------------------------------------- registers */

/* Recompute what the block path reads from the registers. */
static void update_derived(ETraceFilter *f)
{
    bool watching = false;

    f->comp_used = 0;
    for (unsigned i = 0; i < ETRACE_NUM_FILTERS; i++) {
        uint32_t ctl = f->filter_control[i], need = 0;

        for (unsigned k = 0; k < 3; k++) {
            if (ctl & ETRACE_FCTL_MATCH_COMP(k)) {
                need |= 1u << ((ctl >> ETRACE_FCTL_COMP_SHIFT(k)) &
                               COMP_INDEX_MASK);
            }
        }
        f->comp_need[i] = need;
        if ((f->inst_filters >> i & 1) && (ctl & ETRACE_FCTL_ENABLE)) {
            f->comp_used |= need;
        }
    }
    for (unsigned j = 0; j < ETRACE_NUM_COMPARATORS; j++) {
        if (comp_watches_p(f->comp_control[j]) ||
            comp_watches_s(f->comp_control[j])) {
            f->comp_used |= 1u << j;
            watching = true;
        }
    }
    f->active = f->inst_filters != 0 || watching;
    update_trap_window(f);
}

void etrace_filter_reset(ETraceFilter *f)
{
    memset(f->filter_control, 0, sizeof(f->filter_control));
    memset(f->filter_match_inst, 0, sizeof(f->filter_match_inst));
    memset(f->filter_match_ecause, 0, sizeof(f->filter_match_ecause));
    memset(f->filter_match_data, 0, sizeof(f->filter_match_data));
    memset(f->comp_control, 0, sizeof(f->comp_control));
    memset(f->comp_pmatch, 0, sizeof(f->comp_pmatch));
    memset(f->comp_smatch, 0, sizeof(f->comp_smatch));
    memset(f->comp_latch, 0, sizeof(f->comp_latch));
    memset(f->trap_cause, 0, sizeof(f->trap_cause));
    memset(f->trap_interrupt, 0, sizeof(f->trap_interrupt));
    memset(f->trap_tval, 0, sizeof(f->trap_tval));
    f->inst_filters = 0;
    f->data_filters = 0;
    f->trap_depth = 0;
    f->prev_qualified = true;
    update_derived(f);
}

void etrace_filter_init(ETraceFilter *f, const ETraceParams *p,
                        ETraceInsnLenFn *insn_len, void *opaque)
{
    unsigned iaddr_width = p ? p->iaddress_width_p : 64;
    unsigned context_width = p ? p->context_width_p : 64;
    unsigned ecause_width = p ? p->ecause_width_p : 6;
    unsigned priv_width = p ? p->privilege_width_p : 3;

    memset(f, 0, sizeof(*f));
    if (iaddr_width == 0 || iaddr_width > 64) {
        iaddr_width = 64;
    }
    f->iaddr_mask = width_mask(iaddr_width);
    f->context_mask = width_mask(context_width);
    f->match_mask = f->iaddr_mask | f->context_mask;
    /* One choice bit per cause code the cause bus can carry. */
    f->ecause_mask = ecause_width >= 6 ? UINT64_MAX
                                       : width_mask(1u << ecause_width);
    f->priv_mask = priv_width >= 3 ? ETRACE_FMI_PRIV_MASK
                                   : (uint32_t)width_mask(1u << priv_width);
    f->insn_len = insn_len;
    f->insn_len_opaque = opaque;
    etrace_filter_reset(f);
}

void etrace_filter_post_load(ETraceFilter *f)
{
    f->inst_filters &= ALL_FILTERS;
    for (unsigned i = 0; i < ETRACE_NUM_FILTERS; i++) {
        f->filter_control[i] &= filter_control_mask();
        f->filter_match_inst[i] &= f->priv_mask | ETRACE_FMI_VALUE_INTERRUPT;
        f->filter_match_ecause[i] &= f->ecause_mask;
        f->filter_match_data[i] &= MATCH_DATA_MASK;
    }
    f->data_filters &= ALL_FILTERS;
    for (unsigned j = 0; j < ETRACE_NUM_COMPARATORS; j++) {
        f->comp_control[j] &= COMP_CONTROL_MASK;
        f->comp_pmatch[j] &= f->match_mask;
        f->comp_smatch[j] &= f->match_mask;
    }
    update_derived(f);
}

static uint32_t half(uint64_t v, bool high)
{
    return high ? (uint32_t)(v >> 32) : (uint32_t)v;
}

static uint64_t set_half(uint64_t v, bool high, uint32_t value)
{
    if (high) {
        return (v & UINT32_MAX) | (uint64_t)value << 32;
    }
    return (v & ~(uint64_t)UINT32_MAX) | value;
}

static uint32_t filter_read(const ETraceFilter *f, unsigned i, unsigned reg)
{
    switch (reg) {
    case ETRACE_FILTER_CONTROL:
        return f->filter_control[i];
    case ETRACE_FILTER_MATCH_INST:
        return f->filter_match_inst[i];
    case ETRACE_FILTER_ECAUSE_LOW:
    case ETRACE_FILTER_ECAUSE_HIGH:
        return half(f->filter_match_ecause[i],
                    reg == ETRACE_FILTER_ECAUSE_HIGH);
    case ETRACE_FILTER_MATCH_DATA:
        return f->filter_match_data[i];
    default:
        return 0;   /* impdef and reserved: not implemented */
    }
}

static uint32_t comp_read(const ETraceFilter *f, unsigned j, unsigned reg)
{
    switch (reg) {
    case ETRACE_COMP_CONTROL:
        return f->comp_control[j];
    case ETRACE_COMP_PMATCH_LOW:
    case ETRACE_COMP_PMATCH_HIGH:
        return half(f->comp_pmatch[j], reg == ETRACE_COMP_PMATCH_HIGH);
    case ETRACE_COMP_SMATCH_LOW:
    case ETRACE_COMP_SMATCH_HIGH:
        return half(f->comp_smatch[j], reg == ETRACE_COMP_SMATCH_HIGH);
    default:
        return 0;
    }
}

/* Which unit a register offset in 0x400..0x7FF belongs to. */
typedef struct RegAddr {
    bool comp;          /* trTeComp<unit>, else trTeFilter<unit> */
    unsigned unit;
    unsigned reg;       /* offset in the unit */
} RegAddr;

static RegAddr decode_offset(uint64_t offset)
{
    RegAddr ra = { .comp = offset >= ETRACE_REG_COMP_BASE };
    uint64_t base = ra.comp ? ETRACE_REG_COMP_BASE : ETRACE_REG_FILTER_BASE;

    ra.unit = (offset - base) / ETRACE_REG_STRIDE;
    ra.reg = offset % ETRACE_REG_STRIDE;
    return ra;
}

uint32_t etrace_filter_read(const ETraceFilter *f, uint64_t offset)
{
    RegAddr ra;

    if ((offset & 3) || !etrace_filter_is_reg(offset)) {
        return 0;
    }
    if (offset == ETRACE_REG_INST_FILTERS) {
        return f->inst_filters;
    }
    if (offset == ETRACE_REG_DATA_FILTERS) {
        return f->data_filters;
    }
    ra = decode_offset(offset);
    if (!ra.comp) {
        return ra.unit < ETRACE_NUM_FILTERS ? filter_read(f, ra.unit, ra.reg)
                                            : 0;
    }
    return ra.unit < ETRACE_NUM_COMPARATORS ? comp_read(f, ra.unit, ra.reg)
                                            : 0;
}

static void filter_write(ETraceFilter *f, unsigned i, unsigned reg,
                         uint32_t value)
{
    uint64_t *ecause = &f->filter_match_ecause[i];

    switch (reg) {
    case ETRACE_FILTER_CONTROL:
        f->filter_control[i] = value & filter_control_mask();
        break;
    case ETRACE_FILTER_MATCH_INST:
        f->filter_match_inst[i] =
            value & (f->priv_mask | ETRACE_FMI_VALUE_INTERRUPT);
        break;
    case ETRACE_FILTER_ECAUSE_LOW:
    case ETRACE_FILTER_ECAUSE_HIGH:
        *ecause = set_half(*ecause, reg == ETRACE_FILTER_ECAUSE_HIGH, value) &
                  f->ecause_mask;
        break;
    case ETRACE_FILTER_MATCH_DATA:
        f->filter_match_data[i] = value & MATCH_DATA_MASK;
        break;
    default:
        break;
    }
}

static void comp_write(ETraceFilter *f, unsigned j, unsigned reg,
                       uint32_t value)
{
    uint32_t ctl;

    switch (reg) {
    case ETRACE_COMP_CONTROL:
        ctl = value & COMP_CONTROL_MASK;
        f->comp_control[j] = ctl;
        f->comp_latch[j] = comp_pfunc(ctl) == ETRACE_COMP_FALSE &&
                           comp_mode(ctl) == ETRACE_COMP_LATCH;
        break;
    case ETRACE_COMP_PMATCH_LOW:
    case ETRACE_COMP_PMATCH_HIGH:
        f->comp_pmatch[j] = set_half(f->comp_pmatch[j],
                                     reg == ETRACE_COMP_PMATCH_HIGH, value) &
                            f->match_mask;
        break;
    case ETRACE_COMP_SMATCH_LOW:
    case ETRACE_COMP_SMATCH_HIGH:
        f->comp_smatch[j] = set_half(f->comp_smatch[j],
                                     reg == ETRACE_COMP_SMATCH_HIGH, value) &
                            f->match_mask;
        break;
    default:
        break;
    }
}

void etrace_filter_write(ETraceFilter *f, uint64_t offset, uint32_t value)
{
    bool was_active = f->active;
    RegAddr ra;

    if ((offset & 3) || !etrace_filter_is_reg(offset)) {
        return;
    }
    if (offset == ETRACE_REG_INST_FILTERS) {
        f->inst_filters = value & ALL_FILTERS;
    } else if (offset == ETRACE_REG_DATA_FILTERS) {
        f->data_filters = value & ALL_FILTERS;
    } else {
        ra = decode_offset(offset);
        if (!ra.comp && ra.unit < ETRACE_NUM_FILTERS) {
            filter_write(f, ra.unit, ra.reg, value);
        } else if (ra.comp && ra.unit < ETRACE_NUM_COMPARATORS) {
            comp_write(f, ra.unit, ra.reg, value);
        }
    }
    update_derived(f);
    if (!was_active && f->active) {
        /* Everything was qualified; traps are tracked from now on. */
        f->prev_qualified = true;
        f->trap_depth = 0;
        update_trap_window(f);
    }
}

/* ---------------------------------------------------------------- blocks */

/* Selected, enabled filters whose per-block conditions hold for b. */
static uint32_t filters_ok(const ETraceFilter *f, const ETraceBlock *b)
{
    uint32_t ok = 0;

    for (unsigned i = 0; i < ETRACE_NUM_FILTERS; i++) {
        uint32_t ctl = f->filter_control[i];

        if (!(f->inst_filters >> i & 1) || !(ctl & ETRACE_FCTL_ENABLE)) {
            continue;
        }
        if ((ctl & ETRACE_FCTL_MATCH_PRIV) &&
            !(b->priv < 8 && (f->filter_match_inst[i] >> b->priv & 1))) {
            continue;
        }
        if ((ctl & (ETRACE_FCTL_MATCH_ECAUSE | ETRACE_FCTL_MATCH_INTERRUPT))
            && !(f->trap_window >> i & 1)) {
            continue;
        }
        ok |= 1u << i;
    }
    return ok;
}

/*
 * Qualification of the instruction at iaddr; advances the comparators.
 * *watch is set when a watching comparator matched.
 */
static bool insn_step(ETraceFilter *f, const BlockInputs *in, uint64_t iaddr,
                      bool *watch)
{
    uint32_t comp_out = 0;

    *watch = false;
    for (unsigned j = 0; j < ETRACE_NUM_COMPARATORS; j++) {
        uint32_t ctl = f->comp_control[j];
        bool p, s;

        if (!(f->comp_used >> j & 1)) {
            continue;
        }
        comp_eval(f, j, iaddr, in, &p, &s);
        if (comp_step(f, j, p, s)) {
            comp_out |= 1u << j;
        }
        if ((p && comp_watches_p(ctl)) || (s && comp_watches_s(ctl))) {
            *watch = true;
        }
    }
    if (f->inst_filters == 0) {
        return true;
    }
    for (unsigned i = 0; i < ETRACE_NUM_FILTERS; i++) {
        if ((in->filters_ok >> i & 1) &&
            (comp_out & f->comp_need[i]) == f->comp_need[i]) {
            return true;
        }
    }
    return false;
}

/* Whether an iaddr compare gives one result for all of [first, last]. */
static bool iaddr_compare_uniform(unsigned func, uint64_t first,
                                  uint64_t last, uint64_t v)
{
    switch (func) {
    case ETRACE_COMP_EQ:
    case ETRACE_COMP_NE:
        return v < first || v > last;
    case ETRACE_COMP_LT:
    case ETRACE_COMP_LE:
    case ETRACE_COMP_GT:
    case ETRACE_COMP_GE:
        return compare(func, first, v) == compare(func, last, v);
    default:
        return true;
    }
}

/*
 * True when every instruction from first to last (addresses) would give
 * the same comparator outputs, so that one step stands for all of them.
 */
static bool block_uniform(const ETraceFilter *f, const BlockInputs *in,
                          uint64_t first, uint64_t last)
{
    uint64_t lo = first & f->iaddr_mask, hi = last & f->iaddr_mask;

    if (first == last) {
        return true;
    }
    if (hi < lo) {
        return false;   /* wraps around the address width */
    }
    for (unsigned j = 0; j < ETRACE_NUM_COMPARATORS; j++) {
        uint32_t ctl = f->comp_control[j];
        unsigned pfunc = comp_pfunc(ctl), sfunc = comp_sfunc(ctl);
        bool p, s;

        if (!(f->comp_used >> j & 1)) {
            continue;
        }
        if (comp_pinput(ctl) == ETRACE_COMP_IADDR && func_compares(pfunc)) {
            if (sfunc == ETRACE_COMP_FALSE) {
                return false;   /* a masked compare is not monotonic */
            }
            if (!iaddr_compare_uniform(pfunc, lo, hi,
                                       f->comp_pmatch[j] & f->iaddr_mask)) {
                return false;
            }
        }
        if (comp_sinput(ctl) == ETRACE_COMP_IADDR && func_compares(sfunc) &&
            !iaddr_compare_uniform(sfunc, lo, hi,
                                   f->comp_smatch[j] & f->iaddr_mask)) {
            return false;
        }
        /* A set latch cleared by S drops after the first instruction. */
        if (comp_mode(ctl) == ETRACE_COMP_LATCH && f->comp_latch[j]) {
            comp_eval(f, j, first, in, &p, &s);
            if (!p && s) {
                return false;
            }
        }
    }
    return true;
}

/* A run of instructions of the block being filtered, with one qualification. */
typedef struct Part {
    uint64_t start, end;    /* byte offsets in the block */
    unsigned last_len;      /* bytes of its last instruction */
    uint32_t ninsns;
    bool qualified;
    bool notify;
} Part;

static void emit_part(const ETraceBlock *b, const Part *part, bool is_first,
                      bool is_last, ETraceBlockFn *out, void *opaque)
{
    ETraceBlock sub = *b;

    sub.iaddr = b->iaddr + part->start;
    sub.iretire = (part->end - part->start) / 2;
    sub.ninsns = part->ninsns;
    sub.qualified = part->qualified;
    sub.notify = part->notify || (is_last && b->notify);
    if (!is_first) {
        sub.ctype = 0;      /* a context change is reported at its start */
    }
    if (!is_last) {
        sub.ilastsize = part->last_len == 4;
        sub.itype = RISCV_ITYPE_NONE;
        sub.sijump = false;
        sub.cause = 0;
        sub.tval = 0;
    }
    out(opaque, &sub);
}

static unsigned insn_len_at(const ETraceFilter *f, uint64_t addr)
{
    return f->insn_len(f->insn_len_opaque, addr) == 4 ? 4 : 2;
}

/*
 * Instruction by instruction over b (span bytes, the last instruction at
 * last_off): split where qualification changes, or without an insn_len
 * callback, step every half-word and qualify the whole block if any is.
 */
static void walk_block(ETraceFilter *f, const ETraceBlock *b,
                       const BlockInputs *in, uint64_t span, uint64_t last_off,
                       ETraceBlockFn *out, void *opaque)
{
    bool split = f->insn_len != NULL, is_first = true, q = false, watch;
    Part part = { 0 };
    uint64_t off = 0;
    unsigned len = 0;

    while (off < span) {
        if (off >= last_off) {
            len = span - off;
        } else {
            len = split ? insn_len_at(f, b->iaddr + off) : 2;
            /* Trust the block's own last instruction over the callback. */
            if (off + len > last_off) {
                len = last_off - off;
            }
        }
        q = insn_step(f, in, b->iaddr + off, &watch);
        if (off == 0) {
            part.qualified = q;
        } else if (split && q != part.qualified) {
            part.end = off;
            emit_part(b, &part, is_first, false, out, opaque);
            is_first = false;
            part = (Part) { .start = off, .qualified = q };
        }
        part.qualified |= q;
        part.notify |= watch && q;
        part.ninsns++;
        part.last_len = len;
        off += len;
    }
    part.end = span;
    if (!split) {
        part.ninsns = b->ninsns;
        q = part.qualified;
    }
    emit_part(b, &part, is_first, true, out, opaque);
    f->prev_qualified = q;
}

static void qualify_block(ETraceFilter *f, const ETraceBlock *b,
                          ETraceBlockFn *out, void *opaque)
{
    BlockInputs in = {
        .filters_ok = filters_ok(f, b),
        .context = b->context,
        .tval = handler_tval(f),
    };
    uint64_t span = 2 * (uint64_t)b->iretire;
    uint64_t last_len = b->ilastsize ? 4 : 2;
    uint64_t last_off = span > last_len ? span - last_len : 0;
    Part part = { .end = span, .last_len = last_len, .ninsns = b->ninsns };
    bool watch;

    if (span == 0) {
        /* A trap alone belongs to the instruction retired before it. */
        part.qualified = f->prev_qualified;
        emit_part(b, &part, true, true, out, opaque);
        return;
    }
    if (!block_uniform(f, &in, b->iaddr, b->iaddr + last_off)) {
        walk_block(f, b, &in, span, last_off, out, opaque);
        return;
    }
    part.qualified = insn_step(f, &in, b->iaddr, &watch);
    part.notify = watch && part.qualified;
    emit_part(b, &part, true, true, out, opaque);
    f->prev_qualified = part.qualified;
}

void etrace_filter_block(ETraceFilter *f, const ETraceBlock *b,
                         ETraceBlockFn *out, void *opaque)
{
    if (!f->active) {
        ETraceBlock copy;

        if (b->qualified) {
            out(opaque, b);
            return;
        }
        copy = *b;
        copy.qualified = true;
        out(opaque, &copy);
        return;
    }
    qualify_block(f, b, out, opaque);
    /* Traps and returns take effect after the block's last instruction. */
    if (b->itype == RISCV_ITYPE_EXCEPTION ||
        b->itype == RISCV_ITYPE_INTERRUPT) {
        trap_enter(f, b);
    } else if (b->itype == RISCV_ITYPE_TRAP_RETURN) {
        trap_return(f);
    }
}

/* ------------------------------------------------------------------ data */

/* Whether filter i's conditions hold for a data access. */
static bool data_filter_ok(const ETraceFilter *f, unsigned i, unsigned dtype,
                           unsigned dsize, unsigned priv,
                           const BlockInputs *in, uint64_t iaddr)
{
    uint32_t ctl = f->filter_control[i], match = f->filter_match_data[i];

    if ((ctl & ETRACE_FCTL_MATCH_PRIV) &&
        !(priv < 8 && (f->filter_match_inst[i] >> priv & 1))) {
        return false;
    }
    if ((ctl & (ETRACE_FCTL_MATCH_ECAUSE | ETRACE_FCTL_MATCH_INTERRUPT)) &&
        !(f->trap_window >> i & 1)) {
        return false;
    }
    if ((ctl & ETRACE_FCTL_MATCH_DTYPE) &&
        !(dtype < 16 && match >> dtype & 1)) {
        return false;
    }
    if ((ctl & ETRACE_FCTL_MATCH_DSIZE) &&
        !(dsize < 4 && match >> (MATCH_DATA_DSIZE + dsize) & 1)) {
        return false;
    }
    for (unsigned j = 0; j < ETRACE_NUM_COMPARATORS; j++) {
        bool p, s, out;

        if (!(f->comp_need[i] >> j & 1)) {
            continue;
        }
        comp_eval(f, j, iaddr, in, &p, &s);
        switch (comp_mode(f->comp_control[j])) {
        case ETRACE_COMP_P:
            out = p;
            break;
        case ETRACE_COMP_P_AND_S:
            out = p && s;
            break;
        case ETRACE_COMP_NOT_P_AND_S:
            out = !(p && s);
            break;
        default:
            out = f->comp_latch[j] || p;
            break;
        }
        if (!out) {
            return false;
        }
    }
    return true;
}

bool etrace_filter_data(const ETraceFilter *f, unsigned dtype, unsigned dsize,
                        uint64_t daddr, uint64_t iaddr, unsigned priv,
                        uint64_t context)
{
    BlockInputs in = {
        .context = context & f->context_mask,
        .tval = handler_tval(f) & f->iaddr_mask,
        .daddr = daddr & f->iaddr_mask,
    };

    if (!f->data_filters) {
        return true;
    }
    iaddr &= f->iaddr_mask;
    for (unsigned i = 0; i < ETRACE_NUM_FILTERS; i++) {
        if ((f->data_filters >> i & 1) &&
            (f->filter_control[i] & ETRACE_FCTL_ENABLE) &&
            data_filter_ok(f, i, dtype, dsize, priv, &in, iaddr)) {
            return true;
        }
    }
    return false;
}

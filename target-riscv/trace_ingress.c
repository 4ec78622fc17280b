/*
 * RISC-V instruction trace ingress: the hart side
 *
 * Translated code appends block records to the room the encoder lent
 * (env->trace_ptr, see trace_ingress_translate.c.inc); this file adds the
 * records only C knows about (traps, the part of a block before a trap in
 * its middle, wfi) and hands them over.  The room belongs to the hart's
 * thread: records are handed over there, and a device on another thread
 * asks for them through riscv_trace_run_on_hart().
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "cpu.h"
#include "trace_ingress.h"
#include "insn_class.h"
#include "exec/exec-all.h"
#include "exec/helper-proto.h"
#include "tcg/tcg.h"
#include "hw/core/cpu.h"
#include "system/runstate.h"

uint64_t riscv_trace_cs_base(CPURISCVState *env)
{
    return qatomic_read(&env->trace_run.cs_base);
}

/* The TBs to translate, after trace_on or a field of trace_run changed */
static void trace_update_cs_base(CPURISCVState *env)
{
    const RISCVTraceRun *run = &env->trace_run;
    uint64_t cs_base = RISCV_CS_BASE_TRACE;

    if (!env->trace_on) {
        cs_base = 0;
    } else if (run->data) {
        cs_base |= RISCV_CS_BASE_TRACE_DATA;
    } else if (run->enabled) {
        cs_base |= RISCV_CS_BASE_TRACE_RUNS |
                   (run->count_units ? RISCV_CS_BASE_TRACE_UNITS : 0) |
                   (run->hold_calls ? RISCV_CS_BASE_TRACE_CALLS : 0) |
                   (run->index_branches ? RISCV_CS_BASE_TRACE_INDEX : 0) |
                   (run->count_branches ? RISCV_CS_BASE_TRACE_COUNTS : 0);
    }
    qatomic_set(&env->trace_run.cs_base, cs_base);
}

/*
 * Take the room the consumer lends, records [first, *limit), at least
 * ETRACE_PACKED_LEN_MAX + 1 of them.  Its last ETRACE_PACKED_LEN_MAX
 * slots are a spare: env->trace_limit stops short of them, so whoever
 * finds trace_ptr below trace_limit can store the longest record and
 * one more (an indexed run and the block after it) before checking for
 * room.
 */
static void trace_take_room(CPURISCVState *env, RISCVTraceRecord *first,
                            RISCVTraceRecord *limit)
{
    env->trace_ptr = first;
    env->trace_limit = limit - ETRACE_PACKED_LEN_MAX;
}

/*
 * Hand the records to the encoder (which takes its lock if it needs it)
 * and take the room it lends for the next ones.
 */
static void trace_drain(CPURISCVState *env)
{
    RISCVTraceRecord *first, *limit;

    if (env->trace_consume) {
        first = env->trace_consume(env->trace_opaque, env->trace_ptr, &limit);
        trace_take_room(env, first, limit);
    }
}

void helper_trace_drain(CPURISCVState *env)
{
    trace_drain(env);
}

/*
 * Append n records (a trap's pair, or one) from C, and hand them over
 * when the room is full: translated code stores its record before it
 * checks, so trace_ptr is never left at trace_limit.
 */
static void trace_put(CPURISCVState *env, const RISCVTraceRecord *rec,
                      unsigned n)
{
    assert(n <= 2);
    memcpy(env->trace_ptr, rec, n * sizeof(*rec));
    env->trace_ptr += n;
    if (env->trace_ptr >= env->trace_limit) {
        trace_drain(env);
    }
}

/* A run's totals fit its record's 16-bit fields (trace_ingress.h) */
QEMU_BUILD_BUG_ON(RISCV_TRACE_RUN_MAX * TCG_MAX_INSNS * 2 > 0xffff);

static bool trace_is_branch(uint64_t info)
{
    unsigned itype = extract64(info, ETRACE_PB_ITYPE_SHIFT, 4);

    return itype == RISCV_ITYPE_TAKEN_BRANCH ||
           itype == RISCV_ITYPE_NOT_TAKEN_BRANCH;
}

/*
 * Append the blocks held back (see RISCVTraceRun), if an encoder is
 * attached, from C (what comes next may need the address of the last
 * instruction retired): a run record with the outcomes of the branches
 * among them but a newest branch, then the newest block whole.  A run of
 * only a newest branch has no record, but may follow a block held alone
 * (units counted), whose record is in place at trace_ptr
 * (gen_trace_hold_alone()): it stays.  The next block that may be held
 * goes whole.  Translated code ends runs itself, without the newest
 * (gen_trace_run_end()).
 */
static void trace_run_end(CPURISCVState *env)
{
    RISCVTraceRun *run = &env->trace_run;
    uint64_t map = run->map;
    uint64_t newest = riscv_trace_info_of_held(run->newest.info);
    unsigned branches = 63 - ctz64(map);     /* WHOLE: 63, NONE: 0 */
    uint64_t units = run->units;
    RISCVTraceRecord *slot;
    unsigned n;

    run->map = RISCV_TRACE_RUN_WHOLE;
    run->units = 0;
    run->newest.info = 0;
    if (!newest || branches > RISCV_TRACE_RUN_MAX || !env->trace_consume) {
        return;
    }
    slot = env->trace_ptr;
    /* the outcomes, oldest in bit 0, of all but a newest branch */
    n = branches - trace_is_branch(newest);
    if (n) {
        slot->iaddr = extract64(map, 64 - branches, n) | BIT_ULL(n);
        /* units: 0 if not counted, else the newest's and more */
        if (units) {
            units -= newest & RISCV_TRACE_RUN_UNITS;
        }
        slot->info = units |
                     (newest & MAKE_64BIT_MASK(ETRACE_PB_PRIV_SHIFT, 3)) |
                     ETRACE_PB_RUN;
        /*
         * The held branches stored their entries (or counts) after the
         * slot; a newest branch's is past the n of the run, and the
         * newest's record may cover it.
         */
        if (run->index_branches) {
            slot->info |= ETRACE_PB_RUN_INDEXED |
                          deposit64(0, ETRACE_PB_ITYPE_SHIFT, 4,
                                    etrace_run_entry_slots(n));
        } else if (run->count_branches) {
            slot->info |= ETRACE_PB_RUN_COUNTED |
                          deposit64(0, ETRACE_PB_ITYPE_SHIFT, 4,
                                    etrace_run_count_slots(n));
        }
        slot += etrace_packed_len(slot->info);
    } else if (units > (newest & RISCV_TRACE_RUN_UNITS)) {
        slot++;
    }
    /*
     * Field by field: translated code stored them one at a time, and a
     * load spanning both would wait for the stores to retire.
     */
    slot->iaddr = run->newest.iaddr;
    slot->info = newest;
    slot++;
    env->trace_ptr = slot;
    if (slot >= env->trace_limit) {
        trace_drain(env);
    }
}

/* trace_put() after the blocks held back. */
static void trace_push(CPURISCVState *env, const RISCVTraceRecord *rec,
                       unsigned n)
{
    trace_run_end(env);
    trace_put(env, rec, n);
}

static uint64_t trace_priv_info(target_ulong priv, bool virt)
{
    return deposit64(0, ETRACE_PB_PRIV_SHIFT, 2, priv) |
           (virt ? ETRACE_PB_VIRT : 0);
}

/* Instructions [trace_blk_start, end) retired; the last one is last_len. */
static void trace_add_block(CPURISCVState *env, target_ulong end,
                            unsigned ninsns, unsigned last_len)
{
    RISCVTraceRecord rec = {
        .iaddr = env->trace_blk_start,
        .info = deposit64(0, ETRACE_PB_IRETIRE_SHIFT, 16,
                          (end - env->trace_blk_start) / 2) |
                deposit64(0, ETRACE_PB_NINSNS_SHIFT, 16, ninsns) |
                (last_len == 4 ? ETRACE_PB_ILASTSIZE : 0) |
                trace_priv_info(env->priv, env->virt_enabled),
    };

    trace_push(env, &rec, 1);
    env->trace_blk_start = end;
}

/*
 * The address of the first instruction of tb, which holds the one at pc.
 * A TB with CF_PCREL knows only the page offset of its start (from its
 * physical address), on pc's page: a TB ends at a page boundary, only
 * its first instruction may cross one (riscv_tr_translate_insn()).
 * Without a physical page, the TB start stored it (gen_trace_tb_start()).
 */
static uint64_t trace_tb_start(CPURISCVState *env, const TranslationBlock *tb,
                               uint64_t pc)
{
    tb_page_addr_t phys = tb_page_addr0(tb);

    if (!(tb_cflags(tb) & CF_PCREL)) {
        return tb->pc;
    }
    if (phys == -1) {
        return env->trace_blk_start;
    }
    return (pc & TARGET_PAGE_MASK) | (phys & ~TARGET_PAGE_MASK);
}

/*
 * A helper interrupted a traced TB at the instruction at pc, which did not
 * retire (riscv_restore_state_to_opc): report the ones before it.
 */
void riscv_trace_restore(CPURISCVState *env, const TranslationBlock *tb,
                         uint64_t data0, uint64_t pc)
{
    unsigned index = extract64(data0, RISCV_TRACE_START_INDEX_SHIFT,
                               RISCV_TRACE_START_INDEX_BITS);

    if (!(tb->cs_base & RISCV_CS_BASE_TRACE)) {
        return;
    }
    /* translated code stores it only where it can not compute it */
    env->trace_blk_start = trace_tb_start(env, tb, pc);
    if (index) {
        trace_add_block(env, pc, index,
                        data0 & RISCV_TRACE_START_PREV_RVC ? 2 : 4);
    }
}

/* A trap after the last retired instruction (riscv_cpu_do_interrupt). */
void riscv_trace_trap(CPURISCVState *env, bool async, uint64_t cause,
                      uint64_t epc, uint64_t tval, unsigned prev_priv,
                      bool prev_virt)
{
    RISCVTraceRecord rec[2] = {
        {
            .iaddr = epc,
            .info = deposit64(0, ETRACE_PB_ITYPE_SHIFT, 4, async ? 2 : 1) |
                    trace_priv_info(prev_priv, prev_virt),
        }, {
            .cause = cause,
            .tval = tval,
        },
    };

    if (qatomic_read(&env->trace_on)) {
        trace_push(env, rec, 2);
        env->trace_run.map = RISCV_TRACE_RUN_WHOLE_TWICE;
    }
}

/*
 * The address space (satp.ASID) is the context the encoder reports: a
 * change is reported imprecisely (ctype 1), so it needs no block of its
 * own; the record goes before the block that holds the csrw.
 */
void riscv_trace_context(CPURISCVState *env, uint64_t asid)
{
    RISCVTraceRecord rec = { .iaddr = asid, .info = RISCV_TRACE_CONTEXT };

    if (qatomic_read(&env->trace_on)) {
        trace_push(env, &rec, 1);
    }
}

/*
 * wfi retires and then stops the hart from its helper, whose TB is left
 * without passing an exit: report the block up to and including it.
 */
void riscv_trace_wfi(CPURISCVState *env, uintptr_t ra)
{
    CPUState *cs = env_cpu(env);
    target_ulong next = env->pc;

    if (!qatomic_read(&env->trace_on)) {
        return;
    }
    /* Reports the instructions before the wfi; env->pc becomes the wfi. */
    cpu_restore_state(cs, ra);
    trace_add_block(env, next, 1, 4);
    env->pc = next;
}

/*
 * While the hart does not trace (or from its own thread): the encoder's
 * first call lends the first room.  NULL detaches.
 */
void riscv_trace_attach(CPUState *cs, RISCVTraceConsumeFn *fn, void *opaque)
{
    CPURISCVState *env = cpu_env(cs);

    env->trace_consume = fn;
    env->trace_opaque = opaque;
    env->trace_run.map = RISCV_TRACE_RUN_WHOLE;
    env->trace_run.units = 0;
    env->trace_run.newest.info = 0;
    if (fn) {
        RISCVTraceRecord *limit, *first = fn(opaque, NULL, &limit);

        trace_take_room(env, first, limit);
    } else {
        env->trace_ptr = env->trace_limit = NULL;
    }
}

void riscv_trace_append(CPUState *cs, const RISCVTraceRecord *rec)
{
    CPURISCVState *env = cpu_env(cs);

    trace_push(env, rec, 1);
    trace_drain(env);
}

/*
 * Translated code follows from the next TB lookup on; cpu_exit() leaves
 * the chained TBs the hart may be running.
 */
void riscv_trace_set_active(CPUState *cs, bool on)
{
    qatomic_set(&cpu_env(cs)->trace_on, on);
    trace_update_cs_base(cpu_env(cs));
    cpu_exit(cs);
}

/*
 * While the hart traces, on its thread: the blocks held back go first,
 * and TBs of the new kind follow from the next lookup.  Inside a TB (a
 * device register written by the hart), the TB ends as it was
 * translated and the hart leaves its chain of TBs before the next one.
 */
void riscv_trace_set_runs(CPUState *cs, bool on, bool count_units,
                          bool hold_calls, bool index_branches,
                          bool count_branches)
{
    CPURISCVState *env = cpu_env(cs);

    trace_run_end(env);
    qatomic_set(&env->trace_run.count_units, count_units);
    qatomic_set(&env->trace_run.hold_calls, hold_calls);
    qatomic_set(&env->trace_run.index_branches, index_branches);
    qatomic_set(&env->trace_run.count_branches, count_branches);
    qatomic_set(&env->trace_run.enabled, on);
    trace_update_cs_base(env);
    if (current_cpu == cs) {
        cpu_exit(cs);
    }
}

/*
 * Like riscv_trace_set_runs(): the blocks held back go first, and TBs of
 * the new kind follow from the next lookup.
 */
void riscv_trace_set_data(CPUState *cs, bool on)
{
    CPURISCVState *env = cpu_env(cs);

    trace_run_end(env);
    qatomic_set(&env->trace_run.data, on);
    trace_update_cs_base(env);
    if (current_cpu == cs) {
        cpu_exit(cs);
    }
}

/*
 * On the hart's thread, also inside a TB: the records so far reach the
 * consumer now.  The TB's own block is not among them.
 */
void riscv_trace_flush(CPUState *cs)
{
    CPURISCVState *env = cpu_env(cs);

    trace_run_end(env);
    trace_drain(env);
}

typedef struct TraceHartWork {
    void (*fn)(void *opaque);
    void *opaque;
} TraceHartWork;

static void trace_hart_work(CPUState *cs, run_on_cpu_data data)
{
    TraceHartWork *work = data.host_ptr;

    riscv_trace_flush(cs);
    if (work->fn) {
        work->fn(work->opaque);
    }
    g_free(work);
}

/*
 * Run fn after the hart's pending records reached the encoder.  While the
 * VM does not run, that is now; otherwise the hart does it between two
 * TBs, also when the request comes from its own thread: an MMIO store is
 * in the middle of a TB whose exit still appends a record.
 */
void riscv_trace_run_on_hart(CPUState *cs, void (*fn)(void *opaque),
                             void *opaque)
{
    TraceHartWork *work = g_new0(TraceHartWork, 1);

    work->fn = fn;
    work->opaque = opaque;
    if (!runstate_is_running() || !cs->created) {
        trace_hart_work(cs, RUN_ON_CPU_HOST_PTR(work));
    } else {
        async_run_on_cpu(cs, trace_hart_work, RUN_ON_CPU_HOST_PTR(work));
    }
}

/*
 * N-trace codec: the encoder (BTM and HTM), on retirement blocks
 *
 * The rules are listed in ntrace.h.  The state is what the rules'
 * reference encoder keeps (I-CNT, HIST, the last address sent and the
 * message that waits for the next instruction's address), plus the call
 * stack of implicit return, which is the E-trace model (etrace-model.h).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "target/riscv/insn_class.h"
#include "ntrace.h"
#include "etrace-model.h"

/* A message that needs the address of the next instruction. */
typedef enum NTracePending {
    NTRACE_PENDING_NONE,
    NTRACE_PENDING_DIRECT,      /* BTM: a taken branch */
    NTRACE_PENDING_INDIRECT,    /* an uninferable jump or a trap */
} NTracePending;

struct NTraceEncoder {
    NTraceParams p;
    NTraceOptions o;
    NTraceEmitFn *emit;
    void *opaque;
    uint64_t addr_mask;

    bool tracing;               /* between start and stop */
    bool synced;                /* a sync went out since the last gap */
    unsigned sync_reason;       /* of the next sync */
    bool lost;                  /* Error before the next sync */

    uint32_t icnt;
    uint64_t hist;              /* history under its stop bit */
    uint64_t last_addr;         /* the reference of U-ADDR */
    NTracePending pending;
    unsigned pending_btype;

    /* implicit return: the return address a pending return may skip */
    ETraceCallStack stack;
    uint64_t stack_entry[NTRACE_CALL_STACK_DEPTH];
    bool ret_check;
    uint64_t ret_expect;

    /* the last retired instruction, to take ECALL/EBREAK out of I-CNT */
    uint64_t last_insn;
    unsigned last_len;
    bool last_valid;

    /* Ownership: what the decoder was last told */
    unsigned priv;
    uint64_t context;

    uint64_t sync_units;        /* since the last sync */
    bool sync_due;

    /* repeat: the last branch message and how often it came again */
    NTraceMessage last_branch;  /* tcode 0: none to repeat */
    uint64_t bcnt;
    uint64_t hist_full;         /* the last full HIST not yet sent */
    uint64_t hrepeat;           /* ... and how often it came */
    unsigned hist_len;          /* branches that fill HIST: 31, 30 or 28 */
    int realign_credit;         /* repeat_hist(): below 0, no realignment */
    bool realign_fresh;         /* HIST realigned, not full since */

    NTraceStats stats;
    ETraceWindow *win;          /* ntrace_encoder_set_window() */
    /* itypes (bits) whose next block sends an indirect branch message */
    uint32_t indirect_itypes;
    /*
     * BTM: the NTracePending a block leaves, by bits 39:32 of its packed
     * info word (its itype, in bits 3:0)
     */
    uint8_t btm_pending[256];
    /* emit_direct_branch()'s bytes: no stack buffer to clear per message */
    uint8_t direct_msg[NTRACE_MAX_MESSAGE];
};

static bool htm(const NTraceEncoder *e)
{
    return e->o.mode == NTRACE_MODE_HTM;
}

/* The counts of a message of n bytes sent (the periodic sync's too) */
static inline void count_message(NTraceEncoder *e, size_t n)
{
    e->stats.messages++;
    e->stats.bytes += n;
    if (e->o.sync_mode == ETRACE_SYNC_PACKETS) {
        e->sync_units++;
    }
}

static void emit_bytes(NTraceEncoder *e, NTraceMessage *m)
{
    uint8_t buf[NTRACE_MAX_MESSAGE];
    bool direct = etrace_window_room(e->win, NTRACE_MAX_MESSAGE);
    size_t n;

    m->src = e->p.src_id;
    n = ntrace_message_pack(&e->p, m, direct ? e->win->pos : buf);
    if (!n) {
        return;                 /* no field is out of range: unreachable */
    }
    count_message(e, n);
    if (direct) {
        e->win->pos += n;
        return;
    }
    e->emit(e->opaque, buf, n);
}

/* flush_repeats() with something counted: its messages. */
static void __attribute__((noinline)) send_repeats(NTraceEncoder *e)
{
    if (e->bcnt) {
        NTraceMessage m = {
            .tcode = NTRACE_TCODE_REPEAT_BRANCH, .bcnt = e->bcnt,
        };

        e->bcnt = 0;
        emit_bytes(e, &m);
    }
    if (e->hrepeat) {
        NTraceMessage m = {
            .tcode = NTRACE_TCODE_RESOURCE_FULL, .rdata = e->hist_full,
            .rcode = e->hrepeat > 1 ? NTRACE_RCODE_HIST_REPEAT :
                                      NTRACE_RCODE_HIST,
            .hrepeat = e->hrepeat,
        };

        e->hrepeat = 0;
        emit_bytes(e, &m);
    }
}

/* What repeat mode counted goes out before any other message. */
static inline void flush_repeats(NTraceEncoder *e)
{
    if (e->bcnt || e->hrepeat) {
        send_repeats(e);
    }
}

static void emit_message(NTraceEncoder *e, NTraceMessage *m)
{
    flush_repeats(e);
    e->last_branch.tcode = 0;
    emit_bytes(e, m);
}

static bool same_branch(const NTraceMessage *a, const NTraceMessage *b)
{
    return a->tcode == b->tcode && a->btype == b->btype &&
           a->icnt == b->icnt && a->addr == b->addr && a->hist == b->hist;
}

/*
 * A branch message: counted when repeat mode is on and it is the last
 * branch message again, else sent (after what was counted).
 */
static void emit_branch(NTraceEncoder *e, NTraceMessage *m)
{
    if (e->o.repeat && !e->hrepeat && e->last_branch.tcode &&
        same_branch(m, &e->last_branch)) {
        e->bcnt++;
        return;
    }
    flush_repeats(e);
    emit_bytes(e, m);
    e->last_branch = *m;
}

/* Everything a sync makes the decoder forget starts again. */
static void reset_state(NTraceEncoder *e, uint64_t addr)
{
    e->icnt = 0;
    e->hist = 1;
    e->hist_len = NTRACE_HIST_BITS;
    e->last_addr = addr;
    e->pending = NTRACE_PENDING_NONE;
    e->ret_check = false;
    e->sync_units = 0;
    e->sync_due = false;
    e->last_branch.tcode = 0;
    etrace_callstack_reset(&e->stack, e->stack_entry,
                           NTRACE_CALL_STACK_DEPTH - 1,
                           e->o.implicit_return ? NTRACE_CALL_STACK_DEPTH : 0);
}

static uint64_t process_of(const NTraceEncoder *e)
{
    uint64_t v = ((e->priv >> 2) & 1) << 4 | (e->priv & 3) << 2;

    if (e->context) {
        return e->context << 5 | v | NTRACE_PROCESS_FORMAT_SCONTEXT;
    }
    return v | NTRACE_PROCESS_FORMAT_PRIV;
}

static void send_ownership(NTraceEncoder *e)
{
    NTraceMessage m = {
        .tcode = NTRACE_TCODE_OWNERSHIP, .process = process_of(e),
    };

    if (e->o.context) {
        emit_message(e, &m);
    }
}

/* The trace starts (again) at addr, the next instruction to retire. */
static void send_sync(NTraceEncoder *e, uint64_t addr, const ETraceBlock *b)
{
    NTraceMessage m = {
        .tcode = NTRACE_TCODE_PROG_TRACE_SYNC, .sync = e->sync_reason,
        .addr = (addr & e->addr_mask) >> 1,
    };

    if (e->lost) {
        NTraceMessage err = {
            .tcode = NTRACE_TCODE_ERROR, .etype = NTRACE_ETYPE_OVERRUN,
            .ecode = NTRACE_ECODE_PROGRAM,
        };

        emit_message(e, &err);
        e->lost = false;
    }
    emit_message(e, &m);
    reset_state(e, addr);
    e->synced = true;
    e->priv = b->priv;
    e->context = b->context;
    send_ownership(e);
}


/*
 * BTM's DirectBranch without SRC: TCODE's byte and I-CNT's, six bits
 * each (the bytes ntrace_message_pack() makes), in one store.
 */
static inline void emit_direct_branch(NTraceEncoder *e, uint64_t icnt)
{
    ETraceWindow *w = e->win;
    uint64_t v;
    size_t n = ntrace_direct_branch_word(icnt, &v);

    flush_repeats(e);
    e->last_branch.tcode = 0;
    count_message(e, n);
    if (likely(etrace_window_room(w, 8))) {
        etrace_store_le64(w->pos, v);
        w->pos += n;
        return;
    }
    etrace_store_le64(e->direct_msg, v);
    e->emit(e->opaque, e->direct_msg, n);
}

/*
 * send_message_for() of an IndirectBranch or IndirectBranchHist to addr
 * without a sync, repeat mode or SRC, straight into the window (which
 * has room for any message): the commonest messages after DirectBranch.
 */
static void emit_indirect_branch(NTraceEncoder *e, uint64_t addr)
{
    uint64_t hist = htm(e) && e->hist != 1 ? e->hist : 0;
    size_t n;

    flush_repeats(e);
    n = ntrace_pack_indirect_branch(e->win->pos, e->pending_btype, e->icnt,
                                    (addr ^ e->last_addr) >> 1, hist);
    e->win->pos += n;
    count_message(e, n);
    if (hist) {
        e->hist = 1;
        e->hist_len = NTRACE_HIST_BITS;
    }
    e->last_branch.tcode = 0;
    e->icnt = 0;
    e->pending = NTRACE_PENDING_NONE;
    e->last_addr = addr;
}

/*
 * The pending message, with addr (out of line: most blocks have none,
 * and a message is a large local to clear).
 */
static void __attribute__((noinline))
send_message_for(NTraceEncoder *e, uint64_t addr, bool sync)
{
    NTraceMessage m;

    if (e->pending == NTRACE_PENDING_DIRECT && !sync && !e->o.repeat &&
        !e->p.src_bits) {
        emit_direct_branch(e, e->icnt);
        e->icnt = 0;
        e->pending = NTRACE_PENDING_NONE;
        return;
    }
    if (e->pending == NTRACE_PENDING_INDIRECT && !sync && !e->o.repeat &&
        !e->p.src_bits && etrace_window_room(e->win, NTRACE_MAX_MESSAGE)) {
        emit_indirect_branch(e, addr & e->addr_mask);
        return;
    }
    m = (NTraceMessage) { .btype = e->pending_btype, .icnt = e->icnt };

    addr &= e->addr_mask;
    if (e->pending == NTRACE_PENDING_DIRECT) {
        m.tcode = sync ? NTRACE_TCODE_DIRECT_BRANCH_SYNC :
                         NTRACE_TCODE_DIRECT_BRANCH;
    } else if (htm(e) && e->hist != 1) {
        m.tcode = sync ? NTRACE_TCODE_INDIRECT_BRANCH_HIST_SYNC :
                         NTRACE_TCODE_INDIRECT_BRANCH_HIST;
        m.hist = e->hist;
        e->hist = 1;
        e->hist_len = NTRACE_HIST_BITS;
    } else {
        m.tcode = sync ? NTRACE_TCODE_INDIRECT_BRANCH_SYNC :
                         NTRACE_TCODE_INDIRECT_BRANCH;
    }
    if (sync) {
        m.sync = NTRACE_SYNC_PERIODIC;
        m.addr = addr >> 1;
        emit_message(e, &m);
    } else {
        m.addr = m.tcode == NTRACE_TCODE_DIRECT_BRANCH ? 0 :
                 (addr ^ e->last_addr) >> 1;
        emit_branch(e, &m);
    }
    e->icnt = 0;
    e->pending = NTRACE_PENDING_NONE;
    if (m.tcode != NTRACE_TCODE_DIRECT_BRANCH) {
        e->last_addr = addr;
    }
    if (sync) {
        reset_state(e, addr);
        send_ownership(e);
    }
}

/*
 * The message waiting for the address of the next instruction, addr,
 * goes out (or not: a return to the address its call pushed).
 */
static void send_pending(NTraceEncoder *e, uint64_t addr)
{
    if (e->pending == NTRACE_PENDING_NONE) {
        return;
    }
    if (e->ret_check) {
        e->ret_check = false;
        if (e->o.implicit_return == ETRACE_IR_CALL_COUNTER ||
            addr == e->ret_expect) {
            e->pending = NTRACE_PENDING_NONE;
            return;
        }
    }
    send_message_for(e, addr, e->sync_due);
}

/* I-CNT would overflow: ResourceFull sends it (out of line: rare). */
static void __attribute__((noinline)) icnt_full(NTraceEncoder *e)
{
    NTraceMessage m = {
        .tcode = NTRACE_TCODE_RESOURCE_FULL, .rcode = NTRACE_RCODE_ICNT,
        .rdata = e->icnt,
    };

    emit_message(e, &m);
    e->icnt = 0;
}

static inline void add_icnt(NTraceEncoder *e, uint32_t units)
{
    if (e->icnt + units > NTRACE_ICNT_MAX) {
        icnt_full(e);
    }
    e->icnt += units;
}

/* The HIST length a history of period p repeats in: 31, 30, 28 or none. */
static unsigned length_for_period(unsigned p)
{
    return NTRACE_HIST_BITS % p == 0 ? NTRACE_HIST_BITS :
           30 % p == 0 ? 30 : 28 % p == 0 ? 28 : 0;
}

/*
 * How many of the newest outcomes of h (NTRACE_HIST_BITS of them, the
 * newest in bit 0) repeat, at least twice, with a period that some HIST
 * length is a multiple of (*tail), and that length; 0 when no period
 * covers at least half of them.
 */
static unsigned periodic_tail(uint64_t h, unsigned *tail)
{
    uint64_t all = (UINT64_C(1) << NTRACE_HIST_BITS) - 1;
    unsigned best = 0;

    *tail = 0;
    for (unsigned p = 1; p <= 15; p++) {
        /* bit i: outcome i differs from outcome i + p */
        uint64_t diff = (h ^ (h >> p)) & (all >> p);
        unsigned n = (diff ? (unsigned)__builtin_ctzll(diff) :
                      NTRACE_HIST_BITS - p) + p;

        /* at least two whole periods, or a pattern is not shown */
        if (length_for_period(p) && n >= 2 * p && n > *tail) {
            *tail = n;
            best = length_for_period(p);
        }
    }
    return *tail * 2 > NTRACE_HIST_BITS ? best : 0;
}

/* Count the oldest len of the n outcomes in HIST; the rest stay. */
static void start_repeat(NTraceEncoder *e, unsigned n, unsigned len)
{
    unsigned rest = n - len;

    e->hist_full = e->hist >> rest;
    e->hrepeat = 1;
    e->hist_len = len;
    e->hist = UINT64_C(1) << rest | (e->hist & ((UINT64_C(1) << rest) - 1));
}

/*
 * A full HIST of 31 outcomes after one that is counted once: the 62 of
 * them may repeat with a period of 30 or 28 (a loop of that many
 * branches).  Then the oldest 30 (28) are counted twice and the rest stay
 * in HIST, which fills to that length from now on.
 */
static bool repeat_across(NTraceEncoder *e)
{
    uint64_t all = (UINT64_C(1) << NTRACE_HIST_BITS) - 1;
    uint64_t seq = (e->hist_full & all) << NTRACE_HIST_BITS | (e->hist & all);
    static const unsigned lengths[] = { 30, 28 };

    for (int i = 0; i < 2; i++) {
        unsigned len = lengths[i], rest = 2 * NTRACE_HIST_BITS - 2 * len;

        if (((seq ^ (seq >> len)) &
             ((UINT64_C(1) << (2 * NTRACE_HIST_BITS - len)) - 1)) == 0) {
            e->hist_full = UINT64_C(1) << len |
                           seq >> (2 * NTRACE_HIST_BITS - len);
            e->hrepeat = 2;
            e->hist_len = len;
            e->hist = UINT64_C(1) << rest |
                      (seq & ((UINT64_C(1) << rest) - 1));
            return true;
        }
    }
    return false;
}

/*
 * In repeat mode, a full HIST: counted while it equals the last one, else
 * the start of a new count.  A loop's outcomes repeat in HIST only at a
 * length their period divides, and only from the loop's first branch on:
 * so a history whose newest outcomes have such a period sends the older
 * ones alone (ResourceFull RCODE 1) and fills HIST to that length from
 * there.
 */
static void repeat_hist(NTraceEncoder *e)
{
    uint64_t h = e->hist & ((UINT64_C(1) << e->hist_len) - 1);
    uint64_t counted = e->hrepeat;
    unsigned len, tail;

    if (e->hrepeat && e->hist == e->hist_full) {
        e->hrepeat++;
        e->hist = 1;
        return;
    }
    if (e->hrepeat == 1 && e->hist_len == NTRACE_HIST_BITS &&
        e->hist_full >> NTRACE_HIST_BITS == 1 && repeat_across(e)) {
        return;
    }
    flush_repeats(e);
    e->last_branch.tcode = 0;
    if (e->realign_fresh && e->hist_len != NTRACE_HIST_BITS) {
        /* realigned with fewer outcomes than a period: its first one */
        e->realign_fresh = false;
        start_repeat(e, e->hist_len, e->hist_len);
        return;
    }
    e->realign_fresh = false;
    if (e->hist_len != NTRACE_HIST_BITS) {
        /*
         * The loop's pattern ended: a shorter HIST only pays while it
         * repeats, so these outcomes start one of 31 (nothing is sent).
         * A realignment costs a message, and pays only when its HIST
         * came again: in code whose loops end before their pattern
         * repeats (CoreMark's) each one failing holds off the next
         * four, each one paying earns one more (at most two).
         */
        e->hist_len = NTRACE_HIST_BITS;
        if (counted > 1) {
            e->realign_credit += e->realign_credit < 2;
        } else if (e->realign_credit > -8) {
            e->realign_credit -= 4;
        }
        return;
    }
    len = periodic_tail(h, &tail);
    if (len && e->realign_credit < 0) {
        e->realign_credit++;            /* try again later */
        len = 0;
    }
    if (!len) {
        start_repeat(e, NTRACE_HIST_BITS, NTRACE_HIST_BITS);
        return;
    }
    if (tail < NTRACE_HIST_BITS) {
        NTraceMessage m = {
            .tcode = NTRACE_TCODE_RESOURCE_FULL, .rcode = NTRACE_RCODE_HIST,
            .rdata = UINT64_C(1) << (NTRACE_HIST_BITS - tail) | h >> tail,
        };

        emit_bytes(e, &m);
        e->hist = UINT64_C(1) << tail | (h & ((UINT64_C(1) << tail) - 1));
    }
    e->hist_len = len;
    e->realign_fresh = tail < len;
    if (tail >= len) {
        start_repeat(e, tail, len);
    }
}

/*
 * A full HIST goes out in ResourceFull, or in repeat mode is counted
 * while it is the same as the last one.
 */
static void hist_full(NTraceEncoder *e)
{
    if (e->o.repeat) {
        repeat_hist(e);
    } else {
        NTraceMessage m = {
            .tcode = NTRACE_TCODE_RESOURCE_FULL, .rcode = NTRACE_RCODE_HIST,
            .rdata = e->hist,
        };

        emit_message(e, &m);
        e->hist = 1;
    }
}

/* A branch outcome into HIST (the newest in bit 0). */
static inline void add_branch(NTraceEncoder *e, bool taken)
{
    e->hist = e->hist << 1 | taken;
    if (e->hist >> e->hist_len) {
        hist_full(e);
    }
}

static uint64_t reverse64(uint64_t x)
{
    x = (x >> 1 & UINT64_C(0x5555555555555555)) |
        (x & UINT64_C(0x5555555555555555)) << 1;
    x = (x >> 2 & UINT64_C(0x3333333333333333)) |
        (x & UINT64_C(0x3333333333333333)) << 2;
    x = (x >> 4 & UINT64_C(0x0f0f0f0f0f0f0f0f)) |
        (x & UINT64_C(0x0f0f0f0f0f0f0f0f)) << 4;
    return __builtin_bswap64(x);
}

/*
 * The n (1 to 63) outcomes of a run (bit i of run_map: the i-th, oldest
 * first, was not taken) into HIST, as many at a time as it has room for.
 */
static void add_branches(NTraceEncoder *e, uint64_t run_map, unsigned n)
{
    uint64_t taken = reverse64(~run_map) >> (64 - n);   /* oldest on top */

    while (n) {
        unsigned have = 63 - __builtin_clzll(e->hist);
        unsigned k = n < e->hist_len - have ? n : e->hist_len - have;

        n -= k;
        e->hist = e->hist << k | taken >> n;
        taken &= (UINT64_C(1) << n) - 1;
        if (e->hist >> e->hist_len) {
            hist_full(e);
        }
    }
}

/* ECALL, EBREAK and C.EBREAK: the exceptions whose EPC retired before. */
static bool trap_unretires(const NTraceEncoder *e, const ETraceBlock *b)
{
    switch (b->cause) {
    case 3: case 8: case 9: case 10: case 11:
        return b->itype == RISCV_ITYPE_EXCEPTION && !b->iretire &&
               e->last_valid && e->last_insn == b->epc &&
               e->icnt >= e->last_len / 2;
    default:
        return false;
    }
}

/* The end of traced code: ProgTraceCorrelation reports what is left. */
static void send_end(NTraceEncoder *e)
{
    NTraceMessage m = {
        .tcode = NTRACE_TCODE_PROG_TRACE_CORRELATION,
        .evcode = NTRACE_EVCODE_DISABLED,
    };

    if (e->pending == NTRACE_PENDING_DIRECT) {
        NTraceMessage direct = {
            .tcode = NTRACE_TCODE_DIRECT_BRANCH, .icnt = e->icnt,
        };

        emit_message(e, &direct);
        e->icnt = 0;
    }
    e->pending = NTRACE_PENDING_NONE;
    m.icnt = e->icnt;
    if (htm(e)) {
        m.cdf = 1;
        m.hist = e->hist;
    }
    emit_message(e, &m);
    e->synced = false;
    e->sync_reason = NTRACE_SYNC_ENABLE;
    e->last_valid = false;
}

/* The periodic sync's units of a block (instructions or half-words) */
static inline unsigned sync_units_of(unsigned sync_mode, unsigned ninsns,
                                     unsigned iretire)
{
    return sync_mode == ETRACE_SYNC_CYCLES ? ninsns :
           sync_mode == ETRACE_SYNC_HALFWORDS ? iretire : 0;
}

/* With units counted since the last sync, a periodic sync is due. */
static inline bool sync_period_over(unsigned sync_mode, unsigned sync_max,
                                    uint64_t units)
{
    return sync_mode != ETRACE_SYNC_OFF && units >> (sync_max + 4);
}

/* Statistics, and the units periodic sync counts. */
static inline void count_units(NTraceEncoder *e, const ETraceBlock *b)
{
    e->stats.halfwords += b->iretire;
    e->sync_units += sync_units_of(e->o.sync_mode, b->ninsns, b->iretire);
}

/* The last instruction of a block at iaddr, of iretire half-words */
static inline void set_last_insn(NTraceEncoder *e, uint64_t iaddr,
                                 unsigned iretire, bool ilastsize)
{
    e->last_len = 2 << ilastsize;
    e->last_insn = iaddr + 2 * (uint64_t)iretire - e->last_len;
    e->last_valid = true;
}

/* The block's own instructions (iretire > 0). */
static inline void account_insns(NTraceEncoder *e, const ETraceBlock *b)
{
    add_icnt(e, b->iretire);
    set_last_insn(e, b->iaddr, b->iretire, b->ilastsize);
    count_units(e, b);
}

/* A conditional branch retired: HIST, or a DirectBranch if taken (BTM). */
static inline void account_branch(NTraceEncoder *e, bool taken)
{
    if (htm(e)) {
        add_branch(e, taken);
    } else if (taken) {
        e->pending = NTRACE_PENDING_DIRECT;
    }
}

/* The block's own instructions, and the message its last one asks for. */
static void account(NTraceEncoder *e, const ETraceBlock *b)
{
    uint64_t end = b->iaddr + 2 * (uint64_t)b->iretire;
    unsigned itype = b->itype;

    if (b->iretire) {
        account_insns(e, b);
    }
    if (itype == RISCV_ITYPE_EXCEPTION || itype == RISCV_ITYPE_INTERRUPT) {
        if (trap_unretires(e, b)) {
            e->icnt -= e->last_len / 2;
        }
        e->last_valid = false;
        e->pending = NTRACE_PENDING_INDIRECT;
        e->pending_btype = itype == RISCV_ITYPE_EXCEPTION ?
                           NTRACE_BTYPE_EXCEPTION : NTRACE_BTYPE_INTERRUPT;
        return;
    }
    if (itype == RISCV_ITYPE_NOT_TAKEN_BRANCH ||
        itype == RISCV_ITYPE_TAKEN_BRANCH) {
        account_branch(e, itype == RISCV_ITYPE_TAKEN_BRANCH);
        return;
    }
    if (itype == RISCV_ITYPE_RETURN && e->stack.depth) {
        e->ret_expect = etrace_callstack_pop(&e->stack);
        e->ret_check = true;
    }
    if (itype == RISCV_ITYPE_INFERABLE_CALL ||
        itype == RISCV_ITYPE_UNINFERABLE_CALL) {
        etrace_callstack_push(&e->stack, end);
    }
    if (itype == RISCV_ITYPE_TRAP_RETURN ||
        riscv_itype_is_uninferable(itype)) {
        e->pending = NTRACE_PENDING_INDIRECT;
        e->pending_btype = NTRACE_BTYPE_JUMP;
    }
}

/*
 * The taken branches of a counted run in BTM (etrace-record.h), as
 * account() sends them block by block: each one's DirectBranch goes at
 * the block after it, with the I-CNT up to it.  A message pending before
 * the run can only be a DirectBranch (etrace.h's promise).  With no
 * address in the run for a sync variant, a periodic sync that falls due
 * in it goes with the first message after it.
 */
static void account_counted_run(NTraceEncoder *e, const ETraceBlock *b)
{
    uint64_t taken = ~b->run_map & ((UINT64_C(1) << b->run) - 1);
    unsigned counted = 0;       /* the run's half-words in I-CNT so far */

    if (e->pending == NTRACE_PENDING_INDIRECT) {
        ntrace_encoder_lost(e);
        return;
    }
    while (taken) {
        unsigned upto = etrace_run_count(b->run_entries,
                                         __builtin_ctzll(taken));

        if (upto <= counted || upto > b->iretire) {
            ntrace_encoder_lost(e);
            return;
        }
        if (e->pending) {
            send_message_for(e, 0, false);
        }
        add_icnt(e, upto - counted);
        counted = upto;
        e->pending = NTRACE_PENDING_DIRECT;
        taken &= taken - 1;
    }
    if (b->iretire > counted) {
        if (e->pending) {
            send_message_for(e, 0, false);
        }
        add_icnt(e, b->iretire - counted);
    }
}

/*
 * A run of branch blocks without their addresses (etrace.h): in HTM its
 * outcomes go into HIST and its half-words into I-CNT, which is all HTM
 * sends of them.  BTM needs each taken branch's I-CNT: a run is a loss
 * unless it is counted.  Before the first sync a run is skipped (the
 * next block syncs).
 */
static void account_run(NTraceEncoder *e, const ETraceBlock *b)
{
    if (!e->synced) {
        return;
    }
    if (!b->iretire || (!htm(e) && !b->run_counted)) {
        ntrace_encoder_lost(e);
        return;
    }
    if (htm(e)) {
        add_icnt(e, b->iretire);
        add_branches(e, b->run_map, b->run);
    } else {
        account_counted_run(e, b);
    }
    e->last_valid = false;
    count_units(e, b);
}

void ntrace_encoder_block(NTraceEncoder *e, const ETraceBlock *b)
{
    bool trap = b->itype == RISCV_ITYPE_EXCEPTION ||
                b->itype == RISCV_ITYPE_INTERRUPT;
    uint64_t addr = trap && !b->iretire ? b->epc : b->iaddr;

    if (!e->tracing) {
        return;
    }
    if (b->run) {
        account_run(e, b);
        if (e->synced &&
            sync_period_over(e->o.sync_mode, e->o.sync_max, e->sync_units)) {
            e->sync_due = true;
        }
        return;
    }
    if (!trap && !b->iretire) {
        return;
    }
    if (!b->qualified) {
        if (e->synced && !trap) {
            send_end(e);
        }
        if (!trap || !e->synced) {
            return;
        }
    }
    if (!e->synced) {
        send_sync(e, addr, b);
    } else {
        send_pending(e, addr);
        if (b->iretire && (b->priv != e->priv || b->context != e->context)) {
            e->priv = b->priv;
            e->context = b->context;
            send_ownership(e);
        }
    }
    account(e, b);
    if (sync_period_over(e->o.sync_mode, e->o.sync_max, e->sync_units)) {
        e->sync_due = true;
    }
}

/* ------------------------------------------------------ packed records */

static inline unsigned pb_field(uint64_t info, unsigned shift, unsigned len)
{
    return (info >> shift) & ((1u << len) - 1);
}

/*
 * A quiet block: a plain one (no trap, no run), traced since the last
 * sync, in the privilege and context the decoder knows, so that of
 * ntrace_encoder_block() only the pending message and account() apply.
 */
static inline bool quiet_packed(const NTraceEncoder *e, uint64_t info,
                                unsigned priv_mask, uint64_t context)
{
    return (info & (ETRACE_PB_PLAIN | ETRACE_PB_RUN)) == ETRACE_PB_PLAIN &&
           pb_field(info, ETRACE_PB_IRETIRE_SHIFT, 16) && e->synced &&
           (pb_field(info, ETRACE_PB_PRIV_SHIFT, 3) & priv_mask) == e->priv &&
           context == e->context;
}

/* ntrace_encoder_block() of a quiet block, with the fields it uses. */
static inline void take_quiet(NTraceEncoder *e, uint64_t iaddr,
                              uint64_t info)
{
    ETraceBlock b = {
        .iaddr = iaddr & e->addr_mask,
        .iretire = pb_field(info, ETRACE_PB_IRETIRE_SHIFT, 16),
        .ninsns = pb_field(info, ETRACE_PB_NINSNS_SHIFT, 16),
        .ilastsize = pb_field(info, ETRACE_PB_ILASTSIZE_SHIFT, 1),
        .itype = pb_field(info, ETRACE_PB_ITYPE_SHIFT, 4),
    };

    if (e->pending == NTRACE_PENDING_DIRECT && !e->sync_due &&
        !e->o.repeat && !e->p.src_bits) {
        /* BTM's commonest message, inline (send_message_for() is not) */
        emit_direct_branch(e, e->icnt);
        e->icnt = 0;
        e->pending = NTRACE_PENDING_NONE;
    } else {
        send_pending(e, b.iaddr);
    }
    if (b.itype == RISCV_ITYPE_NOT_TAKEN_BRANCH ||
        b.itype == RISCV_ITYPE_TAKEN_BRANCH) {
        /* account() of the commonest block, inline */
        account_insns(e, &b);
        account_branch(e, b.itype == RISCV_ITYPE_TAKEN_BRANCH);
    } else {
        account(e, &b);
    }
    if (sync_period_over(e->o.sync_mode, e->o.sync_max, e->sync_units)) {
        e->sync_due = true;
    }
}

/*
 * The commonest stretch of records: quiet blocks, and in HTM the runs of
 * branches the hart held back, take_quiet() and account_run() record
 * after record, for as long as nothing else can happen (no sync due or
 * made due, no SRC, no message in repeat mode, no return its call did
 * not predict), with the state they change in locals (QuietState) and
 * written once at the end; calls and returns of implicit return keep the
 * call stack as account() does.  The messages (DirectBranch,
 * IndirectBranch, IndirectBranchHist) go straight into the window.  The
 * sync mode and the trace mode are constant in each caller.
 */
typedef struct QuietState {
    /* of e, constant: copies the window's stores can not alias */
    uint64_t addr_mask;
    uint32_t indirect_itypes;
    bool counter;               /* implicit return with a call counter */
    bool repeat;                /* repeat mode: no message here */
    ETraceCallStack *stack;     /* implicit return: e->stack, else NULL */
    bool ret_check;             /* as e's */
    uint64_t ret_expect;
    uint64_t icnt, hist, last_addr, sync_units;
    uint64_t halfwords;         /* iretire added up */
    uint64_t messages;
    NTracePending pending;
    unsigned btype;
    uint8_t *buf;               /* the window */
    size_t room, used;
    const ETracePackedBlock *last_plain;    /* of the records taken */
} QuietState;

/* account_run() of run record p, if no register fills: else false */
static inline __attribute__((always_inline))
bool quiet_take_run(QuietState *q, const ETracePackedBlock *p)
{
    uint64_t map = p->iaddr;
    unsigned iretire = p->info & 0xffff;
    unsigned runs = map ? 63 - __builtin_clzll(map) : 0;
    unsigned have = 63 - __builtin_clzll(q->hist);

    /* no message comes before a run */
    if (q->pending || !runs || !iretire ||
        q->icnt + iretire > NTRACE_ICNT_MAX ||
        have + runs >= NTRACE_HIST_BITS) {
        return false;
    }
    q->icnt += iretire;
    q->hist = q->hist << runs | reverse64(~map) >> (64 - runs);
    q->last_plain = NULL;
    return true;
}

/* The pending message, at plain block p; false if the window is full */
static inline __attribute__((always_inline))
bool quiet_send(QuietState *q, const ETracePackedBlock *p, unsigned sync_mode,
                bool hist_mode)
{
    uint64_t addr = p->iaddr & q->addr_mask, v;

    if (q->room - q->used < NTRACE_MAX_MESSAGE) {
        return false;       /* the general path emits it */
    }
    if (q->pending == NTRACE_PENDING_DIRECT) {
        size_t len = ntrace_direct_branch_word(q->icnt, &v);

        etrace_store_le64(q->buf + q->used, v);
        q->used += len;
    } else {
        q->used += ntrace_pack_indirect_branch(
            q->buf + q->used, q->btype, q->icnt, (addr ^ q->last_addr) >> 1,
            hist_mode && q->hist != 1 ? q->hist : 0);
        q->last_addr = addr;
    }
    q->messages++;
    q->sync_units += sync_mode == ETRACE_SYNC_PACKETS;
    return true;
}

/* account()'s call stack, for plain block p ending with itype */
static inline __attribute__((always_inline))
void quiet_call_or_return(QuietState *q, const ETracePackedBlock *p,
                          unsigned itype)
{
    if (itype == RISCV_ITYPE_RETURN && q->stack->depth) {
        q->ret_expect = etrace_callstack_pop(q->stack);
        q->ret_check = true;
    }
    if (itype == RISCV_ITYPE_INFERABLE_CALL ||
        itype == RISCV_ITYPE_UNINFERABLE_CALL) {
        etrace_callstack_push(q->stack, (p->iaddr & q->addr_mask) +
                              2 * (uint64_t)(p->info & 0xffff));
    }
}

/*
 * take_quiet() of plain block p: taken when it is of the current
 * privilege (mask, want), without the stop bits, not a trap's
 * (stop_itypes), and when neither its I-CNT nor its branch would fill a
 * register; else false, and the general path takes it (it sends
 * ResourceFull), as a block without room for its message or, in repeat
 * mode, with a message.
 */
static inline __attribute__((always_inline))
bool quiet_take_block(QuietState *q, const ETracePackedBlock *p,
                      uint64_t mask, uint64_t want, uint32_t stop_itypes,
                      unsigned sync_mode, bool hist_mode)
{
    const uint32_t branch = 1u << RISCV_ITYPE_NOT_TAKEN_BRANCH |
                            1u << RISCV_ITYPE_TAKEN_BRANCH;
    uint64_t info = p->info;
    unsigned iretire = info & 0xffff;
    unsigned itype = pb_field(info, ETRACE_PB_ITYPE_SHIFT, 4);
    /* a return to where its call pushed: no message (send_pending()) */
    bool returned = q->ret_check &&
                    (q->counter || (p->iaddr & q->addr_mask) == q->ret_expect);
    bool send = q->pending && !returned;
    /* I-CNT and HIST after the pending message, if any */
    uint64_t icnt = send ? 0 : q->icnt;
    uint64_t hist = hist_mode && send ? 1 : q->hist;

    if ((info & mask) != want || (stop_itypes >> itype & 1) ||
        icnt + iretire > NTRACE_ICNT_MAX ||
        (hist_mode && (branch >> itype & 1) &&
         (hist << 1) >> NTRACE_HIST_BITS)) {
        return false;
    }
    if (send && (q->repeat || !quiet_send(q, p, sync_mode, hist_mode))) {
        return false;
    }
    q->icnt = icnt + iretire;
    q->hist = hist;
    q->pending = NTRACE_PENDING_NONE;
    q->ret_check = false;
    if (branch >> itype & 1) {
        bool taken = itype == RISCV_ITYPE_TAKEN_BRANCH;

        if (hist_mode) {
            q->hist = hist << 1 | taken;
        } else if (taken) {
            q->pending = NTRACE_PENDING_DIRECT;
        }
    } else {
        if (q->stack) {
            quiet_call_or_return(q, p, itype);
        }
        if (q->indirect_itypes >> itype & 1) {
            q->pending = NTRACE_PENDING_INDIRECT;
            q->btype = NTRACE_BTYPE_JUMP;
        }
    }
    q->last_plain = p;
    return true;
}

/*
 * The encoder's fields after the records before p were taken (inlined,
 * so that q's address never escapes and q stays in registers)
 */
static inline __attribute__((always_inline))
void quiet_store(NTraceEncoder *e, const QuietState *q,
                        const ETracePackedBlock *p)
{
    const ETracePackedBlock *last = q->last_plain;

    e->icnt = q->icnt;
    e->hist = q->hist;
    e->last_addr = q->last_addr;
    e->sync_units = q->sync_units;
    e->pending = q->pending;
    e->pending_btype = q->btype;
    e->ret_check = q->ret_check;
    e->ret_expect = q->ret_expect;
    e->stats.halfwords += q->halfwords;
    if (last == p - 1) {
        set_last_insn(e, last->iaddr & e->addr_mask,
                      pb_field(last->info, ETRACE_PB_IRETIRE_SHIFT, 16),
                      pb_field(last->info, ETRACE_PB_ILASTSIZE_SHIFT, 1));
    } else {
        e->last_valid = false;      /* after a run */
    }
    if (q->messages) {
        e->last_branch.tcode = 0;
        e->stats.messages += q->messages;
        e->stats.bytes += q->used;
        e->win->pos = q->buf + q->used;
    }
}

/* The records from pb[i] on that quiet_take_*() take: the next index */
static inline __attribute__((always_inline))
size_t quiet_run(NTraceEncoder *e, const ETracePackedBlock *pb, size_t i,
                 size_t n, uint64_t mask, uint64_t want, unsigned sync_mode,
                 bool hist_mode)
{
    const ETracePackedBlock *p = &pb[i], *end = &pb[n];
    uint64_t want_run = want ^ ETRACE_PB_PLAIN ^ ETRACE_PB_RUN;
    uint32_t stop_itypes = 1u << RISCV_ITYPE_EXCEPTION |
                           1u << RISCV_ITYPE_INTERRUPT;
    uint64_t sync_at = sync_mode == ETRACE_SYNC_OFF ? UINT64_MAX :
                       UINT64_C(1) << (e->o.sync_max + 4);
    QuietState q = {
        .addr_mask = e->addr_mask, .indirect_itypes = e->indirect_itypes,
        .counter = e->o.implicit_return == ETRACE_IR_CALL_COUNTER,
        .repeat = e->o.repeat,
        .stack = e->o.implicit_return ? &e->stack : NULL,
        .ret_check = e->ret_check, .ret_expect = e->ret_expect,
        .icnt = e->icnt, .hist = e->hist, .last_addr = e->last_addr,
        .sync_units = e->sync_units, .pending = e->pending,
        .btype = e->pending_btype, .buf = e->win->pos,
        .room = e->win->end - e->win->pos,
    };

    if (q.sync_units >= sync_at) {
        return i;
    }
    for (; p < end; p++) {
        uint64_t info = p->info;

        if (hist_mode && (info & mask) == want_run ?
            !quiet_take_run(&q, p) :
            !quiet_take_block(&q, p, mask, want, stop_itypes, sync_mode,
                              hist_mode)) {
            break;
        }
        q.halfwords += info & 0xffff;
        q.sync_units += sync_mode == ETRACE_SYNC_CYCLES ?
                        pb_field(info, ETRACE_PB_NINSNS_SHIFT, 16) :
                        sync_mode == ETRACE_SYNC_HALFWORDS ?
                        (info & 0xffff) : 0;
        if (q.sync_units >= sync_at) {
            e->sync_due = true;
            p++;
            break;
        }
    }
    if (p > &pb[i]) {
        quiet_store(e, &q, p);
    }
    return p - pb;
}

/*
 * An IndirectBranch into the window at out, for quiet_run_btm(): the
 * pending message of an uninferable jump (or, first, of a trap), at the
 * block that starts at iaddr.  What it needs stays in e, out of the
 * loop's registers.
 */
static size_t quiet_btm_indirect(NTraceEncoder *e, uint8_t *out,
                                 uint64_t icnt, uint64_t iaddr)
{
    uint64_t addr = iaddr & e->addr_mask;
    size_t n = ntrace_pack_indirect_branch(out, e->pending_btype, icnt,
                                           (addr ^ e->last_addr) >> 1, 0);

    e->pending_btype = NTRACE_BTYPE_JUMP;
    e->last_addr = addr;
    return n;
}

/* The least of three indexes, for quiet_run_btm() */
static inline size_t quiet_bound(size_t a, size_t b, size_t c)
{
    return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

/* A DirectBranch into the window at out, for quiet_run_btm(): its end */
_Static_assert(NTRACE_MAX_MESSAGE >= 6 * 8, "6 DirectBranch words");
static inline uint8_t *quiet_btm_direct(uint8_t *out, uint64_t icnt)
{
    uint64_t v;
    size_t len = ntrace_direct_branch_word(icnt, &v);

    etrace_store_le64(out, v);
    return out + len;
}

/*
 * account_counted_run() of the counted run at p, whose taken branches
 * are the bits of taken, in quiet_run_btm()'s state (the window's room,
 * I-CNT and the pending message checked); false, with nothing changed,
 * if a count is out of order: the general path finds it a loss.
 */
static inline __attribute__((always_inline))
bool quiet_btm_run(const ETracePackedBlock *p, uint64_t taken, uint8_t **out,
                   uint64_t *icnt, uint64_t *messages, unsigned *pending)
{
    unsigned iretire = p->info & 0xffff, counted = 0;
    uint8_t *o = *out;
    uint64_t n = *icnt, sent = 0;
    unsigned pend = *pending;

    for (; taken; taken &= taken - 1) {
        unsigned upto = etrace_run_count(etrace_run_entries(p),
                                         __builtin_ctzll(taken));

        if (upto - counted - 1 >= iretire - counted) {
            return false;       /* not in (counted, iretire] */
        }
        if (pend) {
            o = quiet_btm_direct(o, n);
            sent++;
            n = 0;
        }
        n += upto - counted;
        counted = upto;
        pend = NTRACE_PENDING_DIRECT;
    }
    if (iretire > counted) {
        if (pend) {
            o = quiet_btm_direct(o, n);
            sent++;
            n = 0;
            pend = NTRACE_PENDING_NONE;
        }
        n += iretire - counted;
    }
    *out = o;
    *icnt = n;
    *messages += sent;
    *pending = pend;
    return true;
}

/*
 * quiet_run() of BTM without implicit return or repeat, N-trace's default:
 * every record a plain block or a counted run, the message a taken
 * branch or an uninferable jump asks for sent at the next block.  Cut to
 * that, its state fits in registers: each plain record sends at most one
 * message, so the window's room bounds the records taken (end) instead
 * of a check per message, and so does a periodic sync by messages (it
 * is due when every record up to the bound sent one).  A counted run
 * sends at most one more message than it has branches, all DirectBranch
 * (account_counted_run()), and takes the room of their bytes from that
 * bound; the count of messages to a periodic sync is kept exactly.
 * While a periodic sync is due (QUIET_SYNC_DUE), it takes what sends no
 * message but the DirectBranch messages of counted runs, and stops at
 * the first plain block with a message to send: the sync variant, for
 * the general path.
 * Under half the host instructions of quiet_run() per record.
 */
#define QUIET_SYNC_DUE  (ETRACE_SYNC_HALFWORDS + 1)

static inline __attribute__((always_inline))
size_t quiet_run_btm(NTraceEncoder *e, const ETracePackedBlock *pb,
                     size_t i, size_t n, uint64_t mask, uint64_t want,
                     unsigned sync_mode)
{
    const ETracePackedBlock *first = &pb[i], *p = first, *end;
    const ETracePackedBlock *after_run = NULL;
    /* the indexes the window's room and a sync by messages bound */
    size_t room_bound, sync_bound = SIZE_MAX;
    uint64_t run_mask = mask | ETRACE_PB_RUN_COUNTED;
    uint64_t run_want = (want ^ ETRACE_PB_PLAIN) | ETRACE_PB_RUN |
                        ETRACE_PB_RUN_COUNTED;
    uint64_t sync_at = sync_mode == ETRACE_SYNC_OFF ||
                       sync_mode == QUIET_SYNC_DUE ? UINT64_MAX :
                       UINT64_C(1) << (e->o.sync_max + 4);
    /* the units of periodic sync left before one is due */
    uint64_t left = sync_at - e->sync_units;
    uint64_t icnt = e->icnt, units = 0, messages = 0, halfwords = 0;
    const uint8_t *pending_of = e->btm_pending;
    unsigned pending = e->pending;
    uint8_t *out = e->win->pos;
    size_t fit = (e->win->end - out) / NTRACE_MAX_MESSAGE;

    if (e->sync_units >= sync_at || !fit) {
        return i;
    }
    room_bound = i + fit;
    if (sync_mode == ETRACE_SYNC_PACKETS) {
        sync_bound = i + left;
    }
    end = &pb[quiet_bound(n, room_bound, sync_bound)];
    if (pending != NTRACE_PENDING_INDIRECT) {
        /* the B-TYPE of any IndirectBranch this loop makes pending */
        e->pending_btype = NTRACE_BTYPE_JUMP;
    }
    while (p < end) {
        uint64_t info = p->info;
        unsigned iretire = info & 0xffff;

        if ((info & mask) != want) {
            const ETracePackedBlock *next = p + etrace_packed_len(info);
            uint64_t map = p->iaddr;
            unsigned k = 63 - __builtin_clzll(map | 1);
            uint64_t taken = ~map & ((UINT64_C(1) << k) - 1);
            /*
             * Of the bound: at most k + 1 messages, each a DirectBranch
             * word of 8 bytes (6 to a NTRACE_MAX_MESSAGE)
             */
            size_t sends = (k + 6) / 6;

            if ((info & run_mask) != run_want || next > &pb[n] ||
                room_bound - (p - pb) < sends ||
                pending == NTRACE_PENDING_INDIRECT ||
                icnt + iretire > NTRACE_ICNT_MAX ||
                !quiet_btm_run(p, taken, &out, &icnt, &messages, &pending)) {
                break;
            }
            /* its messages take the room of as many records */
            room_bound += (next - p) - sends;
            p = after_run = next;
            if (sync_mode == ETRACE_SYNC_PACKETS) {
                /* if a sync is due (below), nothing more */
                sync_bound = messages >= left ? 0 :
                             (p - pb) + (left - messages);
            }
            end = &pb[quiet_bound(n, room_bound, sync_bound)];
        } else {
            if (pending && sync_mode == QUIET_SYNC_DUE) {
                break;
            }
            if (pending) {
                if (pending == NTRACE_PENDING_DIRECT) {
                    out = quiet_btm_direct(out, icnt);
                } else {
                    out += quiet_btm_indirect(e, out, icnt, p->iaddr);
                }
                messages++;
                icnt = 0;
            } else if (icnt + iretire > NTRACE_ICNT_MAX) {
                break;              /* ResourceFull: the general path */
            }
            icnt += iretire;
            pending = pending_of[(uint8_t)(info >> ETRACE_PB_ITYPE_SHIFT)];
            p++;
        }
        halfwords += iretire;
        if (sync_mode == ETRACE_SYNC_CYCLES ||
            sync_mode == ETRACE_SYNC_HALFWORDS) {
            units += sync_units_of(sync_mode,
                                   pb_field(info, ETRACE_PB_NINSNS_SHIFT, 16),
                                   iretire);
        }
        if ((sync_mode == ETRACE_SYNC_CYCLES ||
             sync_mode == ETRACE_SYNC_HALFWORDS) && units >= left) {
            e->sync_due = true;
            break;
        }
    }
    if (p == first) {
        return i;
    }
    if (sync_mode == ETRACE_SYNC_PACKETS && messages >= left) {
        e->sync_due = true;
    }
    e->icnt = icnt;
    e->sync_units += sync_mode == ETRACE_SYNC_PACKETS ? messages : units;
    e->pending = pending;
    e->stats.halfwords += halfwords;
    if (p == after_run) {
        e->last_valid = false;
    } else {
        set_last_insn(e, p[-1].iaddr & e->addr_mask,
                      pb_field(p[-1].info, ETRACE_PB_IRETIRE_SHIFT, 16),
                      pb_field(p[-1].info, ETRACE_PB_ILASTSIZE_SHIFT, 1));
    }
    if (messages) {
        e->last_branch.tcode = 0;
        e->stats.messages += messages;
        e->stats.bytes += out - e->win->pos;
        e->win->pos = out;
    }
    return p - pb;
}

/*
 * quiet_run_btm() in each sync mode: a function of its own, so that the
 * loop has the registers to itself
 */
static size_t __attribute__((noinline))
take_quiet_run_btm(NTraceEncoder *e, const ETracePackedBlock *pb, size_t i,
                   size_t n, uint64_t mask, uint64_t want)
{
    if (e->sync_due) {
        return quiet_run_btm(e, pb, i, n, mask, want, QUIET_SYNC_DUE);
    }
    switch (e->o.sync_mode) {
    case ETRACE_SYNC_OFF:
        return quiet_run_btm(e, pb, i, n, mask, want, ETRACE_SYNC_OFF);
    case ETRACE_SYNC_PACKETS:
        return quiet_run_btm(e, pb, i, n, mask, want, ETRACE_SYNC_PACKETS);
    case ETRACE_SYNC_CYCLES:
        return quiet_run_btm(e, pb, i, n, mask, want, ETRACE_SYNC_CYCLES);
    case ETRACE_SYNC_HALFWORDS:
        return quiet_run_btm(e, pb, i, n, mask, want, ETRACE_SYNC_HALFWORDS);
    default:
        return i;
    }
}

/* quiet_run() from pb[i], if nothing rules it out */
static size_t take_quiet_run(NTraceEncoder *e, const ETracePackedBlock *pb,
                             size_t i, size_t n, unsigned priv_mask,
                             uint64_t context, uint64_t stop_mask)
{
    /* (indexed runs, of E-trace's prediction, take the general path) */
    uint64_t mask = ETRACE_PB_PLAIN | ETRACE_PB_RUN | ETRACE_PB_RUN_INDEXED |
                    stop_mask |
                    (uint64_t)priv_mask << ETRACE_PB_PRIV_SHIFT;
    uint64_t want = ETRACE_PB_PLAIN |
                    (uint64_t)e->priv << ETRACE_PB_PRIV_SHIFT;
    bool h = htm(e);

    if (e->p.src_bits || !e->synced || !e->win ||
        e->hist_len != NTRACE_HIST_BITS ||
        context != e->context || (e->priv & ~priv_mask)) {
        return i;
    }
    if (!h && !e->o.implicit_return && !e->o.repeat && !e->ret_check) {
        return take_quiet_run_btm(e, pb, i, n, mask, want);
    }
    if (e->sync_due) {
        return i;
    }
    switch (e->o.sync_mode) {
    case ETRACE_SYNC_OFF:
        return h ? quiet_run(e, pb, i, n, mask, want, ETRACE_SYNC_OFF, true) :
                   quiet_run(e, pb, i, n, mask, want, ETRACE_SYNC_OFF, false);
    case ETRACE_SYNC_PACKETS:
        return h ?
               quiet_run(e, pb, i, n, mask, want, ETRACE_SYNC_PACKETS, true) :
               quiet_run(e, pb, i, n, mask, want, ETRACE_SYNC_PACKETS, false);
    case ETRACE_SYNC_CYCLES:
        return h ?
               quiet_run(e, pb, i, n, mask, want, ETRACE_SYNC_CYCLES, true) :
               quiet_run(e, pb, i, n, mask, want, ETRACE_SYNC_CYCLES, false);
    case ETRACE_SYNC_HALFWORDS:
        return h ?
               quiet_run(e, pb, i, n, mask, want, ETRACE_SYNC_HALFWORDS,
                         true) :
               quiet_run(e, pb, i, n, mask, want, ETRACE_SYNC_HALFWORDS,
                         false);
    default:
        return i;
    }
}

size_t ntrace_encoder_packed(NTraceEncoder *e, const ETraceParams *ep,
                             const ETracePackedBlock *pb, size_t n,
                             uint64_t context, uint64_t stop_mask)
{
    unsigned priv_mask = etrace_priv_mask(ep);

    for (size_t i = 0; i < n; i++) {
        uint64_t info = pb[i].info;
        ETraceBlock b;

        if (i && (info & stop_mask)) {
            return i;
        }
        if (e->tracing) {
            i = take_quiet_run(e, pb, i, n, priv_mask, context, stop_mask);
            if (i == n) {
                break;
            }
            info = pb[i].info;
            if (i && (info & stop_mask)) {
                return i;
            }
        }
        if (e->tracing && quiet_packed(e, info, priv_mask, context)) {
            take_quiet(e, pb[i].iaddr, info);
            continue;
        }
        if (i + etrace_packed_len(info) > n) {
            return i;   /* the trap's second entry is not here */
        }
        etrace_packed_to_block(ep, &pb[i], context, 0, &b);
        ntrace_encoder_block(e, &b);
        i += etrace_packed_len(info) - 1;
    }
    return n;
}

NTraceEncoder *ntrace_encoder_new(const NTraceParams *p, NTraceEmitFn *emit,
                                  void *opaque)
{
    NTraceEncoder *e;

    if ((p->xlen != 32 && p->xlen != 64) || p->src_bits > 12 ||
        p->src_id >> p->src_bits) {
        return NULL;
    }
    e = calloc(1, sizeof(*e));
    if (e) {
        e->p = *p;
        e->emit = emit;
        e->opaque = opaque;
        e->addr_mask = p->xlen == 32 ? UINT32_MAX : UINT64_MAX;
    }
    return e;
}

void ntrace_encoder_set_window(NTraceEncoder *e, ETraceWindow *w)
{
    e->win = w;
}

void ntrace_encoder_free(NTraceEncoder *e)
{
    free(e);
}

void ntrace_encoder_start(NTraceEncoder *e, const NTraceOptions *o)
{
    e->o = *o;
    if (e->o.mode != NTRACE_MODE_HTM) {
        e->o.mode = NTRACE_MODE_BTM;
    }
    e->tracing = true;
    e->synced = false;
    e->sync_reason = NTRACE_SYNC_ENABLE;
    e->indirect_itypes = 1u << RISCV_ITYPE_TRAP_RETURN;
    for (unsigned t = 0; t < 16; t++) {
        if (riscv_itype_is_uninferable(t)) {
            e->indirect_itypes |= 1u << t;
        }
    }
    for (unsigned k = 0; k < 256; k++) {
        unsigned t = k & 15;

        e->btm_pending[k] = e->indirect_itypes >> t & 1 ?
                            NTRACE_PENDING_INDIRECT :
                            t == RISCV_ITYPE_TAKEN_BRANCH ?
                            NTRACE_PENDING_DIRECT : NTRACE_PENDING_NONE;
    }
    e->last_valid = false;
    reset_state(e, 0);
}

void ntrace_encoder_stop(NTraceEncoder *e)
{
    if (e->tracing && e->synced) {
        send_end(e);
    }
    e->tracing = false;
}

void ntrace_encoder_lost(NTraceEncoder *e)
{
    e->lost = true;
    e->synced = false;
    e->sync_reason = NTRACE_SYNC_OVERRUN;
    e->pending = NTRACE_PENDING_NONE;
    e->last_valid = false;
    e->bcnt = 0;            /* what was counted is lost too */
    e->hrepeat = 0;
    e->last_branch.tcode = 0;
}

void ntrace_encoder_stats(const NTraceEncoder *e, NTraceStats *s)
{
    *s = e->stats;
}

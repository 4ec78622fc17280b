/*
 * E-trace encoder: the instruction-delta algorithm of chapter 8 on
 * retirement blocks
 *
 * Figure 8.1 looks at three instructions: previous, current and next.
 * On blocks (section 8.3) only the first and the last instruction of a
 * block can make a packet, so the encoder keeps one block pending: its
 * last instruction is evaluated when the next block (or trap, or the end
 * of tracing) shows what follows it.  The first instruction of a block is
 * evaluated on arrival when the block has more than one instruction.
 *
 * Decisions for the current instruction, in the order of figure 8.1 as
 * reconstructed from chapters 3, 6, 8 and 11 (first match emits):
 *   1. a trap came before it              -> format 3.1 (trap)
 *   2. first traced, privilege change, precise or asynchronous context
 *      change, or resync due (see resync_here()) -> format 3.0 (sync)
 *   3. previous is an uninferable discontinuity -> format 0/1/2
 *   4. resync due with branches pending, or notify (a trigger's, or a
 *      call's after an implicit return, see HeldPin) -> format 0/1/2
 *   5. next is a trap, an asynchronous context change, untraced, or a
 *      privilege/precise context change with branches pending
 *                                          -> format 0/1/2
 *   6. branch map full (31, not all predicted) or a misprediction after
 *      31 or more predicted branches      -> format 1 or 0.0, no address
 *   7. imprecise context change pending   -> format 3.2
 * and after the last traced instruction, a support packet.
 *
 * Fast paths: QEMU calls etrace_encoder_block() for every retired block,
 * and nearly all blocks are plain (traced, no trap, notify, context or
 * privilege change, no resync due) after a plain pending instruction.
 * For those, every decision above but steps 3, 5 and 6 is known to be
 * "no", which refresh_fast() and plain_block() establish with a few
 * compares.  take_quiet_block() then handles a pending branch, inferable
 * jump, call or predicted return without a packet, take_reporting_block()
 * the report of an uninferable jump target, and the fast packers of
 * etrace-packet.c the common formats 0.1, 1 and 2.  Anything else goes
 * through the general algorithm, which stays the reference:
 * etrace_encoder_set_fast_paths(false) uses it alone, and the tests
 * check that the bytes are the same either way.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "target/riscv/insn_class.h"
#include "etrace.h"
#include "etrace-model.h"

#define MAX_MAP_BRANCHES    31
#define CTYPE_IMPRECISE     1
#define CTYPE_PRECISE       2
#define CTYPE_ASYNC         3

/* Why an address is reported (decides notify, updiscon, irreport). */
typedef enum Reason {
    REASON_UPDISCON,        /* target of an uninferable discontinuity */
    REASON_NOTIFY,          /* trigger[2] */
    REASON_INFERRED,        /* last before a format 3, resync or the end */
} Reason;

/* The instruction under evaluation: figure 8.1's "current". */
typedef struct Insn {
    uint64_t addr;
    uint64_t context;
    uint8_t size;           /* bytes; known for last instructions */
    uint8_t itype;          /* 0 unless last of its block */
    uint8_t priv;
    uint8_t ctype;          /* first of its block only; 0 if no context */
    bool sijump;
    bool notify;
    bool first;             /* first of its block */
    bool last;              /* last of its block: resync is checked here */
    bool anonymous;         /* a run's branch: addr is not known */
} Insn;

/* What is known about the instruction after the current one. */
typedef struct Next {
    bool traced;            /* false: untraced or end of trace */
    bool trap;              /* a trap comes before it */
    uint8_t priv;
    uint8_t ctype;
    uint64_t addr;          /* its address (trap: the EPC) */
    bool anonymous;         /* a run's branch: addr is not known */
} Next;

typedef struct Trap {
    bool pending;           /* taken after the last evaluated instruction */
    bool reported;          /* 2.0: already sent with thaddr 0 */
    bool interrupt;
    uint64_t cause;
    uint64_t tval;
    uint64_t epc;
} Trap;

/*
 * What an instruction does to the state after its own packet (3.2.5,
 * 4.1.1), by itype | (sijump usable) << 4, for the current options: the
 * fast path and the general path read the same table.
 */
enum {
    ACT_BRANCH = 1,         /* conditional branch: joins the branch map */
    ACT_PUSH = 2,           /* call with implicit return on */
    ACT_UPDISCON = 4,       /* its successor is an uninferable target */
    ACT_RETURN = 8,         /* implicit return: updiscon unless predicted */
    ACT_REPORT = 16,        /* pending_act only: follows an updiscon */
};
#define ACT_SIJUMP          16
#define ACT_ENTRIES         32
/* The actions a quiet run takes in its loop (quiet_run()) */
#define ACT_QUIET           (ACT_BRANCH | ACT_PUSH | ACT_RETURN)

/*
 * A call reported with notify because code may repeat after an implicit
 * return (see walk_may_revisit()), held back: its packet is made when the
 * call is evaluated, with the state changes of any report, but its bytes
 * wait here.  The next packet sends them first (send_held_pin()), which
 * gives the stream the call's report made at the call; a branch before
 * any packet makes the report unneeded (a branch since the return tells
 * the decoder's walk the two visits apart), and drop_pin() undoes it.  A
 * loss discards it with the packets the sinks dropped.
 */
typedef struct HeldPin {
    bool held;
    size_t len;
    uint8_t bytes[ETRACE_MAX_PACKET];
    /* what the report changed: drop_pin() restores it */
    uint64_t branches;
    uint64_t pbc;
    uint64_t last_addr;
    uint64_t te_insts;
    uint32_t branch_map;
    bool ret_since_report;
    bool last_report_updiscon;
    bool ambiguous_report;
    ETraceStats stats;
} HeldPin;

/* The part of a block that describes its instructions (not its trap). */
#define PENDING_BYTES       offsetof(ETraceBlock, cause)

struct ETraceEncoder {
    /*
     * The state the fast paths read or write for a block without a
     * packet: the first 64 bytes for every block, the next 64 for the
     * pending block, what follows them with calls, returns or branch
     * prediction.
     */
    uint64_t plain_mask;    /* see plain_block() */
    uint64_t plain_want;
    uint64_t packed_mask;   /* the same for packed blocks' info */
    uint64_t packed_want;
    uint64_t quiet_stop;    /* info bits that end a quiet run at once */
    const uint64_t *resync_units;   /* counts what sync_mode counts */
    uint64_t resync_fast_end;       /* *resync_units: fast paths below */
    uint64_t halfwords;     /* statistics; sync modes count them too */
    uint64_t branches;      /* branches not yet reported */
    uint64_t instructions;  /* (apart: two scalar adds beat a vector one) */
    uint32_t branch_map;
    uint8_t pending_act;    /* see pending_action() */
    uint8_t quiet_acts;     /* pending_act a quiet run takes: set_quiet() */
    bool prev_implicit_ret;
    bool branch_since_ret;
    bool bpred_on;          /* o.branch_prediction */

    uint8_t act[ACT_ENTRIES];
    /*
     * The block whose last instruction awaits its successor: a copy of
     * the fields before cause (PENDING_BYTES), itype below 16.
     */
    ETraceBlock pending;

    bool ret_since_call;
    bool ret_since_report;  /* an implicit return since the last address */
    bool ret_since_sync;    /* ... since the last format 3 */
    bool cur_mispredicted;
    bool prev_updiscon;
    bool prev_ret_miss;     /* return stack misprediction to report */
    bool prev_exact;        /* a packet pinned the previous instruction */
    uint8_t ctype_mask;     /* 3 with context_width_p, else 0 */
    uint8_t priv_mask;      /* privilege_width_p bits, at most 3 */
    ETraceCallStack calls;  /* return addresses with the return stack */
    uint64_t *ras;          /* its entries, 2^return_stack_size_p */
    uint8_t *bpred;         /* 2-bit counters, 2^bpred_size_p */
    /*
     * etrace_table_mask(bpred_size_p), cut to the address's width: the
     * same index for a masked address, and the right one for an address
     * not yet masked (quiet_run())
     */
    uint32_t bpred_mask;
    uint64_t pbc;           /* leading correctly predicted branches */
    uint64_t addr_mask;

    /* the rest: the general path, and the paths that send packets */
    uint8_t prev_priv;
    uint64_t prev_context;
    uint64_t *jtc;          /* jump targets, 2^cache_size_p */
    uint8_t *jtc_valid;
    uint32_t jtc_mask;      /* etrace_table_mask(cache_size_p) */
    bool fast_ok;           /* the state allows the fast paths */
    bool enabled;
    bool fast_allowed;      /* etrace_encoder_set_fast_paths() */
    bool run_indexes_fit;   /* etrace_run_indexes_fit() */
    bool have_pending;
    bool in_run;            /* an instruction traced since the last end */
    bool need_sync;         /* the next traced instruction is the first */
    bool sync_next;         /* resync at the next instruction */
    bool lost_pending;      /* support(trace_lost) before the next packet */
    bool last_report_updiscon;
    bool ambiguous_report;  /* last address: a jump target, updiscon 0 */
    bool context_pending;
    HeldPin pin;
    Trap trap;
    uint64_t resync_max;
    uint64_t resync_start;  /* *resync_units at the last sync */
    uint64_t te_insts;      /* te_inst packets sent (not support) */
    uint64_t last_addr;     /* reference of differential addresses */
    ETraceStats stats;      /* packets and bytes */

    ETraceParams p;
    ETraceOptions o;
    ETracePacker packer;
    ETraceEmitFn *emit;
    void *opaque;
    ETraceWindow *win;              /* etrace_encoder_set_window() */
    ETraceBlockDoneFn *block_done;  /* etrace_encoder_set_block_done() */
    void *block_done_opaque;
    ETraceSyncHookFn *sync_hook;    /* etrace_encoder_set_sync_hook() */
    void *sync_hook_opaque;
    /*
     * For sync_hook: the entry of the current call the general path takes
     * (packed_at), the one the pending block came from (pending_at), and
     * whether the instruction evaluated is the pending block's last.
     */
    bool evaluating_pending;
    long packed_at, pending_at;
};

/* --------------------------------------------------------- small tools */

/* The pending block's last instruction was evaluated. */
static inline void block_done(ETraceEncoder *e)
{
    if (unlikely(e->block_done)) {
        e->block_done(e->block_done_opaque, &e->pending);
    }
}

/*
 * A format 3 that reports an instruction is about to go out (see
 * etrace_encoder_set_sync_hook()); first_after is the index of the
 * entry of that instruction, or of the first after it.
 */
static void before_sync(ETraceEncoder *e, long first_after)
{
    if (e->sync_hook) {
        e->sync_hook(e->sync_hook_opaque, first_after);
    }
}

/* The entry of the instruction being evaluated, for before_sync(). */
static long evaluated_entry(const ETraceEncoder *e)
{
    return e->evaluating_pending ? e->pending_at : e->packed_at;
}

/*
 * Data trace places its packets by block: periodic syncs go on a block's
 * first instruction only (see evaluate()).
 */
static bool block_syncs(const ETraceEncoder *e)
{
    return e->block_done || e->sync_hook;
}

/* Between calls: the pending block is the last one given, 0 the next. */
static void between_calls(ETraceEncoder *e)
{
    e->packed_at = 0;
    e->pending_at = -1;
}

static bool is_branch_itype(unsigned itype)
{
    return itype == RISCV_ITYPE_NOT_TAKEN_BRANCH ||
           itype == RISCV_ITYPE_TAKEN_BRANCH;
}

static bool is_call_itype(unsigned itype)
{
    return itype == RISCV_ITYPE_UNINFERABLE_CALL ||
           itype == RISCV_ITYPE_INFERABLE_CALL;
}

/* itypes whose target the decoder can not infer from the binary. */
static bool is_updiscon_itype(unsigned itype)
{
    return itype == RISCV_ITYPE_TRAP_RETURN ||
           itype == RISCV_ITYPE_UNINFERABLE_JUMP_3BIT ||
           itype == RISCV_ITYPE_UNINFERABLE_CALL ||
           itype == RISCV_ITYPE_UNINFERABLE_TAIL_CALL ||
           itype == RISCV_ITYPE_COROUTINE_SWAP ||
           itype == RISCV_ITYPE_RETURN ||
           itype == RISCV_ITYPE_OTHER_UNINFERABLE_JUMP;
}

/* The action table for the current options (see ACT_BRANCH). */
static void set_actions(ETraceEncoder *e)
{
    bool ir = e->o.implicit_return != ETRACE_IR_OFF;

    for (unsigned i = 0; i < ACT_ENTRIES; i++) {
        unsigned itype = i % ACT_SIJUMP;
        bool updiscon = is_updiscon_itype(itype);
        /* 4.1.1: a jalr whose target a constant load just set */
        bool sijump = i >= ACT_SIJUMP && e->o.sijump && updiscon &&
                      itype != RISCV_ITYPE_TRAP_RETURN;
        uint8_t act = 0;

        if (is_branch_itype(itype)) {
            act |= ACT_BRANCH;
        }
        if (ir && is_call_itype(itype)) {
            act |= ACT_PUSH;
        }
        if (updiscon && !sijump) {
            act |= ir && itype == RISCV_ITYPE_RETURN ? ACT_RETURN :
                   ACT_UPDISCON;
        }
        e->act[i] = act;
    }
}

/* What sync mode off counts. */
static const uint64_t no_units;

/* Packets, instructions or half-words since the last sync. */
static uint64_t resync_count(const ETraceEncoder *e)
{
    return *e->resync_units - e->resync_start;
}

static bool resync_due(const ETraceEncoder *e)
{
    return e->o.sync_mode != ETRACE_SYNC_OFF &&
           resync_count(e) >= e->resync_max;
}

/* Whether a resync follows once one more te_inst has been sent. */
static bool resync_due_after_packet(const ETraceEncoder *e)
{
    return resync_due(e) || (e->o.sync_mode == ETRACE_SYNC_PACKETS &&
                             resync_count(e) + 1 >= e->resync_max);
}

/*
 * The value of *resync_units below which no resync can come due within
 * one plain block: a packet for the pending instruction must not make it
 * due (sync mode packets); instructions and half-words are counted after
 * the evaluations.
 */
static void set_resync_fast_end(ETraceEncoder *e)
{
    switch (e->o.sync_mode) {
    case ETRACE_SYNC_OFF:
        e->resync_fast_end = UINT64_MAX;
        break;
    case ETRACE_SYNC_PACKETS:
        e->resync_fast_end = e->resync_start + e->resync_max - 1;
        break;
    default:
        e->resync_fast_end = e->resync_start + e->resync_max;
    }
}

/* The branch count of format 0 subformat 0 can not go further. */
static inline bool count_full(uint64_t pbc)
{
    return pbc == MAX_MAP_BRANCHES + (uint64_t)UINT32_MAX;
}

static bool branch_count_full(const ETraceEncoder *e)
{
    return count_full(e->pbc);
}

static uint64_t reported_address(const ETraceEncoder *e, uint64_t addr)
{
    return e->o.full_address ? addr : (addr - e->last_addr) & e->addr_mask;
}

/* ------------------------------------------------------------- output */

static void emit_packet(ETraceEncoder *e, const ETracePacket *pkt);

static void send_support(ETraceEncoder *e, bool enable,
                         ETraceQualStatus qual)
{
    ETracePacket pkt = {
        .format = 3, .subformat = 3, .enable = enable,
        .qual_status = qual, .options = etrace_options_pack(&e->p, &e->o),
    };

    emit_packet(e, &pkt);
}

/* The support packet a loss asked for goes before the next packet. */
static void send_lost(ETraceEncoder *e)
{
    e->lost_pending = false;
    send_support(e, e->enabled, ETRACE_QUAL_TRACE_LOST);
}

/* The counts of a packet of n bytes sent */
static inline void count_packet(ETraceEncoder *e, unsigned format,
                                bool support, size_t n)
{
    e->stats.packets[format & 3]++;
    e->stats.bytes += n;
    if (!support) {
        e->te_insts++;
    }
}

/* buf: ETRACE_MAX_PACKET bytes (ETraceEmitFn) */
static void emit_bytes(ETraceEncoder *e, unsigned format, bool support,
                       const uint8_t *buf, size_t n)
{
    count_packet(e, format, support, n);
    if (!etrace_window_put(e->win, buf, n)) {
        e->emit(e->opaque, buf, n);
    }
}

/* The bytes of a held call report (HeldPin), counted when it was made */
static __attribute__((noinline)) void send_held_pin(ETraceEncoder *e)
{
    e->pin.held = false;
    if (!etrace_window_put(e->win, e->pin.bytes, e->pin.len)) {
        e->emit(e->opaque, e->pin.bytes, e->pin.len);
    }
}

/* A held call report goes out before any other packet. */
static inline void flush_pin(ETraceEncoder *e)
{
    if (unlikely(e->pin.held)) {
        send_held_pin(e);
    }
}

static void emit_packet(ETraceEncoder *e, const ETracePacket *pkt)
{
    uint8_t buf[ETRACE_MAX_PACKET];
    size_t n;

    flush_pin(e);
    if (e->lost_pending) {
        send_lost(e);
    }
    n = etrace_packet_pack(&e->p, &e->o, pkt, buf);
    if (!n) {
        return;     /* not for valid parameters and packets */
    }
    emit_bytes(e, pkt->format, pkt->format == 3 && pkt->subformat == 3, buf, n);
}

/*
 * The n bytes a fast packer wrote to buf (none if n is 0), after the
 * trace_lost support packet that may be due.
 */
static inline void emit_fast(ETraceEncoder *e, unsigned format,
                             const uint8_t *buf, size_t n)
{
    flush_pin(e);
    if (e->lost_pending) {
        send_lost(e);
    }
    if (n) {
        emit_bytes(e, format, false, buf, n);
    }
}

/*
 * Whether a fast packer may write the next packet straight into the
 * output window: there is room for any packet, and no trace_lost support
 * packet has to go first.
 */
static inline bool window_takes_packet(const ETraceEncoder *e)
{
    return likely(etrace_window_room(e->win, ETRACE_MAX_PACKET) &&
                  !e->lost_pending);
}

/* The n bytes a fast packer wrote at the window's position are sent. */
static inline void window_packet_sent(ETraceEncoder *e, unsigned format,
                                      size_t n)
{
    if (n) {
        count_packet(e, format, false, n);
        e->win->pos += n;
    }
}

/* emit_f01() through emit (out of line: its buffer is a stack array) */
static __attribute__((noinline))
void emit_f01_bytes(ETraceEncoder *e, unsigned index, bool irreport)
{
    uint8_t buf[ETRACE_MAX_PACKET];

    emit_fast(e, 0, buf,
              etrace_packet_pack_f01(&e->packer, &e->o, index, e->branches,
                                     e->branch_map, irreport, e->calls.depth,
                                     buf));
}

/*
 * Format 0.1 for a jump target cache hit, from the fast packer, straight
 * into the window when it has room (as emit_f12()): with the jump target
 * cache alone, every return that hits is one.
 */
static void emit_f01(ETraceEncoder *e, unsigned index, bool irreport)
{
    flush_pin(e);
    if (!window_takes_packet(e)) {
        emit_f01_bytes(e, index, irreport);
        return;
    }
    window_packet_sent(e, 0,
                       etrace_packet_pack_f01(&e->packer, &e->o, index,
                                              e->branches, e->branch_map,
                                              irreport, e->calls.depth,
                                              e->win->pos));
}

/* Format 0.0 for a count of predicted branches, from the fast packer. */
static void emit_f00(ETraceEncoder *e, uint32_t branch_count)
{
    uint8_t buf[ETRACE_MAX_PACKET];

    emit_fast(e, 0, buf,
              etrace_packet_pack_f00(&e->packer, &e->o, branch_count, buf));
}

/* emit_f12() through emit (out of line: its buffer is a stack array) */
static __attribute__((noinline))
void emit_f12_bytes(ETraceEncoder *e, unsigned format, unsigned branches,
                    uint64_t address, bool notify, bool updiscon,
                    bool irreport)
{
    uint8_t buf[ETRACE_MAX_PACKET];

    emit_fast(e, format, buf,
              etrace_packet_pack_f12(&e->packer, format, branches,
                                     e->branch_map, address, notify, updiscon,
                                     irreport, e->calls.depth, buf));
}

/*
 * Format 1 or 2 (format 1 with branches 0: a full map, no address): the
 * bytes emit_packet() would send, from the fast packer, into the output
 * window if it has room.
 */
static inline __attribute__((always_inline))
void emit_f12(ETraceEncoder *e, unsigned format, unsigned branches,
              uint64_t address, bool notify, bool updiscon, bool irreport)
{
    uint8_t *pos;
    size_t n;

    flush_pin(e);
    if (!window_takes_packet(e)) {
        emit_f12_bytes(e, format, branches, address, notify, updiscon,
                       irreport);
        return;
    }
    pos = e->win->pos;
    n = notify || updiscon || irreport ? 0 :
        etrace_packet_pack_f12_plain(&e->packer, format, branches,
                                     e->branch_map, address, pos);
    if (!n) {
        n = etrace_packet_pack_f12(&e->packer, format, branches,
                                   e->branch_map, address, notify, updiscon,
                                   irreport, e->calls.depth, pos);
    }
    window_packet_sent(e, format, n);
}

static void clear_branches(ETraceEncoder *e)
{
    e->branches = 0;
    e->branch_map = 0;
    e->pbc = 0;
}

/* State every synchronisation packet (format 3.0, 3.1) resets. */
static void sync_reset(ETraceEncoder *e)
{
    clear_branches(e);
    if (e->bpred) {
        memset(e->bpred, ETRACE_BPRED_INIT, 1u << e->p.bpred_size_p);
    }
    if (e->jtc_valid) {
        memset(e->jtc_valid, 0, 1u << e->p.cache_size_p);
    }
    e->calls.depth = 0;
    e->ret_since_call = false;
    e->ret_since_report = false;
    e->ret_since_sync = false;
    e->branch_since_ret = false;
    e->resync_start = *e->resync_units;
    set_resync_fast_end(e);
    e->need_sync = false;
    e->sync_next = false;
    e->context_pending = false;
    e->last_report_updiscon = false;
    e->ambiguous_report = false;
}

/* Format 3.0 or 3.1 fields common to both. */
static void sync_fields(ETracePacket *pkt, const Insn *cur)
{
    pkt->format = 3;
    pkt->branch = cur->itype != RISCV_ITYPE_TAKEN_BRANCH;
    pkt->privilege = cur->priv;
    pkt->context = cur->context;
    pkt->address = cur->addr;
}

static void send_sync(ETraceEncoder *e, const Insn *cur)
{
    ETracePacket pkt = { .subformat = 0 };

    before_sync(e, evaluated_entry(e));
    sync_fields(&pkt, cur);
    emit_packet(e, &pkt);
    sync_reset(e);
    e->last_addr = cur->addr;
}

/* Format 3.1 for the first instruction of a trap handler. */
static void send_trap(ETraceEncoder *e, const Insn *cur)
{
    ETracePacket pkt = { .subformat = 1 };
    const Trap *t = &e->trap;

    if (e->p.arch == ETRACE_ARCH_2_0 && t->reported) {
        send_sync(e, cur);    /* the cause went out with thaddr 0 */
        return;
    }
    before_sync(e, evaluated_entry(e));
    sync_fields(&pkt, cur);
    pkt.ecause = t->cause;
    pkt.interrupt = t->interrupt;
    if (e->p.arch == ETRACE_ARCH_2_0) {
        pkt.thaddr = true;
        pkt.tvalepc = t->tval;
    } else {
        /* 6.3.1: the EPC of illegal instructions, else the trap value */
        pkt.tvalepc = t->cause == 2 && !t->interrupt ? t->epc : t->tval;
    }
    emit_packet(e, &pkt);
    sync_reset(e);
    e->last_addr = cur->addr;
}

/*
 * 2.0: a trap reported before its handler retires (thaddr 0); its EPC
 * follows the instructions of the entries before first_after.
 */
static void send_trap_early(ETraceEncoder *e, long first_after)
{
    ETracePacket pkt = {
        .format = 3, .subformat = 1, .branch = true,
        .privilege = e->prev_priv, .context = e->prev_context,
        .ecause = e->trap.cause, .interrupt = e->trap.interrupt,
        .thaddr = false, .address = e->trap.epc, .tvalepc = e->trap.tval,
    };

    before_sync(e, first_after);
    emit_packet(e, &pkt);
    e->trap.reported = true;
}

/*
 * irreport and irdepth of a packet (6.6.3): a failed return prediction,
 * or the depth the decoder needs to stop in the right call before a
 * format 3 or the end of tracing.
 */
static bool ir_report(const ETraceEncoder *e, Reason why, bool final)
{
    if (e->o.implicit_return == ETRACE_IR_OFF) {
        return false;
    }
    if (why == REASON_UPDISCON) {
        return e->prev_ret_miss;
    }
    if (!final) {
        return false;
    }
    if (e->prev_implicit_ret) {
        /*
         * Depth 0 too: an earlier visit of the address, not through a
         * return and deeper, would look the same without it.
         */
        return true;
    }
    return e->ret_since_call && !e->branch_since_ret;
}

/* A jump target cache hit for an uninferable target; updates the cache. */
static bool jtc_lookup(ETraceEncoder *e, uint64_t addr, unsigned *index)
{
    unsigned i = etrace_table_index(&e->p, e->jtc_mask, addr);
    bool hit = e->jtc_valid[i] && e->jtc[i] == addr;

    e->jtc[i] = addr;
    e->jtc_valid[i] = 1;
    *index = i;
    return hit;
}

/*
 * The packet reporting the instruction at addr with the pending branches:
 * format 0.0 once 31 or more branches were predicted, 0.1 for a cached
 * jump target (index), else 1 or 2 (section 8.1).
 */
static __attribute__((noinline))
void send_report(ETraceEncoder *e, uint64_t addr, bool notify,
                 bool updiscon, bool irreport, bool cached, unsigned index)
{
    ETracePacket pkt = { 0 };

    if (e->pbc >= MAX_MAP_BRANCHES) {
        pkt.format = 0;
        pkt.subformat = 0;
        pkt.branch_count = e->pbc - MAX_MAP_BRANCHES;
        pkt.branch_fmt = e->cur_mispredicted ? 3 : 2;
        pkt.address = reported_address(e, addr);
    } else if (cached && !updiscon) {
        /* format 0.1 has no updiscon bit: only when none is needed */
        pkt.format = 0;
        pkt.subformat = 1;
        pkt.index = index;
        pkt.branches = e->branches;
        pkt.branch_map = e->branch_map;
    } else {
        pkt.format = e->branches ? 1 : 2;
        pkt.branches = e->branches;
        pkt.branch_map = e->branch_map;
        pkt.address = reported_address(e, addr);
    }
    etrace_packet_set_flags(&e->p, &pkt, notify, updiscon, irreport,
                            e->calls.depth);
    emit_packet(e, &pkt);
}

/*
 * Report the instruction at addr; true if with the updiscon bit.  Inlined
 * where it is called with constant reasons and flags, which fold away.
 */
static inline __attribute__((always_inline))
bool send_address(ETraceEncoder *e, uint64_t addr, Reason why,
                  bool next_f3, bool final)
{
    bool updiscon = why == REASON_UPDISCON && next_f3;
    bool irreport = ir_report(e, why, next_f3 || final);
    bool cached = false;
    unsigned index = 0;

    if (why == REASON_UPDISCON && e->o.jump_target_cache) {
        cached = jtc_lookup(e, addr, &index);
    }
    if (e->pbc >= MAX_MAP_BRANCHES || !e->fast_allowed) {
        send_report(e, addr, why == REASON_NOTIFY, updiscon, irreport,
                    cached, index);
    } else if (cached && !updiscon) {
        emit_f01(e, index, irreport);   /* as send_report() would */
    } else {
        emit_f12(e, e->branches ? 1 : 2, e->branches,
                 reported_address(e, addr), why == REASON_NOTIFY, updiscon,
                 irreport);
    }
    clear_branches(e);
    e->last_addr = addr;
    e->ret_since_report = false;
    e->last_report_updiscon = why == REASON_UPDISCON;
    e->ambiguous_report = why == REASON_UPDISCON && !updiscon;
    return updiscon;        /* exact: the decoder will stop right there */
}

/*
 * Whether a call report may wait (HeldPin): not before a format 3 or the
 * end, which would send it at once, not when a trace_lost support packet
 * has to go first, and not with data trace, whose packets follow the
 * instruction packets that report their instructions' blocks.
 */
static bool pin_may_wait(const ETraceEncoder *e, bool next_f3, bool final)
{
    return !next_f3 && !final && !e->lost_pending && !e->sync_hook &&
           !e->block_done;
}

/*
 * Report the call at addr with notify (see walk_may_revisit()), held
 * back when it may wait: its bytes go to the pin's own window, and what
 * send_address() changes is kept for drop_pin().  A pin held before goes
 * out first.
 */
static __attribute__((noinline))
void pin_call(ETraceEncoder *e, uint64_t addr, bool next_f3, bool final)
{
    HeldPin *pin = &e->pin;
    ETraceWindow *out = e->win;
    ETraceWindow own = { pin->bytes, pin->bytes + sizeof(pin->bytes) };

    if (!pin_may_wait(e, next_f3, final)) {
        send_address(e, addr, REASON_NOTIFY, next_f3, final);
        return;
    }
    flush_pin(e);
    pin->branches = e->branches;
    pin->pbc = e->pbc;
    pin->branch_map = e->branch_map;
    pin->last_addr = e->last_addr;
    pin->te_insts = e->te_insts;
    pin->ret_since_report = e->ret_since_report;
    pin->last_report_updiscon = e->last_report_updiscon;
    pin->ambiguous_report = e->ambiguous_report;
    pin->stats = e->stats;
    e->win = &own;
    send_address(e, addr, REASON_NOTIFY, false, false);
    e->win = out;
    pin->len = own.pos - pin->bytes;
    pin->held = true;
}

/*
 * A branch came before any packet: the held call report is not needed,
 * and what it changed is undone before the branch is evaluated, so that
 * every decision about the branch sees the state without it.  The
 * instructions between the call and the branch sent nothing, and would
 * have sent nothing without the report either: a report is held only
 * while sync_may_revisit() holds (an implicit return since the last
 * format 3, no branch since), so no resync could fall there (sync_next
 * stayed false too), and every other packet is sent with or without it.
 */
static __attribute__((noinline)) void drop_pin(ETraceEncoder *e)
{
    const HeldPin *pin = &e->pin;

    e->pin.held = false;
    e->branches = pin->branches;
    e->pbc = pin->pbc;
    e->branch_map = pin->branch_map;
    e->last_addr = pin->last_addr;
    e->te_insts = pin->te_insts;
    e->ret_since_report = pin->ret_since_report;
    e->last_report_updiscon = pin->last_report_updiscon;
    e->ambiguous_report = pin->ambiguous_report;
    e->stats = pin->stats;
}

/*
 * Step 6: a full branch map, or the end of a run of predictions, with
 * branches pending of which pbc were predicted, the last one not if
 * mispredicted.
 */
static inline bool map_due(uint64_t branches, uint64_t pbc, bool mispredicted)
{
    return (branches == MAX_MAP_BRANCHES && pbc < MAX_MAP_BRANCHES) ||
           (pbc >= MAX_MAP_BRANCHES && mispredicted);
}

static bool branches_to_report(const ETraceEncoder *e)
{
    return map_due(e->branches, e->pbc, e->cur_mispredicted);
}

/* send_branches() by etrace_packet_pack(). */
static __attribute__((noinline)) void send_branches_packet(ETraceEncoder *e)
{
    ETracePacket pkt = { .format = 1 };

    if (e->pbc >= MAX_MAP_BRANCHES) {
        /* 6.8: the failed branch is implied by the count */
        pkt.format = 0;
        pkt.subformat = 0;
        pkt.branch_count = e->pbc - MAX_MAP_BRANCHES;
        pkt.branch_fmt = 0;
    } else {
        pkt.branches = 0;             /* 0 = 31 branches, no address */
        pkt.branch_map = e->branch_map;
    }
    emit_packet(e, &pkt);
}

static void send_branches(ETraceEncoder *e)
{
    /* the fast packers: no packet to clear */
    if (!e->fast_allowed) {
        send_branches_packet(e);
    } else if (e->pbc < MAX_MAP_BRANCHES) {
        emit_f12(e, 1, 0, 0, false, false, false);
    } else {
        /* 6.8: the failed branch is implied by the count */
        emit_f00(e, e->pbc - MAX_MAP_BRANCHES);
    }
    clear_branches(e);
    e->ambiguous_report = false;
}

static void send_context(ETraceEncoder *e, const Insn *cur)
{
    ETracePacket pkt = { .format = 3, .subformat = 2, .privilege = cur->priv,
                       .context = cur->context };

    emit_packet(e, &pkt);
    e->context_pending = false;
}

/* ----------------------------------------------------- the algorithm */

/* 3.2.6: whether the predictor got the branch at addr right; its update. */
static inline void predict_branch(ETraceEncoder *e, bool taken,
                                  uint64_t addr)
{
    unsigned i = etrace_table_index(&e->p, e->bpred_mask, addr);
    uint8_t state = e->bpred[i];
    bool hit = etrace_bpred_taken(state) == taken;

    if (hit && e->pbc == e->branches) {
        e->pbc++;
    }
    e->cur_mispredicted = !hit;
    e->bpred[i] = etrace_bpred_next(state, taken);
}

/* A branch at addr joins the pending branches. */
static inline void add_branch(ETraceEncoder *e, bool taken, uint64_t addr)
{
    if (e->bpred_on) {
        predict_branch(e, taken, addr);
    }
    if (e->branches < MAX_MAP_BRANCHES) {
        e->branch_map |= (uint32_t)!taken << e->branches;
    }
    e->branches++;
    e->branch_since_ret = true;
}

/* A return goes where the counter or the stack predicts (3.2.5). */
static bool return_predicted(const ETraceEncoder *e, bool next_traced,
                             uint64_t next_addr)
{
    if (e->calls.depth == 0) {
        return false;
    }
    if (e->calls.entry) {
        return next_traced &&
               etrace_callstack_at(&e->calls, e->calls.depth - 1) ==
               next_addr;
    }
    return true;
}

/*
 * c's row of the action table.  The decoder sees the constant load of a
 * sequentially inferable jump only if it precedes c's packet: not when c
 * itself was reported by a format 3.
 */
static unsigned insn_action(const ETraceEncoder *e, const Insn *cur,
                            bool sent_f3)
{
    return e->act[cur->itype | (cur->sijump && !sent_f3 ? ACT_SIJUMP : 0)];
}

/* Whether an instruction with action act leaves an updiscon behind. */
static bool leaves_updiscon(const ETraceEncoder *e, unsigned act,
                            const Next *succ)
{
    return (act & ACT_UPDISCON) ||
           ((act & ACT_RETURN) &&
            !return_predicted(e, succ->traced, succ->addr));
}

/*
 * Whether a pending resync may be placed on c.  A decoder follows the
 * code to a format 3 address and stops at its first occurrence, so the
 * target of an uninferable jump qualifies only when the decoder stands
 * exactly on the jump (else it could stop at an earlier occurrence:
 * 6.6.2's looplabel case, which only formats 0..2 can tell apart), and
 * never after a mispredicted return (format 3 has no irreport: the
 * decoder would pop its stack).  Otherwise c is reported as usual, with
 * the updiscon bit, and the resync moves on by one instruction.
 */
static bool resync_here(const ETraceEncoder *e)
{
    return !e->prev_updiscon || (e->prev_exact && !e->prev_ret_miss);
}

/*
 * An implicit return since the last reported address (or format 3), and
 * no branch since the last one.  A decoder walks from the last reported
 * address to the next one and stops at its first occurrence with no
 * branch outcome left.  A function called again after a return, with no
 * branch in between, visits its addresses a second time at the same
 * depth, which 6.6.3's irdepth cannot tell apart: a report there (the
 * last instruction before a trap, a resync) would stop the decoder in
 * the earlier call.  So such a call is reported itself, with notify
 * (6.6.2 case 4: the decoder stops at its first occurrence, which is
 * this one, as no address can recur at the same depth before a call made
 * in this state).
 */
static bool walk_may_revisit(const ETraceEncoder *e)
{
    return e->ret_since_report && !e->branch_since_ret;
}

/* An implicit return: walk_may_revisit() and sync_may_revisit() count it */
static inline void note_implicit_return(ETraceEncoder *e)
{
    e->ret_since_report = true;
    e->ret_since_sync = true;
}

/*
 * A format 3 has no irdepth: after an implicit return since the last
 * format 3 and no branch since, its address may also be met at another
 * depth (a call of the next instruction, a recursion unwinding), so a
 * resync waits for a branch.
 */
static bool sync_may_revisit(const ETraceEncoder *e)
{
    return e->ret_since_sync && !e->branch_since_ret;
}

/* sync_may_revisit() once c, followed by succ, has retired */
static bool sync_may_revisit_after(const ETraceEncoder *e, const Insn *cur,
                                   const Next *succ)
{
    if ((insn_action(e, cur, false) & ACT_RETURN) &&
        return_predicted(e, succ->traced, succ->addr)) {
        return true;
    }
    return !is_branch_itype(cur->itype) && sync_may_revisit(e);
}

/* Whether c, with action act, is such a call (see walk_may_revisit()) */
static bool call_to_pin(const ETraceEncoder *e, unsigned act)
{
    return (act & ACT_PUSH) && walk_may_revisit(e);
}

/*
 * After an instruction with action act (a call: returning to
 * return_addr): calls and returns (3.2.5), and whether it leaves an
 * uninferable discontinuity for the next one to report.  The general and
 * the fast path share it.
 */
static inline void after_insn(ETraceEncoder *e, unsigned act,
                              uint64_t return_addr, bool next_traced,
                              uint64_t next_addr)
{
    bool updiscon = act & ACT_UPDISCON;

    e->prev_ret_miss = false;
    e->prev_implicit_ret = false;
    if (act & ACT_PUSH) {
        etrace_callstack_push(&e->calls, return_addr);
        e->ret_since_call = false;
    } else if (act & ACT_RETURN) {
        if (return_predicted(e, next_traced, next_addr)) {
            etrace_callstack_pop(&e->calls);
            e->prev_implicit_ret = true;
            e->ret_since_call = true;
            note_implicit_return(e);
            e->branch_since_ret = false;
        } else {
            /* the stack predicted elsewhere: report with the depth */
            updiscon = true;
            e->prev_ret_miss = e->calls.depth && next_traced;
        }
    }
    e->prev_updiscon = updiscon;
}

static void update_after(ETraceEncoder *e, const Insn *cur, const Next *succ,
                         bool sent_f3)
{
    after_insn(e, insn_action(e, cur, sent_f3),
               (cur->addr + cur->size) & e->addr_mask, succ->traced,
               succ->addr);
    e->prev_priv = cur->priv;
    e->prev_context = cur->context;
    if (cur->last) {
        /*
         * Pending branches first go out with a resync_br report, or with
         * the report of the jump target when c is an uninferable jump.
         */
        e->sync_next = resync_due(e) && !succ->anonymous &&
                       (!e->branches || e->prev_updiscon) &&
                       !sync_may_revisit(e);
    }
}

/* One instruction through figure 8.1. */
static void evaluate(ETraceEncoder *e, const Insn *cur, const Next *succ)
{
    /*
     * a resync needs the addresses of c (with branches) and of the next,
     * and a walk to them that cannot stop early
     */
    bool sync_point = cur->last && !succ->anonymous &&
                      !sync_may_revisit_after(e, cur, succ);
    bool due = sync_point && !cur->anonymous && resync_due(e);
    /*
     * A resync's report waits past an implicit return: the spec's
     * follow_execution_path() stops at an inferred address only if the
     * instruction before it is no uninferable discontinuity (by its
     * opcode, which a return is).  6.6.3 says how to report there, with
     * irdepth; decoders that follow the pseudo-code would go past it.  A
     * trap or a privilege change can not wait.
     */
    bool resync_report = due && !e->prev_implicit_ret;
    bool ctx_sync = cur->ctype == CTYPE_PRECISE || cur->ctype == CTYPE_ASYNC;
    /* a format 3 follows the address packet this instruction may send */
    bool next_f3 = succ->traced &&
                   (succ->trap || succ->priv != cur->priv ||
                    succ->ctype == CTYPE_PRECISE ||
                    succ->ctype == CTYPE_ASYNC ||
                    (sync_point && resync_due_after_packet(e)));
    bool updiscon = leaves_updiscon(e, insn_action(e, cur, false), succ);
    bool next_forces, sent_f3 = false, exact = false;

    if (!e->in_run) {
        e->in_run = true;   /* stores only on change: this is hot */
    }
    if (e->cur_mispredicted) {
        e->cur_mispredicted = false;
    }
    if (is_branch_itype(cur->itype)) {
        add_branch(e, cur->itype == RISCV_ITYPE_TAKEN_BRANCH, cur->addr);
    }
    if (cur->ctype == CTYPE_IMPRECISE) {
        e->context_pending = true;
    }
    /* figure 8.1's green diamond: what follows needs c reported */
    next_forces = !succ->traced || succ->trap || succ->ctype == CTYPE_ASYNC ||
                  (e->branches && (succ->priv != cur->priv ||
                                   succ->ctype == CTYPE_PRECISE));
    /*
     * The last report was a jump target without the updiscon bit: the
     * decoder may have stopped at an earlier occurrence of it and takes
     * a format 3 next as confirmation (6.6.2 case 3).  A report of c in
     * between tells it to go on (case 1).
     */
    next_forces = next_forces ||
                  (e->ambiguous_report && succ->traced &&
                   (succ->priv != cur->priv || succ->ctype == CTYPE_PRECISE ||
                    (resync_report && !updiscon)));

    if (e->trap.pending) {
        send_trap(e, cur);
        e->trap.pending = false;
        sent_f3 = true;
    } else if (e->need_sync || (e->sync_next && resync_here(e) &&
                                (cur->first || !block_syncs(e))) ||
               ctx_sync || cur->priv != e->prev_priv) {
        send_sync(e, cur);
        sent_f3 = true;
    } else if (e->prev_updiscon) {
        exact = send_address(e, cur->addr, REASON_UPDISCON,
                             next_f3 || e->sync_next, !succ->traced);
    } else if (cur->notify) {
        send_address(e, cur->addr, REASON_NOTIFY, next_f3, !succ->traced);
    } else if (call_to_pin(e, insn_action(e, cur, false))) {
        pin_call(e, cur->addr, next_f3, !succ->traced);
    } else if ((resync_report && e->branches && !updiscon) ||
               next_forces || branch_count_full(e)) {
        send_address(e, cur->addr, REASON_INFERRED, next_f3, !succ->traced);
    } else if (branches_to_report(e)) {
        send_branches(e);
    } else if (e->context_pending) {
        send_context(e, cur);
    }
    update_after(e, cur, succ, sent_f3);
    e->prev_exact = sent_f3 || exact;
}

/* A block of iretire half-words is its last instruction alone. */
static inline bool single_insn(uint64_t iretire, bool ilastsize)
{
    return iretire * 2 <= (ilastsize ? 4u : 2u);
}

/* The address of the last instruction of a block at iaddr. */
static inline uint64_t last_insn_addr(const ETraceEncoder *e, uint64_t iaddr,
                                      uint64_t iretire, bool ilastsize)
{
    unsigned size = ilastsize ? 4 : 2;
    uint64_t bytes = iretire * 2;

    return ((iaddr & e->addr_mask) + (bytes > size ? bytes - size : 0)) &
           e->addr_mask;
}

/* The address of the pending block's last instruction. */
static inline uint64_t pending_addr(const ETraceEncoder *e)
{
    const ETraceBlock *b = &e->pending;

    return last_insn_addr(e, b->iaddr, b->iretire, b->ilastsize);
}

/* The address after the pending block's last instruction. */
static inline uint64_t pending_end(const ETraceEncoder *e)
{
    const ETraceBlock *b = &e->pending;

    return (pending_addr(e) + (b->ilastsize ? 4 : 2)) & e->addr_mask;
}

/* The last instruction of the pending block. */
static Insn pending_insn(const ETraceEncoder *e)
{
    const ETraceBlock *b = &e->pending;
    unsigned size = b->ilastsize ? 4 : 2;
    bool single = (uint64_t)b->iretire * 2 <= size;
    Insn cur = {
        .addr = pending_addr(e),
        .context = b->context, .size = size, .itype = b->itype,
        .priv = b->priv, .sijump = b->sijump, .notify = b->notify,
        .first = single, .last = true, .anonymous = b->run != 0,
        /* a context change applies to the block's first instruction */
        .ctype = single ? b->ctype & e->ctype_mask : 0,
    };

    return cur;
}

/*
 * Evaluate the pending block's last instruction, now that succ is known.
 * A run's last branch must be followed by a plain traced block, the one
 * event that can not make the encoder report it: anything else loses it.
 */
static void finish_pending(ETraceEncoder *e, const Next *succ)
{
    if (e->have_pending) {
        Insn cur = pending_insn(e);

        if (cur.anonymous && (!succ->traced || succ->trap || succ->ctype ||
                            succ->priv != cur.priv)) {
            etrace_encoder_lost(e);
            return;
        }
        e->have_pending = false;
        if (unlikely(e->pin.held) && is_branch_itype(cur.itype)) {
            drop_pin(e);    /* before any decision about the branch */
        }
        e->evaluating_pending = true;
        evaluate(e, &cur, succ);
        e->evaluating_pending = false;
        block_done(e);
    }
}

/* Tracing stops after the last evaluated instruction (6.5.1). */
static void end_run(ETraceEncoder *e, bool enable)
{
    static const Next untraced = { .traced = false };

    finish_pending(e, &untraced);
    if (e->in_run || !enable) {
        /* every access of the blocks so far before the end */
        before_sync(e, e->packed_at);
    }
    if (e->in_run) {
        send_support(e, enable, e->last_report_updiscon ?
                     ETRACE_QUAL_ENDED_UPD : ETRACE_QUAL_ENDED_REP);
    } else if (!enable) {
        send_support(e, false, ETRACE_QUAL_NO_CHANGE);
    }
    e->in_run = false;
    e->need_sync = true;
    e->trap.pending = false;
    clear_branches(e);
}

static void take_trap(ETraceEncoder *e, const ETraceBlock *b)
{
    Trap t = {
        .pending = true, .interrupt = b->itype == RISCV_ITYPE_INTERRUPT,
        .cause = b->cause, .tval = b->tval, .epc = b->epc & e->addr_mask,
    };
    Next succ = { .traced = true, .trap = true, .addr = t.epc };
    bool v2 = e->p.arch == ETRACE_ARCH_2_0;

    if (e->trap.pending && !e->have_pending) {
        /*
         * The first handler did not retire anything (when it did, its
         * one instruction is pending: reported as the first's handler).
         */
        if (v2 && e->in_run && !e->trap.reported) {
            send_trap_early(e, e->packed_at);   /* the first's */
        }
        e->trap = t;
        return;
    }
    finish_pending(e, &succ);
    e->trap = t;
    if (v2 && e->in_run && e->prev_updiscon) {
        /* the EPC is the target of an uninferable jump: send it now */
        send_trap_early(e, e->packed_at + 2);
    }
}

static inline void count_units(ETraceEncoder *e, const ETraceBlock *b)
{
    /* also the resync count of sync modes cycles and half-words */
    e->halfwords += b->iretire;
    e->instructions += b->ninsns ? b->ninsns : 1;
}

/*
 * itypes above 15 do not exist; every test of the algorithm treats them
 * as 0, and a stored itype indexes the action table.
 */
static uint8_t stored_itype(uint8_t itype)
{
    return itype < ACT_SIJUMP ? itype : RISCV_ITYPE_NONE;
}

/* The retired instructions of a qualified or unqualified block. */
static void take_insns(ETraceEncoder *e, const ETraceBlock *b)
{
    unsigned size = b->ilastsize ? 4 : 2;
    uint64_t bytes = (uint64_t)b->iretire * 2;
    bool single = bytes <= size;
    uint8_t ctype = e->p.context_width_p ? b->ctype & 3 : 0;
    Next succ = {
        .traced = b->qualified, .trap = e->trap.pending, .priv = b->priv,
        .ctype = ctype, .addr = b->iaddr & e->addr_mask,
    };
    Insn first = {
        .addr = succ.addr, .context = b->context, .priv = b->priv,
        .ctype = ctype, .size = size, .first = true,
    };

    if (!b->qualified) {
        if (e->in_run || e->have_pending) {
            end_run(e, true);
        }
        e->trap.pending = false;
        return;
    }
    finish_pending(e, &succ);
    if (!single) {
        Next inside = { .traced = true, .priv = b->priv };

        evaluate(e, &first, &inside);
    }
    memcpy(&e->pending, b, PENDING_BYTES);
    e->pending_at = e->packed_at;
    e->pending.itype = stored_itype(b->itype);
    /* after a sync of the first instruction, which restarts the count */
    count_units(e, b);
    e->have_pending = true;
}

/*
 * The action of the pending block's last instruction, with ACT_REPORT
 * when it follows an uninferable discontinuity (prev_updiscon): kept in
 * pending_act by store_block() and refresh_fast().
 */
static unsigned pending_action(const ETraceEncoder *e)
{
    return e->act[e->pending.itype | (e->pending.sijump ? ACT_SIJUMP : 0)] |
           (e->prev_updiscon ? ACT_REPORT : 0);
}

/*
 * The one-byte fields of a block, ilastsize to ctype, read as one word:
 * plain_block() compares them with one masked compare.
 */
#define BLOCK_BYTES         offsetof(ETraceBlock, ilastsize)
_Static_assert(offsetof(ETraceBlock, run) < BLOCK_BYTES + 8 &&
               offsetof(ETraceBlock, itype) >= BLOCK_BYTES,
               "the one-byte fields of ETraceBlock moved");

static uint64_t block_bytes(const ETraceBlock *b)
{
    uint64_t w;

    memcpy(&w, (const uint8_t *)b + BLOCK_BYTES, sizeof(w));
    return w;
}

/*
 * The fast paths may run when nothing but the pending instruction's own
 * type and the branch map can make a packet: tracing in a run with a
 * block pending, no trap, sync, loss, context report or notify pending,
 * and the privilege unchanged since the previous instruction.  The fast
 * paths keep all of this true; the general path recomputes it, and the
 * fields plain_block() compares: a plain block is qualified, has no
 * notify and no context change (ctype, with contexts), a real itype
 * (below 16) and the pending block's privilege.
 */
static void refresh_fast(ETraceEncoder *e)
{
    Insn cur = pending_insn(e);
    uint8_t mask[8] = { 0 }, want[8] = { 0 };

    e->fast_ok = e->fast_allowed && e->enabled && e->have_pending &&
                 e->in_run && !e->pin.held && !e->trap.pending &&
                 !e->need_sync &&
                 !e->sync_next && !e->lost_pending && !e->context_pending &&
                 !cur.notify && !cur.ctype && cur.priv == e->prev_priv;
    mask[offsetof(ETraceBlock, itype) - BLOCK_BYTES] = 0xf0;
    mask[offsetof(ETraceBlock, priv) - BLOCK_BYTES] = 0xff;
    want[offsetof(ETraceBlock, priv) - BLOCK_BYTES] = cur.priv;
    mask[offsetof(ETraceBlock, notify) - BLOCK_BYTES] = 0xff;
    mask[offsetof(ETraceBlock, qualified) - BLOCK_BYTES] = 0xff;
    want[offsetof(ETraceBlock, qualified) - BLOCK_BYTES] = true;
    mask[offsetof(ETraceBlock, ctype) - BLOCK_BYTES] = e->ctype_mask;
    mask[offsetof(ETraceBlock, run) - BLOCK_BYTES] = 0xff;
    e->pending_act = pending_action(e);
    e->packed_mask = (uint64_t)e->priv_mask << ETRACE_PB_PRIV_SHIFT;
    e->packed_want = (uint64_t)cur.priv << ETRACE_PB_PRIV_SHIFT;
    if (!e->fast_ok) {
        /* a bit outside the mask: no block matches */
        want[offsetof(ETraceBlock, ilastsize) - BLOCK_BYTES] = 1;
        e->packed_mask = 0;
        e->packed_want = 1;
    }
    memcpy(&e->plain_mask, mask, sizeof(mask));
    memcpy(&e->plain_want, want, sizeof(want));
}

/*
 * A plain block, when refresh_fast() allowed the fast paths: traced,
 * retiring instructions, no trap, notify or context change, at the
 * privilege of the pending instruction, and no resync due.
 */
static bool plain_block(const ETraceEncoder *e, const ETraceBlock *b)
{
    return (block_bytes(b) & e->plain_mask) == e->plain_want &&
           b->iretire && b->itype != RISCV_ITYPE_EXCEPTION &&
           b->itype != RISCV_ITYPE_INTERRUPT &&
           *e->resync_units < e->resync_fast_end;
}

/*
 * b becomes the pending block, once its predecessor was evaluated and
 * left prev_updiscon as after_updiscon says.
 */
static inline void store_block(ETraceEncoder *e, const ETraceBlock *b,
                               bool after_updiscon)
{
    memcpy(&e->pending, b, PENDING_BYTES);
    e->pending_act = e->act[b->itype | (b->sijump ? ACT_SIJUMP : 0)] |
                     (after_updiscon ? ACT_REPORT : 0);
    count_units(e, b);
}

/*
 * A plain block b at next (single: of one instruction) after an
 * instruction c that follows or leaves an uninferable discontinuity:
 * figure 8.1 for c and, when b has more than one instruction, the
 * first instruction of b, with the
 * decisions that refresh_fast() and plain_block() rule out left away.
 * What remains of evaluate() for c (nx traced, no trap, same privilege,
 * no context change; c not notify; no resync due or made due by c's
 * packet, so next_f3, next_forces, due and sync_next are all false):
 *   - add c's branch;
 *   - step 3: report c if it follows an uninferable discontinuity;
 *   - steps 5 and 6 (full branch count or map) only after a branch that
 *     is not reported: not here, since c is a branch only when it
 *     follows a discontinuity (take_quiet_block() has them);
 *   - after c: calls, returns and updiscon (after_insn()).
 * For b's first instruction (itype 0, no branch) only step 3 remains.
 * Returns whether b's last instruction follows an updiscon (ACT_REPORT).
 */
static __attribute__((noinline))
bool report_pending(ETraceEncoder *e, uint64_t next, bool single,
                    uint64_t context, unsigned act)
{
    const ETraceBlock *pending = &e->pending;

    e->cur_mispredicted = false;
    if (act & ACT_BRANCH) {
        add_branch(e, pending->itype == RISCV_ITYPE_TAKEN_BRANCH,
                   pending_addr(e));
    }
    if (e->prev_updiscon) {
        send_address(e, pending_addr(e), REASON_UPDISCON, false, false);
    } else if (call_to_pin(e, act)) {
        pin_call(e, pending_addr(e), false, false);
    }
    after_insn(e, act, pending_end(e), true, next);
    e->prev_context = pending->context;
    block_done(e);
    if (!single) {
        /* b's first instruction */
        e->cur_mispredicted = false;
        if (e->prev_updiscon) {
            send_address(e, next, REASON_UPDISCON, false, false);
        }
        e->prev_updiscon = false;
        e->prev_ret_miss = false;
        e->prev_implicit_ret = false;
        e->prev_context = context;
    }
    e->prev_exact = false;
    return e->prev_updiscon;
}

/* report_pending(), then b becomes the pending block. */
static void take_reporting_block(ETraceEncoder *e, const ETraceBlock *b,
                                 unsigned act)
{
    bool after_updiscon = report_pending(e, b->iaddr & e->addr_mask,
                                         single_insn(b->iretire,
                                                     b->ilastsize),
                                         b->context, act);

    store_block(e, b, after_updiscon);
    if (unlikely(e->pin.held)) {
        refresh_fast(e);    /* the general path until it goes or drops */
    }
}

/*
 * Steps 5 and 6 of figure 8.1 after a quiet branch (see
 * take_reporting_block()), then the rest of take_quiet_block().
 */
static __attribute__((noinline))
void send_map(ETraceEncoder *e, const ETraceBlock *b)
{
    if (branch_count_full(e)) {
        send_address(e, pending_addr(e), REASON_INFERRED, false, false);
    } else {
        send_branches(e);
    }
    e->prev_implicit_ret = false;
    block_done(e);
    store_block(e, b, false);
}

/*
 * The fast path, for a plain block after an instruction c that neither
 * follows nor leaves an uninferable discontinuity.  Of figure 8.1 only
 * c's branch (steps 5 and 6, see take_reporting_block()) and its call or
 * predicted return remain; b's first instruction can make no packet and
 * only clears prev_implicit_ret.  State that only the general path reads
 * after setting it itself is not kept here: prev_exact (read with
 * sync_next, which the evaluation that sets it pairs with it) and
 * prev_context (read for a trap after finish_pending() set it);
 * cur_mispredicted, which every evaluation sets before use, matters
 * only with 31 or more predicted branches, hence with prediction on.
 * prev_ret_miss is false without prev_updiscon, and the privilege stays
 * the same.  Every call out of here is the last thing it does, so the
 * common paths need no stack frame.
 */
typedef enum QuietOutcome {
    QUIET_STORE,        /* the block becomes the pending one */
    QUIET_MAP,          /* send_map() first */
    QUIET_REPORT,       /* a mispredicted return: take_reporting_block() */
} QuietOutcome;

/*
 * The decisions of take_quiet_block() for a block starting at next, of a
 * single instruction or not; QUIET_REPORT before any change of state.
 */
static inline __attribute__((always_inline))
QuietOutcome quiet_step(ETraceEncoder *e, unsigned act, uint64_t next,
                        bool single)
{
    const ETraceBlock *pending = &e->pending;
    bool implicit_ret = false;

    if (act & ACT_BRANCH) {
        bool taken = pending->itype == RISCV_ITYPE_TAKEN_BRANCH;

        /* add_branch(), the address only computed for the predictor */
        if (e->bpred_on) {
            predict_branch(e, taken, pending_addr(e));
        }
        if (e->branches < MAX_MAP_BRANCHES) {
            e->branch_map |= (uint32_t)!taken << e->branches;
        }
        e->branches++;
        e->branch_since_ret = true;
        /* both need 31 branches or more */
        if (e->branches >= MAX_MAP_BRANCHES &&
            (branch_count_full(e) || branches_to_report(e))) {
            return QUIET_MAP;
        }
    } else if (act & ACT_PUSH) {
        if (call_to_pin(e, act)) {
            return QUIET_REPORT;    /* a packet after all */
        }
        etrace_callstack_push(&e->calls, pending_end(e));
        e->ret_since_call = false;
    } else if (act & ACT_RETURN) {
        if (!return_predicted(e, true, next & e->addr_mask)) {
            return QUIET_REPORT;    /* an updiscon after all */
        }
        etrace_callstack_pop(&e->calls);
        e->ret_since_call = true;
        note_implicit_return(e);
        e->branch_since_ret = false;
        /* unless b's first instruction comes after the return */
        implicit_ret = single;
    }
    e->prev_implicit_ret = implicit_ret;
    return QUIET_STORE;
}

/*
 * store_block() after block_done(): out of the fast path's way, which
 * makes no call but its last (else it would need a stack frame).
 */
static __attribute__((noinline))
void store_block_done(ETraceEncoder *e, const ETraceBlock *b)
{
    block_done(e);
    store_block(e, b, false);
}

static inline __attribute__((always_inline))
void take_quiet_block(ETraceEncoder *e, const ETraceBlock *b, unsigned act)
{
    switch (quiet_step(e, act, b->iaddr,
                       single_insn(b->iretire, b->ilastsize))) {
    case QUIET_MAP:
        send_map(e, b);
        break;
    case QUIET_REPORT:
        take_reporting_block(e, b, act);
        break;
    default:
        if (unlikely(e->block_done)) {
            store_block_done(e, b);
        } else {
            store_block(e, b, false);
        }
        break;
    }
}

/*
 * The pending block becomes a run's branch, taken or not: a single
 * instruction without an address (its fields are arbitrary but fixed:
 * the fast and the general path must leave the same state), but for
 * the predictor's sake at iaddr, which indexes the branch's entry
 * (run_branch_addr()).
 */
static void pend_run_branch(ETraceEncoder *e, bool not_taken, uint8_t priv,
                            uint64_t context, uint64_t iaddr)
{
    e->pending = (ETraceBlock) {
        .iaddr = iaddr, .iretire = 2, .ninsns = 1, .ilastsize = 1,
        .priv = priv,
        .itype = not_taken ? RISCV_ITYPE_NOT_TAKEN_BRANCH :
                             RISCV_ITYPE_TAKEN_BRANCH,
        .qualified = true, .run = 1, .context = context,
    };
    e->pending_act = ACT_BRANCH;
    e->have_pending = true;
}

/* The predictor entry of the i-th oldest branch of an indexed run */
static inline unsigned run_branch_entry(const uint8_t *entries, unsigned i)
{
    return entries[i] & ((1u << ETRACE_RUN_INDEX_BITS) - 1);
}

/*
 * An address of that branch for the pending block: one with the same
 * entry, where etrace_run_indexes_fit() holds.
 */
static uint64_t run_branch_addr(const uint8_t *entries, unsigned i)
{
    return (uint64_t)run_branch_entry(entries, i) << 1;
}

/* With pbc predicted, a run's branches and the one before can not fill it */
static inline bool count_room(uint64_t pbc)
{
    return pbc + ETRACE_RUN_INDEXED_MAX + 1 <
           MAX_MAP_BRANCHES + (uint64_t)UINT32_MAX;
}

/*
 * With branch prediction, whether a run may be taken: it is indexed (see
 * ETraceBlock), and no branch of it can fill the count of predicted
 * branches (count_full()), which would have to be reported with the
 * address the run left out.
 */
static bool run_predictable(const ETraceEncoder *e, bool indexed, unsigned n)
{
    /* a held call report cleared the count its drop would bring back */
    uint64_t pbc = e->pin.held ? e->pin.pbc : e->pbc;

    return indexed && n <= ETRACE_RUN_INDEXED_MAX && e->run_indexes_fit &&
           count_room(pbc);
}

/*
 * Whether run b may follow the pending instruction (see ETraceBlock):
 * nothing about it may need the address of the run's first branch, and
 * it has the totals a resync by instructions or half-words counts.
 */
static bool run_follows(ETraceEncoder *e, const ETraceBlock *b)
{
    return b->qualified && !e->trap.pending &&
           (!e->bpred_on || run_predictable(e, b->run_indexed, b->run)) &&
           (b->iretire || !etrace_options_count_units(&e->o)) &&
           b->priv == e->pending.priv &&
           !(pending_action(e) & (ACT_UPDISCON | ACT_RETURN));
}

/*
 * A run's branches from the i-th oldest on, one by one, each the last
 * (and only) instruction of a block, evaluated when the next one shows
 * that a plain instruction without an address follows.
 */
static void take_run_branches(ETraceEncoder *e, const ETraceBlock *b,
                              unsigned i)
{
    Next succ = { .traced = true, .priv = b->priv, .anonymous = true };

    for (; i < b->run && i < 64; i++) {
        finish_pending(e, &succ);
        pend_run_branch(e, b->run_map >> i & 1, b->priv, b->context,
                        b->run_indexed ? run_branch_addr(b->run_entries, i)
                                       : 0);
    }
}

/* A run (see take_run_branches()). */
static void take_run(ETraceEncoder *e, const ETraceBlock *b)
{
    if (!e->have_pending) {
        return;     /* not traced: the next block with an address syncs */
    }
    if (!run_follows(e, b)) {
        etrace_encoder_lost(e);
        return;
    }
    take_run_branches(e, b, 0);
    count_units(e, b);
}

static void take_insns_or_trap(ETraceEncoder *e, const ETraceBlock *b)
{
    if (b->run) {
        take_run(e, b);
        return;
    }
    if (b->itype == RISCV_ITYPE_EXCEPTION ||
        b->itype == RISCV_ITYPE_INTERRUPT) {
        if (b->iretire) {
            ETraceBlock insns = *b;

            insns.itype = RISCV_ITYPE_NONE;
            insns.sijump = false;
            take_insns(e, &insns);
            if (!b->qualified) {
                return;     /* the trap belongs to untraced code */
            }
        }
        take_trap(e, b);
        return;
    }
    if (b->iretire) {
        take_insns(e, b);
    }
}

/* The general path of a block, out of the fast path's way. */
static __attribute__((noinline))
void take_block(ETraceEncoder *e, const ETraceBlock *b)
{
    if (!e->enabled) {
        return;
    }
    if (!b->qualified && b->iretire && !e->in_run && !e->have_pending) {
        /* filtered out between runs: take_insns() only drops a trap */
        e->trap.pending = false;
        return;
    }
    take_insns_or_trap(e, b);
    refresh_fast(e);
}

/* ---------------------------------------------------------------- API */

/* iaddress_width_p bits */
static uint64_t addr_mask_of(const ETraceParams *p)
{
    return p->iaddress_width_p >= 64 ? UINT64_MAX :
           (UINT64_C(1) << p->iaddress_width_p) - 1;
}

ETraceEncoder *etrace_encoder_new(const ETraceParams *p,
                                  ETraceEmitFn *emit, void *opaque)
{
    ETraceEncoder *e;

    if (!etrace_params_check(p, NULL) || !emit) {
        return NULL;
    }
    e = calloc(1, sizeof(*e));
    if (!e) {
        return NULL;
    }
    e->p = *p;
    e->emit = emit;
    e->opaque = opaque;
    e->addr_mask = addr_mask_of(p);
    e->ctype_mask = p->context_width_p ? 3 : 0;
    e->priv_mask = etrace_priv_mask(p);
    e->bpred_mask = etrace_table_mask(p->bpred_size_p) &
                    (e->addr_mask >> p->iaddress_lsb_p);
    e->jtc_mask = etrace_table_mask(p->cache_size_p);
    e->fast_allowed = true;
    e->run_indexes_fit = etrace_run_indexes_fit(p);
    e->resync_units = &no_units;
    etrace_packer_init(&e->packer, p);
    if (p->bpred_size_p) {
        e->bpred = malloc(1u << p->bpred_size_p);
    }
    if (p->cache_size_p) {
        e->jtc = calloc(1u << p->cache_size_p, sizeof(*e->jtc));
        e->jtc_valid = calloc(1u << p->cache_size_p, 1);
    }
    if (p->return_stack_size_p) {
        e->ras = calloc(1u << p->return_stack_size_p, sizeof(*e->ras));
    }
    if ((p->bpred_size_p && !e->bpred) ||
        (p->cache_size_p && (!e->jtc || !e->jtc_valid)) ||
        (p->return_stack_size_p && !e->ras)) {
        etrace_encoder_free(e);
        return NULL;
    }
    refresh_fast(e);        /* off until started */
    return e;
}

void etrace_encoder_free(ETraceEncoder *e)
{
    if (e) {
        free(e->bpred);
        free(e->jtc);
        free(e->jtc_valid);
        free(e->ras);
        free(e);
    }
}

/*
 * What a quiet run takes (take_quiet_run()): in the modes of
 * quiet_run_reports(), uninferable jumps and runs too; else the calls,
 * returns and branches of quiet_run(), which takes runs with prediction
 * only, and not counting.
 */
static void set_quiet(ETraceEncoder *e)
{
    bool count_units = etrace_options_count_units(&e->o);
    bool reports = !e->bpred_on && !count_units &&
                   e->o.implicit_return == ETRACE_IR_OFF &&
                   !e->o.jump_target_cache && !e->block_done;

    e->quiet_acts = reports ? ACT_BRANCH | ACT_UPDISCON | ACT_REPORT :
                    ACT_QUIET;
    e->quiet_stop = reports || (e->bpred_on && e->run_indexes_fit &&
                                !count_units) ? 0 : ETRACE_PB_RUN;
}

void etrace_encoder_start(ETraceEncoder *e, const ETraceOptions *o)
{
    ETraceQualStatus qual = ETRACE_QUAL_NO_CHANGE;
    unsigned sync_max = o->sync_max > 27 ? 27 : o->sync_max;

    if (e->enabled) {
        /* new options: report the last instruction under the old ones */
        static const Next untraced = { .traced = false };

        between_calls(e);
        finish_pending(e, &untraced);
        if (e->in_run) {
            qual = e->last_report_updiscon ? ETRACE_QUAL_ENDED_UPD :
                   ETRACE_QUAL_ENDED_REP;
            before_sync(e, e->packed_at);
        }
    }
    /* modes without hardware are off; the sync settings stay */
    etrace_options_unpack(&e->p, etrace_options_pack(&e->p, o), &e->o);
    e->o.sync_mode = o->sync_mode & 3;
    e->o.sync_max = sync_max;
    e->resync_max = UINT64_C(1) << (sync_max + 4);
    etrace_callstack_reset(&e->calls,
                           e->o.implicit_return == ETRACE_IR_RETURN_STACK ?
                           e->ras : NULL,
                           (1u << e->p.return_stack_size_p) - 1,
                           etrace_callstack_max(&e->p, e->o.implicit_return));
    set_actions(e);
    e->bpred_on = e->o.branch_prediction;
    e->resync_units = e->o.sync_mode == ETRACE_SYNC_PACKETS ? &e->te_insts :
                      e->o.sync_mode == ETRACE_SYNC_CYCLES ?
                      &e->instructions :
                      e->o.sync_mode == ETRACE_SYNC_HALFWORDS ?
                      &e->halfwords : &no_units;
    set_quiet(e);
    e->enabled = true;
    e->in_run = false;
    e->have_pending = false;
    e->trap.pending = false;
    e->prev_updiscon = false;
    sync_reset(e);
    e->need_sync = true;
    send_support(e, true, qual);
    refresh_fast(e);
}

/* The fast paths first (see the top of the file), else the general one. */
static inline __attribute__((always_inline))
void encode_block(ETraceEncoder *e, const ETraceBlock *b)
{
    unsigned act;

    if (!plain_block(e, b)) {
        take_block(e, b);
        return;
    }
    act = e->pending_act;
    if (act & (ACT_REPORT | ACT_UPDISCON)) {
        take_reporting_block(e, b, act);
        return;
    }
    take_quiet_block(e, b, act);
}

void etrace_encoder_block(ETraceEncoder *e, const ETraceBlock *b)
{
    between_calls(e);       /* its block is the next one: entry 0 */
    encode_block(e, b);
}

/* ------------------------------------------------------- packed blocks */

/* Bits [shift, shift + len) of a packed block's info word (len < 64). */
static inline unsigned pb_field(uint64_t info, unsigned shift, unsigned len)
{
    return (info >> shift) & ((UINT64_C(1) << len) - 1);
}

/* single_insn() for a packed block. */
static inline bool packed_single(uint64_t info)
{
    return single_insn(pb_field(info, ETRACE_PB_IRETIRE_SHIFT, 16),
                       pb_field(info, ETRACE_PB_ILASTSIZE_SHIFT, 1));
}

/* The branches of a packed run's map: below its highest 1 bit. */
static inline unsigned run_length(uint64_t map)
{
    return map ? 63 - __builtin_clzll(map) : 0;
}


static inline void unpack_block(uint64_t addr_mask, unsigned priv_mask,
                                const ETracePackedBlock *pb,
                                uint64_t context, unsigned ctype,
                                ETraceBlock *b)
{
    uint64_t info = pb->info;
    bool trap = !(info & ETRACE_PB_RUN) && etrace_packed_len(info) == 2;

    *b = (ETraceBlock) {
        .iaddr = pb->iaddr & addr_mask,
        .iretire = pb_field(info, ETRACE_PB_IRETIRE_SHIFT, 16),
        .ninsns = pb_field(info, ETRACE_PB_NINSNS_SHIFT, 16),
        .ilastsize = pb_field(info, ETRACE_PB_ILASTSIZE_SHIFT, 1),
        .itype = pb_field(info, ETRACE_PB_ITYPE_SHIFT, 4),
        .priv = pb_field(info, ETRACE_PB_PRIV_SHIFT, 3) & priv_mask,
        .sijump = pb_field(info, ETRACE_PB_SIJUMP_SHIFT, 1),
        .qualified = true,
        .ctype = ctype,
        .context = context,
        .cause = trap ? pb[1].cause : 0,
        .tval = trap ? pb[1].tval & addr_mask : 0,
        .epc = pb->iaddr & addr_mask,
    };
    if (info & ETRACE_PB_RUN) {
        uint64_t map = pb->iaddr;
        unsigned run = run_length(map);

        b->iaddr = b->epc = 0;
        b->itype = b->ilastsize = b->sijump = 0;
        b->run = run;
        b->run_map = map & ~(UINT64_C(1) << run);
        if (info & ETRACE_PB_RUN_INDEXED) {
            b->run_indexed = true;
            b->run_entries = etrace_run_entries(pb);
        } else if (info & ETRACE_PB_RUN_COUNTED) {
            b->run_counted = true;
            b->run_entries = etrace_run_entries(pb);
        }
        if (!run) {
            b->iretire = 0;     /* empty: ignored */
        }
    }
}

void etrace_packed_to_block(const ETraceParams *p,
                            const ETracePackedBlock *pb, uint64_t context,
                            unsigned ctype, ETraceBlock *b)
{
    unpack_block(addr_mask_of(p), etrace_priv_mask(p), pb, context, ctype, b);
}

/*
 * plain_block() for a packed block (not the first with a ctype, nor a
 * run): ETRACE_PB_PLAIN promises what the checks of iretire and itype
 * would find.
 */
static inline bool packed_plain(const ETraceEncoder *e, uint64_t info)
{
    unsigned itype = pb_field(info, ETRACE_PB_ITYPE_SHIFT, 4);

    if ((info & e->packed_mask) != e->packed_want ||
        *e->resync_units >= e->resync_fast_end) {
        return false;
    }
    return (info & ETRACE_PB_PLAIN) ||
           (pb_field(info, ETRACE_PB_IRETIRE_SHIFT, 16) &&
            itype != RISCV_ITYPE_EXCEPTION && itype != RISCV_ITYPE_INTERRUPT);
}

/*
 * store_block() for a plain packed block after a quiet one: of the
 * pending block's fields, priv, notify and qualified stay as they are.
 */
static inline void store_packed(ETraceEncoder *e, uint64_t iaddr,
                                uint64_t info, uint64_t context)
{
    ETraceBlock *p = &e->pending;
    unsigned itype = pb_field(info, ETRACE_PB_ITYPE_SHIFT, 4);
    bool sijump = pb_field(info, ETRACE_PB_SIJUMP_SHIFT, 1);
    uint32_t iretire = pb_field(info, ETRACE_PB_IRETIRE_SHIFT, 16);
    uint32_t ninsns = pb_field(info, ETRACE_PB_NINSNS_SHIFT, 16);

    p->iaddr = iaddr & e->addr_mask;
    p->iretire = iretire;
    p->ninsns = ninsns;
    p->ilastsize = pb_field(info, ETRACE_PB_ILASTSIZE_SHIFT, 1);
    p->itype = itype;
    p->sijump = sijump;
    p->ctype = 0;
    p->run = 0;
    p->context = context;
    e->pending_act = e->act[itype | (sijump ? ACT_SIJUMP : 0)];
    e->halfwords += iretire;
    e->instructions += ninsns ? ninsns : 1;
}

/*
 * The general path takes entry i of pb (see before_sync()); the pending
 * block, if any, came from the entry before, but for ignored blocks.
 */
static inline void general_at(ETraceEncoder *e, const ETracePackedBlock *pb,
                              size_t i)
{
    long j = (long)i - 1;

    while (j >= 0 && !(pb[j].info & ETRACE_PB_RUN) &&
           !pb_field(pb[j].info, ETRACE_PB_IRETIRE_SHIFT, 16) &&
           !pb_field(pb[j].info, ETRACE_PB_ITYPE_SHIFT, 4)) {
        j--;
    }
    e->packed_at = i;
    e->pending_at = j;
}

typedef enum PackedPath {
    PACKED_GENERAL,     /* take_block(): not plain */
    PACKED_MAP,         /* send_map() after quiet_step() */
} PackedPath;

/*
 * The commonest report of the default modes: the pending block ends with
 * an uninferable jump (a return, without implicit return) and does not
 * itself follow one, and b, its target, has more than one instruction.
 * Of report_pending() that leaves the report of b's first instruction,
 * with the branches pending before the jump, and no flags: the next
 * packet is not a format 3 (refresh_fast() and packed_plain() ruled out
 * traps, privilege and context changes and a resync that comes due) and
 * no return was mispredicted.  With the jump target cache, send_address()
 * makes it a format 0.1 when the target is cached (no updiscon bit is
 * needed: the next packet is no format 3).
 */
static inline bool fast_jump_target(const ETraceEncoder *e, unsigned act,
                                    uint64_t info)
{
    return act == ACT_UPDISCON && e->pbc < MAX_MAP_BRANCHES &&
           !packed_single(info);
}

static void report_jump_target(ETraceEncoder *e, uint64_t iaddr,
                               uint64_t info, uint64_t context)
{
    /* after_insn() for the jump, then b's first instruction */
    e->cur_mispredicted = false;
    e->prev_ret_miss = false;
    e->prev_implicit_ret = false;
    send_address(e, iaddr & e->addr_mask, REASON_UPDISCON, false, false);
    e->prev_updiscon = false;
    e->prev_exact = false;
    e->prev_context = context;
    store_packed(e, iaddr, info, context);
}

/*
 * take_reporting_block() for a plain packed block, which stays packed:
 * reports are as frequent as returns in the default modes.
 */
static inline void take_reporting_packed(ETraceEncoder *e, uint64_t iaddr,
                                         uint64_t info, uint64_t context,
                                         unsigned act)
{
    bool after_updiscon = report_pending(e, iaddr & e->addr_mask,
                                         packed_single(info), context, act);

    store_packed(e, iaddr, info, context);
    if (after_updiscon) {
        e->pending_act |= ACT_REPORT;
    }
    if (unlikely(e->pin.held)) {
        refresh_fast(e);    /* the general path until it goes or drops */
    }
}

/* A packed block off the quiet path, unpacked for the path it takes. */
static __attribute__((noinline))
void take_packed(ETraceEncoder *e, const ETracePackedBlock *pb,
                 uint64_t context, unsigned ctype, PackedPath path)
{
    ETraceBlock b;

    unpack_block(e->addr_mask, e->priv_mask, pb, context, ctype, &b);
    switch (path) {
    case PACKED_MAP:
        send_map(e, &b);
        break;
    default:
        take_block(e, &b);
        break;
    }
}

/*
 * A run of quiet blocks, each after an instruction that is a branch, a
 * call or a predicted return with implicit return, or nothing at all to
 * the algorithm (act in ACT_QUIET): quiet_step() and store_packed() block
 * after block, with the state they change kept in locals and the pending
 * block written once at the end; with prediction, indexed runs join in
 * the loop too (quiet_predicted_run(), after which the loop ends if they
 * sent the pending branches).  A block is
 * taken when it is plain and promised so (ETRACE_PB_PLAIN: the checks for
 * traps and empty blocks are left out), has none of the stop bits and
 * comes before the resync count could reach resync_fast_end: with sync
 * mode packets or off that count does not move here, so only the
 * instruction and half-word modes check it (count_units, constant in each
 * caller).  The run stops after a pending instruction with any other
 * action, before a return the call counter or stack does not predict,
 * and before the branch that could fill the map or, with branch
 * prediction (bpred, constant in each caller), end a run of predicted
 * branches or fill their count: the general path takes those.  Returns
 * the index of the first block not taken.
 */
#define QUIET_PREFETCH      32      /* blocks ahead */

/* The action of a packed block's last instruction (e->act) */
static inline unsigned packed_action(const ETraceEncoder *e, uint64_t info)
{
    return e->act[pb_field(info, ETRACE_PB_ITYPE_SHIFT, 4) |
                  (info >> (ETRACE_PB_SIJUMP_SHIFT - 4) & ACT_SIJUMP)];
}

/*
 * The predictor as a quiet run uses it, in locals (the stores to its
 * bytes could alias any field of e, which the compiler would then load
 * again after each), with the entry of the pending branch found as its
 * block is read.  bpred_mask is cut to the address's width:
 * ((a & addr_mask) >> lsb) & bpred_mask is (a >> lsb) & bpred_mask, so
 * the last instruction's address needs no masking.
 */
typedef struct QuietPredictor {
    uint8_t *table;
    uint64_t mask;
    unsigned lsb;
} QuietPredictor;

static inline uint8_t *quiet_entry(const QuietPredictor *qp, uint64_t iaddr,
                                   uint64_t info)
{
    /* iretire * 2 - (ilastsize ? 4 : 2): a plain block's last instruction */
    uint64_t offset = pb_field(info, ETRACE_PB_IRETIRE_SHIFT, 16) * 2 - 2 -
                      (info >> (ETRACE_PB_ILASTSIZE_SHIFT - 1) & 2);

    return &qp->table[((iaddr + offset) >> qp->lsb) & qp->mask];
}

/*
 * predict_branch() and add_branch() for the quiet run's pending branch,
 * whose predictor entry is entry, unless quiet_step() would then send the
 * map or the count: false, with nothing changed.  That can only be when
 * it is the 31st branch or later.  cur_mispredicted is left as it is:
 * each path that reads it after the run sets it first (report_pending(),
 * evaluate(), predict_branch()).
 */
static inline __attribute__((always_inline))
bool quiet_predicted_branch(uint8_t *entry, bool taken, uint64_t *branches,
                            uint64_t *pbc, uint32_t *map, uint8_t **last,
                            uint8_t *last_state)
{
    /*
     * A loop's branch uses the entry it just wrote: its state from a
     * register, not from a load that waits for that store.
     */
    uint8_t state = entry == *last ? *last_state : *entry;
    bool hit = etrace_bpred_taken(state) == taken;
    uint64_t next_pbc = *pbc + (hit & (*pbc == *branches));

    if (unlikely(*branches >= MAX_MAP_BRANCHES - 1) &&
        (count_full(next_pbc) || map_due(*branches + 1, next_pbc, !hit))) {
        return false;
    }
    if (*branches < MAX_MAP_BRANCHES) {
        *map |= (uint32_t)!taken << *branches;
    }
    *entry = *last_state = etrace_bpred_next(state, taken);
    *last = entry;
    *branches += 1;
    *pbc = next_pbc;
    return true;
}

/*
 * Before a run, step 3 of figure 8.1 (as in take_reporting_block()): a
 * pending instruction that follows an uninferable jump (act has
 * ACT_REPORT) is reported, with its own branch if it is one.
 */
static void run_report_target(ETraceEncoder *e, unsigned act)
{
    if (act & ACT_REPORT) {
        if (act & ACT_BRANCH) {
            add_branch(e, e->pending.itype == RISCV_ITYPE_TAKEN_BRANCH,
                       pending_addr(e));
        }
        send_address(e, pending_addr(e), REASON_UPDISCON, false, false);
    }
}

/*
 * The pending branches while a run's join them with prediction on, in
 * locals as quiet_run() keeps them.
 */
typedef struct RunBranches {
    uint64_t branches, pbc;
    uint32_t map;
    uint8_t *last, last_state;
    bool sent;                  /* join_run_branch() sent them */
    bool joined;                /* quiet_predicted_run(): some joined */
} RunBranches;

/*
 * A branch whose predictor entry is entry joins the pending ones: as in
 * quiet_run() unless they must go (31 or more: a full map, or a count
 * ended by a misprediction), then as evaluate() would, add_branch() and
 * step 6 (send_branches(): the count can not be full, see
 * run_predictable()).
 */
static inline void join_run_branch(ETraceEncoder *e, RunBranches *rb,
                                    uint8_t *entry, bool taken)
{
    uint8_t state;
    bool hit;

    if (likely(quiet_predicted_branch(entry, taken, &rb->branches, &rb->pbc,
                                      &rb->map, &rb->last,
                                      &rb->last_state))) {
        return;
    }
    state = *entry;
    hit = etrace_bpred_taken(state) == taken;
    *entry = rb->last_state = etrace_bpred_next(state, taken);
    rb->last = entry;
    e->branches = rb->branches + 1;
    e->pbc = rb->pbc + (hit && rb->pbc == rb->branches);
    e->branch_map = rb->map;
    if (rb->branches < MAX_MAP_BRANCHES) {
        e->branch_map |= (uint32_t)!taken << rb->branches;
    }
    e->cur_mispredicted = !hit;
    send_branches(e);
    rb->sent = true;
    rb->branches = e->branches;
    rb->pbc = e->pbc;
    rb->map = e->branch_map;
}

/*
 * The first of the n - 1 branches of a run with the outcomes map (1 = not
 * taken, oldest in bit 0) and the predictor entries at entries (oldest
 * first) that join the pending ones, as many as certainly send nothing,
 * at once: all of them when the pending ones stay below 31 whatever the
 * predictions, else, while the predictions so far were all right (pbc ==
 * branches), those up to the first misprediction (while every branch is
 * predicted, no map fills and no count ends), and otherwise those that
 * leave fewer than 31 pending.  Returns how many; join_run_branch()
 * takes the rest.  The map takes their outcomes as they are, the count
 * the leading correct predictions.
 *
 * Once the predictor has learnt a loop, its runs change nothing: each
 * entry predicts its branch and is saturated that way (3 if taken, else
 * 0), and stays so.  Those branches are only loaded and compared, with
 * no store that the next load (often of the same entry) would have to
 * wait for.
 */
static inline unsigned join_quiet_run_branches(RunBranches *rb,
                                               uint8_t *table, uint32_t mask,
                                               const uint8_t *entries,
                                               uint64_t map, unsigned n)
{
    bool counting = rb->pbc == rb->branches;
    bool may_send = rb->branches + n - 1 >= MAX_MAP_BRANCHES;
    uint64_t left, leading = counting, pbc = rb->pbc;
    unsigned i;

    if (may_send && !counting) {
        /* a branch that leaves fewer than 31 pending sends nothing */
        if (rb->branches >= MAX_MAP_BRANCHES - 1) {
            return 0;
        }
        n = MAX_MAP_BRANCHES - rb->branches;
        may_send = false;
    }
    /* the outcomes still to check (1 = taken), with a stop bit above */
    left = (~map & ((UINT64_C(1) << (n - 1)) - 1)) | UINT64_C(1) << (n - 1);
    for (i = 0; left > 1; left >>= 1, i++) {
        uint8_t *entry = &table[entries[i] & mask];
        unsigned next;

        /*
         * A saturated entry that predicts its branch (3 if taken, else
         * 0: the only states s for which s + taken is a multiple of 4)
         * stays as it is.
         */
        if (!((*entry + (left & 1)) & 3)) {
            pbc += leading;
            continue;
        }
        next = etrace_bpred_step(*entry, left & 1);
        if (may_send && !(next & 4)) {
            break;
        }
        *entry = next & 3;
        leading &= next >> 2;
        pbc += leading;
    }
    rb->pbc = pbc;
    if (rb->branches < MAX_MAP_BRANCHES) {
        rb->map |= (uint32_t)((map & ((UINT64_C(1) << i) - 1)) <<
                              rb->branches) &
                   ((UINT32_C(1) << MAX_MAP_BRANCHES) - 1);
    }
    rb->branches += i;
    rb->last = NULL;                    /* the entries changed */
    return i;
}

/*
 * A call or an implicit return pending in a quiet run (act ACT_PUSH or
 * ACT_RETURN), before a block at next: quiet_step()'s (3.2.5), with the
 * flags it changes in locals; a call returns to link.  False, with
 * nothing changed, for a return the counter or the stack does not
 * predict and for a call to pin (call_to_pin()): the general path
 * reports them.
 */
static inline __attribute__((always_inline))
bool quiet_call_or_return(ETraceEncoder *e, unsigned act, uint64_t link,
                          uint64_t next, bool *ret_since_call,
                          bool *branch_since_ret)
{
    if (act & ACT_PUSH) {
        if (e->ret_since_report && !*branch_since_ret) {
            return false;       /* call_to_pin() */
        }
        etrace_callstack_push(&e->calls, link);
        *ret_since_call = false;
        return true;
    }
    if (!return_predicted(e, true, next & e->addr_mask)) {
        return false;
    }
    etrace_callstack_pop(&e->calls);
    note_implicit_return(e);
    *ret_since_call = true;
    *branch_since_ret = false;
    return true;
}

/* The address after the last instruction of a plain packed block */
static inline uint64_t packed_end(const ETraceEncoder *e, uint64_t iaddr,
                                  uint64_t info)
{
    bool ilastsize = pb_field(info, ETRACE_PB_ILASTSIZE_SHIFT, 1);

    return (last_insn_addr(e, iaddr, pb_field(info, ETRACE_PB_IRETIRE_SHIFT,
                                              16), ilastsize) +
            (ilastsize ? 4 : 2)) & e->addr_mask;
}

/*
 * An indexed run (the record at pb) in a quiet run with prediction on: the
 * pending branch, if any (act), and all of the run's branches but the
 * last join the pending ones (join_quiet_run_branches(), join_run_branch(),
 * which may send them: then rb->sent), and the last becomes the pending
 * instruction: its outcome in *taken, its predictor entry in *entry.
 * False, with nothing changed, if the run is not for here.  The pending
 * ones in e must be those of rb (a packet sends them).
 */
static inline __attribute__((always_inline))
bool quiet_predicted_run(ETraceEncoder *e, const QuietPredictor *qp,
                         const ETracePackedBlock *pb, unsigned act,
                         bool *taken, uint8_t **entry, RunBranches *rb)
{
    uint64_t map = pb->iaddr;
    const uint8_t *entries = etrace_run_entries(pb);
    unsigned n = run_length(map), i;

    map &= ~(UINT64_C(1) << n);
    if (!n || n > ETRACE_RUN_INDEXED_MAX || !count_room(rb->pbc)) {
        return false;
    }
    if (act) {
        join_run_branch(e, rb, *entry, *taken);
    }
    i = join_quiet_run_branches(rb, qp->table, qp->mask, entries, map, n);
    for (; i + 1 < n; i++) {
        join_run_branch(e, rb,
                        &qp->table[run_branch_entry(entries, i) & qp->mask],
                        !(map >> i & 1));
    }
    *taken = !(map >> (n - 1) & 1);
    *entry = &qp->table[run_branch_entry(entries, n - 1) & qp->mask];
    rb->joined = act || n > 1;
    return true;
}

/* A run's iretire and ninsns as etrace_packed_units() (count_packed_run()) */
static inline uint64_t run_packed_units(uint64_t info)
{
    uint64_t units = etrace_packed_units(info);

    return units >> 32 ? units : units | UINT64_C(1) << 32;
}

/* What count has to go to reach end, or 0 */
static inline uint64_t units_left(uint64_t count, uint64_t end)
{
    return count < end ? end - count : 0;
}

static inline __attribute__((always_inline))
size_t quiet_run(ETraceEncoder *e, const ETracePackedBlock *pb, size_t i,
                 size_t n, uint64_t context, uint64_t stop_mask,
                 bool count_units, bool bpred)
{
    const ETracePackedBlock *p = &pb[i], *prev = NULL;
    const ETracePackedBlock *end = &pb[n - i > ETRACE_PACKED_UNITS_MAX ?
                                       i + ETRACE_PACKED_UNITS_MAX : n];
    unsigned act = e->pending_act;
    bool taken = e->pending.itype == RISCV_ITYPE_TAKEN_BRANCH;
    uint64_t branches = e->branches, pbc = e->pbc, units = 0;
    uint64_t halfwords = e->halfwords, instructions = e->instructions;
    uint64_t mask = e->packed_mask | ETRACE_PB_PLAIN | ETRACE_PB_RUN |
                    stop_mask;
    uint64_t want = e->packed_want | ETRACE_PB_PLAIN;
    /* iretire and ninsns still to go before a resync could be due */
    uint64_t halfwords_left = UINT32_MAX, instructions_left = UINT32_MAX;
    uint32_t map = e->branch_map;
    QuietPredictor qp = {
        .table = e->bpred, .lsb = e->p.iaddress_lsb_p,
        .mask = e->bpred_mask,
    };
    uint8_t *entry = NULL, *last = NULL, last_state = 0;
    /* indexed runs of the producer's, with prediction (see below) */
    bool runs = bpred && !count_units && !(e->quiet_stop & ETRACE_PB_RUN);
    uint64_t run_mask = e->packed_mask | ETRACE_PB_PLAIN | ETRACE_PB_RUN |
                        ETRACE_PB_RUN_INDEXED | stop_mask;
    uint64_t run_want = e->packed_want | ETRACE_PB_RUN | ETRACE_PB_RUN_INDEXED;
    bool run_last = false;      /* the last record taken is a run */
    bool branch_since_ret = e->branch_since_ret;
    bool ret_since_call = e->ret_since_call;
    bool implicit_ret = false;  /* prev_implicit_ret after the last */

    if (e->resync_units == &e->halfwords) {
        halfwords_left = units_left(halfwords, e->resync_fast_end);
    } else if (e->resync_units == &e->instructions) {
        instructions_left = units_left(instructions, e->resync_fast_end);
    }
    if (bpred && (act & ACT_BRANCH)) {
        entry = &qp.table[(pending_addr(e) >> qp.lsb) & qp.mask];
    }
    for (; p < end; p++) {
        uint64_t info = p->info;

        /* the producer wrote them on another core: ask for them early */
        __builtin_prefetch(p + QUIET_PREFETCH);
        bool ret_here = false;

        /* (act & ACT_BRANCH is 0 or 1, below: add it, do not test it) */
        if ((info & mask) != want || (act & ~ACT_QUIET) ||
            (!bpred && branches + (act & ACT_BRANCH) >= MAX_MAP_BRANCHES) ||
            (count_units && ((uint32_t)units >= halfwords_left ||
                             units >> 32 >= instructions_left))) {
            RunBranches rb = {
                .branches = branches, .pbc = pbc, .map = map,
                .last = last, .last_state = last_state,
            };
            bool sent;

            /*
             * An indexed run, with prediction: its branches join in the
             * loop when that sends nothing (take_run_fast() otherwise)
             */
            if (!runs || (info & run_mask) != run_want ||
                (act & ~ACT_BRANCH) || &pb[n] - p < etrace_packed_len(info) ||
                !quiet_predicted_run(e, &qp, p, act, &taken, &entry, &rb)) {
                break;
            }
            sent = rb.sent;
            branch_since_ret |= rb.joined;
            branches = rb.branches;
            pbc = rb.pbc;
            map = rb.map;
            last = rb.last;
            last_state = rb.last_state;
            implicit_ret = false;
            act = ACT_BRANCH;
            units += run_packed_units(info);
            run_last = true;
            prev = p;
            p += etrace_packed_len(info) - 1;
            if (sent) {
                /* a packet moved the resync count: the loop ends here */
                p++;
                break;
            }
            continue;
        }
        if (act & (ACT_PUSH | ACT_RETURN)) {
            uint64_t link = act & ACT_PUSH ?
                            (prev ? packed_end(e, prev->iaddr, prev->info) :
                             pending_end(e)) : 0;

            if (!quiet_call_or_return(e, act, link, p->iaddr,
                                      &ret_since_call, &branch_since_ret)) {
                break;
            }
            /* unless the block's first instruction comes after it */
            ret_here = (act & ACT_RETURN) && packed_single(info);
        } else if (!bpred) {
            map |= (uint32_t)(act & !taken) << branches;
            branches += act;
        } else if (act &&
                   !quiet_predicted_branch(entry, taken, &branches, &pbc,
                                           &map, &last, &last_state)) {
            break;
        }
        branch_since_ret |= act & ACT_BRANCH;
        implicit_ret = ret_here;
        taken = pb_field(info, ETRACE_PB_ITYPE_SHIFT, 4) ==
                RISCV_ITYPE_TAKEN_BRANCH;
        act = packed_action(e, info);
        if (bpred && act == ACT_BRANCH) {
            entry = quiet_entry(&qp, p->iaddr, info);
        }
        units += etrace_packed_units(info);
        run_last = false;
        prev = p;
    }
    if (prev) {
        e->branch_since_ret = branch_since_ret;
        e->ret_since_call = ret_since_call;
        e->branches = branches;
        e->branch_map = map;
        e->pbc = pbc;
        e->prev_implicit_ret = implicit_ret;
        /* store_packed() counts the last block: the run counts them all */
        if (run_last) {
            unsigned k = run_length(prev->iaddr);

            pend_run_branch(e, !taken,
                            pb_field(prev->info, ETRACE_PB_PRIV_SHIFT, 3) &
                            e->priv_mask, context,
                            run_branch_addr(etrace_run_entries(prev), k - 1));
        } else {
            store_packed(e, prev->iaddr, prev->info, context);
        }
        e->halfwords = halfwords + (uint32_t)units;
        e->instructions = instructions + (units >> 32);
    }
    return p - pb;
}

_Static_assert(ETRACE_PB_SIJUMP_SHIFT >= 4 && ACT_SIJUMP == 16,
               "quiet_run() moves the sijump bit to bit 4 with one shift");
_Static_assert(ACT_BRANCH == 1, "quiet_run() counts branches by adding act");

/*
 * The packets of quiet_run_reports(), in locals: the pending branches,
 * the differential addresses' reference, and the output window.
 */
typedef struct QuietReports {
    uint64_t branches;
    uint32_t map;
    bool packets;           /* packets were sent (or packed to nothing) */
    bool reported;          /* an address among them */
    bool ambiguous;         /* ambiguous_report after the last */
    uint64_t last_addr;
    uint64_t base_mask;     /* 0 with full addresses */
    uint64_t left;          /* packets before a resync could come due */
    uint8_t *pos;
    const uint8_t *end;
    uint64_t sent[3];       /* formats 1 and 2 */
    uint64_t bytes;
} QuietReports;

/* Whether qr can send n more packets (not before a resync) */
static inline bool quiet_reports_room(const QuietReports *qr, unsigned n)
{
    return qr->left >= n &&
           (size_t)(qr->end - qr->pos) >= n * ETRACE_MAX_PACKET;
}

/* A format 1 or 2 packet of len bytes at qr->pos was packed */
static inline void quiet_packet(QuietReports *qr, unsigned format,
                                size_t len)
{
    if (len) {
        qr->sent[format]++;
        qr->bytes += len;
        qr->pos += len;
        qr->left--;
    }
    qr->packets = true;
    qr->branches = 0;
    qr->map = 0;
}

/*
 * The report of the instruction at addr (masked), as send_address() with
 * REASON_UPDISCON sends it in these modes: format 1 with the pending
 * branches, or 2 without, and no flags.
 */
static inline __attribute__((always_inline))
void quiet_report(const ETraceEncoder *e, QuietReports *qr, uint64_t addr)
{
    unsigned format = qr->branches ? 1 : 2;
    uint64_t address = (addr - (qr->last_addr & qr->base_mask)) &
                       e->addr_mask;
    size_t len = etrace_packet_pack_f12_plain(&e->packer, format,
                                              qr->branches, qr->map,
                                              address, qr->pos);

    if (!len) {
        len = etrace_packet_pack_f12(&e->packer, format, qr->branches,
                                     qr->map, address, false, false, false,
                                     e->calls.depth, qr->pos);
    }
    quiet_packet(qr, format, len);
    qr->last_addr = addr;
    qr->reported = true;
    qr->ambiguous = true;
}

/* A full map, as send_branches() sends it without prediction */
static void quiet_map(const ETraceEncoder *e, QuietReports *qr)
{
    quiet_packet(qr, 1, etrace_packet_pack_f12(&e->packer, 1, 0, qr->map, 0,
                                               false, false, false,
                                               e->calls.depth, qr->pos));
    qr->ambiguous = false;
}

/*
 * n branches join the map, the oldest in bit 0 of bits (1 = not taken),
 * and each full map goes out (as in take_run_fast())
 */
static inline void quiet_join(const ETraceEncoder *e, QuietReports *qr,
                              uint64_t bits, unsigned n)
{
    while (n) {
        unsigned room = MAX_MAP_BRANCHES - qr->branches;
        unsigned take = n < room ? n : room;

        qr->map |= (uint32_t)(bits & ((UINT64_C(1) << take) - 1)) <<
                   qr->branches;
        qr->branches += take;
        bits >>= take;
        n -= take;
        if (qr->branches == MAX_MAP_BRANCHES) {
            quiet_map(e, qr);
        }
    }
}

/*
 * The first instruction of a plain block at iaddr after an uninferable
 * jump: reported now if the block has more instructions, else when the
 * next block comes (ACT_REPORT).
 */
static inline __attribute__((always_inline))
unsigned quiet_report_first(const ETraceEncoder *e, QuietReports *qr,
                            uint64_t iaddr, uint64_t info)
{
    if (packed_single(info)) {
        return ACT_REPORT;
    }
    quiet_report(e, qr, iaddr & e->addr_mask);
    return 0;
}

/*
 * The quiet run of the modes without branch prediction, implicit return,
 * jump target cache or a resync by instructions or half-words (the
 * defaults): no call, return or prediction to follow, and the packets
 * are sent in the loop, as the paths block by block send them.  The
 * first instruction after an uninferable jump (a return) is reported,
 * with the pending branches, once the block after it is known to be
 * plain (report_jump_target(), report_pending()): at once when the
 * jump's successor has more than one instruction, else (ACT_REPORT)
 * when the next block comes.  Runs join the map as in take_run_fast()
 * (and run_report_target()), and a full map goes out as send_map()
 * sends it.  The loop stops before a run after an uninferable jump, a
 * reported branch that fills the map, a packet without room in the
 * window or that could make a resync due (sync mode packets), and where
 * quiet_run() would: the general path takes that block.  Every return
 * is a packet in these modes; in this loop, with the state in
 * registers, it costs about half what the paths block by block did.
 */
static __attribute__((noinline))
size_t quiet_run_reports(ETraceEncoder *e, const ETracePackedBlock *pb,
                         size_t i, size_t n, uint64_t context,
                         uint64_t stop_mask)
{
    const ETracePackedBlock *p = &pb[i], *first = p, *end = &pb[n];
    uint64_t mask = e->packed_mask | ETRACE_PB_PLAIN | ETRACE_PB_RUN |
                    stop_mask;
    uint64_t want = e->packed_want | ETRACE_PB_PLAIN;
    /* (indexed runs, for a predictor, are not for here) */
    uint64_t run_mask = e->packed_mask | ETRACE_PB_RUN |
                        ETRACE_PB_RUN_INDEXED | stop_mask;
    uint64_t run_want = e->packed_want | ETRACE_PB_RUN;
    uint64_t addr_mask = e->addr_mask;
    uint64_t halfwords = e->halfwords, instructions = e->instructions;
    QuietReports qr = {
        .branches = e->branches, .map = e->branch_map,
        .ambiguous = e->ambiguous_report, .last_addr = e->last_addr,
        .base_mask = e->o.full_address ? 0 : addr_mask,
        .left = e->resync_units == &e->te_insts ?
                units_left(e->te_insts, e->resync_fast_end) : UINT64_MAX,
        .pos = e->win ? e->win->pos : NULL,
        .end = e->win ? e->win->end : NULL,
    };
    unsigned act = e->pending_act;
    bool taken = e->pending.itype == RISCV_ITYPE_TAKEN_BRANCH;
    bool joined = false, run_last = false;

    if (qr.branches >= MAX_MAP_BRANCHES) {
        return i;
    }
    for (; p < end; p++) {
        uint64_t info = p->info;
        unsigned branch = act & ACT_BRANCH;
        bool report = act & ACT_REPORT;

        __builtin_prefetch(p + QUIET_PREFETCH);
        if ((info & mask) != want) {
            uint64_t run = p->iaddr;
            unsigned k = run_length(run), held, joins;

            /* a run after a branch or nothing, perhaps reported first */
            if ((info & run_mask) != run_want || (act & ACT_UPDISCON) || !k ||
                (report && qr.branches + branch >= MAX_MAP_BRANCHES)) {
                break;
            }
            /* then the pending branch unless reported, and the run's */
            held = report ? 0 : qr.branches + branch;
            joins = k - 1 + (report ? 0 : branch);
            if ((report || held + k - 1 >= MAX_MAP_BRANCHES) &&
                !quiet_reports_room(&qr, report + (held + k - 1) /
                                         MAX_MAP_BRANCHES)) {
                break;
            }
            if (report) {
                qr.map |= (uint32_t)(branch & !taken) << qr.branches;
                qr.branches += branch;
                joined |= branch;
                quiet_report(e, &qr, (p > first ? p[-1].iaddr :
                                      e->pending.iaddr) & addr_mask);
                branch = 0;
            }
            run = (run & ~(UINT64_C(1) << k)) << branch | (branch & !taken);
            quiet_join(e, &qr, run, joins);
            joined |= joins > 0;
            taken = !(run >> joins & 1);
            act = ACT_BRANCH;
            halfwords += pb_field(info, ETRACE_PB_IRETIRE_SHIFT, 16);
            instructions += pb_field(info, ETRACE_PB_NINSNS_SHIFT, 16) ?: 1;
            run_last = true;
            continue;
        }
        /* (the branch of a reported instruction may not fill the map) */
        if ((report && qr.branches + branch >= MAX_MAP_BRANCHES) ||
            ((act & (ACT_REPORT | ACT_UPDISCON) ||
              qr.branches + branch >= MAX_MAP_BRANCHES) &&
             !quiet_reports_room(&qr, 2))) {
            break;
        }
        if (branch) {
            qr.map |= (uint32_t)!taken << qr.branches;
            qr.branches++;
            joined = true;
            if (qr.branches == MAX_MAP_BRANCHES) {
                quiet_map(e, &qr);
            }
        }
        if (report) {
            /* the pending instruction, of one instruction */
            quiet_report(e, &qr, (p > first ? p[-1].iaddr :
                                  e->pending.iaddr) & addr_mask);
        }
        act = packed_action(e, info) |
              (act & ACT_UPDISCON ? quiet_report_first(e, &qr, p->iaddr,
                                                       info) : 0);
        taken = pb_field(info, ETRACE_PB_ITYPE_SHIFT, 4) ==
                RISCV_ITYPE_TAKEN_BRANCH;
        halfwords += pb_field(info, ETRACE_PB_IRETIRE_SHIFT, 16);
        instructions += pb_field(info, ETRACE_PB_NINSNS_SHIFT, 16) ?: 1;
        run_last = false;
    }
    if (p == first) {
        return i;
    }
    if (qr.packets) {
        e->stats.packets[1] += qr.sent[1];
        e->stats.packets[2] += qr.sent[2];
        e->stats.bytes += qr.bytes;
        e->te_insts += qr.sent[1] + qr.sent[2];
        e->win->pos = qr.pos;
        e->pbc = 0;
        e->ambiguous_report = qr.ambiguous;
    }
    if (qr.reported) {
        /* what send_address() and report_pending() leave */
        e->last_addr = qr.last_addr;
        e->last_report_updiscon = true;
        e->cur_mispredicted = false;
        e->prev_ret_miss = false;
        e->prev_exact = false;
        e->prev_context = context;
    }
    e->branches = qr.branches;
    e->branch_map = qr.map;
    e->branch_since_ret |= joined;
    e->prev_implicit_ret = false;
    if (run_last) {
        /* (not indexed: see run_mask) */
        pend_run_branch(e, !taken,
                        pb_field(p[-1].info, ETRACE_PB_PRIV_SHIFT, 3) &
                        e->priv_mask, context, 0);
    } else {
        store_packed(e, p[-1].iaddr, p[-1].info, context);
        e->pending_act = act;
    }
    /* prev_updiscon: the last block's first instruction awaits a report */
    e->prev_updiscon = act & ACT_REPORT;
    /* (store_packed() counted the last block again) */
    e->halfwords = halfwords;
    e->instructions = instructions;
    return p - pb;
}

static size_t take_quiet_run(ETraceEncoder *e, const ETracePackedBlock *pb,
                             size_t i, size_t n, uint64_t context,
                             uint64_t stop_mask)
{
    bool count_units = etrace_options_count_units(&e->o);

    if (!count_units && *e->resync_units >= e->resync_fast_end) {
        return i;
    }
    if (e->quiet_acts & ACT_UPDISCON) {
        return quiet_run_reports(e, pb, i, n, context, stop_mask);
    }
    if (e->bpred_on) {
        return count_units ?
               quiet_run(e, pb, i, n, context, stop_mask, true, true) :
               quiet_run(e, pb, i, n, context, stop_mask, false, true);
    }
    return count_units ?
           quiet_run(e, pb, i, n, context, stop_mask, true, false) :
           quiet_run(e, pb, i, n, context, stop_mask, false, false);
}

/* A packed run's totals (take_run()'s count_units()) */
static inline void count_packed_run(ETraceEncoder *e, uint64_t info)
{
    e->halfwords += pb_field(info, ETRACE_PB_IRETIRE_SHIFT, 16);
    e->instructions += pb_field(info, ETRACE_PB_NINSNS_SHIFT, 16) ?: 1;
}

/*
 * take_run_fast() with branch prediction, for a run of n branches with
 * the outcomes map (1 = not taken, oldest in bit 0), after a pending
 * branch, call or nothing, perhaps at an uninferable jump's target:
 * each branch is predicted as it joins the pending ones
 * (join_run_branch()), and the last becomes the pending instruction.
 */
static bool take_predicted_run(ETraceEncoder *e, const ETracePackedBlock *pb,
                               uint64_t map, unsigned n, uint64_t context)
{
    uint64_t info = pb->info;
    const uint8_t *entries = etrace_run_entries(pb);
    unsigned act = e->pending_act;
    uint8_t priv = pb_field(info, ETRACE_PB_PRIV_SHIFT, 3) & e->priv_mask;
    bool taken = e->pending.itype == RISCV_ITYPE_TAKEN_BRANCH;
    RunBranches rb;
    uint8_t *table;
    uint32_t mask;
    unsigned i;

    if (!run_predictable(e, info & ETRACE_PB_RUN_INDEXED, n)) {
        return false;       /* take_run() decides */
    }
    e->cur_mispredicted = false;    /* as evaluate() */
    run_report_target(e, act);
    rb = (RunBranches) {
        .branches = e->branches, .pbc = e->pbc, .map = e->branch_map,
    };
    if ((act & (ACT_BRANCH | ACT_REPORT)) == ACT_BRANCH) {
        join_run_branch(e, &rb,
                         &e->bpred[etrace_table_index(&e->p, e->bpred_mask,
                                                      pending_addr(e))],
                         taken);
    }
    /* a call, and what every instruction of the run leaves behind */
    after_insn(e, act & ACT_PUSH, pending_end(e), true, 0);
    /* (in locals: the table's byte stores could alias any field of e) */
    table = e->bpred;
    mask = e->bpred_mask;
    i = join_quiet_run_branches(&rb, table, mask, entries, map, n);
    for (; i + 1 < n; i++) {
        join_run_branch(e, &rb, &table[run_branch_entry(entries, i) & mask],
                        !(map >> i & 1));
    }
    if (n > 1 || (act & (ACT_BRANCH | ACT_REPORT)) == ACT_BRANCH) {
        e->branch_since_ret = true;
    }
    e->branches = rb.branches;
    e->pbc = rb.pbc;
    e->branch_map = rb.map;
    pend_run_branch(e, map >> (n - 1) & 1, priv, context,
                    run_branch_addr(entries, n - 1));
    count_packed_run(e, info);
    return true;
}

/*
 * A packed run after a pending instruction that is a branch, a call or
 * nothing to the algorithm, perhaps at an uninferable jump's target
 * (with prediction, take_predicted_run()): take_run() without the
 * decisions that can not come
 * up, as the fast paths take blocks.  Of figure 8.1 that leaves the
 * report of such a target (step 3, as in take_reporting_block()) and a
 * full branch map (none of the run's branches is addressed, so no resync
 * falls here); the run's last branch becomes the pending instruction.
 */
static bool take_run_fast(ETraceEncoder *e, const ETracePackedBlock *pb,
                          uint64_t context)
{
    uint64_t info = pb->info, map = pb->iaddr;
    unsigned act = e->pending_act, n, k;

    if ((info & e->packed_mask) != e->packed_want ||
        (act & ~(ACT_BRANCH | ACT_PUSH | ACT_REPORT)) || map < 2 ||
        (!pb_field(info, ETRACE_PB_IRETIRE_SHIFT, 16) &&
         etrace_options_count_units(&e->o))) {
        return false;       /* take_run() decides */
    }
    n = k = run_length(map);
    map &= ~(UINT64_C(1) << n);
    if (e->bpred_on) {
        return take_predicted_run(e, pb, map, n, context);
    }
    run_report_target(e, act);
    /* a call, and what every instruction of the run leaves behind */
    after_insn(e, act & ACT_PUSH, pending_end(e), true, 0);
    if ((act & (ACT_BRANCH | ACT_REPORT)) == ACT_BRANCH) {
        /* the pending branch goes first (64 bits at most) */
        map = map << 1 | (e->pending.itype != RISCV_ITYPE_TAKEN_BRANCH);
        n++;
    }
    if (n > 1) {
        e->branch_since_ret = true;
    }
    /* all but the last join the map, as many at a time as it takes */
    for (unsigned i = 0; i + 1 < n;) {
        unsigned room = MAX_MAP_BRANCHES - e->branches;
        unsigned take = n - 1 - i < room ? n - 1 - i : room;

        e->branch_map |= (uint32_t)(map >> i & ((UINT64_C(1) << take) - 1)) <<
                         e->branches;
        e->branches += take;
        i += take;
        if (e->branches == MAX_MAP_BRANCHES) {
            send_branches(e);
        }
    }
    pend_run_branch(e, map >> (n - 1) & 1,
                    pb_field(info, ETRACE_PB_PRIV_SHIFT, 3) & e->priv_mask,
                    context, info & ETRACE_PB_RUN_INDEXED ?
                    run_branch_addr(etrace_run_entries(pb), k - 1) : 0);
    count_packed_run(e, info);
    return true;
}

/*
 * The quiet blocks never leave their packed form: the fast path's
 * decisions (quiet_step()) and the pending block's new fields come
 * straight from the info word.  Every other block is unpacked for the
 * path encode_block() would take.
 */
size_t etrace_encoder_packed(ETraceEncoder *e, const ETracePackedBlock *pb,
                             size_t n, uint64_t context, unsigned first_ctype,
                             uint64_t stop_mask)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t info, iaddr;
        unsigned ctype = i ? 0 : first_ctype;
        unsigned act;
        QuietOutcome q;

        if (pb[i].info & stop_mask) {
            if (i) {
                return i;
            }
            /* pb[0] is taken whatever its bits: not by the run */
        } else if (!ctype && e->fast_ok && !e->block_done &&
                   !(pb[i].info & e->quiet_stop) &&
                   !((e->pending_act | packed_action(e, pb[i].info)) &
                     ~e->quiet_acts)) {
            /*
             * (a run takes more than this block, or its set-up costs
             * more than the block-at-a-time path below; it would stop
             * at once at a record with quiet_stop bits)
             */
            i = take_quiet_run(e, pb, i, n, context, stop_mask);
            if (i == n) {
                break;
            }
            if (pb[i].info & stop_mask) {
                return i;
            }
        }
        info = pb[i].info;
        iaddr = pb[i].iaddr;

        if (info & ETRACE_PB_RUN) {
            if (i + etrace_packed_len(info) > n) {
                return i;   /* an indexed run's entries are not here */
            }
            if (ctype || e->block_done ||
                !take_run_fast(e, &pb[i], context)) {
                general_at(e, pb, i);
                take_packed(e, &pb[i], context, ctype, PACKED_GENERAL);
            }
            i += etrace_packed_len(info) - 1;
            continue;
        }
        if (unlikely(ctype || !packed_plain(e, info))) {
            if (i + etrace_packed_len(info) > n) {
                return i;   /* the trap's second entry is not here */
            }
            general_at(e, pb, i);
            take_packed(e, &pb[i], context, ctype, PACKED_GENERAL);
            i += etrace_packed_len(info) - 1;
            continue;
        }
        act = e->pending_act;
        if (act & (ACT_REPORT | ACT_UPDISCON)) {
            if (!e->block_done && fast_jump_target(e, act, info)) {
                report_jump_target(e, iaddr, info, context);
            } else {
                take_reporting_packed(e, iaddr, info, context, act);
            }
            continue;
        }
        q = quiet_step(e, act, iaddr, packed_single(info));
        if (likely(q == QUIET_STORE)) {
            block_done(e);
            store_packed(e, iaddr, info, context);
        } else if (q == QUIET_MAP) {
            take_packed(e, &pb[i], context, 0, PACKED_MAP);
        } else {
            take_reporting_packed(e, iaddr, info, context, act);
        }
    }
    return n;
}

void etrace_encoder_stop(ETraceEncoder *e)
{
    if (e->enabled) {
        between_calls(e);
        end_run(e, false);
        e->enabled = false;
        refresh_fast(e);
    }
}

void etrace_encoder_lost(ETraceEncoder *e)
{
    if (!e->enabled) {
        return;
    }
    /*
     * A held call report came after the last packet sent, which the sinks
     * may have dropped: it would follow the gap, so it goes with it.
     */
    e->pin.held = false;
    e->have_pending = false;
    e->in_run = false;
    e->trap.pending = false;
    e->need_sync = true;
    e->lost_pending = true;
    clear_branches(e);
    refresh_fast(e);
}

void etrace_encoder_set_block_done(ETraceEncoder *e, ETraceBlockDoneFn *fn,
                                   void *opaque)
{
    e->block_done = fn;
    e->block_done_opaque = opaque;
    set_quiet(e);
}

void etrace_encoder_set_sync_hook(ETraceEncoder *e, ETraceSyncHookFn *fn,
                                  void *opaque)
{
    e->sync_hook = fn;
    e->sync_hook_opaque = opaque;
}

void etrace_encoder_set_window(ETraceEncoder *e, ETraceWindow *w)
{
    e->win = w;
}

void etrace_encoder_set_fast_paths(ETraceEncoder *e, bool on)
{
    e->fast_allowed = on;
    refresh_fast(e);
}

void etrace_encoder_stats(const ETraceEncoder *e, ETraceStats *s)
{
    *s = e->stats;
    s->halfwords = e->halfwords;
    s->instructions = e->instructions;
}

uint64_t etrace_encoder_packets(const ETraceEncoder *e, unsigned format)
{
    const size_t formats = sizeof(e->stats.packets) /
                           sizeof(e->stats.packets[0]);

    return format < formats ? e->stats.packets[format] : 0;
}

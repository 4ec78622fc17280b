/*
 * N-trace decoder: messages to instructions (see ntrace-decoder.h)
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "target/riscv/insn_class.h"
#include "ntrace-decoder.h"
#include "etrace-dec-report.h"
#include "etrace-model.h"

#define NTRACE_DEFAULT_MAX_WALK     (UINT64_C(1) << 27)

/* How a message's I-CNT ends (what its last instruction must be). */
typedef enum WalkEnd {
    WALK_DIRECT,        /* a taken conditional branch (DirectBranch) */
    WALK_INDIRECT,      /* an uninferable jump (B-TYPE 0) */
    WALK_ANY,           /* a trap, the end of tracing: anything */
    WALK_HIST,          /* ResourceFull HIST: its last branch */
} WalkEnd;

/*
 * Classified instructions, direct-mapped by address: a walk meets the
 * same code again and again, and reading the image and classifying cost
 * more than the walk itself.  tag: the address + 1 (0: empty).
 */
#define NTRACE_ICACHE_SIZE  4096
typedef struct NTraceCachedInsn {
    uint64_t tag;
    RISCVInsnClass c;
} NTraceCachedInsn;

struct NTraceDecoder {
    NTraceDecoderConfig cfg;
    uint64_t addr_mask;
    NTraceCachedInsn icache[NTRACE_ICACHE_SIZE];

    /* bytes of the message in progress */
    uint8_t msg[NTRACE_MAX_MESSAGE];
    size_t len;
    uint64_t offset;            /* stream offset of the next byte */
    ETraceDecReport rep;        /* the message in progress, events */
    bool started;               /* find_start: a message end was seen */

    /* the flow */
    bool synced;
    uint64_t pc;
    uint64_t last_addr;         /* the reference of U-ADDR */
    int64_t carry;              /* ResourceFull I-CNT less HIST walks */
    unsigned priv;
    uint64_t context;
    uint64_t last_insn;         /* the last instruction emitted */
    bool last_insn_valid;
    ETraceCallStack stack;
    uint64_t stack_entry[NTRACE_CALL_STACK_DEPTH];
    NTraceMessage repeat;       /* the last branch message (RepeatBranch) */
    uint64_t steps_left;        /* instructions this message may follow */

    NTraceDecStats stats;
};

static void report(NTraceDecoder *d, ETraceDecEvent *ev)
{
    etrace_dec_report(&d->rep, ev);
}

static void event_init(NTraceDecoder *d, ETraceDecEvent *ev,
                       ETraceDecEventType type)
{
    etrace_dec_event_init(&d->rep, ev, type, d->priv, d->context,
                          d->last_insn, d->last_insn_valid);
}

/* Bad input: report it and wait for the next sync.  Returns false. */
static bool error(NTraceDecoder *d, const char *msg)
{
    ETraceDecEvent ev;

    event_init(d, &ev, ETRACE_DEC_ERROR);
    etrace_dec_error(&d->rep, &ev, msg);
    d->stats.errors++;
    d->synced = false;
    return false;
}

/*
 * No image holds the instruction at addr (etrace_dec_no_image()): a
 * gap; wait for the next sync.  Returns false like error().
 */
static bool no_image(NTraceDecoder *d, uint64_t addr)
{
    ETraceDecEvent ev;

    event_init(d, &ev, ETRACE_DEC_GAP);
    etrace_dec_no_image(&d->rep, &ev, addr);
    d->synced = false;
    return false;
}

static void reset_flow(NTraceDecoder *d)
{
    d->carry = 0;
    etrace_callstack_reset(&d->stack, d->stack_entry,
                           NTRACE_CALL_STACK_DEPTH - 1,
                           d->cfg.implicit_return ?
                           NTRACE_CALL_STACK_DEPTH : 0);
}

/* -------------------------------------------------------------- walking */

static bool fetch(NTraceDecoder *d, uint64_t addr, uint32_t *insn)
{
    uint16_t lo, hi = 0;

    if ((addr & 1) || !d->cfg.read_parcel(d->cfg.opaque, addr, &lo)) {
        return false;
    }
    if (riscv_insn_len(lo) == 4 &&
        !d->cfg.read_parcel(d->cfg.opaque, (addr + 2) & d->addr_mask, &hi)) {
        return false;
    }
    *insn = lo | (uint32_t)hi << 16;
    return true;
}

/* The class of the instruction at addr; false if no image holds it. */
static bool classify(NTraceDecoder *d, uint64_t addr, RISCVInsnClass *c)
{
    NTraceCachedInsn *slot = &d->icache[(addr >> 1) &
                                        (NTRACE_ICACHE_SIZE - 1)];
    uint32_t insn;

    if (slot->tag != addr + 1) {
        if (!fetch(d, addr, &insn)) {
            return false;
        }
        if (!riscv_classify_insn_isa(insn, d->cfg.params.xlen, d->cfg.isa,
                                     &slot->c)) {
            slot->c.flow = RISCV_FLOW_SEQUENTIAL;
        }
        slot->tag = addr + 1;
    }
    *c = slot->c;
    return true;
}

static void emit(NTraceDecoder *d, const RISCVInsnClass *c)
{
    ETraceDecInsn e = {
        .addr = d->pc, .privilege = d->priv, .len = c->len,
        .branch = c->flow == RISCV_FLOW_BRANCH,
        .itype = c->flow == RISCV_FLOW_JUMP ? c->itype :
                 c->flow == RISCV_FLOW_TRAP_RETURN ?
                 RISCV_ITYPE_TRAP_RETURN : RISCV_ITYPE_NONE,
    };

    d->stats.instructions++;
    d->last_insn = d->pc;
    d->last_insn_valid = true;
    etrace_dec_resumed(&d->rep);
    if (d->cfg.insn) {
        d->cfg.insn(d->cfg.opaque, &e);
    }
}

/*
 * Follow units half-words from pc (WALK_HIST: up to the branch that uses
 * the last bit of hist), taking branches from hist (the bit under the
 * stop bit first; hist 0: BTM).  Returns the half-words walked, or -1
 * after an error.
 */
static int64_t walk(NTraceDecoder *d, int64_t units, uint64_t hist,
                    WalkEnd end)
{
    uint64_t mask = hist > 1 ? (UINT64_C(1) << (63 - __builtin_clzll(hist)))
                               >> 1 : 0;
    int64_t left = units, done = 0;
    bool last_taken = false;
    RISCVInsnClass c = { .flow = RISCV_FLOW_SEQUENTIAL };

    if (end == WALK_HIST && !mask) {
        return 0;
    }
    while (end == WALK_HIST ? mask : left > 0) {
        uint64_t next;

        if (!d->steps_left--) {
            return error(d, "a message's instructions never end"), -1;
        }
        if (!classify(d, d->pc, &c)) {
            return no_image(d, d->pc), -1;
        }
        emit(d, &c);
        left -= c.len / 2;
        done += c.len / 2;
        if (left < 0 && end != WALK_HIST) {
            return error(d, "I-CNT ends inside an instruction"), -1;
        }
        next = d->pc + c.len;
        last_taken = false;
        switch (c.flow) {
        case RISCV_FLOW_BRANCH:
            if (hist) {
                if (!mask) {
                    return error(d, "more branches than HIST holds"), -1;
                }
                last_taken = hist & mask;
                mask >>= 1;
            } else {
                last_taken = end == WALK_DIRECT && left == 0;
            }
            if (last_taken) {
                next = d->pc + c.offset;
            }
            break;
        case RISCV_FLOW_JUMP:
            if (c.itype == RISCV_ITYPE_UNINFERABLE_CALL ||
                c.itype == RISCV_ITYPE_INFERABLE_CALL) {
                etrace_callstack_push(&d->stack, next & d->addr_mask);
            }
            if (c.inferable) {
                next = d->pc + c.offset;
                break;
            }
            if (c.itype == RISCV_ITYPE_RETURN && d->stack.depth) {
                next = etrace_callstack_pop(&d->stack);
                if (left != 0 || end == WALK_HIST) {
                    break;              /* an implicit return */
                }
            }
            /* fall through */
        case RISCV_FLOW_TRAP_RETURN:
            if (left != 0 || end == WALK_HIST) {
                return error(d, "I-CNT goes on past an uninferable jump"), -1;
            }
            if (end != WALK_INDIRECT && end != WALK_ANY) {
                return error(d, "I-CNT ends at an uninferable jump"), -1;
            }
            return done;                /* the message has the address */
        case RISCV_FLOW_TRAP:
            return error(d, "I-CNT goes on past an ecall or ebreak"), -1;
        default:
            break;
        }
        d->pc = next & d->addr_mask;
    }
    if (end == WALK_DIRECT && !last_taken) {
        return error(d, "DirectBranch I-CNT does not end at a branch"), -1;
    }
    if (end == WALK_INDIRECT) {
        return error(d, "I-CNT does not end at an uninferable jump"), -1;
    }
    if (hist && mask && end != WALK_HIST) {
        return error(d, "HIST holds more branches than I-CNT"), -1;
    }
    return done;
}

/* A message's I-CNT, with what ResourceFull messages carried over. */
static bool walk_icnt(NTraceDecoder *d, const NTraceMessage *m, uint64_t hist,
                      WalkEnd end)
{
    int64_t units = (int64_t)m->icnt + d->carry;

    if (units < 0) {
        return error(d, "I-CNT smaller than the HIST walks before it");
    }
    d->carry = 0;
    return walk(d, units, hist, end) >= 0;
}

/* ------------------------------------------------------------- messages */

static void set_address(NTraceDecoder *d, uint64_t addr)
{
    d->pc = addr & d->addr_mask;
    d->last_addr = d->pc;
}

static void report_flow(NTraceDecoder *d, const NTraceMessage *m, bool sync)
{
    ETraceDecEvent ev;

    if (m->btype == NTRACE_BTYPE_EXCEPTION ||
        m->btype == NTRACE_BTYPE_INTERRUPT) {
        event_init(d, &ev, ETRACE_DEC_TRAP);
        ev.interrupt = m->btype == NTRACE_BTYPE_INTERRUPT;
        ev.handler_valid = true;
        ev.trap_from = d->last_insn;
        ev.trap_from_valid = d->last_insn_valid;
    } else if (sync) {
        event_init(d, &ev, ETRACE_DEC_SYNC);
    } else {
        return;
    }
    ev.address = d->pc;
    ev.last_valid = true;
    report(d, &ev);
}

static WalkEnd end_of(const NTraceMessage *m)
{
    switch (m->tcode) {
    case NTRACE_TCODE_DIRECT_BRANCH:
    case NTRACE_TCODE_DIRECT_BRANCH_SYNC:
        return WALK_DIRECT;
    case NTRACE_TCODE_INDIRECT_BRANCH:
    case NTRACE_TCODE_INDIRECT_BRANCH_SYNC:
    case NTRACE_TCODE_INDIRECT_BRANCH_HIST:
    case NTRACE_TCODE_INDIRECT_BRANCH_HIST_SYNC:
        return m->btype == NTRACE_BTYPE_JUMP ? WALK_INDIRECT : WALK_ANY;
    default:
        return WALK_ANY;
    }
}

static bool has_hist(const NTraceMessage *m)
{
    return m->tcode == NTRACE_TCODE_INDIRECT_BRANCH_HIST ||
           m->tcode == NTRACE_TCODE_INDIRECT_BRANCH_HIST_SYNC ||
           (m->tcode == NTRACE_TCODE_PROG_TRACE_CORRELATION && m->cdf == 1);
}

/*
 * ProgTraceSync and the Sync variants: F-ADDR; the state starts again.
 * A walk up to it that leaves the image ends in a gap; the sync follows.
 */
static bool on_sync(NTraceDecoder *d, const NTraceMessage *m)
{
    if (d->synced && (m->icnt || d->carry ||
                      m->tcode != NTRACE_TCODE_PROG_TRACE_SYNC) &&
        !walk_icnt(d, m, has_hist(m) ? m->hist : 0, end_of(m)) &&
        !d->rep.gap_now) {
        return false;
    }
    set_address(d, m->addr << 1);
    d->synced = true;
    reset_flow(d);
    report_flow(d, m, true);
    return true;
}

/* DirectBranch, IndirectBranch(Hist): I-CNT, then U-ADDR if any. */
static bool on_branch(NTraceDecoder *d, const NTraceMessage *m)
{
    if (!walk_icnt(d, m, has_hist(m) ? m->hist : 0, end_of(m))) {
        return false;
    }
    if (m->tcode != NTRACE_TCODE_DIRECT_BRANCH) {
        set_address(d, (m->addr << 1) ^ d->last_addr);
        report_flow(d, m, false);
    }
    d->repeat = *m;
    return true;
}

/*
 * Each repetition (B-CNT, HREPEAT) costs one step of the message's
 * budget, so that repeating a message that walks nothing still ends.
 */
static bool repetition(NTraceDecoder *d)
{
    if (!d->steps_left) {
        return error(d, "a message repeats more often than it may walk");
    }
    d->steps_left--;
    return true;
}

static bool on_resource_full(NTraceDecoder *d, const NTraceMessage *m)
{
    uint64_t times = m->rcode == 2 ? m->hrepeat : 1;

    if (m->rcode == NTRACE_RCODE_ICNT) {
        if (m->rdata > NTRACE_ICNT_MAX) {
            return error(d, "ResourceFull I-CNT wider than I-CNT");
        }
        d->carry += m->rdata;
        return true;
    }
    if (m->rcode != NTRACE_RCODE_HIST && m->rcode != 2) {
        return error(d, "ResourceFull with a reserved RCODE");
    }
    for (uint64_t i = 0; i < times; i++) {
        int64_t done = repetition(d) ? walk(d, -1, m->rdata, WALK_HIST) : -1;

        if (done < 0) {
            return false;
        }
        d->carry -= done;
    }
    return true;
}

static void on_ownership(NTraceDecoder *d, const NTraceMessage *m)
{
    ETraceDecEvent ev;

    d->priv = (m->process >> 2 & 3) | (m->process >> 4 & 1) << 2;
    if ((m->process & 3) == NTRACE_PROCESS_FORMAT_SCONTEXT) {
        d->context = m->process >> 5;
    }
    event_init(d, &ev, ETRACE_DEC_CONTEXT);
    report(d, &ev);
}

/* The end of traced code (ProgTraceCorrelation) or a loss (Error). */
static bool on_end(NTraceDecoder *d, const NTraceMessage *m)
{
    ETraceDecEvent ev;
    bool ok = true;

    if (m->tcode == NTRACE_TCODE_PROG_TRACE_CORRELATION && d->synced) {
        ok = walk_icnt(d, m, has_hist(m) ? m->hist : 0, WALK_ANY);
    }
    event_init(d, &ev, m->tcode == NTRACE_TCODE_ERROR ? ETRACE_DEC_GAP :
                                                        ETRACE_DEC_END);
    ev.gap_reason = ETRACE_GAP_TRACE_LOST;
    report(d, &ev);
    d->synced = false;
    d->last_insn_valid = false;
    return ok;
}

int ntrace_decoder_message(NTraceDecoder *d, const NTraceMessage *m)
{
    bool ok = true;

    etrace_dec_clear(&d->rep);
    /* one budget for all the walks of a message (HREPEAT, B-CNT) */
    d->steps_left = d->cfg.max_walk ? d->cfg.max_walk :
                    NTRACE_DEFAULT_MAX_WALK;
    if (d->cfg.params.src_bits && m->src != d->cfg.src) {
        d->stats.other_sources++;
        return 0;
    }
    d->stats.messages++;
    switch (m->tcode) {
    case NTRACE_TCODE_PROG_TRACE_SYNC:
    case NTRACE_TCODE_DIRECT_BRANCH_SYNC:
    case NTRACE_TCODE_INDIRECT_BRANCH_SYNC:
    case NTRACE_TCODE_INDIRECT_BRANCH_HIST_SYNC:
        ok = on_sync(d, m);
        break;
    case NTRACE_TCODE_OWNERSHIP:
        on_ownership(d, m);
        break;
    case NTRACE_TCODE_ERROR:
    case NTRACE_TCODE_PROG_TRACE_CORRELATION:
        ok = on_end(d, m);
        break;
    default:
        if (!d->synced) {
            break;              /* waiting for a sync */
        }
        if (m->tcode == NTRACE_TCODE_RESOURCE_FULL) {
            ok = on_resource_full(d, m);
        } else if (m->tcode == NTRACE_TCODE_REPEAT_BRANCH) {
            NTraceMessage again = d->repeat;

            for (uint64_t i = 0; ok && i < m->bcnt; i++) {
                ok = again.tcode && repetition(d) && on_branch(d, &again);
            }
        } else {
            ok = on_branch(d, m);
        }
        break;
    }
    d->rep.number++;
    /* a gap is no error */
    return (ok || d->rep.gap_now) && !d->rep.err_now ? 0 : -1;
}

/* ---------------------------------------------------------------- bytes */

static int message_bytes(NTraceDecoder *d)
{
    NTraceMessage m;
    const char *err = NULL;
    int n;

    if (d->len > NTRACE_MAX_MESSAGE) {
        error(d, "a message longer than any N-trace message");
        d->rep.number++;
        return -1;
    }
    n = ntrace_message_unpack(&d->cfg.params, d->msg, d->len, &m, &err);
    if (n <= 0) {
        error(d, err ? err : "a message ends early");
        d->rep.number++;
        return -1;
    }
    return ntrace_decoder_message(d, &m);
}

int ntrace_decoder_feed(NTraceDecoder *d, const uint8_t *bytes, size_t len)
{
    int ret = 0;

    for (size_t i = 0; i < len; i++) {
        uint8_t b = bytes[i];

        d->offset++;
        d->stats.bytes++;
        if (!d->started) {
            d->started = (b & 3) == NTRACE_MSEO_END_MESSAGE;
            d->stats.skipped++;
            continue;
        }
        if (!d->len && b == NTRACE_IDLE) {
            continue;
        }
        if (!d->len) {
            d->rep.offset = d->offset - 1;
        }
        if (d->len < NTRACE_MAX_MESSAGE) {
            d->msg[d->len] = b;
        }
        d->len++;
        if ((b & 3) == NTRACE_MSEO_END_MESSAGE) {
            if (message_bytes(d) < 0) {
                ret = -1;
            }
            d->len = 0;
        }
    }
    return ret;
}

int ntrace_decoder_finish(NTraceDecoder *d)
{
    if (d->len) {
        d->len = 0;
        error(d, "the stream ends inside a message");
        return -1;
    }
    return 0;
}

NTraceDecoder *ntrace_decoder_new(const NTraceDecoderConfig *cfg)
{
    NTraceDecoder *d;

    if (!cfg->read_parcel ||
        (cfg->params.xlen != 32 && cfg->params.xlen != 64) ||
        cfg->params.src_bits > 12) {
        return NULL;
    }
    d = calloc(1, sizeof(*d));
    if (d) {
        d->cfg = *cfg;
        d->rep.event = cfg->event;
        d->rep.opaque = cfg->opaque;
        d->addr_mask = cfg->params.xlen == 32 ? UINT32_MAX : UINT64_MAX;
        d->started = !cfg->find_start;
        reset_flow(d);
    }
    return d;
}

void ntrace_decoder_free(NTraceDecoder *d)
{
    free(d);
}

const char *ntrace_decoder_error(const NTraceDecoder *d, uint64_t *offset,
                                 uint64_t *message)
{
    return etrace_dec_first_error(&d->rep, offset, message);
}

void ntrace_decoder_stats(const NTraceDecoder *d, NTraceDecStats *s)
{
    *s = d->stats;
}

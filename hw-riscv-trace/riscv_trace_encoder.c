/*
 * RISC-V trace encoder: E-trace packets from one hart's retired blocks
 *
 * Registers: the encoder map of the RISC-V Trace Control Interface
 * (trTeControl, trTeImpl, trTeInstFeatures, trTeInstFilters and the
 * filter and comparator blocks at 0x400/0x600), plus two read-only
 * discovery registers at 0xE00 giving the E-trace parameters a decoder
 * needs (docs/rvtrace.rst).  The hart hands over its block records
 * (target/riscv/trace_ingress.c); the filters qualify them, the codec
 * (etrace-encoder.c) turns them into packets, and the packets go to
 * every enabled sink linked to the encoder.
 *
 * Encoding runs beside the hart: the hart only appends its records to a
 * queue, and an encoding thread of the encoder takes them from there,
 * like the pipeline of a hardware encoder.  A hart that finds the queue
 * full waits for room (it stalls, as with trTeInstStallEna, rather than
 * lose trace), and stopping encodes everything queued before it returns.
 *
 * Locking: whoever encodes holds the encoder's own lock (te->lock), which
 * also guards the registers: the encoding thread takes that lock and not
 * the BQL, so that a hart taking the BQL (every exception and interrupt
 * does) does not wait for a batch to be encoded.  Every other entry
 * (MMIO, reset, VM state changes, work on the hart) runs with the BQL and
 * takes te->lock inside it; the sinks lock themselves inside that.
 * Order: BQL, then te->lock, then a sink's lock.  While the filters are
 * on, or a sink's writes need it, the encoding thread takes the BQL
 * first (encode_with_bql).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/main-loop.h"
#include "qemu/thread.h"
#include "qemu/lockable.h"
#include "qemu/rcu.h"
#include "qemu/memalign.h"
#include "qemu/madvise.h"
#include "qemu/cacheinfo.h"
#ifdef CONFIG_CPUID_H
#include "qemu/cpuid.h"
#endif
#include "hw/sysbus.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "system/runstate.h"
#include "target/riscv/cpu.h"
#include "target/riscv/trace_ingress.h"
#include "target/riscv/insn_class.h"
#include "riscv_trace.h"
#include "riscv_trace_queue.h"
#include "etrace.h"
#include "etrace-model.h"
#include "etrace-data.h"
#include "etrace-filter.h"
#include "ntrace.h"
#include "trace.h"

REG32(TE_CONTROL, 0x000)        /* trTeControl */
    FIELD(TE_CONTROL, INST_TRACING, 2, 1)
    FIELD(TE_CONTROL, INST_MODE, 4, 3)
    FIELD(TE_CONTROL, CONTEXT, 9, 1)
    FIELD(TE_CONTROL, STALL_OR_OVERFLOW, 12, 1)
    FIELD(TE_CONTROL, INHIBIT_SRC, 15, 1)
    FIELD(TE_CONTROL, SYNC_MODE, 16, 2)
    FIELD(TE_CONTROL, SYNC_MAX, 20, 4)
    FIELD(TE_CONTROL, FORMAT, 24, 3)
REG32(TE_IMPL, 0x004)
REG32(TE_INST_FEATURES, 0x008)  /* trTeInstFeatures: etrace-regs.h */
    FIELD(TE_INST_FEATURES, NO_ADDR_DIFF, ETRACE_FEAT_NO_ADDR_DIFF, 1)
    FIELD(TE_INST_FEATURES, NO_TRAP_ADDR, ETRACE_FEAT_NO_TRAP_ADDR, 1)
    FIELD(TE_INST_FEATURES, EN_SEQUENTIAL_JUMP,
          ETRACE_FEAT_SEQUENTIAL_JUMP, 1)
    FIELD(TE_INST_FEATURES, EN_IMPLICIT_RETURN,
          ETRACE_FEAT_IMPLICIT_RETURN, 1)
    FIELD(TE_INST_FEATURES, EN_BRANCH_PREDICTION,
          ETRACE_FEAT_BRANCH_PREDICTION, 1)
    FIELD(TE_INST_FEATURES, EN_JUMP_TARGET_CACHE,
          ETRACE_FEAT_JUMP_TARGET_CACHE, 1)
    FIELD(TE_INST_FEATURES, IR_MODE, ETRACE_FEAT_IR_MODE, 2)
    FIELD(TE_INST_FEATURES, EN_REPEATED_HISTORY,
          ETRACE_FEAT_REPEATED_HISTORY, 1)
    FIELD(TE_INST_FEATURES, SRC_ID, ETRACE_FEAT_SRC_ID, 12)
    FIELD(TE_INST_FEATURES, SRC_BITS, ETRACE_FEAT_SRC_BITS, 4)
REG32(TE_DATA_CONTROL, 0x010)   /* trTeDataControl */
    FIELD(TE_DATA_CONTROL, IMPLEMENTED, 0, 1)
    FIELD(TE_DATA_CONTROL, TRACING, 1, 1)
    FIELD(TE_DATA_CONTROL, STALL_OR_OVERFLOW, 3, 1)
    FIELD(TE_DATA_CONTROL, NO_VALUE, 16, 1)
    FIELD(TE_DATA_CONTROL, NO_ADDR, 17, 1)
    FIELD(TE_DATA_CONTROL, ADDR_COMPRESS, 18, 2)
REG32(TE_DATA_FILTERS, 0x01C)   /* trTeDataFilters: etrace-filter.h */
REG32(TE_DISCOVERY0, 0xE00)     /* this implementation's own */
REG32(TE_DISCOVERY1, 0xE04)

/* The Control fields software can change; the rest reads 0 (WARL). */
#define TE_CONTROL_RW   (R_TR_CONTROL_ACTIVE_MASK | R_TR_CONTROL_ENABLE_MASK | \
                         R_TE_CONTROL_INST_TRACING_MASK | \
                         R_TE_CONTROL_CONTEXT_MASK | \
                         R_TE_CONTROL_INHIBIT_SRC_MASK | \
                         R_TE_CONTROL_INST_MODE_MASK | \
                         R_TE_CONTROL_SYNC_MODE_MASK | \
                         R_TE_CONTROL_SYNC_MAX_MASK | \
                         R_TE_CONTROL_FORMAT_MASK)
/* trTeDataControl: DataAddrCompress full (0) or differential (2) */
#define TE_DATA_ADDR_FULL       0
#define TE_DATA_ADDR_DIFF       2
#define TE_DATA_CONTROL_RW      (R_TE_DATA_CONTROL_TRACING_MASK | \
                                 R_TE_DATA_CONTROL_NO_VALUE_MASK | \
                                 R_TE_DATA_CONTROL_NO_ADDR_MASK | \
                                 R_TE_DATA_CONTROL_ADDR_COMPRESS_MASK)
/*
 * Data accesses waiting for their block's last instruction to be
 * encoded: those of two blocks at most (a TB has at most TCG_MAX_INSNS
 * instructions), more only while filters leave blocks out.
 */
#define TE_DATA_QUEUE           4096
/* Blocks fed to the codec whose last instruction it has not encoded */
#define TE_DATA_BLOCKS          8
/* trTeFormat: E-trace (0) or N-trace (1) */
#define TE_FORMAT_ETRACE        0
#define TE_FORMAT_NTRACE        1
/*
 * InstMode: E-trace's instruction delta trace ("optimized", 6); N-trace
 * has branch trace (BTM, 3) and history trace (HTM, 6).
 */
#define TE_INST_MODE_DELTA      6
/* InstSyncMode and InstSyncMax an activation sets: by packets, 2^4 */
#define TE_SYNC_MODE_DEFAULT    ETRACE_SYNC_PACKETS
#define TE_SYNC_MAX_DEFAULT     4
/* trTeInstFeatures fields N-trace has (the rest read 0 in N-trace) */
#define TE_NTRACE_FEATURES \
    (R_TE_INST_FEATURES_EN_IMPLICIT_RETURN_MASK | \
     R_TE_INST_FEATURES_IR_MODE_MASK | \
     R_TE_INST_FEATURES_EN_REPEATED_HISTORY_MASK | \
     R_TE_INST_FEATURES_SRC_ID_MASK | R_TE_INST_FEATURES_SRC_BITS_MASK)
#define TE_SRC_BITS_MAX         12

/* Bytes gathered before they go to the sinks. */
#define TE_STAGE_SIZE           4096
/* Packets up to this size are staged with one fixed-size copy. */
#define TE_EMIT_COPY            16

/*
 * Records between the hart and the encoding thread: a power of two, at
 * least 4 batches (property x-queue-len, for tests that need a full
 * queue).  4 MiB, allocated when tracing starts: each time the encoding
 * thread falls asleep on an empty queue, or the hart on a full one, a
 * wake-up costs both threads system calls and scheduling, and the queue's
 * length spaces them out.  From 16384 records (and a wake-up every 4096)
 * to this, paired runs on the workload guest (2026-11-26, a busy host,
 * 15-21 rounds): E-trace default modes on the CoreMark-like mix about
 * 1.5x to 1.4x of untraced, sort 1.36x to 1.25x, recursion 1.9x to 1.6x;
 * all modes 3.5x to 2.3x; N-trace BTM 3.5x to 2.7x.  Aligned and advised
 * for transparent huge pages like guest RAM, so that both threads walk
 * it with two TLB entries instead of 1024: 6 runs each (2026-11-28),
 * default modes, the recursion 2.77-2.92 -> 2.48-2.55 million mtime
 * ticks, the CoreMark-like mix 2.63-2.78 -> 2.32-2.60.
 */
#define TE_QUEUE_LEN            262144
#define TE_BATCH                256
/* Batches the encoding thread encodes per hold of te->lock */
#define TE_BATCHES_PER_LOCK     4
/*
 * Queued records that wake the encoding thread: a quarter of the queue,
 * fewer, longer runs (each wake-up is a system call on the hart's thread).
 */
#define TE_WAKE_OF(len)         ((len) / 4)
/* A hart stalled by a full queue goes on once it is down to half. */
#define TE_ROOM_OF(len)         ((len) / 2)
/* A queue-only record: stop tracing once the records before it are in. */
#define TE_RECORD_STOP          BIT_ULL(63)
/* A queue-only record that says nothing: the slot a trap's pair skips. */
#define TE_RECORD_PAD           BIT_ULL(62)

OBJECT_DECLARE_SIMPLE_TYPE(RISCVTraceEncoderState, RISCV_TRACE_ENCODER)

/* Of a data access (te->dqa): of the block record numbered seq */
typedef struct TEDataAccess {
    uint64_t insn;          /* the instruction's address */
    uint32_t seq;
} TEDataAccess;

/* A traced block fed to the codec: record seq, instructions [start, end) */
typedef struct TEDataBlock {
    uint64_t start, end;
    uint32_t seq;
    uint8_t priv;
} TEDataBlock;

struct RISCVTraceEncoderState {
    SysBusDevice parent_obj;
    MemoryRegion mmio;

    /* Properties */
    CPUState *cpu;
    Object *sink_link[2];       /* the "sink" and "pib" properties */
    uint32_t arch;
    char *format_name;          /* trTeFormat's default: etrace or ntrace */
    unsigned default_format;    /* ... as its value */
    bool trace_from_reset;
    uint32_t reset_src_id;      /* trTeInstFeatures at reset: SrcID */
    uint32_t reset_src_bits;    /* and SrcBits */
    uint32_t reset_features;    /* and the rest (the trace modes) */
    uint32_t reset_inst_mode;   /* trTeInstMode at reset, 0: the default */
    uint32_t reset_sync_mode;   /* trTeInstSyncMode at reset */
    uint32_t reset_sync_max;    /* trTeInstSyncMax at reset */
    uint32_t queue_len;         /* records, see TE_QUEUE_LEN */
    /*
     * x-encode-delay-us, for tests: the encoding thread sleeps this long
     * after each hold of te->lock, so that the hart surely fills the queue
     * and waits for room (whether it does otherwise depends on the host)
     */
    uint32_t encode_delay_us;

    RISCVTraceSink *sink[2];    /* sink_link[] as realize found them */
    RISCVTraceSinkClass *sink_class[2];

    /* Registers */
    uint32_t control;
    uint32_t inst_features;
    uint32_t data_control;
    ETraceFilter filter;

    /* Encoding */
    ETraceParams params;
    unsigned format;        /* the trace's trTeFormat, from its start */
    unsigned ntrace_mode;   /* ... and its N-trace InstMode */
    ETraceEncoder *enc;     /* the codec of that format */
    NTraceEncoder *nenc;
    bool stopping;          /* the hart has not yet run the stop */
    bool suspended;         /* the VM stopped: the codec's trace ended */
    ETraceOptions options;  /* the trace's, from when it started */
    bool bpred;             /* the trace predicts branches */
    bool runs;              /* the hart holds branch blocks back */
    bool run_units;         /* ... and totals their instructions */
    bool run_calls;         /* ... and holds calls (no implicit return) */
    bool run_index;         /* ... and indexes branches (prediction on) */
    bool lost;              /* a packet found no room: tell the codec */
    uint64_t addr_mask;     /* iaddress_width_p bits */
    unsigned prev_const_rd; /* sequentially inferable jump across TBs */
    uint64_t context;       /* satp.ASID, while trTeContext is set */
    uint8_t ctype;          /* for the next block: context changed */
    size_t budget;          /* bytes the sinks take in this burst */
    size_t staged;
    uint8_t stage[TE_STAGE_SIZE + TE_EMIT_COPY];   /* see te_emit() */
    /* the codecs' output window on the stage (pos NULL: closed) */
    ETraceWindow win;

    /*
     * Data trace: see te_data_block_done() (filtered) and
     * te_encode_direct() (not)
     */
    ETraceDataState dstate;
    ETracePacker dpacker;
    TEDataAccess *dq;       /* TE_DATA_QUEUE, a ring */
    ETraceDataAccess *dqa;  /* the accesses themselves, the same ring */
    unsigned dq_head, dq_len;
    TEDataBlock dblocks[TE_DATA_BLOCKS];    /* a ring */
    unsigned db_head, db_len;
    uint32_t dseq;          /* of the next block record */
    uint32_t dseq_fed;      /* of the block record being fed */
    bool dfed;              /* ... and some part of it was traced */
    uint64_t syncs;         /* format 3 packets when dstate was synced */
    bool ddirect;           /* te_encode_direct(), not te_data_block_done() */
    bool dsynced;           /* a sync since the start or the last loss */
    uint32_t dentry;        /* direct: number of the next entry to encode */
    uint32_t dcall;         /* ... and of the current call's first */
    /* a batch's blocks without its accesses, and a spare (a trap's) */
    RISCVTraceRecord dscratch[TE_BATCH + 1];

    /*
     * Held by whoever encodes or touches the registers (see the top of
     * the file); recursive, as a register write may stop the trace and
     * encode what is queued (te_stop_on_hart()).
     */
    QemuRecMutex lock;
    /*
     * The filters are on (they read guest memory, te_insn_len(), which
     * may take the BQL) or a sink's writes need the BQL: the encoding
     * thread takes it first.  Written with the BQL and te->lock held.
     */
    bool encode_with_bql;
    bool sinks_need_bql;    /* from realize */
    VMChangeStateEntry *vm_change;

    /* The queue: the hart writes head, encoders (with te->lock) tail. */
    RISCVTraceRecord *queue;
    QemuThread worker;
    QemuEvent work;         /* set when records were queued */
    QemuEvent made_room;    /* set when the encoding thread made room */
    bool worker_exit;
    /*
     * What the hart's thread reads or writes at each hand-over, then
     * what the encoding thread writes at each batch: each on a cache
     * line of its own, so that neither thread's writes take away a line
     * the other one is reading.
     */
    QEMU_ALIGNED(64) uint32_t head;
    bool tracing;           /* the codec was started and not stopped */
    RISCVTraceRecord *room; /* lent to the hart: from head on */
    QEMU_ALIGNED(64) uint32_t tail;
};

/*
 * Sink i and its class, as realize found them: the checked casts cost
 * more than a burst of small packets.
 */
static RISCVTraceSink *te_sink(RISCVTraceEncoderState *te, int i,
                               RISCVTraceSinkClass **sc)
{
    *sc = te->sink_class[i];
    return te->sink[i];
}

/* ------------------------------------------------------------- output */

/* Bytes every enabled sink takes now; packets that do not fit are lost. */
static size_t te_sink_space(RISCVTraceEncoderState *te)
{
    size_t space = SIZE_MAX;
    bool any = false;

    for (int i = 0; i < ARRAY_SIZE(te->sink); i++) {
        RISCVTraceSinkClass *sc;
        RISCVTraceSink *sink = te_sink(te, i, &sc);

        if (sink) {
            size_t n = sc->space(sink);

            if (n) {
                space = MIN(space, n);
                any = true;
            }
        }
    }
    return any ? space : 0;
}

static void te_flush(RISCVTraceEncoderState *te)
{
    for (int i = 0; i < ARRAY_SIZE(te->sink) && te->staged; i++) {
        RISCVTraceSinkClass *sc;
        RISCVTraceSink *sink = te_sink(te, i, &sc);

        if (sink && sc->space(sink)) {
            sc->write(sink, te->stage, te->staged);
        }
    }
    te->staged = 0;
}

/*
 * The codecs write their commonest packets straight to the stage
 * (ETraceWindow) while te_encode_records() feeds them: its free room, as
 * much as the sinks take, none once a packet was lost (the codec must
 * then hear of it through te_emit() and te_check_lost()).  That saves a
 * call and a copy per packet.
 */
static void te_window_open(RISCVTraceEncoderState *te)
{
    uint8_t *pos = te->stage + te->staged;
    size_t room = te->lost ? 0 : MIN(TE_STAGE_SIZE - te->staged, te->budget);

    te->win = (ETraceWindow) { .pos = pos, .end = pos + room };
}

/* The packets written to the window join the stage; it closes. */
static void te_window_close(RISCVTraceEncoderState *te)
{
    size_t n = te->win.pos - (te->stage + te->staged);

    te->staged += n;
    te->budget -= n;
    te->win = (ETraceWindow) { 0 };
}

/* te_emit() for what its fast path leaves: a full stage, a lost packet */
static void __attribute__((noinline))
te_emit_slow(RISCVTraceEncoderState *te, const uint8_t *bytes, size_t len)
{
    if (te->staged + len > TE_STAGE_SIZE) {
        te_flush(te);
    }
    if (len > te->budget || te->lost) {
        /* nothing more until the codec knows (te_check_lost()) */
        trace_riscv_trace_encoder_lost(te->cpu->cpu_index, len);
        te->control |= R_TE_CONTROL_STALL_OR_OVERFLOW_MASK;
        if (te->options.data) {
            te->data_control |= R_TE_DATA_CONTROL_STALL_OR_OVERFLOW_MASK;
        }
        te->lost = true;
        return;
    }
    te->budget -= len;
    memcpy(te->stage + te->staged, bytes, len);
    te->staged += len;
}

/*
 * A packet for the sinks.  Most packets are a few bytes: they are staged
 * with one fixed-size copy (bytes has ETRACE_MAX_PACKET readable bytes,
 * and the stage room for the excess).
 */
static void te_stage(RISCVTraceEncoderState *te, const uint8_t *bytes,
                     size_t len)
{
    QEMU_BUILD_BUG_ON(ETRACE_MAX_PACKET < TE_EMIT_COPY);
    if (likely(len <= TE_EMIT_COPY && te->staged + len <= TE_STAGE_SIZE &&
               len <= te->budget && !te->lost)) {
        uint8_t *dst = te->stage + te->staged;

        /*
         * A word at a time, as the packers store them: one 16-byte load
         * would wait for their stores to reach the cache.
         */
        stq_he_p(dst, ldq_he_p(bytes));
        if (len > 8) {
            stq_he_p(dst + 8, ldq_he_p(bytes + 8));
        }
        te->staged += len;
        te->budget -= len;
        return;
    }
    te_emit_slow(te, bytes, len);
}

/* The codecs' packets (ETraceEmitFn), after those in the window. */
static void te_emit(void *opaque, const uint8_t *bytes, size_t len)
{
    RISCVTraceEncoderState *te = opaque;

    if (te->win.pos) {
        te_window_close(te);
        te_stage(te, bytes, len);
        te_window_open(te);
        return;
    }
    te_stage(te, bytes, len);
}

/* -------------------------------------------------------------- input */

/*
 * A context record: the next block reports the new context imprecisely
 * (ctype 1, table 4.4), if trTeContext asks for context at all.
 */
static void te_context(RISCVTraceEncoderState *te, uint64_t context)
{
    if ((te->control & R_TE_CONTROL_CONTEXT_MASK) && context != te->context) {
        te->context = context;
        te->ctype = 1;
    }
}

/*
 * Records the device handles itself, and a block that ends with a
 * constant load, whose successor may be the jump of a lui/auipc + jalr
 * pair split across TBs (trace_ingress.h).
 */
#define TE_RECORD_SPECIAL   (TE_RECORD_STOP | TE_RECORD_PAD | \
                             RISCV_TRACE_CONTEXT | ETRACE_PB_DATA | \
                             MAKE_64BIT_MASK(RISCV_TRACE_CONST_RD_SHIFT, 5))

/*
 * A block after one that ended with a constant load: a jump alone in
 * its TB whose rs1 that load wrote is sequentially inferable.  The
 * block's own constant load, if any, is kept for the next one.
 */
static void te_pair_sijump(RISCVTraceEncoderState *te, RISCVTraceRecord *rec)
{
    unsigned rs1 = extract64(rec->info, RISCV_TRACE_JUMP_RS1_SHIFT, 5);

    if (te->prev_const_rd && rs1 == te->prev_const_rd) {
        rec->info |= ETRACE_PB_SIJUMP;
    }
    te->prev_const_rd = extract64(rec->info, RISCV_TRACE_CONST_RD_SHIFT, 5);
}

static inline void te_trace_block(RISCVTraceEncoderState *te,
                                  const ETraceBlock *b)
{
    if (!trace_event_get_state_backends(TRACE_RISCV_TRACE_ENCODER_BLOCK)) {
        return;     /* not even the arguments */
    }
    trace_riscv_trace_encoder_block(te->cpu->cpu_index, b->iaddr, b->iretire,
                                    b->ilastsize, b->itype, b->priv,
                                    b->sijump | b->qualified << 1,
                                    b->cause, b->tval, b->epc);
}

static bool te_ntrace(RISCVTraceEncoderState *te)
{
    return te->format == TE_FORMAT_NTRACE;
}

/*
 * Data trace.  The accesses of a block come before its record, and go out
 * once the codec encoded the block's last instruction
 * (etrace_encoder_set_block_done()): after the packets that report its
 * instructions, before any sync of a later one.  Records are numbered
 * (dseq) so that the accesses of a block that was filtered out (never
 * encoded) or of a later run of the same code are told apart.
 */
static inline __attribute__((always_inline))
void te_data_record(RISCVTraceEncoderState *te, const RISCVTraceRecord *rec,
                    uint32_t seq)
{
    unsigned k;
    TEDataAccess *d;

    if (te->dq_len == TE_DATA_QUEUE) {
        /* cannot be: te_data_unfed() drops what is not traced */
        te->dq_head = (te->dq_head + 1) % TE_DATA_QUEUE;
        te->dq_len--;
    }
    k = (te->dq_head + te->dq_len++) % TE_DATA_QUEUE;
    d = &te->dq[k];
    etrace_data_from_packed(rec, &te->dqa[k]);
    /* the block's address comes with its record: te_data_assign() */
    d->insn = extract64(rec->info, ETRACE_PB_DOFFSET_SHIFT, 16) * 2;
    d->seq = seq;
}

/* A block record: its accesses get their instructions' addresses. */
static void te_data_assign(RISCVTraceEncoderState *te, uint64_t iaddr)
{
    for (unsigned i = te->dq_len; i-- > 0;) {
        TEDataAccess *d = &te->dq[(te->dq_head + i) % TE_DATA_QUEUE];

        if (d->seq != te->dseq) {
            break;
        }
        d->insn = (d->insn + iaddr) & te->addr_mask;
    }
    te->dseq_fed = te->dseq++;
    te->dfed = false;
}

/*
 * A traced block goes to the codec (te_encode()), of record seq: its
 * half-words from iaddr on.
 */
static void te_data_feed(RISCVTraceEncoderState *te, uint64_t iaddr,
                         unsigned iretire, uint8_t priv, uint32_t seq)
{
    TEDataBlock *db;

    if (te->db_len == TE_DATA_BLOCKS) {
        te->db_head = (te->db_head + 1) % TE_DATA_BLOCKS;   /* cannot be */
        te->db_len--;
    }
    db = &te->dblocks[(te->db_head + te->db_len++) % TE_DATA_BLOCKS];
    db->start = iaddr & te->addr_mask;
    db->end = db->start + (uint64_t)iretire * 2;
    db->seq = seq;
    db->priv = priv;
}

static void te_data_fed(RISCVTraceEncoderState *te, const ETraceBlock *b)
{
    te_data_feed(te, b->iaddr, b->iretire, b->priv, te->dseq_fed);
    te->dfed = true;
}

/* The newest queued access waits for the next block record's address */
static bool te_data_waiting(RISCVTraceEncoderState *te)
{
    return te->dq_len &&
           te->dq[(te->dq_head + te->dq_len - 1) % TE_DATA_QUEUE].seq ==
           te->dseq;
}

/*
 * Data trace without instruction filters: blocks go to the codec packed,
 * which calls te_data_block_done() as for blocks fed one at a time.  The
 * accesses queued before these records (up to a special one) belong to
 * the first that is neither a trap's nor a run's (te_data_assign()); of
 * these records only that block is fed, the others have no accesses.
 * (A block done without an entry matches none: the one entry that can
 * be newer than it, its successor's, has another address or the same
 * TB's accesses, which a TB run twice in a row reports both times; only
 * a failing sc.w/sc.d reports nothing, and it fails again without an
 * lr in between.)
 */
static void te_data_packed(RISCVTraceEncoderState *te,
                           const RISCVTraceRecord *rec, unsigned n)
{
    unsigned len;

    if (!te_data_waiting(te)) {
        return;
    }
    for (unsigned i = 0; i < n; i += len) {
        uint64_t info = rec[i].info;
        unsigned iretire = extract64(info, ETRACE_PB_IRETIRE_SHIFT, 16);

        len = etrace_packed_len(info);
        if ((i && (info & TE_RECORD_SPECIAL)) || i + len > n) {
            return;     /* the codec stops there */
        }
        if (len == 1 && !(info & ETRACE_PB_RUN)) {
            te_data_assign(te, rec[i].iaddr);
            if (iretire) {
                te_data_feed(te, rec[i].iaddr, iretire,
                             extract64(info, ETRACE_PB_PRIV_SHIFT, 3) &
                             etrace_priv_mask(&te->params),
                             te->dseq_fed);
            }
            return;
        }
    }
}

/*
 * After the record being fed went through the filters: if no part of it
 * was traced, its accesses (the newest queued) never will be.
 */
static void te_data_unfed(RISCVTraceEncoderState *te)
{
    while (!te->dfed && te->dq_len &&
           te->dq[(te->dq_head + te->dq_len - 1) % TE_DATA_QUEUE].seq ==
           te->dseq_fed) {
        te->dq_len--;
    }
}

static void te_data_send(RISCVTraceEncoderState *te, const ETraceDataAccess *a)
{
    uint8_t buf[ETRACE_MAX_PACKET];
    bool direct = etrace_window_room(&te->win, ETRACE_MAX_PACKET);
    size_t len = etrace_data_pack_fast(&te->dpacker, &te->options,
                                       &te->dstate, a,
                                       direct ? te->win.pos : buf);

    if (len && direct) {
        te->win.pos += len;
    } else if (len) {
        te_emit(te, buf, len);
    }
}

/* A format 3 since the last data packet: the next ones are full. */
static void te_data_after_f3(RISCVTraceEncoderState *te)
{
    uint64_t f3 = etrace_encoder_packets(te->enc, 3);

    if (f3 != te->syncs) {
        te->syncs = f3;
        etrace_data_sync(&te->dstate);
    }
}

/*
 * ETraceBlockDoneFn: block b was encoded, the oldest fed at its address.
 * Its accesses go out; those of blocks fed before it never will be.
 */
static void te_data_block_done(void *opaque, const ETraceBlock *b)
{
    RISCVTraceEncoderState *te = opaque;
    uint64_t start = b->iaddr & te->addr_mask;
    TEDataBlock db;
    unsigned k;

    /* the oldest block fed at b's address; those before it left out */
    for (k = 0; k < te->db_len; k++) {
        if (te->dblocks[(te->db_head + k) % TE_DATA_BLOCKS].start == start) {
            break;
        }
    }
    if (k == te->db_len) {
        return;     /* not a block of ours (a trap's, a run's) */
    }
    db = te->dblocks[(te->db_head + k) % TE_DATA_BLOCKS];
    te->db_head = (te->db_head + k + 1) % TE_DATA_BLOCKS;
    te->db_len -= k + 1;
    if (te->dq_len) {
        te_data_after_f3(te);
    }
    while (te->dq_len) {
        TEDataAccess *d = &te->dq[te->dq_head];
        const ETraceDataAccess *a = &te->dqa[te->dq_head];

        if (d->seq == db.seq && d->insn >= db.end) {
            break;      /* the rest of a block the filters split */
        }
        if ((int32_t)(d->seq - db.seq) > 0) {
            break;      /* a later block's */
        }
        if (d->seq == db.seq && d->insn >= db.start &&
            (!te->options.data_filtered ||
             etrace_filter_data(&te->filter, a->dtype, a->dsize,
                                a->daddr, d->insn, db.priv, te->context))) {
            te_data_send(te, a);
        }
        te->dq_head = (te->dq_head + 1) % TE_DATA_QUEUE;
        te->dq_len--;
    }
}

/* Tracing starts or stops, or the codec lost packets: nothing waits. */
static void te_data_reset(RISCVTraceEncoderState *te)
{
    te->dq_head = te->dq_len = 0;
    te->db_head = te->db_len = 0;
    te->syncs = 0;
    te->dsynced = false;
    etrace_data_sync(&te->dstate);
}

/*
 * Data trace without filters.  The decoder pairs accesses with the
 * instructions that need one in order, wherever the data packets are
 * among the instruction packets (etrace-dec-data.h), with one exception:
 * a decoder that starts at a sync or trap packet (a wrapped buffer, a
 * gap) drops the accesses that came before it.  So the accesses of an
 * entry (the blocks, in the order given to the codec) go out before
 * every such packet that reports a later entry's instruction and after
 * those that report one of its own (the codec's sync hook says which);
 * between those packets, as early as the entries are encoded.  That
 * leaves the codec free to take a batch's blocks in one call, with its
 * fast paths: the access records are taken out of the batch first, each
 * numbered with the entry that follows it (its block's).
 */
static inline bool te_entry_before(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

/*
 * How many of the queued accesses are of entries before 'end': a binary
 * search, as te_encode_direct() numbers them in order (a flush leaves
 * at most the accesses of the entry still to be evaluated).
 */
static unsigned te_data_before(RISCVTraceEncoderState *te, uint32_t end)
{
    unsigned lo = 0, hi = te->dq_len;

    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        uint32_t seq = te->dq[(te->dq_head + mid) % TE_DATA_QUEUE].seq;

        if (te_entry_before(seq, end)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* The accesses of the entries before entry 'end' go out. */
static void te_data_flush(RISCVTraceEncoderState *te, uint32_t end)
{
    unsigned n = te_data_before(te, end);

    if (n && te->dsynced) {
        te_data_after_f3(te);
    }
    while (n) {
        /* as far as the ring goes on; before the first sync, nowhere */
        unsigned k = MIN(n, TE_DATA_QUEUE - te->dq_head);

        if (te->dsynced) {
            k = etrace_data_pack_window(&te->dpacker, &te->options,
                                        &te->dstate, &te->dqa[te->dq_head],
                                        k, &te->win);
            if (!k) {
                te_data_send(te, &te->dqa[te->dq_head]);    /* no room */
                k = 1;
            }
        }
        te->dq_head = (te->dq_head + k) % TE_DATA_QUEUE;
        te->dq_len -= k;
        n -= k;
    }
}

/*
 * The accesses of the blocks given to the codec will never be paired
 * (those of the blocks still to come will, after the next sync).
 */
static void te_data_lost(RISCVTraceEncoderState *te)
{
    if (te->ddirect) {
        te->dsynced = false;
        te_data_flush(te, te->dentry);      /* drops them */
    } else {
        te_data_reset(te);
    }
}

/* The codec of the trace's format lost what the sinks dropped. */
static void te_codec_lost(RISCVTraceEncoderState *te)
{
    te_data_lost(te);
    if (te_ntrace(te)) {
        ntrace_encoder_lost(te->nenc);
    } else {
        etrace_encoder_lost(te->enc);
    }
}

/* The sinks dropped a packet: the codec starts over after a loss. */
static void te_check_lost(RISCVTraceEncoderState *te)
{
    if (te->lost) {
        te->lost = false;
        te_codec_lost(te);
    }
}

/* A block that passed the filters (ETraceBlockFn). */
static void te_encode(void *opaque, const ETraceBlock *b)
{
    RISCVTraceEncoderState *te = opaque;

    te_trace_block(te, b);
    if (te->options.data && b->qualified && b->iretire && !b->run &&
        b->itype != RISCV_ITYPE_EXCEPTION &&
        b->itype != RISCV_ITYPE_INTERRUPT) {
        te_data_fed(te, b);
    }
    if (te_ntrace(te)) {
        ntrace_encoder_block(te->nenc, b);
    } else {
        etrace_encoder_block(te->enc, b);
    }
    te_check_lost(te);
}

/*
 * Blocks one by one, through the filters and the trace event: rec[0] and
 * those after it up to the first special record, or a trap whose second
 * record is not before rec[n].  Returns how many records it took.
 */
static unsigned te_encode_unpacked(RISCVTraceEncoderState *te,
                                   const RISCVTraceRecord *rec, unsigned n)
{
    unsigned i, len;

    for (i = 0; i < n; i += len) {
        ETraceBlock b;

        len = etrace_packed_len(rec[i].info);
        if ((i && (rec[i].info & TE_RECORD_SPECIAL)) || i + len > n) {
            break;
        }
        etrace_packed_to_block(&te->params, &rec[i], te->context,
                               i ? 0 : te->ctype, &b);
        if (te->options.data && len == 1 && !b.run) {
            te_data_assign(te, b.iaddr);
        }
        if (b.run && etrace_filter_active(&te->filter)) {
            /* reported before the hart knew of the filter: no addresses */
            te_codec_lost(te);
        } else if (etrace_filter_active(&te->filter)) {
            etrace_filter_block(&te->filter, &b, te_encode, te);
            if (te->options.data) {
                te_data_unfed(te);
            }
        } else {
            te_encode(te, &b);
        }
    }
    return i;
}

/* Blocks from rec[0] on, to the codec; returns how many records it took */
static unsigned te_encode_blocks(RISCVTraceEncoderState *te,
                                 RISCVTraceRecord *rec, unsigned n)
{
    unsigned k;

    te_pair_sijump(te, rec);
    if (te->prev_const_rd) {
        n = MIN(n, etrace_packed_len(rec->info));
    }
    if (etrace_filter_active(&te->filter) ||
        trace_event_get_state_backends(TRACE_RISCV_TRACE_ENCODER_BLOCK)) {
        k = te_encode_unpacked(te, rec, n);
    } else if (te_ntrace(te)) {
        k = ntrace_encoder_packed(te->nenc, &te->params, rec, n, te->context,
                                  TE_RECORD_SPECIAL);
        te_check_lost(te);
    } else {
        if (te->options.data && !te->ddirect) {
            te_data_packed(te, rec, n);
        }
        te->dcall = te->dentry;     /* (for te_encode_direct()) */
        k = etrace_encoder_packed(te->enc, rec, n, te->context,
                                  te->ctype, TE_RECORD_SPECIAL);
        te->dentry += k;
        te_check_lost(te);
    }
    if (k) {
        te->ctype = 0;
    }
    return k;
}

/* ETraceSyncHookFn */
static void te_data_sync_hook(void *opaque, long first_after)
{
    RISCVTraceEncoderState *te = opaque;

    if (te->ddirect) {
        te_data_flush(te, te->dcall + (uint32_t)first_after);
    }
    te->dsynced = true;
}

/*
 * The m entries in te->dscratch to the codec.  After each call, the
 * accesses of the entries it took go out, but for the last one's: its
 * last instruction is evaluated with its successor.
 */
static void te_encode_entries(RISCVTraceEncoderState *te, unsigned m)
{
    for (unsigned j = 0, k; j < m; j += k) {
        k = te_encode_blocks(te, &te->dscratch[j], m - j);
        if (!k) {
            break;      /* cannot be: the scratch holds whole traps */
        }
        te_data_flush(te, te->dentry - 1);
    }
}

/*
 * From rec[0] up to the next record the device handles itself (or a
 * pair whose second record is in the next batch): the accesses queued,
 * the blocks encoded.  Returns how many records it took.
 */
static unsigned te_encode_direct(RISCVTraceEncoderState *te,
                                 const RISCVTraceRecord *rec, unsigned n)
{
    RISCVTraceRecord *scratch = te->dscratch;
    uint32_t entry = te->dentry;
    unsigned i = 0, m = 0, len;

    for (; i < n; i += len) {
        uint64_t info = rec[i].info;

        if (info & (TE_RECORD_STOP | TE_RECORD_PAD | RISCV_TRACE_CONTEXT)) {
            break;
        }
        len = info & ETRACE_PB_DATA ? 2 : etrace_packed_len(info);
        if (i + len > n) {
            break;
        }
        if (info & ETRACE_PB_DATA) {
            te_data_record(te, &rec[i], entry + m);
            continue;
        }
        memcpy(&scratch[m], &rec[i], len * sizeof(*rec));    /* all of it */
        m += len;
    }
    te_encode_entries(te, m);
    return i;
}

/* Whether data trace can take te_encode_direct() */
static bool te_data_direct_ok(RISCVTraceEncoderState *te)
{
    return !te->options.data_filtered && !etrace_filter_active(&te->filter) &&
           !te_ntrace(te) &&
           !trace_event_get_state_backends(TRACE_RISCV_TRACE_ENCODER_BLOCK);
}

/*
 * Filters or the block trace event turned on or off while data trace
 * runs: the accesses go the other way.  To the block-done hook, those
 * of encoded blocks go out first (the newest's a little early: the
 * decoder pairs them all the same unless it starts at a sync of that
 * block's last instruction); the others wait for their block record.
 * From it, once none waits.
 */
static void te_data_choose(RISCVTraceEncoderState *te)
{
    bool direct = te_data_direct_ok(te);

    if (direct == te->ddirect) {
        return;
    }
    if (te->ddirect) {
        te_data_flush(te, te->dentry);
        for (unsigned i = 0; i < te->dq_len; i++) {
            te->dq[(te->dq_head + i) % TE_DATA_QUEUE].seq = te->dseq;
        }
    } else if (te->dq_len) {
        return;
    } else {
        te->db_head = te->db_len = 0;
    }
    te->ddirect = direct;
    etrace_encoder_set_block_done(te->enc, direct ? NULL : te_data_block_done,
                                  te);
}

static void te_finish(RISCVTraceEncoderState *te);
static void te_update(RISCVTraceEncoderState *te);

/*
 * Filter and encode records; te->lock is held.  Without filters, runs of
 * blocks go to the codec in their packed form.  Returns how many records
 * it took: all but a trap whose second record is in the next batch, and
 * the stop and those after it unless stop_ok (the encoding thread leaves
 * the stop to the thread that queued it, te_stop_on_hart(): ending the
 * trace may start another, which touches the hart, under the BQL).
 */
static unsigned te_encode_records(RISCVTraceEncoderState *te,
                                  RISCVTraceRecord *rec, unsigned n,
                                  bool stop_ok)
{
    unsigned i = 0, k;

    te->budget = te_sink_space(te);
    te_window_open(te);
    if (te->tracing && te->options.data && te->enc) {
        te_data_choose(te);
    }
    while (i < n) {
        if (rec[i].info & TE_RECORD_STOP) {
            if (!stop_ok) {
                break;
            }
            te_window_close(te);
            te_flush(te);
            te_finish(te);
            te_window_open(te);
            i++;
            continue;
        }
        if (te->tracing && te->ddirect &&
            !(rec[i].info & (TE_RECORD_PAD | RISCV_TRACE_CONTEXT))) {
            k = te_encode_direct(te, &rec[i], n - i);
            if (!k) {
                break;  /* a pair whose second record is in the next batch */
            }
            i += k;
            continue;
        }
        if (rec[i].info & ETRACE_PB_DATA) {
            if (i + 2 > n) {
                break;  /* its second record is in the next batch */
            }
            if (te->tracing && te->options.data && te->dq) {
                te_data_record(te, &rec[i], te->dseq);
            }
            i += 2;
            continue;
        }
        if (rec[i].info & (TE_RECORD_PAD | RISCV_TRACE_CONTEXT)) {
            if (te->tracing && (rec[i].info & RISCV_TRACE_CONTEXT)) {
                te_context(te, rec[i].iaddr);
            }
            i++;
            continue;
        }
        /* a block, and those after it up to the next special record */
        k = te->tracing ? te_encode_blocks(te, &rec[i], n - i) :
                          etrace_packed_len(rec[i].info);  /* dropped */
        if (!k || i + k > n) {
            break;      /* a trap, its second record in the next batch */
        }
        i += k;
    }
    te_window_close(te);
    te_flush(te);
    return i;
}

/*
 * Encode a batch of queued records, if any; te->lock is held.  Returns
 * whether it took any (not: the stop, when not stop_ok).
 */
static bool te_encode_queued(RISCVTraceEncoderState *te, bool stop_ok)
{
    uint32_t tail = te->tail;
    uint32_t first = tail % te->queue_len;
    uint32_t n = qatomic_load_acquire(&te->head) - tail;

    n = MIN(MIN(n, TE_BATCH), te->queue_len - first);
    if (!n) {
        return false;
    }
    /* at least one: a trap's pair is queued whole, in one piece */
    n = te_encode_records(te, &te->queue[first], n, stop_ok);
    qatomic_store_release(&te->tail, tail + n);
    return n;
}

/* Encode everything queued; the BQL and te->lock are held. */
static void te_encode_all(RISCVTraceEncoderState *te)
{
    while (te_encode_queued(te, true)) {
        /* next batch */
    }
}

static uint32_t te_queued(RISCVTraceEncoderState *te)
{
    return qatomic_load_acquire(&te->head) - qatomic_load_acquire(&te->tail);
}

/*
 * Less than a batch is free: the hart stalls until the encoding thread has
 * brought it down to half of it (not just a batch less: a sleep and
 * a wake-up cost microseconds each).  Waiting beats encoding a batch
 * here, which would only make the two threads take turns at te->lock;
 * but a hart that holds the BQL encodes a batch itself: in a work item it
 * may be queueing the stop, which the encoding thread leaves to it, and
 * the encoding thread may need the BQL (encode_with_bql).  Traps and
 * interrupts hold it too (QEMU's CPU loop delivers them with it), so a
 * hart that traps with the queue full encodes a batch under the BQL.
 */
static void te_wait_for_room(RISCVTraceEncoderState *te)
{
    if (bql_locked()) {
        QEMU_LOCK_GUARD(&te->lock);
        te_encode_queued(te, true);
        return;
    }
    qemu_event_reset(&te->made_room);
    if (te_queued(te) > TE_ROOM_OF(te->queue_len)) {
        trace_riscv_trace_encoder_wait(te->cpu->cpu_index, te_queued(te));
        qemu_event_wait(&te->made_room);
    }
}

/* The hart wrote n records into the room it was lent: queue them. */
static void te_publish(RISCVTraceEncoderState *te, uint32_t n)
{
    qatomic_store_release(&te->head, te->head + n);
    /*
     * The encoding thread sleeps only with fewer than TE_WAKE_OF records
     * queued: wake it whenever there are that many, counted after the
     * store.  Testing only for the hand-over that crosses the line lost
     * wake-ups: a tail read before the encoding thread's last store made
     * the crossing look earlier, while that thread, having reset the
     * event, read the old head and went to sleep; the hart then stalled
     * on a full queue for ever.  A tail read late only counts more.  An
     * event that is set costs a fence here, once per room.
     */
    if (te_queued(te) >= TE_WAKE_OF(te->queue_len)) {
        qemu_event_set(&te->work);
    }
}

#ifdef CONFIG_CPUID_H
/* An x86 host: PREFETCHW if it has it (CPUID 0x80000001, ECX bit 8) */
static bool te_host_prefetchw;

static void te_detect_prefetch_for_write(void)
{
    unsigned a, b, c, d;

    te_host_prefetchw = __get_cpuid(0x80000001, &a, &b, &c, &d) &&
                        (c & bit_PRFCHW);
}

static inline void te_prefetch_line_for_write(const char *p)
{
    if (te_host_prefetchw) {
        asm volatile("prefetchw %0" : : "m"(*p));
    }
}
#else
static void te_detect_prefetch_for_write(void)
{
}

static inline void te_prefetch_line_for_write(const char *p)
{
    __builtin_prefetch(p, 1);
}
#endif

/*
 * While the hart fills the room it was lent (after head), bring the
 * lines of the room after it, if that is free already, to its core for
 * writing.  The encoding thread read them a lap ago, and a store to a
 * line another core holds waits for the line to come back: a round trip
 * of 450-530 ns on this project's 2-core machine on 2026-11-28, when
 * this took the CoreMark-like mix in the default modes from 1.6x to
 * 1.4x of the untraced time and the recursion from 2.2x to 1.7x.  A read
 * prefetch (what __builtin_prefetch(p, 1) makes in a build for the
 * x86-64 baseline) measured no better than none: only a prefetch for
 * writing takes the line from the other core, and an x86 host without
 * PREFETCHW gets none.
 */
static void te_prefetch_next_room(RISCVTraceEncoderState *te, uint32_t head)
{
    RISCVTraceRoom next;
    const char *p;

    if (!riscv_trace_queue_room(head, qatomic_read(&te->tail),
                                te->queue_len, TE_BATCH, &next)) {
        return;
    }
    p = (const char *)&te->queue[next.first];
    for (size_t i = 0; i < next.len * sizeof(RISCVTraceRecord);
         i += qemu_dcache_linesize) {
        te_prefetch_line_for_write(p + i);
    }
}

/*
 * Room for the hart's next records: the free slots after head, up to a
 * batch and the end of the array (riscv_trace_queue_room()).  With less
 * than a batch free, the hart waits for more (te_wait_for_room()).
 */
static RISCVTraceRecord *te_lend_room(RISCVTraceEncoderState *te,
                                      RISCVTraceRecord **limit)
{
    RISCVTraceRoom room;

    while (!riscv_trace_queue_room(te->head,
                                   qatomic_load_acquire(&te->tail),
                                   te->queue_len, TE_BATCH, &room)) {
        te_wait_for_room(te);
    }
    if (room.pad) {
        /* a record of several entries must not be split by the end */
        for (uint32_t i = te->queue_len - room.pad; i < te->queue_len; i++) {
            te->queue[i] = (RISCVTraceRecord) { .info = TE_RECORD_PAD };
        }
        te_publish(te, room.pad);
    }
    te->room = &te->queue[room.first];
    *limit = te->room + room.len;
    te_prefetch_next_room(te, te->head + room.len);
    return te->room;
}

/*
 * Records of the hart (RISCVTraceConsumeFn), on its thread: they are
 * already in the queue, after head; queued while tracing, else dropped.
 */
static RISCVTraceRecord *te_consume(void *opaque, RISCVTraceRecord *end,
                                    RISCVTraceRecord **limit)
{
    RISCVTraceEncoderState *te = opaque;

    if (end && qatomic_read(&te->tracing)) {
        te_publish(te, end - te->room);
    }
    return te_lend_room(te, limit);
}

/*
 * The oldest queued record is a stop, which the thread that queued it
 * encodes (te_stop_on_hart(), right after queueing it).  Read without
 * te->lock: a hart encoding meanwhile (it holds the BQL) may move the
 * tail and reuse the slot, so the answer may be stale; then the thread
 * sleeps until the hart's next hand-over, which wakes it.
 */
static bool te_stop_is_next(RISCVTraceEncoderState *te)
{
    uint32_t tail = qatomic_load_acquire(&te->tail);

    return qatomic_load_acquire(&te->head) != tail &&
           (te->queue[tail % te->queue_len].info & TE_RECORD_STOP);
}

/*
 * The encoding thread's locks: te->lock, after the BQL while
 * encode_with_bql (which can only change with both held).  Returns
 * whether it took the BQL.
 */
static bool te_worker_lock(RISCVTraceEncoderState *te)
{
    for (;;) {
        bool bql = qatomic_read(&te->encode_with_bql);

        if (bql) {
            bql_lock();
        }
        qemu_rec_mutex_lock(&te->lock);
        if (te->encode_with_bql == bql) {
            return bql;
        }
        qemu_rec_mutex_unlock(&te->lock);
        if (bql) {
            bql_unlock();
        }
    }
}

/*
 * The encoding thread's share: down to empty or a stop, a few batches at
 * a time (register accesses get te->lock in between).
 */
static void te_worker_drain(RISCVTraceEncoderState *te)
{
    bool took = true;

    while (took && te_queued(te)) {
        bool bql = te_worker_lock(te);

        for (int i = 0; i < TE_BATCHES_PER_LOCK && took; i++) {
            took = te_encode_queued(te, false);
        }
        qemu_rec_mutex_unlock(&te->lock);
        if (bql) {
            bql_unlock();
        }
        if (te_queued(te) <= TE_ROOM_OF(te->queue_len)) {
            qemu_event_set(&te->made_room);
        }
        if (te->encode_delay_us) {
            g_usleep(te->encode_delay_us);
        }
    }
}

/*
 * The encoding thread: batches of queued records, with te->lock (see
 * te_worker_lock()).  The state is read after the reset, so that a
 * hand-over after it wakes the thread and one before it is seen.
 */
static void *te_worker(void *opaque)
{
    RISCVTraceEncoderState *te = opaque;

    /* RCU readers: the sinks' stores, qemu_log() */
    rcu_register_thread();
    while (!qatomic_read(&te->worker_exit)) {
        qemu_event_reset(&te->work);
        if (te_queued(te) < TE_WAKE_OF(te->queue_len) ||
            te_stop_is_next(te)) {
            qemu_event_wait(&te->work);
            continue;
        }
        te_worker_drain(te);
    }
    rcu_unregister_thread();
    return NULL;
}

static void te_start_worker(RISCVTraceEncoderState *te)
{
    g_autofree char *name = NULL;

    if (te->queue) {
        return;
    }
    name = g_strdup_printf("rvtrace-%d", te->cpu->cpu_index);
    te->queue = qemu_memalign(QEMU_VMALLOC_ALIGN,
                              te->queue_len * sizeof(*te->queue));
    qemu_madvise(te->queue, te->queue_len * sizeof(*te->queue),
                 QEMU_MADV_HUGEPAGE);
    qemu_event_init(&te->work, false);
    qemu_event_init(&te->made_room, false);
    qemu_thread_create(&te->worker, name, te_worker, te,
                       QEMU_THREAD_JOINABLE);
}

/* Instruction lengths inside a block, for address-range filters. */
static unsigned te_insn_len(void *opaque, uint64_t addr)
{
    RISCVTraceEncoderState *te = opaque;
    uint8_t parcel[2];

    if (cpu_memory_rw_debug(te->cpu, addr, parcel, 2, false)) {
        return 0;
    }
    return (parcel[0] & 3) == 3 ? 4 : 2;
}

/* --------------------------------------------------------- start/stop */

static void te_options(RISCVTraceEncoderState *te, ETraceOptions *o)
{
    *o = (ETraceOptions) {
        .sync_mode = FIELD_EX32(te->control, TE_CONTROL, SYNC_MODE),
        .sync_max = FIELD_EX32(te->control, TE_CONTROL, SYNC_MAX),
    };
    etrace_options_from_features(te->inst_features, o);
    if (FIELD_EX32(te->data_control, TE_DATA_CONTROL, TRACING) &&
        FIELD_EX32(te->control, TE_CONTROL, FORMAT) == TE_FORMAT_ETRACE) {
        o->data = true;
        o->data_no_value = FIELD_EX32(te->data_control, TE_DATA_CONTROL,
                                      NO_VALUE);
        o->data_no_address = FIELD_EX32(te->data_control, TE_DATA_CONTROL,
                                        NO_ADDR);
        o->data_full_address = FIELD_EX32(te->data_control, TE_DATA_CONTROL,
                                          ADDR_COMPRESS) == TE_DATA_ADDR_FULL;
        o->data_filtered = te->filter.data_filters != 0;
    }
}

/*
 * Runs of branch blocks (see trace_ingress.h): filters need every branch
 * block's address, the branch predictor its entry of each (indexed runs,
 * where they fit it), N-trace's BTM the I-CNT at each taken branch
 * (counted runs).
 */
static bool te_runs_allowed(RISCVTraceEncoderState *te)
{
    return !etrace_filter_active(&te->filter) &&
           (!te->bpred || etrace_run_indexes_fit(&te->params)) &&
           !te->options.data;
}

/* The runs of N-trace's BTM count the half-words to each taken branch. */
static bool te_runs_counted(RISCVTraceEncoderState *te)
{
    return te_ntrace(te) && te->ntrace_mode != NTRACE_MODE_HTM;
}

/* The hart holds branch blocks back as te->runs and its kind say. */
static void te_set_runs(RISCVTraceEncoderState *te)
{
    riscv_trace_set_runs(te->cpu, qatomic_read(&te->runs), te->run_units,
                         te->run_calls, te->run_index, te_runs_counted(te));
}

/* The context when tracing starts: later changes come as records. */
static uint64_t te_hart_asid(RISCVTraceEncoderState *te)
{
    CPURISCVState *env = &RISCV_CPU(te->cpu)->env;

    return riscv_cpu_mxl(env) == MXL_RV32 ?
           get_field(env->satp, SATP32_ASID) :
           get_field(env->satp, SATP64_ASID);
}

/*
 * The encapsulation's index: the low SrcBits bits of SrcID (none with
 * SrcBits 0 or InhibitSrc), so that any register value starts a codec.
 */
static void te_source_params(RISCVTraceEncoderState *te)
{
    unsigned bits = FIELD_EX32(te->control, TE_CONTROL, INHIBIT_SRC) ? 0 :
                    FIELD_EX32(te->inst_features, TE_INST_FEATURES, SRC_BITS);
    uint32_t id = FIELD_EX32(te->inst_features, TE_INST_FEATURES, SRC_ID);

    te->params.src_bits = bits;
    te->params.src_id = bits ? extract32(id, 0, bits) : 0;
}

static void te_free_codec(RISCVTraceEncoderState *te)
{
    etrace_encoder_free(te->enc);
    te->enc = NULL;
    ntrace_encoder_free(te->nenc);
    te->nenc = NULL;
    te->ddirect = false;    /* its accesses go by te->enc's hook */
}

/* N-trace's settings: the E-trace options and trTeControl. */
static bool te_start_ntrace(RISCVTraceEncoderState *te)
{
    NTraceParams p = {
        .xlen = te->params.iaddress_width_p,
        .src_bits = te->params.src_bits, .src_id = te->params.src_id,
    };
    NTraceOptions o = {
        .mode = FIELD_EX32(te->control, TE_CONTROL, INST_MODE),
        .implicit_return = te->options.implicit_return,
        .context = FIELD_EX32(te->control, TE_CONTROL, CONTEXT),
        .repeat = FIELD_EX32(te->inst_features, TE_INST_FEATURES,
                             EN_REPEATED_HISTORY),
        .sync_mode = te->options.sync_mode,
        .sync_max = te->options.sync_max,
    };

    te->ntrace_mode = o.mode;
    te->nenc = ntrace_encoder_new(&p, te_emit, te);
    if (!te->nenc) {
        return false;
    }
    ntrace_encoder_set_window(te->nenc, &te->win);
    ntrace_encoder_start(te->nenc, &o);
    return true;
}

/*
 * A new codec of the format trTeFormat selects starts the trace: a
 * support packet (E-trace), a sync to come.
 */
static bool te_start_codec(RISCVTraceEncoderState *te)
{
    te_free_codec(te);
    te->format = FIELD_EX32(te->control, TE_CONTROL, FORMAT);
    te->prev_const_rd = 0;
    te->ctype = 0;
    te->budget = te_sink_space(te);
    /*
     * A loss of the trace before (a StopOnWrap sink that filled) is not
     * this one's: its status bits said so, and the new trace starts
     * with its support packet, not with trace_lost.
     */
    te->lost = false;
    te_data_reset(te);
    if (te_ntrace(te)) {
        if (!te_start_ntrace(te)) {
            return false;
        }
    } else {
        te->enc = etrace_encoder_new(&te->params, te_emit, te);
        if (!te->enc) {
            return false;
        }
        etrace_encoder_set_window(te->enc, &te->win);
        if (te->options.data) {
            if (!te->dq) {
                te->dq = g_new(TEDataAccess, TE_DATA_QUEUE);
                te->dqa = g_new(ETraceDataAccess, TE_DATA_QUEUE);
            }
            etrace_encoder_set_sync_hook(te->enc, te_data_sync_hook, te);
            etrace_encoder_set_block_done(te->enc, te_data_block_done, te);
            etrace_packer_init(&te->dpacker, &te->params);
            te_data_choose(te);
        }
        etrace_encoder_start(te->enc, &te->options);
    }
    te_flush(te);
    return true;
}

/* The codec ends the trace: its last packets reach the sinks. */
static void te_end_codec(RISCVTraceEncoderState *te)
{
    te->budget = te_sink_space(te);
    /*
     * The codec's last report and end come between calls: its hook
     * numbers the entries from the next one on.  Accesses of a block
     * whose record never came are dropped (te_data_reset()).
     */
    te->dcall = te->dentry;
    if (te_ntrace(te)) {
        ntrace_encoder_stop(te->nenc);
    } else {
        etrace_encoder_stop(te->enc);
    }
    te_data_reset(te);
    te_flush(te);
    for (int i = 0; i < ARRAY_SIZE(te->sink); i++) {
        RISCVTraceSinkClass *sc;
        RISCVTraceSink *sink = te_sink(te, i, &sc);

        if (sink) {
            sc->flush(sink, te_ntrace(te) ? NTRACE_IDLE : 0);
        }
    }
}

static void te_start(RISCVTraceEncoderState *te)
{
    te_source_params(te);
    te_options(te, &te->options);
    te->context = FIELD_EX32(te->control, TE_CONTROL, CONTEXT) ?
                  te_hart_asid(te) : 0;
    if (!te_start_codec(te)) {
        /* Unreachable through the registers; the guest can still see it */
        qemu_log_mask(LOG_GUEST_ERROR, "riscv-trace-encoder: hart %d: the "
                      "codec refused this configuration; InstTracing "
                      "cleared\n", te->cpu->cpu_index);
        te->control &= ~R_TE_CONTROL_INST_TRACING_MASK;
        return;
    }
    qatomic_set(&te->tracing, true);
    te->suspended = false;
    te_start_worker(te);
    riscv_trace_attach(te->cpu, te_consume, te);
    te->bpred = te->options.branch_prediction;
    te->runs = te_runs_allowed(te);
    /* N-trace's I-CNT counts every half-word, of runs too */
    te->run_units = etrace_options_count_units(&te->options) ||
                    te_ntrace(te);
    te->run_calls = te->options.implicit_return == ETRACE_IR_OFF;
    te->run_index = te->bpred;
    te_set_runs(te);
    riscv_trace_set_data(te->cpu, te->options.data);
    riscv_trace_set_active(te->cpu, true);
    trace_riscv_trace_encoder_start(te->cpu->cpu_index, te->control,
                                    te->inst_features);
}

/* The last queued record is in: end the trace. */
static void te_finish(RISCVTraceEncoderState *te)
{
    if (te->tracing) {
        if (!te->suspended) {
            te_end_codec(te);
        }
        qatomic_set(&te->tracing, false);
    }
    te->suspended = false;
    te->stopping = false;
    trace_riscv_trace_encoder_stop(te->cpu->cpu_index);
    /* The registers may have asked for a new trace meanwhile */
    te_update(te);
}

/*
 * On the hart's thread (or while it does not run), with the BQL, after
 * its ring reached the queue: queue the stop and encode all of it now.
 */
static void te_stop_on_hart(void *opaque)
{
    RISCVTraceEncoderState *te = opaque;
    RISCVTraceRecord stop = { .info = TE_RECORD_STOP };

    QEMU_LOCK_GUARD(&te->lock);
    riscv_trace_append(te->cpu, &stop);
    te_encode_all(te);
}

/* A filter came on or went off while tracing: runs follow. */
static void te_runs_on_hart(void *opaque)
{
    RISCVTraceEncoderState *te = opaque;

    QEMU_LOCK_GUARD(&te->lock);
    te_set_runs(te);
}

/* After the filter registers changed (the BQL and te->lock are held) */
static void te_filters_changed(RISCVTraceEncoderState *te)
{
    qatomic_set(&te->encode_with_bql,
                te->sinks_need_bql || etrace_filter_active(&te->filter));
}

/*
 * A filter register.  While tracing, the filters apply from the block
 * that writes them: written by the traced hart, its records so far are
 * encoded first (from another thread, those still queued get the new
 * filters: a run among them is a loss).  Runs follow the filters.
 */
static void te_write_filter(RISCVTraceEncoderState *te, hwaddr addr,
                            uint64_t val)
{
    bool self = current_cpu == te->cpu;

    if (te->tracing && self) {
        riscv_trace_flush(te->cpu);
        te_encode_all(te);
    }
    etrace_filter_write(&te->filter, addr, val);
    te_filters_changed(te);
    if (te->tracing && te->runs != te_runs_allowed(te)) {
        qatomic_set(&te->runs, !te->runs);
        if (self) {
            te_set_runs(te);
        } else {
            riscv_trace_run_on_hart(te->cpu, te_runs_on_hart, te);
        }
    }
}

/* riscv_trace_sink_sync() for one object of the QOM tree. */
static int te_sync_for_sink(Object *obj, void *opaque)
{
    RISCVTraceEncoderState *te = (RISCVTraceEncoderState *)
        object_dynamic_cast(obj, TYPE_RISCV_TRACE_ENCODER);

    if (te && current_cpu == te->cpu &&
        (te->sink[0] == opaque || te->sink[1] == opaque)) {
        QEMU_LOCK_GUARD(&te->lock);
        if (te->tracing) {
            riscv_trace_flush(te->cpu);
            te_encode_all(te);
        }
    }
    return 0;
}

void riscv_trace_sink_sync(RISCVTraceSink *sink)
{
    if (current_cpu) {
        object_child_foreach_recursive(object_get_root(), te_sync_for_sink,
                                       sink);
    }
}

/*
 * The VM stopped: every record of the hart is encoded and the codec ends
 * the trace (the last instruction, a support packet), so that the sinks
 * hold a trace that ends exactly where the hart stopped.  The codec's
 * state is not migrated and a stopped VM may be saved, migrated or go
 * on: wherever it runs again, a new trace starts (te_vm_state_change).
 */
static void te_suspend_on_hart(void *opaque)
{
    RISCVTraceEncoderState *te = opaque;

    QEMU_LOCK_GUARD(&te->lock);
    te_encode_all(te);
    if (te->tracing && !te->suspended) {
        te_end_codec(te);
        te->suspended = true;
    }
}

/*
 * When the VM stops, its trace ends as above; it starts again when the
 * VM resumes here, or on a migration's destination (te_post_load).  At
 * shutdown the trace ends for good, so that a capture is complete.
 */
static void te_vm_state_change(void *opaque, bool running, RunState state)
{
    RISCVTraceEncoderState *te = opaque;

    QEMU_LOCK_GUARD(&te->lock);
    if (running) {
        if (te->suspended && te->tracing) {
            te_start_codec(te);
        }
        te->suspended = false;
        return;
    }
    if (!te->tracing || te->stopping) {
        return;
    }
    if (state == RUN_STATE_SHUTDOWN) {
        te->stopping = true;
        riscv_trace_set_active(te->cpu, false);
        riscv_trace_run_on_hart(te->cpu, te_stop_on_hart, te);
    } else {
        riscv_trace_run_on_hart(te->cpu, te_suspend_on_hart, te);
    }
}

static bool te_wants_trace(RISCVTraceEncoderState *te)
{
    uint32_t need = R_TR_CONTROL_ACTIVE_MASK | R_TR_CONTROL_ENABLE_MASK |
                    R_TE_CONTROL_INST_TRACING_MASK;

    return (te->control & need) == need &&
           FIELD_EX32(te->control, TE_CONTROL, INST_MODE);
}

static void te_update(RISCVTraceEncoderState *te)
{
    bool want = te_wants_trace(te) && !runstate_check(RUN_STATE_SHUTDOWN);

    if (want && !te->tracing && !te->stopping) {
        te_start(te);
    } else if (!want && te->tracing && !te->stopping) {
        te->stopping = true;
        riscv_trace_set_active(te->cpu, false);
        riscv_trace_run_on_hart(te->cpu, te_stop_on_hart, te);
    }
}

/* ---------------------------------------------------------- registers */

/* The Active 0->1 write: every other field takes its default. */
static uint32_t te_control_defaults(RISCVTraceEncoderState *te)
{
    return R_TR_CONTROL_ACTIVE_MASK |
           te->default_format << R_TE_CONTROL_FORMAT_SHIFT |
           TE_INST_MODE_DELTA << R_TE_CONTROL_INST_MODE_SHIFT |
           TE_SYNC_MODE_DEFAULT << R_TE_CONTROL_SYNC_MODE_SHIFT |
           TE_SYNC_MAX_DEFAULT << R_TE_CONTROL_SYNC_MAX_SHIFT;
}

/*
 * trTeFormat 0 or 1 (another value: 0); InstMode, when not 0 (off), one
 * of the format's: 6 for E-trace, 3 or 6 for N-trace, else 6.
 */
static uint32_t te_legal_control(uint32_t val)
{
    unsigned format = FIELD_EX32(val, TE_CONTROL, FORMAT);
    unsigned mode = FIELD_EX32(val, TE_CONTROL, INST_MODE);

    if (format != TE_FORMAT_NTRACE) {
        format = TE_FORMAT_ETRACE;
    }
    if (mode && !(format == TE_FORMAT_NTRACE && mode == NTRACE_MODE_BTM)) {
        mode = TE_INST_MODE_DELTA;
    }
    val = FIELD_DP32(val, TE_CONTROL, FORMAT, format);
    return FIELD_DP32(val, TE_CONTROL, INST_MODE, mode);
}

/*
 * trTeInstFeatures: the fields of the format trTeControl selects (N-trace
 * has no address, branch prediction, jump target cache or sequential
 * jump options).
 */
static uint32_t te_legal_features(RISCVTraceEncoderState *te, uint32_t val)
{
    uint32_t f = val & (R_TE_INST_FEATURES_NO_ADDR_DIFF_MASK |
                        R_TE_INST_FEATURES_NO_TRAP_ADDR_MASK |
                        R_TE_INST_FEATURES_EN_SEQUENTIAL_JUMP_MASK |
                        R_TE_INST_FEATURES_EN_IMPLICIT_RETURN_MASK |
                        R_TE_INST_FEATURES_EN_BRANCH_PREDICTION_MASK |
                        R_TE_INST_FEATURES_EN_JUMP_TARGET_CACHE_MASK |
                        R_TE_INST_FEATURES_EN_REPEATED_HISTORY_MASK |
                        R_TE_INST_FEATURES_SRC_ID_MASK);
    unsigned ir_mode = FIELD_EX32(val, TE_INST_FEATURES, IR_MODE);
    unsigned src_bits = FIELD_EX32(val, TE_INST_FEATURES, SRC_BITS);

    /* Implicit return: a call counter or a full-address stack. */
    if (ir_mode && ir_mode != ETRACE_FEAT_IR_MODE_COUNTER) {
        ir_mode = ETRACE_FEAT_IR_MODE_STACK;
    }
    f = FIELD_DP32(f, TE_INST_FEATURES, IR_MODE, ir_mode);
    f = FIELD_DP32(f, TE_INST_FEATURES, SRC_BITS,
                   MIN(src_bits, TE_SRC_BITS_MAX));
    if (FIELD_EX32(te->control, TE_CONTROL, FORMAT) == TE_FORMAT_NTRACE) {
        f &= TE_NTRACE_FEATURES;
    } else {
        f &= ~R_TE_INST_FEATURES_EN_REPEATED_HISTORY_MASK;
    }
    return f;
}

/*
 * trTeDataControl (docs/rvtrace.rst): data trace in E-trace only;
 * DataAddrCompress full or differential; NoAddr and NoValue not both;
 * DataStallOrOverflow write-1-to-clear.
 */
static uint32_t te_legal_data_control(RISCVTraceEncoderState *te,
                                      uint32_t old, uint32_t val)
{
    uint32_t d = val & TE_DATA_CONTROL_RW;
    unsigned compress = FIELD_EX32(val, TE_DATA_CONTROL, ADDR_COMPRESS);

    if (FIELD_EX32(te->control, TE_CONTROL, FORMAT) != TE_FORMAT_ETRACE) {
        return 0;
    }
    if (compress != TE_DATA_ADDR_FULL) {
        compress = TE_DATA_ADDR_DIFF;
    }
    d = FIELD_DP32(d, TE_DATA_CONTROL, ADDR_COMPRESS, compress);
    if (FIELD_EX32(d, TE_DATA_CONTROL, NO_VALUE)) {
        d &= ~R_TE_DATA_CONTROL_NO_ADDR_MASK;
    }
    d |= old & R_TE_DATA_CONTROL_STALL_OR_OVERFLOW_MASK & ~val;
    return d | R_TE_DATA_CONTROL_IMPLEMENTED_MASK;
}

static void te_write_control(RISCVTraceEncoderState *te, uint32_t val)
{
    uint32_t old = te->control;

    if (!(val & R_TR_CONTROL_ACTIVE_MASK)) {
        te->control = 0;
        te->inst_features = 0;
        te->data_control = 0;
        etrace_filter_reset(&te->filter);
        te_filters_changed(te);
    } else if (!(old & R_TR_CONTROL_ACTIVE_MASK)) {
        te->control = te_control_defaults(te);
        te->data_control = te_legal_data_control(te, 0,
            TE_DATA_ADDR_DIFF << R_TE_DATA_CONTROL_ADDR_COMPRESS_SHIFT);
    } else {
        val = te_legal_control(val);
        te->control = (val & TE_CONTROL_RW) |
                      (old & R_TE_CONTROL_STALL_OR_OVERFLOW_MASK & ~val);
        if (!FIELD_EX32(old, TR_CONTROL, ENABLE) &&
            FIELD_EX32(val, TR_CONTROL, ENABLE)) {
            te->control &= ~R_TE_CONTROL_STALL_OR_OVERFLOW_MASK;
        }
        /* the features of the other format read 0 */
        te->inst_features = te_legal_features(te, te->inst_features);
        te->data_control = te_legal_data_control(te, te->data_control,
            te->data_control & ~R_TE_DATA_CONTROL_STALL_OR_OVERFLOW_MASK);
        if (!FIELD_EX32(old, TR_CONTROL, ENABLE) &&
            FIELD_EX32(val, TR_CONTROL, ENABLE)) {
            te->data_control &= ~R_TE_DATA_CONTROL_STALL_OR_OVERFLOW_MASK;
        }
    }
    te_update(te);
}

static uint32_t te_impl(RISCVTraceEncoderState *te)
{
    bool v2 = te->arch == ETRACE_ARCH_2_0;

    /*
     * ProtocolMajor (bits 19:16) and ProtocolMinor (23:20) of the format
     * trTeFormat selects: E-trace 1.1 or 2.0, N-trace 1.0.
     */
    if (FIELD_EX32(te->control, TE_CONTROL, FORMAT) == TE_FORMAT_NTRACE) {
        return riscv_trace_impl_v1(TR_COMP_ENCODER) | 1 << 16;
    }
    return riscv_trace_impl_v1(TR_COMP_ENCODER) |
           (v2 ? 2 : 1) << 16 | (v2 ? 0 : 1) << 20;
}

/* Discovery (E-trace 9.1), in a layout of our own: docs/rvtrace.rst. */
static uint32_t te_discovery(RISCVTraceEncoderState *te, hwaddr addr)
{
    uint32_t d0, d1;

    etrace_params_to_discovery(&te->params, &d0, &d1);
    return addr == A_TE_DISCOVERY0 ? d0 : d1;
}

static uint64_t te_read(void *opaque, hwaddr addr, unsigned size)
{
    RISCVTraceEncoderState *te = opaque;
    uint64_t val = 0;

    QEMU_LOCK_GUARD(&te->lock);
    if (addr == A_TE_CONTROL) {
        val = te->control;
        if (!te->stopping && !te_queued(te)) {
            val |= R_TR_CONTROL_EMPTY_MASK;
        }
    } else if (addr == A_TE_IMPL) {
        val = te_impl(te);
    } else if (!(te->control & R_TR_CONTROL_ACTIVE_MASK)) {
        val = 0;
    } else if (addr == A_TE_INST_FEATURES) {
        val = te->inst_features;
    } else if (addr == A_TE_DATA_CONTROL) {
        val = te->data_control;
    } else if (etrace_filter_is_reg(addr)) {
        val = etrace_filter_read(&te->filter, addr);
    } else if (addr == A_TE_DISCOVERY0 || addr == A_TE_DISCOVERY1) {
        val = te_discovery(te, addr);
    }
    trace_riscv_trace_encoder_read(te->cpu->cpu_index, addr, val);
    return val;
}

static void te_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    RISCVTraceEncoderState *te = opaque;

    QEMU_LOCK_GUARD(&te->lock);
    trace_riscv_trace_encoder_write(te->cpu->cpu_index, addr, val);
    if (addr == A_TE_CONTROL) {
        te_write_control(te, val);
    } else if (!(te->control & R_TR_CONTROL_ACTIVE_MASK)) {
        qemu_log_mask(LOG_GUEST_ERROR, "riscv-trace-encoder: hart %d: write "
                      "to 0x%" HWADDR_PRIx " while not Active, ignored\n",
                      te->cpu->cpu_index, addr);
    } else if (addr == A_TE_INST_FEATURES) {
        te->inst_features = te_legal_features(te, val);
    } else if (addr == A_TE_DATA_CONTROL) {
        te->data_control = te_legal_data_control(te, te->data_control, val);
    } else if (etrace_filter_is_reg(addr)) {
        te_write_filter(te, addr, val);
    } else {
        qemu_log_mask(LOG_GUEST_ERROR, "riscv-trace-encoder: hart %d: write "
                      "to read-only or unimplemented register 0x%"
                      HWADDR_PRIx ", ignored\n", te->cpu->cpu_index, addr);
    }
}

static const MemoryRegionOps te_ops = {
    .read = te_read,
    .write = te_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/* ------------------------------------------------------------- device */

static void te_reset(DeviceState *dev)
{
    RISCVTraceEncoderState *te = RISCV_TRACE_ENCODER(dev);

    QEMU_LOCK_GUARD(&te->lock);
    trace_riscv_trace_encoder_reset(te->cpu->cpu_index, te->trace_from_reset);
    te_write_control(te, 0);
    if (te->trace_from_reset) {
        uint32_t control;

        te_write_control(te, R_TR_CONTROL_ACTIVE_MASK);
        /* legalised as a guest's write, SrcID and SrcBits aside */
        te->inst_features = te_legal_features(te,
            (te->reset_features & ~(R_TE_INST_FEATURES_SRC_ID_MASK |
                                    R_TE_INST_FEATURES_SRC_BITS_MASK)) |
            te->reset_src_id << R_TE_INST_FEATURES_SRC_ID_SHIFT |
            te->reset_src_bits << R_TE_INST_FEATURES_SRC_BITS_SHIFT);
        control = FIELD_DP32(te->control, TE_CONTROL, SYNC_MODE,
                             te->reset_sync_mode);
        control = FIELD_DP32(control, TE_CONTROL, SYNC_MAX,
                             te->reset_sync_max);
        if (te->reset_inst_mode) {
            control = FIELD_DP32(control, TE_CONTROL, INST_MODE,
                                 te->reset_inst_mode);
        }
        te_write_control(te, control | R_TR_CONTROL_ENABLE_MASK |
                             R_TE_CONTROL_INST_TRACING_MASK);
    }
}

static void te_realize(DeviceState *dev, Error **errp)
{
    RISCVTraceEncoderState *te = RISCV_TRACE_ENCODER(dev);
    unsigned xlen;

    if (!te->cpu || !object_dynamic_cast(OBJECT(te->cpu), TYPE_RISCV_CPU)) {
        error_setg(errp, "riscv-trace-encoder: 'cpu' must name a RISC-V hart");
        return;
    }
    for (int i = 0; i < ARRAY_SIZE(te->sink); i++) {
        if (!te->sink_link[i]) {
            continue;
        }
        if (!object_dynamic_cast(te->sink_link[i], TYPE_RISCV_TRACE_SINK)) {
            error_setg(errp, "riscv-trace-encoder: sink %d is not a trace "
                       "sink", i);
            return;
        }
        te->sink[i] = RISCV_TRACE_SINK(te->sink_link[i]);
        te->sink_class[i] = RISCV_TRACE_SINK_GET_CLASS(te->sink[i]);
        if (te->sink_class[i]->needs_bql &&
            te->sink_class[i]->needs_bql(te->sink[i])) {
            te->sinks_need_bql = true;
        }
    }
    if (!is_power_of_2(te->queue_len) || te->queue_len < 4 * TE_BATCH ||
        te->queue_len > 1u << 24) {
        error_setg(errp, "riscv-trace-encoder: x-queue-len must be a power "
                   "of two from %u to %u", 4 * TE_BATCH, 1u << 24);
        return;
    }
    if (!te->format_name || !strcmp(te->format_name, "etrace")) {
        te->default_format = TE_FORMAT_ETRACE;
    } else if (!strcmp(te->format_name, "ntrace")) {
        te->default_format = TE_FORMAT_NTRACE;
    } else {
        error_setg(errp, "riscv-trace-encoder: format must be etrace or "
                   "ntrace");
        return;
    }
    if (te->reset_inst_mode > R_TE_CONTROL_INST_MODE_MASK >>
                              R_TE_CONTROL_INST_MODE_SHIFT ||
        te->reset_sync_mode > ETRACE_SYNC_HALFWORDS ||
        te->reset_sync_max > R_TE_CONTROL_SYNC_MAX_MASK >>
                             R_TE_CONTROL_SYNC_MAX_SHIFT) {
        error_setg(errp, "riscv-trace-encoder: inst-mode must be 0 to 7, "
                   "inst-sync-mode 0 to 3 and inst-sync-max 0 to 15");
        return;
    }
    if (te->arch > ETRACE_ARCH_2_0) {
        error_setg(errp, "riscv-trace-encoder: arch must be 0 (E-trace "
                   "1.1.1 draft) or 1 (2.0)");
        return;
    }
    xlen = riscv_cpu_mxl(&RISCV_CPU(te->cpu)->env) == MXL_RV32 ? 32 : 64;
    etrace_params_default(&te->params, xlen);
    te->params.arch = te->arch;
    /* Context: satp.ASID (docs/rvtrace.rst) */
    te->params.context_width_p = xlen == 32 ? 9 : 16;
    te->addr_mask = MAKE_64BIT_MASK(0, te->params.iaddress_width_p);
    etrace_filter_init(&te->filter, &te->params, te_insn_len, te);

    qemu_rec_mutex_init(&te->lock);
    te_filters_changed(te);
    te->vm_change = qemu_add_vm_change_state_handler(te_vm_state_change, te);
    memory_region_init_io(&te->mmio, OBJECT(dev), &te_ops, te,
                          TYPE_RISCV_TRACE_ENCODER, RISCV_TRACE_REG_SIZE);
    sysbus_init_mmio(SYS_BUS_DEVICE(dev), &te->mmio);
}

static void te_unrealize(DeviceState *dev)
{
    RISCVTraceEncoderState *te = RISCV_TRACE_ENCODER(dev);

    if (te->queue) {
        riscv_trace_attach(te->cpu, NULL, NULL);
        bool bql = bql_locked();

        qatomic_set(&te->worker_exit, true);
        qemu_event_set(&te->work);
        /* it may be waiting for the BQL (encode_with_bql) */
        if (bql) {
            bql_unlock();
        }
        qemu_thread_join(&te->worker);
        if (bql) {
            bql_lock();
        }
        qemu_event_destroy(&te->work);
        qemu_event_destroy(&te->made_room);
        qemu_vfree(te->queue);
        te->queue = NULL;
    }
    te_free_codec(te);
    g_free(te->dq);
    g_free(te->dqa);
    te->dq = NULL;
    te->dqa = NULL;
    qemu_del_vm_change_state_handler(te->vm_change);
    qemu_rec_mutex_destroy(&te->lock);
}

/*
 * The codec's state does not migrate: the trace ended when the source's
 * VM stopped (te_suspend_on_hart), a new one starts on the destination
 * with a support packet and a sync at the first block the hart retires
 * there.  The two sides' traces, joined, decode as one.
 */
static int te_post_load(void *opaque, int version_id)
{
    RISCVTraceEncoderState *te = opaque;

    QEMU_LOCK_GUARD(&te->lock);
    etrace_filter_post_load(&te->filter);
    te_filters_changed(te);
    te->tracing = false;
    te->stopping = false;
    te->suspended = false;
    te_update(te);
    return 0;
}

static const VMStateDescription vmstate_te = {
    .name = TYPE_RISCV_TRACE_ENCODER,
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = te_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(control, RISCVTraceEncoderState),
        VMSTATE_UINT32(inst_features, RISCVTraceEncoderState),
        VMSTATE_UINT32(data_control, RISCVTraceEncoderState),
        VMSTATE_UINT32(filter.inst_filters, RISCVTraceEncoderState),
        VMSTATE_UINT32(filter.data_filters, RISCVTraceEncoderState),
        VMSTATE_UINT32_ARRAY(filter.filter_match_data, RISCVTraceEncoderState,
                             ETRACE_NUM_FILTERS),
        VMSTATE_UINT32_ARRAY(filter.filter_control, RISCVTraceEncoderState,
                             ETRACE_NUM_FILTERS),
        VMSTATE_UINT32_ARRAY(filter.filter_match_inst,
                             RISCVTraceEncoderState, ETRACE_NUM_FILTERS),
        VMSTATE_UINT64_ARRAY(filter.filter_match_ecause,
                             RISCVTraceEncoderState, ETRACE_NUM_FILTERS),
        VMSTATE_UINT32_ARRAY(filter.comp_control, RISCVTraceEncoderState,
                             ETRACE_NUM_COMPARATORS),
        VMSTATE_UINT64_ARRAY(filter.comp_pmatch, RISCVTraceEncoderState,
                             ETRACE_NUM_COMPARATORS),
        VMSTATE_UINT64_ARRAY(filter.comp_smatch, RISCVTraceEncoderState,
                             ETRACE_NUM_COMPARATORS),
        VMSTATE_BOOL_ARRAY(filter.comp_latch, RISCVTraceEncoderState,
                           ETRACE_NUM_COMPARATORS),
        VMSTATE_END_OF_LIST()
    }
};

static const Property te_properties[] = {
    DEFINE_PROP_LINK("cpu", RISCVTraceEncoderState, cpu, TYPE_CPU,
                     CPUState *),
    DEFINE_PROP_LINK("sink", RISCVTraceEncoderState, sink_link[0], TYPE_OBJECT,
                     Object *),
    DEFINE_PROP_LINK("pib", RISCVTraceEncoderState, sink_link[1], TYPE_OBJECT,
                     Object *),
    DEFINE_PROP_UINT32("arch", RISCVTraceEncoderState, arch,
                       ETRACE_ARCH_1_1),
    DEFINE_PROP_STRING("format", RISCVTraceEncoderState, format_name),
    DEFINE_PROP_BOOL("trace-from-reset", RISCVTraceEncoderState,
                     trace_from_reset, false),
    DEFINE_PROP_UINT32("src-id", RISCVTraceEncoderState, reset_src_id, 0),
    DEFINE_PROP_UINT32("src-bits", RISCVTraceEncoderState, reset_src_bits,
                       0),
    DEFINE_PROP_UINT32("inst-features", RISCVTraceEncoderState,
                       reset_features, 0),
    DEFINE_PROP_UINT32("inst-mode", RISCVTraceEncoderState,
                       reset_inst_mode, 0),
    DEFINE_PROP_UINT32("inst-sync-mode", RISCVTraceEncoderState,
                       reset_sync_mode, TE_SYNC_MODE_DEFAULT),
    DEFINE_PROP_UINT32("inst-sync-max", RISCVTraceEncoderState,
                       reset_sync_max, TE_SYNC_MAX_DEFAULT),
    DEFINE_PROP_UINT32("x-queue-len", RISCVTraceEncoderState, queue_len,
                       TE_QUEUE_LEN),
    DEFINE_PROP_UINT32("x-encode-delay-us", RISCVTraceEncoderState,
                       encode_delay_us, 0),
};

static void te_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->realize = te_realize;
    dc->unrealize = te_unrealize;
    device_class_set_legacy_reset(dc, te_reset);
    dc->vmsd = &vmstate_te;
    dc->desc = "RISC-V E-trace instruction trace encoder";
    dc->user_creatable = false;
    device_class_set_props(dc, te_properties);
    te_detect_prefetch_for_write();
}

static const TypeInfo te_info = {
    .name = TYPE_RISCV_TRACE_ENCODER,
    .parent = TYPE_SYS_BUS_DEVICE,
    .instance_size = sizeof(RISCVTraceEncoderState),
    .instance_align = __alignof__(RISCVTraceEncoderState),
    .class_init = te_class_init,
};

static const TypeInfo sink_interface_info = {
    .name = TYPE_RISCV_TRACE_SINK,
    .parent = TYPE_INTERFACE,
    .class_size = sizeof(RISCVTraceSinkClass),
};

static void te_register_types(void)
{
    type_register_static(&sink_interface_info);
    type_register_static(&te_info);
}

type_init(te_register_types)

/*
 * Guest-side access to the trace encoder and RAM sink of
 * -machine virt,rvtrace=on (docs/rvtrace.rst): register offsets and the
 * driver sequences of the Trace Control Interface.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RVTRACE_GUEST_H
#define RVTRACE_GUEST_H

#include "rvtest.h"

#define TRACE_BASE      0x3100000UL
#define TR_ENC(hart)    (TRACE_BASE + (hart) * 0x2000UL)
#define TR_SINK(hart)   (TR_ENC(hart) + 0x1000)

#define TR_CONTROL      0x000
#define TR_IMPL         0x004
#define TR_ACTIVE       (1u << 0)
#define TR_ENABLE       (1u << 1)
#define TR_EMPTY        (1u << 3)

#define TE_INST_FEATURES 0x008
#define TE_INST_TRACING (1u << 2)
#define TE_STALL_OVERFLOW (1u << 12)
#define TE_SYNC_MODE(x) ((x) << 16)
#define TE_SYNC_MAX(x)  ((x) << 20)
#define TE_INST_MODE(x) ((x) << 4)
#define TE_INST_MODE_FIELD TE_INST_MODE(7)
#define TE_FORMAT(x)    ((x) << 24)
#define TE_FORMAT_FIELD TE_FORMAT(7)
#define TE_FORMAT_NTRACE 1
#define TE_DATA_CONTROL 0x010
#define TE_DATA_TRACING (1u << 1)
#define TE_DATA_NO_VALUE (1u << 16)
#define TE_DATA_NO_ADDR (1u << 17)
#define TE_DATA_ADDR_DIFF (2u << 18)
#define TE_DATA_FILTERS 0x01C
#define TE_FILTER0_CONTROL 0x400
#define TE_FILTER0_MATCH_DATA 0x418
#define TE_FILTER_ENABLE (1u << 0)
#define TE_FILTER_DTYPE (1u << 24)
#define TE_DISCOVERY0   0xE00
#define TE_DISCOVERY1   0xE04

#define RAM_START_LOW   0x010
#define RAM_START_HIGH  0x014
#define RAM_LIMIT_LOW   0x018
#define RAM_LIMIT_HIGH  0x01C
#define RAM_WP_LOW      0x020
#define RAM_WP_HIGH     0x024
#define RAM_MODE_SMEM   (1u << 4)
#define RAM_STOP_ON_WRAP (1u << 8)
#define RAM_WRAP        (1u << 0)

static inline uint32_t tr_read(unsigned long comp, unsigned reg)
{
    return *(volatile uint32_t *)(comp + reg);
}

static inline void tr_write(unsigned long comp, unsigned reg, uint32_t val)
{
    *(volatile uint32_t *)(comp + reg) = val;
}

/* Control for a read-modify-write: StallOrOverflow is write-1-to-clear. */
static inline uint32_t te_control(unsigned long enc)
{
    return tr_read(enc, TR_CONTROL) & ~TE_STALL_OVERFLOW;
}

/* Control = 0, then Active: every other field takes its default. */
static inline void tr_reset(unsigned long comp)
{
    tr_write(comp, TR_CONTROL, 0);
    while (tr_read(comp, TR_CONTROL) & TR_ACTIVE) {
    }
    tr_write(comp, TR_CONTROL, TR_ACTIVE);
    while (!(tr_read(comp, TR_CONTROL) & TR_ACTIVE)) {
    }
}

/* The RAM sink of hart in SMEM mode over buf[0..len), enabled. */
static inline void tr_sink_smem(unsigned hart, void *buf, unsigned long len,
                                uint32_t extra)
{
    unsigned long sink = TR_SINK(hart), start = (unsigned long)buf;
    uint64_t limit = start + len - 4;

    tr_reset(sink);
    tr_write(sink, TR_CONTROL, TR_ACTIVE | RAM_MODE_SMEM | extra);
    tr_write(sink, RAM_START_LOW, start);
    tr_write(sink, RAM_START_HIGH, (uint64_t)start >> 32);
    tr_write(sink, RAM_LIMIT_LOW, limit);
    tr_write(sink, RAM_LIMIT_HIGH, limit >> 32);
    tr_write(sink, RAM_WP_LOW, start);
    tr_write(sink, RAM_WP_HIGH, (uint64_t)start >> 32);
    tr_write(sink, TR_CONTROL, TR_ACTIVE | RAM_MODE_SMEM | TR_ENABLE | extra);
}

/* Bytes in the sink's buffer buf (no wrap). */
static inline unsigned long tr_sink_used(unsigned hart, void *buf)
{
    uint64_t wp = tr_read(TR_SINK(hart), RAM_WP_LOW) |
                  (uint64_t)tr_read(TR_SINK(hart), RAM_WP_HIGH) << 32;

    return (wp & ~3ULL) - (unsigned long)buf;
}

/* Encoder of hart reset, features set, enabled (not yet tracing). */
static inline void tr_encoder_setup(unsigned hart, uint32_t features,
                                    uint32_t control)
{
    unsigned long enc = TR_ENC(hart);
    uint32_t fields = (control & TE_FORMAT_FIELD ? TE_FORMAT_FIELD : 0) |
                      (control & TE_INST_MODE_FIELD ? TE_INST_MODE_FIELD : 0);

    tr_reset(enc);
    /* Format first: which trTeInstFeatures fields exist depends on it */
    tr_write(enc, TR_CONTROL, (te_control(enc) & ~fields) | control);
    tr_write(enc, TE_INST_FEATURES, features);
    tr_write(enc, TR_CONTROL, te_control(enc) | TR_ENABLE);
}

/*
 * trTeDataControl for data trace mode M (the guests' data=M): 1 with
 * differential addresses, 2 full ones, 3 addresses only, 4 data only.
 */
static inline uint32_t tr_data_control(unsigned long mode)
{
    static const uint32_t control[] = {
        [1] = TE_DATA_ADDR_DIFF,
        [2] = 0,
        [3] = TE_DATA_ADDR_DIFF | TE_DATA_NO_VALUE,
        [4] = TE_DATA_ADDR_DIFF | TE_DATA_NO_ADDR,
    };

    return TE_DATA_TRACING | control[mode >= 1 && mode <= 4 ? mode : 1];
}

/*
 * Data filter 0 passes the accesses whose dtype has its bit set in
 * dtypes (bit 1: stores), selected by trTeDataFilters.
 */
static inline void tr_data_filter_dtypes(unsigned long enc, uint32_t dtypes)
{
    tr_write(enc, TE_FILTER0_CONTROL, TE_FILTER_ENABLE | TE_FILTER_DTYPE);
    tr_write(enc, TE_FILTER0_MATCH_DATA, dtypes);
    tr_write(enc, TE_DATA_FILTERS, 1);
}

/* InstTracing and Enable off, then wait until all trace is out. */
static inline void tr_encoder_stop(unsigned hart)
{
    unsigned long enc = TR_ENC(hart);

    tr_write(enc, TR_CONTROL,
             te_control(enc) & ~(TE_INST_TRACING | TR_ENABLE));
    while (!(tr_read(enc, TR_CONTROL) & TR_EMPTY)) {
    }
}

#ifdef RISCV_ETRACE_H
/* The codec's parameters from the encoder's discovery registers. */
static inline void tr_discover(unsigned hart, ETraceParams *p)
{
    etrace_params_from_discovery(p, tr_read(TR_ENC(hart), TE_DISCOVERY0),
                                 tr_read(TR_ENC(hart), TE_DISCOVERY1));
}
#endif

#ifdef RISCV_ETRACE_DATA_H
/*
 * The next data access of the packets in buf[*pos..used), as a decoder
 * reads them: instruction packets are passed over (any format 3 resets
 * the data compression state, a support packet sets the options o).
 * Returns false at the end, at padding, or at bytes that do not unpack.
 */
static inline bool tr_next_data_access(const ETraceParams *p,
                                       ETraceOptions *o, ETraceDataState *st,
                                       const uint8_t *buf, unsigned long used,
                                       unsigned long *pos, ETraceDataAccess *a)
{
    while (*pos < used && buf[*pos]) {
        ETracePacket pkt;
        const char *err = "";
        int len = etrace_packet_unpack(p, o, buf + *pos, used - *pos, &pkt,
                                       &err);

        if (len <= 0) {
            return false;
        }
        if (pkt.data) {
            len = etrace_data_unpack(p, o, st, buf + *pos, len, a, &err);
            *pos = len > 0 ? *pos + (unsigned long)len : used;
            return len > 0;
        }
        if (pkt.format == 3) {
            etrace_data_sync(st);
            if (pkt.subformat == 3) {
                etrace_options_unpack(p, pkt.options, o);
            }
        }
        *pos += len;
    }
    return false;
}
#endif

#endif

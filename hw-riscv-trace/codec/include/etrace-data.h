/*
 * E-trace data trace: the packets of chapter 7 and their compression
 *
 * The hart reports the data accesses of retired instructions (the unified
 * data trace interface of section 4.4: dtype, daddr, dsize, data, and the
 * operand of atomics and CSR accesses) as ETRACE_PB_DATA records in the
 * stream of packed blocks (etrace-record.h).  The encoder sends one data
 * packet per access, in retirement order, in the same encapsulation as
 * the instruction packets with flow 3 in the header (the reference
 * flow's te_data message type).
 *
 * The choices the draft leaves open:
 * - unified load/store (formats 0-3), atomic (6) and CSR (5) packets; no
 *   split formats (4, 7): QEMU retires a load with its data.  format is
 *   3 bits, size 2 (data_width_p = XLEN <= 64).
 * - An "aligned" format's address field (full or differential) is in
 *   units of the access size: the byte address (or difference) shifted
 *   right by size, sent only when the low bits are 0.
 * - Compression state per access size (2^size bytes: loads, stores and
 *   atomics of one size share it; CSR data uses XLEN's): the last byte
 *   address and the last data value.  After an instruction trace sync
 *   (etrace_data_sync()) the first packet of each size is full (diff 0);
 *   then the address is the difference to the last one of its size and
 *   the data is sent as whichever of XOR (diff 1), full (2) or difference
 *   (3) needs the fewest bytes.  With data_full_address every packet is
 *   full (diff 0).
 * - data_len and op_len give the bytes actually sent: a value is the
 *   fewest bytes that hold it, zero-extended to the access size.  The
 *   atomic packet's data_len is 2 + size bits wide, like op_len (the
 *   draft's table says "size", one bit, which cannot give 4 or 8 bytes).
 * - Atomic subtypes are the draft's (000 swap ... 110 min); AMOMAXU and
 *   AMOMINU are sent as max and min (the instruction tells them apart).
 * - CSR packets always carry the 12-bit address (also with no_address),
 *   uncompressed; the operand is left out for a read-only CSR
 *   (address[11:10] = 3); with no_value the diff field is 1 bit, always
 *   0 (full address; table 7.13 allows 0 or 1 bits: 1 is what the trace
 *   task group's reference data decoder reads).
 *   The data is the value the CSR instruction read (0 for csrw, which
 *   does not read), the operand the rs1 value or immediate it wrote
 *   with.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_ETRACE_DATA_H
#define RISCV_ETRACE_DATA_H

#include "etrace.h"
#include "etrace-record.h"

/* The encapsulation's flow field (header bits 6:5) of data packets. */
#define ETRACE_FLOW_DATA        3
#define ETRACE_FLOW_SHIFT       5

static inline unsigned etrace_frame_flow(uint8_t header)
{
    return (header >> ETRACE_FLOW_SHIFT) & 3;
}

/* One access as the data trace interface reports it. */
typedef struct ETraceDataAccess {
    uint64_t daddr;         /* CSR: its number */
    uint64_t data;
    uint64_t operand;       /* atomics and CSRs */
    uint8_t dtype;          /* ETRACE_DTYPE_* */
    uint8_t dsize;          /* 2^dsize bytes */
} ETraceDataAccess;

/* Packet formats (table 7.1 onwards) */
enum {
    ETRACE_DFMT_LOAD = 0,           /* +1: unaligned */
    ETRACE_DFMT_STORE = 2,          /* +1: unaligned */
    ETRACE_DFMT_CSR = 5,
    ETRACE_DFMT_ATOMIC = 6,
};

/* diff with address and data (table 7.1) */
enum {
    ETRACE_DDIFF_FULL = 0,
    ETRACE_DDIFF_XOR = 1,
    ETRACE_DDIFF_DATA_FULL = 2,     /* differential address, full data */
    ETRACE_DDIFF_DATA_DIFF = 3,
};

/*
 * Pack (returns the frame's length, 0 for a reserved format or a field
 * value its width can not hold) and unpack (as etrace_packet_unpack()).
 */
size_t etrace_data_packet_pack(const ETraceParams *p, const ETraceOptions *o,
                               const ETraceDataPacket *pkt,
                               uint8_t buf[ETRACE_MAX_PACKET]);
int etrace_data_packet_unpack(const ETraceParams *p, const ETraceOptions *o,
                              const uint8_t *buf, size_t len,
                              ETraceDataPacket *pkt, const char **err);

/* The last access of each size since the last sync (encoder and decoder) */
typedef struct ETraceDataState {
    uint64_t addr[4];
    uint64_t data[4];
    uint8_t addr_known;     /* bit s: addr[s] was sent since the sync */
    uint8_t data_known;     /* bit s: data[s] likewise */
} ETraceDataState;

/* After a sync packet: the next packet of each size is full. */
static inline void etrace_data_sync(ETraceDataState *st)
{
    st->addr_known = 0;
    st->data_known = 0;
}

/*
 * Pack access a into an encapsulated data packet in buf (header, index,
 * payload), in the layout the data options of o select, and update st.
 * Returns its length, or 0 for an access no packet can carry (dtype
 * reserved, or an atomic that is not 4 or 8 bytes).
 */
size_t etrace_data_pack(const ETraceParams *p, const ETraceOptions *o,
                        ETraceDataState *st, const ETraceDataAccess *a,
                        uint8_t buf[ETRACE_MAX_PACKET]);
/* The same with the fast packer of pk's parameters (the encoder's). */
size_t etrace_data_pack_fast(const ETracePacker *pk, const ETraceOptions *o,
                             ETraceDataState *st, const ETraceDataAccess *a,
                             uint8_t buf[ETRACE_MAX_PACKET]);
/*
 * etrace_data_pack_fast() for the accesses a[0..n) in order, into window
 * w while it has room for a packet (ETRACE_MAX_PACKET).  Returns how
 * many it took: fewer than n when the window filled.
 */
size_t etrace_data_pack_window(const ETracePacker *pk,
                               const ETraceOptions *o, ETraceDataState *st,
                               const ETraceDataAccess *a, size_t n,
                               ETraceWindow *w);

/*
 * Unpack the data packet that buf[0..len) starts with (its header's flow
 * is ETRACE_FLOW_DATA) and update st.  Returns the bytes used, 0 for a
 * packet not yet whole, -1 for an invalid one (*err says why; a
 * differential packet of a size with no full one since the sync is
 * invalid).
 */
int etrace_data_unpack(const ETraceParams *p, const ETraceOptions *o,
                       ETraceDataState *st, const uint8_t *buf, size_t len,
                       ETraceDataAccess *a, const char **err);
/* The same from an unpacked packet: 0, or -1 with *err. */
int etrace_data_expand(const ETraceParams *p, const ETraceOptions *o,
                       ETraceDataState *st, const ETraceDataPacket *pkt,
                       ETraceDataAccess *a, const char **err);

/* The data access of a packed record pair (ETRACE_PB_DATA). */
static inline void etrace_data_from_packed(const ETracePackedBlock *pb,
                                           ETraceDataAccess *a)
{
    a->daddr = pb[0].iaddr;
    a->dtype = (pb[0].info >> ETRACE_PB_DTYPE_SHIFT) & 15;
    a->dsize = (pb[0].info >> ETRACE_PB_DSIZE_SHIFT) & 7;
    a->data = pb[1].data;
    a->operand = pb[1].operand;
}

#endif /* RISCV_ETRACE_DATA_H */

/*
 * E-trace data trace: an access to its packet and back (chapter 7)
 *
 * The layouts are walked in etrace-packet.c; this file chooses what a
 * packet says (format, full or compressed address and data) and keeps
 * the per-size state both ends must share (etrace-data.h).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "etrace-data.h"

static uint64_t mask_of(unsigned bits)
{
    return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

/* The fewest bytes that hold v, minus one (data_len, op_len). */
static unsigned len_of(uint64_t v)
{
    return (63 - __builtin_clzll(v | 1)) / 8;     /* (0 and 1: 0) */
}

/* v of width bits, sign-extended, shifted right arithmetically by sh. */
static uint64_t sar_width(uint64_t v, unsigned width, unsigned sh)
{
    int64_t x = (int64_t)(v << (64 - width)) >> (64 - width);

    return (uint64_t)(x >> sh) & mask_of(width);
}

/* The state slot of an access: its size; CSRs use XLEN's. */
static unsigned slot_of(const ETraceParams *p, const ETraceDataAccess *a)
{
    if (a->dtype >= ETRACE_DTYPE_CSR_RW && a->dtype <= ETRACE_DTYPE_CSR_RC) {
        return p->iaddress_width_p > 32 ? 3 : 2;
    }
    return a->dsize;
}

static bool dtype_is_atomic(unsigned dtype)
{
    return dtype >= ETRACE_DTYPE_AMO_SWAP && dtype <= ETRACE_DTYPE_AMO_MIN;
}

/* format and subtype of an access; false if no packet carries it. */
static bool classify(const ETraceParams *p, const ETraceDataAccess *a,
                     ETraceDataPacket *pkt)
{
    if (8u << a->dsize > p->iaddress_width_p) {
        return false;
    }
    switch (a->dtype) {
    case ETRACE_DTYPE_LOAD:
        pkt->format = ETRACE_DFMT_LOAD;
        pkt->size = a->dsize;
        return true;
    case ETRACE_DTYPE_STORE:
        pkt->format = ETRACE_DFMT_STORE;
        pkt->size = a->dsize;
        return true;
    case ETRACE_DTYPE_CSR_RW:
    case ETRACE_DTYPE_CSR_RS:
    case ETRACE_DTYPE_CSR_RC:
        pkt->format = ETRACE_DFMT_CSR;
        pkt->subtype = a->dtype - ETRACE_DTYPE_CSR_RW;
        pkt->csr = a->daddr & 0xfff;
        return true;
    default:
        if (!dtype_is_atomic(a->dtype) || a->dsize < 2) {
            return false;
        }
        pkt->format = ETRACE_DFMT_ATOMIC;
        pkt->subtype = a->dtype - ETRACE_DTYPE_AMO_SWAP;
        pkt->size = a->dsize - 2;
        return true;
    }
}

/*
 * The data field: full after a sync, else whichever of XOR, full and
 * difference needs the fewest bytes (the diff code of each, table 7.1;
 * packets without an address, data-only and CSR ones, have no "full
 * data" code but 0: 2 is reserved there).
 */
static inline __attribute__((always_inline))
unsigned choose_data(bool has_addr, bool full, uint64_t d, uint64_t prev,
                     uint64_t mask, uint64_t *sent, unsigned *len)
{
    uint64_t x = d ^ prev, df = (d - prev) & mask;
    unsigned diff = ETRACE_DDIFF_DATA_FULL, len_x, len_df;

    *sent = d;
    *len = len_of(d);
    if (full) {
        return ETRACE_DDIFF_FULL;
    }
    len_x = len_of(x);
    len_df = len_of(df);
    if (len_x < *len) {
        diff = ETRACE_DDIFF_XOR;
        *sent = x;
        *len = len_x;
    }
    if (len_df < *len) {
        diff = ETRACE_DDIFF_DATA_DIFF;
        *sent = df;
        *len = len_df;
    }
    return !has_addr && diff == ETRACE_DDIFF_DATA_FULL ? ETRACE_DDIFF_FULL
                                                       : diff;
}

/* (out of line: the fast path of etrace_data_pack_fast() needs no frame) */
static __attribute__((noinline))
size_t data_pack(const ETraceParams *p, const ETraceOptions *o,
                 ETraceDataState *st, const ETraceDataAccess *a,
                 uint8_t buf[ETRACE_MAX_PACKET])
{
    ETraceDataPacket pkt = { 0 };
    unsigned s = slot_of(p, a), aw = p->iaddress_width_p;
    uint64_t dmask = mask_of(8u << s), d = a->data & dmask;
    uint64_t daddr = a->daddr & mask_of(aw), v;
    bool csr, has_addr, full;
    size_t len;

    if (!classify(p, a, &pkt)) {
        return 0;
    }
    csr = pkt.format == ETRACE_DFMT_CSR;
    has_addr = !csr && !o->data_no_address;
    full = o->data_full_address ||
           (has_addr && !(st->addr_known & (1u << s))) ||
           (!o->data_no_value && !(st->data_known & (1u << s)));
    if (has_addr) {
        v = full ? daddr : (daddr - st->addr[s]) & mask_of(aw);
        if (pkt.format == ETRACE_DFMT_ATOMIC && (v & mask_of(s)) && !full) {
            full = true;        /* atomics are sent aligned only */
            v = daddr;
        }
        if (pkt.format == ETRACE_DFMT_ATOMIC && (v & mask_of(s))) {
            return 0;   /* misaligned (Zama16b): no atomic packet says it */
        }
        if (!(v & mask_of(s))) {
            /* a difference keeps its sign, for the compression */
            pkt.address = full ? v >> s : sar_width(v, aw, s);
        } else {
            pkt.address = v;
            pkt.format |= 1;            /* unaligned */
        }
    }
    if (o->data_no_value) {
        pkt.diff = !csr && !full;       /* a CSR's address is always full */
    } else {
        unsigned data_len;

        pkt.diff = choose_data(has_addr, full, d, st->data[s], dmask,
                               &pkt.data, &data_len);
        pkt.data_len = data_len;
        pkt.operand = a->operand & dmask;
        pkt.op_len = len_of(pkt.operand);
    }
    len = etrace_data_packet_pack(p, o, &pkt, buf);
    if (len) {
        if (has_addr) {
            st->addr[s] = daddr;
            st->addr_known |= 1u << s;
        }
        if (!o->data_no_value) {
            st->data[s] = d;
            st->data_known |= 1u << s;
        }
    }
    return len;
}

size_t etrace_data_pack(const ETraceParams *p, const ETraceOptions *o,
                        ETraceDataState *st, const ETraceDataAccess *a,
                        uint8_t buf[ETRACE_MAX_PACKET])
{
    return data_pack(p, o, st, a, buf);
}

#ifdef __SIZEOF_INT128__
/*
 * The commonest packet: a load or store with address and data, of a size
 * sent since the sync, so address and data are compressed.  The bytes of
 * data_pack() with neither its general packet nor its field walker: the
 * payload is built in 128 bits, the address last and only its significant
 * bits (the sign-based compression drops the rest).  Returns 0 where it
 * does not apply: data_pack() then takes the access.
 */
static inline __attribute__((always_inline))
size_t pack_load_store(const ETracePacker *pk, ETraceDataState *st,
                              const ETraceDataAccess *a,
                              uint8_t buf[ETRACE_MAX_PACKET])
{
    unsigned s = a->dsize, aw = pk->p.iaddress_width_p;
    uint64_t dmask = UINT64_MAX >> (64 - (8u << s)), d = a->data & dmask;
    uint64_t daddr = a->daddr & pk->addr_mask;
    uint64_t v = (daddr - st->addr[s]) & pk->addr_mask;
    int64_t field = (int64_t)(v << (64 - aw)) >> (64 - aw);
    unsigned format = a->dtype == ETRACE_DTYPE_LOAD ? ETRACE_DFMT_LOAD
                                                    : ETRACE_DFMT_STORE;
    uint64_t sent, hi, lo;
    unsigned len, n, top, bits;
    unsigned diff = choose_data(true, false, d, st->data[s], dmask, &sent,
                                &len);
    unsigned h = pk->header;

    if (v & ((1u << s) - 1)) {
        format |= 1;                /* unaligned: the byte difference */
    } else {
        field >>= s;
    }
    n = 7 + s + 8 * (len + 1);      /* the bits before the address */
    top = n + 64 - __builtin_clrsbll(field) - 1;    /* the sign bit */
    if (top < 63) {
        /* most packets fit a word: data up to 4 bytes, a near address */
        uint64_t sign = field < 0 ? UINT64_MAX : 0;
        uint64_t below = (UINT64_C(1) << top) - 1;

        lo = format | s << 3 | diff << 5 | (uint64_t)len << 7 |
             sent << (7 + s) | (uint64_t)field << n;
        lo = (lo & below) | (sign & ~below);
        hi = sign;
        bits = lo ^ sign ? 63 - __builtin_clzll(lo ^ sign) + 2 : 1;
    } else if (top < 128) {
        unsigned __int128 sign = field < 0 ? ~(unsigned __int128)0 : 0;
        unsigned __int128 below = ((unsigned __int128)1 << top) - 1;
        unsigned __int128 p = format | s << 3 | diff << 5 |
                              (unsigned __int128)len << 7 |
                              (unsigned __int128)sent << (7 + s) |
                              (unsigned __int128)(uint64_t)field << n;

        /* above the sign bit, copies of it; below, the highest that differs */
        p = (p & below) | (sign & ~below);
        hi = p >> 64;
        lo = p;
        bits = hi ^ (uint64_t)sign ?
               64 + 63 - __builtin_clzll(hi ^ (uint64_t)sign) + 2 :
               lo ^ (uint64_t)sign ?
               63 - __builtin_clzll(lo ^ (uint64_t)sign) + 2 : 1;
    } else {
        return 0;
    }
    /*
     * Whole words: the bytes past the packet are not part of it, and the
     * payload's overwrite those past the header (length and flow, then
     * the index).
     */
    etrace_store_le64(buf, (bits + 7) / 8 |
                           ETRACE_FLOW_DATA << ETRACE_FLOW_SHIFT |
                           (uint64_t)pk->p.src_id << 8);
    etrace_store_le64(buf + h, lo);
    etrace_store_le64(buf + h + 8, hi);
    st->addr[s] = daddr;
    st->data[s] = d;
    return h + (bits + 7) / 8;
}
#endif

/* Whether o lets pack_fast() take the word-at-a-time packer */
static bool options_fast(const ETracePacker *pk, const ETraceOptions *o)
{
    return pk->fast && !o->data_no_value && !o->data_no_address &&
           !o->data_full_address;
}

/* With fast, options_fast() */
static inline __attribute__((always_inline))
size_t pack_fast(const ETracePacker *pk, const ETraceOptions *o, bool fast,
                 ETraceDataState *st, const ETraceDataAccess *a,
                 uint8_t buf[ETRACE_MAX_PACKET])
{
#ifdef __SIZEOF_INT128__
    unsigned s = a->dsize;

    if (fast && (a->dtype == ETRACE_DTYPE_LOAD ||
                 a->dtype == ETRACE_DTYPE_STORE) &&
        s < 4 && 8u << s <= pk->p.iaddress_width_p &&
        (st->addr_known & st->data_known) >> s & 1) {
        size_t len = pack_load_store(pk, st, a, buf);

        if (len) {
            return len;
        }
    }
#else
    (void)fast;
#endif
    return data_pack(&pk->p, o, st, a, buf);
}

size_t etrace_data_pack_fast(const ETracePacker *pk, const ETraceOptions *o,
                             ETraceDataState *st, const ETraceDataAccess *a,
                             uint8_t buf[ETRACE_MAX_PACKET])
{
    return pack_fast(pk, o, options_fast(pk, o), st, a, buf);
}

size_t etrace_data_pack_window(const ETracePacker *pk,
                               const ETraceOptions *o, ETraceDataState *st,
                               const ETraceDataAccess *a, size_t n,
                               ETraceWindow *w)
{
    bool fast = options_fast(pk, o);
    uint8_t *pos = w->pos, *end = w->end;
    size_t i;

    /* (pos and end in registers: the packets' stores may alias *w) */
    for (i = 0; i < n && end - pos >= ETRACE_MAX_PACKET; i++) {
        pos += pack_fast(pk, o, fast, st, &a[i], pos);
    }
    w->pos = pos;
    return i;
}

/* The access a packet describes, up to the compressed fields. */
static void access_of(const ETraceParams *p, const ETraceDataPacket *pkt,
                      ETraceDataAccess *a)
{
    memset(a, 0, sizeof(*a));
    switch (pkt->format) {
    case ETRACE_DFMT_LOAD:
    case ETRACE_DFMT_LOAD + 1:
        a->dtype = ETRACE_DTYPE_LOAD;
        a->dsize = pkt->size;
        break;
    case ETRACE_DFMT_STORE:
    case ETRACE_DFMT_STORE + 1:
        a->dtype = ETRACE_DTYPE_STORE;
        a->dsize = pkt->size;
        break;
    case ETRACE_DFMT_CSR:
        a->dtype = ETRACE_DTYPE_CSR_RW + pkt->subtype;
        a->dsize = p->iaddress_width_p > 32 ? 3 : 2;
        a->daddr = pkt->csr;
        break;
    default:
        a->dtype = ETRACE_DTYPE_AMO_SWAP + pkt->subtype;
        a->dsize = pkt->size + 2;
        break;
    }
}

/* The data a packet's diff code and field give; NULL or an error. */
static const char *data_of(const ETraceDataPacket *pkt,
                           const ETraceDataState *st, unsigned s,
                           uint64_t *d)
{
    uint64_t dmask = mask_of(8u << s);

    if (pkt->diff == ETRACE_DDIFF_FULL ||
        pkt->diff == ETRACE_DDIFF_DATA_FULL) {     /* 2: with an address */
        *d = pkt->data & dmask;
        return NULL;
    }
    if (!(st->data_known & (1u << s))) {
        return "compressed data without a full value since the sync";
    }
    if (pkt->diff == ETRACE_DDIFF_XOR) {
        *d = (st->data[s] ^ pkt->data) & dmask;
    } else {
        *d = (st->data[s] + pkt->data) & dmask;
    }
    return NULL;
}

int etrace_data_expand(const ETraceParams *p, const ETraceOptions *o,
                       ETraceDataState *st, const ETraceDataPacket *pkt,
                       ETraceDataAccess *a, const char **err)
{
    unsigned s, aw = p->iaddress_width_p;
    bool has_addr, full = pkt->diff == ETRACE_DDIFF_FULL;
    uint64_t v;

    access_of(p, pkt, a);
    s = a->dsize;
    has_addr = pkt->format != ETRACE_DFMT_CSR && !o->data_no_address;
    if (!o->data_no_value) {
        *err = data_of(pkt, st, s, &a->data);
        if (*err) {
            return -1;
        }
        a->operand = pkt->operand & mask_of(8u << s);
    }
    if (has_addr) {
        bool aligned = pkt->format != ETRACE_DFMT_LOAD + 1 &&
                       pkt->format != ETRACE_DFMT_STORE + 1;

        v = (aligned ? pkt->address << s : pkt->address) & mask_of(aw);
        if (!full && !(st->addr_known & (1u << s))) {
            *err = "differential address without a full one since the sync";
            return -1;
        }
        a->daddr = full ? v : (st->addr[s] + v) & mask_of(aw);
        st->addr[s] = a->daddr;
        st->addr_known |= 1u << s;
    }
    if (!o->data_no_value) {
        st->data[s] = a->data;
        st->data_known |= 1u << s;
    }
    return 0;
}

int etrace_data_unpack(const ETraceParams *p, const ETraceOptions *o,
                       ETraceDataState *st, const uint8_t *buf, size_t len,
                       ETraceDataAccess *a, const char **err)
{
    ETraceDataPacket pkt;
    int n = etrace_data_packet_unpack(p, o, buf, len, &pkt, err);

    if (n <= 0) {
        return n;
    }
    return etrace_data_expand(p, o, st, &pkt, a, err) ? -1 : n;
}

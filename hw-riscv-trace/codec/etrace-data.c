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
    return (63 ^ __builtin_clzll(v | 1)) / 8;     /* (0 and 1: 0) */
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
 * etrace_store_le64() of the header word (with the payload's length) and
 * of the payload's two words, at buf: whole words, as the bytes past the
 * packet are not part of it, and the payload's overwrite those past the
 * header (length and flow, then the index).  Returns the packet's length.
 */
static inline __attribute__((always_inline))
size_t store_packet(uint64_t header, unsigned h, unsigned bytes,
                    uint64_t lo, uint64_t hi, uint8_t *buf)
{
    etrace_store_le64(buf, bytes | header);
    etrace_store_le64(buf + h, lo);
    etrace_store_le64(buf + h + 8, hi);
    return h + bytes;
}

/*
 * pack_load_store()'s packet of more than 63 bits (eight data bytes or a
 * far address), out of its loop: lo holds the fields below the data,
 * sent goes at bit sent_at, field (the address, sign-extended) at n, and
 * its last sign bit is at top.
 */
static __attribute__((noinline))
size_t pack_wide(uint64_t header, unsigned h, uint64_t lo, uint64_t sent,
                 unsigned sent_at, int64_t field, unsigned n, unsigned top,
                 uint8_t *buf)
{
    uint64_t sign = field < 0 ? UINT64_MAX : 0, hi;
    unsigned __int128 wsign = field < 0 ? ~(unsigned __int128)0 : 0;
    unsigned __int128 below = ((unsigned __int128)1 << top) - 1;
    unsigned __int128 p = lo | (unsigned __int128)sent << sent_at |
                          (unsigned __int128)(uint64_t)field << n;
    unsigned bytes;

    /* above the sign bit, copies of it (field came zero-extended) */
    p = (p & below) | (wsign & ~below);
    hi = p >> 64;
    lo = p;
    bytes = hi ^ sign ? ((63 ^ __builtin_clzll(hi ^ sign)) + 73) / 8
                      : ((63 ^ __builtin_clzll((lo ^ sign) | 1)) + 9) / 8;
    return store_packet(header, h, bytes, lo, hi, buf);
}

/*
 * The commonest packet: a load or store with address and data, of a size
 * sent since the sync, so address and data are compressed.  The bytes of
 * data_pack() with neither its general packet nor its field walker: the
 * payload is built in a word (in two by pack_wide()), the address last
 * and only its significant bits (the sign-based compression drops the
 * rest).  The packer's parameters and the state come as values and
 * arrays, which pack_run() keeps in locals.  Returns 0 where it does not
 * apply, with nothing changed: data_pack() then takes the access.
 */
static inline __attribute__((always_inline))
size_t pack_load_store(uint64_t addr_mask, unsigned aw, uint64_t header,
                       unsigned h, uint64_t addr[4], uint64_t data[4],
                       const ETraceDataAccess *a, uint8_t *buf)
{
    unsigned s = a->dsize;
    uint64_t dmask = UINT64_MAX >> (64 - (8u << s)), d = a->data & dmask;
    uint64_t daddr = a->daddr & addr_mask;
    uint64_t v = (daddr - addr[s]) & addr_mask;
    int64_t field = (int64_t)(v << (64 - aw)) >> (64 - aw);
    unsigned format = a->dtype == ETRACE_DTYPE_LOAD ? ETRACE_DFMT_LOAD
                                                    : ETRACE_DFMT_STORE;
    uint64_t sent, lo, sign = field < 0 ? UINT64_MAX : 0;
    unsigned len, n, top;
    size_t packet;
    unsigned diff = choose_data(true, false, d, data[s], dmask, &sent, &len);

    if (v & ((1u << s) - 1)) {
        format |= 1;                /* unaligned: the byte difference */
    } else {
        field >>= s;
    }
    n = 7 + s + 8 * (len + 1);      /* the bits before the address */
    top = n + 63 - __builtin_clrsbll(field);    /* its last sign bit */
    lo = format | s << 3 | diff << 5 | len << 7;
    if (top < 63) {
        /*
         * Most packets fit a word (data up to 4 bytes, a near address):
         * above the address's sign bit, lo holds copies of it.  The bytes
         * up to the highest bit that differs from the sign, and one more
         * bit (the sign the decoder extends).
         */
        lo |= sent << (7 + s) | (uint64_t)field << n;
        packet = store_packet(header, h,
                              ((63 ^ __builtin_clzll((lo ^ sign) | 1)) + 9) / 8,
                              lo, sign, buf);
    } else if (top < 128) {
        packet = pack_wide(header, h, lo, sent, 7 + s, field, n, top, buf);
    } else {
        return 0;
    }
    addr[s] = daddr;
    data[s] = d;
    return packet;
}

/* The header word of pk's data packets, but for the payload's length */
static uint64_t data_header(const ETracePacker *pk)
{
    return ETRACE_FLOW_DATA << ETRACE_FLOW_SHIFT | (uint64_t)pk->p.src_id << 8;
}

/*
 * The sizes pack_load_store() takes with st (bit s): 8 << s bits fit an
 * address, and an address and data of the size were sent since the sync.
 */
static unsigned fast_sizes(const ETracePacker *pk, const ETraceDataState *st)
{
    unsigned sizes = 0;

    for (unsigned s = 0; s < 4 && 8u << s <= pk->p.iaddress_width_p; s++) {
        sizes |= 1u << s;
    }
    return sizes & st->addr_known & st->data_known;
}

/* Whether pack_load_store() takes a, with fast_sizes() sizes */
static inline bool takes_fast(unsigned sizes, const ETraceDataAccess *a)
{
    return a->dtype <= ETRACE_DTYPE_STORE && (sizes >> a->dsize & 1);
}

/*
 * pack_load_store() for a[0..n) at *pos, up to the first access it does
 * not take or a window end with less than ETRACE_MAX_PACKET bytes of room.
 * The state and the packer's parameters are locals here: the packets'
 * byte stores may alias anything in memory, which would make the compiler
 * load them again for every access.  Returns how many it took.
 */
static __attribute__((noinline))
size_t pack_run(const ETracePacker *pk, ETraceDataState *st,
                const ETraceDataAccess *a, size_t n, uint8_t **pos,
                const uint8_t *end)
{
    uint64_t addr[4], data[4], addr_mask = pk->addr_mask;
    uint64_t header = data_header(pk);
    unsigned sizes = fast_sizes(pk, st), aw = pk->p.iaddress_width_p;
    unsigned h = pk->header;
    uint8_t *p = *pos;
    size_t i, len;

    memcpy(addr, st->addr, sizeof(addr));
    memcpy(data, st->data, sizeof(data));
    for (i = 0; i < n && end - p >= ETRACE_MAX_PACKET; i++, p += len) {
        if (!takes_fast(sizes, &a[i])) {
            break;
        }
        len = pack_load_store(addr_mask, aw, header, h, addr, data, &a[i], p);
        if (!len) {
            break;
        }
    }
    memcpy(st->addr, addr, sizeof(addr));
    memcpy(st->data, data, sizeof(data));
    *pos = p;
    return i;
}

/* pack_load_store() of one access at buf, if it takes it; else 0. */
static size_t pack_one(const ETracePacker *pk, ETraceDataState *st,
                       const ETraceDataAccess *a, uint8_t *buf)
{
    if (!takes_fast(fast_sizes(pk, st), a)) {
        return 0;
    }
    return pack_load_store(pk->addr_mask, pk->p.iaddress_width_p,
                           data_header(pk), pk->header, st->addr, st->data,
                           a, buf);
}

/* Whether o lets the word-at-a-time packer take loads and stores */
static bool options_fast(const ETracePacker *pk, const ETraceOptions *o)
{
    return pk->fast && !o->data_no_value && !o->data_no_address &&
           !o->data_full_address;
}
#else
/* Without 128-bit integers, every packet is the field walker's. */
static bool options_fast(const ETracePacker *pk, const ETraceOptions *o)
{
    (void)pk;
    (void)o;
    return false;
}

#define pack_one(pk, st, a, buf)            0
#define pack_run(pk, st, a, n, pos, end)    0
#endif

size_t etrace_data_pack_fast(const ETracePacker *pk, const ETraceOptions *o,
                             ETraceDataState *st, const ETraceDataAccess *a,
                             uint8_t buf[ETRACE_MAX_PACKET])
{
    size_t len = options_fast(pk, o) ? pack_one(pk, st, a, buf) : 0;

    return len ? len : data_pack(&pk->p, o, st, a, buf);
}

size_t etrace_data_pack_window(const ETracePacker *pk,
                               const ETraceOptions *o, ETraceDataState *st,
                               const ETraceDataAccess *a, size_t n,
                               ETraceWindow *w)
{
    bool fast = options_fast(pk, o);
    uint8_t *pos = w->pos;
    size_t i = 0;

    while (i < n && w->end - pos >= ETRACE_MAX_PACKET) {
        if (fast) {
            i += pack_run(pk, st, &a[i], n - i, &pos, w->end);
            if (i == n || w->end - pos < ETRACE_MAX_PACKET) {
                break;
            }
        }
        pos += data_pack(&pk->p, o, st, &a[i], pos);
        i++;
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

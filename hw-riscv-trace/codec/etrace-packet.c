/*
 * E-trace packets: te_inst/te_support payloads (chapter 6), sign-based
 * compression and the example encapsulation of figure 6.1
 *
 * One walker describes every payload layout field by field, in
 * transmission order; packing and unpacking both run it, so the two can
 * not disagree.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "target/riscv/insn_class.h"
#include "etrace.h"
#include "etrace-data.h"

/* Room for the longest payload before compression, with slack. */
#define ETRACE_BITS_MAX     (ETRACE_MAX_PAYLOAD * 8)
#define CODEC_WORDS         6

/* ------------------------------------------------------------- params */

void etrace_params_default(ETraceParams *p, unsigned xlen)
{
    memset(p, 0, sizeof(*p));
    p->arch = ETRACE_ARCH_1_1;
    p->iaddress_width_p = xlen;
    p->iaddress_lsb_p = 1;
    p->ecause_width_p = 6;
    p->privilege_width_p = 3;
    p->context_width_p = 0;
    p->call_counter_size_p = 4;
    p->return_stack_size_p = 4;
    p->bpred_size_p = 6;
    p->cache_size_p = 4;
    p->f0s_width_p = 1;
    p->sijump_p = true;
    p->src_bits = 0;
    p->src_id = 0;
}

unsigned etrace_irdepth_width(const ETraceParams *p)
{
    return p->return_stack_size_p + (p->return_stack_size_p > 0) +
           p->call_counter_size_p;
}

static unsigned address_bits(const ETraceParams *p)
{
    return p->iaddress_width_p - p->iaddress_lsb_p;
}

/* The longest te_inst before compression (formats 0, 1 and 3.1). */
static unsigned max_packet_bits(const ETraceParams *p)
{
    unsigned tail = address_bits(p) + 3 + etrace_irdepth_width(p);
    unsigned f3 = 5 + p->privilege_width_p + p->context_width_p +
                  p->ecause_width_p + 2 + address_bits(p) +
                  p->iaddress_width_p;
    unsigned f1 = 2 + 5 + 31 + tail;
    unsigned f0 = 2 + p->f0s_width_p + 32 + 2 + tail;
    unsigned f0_jtc = 2 + p->f0s_width_p + p->cache_size_p + 5 + 31 + 1 +
                      etrace_irdepth_width(p);
    unsigned max = f3;

    max = f1 > max ? f1 : max;
    max = f0 > max ? f0 : max;
    return f0_jtc > max ? f0_jtc : max;
}

bool etrace_params_check(const ETraceParams *p, const char **err)
{
    const char *msg = NULL;

    if (p->arch != ETRACE_ARCH_1_1 && p->arch != ETRACE_ARCH_2_0) {
        msg = "unknown arch";
    } else if (p->iaddress_width_p < 8 || p->iaddress_width_p > 64) {
        msg = "iaddress_width_p out of range 8..64";
    } else if (p->iaddress_lsb_p > 2) {
        msg = "iaddress_lsb_p out of range 0..2";
    } else if (p->ecause_width_p < 1 || p->ecause_width_p > 32) {
        msg = "ecause_width_p out of range 1..32";
    } else if (p->privilege_width_p > 8) {
        msg = "privilege_width_p out of range 0..8";
    } else if (p->context_width_p > 64) {
        msg = "context_width_p out of range 0..64";
    } else if (p->call_counter_size_p > 15 || p->return_stack_size_p > 15) {
        msg = "call_counter_size_p or return_stack_size_p above 15";
    } else if (p->bpred_size_p > 16 || p->cache_size_p > 16) {
        msg = "bpred_size_p or cache_size_p above 16";
    } else if (p->f0s_width_p > 1) {
        msg = "f0s_width_p out of range 0..1";
    } else if (p->src_bits > 16 || p->src_id >> p->src_bits) {
        msg = "src_bits above 16 or src_id does not fit";
    } else if (max_packet_bits(p) > ETRACE_BITS_MAX) {
        msg = "a packet would exceed 31 bytes";
    }
    if (msg && err) {
        *err = msg;
    }
    return !msg;
}

/* ------------------------------------------------------------ options */

#define OPT_FULL_ADDRESS        (1u << 0)
#define OPT_IMPLICIT_EXCEPTION  (1u << 1)
#define OPT_SIJUMP              (1u << 2)
#define OPT_IR_SHIFT            3
#define OPT_IR_MASK             (3u << OPT_IR_SHIFT)
#define OPT_BRANCH_PREDICTION   (1u << 5)
#define OPT_JUMP_TARGET_CACHE   (1u << 6)
#define OPT_DATA                (1u << 7)
#define OPT_DATA_NO_ADDRESS     (1u << 8)
#define OPT_DATA_NO_VALUE       (1u << 9)
#define OPT_DATA_FULL_ADDRESS   (1u << 10)
#define OPT_DATA_FILTERED       (1u << 11)

static bool ir_mode_supported(const ETraceParams *p, ETraceIRMode mode)
{
    switch (mode) {
    case ETRACE_IR_CALL_COUNTER:
        return p->call_counter_size_p > 0;
    case ETRACE_IR_RETURN_STACK:
        return p->return_stack_size_p > 0;
    default:
        return false;
    }
}

uint32_t etrace_options_pack(const ETraceParams *p, const ETraceOptions *o)
{
    uint32_t bits = 0;

    if (o->full_address) {
        bits |= OPT_FULL_ADDRESS;
    }
    if (o->implicit_exception) {
        bits |= OPT_IMPLICIT_EXCEPTION;
    }
    if (o->sijump && p->sijump_p) {
        bits |= OPT_SIJUMP;
    }
    if (ir_mode_supported(p, o->implicit_return)) {
        bits |= (uint32_t)o->implicit_return << OPT_IR_SHIFT;
    }
    if (o->branch_prediction && p->bpred_size_p) {
        bits |= OPT_BRANCH_PREDICTION;
    }
    if (o->jump_target_cache && p->cache_size_p) {
        bits |= OPT_JUMP_TARGET_CACHE;
    }
    if (o->data) {
        bits |= OPT_DATA |
                (o->data_no_address ? OPT_DATA_NO_ADDRESS : 0) |
                (o->data_no_value ? OPT_DATA_NO_VALUE : 0) |
                (o->data_full_address ? OPT_DATA_FULL_ADDRESS : 0) |
                (o->data_filtered ? OPT_DATA_FILTERED : 0);
    }
    return bits;
}

void etrace_options_unpack(const ETraceParams *p, uint32_t bits,
                           ETraceOptions *o)
{
    ETraceIRMode ir = (bits & OPT_IR_MASK) >> OPT_IR_SHIFT;

    memset(o, 0, sizeof(*o));
    o->full_address = bits & OPT_FULL_ADDRESS;
    o->implicit_exception = bits & OPT_IMPLICIT_EXCEPTION;
    o->sijump = (bits & OPT_SIJUMP) && p->sijump_p;
    o->implicit_return = ir_mode_supported(p, ir) ? ir : ETRACE_IR_OFF;
    o->branch_prediction = (bits & OPT_BRANCH_PREDICTION) && p->bpred_size_p;
    o->jump_target_cache = (bits & OPT_JUMP_TARGET_CACHE) && p->cache_size_p;
    o->data = bits & OPT_DATA;
    o->data_no_address = o->data && (bits & OPT_DATA_NO_ADDRESS);
    o->data_no_value = o->data && (bits & OPT_DATA_NO_VALUE);
    o->data_full_address = o->data && (bits & OPT_DATA_FULL_ADDRESS);
    o->data_filtered = o->data && (bits & OPT_DATA_FILTERED);
}

static bool feature(uint32_t f, unsigned bit)
{
    return (f >> bit) & 1;
}

void etrace_options_from_features(uint32_t f, ETraceOptions *o)
{
    unsigned ir_mode = (f >> ETRACE_FEAT_IR_MODE) & 3;

    o->full_address = feature(f, ETRACE_FEAT_NO_ADDR_DIFF);
    o->implicit_exception = feature(f, ETRACE_FEAT_NO_TRAP_ADDR);
    o->sijump = feature(f, ETRACE_FEAT_SEQUENTIAL_JUMP);
    o->implicit_return = !feature(f, ETRACE_FEAT_IMPLICIT_RETURN) ?
                         ETRACE_IR_OFF :
                         ir_mode == ETRACE_FEAT_IR_MODE_COUNTER ?
                         ETRACE_IR_CALL_COUNTER : ETRACE_IR_RETURN_STACK;
    o->branch_prediction = feature(f, ETRACE_FEAT_BRANCH_PREDICTION);
    o->jump_target_cache = feature(f, ETRACE_FEAT_JUMP_TARGET_CACHE);
}

void etrace_params_to_discovery(const ETraceParams *p, uint32_t *d0,
                                uint32_t *d1)
{
    *d0 = p->iaddress_width_p | p->iaddress_lsb_p << 8 |
          p->ecause_width_p << 12 | p->privilege_width_p << 20 |
          p->context_width_p << 24;
    *d1 = p->call_counter_size_p | p->return_stack_size_p << 4 |
          p->bpred_size_p << 8 | p->cache_size_p << 12 |
          p->sijump_p << 16 | p->f0s_width_p << 17 | p->arch << 20;
}

void etrace_params_from_discovery(ETraceParams *p, uint32_t d0, uint32_t d1)
{
    etrace_params_default(p, d0 & 0xff);
    p->iaddress_lsb_p = (d0 >> 8) & 0xf;
    p->ecause_width_p = (d0 >> 12) & 0xff;
    p->privilege_width_p = (d0 >> 20) & 0xf;
    p->context_width_p = (d0 >> 24) & 0xff;
    p->call_counter_size_p = d1 & 0xf;
    p->return_stack_size_p = (d1 >> 4) & 0xf;
    p->bpred_size_p = (d1 >> 8) & 0xf;
    p->cache_size_p = (d1 >> 12) & 0xf;
    p->sijump_p = (d1 >> 16) & 1;
    p->f0s_width_p = (d1 >> 17) & 1;
    p->arch = (d1 >> 20) & 0xf;
}

/* Option bits a decoder can not honour with these parameters. */
static bool options_valid(const ETraceParams *p, uint32_t bits)
{
    ETraceOptions o;

    etrace_options_unpack(p, bits, &o);
    return etrace_options_pack(p, &o) == bits;
}

/* ----------------------------------------------------------- bit codec */

/*
 * Bits in transmission order: bit i of the payload is bit i % 64 of word
 * i / 64, and bit i % 8 of byte i / 8 on the wire.  When unpacking, the
 * bits past the received ones are filled with copies of the last one
 * (the sign extension of compressed packets), so fields read past the
 * end need no special case.  Packets are at most ETRACE_BITS_MAX bits
 * and a field at most 64: the last word is never written past.
 */
typedef struct BitCodec {
    uint64_t w[CODEC_WORDS];
    unsigned pos;           /* next bit */
    bool unpack;
} BitCodec;

static uint64_t width_mask(unsigned width)
{
    return width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
}

static uint64_t get_bits(const BitCodec *c, unsigned pos, unsigned width)
{
    unsigned i = pos / 64, sh = pos % 64;
    uint64_t v = c->w[i] >> sh;

    if (sh && sh + width > 64) {
        v |= c->w[i + 1] << (64 - sh);
    }
    return v & width_mask(width);
}

static void put_bits(BitCodec *c, unsigned pos, unsigned width, uint64_t v)
{
    unsigned i = pos / 64, sh = pos % 64;

    c->w[i] |= v << sh;
    if (sh && sh + width > 64) {
        c->w[i + 1] |= v >> (64 - sh);
    }
}

static unsigned get_bit(const BitCodec *c, unsigned pos)
{
    return (c->w[pos / 64] >> (pos % 64)) & 1;
}

/* Set every bit from pos on to sign. */
static void fill_from(BitCodec *c, unsigned pos, unsigned sign)
{
    for (unsigned i = pos / 64; i < CODEC_WORDS; i++) {
        uint64_t keep = i == pos / 64 ? width_mask(pos % 64) : 0;

        c->w[i] = sign ? c->w[i] | ~keep : c->w[i] & keep;
    }
}

/* Pack or unpack one field of width bits (LSB first). */
static void field64(BitCodec *c, uint64_t *v, unsigned width)
{
    if (c->unpack) {
        *v = get_bits(c, c->pos, width);
    } else {
        *v &= width_mask(width);    /* what the layout sees = what is sent */
        put_bits(c, c->pos, width, *v);
    }
    c->pos += width;
}

static void field32(BitCodec *c, uint32_t *v, unsigned width)
{
    uint64_t x = *v;

    field64(c, &x, width);
    *v = x;
}

static void field_uint(BitCodec *c, unsigned *v, unsigned width)
{
    uint64_t x = *v;

    field64(c, &x, width);
    *v = x;
}

static void field_bool(BitCodec *c, bool *v)
{
    uint64_t x = *v;

    field64(c, &x, 1);
    *v = x;
}

/* Full or differential address: byte value, low iaddress_lsb_p bits cut. */
static void field_address(BitCodec *c, const ETraceParams *p, uint64_t *a)
{
    uint64_t x = (*a & width_mask(p->iaddress_width_p)) >> p->iaddress_lsb_p;

    field64(c, &x, address_bits(p));
    *a = (x << p->iaddress_lsb_p) & width_mask(p->iaddress_width_p);
}

/* ------------------------------------------------------------- layouts */

/* branch_map width for a branches value (tables 6.6, 6.7, 6.10). */
static unsigned map_width(unsigned branches, bool zero_is_full)
{
    if (branches == 0) {
        return zero_is_full ? 31 : 0;
    }
    if (branches == 1) {
        return 1;
    }
    if (branches <= 3) {
        return 3;
    }
    if (branches <= 7) {
        return 7;
    }
    return branches <= 15 ? 15 : 31;
}

static void walk_tail(BitCodec *c, const ETraceParams *p, ETracePacket *pkt)
{
    field_address(c, p, &pkt->address);
    field_bool(c, &pkt->notify);
    field_bool(c, &pkt->updiscon);
    field_bool(c, &pkt->irreport);
    field32(c, &pkt->irdepth, etrace_irdepth_width(p));
    pkt->has_address = true;
}

static void walk_branch_map(BitCodec *c, ETracePacket *pkt, bool zero_is_full)
{
    field_uint(c, &pkt->branches, 5);
    field32(c, &pkt->branch_map, map_width(pkt->branches, zero_is_full));
}

static bool privilege_reserved(unsigned priv)
{
    return (priv & 3) == 2 || priv >= 7;
}

static const char *walk_format3(BitCodec *c, const ETraceParams *p,
                                const ETraceOptions *o, ETracePacket *pkt)
{
    bool v2 = p->arch == ETRACE_ARCH_2_0;

    field_uint(c, &pkt->subformat, 2);
    if (pkt->subformat == 3) {
        unsigned qual = pkt->qual_status;

        field_bool(c, &pkt->enable);
        field_uint(c, &pkt->encoder_mode, ETRACE_ENCODER_MODE_WIDTH);
        field_uint(c, &qual, 2);
        pkt->qual_status = qual;
        field32(c, &pkt->options, ETRACE_OPTIONS_WIDTH);
        if (v2) {
            bool denable = pkt->options & OPT_DATA;
            bool dloss = denable && qual == ETRACE_QUAL_TRACE_LOST;

            field_bool(c, &denable);
            field_bool(c, &dloss);
        }
        if (pkt->encoder_mode != 0) {
            return "reserved encoder_mode";
        }
        return options_valid(p, pkt->options) ? NULL :
               "options name a mode the encoder does not have";
    }
    if (pkt->subformat != 2) {
        field_bool(c, &pkt->branch);
    }
    field_uint(c, &pkt->privilege, p->privilege_width_p);
    field64(c, &pkt->context, p->context_width_p);
    if (pkt->subformat == 2) {
        return NULL;
    }
    if (pkt->subformat == 1) {
        field64(c, &pkt->ecause, p->ecause_width_p);
        field_bool(c, &pkt->interrupt);
        if (v2) {
            field_bool(c, &pkt->thaddr);
        }
    }
    if (pkt->subformat == 0 || !o->implicit_exception ||
        (v2 && !pkt->thaddr)) {
        field_address(c, p, &pkt->address);
    }
    pkt->has_address = true;
    if (pkt->subformat == 1 && !(v2 && pkt->interrupt)) {
        field64(c, &pkt->tvalepc, p->iaddress_width_p);
    }
    if (v2 && pkt->subformat == 1 && !pkt->thaddr) {
        pkt->has_address = false;     /* an EPC, not a retired instruction */
    }
    return privilege_reserved(pkt->privilege) ? "reserved privilege" : NULL;
}

/* Format 0 subformat: sent, or implied by the one optional format on. */
static const char *walk_f0_subformat(BitCodec *c, const ETraceParams *p,
                                     const ETraceOptions *o,
                                     ETracePacket *pkt)
{
    if (p->f0s_width_p) {
        field_uint(c, &pkt->subformat, p->f0s_width_p);
        return NULL;
    }
    if (o->branch_prediction == o->jump_target_cache) {
        return "format 0 subformat is not implied by the options";
    }
    pkt->subformat = o->jump_target_cache ? 1 : 0;
    return NULL;
}

static const char *walk_format0(BitCodec *c, const ETraceParams *p,
                                const ETraceOptions *o, ETracePacket *pkt)
{
    const char *err = walk_f0_subformat(c, p, o, pkt);

    if (err) {
        return err;
    }
    if (pkt->subformat == 0) {
        field32(c, &pkt->branch_count, 32);
        field_uint(c, &pkt->branch_fmt, 2);
        if (pkt->branch_fmt == 1) {
            return "reserved branch_fmt";
        }
        if (pkt->branch_fmt != 0) {
            walk_tail(c, p, pkt);
        }
        return NULL;
    }
    if (pkt->subformat != 1) {
        return "reserved format 0 subformat";
    }
    field32(c, &pkt->index, p->cache_size_p);
    walk_branch_map(c, pkt, false);
    field_bool(c, &pkt->irreport);
    field32(c, &pkt->irdepth, etrace_irdepth_width(p));
    pkt->has_address = true;
    return NULL;
}

/* Every payload layout of chapter 6, in transmission order. */
static const char *walk_packet(BitCodec *c, const ETraceParams *p,
                               const ETraceOptions *o, ETracePacket *pkt)
{
    field_uint(c, &pkt->format, 2);
    switch (pkt->format) {
    case 3:
        return walk_format3(c, p, o, pkt);
    case 2:
        walk_tail(c, p, pkt);
        return NULL;
    case 1:
        walk_branch_map(c, pkt, true);
        if (pkt->branches != 0) {
            walk_tail(c, p, pkt);
        }
        return NULL;
    default:
        return walk_format0(c, p, o, pkt);
    }
}

/* --------------------------------------------------------- pack/unpack */

static const ETraceOptions no_options;

/* The encapsulation's header byte (etrace.h, etrace_frame_length). */
#define FRAME_PAYLOAD_LEN   0x1f
#define FRAME_TIMESTAMP     0x80

static unsigned src_bytes(const ETraceParams *p)
{
    return (p->src_bits + 7) / 8;
}

/* Bits left after dropping the copies of the sign at the top (>= 1). */
static unsigned compressed_bits(const BitCodec *c, unsigned n)
{
    uint64_t sign = get_bit(c, n - 1) ? UINT64_MAX : 0;

    /* the highest bit below n - 1 that differs from the sign */
    for (int i = (n - 2) / 64; n >= 2 && i >= 0; i--) {
        uint64_t diff = c->w[i] ^ sign;

        if ((unsigned)i == (n - 2) / 64) {
            diff &= width_mask((n - 2) % 64 + 1);
        }
        if (diff) {
            return i * 64 + (63 - __builtin_clzll(diff)) + 2;
        }
    }
    return 1;
}

/*
 * The packed payload in c, sign-compressed, behind the header (with this
 * flow, no timestamp) and the index; 0 if it is too long.
 */
static size_t frame_codec(const ETraceParams *p, BitCodec *c, unsigned flow,
                          uint8_t buf[ETRACE_MAX_PACKET])
{
    unsigned n = c->pos, hdr = 1 + src_bytes(p);
    unsigned bytes = (compressed_bits(c, n) + 7) / 8;

    if (n > ETRACE_BITS_MAX + 64 || bytes > ETRACE_MAX_PAYLOAD) {
        return 0;
    }
    fill_from(c, n, get_bit(c, n - 1));     /* sign-extend to the byte */
    buf[0] = bytes | flow << 5;
    for (unsigned i = 0; i < src_bytes(p); i++) {
        buf[1 + i] = p->src_id >> (8 * i);
    }
    for (unsigned i = 0; i < bytes; i++) {
        buf[hdr + i] = c->w[i / 8] >> (8 * (i % 8));
    }
    return hdr + bytes;
}

size_t etrace_packet_pack(const ETraceParams *p, const ETraceOptions *o,
                          const ETracePacket *pkt,
                          uint8_t buf[ETRACE_MAX_PACKET])
{
    BitCodec c = { .unpack = false };
    ETracePacket copy = *pkt;   /* walk_packet() takes it read-write */

    if (!etrace_params_check(p, NULL)) {
        return 0;
    }
    copy.format &= 3;
    if (walk_packet(&c, p, o ? o : &no_options, &copy)) {
        return 0;           /* a reserved value: unpack would reject it */
    }
    return frame_codec(p, &c, 0, buf);
}

/* ------------------------------------------------------ fast packer */

/*
 * Longest format 1 with an address: format, branches, a 31-bit map, the
 * address, notify, updiscon, irreport and irdepth.  Format 0.1 is shorter
 * (at most 87 bits).
 */
static unsigned max_f12_bits(const ETraceParams *p)
{
    return 2 + 5 + 31 + address_bits(p) + 3 + etrace_irdepth_width(p);
}

bool etrace_packer_init(ETracePacker *pk, const ETraceParams *p)
{
    memset(pk, 0, sizeof(*pk));
    if (!etrace_params_check(p, NULL)) {
        return false;
    }
    pk->p = *p;
    pk->addr_mask = width_mask(p->iaddress_width_p);
    pk->addr_bits = address_bits(p);
    pk->irdepth_width = etrace_irdepth_width(p);
    pk->header = 1 + src_bytes(p);
    pk->field_shift = 64 - p->iaddress_width_p;
    pk->field_sext = 64 - p->iaddress_width_p + p->iaddress_lsb_p;
    /* the payload and the bit above it fit two words */
    pk->fast = max_f12_bits(p) < 128;
    return true;
}

/* The generic path of etrace_packet_pack_f12(). */
static __attribute__((noinline))
size_t pack_f12_generic(const ETracePacker *pk, unsigned format,
                        unsigned branches, uint32_t branch_map,
                        uint64_t address, bool notify, bool updiscon,
                        bool irreport, uint32_t irdepth,
                        uint8_t buf[ETRACE_MAX_PACKET])
{
    ETracePacket pkt = {
        .format = format, .branches = branches, .branch_map = branch_map,
        .address = address,
    };

    etrace_packet_set_flags(&pk->p, &pkt, notify, updiscon, irreport,
                            irdepth);
    return etrace_packet_pack(&pk->p, NULL, &pkt, buf);
}

/* Position of the highest set bit of x != 0. */
static unsigned top_bit(uint64_t x)
{
    return 63 - __builtin_clzll(x);
}

/* A payload of fewer than 128 bits being built, LSB first. */
typedef struct Payload {
    uint64_t lo, hi;
    unsigned n;             /* bits so far */
} Payload;

/* Append the low width (<= 64) bits of v. */
static void payload_put(Payload *pl, uint64_t v, unsigned width)
{
    v &= width_mask(width);
    if (pl->n >= 64) {
        pl->hi |= v << (pl->n - 64);
    } else if (pl->n) {
        pl->lo |= v << pl->n;
        pl->hi |= v >> (64 - pl->n);
    } else {
        pl->lo = v;
    }
    pl->n += width;
}

/*
 * Any payload, compressed as compressed_bits() and fill_from() do: the
 * copies of the sign at the top are dropped.
 */
static size_t put_any_payload(const ETracePacker *pk, const Payload *pl,
                              uint8_t buf[ETRACE_MAX_PACKET])
{
    unsigned n = pl->n;
    uint64_t lo = pl->lo, hi = pl->hi, sign;
    unsigned bits;

    sign = -((n > 64 ? hi >> (n - 65) : lo >> (n - 1)) & 1);
    if (n >= 64) {
        hi |= sign << (n - 64);     /* the sign extension */
    } else {
        lo |= sign << n;
        hi = sign;
    }
    if (hi ^ sign) {
        bits = 64 + top_bit(hi ^ sign) + 2;
    } else if (lo ^ sign) {
        bits = top_bit(lo ^ sign) + 2;
    } else {
        bits = 1;
    }
    return etrace_packer_put(pk, bits, lo, hi, buf);
}

/* Formats 1 and 2 with notify, updiscon or irreport. */
static __attribute__((noinline))
size_t pack_f12_flags(const ETracePacker *pk, unsigned format,
                      unsigned branches, uint32_t branch_map,
                      uint64_t address, bool notify, bool updiscon,
                      bool irreport, uint32_t irdepth,
                      uint8_t buf[ETRACE_MAX_PACKET])
{
    /* the flags are sent relative to the bit before them (6.6) */
    unsigned msb = (address >> (pk->p.iaddress_width_p - 1)) & 1;
    unsigned notify_bit = notify ^ msb;
    unsigned updiscon_bit = updiscon ^ notify_bit;
    unsigned irreport_bit = irreport ^ updiscon_bit;
    uint64_t depth_mask = width_mask(pk->irdepth_width);
    Payload pl = { 0 };

    payload_put(&pl, format, 2);
    if (format == 1) {
        /* 1 to 31: etrace_packet_pack_f12() took the full map before */
        payload_put(&pl, branches, 5);
        payload_put(&pl, branch_map, etrace_f1_map_width(branches));
    }
    payload_put(&pl, (address & pk->addr_mask) >> pk->p.iaddress_lsb_p,
                pk->addr_bits);
    payload_put(&pl, notify_bit | updiscon_bit << 1 | irreport_bit << 2, 3);
    payload_put(&pl, irreport ? irdepth : updiscon_bit ? depth_mask : 0,
                pk->irdepth_width);
    return put_any_payload(pk, &pl, buf);
}

size_t etrace_packet_pack_f12(const ETracePacker *pk, unsigned format,
                              unsigned branches, uint32_t branch_map,
                              uint64_t address, bool notify, bool updiscon,
                              bool irreport, uint32_t irdepth,
                              uint8_t buf[ETRACE_MAX_PACKET])
{
    uint64_t head, sign;

    if (!pk->fast || (format != 1 && format != 2) || branches > 31) {
        return pack_f12_generic(pk, format, branches, branch_map, address,
                                notify, updiscon, irreport, irdepth, buf);
    }
    if (format == 1 && !branches) {
        /* 31 branches, no address: 38 bits, the format differs from sign */
        head = 1 | (uint64_t)(branch_map & 0x7fffffff) << 7;
        sign = -((head >> 37) & 1);
        return etrace_packer_put(pk,
                                 top_bit((head ^ sign) & width_mask(38)) + 2,
                                 head | sign << 38, sign, buf);
    }
    if (notify || updiscon || irreport) {
        return pack_f12_flags(pk, format, branches, branch_map, address,
                              notify, updiscon, irreport, irdepth, buf);
    }
    return etrace_packet_pack_f12_plain(pk, format, branches, branch_map,
                                        address, buf);
}

/* The generic path of etrace_packet_pack_f01(). */
static __attribute__((noinline))
size_t pack_f01_generic(const ETracePacker *pk, const ETraceOptions *o,
                        unsigned index, unsigned branches,
                        uint32_t branch_map, bool irreport, uint32_t irdepth,
                        uint8_t buf[ETRACE_MAX_PACKET])
{
    ETracePacket pkt = {
        .format = 0, .subformat = 1, .index = index, .branches = branches,
        .branch_map = branch_map,
    };

    etrace_packet_set_flags(&pk->p, &pkt, false, false, irreport, irdepth);
    return etrace_packet_pack(&pk->p, o, &pkt, buf);
}

size_t etrace_packet_pack_f01(const ETracePacker *pk, const ETraceOptions *o,
                              unsigned index, unsigned branches,
                              uint32_t branch_map, bool irreport,
                              uint32_t irdepth,
                              uint8_t buf[ETRACE_MAX_PACKET])
{
    /* format 0.1's map width: 0 for no branches (table 6.10) */
    static const uint8_t map_width[32] = {
        0, 1, 3, 3, 7, 7, 7, 7, 15, 15, 15, 15, 15, 15, 15, 15,
        31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31,
    };
    unsigned index_bits = pk->p.cache_size_p, map_bits;
    uint64_t head, sign;
    Payload pl = { 0 };

    if (!pk->fast || pk->p.f0s_width_p != 1 || branches > 31) {
        return pack_f01_generic(pk, o, index, branches, branch_map,
                                irreport, irdepth, buf);
    }
    /* format 0, subformat 1, index, branches, map: at most 55 bits */
    map_bits = map_width[branches];
    head = (uint64_t)1 << 2 |
           (uint64_t)(index & width_mask(index_bits)) << 3 |
           (uint64_t)branches << (3 + index_bits) |
           (uint64_t)(branch_map & width_mask(map_bits)) << (8 + index_bits);
    pl.n = 8 + index_bits + map_bits;
    /*
     * irreport is sent relative to the bit before it (6.6): without a
     * report, irreport and irdepth are copies of that bit, the sign
     * extension of the head.
     */
    sign = -((head >> (pl.n - 1)) & 1);
    if (!irreport) {
        /* never 0: format 00 and subformat 1 differ from any sign */
        return etrace_packer_put(pk,
                                 top_bit((head ^ sign) &
                                         width_mask(pl.n)) + 2,
                                 head | sign << pl.n, sign, buf);
    }
    pl.lo = head;
    payload_put(&pl, sign == 0, 1);
    payload_put(&pl, irdepth, pk->irdepth_width);
    return put_any_payload(pk, &pl, buf);
}

/*
 * Format 0 subformat 0 with branch_fmt 0: the count of correctly
 * predicted branches, no address.  branch_fmt's top bit is 0, so the
 * payload is its head without its leading zeros.
 */
size_t etrace_packet_pack_f00(const ETracePacker *pk, const ETraceOptions *o,
                              uint32_t branch_count,
                              uint8_t buf[ETRACE_MAX_PACKET])
{
    ETracePacket pkt = { .format = 0, .subformat = 0,
                         .branch_count = branch_count };
    /* format 00, subformat 0, branch_count, branch_fmt 00 */
    uint64_t head = (uint64_t)branch_count << 3;

    if (!pk->fast || pk->p.f0s_width_p != 1) {
        return etrace_packet_pack(&pk->p, o, &pkt, buf);
    }
    return etrace_packer_put(pk, head ? top_bit(head) + 2 : 1, head, 0, buf);
}

/* A payload of plen bytes into c; bits past the end are sign copies. */
static void load_payload(BitCodec *c, const uint8_t *payload, unsigned plen)
{
    for (unsigned i = 0; i < plen; i++) {
        c->w[i / 8] |= (uint64_t)payload[i] << (8 * (i % 8));
    }
    fill_from(c, plen * 8, get_bit(c, plen * 8 - 1));
}

/* After a walk of a payload of plen bytes: no byte or bit too many. */
static const char *check_payload_end(const BitCodec *c, unsigned plen)
{
    if (plen > (c->pos + 7) / 8) {
        return "payload longer than its packet";
    }
    for (unsigned i = c->pos; i < plen * 8; i++) {
        if (get_bit(c, i) != get_bit(c, c->pos - 1)) {
            return "payload padding is not a sign extension";
        }
    }
    return NULL;
}

/* Decode a payload of plen bytes. */
static const char *unpack_payload(const ETraceParams *p,
                                  const ETraceOptions *o,
                                  const uint8_t *payload, unsigned plen,
                                  ETracePacket *pkt)
{
    BitCodec c = { .unpack = true };
    const char *err;

    load_payload(&c, payload, plen);
    err = walk_packet(&c, p, o, pkt);
    return err ? err : check_payload_end(&c, plen);
}

/* ---------------------------------------------------- data packets */

/* Data and operand: a length field, then that many bytes. */
static void field_bytes(BitCodec *c, unsigned *len, unsigned len_width,
                        uint64_t *v)
{
    field_uint(c, len, len_width);
    field64(c, v, 8 * (*len + 1));
}

static const char *walk_data_load_store(BitCodec *c, const ETraceParams *p,
                                        const ETraceOptions *o,
                                        ETraceDataPacket *pkt)
{
    field_uint(c, &pkt->size, 2);
    if (8u << pkt->size > p->iaddress_width_p) {
        return "data size wider than data_width_p";
    }
    field_uint(c, &pkt->diff, o->data_no_value ? 1 : 2);
    if (o->data_no_address) {
        field64(c, &pkt->data, p->iaddress_width_p);
        return pkt->diff == 2 ? "reserved diff" : NULL;
    }
    if (!o->data_no_value) {
        field_bytes(c, &pkt->data_len, pkt->size, &pkt->data);
    }
    field64(c, &pkt->address, p->iaddress_width_p);
    return NULL;
}

static const char *walk_data_atomic(BitCodec *c, const ETraceParams *p,
                                    const ETraceOptions *o,
                                    ETraceDataPacket *pkt)
{
    field_uint(c, &pkt->subtype, 3);
    field_uint(c, &pkt->size, 1);
    if (pkt->subtype == 7) {
        return "reserved atomic subtype";
    }
    if (32u << pkt->size > p->iaddress_width_p) {
        return "atomic size wider than data_width_p";
    }
    field_uint(c, &pkt->diff, o->data_no_value ? 1 : 2);
    if (!o->data_no_value) {
        field_bytes(c, &pkt->op_len, 2 + pkt->size, &pkt->operand);
        if (o->data_no_address) {
            field64(c, &pkt->data, p->iaddress_width_p);
            return pkt->diff == 2 ? "reserved diff" : NULL;
        }
        field_bytes(c, &pkt->data_len, 2 + pkt->size, &pkt->data);
    }
    field64(c, &pkt->address, p->iaddress_width_p);
    return NULL;
}

static const char *walk_data_csr(BitCodec *c, const ETraceParams *p,
                                 const ETraceOptions *o,
                                 ETraceDataPacket *pkt)
{
    unsigned len_width = p->iaddress_width_p > 32 ? 3 : 2;
    unsigned msbs = pkt->csr >> 6, lsbs = pkt->csr & 63;

    field_uint(c, &pkt->subtype, 2);
    if (pkt->subtype == 3) {
        return "reserved CSR subtype";
    }
    if (o->data_no_value) {
        /* table 7.13: 1 = a differential address, which is not sent */
        field_uint(c, &pkt->diff, 1);
        if (pkt->diff) {
            return "differential CSR address";
        }
    } else {
        field_uint(c, &pkt->diff, 2);
        if (pkt->diff == ETRACE_DDIFF_DATA_FULL) {
            return "reserved diff";
        }
        field_bytes(c, &pkt->data_len, len_width, &pkt->data);
    }
    field_uint(c, &msbs, 6);
    if (!o->data_no_value && msbs >> 4 != 3) {
        field_bytes(c, &pkt->op_len, len_width, &pkt->operand);
    }
    field_uint(c, &lsbs, 6);
    pkt->csr = msbs << 6 | lsbs;
    return NULL;
}

static const char *walk_data_packet(BitCodec *c, const ETraceParams *p,
                                    const ETraceOptions *o,
                                    ETraceDataPacket *pkt)
{
    field_uint(c, &pkt->format, 3);
    switch (pkt->format) {
    case ETRACE_DFMT_LOAD:
    case ETRACE_DFMT_LOAD + 1:
    case ETRACE_DFMT_STORE:
    case ETRACE_DFMT_STORE + 1:
        return walk_data_load_store(c, p, o, pkt);
    case ETRACE_DFMT_CSR:
        return walk_data_csr(c, p, o, pkt);
    case ETRACE_DFMT_ATOMIC:
        return walk_data_atomic(c, p, o, pkt);
    default:
        return "split data formats are not implemented";
    }
}

size_t etrace_data_packet_pack(const ETraceParams *p, const ETraceOptions *o,
                               const ETraceDataPacket *pkt,
                               uint8_t buf[ETRACE_MAX_PACKET])
{
    BitCodec c = { .unpack = false };
    ETraceDataPacket copy = *pkt;

    if (!etrace_params_check(p, NULL) || walk_data_packet(&c, p, o, &copy)) {
        return 0;
    }
    return frame_codec(p, &c, ETRACE_FLOW_DATA, buf);
}

/* A frame whose flow is ETRACE_FLOW_DATA, of flen bytes. */
static const char *unpack_data_frame(const ETraceParams *p,
                                     const ETraceOptions *o,
                                     const uint8_t *buf, unsigned flen,
                                     ETraceDataPacket *pkt)
{
    BitCodec c = { .unpack = true };
    unsigned plen = buf[0] & FRAME_PAYLOAD_LEN;
    const char *err;

    memset(pkt, 0, sizeof(*pkt));
    load_payload(&c, buf + flen - plen, plen);
    err = walk_data_packet(&c, p, o, pkt);
    return err ? err : check_payload_end(&c, plen);
}

int etrace_data_packet_unpack(const ETraceParams *p, const ETraceOptions *o,
                              const uint8_t *buf, size_t len,
                              ETraceDataPacket *pkt, const char **err)
{
    unsigned flen;

    if (len == 0) {
        return 0;
    }
    flen = etrace_frame_length(p, buf[0]);
    if (flen <= 1 || etrace_frame_flow(buf[0]) != ETRACE_FLOW_DATA) {
        *err = "not a data packet";
        return -1;
    }
    if (len < flen) {
        return 0;
    }
    *err = unpack_data_frame(p, o, buf, flen, pkt);
    return *err ? -1 : (int)flen;
}

int etrace_packet_unpack(const ETraceParams *p, const ETraceOptions *o,
                         const uint8_t *buf, size_t len, ETracePacket *pkt,
                         const char **err)
{
    const char *msg = NULL;
    unsigned plen, flen;
    size_t zeros = 0;

    memset(pkt, 0, sizeof(*pkt));
    if (!etrace_params_check(p, &msg)) {
        *err = msg;
        return -1;
    }
    while (zeros < len && buf[zeros] == 0) {
        zeros++;
    }
    if (zeros) {
        pkt->padding = true;
        return zeros > INT32_MAX ? INT32_MAX : (int)zeros;
    }
    if (len == 0) {
        return 0;
    }
    flen = etrace_frame_length(p, buf[0]);
    if (flen == 0) {
        *err = "header with payload length 0";
        return -1;
    }
    if (len < flen) {
        return 0;
    }
    plen = buf[0] & FRAME_PAYLOAD_LEN;
    pkt->src_id = etrace_frame_source(p, buf);
    if (etrace_frame_flow(buf[0]) == ETRACE_FLOW_DATA) {
        pkt->data = true;
        msg = unpack_data_frame(p, o ? o : &no_options, buf, flen, &pkt->dp);
    } else {
        msg = unpack_payload(p, o ? o : &no_options, buf + flen - plen, plen,
                             pkt);
    }
    if (msg) {
        *err = msg;
        return -1;
    }
    return flen;
}

/* ------------------------------------------------------------ framing */

unsigned etrace_frame_length(const ETraceParams *p, uint8_t header)
{
    if (!header) {
        return 1;
    }
    if (!(header & FRAME_PAYLOAD_LEN)) {
        return 0;
    }
    return 1 + src_bytes(p) + (header & FRAME_TIMESTAMP ? 2 : 0) +
           (header & FRAME_PAYLOAD_LEN);
}

unsigned etrace_frame_source(const ETraceParams *p, const uint8_t *frame)
{
    unsigned id = 0;

    for (unsigned i = 0; i < src_bytes(p); i++) {
        id |= (unsigned)frame[1 + i] << (8 * i);
    }
    return id;
}

long etrace_frame_boundary(const ETraceParams *p, const ETraceOptions *o,
                           const uint8_t *buf, size_t len)
{
    size_t pos[ETRACE_FRAME_CANDIDATES];
    bool alive[ETRACE_FRAME_CANDIDATES];
    bool framed[ETRACE_FRAME_CANDIDATES];   /* has unpacked a packet */

    _Static_assert(ETRACE_FRAME_CANDIDATES > ETRACE_MAX_PACKET,
                   "a candidate must start on the true framing");
    for (unsigned i = 0; i < ETRACE_FRAME_CANDIDATES; i++) {
        pos[i] = i;
        alive[i] = i < len;
        framed[i] = false;
    }
    for (;;) {
        size_t lo = SIZE_MAX, hi = 0;
        unsigned low = 0, nalive = 0;
        ETracePacket pkt;
        const char *err;
        int n;

        for (unsigned i = 0; i < ETRACE_FRAME_CANDIDATES; i++) {
            nalive += alive[i];
            if (alive[i] && pos[i] < lo) {
                lo = pos[i];
                low = i;
            }
            if (alive[i] && pos[i] > hi) {
                hi = pos[i];
            }
        }
        if (lo == SIZE_MAX || lo >= len) {
            return -1;
        }
        /* framings meet, or the last one left has unpacked a packet */
        if (lo == hi && (nalive > 1 || framed[low])) {
            return (long)lo;
        }
        n = etrace_packet_unpack(p, o, buf + lo, len - lo, &pkt, &err);
        if (n < 0) {
            alive[low] = false;
        } else if (nalive == 1 && n > 0) {
            return (long)lo;                /* the only framing left */
        } else {
            pos[low] = n ? lo + n : len;    /* 0: runs past the end */
            framed[low] = true;
        }
    }
}

/* ---------------------------------------------------- relative flag bits */

/*
 * The bit sent just before irreport (and irdepth): updiscon, or in
 * format 0 subformat 1 the MSB of branch_map or of branches.
 */
static unsigned bit_before_irreport(const ETracePacket *pkt)
{
    unsigned w;

    if (pkt->format != 0 || pkt->subformat != 1) {
        return pkt->updiscon;
    }
    w = map_width(pkt->branches, false);
    return w ? (pkt->branch_map >> (w - 1)) & 1 : (pkt->branches >> 4) & 1;
}

static bool has_notify_fields(const ETracePacket *pkt)
{
    return pkt->format == 2 || (pkt->format == 1 && pkt->branches != 0) ||
           (pkt->format == 0 && pkt->subformat == 0 && pkt->branch_fmt >= 2);
}

static bool has_irreport(const ETracePacket *pkt)
{
    return has_notify_fields(pkt) || (pkt->format == 0 && pkt->subformat == 1);
}

void etrace_packet_set_flags(const ETraceParams *p, ETracePacket *pkt,
                             bool notify, bool updiscon, bool irreport,
                             uint32_t irdepth)
{
    unsigned w = etrace_irdepth_width(p);
    unsigned before;

    if (has_notify_fields(pkt)) {
        unsigned msb = (pkt->address >> (p->iaddress_width_p - 1)) & 1;

        pkt->notify = notify ^ msb;
        pkt->updiscon = updiscon ^ pkt->notify;
    }
    if (!has_irreport(pkt)) {
        return;
    }
    before = bit_before_irreport(pkt);
    pkt->irreport = irreport ^ before;
    if (irreport) {
        pkt->irdepth = irdepth & (uint32_t)width_mask(w);
    } else {
        pkt->irdepth = before ? (uint32_t)width_mask(w) : 0;
    }
}

void etrace_packet_get_flags(const ETraceParams *p, const ETracePacket *pkt,
                             bool *notify, bool *updiscon, bool *irreport)
{
    *notify = *updiscon = *irreport = false;
    if (has_notify_fields(pkt)) {
        unsigned msb = (pkt->address >> (p->iaddress_width_p - 1)) & 1;

        *notify = pkt->notify != msb;
        *updiscon = pkt->updiscon != pkt->notify;
    }
    if (has_irreport(pkt)) {
        *irreport = pkt->irreport != bit_before_irreport(pkt);
    }
}

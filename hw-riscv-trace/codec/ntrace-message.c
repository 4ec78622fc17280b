/*
 * N-trace codec: packing and unpacking of messages (MDO/MSEO)
 *
 * One table gives each message's fields in order; the packer and the
 * unpacker both walk it, so a field layout is written down once.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "ntrace.h"

/*
 * A field: a fixed one of width bits (an unsigned member of
 * NTraceMessage), or a variable one (width 0, a uint64_t member), maybe
 * present only when another field has a value.
 */
typedef enum NTraceFieldCond {
    NTRACE_ALWAYS,
    NTRACE_IF_CDF_1,        /* ProgTraceCorrelation's HIST */
    NTRACE_IF_RCODE_2,      /* ResourceFull's HREPEAT */
} NTraceFieldCond;

typedef struct NTraceField {
    uint8_t width;
    uint8_t cond;
    uint16_t offset;
} NTraceField;

#define FIX(member, bits) \
    { (bits), NTRACE_ALWAYS, offsetof(NTraceMessage, member) }
#define VAR(member) \
    { 0, NTRACE_ALWAYS, offsetof(NTraceMessage, member) }
#define VAR_IF(member, cond) \
    { 0, (cond), offsetof(NTraceMessage, member) }

#define NTRACE_MAX_FIELDS 5

typedef struct NTraceLayout {
    const char *name;
    uint8_t nfields;
    NTraceField field[NTRACE_MAX_FIELDS];
} NTraceLayout;

/* After TCODE and SRC; TSTAMP may follow the last. */
static const NTraceLayout layouts[64] = {
    [NTRACE_TCODE_OWNERSHIP] = { "Ownership", 1, { VAR(process) } },
    [NTRACE_TCODE_DIRECT_BRANCH] = { "DirectBranch", 1, { VAR(icnt) } },
    [NTRACE_TCODE_INDIRECT_BRANCH] = { "IndirectBranch", 3,
        { FIX(btype, 2), VAR(icnt), VAR(addr) } },
    [NTRACE_TCODE_ERROR] = { "Error", 2, { FIX(etype, 4), VAR(ecode) } },
    [NTRACE_TCODE_PROG_TRACE_SYNC] = { "ProgTraceSync", 3,
        { FIX(sync, 4), VAR(icnt), VAR(addr) } },
    [NTRACE_TCODE_DIRECT_BRANCH_SYNC] = { "DirectBranchSync", 3,
        { FIX(sync, 4), VAR(icnt), VAR(addr) } },
    [NTRACE_TCODE_INDIRECT_BRANCH_SYNC] = { "IndirectBranchSync", 4,
        { FIX(sync, 4), FIX(btype, 2), VAR(icnt), VAR(addr) } },
    [NTRACE_TCODE_RESOURCE_FULL] = { "ResourceFull", 3,
        { FIX(rcode, 4), VAR(rdata), VAR_IF(hrepeat, NTRACE_IF_RCODE_2) } },
    [NTRACE_TCODE_INDIRECT_BRANCH_HIST] = { "IndirectBranchHist", 4,
        { FIX(btype, 2), VAR(icnt), VAR(addr), VAR(hist) } },
    [NTRACE_TCODE_INDIRECT_BRANCH_HIST_SYNC] = { "IndirectBranchHistSync", 5,
        { FIX(sync, 4), FIX(btype, 2), VAR(icnt), VAR(addr), VAR(hist) } },
    [NTRACE_TCODE_REPEAT_BRANCH] = { "RepeatBranch", 1, { VAR(bcnt) } },
    [NTRACE_TCODE_PROG_TRACE_CORRELATION] = { "ProgTraceCorrelation", 4,
        { FIX(evcode, 4), FIX(cdf, 2), VAR(icnt),
          VAR_IF(hist, NTRACE_IF_CDF_1) } },
};

static const NTraceLayout *layout_of(unsigned tcode)
{
    return tcode < sizeof(layouts) / sizeof(layouts[0]) &&
           layouts[tcode].name ?
           &layouts[tcode] : NULL;
}

const char *ntrace_tcode_name(unsigned tcode)
{
    const NTraceLayout *l = layout_of(tcode);

    return l ? l->name : NULL;
}

static bool field_present(const NTraceField *f, const NTraceMessage *m)
{
    switch (f->cond) {
    case NTRACE_IF_CDF_1:
        return m->cdf == 1;
    case NTRACE_IF_RCODE_2:
        return m->rcode == 2;
    default:
        return true;
    }
}

static unsigned *fixed_member(NTraceMessage *m, const NTraceField *f)
{
    return (unsigned *)((char *)m + f->offset);
}

static uint64_t *var_member(NTraceMessage *m, const NTraceField *f)
{
    return (uint64_t *)((char *)m + f->offset);
}

/* ------------------------------------------------------------- packing */

static unsigned min_u(unsigned a, unsigned b)
{
    return a < b ? a : b;
}

/*
 * The bytes so far: buf[0..n) are complete, buf[n] is open with used MDO
 * bits filled (used 0: not started).
 */
typedef struct NTraceWriter {
    uint8_t *buf;
    size_t n;
    unsigned used;
    bool overflow;
} NTraceWriter;

static inline void put_bits(NTraceWriter *w, uint64_t v, unsigned bits)
{
    while (bits) {
        unsigned take = min_u(bits, NTRACE_MDO_BITS - w->used);

        if (w->n >= NTRACE_MAX_MESSAGE) {
            w->overflow = true;
            return;
        }
        if (!w->used) {
            w->buf[w->n] = 0;
        }
        w->buf[w->n] |= (v & ((1u << take) - 1)) << (2 + w->used);
        v >>= take;
        bits -= take;
        w->used += take;
        if (w->used == NTRACE_MDO_BITS) {
            w->n++;
            w->used = 0;
        }
    }
}

/* A fixed field: width bits, sharing bytes with its neighbours. */
static inline void put_fixed(NTraceWriter *w, unsigned v, unsigned width)
{
    put_bits(w, v, width);
}

/*
 * A variable field from the start of a byte: its bytes from p on (at
 * least one), the last given mseo.  Returns the byte after them.
 */
static inline uint8_t *put_var_bytes(uint8_t *p, uint64_t v, unsigned mseo)
{
    do {
        *p++ = (v & 0x3f) << 2;
        v >>= NTRACE_MDO_BITS;
    } while (v);
    p[-1] |= mseo;
    return p;
}

/*
 * A variable field: its significant bits (at least one) from where the
 * fixed fields left off, six at a time, the last byte filled with zeros
 * and given mseo.
 */
static inline void put_var(NTraceWriter *w, uint64_t v, unsigned mseo)
{
    /* 64 bits take 11 bytes at most, with the open one 12 */
    if (w->n + 12 > NTRACE_MAX_MESSAGE) {
        w->overflow = true;
        return;
    }
    if (w->used) {
        unsigned room = NTRACE_MDO_BITS - w->used;

        w->buf[w->n++] |= (v & ((1u << room) - 1)) << (2 + w->used);
        w->used = 0;
        v >>= room;
        if (!v) {
            w->buf[w->n - 1] |= mseo;
            return;
        }
    }
    w->n = put_var_bytes(w->buf + w->n, v, mseo) - w->buf;
}

size_t ntrace_pack_indirect_branch(uint8_t buf[NTRACE_MAX_MESSAGE],
                                   unsigned btype, uint64_t icnt,
                                   uint64_t addr, uint64_t hist)
{
    uint8_t *p = buf + 2;

    buf[0] = (hist ? NTRACE_TCODE_INDIRECT_BRANCH_HIST :
                     NTRACE_TCODE_INDIRECT_BRANCH) << 2;
    buf[1] = (btype & 3) << 2 | (icnt & 0xf) << 4;
    if (icnt >> 4) {
        p = put_var_bytes(p, icnt >> 4, NTRACE_MSEO_END_FIELD);
    } else {
        buf[1] |= NTRACE_MSEO_END_FIELD;
    }
    if (!hist) {
        return put_var_bytes(p, addr, NTRACE_MSEO_END_MESSAGE) - buf;
    }
    p = put_var_bytes(p, addr, NTRACE_MSEO_END_FIELD);
    return put_var_bytes(p, hist, NTRACE_MSEO_END_MESSAGE) - buf;
}

size_t ntrace_message_pack(const NTraceParams *p, const NTraceMessage *m,
                           uint8_t buf[NTRACE_MAX_MESSAGE])
{
    const NTraceLayout *l = layout_of(m->tcode);
    NTraceWriter w = { .buf = buf };
    int last = -1;

    if (m->tcode == NTRACE_TCODE_DIRECT_BRANCH && !p->src_bits &&
        !m->has_tstamp && m->icnt <= NTRACE_ICNT_MAX) {
        uint64_t word;
        size_t n = ntrace_direct_branch_word(m->icnt, &word);

        etrace_store_le64(buf, word);
        return n;
    }
    if ((m->tcode == NTRACE_TCODE_INDIRECT_BRANCH ||
         (m->tcode == NTRACE_TCODE_INDIRECT_BRANCH_HIST && m->hist)) &&
        !p->src_bits && !m->has_tstamp && m->btype < 4) {
        return ntrace_pack_indirect_branch(buf, m->btype, m->icnt, m->addr,
                                           m->tcode ==
                                           NTRACE_TCODE_INDIRECT_BRANCH_HIST ?
                                           m->hist : 0);
    }
    if (!l || p->src_bits > 12 || m->src >> p->src_bits) {
        return 0;
    }
    put_fixed(&w, m->tcode, NTRACE_MDO_BITS);
    put_fixed(&w, m->src, p->src_bits);
    for (int i = 0; i < l->nfields; i++) {
        if (field_present(&l->field[i], m)) {
            last = i;
        }
    }
    for (int i = 0; i <= last; i++) {
        const NTraceField *f = &l->field[i];
        bool end = i == last && !m->has_tstamp;

        if (!field_present(f, m)) {
            continue;
        }
        if (f->width) {
            unsigned v = *fixed_member((NTraceMessage *)m, f);

            if (v >> f->width) {
                return 0;
            }
            put_fixed(&w, v, f->width);
        } else {
            put_var(&w, *var_member((NTraceMessage *)m, f),
                    end ? NTRACE_MSEO_END_MESSAGE : NTRACE_MSEO_END_FIELD);
        }
    }
    if (m->has_tstamp) {
        put_var(&w, m->tstamp, NTRACE_MSEO_END_MESSAGE);
    }
    return w.overflow ? 0 : w.n;
}

/* ----------------------------------------------------------- unpacking */

typedef struct NTraceReader {
    const uint8_t *buf;
    size_t len;
    size_t n;               /* the byte being read */
    unsigned used;          /* its MDO bits consumed */
    bool ended;             /* the MSEO 11 byte was consumed */
} NTraceReader;

static unsigned mseo_of(uint8_t byte)
{
    return byte & 3;
}

/*
 * A fixed field.  Returns 1, 0 if the bytes end first, -1 if a byte
 * whose bits are all fixed fields ends a field or the message.
 */
static int get_fixed(NTraceReader *r, unsigned width, unsigned *v)
{
    unsigned got = 0;

    *v = 0;
    while (got < width) {
        unsigned take = min_u(width - got, NTRACE_MDO_BITS - r->used);

        if (r->n >= r->len) {
            return 0;
        }
        *v |= ((r->buf[r->n] >> (2 + r->used)) & ((1u << take) - 1)) << got;
        got += take;
        r->used += take;
        if (r->used == NTRACE_MDO_BITS) {
            if (mseo_of(r->buf[r->n]) != NTRACE_MSEO_NORMAL) {
                return -1;
            }
            r->n++;
            r->used = 0;
        }
    }
    return 1;
}

/*
 * A variable field: the rest of the open byte and the bytes up to the
 * first with MSEO 01 or 11.  Returns 1, 0 if the bytes end first, -1 if
 * it holds significant bits beyond 64.
 */
static int get_var(NTraceReader *r, uint64_t *v)
{
    unsigned got = 0;

    *v = 0;
    for (;;) {
        uint8_t byte;
        uint64_t bits;

        if (r->n >= r->len) {
            return 0;
        }
        byte = r->buf[r->n];
        bits = byte >> (2 + r->used);
        if (got < 64) {
            *v |= bits << got;
            if (got + NTRACE_MDO_BITS - r->used > 64 && bits >> (64 - got)) {
                return -1;
            }
        } else if (bits) {
            return -1;
        }
        got += NTRACE_MDO_BITS - r->used;
        r->n++;
        r->used = 0;
        if (mseo_of(byte) == NTRACE_MSEO_END_MESSAGE) {
            r->ended = true;
            return 1;
        }
        if (mseo_of(byte) == NTRACE_MSEO_END_FIELD) {
            return 1;
        }
    }
}

int ntrace_message_unpack(const NTraceParams *p, const uint8_t *buf,
                          size_t len, NTraceMessage *m, const char **err)
{
    NTraceReader r = { .buf = buf, .len = len };
    const NTraceLayout *l;
    unsigned tcode;
    int ret;

    memset(m, 0, sizeof(*m));
    while (r.n < len && buf[r.n] == NTRACE_IDLE) {
        r.n++;
    }
    ret = get_fixed(&r, NTRACE_MDO_BITS, &tcode);
    if (ret <= 0) {
        *err = "a message ends in its TCODE byte";
        return ret;
    }
    m->tcode = tcode;
    l = layout_of(tcode);
    if (!l) {
        *err = "unknown TCODE";
        return -1;
    }
    ret = get_fixed(&r, p->src_bits, &m->src);
    for (int i = 0; ret > 0 && !r.ended && i < l->nfields; i++) {
        const NTraceField *f = &l->field[i];

        if (!field_present(f, m)) {
            continue;
        }
        ret = f->width ? get_fixed(&r, f->width, fixed_member(m, f)) :
                         get_var(&r, var_member(m, f));
    }
    if (ret > 0 && !r.ended) {
        ret = get_var(&r, &m->tstamp);
        m->has_tstamp = true;
        if (ret > 0 && !r.ended) {
            *err = "more fields than the message has";
            return -1;
        }
    }
    if (ret < 0) {
        *err = "a field's bytes are not MDO/MSEO of this message";
        return -1;
    }
    if (ret == 0) {
        return 0;
    }
    return r.n;
}

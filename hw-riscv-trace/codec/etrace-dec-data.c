/*
 * E-trace data trace decoding: accesses paired with their instructions
 * (etrace-dec-data.h)
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "etrace-dec-data.h"

typedef struct HeldInsn {
    ETraceDecInsn insn;
    uint32_t bits;
} HeldInsn;

typedef struct HeldAccess {
    ETraceDataAccess a;
    bool no_address;
} HeldAccess;

/*
 * A FIFO of elements of size elem: an array whose live part is
 * [head, len), compacted when it has to grow.
 */
typedef struct Fifo {
    char *buf;
    size_t elem, head, len, cap;
} Fifo;

static void *fifo_peek(const Fifo *f)
{
    return f->head < f->len ? f->buf + f->head * f->elem : NULL;
}

/* The i-th element from the head, if there is one */
static void *fifo_at(const Fifo *f, size_t i)
{
    return f->head + i < f->len ? f->buf + (f->head + i) * f->elem : NULL;
}

static void fifo_pop(Fifo *f)
{
    if (++f->head == f->len) {
        f->head = f->len = 0;
    }
}

static void fifo_push(Fifo *f, const void *e)
{
    if (f->len == f->cap && f->head) {
        memmove(f->buf, f->buf + f->head * f->elem,
                (f->len - f->head) * f->elem);
        f->len -= f->head;
        f->head = 0;
    }
    if (f->len == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 64;
        f->buf = realloc(f->buf, f->cap * f->elem);
        if (!f->buf) {
            abort();
        }
    }
    memcpy(f->buf + f->len++ * f->elem, e, f->elem);
}

struct ETraceDataMatch {
    unsigned xlen;
    unsigned isa;
    ETraceDataInsnFn *out;
    void *opaque;
    Fifo insns;             /* HeldInsn: waiting for their accesses */
    Fifo accesses;          /* HeldAccess: waiting for their instructions */
    uint64_t lr_addr;       /* of the last load-reserved */
    ETraceDataMatchStats stats;
};

ETraceDataMatch *etrace_data_match_new(unsigned xlen, unsigned isa,
                                       ETraceDataInsnFn *out, void *opaque)
{
    ETraceDataMatch *m = calloc(1, sizeof(*m));

    if (m) {
        m->xlen = xlen;
        m->isa = isa;
        m->out = out;
        m->opaque = opaque;
        m->insns.elem = sizeof(HeldInsn);
        m->accesses.elem = sizeof(HeldAccess);
    }
    return m;
}

void etrace_data_match_free(ETraceDataMatch *m)
{
    if (m) {
        free(m->insns.buf);
        free(m->accesses.buf);
        free(m);
    }
}

/* lr.w and lr.d: the reservation an SC has to match */
static bool bits_is_lr(uint32_t bits)
{
    return (bits & 0x7f) == 0x2f && bits >> 27 == 2;
}

static bool dtype_fits(RISCVDataKind kind, unsigned dtype)
{
    switch (kind) {
    case RISCV_DATA_LOAD:
        return dtype == ETRACE_DTYPE_LOAD;
    case RISCV_DATA_STORE:
    case RISCV_DATA_SC:
        return dtype == ETRACE_DTYPE_STORE;
    case RISCV_DATA_AMO:
        return dtype >= ETRACE_DTYPE_AMO_SWAP && dtype <= ETRACE_DTYPE_AMO_MIN;
    case RISCV_DATA_CSR:
        return dtype >= ETRACE_DTYPE_CSR_RW && dtype <= ETRACE_DTYPE_CSR_RC;
    default:
        return false;
    }
}

/* The accesses insn reports (0: none), their kind and size */
static unsigned accesses_of(const ETraceDataMatch *m, uint32_t bits,
                            RISCVDataKind *kind, unsigned *size)
{
    unsigned count;

    *kind = riscv_insn_data_accesses(bits, m->xlen, m->isa, size, &count);
    return *kind == RISCV_DATA_NONE ? 0 : count;
}

/* Whether held access h is one of an instruction's of kind and size */
static bool access_fits(const HeldAccess *h, RISCVDataKind kind,
                        unsigned size)
{
    return dtype_fits(kind, h->a.dtype) &&
           (kind == RISCV_DATA_CSR || h->a.dsize == size);
}

/*
 * Hand insn on if what it needs is known: no access, or as many queued
 * as it reports.  Returns false if it has to wait.  Accesses that do not
 * fit their instruction: the first is dropped, the instruction goes on
 * without any.
 */
static bool try_emit(ETraceDataMatch *m, const ETraceDecInsn *insn,
                     uint32_t bits)
{
    ETraceDataAccess a[RISCV_DATA_ACCESSES_MAX];
    RISCVDataKind kind;
    unsigned size, n = accesses_of(m, bits, &kind, &size);
    HeldAccess *h;

    if (!n) {
        m->out(m->opaque, insn, bits, NULL, 0);
        return true;
    }
    if (!fifo_at(&m->accesses, n - 1)) {
        return false;
    }
    h = fifo_peek(&m->accesses);
    if (kind == RISCV_DATA_SC &&
        (h->a.dtype != ETRACE_DTYPE_STORE || h->a.dsize != size ||
         (!h->no_address && h->a.daddr != m->lr_addr))) {
        m->stats.failed_sc++;
        m->out(m->opaque, insn, bits, NULL, 0);
        return true;
    }
    for (unsigned i = 0; i < n; i++) {
        h = fifo_at(&m->accesses, i);
        if (!access_fits(h, kind, size)) {
            m->stats.mismatched++;
            m->out(m->opaque, insn, bits, NULL, 0);
            fifo_pop(&m->accesses);
            return true;
        }
        a[i] = h->a;
    }
    if (bits_is_lr(bits)) {
        m->lr_addr = a[0].daddr;
    }
    m->stats.matched += n;
    m->out(m->opaque, insn, bits, a, n);
    for (unsigned i = 0; i < n; i++) {
        fifo_pop(&m->accesses);
    }
    return true;
}

/* Instructions held back, in order, as far as their accesses are known. */
static void drain(ETraceDataMatch *m)
{
    HeldInsn *h;

    while ((h = fifo_peek(&m->insns)) && try_emit(m, &h->insn, h->bits)) {
        fifo_pop(&m->insns);
    }
}

void etrace_data_match_insn(ETraceDataMatch *m, const ETraceDecInsn *insn,
                            uint32_t bits)
{
    HeldInsn h = { .insn = *insn, .bits = bits };

    if (!fifo_peek(&m->insns) && try_emit(m, insn, bits)) {
        return;
    }
    fifo_push(&m->insns, &h);
}

void etrace_data_match_access(ETraceDataMatch *m, const ETraceDataAccess *a,
                              bool no_address)
{
    HeldAccess h = { .a = *a, .no_address = no_address };

    fifo_push(&m->accesses, &h);
    drain(m);
}

void etrace_data_match_flush(ETraceDataMatch *m)
{
    HeldInsn *h;

    drain(m);
    while ((h = fifo_peek(&m->insns))) {
        RISCVDataKind kind;
        unsigned size, n = accesses_of(m, h->bits, &kind, &size);

        if (kind == RISCV_DATA_SC) {
            m->stats.failed_sc++;
        } else if (n) {
            m->stats.missing++;
        }
        m->out(m->opaque, &h->insn, h->bits, NULL, 0);
        fifo_pop(&m->insns);
        drain(m);
    }
    m->stats.unmatched += m->accesses.len - m->accesses.head;
    m->accesses.head = m->accesses.len = 0;
}

const ETraceDataMatchStats *etrace_data_match_stats(const ETraceDataMatch *m)
{
    return &m->stats;
}

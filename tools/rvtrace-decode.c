/*
 * rvtrace-decode: rebuild the instructions a RISC-V hart executed from its
 * E-trace packets (the bytes of a trace sink) and the program image
 *
 * Layers: the input (a file or stdin, or a wrapped circular buffer read
 * from its oldest byte) -> framing (the encapsulation of chapter 6: header,
 * index, payload; zero bytes are padding) -> one decoder per source index
 * (hw-riscv-trace/codec/etrace-decoder.c) -> output (addresses, objdump-like
 * lines, JSON lines or a summary).  Memory does not grow with the trace.
 * `rvtrace-decode --help` is the manual.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "target/riscv/insn_class.h"
#include "etrace.h"
#include "etrace-decoder.h"
#include "etrace-dec-data.h"
#include "etrace-deframe.h"
#include "etrace-demux.h"
#include "ntrace-decoder.h"
#include "rvtrace-image.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

#define READ_CHUNK          (1u << 20)
#define OUT_BUFFER          (1u << 20)
#define DEFAULT_MAX_SOURCES 64
#define MAX_IMAGES          32
#define MAX_SRC_FILTER      64
#define DEFAULT_TOP         10

enum { EXIT_DECODE_ERROR = 1, EXIT_USAGE = 2 };

typedef enum OutputMode {
    OUT_ADDRESSES,
    OUT_DISASM,
    OUT_JSON,
    OUT_SUMMARY,
} OutputMode;

typedef struct Ctx Ctx;

/* One source index of the stream (one hart's encoder). */
typedef struct Source {
    Ctx *ctx;
    unsigned id;
    uint64_t pkt_offset;    /* of the packet being decoded */
    uint64_t pkt_number;
    /* summary */
    uint64_t insns, branches, taken, exceptions, interrupts;
    uint64_t syncs, gaps, gaps_no_image, errors;
    uint64_t priv_insns[8];     /* instructions per privilege */
    bool priv_known;        /* N-trace: an Ownership message said it */
    bool prev_branch;
    uint64_t prev_next;     /* address after the previous instruction */
    NTraceDecoder *ndec;    /* N-trace: this source's decoder */
    /* data trace: the accesses on their instructions, once it is on */
    ETraceDataMatch *dmatch;
    bool data_no_address;   /* the data packets' layout */
    bool data_no_value;
    bool data_filtered;     /* ... and not every access is in them */
    bool data_synced;       /* see data_flush_at() */
    uint64_t dfiltered;     /* accesses shown as events: filtered */
    uint64_t daccesses[16]; /* by dtype */
    uint64_t dbytes;        /* accessed */
    uint64_t dpackets, dpacket_bytes;
} Source;

typedef struct Output {
    FILE *f;
    char *buf;
    size_t len;
} Output;

struct Ctx {
    /* configuration */
    ETraceParams params;
    ETraceOptions options;
    uint64_t xtvec[4];
    uint64_t max_run;
    unsigned isa;           /* RISCV_INSN_ISA_*: --zcmp, --zcmt */
    uint64_t max_walk;
    OutputMode mode;
    bool disasm;            /* also in JSON lines */
    bool events;
    bool packets_shown;     /* --packets */
    bool keep_going;
    bool find_boundary;
    bool wrapped;
    uint64_t wrap_offset;
    unsigned max_sources;
    unsigned src_filter[MAX_SRC_FILTER];
    unsigned nsrc_filter;
    unsigned top;
    RVImage *image;
    unsigned nsymbol_files; /* --symbols */
    bool ntrace;            /* --format ntrace */
    /* state */
    Source **src;           /* by index; created when first seen */
    unsigned nsrc_seen;
    uint64_t offset;        /* stream offset of the next byte */
    uint64_t packets, padding, skipped_bytes, other_bytes;
    bool failed;
    bool stop;
    ETraceDeframer *deframer;
    ETraceDemux *demux;     /* a decoder per source */
    Output out;
    uint64_t *sym_count;    /* summary: per symbol, + 1 for "no symbol" */
    /*
     * The symbol of the last address looked up (index rv_image_symbols():
     * none) and the addresses [sym_lo, sym_hi) that have the same.
     */
    uint64_t sym_lo, sym_hi;
    size_t sym_cur;
    bool sym_valid;
};

/* --------------------------------------------------------------- output */

static void out_flush(Output *o)
{
    if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len) {
        fprintf(stderr, "rvtrace-decode: write error: %s\n",
                strerror(errno));
        exit(EXIT_USAGE);
    }
    o->len = 0;
}

/* Room for n more bytes. */
static inline char *out_room(Output *o, size_t n)
{
    if (unlikely(o->len + n > OUT_BUFFER)) {
        out_flush(o);
    }
    return o->buf + o->len;
}

static void out_str(Output *o, const char *s)
{
    size_t n = strlen(s);

    if (n > OUT_BUFFER / 2) {
        out_flush(o);
        fwrite(s, 1, n, o->f);
        return;
    }
    memcpy(out_room(o, n), s, n);
    o->len += n;
}

static void out_printf(Output *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void out_printf(Output *o, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    out_str(o, line);
}

/* v in hex, at least digits digits, no prefix: the hot path. */
static void out_hex(Output *o, uint64_t v, unsigned digits)
{
    char tmp[16];
    unsigned n = 0;
    char *p;

    do {
        tmp[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    while (n < digits && n < 16) {
        tmp[n++] = '0';
    }
    p = out_room(o, n);
    for (unsigned i = 0; i < n; i++) {
        p[i] = tmp[n - 1 - i];
    }
    o->len += n;
}

/* "0x<addr>\n": the default output, one per instruction. */
static inline void out_address_line(Output *o, uint64_t addr)
{
    /* two digits at a time: "000102...feff" */
    static char pairs[512];
    char *p = out_room(o, 20);
    unsigned n = addr ? (67 - __builtin_clzll(addr)) / 4 : 1;
    char *q = p + 2 + n;

    if (unlikely(!pairs[0])) {
        for (unsigned i = 0; i < 256; i++) {
            pairs[2 * i] = "0123456789abcdef"[i >> 4];
            pairs[2 * i + 1] = "0123456789abcdef"[i & 15];
        }
    }
    p[0] = '0';
    p[1] = 'x';
    *q = '\n';
    for (; q - 2 >= p + 2; q -= 2, addr >>= 8) {
        memcpy(q - 2, &pairs[2 * (addr & 0xff)], 2);
    }
    if (q > p + 2) {
        q[-1] = pairs[2 * (addr & 15) + 1];
    }
    o->len += 3 + n;
}

static void out_char(Output *o, char c)
{
    *out_room(o, 1) = c;
    o->len++;
}

/* A JSON string (quoted) with the characters JSON requires escaped. */
static void out_json_str(Output *o, const char *s)
{
    out_char(o, '"');
    for (; *s; s++) {
        unsigned char c = *s;

        if (c == '"' || c == '\\') {
            out_char(o, '\\');
            out_char(o, c);
        } else if (c < 0x20) {
            out_printf(o, "\\u%04x", c);
        } else {
            out_char(o, c);
        }
    }
    out_char(o, '"');
}

static const char *priv_name(unsigned priv)
{
    static const char *const names[8] = {
        "U", "S", "2?", "M", "VU", "VS", "6?", "7?",
    };

    return names[priv & 7];
}

/* ---------------------------------------------------------- instructions */

static bool insn_bits(Ctx *c, uint64_t addr, unsigned len, uint32_t *bits)
{
    uint16_t lo, hi = 0;

    if (!rv_image_read_parcel(c->image, addr, &lo) ||
        (len == 4 && !rv_image_read_parcel(c->image, addr + 2, &hi))) {
        return false;
    }
    *bits = lo | (uint32_t)hi << 16;
    return true;
}

/*
 * The symbol holding addr (rv_image_symbol_holding(): inside its size,
 * or before the next one in the same segment) or NULL, cached while the
 * walk stays in the range with the same answer.
 */
static const RVSymbol *symbol_of(Ctx *c, uint64_t addr, size_t *index)
{
    if (!c->sym_valid || addr < c->sym_lo || addr >= c->sym_hi) {
        rv_image_symbol_holding(c->image, addr, &c->sym_cur, &c->sym_lo,
                                &c->sym_hi);
        c->sym_valid = true;
    }
    *index = c->sym_cur;
    return rv_image_symbol_at(c->image, c->sym_cur);
}

/*
 * The index of the symbol holding addr (rv_image_symbols(): none): once
 * per instruction in the summary, so the cached range is tested here.
 */
static inline size_t symbol_index(Ctx *c, uint64_t addr)
{
    size_t sym;

    if (likely(c->sym_valid && addr >= c->sym_lo && addr < c->sym_hi)) {
        return c->sym_cur;
    }
    symbol_of(c, addr, &sym);
    return sym;
}

static void count_insn(Source *s, uint64_t addr, unsigned priv, unsigned len,
                       bool branch)
{
    Ctx *c = s->ctx;

    s->insns++;
    s->priv_insns[priv & 7]++;
    s->taken += s->prev_branch && addr != s->prev_next;
    s->prev_branch = branch;
    s->branches += branch;
    s->prev_next = addr + len;
    c->sym_count[symbol_index(c, addr)]++;
}

/* Lines start with "[ID] " when the stream has source indexes. */
static inline bool src_prefixed(const Ctx *c)
{
    return c->params.src_bits || c->nsrc_seen > 1;
}

static inline void out_src_prefix(Source *s)
{
    if (unlikely(src_prefixed(s->ctx))) {
        out_char(&s->ctx->out, '[');
        out_hex(&s->ctx->out, s->id, 1);
        out_str(&s->ctx->out, "] ");
    }
}

static void out_symbol(Ctx *c, uint64_t addr)
{
    size_t sym;
    const RVSymbol *s = symbol_of(c, addr, &sym);

    if (!s) {
        return;
    }
    out_str(&c->out, s->name);
    if (addr != s->addr) {
        out_str(&c->out, "+0x");
        out_hex(&c->out, addr - s->addr, 1);
    }
}

/*
 * One key=value list for both output styles: JSON adds quotes, the text
 * form is "# TYPE key=value ...".  Hex values are strings in JSON.
 */
typedef struct Fields {
    Output *o;
    bool json;
} Fields;

static void field_sep(Fields *f, const char *key)
{
    out_str(f->o, f->json ? ",\"" : " ");
    out_str(f->o, key);
    out_str(f->o, f->json ? "\":" : "=");
}

static void field_hex(Fields *f, const char *key, uint64_t v)
{
    field_sep(f, key);
    out_str(f->o, f->json ? "\"0x" : "0x");
    out_hex(f->o, v, 1);
    if (f->json) {
        out_char(f->o, '"');
    }
}

static void field_u64(Fields *f, const char *key, uint64_t v)
{
    field_sep(f, key);
    out_printf(f->o, "%" PRIu64, v);
}

static void field_str(Fields *f, const char *key, const char *v)
{
    field_sep(f, key);
    if (f->json) {
        out_json_str(f->o, v);
    } else {
        out_str(f->o, v);
    }
}

static const char *dtype_name(unsigned dtype)
{
    static const char *const names[16] = {
        "load", "store", "?", "?", "csrrw", "csrrs", "csrrc", "?",
        "amoswap", "amoadd", "amoand", "amoor", "amoxor", "amomax",
        "amomin", "?",
    };

    return names[dtype & 15];
}

/*
 * The access on its instruction's line: "  [0x80012340] = 0x1234", for a
 * store "  [0x80012340] <- 0x1234"; a CSR "  [csr 0x300] = 0x8 (op 0x8)",
 * an AMO with its operand.  A part the packets leave out is "?".
 */
static void out_data_text(Source *s, const ETraceDataAccess *a)
{
    Output *o = &s->ctx->out;
    bool csr = a->dtype >= ETRACE_DTYPE_CSR_RW &&
               a->dtype <= ETRACE_DTYPE_CSR_RC;
    out_str(o, csr ? "  [csr 0x" : "  [");
    if (csr || !s->data_no_address) {
        out_str(o, csr ? "" : "0x");
        out_hex(o, a->daddr, 1);
    } else {
        out_char(o, '?');
    }
    out_str(o, a->dtype == ETRACE_DTYPE_STORE ? "] <- " : "] = ");
    if (s->data_no_value) {
        out_char(o, '?');
    } else {
        out_str(o, "0x");
        out_hex(o, a->data, 1);
        if (a->dtype >= ETRACE_DTYPE_CSR_RW) {
            out_str(o, " (op 0x");
            out_hex(o, a->operand, 1);
            out_char(o, ')');
        }
    }
}

/* One access's object: {"dtype":...} */
static void out_data_json(Source *s, const ETraceDataAccess *a)
{
    Fields f = { .o = &s->ctx->out, .json = true };

    out_str(f.o, "{\"dtype\":");
    out_json_str(f.o, dtype_name(a->dtype));
    field_u64(&f, "size", 1u << a->dsize);
    if (!s->data_no_address || a->dtype >= ETRACE_DTYPE_CSR_RW) {
        field_hex(&f, "addr", a->daddr);
    }
    if (!s->data_no_value) {
        field_hex(&f, "value", a->data);
        if (a->dtype >= ETRACE_DTYPE_CSR_RW) {
            field_hex(&f, "operand", a->operand);
        }
    }
    out_char(f.o, '}');
}

/* "80000004 M <_start+0x4>  f14022f3  csrr t0,mhartid" */
static void out_disasm_line(Source *s, uint64_t addr, unsigned priv,
                            unsigned len, const ETraceDataAccess *a,
                            unsigned n)
{
    Ctx *c = s->ctx;
    const char *text = rv_image_disasm(c->image, addr);
    uint32_t bits;

    out_src_prefix(s);
    out_hex(&c->out, addr, c->params.iaddress_width_p / 4);
    out_printf(&c->out, " %-2s <", priv_name(priv));
    out_symbol(c, addr);
    out_str(&c->out, ">  ");
    if (insn_bits(c, addr, len, &bits)) {
        out_hex(&c->out, bits, len * 2);
    }
    out_str(&c->out, len == 2 ? "      " : "  ");
    out_str(&c->out, text ? text : "");
    for (unsigned i = 0; i < n; i++) {
        out_data_text(s, &a[i]);
    }
    out_char(&c->out, '\n');
}

/*
 * "data": the access's object, or for an instruction of several (Zcmp's
 * push and pop) an array of them in the order it made them
 */
static void out_json_insn(Source *s, uint64_t addr, unsigned priv,
                          unsigned len, const ETraceDataAccess *a,
                          unsigned n)
{
    Ctx *c = s->ctx;
    uint32_t bits;

    out_printf(&c->out, "{\"type\":\"insn\",\"src\":%u,\"addr\":\"0x", s->id);
    out_hex(&c->out, addr, 1);
    out_printf(&c->out, "\",\"priv\":%u,\"len\":%u", priv, len);
    if (c->disasm) {
        const char *text = rv_image_disasm(c->image, addr);

        char sym[256] = "";
        size_t index;
        const RVSymbol *sy = symbol_of(c, addr, &index);

        if (sy) {
            snprintf(sym, sizeof(sym), addr == sy->addr ? "%s" :
                     "%s+0x%" PRIx64, sy->name, addr - sy->addr);
        }
        /* names come from the ELF file: escaped like any string */
        out_str(&c->out, ",\"sym\":");
        out_json_str(&c->out, sym);
        if (insn_bits(c, addr, len, &bits)) {
            out_str(&c->out, ",\"bits\":\"0x");
            out_hex(&c->out, bits, len * 2);
            out_char(&c->out, '"');
        }
        if (text) {
            out_str(&c->out, ",\"asm\":");
            out_json_str(&c->out, text);
        }
    }
    if (n) {
        out_str(&c->out, n > 1 ? ",\"data\":[" : ",\"data\":");
        for (unsigned i = 0; i < n; i++) {
            if (i) {
                out_char(&c->out, ',');
            }
            out_data_json(s, &a[i]);
        }
        if (n > 1) {
            out_char(&c->out, ']');
        }
    }
    out_str(&c->out, "}\n");
}

/* One retired instruction in the output mode, with its n accesses. */
static void out_insn(Source *s, const ETraceDecInsn *insn,
                     const ETraceDataAccess *a, unsigned n)
{
    Output *o = &s->ctx->out;

    switch (s->ctx->mode) {
    case OUT_ADDRESSES:
        out_src_prefix(s);
        out_address_line(o, insn->addr);
        break;
    case OUT_DISASM:
        out_disasm_line(s, insn->addr, insn->privilege, insn->len, a, n);
        break;
    case OUT_JSON:
        out_json_insn(s, insn->addr, insn->privilege, insn->len, a, n);
        break;
    case OUT_SUMMARY:
        count_insn(s, insn->addr, insn->privilege, insn->len, insn->branch);
        for (unsigned i = 0; i < n; i++) {
            s->daccesses[a[i].dtype & 15]++;
            s->dbytes += 1u << a[i].dsize;
        }
        break;
    }
}

/* ETraceDataInsnFn: an instruction paired with its accesses. */
static void on_data_insn(void *opaque, const ETraceDecInsn *insn,
                         uint32_t bits, const ETraceDataAccess *a,
                         unsigned n)
{
    (void)bits;     /* the matcher's: the output reads them itself */
    out_insn(opaque, insn, a, n);
}

/* ETraceInsnFn: one retired instruction. */
static void on_insn(void *opaque, const ETraceDecInsn *insn)
{
    Source *s = opaque;
    uint32_t bits = 0;

    if (s->dmatch) {
        insn_bits(s->ctx, insn->addr, insn->len, &bits);
        etrace_data_match_insn(s->dmatch, insn, bits);
        return;
    }
    out_insn(s, insn, NULL, 0);
}

/*
 * ETraceInsnRunFn: straight-line instructions, none a branch.  The
 * default output and the summary take them in one go.
 */
static void on_insn_run(void *opaque, uint64_t addr, unsigned priv,
                        unsigned n, uint64_t lens4)
{
    Source *s = opaque;
    Ctx *c = s->ctx;
    uint64_t end = addr;

    for (unsigned i = 0; i < n; i++) {
        end += lens4 >> i & 1 ? 4 : 2;
    }
    if (s->dmatch) {
        etrace_decoder_run_insns(on_insn, opaque, addr, priv, n, lens4);
        return;
    }
    if (c->mode == OUT_SUMMARY && c->sym_valid && addr >= c->sym_lo &&
        end <= c->sym_hi) {
        s->insns += n;
        s->priv_insns[priv & 7] += n;
        s->prev_branch = false;
        s->prev_next = end;
        c->sym_count[c->sym_cur] += n;
        return;
    }
    if (c->mode == OUT_ADDRESSES && !src_prefixed(c)) {
        for (unsigned i = 0; i < n; i++) {
            out_address_line(&c->out, addr);
            addr += lens4 >> i & 1 ? 4 : 2;
        }
        return;
    }
    etrace_decoder_run_insns(on_insn, opaque, addr, priv, n, lens4);
}

/* ---------------------------------------------------------------- events */

static const char *event_name(ETraceDecEventType t)
{
    static const char *const names[] = {
        [ETRACE_DEC_SUPPORT] = "support", [ETRACE_DEC_SYNC] = "sync",
        [ETRACE_DEC_TRAP] = "trap", [ETRACE_DEC_CONTEXT] = "context",
        [ETRACE_DEC_NOTIFY] = "notify", [ETRACE_DEC_GAP] = "gap",
        [ETRACE_DEC_END] = "end", [ETRACE_DEC_ERROR] = "error",
        [ETRACE_DEC_DATA] = "data",
    };

    return t < sizeof(names) / sizeof(names[0]) && names[t] ? names[t] :
           "event";
}

static const char *qual_name(ETraceQualStatus q)
{
    static const char *const names[] = {
        "no_change", "ended_rep", "trace_lost", "ended_upd",
    };

    return names[q & 3];
}

static const char *gap_reason_name(ETraceGapReason r)
{
    switch (r) {
    case ETRACE_GAP_QUALIFICATION:
        return "qualification";
    case ETRACE_GAP_TRACE_LOST:
        return "trace_lost";
    case ETRACE_GAP_NO_IMAGE:
        return "no-image";
    }
    return "?";
}

/* The options as the support packet's bits (etrace.h). */
static uint32_t options_bits(const Ctx *c, const ETraceOptions *o)
{
    return etrace_options_pack(&c->params, o);
}

static void event_fields(Source *s, Fields *f, const ETraceDecEvent *ev)
{
    switch (ev->type) {
    case ETRACE_DEC_TRAP:
        field_str(f, "kind", ev->interrupt ? "interrupt" : "exception");
        if (!s->ctx->ntrace) {      /* N-trace sends no cause */
            field_u64(f, "cause", ev->cause);
            field_hex(f, "tvalepc", ev->tvalepc);
        }
        if (ev->trap_from_valid) {
            field_hex(f, "from", ev->trap_from);
        }
        field_hex(f, ev->handler_valid ? "handler" : "epc", ev->address);
        field_u64(f, "priv", ev->privilege);
        break;
    case ETRACE_DEC_SYNC:
    case ETRACE_DEC_NOTIFY:
        field_hex(f, "addr", ev->address);
        field_u64(f, "priv", ev->privilege);
        break;
    case ETRACE_DEC_CONTEXT:
        field_hex(f, "context", ev->context);
        field_u64(f, "priv", ev->privilege);
        break;
    case ETRACE_DEC_GAP:
        field_str(f, "reason", gap_reason_name(ev->gap_reason));
        if (ev->gap_reason == ETRACE_GAP_NO_IMAGE) {
            /* the address no image holds, after the last instruction */
            field_hex(f, "addr", ev->gap_addr);
            if (ev->last_valid) {
                field_hex(f, "last", ev->address);
            }
            break;
        }
        /* fall through */
    case ETRACE_DEC_SUPPORT:
    case ETRACE_DEC_END:
        field_u64(f, "enable", ev->enable);
        field_str(f, "qual", qual_name(ev->qual_status));
        field_hex(f, "options", options_bits(s->ctx, &ev->options));
        if (ev->type != ETRACE_DEC_SUPPORT && ev->last_valid) {
            field_hex(f, "last", ev->address);
        }
        break;
    case ETRACE_DEC_ERROR:
        field_str(f, "message", ev->error ? ev->error : "?");
        if (ev->last_valid) {
            field_hex(f, "after", ev->address);
        }
        break;
    case ETRACE_DEC_DATA:
        field_str(f, "dtype", dtype_name(ev->data.dtype));
        field_u64(f, "size", 1u << ev->data.dsize);
        if (!ev->options.data_no_address ||
            ev->data.dtype >= ETRACE_DTYPE_CSR_RW) {
            field_hex(f, "addr", ev->data.daddr);
        }
        if (!ev->options.data_no_value) {
            field_hex(f, "value", ev->data.data);
            if (ev->data.dtype >= ETRACE_DTYPE_CSR_RW) {
                field_hex(f, "operand", ev->data.operand);
            }
        }
        break;
    }
    field_u64(f, "offset", s->pkt_offset);
    field_u64(f, "packet", s->pkt_number);
}

static void print_event(Source *s, const ETraceDecEvent *ev)
{
    Ctx *c = s->ctx;
    Fields f = { .o = &c->out, .json = c->mode == OUT_JSON };

    if (f.json) {
        out_printf(f.o, "{\"type\":\"%s\",\"src\":%u", event_name(ev->type),
                   s->id);
    } else {
        out_str(f.o, "# ");
        out_src_prefix(s);
        out_str(f.o, event_name(ev->type));
    }
    event_fields(s, &f, ev);
    out_str(f.o, f.json ? "}\n" : "\n");
}

/*
 * On standard error, with the last instruction decoded before it (and
 * its symbol): where the trace and the image stopped agreeing.
 */
static void report_error(Source *s, const ETraceDecEvent *ev)
{
    Ctx *c = s->ctx;
    const char *msg = ev->error ? ev->error : "bad trace";

    s->errors++;
    c->failed = true;
    out_flush(&c->out);
    fprintf(stderr, "rvtrace-decode: error: source %u, byte offset %" PRIu64
            ", packet %" PRIu64 ": %s", s->id, s->pkt_offset,
            s->pkt_number, msg);
    if (ev->last_valid) {
        size_t index;
        const RVSymbol *sym = symbol_of(c, ev->address, &index);

        fprintf(stderr, " (after 0x%" PRIx64, ev->address);
        if (sym) {
            fprintf(stderr, " <%s+0x%" PRIx64 ">", sym->name,
                    ev->address - sym->addr);
        }
        fprintf(stderr, ")");
    }
    fprintf(stderr, "\n");
    if (!c->keep_going) {
        c->stop = true;
    }
}

/*
 * Where the accesses of every instruction before have come
 * (etrace-dec-data.h): a gap, the end, an error, and the first sync or
 * trap after them, which also drops the accesses of instructions the
 * decoder did not follow.  Not at a resync: an encoder may send it at a
 * block's last instruction, before the accesses of that block.
 */
static bool data_flush_at(Source *s, ETraceDecEventType type)
{
    bool was_synced = s->data_synced;

    switch (type) {
    case ETRACE_DEC_SYNC:
    case ETRACE_DEC_TRAP:
        s->data_synced = true;
        return !was_synced;
    case ETRACE_DEC_GAP:
    case ETRACE_DEC_END:
    case ETRACE_DEC_ERROR:
        s->data_synced = false;
        return true;
    default:
        return false;
    }
}

/* A support packet says data trace is on: pair accesses from now on. */
static void start_data(Source *s, const ETraceOptions *o)
{
    Ctx *c = s->ctx;

    s->data_no_address = o->data_no_address;
    s->data_no_value = o->data_no_value;
    s->data_filtered = o->data_filtered;
    if (!s->dmatch && !s->data_filtered) {
        s->dmatch = etrace_data_match_new(c->params.iaddress_width_p,
                                          c->isa, on_data_insn, s);
        if (!s->dmatch) {
            fprintf(stderr, "rvtrace-decode: out of memory\n");
            exit(EXIT_FAILURE);
        }
    }
}

static void on_data_event(Source *s, const ETraceDecEvent *ev)
{
    if (!s->dmatch && !s->data_filtered) {
        start_data(s, &ev->options);
    }
    if (s->dmatch) {
        /* shown on its instruction's line, not as an event */
        etrace_data_match_access(s->dmatch, &ev->data, s->data_no_address);
        return;
    }
    /*
     * Data filters leave accesses out: which instruction made one is
     * unknown.  They are shown as events, where their packets are.
     */
    s->daccesses[ev->data.dtype & 15]++;
    s->dbytes += 1u << ev->data.dsize;
    s->dfiltered++;
    if (s->ctx->events && s->ctx->mode != OUT_SUMMARY) {
        print_event(s, ev);
    }
}

/* ETraceEventFn */
static void on_event(void *opaque, const ETraceDecEvent *ev)
{
    Source *s = opaque;
    Ctx *c = s->ctx;

    if (c->ntrace) {
        s->pkt_offset = ev->offset;
        s->pkt_number = ev->packet;
    }
    if (ev->type == ETRACE_DEC_DATA) {
        on_data_event(s, ev);
        return;
    }
    if (s->dmatch && data_flush_at(s, ev->type)) {
        /* the accesses of the instructions before it have come */
        etrace_data_match_flush(s->dmatch);
    }
    if (ev->options.data && (ev->type == ETRACE_DEC_SUPPORT ||
                             (!s->dmatch && !s->data_filtered))) {
        /* a support packet, or a sync after data packets (wrapped) */
        start_data(s, &ev->options);
    }
    switch (ev->type) {
    case ETRACE_DEC_TRAP:
        if (ev->interrupt) {
            s->interrupts++;
        } else {
            s->exceptions++;
        }
        break;
    case ETRACE_DEC_SYNC:
        s->syncs++;
        break;
    case ETRACE_DEC_CONTEXT:
        s->priv_known = true;
        break;
    case ETRACE_DEC_GAP:
        if (ev->gap_reason == ETRACE_GAP_NO_IMAGE) {
            s->gaps_no_image++;
        } else {
            s->gaps++;
        }
        break;
    default:
        break;
    }
    s->prev_branch = false;
    if (c->events && c->mode != OUT_SUMMARY) {
        print_event(s, ev);
    }
    if (ev->type == ETRACE_DEC_ERROR) {
        report_error(s, ev);
    }
}

/* --------------------------------------------------------------- sources */

/*
 * The ETraceReadParcelFn gets the source as opaque: read through the
 * context's image.
 */
static bool read_parcel(void *opaque, uint64_t addr, uint16_t *parcel)
{
    Source *s = opaque;

    return rv_image_read_parcel(s->ctx->image, addr, parcel);
}

static bool wanted_source(const Ctx *c, unsigned id)
{
    if (!c->nsrc_filter) {
        return true;
    }
    for (unsigned i = 0; i < c->nsrc_filter; i++) {
        if (c->src_filter[i] == id) {
            return true;
        }
    }
    return false;
}

/*
 * ETraceDemuxOps: source id appears.  It gets a decoder unless it is
 * filtered out or one too many.
 */
static bool demux_source(void *opaque, unsigned id, ETraceDecoderConfig *cfg)
{
    Ctx *c = opaque;
    Source *s;

    if (!wanted_source(c, id)) {
        return false;
    }
    if (c->nsrc_seen == c->max_sources) {
        if (!c->failed) {
            fprintf(stderr, "rvtrace-decode: error: byte offset %" PRIu64
                    ": more than %u sources (--max-sources)\n", c->offset,
                    c->max_sources);
        }
        c->failed = true;
        return false;
    }
    s = calloc(1, sizeof(*s));
    if (!s) {
        return false;
    }
    s->ctx = c;
    s->id = id;
    c->src[id] = s;
    c->nsrc_seen++;
    cfg->read_parcel = read_parcel;
    cfg->insn = on_insn;
    cfg->insn_run = on_insn_run;
    cfg->event = on_event;
    cfg->max_straight_run = c->max_run;
    cfg->max_packet_walk = c->max_walk;
    cfg->isa = c->isa;
    memcpy(cfg->xtvec, c->xtvec, sizeof(cfg->xtvec));
    cfg->opaque = s;
    return true;
}

/* ---------------------------------------------------------------- framing */

/* Formats 0 to 2: branches and the address with its flags. */
static void print_te_inst_fields(Ctx *c, Fields *f, const ETracePacket *pkt)
{
    field_u64(f, "branches", pkt->branches);
    field_hex(f, "branch_map", pkt->branch_map);
    if (pkt->format == 0 && pkt->subformat == 0) {
        field_u64(f, "branch_count", pkt->branch_count);
        field_u64(f, "branch_fmt", pkt->branch_fmt);
    }
    if (pkt->format == 0 && pkt->subformat == 1) {
        field_u64(f, "index", pkt->index);
    }
    if (pkt->has_address) {
        bool notify, updiscon, irreport;

        etrace_packet_get_flags(&c->params, pkt, &notify, &updiscon,
                                &irreport);
        field_hex(f, "address", pkt->address);
        field_u64(f, "notify", notify);
        field_u64(f, "updiscon", updiscon);
        field_u64(f, "irreport", irreport);
        field_u64(f, "irdepth", pkt->irdepth);
    }
}

/* --packets: the fields of a packet, before it is decoded. */
static void print_packet(Source *s, const ETracePacket *pkt, unsigned n)
{
    Ctx *c = s->ctx;
    Fields f = { .o = &c->out, .json = c->mode == OUT_JSON };

    if (f.json) {
        out_printf(f.o, "{\"type\":\"packet\",\"src\":%u", s->id);
    } else {
        out_str(f.o, "# ");
        out_src_prefix(s);
        out_str(f.o, "packet");
    }
    field_u64(&f, "offset", c->offset);
    field_u64(&f, "packet", c->packets);
    field_u64(&f, "bytes", n);
    if (pkt->data) {
        field_str(&f, "kind", "data");
        field_u64(&f, "format", pkt->dp.format);
        field_u64(&f, "subtype", pkt->dp.subtype);
        field_u64(&f, "size", pkt->dp.size);
        field_u64(&f, "diff", pkt->dp.diff);
        field_hex(&f, "data", pkt->dp.data);
        field_hex(&f, "operand", pkt->dp.operand);
        field_hex(&f, "address", pkt->dp.address);
        field_hex(&f, "csr", pkt->dp.csr);
        out_str(f.o, f.json ? "}\n" : "\n");
        return;
    }
    field_u64(&f, "format", pkt->format);
    if (pkt->format == 3 || pkt->format == 0) {
        field_u64(&f, "subformat", pkt->subformat);
    }
    if (pkt->format == 3 && pkt->subformat == 3) {
        field_u64(&f, "enable", pkt->enable);
        field_str(&f, "qual", qual_name(pkt->qual_status));
        field_hex(&f, "options", pkt->options);
    } else if (pkt->format == 3) {
        field_u64(&f, "branch", pkt->branch);
        field_u64(&f, "priv", pkt->privilege);
        field_hex(&f, "context", pkt->context);
        if (pkt->subformat == 1) {
            field_u64(&f, "cause", pkt->ecause);
            field_u64(&f, "interrupt", pkt->interrupt);
            field_u64(&f, "thaddr", pkt->thaddr);
            field_hex(&f, "tvalepc", pkt->tvalepc);
        }
        field_hex(&f, "address", pkt->address);
    } else {
        print_te_inst_fields(c, &f, pkt);
    }
    out_str(f.o, f.json ? "}\n" : "\n");
}

/* Source id, now at frame f (its messages give the frame's place). */
static Source *source_at(Ctx *c, unsigned id, const ETraceFrame *f)
{
    Source *s = c->src[id];

    s->pkt_offset = f->offset;
    s->pkt_number = f->number;
    return s;
}

/* ETraceDemuxOps: a packet of a source, before its decoder gets it. */
static void demux_packet(void *opaque, unsigned id, const ETraceFrame *f,
                         const ETracePacket *pkt)
{
    Ctx *c = opaque;
    Source *s = source_at(c, id, f);

    if (pkt->data) {
        s->dpackets++;
        s->dpacket_bytes += f->len;
    }
    if (c->packets_shown) {
        print_packet(s, pkt, f->len);
    }
}

/* ETraceDemuxOps: a frame that is not a packet; its decoder restarts. */
static void demux_bad_packet(void *opaque, unsigned id, const ETraceFrame *f,
                             const char *err)
{
    ETraceDecEvent ev = { .type = ETRACE_DEC_ERROR, .error = err };

    report_error(source_at(opaque, id, f), &ev);
}

/* ETraceDeframerOps: one whole frame, to its source's decoder. */
static void on_frame(void *opaque, const ETraceFrame *f)
{
    Ctx *c = opaque;

    c->offset = f->offset;
    c->packets = f->number;
    if (!etrace_demux_frame(c->demux, f)) {
        fprintf(stderr, "rvtrace-decode: the decoder does not support "
                "these parameters\n");
        exit(EXIT_USAGE);
    }
    if (c->stop) {
        etrace_deframer_stop(c->deframer);
    }
}

/*
 * ETraceDeframerOps: a byte where a header is due starts no frame.  With
 * --keep-going the deframer finds the framing again after it.
 */
static void on_lost(void *opaque, uint64_t offset, uint64_t number,
                    uint8_t header)
{
    Ctx *c = opaque;

    c->failed = true;
    out_flush(&c->out);
    fprintf(stderr, "rvtrace-decode: error: byte offset %" PRIu64 ", packet "
            "%" PRIu64 ": bad packet header 0x%02x\n", offset, number,
            header);
    etrace_demux_restart_all(c->demux);
}

/* ------------------------------------------------------------------ input */

/* The stream: a file read from its start, or a wrapped buffer rotated. */
typedef struct Input {
    FILE *f;
    uint64_t size;          /* wrapped: the buffer size */
    uint64_t pos;           /* wrapped: bytes read so far */
    uint64_t start;         /* wrapped: the oldest byte */
} Input;

static size_t input_read(Ctx *c, Input *in, uint8_t *buf, size_t cap)
{
    uint64_t at, n;

    if (!c->wrapped) {
        return fread(buf, 1, cap, in->f);
    }
    if (in->pos == in->size) {
        return 0;
    }
    at = (in->start + in->pos) % in->size;
    n = in->size - at;
    if (n > in->size - in->pos) {
        n = in->size - in->pos;
    }
    if (n > cap) {
        n = cap;
    }
    if (fseeko(in->f, (off_t)at, SEEK_SET) ||
        fread(buf, 1, n, in->f) != n) {
        return 0;
    }
    in->pos += n;
    return n;
}

static bool input_open(Ctx *c, const char *path, Input *in)
{
    memset(in, 0, sizeof(*in));
    struct stat st;

    in->f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!in->f) {
        fprintf(stderr, "rvtrace-decode: %s: %s\n", path, strerror(errno));
        return false;
    }
    if (!fstat(fileno(in->f), &st) && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "rvtrace-decode: %s: %s\n", path, strerror(EISDIR));
        fclose(in->f);
        return false;
    }
    if (!c->wrapped) {
        return true;
    }
    if (in->f == stdin || fseeko(in->f, 0, SEEK_END)) {
        fprintf(stderr, "rvtrace-decode: --wrap needs a seekable file\n");
        return false;
    }
    in->size = ftello(in->f);
    if (c->wrap_offset >= in->size) {
        fprintf(stderr, "rvtrace-decode: --wrap %" PRIu64 " is not inside "
                "the %" PRIu64 "-byte buffer\n", c->wrap_offset, in->size);
        return false;
    }
    in->start = c->wrap_offset;
    return true;
}

/* A read error, or a stream without a single packet, is a failure. */
static void check_input_read(Ctx *c, Input *in)
{
    if (ferror(in->f)) {
        c->failed = true;
        fprintf(stderr, "rvtrace-decode: error: reading the trace: %s\n",
                strerror(errno));
    } else if (!c->packets && !c->failed) {
        c->failed = true;
        fprintf(stderr, "rvtrace-decode: error: no packet in the trace (%"
                PRIu64 " bytes)\n", c->offset);
    }
}

/* The whole stream through the deframer, READ_CHUNK bytes at a time. */
/* N-trace: a source and its decoder, which skips other sources. */
static bool ntrace_source(Ctx *c, unsigned id)
{
    NTraceDecoderConfig cfg = {
        .params = {
            .xlen = c->params.iaddress_width_p,
            .src_bits = c->params.src_bits,
        },
        .implicit_return = c->options.implicit_return != ETRACE_IR_OFF,
        .isa = c->isa,
        .src = id, .find_start = c->find_boundary,
        .read_parcel = read_parcel, .insn = on_insn, .event = on_event,
        .max_walk = c->max_walk,
    };
    Source *s;

    if (id >> c->params.src_bits) {
        fprintf(stderr, "rvtrace-decode: --src %u does not fit --src-bits\n",
                id);
        exit(EXIT_USAGE);
    }
    if (c->src[id]) {
        return true;            /* named twice */
    }
    s = calloc(1, sizeof(*s));
    if (!s) {
        return false;
    }
    s->ctx = c;
    s->id = id;
    cfg.opaque = s;
    s->ndec = ntrace_decoder_new(&cfg);
    c->src[id] = s;
    c->nsrc_seen++;
    return s->ndec != NULL;
}

/*
 * N-trace: a decoder per source (those of --src, else every SRC that
 * --src-bits and --max-sources allow), each given every message in
 * stream order, so that the sources' lines interleave as their messages
 * do.  Sources without a message are dropped afterwards.
 */
static void decode_ntrace(Ctx *c, Input *in)
{
    unsigned all = 1u << c->params.src_bits;
    unsigned n = c->nsrc_filter ? c->nsrc_filter :
                 all < c->max_sources ? all : c->max_sources;
    uint8_t *buf = malloc(READ_CHUNK);
    NTraceDecoder **decs = calloc(n, sizeof(*decs));
    unsigned ndecs = 0;
    bool ok = buf && decs;
    size_t got;

    for (unsigned i = 0; i < n; i++) {
        ok &= ntrace_source(c, c->nsrc_filter ? c->src_filter[i] : i);
    }
    if (!ok) {
        fprintf(stderr, "rvtrace-decode: out of memory\n");
        exit(EXIT_USAGE);
    }
    /* the decoders once, not a scan of every SRC per message */
    for (unsigned id = 0; id < all; id++) {
        if (c->src[id]) {
            decs[ndecs++] = c->src[id]->ndec;
        }
    }
    while (!c->stop && (got = input_read(c, in, buf, READ_CHUNK)) > 0) {
        size_t start = 0;

        if (ndecs == 1) {
            ntrace_decoder_feed(decs[0], buf, got);     /* the chunk whole */
            continue;
        }
        for (size_t i = 0; i < got && !c->stop; i++) {
            if ((buf[i] & 3) != NTRACE_MSEO_END_MESSAGE && i + 1 < got) {
                continue;
            }
            for (unsigned k = 0; k < ndecs; k++) {
                ntrace_decoder_feed(decs[k], buf + start, i + 1 - start);
            }
            start = i + 1;
        }
    }
    free(decs);
    c->nsrc_seen = 0;
    for (unsigned id = 0; id < all; id++) {
        Source *s = c->src[id];
        NTraceDecStats st;

        if (!s) {
            continue;
        }
        if (!c->stop) {
            ntrace_decoder_finish(s->ndec);
        }
        ntrace_decoder_stats(s->ndec, &st);
        c->offset = st.bytes;
        c->skipped_bytes = st.skipped;
        c->packets += st.messages;
        if (st.messages || c->nsrc_filter) {
            c->nsrc_seen++;
        } else {
            ntrace_decoder_free(s->ndec);
            free(s);
            c->src[id] = NULL;
        }
    }
    free(buf);
    check_input_read(c, in);
}

static void decode_stream(Ctx *c, Input *in)
{
    static const ETraceDeframerOps ops = {
        .frame = on_frame, .lost = on_lost,
    };
    static const ETraceDemuxOps demux_ops = {
        .source = demux_source, .packet = demux_packet,
        .bad_packet = demux_bad_packet,
    };
    unsigned flags = (c->find_boundary ? ETRACE_DEFRAME_SEARCH : 0) |
                     (c->keep_going ? ETRACE_DEFRAME_RESYNC : 0);
    const ETraceDeframeStats *st;
    ETraceDeframeEnd end;
    uint8_t *buf;
    size_t got;

    if (c->ntrace) {
        decode_ntrace(c, in);
        return;
    }
    buf = malloc(READ_CHUNK);
    c->deframer = etrace_deframer_new(&c->params, &c->options, flags, &ops,
                                      c);
    c->demux = etrace_demux_new(&c->params, &c->options, &demux_ops, c);
    if (!buf || !c->deframer || !c->demux) {
        fprintf(stderr, "rvtrace-decode: out of memory\n");
        exit(EXIT_USAGE);
    }
    while (!etrace_deframer_stopped(c->deframer) &&
           (got = input_read(c, in, buf, READ_CHUNK)) > 0) {
        etrace_deframer_feed(c->deframer, buf, got);
    }
    end = etrace_deframer_finish(c->deframer);
    st = etrace_deframer_stats(c->deframer);
    c->offset = st->offset;
    c->packets = st->frames;
    c->padding = st->padding;
    c->skipped_bytes = st->skipped;
    c->other_bytes = etrace_demux_other_bytes(c->demux);
    if (end == ETRACE_DEFRAME_END_NO_BOUNDARY) {
        c->failed = true;
        fprintf(stderr, "rvtrace-decode: error: byte offset %" PRIu64
                ": no packet boundary found\n", c->offset);
    } else if (end == ETRACE_DEFRAME_END_TRUNCATED) {
        c->failed = true;
        fprintf(stderr, "rvtrace-decode: error: byte offset %" PRIu64 ", "
                "packet %" PRIu64 ": truncated packet at the end of the "
                "stream\n", c->offset, c->packets);
    }
    etrace_deframer_free(c->deframer);
    c->deframer = NULL;
    free(buf);
    check_input_read(c, in);
    for (unsigned i = 0; i < (1u << c->params.src_bits); i++) {
        if (c->src[i] && c->src[i]->dmatch) {
            etrace_data_match_flush(c->src[i]->dmatch);
        }
    }
}

/* --------------------------------------------------------------- summary */

typedef struct Totals {
    ETraceDecStats st;
    uint64_t messages;      /* N-trace */
    uint64_t insns, branches, taken, exceptions, interrupts;
    uint64_t syncs, gaps, gaps_no_image, errors;
    uint64_t priv_insns[8];
    bool priv_unknown;      /* N-trace without Ownership messages */
    /* data trace */
    uint64_t daccesses[16], dbytes, dpackets, dpacket_bytes, dfiltered;
    ETraceDataMatchStats dm;
} Totals;

static void add_source(Totals *t, const Source *s)
{
    ETraceDecStats st = { 0 };

    if (s->ctx->ntrace) {
        NTraceDecStats nst;

        ntrace_decoder_stats(s->ndec, &nst);
        st.instructions = nst.instructions;
        t->messages += nst.messages;
    } else {
        etrace_demux_stats(s->ctx->demux, s->id, &st);
    }
    for (unsigned i = 0; i < 4; i++) {
        t->st.packets[i] += st.packets[i];
        t->st.f3_subformats[i] += st.f3_subformats[i];
    }
    for (unsigned i = 0; i < 2; i++) {
        t->st.f0_subformats[i] += st.f0_subformats[i];
    }
    t->st.instructions += st.instructions;
    t->st.skipped += st.skipped;
    t->insns += s->insns;
    t->branches += s->branches;
    t->taken += s->taken;
    t->exceptions += s->exceptions;
    t->interrupts += s->interrupts;
    t->syncs += s->syncs;
    t->gaps += s->gaps;
    t->gaps_no_image += s->gaps_no_image;
    t->errors += s->errors;
    for (unsigned i = 0; i < 8; i++) {
        t->priv_insns[i] += s->priv_insns[i];
    }
    t->priv_unknown |= s->ctx->ntrace && !s->priv_known;
    for (unsigned i = 0; i < 16; i++) {
        t->daccesses[i] += s->daccesses[i];
    }
    t->dbytes += s->dbytes;
    t->dpackets += s->dpackets;
    t->dpacket_bytes += s->dpacket_bytes;
    t->dfiltered += s->dfiltered;
    if (s->dmatch) {
        const ETraceDataMatchStats *m = etrace_data_match_stats(s->dmatch);

        t->dm.matched += m->matched;
        t->dm.failed_sc += m->failed_sc;
        t->dm.missing += m->missing;
        t->dm.mismatched += m->mismatched;
        t->dm.unmatched += m->unmatched;
    }
}

/* Data trace: accesses by type, bytes, packets and what stayed unpaired */
static void print_data_counts(Output *o, const char *indent, const Totals *t)
{
    uint64_t amo = 0, csr = 0;

    if (!t->dpackets) {
        return;
    }
    for (unsigned i = ETRACE_DTYPE_AMO_SWAP; i <= ETRACE_DTYPE_AMO_MIN; i++) {
        amo += t->daccesses[i];
    }
    for (unsigned i = ETRACE_DTYPE_CSR_RW; i <= ETRACE_DTYPE_CSR_RC; i++) {
        csr += t->daccesses[i];
    }
    out_printf(o, "%sdata accesses        %" PRIu64 " (load %" PRIu64
               ", store %" PRIu64 ", atomic %" PRIu64 ", csr %" PRIu64
               "), %" PRIu64 " bytes\n", indent, t->dm.matched + t->dfiltered,
               t->daccesses[ETRACE_DTYPE_LOAD],
               t->daccesses[ETRACE_DTYPE_STORE], amo, csr, t->dbytes);
    out_printf(o, "%sdata packets         %" PRIu64 ", %" PRIu64 " bytes, "
               "%.2f bits per access\n", indent, t->dpackets,
               t->dpacket_bytes, 8.0 * t->dpacket_bytes / t->dpackets);
    if (t->dfiltered) {
        out_printf(o, "%sdata filtered        %" PRIu64 " accesses not paired "
                   "with instructions\n", indent, t->dfiltered);
    }
    out_printf(o, "%sdata unpaired        missing %" PRIu64 ", mismatched %"
               PRIu64 ", left over %" PRIu64 " (failed sc %" PRIu64 ")\n",
               indent, t->dm.missing, t->dm.mismatched, t->dm.unmatched,
               t->dm.failed_sc);
}

/* "M 120, S 30, U 5": M, S and U always, the others if they occur. */
static void print_privileges(Output *o, const char *indent, const Totals *t)
{
    static const unsigned order[] = { 3, 1, 0, 5, 4, 2, 6, 7 };

    out_printf(o, "%sprivilege            ", indent);
    if (t->priv_unknown) {
        /* N-trace says it only in Ownership (trTeContext) */
        out_printf(o, "not traced (no Ownership message)\n");
        return;
    }
    for (unsigned i = 0; i < ARRAY_SIZE(order); i++) {
        unsigned p = order[i];

        if (i < 3 || t->priv_insns[p]) {
            out_printf(o, "%s%s %" PRIu64, i ? ", " : "", priv_name(p),
                       t->priv_insns[p]);
        }
    }
    out_char(o, '\n');
}

static void print_counts(Output *o, const char *indent, const Totals *t,
                         bool ntrace)
{
    out_printf(o, "%sinstructions         %" PRIu64 "\n", indent,
               t->st.instructions);
    print_privileges(o, indent, t);
    out_printf(o, "%sbranches             %" PRIu64 " (taken %" PRIu64 ")\n",
               indent, t->branches, t->taken);
    out_printf(o, "%straps                %" PRIu64 " (exceptions %" PRIu64
               ", interrupts %" PRIu64 ")\n", indent,
               t->exceptions + t->interrupts, t->exceptions, t->interrupts);
    out_printf(o, "%ssyncs                %" PRIu64 "\n", indent, t->syncs);
    out_printf(o, "%sgaps                 %" PRIu64 "\n", indent, t->gaps);
    out_printf(o, "%sgaps (no image)      %" PRIu64 "\n", indent,
               t->gaps_no_image);
    out_printf(o, "%serrors               %" PRIu64 "\n", indent, t->errors);
    if (ntrace) {
        out_printf(o, "%smessages             %" PRIu64 "\n", indent,
                   t->messages);
        return;
    }
    out_printf(o, "%spackets              %" PRIu64 ": format 0 %" PRIu64
               " (0.0 %" PRIu64 ", 0.1 %" PRIu64 "), 1 %" PRIu64 ", 2 %"
               PRIu64 ", 3 %" PRIu64 " (sync %" PRIu64 ", trap %" PRIu64
               ", context %" PRIu64 ", support %" PRIu64 ")\n", indent,
               t->st.packets[0] + t->st.packets[1] + t->st.packets[2] +
               t->st.packets[3], t->st.packets[0], t->st.f0_subformats[0],
               t->st.f0_subformats[1], t->st.packets[1], t->st.packets[2],
               t->st.packets[3], t->st.f3_subformats[0],
               t->st.f3_subformats[1], t->st.f3_subformats[2],
               t->st.f3_subformats[3]);
    if (t->st.skipped) {
        out_printf(o, "%spackets before sync  %" PRIu64 "\n", indent,
                   t->st.skipped);
    }
    print_data_counts(o, indent, t);
}

typedef struct Hot {
    uint64_t count;
    size_t sym;
} Hot;

static int hot_order(const void *a, const void *b)
{
    const Hot *x = a, *y = b;

    return x->count != y->count ? (x->count < y->count ? 1 : -1) :
           (x->sym > y->sym) - (x->sym < y->sym);
}

static void print_hottest(Ctx *c, uint64_t total)
{
    size_t nsym = rv_image_symbols(c->image), n = 0;
    Hot *hot = calloc(nsym + 1, sizeof(*hot));

    if (!hot || !total) {
        free(hot);
        return;
    }
    for (size_t i = 0; i <= nsym; i++) {
        if (c->sym_count[i]) {
            hot[n++] = (Hot) { .count = c->sym_count[i], .sym = i };
        }
    }
    qsort(hot, n, sizeof(*hot), hot_order);
    out_printf(&c->out, "hottest functions (instructions):\n");
    for (size_t i = 0; i < n && i < c->top; i++) {
        const RVSymbol *s = rv_image_symbol_at(c->image, hot[i].sym);

        out_printf(&c->out, "  %6.2f%%  %12" PRIu64 "  %s\n",
                   100.0 * hot[i].count / total, hot[i].count,
                   s ? s->name : "(no symbol)");
    }
    free(hot);
}

static void print_summary(Ctx *c)
{
    Totals all = { 0 };
    uint64_t bytes = c->offset;

    for (unsigned i = 0; i < (1u << c->params.src_bits); i++) {
        Totals one = { 0 };

        if (!c->src[i]) {
            continue;
        }
        add_source(&all, c->src[i]);
        if (c->nsrc_seen > 1) {
            add_source(&one, c->src[i]);
            out_printf(&c->out, "source %u:\n", i);
            print_counts(&c->out, "  ", &one, c->ntrace);
        }
    }
    if (c->nsrc_seen > 1) {
        out_printf(&c->out, "all sources:\n");
    }
    print_counts(&c->out, "", &all, c->ntrace);
    out_printf(&c->out, "bytes                %" PRIu64 " (padding %" PRIu64
               ", skipped %" PRIu64 ", other sources %" PRIu64 ")\n", bytes,
               c->padding, c->skipped_bytes, c->other_bytes);
    if (all.st.instructions) {
        /* instruction trace only */
        out_printf(&c->out, "bits per instruction %.4f\n",
                   8.0 * (bytes - c->other_bytes - all.dpacket_bytes) /
                   all.st.instructions);
    }
    print_hottest(c, all.insns);
}

/* ------------------------------------------------------------ arguments */

static const char usage_text[] =
"NAME\n"
"    rvtrace-decode - rebuild a RISC-V instruction trace from E-trace "
"packets\n"
"    or N-trace messages\n"
"\n"
"SYNOPSIS\n"
"    rvtrace-decode [OPTION]... -e GUEST.elf [-e ...] TRACE\n"
"    rvtrace-decode [OPTION]... -r IMAGE.bin@ADDR TRACE\n"
"    rvtrace-decode [OPTION]... -e FW.elf@ADDR -r KERNEL.bin@ADDR\n"
"                   --symbols System.map TRACE\n"
"\n"
"DESCRIPTION\n"
"    Reads the bytes a trace sink captured (TRACE; - for standard input),\n"
"    follows the program image from each synchronisation packet and\n"
"    prints every retired instruction, in order.  The packets are those\n"
"    of Efficient Trace for RISC-V v1.1.1 (or the 2.0 layout), framed\n"
"    as the example encapsulation of its chapter 6 (zero bytes are\n"
"    padding).  Packets before the first sync are skipped; after a\n"
"    trace_lost the decoder resumes at the next sync and the output says\n"
"    so (a gap event).  Where the trace goes to code that no image holds\n"
"    (user space, a vDSO, code written at run time) the output has a gap\n"
"    too (reason=no-image) and decoding resumes at the next sync in the\n"
"    image; that is no error.  Bad input stops it (or, with -k, it goes\n"
"    on from the next sync).  Memory use does not depend on the trace\n"
"    length.\n"
"    With --format ntrace the bytes are N-trace 1.0 messages (MDO/MSEO),\n"
"    of every source (SRC, --src-bits wide) or those of --src.\n"
"\n"
"  Program image\n"
"    -e, --elf FILE[@ADDR] a guest ELF file (ELF32 or ELF64): its PT_LOAD\n"
"                          segments and symbols; with @ADDR moved (and\n"
"                          its symbols with it) so that its lowest\n"
"                          PT_LOAD segment starts at ADDR, for position-\n"
"                          independent code linked elsewhere (OpenSBI's\n"
"                          fw_dynamic.elf: linked at 0, run at\n"
"                          0x80000000).  A name whose last '@' is not\n"
"                          followed by a number is a file name; repeatable\n"
"    -r, --raw FILE@ADDR   a raw binary loaded at ADDR; repeatable\n"
"    --symbols FILE[@BIAS] symbols of a text file in the format of nm,\n"
"                          System.map or /proc/kallsyms (ADDR TYPE NAME\n"
"                          per line, nm -S's ADDR SIZE TYPE NAME too, an\n"
"                          optional [module] after it): the text symbols\n"
"                          (types t, T, w, W), BIAS (may start with -)\n"
"                          added to their addresses; other lines are\n"
"                          skipped.  Used like an ELF file's; repeatable\n"
"\n"
"  Input\n"
"    --format etrace|ntrace\n"
"                          the trace format (trTeFormat; default etrace)\n"
"    --wrap OFFSET         TRACE is a whole circular buffer that wrapped\n"
"                          (RAM sink: Wrap set); its oldest byte is at\n"
"                          OFFSET (WP - Start).  Implies --find-boundary\n"
"    --find-boundary       TRACE may start inside a packet: decode from\n"
"                          the first packet boundary (found by framing\n"
"                          from every possible start until all agree)\n"
"\n"
"  Encoder parameters (default: those of QEMU's encoder for the ELF's\n"
"  XLEN, docs/rvtrace.rst)\n"
"    --xlen 32|64          iaddress_width_p (default: from the first ELF,\n"
"                          else 64)\n"
"    --discovery D0,D1     the encoder's discovery registers 0xE00 and\n"
"                          0xE04 (hex or decimal): every parameter\n"
"    --arch 1.1|2.0        packet layout (v1.1.1 draft or ratified 2.0)\n"
"    --param NAME=VALUE    one parameter: iaddress_lsb, ecause_width,\n"
"                          privilege_width, context_width,\n"
"                          call_counter_size, return_stack_size,\n"
"                          bpred_size, cache_size, f0s_width, sijump\n"
"    --src-bits N          width of the index field (trTeInstFeatures\n"
"                          SrcBits; QEMU with rvtrace-chardev and -smp N:\n"
"                          the bits N - 1 needs)\n"
"    --src ID              decode only source ID (repeatable; default all)\n"
"    --max-sources N       decoders to create at most (default 64)\n"
"    --zcmp, --zcmt        the hart has Zcmp (Zcmt): c.fsdsp's encodings\n"
"                          are its cm.* instructions (cm.popret returns,\n"
"                          cm.jt and cm.jalt jump through the table)\n"
"\n"
"  Run-time options until the first support packet (which replaces\n"
"  them; needed for a wrapped buffer that lost its support packet)\n"
"    --features F          trTeInstFeatures bits: 1 full address, 2\n"
"                          implicit exception, 4 sijump, 8 implicit\n"
"                          return (bits 7:6: 1 counter, 3 stack), 16\n"
"                          branch prediction, 32 jump target cache\n"
"    --full-address, --implicit-exception, --sijump,\n"
"    --implicit-return=counter|stack, --branch-prediction,\n"
"                          (N-trace: --implicit-return is the encoder's\n"
"                          trTeInstEnImplicitReturn, which the stream\n"
"                          does not carry)\n"
"    --jump-target-cache   the same, one at a time\n"
"    --tvec PRIV=ADDR      trap vector (xtvec value or a symbol name) of\n"
"                          privilege PRIV (M, S, U or 0..3), for implicit\n"
"                          exception mode; repeatable\n"
"    --max-run N           instructions followed without a branch before\n"
"                          a packet is judged unreachable (default 2^22)\n"
"    --max-walk N          instructions followed for one packet before\n"
"                          the decoder gives up (default 2^27; bounds\n"
"                          hostile branch counts)\n"
"\n"
"  Output (to standard output, or -o FILE)\n"
"    (default)             one address per line (0x80000000); events as\n"
"                          lines starting with '#': # TYPE key=value...\n"
"    -d, --disasm          objdump-like lines: address, privilege,\n"
"                          <symbol+offset>, raw bits, disassembly (from\n"
"                          objdump, see --objdump)\n"
"    -j, --json            one JSON object per line: {\"type\":\"insn\",\n"
"                          \"src\":0,\"addr\":\"0x...\",\"priv\":3,\"len\":4}\n"
"                          and one per event; with -d also sym, bits, asm\n"
"    -s, --summary         counts only: instructions (and per privilege:\n"
"                          M, S, U, and VS, VU if they occur), branches,\n"
"                          traps, syncs, gaps (trace_lost and\n"
"                          qualification), gaps (no image), errors,\n"
"                          packets per format, bytes, bits per\n"
"                          instruction and the hottest functions: an\n"
"                          address is a symbol's if it is inside its size\n"
"                          or, for a symbol without a size, before the\n"
"                          next symbol in the same segment; else it\n"
"                          counts as (no symbol)\n"
"    --top N               functions in the summary (default 10)\n"
"    --no-events           no event lines\n"
"    --packets             also every packet's fields, before what it\n"
"                          decodes to (# packet offset=... format=...)\n"
"    --objdump PROG        disassembler (default: $RVTRACE_OBJDUMP, else\n"
"                          riscv64-unknown-elf-objdump)\n"
"    -o, --output FILE     write to FILE\n"
"\n"
"  Errors\n"
"    -k, --keep-going      after bad input, go on from the next sync (or\n"
"                          the next packet boundary) instead of stopping\n"
"    -h, --help            this text\n"
"\n"
"EVENTS\n"
"    sync (format 3.0), trap (3.1: kind, cause, tvalepc, from = last\n"
"    retired instruction, handler), context (3.2), support (3.3), gap\n"
"    (reason=qualification: qualification ended, reason=trace_lost, or\n"
"    reason=no-image with addr = the address no image holds and last =\n"
"    the last instruction decoded; one gap until the decoder finds an\n"
"    instruction in the image again), end (tracing disabled), notify,\n"
"    error.  Every event names the byte offset and number of its packet.\n"
"    A synchronous exception means the instruction after 'from' did not\n"
"    retire: it is not in the output (E-trace 4.1).\n"
"\n"
"EXIT STATUS\n"
"    0 decoded without error (gaps are no errors), 1 the trace has errors\n"
"    (each one printed on standard error with its byte offset and packet\n"
"    number), 2 bad arguments or unreadable files.\n"
"\n"
"EXAMPLES\n"
"    qemu-system-riscv64 -M virt,rvtrace=on,rvtrace-chardev=tr \\\n"
"        -chardev file,id=tr,path=trace.bin -kernel guest.elf ...\n"
"    rvtrace-decode -e guest.elf -r rom.bin@0x1000 trace.bin\n"
"    rvtrace-decode -s -e guest.elf trace.bin\n"
"    rvtrace-decode --wrap 0x1234 --features 254 -e guest.elf ram.bin\n"
"    rvtrace-decode -s --src-bits 1 -r rom.bin@0x1000 \\\n"
"        -e fw_dynamic.elf@0x80000000 -r Image@0x80200000 \\\n"
"        -r Image@0xffffffff80000000 --symbols System.map trace.bin\n";

static void usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "rvtrace-decode: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'rvtrace-decode --help'.\n");
    exit(EXIT_USAGE);
}

/* A decimal or 0x-prefixed hexadecimal number that fits 64 bits. */
static bool try_parse_u64(const char *s, uint64_t *value)
{
    bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    unsigned base = hex ? 16 : 10;
    const char *p = hex ? s + 2 : s;
    uint64_t v = 0;

    if (!*p) {
        return false;
    }
    for (; *p; p++) {
        unsigned d = *p >= '0' && *p <= '9' ? *p - '0' :
                     *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 :
                     *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : 16;

        if (d >= base || v > (UINT64_MAX - d) / base) {
            return false;
        }
        v = v * base + d;
    }
    *value = v;
    return true;
}

static uint64_t parse_u64(const char *s, const char *what)
{
    uint64_t v;

    if (!try_parse_u64(s, &v)) {
        usage_error("%s: not a number: '%s'", what, s);
    }
    return v;
}

static unsigned parse_small(const char *s, const char *what, unsigned max)
{
    uint64_t v = parse_u64(s, what);

    if (v > max) {
        usage_error("%s: %" PRIu64 " is above %u", what, v, max);
    }
    return v;
}


static void discovery_to_params(const char *arg, ETraceParams *p)
{
    char *copy = strdup(arg), *comma = copy ? strchr(copy, ',') : NULL;
    uint64_t d0, d1;

    if (!comma) {
        usage_error("--discovery: expected D0,D1");
    }
    *comma = '\0';
    d0 = parse_u64(copy, "--discovery");
    d1 = parse_u64(comma + 1, "--discovery");
    free(copy);
    etrace_params_from_discovery(p, d0, d1);
}

static void set_param(ETraceParams *p, const char *arg)
{
    static const struct {
        const char *name;
        size_t offset;
    } names[] = {
#define P(n, f) { n, offsetof(ETraceParams, f) }
        P("iaddress_lsb", iaddress_lsb_p), P("ecause_width", ecause_width_p),
        P("privilege_width", privilege_width_p),
        P("context_width", context_width_p),
        P("call_counter_size", call_counter_size_p),
        P("return_stack_size", return_stack_size_p),
        P("bpred_size", bpred_size_p), P("cache_size", cache_size_p),
        P("f0s_width", f0s_width_p),
#undef P
    };
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : 0;

    if (!eq) {
        usage_error("--param: expected NAME=VALUE");
    }
    if (n == 6 && !strncmp(arg, "sijump", 6)) {
        p->sijump_p = parse_small(eq + 1, "--param sijump", 1);
        return;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strlen(names[i].name) == n && !strncmp(arg, names[i].name, n)) {
            *(unsigned *)((char *)p + names[i].offset) =
                parse_small(eq + 1, "--param", 64);
            return;
        }
    }
    usage_error("--param: unknown parameter '%.*s'", (int)n, arg);
}

/* Options whose values need the image (symbols) or the XLEN. */
typedef struct Deferred {
    const char *discovery;
    const char *params[32];
    unsigned nparams;
    const char *tvec[8];
    unsigned ntvec;
    const char *arch;
    unsigned xlen;
    int src_bits;
    uint64_t features;
    bool have_features;
    ETraceOptions set;      /* single flags, or'ed over the features */
    const char *objdump;
    const char *output;
} Deferred;

static unsigned parse_priv(const char *s, size_t n)
{
    if (n == 1 && (s[0] == 'M' || s[0] == 'm')) {
        return 3;
    }
    if (n == 1 && (s[0] == 'S' || s[0] == 's')) {
        return 1;
    }
    if (n == 1 && (s[0] == 'U' || s[0] == 'u')) {
        return 0;
    }
    if (n == 1 && s[0] >= '0' && s[0] <= '3') {
        return s[0] - '0';
    }
    usage_error("--tvec: unknown privilege '%.*s'", (int)n, s);
}

static void set_tvec(Ctx *c, const char *arg)
{
    const char *eq = strchr(arg, '=');
    unsigned priv;
    uint64_t v;

    if (!eq) {
        usage_error("--tvec: expected PRIV=ADDR");
    }
    priv = parse_priv(arg, eq - arg);
    if (!rv_image_find_symbol(c->image, eq + 1, &v)) {
        v = parse_u64(eq + 1, "--tvec");
    }
    c->xtvec[priv] = v;
}

enum {
    OPT_WRAP = 256, OPT_FIND_BOUNDARY, OPT_XLEN, OPT_DISCOVERY, OPT_ARCH,
    OPT_PARAM, OPT_SRC_BITS, OPT_SRC, OPT_MAX_SOURCES, OPT_FEATURES,
    OPT_FULL_ADDRESS, OPT_IMPLICIT_EXCEPTION, OPT_SIJUMP,
    OPT_IMPLICIT_RETURN, OPT_BRANCH_PREDICTION, OPT_JUMP_TARGET_CACHE,
    OPT_TVEC, OPT_MAX_RUN, OPT_MAX_WALK, OPT_TOP, OPT_NO_EVENTS, OPT_OBJDUMP,
    OPT_PACKETS, OPT_FORMAT, OPT_SYMBOLS, OPT_ZCMP, OPT_ZCMT,
};

/*
 * FILE@NUMBER: the number after the last '@' (negative if it starts with
 * '-' and sign allows it), if it parses; then the file name is what comes
 * before it, else the whole argument.  Returns the file name's length.
 */
static size_t split_number(const char *arg, bool sign, uint64_t *v,
                           bool *have)
{
    const char *at = strrchr(arg, '@');
    bool minus = at && sign && at[1] == '-';

    *have = at && try_parse_u64(at + 1 + minus, v);
    if (!*have) {
        *v = 0;
        return strlen(arg);
    }
    if (minus) {
        *v = -*v;
    }
    return at - arg;
}

/* -e FILE[@ADDR], -r FILE@ADDR, --symbols FILE[@BIAS] */
static void add_image(Ctx *c, const char *arg, int opt)
{
    char err[512];
    const char *at = strrchr(arg, '@');
    uint64_t v;
    bool have, ok;
    size_t added = 0;
    char *path;

    if (opt == 'r') {
        if (!at) {
            usage_error("--raw: expected FILE@ADDR");
        }
        v = parse_u64(at + 1, "--raw");
        path = strndup(arg, at - arg);
    } else {
        path = strndup(arg, split_number(arg, opt == OPT_SYMBOLS, &v,
                                         &have));
    }
    if (!path) {
        fprintf(stderr, "rvtrace-decode: out of memory\n");
        exit(EXIT_USAGE);
    }
    if (opt == 'r') {
        ok = rv_image_add_raw(c->image, path, v, err, sizeof(err));
    } else if (opt == 'e') {
        ok = have ? rv_image_add_elf_at(c->image, path, v, err, sizeof(err))
                  : rv_image_add_elf(c->image, path, err, sizeof(err));
    } else {
        ok = rv_image_add_symbols(c->image, path, v, &added, err,
                                  sizeof(err));
        if (ok && !added) {
            fprintf(stderr, "rvtrace-decode: warning: %s: no text symbols "
                    "(lines ADDR TYPE NAME, TYPE t, T, w or W)\n", path);
        }
    }
    free(path);
    if (!ok) {
        fprintf(stderr, "rvtrace-decode: %s\n", err);
        exit(EXIT_USAGE);
    }
}

static const struct option long_options[] = {
    { "elf", required_argument, NULL, 'e' },
    { "raw", required_argument, NULL, 'r' },
    { "symbols", required_argument, NULL, OPT_SYMBOLS },
    { "wrap", required_argument, NULL, OPT_WRAP },
    { "find-boundary", no_argument, NULL, OPT_FIND_BOUNDARY },
    { "format", required_argument, NULL, OPT_FORMAT },
    { "xlen", required_argument, NULL, OPT_XLEN },
    { "discovery", required_argument, NULL, OPT_DISCOVERY },
    { "arch", required_argument, NULL, OPT_ARCH },
    { "param", required_argument, NULL, OPT_PARAM },
    { "src-bits", required_argument, NULL, OPT_SRC_BITS },
    { "src", required_argument, NULL, OPT_SRC },
    { "max-sources", required_argument, NULL, OPT_MAX_SOURCES },
    { "features", required_argument, NULL, OPT_FEATURES },
    { "full-address", no_argument, NULL, OPT_FULL_ADDRESS },
    { "implicit-exception", no_argument, NULL, OPT_IMPLICIT_EXCEPTION },
    { "sijump", no_argument, NULL, OPT_SIJUMP },
    { "implicit-return", required_argument, NULL, OPT_IMPLICIT_RETURN },
    { "branch-prediction", no_argument, NULL, OPT_BRANCH_PREDICTION },
    { "jump-target-cache", no_argument, NULL, OPT_JUMP_TARGET_CACHE },
    { "tvec", required_argument, NULL, OPT_TVEC },
    { "max-run", required_argument, NULL, OPT_MAX_RUN },
    { "max-walk", required_argument, NULL, OPT_MAX_WALK },
    { "zcmp", no_argument, NULL, OPT_ZCMP },
    { "zcmt", no_argument, NULL, OPT_ZCMT },
    { "disasm", no_argument, NULL, 'd' },
    { "json", no_argument, NULL, 'j' },
    { "summary", no_argument, NULL, 's' },
    { "top", required_argument, NULL, OPT_TOP },
    { "no-events", no_argument, NULL, OPT_NO_EVENTS },
    { "packets", no_argument, NULL, OPT_PACKETS },
    { "objdump", required_argument, NULL, OPT_OBJDUMP },
    { "output", required_argument, NULL, 'o' },
    { "keep-going", no_argument, NULL, 'k' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

/* One more argument of a repeatable option, at most cap of them. */
static void push_arg(const char **args, unsigned *n, unsigned cap,
                     const char *what, const char *arg)
{
    if (*n == cap) {
        usage_error("too many %s", what);
    }
    args[(*n)++] = arg;
}

/* The program image and the stream: where the trace comes from. */
static bool parse_input_option(Ctx *c, int opt)
{
    switch (opt) {
    case 'e':
    case 'r':
        if (rv_image_segments(c->image) >= MAX_IMAGES * 16) {
            usage_error("too many images");
        }
        add_image(c, optarg, opt);
        return true;
    case OPT_SYMBOLS:
        if (++c->nsymbol_files > MAX_IMAGES) {
            usage_error("too many --symbols");
        }
        add_image(c, optarg, opt);
        return true;
    case OPT_WRAP:
        c->wrapped = c->find_boundary = true;
        c->wrap_offset = parse_u64(optarg, "--wrap");
        return true;
    case OPT_FIND_BOUNDARY:
        c->find_boundary = true;
        return true;
    case OPT_FORMAT:
        if (strcmp(optarg, "etrace") && strcmp(optarg, "ntrace")) {
            usage_error("--format: etrace or ntrace");
        }
        c->ntrace = !strcmp(optarg, "ntrace");
        return true;
    case OPT_SRC:
        if (c->nsrc_filter == MAX_SRC_FILTER) {
            usage_error("too many --src");
        }
        c->src_filter[c->nsrc_filter++] = parse_small(optarg, "--src",
                                                      0xffff);
        return true;
    case OPT_MAX_SOURCES:
        c->max_sources = parse_small(optarg, "--max-sources", 65536);
        return true;
    case OPT_MAX_WALK:
        c->max_walk = parse_u64(optarg, "--max-walk");
        return true;
    case OPT_MAX_RUN:
        c->max_run = parse_u64(optarg, "--max-run");
        return true;
    case OPT_ZCMP:
        c->isa |= RISCV_INSN_ISA_ZCMP;
        return true;
    case OPT_ZCMT:
        c->isa |= RISCV_INSN_ISA_ZCMT;
        return true;
    case 'k':
        c->keep_going = true;
        return true;
    default:
        return false;
    }
}

/* The options that are single flags of ETraceOptions. */
static const struct {
    int opt;
    size_t offset;
} option_flags[] = {
    { OPT_FULL_ADDRESS, offsetof(ETraceOptions, full_address) },
    { OPT_IMPLICIT_EXCEPTION, offsetof(ETraceOptions, implicit_exception) },
    { OPT_SIJUMP, offsetof(ETraceOptions, sijump) },
    { OPT_BRANCH_PREDICTION, offsetof(ETraceOptions, branch_prediction) },
    { OPT_JUMP_TARGET_CACHE, offsetof(ETraceOptions, jump_target_cache) },
};

/* The encoder's parameters and packet layout (finish_params/options). */
static bool parse_layout_option(Deferred *d, int opt)
{
    for (size_t i = 0; i < ARRAY_SIZE(option_flags); i++) {
        if (option_flags[i].opt == opt) {
            *(bool *)((char *)&d->set + option_flags[i].offset) = true;
            return true;
        }
    }
    switch (opt) {
    case OPT_XLEN:
        d->xlen = parse_small(optarg, "--xlen", 64);
        if (d->xlen != 32 && d->xlen != 64) {
            usage_error("--xlen: 32 or 64");
        }
        return true;
    case OPT_DISCOVERY:
        d->discovery = optarg;
        return true;
    case OPT_ARCH:
        if (strcmp(optarg, "1.1") && strcmp(optarg, "2.0")) {
            usage_error("--arch: 1.1 or 2.0");
        }
        d->arch = optarg;
        return true;
    case OPT_PARAM:
        push_arg(d->params, &d->nparams, ARRAY_SIZE(d->params), "--param",
                 optarg);
        return true;
    case OPT_SRC_BITS:
        d->src_bits = parse_small(optarg, "--src-bits", 16);
        return true;
    case OPT_FEATURES:
        d->features = parse_u64(optarg, "--features");
        d->have_features = true;
        return true;
    case OPT_IMPLICIT_RETURN:
        if (!strcmp(optarg, "counter")) {
            d->set.implicit_return = ETRACE_IR_CALL_COUNTER;
        } else if (!strcmp(optarg, "stack")) {
            d->set.implicit_return = ETRACE_IR_RETURN_STACK;
        } else {
            usage_error("--implicit-return: counter or stack");
        }
        return true;
    case OPT_TVEC:
        push_arg(d->tvec, &d->ntvec, ARRAY_SIZE(d->tvec), "--tvec", optarg);
        return true;
    default:
        return false;
    }
}

/* What is printed, and where. */
static bool parse_output_option(Ctx *c, Deferred *d, int opt)
{
    switch (opt) {
    case 'd':
        c->disasm = true;
        return true;
    case 'j':
        c->mode = OUT_JSON;
        return true;
    case 's':
        c->mode = OUT_SUMMARY;
        return true;
    case OPT_TOP:
        c->top = parse_small(optarg, "--top", 1000000);
        return true;
    case OPT_NO_EVENTS:
        c->events = false;
        return true;
    case OPT_PACKETS:
        c->packets_shown = true;
        return true;
    case OPT_OBJDUMP:
        d->objdump = optarg;
        return true;
    case 'o':
        d->output = optarg;
        return true;
    case 'h':
        fputs(usage_text, stdout);
        exit(0);
    default:
        return false;
    }
}

static void finish_params(Ctx *c, const Deferred *d)
{
    unsigned xlen = d->xlen ? d->xlen : rv_image_xlen(c->image);
    const char *err = NULL;

    if (!xlen) {
        xlen = 64;
    }
    if (d->discovery) {
        discovery_to_params(d->discovery, &c->params);
    } else {
        etrace_params_default(&c->params, xlen);
        /* QEMU reports satp.ASID: 16 bits on RV64, 9 on RV32 */
        c->params.context_width_p = xlen == 32 ? 9 : 16;
    }
    if (d->xlen) {
        c->params.iaddress_width_p = d->xlen;
    }
    if (d->arch) {
        c->params.arch = !strcmp(d->arch, "2.0") ? ETRACE_ARCH_2_0 :
                         ETRACE_ARCH_1_1;
    }
    for (unsigned i = 0; i < d->nparams; i++) {
        set_param(&c->params, d->params[i]);
    }
    c->params.src_bits = d->src_bits;
    c->params.src_id = 0;
    if (!etrace_params_check(&c->params, &err)) {
        usage_error("bad encoder parameters: %s", err);
    }
}

static void finish_options(Ctx *c, const Deferred *d)
{
    const ETraceOptions *s = &d->set;

    if (d->have_features) {
        etrace_options_from_features(d->features, &c->options);
    }
    c->options.full_address |= s->full_address;
    c->options.implicit_exception |= s->implicit_exception;
    c->options.sijump |= s->sijump;
    c->options.branch_prediction |= s->branch_prediction;
    c->options.jump_target_cache |= s->jump_target_cache;
    if (s->implicit_return) {
        c->options.implicit_return = s->implicit_return;
    }
    /* modes the parameters do not have are off, as in the encoder */
    etrace_options_unpack(&c->params, etrace_options_pack(&c->params,
                                                          &c->options),
                          &c->options);
    for (unsigned i = 0; i < d->ntvec; i++) {
        set_tvec(c, d->tvec[i]);
    }
}

static void finish_output(Ctx *c, const Deferred *d)
{
    const char *objdump = d->objdump ? d->objdump : getenv("RVTRACE_OBJDUMP");

    c->out.f = d->output ? fopen(d->output, "w") : stdout;
    if (!c->out.f) {
        fprintf(stderr, "rvtrace-decode: %s: %s\n", d->output,
                strerror(errno));
        exit(EXIT_USAGE);
    }
    c->out.buf = malloc(OUT_BUFFER);
    c->src = calloc(1u << c->params.src_bits, sizeof(*c->src));
    c->sym_count = calloc(rv_image_symbols(c->image) + 1,
                          sizeof(*c->sym_count));
    if (!c->out.buf || !c->src || !c->sym_count) {
        fprintf(stderr, "rvtrace-decode: out of memory\n");
        exit(EXIT_USAGE);
    }
    if (c->disasm && c->mode == OUT_ADDRESSES) {
        c->mode = OUT_DISASM;
    }
    if (c->disasm && !rv_image_load_disasm(c->image, objdump ? objdump :
                                           "riscv64-unknown-elf-objdump")) {
        fprintf(stderr, "rvtrace-decode: warning: no disassembly (objdump "
                "failed; see --objdump)\n");
    }
}

static const char *parse_args(Ctx *c, int argc, char **argv)
{
    Deferred d = { 0 };
    int opt;

    while ((opt = getopt_long(argc, argv, "e:r:djso:kh", long_options,
                              NULL)) != -1) {
        if (!parse_input_option(c, opt) && !parse_layout_option(&d, opt) &&
            !parse_output_option(c, &d, opt)) {
            usage_error("unknown option");
        }
    }
    if (optind != argc - 1) {
        usage_error(optind < argc ? "one trace file expected" :
                    "no trace file");
    }
    if (!rv_image_segments(c->image)) {
        usage_error("no program image (-e or -r)");
    }
    finish_params(c, &d);
    finish_options(c, &d);
    finish_output(c, &d);
    return argv[optind];
}

/* ------------------------------------------------------------------ main */

static void free_all(Ctx *c)
{
    etrace_demux_free(c->demux);
    for (unsigned i = 0; c->src && i < (1u << c->params.src_bits); i++) {
        if (c->src[i]) {
            ntrace_decoder_free(c->src[i]->ndec);
            etrace_data_match_free(c->src[i]->dmatch);
        }
        free(c->src[i]);
    }
    free(c->src);
    free(c->sym_count);
    free(c->out.buf);
    rv_image_free(c->image);
}

int main(int argc, char **argv)
{
    Ctx c = {
        .events = true, .max_sources = DEFAULT_MAX_SOURCES,
        .top = DEFAULT_TOP,
    };
    const char *trace;
    Input in;

    c.image = rv_image_new();
    if (!c.image) {
        return EXIT_USAGE;
    }
    trace = parse_args(&c, argc, argv);
    if (!input_open(&c, trace, &in)) {
        free_all(&c);
        return EXIT_USAGE;
    }
    decode_stream(&c, &in);
    if (c.mode == OUT_SUMMARY) {
        print_summary(&c);
    }
    out_flush(&c.out);
    if (in.f != stdin) {
        fclose(in.f);
    }
    if (c.out.f != stdout && fclose(c.out.f)) {
        c.failed = true;
    }
    free_all(&c);
    return c.failed ? EXIT_DECODE_ERROR : 0;
}

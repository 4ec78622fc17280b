/*
 * Shared by the decoder's fuzz harness (tests-unit/fuzz-decoder.c,
 * scripts/fuzz-decoder.sh) and its regression test
 * (tests-unit/test-decoder-corpus.c): a small program image, how a fuzz
 * input chooses the decoder's parameters and options, decoding an input
 * with the library, and generating valid traces of the image with the
 * encoder (seeds, round trips).
 *
 * A fuzz input: byte 0 = XLEN (bit 0: 32), arch (bit 1: 2.0), SrcBits
 * (bits 7:2, 0..16 as value % 17); byte 1 = trTeInstFeatures; byte 2 =
 * chunking of the stream (the decoder gets it in pieces); the rest is the
 * trace.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FUZZ_DECODER_H
#define FUZZ_DECODER_H

#include <setjmp.h>
#include "target/riscv/insn_class.h"
#include "etrace.h"
#include "etrace-decoder.h"
#include "etrace-dec-data.h"

#define FUZZ_IMAGE_BASE     0x80000000u
#define FUZZ_HEADER         3
#define FUZZ_MAX_RUN        (1u << 16)
#define FUZZ_BUDGET         (1u << 22)  /* instructions per input */

/*
 * Branches, calls, a return, sequentially inferable and uninferable
 * jumps, a table jump, ecall, ebreak, mret, sret and the all-zero
 * illegal instruction, at FUZZ_IMAGE_BASE:
 *
 *   00 c.li a0,5          18 jalr 46(t0) -> 42   3a c.addi sp,-16
 *   02 c.li a1,0          1c auipc t1,0          3c c.beqz a0,40
 *   04 c.addi a1,1        20 jr 12(t1) -> 28     3e c.addi a0,-1
 *   06 beq a1,a0,0c       24 ecall               40 c.jr ra (ret)
 *   0a c.bnez a1,10       28 c.ebreak            42 c.mv a2,ra
 *   0c jal ra,3a          2a c.j 2c              44 bnez a2,4a
 *   10 blt a1,a0,04       2c auipc+addi t2,56    46 mret
 *   14 auipc t0,0         34 lw t2,0(t2)         4a j 00
 *                         38 c.jr t2 -> 00       4e sret; 52 .word 0
 */
static const uint8_t fuzz_image[] = {
    0x15, 0x45, 0x81, 0x45, 0x85, 0x05, 0x63, 0x83, 0xa5, 0x00, 0x99, 0xe1,
    0xef, 0x00, 0xe0, 0x02, 0xe3, 0xca, 0xa5, 0xfe, 0x97, 0x02, 0x00, 0x00,
    0xe7, 0x80, 0xe2, 0x02, 0x17, 0x03, 0x00, 0x00, 0x67, 0x00, 0xc3, 0x00,
    0x73, 0x00, 0x00, 0x00, 0x02, 0x90, 0x09, 0xa0, 0x97, 0x03, 0x00, 0x00,
    0x93, 0x83, 0xa3, 0x02, 0x83, 0xa3, 0x03, 0x00, 0x82, 0x83, 0x41, 0x11,
    0x11, 0xc1, 0x7d, 0x15, 0x82, 0x80, 0x06, 0x86, 0x19, 0xe2, 0x73, 0x00,
    0x20, 0x30, 0x6f, 0xf0, 0x7f, 0xfb, 0x73, 0x00, 0x20, 0x10, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x80,
};

typedef struct FuzzConfig {
    ETraceParams params;
    ETraceOptions options;
    uint32_t features;      /* trTeInstFeatures */
    unsigned chunk;         /* stream pieces of 1 + chunk * 7 bytes */
} FuzzConfig;

static inline bool fuzz_read_parcel(void *opaque, uint64_t addr,
                                    uint16_t *parcel)
{
    uint64_t off = addr - FUZZ_IMAGE_BASE;

    (void)opaque;
    if (addr < FUZZ_IMAGE_BASE || off + 1 >= sizeof(fuzz_image)) {
        return false;
    }
    *parcel = fuzz_image[off] | fuzz_image[off + 1] << 8;
    return true;
}

/* The configuration in data[0..FUZZ_HEADER); false if too short. */
static inline bool fuzz_config(const uint8_t *data, size_t len,
                               FuzzConfig *c)
{
    if (len < FUZZ_HEADER) {
        return false;
    }
    etrace_params_default(&c->params, data[0] & 1 ? 32 : 64);
    c->params.arch = data[0] & 2 ? ETRACE_ARCH_2_0 : ETRACE_ARCH_1_1;
    c->params.src_bits = (data[0] >> 2) % 17;
    c->features = data[1];
    memset(&c->options, 0, sizeof(c->options));
    etrace_options_from_features(c->features, &c->options);
    c->chunk = data[2];
    return true;
}

typedef struct FuzzResult {
    uint64_t instructions;
    uint64_t errors;
    uint64_t no_image_gaps;     /* the trace left the image */
    /*
     * With a budget, decoding stops (longjmp) after that many
     * instructions: a format 0 packet may stand for 2^32 correctly
     * predicted branches, and following them takes minutes, which the
     * fuzzer would report as a hang.
     */
    uint64_t budget;
    jmp_buf escape;
    /* data accesses paired with their instructions, as the tool does */
    ETraceDataMatch *match;
    unsigned xlen;
} FuzzResult;

static inline void fuzz_paired(void *opaque, const ETraceDecInsn *insn,
                               uint32_t bits, const ETraceDataAccess *a,
                               unsigned n)
{
    (void)opaque;
    (void)insn;
    (void)bits;
    (void)a;
    (void)n;
}

static inline void fuzz_count_insn(void *opaque, const ETraceDecInsn *insn)
{
    FuzzResult *r = opaque;

    if (r->match) {
        uint16_t lo = 0, hi = 0;

        fuzz_read_parcel(r, insn->addr, &lo);
        fuzz_read_parcel(r, insn->addr + 2, &hi);
        etrace_data_match_insn(r->match, insn, lo | (uint32_t)hi << 16);
    }
    if (++r->instructions == r->budget) {
        longjmp(r->escape, 1);
    }
}

static inline void fuzz_count_event(void *opaque, const ETraceDecEvent *ev)
{
    FuzzResult *r = opaque;

    r->no_image_gaps += ev->type == ETRACE_DEC_GAP &&
                        ev->gap_reason == ETRACE_GAP_NO_IMAGE;
    if (!r->match) {
        return;
    }
    if (ev->type == ETRACE_DEC_DATA) {
        etrace_data_match_access(r->match, &ev->data,
                                 ev->options.data_no_address);
    } else if (ev->type != ETRACE_DEC_CONTEXT &&
               ev->type != ETRACE_DEC_NOTIFY) {
        etrace_data_match_flush(r->match);
    }
}

/* The trace in pieces of piece bytes, then its end. */
static inline void fuzz_feed(ETraceDecoder *d, const uint8_t *data,
                             size_t len, size_t piece)
{
    while (len) {
        size_t n = len < piece ? len : piece;

        etrace_decoder_feed(d, data, n);
        data += n;
        len -= n;
    }
    etrace_decoder_finish(d);
}

/*
 * Decode a fuzz input (header + trace) with the library, following at
 * most budget instructions (0: no limit) and at most packet_walk for one
 * packet (0: the library's default).
 */
static inline bool fuzz_decode(const uint8_t *data, size_t len,
                               FuzzResult *r, uint64_t budget,
                               uint64_t packet_walk)
{
    FuzzConfig c;
    ETraceDecoderConfig cfg = { 0 };
    ETraceDecoder *d;
    ETraceDecStats st;

    r->instructions = r->errors = r->no_image_gaps = 0;
    r->budget = budget;
    r->match = NULL;
    if (!fuzz_config(data, len, &c)) {
        return false;
    }
    cfg.params = c.params;
    cfg.options = c.options;
    cfg.read_parcel = fuzz_read_parcel;
    cfg.insn = fuzz_count_insn;
    cfg.event = fuzz_count_event;
    cfg.xtvec[3] = FUZZ_IMAGE_BASE;
    cfg.max_straight_run = FUZZ_MAX_RUN;
    cfg.max_packet_walk = packet_walk;
    cfg.opaque = r;
    d = etrace_decoder_new(&cfg);
    if (!d) {
        return false;
    }
    r->match = etrace_data_match_new(c.params.iaddress_width_p, cfg.isa,
                                     fuzz_paired, r);
    if (!setjmp(r->escape)) {
        fuzz_feed(d, data + FUZZ_HEADER, len - FUZZ_HEADER,
                  1 + c.chunk * 7);
    }
    etrace_decoder_stats(d, &st);
    r->errors = st.errors;
    etrace_decoder_free(d);
    etrace_data_match_flush(r->match);
    etrace_data_match_free(r->match);
    r->match = NULL;
    return true;
}

/* ------------------------------------------------- valid traces (seeds) */

typedef struct FuzzStream {
    uint8_t *buf;
    size_t len, cap;
} FuzzStream;

static inline void fuzz_emit(void *opaque, const uint8_t *bytes, size_t len)
{
    FuzzStream *s = opaque;

    if (s->len + len > s->cap) {
        size_t cap = (s->len + len) * 2;
        uint8_t *b = realloc(s->buf, cap);

        if (!b) {
            return;
        }
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, bytes, len);
    s->len += len;
}

static inline uint32_t fuzz_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 33;
}

/* Where the jump at pc goes in the image (its register values). */
static inline uint64_t fuzz_jump_target(uint64_t pc, const RISCVInsnClass *cls,
                                        const uint64_t *ras, unsigned nras)
{
    if (cls->inferable) {
        return pc + cls->offset;
    }
    switch (pc - FUZZ_IMAGE_BASE) {
    case 0x18:
        return FUZZ_IMAGE_BASE + 0x42;      /* auipc t0 + jalr 46(t0) */
    case 0x20:
        return FUZZ_IMAGE_BASE + 0x28;      /* auipc t1 + jr 12(t1) */
    case 0x40:                              /* ret */
        return nras ? ras[nras - 1] : FUZZ_IMAGE_BASE;
    default:
        return FUZZ_IMAGE_BASE;             /* the table: _start */
    }
}

/*
 * A random run through the image as QEMU's ingress would report it,
 * encoded with the configuration's parameters and options.  addrs gets
 * the retired instructions (up to max_addrs), *naddrs their number.
 */
static inline void fuzz_generate(const FuzzConfig *c, uint64_t seed,
                                 unsigned nblocks, FuzzStream *out,
                                 uint64_t *addrs, size_t max_addrs,
                                 size_t *naddrs)
{
    ETraceEncoder *e = etrace_encoder_new(&c->params, fuzz_emit, out);
    ETraceOptions o = c->options;
    uint64_t pc = FUZZ_IMAGE_BASE, ras[64];
    unsigned nras = 0, xlen = c->params.iaddress_width_p;
    ETraceBlock b = { .iaddr = pc, .priv = 3, .qualified = true };
    bool prev_const = false;
    unsigned prev_rd = 0;

    *naddrs = 0;
    if (!e) {
        return;
    }
    /* a sync every 16 packets: a wrapped buffer has some */
    o.sync_mode = ETRACE_SYNC_PACKETS;
    o.sync_max = 0;
    etrace_encoder_start(e, &o);
    while (nblocks) {
        uint16_t lo = 0, hi = 0;
        RISCVInsnClass cls;
        uint64_t next;

        fuzz_read_parcel(NULL, pc, &lo);
        fuzz_read_parcel(NULL, pc + 2, &hi);
        riscv_classify_insn(lo | (uint32_t)hi << 16, xlen, &cls);
        if (cls.flow == RISCV_FLOW_TRAP) {
            /* ecall, ebreak: no retirement; the block before, the trap */
            if (b.iretire) {
                etrace_encoder_block(e, &b);
            }
            b = (ETraceBlock) { .iaddr = pc, .itype = 1, .priv = 3,
                                .cause = cls.len == 2 ? 3 : 11, .epc = pc,
                                .qualified = true };
            etrace_encoder_block(e, &b);
            pc = FUZZ_IMAGE_BASE;
            b = (ETraceBlock) { .iaddr = pc, .priv = 3, .qualified = true };
            nblocks--;
            continue;
        }
        if (*naddrs < max_addrs) {
            addrs[*naddrs] = pc;
        }
        (*naddrs)++;
        b.iretire += cls.len / 2;
        b.ninsns++;
        b.ilastsize = cls.len == 4;
        next = pc + cls.len;
        if (cls.flow == RISCV_FLOW_BRANCH) {
            bool taken = fuzz_random(&seed) & 1;

            b.itype = taken ? RISCV_ITYPE_TAKEN_BRANCH :
                      RISCV_ITYPE_NOT_TAKEN_BRANCH;
            next = taken ? pc + cls.offset : next;
        } else if (cls.flow == RISCV_FLOW_JUMP) {
            b.itype = cls.itype;
            b.sijump = !cls.inferable && prev_const && prev_rd == cls.rs1;
            next = fuzz_jump_target(pc, &cls, ras, nras);
            if (cls.itype == RISCV_ITYPE_RETURN && nras) {
                nras--;
            }
            if ((cls.itype == RISCV_ITYPE_INFERABLE_CALL ||
                 cls.itype == RISCV_ITYPE_UNINFERABLE_CALL) && nras < 64) {
                ras[nras++] = pc + cls.len;
            }
        } else if (cls.flow == RISCV_FLOW_TRAP_RETURN) {
            b.itype = RISCV_ITYPE_TRAP_RETURN;
            next = FUZZ_IMAGE_BASE;
        }
        prev_const = cls.sets_constant;
        prev_rd = cls.rd;
        pc = next & (xlen == 32 ? UINT32_MAX : UINT64_MAX);
        if (b.itype || fuzz_random(&seed) % 8 == 0) {
            etrace_encoder_block(e, &b);
            nblocks--;
            b = (ETraceBlock) { .iaddr = pc, .priv = 3, .qualified = true };
        }
    }
    etrace_encoder_stop(e);
    etrace_encoder_free(e);
}

#endif

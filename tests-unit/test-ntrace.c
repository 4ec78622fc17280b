/*
 * Unit tests of the N-trace codec: message packing against bytes worked
 * out by hand from the N-trace 1.0 field tables (MSEO in bits 1:0, MDO
 * bits LSB first, fixed fields sharing bytes, variable fields ending
 * theirs), and the encoder's messages for the cases of the message
 * generation rules, their worked example among them.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <glib.h>
#include "insn_class.h"
#include "ntrace.h"
#include "ntrace-decoder.h"
#include "fuzz-ntrace.h"

static const NTraceParams params64 = { .xlen = 64 };

static void check_same(const NTraceMessage *a, const NTraceMessage *b)
{
    g_assert_cmpuint(a->tcode, ==, b->tcode);
    g_assert_cmpuint(a->src, ==, b->src);
    g_assert_cmpuint(a->sync, ==, b->sync);
    g_assert_cmpuint(a->btype, ==, b->btype);
    g_assert_cmpuint(a->etype, ==, b->etype);
    g_assert_cmpuint(a->rcode, ==, b->rcode);
    g_assert_cmpuint(a->evcode, ==, b->evcode);
    g_assert_cmpuint(a->cdf, ==, b->cdf);
    g_assert_cmphex(a->icnt, ==, b->icnt);
    g_assert_cmphex(a->addr, ==, b->addr);
    g_assert_cmphex(a->hist, ==, b->hist);
    g_assert_cmphex(a->process, ==, b->process);
    g_assert_cmphex(a->ecode, ==, b->ecode);
    g_assert_cmphex(a->rdata, ==, b->rdata);
    g_assert_cmphex(a->hrepeat, ==, b->hrepeat);
    g_assert_cmphex(a->bcnt, ==, b->bcnt);
    g_assert_cmphex(a->tstamp, ==, b->tstamp);
    g_assert_cmpint(a->has_tstamp, ==, b->has_tstamp);
}

static void check_pack(const NTraceParams *p, const NTraceMessage *m,
                       const uint8_t *want, size_t want_len)
{
    uint8_t buf[NTRACE_MAX_MESSAGE];
    size_t n = ntrace_message_pack(p, m, buf);
    NTraceMessage back;
    const char *err = NULL;

    g_assert_cmpmem(buf, n, want, want_len);
    g_assert_cmpint(ntrace_message_unpack(p, want, want_len, &back, &err),
                    ==, want_len);
    g_assert_null(err);
    check_same(&back, m);
}

/* TCODE 28 alone is 0x70 (spec-facts: "0x70 = TCODE 28, MSEO 00"). */
static void test_pack_indirect_branch_hist(void)
{
    /* BTYPE 0 + I-CNT 5 share byte 1; U-ADDR 0x80 takes two bytes. */
    NTraceMessage m = {
        .tcode = NTRACE_TCODE_INDIRECT_BRANCH_HIST, .icnt = 5, .addr = 0x80,
        .hist = 0xd,
    };
    static const uint8_t want[] = { 0x70, 0x51, 0x00, 0x09, 0x37 };
    GRand *r = g_rand_new_with_seed(28);

    check_pack(&params64, &m, want, sizeof(want));
    /*
     * Its own packer (no SRC, no timestamp), IndirectBranch's too: every
     * field width, I-CNT's low four bits alone or not, read back whole.
     */
    for (unsigned i = 0; i < 20000; i++) {
        uint8_t buf[NTRACE_MAX_MESSAGE];
        NTraceMessage back;
        const char *err = NULL;
        size_t n;

        m.tcode = i & 1 ? NTRACE_TCODE_INDIRECT_BRANCH :
                          NTRACE_TCODE_INDIRECT_BRANCH_HIST;
        m.btype = g_rand_int_range(r, 0, 4);
        m.icnt = g_rand_int(r) >> g_rand_int_range(r, 0, 32);
        m.addr = ((uint64_t)g_rand_int(r) << 32 | g_rand_int(r)) >>
                 g_rand_int_range(r, 0, 64);
        m.hist = i & 1 ? 0 : (g_rand_int(r) | 1u) >> g_rand_int_range(r, 0, 32);
        n = ntrace_message_pack(&params64, &m, buf);
        g_assert_cmpuint(n, >, 0);
        g_assert_cmpint(ntrace_message_unpack(&params64, buf, n, &back, &err),
                        ==, n);
        g_assert_null(err);
        check_same(&back, &m);
    }
    g_rand_free(r);
}

static void test_pack_prog_trace_sync(void)
{
    /* I-CNT 0 is one bit beside SYNC; F-ADDR 0x40000000 is 6 bytes. */
    NTraceMessage m = {
        .tcode = NTRACE_TCODE_PROG_TRACE_SYNC, .sync = 5,
        .addr = 0x80000000ull >> 1,
    };
    static const uint8_t want[] = {
        0x24, 0x15, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,
    };

    check_pack(&params64, &m, want, sizeof(want));
}

static void test_pack_src(void)
{
    /* SRC 0xA in 4 bits, then I-CNT 7 across the byte boundary. */
    NTraceParams p = { .xlen = 64, .src_bits = 4 };
    NTraceMessage m = {
        .tcode = NTRACE_TCODE_DIRECT_BRANCH, .src = 0xa, .icnt = 7,
    };
    static const uint8_t want[] = { 0x0c, 0xe8, 0x07 };

    check_pack(&p, &m, want, sizeof(want));
    m.src = 0x10;
    g_assert_cmpuint(ntrace_message_pack(&p, &m, (uint8_t[48]){}), ==, 0);
}

static void test_pack_others(void)
{
    static const struct {
        NTraceMessage m;
        uint8_t bytes[8];
        size_t len;
    } cases[] = {
        { { .tcode = NTRACE_TCODE_RESOURCE_FULL, .rcode = 0, .rdata = 100 },
          { 0x6c, 0x00, 0x67 }, 3 },
        { { .tcode = NTRACE_TCODE_PROG_TRACE_CORRELATION, .evcode = 4,
            .cdf = 1, .icnt = 3, .hist = 1 },
          { 0x84, 0x50, 0x0d, 0x07 }, 4 },
        { { .tcode = NTRACE_TCODE_OWNERSHIP, .process = 1 << 2 },
          { 0x08, 0x13 }, 2 },
        { { .tcode = NTRACE_TCODE_ERROR, .etype = 0, .ecode = 4 },
          { 0x20, 0x00, 0x07 }, 3 },
        /* RCODE 2: HREPEAT follows RDATA */
        { { .tcode = NTRACE_TCODE_RESOURCE_FULL, .rcode = 2, .rdata = 1,
            .hrepeat = 3 },
          { 0x6c, 0x49, 0x0f }, 3 },
        /* a timestamp after the last field */
        { { .tcode = NTRACE_TCODE_DIRECT_BRANCH, .icnt = 1, .tstamp = 2,
            .has_tstamp = true },
          { 0x0c, 0x05, 0x0b }, 3 },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        check_pack(&params64, &cases[i].m, cases[i].bytes, cases[i].len);
    }
}

static void test_unpack_bad(void)
{
    NTraceMessage m;
    const char *err = NULL;
    /* idle bytes are skipped; the message is then read whole */
    static const uint8_t idle[] = { 0xff, 0xff, 0x08, 0x13 };
    /* TCODE 1 is not an N-trace message */
    static const uint8_t unknown[] = { 0x04, 0x03 };
    /* a fixed-field byte cannot end the message */
    static const uint8_t fixed_end[] = { 0x84, 0x53 };
    /* a field after TSTAMP */
    static const uint8_t extra[] = { 0x0c, 0x05, 0x09, 0x0b };

    g_assert_cmpint(ntrace_message_unpack(&params64, idle, 4, &m, &err),
                    ==, 4);
    g_assert_cmpuint(m.tcode, ==, NTRACE_TCODE_OWNERSHIP);
    g_assert_cmpint(ntrace_message_unpack(&params64, idle, 3, &m, &err),
                    ==, 0);
    g_assert_cmpint(ntrace_message_unpack(&params64, unknown, 2, &m, &err),
                    ==, -1);
    g_assert_nonnull(err);
    g_assert_cmpint(ntrace_message_unpack(&params64, fixed_end, 2, &m, &err),
                    ==, -1);
    g_assert_cmpint(ntrace_message_unpack(&params64, extra, 4, &m, &err),
                    ==, -1);
}

/* ------------------------------------------------------------- encoder */

typedef struct Out {
    GByteArray *bytes;
    /* an output window (ntrace_encoder_set_window()) of varying room */
    bool windowed;
    unsigned room;          /* the next window's */
    ETraceWindow win;
    uint8_t wbuf[3 * NTRACE_MAX_MESSAGE];
} Out;

/* The messages in the window go to the bytes; it opens again. */
static void window_take(Out *out)
{
    g_byte_array_append(out->bytes, out->wbuf, out->win.pos - out->wbuf);
    out->room = (out->room + 37) % (sizeof(out->wbuf) + 1);
    out->win = (ETraceWindow) { out->wbuf, out->wbuf + out->room };
}

static void collect(void *opaque, const uint8_t *bytes, size_t len)
{
    Out *out = opaque;

    if (out->windowed) {
        window_take(out);
    }
    g_byte_array_append(out->bytes, bytes, len);
}

/*
 * The messages in the stream, in order; each must be the bytes
 * ntrace_message_pack() makes of it (the encoder's fast paths too).
 */
static GArray *messages(const NTraceParams *p, GByteArray *bytes)
{
    GArray *a = g_array_new(false, true, sizeof(NTraceMessage));
    size_t off = 0;

    while (off < bytes->len) {
        NTraceMessage m;
        uint8_t again[NTRACE_MAX_MESSAGE];
        const char *err = NULL;
        int n = ntrace_message_unpack(p, bytes->data + off,
                                      bytes->len - off, &m, &err);

        g_assert_cmpint(n, >, 0);
        g_assert_cmpmem(again, ntrace_message_pack(p, &m, again),
                        bytes->data + off, n);
        g_array_append_val(a, m);
        off += n;
    }
    return a;
}

typedef struct Run {
    NTraceEncoder *e;
    Out out;
    GArray *msgs;
} Run;

static void run_begin(Run *r, const NTraceOptions *o)
{
    r->out.bytes = g_byte_array_new();
    r->e = ntrace_encoder_new(&params64, collect, &r->out);
    g_assert_nonnull(r->e);
    ntrace_encoder_start(r->e, o);
}

static ETraceBlock blk(uint64_t iaddr, unsigned iretire, unsigned itype,
                       bool last4)
{
    ETraceBlock b = {
        .iaddr = iaddr, .iretire = iretire, .ninsns = iretire,
        .itype = itype, .ilastsize = last4, .priv = 3, .qualified = true,
    };

    return b;
}

static ETraceBlock trap(unsigned itype, uint64_t cause, uint64_t epc)
{
    ETraceBlock b = {
        .itype = itype, .cause = cause, .epc = epc, .priv = 3,
        .qualified = true,
    };

    return b;
}

/* One block to the encoder. */
static void feed(Run *r, ETraceBlock b)
{
    ntrace_encoder_block(r->e, &b);
}

static void run_end(Run *r)
{
    ntrace_encoder_stop(r->e);
    r->msgs = messages(&params64, r->out.bytes);
}

static void run_free(Run *r)
{
    ntrace_encoder_free(r->e);
    g_byte_array_free(r->out.bytes, true);
    g_array_free(r->msgs, true);
}

static const NTraceMessage *msg(Run *r, unsigned i)
{
    g_assert_cmpuint(i, <, r->msgs->len);
    return &g_array_index(r->msgs, NTraceMessage, i);
}

static const NTraceOptions btm = { .mode = NTRACE_MODE_BTM };
static const NTraceOptions htm = { .mode = NTRACE_MODE_HTM };

static void check_sync(Run *r, unsigned i, unsigned reason, uint64_t addr)
{
    g_assert_cmpuint(msg(r, i)->tcode, ==, NTRACE_TCODE_PROG_TRACE_SYNC);
    g_assert_cmpuint(msg(r, i)->sync, ==, reason);
    g_assert_cmpuint(msg(r, i)->icnt, ==, 0);
    g_assert_cmphex(msg(r, i)->addr, ==, addr >> 1);
}

static void check_end(Run *r, unsigned i, uint64_t icnt)
{
    g_assert_cmpuint(msg(r, i)->tcode, ==,
                     NTRACE_TCODE_PROG_TRACE_CORRELATION);
    g_assert_cmpuint(msg(r, i)->evcode, ==, NTRACE_EVCODE_DISABLED);
    g_assert_cmpuint(msg(r, i)->icnt, ==, icnt);
}

static void check_indirect(Run *r, unsigned i, unsigned btype, uint64_t icnt,
                           uint64_t from, uint64_t to)
{
    g_assert_cmpuint(msg(r, i)->tcode, ==, NTRACE_TCODE_INDIRECT_BRANCH);
    g_assert_cmpuint(msg(r, i)->btype, ==, btype);
    g_assert_cmpuint(msg(r, i)->icnt, ==, icnt);
    g_assert_cmphex(msg(r, i)->addr, ==, (from ^ to) >> 1);
}

/*
 * The rules' example of a custom instruction (10.1.1): add at 0x100, the
 * custom conditional branch XYZ at 0x104 (traced as an indirect jump),
 * c.add at 0x108; when XYZ is taken, c.add at 0x200.
 */
static void test_rules_example(void)
{
    Run r = {};

    run_begin(&r, &btm);
    feed(&r, blk(0x100, 5, RISCV_ITYPE_NONE, false));
    run_end(&r);
    g_assert_cmpuint(r.msgs->len, ==, 2);
    check_sync(&r, 0, NTRACE_SYNC_ENABLE, 0x100);
    check_end(&r, 1, 5);            /* "I-CNT=5": <0x100..0x10A) */
    run_free(&r);

    run_begin(&r, &btm);
    feed(&r, blk(0x100, 4, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP, true));
    feed(&r, blk(0x200, 1, RISCV_ITYPE_NONE, false));
    run_end(&r);
    g_assert_cmpuint(r.msgs->len, ==, 3);
    check_sync(&r, 0, NTRACE_SYNC_ENABLE, 0x100);
    check_indirect(&r, 1, NTRACE_BTYPE_JUMP, 4, 0x100, 0x200);
    check_end(&r, 2, 1);            /* "I-CNT=1": <0x200..0x202) */
    run_free(&r);
}

/* ECALL does not retire in N-trace; a faulting load neither. */
static void test_traps(void)
{
    Run r = {};
    ETraceBlock b;

    run_begin(&r, &btm);
    b = blk(0x1000, 4, RISCV_ITYPE_NONE, true);     /* addi, ecall */
    ntrace_encoder_block(r.e, &b);
    feed(&r, trap(RISCV_ITYPE_EXCEPTION, 8, 0x1004));
    b = blk(0x2000, 2, RISCV_ITYPE_NONE, true);     /* lw faults next */
    ntrace_encoder_block(r.e, &b);
    feed(&r, trap(RISCV_ITYPE_EXCEPTION, 13, 0x2004));
    b = trap(RISCV_ITYPE_INTERRUPT, 7, 0x3000);     /* back to back */
    ntrace_encoder_block(r.e, &b);
    feed(&r, blk(0x3100, 2, RISCV_ITYPE_TRAP_RETURN, true));
    b = trap(RISCV_ITYPE_INTERRUPT, 7, 0x2004);     /* right after mret */
    ntrace_encoder_block(r.e, &b);
    feed(&r, blk(0x3100, 2, RISCV_ITYPE_NONE, true));
    run_end(&r);

    g_assert_cmpuint(r.msgs->len, ==, 7);
    check_sync(&r, 0, NTRACE_SYNC_ENABLE, 0x1000);
    check_indirect(&r, 1, NTRACE_BTYPE_EXCEPTION, 2, 0x1000, 0x2000);
    check_indirect(&r, 2, NTRACE_BTYPE_EXCEPTION, 2, 0x2000, 0x3000);
    check_indirect(&r, 3, NTRACE_BTYPE_INTERRUPT, 0, 0x3000, 0x3100);
    check_indirect(&r, 4, NTRACE_BTYPE_JUMP, 2, 0x3100, 0x2004);
    check_indirect(&r, 5, NTRACE_BTYPE_INTERRUPT, 0, 0x2004, 0x3100);
    check_end(&r, 6, 2);
    run_free(&r);
}

/* BTM: taken branches send DirectBranch, not-taken ones nothing. */
static void test_btm_branches(void)
{
    Run r = {};

    run_begin(&r, &btm);
    feed(&r, blk(0x1000, 6, RISCV_ITYPE_NOT_TAKEN_BRANCH, true));
    feed(&r, blk(0x100c, 4, RISCV_ITYPE_TAKEN_BRANCH, true));
    feed(&r, blk(0x1000, 2, RISCV_ITYPE_NONE, true));
    run_end(&r);
    g_assert_cmpuint(r.msgs->len, ==, 3);
    g_assert_cmpuint(msg(&r, 1)->tcode, ==, NTRACE_TCODE_DIRECT_BRANCH);
    g_assert_cmpuint(msg(&r, 1)->icnt, ==, 10);
    check_end(&r, 2, 2);
    run_free(&r);
}

/*
 * DirectBranch's I-CNT at each length, one to four 6-bit pieces (the
 * encoder packs this message by its own code), read back by the
 * message unpacker.
 */
static void test_btm_icnt_lengths(void)
{
    static const unsigned icnts[] = {
        4, 63, 64, 65, 4095, 4096, 0x2aaaa, 0x3ffff, 0x40000, 0x2aaaaa,
        NTRACE_ICNT_MAX - 1,
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(icnts); i++) {
        Run r = {};
        unsigned left = icnts[i] - 4;     /* the first and the last: 4 */

        run_begin(&r, &btm);
        feed(&r, blk(0x1000, 2, RISCV_ITYPE_NONE, true));
        while (left) {
            unsigned k = MIN(left, 0x8000);

            feed(&r, blk(0x1000, k, RISCV_ITYPE_NONE, true));
            left -= k;
        }
        feed(&r, blk(0x1000, 2, RISCV_ITYPE_TAKEN_BRANCH, true));
        feed(&r, blk(0x2000, 2, RISCV_ITYPE_NONE, true));
        run_end(&r);
        g_assert_cmpuint(r.msgs->len, ==, 3);
        g_assert_cmpuint(msg(&r, 1)->tcode, ==, NTRACE_TCODE_DIRECT_BRANCH);
        g_assert_cmpuint(msg(&r, 1)->icnt, ==, icnts[i]);
        check_end(&r, 2, 2);
        run_free(&r);
    }
}

/*
 * HTM: branch outcomes fill HIST (newest in bit 0); 31 of them send
 * ResourceFull; an indirect jump sends IndirectBranchHist, or
 * IndirectBranch when HIST is empty.
 */
static void test_htm_history(void)
{
    Run r = {};
    uint64_t full = 1;

    run_begin(&r, &htm);
    for (int i = 0; i < 31; i++) {
        feed(&r, blk(0x1000, 2, i & 1 ? RISCV_ITYPE_TAKEN_BRANCH :
                                   RISCV_ITYPE_NOT_TAKEN_BRANCH, true));
        full = full << 1 | (i & 1);
    }
    feed(&r, blk(0x1000, 2, RISCV_ITYPE_TAKEN_BRANCH, true));
    feed(&r, blk(0x1000, 2, RISCV_ITYPE_NOT_TAKEN_BRANCH, true));
    feed(&r, blk(0x1004, 2, RISCV_ITYPE_RETURN, true));
    feed(&r, blk(0x5000, 2, RISCV_ITYPE_UNINFERABLE_TAIL_CALL, true));
    feed(&r, blk(0x6000, 2, RISCV_ITYPE_NONE, true));
    run_end(&r);

    g_assert_cmpuint(r.msgs->len, ==, 5);
    g_assert_cmpuint(msg(&r, 1)->tcode, ==, NTRACE_TCODE_RESOURCE_FULL);
    g_assert_cmpuint(msg(&r, 1)->rcode, ==, NTRACE_RCODE_HIST);
    g_assert_cmphex(msg(&r, 1)->rdata, ==, full);
    /* I-CNT goes on across ResourceFull: 34 blocks of 2 */
    g_assert_cmpuint(msg(&r, 2)->tcode, ==,
                     NTRACE_TCODE_INDIRECT_BRANCH_HIST);
    g_assert_cmpuint(msg(&r, 2)->icnt, ==, 68);
    g_assert_cmphex(msg(&r, 2)->hist, ==, 0x6);   /* taken, not taken */
    check_indirect(&r, 3, NTRACE_BTYPE_JUMP, 2, 0x5000, 0x6000);
    g_assert_cmpuint(msg(&r, 4)->cdf, ==, 1);
    g_assert_cmpuint(msg(&r, 4)->hist, ==, 1);
    run_free(&r);
}

/* Implicit return: a return to its call's next instruction is silent. */
static void test_implicit_return(void)
{
    NTraceOptions o = {
        .mode = NTRACE_MODE_BTM, .implicit_return = ETRACE_IR_RETURN_STACK,
    };
    Run r = {};
    ETraceBlock b;

    run_begin(&r, &o);
    b = blk(0x1000, 2, RISCV_ITYPE_INFERABLE_CALL, true);  /* to 0x3000 */
    ntrace_encoder_block(r.e, &b);
    feed(&r, blk(0x3000, 4, RISCV_ITYPE_RETURN, true));
    feed(&r, blk(0x1004, 2, RISCV_ITYPE_INFERABLE_CALL, true));
    feed(&r, blk(0x3000, 4, RISCV_ITYPE_RETURN, true));
    b = blk(0x7000, 2, RISCV_ITYPE_RETURN, true);   /* stack empty */
    ntrace_encoder_block(r.e, &b);
    feed(&r, blk(0x8000, 2, RISCV_ITYPE_NONE, true));
    run_end(&r);

    g_assert_cmpuint(r.msgs->len, ==, 4);
    /* the first return is silent, the second went to 0x7000, not 0x1008 */
    check_indirect(&r, 1, NTRACE_BTYPE_JUMP, 12, 0x1000, 0x7000);
    check_indirect(&r, 2, NTRACE_BTYPE_JUMP, 2, 0x7000, 0x8000);
    check_end(&r, 3, 2);
    run_free(&r);
}

/* I-CNT that would pass 22 bits goes out in ResourceFull first. */
static void test_icnt_full(void)
{
    Run r = {};
    ETraceBlock b = blk(0x1000, 65534, RISCV_ITYPE_NONE, true);
    unsigned n = NTRACE_ICNT_MAX / 65534 + 1;

    run_begin(&r, &btm);
    for (unsigned i = 0; i < n; i++) {
        ntrace_encoder_block(r.e, &b);
    }
    run_end(&r);
    g_assert_cmpuint(r.msgs->len, ==, 3);
    g_assert_cmpuint(msg(&r, 1)->tcode, ==, NTRACE_TCODE_RESOURCE_FULL);
    g_assert_cmpuint(msg(&r, 1)->rcode, ==, NTRACE_RCODE_ICNT);
    g_assert_cmpuint(msg(&r, 1)->rdata, ==, 65534 * (n - 1));
    check_end(&r, 2, 65534);
    run_free(&r);
}

/*
 * A loss: Error, then ProgTraceSync with SYNC 7.  Filters: the first
 * block they stop ends the trace, the next one they pass syncs again.
 * Ownership: after a sync and at a privilege change.
 */
static void test_loss_filter_ownership(void)
{
    NTraceOptions o = { .mode = NTRACE_MODE_BTM, .context = true };
    Run r = {};
    ETraceBlock b;

    run_begin(&r, &o);
    feed(&r, blk(0x1000, 2, RISCV_ITYPE_NONE, true));
    ntrace_encoder_lost(r.e);
    b = blk(0x2000, 2, RISCV_ITYPE_NONE, true);
    b.priv = 1;
    ntrace_encoder_block(r.e, &b);
    b = blk(0x2004, 2, RISCV_ITYPE_NONE, true);
    b.qualified = false;
    ntrace_encoder_block(r.e, &b);
    b = blk(0x3000, 2, RISCV_ITYPE_NONE, true);
    b.priv = 0;
    ntrace_encoder_block(r.e, &b);
    b = blk(0x3004, 2, RISCV_ITYPE_NONE, true);
    b.priv = 1;
    ntrace_encoder_block(r.e, &b);
    run_end(&r);

    g_assert_cmpuint(r.msgs->len, ==, 10);
    check_sync(&r, 0, NTRACE_SYNC_ENABLE, 0x1000);
    g_assert_cmpuint(msg(&r, 1)->process, ==, 3 << 2);
    g_assert_cmpuint(msg(&r, 2)->tcode, ==, NTRACE_TCODE_ERROR);
    g_assert_cmpuint(msg(&r, 2)->ecode, ==, NTRACE_ECODE_PROGRAM);
    check_sync(&r, 3, NTRACE_SYNC_OVERRUN, 0x2000);
    g_assert_cmpuint(msg(&r, 4)->process, ==, 1 << 2);
    check_end(&r, 5, 2);
    check_sync(&r, 6, NTRACE_SYNC_ENABLE, 0x3000);
    g_assert_cmpuint(msg(&r, 7)->process, ==, 0);
    g_assert_cmpuint(msg(&r, 8)->tcode, ==, NTRACE_TCODE_OWNERSHIP);
    g_assert_cmpuint(msg(&r, 8)->process, ==, 1 << 2);
    check_end(&r, 9, 4);
    run_free(&r);
}

/* Periodic sync: the next branch message is its Sync variant. */
static void test_periodic_sync(void)
{
    NTraceOptions o = {
        .mode = NTRACE_MODE_BTM, .sync_mode = ETRACE_SYNC_HALFWORDS,
        .sync_max = 0,
    };
    Run r = {};

    run_begin(&r, &o);
    feed(&r, blk(0x1000, 10, RISCV_ITYPE_UNINFERABLE_TAIL_CALL, true));
    feed(&r, blk(0x2000, 10, RISCV_ITYPE_UNINFERABLE_TAIL_CALL, true));
    feed(&r, blk(0x3000, 10, RISCV_ITYPE_TAKEN_BRANCH, true));
    feed(&r, blk(0x2ff0, 2, RISCV_ITYPE_NONE, true));
    run_end(&r);

    g_assert_cmpuint(r.msgs->len, ==, 5);
    check_indirect(&r, 1, NTRACE_BTYPE_JUMP, 10, 0x1000, 0x2000);
    g_assert_cmpuint(msg(&r, 2)->tcode, ==,
                     NTRACE_TCODE_INDIRECT_BRANCH_SYNC);
    g_assert_cmpuint(msg(&r, 2)->sync, ==, NTRACE_SYNC_PERIODIC);
    g_assert_cmphex(msg(&r, 2)->addr, ==, 0x3000 >> 1);
    g_assert_cmpuint(msg(&r, 3)->tcode, ==, NTRACE_TCODE_DIRECT_BRANCH);
    run_free(&r);
}

/*
 * Repeat: an IndirectBranch equal to the one before it in every field is
 * counted (RepeatBranch); a full HIST equal to the last one too
 * (ResourceFull RCODE 2 with HREPEAT).
 */
static void test_repeat(void)
{
    NTraceOptions o = { .mode = NTRACE_MODE_HTM, .repeat = true };
    Run r = {};
    ETraceBlock b;

    run_begin(&r, &o);
    feed(&r, blk(0x1000, 2, RISCV_ITYPE_UNINFERABLE_TAIL_CALL, true));
    b = blk(0x2000, 4, RISCV_ITYPE_UNINFERABLE_TAIL_CALL, true);
    for (int i = 0; i < 5; i++) {
        ntrace_encoder_block(r.e, &b);      /* to 0x2000 each time */
    }
    ntrace_encoder_block(r.e, &b);          /* and then to 0x3000 */
    for (int i = 0; i < 62; i++) {          /* two HISTs of 31 taken */
        feed(&r, blk(0x3000, 2, RISCV_ITYPE_TAKEN_BRANCH, true));
    }
    for (int i = 0; i < 31; i++) {          /* and one of 31 not taken */
        feed(&r, blk(0x3000, 2, RISCV_ITYPE_NOT_TAKEN_BRANCH, true));
    }
    feed(&r, blk(0x3000, 2, RISCV_ITYPE_UNINFERABLE_TAIL_CALL, true));
    feed(&r, blk(0x4000, 2, RISCV_ITYPE_NONE, true));
    run_end(&r);

    g_assert_cmpuint(r.msgs->len, ==, 9);
    check_indirect(&r, 1, NTRACE_BTYPE_JUMP, 2, 0x1000, 0x2000);
    check_indirect(&r, 2, NTRACE_BTYPE_JUMP, 4, 0x2000, 0x2000);
    g_assert_cmpuint(msg(&r, 3)->tcode, ==, NTRACE_TCODE_REPEAT_BRANCH);
    g_assert_cmpuint(msg(&r, 3)->bcnt, ==, 4);
    check_indirect(&r, 4, NTRACE_BTYPE_JUMP, 4, 0x2000, 0x3000);
    g_assert_cmpuint(msg(&r, 5)->rcode, ==, NTRACE_RCODE_HIST_REPEAT);
    g_assert_cmphex(msg(&r, 5)->rdata, ==, 0xffffffff);
    g_assert_cmpuint(msg(&r, 5)->hrepeat, ==, 2);
    g_assert_cmpuint(msg(&r, 6)->rcode, ==, NTRACE_RCODE_HIST);
    g_assert_cmphex(msg(&r, 6)->rdata, ==, 0x80000000);
    check_indirect(&r, 7, NTRACE_BTYPE_JUMP, 2 * 94, 0x3000, 0x4000);
    check_end(&r, 8, 2);
    run_free(&r);
}

/*
 * A history of period 2 repeats in 30 outcomes, not 31: HIST fills to 30
 * while it repeats (the reference encoder's 30/28-bit patterns).
 */
static void test_repeat_period(void)
{
    NTraceOptions o = { .mode = NTRACE_MODE_HTM, .repeat = true };
    Run r = {};

    run_begin(&r, &o);
    for (int i = 0; i < 91; i++) {
        feed(&r, blk(0x3000, 2, i & 1 ? RISCV_ITYPE_NOT_TAKEN_BRANCH :
                                   RISCV_ITYPE_TAKEN_BRANCH, true));
    }
    feed(&r, blk(0x3000, 2, RISCV_ITYPE_UNINFERABLE_TAIL_CALL, true));
    feed(&r, blk(0x4000, 2, RISCV_ITYPE_NONE, true));
    run_end(&r);

    g_assert_cmpuint(r.msgs->len, ==, 4);
    g_assert_cmpuint(msg(&r, 1)->rcode, ==, NTRACE_RCODE_HIST_REPEAT);
    g_assert_cmphex(msg(&r, 1)->rdata, ==, 0x40000000 | 0x2aaaaaaa);
    g_assert_cmpuint(msg(&r, 1)->hrepeat, ==, 3);
    /* the 91st outcome, taken, with the stop bit */
    g_assert_cmpuint(msg(&r, 2)->tcode, ==,
                     NTRACE_TCODE_INDIRECT_BRANCH_HIST);
    g_assert_cmphex(msg(&r, 2)->hist, ==, 3);
    run_free(&r);
}

/* A loop of 30 branches without a shorter period: HIST repeats at 30. */
static void test_repeat_thirty(void)
{
    NTraceOptions o = { .mode = NTRACE_MODE_HTM, .repeat = true };
    const uint32_t loop = 0x1ef32a57 & 0x3fffffff;  /* oldest in bit 29 */
    Run r = {};

    run_begin(&r, &o);
    for (int i = 0; i < 120; i++) {
        bool taken = loop >> (29 - i % 30) & 1;

        feed(&r, blk(0x3000, 2, taken ? RISCV_ITYPE_TAKEN_BRANCH :
                                   RISCV_ITYPE_NOT_TAKEN_BRANCH, true));
    }
    feed(&r, blk(0x3000, 2, RISCV_ITYPE_UNINFERABLE_TAIL_CALL, true));
    feed(&r, blk(0x4000, 2, RISCV_ITYPE_NONE, true));
    run_end(&r);

    g_assert_cmpuint(r.msgs->len, ==, 4);
    g_assert_cmpuint(msg(&r, 1)->rcode, ==, NTRACE_RCODE_HIST_REPEAT);
    g_assert_cmphex(msg(&r, 1)->rdata, ==, 0x40000000 | loop);
    g_assert_cmpuint(msg(&r, 1)->hrepeat, ==, 4);
    check_indirect(&r, 2, NTRACE_BTYPE_JUMP, 2 * 121, 0x3000, 0x4000);
    run_free(&r);
}

static uint64_t lcg(uint64_t *s);

/*
 * After the loop of 30 ends, HIST fills to 31 outcomes again: a shorter
 * one only pays while it repeats (the reference encoder does the same).
 */
static void test_repeat_thirty_ends(void)
{
    NTraceOptions o = { .mode = NTRACE_MODE_HTM, .repeat = true };
    const uint32_t loop = 0x1ef32a57 & 0x3fffffff;  /* oldest in bit 29 */
    uint64_t seed = 12345;
    unsigned full31 = 0;
    Run r = {};

    run_begin(&r, &o);
    for (int i = 0; i < 120 + 124; i++) {
        bool taken = i < 120 ? loop >> (29 - i % 30) & 1 : lcg(&seed) & 1;

        feed(&r, blk(0x3000, 2, taken ? RISCV_ITYPE_TAKEN_BRANCH :
                                   RISCV_ITYPE_NOT_TAKEN_BRANCH, true));
    }
    feed(&r, blk(0x3000, 2, RISCV_ITYPE_UNINFERABLE_TAIL_CALL, true));
    feed(&r, blk(0x4000, 2, RISCV_ITYPE_NONE, true));
    run_end(&r);

    g_assert_cmpuint(msg(&r, 1)->rcode, ==, NTRACE_RCODE_HIST_REPEAT);
    g_assert_cmpuint(msg(&r, 1)->hrepeat, ==, 4);
    for (unsigned i = 2; i < r.msgs->len; i++) {
        if (msg(&r, i)->tcode == NTRACE_TCODE_RESOURCE_FULL) {
            g_assert_cmpuint(msg(&r, i)->rcode, ==, NTRACE_RCODE_HIST);
            g_assert_cmphex(msg(&r, i)->rdata >> NTRACE_HIST_BITS, ==, 1);
            full31++;
        }
    }
    g_assert_cmpuint(full31, ==, 4);    /* 124 outcomes: 4 of 31 */
    run_free(&r);
}

/* Feed outcomes (the oldest first) as branch blocks at 0x3000. */
static void feed_outcomes(Run *r, const char *outcomes)
{
    for (const char *c = outcomes; *c; c++) {
        feed(r, blk(0x3000, 2, *c == 'T' ? RISCV_ITYPE_TAKEN_BRANCH :
                                     RISCV_ITYPE_NOT_TAKEN_BRANCH, true));
    }
}

/* The ResourceFull RCODE 1 messages whose HIST is not 31 outcomes. */
static unsigned short_hists(Run *r)
{
    unsigned n = 0;

    for (unsigned i = 0; i < r->msgs->len; i++) {
        if (msg(r, i)->tcode == NTRACE_TCODE_RESOURCE_FULL &&
            msg(r, i)->rcode == NTRACE_RCODE_HIST &&
            msg(r, i)->rdata >> NTRACE_HIST_BITS != 1) {
            n++;
        }
    }
    return n;
}

/*
 * A realignment whose HIST does not come again holds off the next four:
 * code whose loops end before their pattern repeats (CoreMark's) would
 * pay a short ResourceFull for each.  Here 40 lures, each a full HIST's
 * worth whose newest 20 outcomes alternate, among outcomes without a
 * period: some land at the newest end of a HIST.
 */
static void test_repeat_realign_holdoff(void)
{
    NTraceOptions o = { .mode = NTRACE_MODE_HTM, .repeat = true };
    /* 31 outcomes whose newest 20 alternate, then 30 without a period */
    const char *lure = "TTNTTTNNTNT" "TNTNTNTNTNTNTNTNTNTN";
    const char *noise = "TTTNNTNTTTNNNTNTTNNNTTTNTNNTTN";
    Run r = {};

    run_begin(&r, &o);
    for (int i = 0; i < 40; i++) {
        feed_outcomes(&r, lure);
        feed_outcomes(&r, noise);
    }
    feed(&r, blk(0x3000, 2, RISCV_ITYPE_UNINFERABLE_TAIL_CALL, true));
    feed(&r, blk(0x4000, 2, RISCV_ITYPE_NONE, true));
    run_end(&r);

    /* short HISTs: 6 without the hold-off */
    g_assert_cmpuint(short_hists(&r), ==, 4);
    run_free(&r);
}

/*
 * A HIST realigned with fewer outcomes than its new length is, once
 * full, the first of a repeat.  Eleven outcomes without a period, then
 * a loop of seven branches (six taken) eight times: the first full HIST
 * holds 20 of the loop's outcomes at its newest end, so the eleven go
 * out alone (ResourceFull RCODE 1) and HIST, realigned, fills to 28
 * from the 20.  That HIST and the next 28 of the loop are one
 * ResourceFull RCODE 2 with HREPEAT 2.  Before the fix, the first fill
 * of 28 was taken for the end of the pattern: HIST went back to 31 and
 * the loop took two more RCODE 1 messages and no repeat.
 */
static void test_repeat_realign_short(void)
{
    NTraceOptions o = { .mode = NTRACE_MODE_HTM, .repeat = true };
    const char *noise = "TTTNNTNTTTNNNTNTTNNNTTTNTNNTTN";
    unsigned hist = 0, repeats = 0;
    Run r = {};

    run_begin(&r, &o);
    feed_outcomes(&r, "TTNTTTNNTNT");
    for (int i = 0; i < 8; i++) {
        feed_outcomes(&r, "TTTTTTN");
    }
    feed_outcomes(&r, noise);
    feed(&r, blk(0x3000, 2, RISCV_ITYPE_UNINFERABLE_TAIL_CALL, true));
    feed(&r, blk(0x4000, 2, RISCV_ITYPE_NONE, true));
    run_end(&r);

    for (unsigned i = 0; i < r.msgs->len; i++) {
        const NTraceMessage *m = msg(&r, i);

        if (m->tcode != NTRACE_TCODE_RESOURCE_FULL) {
            continue;
        }
        if (m->rcode == NTRACE_RCODE_HIST) {
            g_assert_cmphex(m->rdata >> 11, ==, 1);     /* the eleven */
            hist++;
        } else if (m->rcode == NTRACE_RCODE_HIST_REPEAT) {
            g_assert_cmphex(m->rdata >> 28, ==, 1);     /* 28 outcomes */
            g_assert_cmpuint(m->hrepeat, ==, 2);
            repeats++;
        }
    }
    g_assert_cmpuint(hist, ==, 1);
    g_assert_cmpuint(repeats, ==, 1);
    run_free(&r);
}

/* Runs of branch blocks: their outcomes and half-words in HTM only. */
static void test_runs(void)
{
    Run r = {};
    ETraceBlock b;

    run_begin(&r, &htm);
    feed(&r, blk(0x1000, 2, RISCV_ITYPE_NONE, true));
    b = blk(0, 12, RISCV_ITYPE_NONE, true);
    b.run = 3;
    b.run_map = 2;              /* the second was not taken */
    ntrace_encoder_block(r.e, &b);
    feed(&r, blk(0x1010, 2, RISCV_ITYPE_UNINFERABLE_TAIL_CALL, true));
    feed(&r, blk(0x4000, 2, RISCV_ITYPE_NONE, true));
    run_end(&r);
    g_assert_cmpuint(r.msgs->len, ==, 3);
    g_assert_cmpuint(msg(&r, 1)->tcode, ==,
                     NTRACE_TCODE_INDIRECT_BRANCH_HIST);
    g_assert_cmpuint(msg(&r, 1)->icnt, ==, 16);
    g_assert_cmphex(msg(&r, 1)->hist, ==, 0xd);
    run_free(&r);

    /* BTM needs each branch's I-CNT: a loss, then a sync */
    run_begin(&r, &btm);
    feed(&r, blk(0x1000, 2, RISCV_ITYPE_NONE, true));
    b = blk(0, 12, RISCV_ITYPE_NONE, true);
    b.run = 3;
    ntrace_encoder_block(r.e, &b);
    feed(&r, blk(0x1010, 2, RISCV_ITYPE_NONE, true));
    run_end(&r);
    g_assert_cmpuint(msg(&r, 1)->tcode, ==, NTRACE_TCODE_ERROR);
    check_sync(&r, 2, NTRACE_SYNC_OVERRUN, 0x1010);
    run_free(&r);
}

/*
 * The end of a comparison of runs with their blocks one by one: an
 * uninferable jump and its target to both, then the same bytes, of more
 * than min_messages messages.
 */
static void finish_same(Run *one, Run *bulk, unsigned min_messages)
{
    ETraceBlock b = blk(0x2000, 2, RISCV_ITYPE_UNINFERABLE_TAIL_CALL, true);

    feed(one, b);
    feed(bulk, b);
    b = blk(0x4000, 2, RISCV_ITYPE_NONE, true);
    feed(one, b);
    feed(bulk, b);
    run_end(one);
    run_end(bulk);
    g_assert_cmpuint(one->msgs->len, >, min_messages);
    g_assert_cmpmem(one->out.bytes->data, one->out.bytes->len,
                    bulk->out.bytes->data, bulk->out.bytes->len);
    run_free(one);
    run_free(bulk);
}

/*
 * A run gives the bytes its branch blocks one by one give, whatever the
 * outcomes and however HIST fills (with and without repeat).
 */
static void test_runs_bulk(void)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;

    for (int repeat = 0; repeat < 2; repeat++) {
        NTraceOptions o = { .mode = NTRACE_MODE_HTM, .repeat = repeat };
        Run one = {}, bulk = {};
        ETraceBlock b;

        run_begin(&one, &o);
        run_begin(&bulk, &o);
        b = blk(0x1000, 2, RISCV_ITYPE_NONE, true);
        ntrace_encoder_block(one.e, &b);
        ntrace_encoder_block(bulk.e, &b);
        for (unsigned n = 1; n <= 63; n++) {
            /* a pattern that repeats, then random outcomes */
            uint64_t map = n % 3 ? 0x5555555555555555ull >> (n % 2) : x;

            x = x * 6364136223846793005ull + 1442695040888963407ull;
            for (unsigned i = 0; i < n; i++) {
                b = blk(0x2000, 2, map >> i & 1 ?
                        RISCV_ITYPE_NOT_TAKEN_BRANCH :
                        RISCV_ITYPE_TAKEN_BRANCH, true);
                ntrace_encoder_block(one.e, &b);
            }
            b = blk(0, 2 * n, RISCV_ITYPE_NONE, true);
            b.run = n;
            b.run_map = map & ((1ull << n) - 1);
            ntrace_encoder_block(bulk.e, &b);
        }
        finish_same(&one, &bulk, 60);
    }
}

/*
 * A counted run gives the bytes its blocks one by one give in BTM: each
 * taken branch's DirectBranch, with the half-words of the jump blocks
 * held between the branches (and after the last) in its I-CNT.
 */
static void test_counted_runs_bulk(void)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    Run one = {}, bulk = {};
    ETraceBlock b;

    run_begin(&one, &btm);
    run_begin(&bulk, &btm);
    b = blk(0x1000, 2, RISCV_ITYPE_NONE, true);
    ntrace_encoder_block(one.e, &b);
    ntrace_encoder_block(bulk.e, &b);
    for (unsigned n = 1; n <= ETRACE_RUN_COUNTED_MAX; n++) {
        uint8_t counts[2 * ETRACE_RUN_COUNTED_MAX];
        uint64_t map = x & ((1ull << n) - 1);
        unsigned total = 0;

        x = x * 6364136223846793005ull + 1442695040888963407ull;
        memset(counts, 0xa5, sizeof(counts));
        for (unsigned i = 0; i < n; i++) {
            unsigned jump = (x >> (i % 60)) & 3, half = 1 + i % 7;

            if (jump) {
                b = blk(0x3000, jump, RISCV_ITYPE_OTHER_INFERABLE_JUMP, true);
                ntrace_encoder_block(one.e, &b);
            }
            b = blk(0x2000, half, map >> i & 1 ?
                    RISCV_ITYPE_NOT_TAKEN_BRANCH :
                    RISCV_ITYPE_TAKEN_BRANCH, true);
            ntrace_encoder_block(one.e, &b);
            total += jump + half;
            counts[2 * i] = total;
            counts[2 * i + 1] = total >> 8;
        }
        if (n % 3 == 0) {
            b = blk(0x3000, 5, RISCV_ITYPE_NONE, true);
            ntrace_encoder_block(one.e, &b);
            total += 5;
        }
        b = blk(0, total, RISCV_ITYPE_NONE, true);
        b.run = n;
        b.run_map = map;
        b.run_counted = true;
        b.run_entries = counts;
        ntrace_encoder_block(bulk.e, &b);
    }
    finish_same(&one, &bulk, 500);
}

/* ------------------------------------------------------------- decoder */

/* An image of one instruction at 0x1000: beq x0, x0, 0 (a loop). */
static bool read_loop(void *opaque, uint64_t addr, uint16_t *parcel)
{
    (void)opaque;
    if (addr != 0x1000 && addr != 0x1002) {
        return false;
    }
    *parcel = addr == 0x1000 ? 0x0063 : 0x0000;
    return true;
}

static int decode_messages(const NTraceMessage *m, size_t n,
                           uint64_t *insns, const char **err)
{
    NTraceDecoderConfig cfg = {
        .params = params64, .read_parcel = read_loop, .insn = fuzz_ntrace_count,
        .opaque = insns, .max_walk = 1000,
    };
    NTraceDecoder *d = ntrace_decoder_new(&cfg);
    uint64_t off, msg;
    int ret = 0;

    for (size_t i = 0; i < n; i++) {
        uint8_t buf[NTRACE_MAX_MESSAGE];

        ret |= ntrace_decoder_feed(d, buf, ntrace_message_pack(&params64,
                                                              &m[i], buf));
    }
    ret |= ntrace_decoder_finish(d);
    *err = ntrace_decoder_error(d, &off, &msg);
    ntrace_decoder_free(d);
    return ret;
}

/*
 * Hostile repeat counts cost at most max_walk steps per message (an
 * instruction or a repetition);
 * a ResourceFull I-CNT wider than I-CNT is an error.
 */
static void test_decoder_bounds(void)
{
    NTraceMessage m[] = {
        { .tcode = NTRACE_TCODE_PROG_TRACE_SYNC, .sync = 5,
          .addr = 0x1000 >> 1 },
        { .tcode = NTRACE_TCODE_RESOURCE_FULL, .rcode = 2, .rdata = 3,
          .hrepeat = 1ull << 40 },
    };
    uint64_t insns = 0;
    const char *err;

    /* a loop whose branch HIST takes 5 times: 5 instructions */
    m[1].hrepeat = 5;
    g_assert_cmpint(decode_messages(m, 2, &insns, &err), ==, 0);
    g_assert_null(err);
    g_assert_cmpuint(insns, ==, 5);

    insns = 0;
    m[1].hrepeat = 1ull << 40;
    g_assert_cmpint(decode_messages(m, 2, &insns, &err), ==, -1);
    g_assert_cmpstr(err, ==, "a message repeats more often than it may walk");
    g_assert_cmpuint(insns, ==, 500);   /* a step per repetition too */

    /* repeating a branch message that walks nothing still ends */
    {
        NTraceMessage r[] = {
            m[0],
            { .tcode = NTRACE_TCODE_INDIRECT_BRANCH,   /* a trap at once */
              .btype = NTRACE_BTYPE_EXCEPTION },
            { .tcode = NTRACE_TCODE_REPEAT_BRANCH, .bcnt = 1ull << 40 },
        };

        insns = 0;
        g_assert_cmpint(decode_messages(r, 3, &insns, &err), ==, -1);
        g_assert_cmpstr(err, ==,
                        "a message repeats more often than it may walk");
        g_assert_cmpuint(insns, ==, 0);
    }

    m[1] = (NTraceMessage) {
        .tcode = NTRACE_TCODE_RESOURCE_FULL, .rcode = NTRACE_RCODE_ICNT,
        .rdata = NTRACE_ICNT_MAX + 1ull,
    };
    g_assert_cmpint(decode_messages(m, 2, &insns, &err), ==, -1);
    g_assert_cmpstr(err, ==, "ResourceFull I-CNT wider than I-CNT");
}

typedef struct GapRun {
    uint64_t insns;
    GArray *gaps;           /* ETraceDecEvent */
    unsigned errors;
} GapRun;

static void gap_insn(void *opaque, const ETraceDecInsn *insn)
{
    (void)insn;
    ((GapRun *)opaque)->insns++;
}

static void gap_event(void *opaque, const ETraceDecEvent *ev)
{
    GapRun *r = opaque;

    if (ev->type == ETRACE_DEC_GAP) {
        g_array_append_val(r->gaps, *ev);
    }
    r->errors += ev->type == ETRACE_DEC_ERROR;
}

/*
 * A walk that needs an instruction no image holds (after a sync outside
 * the image) is a gap with that address, not an error; the messages up
 * to the next sync are skipped, a sync in the image resumes, and the
 * next walk out of the image is a gap again.
 */
static void test_decoder_gap_no_image(void)
{
    static const NTraceMessage m[] = {
        { .tcode = NTRACE_TCODE_PROG_TRACE_SYNC, .sync = 5,
          .addr = 0x2000 >> 1 },
        { .tcode = NTRACE_TCODE_DIRECT_BRANCH, .icnt = 2 },
        { .tcode = NTRACE_TCODE_DIRECT_BRANCH, .icnt = 2 },  /* skipped */
        { .tcode = NTRACE_TCODE_PROG_TRACE_SYNC, .sync = 5,
          .addr = 0x1000 >> 1 },
        { .tcode = NTRACE_TCODE_DIRECT_BRANCH, .icnt = 2 },
        { .tcode = NTRACE_TCODE_PROG_TRACE_SYNC, .sync = 5,
          .addr = 0x3000 >> 1 },
        { .tcode = NTRACE_TCODE_DIRECT_BRANCH, .icnt = 2 },
    };
    GapRun r = { .gaps = g_array_new(false, false, sizeof(ETraceDecEvent)) };
    NTraceDecoderConfig cfg = {
        .params = params64, .read_parcel = read_loop, .insn = gap_insn,
        .event = gap_event, .opaque = &r,
    };
    NTraceDecoder *d = ntrace_decoder_new(&cfg);
    const ETraceDecEvent *gap;
    uint64_t off, msg;
    int ret = 0;

    for (size_t i = 0; i < G_N_ELEMENTS(m); i++) {
        uint8_t buf[NTRACE_MAX_MESSAGE];

        ret |= ntrace_decoder_feed(d, buf, ntrace_message_pack(&params64,
                                                              &m[i], buf));
    }
    ret |= ntrace_decoder_finish(d);
    g_assert_cmpint(ret, ==, 0);
    g_assert_null(ntrace_decoder_error(d, &off, &msg));
    g_assert_cmpuint(r.errors, ==, 0);
    g_assert_cmpuint(r.insns, ==, 1);
    g_assert_cmpuint(r.gaps->len, ==, 2);
    gap = &g_array_index(r.gaps, ETraceDecEvent, 0);
    g_assert_cmpint(gap->gap_reason, ==, ETRACE_GAP_NO_IMAGE);
    g_assert_cmphex(gap->gap_addr, ==, 0x2000);
    g_assert_false(gap->last_valid);
    gap = &g_array_index(r.gaps, ETraceDecEvent, 1);
    g_assert_cmpint(gap->gap_reason, ==, ETRACE_GAP_NO_IMAGE);
    g_assert_cmphex(gap->gap_addr, ==, 0x3000);
    g_assert_true(gap->last_valid);
    g_assert_cmphex(gap->address, ==, 0x1000);
    ntrace_decoder_free(d);
    g_array_free(r.gaps, true);
}

/*
 * What the fuzzer found (tests-unit/ntrace-corpus, NTRACE_CORPUS): each
 * input decodes without a crash (the sanitizers build runs this too) and
 * within its budget.
 */
static void test_decoder_corpus(void)
{
    const char *path = g_getenv("NTRACE_CORPUS");
    g_autoptr(GDir) dir = path ? g_dir_open(path, 0, NULL) : NULL;
    const char *name;
    unsigned n = 0;

    if (!dir) {
        g_test_skip("no NTRACE_CORPUS");
        return;
    }
    while ((name = g_dir_read_name(dir))) {
        g_autofree char *file = g_build_filename(path, name, NULL);
        g_autofree gchar *data = NULL;
        gsize len;

        if (!g_str_has_suffix(name, ".bin")) {
            continue;
        }
        g_assert_true(g_file_get_contents(file, &data, &len, NULL));
        fuzz_ntrace_run((const uint8_t *)data, len);
        n++;
    }
    g_test_message("%u inputs", n);
}

/*
 * The packed path (ntrace_encoder_packed) makes the bytes the block path
 * makes of the same records, in every mode, with records of every kind
 * (traps, runs in HTM, counted runs in BTM, privilege and context
 * changes) and batches cut anywhere.
 */
static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* Runs among the records: of HTM (outcomes only), or counted for BTM */
enum { RUNS_NONE, RUNS_HISTORY, RUNS_COUNTED };

/*
 * A counted run of k branches at pb (the outcomes in map, 1 = not
 * taken): each branch block of 1 to 40 half-words, some with a held jump
 * block before it or after the last; returns its entries.
 */
static size_t random_counted_run(ETracePackedBlock *pb, unsigned k,
                                 uint64_t map, unsigned priv, uint64_t *seed)
{
    unsigned slots = etrace_run_count_slots(k), total = 0;
    uint8_t *counts = (uint8_t *)&pb[1];

    memset(counts, 0xa5, slots * sizeof(*pb));  /* arbitrary where unused */
    for (unsigned i = 0; i < k; i++) {
        total += 1 + lcg(seed) % 40 + (lcg(seed) % 4 ? 0 : lcg(seed) % 9);
        if (!(map >> i & 1)) {
            counts[2 * i] = total;
            counts[2 * i + 1] = total >> 8;
        }
    }
    total += lcg(seed) % 2 ? 0 : 1 + lcg(seed) % 9;
    pb->iaddr = map | UINT64_C(1) << k;
    pb->info = ETRACE_PB_RUN | ETRACE_PB_RUN_COUNTED | total |
               (uint64_t)k << ETRACE_PB_NINSNS_SHIFT |
               (uint64_t)slots << ETRACE_PB_ITYPE_SHIFT |
               (uint64_t)priv << ETRACE_PB_PRIV_SHIFT;
    return 1 + slots;
}

static size_t random_records(ETracePackedBlock *pb, size_t max, int runs,
                             uint64_t seed)
{
    static const unsigned itypes[] = {
        RISCV_ITYPE_NONE, RISCV_ITYPE_NOT_TAKEN_BRANCH,
        RISCV_ITYPE_TAKEN_BRANCH, RISCV_ITYPE_NOT_TAKEN_BRANCH,
        RISCV_ITYPE_TAKEN_BRANCH, RISCV_ITYPE_OTHER_INFERABLE_JUMP,
        RISCV_ITYPE_INFERABLE_CALL, RISCV_ITYPE_UNINFERABLE_CALL,
        RISCV_ITYPE_RETURN, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP,
        RISCV_ITYPE_TRAP_RETURN,
    };
    uint64_t addr = 0x80000000;
    /* where calls return: most returns go there, as a return stack expects */
    uint64_t links[16];
    unsigned depth = 0;
    size_t n = 0;

    while (n + 2 <= max) {
        unsigned r = lcg(&seed) % 100, half = 1 + lcg(&seed) % 40;
        unsigned priv = lcg(&seed) % 50 ? 3 : 1, itype;

        if (r < 3) {                        /* a trap, its pair */
            pb[n].iaddr = addr + 2 * half;
            pb[n].info = (uint64_t)(r ? 2 : 1) << ETRACE_PB_ITYPE_SHIFT |
                         (uint64_t)priv << ETRACE_PB_PRIV_SHIFT;
            pb[n + 1].cause = r ? 7 : 8;
            pb[n + 1].tval = 0;
            n += 2;
            addr = 0x80001000;
            continue;
        }
        if (runs == RUNS_COUNTED && r < 10 && n + 6 <= max) {
            unsigned k = 1 + lcg(&seed) % 40;

            n += random_counted_run(&pb[n], k, (lcg(&seed) << 31 |
                                                lcg(&seed)) &
                                               ((UINT64_C(1) << k) - 1),
                                    priv, &seed);
            continue;
        }
        if (runs == RUNS_HISTORY && r < 10) {   /* a run of 2..40 */
            unsigned k = 2 + lcg(&seed) % 39;

            pb[n].iaddr = (lcg(&seed) << 31 | lcg(&seed)) &
                          ((UINT64_C(1) << k) - 1);
            pb[n].iaddr |= UINT64_C(1) << k;
            pb[n].info = ETRACE_PB_RUN | 2 * k |
                         (uint64_t)k << ETRACE_PB_NINSNS_SHIFT |
                         (uint64_t)priv << ETRACE_PB_PRIV_SHIFT;
            n++;
            continue;
        }
        itype = itypes[lcg(&seed) % G_N_ELEMENTS(itypes)];
        pb[n].iaddr = addr;
        pb[n].info = ETRACE_PB_PLAIN | half |
                     (uint64_t)(half / 2 + 1) << ETRACE_PB_NINSNS_SHIFT |
                     (uint64_t)itype << ETRACE_PB_ITYPE_SHIFT |
                     (lcg(&seed) & 1 ? ETRACE_PB_ILASTSIZE : 0) |
                     (uint64_t)priv << ETRACE_PB_PRIV_SHIFT;
        if ((itype == RISCV_ITYPE_INFERABLE_CALL ||
             itype == RISCV_ITYPE_UNINFERABLE_CALL) && depth < 16) {
            links[depth++] = addr + 2 * half;
        }
        if (itype == RISCV_ITYPE_RETURN && depth && lcg(&seed) % 8) {
            addr = links[--depth];
        } else {
            addr += 2 * half + 2 * (lcg(&seed) % 64);
        }
        n++;
    }
    return n;
}

static GByteArray *encode_records(const NTraceParams *np,
                                  const NTraceOptions *o,
                                  const ETracePackedBlock *pb, size_t n,
                                  bool packed, uint64_t seed,
                                  NTraceStats *stats)
{
    ETraceParams ep;
    Out out = { g_byte_array_new(), .windowed = packed };
    NTraceEncoder *e = ntrace_encoder_new(np, collect, &out);

    etrace_params_default(&ep, np->xlen);
    if (packed) {
        /* as QEMU's device: the packed records' messages into a window */
        out.win.pos = out.wbuf;
        window_take(&out);
        ntrace_encoder_set_window(e, &out.win);
    }
    ntrace_encoder_start(e, o);
    for (size_t i = 0; i < n;) {
        uint64_t context = i / 500;             /* changes now and then */

        if (packed) {
            /* a record cut by the chunk's end waits for the next */
            size_t chunk = 1 + lcg(&seed) % 64;
            size_t took;

            chunk = MIN(MIN(chunk, 500 - i % 500), n - i);
            took = ntrace_encoder_packed(e, &ep, pb + i, chunk, context, 0);

            i += took ? took :
                 ntrace_encoder_packed(e, &ep, pb + i,
                                       etrace_packed_len(pb[i].info),
                                       context, 0);
        } else {
            ETraceBlock b;

            etrace_packed_to_block(&ep, &pb[i], context, 0, &b);
            ntrace_encoder_block(e, &b);
            i += etrace_packed_len(pb[i].info);
        }
    }
    ntrace_encoder_stop(e);
    ntrace_encoder_stats(e, stats);
    ntrace_encoder_free(e);
    if (packed) {
        window_take(&out);
    }
    return out.bytes;
}

static void test_packed(void)
{
    static const struct {
        unsigned mode, ir, sync_mode, src_bits;
        bool repeat, context;
    } cfg[] = {
        { NTRACE_MODE_BTM, 0, 0, 0, false, false },
        { NTRACE_MODE_HTM, 0, 0, 0, false, false },
        { NTRACE_MODE_HTM, ETRACE_IR_RETURN_STACK, 0, 0, false, false },
        { NTRACE_MODE_BTM, ETRACE_IR_CALL_COUNTER, 0, 0, true, false },
        { NTRACE_MODE_HTM, 0, 0, 0, true, true },
        { NTRACE_MODE_BTM, 0, ETRACE_SYNC_HALFWORDS, 0, false, false },
        { NTRACE_MODE_BTM, 0, ETRACE_SYNC_PACKETS, 0, false, false },
        { NTRACE_MODE_BTM, 0, ETRACE_SYNC_CYCLES, 0, false, false },
        { NTRACE_MODE_BTM, ETRACE_IR_RETURN_STACK, ETRACE_SYNC_CYCLES, 0,
          false, false },
        { NTRACE_MODE_HTM, 0, ETRACE_SYNC_PACKETS, 0, false, false },
        { NTRACE_MODE_HTM, 0, ETRACE_SYNC_HALFWORDS, 0, false, false },
        { NTRACE_MODE_BTM, ETRACE_IR_CALL_COUNTER, 0, 0, false, false },
        { NTRACE_MODE_HTM, ETRACE_IR_CALL_COUNTER, 0, 0, false, false },
        { NTRACE_MODE_HTM, 0, ETRACE_SYNC_CYCLES, 0, false, true },
        { NTRACE_MODE_BTM, 0, 0, 2, false, true },
        { NTRACE_MODE_HTM, ETRACE_IR_RETURN_STACK, 0, 0, true, false },
        { NTRACE_MODE_HTM, ETRACE_IR_CALL_COUNTER, 0, 0, true, false },
        { NTRACE_MODE_BTM, ETRACE_IR_RETURN_STACK, 0, 0, true, false },
        { NTRACE_MODE_HTM, ETRACE_IR_RETURN_STACK, ETRACE_SYNC_PACKETS, 0,
          true, false },
    };
    enum { N = 20000 };
    ETracePackedBlock *pb = g_new(ETracePackedBlock, N);

    for (unsigned i = 0; i < G_N_ELEMENTS(cfg); i++) {
        NTraceParams np = { .xlen = 64, .src_bits = cfg[i].src_bits,
                            .src_id = cfg[i].src_bits ? 2 : 0 };
        NTraceOptions o = {
            .mode = cfg[i].mode, .implicit_return = cfg[i].ir,
            .repeat = cfg[i].repeat, .context = cfg[i].context,
            .sync_mode = cfg[i].sync_mode,
        };
        size_t n = random_records(pb, N, cfg[i].mode == NTRACE_MODE_HTM ?
                                  RUNS_HISTORY : RUNS_COUNTED, i + 1);
        NTraceStats st_slow, st_fast;
        g_autoptr(GByteArray) slow = encode_records(&np, &o, pb, n, false,
                                                    i, &st_slow);
        g_autoptr(GByteArray) fast = encode_records(&np, &o, pb, n, true,
                                                    i, &st_fast);

        g_test_message("configuration %u: %u bytes", i, slow->len);
        g_assert_cmpuint(slow->len, >, n / 8);
        g_assert_cmpmem(fast->data, fast->len, slow->data, slow->len);
        g_assert_cmpmem(&st_fast, sizeof(st_fast), &st_slow, sizeof(st_slow));
    }
    g_free(pb);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ntrace/pack/indirect-branch-hist",
                    test_pack_indirect_branch_hist);
    g_test_add_func("/ntrace/pack/prog-trace-sync", test_pack_prog_trace_sync);
    g_test_add_func("/ntrace/pack/src", test_pack_src);
    g_test_add_func("/ntrace/pack/others", test_pack_others);
    g_test_add_func("/ntrace/unpack/bad", test_unpack_bad);
    g_test_add_func("/ntrace/encoder/rules-example", test_rules_example);
    g_test_add_func("/ntrace/encoder/counted-runs", test_counted_runs_bulk);
    g_test_add_func("/ntrace/encoder/traps", test_traps);
    g_test_add_func("/ntrace/encoder/btm-branches", test_btm_branches);
    g_test_add_func("/ntrace/encoder/btm-icnt-lengths",
                    test_btm_icnt_lengths);
    g_test_add_func("/ntrace/encoder/htm-history", test_htm_history);
    g_test_add_func("/ntrace/encoder/implicit-return", test_implicit_return);
    g_test_add_func("/ntrace/encoder/icnt-full", test_icnt_full);
    g_test_add_func("/ntrace/encoder/loss-filter-ownership",
                    test_loss_filter_ownership);
    g_test_add_func("/ntrace/encoder/periodic-sync", test_periodic_sync);
    g_test_add_func("/ntrace/encoder/repeat", test_repeat);
    g_test_add_func("/ntrace/encoder/runs", test_runs);
    g_test_add_func("/ntrace/encoder/runs-bulk", test_runs_bulk);
    g_test_add_func("/ntrace/encoder/packed", test_packed);
    g_test_add_func("/ntrace/decoder/bounds", test_decoder_bounds);
    g_test_add_func("/ntrace/decoder/gap-no-image",
                    test_decoder_gap_no_image);
    g_test_add_func("/ntrace/decoder/corpus", test_decoder_corpus);
    g_test_add_func("/ntrace/encoder/repeat-period", test_repeat_period);
    g_test_add_func("/ntrace/encoder/repeat-realign-holdoff",
                    test_repeat_realign_holdoff);
    g_test_add_func("/ntrace/encoder/repeat-realign-short",
                    test_repeat_realign_short);
    g_test_add_func("/ntrace/encoder/repeat-thirty", test_repeat_thirty);
    g_test_add_func("/ntrace/encoder/repeat-thirty-ends",
                    test_repeat_thirty_ends);
    return g_test_run();
}

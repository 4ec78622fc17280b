/*
 * Unit tests of the E-trace decoder: hand-built packet sequences over
 * small programs, checked against the exact instruction sequence the
 * spec's rules imply (E-trace v1.1.1 chapters 3, 6 and 11), and
 * malformed input.
 *
 * Machine code was produced by GNU as (riscv64-unknown-elf, rv64gc).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <glib.h>
#include "etrace-decoder.h"
#include "etrace-data.h"
#include "etrace-model.h"

#define BASE    0x80000000ull

/* ------------------------------------------------------------ programs */

/*
 * P1: loop, call, uninferable call, sijump pair, ecall, handler.
 */
static const uint16_t p1[] = {
    0x450d,                 /*  0: c.li    a0,3 */
    0x157d,                 /*  2: c.addi  a0,-1          loop: */
    0xfd7d,                 /*  4: c.bnez  a0,2 <loop> */
    0x00ef, 0x02c0,         /*  6: jal     ra,32 <func> */
    0x0363, 0x00b5,         /*  a: beq     a0,a1,10 <skip> */
    0x0001,                 /*  e: c.nop */
    0x0317, 0x0000,         /* 10: auipc   t1,0x0         skip: */
    0x0313, 0x0263,         /* 14: addi    t1,t1,38 */
    0x00e7, 0x0003,         /* 18: jalr    ra,0(t1)       -> func2 */
    0x0397, 0x0000,         /* 1c: auipc   t2,0x0 */
    0x8067, 0x00c3,         /* 20: jalr    zero,12(t2)    -> sit */
    0x0001,                 /* 24: c.nop */
    0x0001,                 /* 26: c.nop */
    0x0685,                 /* 28: c.addi  a3,1           sit: */
    0x0073, 0x0000,         /* 2a: ecall */
    0x0001,                 /* 2e: c.nop */
    0xa001,                 /* 30: c.j     30 */
    0x0585,                 /* 32: c.addi  a1,1           func: */
    0x8082,                 /* 34: c.jr    ra */
    0x0605,                 /* 36: c.addi  a2,1           func2: */
    0x8082,                 /* 38: c.jr    ra */
    0x0705,                 /* 3a: c.addi  a4,1           handler: */
    0x0073, 0x3020,         /* 3c: mret */
};

/* P2: a loop of 100 iterations, then a return. */
static const uint16_t p2[] = {
    0x0513, 0x0640,         /*  0: addi    a0,zero,100 */
    0x157d,                 /*  4: c.addi  a0,-1          loop: */
    0xfd7d,                 /*  6: c.bnez  a0,4 <loop> */
    0x8082,                 /*  8: c.jr    ra */
    0x0001,                 /*  a: c.nop                  after: */
    0xbffd,                 /*  c: c.j     a <after> */
};

/* P3: a loop closed by an indirect jump (6.6.2 "looplabel"). */
static const uint16_t p3[] = {
    0x0505,                 /*  0: c.addi  a0,1 */
    0x0585,                 /*  2: c.addi  a1,1           looplabel: */
    0x0605,                 /*  4: c.addi  a2,1 */
    0x8302,                 /*  6: c.jr    t1             -> looplabel */
    0x0001,                 /*  8: c.nop */
};

/*
 * Spec chapter 12, example 4 (Proc_6, 3 branches then a return to
 * Proc_1).  The spec elides 0x80001110..0x80001114 and the code at the
 * return target: they are filled with c.nop here.
 */
static const uint16_t ex4[] = {
    0x0001, 0x0001, 0x0001, /* 80001110..80001114: elided, c.nop */
    0x0463, 0x02f4,         /* 80001116: beq   s0,a5,8000113e */
    0xc81d,                 /* 8000111a: beqz  s0,80001150 */
    0x4709,                 /* 8000111c: li    a4,2 */
    0x0063, 0x04e4,         /* 8000111e: beq   s0,a4,8000115e */
};
static const uint16_t ex4_tail[] = {
    0x60e2,                 /* 8000115e: ld    ra,24(sp) */
    0x6442,                 /* 80001160: ld    s0,16(sp) */
    0xc09c,                 /* 80001162: sw    a5,0(s1) */
    0x64a2,                 /* 80001164: ld    s1,8(sp) */
    0x6105,                 /* 80001166: addi  sp,sp,32 */
    0x8082,                 /* 80001168: ret */
};
static const uint16_t ex_target[] = {
    0x0001, 0x0001,         /* return targets: c.nop */
};

/* Example 1: debug_printf returns to main. */
static const uint16_t ex1[] = {
    0x6121,                 /* 80001188: addi  sp,sp,64 */
    0x8082,                 /* 8000118a: ret */
};
static const uint16_t ex1_target[] = {
    0x0597, 0x0000,         /* 80001a88: auipc a1,0x0 */
    0x8593, 0x6505,         /* 80001a8c: addi  a1,a1,1616 */
};

/*
 * Example 3: Func_2 ends with a taken branch and a return.  The spec
 * gives neither the branch at 800010dc nor the code it skips: a c.beqz
 * with the same target stands in, the skipped bytes are c.nop.
 */
static const uint16_t ex3[] = {
    0x4781,                 /* 800010da: li    a5,0 */
    0xcb81,                 /* 800010dc: beqz  a5,800010ec (stand-in) */
    0x0001, 0x0001, 0x0001, 0x0001, 0x0001, 0x0001, 0x0001,
    0x60e2,                 /* 800010ec: ld    ra,24(sp) */
    0x6442,                 /* 800010ee: ld    s0,16(sp) */
    0x64a2,                 /* 800010f0: ld    s1,8(sp) */
    0x853e,                 /* 800010f2: mv    a0,a5 */
    0x6105,                 /* 800010f4: addi  sp,sp,32 */
    0x8082,                 /* 800010f6: ret */
};

/* ------------------------------------------------------------- fixture */

typedef struct Region {
    uint64_t base;
    const uint16_t *parcels;
    size_t n;
} Region;

typedef struct Fixture {
    ETraceParams p;
    ETraceOptions o;
    Region regions[4];
    unsigned nregions;
    uint64_t xtvec[4];
    ETraceTrapVectorFn *trap_vector;
    uint64_t max_run;
    GByteArray *stream;
    uint64_t last;          /* the encoder's last reported address */
    ETraceDecoder *d;
    GArray *insns;          /* uint64_t addresses */
    GArray *privs;          /* unsigned */
    GArray *elements;       /* ETraceDecInsn */
    GArray *events;         /* ETraceDecEvent */
} Fixture;

static bool read_parcel(void *opaque, uint64_t addr, uint16_t *parcel)
{
    Fixture *f = opaque;

    for (unsigned i = 0; i < f->nregions; i++) {
        Region *r = &f->regions[i];

        if (addr >= r->base && addr < r->base + 2 * r->n && !(addr & 1)) {
            *parcel = r->parcels[(addr - r->base) / 2];
            return true;
        }
    }
    return false;
}

static void on_insn(void *opaque, const ETraceDecInsn *insn)
{
    Fixture *f = opaque;

    g_assert_true(insn->len == 2 || insn->len == 4);
    g_array_append_val(f->insns, insn->addr);
    g_array_append_val(f->privs, insn->privilege);
    g_array_append_val(f->elements, *insn);
}

static void on_event(void *opaque, const ETraceDecEvent *ev)
{
    Fixture *f = opaque;

    g_array_append_val(f->events, *ev);
}

static void fixture_init(Fixture *f, unsigned xlen)
{
    memset(f, 0, sizeof(*f));
    etrace_params_default(&f->p, xlen);
    f->stream = g_byte_array_new();
    f->insns = g_array_new(false, false, sizeof(uint64_t));
    f->privs = g_array_new(false, false, sizeof(unsigned));
    f->elements = g_array_new(false, false, sizeof(ETraceDecInsn));
    f->events = g_array_new(false, false, sizeof(ETraceDecEvent));
}

static void fixture_free(Fixture *f)
{
    etrace_decoder_free(f->d);
    g_byte_array_free(f->stream, true);
    g_array_free(f->insns, true);
    g_array_free(f->privs, true);
    g_array_free(f->elements, true);
    g_array_free(f->events, true);
}

static void add_region(Fixture *f, uint64_t base, const uint16_t *parcels,
                       size_t n)
{
    g_assert_cmpuint(f->nregions, <, G_N_ELEMENTS(f->regions));
    f->regions[f->nregions++] = (Region) { base, parcels, n };
}

static void new_decoder(Fixture *f)
{
    ETraceDecoderConfig cfg = {
        .params = f->p,
        .read_parcel = read_parcel,
        .insn = on_insn,
        .event = on_event,
        .trap_vector = f->trap_vector,
        .max_straight_run = f->max_run,
        .opaque = f,
    };

    memcpy(cfg.xtvec, f->xtvec, sizeof(cfg.xtvec));
    etrace_decoder_free(f->d);
    f->d = etrace_decoder_new(&cfg);
    g_assert_nonnull(f->d);
    g_array_set_size(f->insns, 0);
    g_array_set_size(f->privs, 0);
    g_array_set_size(f->events, 0);
}

/* ------------------------------------------------------ packet builders */

static void put(Fixture *f, ETracePacket *pkt)
{
    uint8_t buf[ETRACE_MAX_PACKET];
    size_t n = etrace_packet_pack(&f->p, &f->o, pkt, buf);

    g_assert_cmpuint(n, >, 0);
    g_byte_array_append(f->stream, buf, n);
}

static void put_support(Fixture *f, bool enable, ETraceQualStatus qual)
{
    ETracePacket pkt = {
        .format = 3, .subformat = 3, .enable = enable, .qual_status = qual,
        .options = etrace_options_pack(&f->p, &f->o),
    };

    put(f, &pkt);
}

/* branch_nt: the reported instruction is a branch, not taken (6.2.1) */
static void put_sync(Fixture *f, uint64_t addr, unsigned priv, bool branch)
{
    ETracePacket pkt = {
        .format = 3, .subformat = 0, .branch = branch, .privilege = priv,
        .address = addr,
    };

    put(f, &pkt);
    f->last = addr;
}

static void put_trap(Fixture *f, uint64_t addr, unsigned priv,
                     uint64_t cause, bool interrupt, uint64_t tvalepc)
{
    ETracePacket pkt = {
        .format = 3, .subformat = 1, .branch = true, .privilege = priv,
        .ecause = cause, .interrupt = interrupt, .address = addr,
        .tvalepc = tvalepc,
    };

    put(f, &pkt);
    f->last = addr;
}

typedef struct Flags {
    bool notify, updiscon, irreport;
    uint32_t irdepth;
} Flags;

static void set_address(Fixture *f, ETracePacket *pkt, uint64_t addr,
                        const Flags *fl)
{
    uint64_t mask = f->p.iaddress_width_p == 64 ? UINT64_MAX : UINT32_MAX;
    Flags none = { 0 };

    pkt->address = (f->o.full_address ? addr : addr - f->last) & mask;
    fl = fl ? fl : &none;
    etrace_packet_set_flags(&f->p, pkt, fl->notify, fl->updiscon,
                            fl->irreport, fl->irdepth);
    f->last = addr;
}

/* Format 2, or format 1 when there are branches to report. */
static void put_addr(Fixture *f, unsigned nbranches, uint32_t map,
                     uint64_t addr, const Flags *fl)
{
    ETracePacket pkt = {
        .format = nbranches ? 1 : 2, .branches = nbranches,
        .branch_map = map,
    };

    set_address(f, &pkt, addr, fl);
    put(f, &pkt);
}

/* Format 1 with a full map and no address. */
static void put_map(Fixture *f, uint32_t map)
{
    ETracePacket pkt = { .format = 1, .branches = 0, .branch_map = map };

    put(f, &pkt);
}

/* Format 0 subformat 0: count correctly predicted branches (>= 31). */
static void put_count(Fixture *f, uint32_t count, unsigned fmt,
                      uint64_t addr, const Flags *fl)
{
    ETracePacket pkt = {
        .format = 0, .subformat = 0, .branch_count = count - 31,
        .branch_fmt = fmt,
    };

    if (fmt) {
        set_address(f, &pkt, addr, fl);
    }
    put(f, &pkt);
}

/* Format 0 subformat 1: the target is in the jump target cache. */
static void put_jtc(Fixture *f, uint64_t addr, unsigned nbranches,
                    uint32_t map, const Flags *fl)
{
    ETracePacket pkt = {
        .format = 0, .subformat = 1, .index = etrace_jtc_index(&f->p, addr),
        .branches = nbranches, .branch_map = map,
    };
    Flags none = { 0 };

    fl = fl ? fl : &none;
    etrace_packet_set_flags(&f->p, &pkt, false, false, fl->irreport,
                            fl->irdepth);
    put(f, &pkt);
    f->last = addr;
}

/* ------------------------------------------------------------ decoding */

static int decode(Fixture *f)
{
    int rc;

    new_decoder(f);
    rc = etrace_decoder_feed(f->d, f->stream->data, f->stream->len);
    return etrace_decoder_finish(f->d) < 0 ? -1 : rc;
}

/* The same stream in chunks of chunk bytes. */
static int decode_chunked(Fixture *f, size_t chunk)
{
    int rc = 0;

    new_decoder(f);
    for (size_t i = 0; i < f->stream->len; i += chunk) {
        size_t n = MIN(chunk, f->stream->len - i);

        rc |= etrace_decoder_feed(f->d, f->stream->data + i, n);
    }
    return etrace_decoder_finish(f->d) < 0 ? -1 : rc;
}

static void check_insns(Fixture *f, uint64_t base, const uint32_t *offs,
                        size_t n)
{
    for (size_t i = 0; i < MIN(n, f->insns->len); i++) {
        uint64_t got = g_array_index(f->insns, uint64_t, i);

        if (got != base + offs[i]) {
            g_test_message("instruction %zu: got %" PRIx64 " want %" PRIx64,
                           i, got, base + offs[i]);
        }
        g_assert_cmphex(got, ==, base + offs[i]);
    }
    g_assert_cmpuint(f->insns->len, ==, n);
}

static const ETraceDecEvent *find_event(Fixture *f, ETraceDecEventType t,
                                        unsigned nth)
{
    for (unsigned i = 0; i < f->events->len; i++) {
        const ETraceDecEvent *ev = &g_array_index(f->events,
                                                  ETraceDecEvent, i);

        if (ev->type == t && nth-- == 0) {
            return ev;
        }
    }
    return NULL;
}

static unsigned count_events(Fixture *f, ETraceDecEventType t)
{
    unsigned n = 0;

    while (find_event(f, t, n)) {
        n++;
    }
    return n;
}

/* ------------------------------------------------------------- P1 tests */

/* The path of P1 when the loop runs 3 times and func2 returns normally. */
static const uint32_t p1_path[] = {
    0x00, 0x02, 0x04, 0x02, 0x04, 0x02, 0x04, 0x06, 0x32, 0x34, 0x0a, 0x0e,
    0x10, 0x14, 0x18, 0x36, 0x38, 0x1c, 0x20, 0x28, 0x3a, 0x3c, 0x2e, 0x30,
};

static void p1_fixture(Fixture *f)
{
    fixture_init(f, 64);
    add_region(f, BASE, p1, G_N_ELEMENTS(p1));
}

/* The packets after the trap: handler, mret back to S mode, the end. */
static void p1_after_trap(Fixture *f)
{
    put_trap(f, BASE + 0x3a, 3, 9, false, 0);
    put_sync(f, BASE + 0x2e, 1, true);  /* privilege change at mret */
    put_addr(f, 0, 0, BASE + 0x30, NULL);
    put_support(f, false, ETRACE_QUAL_ENDED_REP);
}

static void check_p1_events(Fixture *f)
{
    const ETraceDecEvent *trap = find_event(f, ETRACE_DEC_TRAP, 0);

    g_assert_nonnull(trap);
    g_assert_cmpuint(trap->cause, ==, 9);
    g_assert_false(trap->interrupt);
    g_assert_cmphex(trap->address, ==, BASE + 0x3a);
    g_assert_true(trap->trap_from_valid);
    g_assert_cmphex(trap->trap_from, ==, BASE + 0x28);
    g_assert_cmpuint(count_events(f, ETRACE_DEC_SYNC), ==, 2);
    g_assert_cmphex(find_event(f, ETRACE_DEC_SYNC, 1)->address, ==,
                    BASE + 0x2e);
    g_assert_cmpuint(count_events(f, ETRACE_DEC_END), ==, 1);
    g_assert_cmpuint(count_events(f, ETRACE_DEC_ERROR), ==, 0);
    /* S mode, the M-mode handler, S mode again */
    for (unsigned i = 0; i < f->privs->len; i++) {
        unsigned want = i == 20 || i == 21 ? 3 : 1;

        g_assert_cmpuint(g_array_index(f->privs, unsigned, i), ==, want);
    }
}

/*
 * What the instruction elements of P1 say of each instruction: the
 * classifier's class, not a second decoding in every tool.
 */
static void check_p1_elements(Fixture *f)
{
    static const struct {
        uint32_t offset;
        bool branch;
        RISCVIType itype;
    } want[] = {
        { 0x02, false, RISCV_ITYPE_NONE },
        { 0x04, true, RISCV_ITYPE_NONE },           /* c.bnez */
        { 0x06, false, RISCV_ITYPE_INFERABLE_CALL },    /* jal ra */
        { 0x34, false, RISCV_ITYPE_RETURN },        /* c.jr ra */
        { 0x0a, true, RISCV_ITYPE_NONE },           /* beq */
        { 0x18, false, RISCV_ITYPE_UNINFERABLE_CALL },  /* jalr ra */
        { 0x20, false, RISCV_ITYPE_UNINFERABLE_TAIL_CALL }, /* jr t2 */
        { 0x3c, false, RISCV_ITYPE_TRAP_RETURN },   /* mret */
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(want); i++) {
        bool seen = false;

        for (unsigned j = 0; j < f->elements->len; j++) {
            const ETraceDecInsn *e = &g_array_index(f->elements,
                                                    ETraceDecInsn, j);

            if (e->addr == BASE + want[i].offset) {
                g_assert_cmpint(e->branch, ==, want[i].branch);
                g_assert_cmpint(e->itype, ==, want[i].itype);
                seen = true;
            }
        }
        g_assert_true(seen);
    }
}

/* Every mode off: each uninferable jump reports its target (3.1.2). */
static void test_p1_plain(void)
{
    Fixture f;

    p1_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    /* ret at 0x34: the loop branch taken, taken, not taken */
    put_addr(&f, 3, 0x4, BASE + 0x0a, NULL);
    put_addr(&f, 1, 0x1, BASE + 0x36, NULL);    /* jalr ra; beq not taken */
    put_addr(&f, 0, 0, BASE + 0x1c, NULL);      /* ret */
    /* jalr to sit, which is also the last instruction before ecall */
    put_addr(&f, 0, 0, BASE + 0x28, &(Flags) { .updiscon = true });
    p1_after_trap(&f);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, p1_path, G_N_ELEMENTS(p1_path));
    check_p1_events(&f);
    check_p1_elements(&f);
    fixture_free(&f);
}

/* The same stream fed in chunks of every small size. */
static void test_p1_chunked(void)
{
    Fixture f;

    p1_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 3, 0x4, BASE + 0x0a, NULL);
    put_addr(&f, 1, 0x1, BASE + 0x36, NULL);
    put_addr(&f, 0, 0, BASE + 0x1c, NULL);
    put_addr(&f, 0, 0, BASE + 0x28, &(Flags) { .updiscon = true });
    p1_after_trap(&f);
    for (size_t chunk = 1; chunk <= 9; chunk++) {
        g_assert_cmpint(decode_chunked(&f, chunk), ==, 0);
        check_insns(&f, BASE, p1_path, G_N_ELEMENTS(p1_path));
    }
    fixture_free(&f);
}

/*
 * Implicit return with a call counter (3.2.5) and sequentially inferable
 * jumps (3.2.4): the two returns and the auipc/jalr pair send nothing.
 */
static void test_p1_counter_sijump(void)
{
    Fixture f;

    p1_fixture(&f);
    f.o.implicit_return = ETRACE_IR_CALL_COUNTER;
    f.o.sijump = true;
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    /* jalr ra at 0x18: taken, taken, not taken, beq not taken */
    put_addr(&f, 4, 0xc, BASE + 0x36, NULL);
    /* sit: the last instruction before ecall, reached without a report */
    put_addr(&f, 0, 0, BASE + 0x28, NULL);
    p1_after_trap(&f);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, p1_path, G_N_ELEMENTS(p1_path));
    check_p1_events(&f);
    fixture_free(&f);
}

/*
 * Return address stack (3.2.5, 6.6.3): func2 returns to 0x24 instead of
 * 0x1c; the miss is reported with irreport and the depth it found, and
 * leaves the stack as it was (11.1: only implicit returns pop).
 */
static void test_p1_return_stack_miss(void)
{
    static const uint32_t path[] = {
        0x00, 0x02, 0x04, 0x02, 0x04, 0x02, 0x04, 0x06, 0x32, 0x34, 0x0a,
        0x0e, 0x10, 0x14, 0x18, 0x36, 0x38, 0x24, 0x26, 0x28, 0x3a,
    };
    Fixture f;

    p1_fixture(&f);
    f.o.implicit_return = ETRACE_IR_RETURN_STACK;
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 4, 0xc, BASE + 0x36, NULL);
    put_addr(&f, 0, 0, BASE + 0x24,
             &(Flags) { .irreport = true, .irdepth = 1 });
    put_addr(&f, 0, 0, BASE + 0x28, NULL);
    put_trap(&f, BASE + 0x3a, 3, 9, false, 0);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, path, G_N_ELEMENTS(path));
    fixture_free(&f);
}

/* P1's handler for cause 9 from M mode. */
static bool p1_vector(void *opaque G_GNUC_UNUSED, unsigned privilege,
                      uint64_t cause, bool interrupt, uint64_t *handler)
{
    *handler = BASE + 0x3a;
    return privilege == 3 && cause == 9 && !interrupt;
}

/*
 * A format 3 right after an address reported without updiscon is for the
 * next instruction (6.6.2 case 3): here the return at 0x38, whose stack
 * entry (0x1c) is not where it went (0x24).
 */
static void test_p1_sync_after_return(void)
{
    static const uint32_t path[] = {
        0x00, 0x02, 0x04, 0x02, 0x04, 0x02, 0x04, 0x06, 0x32, 0x34, 0x0a,
        0x0e, 0x10, 0x14, 0x18, 0x36, 0x38, 0x24,
    };
    Fixture f;

    p1_fixture(&f);
    f.o.implicit_return = ETRACE_IR_RETURN_STACK;
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 4, 0xc, BASE + 0x36, NULL);
    put_addr(&f, 0, 0, BASE + 0x38, NULL);      /* the return, then... */
    put_sync(&f, BASE + 0x24, 1, true);         /* ...a resync */
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, path, G_N_ELEMENTS(path));
    fixture_free(&f);
}

/* P7: a call to the instruction before it, and returns. */
static const uint16_t p7[] = {
    0x0001,                 /*  0: c.nop */
    0x9302,                 /*  2: c.jalr  t1 */
    0x8082,                 /*  4: c.jr    ra */
    0x8082,                 /*  6: c.jr    ra */
    0x0001,                 /*  8: c.nop */
};

/*
 * 6.6.3: an address after an implicit return comes with the depth unless
 * that is 0: 0x4 reached at depth 1 is not the one reported.
 */
static void test_depth_after_return(void)
{
    static const uint32_t path[] = {
        0x0, 0x2, 0x0, 0x2, 0x6, 0x4, 0x4, 0x8,
    };
    Fixture f;

    fixture_init(&f, 64);
    add_region(&f, BASE, p7, G_N_ELEMENTS(p7));
    f.o.implicit_return = ETRACE_IR_CALL_COUNTER;
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 0, 0, BASE + 0x0, NULL);       /* c.jalr to 0 */
    put_addr(&f, 0, 0, BASE + 0x6, NULL);       /* c.jalr to 6 */
    put_addr(&f, 0, 0, BASE + 0x4, NULL);       /* last before a trap */
    put_trap(&f, BASE + 0x8, 3, 5, false, 0);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, path, G_N_ELEMENTS(path));
    fixture_free(&f);
}

/* P8: two calls from main, the second one nested. */
static const uint16_t p8[] = {
    0x00ef, 0x0100,         /*  0: jal     ra,10 <f> */
    0x00ef, 0x0100,         /*  4: jal     ra,14 <g> */
    0x0001, 0x0001, 0x0001, 0x0001,
    0x8082,                 /* 10: c.jr    ra         f: */
    0x0001,                 /* 12: c.nop */
    0x00ef, 0x0080,         /* 14: jal     ra,1c <h>  g: */
    0x0001,                 /* 18: c.nop              x: */
    0x0001,                 /* 1a: c.nop */
    0x8082,                 /* 1c: c.jr    ra         h: */
};

/*
 * Return address stack, 6.6.3: x follows an implicit return and is
 * reported with depth 1.  f's return also found depth 1 and did not go to
 * x, but it can not be a failed prediction: returning where predicted
 * leads to x at depth 1 with nothing else to report.
 */
static void test_depth_not_a_miss(void)
{
    static const uint32_t path[] = {
        0x00, 0x10, 0x04, 0x14, 0x1c, 0x18, 0x1a,
    };
    Fixture f;

    fixture_init(&f, 64);
    add_region(&f, BASE, p8, G_N_ELEMENTS(p8));
    f.o.implicit_return = ETRACE_IR_RETURN_STACK;
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 0, 0, BASE + 0x18,
             &(Flags) { .irreport = true, .irdepth = 1 });
    put_trap(&f, BASE + 0x1a, 3, 5, false, 0);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, path, G_N_ELEMENTS(path));
    fixture_free(&f);
}

/* P9: mret to the instruction before it. */
static const uint16_t p9[] = {
    0x0001,                 /*  0: c.nop */
    0x0001,                 /*  2: c.nop */
    0x0073, 0x3020,         /*  4: mret */
};

/*
 * A format 3 with a new privilege is reached through the trap return, not
 * at the first instruction with its address (2.0's decoder rule).
 */
static void test_sync_new_privilege(void)
{
    static const uint32_t path[] = { 0x0, 0x2, 0x4, 0x2 };
    Fixture f;

    fixture_init(&f, 64);
    add_region(&f, BASE, p9, G_N_ELEMENTS(p9));
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 3, true);
    put_sync(&f, BASE + 0x2, 0, true);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, path, G_N_ELEMENTS(path));
    g_assert_cmpuint(g_array_index(f.privs, unsigned, 2), ==, 3);
    g_assert_cmpuint(g_array_index(f.privs, unsigned, 3), ==, 0);
    fixture_free(&f);
}

/* P6: an auipc/jalr pair, then a branch. */
static const uint16_t p6[] = {
    0x0397, 0x0000,         /*  0: auipc   t2,0x0 */
    0x8067, 0x0083,         /*  4: jalr    zero,8(t2) */
    0xc111,                 /*  8: c.beqz  a0,c */
    0x0001,                 /*  a: c.nop */
    0xa001,                 /*  c: c.j     c */
};

/*
 * 3.2.4: with sijump, the pair's target is inferred and the packet after
 * it reports the branch outcome and a later address; without, the jump
 * target is the packet's address.
 */
static void test_sijump(void)
{
    static const uint32_t path[] = { 0x0, 0x4, 0x8, 0xc };
    Fixture f;

    fixture_init(&f, 64);
    add_region(&f, BASE, p6, G_N_ELEMENTS(p6));
    f.o.sijump = true;
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 1, 0x0, BASE + 0xc, &(Flags) { .notify = true });
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, path, G_N_ELEMENTS(path));

    g_byte_array_set_size(f.stream, 0);
    f.o.sijump = false;
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 0, 0, BASE + 0x8, NULL);
    put_addr(&f, 1, 0x0, BASE + 0xc, &(Flags) { .notify = true });
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, path, G_N_ELEMENTS(path));
    fixture_free(&f);
}

/* P10: an ecall and a c.ebreak, each reached straight, and a handler. */
static const uint16_t p10[] = {
    0x0001,                 /*  0: c.nop */
    0x0073, 0x0000,         /*  2: ecall */
    0x0001,                 /*  6: c.nop (handler) */
    0x9002,                 /*  8: c.ebreak */
    0x0001,                 /*  a: c.nop (handler) */
};

/*
 * 11, is_uninferable_discon: ecall, ebreak and c.ebreak retire.  The
 * packet before each trap reports it as the last retired instruction,
 * the decoder shows it, then the handler of the trap packet; a walk that
 * must go past one needs a reported address, as for any uninferable
 * discontinuity.
 */
static void test_ecall_ebreak_retire(void)
{
    static const uint32_t path[] = { 0x0, 0x2, 0x6, 0x8, 0xa };
    Fixture f;

    fixture_init(&f, 64);
    add_region(&f, BASE, p10, G_N_ELEMENTS(p10));
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 3, true);
    put_addr(&f, 0, 0, BASE + 0x2, NULL);
    put_trap(&f, BASE + 0x6, 3, 11, false, BASE + 0x2);
    put_addr(&f, 0, 0, BASE + 0x8, NULL);
    put_trap(&f, BASE + 0xa, 3, 3, false, BASE + 0x8);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, path, G_N_ELEMENTS(path));

    /* a sync may start at one: it can retire */
    g_byte_array_set_size(f.stream, 0);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE + 0x2, 3, true);
    put_trap(&f, BASE + 0x6, 3, 11, false, BASE + 0x2);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, path + 1, 2);

    /* past an ecall without its trap, the walk needs an address */
    g_byte_array_set_size(f.stream, 0);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 3, true);
    put_map(&f, 0);
    g_assert_cmpint(decode(&f), ==, -1);
    fixture_free(&f);
}

/* Implicit exception (3.2.3): the handler comes from a callback. */
static void test_p1_implicit_exception(void)
{
    Fixture f;

    p1_fixture(&f);
    f.o.implicit_exception = true;
    f.trap_vector = p1_vector;
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 3, 0x4, BASE + 0x0a, NULL);
    put_addr(&f, 1, 0x1, BASE + 0x36, NULL);
    put_addr(&f, 0, 0, BASE + 0x1c, NULL);
    put_addr(&f, 0, 0, BASE + 0x28, &(Flags) { .updiscon = true });
    p1_after_trap(&f);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, p1_path, G_N_ELEMENTS(p1_path));
    check_p1_events(&f);
    fixture_free(&f);
}

/* ... or from mtvec: direct, and vectored for interrupts. */
static void test_implicit_exception_xtvec(void)
{
    Fixture f;

    p1_fixture(&f);
    f.o.implicit_exception = true;
    for (unsigned vectored = 0; vectored < 2; vectored++) {
        uint64_t want = vectored ? BASE + 0x24 + 4 * 5 : BASE + 0x24;

        g_byte_array_set_size(f.stream, 0);
        f.xtvec[3] = BASE + 0x24 + vectored;
        put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
        put_sync(&f, BASE + 0x28, 1, true);
        put_trap(&f, 0, 3, 5, true, 0);         /* interrupt 5 */
        put_trap(&f, 0, 3, 5, false, 0);        /* exception 5 */
        g_assert_cmpint(decode(&f), ==, 0);
        g_assert_cmphex(find_event(&f, ETRACE_DEC_TRAP, 0)->address, ==,
                        want);
        g_assert_cmphex(find_event(&f, ETRACE_DEC_TRAP, 1)->address, ==,
                        BASE + 0x24);
        g_assert_cmpuint(f.insns->len, ==, 3);
    }
    fixture_free(&f);
}

/* trace_lost (6.5.1): a gap, then decoding resumes at the next sync. */
static void test_p1_trace_lost(void)
{
    static const uint32_t path[] = {
        0x00, 0x02, 0x04, 0x02, 0x04, 0x02, 0x04, 0x06, 0x32, 0x34, 0x0a,
        0x2e, 0x30,
    };
    const ETraceDecEvent *gap;
    Fixture f;

    p1_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 3, 0x4, BASE + 0x0a, NULL);
    put_support(&f, true, ETRACE_QUAL_TRACE_LOST);
    put_addr(&f, 0, 0, BASE + 0x1c, NULL);      /* ignored: not synced */
    put_sync(&f, BASE + 0x2e, 1, true);
    put_addr(&f, 0, 0, BASE + 0x30, NULL);
    put_support(&f, false, ETRACE_QUAL_ENDED_REP);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, path, G_N_ELEMENTS(path));
    gap = find_event(&f, ETRACE_DEC_GAP, 0);
    g_assert_nonnull(gap);
    g_assert_cmpint(gap->qual_status, ==, ETRACE_QUAL_TRACE_LOST);
    g_assert_cmpint(gap->gap_reason, ==, ETRACE_GAP_TRACE_LOST);
    g_assert_cmphex(gap->address, ==, BASE + 0x0a);
    fixture_free(&f);
}

/*
 * A wrapped buffer has lost the support packet that said data trace is
 * on: a data packet before the first sync says it, so that the sync and
 * the events after it carry options.data and a tool pairs the accesses
 * that follow with the sync's instruction and those after it.  Without
 * data packets the options stay as they were.
 */
static void test_data_before_first_sync(void)
{
    ETraceDataAccess a = { .daddr = 0x1000, .data = 7, .dsize = 2 };
    ETraceDataState st = { 0 };
    uint8_t buf[ETRACE_MAX_PACKET];
    ETraceOptions data = { .data = true };
    Fixture f;

    for (int with_data = 1; with_data >= 0; with_data--) {
        p1_fixture(&f);
        if (with_data) {
            g_byte_array_append(f.stream, buf,
                                etrace_data_pack(&f.p, &data, &st, &a, buf));
        }
        put_addr(&f, 0, 0, BASE + 0x1c, NULL);      /* before the sync */
        put_sync(&f, BASE, 1, true);
        put_addr(&f, 3, 0x4, BASE + 0x0a, NULL);
        g_assert_cmpint(decode(&f), ==, 0);
        g_assert_nonnull(find_event(&f, ETRACE_DEC_SYNC, 0));
        g_assert_cmpint(find_event(&f, ETRACE_DEC_SYNC, 0)->options.data, ==,
                        with_data);
        fixture_free(&f);
    }
}

/* ------------------------------------------------- branch prediction */

static void p2_fixture(Fixture *f)
{
    fixture_init(f, 64);
    add_region(f, BASE, p2, G_N_ELEMENTS(p2));
    f->o.branch_prediction = true;
    put_support(f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(f, BASE, 1, true);
    /*
     * The loop branch: the first outcome (taken) fails the initial "not
     * taken" prediction, so the first 31 go out as a map (8.1).
     */
    put_map(f, 0);
}

/* n loop iterations from 0, then the given tail. */
static void check_p2(Fixture *f, unsigned iterations, const uint32_t *tail,
                     size_t ntail)
{
    g_autofree uint32_t *path = g_new(uint32_t, 1 + 2 * iterations + ntail);
    size_t n = 0;

    path[n++] = 0;
    for (unsigned i = 0; i < iterations; i++) {
        path[n++] = 4;
        path[n++] = 6;
    }
    memcpy(path + n, tail, ntail * sizeof(*tail));
    check_insns(f, BASE, path, n + ntail);
}

/* 6.8: 68 correct predictions, then the last outcome fails: no address. */
static void test_bpred_miss(void)
{
    static const uint32_t tail[] = { 0x8, 0xa };
    Fixture f;

    p2_fixture(&f);
    put_count(&f, 68, 0, 0, NULL);
    put_addr(&f, 0, 0, BASE + 0xa, NULL);       /* ret */
    put_support(&f, false, ETRACE_QUAL_ENDED_REP);
    g_assert_cmpint(decode(&f), ==, 0);
    check_p2(&f, 100, tail, G_N_ELEMENTS(tail));
    fixture_free(&f);
}

/* branch_fmt 2: an address after correctly predicted branches. */
static void test_bpred_address(void)
{
    static const uint32_t tail[] = { 0x4, 0xa };
    Fixture f;

    p2_fixture(&f);
    /* a trap after the 99th outcome (taken): 0x4 retired last */
    put_count(&f, 68, 2, BASE + 0x4, NULL);
    put_trap(&f, BASE + 0xa, 3, 5, false, 0x1234);
    g_assert_cmpint(decode(&f), ==, 0);
    check_p2(&f, 99, tail, G_N_ELEMENTS(tail));
    fixture_free(&f);
}

/*
 * branch_fmt 2 on a branch reached by falling through: the packet of a
 * count that filled (6.8.2), with a count small enough to walk here.
 * That branch is the reported instance, not a jump target met early: the
 * next packet's outcomes start after it.
 */
static void test_bpred_count_on_branch(void)
{
    static const uint32_t tail[] = { 0x8, 0xa };
    Fixture f;

    p2_fixture(&f);
    put_count(&f, 50, 2, BASE + 0x6, NULL);     /* outcome 81 */
    put_addr(&f, 19, 1u << 18, BASE + 0xa, NULL);
    put_support(&f, false, ETRACE_QUAL_ENDED_REP);
    g_assert_cmpint(decode(&f), ==, 0);
    check_p2(&f, 100, tail, G_N_ELEMENTS(tail));
    fixture_free(&f);
}

/*
 * branch_fmt 3: the reported address is the branch that failed; a resync
 * follows, whose walk takes that branch's outcome (not taken).
 */
static void test_bpred_address_fail(void)
{
    static const uint32_t tail[] = { 0x8, 0xa, 0xc, 0xa };
    Fixture f;

    p2_fixture(&f);
    put_count(&f, 68, 3, BASE + 0x6, NULL);
    put_sync(&f, BASE + 0x8, 1, true);
    put_addr(&f, 0, 0, BASE + 0xa, NULL);       /* ret */
    /* c.j back to 0xa sends nothing: a notification reports it */
    put_addr(&f, 0, 0, BASE + 0xa, &(Flags) { .notify = true });
    g_assert_cmpint(decode(&f), ==, 0);
    check_p2(&f, 100, tail, G_N_ELEMENTS(tail));
    fixture_free(&f);
}

/*
 * P5: a branch taken at a sync, 31 branches to the next instruction, and
 * back to the first branch.
 */
static const uint16_t p5[] = {
    0xc131,                 /*  0: c.beqz  a0,44 */
    0xc109, 0xc109, 0xc109, 0xc109, 0xc109, 0xc109, 0xc109, 0xc109,
    0xc109, 0xc109, 0xc109, 0xc109, 0xc109, 0xc109, 0xc109, 0xc109,
    0xc109, 0xc109, 0xc109, 0xc109, 0xc109, 0xc109, 0xc109, 0xc109,
    0xc109, 0xc109, 0xc109, 0xc109, 0xc109, 0xc109, 0xc109,
                            /*  2..3e: c.beqz a0,.+2 */
    0xb7c1,                 /* 40: c.j     0 */
    0x0001,                 /* 42: c.nop */
    0xbf7d,                 /* 44: c.j     2 */
};

/*
 * 3.2.6: the table is initialised when the sync is sent, after the
 * encoder saw the outcome of the branch it reports; that outcome (taken)
 * must not count, or the branch at 0 would be predicted taken next time.
 */
static void test_bpred_sync_branch(void)
{
    g_autofree uint32_t *path = g_new(uint32_t, 36);
    size_t n = 0;
    Fixture f;

    fixture_init(&f, 64);
    add_region(&f, BASE, p5, G_N_ELEMENTS(p5));
    f.o.branch_prediction = true;
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, false);
    /* 31 + the branch at 0 again + the one at 2, all predicted */
    put_count(&f, 33, 2, BASE + 0x2, NULL);
    g_assert_cmpint(decode(&f), ==, 0);
    path[n++] = 0x00;
    path[n++] = 0x44;
    for (unsigned a = 0x02; a <= 0x40; a += 2) {
        path[n++] = a;
    }
    path[n++] = 0x00;
    path[n++] = 0x02;
    check_insns(&f, BASE, path, n);
    fixture_free(&f);
}

/* ----------------------------------------- jump target cache, looplabel */

static void p3_fixture(Fixture *f)
{
    fixture_init(f, 64);
    add_region(f, BASE, p3, G_N_ELEMENTS(p3));
}

/* Three trips round the loop, then the end of trace. */
static const uint32_t p3_path[] = {
    0x0, 0x2, 0x4, 0x6, 0x2, 0x4, 0x6, 0x2, 0x4, 0x6, 0x2,
};

/* 3.2.7: the second and third returns to looplabel hit the cache. */
static void test_jtc(void)
{
    Fixture f;

    p3_fixture(&f);
    f.o.jump_target_cache = true;
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 0, 0, BASE + 0x2, NULL);
    put_jtc(&f, BASE + 0x2, 0, 0, NULL);
    put_jtc(&f, BASE + 0x2, 0, 0, NULL);
    put_support(&f, false, ETRACE_QUAL_ENDED_REP);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, p3_path, G_N_ELEMENTS(p3_path));
    fixture_free(&f);
}

/*
 * 6.6.2 case 1: looplabel is reported after the jump; the decoder first
 * meets it by falling through and must go round again when the next
 * format 1/2 packet arrives.
 */
static void test_looplabel_again(void)
{
    Fixture f;

    p3_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 0, 0, BASE + 0x2, NULL);
    put_addr(&f, 0, 0, BASE + 0x2, NULL);
    put_addr(&f, 0, 0, BASE + 0x2, NULL);
    put_support(&f, false, ETRACE_QUAL_ENDED_REP);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, p3_path, G_N_ELEMENTS(p3_path));
    fixture_free(&f);
}

/* Case 2: updiscon says the report is the jump target before a trap. */
static void test_looplabel_updiscon(void)
{
    static const uint32_t path[] = { 0x0, 0x2, 0x4, 0x6, 0x2, 0x8 };
    Fixture f;

    p3_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 0, 0, BASE + 0x2, &(Flags) { .updiscon = true });
    put_trap(&f, BASE + 0x8, 3, 2, false, 0x1234);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, path, G_N_ELEMENTS(path));
    fixture_free(&f);
}

/* Case 3: the trap came after the first execution of looplabel. */
static void test_looplabel_first(void)
{
    static const uint32_t path[] = { 0x0, 0x2, 0x8 };
    Fixture f;

    p3_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 0, 0, BASE + 0x2, NULL);
    put_trap(&f, BASE + 0x8, 3, 2, false, 0x1234);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, path, G_N_ELEMENTS(path));
    fixture_free(&f);
}

/* 6.5.1: ended_upd goes round again, ended_rep stays. */
static void test_looplabel_ended(void)
{
    static const uint32_t upd[] = { 0x0, 0x2, 0x4, 0x6, 0x2 };
    Fixture f;

    p3_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 0, 0, BASE + 0x2, NULL);
    put_support(&f, true, ETRACE_QUAL_ENDED_UPD);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, upd, G_N_ELEMENTS(upd));
    g_assert_cmpuint(count_events(&f, ETRACE_DEC_GAP), ==, 1);

    g_byte_array_set_size(f.stream, 0);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 0, 0, BASE + 0x2, NULL);
    put_support(&f, false, ETRACE_QUAL_ENDED_REP);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, upd, 2);
    g_assert_cmpuint(count_events(&f, ETRACE_DEC_END), ==, 1);
    fixture_free(&f);
}

/* Case 4: notify reports the first execution of looplabel. */
static void test_looplabel_notify(void)
{
    static const uint32_t path[] = { 0x0, 0x2, 0x4, 0x6, 0x2 };
    const ETraceDecEvent *ev;
    Fixture f;

    p3_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 0, 0, BASE + 0x2, &(Flags) { .notify = true });
    put_addr(&f, 0, 0, BASE + 0x2, NULL);
    put_support(&f, false, ETRACE_QUAL_ENDED_REP);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, path, G_N_ELEMENTS(path));
    ev = find_event(&f, ETRACE_DEC_NOTIFY, 0);
    g_assert_nonnull(ev);
    g_assert_cmphex(ev->address, ==, BASE + 0x2);
    fixture_free(&f);
}

/* ------------------------------------------------------ spec examples */

/* Chapter 12 example 1: te_inst format 2, address 0x80001a88. */
static void test_spec_example1(void)
{
    static const uint32_t path[] = { 0x1188, 0x118a, 0x1a88 };
    Fixture f;

    fixture_init(&f, 64);
    add_region(&f, 0x80001188, ex1, G_N_ELEMENTS(ex1));
    add_region(&f, 0x80001a88, ex1_target, G_N_ELEMENTS(ex1_target));
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, 0x80001188, 1, true);
    put_addr(&f, 0, 0, 0x80001a88, NULL);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, 0x80000000, path, G_N_ELEMENTS(path));
    fixture_free(&f);
}

/* Example 3: format 1, branches 1, map 0 (taken), address delta 0xab0. */
static void test_spec_example3(void)
{
    static const uint32_t path[] = {
        0x10da, 0x10dc, 0x10ec, 0x10ee, 0x10f0, 0x10f2, 0x10f4, 0x10f6,
        0x1b8a,
    };
    Fixture f;

    fixture_init(&f, 64);
    add_region(&f, 0x800010da, ex3, G_N_ELEMENTS(ex3));
    add_region(&f, 0x80001b8a, ex_target, G_N_ELEMENTS(ex_target));
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, 0x800010da, 1, true);
    g_assert_cmphex(0x80001b8a - f.last, ==, 0xab0);
    put_addr(&f, 1, 0x0, 0x80001b8a, NULL);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, 0x80000000, path, G_N_ELEMENTS(path));
    fixture_free(&f);
}

/* Example 4: format 1, branches 3, map 0x3, address delta 0x148. */
static void test_spec_example4(void)
{
    static const uint32_t path[] = {
        0x1110, 0x1112, 0x1114, 0x1116, 0x111a, 0x111c, 0x111e, 0x115e,
        0x1160, 0x1162, 0x1164, 0x1166, 0x1168, 0x1258,
    };
    Fixture f;

    fixture_init(&f, 64);
    add_region(&f, 0x80001110, ex4, G_N_ELEMENTS(ex4));
    add_region(&f, 0x8000115e, ex4_tail, G_N_ELEMENTS(ex4_tail));
    add_region(&f, 0x80001258, ex_target, G_N_ELEMENTS(ex_target));
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, 0x80001110, 1, true);
    g_assert_cmphex(0x80001258 - f.last, ==, 0x148);
    put_addr(&f, 3, 0x3, 0x80001258, NULL);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, 0x80000000, path, G_N_ELEMENTS(path));
    fixture_free(&f);
}

/* ------------------------------------------------------ malformed input */

static const char *first_error(Fixture *f, uint64_t *offset,
                               uint64_t *packet)
{
    return etrace_decoder_error(f->d, offset, packet);
}

/* The nth gap event, which must be a no-image gap. */
static const ETraceDecEvent *no_image_gap(Fixture *f, unsigned nth)
{
    const ETraceDecEvent *gap = find_event(f, ETRACE_DEC_GAP, nth);

    g_assert_nonnull(gap);
    g_assert_cmpint(gap->gap_reason, ==, ETRACE_GAP_NO_IMAGE);
    return gap;
}

/*
 * The trace goes where no image holds code (uninferable jumps to BASE +
 * 0x1000 and BASE + 0x2000): a gap at that packet, not an error.  The
 * packets up to the next sync are skipped; a sync outside the image is
 * part of the same gap; a sync in the image resumes.
 */
static void test_gap_outside_image(void)
{
    static const uint32_t path[] = { 0x0, 0x2, 0x4, 0x6, 0x2, 0x4, 0x6 };
    const ETraceDecEvent *gap;
    uint64_t start;
    Fixture f;

    p3_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    start = f.stream->len;
    put_addr(&f, 0, 0, BASE + 0x1000, NULL);
    put_addr(&f, 0, 0, BASE + 0x1008, NULL);    /* skipped: not synced */
    put_sync(&f, BASE + 0x1010, 0, false);      /* the same gap */
    put_sync(&f, BASE + 0x2, 1, true);
    put_addr(&f, 0, 0, BASE + 0x4, &(Flags) { .notify = true });
    put_addr(&f, 0, 0, BASE + 0x2000, NULL);
    g_assert_cmpint(decode(&f), ==, 0);
    g_assert_null(first_error(&f, NULL, NULL));
    check_insns(&f, BASE, path, G_N_ELEMENTS(path));
    g_assert_cmpuint(count_events(&f, ETRACE_DEC_ERROR), ==, 0);
    g_assert_cmpuint(count_events(&f, ETRACE_DEC_GAP), ==, 2);
    gap = no_image_gap(&f, 0);
    g_assert_cmphex(gap->gap_addr, ==, BASE + 0x1000);
    g_assert_true(gap->last_valid);
    g_assert_cmphex(gap->address, ==, BASE + 0x6);
    g_assert_cmpuint(gap->offset, ==, start);
    g_assert_cmpuint(gap->packet, ==, 2);
    gap = no_image_gap(&f, 1);
    g_assert_cmphex(gap->gap_addr, ==, BASE + 0x2000);
    g_assert_cmphex(gap->address, ==, BASE + 0x6);
    fixture_free(&f);
}

/*
 * A resync whose path leaves the image (code falls through past its
 * end): a gap where it leaves, then the sync starts afresh.  A trace
 * that starts outside the image has a gap without a last instruction.
 */
static void test_gap_resync_outside_image(void)
{
    static const uint16_t nops[] = { 0x0001, 0x0001 };
    static const uint32_t path[] = { 0x0, 0x2, 0x100, 0x102 };
    const ETraceDecEvent *gap;
    Fixture f;

    fixture_init(&f, 64);
    add_region(&f, BASE, nops, G_N_ELEMENTS(nops));
    add_region(&f, BASE + 0x100, nops, G_N_ELEMENTS(nops));
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE + 0x200, 1, false);       /* outside: no last */
    put_sync(&f, BASE, 1, false);
    put_sync(&f, BASE + 0x100, 1, false);       /* via BASE + 4: outside */
    put_sync(&f, BASE + 0x102, 1, false);
    g_assert_cmpint(decode(&f), ==, 0);
    check_insns(&f, BASE, path, G_N_ELEMENTS(path));
    g_assert_cmpuint(count_events(&f, ETRACE_DEC_ERROR), ==, 0);
    g_assert_cmpuint(count_events(&f, ETRACE_DEC_GAP), ==, 2);
    gap = no_image_gap(&f, 0);
    g_assert_cmphex(gap->gap_addr, ==, BASE + 0x200);
    g_assert_false(gap->last_valid);
    gap = no_image_gap(&f, 1);
    g_assert_cmphex(gap->gap_addr, ==, BASE + 0x4);
    g_assert_true(gap->last_valid);
    g_assert_cmphex(gap->address, ==, BASE + 0x2);
    g_assert_cmpuint(count_events(&f, ETRACE_DEC_SYNC), ==, 3);
    fixture_free(&f);
}

/* A branch on the path with no outcome in the packet. */
static void test_error_missing_branch(void)
{
    Fixture f;

    p1_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 0, 0, BASE + 0x36, NULL);
    g_assert_cmpint(decode(&f), ==, -1);
    g_assert_cmpstr(first_error(&f, NULL, NULL), ==,
                    "branch without an outcome in the trace");
    fixture_free(&f);
}

/* Too many outcomes for the path up to the address. */
static void test_error_extra_branches(void)
{
    Fixture f;

    p1_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_addr(&f, 5, 0x4, BASE + 0x0a, NULL);
    g_assert_cmpint(decode(&f), ==, -1);
    g_assert_cmpstr(first_error(&f, NULL, NULL), ==,
                    "unprocessed branches");
    fixture_free(&f);
}

/*
 * A path that never reaches the address: an error once it closes a loop
 * without branches (with no instruction retired twice), or once it has
 * gone max_run instructions without a branch.
 */
static void test_error_no_progress(void)
{
    Fixture f;

    p1_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE + 0x30, 1, true);         /* c.j . */
    put_addr(&f, 0, 0, BASE + 0x32, NULL);
    g_assert_cmpint(decode(&f), ==, -1);
    g_assert_cmpuint(f.insns->len, <=, 2);
    g_assert_cmpstr(first_error(&f, NULL, NULL), ==,
                    "the path does not reach the reported address "
                    "(a loop without branches)");
    fixture_free(&f);

    p1_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE + 0x24, 1, true);         /* c.nop, c.nop, ... */
    put_addr(&f, 0, 0, BASE + 0x2a, NULL);      /* ... the ecall */
    f.max_run = 1;
    g_assert_cmpint(decode(&f), ==, -1);
    g_assert_cmpuint(f.insns->len, <=, 2);
    g_assert_cmpstr(first_error(&f, NULL, NULL), ==,
                    "the path does not reach the reported address");
    fixture_free(&f);
}

/* A full map without address cannot cross an uninferable jump. */
static void test_error_jump_in_map(void)
{
    Fixture f;

    p3_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_map(&f, 0);
    g_assert_cmpint(decode(&f), ==, -1);
    g_assert_cmpstr(first_error(&f, NULL, NULL), ==,
                    "unexpected uninferable discontinuity");
    fixture_free(&f);
}

/* Format 0 for a mode that is off; a cache entry never filled. */
static void test_error_mode_off(void)
{
    Fixture f;

    p2_fixture(&f);                 /* branch prediction on */
    f.o.branch_prediction = false;
    g_byte_array_set_size(f.stream, 0);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    f.o.branch_prediction = true;   /* pack it anyway */
    put_count(&f, 40, 0, 0, NULL);
    g_assert_cmpint(decode(&f), ==, -1);
    g_assert_cmpstr(first_error(&f, NULL, NULL), ==,
                    "branch count without branch prediction");

    g_byte_array_set_size(f.stream, 0);
    f.o.branch_prediction = false;
    f.o.jump_target_cache = true;
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    put_jtc(&f, BASE + 0x4, 0, 0, NULL);
    g_assert_cmpint(decode(&f), ==, -1);
    g_assert_cmpstr(first_error(&f, NULL, NULL), ==,
                    "jump target cache index of an empty entry");
    fixture_free(&f);
}

/* Bytes that are not packets; a stream cut in the middle of a packet. */
static void test_error_framing(void)
{
    static const uint8_t bad[] = { 0x1f, 0xff, 0x00, 0x12 };
    Fixture f;

    p1_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    g_byte_array_append(f.stream, bad, sizeof(bad));
    put_sync(&f, BASE + 0x2, 1, true);
    g_assert_cmpint(decode(&f), ==, -1);
    g_assert_cmpuint(f.insns->len, ==, 1);      /* nothing after it */

    g_byte_array_set_size(f.stream, 0);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    put_sync(&f, BASE, 1, true);
    g_byte_array_set_size(f.stream, f.stream->len - 1);
    g_assert_cmpint(decode(&f), ==, -1);
    g_assert_cmpstr(first_error(&f, NULL, NULL), ==,
                    "truncated packet at the end of the stream");
    fixture_free(&f);
}

/* Zero bytes between packets are padding (chapter 6). */
static void test_padding(void)
{
    static const uint8_t zeros[40];
    Fixture f;

    p3_fixture(&f);
    put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
    g_byte_array_append(f.stream, zeros, sizeof(zeros));
    put_sync(&f, BASE, 1, true);
    g_byte_array_append(f.stream, zeros, 3);
    put_addr(&f, 0, 0, BASE + 0x2, &(Flags) { .notify = true });
    for (size_t chunk = 1; chunk < 8; chunk++) {
        g_assert_cmpint(decode_chunked(&f, chunk), ==, 0);
        check_insns(&f, BASE, p3_path, 2);
    }
    fixture_free(&f);
}

/*
 * Hostile input never crashes or hangs: random bytes, and structurally
 * valid packets with random fields after a good sync.
 */
static void test_fuzz(void)
{
    GRand *rnd = g_rand_new_with_seed(1234);
    ETraceDecStats st;
    Fixture f;

    p1_fixture(&f);
    f.max_run = 5000;
    for (unsigned round = 0; round < 300; round++) {
        g_byte_array_set_size(f.stream, 0);
        f.o = (ETraceOptions) {
            .full_address = g_rand_boolean(rnd),
            .sijump = g_rand_boolean(rnd),
            .implicit_return = g_rand_int_range(rnd, 0, 3),
            .branch_prediction = g_rand_boolean(rnd),
            .jump_target_cache = g_rand_boolean(rnd),
        };
        put_support(&f, true, ETRACE_QUAL_NO_CHANGE);
        put_sync(&f, BASE + 2 * g_rand_int_range(rnd, 0, 32), 1, true);
        for (unsigned i = 0; i < 40; i++) {
            if (round & 1) {
                uint8_t b = g_rand_int(rnd);

                g_byte_array_append(f.stream, &b, 1);
                continue;
            }
            ETracePacket pkt = {
                .format = g_rand_int_range(rnd, 0, 4),
                .subformat = g_rand_int_range(rnd, 0, 4),
                .branch = g_rand_boolean(rnd),
                .privilege = g_rand_boolean(rnd) ? 3 : 1,
                .ecause = g_rand_int_range(rnd, 0, 16),
                .qual_status = g_rand_int_range(rnd, 0, 4),
                .enable = g_rand_int_range(rnd, 0, 8) != 0,
                .options = g_rand_int(rnd) & 0x7f,
                .address = g_rand_boolean(rnd) ? BASE + 2 *
                           g_rand_int_range(rnd, 0, 32) :
                           (uint64_t)g_rand_int_range(rnd, -64, 64) * 2,
                .notify = g_rand_boolean(rnd),
                .updiscon = g_rand_boolean(rnd),
                .irreport = g_rand_boolean(rnd),
                .irdepth = g_rand_int_range(rnd, 0, 4),
                .branches = g_rand_int_range(rnd, 0, 32),
                .branch_map = g_rand_int(rnd),
                .branch_count = g_rand_int_range(rnd, 0, 40),
                .branch_fmt = g_rand_int_range(rnd, 0, 4),
                .index = g_rand_int_range(rnd, 0, 16),
            };
            uint8_t buf[ETRACE_MAX_PACKET];
            size_t n = etrace_packet_pack(&f.p, &f.o, &pkt, buf);

            g_byte_array_append(f.stream, buf, n);
        }
        decode_chunked(&f, g_rand_int_range(rnd, 1, 50));
        etrace_decoder_stats(f.d, &st);
        g_assert_cmpuint(st.bytes, <=, f.stream->len);
    }
    g_rand_free(rnd);
    fixture_free(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/etrace-decoder/p1/plain", test_p1_plain);
    g_test_add_func("/etrace-decoder/p1/chunked", test_p1_chunked);
    g_test_add_func("/etrace-decoder/p1/counter-sijump",
                    test_p1_counter_sijump);
    g_test_add_func("/etrace-decoder/p1/return-stack-miss",
                    test_p1_return_stack_miss);
    g_test_add_func("/etrace-decoder/p1/sync-after-return",
                    test_p1_sync_after_return);
    g_test_add_func("/etrace-decoder/depth-after-return",
                    test_depth_after_return);
    g_test_add_func("/etrace-decoder/depth-not-a-miss",
                    test_depth_not_a_miss);
    g_test_add_func("/etrace-decoder/sync-new-privilege",
                    test_sync_new_privilege);
    g_test_add_func("/etrace-decoder/sijump", test_sijump);
    g_test_add_func("/etrace-decoder/ecall-ebreak-retire",
                    test_ecall_ebreak_retire);
    g_test_add_func("/etrace-decoder/p1/implicit-exception",
                    test_p1_implicit_exception);
    g_test_add_func("/etrace-decoder/implicit-exception-xtvec",
                    test_implicit_exception_xtvec);
    g_test_add_func("/etrace-decoder/p1/trace-lost", test_p1_trace_lost);
    g_test_add_func("/etrace-decoder/data-before-first-sync",
                    test_data_before_first_sync);
    g_test_add_func("/etrace-decoder/bpred/miss", test_bpred_miss);
    g_test_add_func("/etrace-decoder/bpred/address", test_bpred_address);
    g_test_add_func("/etrace-decoder/bpred/address-fail",
                    test_bpred_address_fail);
    g_test_add_func("/etrace-decoder/bpred/count-on-branch",
                    test_bpred_count_on_branch);
    g_test_add_func("/etrace-decoder/bpred/sync-branch",
                    test_bpred_sync_branch);
    g_test_add_func("/etrace-decoder/jtc", test_jtc);
    g_test_add_func("/etrace-decoder/looplabel/again", test_looplabel_again);
    g_test_add_func("/etrace-decoder/looplabel/updiscon",
                    test_looplabel_updiscon);
    g_test_add_func("/etrace-decoder/looplabel/first", test_looplabel_first);
    g_test_add_func("/etrace-decoder/looplabel/ended", test_looplabel_ended);
    g_test_add_func("/etrace-decoder/looplabel/notify",
                    test_looplabel_notify);
    g_test_add_func("/etrace-decoder/spec/example1", test_spec_example1);
    g_test_add_func("/etrace-decoder/spec/example3", test_spec_example3);
    g_test_add_func("/etrace-decoder/spec/example4", test_spec_example4);
    g_test_add_func("/etrace-decoder/gap/outside-image",
                    test_gap_outside_image);
    g_test_add_func("/etrace-decoder/gap/resync-outside-image",
                    test_gap_resync_outside_image);
    g_test_add_func("/etrace-decoder/error/missing-branch",
                    test_error_missing_branch);
    g_test_add_func("/etrace-decoder/error/extra-branches",
                    test_error_extra_branches);
    g_test_add_func("/etrace-decoder/error/no-progress",
                    test_error_no_progress);
    g_test_add_func("/etrace-decoder/error/jump-in-map",
                    test_error_jump_in_map);
    g_test_add_func("/etrace-decoder/error/mode-off", test_error_mode_off);
    g_test_add_func("/etrace-decoder/error/framing", test_error_framing);
    g_test_add_func("/etrace-decoder/padding", test_padding);
    g_test_add_func("/etrace-decoder/fuzz", test_fuzz);
    return g_test_run();
}

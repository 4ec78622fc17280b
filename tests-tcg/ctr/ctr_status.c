/*
 * CTR v0.1.4 draft, the status register and the array (rule 2):
 * mctrstatus WRPTR/WRAP/FROZEN (2.4), sctrstatus (2.5), logical entry 0 at
 * physical WRPTR-1 (2.4 note), entries at or above the depth (2.1, 3),
 * record synthesis by software (2.4 note); choices 4, 5 and 6.
 *
 * Hardware records come from M mode: ctr_m_jumps turns M recording on,
 * makes n direct jumps (the only type let through) and turns it off, all
 * in one asm block, so nothing else is recorded.  RV64 and RV32; with
 * h=on a VS-mode sctrstatus access is checked too.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_sw.h"

void ctr_m_jumps(unsigned long on, unsigned long off, unsigned long n);
void ctr_m_return(unsigned long on, unsigned long off);
extern char ctr_m_jumps_loop[], ctr_m_jumps_j[];

asm(".pushsection .text\n"
    ".balign 4\n"
    ".globl ctr_m_jumps, ctr_m_jumps_loop, ctr_m_jumps_j, ctr_m_return\n"
    /* mctrcontrol = a0; a2 times "j"; mctrcontrol = a1 */
    "ctr_m_jumps:\n"
    "  csrw 0x381, a0\n"
    "ctr_m_jumps_loop:\n"
    "  beqz a2, 1f\n"
    "  addi a2, a2, -1\n"
    "ctr_m_jumps_j:\n"
    "  j ctr_m_jumps_loop\n"
    "1:\n"
    "  csrw 0x381, a1\n"
    "  ret\n"
    /* mctrcontrol = a0; one return (jr t0: rs1 = x5); mctrcontrol = a1 */
    "ctr_m_return:\n"
    "  csrw 0x381, a0\n"
    "  la t0, 1f\n"
    "  jr t0\n"
    "1:\n"
    "  csrw 0x381, a1\n"
    "  ret\n"
    ".popsection\n");

/* Record n direct jumps from M mode at the given depth. */
static void record_jumps(unsigned depth_code, unsigned n)
{
    unsigned long long off = ctr_allow_only(1u << CTR_TYPE_DIRJUMP) |
                             CTR_DEPTH(depth_code);

    ctr_set_m(off);
    ctr_m_jumps((unsigned long)(off | CTR_M), (unsigned long)off, n);
}

/* One RASEMU return (a pop) in M mode at the given depth. */
static void record_return(unsigned depth_code)
{
    unsigned long long off = CTR_DEPTH(depth_code);

    ctr_set_m(off);
    ctr_m_return((unsigned long)(off | CTR_M | CTR_RASEMU), (unsigned long)off);
}

static struct ctr_entry pattern(unsigned i)
{
    struct ctr_entry e = {
        .source = 0x80100000UL + 8 * i + 1,
        .target = 0x80200000UL + 4 * i,
        .data = CTR_TYPE_DIROJMP | ((unsigned long)i << 16),
    };
    return e;
}

static bool same(struct ctr_entry a, struct ctr_entry b)
{
    return a.source == b.source && a.target == b.target && a.data == b.data;
}

static void test_wrptr_bits(void)
{
    static const unsigned codes[] = {
        CTR_DEPTH16, CTR_DEPTH32, CTR_DEPTH64, CTR_DEPTH128, CTR_DEPTH256,
    };

    rv_rule("draft 2.4: WRPTR bits above those for depth-1 are read-only 0");
    for (unsigned i = 0; i < 5; i++) {
        unsigned long mask = ctr_depth_entries(codes[i]) - 1;

        ctr_set_m(CTR_CLR | CTR_DEPTH(codes[i]));
        csr_write(CSR_MCTRSTATUS, 0xff);
        CHECK_EQ(ctr_status(), mask);
        csr_write(CSR_MCTRSTATUS, 0xa5);
        CHECK_EQ(ctr_status(), 0xa5 & mask);
    }
    ctr_set_m(CTR_DEPTH(CTR_DEPTH256));
    csr_write(CSR_MCTRSTATUS, 0xab);
    ctr_set_m(CTR_DEPTH(CTR_DEPTH16));
    CHECK_EQ(ctr_status(), 0x0b);

    rv_rule("draft 2.4: WRAP and FROZEN are writable, other bits read 0 (choice 5)");
    ctr_set_m(CTR_CLR | CTR_DEPTH(CTR_DEPTH256));
    csr_write(CSR_MCTRSTATUS, ~0UL);
    CHECK_EQ(ctr_status(), 0xff | CTRSTATUS_WRAP | CTRSTATUS_FROZEN);
    csr_write(CSR_MCTRSTATUS, CTRSTATUS_WRAP);
    CHECK_EQ(ctr_status(), CTRSTATUS_WRAP);
    csr_write(CSR_MCTRSTATUS, CTRSTATUS_FROZEN);
    CHECK_EQ(ctr_status(), CTRSTATUS_FROZEN);
    csr_write(CSR_MCTRSTATUS, 0);
    CHECK_EQ(ctr_status(), 0);
}

static void test_wrap(void)
{
    rv_rule("draft 2.4: WRPTR counts recorded transfers");
    ctr_reset();
    record_jumps(CTR_DEPTH16, 15);
    CHECK_EQ(ctr_status(), 15);

    rv_rule("draft 2.4: WRAP is set when WRPTR wraps on increment");
    record_jumps(CTR_DEPTH16, 1);
    CHECK_EQ(ctr_status(), CTRSTATUS_WRAP | 0);

    rv_rule("draft 2.4: WRAP is sticky");
    record_jumps(CTR_DEPTH16, 3);
    CHECK_EQ(ctr_status(), CTRSTATUS_WRAP | 3);
    record_jumps(CTR_DEPTH16, 16);
    CHECK_EQ(ctr_status(), CTRSTATUS_WRAP | 3);

    rv_rule("draft 2.4: WRAP is cleared by a write that sets CLR");
    ctr_set_m(CTR_CLR | CTR_DEPTH(CTR_DEPTH16));
    CHECK_EQ(ctr_status(), 0);

    rv_rule("draft 2.4: WRPTR wraps at the selected depth-1");
    ctr_set_m(CTR_CLR | CTR_DEPTH(CTR_DEPTH32));
    csr_write(CSR_MCTRSTATUS, 15);
    record_jumps(CTR_DEPTH32, 1);
    CHECK_EQ(ctr_status(), 16);
    csr_write(CSR_MCTRSTATUS, 31);
    record_jumps(CTR_DEPTH32, 1);
    CHECK_EQ(ctr_status(), CTRSTATUS_WRAP | 0);
    ctr_set_m(CTR_CLR | CTR_DEPTH(CTR_DEPTH256));
    csr_write(CSR_MCTRSTATUS, 254);
    record_jumps(CTR_DEPTH256, 3);
    CHECK_EQ(ctr_status(), CTRSTATUS_WRAP | 1);

    rv_rule("draft 2.4: WRAP is cleared when WRPTR decrements from 0 (RASEMU)");
    ctr_reset();
    csr_write(CSR_MCTRSTATUS, CTRSTATUS_WRAP | 3);
    record_return(CTR_DEPTH16);
    CHECK_EQ(ctr_status(), CTRSTATUS_WRAP | 2);
    csr_write(CSR_MCTRSTATUS, CTRSTATUS_WRAP | 0);
    record_return(CTR_DEPTH16);
    CHECK_EQ(ctr_status(), 15);
    ctr_reset();
}

static void test_sctrstatus(void)
{
    unsigned long long v = CTRSTATUS_FROZEN | 0xff;
    struct ctr_s_op op;

    rv_rule("draft 2.5: sctrstatus is an S-mode alias of mctrstatus");
    ctr_set_m(CTR_CLR | CTR_DEPTH(CTR_DEPTH32));
    csr_write(CSR_MCTRSTATUS, CTRSTATUS_WRAP | 21);
    op = ctr_in_mode(RV_MODE_S, CTR_S_STATUS, &v);
    CHECK_EQ(op.before, CTRSTATUS_WRAP | 21);
    CHECK_EQ(op.after, CTRSTATUS_FROZEN | 31);
    CHECK_EQ(ctr_status(), CTRSTATUS_FROZEN | 31);
    CHECK_EQ(csr_read(CSR_SCTRSTATUS), CTRSTATUS_FROZEN | 31);
    csr_write(CSR_SCTRSTATUS, 7);
    CHECK_EQ(ctr_status(), 7);

    if (rv_has_ext('H')) {
        rv_rule("draft 2.5: sctrstatus is a VS-mode alias of mctrstatus");
        v = CTRSTATUS_WRAP | 9;
        op = ctr_in_mode(RV_MODE_VS, CTR_S_STATUS, &v);
        CHECK_EQ(op.before, 7);
        CHECK_EQ(op.after, CTRSTATUS_WRAP | 9);
        CHECK_EQ(ctr_status(), CTRSTATUS_WRAP | 9);
    }
    ctr_reset();
}

static void test_logical(void)
{
    static const unsigned wrptrs[] = { 3, 15, 1, 0 };
    unsigned bad;

    rv_rule("draft 2.4: logical entry 0 is physical entry WRPTR-1 mod depth");
    ctr_reset();
    for (unsigned i = 0; i < 16; i++) {   /* logical i is physical 15-i */
        struct ctr_entry p = pattern(i);

        ctr_write_entry(i, p.source, p.target, p.data);
    }
    for (unsigned k = 0; k < 4; k++) {
        unsigned w = wrptrs[k];

        csr_write(CSR_MCTRSTATUS, w);
        bad = 0;
        for (unsigned j = 0; j < 16; j++) {
            bad += !same(ctr_read_entry(j), pattern((j + 16 - w) % 16));
        }
        CHECK_EQ(bad, 0);
    }

    rv_rule("draft 2.1/3: entries at or above the depth read 0 (choice 6: writes ignored)");
    ctr_set_m(CTR_CLR | CTR_DEPTH(CTR_DEPTH256));
    ctr_set_m(CTR_DEPTH(CTR_DEPTH16));
    for (unsigned i = 0; i < 256; i++) {
        struct ctr_entry p = pattern(i);

        ctr_write_entry(i, p.source, p.target, p.data);
    }
    CHECK_EQ(nonzero(16, 256), 0);
    CHECK_EQ(nonzero(0, 16), 16);
    ctr_set_m(CTR_DEPTH(CTR_DEPTH256));
    CHECK_EQ(nonzero(0, 256), 16);      /* physical 0..15: logical 240.. */
    CHECK_EQ(nonzero(240, 256), 16);
    ctr_reset();
}

static void test_synthesis(void)
{
    struct ctr_entry hw0, hw1, e;
    const struct ctr_entry syn = {
        0x80300000UL | CTRSOURCE_V, 0x80300100UL, CTR_TYPE_INDCALL,
    };

    rv_rule("draft 2.4: a recorded direct jump fills entry 0");
    ctr_reset();
    record_jumps(CTR_DEPTH16, 2);
    CHECK_EQ(ctr_status(), 2);
    hw0 = ctr_read_entry(0);
    hw1 = ctr_read_entry(1);
    CHECK_EQ(hw0.source, (unsigned long)ctr_m_jumps_j | CTRSOURCE_V);
    CHECK_EQ(hw0.target, (unsigned long)ctr_m_jumps_loop);
    CHECK_EQ(hw0.data & CTRDATA_TYPE, CTR_TYPE_DIRJUMP);
    CHECK_EQ(hw1.source, hw0.source);

    rv_rule("draft 2.4 note: increment WRPTR, write entry 0: a synthesised record");
    csr_write(CSR_MCTRSTATUS, ctr_wrptr() + 1);
    ctr_write_entry(0, syn.source, syn.target, syn.data);
    CHECK_EQ(ctr_status(), 3);
    CHECK(same(ctr_read_entry(0), syn));
    CHECK(same(ctr_read_entry(1), hw0));
    CHECK(same(ctr_read_entry(2), hw1));
    CHECK_EQ(nonzero(3, 16), 0);
    record_jumps(CTR_DEPTH16, 1);   /* hardware goes on after it */
    CHECK_EQ(ctr_status(), 4);
    CHECK_EQ(ctr_read_entry(0).source, hw0.source);
    CHECK(same(ctr_read_entry(1), syn));
    CHECK(same(ctr_read_entry(2), hw0));

    rv_rule("draft 2.4 note: clear entry 0's V, decrement WRPTR: an emulated pop");
    e = ctr_read_entry(0);
    ctr_write_entry(0, e.source & ~CTRSOURCE_V, e.target, e.data);
    csr_write(CSR_MCTRSTATUS, ctr_wrptr() - 1);
    CHECK_EQ(ctr_status(), 3);
    CHECK(same(ctr_read_entry(0), syn));
    e.source &= ~CTRSOURCE_V;
    CHECK(same(ctr_read_entry(15), e));
    ctr_reset();
}

int main(void)
{
    ctr_open_stateen();
    test_wrptr_bits();
    test_wrap();
    test_sctrstatus();
    test_logical();
    test_synthesis();
    return 0;
}

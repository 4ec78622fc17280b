/*
 * CTR v0.1.4 draft, the control registers (rule 1): mctrcontrol (2.1),
 * sctrcontrol (2.2), vsctrcontrol (2.3), the RV32-only h CSRs (2.6), DEPTH
 * discovery (chapter 6); implementation choices 2 (every field), 3 (DEPTH
 * legalisation) and 4 (CLR).
 *
 * RV64 and RV32.  The vsctrcontrol checks run when misa.H is set (h=on);
 * without H they check that vsctrcontrol is an illegal instruction.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_sw.h"

/*
 * A check inside a loop over bits or codes: the first mismatch is shown
 * with its values, and bit idx of failed is set for each one; the caller
 * then checks failed == 0 (one line per loop, not one per index).
 */
#define LOOP_EQ(failed, idx, actual, expected) do {                     \
        unsigned long long a_ = (actual), e_ = (expected);              \
        if (a_ != e_) {                                                 \
            if (!(failed)) {                                            \
                rv_check_eq(a_, e_, #actual, #expected, __FILE__,       \
                            __LINE__);                                  \
            }                                                           \
            (failed) |= 1ULL << (idx);                                  \
        }                                                               \
    } while (0)

/* mctrcontrol after a write of w (choices 2 and 3). */
static unsigned long long m_expect(unsigned long long w)
{
    return (w & CTR_M_FIELDS & ~CTR_DEPTH_MASK) |
           CTR_DEPTH(ctr_depth_legal((w & CTR_DEPTH_MASK) >> CTR_DEPTH_SHIFT));
}

/* vsctrcontrol after a write of w, mctrcontrol.DEPTH being mdepth. */
static unsigned long long vs_expect(unsigned long long w, unsigned mdepth)
{
    return (w & CTR_VS_FIELDS & ~CTR_DEPTH_MASK) | CTR_DEPTH(mdepth);
}

/* A recognisable record for logical entry i, as the entry stores it. */
static struct ctr_entry pattern(unsigned i)
{
    struct ctr_entry e = {
        .source = 0x80100000UL + 8 * i + 1,
        .target = 0x80200000UL + 4 * i,
        .data = CTR_TYPE_DIRJUMP | CTRDATA_CCV | ((unsigned long)i << 16),
    };
    return e;
}

static void fill(unsigned from, unsigned to)
{
    for (unsigned i = from; i < to; i++) {
        struct ctr_entry e = pattern(i);

        ctr_write_entry(i, e.source, e.target, e.data);
    }
}

/* How many logical entries in [from, to) differ from pattern(). */
static unsigned differ_from_pattern(unsigned from, unsigned to)
{
    unsigned n = 0;

    for (unsigned i = from; i < to; i++) {
        struct ctr_entry e = ctr_read_entry(i), p = pattern(i);

        n += e.source != p.source || e.target != p.target || e.data != p.data;
    }
    return n;
}

/* How many logical entries in [from, to) are not all zero. */
static void test_mctrcontrol(void)
{
    unsigned long long failed;

    rv_rule("draft 2.1/6: all-ones mctrcontrol reads back every field (choice 2)");
    ctr_reset();
    ctr_set_m(CTR_ALL_ONES);
    CHECK_EQ(ctr_get_m(), CTR_M_FIELDS);

    rv_rule("draft 2.1: custom 63:60, reserved bits and CLR read 0");
    ctr_set_m(~CTR_M_FIELDS);
    CHECK_EQ(ctr_get_m(), 0);

    rv_rule("draft 2.1: each field is writable on its own (choice 2)");
    failed = 0;
    for (unsigned b = 0; b < 64; b++) {
        ctr_set_m(1ULL << b);
        LOOP_EQ(failed, b, ctr_get_m(), m_expect(1ULL << b));
    }
    CHECK_EQ(failed, 0);
    ctr_reset();

#if RV_XLEN == 32
    rv_rule("draft 2.1: RV32 mctrcontrolh holds mctrcontrol[63:32]");
    csr_write(CSR_MCTRCONTROLH, ~0UL);
    CHECK_EQ(csr_read(CSR_MCTRCONTROLH), CTR_M_FIELDS >> 32);
    CHECK_EQ(csr_read(CSR_MCTRCONTROL), 0);
    csr_write(CSR_MCTRCONTROL, CTR_U | CTR_DEPTH(CTR_DEPTH64));
    CHECK_EQ(csr_read(CSR_MCTRCONTROLH), CTR_M_FIELDS >> 32);
    CHECK_EQ(csr_read(CSR_MCTRCONTROL), CTR_U | CTR_DEPTH(CTR_DEPTH64));
    csr_write(CSR_MCTRCONTROLH, CTR_RETINH >> 32);
    CHECK_EQ(ctr_get_m(), CTR_RETINH | CTR_U | CTR_DEPTH(CTR_DEPTH64));
    ctr_reset();
#else
    rv_rule("draft 2.6: mctrcontrolh, sctrcontrolh, vsctrcontrolh are RV32-only");
    static const unsigned h_csrs[] = {
        CSR_MCTRCONTROLH, CSR_SCTRCONTROLH, CSR_VSCTRCONTROLH,
    };
    for (unsigned i = 0; i < 3; i++) {
        CHECK_TRAP(rv_csr_read_num(h_csrs[i]), CAUSE_ILLEGAL_INSN);
        CHECK_TRAP(rv_csr_write_num(h_csrs[i], 0), CAUSE_ILLEGAL_INSN);
    }
#endif
}

static void test_sctrcontrol(void)
{
    unsigned long long v, failed;
    struct ctr_s_op op;

    rv_rule("draft 2.2: S-mode sctrcontrol reads mctrcontrol without M and MTE");
    ctr_reset();
    ctr_set_m(CTR_M | CTR_MTE | CTR_DEPTH(CTR_DEPTH64) | CTR_RETINH);
    op = ctr_in_mode(RV_MODE_S, CTR_S_CONTROL, NULL);
    CHECK_EQ(op.before, CTR_DEPTH(CTR_DEPTH64) | CTR_RETINH);

    rv_rule("draft 2.2: S-mode sctrcontrol writes reach mctrcontrol except M, MTE");
    v = CTR_ALL_ONES;
    op = ctr_in_mode(RV_MODE_S, CTR_S_CONTROL, &v);
    CHECK_EQ(op.after, CTR_S_FIELDS);
    CHECK_EQ(ctr_get_m(), CTR_M_FIELDS);
    v = 0;
    op = ctr_in_mode(RV_MODE_S, CTR_S_CONTROL, &v);
    CHECK_EQ(op.after, 0);
    CHECK_EQ(ctr_get_m(), CTR_M | CTR_MTE);
    ctr_set_m(0);
    v = CTR_M | CTR_MTE | CTR_S | CTR_DEPTH(CTR_DEPTH32);
    op = ctr_in_mode(RV_MODE_S, CTR_S_CONTROL, &v);
    CHECK_EQ(op.after, CTR_S | CTR_DEPTH(CTR_DEPTH32));
    CHECK_EQ(ctr_get_m(), CTR_S | CTR_DEPTH(CTR_DEPTH32));

    rv_rule("draft 2.2: from M, sctrcontrol is the same view of mctrcontrol");
    failed = 0;
    for (unsigned b = 0; b < 64; b++) {
        ctr_set_m(0);
        ctr_set_s(1ULL << b);
        LOOP_EQ(failed, b, ctr_get_s(), m_expect(1ULL << b) & CTR_S_FIELDS);
        LOOP_EQ(failed, b, ctr_get_m(), m_expect(1ULL << b) & CTR_S_FIELDS);
    }
    CHECK_EQ(failed, 0);
    ctr_set_m(CTR_ALL_ONES);
    CHECK_EQ(ctr_get_s(), CTR_S_FIELDS);
    ctr_reset();
}

static void test_vsctrcontrol(void)
{
    static const unsigned codes[] = {
        CTR_DEPTH16, CTR_DEPTH32, CTR_DEPTH64, CTR_DEPTH128, CTR_DEPTH256,
    };
    unsigned long long v, failed;
    struct ctr_s_op op;

    if (!rv_has_ext('H')) {
        rv_rule("draft 2.3: without H, vsctrcontrol(h) is an illegal instruction");
        CHECK_TRAP(rv_csr_read_num(CSR_VSCTRCONTROL), CAUSE_ILLEGAL_INSN);
        CHECK_TRAP(rv_csr_write_num(CSR_VSCTRCONTROL, 0), CAUSE_ILLEGAL_INSN);
        if (RV_XLEN == 32) {
            CHECK_TRAP(rv_csr_read_num(CSR_VSCTRCONTROLH), CAUSE_ILLEGAL_INSN);
        }
        return;
    }

    rv_rule("draft 2.3: vsctrcontrol has VS 1, VU 2, VSTE 9; bits 0 and 8 read 0");
    ctr_reset();
    ctr_set_m(CTR_DEPTH(CTR_DEPTH64));
    ctr_set_vs(CTR_ALL_ONES);
    CHECK_EQ(ctr_get_vs(), vs_expect(CTR_ALL_ONES, CTR_DEPTH64));
    CHECK_EQ(ctr_get_vs() & (CTR_M | CTR_MTE), 0);
    CHECK_EQ(ctr_get_m(), CTR_DEPTH(CTR_DEPTH64));
    failed = 0;
    for (unsigned b = 0; b < 64; b++) {
        ctr_set_vs(1ULL << b);
        LOOP_EQ(failed, b, ctr_get_vs(), vs_expect(1ULL << b, CTR_DEPTH64));
    }
    CHECK_EQ(failed, 0);
    CHECK_EQ(ctr_get_m(), CTR_DEPTH(CTR_DEPTH64));

    rv_rule("draft 2.3: vsctrcontrol.DEPTH is a read-only copy of mctrcontrol.DEPTH");
    ctr_set_vs(CTR_VS | CTR_RETINH);
    for (unsigned i = 0; i < 5; i++) {
        ctr_set_m(CTR_DEPTH(codes[i]));
        CHECK_EQ(ctr_get_vs(), CTR_VS | CTR_RETINH | CTR_DEPTH(codes[i]));
    }
    ctr_set_m(CTR_DEPTH(CTR_DEPTH32));
    ctr_set_vs(CTR_VU | CTR_DEPTH(CTR_DEPTH256));
    CHECK_EQ(ctr_get_vs(), CTR_VU | CTR_DEPTH(CTR_DEPTH32));
    CHECK_EQ(ctr_get_m(), CTR_DEPTH(CTR_DEPTH32));
    ctr_set_vs(CTR_VU | CTR_DEPTH(CTR_DEPTH16));
    CHECK_EQ(ctr_get_vs(), CTR_VU | CTR_DEPTH(CTR_DEPTH32));
    ctr_set_m(CTR_ALL_ONES);
    CHECK_EQ(ctr_get_vs(), CTR_VU | CTR_DEPTH(CTR_DEPTH256));

    rv_rule("draft 2.2/2.3: VS-mode sctrcontrol accesses reach vsctrcontrol");
    ctr_reset();
    ctr_set_m(CTR_U | CTR_DEPTH(CTR_DEPTH64));
    ctr_set_vs(CTR_VU | CTR_TKBRINH);
    v = CTR_ALL_ONES;
    op = ctr_in_mode(RV_MODE_VS, CTR_S_CONTROL, &v);
    CHECK_EQ(op.before, CTR_VU | CTR_TKBRINH | CTR_DEPTH(CTR_DEPTH64));
    CHECK_EQ(op.after, vs_expect(CTR_ALL_ONES, CTR_DEPTH64));
    CHECK_EQ(ctr_get_vs(), vs_expect(CTR_ALL_ONES, CTR_DEPTH64));
    CHECK_EQ(ctr_get_m(), CTR_U | CTR_DEPTH(CTR_DEPTH64));
    v = CTR_VSTE | CTR_M | CTR_MTE;
    op = ctr_in_mode(RV_MODE_VS, CTR_S_CONTROL, &v);
    CHECK_EQ(op.after, CTR_VSTE | CTR_DEPTH(CTR_DEPTH64));
    CHECK_EQ(ctr_get_m(), CTR_U | CTR_DEPTH(CTR_DEPTH64));
    ctr_set_vs(0);
    ctr_reset();
}

static void test_depth(void)
{
    unsigned long long v, failed = 0;
    struct ctr_s_op op;

    rv_rule("draft 6: DEPTH written 0000 reads the minimum depth, 16");
    ctr_set_m(CTR_DEPTH(0x0));
    CHECK_EQ(ctr_get_m(), CTR_DEPTH(CTR_DEPTH16));

    rv_rule("draft 6: DEPTH written 1111 reads the maximum depth, 256");
    ctr_set_m(CTR_DEPTH(0xf));
    CHECK_EQ(ctr_get_m(), CTR_DEPTH(CTR_DEPTH256));

    rv_rule("draft 2.1: DEPTH is WARL, only legal encodings (choice 3)");
    ctr_set_m(CTR_DEPTH(0x5));
    CHECK_EQ(ctr_get_m(), CTR_DEPTH(0x1));
    ctr_set_m(CTR_DEPTH(0x2));
    CHECK_EQ(ctr_get_m(), CTR_DEPTH(0x0));
    ctr_set_m(CTR_DEPTH(0xb));
    CHECK_EQ(ctr_get_m(), CTR_DEPTH(0x3));
    for (unsigned code = 0; code < 16; code++) {
        ctr_set_m(CTR_DEPTH(code));
        LOOP_EQ(failed, code, ctr_get_m(), CTR_DEPTH(ctr_depth_legal(code)));
    }
    CHECK_EQ(failed, 0);
    v = CTR_DEPTH(0xe);
    op = ctr_in_mode(RV_MODE_S, CTR_S_CONTROL, &v);
    CHECK_EQ(op.after, CTR_DEPTH(0x0));
    v = CTR_DEPTH(0x7);
    op = ctr_in_mode(RV_MODE_S, CTR_S_CONTROL, &v);
    CHECK_EQ(op.after, CTR_DEPTH(0x7));
    ctr_reset();
}

static void test_clr(void)
{
    const unsigned long dirty = 5 | CTRSTATUS_WRAP | CTRSTATUS_FROZEN;
    unsigned long long v = CTR_CLR;
    struct ctr_s_op op;

    rv_rule("draft 2.1: CLR zeroes the entries up to the depth and mctrstatus");
    ctr_reset();
    csr_write(CSR_MCTRSTATUS, dirty);
    CHECK_EQ(ctr_status(), dirty);
    fill(0, 16);
    CHECK_EQ(differ_from_pattern(0, 16), 0);
    ctr_set_m(CTR_CLR | CTR_RETINH | CTR_DEPTH(CTR_DEPTH16));
    CHECK_EQ(ctr_get_m(), CTR_RETINH | CTR_DEPTH(CTR_DEPTH16));
    CHECK_EQ(ctr_status(), 0);
    CHECK_EQ(nonzero(0, 16), 0);

    /*
     * Choice 4 pins "the depth after the write".  The draft's note in 2.1
     * (set CLR when lowering DEPTH so that no state stays above the new
     * depth) reads as if a CLR that lowers DEPTH cleared more than that.
     */
    /*
     * Draft 2.1's note: software lowering DEPTH sets CLR so that no state
     * is kept in the entries above the new depth.  So CLR clears up to
     * the larger of the depths before and after the write (choice 4).
     */
    rv_rule("draft 2.1: CLR with a lower DEPTH keeps nothing above it");
    ctr_set_m(CTR_DEPTH(CTR_DEPTH256));
    csr_write(CSR_MCTRSTATUS, 0);
    fill(0, 256);           /* logical i is physical 255 - i (WRPTR 0) */
    CHECK_EQ(differ_from_pattern(0, 256), 0);
    ctr_set_m(CTR_CLR | CTR_DEPTH(CTR_DEPTH16));
    CHECK_EQ(nonzero(0, 16), 0);
    ctr_set_m(CTR_DEPTH(CTR_DEPTH256));
    CHECK_EQ(ctr_status(), 0);
    CHECK_EQ(nonzero(0, 256), 0);
    ctr_set_m(CTR_DEPTH(CTR_DEPTH16));
    fill(0, 16);
    ctr_set_m(CTR_CLR | CTR_DEPTH(CTR_DEPTH256));
    CHECK_EQ(nonzero(0, 256), 0);

    rv_rule("draft 2.2: CLR written to sctrcontrol from S clears (choice 4)");
    ctr_reset();
    csr_write(CSR_MCTRSTATUS, dirty);
    fill(0, 16);
    CHECK_EQ(differ_from_pattern(0, 16), 0);
    op = ctr_in_mode(RV_MODE_S, CTR_S_CONTROL, &v);
    CHECK_EQ(op.after, 0);
    CHECK_EQ(ctr_status(), 0);
    CHECK_EQ(nonzero(0, 16), 0);

    if (!rv_has_ext('H')) {
        return;
    }
    rv_rule("draft 2.3: vsctrcontrol.CLR written while V=0 has no effect");
    ctr_set_m(CTR_CLR | CTR_DEPTH(CTR_DEPTH32));
    csr_write(CSR_MCTRSTATUS, dirty);
    fill(0, 32);
    CHECK_EQ(differ_from_pattern(0, 32), 0);
    ctr_set_vs(CTR_CLR);
    CHECK_EQ(ctr_get_vs(), CTR_DEPTH(CTR_DEPTH32));
    CHECK_EQ(ctr_status(), dirty);
    CHECK_EQ(differ_from_pattern(0, 32), 0);

    rv_rule("draft 2.3: CLR written from VS mode clears up to mctrcontrol.DEPTH");
    op = ctr_in_mode(RV_MODE_VS, CTR_S_CONTROL, &v);
    CHECK_EQ(op.after, CTR_DEPTH(CTR_DEPTH32));
    CHECK_EQ(ctr_status(), 0);
    CHECK_EQ(nonzero(0, 32), 0);
    ctr_set_vs(0);
}

int main(void)
{
    rv_rule("the draft (ctr=on) has its own non-standard names in riscv,isa, "
            "not the ratified Smctr/Ssctr's (docs/ctr.rst)");
    CHECK(rv_isa_has("xsmctrdraft"));
    CHECK(rv_isa_has("xssctrdraft") == rv_has_ext('S'));
    CHECK(!rv_isa_has("smctr"));
    CHECK(!rv_isa_has("ssctr"));
    ctr_open_stateen();
    test_mctrcontrol();
    test_sctrcontrol();
    test_vsctrcontrol();
    test_depth();
    test_clr();
    ctr_reset();
    return 0;
}

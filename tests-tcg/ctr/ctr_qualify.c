/*
 * CTR v0.1.4 draft chapter 5 (rule 3): a transfer is recorded only in an
 * enabled mode, when its type is not inhibited and FROZEN is 0; a record
 * has V=1 and its source, target and TYPE set; a full array overwrites
 * its oldest entry.  Chapter 2 (the active control register: mctrcontrol
 * while V=0, vsctrcontrol while V=1); choice 10 for CCV.
 *
 * The transfers are chains of "jal x0" (direct jumps) at known addresses,
 * run in U, S, VS or VU through rv_run_in_mode, or in M with recording
 * switched on and off around the chain.  The filter bits let only the
 * types under test through, so the library's own calls, returns, traps
 * and trap returns are not recorded.  RV64 and RV32; VS/VU parts need
 * h=on; the cycle-count check needs -icount shift=0.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_sw.h"

#define CHAIN 24                        /* jumps in a chain */

unsigned long ctr_chain(unsigned long unused);
void ctr_chain_m(unsigned long on, unsigned long off);
unsigned long ctr_mixed(unsigned long unused);
extern char ctr_chain_first[], ctr_chain_m_first[];
extern char ctr_mixed_j[], ctr_mixed_b[], ctr_mixed_c[];

asm(".pushsection .text\n"
    ".balign 4\n"
    ".globl ctr_chain, ctr_chain_first, ctr_chain_m, ctr_chain_m_first\n"
    ".globl ctr_mixed, ctr_mixed_j, ctr_mixed_b, ctr_mixed_c\n"
    ".option push\n"
    ".option norvc\n"
    ".option norelax\n"
    /* CHAIN jumps, each to the next instruction */
    "ctr_chain:\n"
    "ctr_chain_first:\n"
    "  .rept 24\n"
    "  jal x0, 1f\n"
    "1:\n"
    "  .endr\n"
    "  ret\n"
    /* the same in M mode: mctrcontrol = a0, jumps, mctrcontrol = a1 */
    "ctr_chain_m:\n"
    "  csrw 0x381, a0\n"
    "ctr_chain_m_first:\n"
    "  .rept 24\n"
    "  jal x0, 1f\n"
    "1:\n"
    "  .endr\n"
    "  csrw 0x381, a1\n"
    "  ret\n"
    /* a direct jump, a taken branch, a direct call */
    "ctr_mixed:\n"
    "  mv t1, ra\n"
    "ctr_mixed_j:\n"
    "  jal x0, 1f\n"
    "1:\n"
    "ctr_mixed_b:\n"
    "  beq x0, x0, 2f\n"
    "2:\n"
    "ctr_mixed_c:\n"
    "  jal ra, 3f\n"
    "3:\n"
    "  mv ra, t1\n"
    "  ret\n"
    ".option pop\n"
    ".popsection\n");

#define DIRJUMP_ONLY    ctr_allow_only(1u << CTR_TYPE_DIRJUMP)

/* Clear the array at depth 32 and set mctrcontrol (and vsctrcontrol). */
static void arm(unsigned long long mctl, unsigned long long vsctl)
{
    ctr_set_m(CTR_CLR | CTR_DEPTH(CTR_DEPTH32));
    if (rv_has_ext('H')) {
        ctr_set_vs(vsctl);
    }
    ctr_set_m(mctl | CTR_DEPTH(CTR_DEPTH32));
}

/* Run the jump chain in mode; return how many records it left. */
static unsigned chain_in(enum rv_mode mode)
{
    rv_run_in_mode(mode, ctr_chain, 0);
    return ctr_wrptr();
}

/* Entry i, counted back from the newest, of a chain starting at first. */
static bool is_chain_record(unsigned i, unsigned jump, unsigned long first)
{
    struct ctr_entry e = ctr_read_entry(i);

    return e.source == (first + 4 * jump) + CTRSOURCE_V &&
           e.target == first + 4 * (jump + 1) &&
           (e.data & CTRDATA_TYPE) == CTR_TYPE_DIRJUMP;
}

static void test_modes(void)
{
    unsigned long long off;

    rv_rule("ch5: recorded only in an enabled mode (U, S)");
    arm(CTR_U | DIRJUMP_ONLY, 0);
    CHECK_EQ(chain_in(RV_MODE_S), 0);
    CHECK_EQ(ctr_read_entry(0).source, 0);
    CHECK_EQ(chain_in(RV_MODE_U), CHAIN);
    arm(CTR_S | DIRJUMP_ONLY, 0);
    CHECK_EQ(chain_in(RV_MODE_U), 0);
    CHECK_EQ(chain_in(RV_MODE_S), CHAIN);

    rv_rule("ch5: recorded only in an enabled mode (M)");
    off = DIRJUMP_ONLY | CTR_DEPTH(CTR_DEPTH32);
    arm(DIRJUMP_ONLY, 0);
    ctr_chain_m((unsigned long)(off | CTR_U | CTR_S), (unsigned long)off);
    CHECK_EQ(ctr_wrptr(), 0);
    ctr_chain_m((unsigned long)(off | CTR_M), (unsigned long)off);
    CHECK_EQ(ctr_wrptr(), CHAIN);
    CHECK(is_chain_record(0, CHAIN - 1, (unsigned long)ctr_chain_m_first));
    CHECK(is_chain_record(CHAIN - 1, 0, (unsigned long)ctr_chain_m_first));

    if (!rv_has_ext('H')) {
        return;
    }
    rv_rule("ch2/ch5: while V=1, vsctrcontrol VS and VU enable recording");
    arm(DIRJUMP_ONLY, CTR_VU | DIRJUMP_ONLY);
    CHECK_EQ(chain_in(RV_MODE_VS), 0);
    CHECK_EQ(chain_in(RV_MODE_S), 0);
    CHECK_EQ(chain_in(RV_MODE_VU), CHAIN);
    arm(DIRJUMP_ONLY, CTR_VS | DIRJUMP_ONLY);
    CHECK_EQ(chain_in(RV_MODE_VU), 0);
    CHECK_EQ(chain_in(RV_MODE_VS), CHAIN);

    rv_rule("ch2/ch5: mctrcontrol S and U do not enable VS and VU");
    arm(CTR_S | CTR_U | DIRJUMP_ONLY, DIRJUMP_ONLY);
    CHECK_EQ(chain_in(RV_MODE_VS), 0);
    CHECK_EQ(chain_in(RV_MODE_VU), 0);
    ctr_set_vs(0);
}

/* Entry i is the record of the mixed-chain transfer at src. */
static bool is_mixed(unsigned i, const char *src, unsigned type)
{
    struct ctr_entry e = ctr_read_entry(i);

    return e.source == (unsigned long)src + CTRSOURCE_V &&
           e.target == (unsigned long)src + 4 &&
           (e.data & CTRDATA_TYPE) == type;
}

static void test_types(void)
{
    const unsigned j = 1u << CTR_TYPE_DIRJUMP, b = 1u << CTR_TYPE_TKBR,
                   c = 1u << CTR_TYPE_DIRCALL;

    rv_rule("ch5: recorded only when the type is not inhibited");
    arm(CTR_U | ctr_allow_only(j | b | c), 0);
    rv_run_in_mode(RV_MODE_U, ctr_mixed, 0);
    CHECK_EQ(ctr_wrptr(), 3);
    CHECK(is_mixed(0, ctr_mixed_c, CTR_TYPE_DIRCALL));
    CHECK(is_mixed(1, ctr_mixed_b, CTR_TYPE_TKBR));
    CHECK(is_mixed(2, ctr_mixed_j, CTR_TYPE_DIRJUMP));

    arm(CTR_U | ctr_allow_only(b | c), 0);      /* DIRJUMPINH */
    rv_run_in_mode(RV_MODE_U, ctr_mixed, 0);
    CHECK_EQ(ctr_wrptr(), 2);
    CHECK(is_mixed(0, ctr_mixed_c, CTR_TYPE_DIRCALL));
    CHECK(is_mixed(1, ctr_mixed_b, CTR_TYPE_TKBR));

    arm(CTR_U | ctr_allow_only(j | c), 0);      /* TKBRINH */
    rv_run_in_mode(RV_MODE_U, ctr_mixed, 0);
    CHECK_EQ(ctr_wrptr(), 2);
    CHECK(is_mixed(0, ctr_mixed_c, CTR_TYPE_DIRCALL));
    CHECK(is_mixed(1, ctr_mixed_j, CTR_TYPE_DIRJUMP));

    arm(CTR_U | ctr_allow_only(j | b), 0);      /* DIRCALLINH */
    rv_run_in_mode(RV_MODE_U, ctr_mixed, 0);
    CHECK_EQ(ctr_wrptr(), 2);
    CHECK(is_mixed(0, ctr_mixed_b, CTR_TYPE_TKBR));
    CHECK(is_mixed(1, ctr_mixed_j, CTR_TYPE_DIRJUMP));

    arm(CTR_U | ctr_allow_only(0), 0);
    rv_run_in_mode(RV_MODE_U, ctr_mixed, 0);
    CHECK_EQ(ctr_wrptr(), 0);
}

static void test_frozen(void)
{
    rv_rule("ch5: nothing is recorded while mctrstatus.FROZEN is set");
    arm(CTR_U | DIRJUMP_ONLY, 0);
    csr_write(CSR_MCTRSTATUS, CTRSTATUS_FROZEN);
    rv_run_in_mode(RV_MODE_U, ctr_chain, 0);
    CHECK_EQ(ctr_status(), CTRSTATUS_FROZEN);
    CHECK_EQ(ctr_read_entry(0).source, 0);
    csr_write(CSR_MCTRSTATUS, 0);
    CHECK_EQ(chain_in(RV_MODE_U), CHAIN);
}

static void test_record_fields(void)
{
    const unsigned long first = (unsigned long)ctr_chain_first;
    const unsigned long junk = ~0UL;
    unsigned bad = 0;

    rv_rule("ch5: a record has V=1 and source, target and TYPE set");
    arm(CTR_U | DIRJUMP_ONLY, 0);
    for (unsigned i = 0; i < 32; i++) {
        ctr_write_entry(i, junk, junk, junk);
    }
    csr_write(CSR_MCTRSTATUS, 0);
    CHECK_EQ(chain_in(RV_MODE_U), CHAIN);
    for (unsigned i = 0; i < CHAIN; i++) {
        bad += !is_chain_record(i, CHAIN - 1 - i, first);
        bad += (ctr_read_entry(i).target & CTRTARGET_MISP) != 0;
    }
    CHECK_EQ(bad, 0);

    rv_rule("ch5: a record updates every implemented field (CCV, CC; choice 10)");
    /* The first record follows a mode change: CCV=0.  Each later one is
     * one instruction (one cycle with -icount shift=0) after the last. */
    CHECK_EQ(ctr_read_entry(CHAIN - 1).data & CTRDATA_CCV, 0);
    bad = 0;
    for (unsigned i = 0; i < CHAIN - 1; i++) {
        bad += ctr_read_entry(i).data !=
               (CTR_TYPE_DIRJUMP | CTRDATA_CCV | (1UL << 16));
    }
    CHECK_EQ(bad, 0);

    rv_rule("ch5: a record leaves the older entries alone");
    bad = 0;
    for (unsigned i = CHAIN; i < 32; i++) {
        struct ctr_entry e = ctr_read_entry(i);

        bad += e.source != junk || e.target != (junk & ~CTRTARGET_MISP) ||
               e.data != (junk & CTRDATA_RW);
    }
    CHECK_EQ(bad, 0);
}

static void test_full(void)
{
    const unsigned long first = (unsigned long)ctr_chain_first;
    unsigned bad = 0;

    rv_rule("ch5: a full array overwrites the oldest entry (depth 16)");
    ctr_set_m(CTR_CLR | CTR_DEPTH(CTR_DEPTH16));
    ctr_set_m(CTR_U | DIRJUMP_ONLY | CTR_DEPTH(CTR_DEPTH16));
    rv_run_in_mode(RV_MODE_U, ctr_chain, 0);
    CHECK_EQ(ctr_status(), CTRSTATUS_WRAP | (CHAIN - 16));
    for (unsigned i = 0; i < 16; i++) {
        bad += !is_chain_record(i, CHAIN - 1 - i, first);
    }
    CHECK_EQ(bad, 0);
    for (unsigned i = 16; i < 256; i++) {
        bad += ctr_read_entry(i).source != 0;
    }
    CHECK_EQ(bad, 0);

    rv_rule("ch5: below the depth nothing is overwritten (depth 32)");
    arm(CTR_U | DIRJUMP_ONLY, 0);
    CHECK_EQ(chain_in(RV_MODE_U), CHAIN);
    CHECK_EQ(ctr_status(), CHAIN);
    bad = 0;
    for (unsigned i = 0; i < CHAIN; i++) {
        bad += !is_chain_record(i, CHAIN - 1 - i, first);
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(ctr_read_entry(CHAIN).source, 0);
}

int main(void)
{
    ctr_open_stateen();
    test_modes();
    test_types();
    test_frozen();
    test_record_fields();
    test_full();
    ctr_reset();
    return 0;
}

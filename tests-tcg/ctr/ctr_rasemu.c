/*
 * CTR v0.1.4 draft: RAS emulation mode (section 5.4), with the return
 * and WRAP behaviour of mctrstatus (2.4).  In M mode with only M enabled
 * and ctrcontrol.RASEMU=1:
 *   - indirect and direct calls are recorded as normal;
 *   - a return pops: entry 0's ctrsource.V is cleared and the array
 *     rotates (entries 1..depth-1 become 0..depth-2, the invalidated entry
 *     becomes depth-1), i.e. WRPTR is decremented; WRAP is cleared when
 *     WRPTR decrements from 0;
 *   - a co-routine swap overwrites entry 0 (WRPTR unchanged);
 *   - other transfer types are not recorded;
 *   - the transfer type filter bits are ignored.
 * Some runs start from an array written by software (choice 6 of the
 * brief: entry fields writable, mctrstatus WRPTR/WRAP writable).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_rec.h"

#define DEPTH 16

SCEN_DECL(ra_calls);
SCEN_DECL(ra_nest);
SCEN_DECL(ra_rets);
SCEN_DECL(ra_ret1);
SCEN_DECL(ra_ret7);
SCEN_DECL(ra_sw1);
SCEN_DECL(ra_sw2);
SCEN_DECL(ra_sw3);
extern char ra_exc_h[], ra_nest_c1[], ra_nest_f1[], ra_nest_c3[],
            ra_nest_f3[];

asm(
"   .option push\n"
"   .option norvc\n"
"   .option norelax\n"
"   .text\n"
"   .balign 4\n"
"   .globl ra_exc_h\n"
"ra_exc_h:\n"
"   csrr t3, mepc\n"
"   addi t3, t3, 4\n"
"   csrw mepc, t3\n"
"   mret\n"

/* Every call form, among transfers of the other types. */
SCEN_BEGIN(ra_calls)
".Lc1: jal ra, .Lc1_t\n"
EXPECT_M(ra_calls, .Lc1, .Lc1_t, 9,
         "draft 5.4: with RASEMU=1 a direct call (jal x1) is recorded")
"   nop\n"
".Lc1_t: ecall\n"
"   li t0, 1\n"
"   bnez t0, 1f\n"
"   nop\n"
"1: beqz t0, .Lc_out\n"
".Lc2: jal t0, .Lc2_t\n"
EXPECT_M(ra_calls, .Lc2, .Lc2_t, 9,
         "draft 5.4: with RASEMU=1 a direct call (jal x5) is recorded")
"   nop\n"
".Lc2_t: la t1, .Lc3_t\n"
".Lc3: jalr ra, 0(t1)\n"
EXPECT_M(ra_calls, .Lc3, .Lc3_t, 8,
         "draft 5.4: with RASEMU=1 an indirect call (jalr x1) is recorded")
"   nop\n"
".Lc3_t: la t1, .Lc4_t\n"
".Lc4: jalr t0, 0(t1)\n"
EXPECT_M(ra_calls, .Lc4, .Lc4_t, 8,
         "draft 5.4: with RASEMU=1 an indirect call (jalr x5) is recorded")
"   nop\n"
".Lc4_t: j 2f\n"
"2: la t1, 3f\n"
"   jr t1\n"
"3: la t1, 4f\n"
"   jalr t2, 0(t1)\n"
"4: jal t2, 5f\n"
"5: .option push\n"
"   .option rvc\n"
"   la t1, .Lc5_t\n"
".Lc5: c.jalr t1\n"
EXPECT_M(ra_calls, .Lc5, .Lc5_t, 8,
         "draft 5.4: with RASEMU=1 an indirect call (c.jalr) is recorded")
"   c.nop\n"
".Lc5_t:\n"
#if RV_XLEN == 32
".Lc6: c.jal .Lc6_t\n"
EXPECT_M(ra_calls, .Lc6, .Lc6_t, 9,
         "draft 5.4: with RASEMU=1 a direct call (c.jal) is recorded")
"   c.nop\n"
".Lc6_t:\n"
#endif
"   c.j 6f\n"
"   c.nop\n"
"6: .option pop\n"
".Lc_out:\n"
SCEN_RETURN
SCEN_TAB_END(ra_calls)

/* call f1 { call f2 { ret }; call f3 { ret }; stop while still in f1 } */
SCEN_BEGIN(ra_nest)
"   .globl ra_nest_c1, ra_nest_f1, ra_nest_c3, ra_nest_f3\n"
"ra_nest_c1: jal ra, ra_nest_f1\n"
"1: j 1b\n"
"ra_nest_f1: la t1, .Ln_f2\n"
"   jalr ra, 0(t1)\n"
"ra_nest_c3: jal ra, ra_nest_f3\n"
SCEN_RETURN
".Ln_f2: li t0, 1\n"
"   bnez t0, 2f\n"
"   nop\n"
"2: ret\n"
"ra_nest_f3: j 3f\n"
"   nop\n"
"3: ret\n"
SCEN_TAB_END(ra_nest)

/* Four returns, among transfers of the other types. */
SCEN_BEGIN(ra_rets)
"   la ra, 1f\n"
"   jalr x0, 0(ra)\n"           /* return (ret) */
"   nop\n"
"1: li t0, 1\n"
"   bnez t0, 2f\n"
"   nop\n"
"2: beqz t0, 8f\n"
"   ecall\n"
"   .option push\n"
"   .option rvc\n"
"   la ra, 3f\n"
"   c.jr ra\n"                  /* return */
"   c.nop\n"
"3: la t0, 4f\n"
"   .option norvc\n"
"   jalr x0, 0(t0)\n"           /* return (x5) */
"   nop\n"
"4: .option rvc\n"
"   la t0, 5f\n"
"   c.jr t0\n"                  /* return (x5) */
"   c.nop\n"
"5: c.j 6f\n"
"6: la t1, 7f\n"
"   c.jr t1\n"
"7: .option pop\n"
"   jal t2, 8f\n"
"8:\n"
SCEN_RETURN
SCEN_TAB_END(ra_rets)

SCEN_BEGIN(ra_ret1)
"   la ra, 1f\n"
"   jalr x0, 0(ra)\n"
"   nop\n"
"1:\n"
SCEN_RETURN
SCEN_TAB_END(ra_ret1)

SCEN_BEGIN(ra_ret7)
"   la ra, 1f\n"
"   jalr t2, 0(ra)\n"
"   nop\n"
"1:\n"
SCEN_RETURN
SCEN_TAB_END(ra_ret7)

SCEN_BEGIN(ra_sw1)
"   la t0, .Lsw1_t\n"
".Lsw1: jalr ra, 0(t0)\n"
EXPECT_M(ra_sw1, .Lsw1, .Lsw1_t, 12,
         "draft 5.4: a co-routine swap (jalr x1, x5) overwrites entry 0")
"   nop\n"
".Lsw1_t:\n"
SCEN_RETURN
SCEN_TAB_END(ra_sw1)

SCEN_BEGIN(ra_sw2)
"   la ra, .Lsw2_t\n"
".Lsw2: jalr t0, 0(ra)\n"
EXPECT_M(ra_sw2, .Lsw2, .Lsw2_t, 12,
         "draft 5.4: a co-routine swap (jalr x5, x1) overwrites entry 0")
"   nop\n"
".Lsw2_t:\n"
SCEN_RETURN
SCEN_TAB_END(ra_sw2)

SCEN_BEGIN(ra_sw3)
"   la t0, .Lsw3_t\n"
"   .option push\n"
"   .option rvc\n"
".Lsw3: c.jalr t0\n"
EXPECT_M(ra_sw3, .Lsw3, .Lsw3_t, 12,
         "draft 5.4: a co-routine swap (c.jalr x5) overwrites entry 0")
"   c.nop\n"
".Lsw3_t:\n"
"   .option pop\n"
SCEN_RETURN
SCEN_TAB_END(ra_sw3)
"   .option pop\n");

/* RASEMU=1 with NTBREN=1, ETEN=1: non-call types still not recorded. */
#define CTL_PLAIN (CTR_RASEMU | CTR_NTBREN | CTR_ETEN | CTR_MTE)
/* RASEMU=1 with every inhibit bit set: they are ignored. */
#define CTL_INH (CTR_RASEMU | CTR_INH_ALL)

static const char *const R_FILTER =
    "draft 5.4: with RASEMU=1 the transfer type filtering bits are ignored";
static const char *const R_OTHER =
    "draft 5.4: with RASEMU=1 other transfer types are not recorded";
static const char *const R_POP =
    "draft 5.4: a return pops: entry 0 invalidated, entries 1..depth-1 "
    "move to 0..depth-2, the invalidated entry to depth-1";

static void write_entry(unsigned n, struct ctr_entry e)
{
    csr_write(CSR_MISELECT, 0x200 + n);
    csr_write(CSR_MIREG, e.source);
    csr_write(CSR_MIREG2, e.target);
    csr_write(CSR_MIREG3, e.data);
}

/* A distinct software-written call record for logical entry i. */
static struct ctr_entry fake(unsigned i)
{
    struct ctr_entry e = {
        .source = (0x80100000UL + 0x100 * i) | CTRSOURCE_V,
        .target = 0x80200000UL + 0x100 * i,
        .data = CTR_TYPE_DIRCALL | CTRDATA_CCV | ((i + 1UL) << 16),
    };
    return e;
}

static bool entry_is(unsigned n, struct ctr_entry exp)
{
    struct ctr_entry e = ctr_read_entry(n);

    return CHECK_EQ(e.source, exp.source) & CHECK_EQ(e.target, exp.target) &
           CHECK_EQ(e.data, exp.data);
}

/* Run fn (M enabled) after loading m fake entries at WRPTR wrptr. */
static void run(void (*fn)(unsigned long), unsigned long long ctl,
                unsigned long status, unsigned m)
{
    unsigned long mtvec = csr_read(CSR_MTVEC);

    ctr_prepare(ctl);
    csr_write(CSR_MCTRSTATUS, status);
    for (unsigned i = 0; i < m; i++) {
        write_entry(i, fake(i));
    }
    csr_write(CSR_MTVEC, (unsigned long)ra_exc_h);
    fn((unsigned long)(ctl | CTR_M));
    csr_write(CSR_MTVEC, mtvec);
}

/* After k pops from m fake entries loaded at WRPTR wrptr. */
static void check_pops(const char *rule, unsigned wrptr, unsigned m,
                       unsigned k)
{
    rv_rule(rule);
    CHECK_EQ(ctr_wrptr(), (wrptr - k) % DEPTH);
    for (unsigned i = 0; i + k < m; i++) {
        entry_is(i, fake(i + k));
    }
    for (unsigned j = 1; j <= k; j++) {
        struct ctr_entry e = fake(k - j);

        e.source &= ~CTRSOURCE_V;
        entry_is(DEPTH - j, e);
    }
    for (unsigned i = m - k; i < DEPTH - k; i++) {
        CHECK_EQ(ctr_read_entry(i).source, 0);
    }
}

static void rasemu_runs(unsigned long long ctl)
{
    const char *rule = ctl == CTL_INH ? R_FILTER : NULL;
    struct ctr_entry e;

    /* Calls pushed as normal, nothing else recorded. */
    run(ra_calls, ctl, 0, 0);
    rv_rule(ctl == CTL_INH ? R_FILTER : R_OTHER);
    CHECK_EQ(ctr_wrptr(), ra_calls_tab_end - ra_calls_tab);
    ctr_check_records("ra_calls", SCEN_TAB(ra_calls), rule);

    /* Nested calls and returns: only the outer call is left. */
    run(ra_nest, ctl, 0, 0);
    rv_rule(rule ? rule : R_POP);
    CHECK_EQ(ctr_wrptr(), 1);
    CHECK_EQ(csr_read(CSR_MCTRSTATUS) & CTRSTATUS_WRAP, 0);
    e = (struct ctr_entry){ (unsigned long)ra_nest_c1 | CTRSOURCE_V,
                            (unsigned long)ra_nest_f1, CTR_TYPE_DIRCALL };
    CHECK_EQ(ctr_read_entry(0).source, e.source);
    CHECK_EQ(ctr_read_entry(0).target, e.target);
    CHECK_EQ(ctr_read_entry(0).data & CTRDATA_TYPE, e.data);
    /* The last popped call (f3's), invalidated, is entry depth-1. */
    e = (struct ctr_entry){ (unsigned long)ra_nest_c3,
                            (unsigned long)ra_nest_f3, CTR_TYPE_DIRCALL };
    CHECK_EQ(ctr_read_entry(DEPTH - 1).source, e.source);
    CHECK_EQ(ctr_read_entry(DEPTH - 1).target, e.target);
    CHECK_EQ(ctr_read_entry(DEPTH - 1).data & CTRDATA_TYPE, e.data);
    for (unsigned i = 1; i < DEPTH - 1; i++) {
        CHECK_EQ(ctr_read_entry(i).source, 0);
    }

    /* Four return forms on six entries: four pops, nothing else. */
    run(ra_rets, ctl, 6, 6);
    check_pops(rule ? rule : R_POP, 6, 6, 4);

    run(ra_ret7, ctl, 3, 3);
    check_pops(rule ? rule :
               "E-trace 4.1.1, draft 5.4: jalr x7, x1 is a return and pops",
               3, 3, 1);

    /* WRAP: cleared when WRPTR decrements from 0, kept otherwise. */
    run(ra_ret1, ctl, CTRSTATUS_WRAP | 0, 3);
    check_pops(rule ? rule : R_POP, 0, 3, 1);
    rv_rule(rule ? rule :
            "draft 2.4: WRAP is cleared when a return decrements WRPTR "
            "from 0");
    CHECK_EQ(csr_read(CSR_MCTRSTATUS) & CTRSTATUS_WRAP, 0);
    run(ra_ret1, ctl, CTRSTATUS_WRAP | 3, 3);
    check_pops(rule ? rule : R_POP, 3, 3, 1);
    rv_rule(rule ? rule :
            "draft 2.4: WRAP stays set when a return decrements a non-zero "
            "WRPTR");
    CHECK_EQ(csr_read(CSR_MCTRSTATUS) & CTRSTATUS_WRAP, CTRSTATUS_WRAP);

    /* Co-routine swaps overwrite entry 0, WRPTR unchanged. */
    void (*const swaps[])(unsigned long) = { ra_sw1, ra_sw2, ra_sw3 };
    const struct ctr_rec *const tabs[] = { ra_sw1_tab, ra_sw2_tab,
                                           ra_sw3_tab };
    for (unsigned s = 0; s < 3; s++) {
        const struct ctr_rec *r = tabs[s];

        run(swaps[s], ctl, 3, 3);
        rv_rule(rule ? rule : r->rule);
        CHECK_EQ(ctr_wrptr(), 3);
        CHECK_EQ(ctr_read_entry(0).source, r->src | CTRSOURCE_V);
        CHECK_EQ(ctr_read_entry(0).target, r->tgt);
        CHECK_EQ(ctr_read_entry(0).data & CTRDATA_TYPE, r->type);
        entry_is(1, fake(1));
        entry_is(2, fake(2));
        CHECK_EQ(ctr_read_entry(3).source, 0);
        CHECK_EQ(ctr_read_entry(DEPTH - 1).source, 0);
    }
}

int main(void)
{
    rasemu_runs(CTL_PLAIN);
    rasemu_runs(CTL_INH);
    ctr_reset();
    return 0;
}

/*
 * CTR v0.1.4 draft: transfer types (ctrdata.TYPE, section 3.3) and their
 * source/target PCs, the jump classification they come from (E-trace
 * v1.1.1 section 4.1.1), and transfer type filtering (section 5.2): bit
 * 32+TYPE of ctrcontrol inhibits exactly its type, NTBREN enables
 * not-taken branches.  Everything runs in M mode with only M enabled.
 *
 * Source and target PCs are labels of the hand-written scenarios below;
 * a trap's source is the PC of the trapping instruction (the interrupted
 * one, mepc, for an interrupt), its target the handler; a trap return
 * goes from the mret to mepc; a not-taken branch targets the next
 * instruction.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_rec.h"

unsigned long ty_intr_epc;          /* mepc seen by ty_intr_h */

SCEN_DECL(ty_all);
SCEN_DECL(ty_std);
SCEN_DECL(ty_rvc);
SCEN_DECL(ty_intr);
extern char ty_exc_h[], ty_intr_h[], ty_intr_win[], ty_intr_win_end[];

asm(
"   .option push\n"
"   .option norvc\n"
"   .option norelax\n"
"   .text\n"
/* Exception handler: skip the 4-byte trapping instruction. */
"   .balign 4\n"
"   .globl ty_exc_h\n"
"ty_exc_h:\n"
"   csrr t3, mepc\n"
"   addi t3, t3, 4\n"
"   csrw mepc, t3\n"
".Lexc_ret: mret\n"
/* Timer interrupt handler: save mepc, keep MIE=0 after the mret. */
"   .balign 4\n"
"   .globl ty_intr_h\n"
"ty_intr_h:\n"
"   csrr t3, mepc\n"
"   la t4, ty_intr_epc\n"
"   " SREG " t3, 0(t4)\n"
"   li t3, 0x80\n"
"   csrc mstatus, t3\n"
".Lintr_ret: mret\n"

/* One transfer of every synchronous type, in type order. */
SCEN_BEGIN(ty_all)
".Lall_exc: ecall\n"
EXPECT_M(ty_all, .Lall_exc, ty_exc_h, 1,
         "draft 3.3: an exception (ecall, M to M) is TYPE 1, ecall -> mtvec")
".Lall_exc_back: li t0, 1\n"
EXPECT_M(ty_all, .Lexc_ret, .Lall_exc_back, 3,
         "draft 3.3: a trap return (mret) is TYPE 3, mret -> mepc")
".Lall_ntbr: beqz t0, .Lall_out\n"
EXPECT_M(ty_all, .Lall_ntbr, .Lall_ntbr_next, 4,
         "draft 3.3, 5.2: a not-taken branch (NTBREN=1) is TYPE 4, "
         "target the next instruction")
".Lall_ntbr_next: nop\n"
".Lall_tkbr: bnez t0, .Lall_tkbr_t\n"
EXPECT_M(ty_all, .Lall_tkbr, .Lall_tkbr_t, 5,
         "draft 3.3: a taken branch is TYPE 5")
"   nop\n"
".Lall_tkbr_t: la t1, .Lall_ic_t\n"
".Lall_ic: jalr ra, 0(t1)\n"
EXPECT_M(ty_all, .Lall_ic, .Lall_ic_t, 8,
         "E-trace 4.1.1: jalr x1, x6 is an indirect call (TYPE 8)")
"   nop\n"
".Lall_ic_t:\n"
".Lall_dc: jal ra, .Lall_dc_t\n"
EXPECT_M(ty_all, .Lall_dc, .Lall_dc_t, 9,
         "E-trace 4.1.1: jal x1 is a direct call (TYPE 9)")
"   nop\n"
".Lall_dc_t: la t1, .Lall_ij_t\n"
".Lall_ij: jalr x0, 0(t1)\n"
EXPECT_M(ty_all, .Lall_ij, .Lall_ij_t, 10,
         "E-trace 4.1.1: jalr x0, x6 is an indirect jump (TYPE 10)")
"   nop\n"
".Lall_ij_t:\n"
".Lall_dj: jal x0, .Lall_dj_t\n"
EXPECT_M(ty_all, .Lall_dj, .Lall_dj_t, 11,
         "E-trace 4.1.1: jal x0 is a direct jump (TYPE 11)")
"   nop\n"
".Lall_dj_t: la t0, .Lall_cs_t\n"
".Lall_cs: jalr ra, 0(t0)\n"
EXPECT_M(ty_all, .Lall_cs, .Lall_cs_t, 12,
         "E-trace 4.1.1: jalr x1, x5 is a co-routine swap (TYPE 12)")
"   nop\n"
".Lall_cs_t: la ra, .Lall_ret_t\n"
".Lall_ret: jalr x0, 0(ra)\n"
EXPECT_M(ty_all, .Lall_ret, .Lall_ret_t, 13,
         "E-trace 4.1.1: jalr x0, x1 is a return (TYPE 13)")
"   nop\n"
".Lall_ret_t: la t1, .Lall_oij_t\n"
".Lall_oij: jalr t2, 0(t1)\n"
EXPECT_M(ty_all, .Lall_oij, .Lall_oij_t, 14,
         "E-trace 4.1.1: jalr x7, x6 is an other indirect jump (TYPE 14)")
"   nop\n"
".Lall_oij_t:\n"
".Lall_odj: jal t2, .Lall_odj_t\n"
EXPECT_M(ty_all, .Lall_odj, .Lall_odj_t, 15,
         "E-trace 4.1.1: jal x7 is an other direct jump (TYPE 15)")
"   nop\n"
".Lall_odj_t:\n"
".Lall_out:\n"
SCEN_RETURN
SCEN_TAB_END(ty_all)

/* The other 32-bit forms of each class. */
SCEN_BEGIN(ty_std)
"   la t1, .Lstd1_t\n"
".Lstd1: jalr t0, 0(t1)\n"
EXPECT_M(ty_std, .Lstd1, .Lstd1_t, 8,
         "E-trace 4.1.1: jalr x5, x6 is an indirect call (TYPE 8)")
"   nop\n"
".Lstd1_t:\n"
".Lstd2: jal t0, .Lstd2_t\n"
EXPECT_M(ty_std, .Lstd2, .Lstd2_t, 9,
         "E-trace 4.1.1: jal x5 is a direct call (TYPE 9)")
"   nop\n"
".Lstd2_t: la ra, .Lstd3_t\n"
".Lstd3: jalr ra, 0(ra)\n"
EXPECT_M(ty_std, .Lstd3, .Lstd3_t, 8,
         "E-trace 4.1.1: jalr x1, x1 (rs not x5) is an indirect call (TYPE 8)")
"   nop\n"
".Lstd3_t: la t0, .Lstd4_t\n"
".Lstd4: jalr t0, 0(t0)\n"
EXPECT_M(ty_std, .Lstd4, .Lstd4_t, 8,
         "E-trace 4.1.1: jalr x5, x5 (rs not x1) is an indirect call (TYPE 8)")
"   nop\n"
".Lstd4_t: la ra, .Lstd5_t\n"
".Lstd5: jalr t0, 0(ra)\n"
EXPECT_M(ty_std, .Lstd5, .Lstd5_t, 12,
         "E-trace 4.1.1: jalr x5, x1 is a co-routine swap (TYPE 12)")
"   nop\n"
".Lstd5_t: la t0, .Lstd6_t\n"
".Lstd6: jalr x0, 0(t0)\n"
EXPECT_M(ty_std, .Lstd6, .Lstd6_t, 13,
         "E-trace 4.1.1: jalr x0, x5 is a return (TYPE 13)")
"   nop\n"
".Lstd6_t: la ra, .Lstd7_t\n"
".Lstd7: jalr t2, 0(ra)\n"
EXPECT_M(ty_std, .Lstd7, .Lstd7_t, 13,
         "E-trace 4.1.1: jalr x7, x1 (rd not x1/x5) is a return (TYPE 13)")
"   nop\n"
".Lstd7_t: la t1, .Lstd8_t\n"
".Lstd8: jalr a1, 0(t1)\n"
EXPECT_M(ty_std, .Lstd8, .Lstd8_t, 14,
         "E-trace 4.1.1: jalr x11, x6 is an other indirect jump (TYPE 14)")
"   nop\n"
".Lstd8_t:\n"
".Lstd9: jal a1, .Lstd9_t\n"
EXPECT_M(ty_std, .Lstd9, .Lstd9_t, 15,
         "E-trace 4.1.1: jal x11 is an other direct jump (TYPE 15)")
"   nop\n"
".Lstd9_t:\n"
".Lstd10: unimp\n"
EXPECT_M(ty_std, .Lstd10, ty_exc_h, 1,
         "draft 3.3: an illegal instruction exception is TYPE 1")
".Lstd10_back: li t0, 1\n"
EXPECT_M(ty_std, .Lexc_ret, .Lstd10_back, 3,
         "draft 3.3: a trap return (mret) is TYPE 3, mret -> mepc")
".Lstd11: bgeu t0, zero, .Lstd11_t\n"
EXPECT_M(ty_std, .Lstd11, .Lstd11_t, 5,
         "draft 3.3: a taken branch (bgeu) is TYPE 5")
"   nop\n"
".Lstd11_t:\n"
".Lstd12: blt t0, zero, .Lstd_out\n"
EXPECT_M(ty_std, .Lstd12, .Lstd12_n, 4,
         "draft 3.3, 5.2: a not-taken branch (blt, NTBREN=1) is TYPE 4, "
         "target the next instruction")
".Lstd12_n: nop\n"
".Lstd_out:\n"
SCEN_RETURN
SCEN_TAB_END(ty_std)

/* Compressed forms. */
SCEN_BEGIN(ty_rvc)
"   .option push\n"
"   .option rvc\n"
"   la t1, .Lrvc1_t\n"
".Lrvc1: c.jalr t1\n"
EXPECT_M(ty_rvc, .Lrvc1, .Lrvc1_t, 8,
         "E-trace 4.1.1: c.jalr x6 is an indirect call (TYPE 8)")
"   c.nop\n"
".Lrvc1_t: la ra, .Lrvc2_t\n"
".Lrvc2: c.jalr ra\n"
EXPECT_M(ty_rvc, .Lrvc2, .Lrvc2_t, 8,
         "E-trace 4.1.1: c.jalr x1 (rs1 not x5) is an indirect call (TYPE 8)")
"   c.nop\n"
".Lrvc2_t: la t0, .Lrvc3_t\n"
".Lrvc3: c.jalr t0\n"
EXPECT_M(ty_rvc, .Lrvc3, .Lrvc3_t, 12,
         "E-trace 4.1.1: c.jalr x5 is a co-routine swap (TYPE 12)")
"   c.nop\n"
".Lrvc3_t: la t1, .Lrvc4_t\n"
".Lrvc4: c.jr t1\n"
EXPECT_M(ty_rvc, .Lrvc4, .Lrvc4_t, 10,
         "E-trace 4.1.1: c.jr x6 is an indirect jump (TYPE 10)")
"   c.nop\n"
".Lrvc4_t: la ra, .Lrvc5_t\n"
".Lrvc5: c.jr ra\n"
EXPECT_M(ty_rvc, .Lrvc5, .Lrvc5_t, 13,
         "E-trace 4.1.1: c.jr x1 is a return (TYPE 13)")
"   c.nop\n"
".Lrvc5_t: la t0, .Lrvc6_t\n"
".Lrvc6: c.jr t0\n"
EXPECT_M(ty_rvc, .Lrvc6, .Lrvc6_t, 13,
         "E-trace 4.1.1: c.jr x5 is a return (TYPE 13)")
"   c.nop\n"
".Lrvc6_t:\n"
".Lrvc7: c.j .Lrvc7_t\n"
EXPECT_M(ty_rvc, .Lrvc7, .Lrvc7_t, 11,
         "E-trace 4.1.1: c.j is a direct jump (TYPE 11)")
"   c.nop\n"
".Lrvc7_t:\n"
#if RV_XLEN == 32
".Lrvc8: c.jal .Lrvc8_t\n"
EXPECT_M(ty_rvc, .Lrvc8, .Lrvc8_t, 9,
         "E-trace 4.1.1: c.jal (RV32) is a direct call (TYPE 9)")
"   c.nop\n"
".Lrvc8_t:\n"
#endif
"   c.li a1, 0\n"
".Lrvc9: c.beqz a1, .Lrvc9_t\n"
EXPECT_M(ty_rvc, .Lrvc9, .Lrvc9_t, 5,
         "draft 3.3: a taken c.beqz is TYPE 5")
"   c.nop\n"
".Lrvc9_t:\n"
".Lrvc10: c.bnez a1, .Lrvc_out\n"
EXPECT_M(ty_rvc, .Lrvc10, .Lrvc10_n, 4,
         "draft 3.3, 5.2: a not-taken c.bnez (NTBREN=1) is TYPE 4, "
         "target the next instruction (PC + 2)")
".Lrvc10_n: c.li a1, 1\n"
".Lrvc11: c.bnez a1, .Lrvc11_t\n"
EXPECT_M(ty_rvc, .Lrvc11, .Lrvc11_t, 5,
         "draft 3.3: a taken c.bnez is TYPE 5")
"   c.nop\n"
".Lrvc11_t:\n"
".Lrvc12: c.beqz a1, .Lrvc_out\n"
EXPECT_M(ty_rvc, .Lrvc12, .Lrvc12_n, 4,
         "draft 3.3, 5.2: a not-taken c.beqz (NTBREN=1) is TYPE 4, "
         "target the next instruction (PC + 2)")
".Lrvc12_n: c.nop\n"
".Lrvc_out:\n"
"   .option pop\n"
SCEN_RETURN
SCEN_TAB_END(ty_rvc)

/* A pending machine timer interrupt taken once MIE is set. */
SCEN_BEGIN(ty_intr)
"   csrsi mstatus, 8\n"
"   .globl ty_intr_win\n"
"ty_intr_win: nop\n"
"   nop\n"
"   nop\n"
"   nop\n"
"   .globl ty_intr_win_end\n"
"ty_intr_win_end:\n"
SCEN_RETURN
EXPECT_M(ty_intr, 1, ty_intr_h, 2,
         "draft 3.3: an interrupt (machine timer, M to M) is TYPE 2, "
         "mepc -> mtvec")
EXPECT_M(ty_intr, .Lintr_ret, 1, 3,
         "draft 3.3: the interrupt's mret is TYPE 3, mret -> mepc")
SCEN_TAB_END(ty_intr)
"   .option pop\n");

#define MAX_RECS 24

/* Run a scenario with mctrcontrol = ctl | M and mtvec = handler. */
static void run(void (*fn)(unsigned long), unsigned long long ctl,
                void *handler)
{
    unsigned long saved = csr_read(CSR_MTVEC);

    ctr_prepare(ctl);
    csr_write(CSR_MTVEC, (unsigned long)handler);
    fn((unsigned long)(ctl | CTR_M));
    csr_write(CSR_MTVEC, saved);
}

/* tab without the records of the given type (and with mepc filled in). */
static unsigned filter(struct ctr_rec *out, const struct ctr_rec *tab,
                       unsigned n, unsigned long drop)
{
    unsigned k = 0;

    for (unsigned i = 0; i < n && k < MAX_RECS; i++) {
        if (tab[i].type == drop) {
            continue;
        }
        out[k] = tab[i];
        if (out[k].src == MEPC_MARK) {
            out[k].src = ty_intr_epc;
        }
        if (out[k].tgt == MEPC_MARK) {
            out[k].tgt = ty_intr_epc;
        }
        k++;
    }
    return k;
}

static void check_scen(void (*fn)(unsigned long), const char *what,
                       const struct ctr_rec *tab, unsigned n,
                       unsigned long long ctl, unsigned long drop,
                       const char *rule)
{
    struct ctr_rec exp[MAX_RECS];

    run(fn, ctl, ty_exc_h);
    ctr_check_records(what, exp, filter(exp, tab, n, drop), rule);
}

/* Arm the machine timer (MIE=0) and wait until MTIP is pending. */
static void run_intr(unsigned long long ctl)
{
    unsigned i;

    ty_intr_epc = 0;
    rv_timer_arm(0);
    for (i = 0; i < 1000000 && !(csr_read(CSR_MIP) & (1UL << IRQ_M_TIMER));
         i++) {
    }
    run(ty_intr, ctl, ty_intr_h);
    rv_timer_disarm();
    rv_rule("setup: the timer interrupt is taken in the nop window");
    CHECK(ty_intr_epc >= (unsigned long)ty_intr_win &&
          ty_intr_epc <= (unsigned long)ty_intr_win_end);
}

#define INH(type, bit, what)                                            \
    { type, bit, "draft 5.2: " #bit " (bit 32+TYPE) inhibits exactly " what }
static const struct {
    unsigned type;
    unsigned long long bit;
    const char *rule;
} inhibits[] = {
    INH(1, CTR_EXCINH, "exceptions"),
    INH(3, CTR_TRETINH, "trap returns"),
    INH(5, CTR_TKBRINH, "taken branches"),
    INH(8, CTR_INDCALLINH, "indirect calls"),
    INH(9, CTR_DIRCALLINH, "direct calls"),
    INH(10, CTR_INDJUMPINH, "indirect jumps"),
    INH(11, CTR_DIRJUMPINH, "direct jumps"),
    INH(12, CTR_CORSWAPINH, "co-routine swaps"),
    INH(13, CTR_RETINH, "returns"),
    INH(14, CTR_INDOJMPINH, "other indirect jumps"),
    INH(15, CTR_DIROJMPINH, "other direct jumps"),
};

int main(void)
{
    const unsigned long none = 0;   /* no type is dropped */

    /* Every type with its exact PCs (NTBREN=1: everything recorded). */
    check_scen(ty_all, "ty_all, NTBREN=1", SCEN_TAB(ty_all), CTR_NTBREN,
               none, NULL);
    check_scen(ty_std, "ty_std, NTBREN=1", SCEN_TAB(ty_std), CTR_NTBREN,
               none, NULL);
    check_scen(ty_rvc, "ty_rvc, NTBREN=1", SCEN_TAB(ty_rvc), CTR_NTBREN,
               none, NULL);

    /* Not-taken branches only with NTBREN=1. */
    check_scen(ty_all, "ty_all, NTBREN=0", SCEN_TAB(ty_all), 0,
               CTR_TYPE_NTBR,
               "draft 5.2: not-taken branches are not recorded by default "
               "(NTBREN=0)");
    check_scen(ty_rvc, "ty_rvc, NTBREN=0", SCEN_TAB(ty_rvc), 0,
               CTR_TYPE_NTBR,
               "draft 5.2: not-taken c.beqz/c.bnez are not recorded by "
               "default (NTBREN=0)");

    /* Each inhibit bit 32+TYPE removes exactly its type. */
    for (unsigned i = 0; i < sizeof(inhibits) / sizeof(inhibits[0]); i++) {
        check_scen(ty_all, inhibits[i].rule, SCEN_TAB(ty_all),
                   CTR_NTBREN | inhibits[i].bit, inhibits[i].type,
                   inhibits[i].rule);
        CHECK_EQ(inhibits[i].bit, CTR_TYPE_BIT(inhibits[i].type));
    }

    /* Interrupts: recorded by default, INTRINH drops exactly them. */
    struct ctr_rec exp[MAX_RECS];
    static const struct {
        unsigned long long ctl;
        unsigned long drop;
        const char *rule;
    } intr_runs[] = {
        { 0, 0, NULL },
        { CTR_INTRINH, CTR_TYPE_INTR,
          "draft 5.2: INTRINH (bit 34) inhibits exactly interrupts" },
        { CTR_TRETINH, CTR_TYPE_TRET,
          "draft 5.2: TRETINH (bit 35) inhibits the interrupt's mret" },
        { CTR_EXCINH, 0,
          "draft 5.2: EXCINH (bit 33) does not inhibit interrupts" },
    };
    for (unsigned i = 0; i < sizeof(intr_runs) / sizeof(intr_runs[0]); i++) {
        run_intr(intr_runs[i].ctl);
        ctr_check_records(intr_runs[i].rule ? intr_runs[i].rule : "ty_intr",
                          exp, filter(exp, SCEN_TAB(ty_intr),
                                      intr_runs[i].drop),
                          intr_runs[i].rule);
    }
    ctr_reset();
    return 0;
}

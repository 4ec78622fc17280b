/*
 * CTR v0.1.4 draft: privilege mode transitions (section 5.1 and its
 * table in 5.2.1) and external traps (5.2.1), between U, S and M.
 *
 * Two hand-written scenarios make every trap and trap return between the
 * three modes with known PCs; they run under every combination of the
 * M/S/U enables and of ETEN, MTE, STE (plus EXCINH, INTRINH, TRETINH),
 * and the array must hold what the draft's table says:
 *   trap, both modes enabled:           recorded
 *   trap, disabled -> enabled:          recorded, source PC 0
 *   trap, enabled -> disabled:          recorded only if ETEN=1 and the
 *                                       target mode's xTE=1 (MTE, STE),
 *                                       target PC 0, whatever EXCINH and
 *                                       INTRINH say
 *   trap return, both enabled:          recorded
 *   trap return, enabled -> disabled:   recorded, target PC 0
 *   trap return from a disabled mode:   not recorded
 * and the type inhibits apply to the other, non-external, records.
 * Without H there is one control register, mctrcontrol, for every mode.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_rec.h"

#define MODE_X 7        /* in a table: the lower mode pv_intr enters */

unsigned long pv_intr_epc, pv_intr_cause;

SCEN_DECL(pv_tour);
void pv_intr(unsigned long ctl, unsigned long mpp);
extern const struct ctr_rec pv_intr_tab[], pv_intr_tab_end[];

asm(
"   .option push\n"
"   .option norvc\n"
"   .option norelax\n"
"   .text\n"
/* M handlers of the tour: skip the instruction, chain mtvec, mret. */
"   .balign 4\n"
"pv_mh1:\n"
"   csrr t3, mepc\n"
"   addi t3, t3, 4\n"
"   csrw mepc, t3\n"
"   la t3, pv_mh2\n"
"   csrw mtvec, t3\n"
".Lmh1_ret: mret\n"
"   .balign 4\n"
"pv_mh2:\n"
"   csrr t3, mepc\n"
"   addi t3, t3, 4\n"
"   csrw mepc, t3\n"
"   la t3, pv_mh3\n"
"   csrw mtvec, t3\n"
".Lmh2_ret: mret\n"
/* The last trap of the tour: back to C in M mode. */
"   .balign 4\n"
"pv_mh3:\n"
SCEN_RETURN
/* S handler (ecall from U, delegated): skip it, sret. */
"   .balign 4\n"
"   .globl pv_sh\n"
"pv_sh:\n"
"   csrr t3, sepc\n"
"   addi t3, t3, 4\n"
"   csrw sepc, t3\n"
".Lsh_ret: sret\n"

/* M -> S -> M -> S -> U -> S -> U -> M -> U -> M */
SCEN_BEGIN(pv_tour)
"   la t3, pv_mh1\n"
"   csrw mtvec, t3\n"
"   la t3, pv_sh\n"
"   csrw stvec, t3\n"
"   li t3, 0x1800\n"
"   csrc mstatus, t3\n"
"   li t3, 0x800\n"             /* MPP = S */
"   csrs mstatus, t3\n"
"   la t3, .Ls_entry\n"
"   csrw mepc, t3\n"
".Ltour_mret: mret\n"
EXPECT(pv_tour, .Ltour_mret, .Ls_entry, 3, 3, 1, "")
".Ls_entry:\n"
".Ls_ecall: ecall\n"
EXPECT(pv_tour, .Ls_ecall, pv_mh1, 1, 1, 3, "")
EXPECT(pv_tour, .Lmh1_ret, .Ls_back, 3, 3, 1, "")
".Ls_back: la t3, .Lu_entry\n"
"   csrw sepc, t3\n"
"   li t3, 0x100\n"             /* SPP = U */
"   csrc sstatus, t3\n"
".Ls_sret: sret\n"
EXPECT(pv_tour, .Ls_sret, .Lu_entry, 3, 1, 0, "")
".Lu_entry:\n"
".Lu_ecall: ecall\n"
EXPECT(pv_tour, .Lu_ecall, pv_sh, 1, 0, 1, "")
EXPECT(pv_tour, .Lsh_ret, .Lu_back1, 3, 1, 0, "")
".Lu_back1:\n"
".Lu_ill1: unimp\n"
EXPECT(pv_tour, .Lu_ill1, pv_mh2, 1, 0, 3, "")
EXPECT(pv_tour, .Lmh2_ret, .Lu_back2, 3, 3, 0, "")
".Lu_back2:\n"
".Lu_ill2: unimp\n"
EXPECT(pv_tour, .Lu_ill2, pv_mh3, 1, 0, 3, "")
"1: j 1b\n"
SCEN_TAB_END(pv_tour)

/* M handler of the interrupt: save mepc and mcause, MTIE off, to C. */
"   .balign 4\n"
"pv_mhi:\n"
"   csrr t3, mepc\n"
"   la t4, pv_intr_epc\n"
"   " SREG " t3, 0(t4)\n"
"   csrr t3, mcause\n"
"   la t4, pv_intr_cause\n"
"   " SREG " t3, 0(t4)\n"
"   li t3, 0x80\n"
"   csrc mie, t3\n"
SCEN_RETURN

/* mret to the mode in a1 with the machine timer interrupt pending. */
SCEN_BEGIN(pv_intr)
"   la t3, pv_mhi\n"
"   csrw mtvec, t3\n"
"   li t3, 0x1800\n"
"   csrc mstatus, t3\n"
"   slli t3, a1, 11\n"
"   csrs mstatus, t3\n"
"   la t3, .Li_entry\n"
"   csrw mepc, t3\n"
".Li_mret: mret\n"
EXPECT(pv_intr, .Li_mret, .Li_entry, 3, 3, 7, "")   /* 7: MODE_X */
".Li_entry: nop\n"
"   nop\n"
"   nop\n"
"   nop\n"
EXPECT(pv_intr, 1, pv_mhi, 2, 7, 3, "")
"   ecall\n"                    /* no interrupt: pv_intr_cause says so */
SCEN_TAB_END(pv_intr)
"   .option pop\n");

static const char *const R_TRAP_BOTH =
    "draft 5.1: traps between enabled modes are recorded as normal";
static const char *const R_TRET_BOTH =
    "draft 5.1: trap returns between enabled modes are recorded as normal";
static const char *const R_TRAP_IN =
    "draft 5.1: a trap from a disabled mode to an enabled mode is "
    "recorded with source PC 0";
static const char *const R_TRET_OUT =
    "draft 5.1: a trap return from an enabled mode to a disabled mode is "
    "recorded with target PC 0";
static const char *const R_TRET_IN =
    "draft 5.1: a trap return from a disabled mode is not recorded";
static const char *const R_EXT =
    "draft 5.2.1: an external trap (enabled -> disabled) is recorded only "
    "if ETEN=1 and the target mode's xTE=1, with target PC 0";
static const char *const R_EXT_INH =
    "draft 5.2.1: external trap recording does not depend on "
    "EXCINH/INTRINH";
static const char *const R_NONE =
    "draft 5.1 table: a transfer between disabled modes is not recorded";
static const char *const R_INH =
    "draft 5.2.1 table: transfer type inhibits also apply";

static bool enabled(unsigned long long ctl, unsigned long mode)
{
    return ctl & (mode == RV_MODE_M ? CTR_M :
                  mode == RV_MODE_S ? CTR_S : CTR_U);
}

/*
 * The draft's table: fill *r (a copy of transfer t) with what is
 * recorded, set its rule, and say whether anything is.
 */
static bool model(struct ctr_rec *r, const struct ctr_rec *t,
                  unsigned long long ctl)
{
    bool src_on = enabled(ctl, t->from), tgt_on = enabled(ctl, t->to);
    bool trap = t->type != CTR_TYPE_TRET;
    bool inhibited = ctl & CTR_TYPE_BIT(t->type);

    *r = *t;
    if (!src_on && !tgt_on) {
        r->rule = R_NONE;
        return false;
    }
    if (trap && src_on && !tgt_on) {
        unsigned long long xte = t->to == RV_MODE_M ? CTR_MTE : CTR_STE;

        r->rule = inhibited ? R_EXT_INH : R_EXT;
        r->tgt = 0;
        return (ctl & CTR_ETEN) && (ctl & xte);
    }
    if (!trap && !src_on) {
        r->rule = R_TRET_IN;
        return false;
    }
    if (trap) {
        r->rule = src_on ? R_TRAP_BOTH : R_TRAP_IN;
        r->src = src_on ? r->src : 0;
    } else {
        r->rule = tgt_on ? R_TRET_BOTH : R_TRET_OUT;
        r->tgt = tgt_on ? r->tgt : 0;
    }
    if (inhibited) {
        r->rule = R_INH;
        return false;
    }
    return true;
}

static const char *const mode_names[] = { "U", "S", "?", "M" };

/* "scenario: M S U ETEN ..." with the bits of ctl that are set. */
static void describe(char *p, const char *scen, unsigned long long ctl)
{
    static const struct {
        unsigned long long bit;
        const char *name;
    } bits[] = {
        { CTR_M, " M" }, { CTR_S, " S" }, { CTR_U, " U" },
        { CTR_ETEN, " ETEN" }, { CTR_MTE, " MTE" }, { CTR_STE, " STE" },
        { CTR_EXCINH, " EXCINH" }, { CTR_INTRINH, " INTRINH" },
        { CTR_TRETINH, " TRETINH" },
    };

    while (*scen) {
        *p++ = *scen++;
    }
    *p++ = ':';
    for (unsigned i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
        for (const char *s = bits[i].name; (ctl & bits[i].bit) && *s; s++) {
            *p++ = *s;
        }
    }
    *p = 0;
}

/* Expected records of a scenario's table under ctl; explain on failure. */
static void check_run(const char *scen, const struct ctr_rec *tab,
                      unsigned n, unsigned long long ctl)
{
    struct ctr_rec exp[16], r;
    unsigned k = 0;
    char what[96];

    for (unsigned i = 0; i < n; i++) {
        if (model(&r, &tab[i], ctl) && k < 16) {
            exp[k++] = r;
        }
    }
    describe(what, scen, ctl);
    if (ctr_check_records(what, exp, k, NULL)) {
        return;
    }
    rv_printf("  the transfers, as the draft's table has them:\n");
    for (unsigned i = 0; i < n; i++) {
        bool rec = model(&r, &tab[i], ctl);

        rv_printf("    %s %s->%s: %s: %s\n",
                  r.type == CTR_TYPE_TRET ? "xret" :
                  r.type == CTR_TYPE_INTR ? "intr" : "exc ",
                  mode_names[r.from], mode_names[r.to],
                  rec ? "recorded" : "not recorded", r.rule);
    }
}

/* Every combination of the mode enables with each of these. */
static const unsigned long long filters[] = {
    0,
    CTR_ETEN,
    CTR_ETEN | CTR_MTE,
    CTR_ETEN | CTR_STE,
    CTR_ETEN | CTR_MTE | CTR_STE,
    CTR_MTE | CTR_STE,
    CTR_ETEN | CTR_MTE | CTR_STE | CTR_EXCINH | CTR_INTRINH,
    CTR_EXCINH | CTR_INTRINH,
    CTR_TRETINH,
};

static void run_tour(unsigned long long ctl)
{
    unsigned long mtvec = csr_read(CSR_MTVEC), stvec = csr_read(CSR_STVEC);
    unsigned long medeleg = csr_read(CSR_MEDELEG);

    ctr_prepare(ctl);
    csr_write(CSR_MEDELEG, 1UL << CAUSE_ECALL_U);
    pv_tour((unsigned long)ctl);
    csr_write(CSR_MTVEC, mtvec);
    csr_write(CSR_STVEC, stvec);
    csr_write(CSR_MEDELEG, medeleg);
    check_run("U/S/M tour", SCEN_TAB(pv_tour), ctl);
}

static void run_intr(unsigned long long ctl, unsigned long mode)
{
    unsigned long mtvec = csr_read(CSR_MTVEC);
    struct ctr_rec tab[2];
    unsigned n = pv_intr_tab_end - pv_intr_tab;

    memcpy(tab, pv_intr_tab, sizeof(tab));
    ctr_prepare(ctl);
    pv_intr_epc = pv_intr_cause = 0;
    rv_timer_arm(0);
    for (unsigned i = 0; i < 1000000 &&
         !(csr_read(CSR_MIP) & (1UL << IRQ_M_TIMER)); i++) {
    }
    pv_intr((unsigned long)ctl, mode);
    rv_timer_disarm();
    csr_write(CSR_MTVEC, mtvec);
    rv_rule("setup: the timer interrupt is taken in the lower mode");
    CHECK_EQ(n, 2);
    n = n > 2 ? 2 : n;
    CHECK_EQ(pv_intr_cause, CAUSE_IRQ_FLAG | IRQ_M_TIMER);
    for (unsigned i = 0; i < n; i++) {
        tab[i].src = tab[i].src == MEPC_MARK ? pv_intr_epc : tab[i].src;
        tab[i].from = tab[i].from == MODE_X ? mode : tab[i].from;
        tab[i].to = tab[i].to == MODE_X ? mode : tab[i].to;
    }
    check_run(mode == RV_MODE_S ? "timer interrupt S->M" :
              "timer interrupt U->M", tab, n, ctl);
}

int main(void)
{
    for (unsigned f = 0; f < sizeof(filters) / sizeof(filters[0]); f++) {
        for (unsigned en = 0; en < 8; en++) {
            unsigned long long ctl = filters[f] |
                ((en & 1) ? CTR_U : 0) | ((en & 2) ? CTR_S : 0) |
                ((en & 4) ? CTR_M : 0);

            run_tour(ctl);
            run_intr(ctl, RV_MODE_U);
            run_intr(ctl, RV_MODE_S);
        }
    }
    ctr_reset();
    return 0;
}

/*
 * CTR v0.1.4 draft: who may access the CTR CSRs, and with which exception.
 *   2.2, 2.3, 2.6: sctrcontrol(h) 0x181/0x182, sctrstatus 0x183 (S-level),
 *     vsctrcontrol(h) 0x281/0x282 (H-level), mctrcontrol(h) 0x381/0x382,
 *     mctrstatus 0x383 (M-level);
 *   chapter 3: entries through miselect/siselect/vsiselect 0x200..0x2FF;
 *   chapter 4: mstateen0.CTR and hstateen0.CTR (bit 55); transfers still
 *     recorded while they are 0;
 *   privileged spec (H extension): illegal vs virtual instruction.
 * The same ELF runs with and without the extension; which one is decided
 * from the riscv,isa string of the device tree (smctr/ssctr, smstateen):
 *   ctr=on,h=on,smstateen=on    the full matrix;
 *   h=on                        every CTR CSR illegal in every mode.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_h_util.h"

#define NONE    RV_NO_TRAP
#define ILL     CAUSE_ILLEGAL_INSN
#define VIRT    CAUSE_VIRTUAL_INSN

enum kind {
    K_SCTR,     /* supervisor CTR state: sctrcontrol(h), sctrstatus */
    K_HCTR,     /* vsctrcontrol(h): a hypervisor CSR */
    K_MCTR,     /* mctrcontrol(h), mctrstatus */
    K_SIREG,    /* sireg* with siselect (vsiselect when V=1) = 0x200 */
    K_VSIREG,   /* vsireg* with vsiselect = 0x200 */
    K_MIREG,    /* mireg* with miselect = 0x200 */
    K_SISEL,    /* siselect itself: not CTR state */
};

static const struct access {
    unsigned csr;
    enum kind kind;
    bool rv32_only;
    const char *name;
} accesses[] = {
    { 0x181, K_SCTR, false, "sctrcontrol" },
    { 0x182, K_SCTR, true, "sctrcontrolh" },
    { 0x183, K_SCTR, false, "sctrstatus" },
    { 0x281, K_HCTR, false, "vsctrcontrol" },
    { 0x282, K_HCTR, true, "vsctrcontrolh" },
    { 0x381, K_MCTR, false, "mctrcontrol" },
    { 0x382, K_MCTR, true, "mctrcontrolh" },
    { 0x383, K_MCTR, false, "mctrstatus" },
    { 0x150, K_SISEL, false, "siselect" },
    { 0x151, K_SIREG, false, "sireg" },
    { 0x152, K_SIREG, false, "sireg2" },
    { 0x153, K_SIREG, false, "sireg3" },
    { 0x155, K_SIREG, false, "sireg4" },
    { 0x156, K_SIREG, false, "sireg5" },
    { 0x157, K_SIREG, false, "sireg6" },
    { 0x251, K_VSIREG, false, "vsireg" },
    { 0x252, K_VSIREG, false, "vsireg2" },
    { 0x253, K_VSIREG, false, "vsireg3" },
    { 0x255, K_VSIREG, false, "vsireg4" },
    { 0x256, K_VSIREG, false, "vsireg5" },
    { 0x257, K_VSIREG, false, "vsireg6" },
    { 0x351, K_MIREG, false, "mireg" },
    { 0x352, K_MIREG, false, "mireg2" },
    { 0x353, K_MIREG, false, "mireg3" },
    { 0x355, K_MIREG, false, "mireg4" },
    { 0x356, K_MIREG, false, "mireg5" },
    { 0x357, K_MIREG, false, "mireg6" },
};

static bool has_ctr, has_stateen, has_csrind;
/* mstateen0.CTR, hstateen0.CTR (both 1 in effect without Smstateen). */
static bool m_ctr = true, h_ctr = true;
/* Whether siselect is usable below M (Smstateen's SVSLCT bit stuck). */
static bool svslct_ok = true;

/* The exception an access from mode raises, or NONE. */
static unsigned long expected(enum rv_mode mode, enum kind kind)
{
    if (!has_ctr) {
        return ILL;             /* no such CSRs, no such miselect values */
    }
    if (mode == RV_MODE_M) {
        return NONE;            /* mstateen0 does not restrict M-mode */
    }
    if (kind == K_MCTR || kind == K_MIREG || mode == RV_MODE_U) {
        return ILL;             /* M-level CSRs; U has no S/H CSRs */
    }
    if (!m_ctr && kind != K_SISEL) {
        return ILL;             /* chapter 4, paragraph 1 */
    }
    if (mode == RV_MODE_S) {
        return NONE;
    }
    if (mode == RV_MODE_VU) {
        return VIRT;            /* S and H CSRs from VU, allowed in HS */
    }
    /* VS */
    if (kind == K_HCTR || kind == K_VSIREG) {
        return VIRT;            /* H-level CSRs from VS */
    }
    if (kind == K_SISEL) {
        return NONE;
    }
    return h_ctr ? NONE : VIRT; /* chapter 4, paragraph 3 */
}

static bool skipped(const struct access *a, enum rv_mode mode)
{
    if (a->rv32_only && RV_XLEN != 32) {
        return true;
    }
    if (a->kind == K_SISEL && !has_ctr) {
        return true;            /* Smcsrind, not CTR, decides */
    }
    if (!svslct_ok && mode != RV_MODE_M &&
        (a->kind == K_SISEL || a->kind == K_SIREG || a->kind == K_VSIREG)) {
        return true;            /* reported by stateen_set() */
    }
    /* Without CTR but with Sscsrind, V=1 sireg* at 0x200 is not pinned. */
    return !has_ctr && has_csrind && mode >= RV_MODE_VU &&
           (a->kind == K_SIREG || a->kind == K_VSIREG);
}

/* Read (csrrs rd, csr, x0) or write (csrrw x0, csr, rs) one CSR. */
static unsigned long try_access(const struct access *a, bool write)
{
    rv_trap_expect();
    if (write) {
        /* siselect keeps 0x200; the others get 0 (recording stays off) */
        rv_csr_write_num(a->csr, a->kind == K_SISEL ? 0x200 : 0);
    } else {
        rv_csr_read_num(a->csr);
    }
    return rv_trap_cause();
}

/* Every access from the mode the function runs in. */
static unsigned long access_all(unsigned long unused)
{
    enum rv_mode mode = rv_current_mode;
    unsigned i, w;

    (void)unused;
    for (i = 0; i < sizeof(accesses) / sizeof(accesses[0]); i++) {
        const struct access *a = &accesses[i];

        if (skipped(a, mode)) {
            continue;
        }
        for (w = 0; w < 2; w++) {
            unsigned long got = try_access(a, w);
            unsigned long want = expected(mode, a->kind);

            if (got != want) {
                rv_printf("  %s-mode %s of %s (0x%x), mstateen0.CTR=%u "
                          "hstateen0.CTR=%u:\n", rv_mode_name(mode),
                          w ? "write" : "read", a->name, a->csr, m_ctr, h_ctr);
            }
            CHECK_EQ(got, want);
        }
    }
    return 0;
}

/* From M: miselect, siselect and vsiselect at CTR entry 0. */
static void select_entry0(void)
{
    static const unsigned selects[] = {
        CSR_MISELECT, CSR_SISELECT, CSR_VSISELECT
    };
    unsigned i;

    for (i = 0; i < 3; i++) {
        rv_trap_expect();
        rv_csr_write_num(selects[i], 0x200);
        if (has_ctr) {
            CHECK_EQ(rv_trap_cause(), NONE);
        } else {
            rv_trap_cause();    /* without Smcsrind they do not exist */
        }
    }
}

static void access_from_all_modes(void)
{
    static const enum rv_mode modes[] = {
        RV_MODE_M, RV_MODE_S, RV_MODE_U, RV_MODE_VS, RV_MODE_VU
    };
    unsigned i;

    for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        select_entry0();
        rv_run_in_mode(modes[i], access_all, 0);
    }
}

static void test_stateen_matrix(void)
{
    static const struct {
        bool m, h;
        const char *rule;
    } cfgs[] = {
        { true, true, "draft 4: mstateen0.CTR=1, hstateen0.CTR=1: "
          "standard privilege rules" },
        { true, false, "draft 4: mstateen0.CTR=1, hstateen0.CTR=0: VS-mode "
          "accesses to supervisor CTR state raise virtual instruction" },
        { false, true, "draft 4: mstateen0.CTR=0: accesses from below M "
          "raise illegal instruction" },
        { false, false, "draft 4: mstateen0.CTR=0, hstateen0.CTR=0: "
          "accesses from below M raise illegal instruction" },
    };
    unsigned i;

    for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
        rv_rule(cfgs[i].rule);
        m_ctr = cfgs[i].m;
        h_ctr = cfgs[i].h;
        stateen_set(m_ctr, h_ctr);
        access_from_all_modes();
    }
    m_ctr = h_ctr = true;
    stateen_set(true, true);
}

/* ctrh_jfn run in mode with recording enabled there only: 3 records. */
static void check_recorded(enum rv_mode mode, bool m, bool h)
{
    ctr_reset();
    WRITE_VSCTR(0);
    stateen_set(m, h);
    if (mode == RV_MODE_U) {
        ctr_write_mctrcontrol(CTR_U);
    } else {
        WRITE_VSCTR(mode == RV_MODE_VS ? CTR_S : CTR_U);
    }
    rv_run_in_mode(mode, ctrh_jfn, 0);
    ctr_write_mctrcontrol(0);
    WRITE_VSCTR(0);
    stateen_set(true, true);
    check_jfn_records();
}

static void test_recording_while_disabled(void)
{
    rv_rule("draft 4: with mstateen0.CTR=0, transfers below M still update "
            "the entries and mctrstatus");
    check_recorded(RV_MODE_U, false, true);
    check_recorded(RV_MODE_VS, false, false);
    rv_rule("draft 4: with hstateen0.CTR=0, transfers while V=1 still update "
            "the entries and mctrstatus");
    check_recorded(RV_MODE_VU, true, false);
    check_recorded(RV_MODE_VS, true, false);
}

int main(void)
{
    if (!rv_has_ext('H')) {
        rv_printf("FAIL ctr_access needs -cpu ...,h=on\n");
        return 1;
    }
    /* the ratified CTR, or the draft under its own names */
    has_ctr = rv_isa_has("smctr") || rv_isa_has("ssctr") ||
              rv_isa_has("xsmctrdraft");
    has_stateen = rv_isa_has("smstateen");
    has_csrind = rv_isa_has("sscsrind");
    rv_printf("CTR %s, Smstateen %s\n", has_ctr ? "on" : "off",
              has_stateen ? "on" : "off");
    CHECK_EQ(stateen_present(), has_stateen);

    if (!has_ctr) {
        rv_rule("draft 2.6/3: without CTR every CTR CSR is illegal, and "
                "*ireg* at *iselect 0x200 too");
        access_from_all_modes();
        return 0;
    }
    if (!has_stateen) {
        rv_rule("draft 2.2/2.3/3 and the privileged spec: CSR privilege "
                "levels (no Smstateen)");
        access_from_all_modes();
        return 0;
    }
    rv_rule("Smstateen: CTR (55) and SVSLCT (60) of mstateen0/hstateen0 "
            "writable");
    svslct_ok = stateen_set(true, true);
    if (!CHECK(svslct_ok)) {
        rv_printf("  SVSLCT stuck at 0: siselect/sireg*/vsireg* checks "
                  "below M skipped\n");
    }
    test_stateen_matrix();
    test_recording_while_disabled();
    return 0;
}

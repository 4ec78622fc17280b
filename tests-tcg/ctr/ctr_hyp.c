/*
 * CTR v0.1.4 draft with the H extension: vsctrcontrol is the active
 * control register while V=1.
 *   chapter 2 (intro), 2.2, 2.3: vsctrcontrol, VS-mode sctrcontrol
 *     accesses redirected to it, DEPTH read-only copy, CLR only when V=1;
 *   chapter 3: vsireg* see the same entries as mireg* and sireg*;
 *   5.1 / 5.2.1: which modes are enabled, external traps VU -> VS (VSTE)
 *     and VU -> HS (STE), target PC 0.
 * cpu: ctr=on,h=on (smstateen=on optional: the test then sets the CTR
 * and SVSLCT bits of mstateen0/hstateen0).  Helpers: ctr_h_util.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_h_util.h"

#define CAUSE_BIT(c)    (1UL << (c))
#define HSTATUS_SPV     (1UL << 7)

/* ctrh_bkfn: ebreak (4 bytes), then ret. */
asm(".pushsection .text\n"
    ".balign 4\n"
    ".globl ctrh_bkfn\n"
    "ctrh_bkfn:\n"
    ".option push\n"
    ".option norvc\n"
    "    ebreak\n"
    ".option pop\n"
    ".globl ctrh_bkfn_ret\n"
    "ctrh_bkfn_ret:\n"
    "    ret\n"
    ".popsection\n");
unsigned long ctrh_bkfn(unsigned long);
extern char ctrh_bkfn_ret[];

/*
 * A minimal HS trap handler for synchronous traps from V=1 (the library's
 * HS handler reads misa, which HS-mode cannot): saves scause, sepc and
 * hstatus in ctrh_hs_seen[] and resumes after the 4-byte instruction.  It
 * makes no control transfer besides its sret.
 */
#if RV_XLEN == 64
#define SREG "sd"
#define LREG "ld"
#define RB "8"
#else
#define SREG "sw"
#define LREG "lw"
#define RB "4"
#endif
asm(".pushsection .text\n"
    ".balign 4\n"
    ".globl ctrh_hs_handler\n"
    "ctrh_hs_handler:\n"
    "    csrrw t0, sscratch, t0\n"
    "    " SREG " t1, -" RB "(t0)\n"
    "    " SREG " t2, -2*" RB "(t0)\n"
    "    la t1, ctrh_hs_seen\n"
    "    csrr t2, scause\n"
    "    " SREG " t2, 0(t1)\n"
    "    csrr t2, sepc\n"
    "    " SREG " t2, " RB "(t1)\n"
    "    addi t2, t2, 4\n"
    "    csrw sepc, t2\n"
    "    csrr t2, 0x600\n"
    "    " SREG " t2, 2*" RB "(t1)\n"
    "    " LREG " t2, -2*" RB "(t0)\n"
    "    " LREG " t1, -" RB "(t0)\n"
    "    csrrw t0, sscratch, t0\n"
    "    sret\n"
    ".popsection\n");
extern char ctrh_hs_handler[], rv_trap_entry_hs[];
volatile unsigned long ctrh_hs_seen[3];    /* scause, sepc, hstatus */
extern char rv_hs_to_virt[];

/* From M: recording off everywhere, array cleared, depth 16. */
static void reset_all(void)
{
    ctr_reset();
    WRITE_VSCTR(0);
    csr_write(CSR_MEDELEG, 0);
    csr_write(CSR_HEDELEG, 0);
}

static void test_active_control(void)
{
    struct ctr_entry e;

    rv_rule("draft 2.3: vsctrcontrol.VS enables recording in VS-mode");
    reset_all();
    WRITE_VSCTR(CTR_S);
    rv_run_in_mode(RV_MODE_VS, ctrh_jfn, 0);
    check_jfn_records();

    rv_rule("draft 2.3: vsctrcontrol.VU enables recording in VU-mode");
    reset_all();
    WRITE_VSCTR(CTR_U);
    rv_run_in_mode(RV_MODE_VU, ctrh_jfn, 0);
    check_jfn_records();

    rv_rule("draft 2.3: vsctrcontrol.VS does not enable VU, nor VU VS");
    reset_all();
    WRITE_VSCTR(CTR_S);
    rv_run_in_mode(RV_MODE_VU, ctrh_jfn, 0);
    check_no_records();
    reset_all();
    WRITE_VSCTR(CTR_U);
    rv_run_in_mode(RV_MODE_VS, ctrh_jfn, 0);
    check_no_records();

    rv_rule("draft 2: mctrcontrol.U does not enable recording in VU-mode");
    reset_all();
    ctr_write_mctrcontrol(CTR_U);
    rv_run_in_mode(RV_MODE_VU, ctrh_jfn, 0);
    check_no_records();

    /*
     * HS enabled, VS not: of the whole round trip only the sret from HS
     * into VS is recorded (5.1: trap return from an enabled to a disabled
     * mode, target PC 0); nothing done in VS is.
     */
    rv_rule("draft 2: mctrcontrol.S does not enable recording in VS-mode");
    reset_all();
    ctr_write_mctrcontrol(CTR_S);
    rv_run_in_mode(RV_MODE_VS, ctrh_jfn, 0);
    ctr_write_mctrcontrol(0);
    CHECK_EQ(records(), 1);
    e = ctr_read_entry(0);
    CHECK((e.source & ~1UL) >= (unsigned long)rv_hs_to_virt &&
          (e.source & ~1UL) < (unsigned long)rv_hs_to_virt + 64);
    CHECK_EQ(*(volatile uint32_t *)(e.source & ~1UL), 0x10200073); /* sret */
    rv_rule("draft 5.1: trap return HS (enabled) -> VS (disabled): target 0");
    CHECK_EQ(e.source & CTRSOURCE_V, 1);
    CHECK_EQ(e.target, 0);
    CHECK_EQ(e.data & CTRDATA_TYPE, CTR_TYPE_TRET);
}

/* VS/HS side of the sctrcontrol redirection test. */
static volatile unsigned long long seen_sctr, seen_vsctr;

static unsigned long vs_swap_sctr(unsigned long value)
{
    seen_sctr = READ_SCTR();
    WRITE_SCTR((unsigned long long)value | CTR_ETEN | CTR_INDJUMPINH);
    return 0;
}

static volatile unsigned long long hs_value;

static unsigned long hs_access(unsigned long unused)
{
    (void)unused;
    seen_sctr = READ_SCTR();
    seen_vsctr = READ_VSCTR();
    WRITE_SCTR(hs_value);
    return 0;
}

static void test_redirect(void)
{
    const unsigned long long mval = CTR_RASEMU | CTR_EXCINH | CTR_DEPTH(1);
    const unsigned long long vsval = CTR_BPFRZ | CTR_TKBRINH | CTR_RETINH;
    /* the VS write: M and MTE (read-only 0 in sctrcontrol), DEPTH 0 */
    const unsigned long low = CTR_M | CTR_MTE | CTR_STE | CTR_LCOFIFRZ |
                              CTR_DEPTH(0);

    rv_rule("draft 2.2/2.3: VS-mode reads of sctrcontrol return vsctrcontrol");
    reset_all();
    ctr_write_mctrcontrol(mval);
    WRITE_VSCTR(vsval);
    rv_run_in_mode(RV_MODE_VS, vs_swap_sctr, low);
    CHECK_EQ(seen_sctr, vsval | CTR_DEPTH(1));

    rv_rule("draft 2.2/2.3: VS-mode writes of sctrcontrol go to vsctrcontrol");
    CHECK_EQ(READ_VSCTR(), CTR_STE | CTR_LCOFIFRZ | CTR_ETEN | CTR_INDJUMPINH |
                           CTR_DEPTH(1));
    CHECK_EQ(ctr_read_mctrcontrol(), mval);

    rv_rule("draft 2.3: vsctrcontrol.DEPTH is a read-only copy of mctrcontrol.DEPTH");
    ctr_write_mctrcontrol(CTR_DEPTH(3));
    WRITE_VSCTR(CTR_DEPTH(0));
    CHECK_EQ(READ_VSCTR() & CTR_DEPTH_MASK, CTR_DEPTH(3));
    ctr_write_mctrcontrol(CTR_DEPTH(0));
    WRITE_VSCTR(CTR_DEPTH(0xf));
    CHECK_EQ(READ_VSCTR() & CTR_DEPTH_MASK, CTR_DEPTH(0));
    CHECK_EQ(ctr_read_mctrcontrol() & CTR_DEPTH_MASK, CTR_DEPTH(0));

    rv_rule("draft 2.2: HS-mode sctrcontrol is mctrcontrol, vsctrcontrol its own");
    ctr_write_mctrcontrol(mval);
    WRITE_VSCTR(vsval);
    hs_value = CTR_NTBREN | CTR_DEPTH(7);
    rv_run_in_mode(RV_MODE_S, hs_access, 0);
    CHECK_EQ(seen_sctr, mval);
    CHECK_EQ(seen_vsctr, vsval | CTR_DEPTH(1));
    CHECK_EQ(ctr_read_mctrcontrol(), CTR_NTBREN | CTR_DEPTH(7));
    CHECK_EQ(READ_VSCTR(), vsval | CTR_DEPTH(7));
    reset_all();
}

/*
 * ebreak in VU: with the trap delegated to VS (medeleg + hedeleg; the
 * library's VS handler) or to HS (medeleg only; ctrh_hs_handler).
 * Checks the trap.
 */
static void run_vu_ebreak(bool to_vs)
{
    csr_write(CSR_MEDELEG, CAUSE_BIT(CAUSE_BREAKPOINT));
    if (to_vs) {
        csr_write(CSR_HEDELEG, CAUSE_BIT(CAUSE_BREAKPOINT));
        rv_trap_expect();
        rv_run_in_mode(RV_MODE_VU, ctrh_bkfn, 0);
        CHECK_EQ(rv_trap_cause(), CAUSE_BREAKPOINT);
        CHECK_EQ(rv_last_trap.to, RV_MODE_VS);
        CHECK_EQ(rv_last_trap.epc, (unsigned long)ctrh_bkfn);
    } else {
        csr_write(CSR_HEDELEG, 0);
        csr_write(CSR_STVEC, (unsigned long)ctrh_hs_handler);
        memset((void *)ctrh_hs_seen, 0, sizeof(ctrh_hs_seen));
        rv_run_in_mode(RV_MODE_VU, ctrh_bkfn, 0);
        csr_write(CSR_STVEC, (unsigned long)rv_trap_entry_hs);
        CHECK_EQ(ctrh_hs_seen[0], CAUSE_BREAKPOINT);
        CHECK_EQ(ctrh_hs_seen[1], (unsigned long)ctrh_bkfn);
        CHECK_EQ(ctrh_hs_seen[2] & HSTATUS_SPV, HSTATUS_SPV);
    }
    csr_write(CSR_MEDELEG, 0);
    csr_write(CSR_HEDELEG, 0);
}

/*
 * VU round trip through ctrh_bkfn, VU enabled in vsctrcontrol: the call,
 * the ebreak trap if recorded (an external trap: target PC 0), the ret.
 */
static void check_ext_trap(bool recorded)
{
    struct ctr_entry call = ctr_read_entry(recorded ? 2 : 1);
    struct ctr_entry trap = ctr_read_entry(1);
    struct ctr_entry ret = ctr_read_entry(0);

    CHECK_EQ(records(), recorded ? 3 : 2);
    CHECK_EQ(call.target, (unsigned long)ctrh_bkfn);
    CHECK_EQ(call.data & CTRDATA_TYPE, CTR_TYPE_CORSWAP);
    if (recorded) {
        CHECK_EQ(trap.source, (unsigned long)ctrh_bkfn | CTRSOURCE_V);
        CHECK_EQ(trap.target, 0);
        CHECK_EQ(trap.data & CTRDATA_TYPE, CTR_TYPE_EXC);
    }
    CHECK_EQ(ret.source, (unsigned long)ctrh_bkfn_ret | CTRSOURCE_V);
    CHECK_EQ(ret.data & CTRDATA_TYPE, CTR_TYPE_RET);
}

static void test_external_traps(void)
{
    static const struct {
        const char *rule;
        unsigned long long mctr, vsctr;
        bool to_vs, recorded;
    } cases[] = {
        { "draft 5.2.1: vsctrcontrol.ETEN=VSTE=1 records traps VU -> VS",
          0, CTR_U | CTR_ETEN | CTR_STE, true, true },
        { "draft 5.2.1: no VU -> VS trap record without vsctrcontrol.VSTE",
          0, CTR_U | CTR_ETEN, true, false },
        { "draft 5.2.1: no VU -> VS trap record without vsctrcontrol.ETEN",
          0, CTR_U | CTR_STE, true, false },
        { "draft 5.2.1: mctrcontrol.ETEN/STE do not record traps into VS",
          CTR_ETEN | CTR_STE, CTR_U, true, false },
        { "draft 5.2.1: mctrcontrol.ETEN=STE=1 records traps VU -> HS",
          CTR_ETEN | CTR_STE, CTR_U, false, true },
        { "draft 5.2.1: vsctrcontrol.VSTE does not record traps into HS",
          0, CTR_U | CTR_ETEN | CTR_STE, false, false },
    };
    unsigned i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        rv_rule(cases[i].rule);
        reset_all();
        ctr_write_mctrcontrol(cases[i].mctr);
        WRITE_VSCTR(cases[i].vsctr);
        run_vu_ebreak(cases[i].to_vs);
        check_ext_trap(cases[i].recorded);
    }
    reset_all();
}

/* Entry n as filled from M. */
#define ENT_SRC(n)      (0x80001001UL + (n) * 0x10)
#define ENT_DST(n)      (0x80002000UL + (n) * 0x10)
#define ENT_DATA(n)     (0x12348000UL | (1 + (n) % 15))     /* CC, CCV, TYPE */
/* Entry n as written through siselect/vsiselect. */
#define NEW_SRC(n)      (0x80007001UL + (n) * 0x100)
#define NEW_DST(n)      (0x80007100UL + (n) * 0x100)
#define NEW_DATA        0x00108005UL

static void fill_entries(void)
{
    unsigned n;

    for (n = 0; n < 16; n++) {
        csr_write(CSR_MISELECT, 0x200 + n);
        csr_write(CSR_MIREG, ENT_SRC(n));
        csr_write(CSR_MIREG2, ENT_DST(n));
        csr_write(CSR_MIREG3, ENT_DATA(n));
    }
}

/* Whether the 16 entries read (from M) as filled, or all zero. */
static bool entries_are(bool filled)
{
    unsigned n;
    bool ok = true;

    for (n = 0; n < 16; n++) {
        struct ctr_entry e = ctr_read_entry(n);

        ok &= e.source == (filled ? ENT_SRC(n) : 0) &&
              e.target == (filled ? ENT_DST(n) : 0) &&
              e.data == (filled ? ENT_DATA(n) : 0);
    }
    return ok;
}

/*
 * Through the interface at base (siselect 0x150: vsiselect when V=1;
 * vsiselect 0x250): read entries 0..3 and *ireg4 of entry 3, then write
 * entry arg & 0xff.  Bit 8 of arg selects vsiselect.
 */
static volatile struct ctr_entry seen[4];
static volatile unsigned long seen_ireg4;

static unsigned long ireg_access(unsigned long arg)
{
    unsigned base = arg & 0x100 ? CSR_VSISELECT : CSR_SISELECT;
    unsigned n, w = arg & 0xff;

    for (n = 0; n < 4; n++) {
        rv_csr_write_num(base, 0x200 + n);
        seen[n].source = rv_csr_read_num(base + 1);
        seen[n].target = rv_csr_read_num(base + 2);
        seen[n].data = rv_csr_read_num(base + 3);
    }
    seen_ireg4 = rv_csr_read_num(base + 5);
    rv_csr_write_num(base, 0x200 + w);
    rv_csr_write_num(base + 1, NEW_SRC(w));
    rv_csr_write_num(base + 2, NEW_DST(w));
    rv_csr_write_num(base + 3, NEW_DATA);
    return 0;
}

static void check_ireg_access(enum rv_mode mode, bool vs_view, unsigned w)
{
    struct ctr_entry e;
    unsigned n;

    fill_entries();
    memset((void *)seen, 0, sizeof(seen));
    rv_run_in_mode(mode, ireg_access, w | (vs_view ? 0x100 : 0));
    for (n = 0; n < 4; n++) {
        CHECK_EQ(seen[n].source, ENT_SRC(n));
        CHECK_EQ(seen[n].target, ENT_DST(n));
        CHECK_EQ(seen[n].data, ENT_DATA(n));
    }
    CHECK_EQ(seen_ireg4, 0);
    e = ctr_read_entry(w);
    CHECK_EQ(e.source, NEW_SRC(w));
    CHECK_EQ(e.target, NEW_DST(w));
    CHECK_EQ(e.data, NEW_DATA);
}

static void test_shared_entries(void)
{
    reset_all();
    csr_write(CSR_MCTRSTATUS, 5);       /* logical != physical */
    rv_rule("draft 3: vsireg* (VS-mode sireg*) access the entries of mireg*");
    check_ireg_access(RV_MODE_VS, false, 4);
    rv_rule("draft 3: HS-mode vsireg* access the entries of mireg*");
    check_ireg_access(RV_MODE_S, true, 5);
    rv_rule("draft 3: HS-mode sireg* access the entries of mireg*");
    check_ireg_access(RV_MODE_S, false, 6);
    rv_rule("draft 3: M-mode vsireg* access the entries of mireg*");
    check_ireg_access(RV_MODE_M, true, 7);
    CHECK_EQ(csr_read(CSR_MCTRSTATUS), 5);
    reset_all();
}

static unsigned long vs_write_clr(unsigned long unused)
{
    (void)unused;
    csr_write(CSR_SCTRCONTROL, CTR_CLR);
    return 0;
}

static unsigned long hs_write_vsclr(unsigned long unused)
{
    (void)unused;
    csr_write(CSR_VSCTRCONTROL, CTR_CLR);
    return 0;
}

static void test_clr(void)
{
    const unsigned long status = CTRSTATUS_WRAP | 7;

    rv_rule("draft 2.3: vsctrcontrol.CLR written from M (V=0) clears nothing");
    reset_all();
    csr_write(CSR_MCTRSTATUS, status);  /* before: it moves logical 0 */
    fill_entries();
    WRITE_VSCTR(CTR_CLR);
    CHECK(entries_are(true));
    CHECK_EQ(csr_read(CSR_MCTRSTATUS), status);
    CHECK_EQ(READ_VSCTR() & CTR_CLR, 0);

    rv_rule("draft 2.3: vsctrcontrol.CLR written from HS (V=0) clears nothing");
    rv_run_in_mode(RV_MODE_S, hs_write_vsclr, 0);
    CHECK(entries_are(true));
    CHECK_EQ(csr_read(CSR_MCTRSTATUS), status);

    rv_rule("draft 2.3: sctrcontrol.CLR written from VS (V=1) clears");
    rv_run_in_mode(RV_MODE_VS, vs_write_clr, 0);
    CHECK(entries_are(false));
    CHECK_EQ(csr_read(CSR_MCTRSTATUS), 0);
    CHECK_EQ(READ_VSCTR() & ~CTR_DEPTH_MASK, 0);
    reset_all();
}

int main(void)
{
    if (!rv_has_ext('H')) {
        rv_printf("FAIL ctr_hyp needs -cpu ...,h=on\n");
        return 1;
    }
    rv_rule("Smstateen: CTR (55) and SVSLCT (60) of mstateen0/hstateen0 writable");
    if (stateen_present() && !CHECK(stateen_set(true, true))) {
        rv_printf("FAIL SVSLCT stuck at 0: siselect unusable below M\n");
        return 1;
    }
    test_active_control();
    test_redirect();
    test_external_traps();
    test_shared_entries();
    test_clr();
    return 0;
}

/*
 * CTR v0.1.4 draft with the H extension: vsctrcontrol is the active
 * control register while V=1.
 *   chapter 2 (intro), 2.2, 2.3: vsctrcontrol, VS-mode sctrcontrol
 *     accesses redirected to it, DEPTH read-only copy, CLR only when V=1;
 *   chapter 3: vsireg* see the same entries as mireg* and sireg*;
 *   5.1 / 5.2.1: which modes are enabled, external traps VU -> VS (VSTE)
 *     and VU -> HS (STE), target PC 0.
 * cpu: ctr=on,h=on (smstateen=on optional: the test opens the CTR and
 * SVSLCT bits of mstateen0/hstateen0 when they exist).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_test.h"

#define CSR_VSISELECT_N 0x250
#define CSR_VSIREG4     0x255
#define CAUSE_BIT(c)    (1UL << (c))

#if RV_XLEN == 32
#define WRITE64(c, ch, v) do {                                          \
        csr_write(c, (unsigned long)(v));                               \
        csr_write(ch, (unsigned long)((unsigned long long)(v) >> 32));  \
    } while (0)
#define READ64(c, ch)                                                   \
    (csr_read(c) | ((unsigned long long)csr_read(ch) << 32))
#else
#define WRITE64(c, ch, v) csr_write(c, (v))
#define READ64(c, ch) ((unsigned long long)csr_read(c))
#endif

#define WRITE_VSCTR(v)  WRITE64(CSR_VSCTRCONTROL, CSR_VSCTRCONTROLH, v)
#define READ_VSCTR()    READ64(CSR_VSCTRCONTROL, CSR_VSCTRCONTROLH)
#define WRITE_SCTR(v)   WRITE64(CSR_SCTRCONTROL, CSR_SCTRCONTROLH, v)
#define READ_SCTR()     READ64(CSR_SCTRCONTROL, CSR_SCTRCONTROLH)

/*
 * Guest functions with known transfers, called by the library's
 * trampoline with jalr ra, t0 (E-trace 4.1.1: jalr x1, x5 is a co-routine
 * swap, CTR type 12):
 *   ctrh_jfn:   j (direct jump, skips an unimp), ret;
 *   ctrh_bkfn:  ebreak (4 bytes), ret.
 */
asm(".pushsection .text\n"
    ".balign 4\n"
    ".globl ctrh_jfn\n"
    "ctrh_jfn:\n"
    "    j ctrh_jfn_ret\n"
    "    unimp\n"
    ".globl ctrh_jfn_ret\n"
    "ctrh_jfn_ret:\n"
    "    ret\n"
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
#define HSTATUS_SPV (1UL << 7)

unsigned long ctrh_jfn(unsigned long);
unsigned long ctrh_bkfn(unsigned long);
extern char ctrh_jfn_ret[], ctrh_bkfn_ret[];
extern char rv_hs_to_virt[];

static unsigned long insn_len(unsigned long pc)
{
    return (*(volatile uint16_t *)pc & 3) == 3 ? 4 : 2;
}

/*
 * Open CTR and SVSLCT in mstateen0/hstateen0 if Smstateen exists; false
 * if they do not stick (then siselect is out of reach below M).
 */
static bool stateen_open(void)
{
    const unsigned long long bits = STATEEN0_CTR | STATEEN0_CSIND;
    unsigned long long m, h;

    rv_trap_expect();
    rv_csr_read_num(CSR_MSTATEEN0);
    if (rv_trap_cause() != RV_NO_TRAP) {
        return true;            /* no Smstateen: nothing gates CTR */
    }
    rv_rule("Smstateen: mstateen0/hstateen0 CTR (55) and SVSLCT (60) writable");
#if RV_XLEN == 32
    csr_set(CSR_MSTATEEN0H, (unsigned long)(bits >> 32));
    csr_set(CSR_HSTATEEN0H, (unsigned long)(bits >> 32));
    m = (unsigned long long)csr_read(CSR_MSTATEEN0H) << 32;
    h = (unsigned long long)csr_read(CSR_HSTATEEN0H) << 32;
#else
    csr_set(CSR_MSTATEEN0, bits);
    csr_set(CSR_HSTATEEN0, bits);
    m = csr_read(CSR_MSTATEEN0);
    h = csr_read(CSR_HSTATEEN0);
#endif
    return CHECK_EQ(m & bits, bits) & CHECK_EQ(h & bits, bits);
}

/* From M: recording off everywhere, array cleared, depth 16. */
static void reset_all(void)
{
    ctr_reset();
    WRITE_VSCTR(0);
    csr_write(CSR_MEDELEG, 0);
    csr_write(CSR_HEDELEG, 0);
}

static unsigned records(void)
{
    return csr_read(CSR_MCTRSTATUS) & CTRSTATUS_WRPTR;
}

static void write_entry(unsigned n, unsigned long src, unsigned long dst,
                        unsigned long data)
{
    csr_write(CSR_MISELECT, 0x200 + n);
    csr_write(CSR_MIREG, src);
    csr_write(CSR_MIREG2, dst);
    csr_write(CSR_MIREG3, data);
}

/*
 * After running ctrh_jfn with its mode enabled: entry 2 the trampoline's
 * call, entry 1 the j, entry 0 the ret back to the trampoline.
 */
static void check_jfn_records(void)
{
    struct ctr_entry call = ctr_read_entry(2);
    struct ctr_entry jmp = ctr_read_entry(1);
    struct ctr_entry ret = ctr_read_entry(0);

    CHECK_EQ(records(), 3);
    CHECK_EQ(call.target, (unsigned long)ctrh_jfn);
    CHECK_EQ(call.data & CTRDATA_TYPE, CTR_TYPE_CORSWAP);
    CHECK_EQ(jmp.source, (unsigned long)ctrh_jfn | CTRSOURCE_V);
    CHECK_EQ(jmp.target, (unsigned long)ctrh_jfn_ret);
    CHECK_EQ(jmp.data & CTRDATA_TYPE, CTR_TYPE_DIRJUMP);
    CHECK_EQ(ret.source, (unsigned long)ctrh_jfn_ret | CTRSOURCE_V);
    CHECK_EQ(ret.target, (call.source & ~1UL) + insn_len(call.source & ~1UL));
    CHECK_EQ(ret.data & CTRDATA_TYPE, CTR_TYPE_RET);
}

static void check_no_records(void)
{
    CHECK_EQ(records(), 0);
    CHECK_EQ(ctr_read_entry(0).source, 0);
    CHECK_EQ(csr_read(CSR_MCTRSTATUS) & CTRSTATUS_WRAP, 0);
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
 * Returns the number of records; checks the trap.
 */
static unsigned run_vu_ebreak(bool to_vs)
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
    return records();
}

/* call, external trap, ret: entry 1 is the trap (target PC 0). */
static void check_ext_trap_recorded(void)
{
    struct ctr_entry call = ctr_read_entry(2);
    struct ctr_entry trap = ctr_read_entry(1);
    struct ctr_entry ret = ctr_read_entry(0);

    CHECK_EQ(call.target, (unsigned long)ctrh_bkfn);
    CHECK_EQ(call.data & CTRDATA_TYPE, CTR_TYPE_CORSWAP);
    CHECK_EQ(trap.source, (unsigned long)ctrh_bkfn | CTRSOURCE_V);
    CHECK_EQ(trap.target, 0);
    CHECK_EQ(trap.data & CTRDATA_TYPE, CTR_TYPE_EXC);
    CHECK_EQ(ret.source, (unsigned long)ctrh_bkfn_ret | CTRSOURCE_V);
    CHECK_EQ(ret.data & CTRDATA_TYPE, CTR_TYPE_RET);
}

/* Without the trap: entry 1 the call, entry 0 the ret. */
static void check_ext_trap_not_recorded(void)
{
    CHECK_EQ(ctr_read_entry(1).target, (unsigned long)ctrh_bkfn);
    CHECK_EQ(ctr_read_entry(0).source, (unsigned long)ctrh_bkfn_ret | 1);
}

static void test_external_traps(void)
{
    rv_rule("draft 5.2.1: vsctrcontrol.ETEN=VSTE=1 records traps VU -> VS");
    reset_all();
    WRITE_VSCTR(CTR_U | CTR_ETEN | CTR_STE);
    CHECK_EQ(run_vu_ebreak(true), 3);
    check_ext_trap_recorded();

    rv_rule("draft 5.2.1: no VU -> VS trap record without vsctrcontrol.VSTE");
    reset_all();
    WRITE_VSCTR(CTR_U | CTR_ETEN);
    CHECK_EQ(run_vu_ebreak(true), 2);
    check_ext_trap_not_recorded();

    rv_rule("draft 5.2.1: no VU -> VS trap record without vsctrcontrol.ETEN");
    reset_all();
    WRITE_VSCTR(CTR_U | CTR_STE);
    CHECK_EQ(run_vu_ebreak(true), 2);
    check_ext_trap_not_recorded();

    rv_rule("draft 5.2.1: mctrcontrol.ETEN/STE do not record traps into VS");
    reset_all();
    ctr_write_mctrcontrol(CTR_ETEN | CTR_STE);
    WRITE_VSCTR(CTR_U);
    CHECK_EQ(run_vu_ebreak(true), 2);
    check_ext_trap_not_recorded();

    rv_rule("draft 5.2.1: mctrcontrol.ETEN=STE=1 records traps VU -> HS");
    reset_all();
    ctr_write_mctrcontrol(CTR_ETEN | CTR_STE);
    WRITE_VSCTR(CTR_U);
    CHECK_EQ(run_vu_ebreak(false), 3);
    check_ext_trap_recorded();

    rv_rule("draft 5.2.1: vsctrcontrol.VSTE does not record traps into HS");
    reset_all();
    WRITE_VSCTR(CTR_U | CTR_ETEN | CTR_STE);
    CHECK_EQ(run_vu_ebreak(false), 2);
    check_ext_trap_not_recorded();
    reset_all();
}

/* Entry n as seen through siselect/sireg* (vsiselect/vsireg* in VS). */
static volatile struct ctr_entry seen[4];
static volatile unsigned long seen_ireg4;

static unsigned long s_read_entries(unsigned long write_n)
{
    unsigned n;

    for (n = 0; n < 4; n++) {
        csr_write(CSR_SISELECT, 0x200 + n);
        seen[n].source = csr_read(CSR_SIREG);
        seen[n].target = csr_read(CSR_SIREG2);
        seen[n].data = csr_read(CSR_SIREG3);
    }
    seen_ireg4 = csr_read(CSR_SIREG4);
    csr_write(CSR_SISELECT, 0x200 + write_n);
    csr_write(CSR_SIREG, 0x80007001UL + write_n * 0x100);
    csr_write(CSR_SIREG2, 0x80007100UL + write_n * 0x100);
    csr_write(CSR_SIREG3, 0x00108005UL);
    return 0;
}

/* From HS: the vsiselect/vsireg* view, then a write through it. */
static unsigned long hs_read_vs_entries(unsigned long write_n)
{
    unsigned n;

    for (n = 0; n < 4; n++) {
        csr_write(CSR_VSISELECT, 0x200 + n);
        seen[n].source = csr_read(CSR_VSIREG);
        seen[n].target = csr_read(CSR_VSIREG2);
        seen[n].data = csr_read(CSR_VSIREG3);
    }
    seen_ireg4 = csr_read(CSR_VSIREG4);
    csr_write(CSR_VSISELECT, 0x200 + write_n);
    csr_write(CSR_VSIREG, 0x80007001UL + write_n * 0x100);
    csr_write(CSR_VSIREG2, 0x80007100UL + write_n * 0x100);
    csr_write(CSR_VSIREG3, 0x00108005UL);
    return 0;
}

static void check_seen(void)
{
    unsigned n;

    for (n = 0; n < 4; n++) {
        CHECK_EQ(seen[n].source, 0x80001001UL + n * 0x10);
        CHECK_EQ(seen[n].target, 0x80002000UL + n * 0x10);
        CHECK_EQ(seen[n].data, 0x12348000UL | (1 + n % 15));
    }
    CHECK_EQ(seen_ireg4, 0);
}

static void check_written(unsigned n)
{
    struct ctr_entry e = ctr_read_entry(n);

    CHECK_EQ(e.source, 0x80007001UL + n * 0x100);
    CHECK_EQ(e.target, 0x80007100UL + n * 0x100);
    CHECK_EQ(e.data, 0x00108005UL);
}

static void fill_entries(void)
{
    unsigned n;

    for (n = 0; n < 16; n++) {
        write_entry(n, 0x80001001UL + n * 0x10, 0x80002000UL + n * 0x10,
                    0x12348000UL | (1 + n % 15));
    }
}

static void test_shared_entries(void)
{
    rv_rule("draft 3: vsireg* (VS-mode sireg*) access the entries of mireg*");
    reset_all();
    csr_write(CSR_MCTRSTATUS, 5);       /* logical != physical */
    fill_entries();
    memset((void *)seen, 0, sizeof(seen));
    rv_run_in_mode(RV_MODE_VS, s_read_entries, 4);
    check_seen();
    check_written(4);

    rv_rule("draft 3: HS-mode vsireg* access the entries of mireg*");
    fill_entries();
    memset((void *)seen, 0, sizeof(seen));
    rv_run_in_mode(RV_MODE_S, hs_read_vs_entries, 5);
    check_seen();
    check_written(5);

    rv_rule("draft 3: HS-mode sireg* access the entries of mireg*");
    fill_entries();
    memset((void *)seen, 0, sizeof(seen));
    rv_run_in_mode(RV_MODE_S, s_read_entries, 6);
    check_seen();
    check_written(6);

    rv_rule("draft 3: M-mode vsireg* access the entries of mireg*");
    fill_entries();
    memset((void *)seen, 0, sizeof(seen));
    hs_read_vs_entries(7);
    check_seen();
    check_written(7);
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

static bool entries_intact(void)
{
    unsigned n;
    bool ok = true;

    for (n = 0; n < 16; n++) {
        struct ctr_entry e = ctr_read_entry(n);

        ok &= e.source == 0x80001001UL + n * 0x10 &&
              e.target == 0x80002000UL + n * 0x10 &&
              e.data == (0x12348000UL | (1 + n % 15));
    }
    return ok;
}

static bool entries_zero(void)
{
    unsigned n;
    bool ok = true;

    for (n = 0; n < 16; n++) {
        struct ctr_entry e = ctr_read_entry(n);

        ok &= e.source == 0 && e.target == 0 && e.data == 0;
    }
    return ok;
}

static void test_clr(void)
{
    const unsigned long status = CTRSTATUS_WRAP | 7;

    rv_rule("draft 2.3: vsctrcontrol.CLR written from M (V=0) clears nothing");
    reset_all();
    csr_write(CSR_MCTRSTATUS, status);  /* before: it moves logical 0 */
    fill_entries();
    WRITE_VSCTR(CTR_CLR);
    CHECK(entries_intact());
    CHECK_EQ(csr_read(CSR_MCTRSTATUS), status);
    CHECK_EQ(READ_VSCTR() & CTR_CLR, 0);

    rv_rule("draft 2.3: vsctrcontrol.CLR written from HS (V=0) clears nothing");
    rv_run_in_mode(RV_MODE_S, hs_write_vsclr, 0);
    CHECK(entries_intact());
    CHECK_EQ(csr_read(CSR_MCTRSTATUS), status);

    rv_rule("draft 2.3: sctrcontrol.CLR written from VS (V=1) clears");
    rv_run_in_mode(RV_MODE_VS, vs_write_clr, 0);
    CHECK(entries_zero());
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
    if (!stateen_open()) {
        rv_printf("FAIL stateen bits stuck at 0: VS-mode CSR tests skipped\n");
        return 1;
    }
    test_active_control();
    test_redirect();
    test_external_traps();
    test_shared_entries();
    test_clr();
    return 0;
}

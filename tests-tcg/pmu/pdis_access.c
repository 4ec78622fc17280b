/*
 * Smpdis/Sspdis below M mode (docs/pdis.rst): which mode reaches which
 * PDIS register with which exception (mstateen0.PDIS, hstateen0.PDIS,
 * the H-mode vspdisctl); spdisctl as vspdisctl in VS mode; the counter in
 * each mode (M/S/U from mpdisctl, VS/VU from vspdisctl); scountinhibit[1]
 * under delegation; the menvcfg/henvcfg bits and LAMBI's delegation; and
 * the memory buffer through satp (TF on a first-stage fault) and through
 * hgatp (a guest-page fault, raised once the hart runs the guest).
 * Runs with h=on,smstateen=on,sscofpmf=on,smcdeleg=on,ssccfg=on,
 * smcsrind=on,sscsrind=on,pdis=on.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "pdis_test.h"

#define NONE    RV_NO_TRAP
#define ILL     CAUSE_ILLEGAL_INSN
#define VIRT    CAUSE_VIRTUAL_INSN
#define CAUSE_STORE_GUEST_PAGE_FAULT 23

#define CSR_SSTATEEN0   0x10c
#define CSR_SCOUNTEREN  0x106

/* Set or clear a bit of a 64-bit CSR (low CSR, and high half on RV32). */
static void set64(unsigned csr, unsigned csrh, uint64_t bit, bool on)
{
#if RV_XLEN == 32
    if (bit >> 32) {
        csr = csrh;
        bit >>= 32;
    }
#else
    (void)csrh;
#endif
    if (on) {
        rv_csr_write_num(csr, rv_csr_read_num(csr) | (unsigned long)bit);
    } else {
        rv_csr_write_num(csr, rv_csr_read_num(csr) & ~(unsigned long)bit);
    }
}

static uint64_t get64(unsigned csr, unsigned csrh)
{
    uint64_t v = (unsigned long)rv_csr_read_num(csr);

#if RV_XLEN == 32
    v = (uint32_t)v | (uint64_t)rv_csr_read_num(csrh) << 32;
#else
    (void)csrh;
#endif
    return v;
}

static void mstateen_pdis(bool on)
{
    set64(CSR_MSTATEEN0, CSR_MSTATEEN0H, STATEEN0_PDIS, on);
}

static void hstateen_pdis(bool on)
{
    set64(CSR_HSTATEEN0, CSR_HSTATEEN0H, STATEEN0_PDIS, on);
}

/* ------------------------------------------------------------- access */

static unsigned long access_csr(unsigned long csr_write_flag)
{
    unsigned csr = csr_write_flag >> 1;

    rv_trap_expect();
    if (csr_write_flag & 1) {
        rv_csr_write_num(csr, 0);
    } else {
        rv_csr_read_num(csr);
    }
    return rv_trap_cause();
}

static unsigned long access_ireg(unsigned long unused)
{
    (void)unused;
    rv_trap_expect();
    csr_write(0x150, 0x60);
    rv_csr_read_num(0x151);
    return rv_trap_cause();
}

static unsigned long try(enum rv_mode m, unsigned csr, bool write)
{
    return rv_run_in_mode(m, access_csr, (unsigned long)csr << 1 | write);
}

static void test_access(void)
{
    static const unsigned s_csrs[] = {
        CSR_SPDISCTL, CSR_SPDISCOUNTER, CSR_SPDISEVMASK, CSR_SPDISEVMATCH,
        CSR_SPDISFILTER, CSR_SPDISAMBCS, CSR_SPDISAMBADDR,
    };

    /* sireg* stay reachable: CSRIND on in both state enables */
    set64(CSR_MSTATEEN0, CSR_MSTATEEN0H, STATEEN0_CSRIND | STATEEN0_SE0,
          true);
    set64(CSR_HSTATEEN0, CSR_HSTATEEN0H, STATEEN0_CSRIND | STATEEN0_SE0,
          true);

    rv_rule("mstateen0.PDIS=0: spdis* and vspdisctl raise illegal "
            "instruction below M, the data registers too");
    mstateen_pdis(false);
    for (unsigned i = 0; i < sizeof(s_csrs) / sizeof(s_csrs[0]); i++) {
        CHECK_EQ(try(RV_MODE_M, s_csrs[i], true), NONE);
        CHECK_EQ(try(RV_MODE_S, s_csrs[i], false), ILL);
        CHECK_EQ(try(RV_MODE_S, s_csrs[i], true), ILL);
        CHECK_EQ(try(RV_MODE_VS, s_csrs[i], false), ILL);
        CHECK_EQ(try(RV_MODE_U, s_csrs[i], false), ILL);
    }
    CHECK_EQ(try(RV_MODE_S, CSR_VSPDISCTL, false), ILL);
    CHECK_EQ(rv_run_in_mode(RV_MODE_S, access_ireg, 0), ILL);
    CHECK_EQ(rv_run_in_mode(RV_MODE_M, access_ireg, 0), NONE);
    rv_rule("mpdisctl is M-mode's");
    CHECK_EQ(try(RV_MODE_S, CSR_MPDISCTL, false), ILL);

    rv_rule("hstateen0.PDIS is read-only 0 while mstateen0.PDIS=0");
    hstateen_pdis(true);
    CHECK_EQ(get64(CSR_HSTATEEN0, CSR_HSTATEEN0H) & STATEEN0_PDIS, 0);

    rv_rule("mstateen0.PDIS=1: S-mode reaches spdis*, vspdisctl and the "
            "data registers");
    mstateen_pdis(true);
    hstateen_pdis(false);
    for (unsigned i = 0; i < sizeof(s_csrs) / sizeof(s_csrs[0]); i++) {
        CHECK_EQ(try(RV_MODE_S, s_csrs[i], true), NONE);
        CHECK_EQ(try(RV_MODE_U, s_csrs[i], false), ILL);
        rv_rule("hstateen0.PDIS=0: VS and VU get a virtual instruction");
        CHECK_EQ(try(RV_MODE_VS, s_csrs[i], false), VIRT);
        CHECK_EQ(try(RV_MODE_VU, s_csrs[i], false), VIRT);
    }
    CHECK_EQ(try(RV_MODE_S, CSR_VSPDISCTL, true), NONE);
    CHECK_EQ(rv_run_in_mode(RV_MODE_S, access_ireg, 0), NONE);
    CHECK_EQ(rv_run_in_mode(RV_MODE_VS, access_ireg, 0), VIRT);

    rv_rule("hstateen0.PDIS=1: VS-mode reaches spdis* (VU does not); "
            "vspdisctl stays HS-mode's");
    hstateen_pdis(true);
    CHECK_EQ(get64(CSR_HSTATEEN0, CSR_HSTATEEN0H) & STATEEN0_PDIS,
             STATEEN0_PDIS);
    for (unsigned i = 0; i < sizeof(s_csrs) / sizeof(s_csrs[0]); i++) {
        CHECK_EQ(try(RV_MODE_VS, s_csrs[i], true), NONE);
        CHECK_EQ(try(RV_MODE_VU, s_csrs[i], false), VIRT);
    }
    CHECK_EQ(try(RV_MODE_VS, CSR_VSPDISCTL, false), VIRT);
    CHECK_EQ(rv_run_in_mode(RV_MODE_VS, access_ireg, 0), NONE);
}

/* ------------------------------------------------------------ vspdisctl */

/* U and a SEL value through spdisctl; its value (low half). */
static unsigned long write_spdisctl(unsigned long sel)
{
    pdis_write(CSR_SPDISCTL, PDIS_U | sel);
    return (unsigned long)pdis_read(CSR_SPDISCTL);
}

static void test_vspdisctl(void)
{
    uint64_t v;

    mstateen_pdis(true);
    hstateen_pdis(true);
    pdis_write(CSR_MPDISCTL, PDIS_M | PDIS_S);
    pdis_write(CSR_VSPDISCTL, 0);
    rv_rule("VS-mode's spdisctl is vspdisctl: its PA, S and U are its "
            "own, the other fields are spdisctl's");
    v = rv_run_in_mode(RV_MODE_VS, write_spdisctl, PDIS_SEL_STORE);
    CHECK_EQ(pdis_read(CSR_VSPDISCTL), PDIS_U | PDIS_SEL_STORE);
    CHECK_EQ(pdis_read(CSR_MPDISCTL), PDIS_M | PDIS_S | PDIS_SEL_STORE);
    CHECK_EQ(v & 0xffffffffUL, PDIS_SEL_STORE);
    rv_rule("vspdisctl: bit 62 reads 0; mpdisctl.M stays");
    pdis_write(CSR_VSPDISCTL, PDIS_M | PDIS_PA | PDIS_S);
    CHECK_EQ(pdis_read(CSR_VSPDISCTL), PDIS_PA | PDIS_S);
    CHECK_EQ(pdis_read(CSR_MPDISCTL), PDIS_M | PDIS_S);
    pdis_write(CSR_VSPDISCTL, 0);
    pdis_write(CSR_MPDISCTL, 0);
}

/* -------------------------------------------------------- counting */

static unsigned long run_nops(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++) {
        asm volatile("nop");
    }
    return 0;
}

/* How many instructions the counter counted in mode m. */
static uint32_t counted_in(enum rv_mode m, uint64_t ctl, uint64_t vsctl)
{
    uint32_t count;

    csr_write(mcountinhibit, ~0UL);
    /* vspdisctl's fields other than PA, S and U are mpdisctl's */
    pdis_write(CSR_VSPDISCTL, vsctl);
    pdis_write(CSR_MPDISCTL, ctl);
    pdis_write(CSR_SPDISCOUNTER, 0);
    csr_write(mcountinhibit, ~2UL);
    rv_run_in_mode(m, run_nops, 100);
    csr_write(mcountinhibit, ~0UL);
    count = pdis_read(CSR_SPDISCOUNTER);
    pdis_write(CSR_MPDISCTL, 0);
    pdis_write(CSR_VSPDISCTL, 0);
    return count;
}

static void test_modes(void)
{
    /* the way into VS and VU passes a few HS-mode instructions */
    rv_rule("mpdisctl.S counts HS-mode, not VS-mode");
    CHECK(counted_in(RV_MODE_S, PDIS_S, 0) >= 100);
    CHECK(counted_in(RV_MODE_VS, PDIS_S, 0) < 20);
    rv_rule("mpdisctl.U counts U-mode, not VU-mode");
    CHECK(counted_in(RV_MODE_U, PDIS_U, 0) >= 100);
    CHECK_EQ(counted_in(RV_MODE_VU, PDIS_U, 0), 0);
    rv_rule("vspdisctl.S counts VS-mode, vspdisctl.U VU-mode");
    CHECK(counted_in(RV_MODE_VS, 0, PDIS_S) >= 100);
    CHECK_EQ(counted_in(RV_MODE_S, 0, PDIS_S), 0);
    CHECK(counted_in(RV_MODE_VU, 0, PDIS_U) >= 100);
    CHECK_EQ(counted_in(RV_MODE_U, 0, PDIS_U), 0);
    rv_rule("SEL=2 counts only stores");
    CHECK(counted_in(RV_MODE_S, PDIS_S | PDIS_SEL_STORE, 0) < 20);
}

static unsigned long inhibit_from_s(unsigned long val)
{
    csr_write(CSR_SCOUNTINHIBIT, val);
    return csr_read(CSR_SCOUNTINHIBIT);
}

static void set_cde(bool on)
{
    set64(CSR_MENVCFG, CSR_MENVCFGH, ENVCFG_CDE, on);
}

static void test_inhibit(void)
{
    rv_rule("scountinhibit[1] is read-only 0 unless mstateen0.PDIS=1 "
            "and menvcfg.CDE=1");
    csr_write(mcountinhibit, 0);
    mstateen_pdis(true);
    set_cde(false);
    CHECK_EQ(rv_run_in_mode(RV_MODE_S, inhibit_from_s, 2) & 2, 0);
    CHECK_EQ(csr_read(mcountinhibit) & 2, 0);
    mstateen_pdis(false);
    set_cde(true);
    CHECK_EQ(rv_run_in_mode(RV_MODE_S, inhibit_from_s, 2) & 2, 0);
    CHECK_EQ(csr_read(mcountinhibit) & 2, 0);
    rv_rule("delegated: scountinhibit[1] is mcountinhibit[1]");
    mstateen_pdis(true);
    CHECK_EQ(rv_run_in_mode(RV_MODE_S, inhibit_from_s, 2) & 2, 2);
    CHECK_EQ(csr_read(mcountinhibit) & 2, 2);
    rv_rule("a write to scountinhibit keeps the bits S-mode does not own");
    csr_write(mcountinhibit, 1UL << 5);
    csr_write(CSR_MCOUNTEREN, 0);
    rv_run_in_mode(RV_MODE_S, inhibit_from_s, 0);
    CHECK_EQ(csr_read(mcountinhibit) & (1UL << 5), 1UL << 5);
    set_cde(false);
    csr_write(mcountinhibit, ~0UL);
}

/* ------------------------------------------------- envcfg, LAMBI */

static void test_bits(void)
{
    rv_rule("menvcfg.PDISS and henvcfg.PDISV (bit 57) are writable");
    set64(CSR_MENVCFG, CSR_MENVCFGH, ENVCFG_PDIS, true);
    CHECK(get64(CSR_MENVCFG, CSR_MENVCFGH) & ENVCFG_PDIS);
    set64(CSR_HENVCFG, CSR_HENVCFGH, ENVCFG_PDIS, true);
    CHECK(get64(CSR_HENVCFG, CSR_HENVCFGH) & ENVCFG_PDIS);
    set64(CSR_HENVCFG, CSR_HENVCFGH, ENVCFG_PDIS, false);
    set64(CSR_MENVCFG, CSR_MENVCFGH, ENVCFG_PDIS, false);

    rv_rule("LAMBI (14): hideleg.LAMBI only with mideleg.LAMBI");
    csr_clear(mideleg, LAMBIP);
    rv_csr_write_num(CSR_HIDELEG, LAMBIP);
    CHECK_EQ(rv_csr_read_num(CSR_HIDELEG) & LAMBIP, 0);
    rv_rule("LAMBI delegated to S: sip.LAMBIP is mip.LAMBIP, sie.LAMBIE "
            "mie.LAMBIE");
    csr_set(mideleg, LAMBIP);
    csr_set(mip, LAMBIP);
    CHECK(rv_csr_read_num(CSR_SIP) & LAMBIP);
    rv_csr_write_num(CSR_SIE, LAMBIP);
    CHECK(csr_read(mie) & LAMBIP);
    rv_rule("LAMBI delegated to VS: vsip.LAMBIP is mip.LAMBIP");
    rv_csr_write_num(CSR_HIDELEG, LAMBIP);
    CHECK(rv_csr_read_num(CSR_HIDELEG) & LAMBIP);
    CHECK(rv_csr_read_num(0x244) & LAMBIP);             /* vsip */
    rv_csr_write_num(0x244, 0);
    CHECK_EQ(csr_read(mip) & LAMBIP, 0);
    rv_csr_write_num(CSR_HIDELEG, 0);
    rv_csr_write_num(CSR_SIE, 0);
    csr_clear(mie, LAMBIP);
    csr_clear(mideleg, LAMBIP);
}

/* ---------------------------------------------- translated buffer */

#define BUF_VA          0x40000000UL
static uint8_t amb[4096] __attribute__((aligned(4096)));

#if RV_XLEN == 64
#define PTE_SHIFT 10
typedef uint64_t pte_t;
static pte_t s_root[512] __attribute__((aligned(4096)));
static pte_t s_l1[512] __attribute__((aligned(4096)));
static pte_t s_l0[512] __attribute__((aligned(4096)));
static pte_t g_root[2048] __attribute__((aligned(16384)));
static pte_t g_l1[512] __attribute__((aligned(4096)));
static pte_t g_l0[512] __attribute__((aligned(4096)));
#else
#define PTE_SHIFT 10
typedef uint32_t pte_t;
static pte_t s_root[1024] __attribute__((aligned(4096)));
static pte_t s_l0[1024] __attribute__((aligned(4096)));
static pte_t g_root[4096] __attribute__((aligned(16384)));
static pte_t g_l0[1024] __attribute__((aligned(4096)));
#endif

#define PTE_V 1
#define PTE_R 2
#define PTE_W 4
#define PTE_X 8
#define PTE_U 16
#define PTE_A 64
#define PTE_D 128

static pte_t pte(unsigned long pa, unsigned flags)
{
    return (pte_t)((pa >> 12) << PTE_SHIFT) | flags;
}

/* BUF_VA -> amb (written), BUF_VA + 4 KiB read-only, the rest unmapped. */
static unsigned long satp_for_buffer(void)
{
    unsigned long leaf = PTE_V | PTE_R | PTE_A | PTE_D;

#if RV_XLEN == 64
    s_root[BUF_VA >> 30] = pte((unsigned long)s_l1, PTE_V);
    s_l1[0] = pte((unsigned long)s_l0, PTE_V);
    s_l0[0] = pte((unsigned long)amb, leaf | PTE_W);
    s_l0[1] = pte((unsigned long)amb, leaf);
    return 8UL << 60 | (unsigned long)s_root >> 12;     /* Sv39 */
#else
    s_root[BUF_VA >> 22] = pte((unsigned long)s_l0, PTE_V);
    s_l0[0] = pte((unsigned long)amb, leaf | PTE_W);
    s_l0[1] = pte((unsigned long)amb, leaf);
    return 1UL << 31 | (unsigned long)s_root >> 12;     /* Sv32 */
#endif
}

/* G stage: RAM identity, guest-physical BUF_VA -> amb, nothing else. */
static unsigned long hgatp_for_buffer(void)
{
    unsigned long leaf = PTE_V | PTE_R | PTE_W | PTE_U | PTE_A | PTE_D;

#if RV_XLEN == 64
    g_root[2] = pte(0x80000000UL, leaf | PTE_X);
    g_root[BUF_VA >> 30] = pte((unsigned long)g_l1, PTE_V);
    g_l1[0] = pte((unsigned long)g_l0, PTE_V);
    g_l0[0] = pte((unsigned long)amb, leaf);
    return 8UL << 60 | (unsigned long)g_root >> 12;     /* Sv39x4 */
#else
    for (unsigned i = 0; i < 16; i++) {
        g_root[0x200 + i] = pte(0x80000000UL + (i << 22), leaf | PTE_X);
    }
    g_root[BUF_VA >> 22] = pte((unsigned long)g_l0, PTE_V);
    g_l0[0] = pte((unsigned long)amb, leaf);
    return 1UL << 31 | (unsigned long)g_root >> 12;     /* Sv32x4 */
#endif
}

/* Three M-mode instructions sampled (period 10) into the buffer. */
static void sample_into_buffer(void)
{
    pdis_write(CSR_MPDISCTL, PDIS_M | PDIS_MEM);
    csr_write(mcountinhibit, ~2UL);
    asm volatile(".option push\n.option norvc\n"
                 "csrw 0x5c9, %0\n"
                 ".rept 30\n addi t0, t0, 1\n .endr\n"
                 "csrw mcountinhibit, %1\n"
                 ".option pop\n"
                 : : "r"((unsigned long)pdis_counter(10, 10)), "r"(~0UL)
                 : "t0");
}

static unsigned long vs_nops(unsigned long arg)
{
    asm volatile("nop\n nop\n nop\n nop");
    return arg;
}

static unsigned long hs_no_trap(unsigned long arg)
{
    rv_trap_expect();
    vs_nops(arg);
    return rv_trap_cause();
}

static volatile unsigned long vs_sample_pc;

/* In VS mode: the 10th nop is sampled (vspdisctl.S), and the next... */
static unsigned long vs_sampled(unsigned long counter)
{
    unsigned long first;

    rv_trap_expect();
    asm volatile(".option push\n.option norvc\n"
                 "csrw 0x5c9, %1\n"
                 "1: .rept 20\n nop\n .endr\n"
                 ".option pop\n"
                 "lla %0, 1b\n"
                 : "=&r"(first) : "r"(counter));
    vs_sample_pc = first + 9 * 4;
    return rv_trap_cause();
}

static void test_buffer(void)
{
    uint64_t rec[REC_N], cs;

    csr_write(mcountinhibit, ~0UL);
    pdis_write(CSR_SPDISCOUNTER, pdis_counter(10, 10) & ~0xffffffffULL);
    memset(amb, 0, sizeof(amb));
    rv_rule("menvcfg.PDISS=1: records are written through satp "
            "(S-mode's translation)");
    set64(CSR_MENVCFG, CSR_MENVCFGH, ENVCFG_PDIS, true);
    csr_write(0x180, satp_for_buffer());
    asm volatile("sfence.vma");
    csr_write(0x5ce, BUF_VA);
    pdis_write(CSR_SPDISAMBCS, AMB_EN | AMB_SIZE(1));
    CHECK(pdis_read(CSR_SPDISAMBCS) & AMB_TRV);
    sample_into_buffer();
    CHECK_EQ(csr_read(0x5ce), BUF_VA + 3 * PDIS_RECORD_SIZE);
    pdis_unpack(amb + 2 * PDIS_RECORD_SIZE, rec);
    CHECK(rec[REC_PC] >= 0x80000000UL);

    rv_rule("a first-stage fault (a read-only page): TF, TFPTR, LAMBI, "
            "no exception");
    csr_write(0x5ce, BUF_VA + 4096);
    sample_into_buffer();
    cs = pdis_read(CSR_SPDISAMBCS);
    CHECK(cs & AMB_TF);
    CHECK_EQ((cs >> AMB_TFPTR_SHIFT) & 0xfffff, 1);
    CHECK(csr_read(mip) & LAMBIP);
    csr_clear(mip, LAMBIP);
    csr_write(0x180, 0);
    pdis_write(CSR_SPDISAMBCS, 0);

    rv_rule("henvcfg.PDISV=1: records go through vsatp and hgatp");
    memset(amb, 0, sizeof(amb));
    set64(CSR_HENVCFG, CSR_HENVCFGH, ENVCFG_PDIS, true);
    csr_write(CSR_HGATP, hgatp_for_buffer());
    asm volatile(".insn r 0x73, 0, 0x31, x0, x0, x0");  /* hfence.gvma */
    csr_write(0x5ce, BUF_VA);
    pdis_write(CSR_SPDISAMBCS, AMB_EN | AMB_SIZE(1));
    sample_into_buffer();
    CHECK_EQ(csr_read(0x5ce), BUF_VA + 3 * PDIS_RECORD_SIZE);
    pdis_unpack(amb, rec);
    CHECK(rec[REC_PC] >= 0x80000000UL);

    rv_rule("a G-stage fault of a record of a VS-mode instruction: a "
            "store guest-page fault in the guest, htval/mtval2 the "
            "address >> 2, after the sampled instruction");
    csr_write(0x5ce, BUF_VA + 4096);
    pdis_write(CSR_VSPDISCTL, PDIS_S);
    pdis_write(CSR_MPDISCTL, PDIS_MEM);
    pdis_write(CSR_SPDISCOUNTER, pdis_counter(10, 1000) & ~0xffffffffULL);
    csr_write(mcountinhibit, ~2UL);
    CHECK_EQ(rv_run_in_mode(RV_MODE_VS, vs_sampled,
                            (unsigned long)pdis_counter(10, 1000)),
             CAUSE_STORE_GUEST_PAGE_FAULT);
    csr_write(mcountinhibit, ~0UL);
    CHECK_EQ(rv_last_trap.from, RV_MODE_VS);
    CHECK_EQ(rv_last_trap.epc, vs_sample_pc + 4);
    CHECK_EQ(rv_last_trap.tval, BUF_VA + 4096);
    CHECK_EQ(rv_last_trap.tval2, (BUF_VA + 4096) >> 2);
    CHECK_EQ(pdis_read(CSR_SPDISAMBCS) & AMB_TF, 0);
    pdis_write(CSR_VSPDISCTL, 0);

    rv_rule("a G-stage fault while V=0 is held: no trap in M or HS");
    sample_into_buffer();
    CHECK_EQ(rv_run_in_mode(RV_MODE_S, hs_no_trap, 0), NONE);
    pdis_write(CSR_SPDISAMBCS, 0);
    csr_write(CSR_HGATP, 0);
    set64(CSR_HENVCFG, CSR_HENVCFGH, ENVCFG_PDIS, false);
    set64(CSR_MENVCFG, CSR_MENVCFGH, ENVCFG_PDIS, false);
    pdis_write(CSR_MPDISCTL, 0);
}

int main(void)
{
    test_access();
    test_vspdisctl();
    test_modes();
    test_inhibit();
    test_bits();
    test_buffer();
    return 0;
}

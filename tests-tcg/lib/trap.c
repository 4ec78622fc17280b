/*
 * rvtest: machine set-up, trap handling, mode switching, CSR by number,
 * machine timer.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"

#define RV_ECALL_LEAVE_MODE 0x52565445UL    /* a7 of the trampoline's ecall */
#define REG_RA 1
#define REG_A0 10
#define REG_A7 17

#define CLINT_BASE      0x2000000UL
#define CLINT_MTIMECMP0 (CLINT_BASE + 0x4000)
#define CLINT_MTIME     (CLINT_BASE + 0xbff8)

#define MIP_MTIP        (1UL << IRQ_M_TIMER)
#define SSTATUS_SPP     (1UL << 8)
#define HSTATUS_SPV     (1UL << 7)

volatile struct rv_trap rv_last_trap;
volatile unsigned long rv_trap_count;
volatile enum rv_mode rv_current_mode = RV_MODE_M;

static volatile bool trap_expected;
static volatile bool trap_recorded;
static rv_irq_handler irq_handlers[RV_XLEN];
static rv_trap_hook trap_hook;

/* M-mode context saved by rv_enter_mode() while a lower mode runs. */
static unsigned long leave_ctx[14];
static volatile bool leave_armed;

extern char rv_trap_entry_m[], rv_trap_entry_hs[], rv_trap_entry_vs[];
extern char rv_trap_stack_hs_top[], rv_trap_stack_vs_top[];
extern char rv_mode_trampoline[], rv_hs_to_virt[];
unsigned long rv_enter_mode(unsigned long (*fn)(unsigned long),
                            unsigned long arg, unsigned long *ctx,
                            void *entry, unsigned long spp);
void rv_mret_to_m(void);
void rv_leave_mode(unsigned long *ctx, unsigned long result)
    __attribute__((noreturn));
void rv_init(void);
void rv_trap_handler(unsigned long *frame, enum rv_mode to);

unsigned long rv_misa;

void rv_init(void)
{
    rv_misa = csr_read(CSR_MISA);
    /* PMP: one NAPOT region over everything, RWX, for S and U. */
    csr_write(CSR_PMPADDR0, -1UL);
    csr_write(CSR_PMPCFG0, 0x1f);
    if (rv_has_ext('S')) {
        csr_write(CSR_STVEC, (unsigned long)rv_trap_entry_hs);
        csr_write(CSR_SSCRATCH, (unsigned long)rv_trap_stack_hs_top);
    }
    if (rv_has_ext('H')) {
        csr_write(CSR_VSTVEC, (unsigned long)rv_trap_entry_vs);
        csr_write(CSR_VSSCRATCH, (unsigned long)rv_trap_stack_vs_top);
    }
}

const char *rv_mode_name(enum rv_mode mode)
{
    switch (mode) {
    case RV_MODE_U:
        return "U";
    case RV_MODE_S:
        return "S";
    case RV_MODE_M:
        return "M";
    case RV_MODE_VU:
        return "VU";
    case RV_MODE_VS:
        return "VS";
    }
    return "?";
}

/* ------------------------------------------------------------ traps */

static bool mpv_set(void)
{
#if __riscv_xlen == 64
    return csr_read(CSR_MSTATUS) & MSTATUS_MPV_RV64;
#else
    return csr_read(CSR_MSTATUSH) & MSTATUSH_MPV;
#endif
}

/* Read the trap CSRs of the mode that took the trap. */
static void read_trap(struct rv_trap *t, enum rv_mode to)
{
    t->to = to;
    t->tval2 = t->tinst = 0;
    if (to == RV_MODE_M) {
        unsigned long mpp = (csr_read(CSR_MSTATUS) & MSTATUS_MPP) >>
                            MSTATUS_MPP_SHIFT;
        bool virt = rv_has_ext('H') && mpp != RV_MODE_M && mpv_set();

        t->cause = csr_read(CSR_MCAUSE);
        t->epc = csr_read(CSR_MEPC);
        t->tval = csr_read(CSR_MTVAL);
        if (rv_has_ext('H')) {
            t->tval2 = csr_read(CSR_MTVAL2);
            t->tinst = csr_read(CSR_MTINST);
        }
        t->from = (enum rv_mode)(mpp + (virt ? RV_MODE_VU : 0));
    } else {
        bool spp = csr_read(CSR_SSTATUS) & SSTATUS_SPP;
        bool virt = to == RV_MODE_VS ||
                    (rv_has_ext('H') && (csr_read(CSR_HSTATUS) & HSTATUS_SPV));

        t->cause = csr_read(CSR_SCAUSE);
        t->epc = csr_read(CSR_SEPC);
        t->tval = csr_read(CSR_STVAL);
        t->from = (enum rv_mode)((spp ? RV_MODE_S : RV_MODE_U) +
                                 (virt ? RV_MODE_VU : 0));
    }
}

static void write_epc(enum rv_mode to, unsigned long epc)
{
    if (to == RV_MODE_M) {
        csr_write(CSR_MEPC, epc);
    } else {
        csr_write(CSR_SEPC, epc);
    }
}

static bool is_fetch_fault(unsigned long cause)
{
    return cause == CAUSE_MISALIGNED_FETCH || cause == CAUSE_FETCH_ACCESS ||
           cause == 12 || cause == 20;
}

static void print_trap(const char *what, const struct rv_trap *t)
{
    rv_printf("%s: cause 0x%lx epc 0x%lx tval 0x%lx from %s into %s\n", what,
              t->cause, t->epc, t->tval, rv_mode_name(t->from),
              rv_mode_name(t->to));
}

/*
 * Synchronous traps resume after the trapping instruction; a fetch fault
 * (there is no instruction) resumes at ra, i.e. returns from the call that
 * jumped to the bad address.
 */
static void handle_exception(unsigned long *frame, struct rv_trap *t)
{
    if (t->to == RV_MODE_M && leave_armed &&
        (t->cause == CAUSE_ECALL_U || t->cause == CAUSE_ECALL_S ||
         t->cause == CAUSE_ECALL_VS) && frame[REG_A7] == RV_ECALL_LEAVE_MODE) {
        leave_armed = false;
        rv_leave_mode(leave_ctx, frame[REG_A0]);
    }
    if (!trap_expected) {
        print_trap("FAIL unexpected trap", t);
        rv_checks_failed++;
        rv_exit(1);
    }
    trap_expected = false;
    trap_recorded = true;
    rv_last_trap = *t;
    rv_trap_count++;
    if (trap_hook) {
        trap_hook(t);
    }
    if (is_fetch_fault(t->cause)) {
        write_epc(t->to, frame[REG_RA]);
    } else {
        uint16_t low = *(volatile uint16_t *)t->epc;

        write_epc(t->to, t->epc + ((low & 3) == 3 ? 4 : 2));
    }
}

void rv_trap_handler(unsigned long *frame, enum rv_mode to)
{
    struct rv_trap t;

    read_trap(&t, to);
    if (t.cause & CAUSE_IRQ_FLAG) {
        unsigned irq = t.cause & ~CAUSE_IRQ_FLAG;

        if (irq >= RV_XLEN || !irq_handlers[irq]) {
            print_trap("FAIL unexpected interrupt", &t);
            rv_checks_failed++;
            rv_exit(1);
        }
        irq_handlers[irq](irq);
        return;
    }
    handle_exception(frame, &t);
}

void rv_trap_expect(void)
{
    trap_recorded = false;
    trap_expected = true;
}

unsigned long rv_trap_cause(void)
{
    trap_expected = false;
    return trap_recorded ? rv_last_trap.cause : RV_NO_TRAP;
}

void rv_irq_set_handler(unsigned irq, rv_irq_handler fn)
{
    if (irq < RV_XLEN) {
        irq_handlers[irq] = fn;
    }
}

void rv_trap_set_hook(rv_trap_hook fn)
{
    trap_hook = fn;
}

/* ------------------------------------------------------------ modes */

unsigned long rv_run_in_mode(enum rv_mode mode,
                             unsigned long (*fn)(unsigned long),
                             unsigned long arg)
{
    bool mie = csr_read(CSR_MSTATUS) & MSTATUS_MIE;
    unsigned long ret;

    if (mode == RV_MODE_M) {
        return fn(arg);
    }
    if (mode >= RV_MODE_VU && !rv_has_ext('H')) {
        rv_printf("FAIL %s mode needs the H extension (-cpu ...,h=on)\n",
                  rv_mode_name(mode));
        rv_exit(1);
    }
    /*
     * No M-mode interrupt until the mret of rv_enter_mode(): its handler
     * would overwrite mepc and mstatus.MPP, set for the lower mode, and
     * the mret would then go to the wrong place in the wrong mode (in the
     * lower mode, M-mode interrupts are enabled whatever mstatus.MIE).
     */
    csr_clear(CSR_MSTATUS, MSTATUS_MIE);
    rv_mret_to_m();     /* mstatus.MPV = 0: mret below stays in V=0 */
    csr_clear(CSR_MSTATUS, MSTATUS_MPP);
    if (mode >= RV_MODE_VU) {
        csr_set(CSR_MSTATUS, (unsigned long)RV_MODE_S << MSTATUS_MPP_SHIFT);
    } else {
        csr_set(CSR_MSTATUS, (unsigned long)mode << MSTATUS_MPP_SHIFT);
    }
    rv_current_mode = mode;
    leave_armed = true;
    ret = rv_enter_mode(fn, arg, leave_ctx,
                        mode >= RV_MODE_VU ? rv_hs_to_virt : rv_mode_trampoline,
                        mode == RV_MODE_VS);
    rv_current_mode = RV_MODE_M;
    if (mie) {
        csr_set(CSR_MSTATUS, MSTATUS_MIE);
    }
    return ret;
}

/* ----------------------------------------------------- CSR by number */

/* crt0.S: an accessor per CSR number, 8 bytes each */
extern const uint8_t rv_csr_read_table[], rv_csr_write_table[];

unsigned long rv_csr_read_num(unsigned csrno)
{
    unsigned long (*read)(unsigned long) =
        (void *)(rv_csr_read_table + 8 * (csrno & 0xfff));

    return read(0);         /* 0 if the read traps */
}

void rv_csr_write_num(unsigned csrno, unsigned long value)
{
    void (*write)(unsigned long) =
        (void *)(rv_csr_write_table + 8 * (csrno & 0xfff));

    write(value);
}

/* ------------------------------------------------------------ timer */

uint64_t rv_mtime(void)
{
#if __riscv_xlen == 64
    return *(volatile uint64_t *)CLINT_MTIME;
#else
    volatile uint32_t *mtime = (volatile uint32_t *)CLINT_MTIME;
    uint32_t hi, lo;

    do {
        hi = mtime[1];
        lo = mtime[0];
    } while (hi != mtime[1]);
    return ((uint64_t)hi << 32) | lo;
#endif
}

static void set_mtimecmp(uint64_t value)
{
#if __riscv_xlen == 64
    *(volatile uint64_t *)CLINT_MTIMECMP0 = value;
#else
    volatile uint32_t *cmp = (volatile uint32_t *)CLINT_MTIMECMP0;

    cmp[1] = 0xffffffff;        /* no spurious match while half written */
    cmp[0] = (uint32_t)value;
    cmp[1] = (uint32_t)(value >> 32);
#endif
}

void rv_timer_arm(uint64_t ticks)
{
    set_mtimecmp(rv_mtime() + ticks);
    csr_set(CSR_MIE, MIP_MTIP);
}

void rv_timer_disarm(void)
{
    csr_clear(CSR_MIE, MIP_MTIP);
    set_mtimecmp(~0ULL);
}

void rv_irq_enable(void)
{
    csr_set(CSR_MSTATUS, MSTATUS_MIE);
}

void rv_irq_disable(void)
{
    csr_clear(CSR_MSTATUS, MSTATUS_MIE);
}

bool rv_wait_until(volatile unsigned long *counter, unsigned long target,
                   uint64_t ticks)
{
    uint64_t start = rv_mtime();

    while (*counter < target) {
        if (rv_mtime() - start > ticks) {
            return false;
        }
    }
    return true;
}

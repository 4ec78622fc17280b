/*
 * rvtest: a bare-metal library for guest test programs on QEMU's "virt"
 * machine started with -bios none (RAM at 0x80000000, hart 0 runs main()).
 *
 * - output on the virt UART (ns16550a at 0x10000000);
 * - the verdict through the virt test finisher (sifive_test at 0x100000),
 *   so the QEMU exit status is the test result;
 * - CHECK macros that name the failing check, grouped by rv_rule();
 * - a trap framework: every trap lands in M (or in HS/VS when delegated),
 *   is recorded, and an expected trap skips the trapping instruction;
 * - rv_run_in_mode(): run a function in U, S, VS or VU mode and return;
 * - CSR access by number, at compile time and at run time;
 * - a machine-timer interrupt helper (CLINT).
 *
 * Builds for RV32 and RV64 (unsigned long is XLEN wide).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RVTEST_H
#define RVTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdarg.h>

#define RV_XLEN (__riscv_xlen)

/* ---------------------------------------------------------------- CSRs */

#define RV_STR_(x) #x
#define RV_STR(x) RV_STR_(x)

/* csr may be a name the assembler knows or a number (macro or literal). */
#define csr_read(csr) ({                                                \
    unsigned long v_;                                                   \
    asm volatile("csrr %0, " RV_STR(csr) : "=r"(v_) : : "memory");      \
    v_; })
#define csr_write(csr, val)                                             \
    asm volatile("csrw " RV_STR(csr) ", %0" : : "r"((unsigned long)(val)) \
                 : "memory")
#define csr_swap(csr, val) ({                                           \
    unsigned long v_;                                                   \
    asm volatile("csrrw %0, " RV_STR(csr) ", %1" : "=r"(v_)             \
                 : "r"((unsigned long)(val)) : "memory");               \
    v_; })
#define csr_set(csr, bits)                                              \
    asm volatile("csrs " RV_STR(csr) ", %0" : : "r"((unsigned long)(bits)) \
                 : "memory")
#define csr_clear(csr, bits)                                            \
    asm volatile("csrc " RV_STR(csr) ", %0" : : "r"((unsigned long)(bits)) \
                 : "memory")

/*
 * Run-time CSR number: a csrrs/csrrw instruction is generated and run, so
 * it traps exactly as the real instruction would (see rv_trap_expect()).
 */
unsigned long rv_csr_read_num(unsigned csrno);
void rv_csr_write_num(unsigned csrno, unsigned long value);

/* CSR numbers the library uses (the assembler may not know all of them). */
#define CSR_MSTATUS     0x300
#define CSR_MEDELEG     0x302
#define CSR_MIDELEG     0x303
#define CSR_MIE         0x304
#define CSR_MTVEC       0x305
#define CSR_MSTATUSH    0x310
#define CSR_MSCRATCH    0x340
#define CSR_MEPC        0x341
#define CSR_MCAUSE      0x342
#define CSR_MTVAL       0x343
#define CSR_MIP         0x344
#define CSR_MTINST      0x34a
#define CSR_MTVAL2      0x34b
#define CSR_SSTATUS     0x100
#define CSR_SIE         0x104
#define CSR_STVEC       0x105
#define CSR_SSCRATCH    0x140
#define CSR_SEPC        0x141
#define CSR_SCAUSE      0x142
#define CSR_STVAL       0x143
#define CSR_SIP         0x144
#define CSR_SATP        0x180
#define CSR_HSTATUS     0x600
#define CSR_HEDELEG     0x602
#define CSR_HIDELEG     0x603
#define CSR_HGATP       0x680
#define CSR_VSSTATUS    0x200
#define CSR_VSTVEC      0x205
#define CSR_VSSCRATCH   0x240
#define CSR_VSATP       0x280
#define CSR_MISA        0x301
#define CSR_MHARTID     0xf14
#define CSR_PMPCFG0     0x3a0
#define CSR_PMPADDR0    0x3b0

#define MSTATUS_MIE     (1UL << 3)
#define MSTATUS_MPP     (3UL << 11)
#define MSTATUS_MPP_SHIFT 11
#define MSTATUS_MPV_RV64 (1ULL << 39)   /* RV64: in mstatus */
#define MSTATUSH_MPV    (1UL << 7)      /* RV32: in mstatush */

/* Exception causes (privileged spec table 3.6). */
#define CAUSE_MISALIGNED_FETCH   0
#define CAUSE_FETCH_ACCESS       1
#define CAUSE_ILLEGAL_INSN       2
#define CAUSE_BREAKPOINT         3
#define CAUSE_MISALIGNED_LOAD    4
#define CAUSE_LOAD_ACCESS        5
#define CAUSE_MISALIGNED_STORE   6
#define CAUSE_STORE_ACCESS       7
#define CAUSE_ECALL_U            8
#define CAUSE_ECALL_S            9
#define CAUSE_ECALL_VS           10
#define CAUSE_ECALL_M            11
#define CAUSE_VIRTUAL_INSN       22
/* Interrupt numbers (the cause without the interrupt bit). */
#define IRQ_S_SOFT      1
#define IRQ_M_SOFT      3
#define IRQ_S_TIMER     5
#define IRQ_M_TIMER     7
#define IRQ_S_EXT       9
#define IRQ_M_EXT       11
#define IRQ_LCOF        13
#define CAUSE_IRQ_FLAG  (1UL << (RV_XLEN - 1))

/* --------------------------------------------------------------- output */

void rv_putc(char c);
void rv_puts(const char *s);
/* printf subset: %s %c %d %i %u %x %p %%, l/ll, width, 0 and - flags. */
int rv_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int rv_vprintf(const char *fmt, va_list ap);

/* -------------------------------------------------------------- verdict */

/* End the run: 0 passes, anything else fails with that exit status. */
void rv_exit(int code) __attribute__((noreturn));

/* The rule (spec sentence) the following checks belong to. */
void rv_rule(const char *name);

bool rv_check(bool ok, const char *expr, const char *file, int line);
bool rv_check_eq(unsigned long long actual, unsigned long long expected,
                 const char *actual_expr, const char *expected_expr,
                 const char *file, int line);

/* Each failed check prints "FAIL [rule] file:line: check ...". */
#define CHECK(cond) rv_check(!!(cond), #cond, __FILE__, __LINE__)
#define CHECK_EQ(actual, expected)                                      \
    rv_check_eq((unsigned long long)(actual),                           \
                (unsigned long long)(expected), #actual, #expected,     \
                __FILE__, __LINE__)

extern unsigned rv_checks_run, rv_checks_failed;

/* ---------------------------------------------------------------- modes */

enum rv_mode {
    RV_MODE_U = 0,
    RV_MODE_S = 1,      /* S, or HS when the H extension is present */
    RV_MODE_M = 3,
    RV_MODE_VU = 4,
    RV_MODE_VS = 5,
};

const char *rv_mode_name(enum rv_mode mode);

/*
 * Call fn(arg) in the given mode (from M mode) and return its result.
 * Address translation stays off (satp, vsatp, hgatp are not touched) and
 * PMP grants everything, so the function can use all of RAM and the
 * devices.  The return goes through an ecall handled by the library.
 */
unsigned long rv_run_in_mode(enum rv_mode mode,
                             unsigned long (*fn)(unsigned long),
                             unsigned long arg);

/* The mode the test code is running in (as rv_run_in_mode() set it). */
extern volatile enum rv_mode rv_current_mode;

/* ---------------------------------------------------------------- traps */

struct rv_trap {
    unsigned long cause;        /* xcause as read by the handler */
    unsigned long epc;
    unsigned long tval;
    unsigned long tval2;        /* mtval2, for traps into M with H */
    unsigned long tinst;        /* mtinst, for traps into M with H */
    enum rv_mode from;          /* mode that trapped */
    enum rv_mode to;            /* mode that took the trap: M, S or VS */
};

/* Returned by rv_trap_cause() when no trap was taken. */
#define RV_NO_TRAP (~0UL)

/*
 * Arm for one expected synchronous trap.  The handler records it in
 * rv_last_trap and resumes after the trapping instruction, in the mode
 * that trapped.  An unexpected trap fails the test with its details.
 */
void rv_trap_expect(void);
/* Cause of the trap recorded since rv_trap_expect(), or RV_NO_TRAP. */
unsigned long rv_trap_cause(void);

extern volatile struct rv_trap rv_last_trap;
extern volatile unsigned long rv_trap_count;

/* Check that stmt traps with the given cause (or with none). */
#define CHECK_TRAP(stmt, cause) do {                                    \
        rv_trap_expect();                                               \
        stmt;                                                           \
        rv_check_eq(rv_trap_cause(), (cause), #stmt " traps with",      \
                    #cause, __FILE__, __LINE__);                        \
    } while (0)
#define CHECK_NO_TRAP(stmt) CHECK_TRAP(stmt, RV_NO_TRAP)

/*
 * Interrupts: handler for interrupt number irq in the mode that takes it.
 * An interrupt without a handler fails the test.
 */
typedef void (*rv_irq_handler)(unsigned irq);
void rv_irq_set_handler(unsigned irq, rv_irq_handler fn);

/*
 * Hook for synchronous traps (e.g. to check state in the handler); called
 * for every recorded trap before resuming.  NULL to remove.
 */
typedef void (*rv_trap_hook)(const struct rv_trap *trap);
void rv_trap_set_hook(rv_trap_hook fn);

/* -------------------------------------------------------------- timer */

/* mtime of the virt CLINT (10 MHz). */
uint64_t rv_mtime(void);
/* Raise the machine timer interrupt ticks from now (enables MTIE). */
void rv_timer_arm(uint64_t ticks);
/* Clear MTIE and push mtimecmp out. */
void rv_timer_disarm(void);
/* Globally enable/disable M-mode interrupts (mstatus.MIE). */
void rv_irq_enable(void);
void rv_irq_disable(void);
/* Wait until *counter >= target; false if ticks of mtime passed first. */
bool rv_wait_until(volatile unsigned long *counter, unsigned long target,
                   uint64_t ticks);

/* -------------------------------------------------------- device tree */

/* The flattened device tree QEMU passed to hart 0 (a1 at reset). */
extern const void *rv_boot_fdt;

/*
 * Property prop of the node at path (e.g. "/cpus/cpu@0") of the boot
 * device tree; NULL if absent.  *len gets its length in bytes.
 */
const void *rv_fdt_prop(const char *path, const char *prop, unsigned *len);

/*
 * Whether name (e.g. "sscofpmf") is one of the '_'-separated extensions
 * of hart 0's riscv,isa string.
 */
bool rv_isa_has(const char *name);

/*
 * The kernel command line (-append, /chosen/bootargs) as words: what
 * follows key (e.g. "iters=") in the word that starts with it, or NULL.
 */
const char *rv_arg(const char *key);
/* Whether the word starting with key is exactly key followed by val. */
bool rv_arg_is(const char *key, const char *val);
/* The decimal number after key, or dflt if no word starts with key. */
unsigned long rv_arg_value(const char *key, unsigned long dflt);

/* --------------------------------------------------------------- misc */

/* misa as read in M mode at start-up: usable from every mode. */
extern unsigned long rv_misa;

static inline bool rv_has_ext(char letter)
{
    return rv_misa & (1UL << (letter - 'A'));
}

void *memset(void *s, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);

/* The test program's entry point, called in M mode on hart 0. */
int main(void);

#endif /* RVTEST_H */

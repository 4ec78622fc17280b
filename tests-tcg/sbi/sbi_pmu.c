/*
 * An S-mode payload of Debian's OpenSBI (fw_dynamic) that samples with the
 * SBI PMU extension, as a kernel's perf driver does: the events of the
 * virt device tree (docs/pmu.rst) reach the counters through the
 * firmware unchanged, the LCOFI is taken in S mode right after the
 * causal instruction (Ssplcofi), and shpmspc holds it (Sspesa, readable
 * in S mode because the firmware turns counter delegation on).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"

const void *rv_boot_fdt;

#define SBI_EXT_BASE            0x10
#define SBI_EXT_PMU             0x504d55
#define SBI_PMU_NUM_COUNTERS    0
#define SBI_PMU_COUNTER_INFO    1
#define SBI_PMU_CFG_MATCH       2
#define SBI_PMU_START           3
#define SBI_PMU_STOP            4
#define SBI_PMU_FW_READ         5

#define SBI_ERR_NOT_SUPPORTED   -2
#define SBI_ERR_INVALID_PARAM   -3
#define SBI_ERR_ALREADY_STARTED -7
#define SBI_ERR_ALREADY_STOPPED -8

#define CFG_CLEAR_VALUE         (1UL << 1)
#define CFG_SET_MINH            (1UL << 7)
#define START_SET_INIT_VALUE    (1UL << 0)

#define EV_BRANCH_INSTRUCTIONS  0x5         /* SBI hardware general */
#define EV_RAW                  0x20000     /* SBI raw event type */
#define EV_FW_MISALIGNED_LOAD   0xf0000     /* SBI firmware event 0 */

#define CSR_SHPMSPC             0x5e0
#define CSR_SHPMSDATA           0x5e1
#define LCOFIP                  (1UL << 13)

struct sbiret {
    long error;
    long value;
};

static struct sbiret sbi_call(unsigned long ext, unsigned long fid,
                              unsigned long a0, unsigned long a1,
                              unsigned long a2, unsigned long a3,
                              unsigned long a4, unsigned long a5)
{
    register unsigned long r0 asm("a0") = a0;
    register unsigned long r1 asm("a1") = a1;
    register unsigned long r2 asm("a2") = a2;
    register unsigned long r3 asm("a3") = a3;
    register unsigned long r4 asm("a4") = a4;
    register unsigned long r5 asm("a5") = a5;
    register unsigned long r6 asm("a6") = fid;
    register unsigned long r7 asm("a7") = ext;

    asm volatile("ecall" : "+r"(r0), "+r"(r1)
                 : "r"(r2), "r"(r3), "r"(r4), "r"(r5), "r"(r6), "r"(r7)
                 : "memory");
    return (struct sbiret){ (long)r0, (long)r1 };
}

/* A PMU call; a4 is 64 bits (event data): on RV32 its high half is a5. */
static struct sbiret pmu(unsigned long fid, unsigned long a0,
                         unsigned long a1, unsigned long a2,
                         unsigned long a3, uint64_t a4)
{
    return sbi_call(SBI_EXT_PMU, fid, a0, a1, a2, a3, (unsigned long)a4,
                    RV_XLEN == 32 ? (unsigned long)(a4 >> 32) : 0);
}

/* counter_start: the 64-bit value is a3 (RV32: a3 and a4). */
static struct sbiret pmu_start(unsigned long ctr, unsigned long flags,
                               uint64_t value)
{
    return sbi_call(SBI_EXT_PMU, SBI_PMU_START, ctr, 1, flags,
                    (unsigned long)value,
                    RV_XLEN == 32 ? (unsigned long)(value >> 32) : 0, 0);
}

/* ------------------------------------------------------------- traps */

static volatile unsigned long lcofi_epc, lcofi_spc, lcofi_sdata;
static volatile unsigned long lcofi_count;
static volatile long lcofi_counter = -1;

void sbi_trap(unsigned long *frame);
void sbi_trap(unsigned long *frame)
{
    unsigned long cause = csr_read(scause);

    (void)frame;
    if (cause != (CAUSE_IRQ_FLAG | IRQ_LCOF)) {
        rv_printf("FAIL unexpected trap: scause 0x%lx sepc 0x%lx\n", cause,
                  csr_read(sepc));
        rv_exit(1);
    }
    lcofi_epc = csr_read(sepc);
    lcofi_spc = csr_read(CSR_SHPMSPC);
    lcofi_sdata = csr_read(CSR_SHPMSDATA);
    lcofi_count++;
    /* as a perf driver does: stop the counter, clear the interrupt */
    if (lcofi_counter >= 0) {
        pmu(SBI_PMU_STOP, lcofi_counter, 1, 0, 0, 0);
    }
    csr_clear(sip, LCOFIP);
}

/*
 * 1000 iterations of three 4-byte instructions, the last a taken branch
 * but for the last iteration; the addresses of the loop and its branch.
 */
static void hot_loop(unsigned long *head, unsigned long *branch)
{
    unsigned long n = 1000;

    asm volatile(".option push\n"
                 ".option norvc\n"
                 "1: addi %0, %0, -1\n"
                 "xori t0, %0, 1\n"
                 "2: bnez %0, 1b\n"
                 ".option pop\n"
                 "lla %1, 1b\n"
                 "lla %2, 2b\n"
                 : "+r"(n), "=&r"(*head), "=&r"(*branch) : : "t0");
}

/* ------------------------------------------------------------- tests */

static unsigned long num_counters;
#define ALL_COUNTERS \
    (num_counters >= RV_XLEN ? ~0UL : (1UL << num_counters) - 1)

static void test_discovery(void)
{
    struct sbiret r = sbi_call(SBI_EXT_BASE, 3, SBI_EXT_PMU, 0, 0, 0, 0, 0);

    rv_rule("SBI: the PMU extension is there");
    CHECK_EQ(r.error, 0);
    CHECK(r.value != 0);

    r = pmu(SBI_PMU_NUM_COUNTERS, 0, 0, 0, 0, 0);
    rv_rule("SBI PMU: num_counters counts the 18 hardware counters");
    CHECK_EQ(r.error, 0);
    CHECK(r.value >= 18);
    num_counters = r.value;

    for (unsigned long i = 3; i < 19; i++) {
        r = pmu(SBI_PMU_COUNTER_INFO, i, 0, 0, 0, 0);
        rv_rule("SBI PMU: counter_get_info: hpmcounterN, 64 bits, hardware");
        CHECK_EQ(r.error, 0);
        CHECK_EQ(r.value & 0xfff, 0xc00 + i);
        CHECK_EQ((r.value >> 12) & 0x3f, 63);
        CHECK_EQ((unsigned long)r.value >> (RV_XLEN - 1), 0);
    }
}

/*
 * Configure a counter for the event, started near overflow, run the loop;
 * the LCOFI in S mode stops it.  Returns the counter.
 */
static long sample_loop(unsigned long event_idx, unsigned long event_data,
                        unsigned long *head, unsigned long *branch)
{
    struct sbiret r;

    r = pmu(SBI_PMU_CFG_MATCH, 0, ALL_COUNTERS,
            CFG_CLEAR_VALUE | CFG_SET_MINH, event_idx, event_data);
    CHECK_EQ(r.error, 0);
    if (r.error) {
        return -1;
    }
    lcofi_counter = r.value;
    lcofi_count = 0;
    csr_write(CSR_SHPMSPC, 0);
    csr_set(sie, LCOFIP);
    csr_set(sstatus, 1UL << 1);
    r = pmu_start(lcofi_counter, START_SET_INIT_VALUE, -500ULL);
    CHECK_EQ(r.error, 0);
    hot_loop(head, branch);
    csr_clear(sstatus, 1UL << 1);
    return lcofi_counter;
}

static void test_branches(void)
{
    unsigned long head, branch;
    long ctr = sample_loop(EV_BRANCH_INSTRUCTIONS, 0, &head, &branch);

    rv_printf("  BRANCH_INSTRUCTIONS on counter %ld: sample 0x%lx, sepc "
              "0x%lx\n", ctr, lcofi_spc, lcofi_epc);
    rv_rule("SBI PMU: BRANCH_INSTRUCTIONS on a programmable counter");
    CHECK(ctr >= 3);
    rv_rule("Ssplcofi: the LCOFI is taken in S mode once");
    CHECK_EQ(lcofi_count, 1);
    rv_rule("Sspesa: the sample is the branch of the loop");
    CHECK_EQ(lcofi_spc, branch);
    CHECK_EQ(lcofi_sdata, ctr);
    rv_rule("Ssplcofi: sepc is the taken branch's target");
    CHECK_EQ(lcofi_epc, head);
    rv_rule("SBI PMU: counter_stop of a stopped counter");
    CHECK_EQ(pmu(SBI_PMU_STOP, ctr, 1, 0, 0, 0).error,
             SBI_ERR_ALREADY_STOPPED);
}

static void test_raw(void)
{
    unsigned long head, branch;
    long ctr = sample_loop(EV_RAW, 0x100, &head, &branch);

    rv_printf("  raw 0x100 on counter %ld: sample 0x%lx, sepc 0x%lx\n", ctr,
              lcofi_spc, lcofi_epc);
    rv_rule("SBI PMU: raw event 0x100 (INST.DEC.SPEC) on a counter");
    CHECK(ctr >= 3);
    CHECK_EQ(lcofi_count, 1);
    rv_rule("Sspesa: the sample is an instruction of the loop");
    CHECK(lcofi_spc >= head && lcofi_spc <= branch);
    rv_rule("Ssplcofi: sepc is the next instruction after the sample");
    CHECK_EQ(lcofi_epc, lcofi_spc == branch ? head : lcofi_spc + 4);
}

static void test_errors(void)
{
    struct sbiret r;
    long ctr;

    rv_rule("SBI PMU: an unknown raw event is not supported");
    r = pmu(SBI_PMU_CFG_MATCH, 0, ALL_COUNTERS, 0, EV_RAW,
            0x123456);
    CHECK_EQ(r.error, SBI_ERR_NOT_SUPPORTED);

    rv_rule("SBI PMU: counters outside the mask are invalid");
    r = pmu_start(200, 0, 0);
    CHECK_EQ(r.error, SBI_ERR_INVALID_PARAM);

    r = pmu(SBI_PMU_CFG_MATCH, 0, ALL_COUNTERS,
            CFG_CLEAR_VALUE, EV_RAW, 0x300);
    CHECK_EQ(r.error, 0);
    ctr = r.value;
    CHECK_EQ(pmu_start(ctr, 0, 0).error, 0);
    rv_rule("SBI PMU: counter_start of a started counter");
    CHECK_EQ(pmu_start(ctr, 0, 0).error,
             SBI_ERR_ALREADY_STARTED);
    CHECK_EQ(pmu(SBI_PMU_STOP, ctr, 1, 1, 0, 0).error, 0);

    rv_rule("SBI PMU: counter_fw_read of a hardware counter is invalid");
    CHECK_EQ(pmu(SBI_PMU_FW_READ, 3, 0, 0, 0, 0).error,
             SBI_ERR_INVALID_PARAM);

    r = pmu(SBI_PMU_CFG_MATCH, 0, ALL_COUNTERS,
            CFG_CLEAR_VALUE, EV_FW_MISALIGNED_LOAD, 0);
    rv_rule("SBI PMU: a firmware event on a firmware counter");
    CHECK_EQ(r.error, 0);
    CHECK(r.value >= 19);
    ctr = r.value;
    CHECK_EQ(pmu_start(ctr, 0, 0).error, 0);
    rv_rule("SBI PMU: counter_fw_read reads it");
    r = pmu(SBI_PMU_FW_READ, ctr, 0, 0, 0, 0);
    CHECK_EQ(r.error, 0);
    CHECK_EQ(r.value, 0);
    CHECK_EQ(pmu(SBI_PMU_STOP, ctr, 1, 1, 0, 0).error, 0);
}

int main(void)
{
    test_discovery();
    test_branches();
    test_raw();
    test_errors();
    return 0;
}

/*
 * Workloads for the benchmarks (scripts/bench.sh, and bench-trace.sh,
 * bench-pmu.sh): integer kernels in the manner of CoreMark (list
 * processing, matrix, state machine, CRC), a sort, a call-heavy
 * recursion, a branch-heavy loop, and the CoreMark-like kernels run in S
 * and U mode in turn with a timer interrupt every millisecond.  Each
 * prints a checksum of its results.  The kernel command line (-append)
 * selects:
 *
 *   work=coremark|sort|recursion|branchy|os
 *                                  the workload (default coremark)
 *   iters=N                        repetitions (default 10)
 *   trace=F                        trace with trTeInstFeatures = F
 *                                  (decimal); absent: do not trace
 *   data=M                         and data accesses: tr_data_control()
 *   dfilter=D                      only those whose dtype has its bit
 *                                  set in D (decimal; 2: stores)
 *   syncmode=M syncmax=N           trTeControl InstSyncMode and
 *                                  InstSyncMax (default: reset values)
 *   sink=pib                       trace to the PIB sink only (machine
 *                                  option rvtrace-chardev)
 *   bufsize=N                      RAM sink buffer bytes (default 8 MiB)
 *   pmu=E period=N                 sample: mhpmcounter3 counts event E
 *                                  (decimal) and overflows every N
 *                                  events (default 100000); the LCOFI
 *                                  handler reloads it (scripts/bench-pmu.sh)
 *   count=E                        mhpmcounter3 counts event E
 *                                  (decimal) in every mode, from 0, with
 *                                  no overflow: "count C" at the end
 *   pdis=N                         PDIS samples every Nth instruction
 *                                  into a 64 KiB memory buffer in batch
 *                                  mode (OF=1): a LAMBI at each wrap,
 *                                  which the handler acknowledges
 *   record=draft|ratified          CTR records every transfer in M mode
 *                                  (ctr_record.h)
 *   irq=N seed=S irqmax=M          a machine timer interrupt every 1..N
 *                                  mtime ticks (pseudo-random from S),
 *                                  M of them at most (default 5000),
 *                                  into any workload but os: traps at
 *                                  many points of the code (the e2e
 *                                  suite's irq-stress cases)
 *
 * The packets go to hart 0's RAM sink, an 8 MiB buffer that wraps (free
 * RAM after the program: not in .bss, which crt0 would clear).  It
 * prints "work: NAME insns N ticks T bytes B wrapped W result R":
 * retired instructions (minstret: instructions under -icount shift=0),
 * mtime ticks and trace bytes of the workload, then "samples S pc hash
 * H" with pmu=, "count C" with count=, "pdis records R hash H" with
 * pdis= (hashes of the sampled and interrupted PCs, of the records).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"
#include "ctr_record.h"
#include "../pmu/pdis_test.h"
#include "../trace/rvtrace.h"

/* ------------------------------------------------------------ kernels */

struct node {
    struct node *next;
    unsigned key, val;
};

#define LIST_LEN 64
static struct node nodes[LIST_LEN];

static struct node *__attribute__((noinline)) list_reverse(struct node *l)
{
    struct node *r = NULL;

    while (l) {
        struct node *n = l->next;

        l->next = r;
        r = l;
        l = n;
    }
    return r;
}

static struct node *__attribute__((noinline)) list_find(struct node *l,
                                                        unsigned key)
{
    while (l && l->key != key) {
        l = l->next;
    }
    return l;
}

static unsigned list_work(unsigned seed)
{
    struct node *l = NULL;
    unsigned sum = 0;

    for (int i = 0; i < LIST_LEN; i++) {
        nodes[i].key = (i * 7 + seed) & 63;
        nodes[i].val = i;
        nodes[i].next = l;
        l = &nodes[i];
    }
    for (unsigned k = 0; k < 16; k++) {
        struct node *n = list_find(l, (k * 5 + seed) & 63);

        sum += n ? n->val : 1;
        l = list_reverse(l);
    }
    return sum;
}

#define MAT 8
static int ma[MAT][MAT], mb[MAT][MAT], mc[MAT][MAT];

static unsigned __attribute__((noinline)) matrix_work(unsigned seed)
{
    unsigned sum = 0;

    for (int i = 0; i < MAT; i++) {
        for (int j = 0; j < MAT; j++) {
            ma[i][j] = (int)(seed + i * j) & 15;
            mb[i][j] = (int)(seed ^ (i + j)) & 15;
        }
    }
    for (int i = 0; i < MAT; i++) {
        for (int j = 0; j < MAT; j++) {
            int acc = 0;

            for (int k = 0; k < MAT; k++) {
                acc += ma[i][k] * mb[k][j];
            }
            mc[i][j] = acc;
            sum += acc > 100 ? acc : -acc;
        }
    }
    return sum;
}

/* CoreMark-like number scanner: counts state transitions. */
enum { S_START, S_INT, S_FRAC, S_EXP, S_INVALID };

static const char *const inputs[] = {
    "5012", "1234", "-874", "+122", "35.54400", ".1234500", "-110.700",
    "+0.64400", "5.500e+3", "-.123e-2", "-87e+832", "+0.6e-12", "T0.3e-1F",
    "-T.T++Tq", "1T3.4e4z", "34.0e-T^",
};

static unsigned __attribute__((noinline)) state_step(unsigned s, char c)
{
    bool digit = c >= '0' && c <= '9';

    switch (s) {
    case S_START:
        return digit || c == '+' || c == '-' ? S_INT :
               c == '.' ? S_FRAC : S_INVALID;
    case S_INT:
        return digit ? S_INT : c == '.' ? S_FRAC :
               c == 'e' || c == 'E' ? S_EXP : S_INVALID;
    case S_FRAC:
        return digit ? S_FRAC : c == 'e' || c == 'E' ? S_EXP : S_INVALID;
    case S_EXP:
        return digit || c == '+' || c == '-' ? S_EXP : S_INVALID;
    default:
        return S_INVALID;
    }
}

static unsigned state_work(unsigned seed)
{
    unsigned count[S_INVALID + 1] = { 0 };

    for (unsigned i = 0; i < (sizeof(inputs) / sizeof(inputs[0])); i++) {
        const char *p = inputs[(i + seed) % (sizeof(inputs) / sizeof(inputs[0]))];
        unsigned s = S_START;

        for (; *p && s != S_INVALID; p++) {
            s = state_step(s, *p);
        }
        count[s]++;
    }
    return count[S_INT] * 3 + count[S_FRAC] * 5 + count[S_EXP] * 7;
}

static uint16_t __attribute__((noinline)) crc16(uint16_t crc, uint8_t data)
{
    for (int i = 0; i < 8; i++) {
        bool x = (data ^ crc) & 1;

        data >>= 1;
        crc = x ? (crc >> 1) ^ 0xa001 : crc >> 1;
    }
    return crc;
}

static unsigned coremark(unsigned seed)
{
    unsigned r = list_work(seed) + matrix_work(seed) + state_work(seed);
    uint16_t crc = 0;

    for (int i = 0; i < 4; i++) {
        crc = crc16(crc, (uint8_t)(r >> (8 * i)));
    }
    return crc;
}

#define SORT_LEN 256
static unsigned sort_data[SORT_LEN];

static void __attribute__((noinline)) quicksort(unsigned *a, int lo, int hi)
{
    while (lo < hi) {
        unsigned pivot = a[(lo + hi) / 2];
        int i = lo, j = hi;

        while (i <= j) {
            while (a[i] < pivot) {
                i++;
            }
            while (a[j] > pivot) {
                j--;
            }
            if (i <= j) {
                unsigned t = a[i];

                a[i++] = a[j];
                a[j--] = t;
            }
        }
        if (j - lo < hi - i) {
            quicksort(a, lo, j);
            lo = i;
        } else {
            quicksort(a, i, hi);
            hi = j;
        }
    }
}

static unsigned sort_work(unsigned seed)
{
    unsigned x = seed * 2654435761u + 1;

    for (int i = 0; i < SORT_LEN; i++) {
        x = x * 1103515245u + 12345u;
        sort_data[i] = x >> 8;
    }
    quicksort(sort_data, 0, SORT_LEN - 1);
    for (int i = 1; i < SORT_LEN; i++) {
        if (sort_data[i - 1] > sort_data[i]) {
            return 0;
        }
    }
    return sort_data[SORT_LEN / 2];
}

static unsigned __attribute__((noinline)) fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static unsigned recursion_work(unsigned seed)
{
    return fib(14 + (seed & 1));
}

/* Data-dependent branches on a xorshift sequence: hard to predict. */
static unsigned branchy_work(unsigned seed)
{
    unsigned x = seed * 2654435761u | 1, acc = 0;

    for (unsigned i = 0; i < 2048; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        if (x & 1) {
            acc += 3;
        } else {
            acc ^= x;
        }
        if (x & 2) {
            acc -= i;
        }
        if ((x & 12) == 4) {
            acc = (acc << 1) | (acc >> 31);
        } else if ((x & 12) == 8) {
            acc += x >> 7;
        }
        if (x & 0x100) {
            continue;
        }
        acc += i & 3;
    }
    return acc;
}

/*
 * An operating system's day: the CoreMark-like kernels in S mode and in
 * U mode in turn, the M-mode timer interrupting them every millisecond.
 */
#define OS_TICK     10000       /* mtime ticks: 1 ms */
static volatile unsigned long os_ticks;

static void os_timer(unsigned irq)
{
    (void)irq;
    os_ticks++;
    rv_timer_arm(OS_TICK);
}

static unsigned long os_kernel(unsigned long seed)
{
    return coremark(seed);
}

static unsigned os_work(unsigned seed)
{
    return rv_run_in_mode(seed & 1 ? RV_MODE_U : RV_MODE_S, os_kernel, seed);
}

static void os_start(void)
{
    rv_irq_set_handler(IRQ_M_TIMER, os_timer);
    rv_timer_arm(OS_TICK);
    rv_irq_enable();
}

/* Timer interrupts at pseudo-random points of any workload (irq=). */
static unsigned long stress_max, stress_left;
static uint64_t stress_seed;

/*
 * The next interrupt, up to irqmax= of them: mtime runs on the host's
 * clock, so a slow host (the execlog plugin, a busy machine) would
 * otherwise spend the run in the handler.
 */
static void stress_timer(unsigned irq)
{
    (void)irq;
    if (!stress_left--) {
        rv_timer_disarm();
        return;
    }
    stress_seed = stress_seed * 6364136223846793005ull +
                  1442695040888963407ull;
    rv_timer_arm(1 + (stress_seed >> 33) % stress_max);
}

static void stress_start(void)
{
    stress_max = rv_arg_value("irq=", 16) ?: 1;
    stress_seed = rv_arg_value("seed=", 1);
    stress_left = rv_arg_value("irqmax=", 5000);
    rv_irq_set_handler(IRQ_M_TIMER, stress_timer);
    stress_timer(IRQ_M_TIMER);
    rv_irq_enable();
}

/* -------------------------------------------------------------- trace */

#define RAM_BUF_SIZE rv_arg_value("bufsize=", 8 << 20)
extern uint8_t __heap_start[];
#define ram_buf __heap_start

#define TE_SYNC_FIELDS (TE_SYNC_MODE(3) | TE_SYNC_MAX(15))

static void trace_start(uint32_t features, bool pib)
{
    unsigned long enc = TR_ENC(0);
    uint32_t control;

    if (!pib) {
        tr_sink_smem(0, ram_buf, RAM_BUF_SIZE, 0);
    }
    /* N-trace in InstMode 3 (BTM) or 6 (HTM) */
    tr_encoder_setup(0, features, rv_arg("ntrace=") ?
                     TE_FORMAT(TE_FORMAT_NTRACE) |
                     TE_INST_MODE(rv_arg_value("ntrace=", 6) & 7) : 0);
    control = te_control(enc);
    if (rv_arg("syncmode=")) {
        control = (control & ~TE_SYNC_FIELDS) |
                  TE_SYNC_MODE(rv_arg_value("syncmode=", 1) & 3) |
                  TE_SYNC_MAX(rv_arg_value("syncmax=", 4) & 15);
    }
    if (rv_arg("data=")) {
        tr_write(enc, TE_DATA_CONTROL,
                 tr_data_control(rv_arg_value("data=", 1)));
    }
    if (rv_arg("dfilter=")) {
        tr_data_filter_dtypes(enc, rv_arg_value("dfilter=", 0));
    }
    tr_write(enc, TR_CONTROL, control | TE_INST_TRACING);
}

/*
 * The end-to-end tests (tests-e2e/e2e_save.c) link a definition that
 * saves the RAM sink's buffer on the host; the benchmark has none.
 */
void e2e_save_trace(const uint8_t *buf, unsigned long size,
                    unsigned long wp, bool wrapped) __attribute__((weak));

static unsigned long rdinstret(void)
{
    unsigned long v;

    asm volatile("csrr %0, minstret" : "=r"(v));
    return v;
}

/* --------------------------------------------------------- sampling */

static unsigned long pmu_event, pmu_period;
static volatile unsigned long pmu_samples, pmu_pc_hash;

/* Sspesa's shpmspc (0x5e0), where the sample's instruction is */
#define CSR_SHPMSPC 0x5e0

/*
 * As a profiler's overflow handler: count, reload, clear OF and LCOFIP.
 * A hash of the sampled PCs and the interrupted ones (Ssplcofi: right
 * after the sample) tells runs with different blocks apart.
 */
static void pmu_overflow(unsigned irq)
{
    (void)irq;
    pmu_samples++;
    pmu_pc_hash = pmu_pc_hash * 31 + csr_read(CSR_SHPMSPC);
    pmu_pc_hash = pmu_pc_hash * 31 + csr_read(mepc);
    csr_write(mhpmcounter3, -pmu_period);
    csr_write(mhpmevent3, pmu_event);
    csr_clear(mip, 1UL << IRQ_LCOF);
}

/* PDIS (docs/pdis.rst) in batch mode: records wrap in pdis_buf. */
#define PDIS_BUF_SIZE       65536

static uint8_t pdis_buf[PDIS_BUF_SIZE] __attribute__((aligned(PDIS_BUF_SIZE)));
static volatile unsigned long pdis_wraps;

static void pdis_lambi(unsigned irq)
{
    (void)irq;
    pdis_wraps++;
    csr_clear(CSR_SPDISAMBCS, AMB_BMI);
    csr_clear(mip, LAMBIP);
}

static void pdis_start(void)
{
    uint32_t period = rv_arg_value("pdis=", 100000);

    /* M, MEM, OF (batch), every instruction; EN, 64 KiB, BMI at the wrap */
    pdis_write(CSR_MPDISCTL, PDIS_M | PDIS_MEM | PDIS_OF | PDIS_SEL_ALL);
    pdis_write(CSR_SPDISCOUNTER, pdis_counter(period, period));
    csr_write(CSR_SPDISAMBADDR, (unsigned long)pdis_buf);
    pdis_write(CSR_SPDISAMBCS, AMB_EN | AMB_SIZE(4) | AMB_BMITH(0) |
                               AMB_BMIEN);
    rv_irq_set_handler(IRQ_LAMBI, pdis_lambi);
    csr_set(mie, LAMBIP);
    rv_irq_enable();
    csr_clear(mcountinhibit, 2);
}

static unsigned long pdis_records(void)
{
    unsigned long used = csr_read(CSR_SPDISAMBADDR) - (unsigned long)pdis_buf;

    return (pdis_wraps * PDIS_BUF_SIZE + used) / PDIS_RECORD_SIZE;
}

/* A hash of the buffer's records (the latest 64 KiB of them) */
static unsigned long pdis_hash(void)
{
    const unsigned long *w = (const unsigned long *)pdis_buf;
    unsigned long h = 0;

    for (size_t i = 0; i < PDIS_BUF_SIZE / sizeof(*w); i++) {
        h = h * 31 + w[i];
    }
    return h;
}

static void pmu_start(void)
{
    pmu_event = rv_arg_value("pmu=", 0);
    pmu_period = rv_arg_value("period=", 100000);
    rv_irq_set_handler(IRQ_LCOF, pmu_overflow);
    csr_write(mhpmevent3, pmu_event);
    csr_write(mhpmcounter3, -pmu_period);
    csr_set(mie, 1UL << IRQ_LCOF);
    rv_irq_enable();
    csr_clear(mcountinhibit, 1UL << 3);
}

int main(void)
{
    unsigned (*work)(unsigned) = coremark;
    const char *name = "coremark";
    unsigned long iters, insns;
    uint64_t ticks;
    unsigned result = 0;
    unsigned long bytes = 0, wrapped = 0;
    bool tracing, pib;
    int record;

    if (rv_arg_is("work=", "sort")) {
        work = sort_work;
        name = "sort";
    } else if (rv_arg_is("work=", "recursion")) {
        work = recursion_work;
        name = "recursion";
    } else if (rv_arg_is("work=", "branchy")) {
        work = branchy_work;
        name = "branchy";
    } else if (rv_arg_is("work=", "os")) {
        work = os_work;
        name = "os";
        os_start();
    }
    iters = rv_arg_value("iters=", 10);
    tracing = rv_arg("trace=") != NULL;
    pib = rv_arg_is("sink=", "pib");
    if (tracing) {
        trace_start(rv_arg_value("trace=", 0), pib);
    }
    if (rv_arg("pmu=")) {
        pmu_start();
    } else if (rv_arg("count=")) {
        csr_write(mhpmevent3, rv_arg_value("count=", 0));
        csr_write(mhpmcounter3, 0);
        csr_clear(mcountinhibit, 1UL << 3);
    }
    if (rv_arg("pdis=")) {
        pdis_start();
    }
    record = ctr_record_arg();
    if (record != RECORD_NONE) {
        ctr_write_control(record, 0);
    }
    if (rv_arg("irq=") && work != os_work) {
        stress_start();         /* into the traced work only */
    }
    ticks = rv_mtime();
    insns = rdinstret();
    for (unsigned long i = 0; i < iters; i++) {
        result += work(i);
    }
    insns = rdinstret() - insns;
    ticks = rv_mtime() - ticks;
    ctr_stop(record);
    rv_timer_disarm();
    if (tracing) {
        tr_encoder_stop(0);
        CHECK_EQ(tr_read(TR_ENC(0), TR_CONTROL) & TE_STALL_OVERFLOW, 0);
        if (!pib) {
            bytes = tr_sink_used(0, ram_buf);
            wrapped = tr_read(TR_SINK(0), RAM_WP_LOW) & RAM_WRAP;
            if (e2e_save_trace) {
                e2e_save_trace(ram_buf, RAM_BUF_SIZE, bytes, wrapped);
            }
        }
    }
    csr_set(mcountinhibit, 1UL << 3 | 2);
    rv_printf("work: %s insns %lu ticks %lu bytes %lu wrapped %lu "
              "result %u\n", name, insns, (unsigned long)ticks, bytes,
              wrapped, result);
    if (rv_arg("pmu=")) {
        rv_printf("samples %lu pc hash %lx\n", pmu_samples, pmu_pc_hash);
    } else if (rv_arg("count=")) {
        rv_printf("count %lu\n", (unsigned long)csr_read(mhpmcounter3));
    }
    if (rv_arg("pdis=")) {
        rv_printf("pdis records %lu hash %lx\n", pdis_records(),
                  pdis_hash());
    }
    return 0;
}

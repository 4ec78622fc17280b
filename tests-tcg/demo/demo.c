/*
 * The project's demo guest: what the CPU offers, as the device tree QEMU
 * built for it says (riscv,isa of hart 0) and as its CSRs say, a CTR
 * history, and an E-trace of a small program, written by the hart's trace
 * encoder into a RAM sink buffer and unpacked here, and the data trace of
 * a small function.  Each feature of the
 * project extends it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"
#include "../pmu/pdis_test.h"
#include "etrace.h"
#include "etrace-data.h"
#include "ntrace.h"
#include "../trace/rvtrace.h"

#define CSR_MVENDORID 0xf11
#define CSR_MARCHID   0xf12
#define CSR_MIMPID    0xf13
#define CSR_MCTRCONTROL 0x381   /* CTR v0.1.4 draft */
#define CSR_MISELECT  0x350
#define CSR_MIREG     0x351
#define CSR_MIREG2    0x352
#define CSR_MIREG3    0x353

/* The extensions this project is about, as riscv,isa spells them. */
static const struct {
    const char *name;
    const char *what;
} watched[] = {
    { "smctr", "Control Transfer Records (ratified)" },
    { "xsmctrdraft", "Control Transfer Records (ctr=on: v0.1.4 draft)" },
    { "xssctrdraft", "Control Transfer Records, S-mode (draft)" },
    { "smcsrind", "indirect CSR access (CTR entries)" },
    { "sscofpmf", "counter overflow and privilege filtering" },
    { "sspesa", "the sample PC of a counter overflow (draft)" },
    { "ssplcofi", "the overflow interrupt right after it (draft)" },
    { "smpdis", "precise decoded instruction sampling (pdis=on: draft)" },
};

static const char *const ctr_type_names[16] = {
    "-", "exception", "interrupt", "trap return", "not-taken branch",
    "taken branch", "6?", "7?", "indirect call", "direct call",
    "indirect jump", "direct jump", "co-routine swap", "return",
    "other ind. jump", "other dir. jump",
};

static unsigned long __attribute__((noinline)) fib(unsigned long n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* ctrdata.CC as cycles: CCM, or (4096 + CCM) << (CCE - 1). */
static unsigned long ctr_cycles(unsigned long data)
{
    unsigned long ccm = (data >> 16) & 0xfff, cce = (data >> 28) & 0xf;

    return cce ? (4096 + ccm) << (cce - 1) : ccm;
}

/* Record fib(3) in M mode with every transfer type and print it. */
static void ctr_history(void)
{
    unsigned valid = 0;

    /*
     * An inline csrr, not rv_csr_read_num(): that one runs an instruction
     * written at run time, which the decoder cannot find in the ELF.
     */
    rv_trap_expect();
    (void)csr_read(CSR_MCTRCONTROL);
    if (rv_trap_cause() != RV_NO_TRAP) {
        rv_printf("  (no CTR v0.1.4: run with -cpu ...,ctr=on)\n");
        return;
    }
    rv_rule("demo: CTR records a call tree");
    csr_write(CSR_MCTRCONTROL, 1UL << 7);           /* CLR, depth 16 */
    csr_write(CSR_MCTRCONTROL, 1UL | (1ULL << 36)); /* M, all types */
    CHECK_EQ(fib(3), 2);
    csr_write(CSR_MCTRCONTROL, 0);

    rv_printf("  CTR history of fib(3) in M mode, newest first:\n");
    for (unsigned i = 0; i < 16; i++) {
        unsigned long src, dst, data;

        csr_write(CSR_MISELECT, 0x200 + i);
        src = csr_read(CSR_MIREG);
        dst = csr_read(CSR_MIREG2);
        data = csr_read(CSR_MIREG3);
        if (!(src & 1)) {
            break;
        }
        valid++;
        rv_printf("  %2u  %-16s 0x%08lx -> 0x%08lx  %s%lu cycles\n", i,
                  ctr_type_names[data & 0xf], src & ~1UL, dst,
                  data & (1UL << 15) ? "" : "~", ctr_cycles(data));
    }
    /* fib(3): 4 calls and 4 returns at least, plus their branches. */
    CHECK(valid >= 8);
}

static uint8_t trace_buf[4096] __attribute__((aligned(64)));

/* One line per packet, in the spec's terms. */
static void print_packet(const ETracePacket *p)
{
    static const char *const qual[] = {
        "no_change", "ended_rep", "trace_lost", "ended_upd"
    };

    switch (p->format << 2 | (p->format == 3 || p->format == 0 ?
                              p->subformat : 0)) {
    case 3 << 2 | 0:
        rv_printf("    format 3.0 sync       address 0x%lx priv %u\n",
                  (unsigned long)p->address, p->privilege);
        break;
    case 3 << 2 | 1:
        rv_printf("    format 3.1 exception  cause %lu handler 0x%lx "
                  "tvalepc 0x%lx\n", (unsigned long)p->ecause,
                  (unsigned long)p->address, (unsigned long)p->tvalepc);
        break;
    case 3 << 2 | 3:
        rv_printf("    format 3.3 support    enable %d %s options 0x%x\n",
                  p->enable, qual[p->qual_status & 3], (unsigned)p->options);
        break;
    case 2 << 2:
        rv_printf("    format 2   address    %ld\n", (long)p->address);
        break;
    case 1 << 2:
        rv_printf("    format 1   branches %u map 0x%x%s", p->branches,
                  (unsigned)p->branch_map, p->has_address ? "" : "\n");
        if (p->has_address) {
            rv_printf(" address %ld\n", (long)p->address);
        }
        break;
    default:
        rv_printf("    format %u.%u\n", p->format, p->subformat);
    }
}

/* The N-trace messages of buf[0..used), as the guest reads them. */
static unsigned long print_ntrace(const uint8_t *buf, unsigned long used)
{
    NTraceParams params = { .xlen = __riscv_xlen };
    unsigned long pos = 0, messages = 0;

    while (pos < used && buf[pos] != NTRACE_IDLE) {
        NTraceMessage m;
        const char *err = "";
        int n = ntrace_message_unpack(&params, buf + pos, used - pos, &m,
                                      &err);

        CHECK(n > 0);
        if (n <= 0) {
            rv_printf("    bad message at byte %lu: %s\n", pos, err);
            break;
        }
        rv_printf("    %-22s I-CNT %lu  address field 0x%lx\n",
                  ntrace_tcode_name(m.tcode), (unsigned long)m.icnt,
                  (unsigned long)m.addr);
        pos += n;
        messages++;
    }
    return messages;
}

/*
 * Trace fib(5) into the RAM sink of hart 0 and show the packets (or the
 * messages, when trTeFormat defaults to N-trace: format=ntrace).
 */
static void trace_demo(void)
{
    volatile uint32_t *ctl = (volatile uint32_t *)(TR_ENC(0) + TR_CONTROL);
    ETraceParams params;
    ETraceOptions opts = { 0 };
    unsigned long used, pos = 0, packets = 0;
    unsigned len;
    bool ntrace;

    if (!rv_fdt_prop("/soc/trace@3100000", "compatible", &len)) {
        rv_printf("  (no trace encoder: run with -machine virt,rvtrace=on)\n");
        return;
    }
    rv_rule("demo: a traced program");
    /* the encoder first: it may be tracing from reset (rvtrace-chardev) */
    tr_encoder_setup(0, 0, 0);
    tr_sink_smem(0, trace_buf, sizeof(trace_buf), 0);
    tr_discover(0, &params);
    ntrace = (te_control(TR_ENC(0)) & TE_FORMAT_FIELD) ==
             TE_FORMAT(TE_FORMAT_NTRACE);
    *ctl = te_control(TR_ENC(0)) | TE_INST_TRACING;
    CHECK_EQ(fib(5), 5);
    tr_encoder_stop(0);
    used = tr_sink_used(0, trace_buf);
    rv_printf("  %s of fib(5), %lu bytes in the RAM sink:\n",
              ntrace ? "N-trace" : "E-trace", used);
    if (ntrace) {
        /* ProgTraceSync, fib's returns, ProgTraceCorrelation */
        CHECK(print_ntrace(trace_buf, used) >= 3);
        return;
    }
    while (pos < used) {
        ETracePacket p;
        const char *err = "";
        int n = etrace_packet_unpack(&params, &opts, trace_buf + pos,
                                     used - pos, &p, &err);

        CHECK(n > 0);
        if (n <= 0) {
            rv_printf("    bad packet at byte %lu: %s\n", pos, err);
            break;
        }
        pos += n;
        if (p.padding) {
            continue;
        }
        if (p.format == 3 && p.subformat == 3) {
            etrace_options_unpack(&params, p.options, &opts);
        }
        print_packet(&p);
        packets++;
    }
    /* A support packet, a sync, fib's returns, a support packet */
    CHECK(packets >= 4);
    CHECK_EQ(tr_read(TR_ENC(0), TR_CONTROL) & TE_STALL_OVERFLOW, 0);
}

/* A small function whose loads and stores the data trace shows. */
static long __attribute__((noinline)) running_dot(const int *a, const int *b,
                                                  long *out, int n)
{
    long sum = 0;

    for (int i = 0; i < n; i++) {
        sum += (long)a[i] * b[i];
        out[i] = sum;
    }
    return sum;
}

/*
 * Trace running_dot() with data trace on and show its accesses: the
 * data packets (flow 3 in the header) among the instruction packets.
 */
static void data_trace_demo(void)
{
    static const int a[4] = { 3, -1, 4, 1 }, b[4] = { 5, 9, 2, 6 };
    static long out[4];
    ETraceParams params;
    ETraceOptions opts = { 0 };
    ETraceDataState st = { 0 };
    ETraceDataAccess acc;
    unsigned long used, pos = 0, loads = 0, stores = 0;

    if ((te_control(TR_ENC(0)) & TE_FORMAT_FIELD) ==
        TE_FORMAT(TE_FORMAT_NTRACE)) {
        return;     /* data trace is E-trace's */
    }
    rv_rule("demo: data trace");
    tr_encoder_setup(0, 0, 0);
    tr_sink_smem(0, trace_buf, sizeof(trace_buf), 0);
    tr_discover(0, &params);
    tr_write(TR_ENC(0), TE_DATA_CONTROL, tr_data_control(1));
    tr_write(TR_ENC(0), TR_CONTROL, te_control(TR_ENC(0)) | TE_INST_TRACING);
    CHECK_EQ(running_dot(a, b, out, 4), 20);
    tr_encoder_stop(0);
    used = tr_sink_used(0, trace_buf);
    rv_printf("  data trace of running_dot(), %lu bytes in the RAM sink:\n",
              used);
    while (tr_next_data_access(&params, &opts, &st, trace_buf, used, &pos,
                               &acc)) {
        bool store = acc.dtype == ETRACE_DTYPE_STORE;

        /* running_dot()'s own; then the code that stops the trace */
        if (loads + stores < 12) {
            rv_printf("    %-5s %u bytes [0x%lx] %s 0x%lx\n",
                      store ? "store" : "load", 1u << acc.dsize,
                      (unsigned long)acc.daddr, store ? "<-" : "=",
                      (unsigned long)acc.data);
        }
        loads += acc.dtype == ETRACE_DTYPE_LOAD;
        stores += store;
    }
    rv_printf("    ... %lu loads and %lu stores in all, the code that stops "
              "the trace included\n", loads, stores);
    /* a[i] and b[i], out[i] */
    CHECK(loads >= 8 && stores >= 4);
}

/* -------------------------------------------------- PMU sampling */

#define CSR_SHPMSPC     0x5e0
#define EV_INST_DEC     0x100       /* INST.DEC.SPEC (docs/pmu.rst) */
#define SAMPLE_PERIOD   997
#define NSAMPLES        12

static volatile unsigned long samples[NSAMPLES], nsamples;

/* A profiler's overflow handler: take the sample, reload the counter. */
static void sample_handler(unsigned irq)
{
    (void)irq;
    if (nsamples < NSAMPLES) {
        samples[nsamples++] = csr_read(CSR_SHPMSPC);
    }
    csr_write(mhpmcounter3, -SAMPLE_PERIOD);
    csr_write(mhpmevent3, EV_INST_DEC);     /* clears OF */
    csr_clear(mip, 1UL << IRQ_LCOF);
}

static unsigned __attribute__((noinline)) mix(unsigned x)
{
    return (x ^ (x >> 7)) * 0x9e3779b1u;
}

static unsigned __attribute__((noinline)) hot_loop(unsigned n)
{
    unsigned acc = 0;

    for (unsigned i = 0; i < n; i++) {
        acc += mix(i + acc);
    }
    return acc;
}

static void pmu_sampling(void)
{
    unsigned result;

    if (!rv_isa_has("sspesa")) {
        rv_printf("  (no Sspesa: run with -cpu ...,sscofpmf=on,sspesa=on)\n");
        return;
    }
    rv_irq_set_handler(IRQ_LCOF, sample_handler);
    csr_write(mhpmevent3, EV_INST_DEC);
    csr_write(mhpmcounter3, -SAMPLE_PERIOD);
    csr_set(mie, 1UL << IRQ_LCOF);
    rv_irq_enable();
    csr_clear(mcountinhibit, 1UL << 3);
    result = hot_loop(2000);
    csr_set(mcountinhibit, 1UL << 3);
    rv_irq_disable();
    rv_printf("  hot_loop(2000) = %u, sampled every %u decoded "
              "instructions:\n", result, SAMPLE_PERIOD);
    for (unsigned long i = 0; i < nsamples; i++) {
        rv_printf("  sample 0x%lx\n", samples[i]);
    }
}

/* -------------------------------------------------- PDIS sampling */

#define PDIS_PERIOD         101

static uint8_t pdis_buf[65536] __attribute__((aligned(65536)));
static volatile uint32_t small_table[1024];            /* 4 KiB */
static volatile uint32_t large_table[256 * 1024];      /* 1 MiB */

/* Loads that stay in 4 KiB, and loads that stride across 1 MiB. */
static unsigned __attribute__((noinline)) walk_small(unsigned n)
{
    unsigned acc = 0;

    for (unsigned i = 0; i < n; i++) {
        acc += small_table[(i * 7) & 1023];
    }
    return acc;
}

static unsigned __attribute__((noinline)) walk_large(unsigned n)
{
    unsigned acc = 0;

    for (unsigned i = 0; i < n; i++) {
        acc += large_table[(i * 1031) & (256 * 1024 - 1)];
        large_table[(i * 17) & (256 * 1024 - 1)] = acc;
    }
    return acc;
}


/*
 * Every 101st load or store into a 64 KiB buffer (batch mode: OF=1, no
 * interrupt), then the records as hexadecimal lines for the host's
 * pdis-profile (scripts/demo.sh).
 */
static void pdis_profile(void)
{
    unsigned long end, n;
    unsigned result;

    if (!rv_isa_has("smpdis")) {
        rv_printf("  (no PDIS: run with -cpu ...,pdis=on)\n");
        return;
    }
    for (unsigned i = 0; i < 1024; i++) {
        small_table[i] = i;
    }
    csr_set(mcountinhibit, 2);
    /* M, OF (batch), MEM, loads and stores; every 101st; EN, 64 KiB */
    pdis_write(CSR_MPDISCTL, PDIS_M | PDIS_OF | PDIS_MEM | PDIS_SEL_LDST);
    pdis_write(CSR_SPDISCOUNTER, pdis_counter(PDIS_PERIOD, PDIS_PERIOD));
    csr_write(CSR_SPDISAMBADDR, (unsigned long)pdis_buf);
    pdis_write(CSR_SPDISAMBCS, AMB_EN | AMB_SIZE(4));
    csr_clear(mcountinhibit, 2);
    result = walk_small(20000) + walk_large(20000);
    csr_set(mcountinhibit, 2);
    end = csr_read(CSR_SPDISAMBADDR);
    n = (end - (unsigned long)pdis_buf) / PDIS_RECORD_SIZE;
    rv_printf("  walk_small + walk_large = %u; PDIS sampled every %u loads "
              "and stores: %lu records\n", result, PDIS_PERIOD, n);
    for (unsigned long i = 0; i < n; i++) {
        rv_printf("pdis-record ");
        for (unsigned b = 0; b < PDIS_RECORD_SIZE; b++) {
            rv_printf("%02x", pdis_buf[i * PDIS_RECORD_SIZE + b]);
        }
        rv_printf("\n");
    }
}

int main(void)
{
    unsigned len;
    const char *isa = rv_fdt_prop("/cpus/cpu@0", "riscv,isa", &len);

    rv_printf("rvpa demo: QEMU virt, hart %lu, RV%d\n",
              csr_read(CSR_MHARTID), RV_XLEN);
    rv_printf("  mvendorid 0x%lx marchid 0x%lx mimpid 0x%lx\n",
              csr_read(CSR_MVENDORID), csr_read(CSR_MARCHID),
              csr_read(CSR_MIMPID));
    CHECK(isa != NULL);
    if (!isa) {
        return 1;
    }
    rv_printf("  riscv,isa = %s\n", isa);
    for (unsigned i = 0; i < sizeof(watched) / sizeof(watched[0]); i++) {
        rv_printf("  %-12s %s  %s\n", watched[i].name,
                  rv_isa_has(watched[i].name) ? "yes" : "no ",
                  watched[i].what);
    }
    ctr_history();
    pmu_sampling();
    pdis_profile();
    trace_demo();
    data_trace_demo();
    return 0;
}

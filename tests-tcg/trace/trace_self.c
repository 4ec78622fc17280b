/*
 * A guest that traces itself: its hart's encoder writes E-trace packets
 * into a RAM sink buffer in guest memory, and the guest unpacks them with
 * the project's codec and checks what E-trace v1.1.1 says they must be.
 *
 * - discovery: device-tree nodes and Impl registers of the components;
 * - a function with a three-iteration loop and a return: support packet
 *   (enable), sync at its first instruction (format 3.0, privilege M),
 *   the return's target in a format 1 packet carrying the three branch
 *   outcomes, and a final support packet (enable = 0);
 * - traps: format 3.1 packets with the cause, the handler's address and
 *   tvalepc (the faulting address for illegal instructions, 6.3.1);
 * - context: with trTeContext, a new satp.ASID is reported in a format
 *   3.2 packet (the implementation's context source, docs/rvtrace.rst);
 *   without it, never;
 * - trace-lost: a full StopOnWrap buffer sets StallOrOverflow and the
 *   sink stops;
 * - data trace: the data packets of a CSR read-modify-write, an AMO and
 *   an LR/SC pair whose destination is also a source (the operand and
 *   the stored value are the register's value before the instruction).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"
#include "etrace.h"
#include "etrace-data.h"
#include "rvtrace.h"

#define MAX_PACKETS 64

static uint8_t tbuf[2048] __attribute__((aligned(64)));
static ETracePacket pkts[MAX_PACKETS];
static ETraceParams params;

/* The function traced: t0 = 3; loop until 0 (T, T, NT); return. */
extern char traced_loop[], traced_illegal[], traced_illegal_insn[],
    traced_ebreak[], traced_ebreak_insn[], trace_return_point[];
asm(".pushsection .text\n"
    ".option push\n"
    ".option norvc\n"
    ".balign 4\n"
    "traced_loop:\n"
    "   li t0, 3\n"
    "1: addi t0, t0, -1\n"
    "   bnez t0, 1b\n"
    "   ret\n"
    "traced_illegal:\n"
    "   nop\n"
    "traced_illegal_insn:\n"
    "   .word 0xc0001073\n"     /* unimp (csrrw x0, cycle, x0): illegal */
    "   ret\n"
    "traced_ebreak:\n"
    "   nop\n"
    "traced_ebreak_insn:\n"
    "   ebreak\n"
    "   ret\n"
    ".option pop\n"
    ".popsection\n");

/* The data trace's function: every destination is also a source. */
static uint32_t data_cell __attribute__((aligned(8), used)) = 3;
extern char traced_data[];
asm(".pushsection .text\n"
    ".balign 4\n"
    "traced_data:\n"
    "   lla a1, data_cell\n"
    "   li t0, 0x55\n"
    "   csrrw t0, mtval, t0\n"         /* read 0x1234, write 0x55 */
    "   li a0, 7\n"
    "   amoswap.w a0, a0, (a1)\n"      /* read 3, write 7 */
    "   lr.w a0, (a1)\n"               /* read 7 */
    "   li a0, 9\n"
    "   sc.w a0, a0, (a1)\n"           /* write 9 */
    "   ret\n"
    ".popsection\n");

/*
 * Turn InstTracing on and call fn from the same TB, so that the first
 * traced block is fn's; trace_return_point is where fn returns to.
 */
static void trace_call(void (*fn)(void))
{
    volatile uint32_t *ctl = (volatile uint32_t *)(TR_ENC(0) + TR_CONTROL);
    uint32_t on = te_control(TR_ENC(0)) | TE_INST_TRACING;

    asm volatile(".option push\n"
                 ".option norvc\n"
                 "sw %0, 0(%1)\n"
                 "jalr %2\n"
                 ".global trace_return_point\n"
                 "trace_return_point:\n"
                 "nop\n"
                 ".option pop\n"
                 : : "r"(on), "r"(ctl), "r"(fn)
                 : "ra", "t0", "memory");
    tr_encoder_stop(0);
}

/* Unpack the sink's bytes; returns the number of packets. */
static int unpack_all(unsigned long used)
{
    ETraceOptions opts = { 0 };
    unsigned long pos = 0;
    int n = 0;

    while (pos < used && n < MAX_PACKETS) {
        const char *err = "";
        int len = etrace_packet_unpack(&params, &opts, tbuf + pos,
                                       used - pos, &pkts[n], &err);

        if (len <= 0) {
            rv_printf("packet %d at byte %lu: %s\n", n, pos, err);
            CHECK(len > 0);
            return n;
        }
        pos += len;
        if (pkts[n].padding) {
            continue;
        }
        if (pkts[n].format == 3 && pkts[n].subformat == 3) {
            etrace_options_unpack(&params, pkts[n].options, &opts);
        }
        n++;
    }
    return n;
}

/* Trace fn with these Control bits; the number of packets in pkts[]. */
static int trace_fn_control(void (*fn)(void), uint32_t control)
{
    memset(tbuf, 0xa5, sizeof(tbuf));
    tr_sink_smem(0, tbuf, sizeof(tbuf), 0);
    tr_encoder_setup(0, 0, control);
    trace_call(fn);
    CHECK_EQ(tr_read(TR_ENC(0), TR_CONTROL) & TE_STALL_OVERFLOW, 0);
    return unpack_all(tr_sink_used(0, tbuf));
}

/* Trace fn with default options. */
static int trace_fn(void (*fn)(void))
{
    return trace_fn_control(fn, 0);
}

static bool is_support(const ETracePacket *p, bool enable)
{
    return p->format == 3 && p->subformat == 3 && p->enable == enable;
}

static void check_discovery(void)
{
    unsigned len;
    const uint32_t *cpus;
    const char *compat;

    compat = rv_fdt_prop("/soc/trace@3100000", "compatible", &len);
    CHECK(compat && strlen(compat) + 1 < len);
    CHECK(compat && memcmp(compat, "qemu,trace-component", 21) == 0);
    CHECK(compat && memcmp(compat + 21, "riscv,trace-component", 22) == 0);
    cpus = rv_fdt_prop("/soc/trace@3100000", "cpus", &len);
    CHECK(cpus && len == 4);
    CHECK(rv_fdt_prop("/soc/trace@3100000/out-ports/port@0/endpoint",
                      "remote-endpoint", &len) != NULL);
    CHECK(rv_fdt_prop("/soc/trace@3101000/in-ports/port@0/endpoint",
                      "remote-endpoint", &len) != NULL);
    CHECK_EQ(tr_read(TR_ENC(0), TR_IMPL) & 0xfff, 0x101);
    CHECK_EQ(tr_read(TR_SINK(0), TR_IMPL) & 0xfff, 0x901);

    /* The codec's parameters as the encoder reports them */
    tr_reset(TR_ENC(0));
    tr_discover(0, &params);
    CHECK_EQ(params.iaddress_width_p, RV_XLEN);
    CHECK_EQ(params.iaddress_lsb_p, 1);
    CHECK(params.ecause_width_p >= 5);
    CHECK_EQ(params.privilege_width_p, 3);
    /* satp.ASID: 16 bits on RV64, 9 on RV32 */
    CHECK_EQ(params.context_width_p, RV_XLEN == 64 ? 16 : 9);
    CHECK_EQ(params.arch, ETRACE_ARCH_1_1);
}

static void check_loop(void)
{
    uint64_t mask = RV_XLEN == 32 ? 0xffffffffULL : ~0ULL;
    unsigned long call = (unsigned long)trace_return_point - 4;
    unsigned long fn = (unsigned long)traced_loop;
    int n = trace_fn((void (*)(void))traced_loop);
    int i = 2;

    CHECK(n >= 4);
    CHECK(is_support(&pkts[0], true));
    /*
     * First traced instruction: format 3 subformat 0, M mode.  Tracing
     * starts at a block boundary after the Control write: at the call
     * (jalr) or at its target.
     */
    CHECK_EQ(pkts[1].format, 3);
    CHECK_EQ(pkts[1].subformat, 0);
    CHECK_EQ(pkts[1].privilege, 3);
    CHECK_EQ(pkts[1].branch, 1);
    CHECK(pkts[1].address == call || pkts[1].address == fn);
    if (pkts[1].address == call) {
        /* The call is uninferable: its target, differential */
        CHECK_EQ(pkts[2].format, 2);
        CHECK_EQ(pkts[2].address & mask, (fn - call) & mask);
        i = 3;
    }
    /* The return: taken, taken, not taken, then its target */
    CHECK(n > i);
    CHECK_EQ(pkts[i].format, 1);
    CHECK_EQ(pkts[i].branches, 3);
    CHECK_EQ(pkts[i].branch_map, 4);
    CHECK_EQ(pkts[i].address & mask,
             ((unsigned long)trace_return_point - fn) & mask);
    CHECK(is_support(&pkts[n - 1], false));
    for (i = 0; i < n; i++) {
        CHECK(!(pkts[i].format == 3 && pkts[i].subformat == 3 &&
                pkts[i].qual_status == ETRACE_QUAL_TRACE_LOST));
    }
}

/* The format 3.1 packet of a trap with this cause, or NULL. */
static const ETracePacket *find_trap(int n, unsigned long cause)
{
    for (int i = 0; i < n; i++) {
        if (pkts[i].format == 3 && pkts[i].subformat == 1 &&
            pkts[i].ecause == cause && !pkts[i].interrupt) {
            return &pkts[i];
        }
    }
    return NULL;
}

static void check_traps(void)
{
    unsigned long handler = csr_read(mtvec) & ~3UL;
    const ETracePacket *p;
    int n;

    rv_trap_expect();
    n = trace_fn((void (*)(void))traced_illegal);
    CHECK_EQ(rv_trap_cause(), CAUSE_ILLEGAL_INSN);
    p = find_trap(n, CAUSE_ILLEGAL_INSN);
    CHECK(p != NULL);
    if (p) {
        /* The handler's address, and the illegal instruction's */
        CHECK_EQ(p->address, handler);
        CHECK_EQ(p->tvalepc, (unsigned long)traced_illegal_insn);
        CHECK_EQ(p->privilege, 3);
    }

    rv_trap_expect();
    n = trace_fn((void (*)(void))traced_ebreak);
    CHECK_EQ(rv_trap_cause(), CAUSE_BREAKPOINT);
    p = find_trap(n, CAUSE_BREAKPOINT);
    CHECK(p != NULL);
    if (p) {
        /* Not an illegal instruction: tvalepc is the trap value */
        CHECK_EQ(p->address, handler);
        CHECK_EQ(p->tvalepc, rv_last_trap.tval);
    }
}

#define TE_CONTEXT_BIT  (1u << 9)
#define TEST_ASID       5UL

/* An address space switch, as an OS makes one: satp with a new ASID. */
static void __attribute__((noinline)) switch_asid(void)
{
#if RV_XLEN == 64
    csr_write(satp, 8UL << 60 | TEST_ASID << 44);     /* Sv39, M ignores */
#else
    csr_write(satp, 1UL << 31 | TEST_ASID << 22);     /* Sv32 */
#endif
    asm volatile("" ::: "memory");
}

static int count_context(int n, uint64_t context)
{
    int found = 0;

    for (int i = 0; i < n; i++) {
        if (pkts[i].format == 3 && pkts[i].subformat == 2) {
            CHECK_EQ(pkts[i].context, context);
            CHECK_EQ(pkts[i].privilege, 3);
            found++;
        }
    }
    return found;
}

static void check_context(void)
{
    int n;

    rv_rule("context: satp.ASID, reported imprecisely with trTeContext");
    csr_write(satp, 0);
    n = trace_fn_control(switch_asid, TE_CONTEXT_BIT);
    CHECK_EQ(count_context(n, TEST_ASID), 1);
    csr_write(satp, 0);
    n = trace_fn_control(switch_asid, 0);
    CHECK_EQ(count_context(n, TEST_ASID), 0);
    csr_write(satp, 0);
}

/* A one-word StopOnWrap buffer: the overflow is reported, nothing more. */
static void check_lost(void)
{
    memset(tbuf, 0xa5, sizeof(tbuf));
    tr_sink_smem(0, tbuf, 4, RAM_STOP_ON_WRAP);
    tr_encoder_setup(0, 0, 0);
    trace_call((void (*)(void))traced_loop);
    CHECK_EQ(tr_read(TR_ENC(0), TR_CONTROL) & TE_STALL_OVERFLOW,
             TE_STALL_OVERFLOW);
    CHECK_EQ(tr_read(TR_SINK(0), TR_CONTROL) & TR_ENABLE, 0);
    for (unsigned i = 4; i < sizeof(tbuf); i++) {
        CHECK_EQ(tbuf[i], 0xa5);
        if (tbuf[i] != 0xa5) {
            break;
        }
    }
}

static void check_data(void)
{
    static const struct {
        unsigned dtype, dsize;
        uint64_t data, operand;
    } want[] = {
        { ETRACE_DTYPE_CSR_RW, __riscv_xlen == 64 ? 3 : 2, 0x1234, 0x55 },
        { ETRACE_DTYPE_AMO_SWAP, 2, 3, 7 },
        { ETRACE_DTYPE_LOAD, 2, 7, 0 },
        { ETRACE_DTYPE_STORE, 2, 9, 0 },
    };
    ETraceOptions opts = { 0 };
    ETraceDataState st = { 0 };
    ETraceDataAccess a;
    unsigned long used, pos = 0;
    unsigned n = 0;

    rv_rule("data trace: operands and stored values before the instruction");
    memset(tbuf, 0xa5, sizeof(tbuf));
    tr_sink_smem(0, tbuf, sizeof(tbuf), 0);
    tr_encoder_setup(0, 0, 0);
    tr_write(TR_ENC(0), TE_DATA_CONTROL, tr_data_control(1));
    csr_write(mtval, 0x1234);
    trace_call((void (*)(void))traced_data);
    CHECK_EQ(data_cell, 9);
    used = tr_sink_used(0, tbuf);
    while (n < sizeof(want) / sizeof(want[0]) &&
           tr_next_data_access(&params, &opts, &st, tbuf, used, &pos, &a)) {
        CHECK_EQ(a.dtype, want[n].dtype);
        CHECK_EQ(a.dsize, want[n].dsize);
        CHECK_EQ(a.data, want[n].data);
        CHECK_EQ(a.operand, want[n].operand);
        CHECK_EQ(a.daddr, n ? (unsigned long)&data_cell : 0x343);
        n++;
    }
    CHECK_EQ(n, (sizeof(want) / sizeof(want[0])));
}

int main(void)
{
    check_discovery();
    check_loop();
    check_traps();
    check_context();
    check_lost();
    check_data();
    return 0;
}

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
 * - trace-lost: a full StopOnWrap buffer sets StallOrOverflow and the
 *   sink stops.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"
#include "rvtrace.h"
#include "etrace.h"

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

/* Trace fn with default options; the number of packets in pkts[]. */
static int trace_fn(void (*fn)(void))
{
    memset(tbuf, 0xa5, sizeof(tbuf));
    tr_sink_smem(0, tbuf, sizeof(tbuf), 0);
    tr_encoder_setup(0, 0, 0);
    trace_call(fn);
    CHECK_EQ(tr_read(TR_ENC(0), TR_CONTROL) & TE_STALL_OVERFLOW, 0);
    return unpack_all(tr_sink_used(0, tbuf));
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
    uint32_t d0 = tr_read(TR_ENC(0), TE_DISCOVERY0);

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
    etrace_params_default(&params, RV_XLEN);
    tr_reset(TR_ENC(0));
    d0 = tr_read(TR_ENC(0), TE_DISCOVERY0);
    CHECK_EQ(d0 & 0xff, RV_XLEN);
    CHECK_EQ((d0 >> 12) & 0xff, params.ecause_width_p);
    CHECK_EQ((d0 >> 20) & 0xf, params.privilege_width_p);
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

int main(void)
{
    check_discovery();
    check_loop();
    check_traps();
    check_lost();
    return 0;
}

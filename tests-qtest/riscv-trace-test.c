/*
 * QTest: RISC-V trace encoder and RAM sink registers on virt,rvtrace=on
 *
 * Register behaviour as the RISC-V Trace Control Interface defines it and
 * as the Linux rvtrace drivers use it: Active handshake, Impl discovery,
 * WARL probing with 0 and all-ones, Enable order, and what reaches guest
 * memory, including bad buffer settings.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "libqtest.h"

#define TRACE_BASE      0x3100000ULL
#define ENC(hart)       (TRACE_BASE + (hart) * 0x2000ULL)
#define SINK(hart)      (ENC(hart) + 0x1000)
#define UART0           0x10000000ULL
#define DRAM            0x80000000ULL
#define BUF             (DRAM + 0x100000)

/* Common */
#define CONTROL         0x000
#define IMPL            0x004
#define ACTIVE          (1u << 0)
#define ENABLE          (1u << 1)
#define EMPTY           (1u << 3)

/* Encoder */
#define INST_FEATURES   0x008
#define INST_FILTERS    0x00C
#define FILTER0_CONTROL 0x400
#define COMP0_CONTROL   0x600
#define DATA_CONTROL    0x010
#define DATA_FILTERS    0x01C
#define DISCOVERY0      0xE00
#define DISCOVERY1      0xE04
#define INST_TRACING    (1u << 2)
#define INST_MODE(x)    ((x) << 4)
#define CONTEXT         (1u << 9)
#define STALL_OVERFLOW  (1u << 12)
#define INHIBIT_SRC     (1u << 15)
#define SYNC_MODE(x)    ((x) << 16)
#define SYNC_MAX(x)     ((x) << 20)
#define FORMAT(x)       ((x) << 24)

/* RAM sink */
#define START_LOW       0x010
#define START_HIGH      0x014
#define LIMIT_LOW       0x018
#define LIMIT_HIGH      0x01C
#define WP_LOW          0x020
#define WP_HIGH         0x024
#define RP_LOW          0x028
#define DATA            0x040
#define MODE_SMEM       (1u << 4)
#define STOP_ON_WRAP    (1u << 8)
#define WRAP            (1u << 0)

static QTestState *start_virt(int harts)
{
    return qtest_initf("-machine virt,rvtrace=on -smp %d -bios none", harts);
}

static uint32_t rd(QTestState *qts, uint64_t comp, uint32_t reg)
{
    return qtest_readl(qts, comp + reg);
}

static void wr(QTestState *qts, uint64_t comp, uint32_t reg, uint32_t val)
{
    qtest_writel(qts, comp + reg, val);
}

/* The driver's reset: Control=0, poll Active=0, Control=1, poll Active=1 */
static void reset_component(QTestState *qts, uint64_t comp)
{
    wr(qts, comp, CONTROL, 0);
    g_assert_cmphex(rd(qts, comp, CONTROL) & ACTIVE, ==, 0);
    wr(qts, comp, CONTROL, ACTIVE);
    g_assert_cmphex(rd(qts, comp, CONTROL) & ACTIVE, ==, ACTIVE);
}

/* Poll Empty (an encoder stops on its hart's thread). */
static void wait_empty(QTestState *qts, uint64_t comp)
{
    for (int i = 0; i < 1000; i++) {
        if (rd(qts, comp, CONTROL) & EMPTY) {
            return;
        }
        g_usleep(1000);
    }
    g_assert_not_reached();
}

static void test_impl(void)
{
    QTestState *qts = start_virt(2);

    for (int hart = 0; hart < 2; hart++) {
        /* VerMajor 1, VerMinor 0, CompType 1 (encoder), protocol 1.1 */
        g_assert_cmphex(rd(qts, ENC(hart), IMPL), ==, 0x110101);
        /* RAM sink: type 9, HasSRAM and HasSMEM */
        g_assert_cmphex(rd(qts, SINK(hart), IMPL), ==, 0x3901);
    }
    qtest_quit(qts);
}

static void test_encoder_active(void)
{
    QTestState *qts = start_virt(1);
    uint32_t ctl;

    /* Power-up: only Active and Enable are reset; Empty reads 1 */
    g_assert_cmphex(rd(qts, ENC(0), CONTROL), ==, EMPTY);
    /* While inactive, other registers ignore writes and read 0 */
    wr(qts, ENC(0), INST_FEATURES, 0x1);
    g_assert_cmphex(rd(qts, ENC(0), INST_FEATURES), ==, 0);

    /* Activation sets the WARL defaults, whatever else the write says */
    wr(qts, ENC(0), CONTROL, 0xffffffff & ~ENABLE);
    ctl = rd(qts, ENC(0), CONTROL);
    g_assert_cmphex(ctl, ==, ACTIVE | EMPTY | INST_MODE(6) | SYNC_MODE(1) |
                    SYNC_MAX(4));

    /* Deactivation resets everything */
    wr(qts, ENC(0), INST_FEATURES, 0x1);
    wr(qts, ENC(0), CONTROL, 0);
    g_assert_cmphex(rd(qts, ENC(0), CONTROL), ==, EMPTY);
    wr(qts, ENC(0), CONTROL, ACTIVE);
    g_assert_cmphex(rd(qts, ENC(0), INST_FEATURES), ==, 0);
    qtest_quit(qts);
}

static void test_encoder_warl(void)
{
    QTestState *qts = start_virt(1);

    reset_component(qts, ENC(0));
    /*
     * All-ones: Enable, InstTracing, Context and the sync fields stick;
     * InstTrigEnable, StallEna, Format (E-trace only) read 0; InstMode
     * 7 reverts to 6; StallOrOverflow is W1C and clear.
     */
    wr(qts, ENC(0), CONTROL, 0xffffffff & ~(ENABLE | INST_TRACING));
    g_assert_cmphex(rd(qts, ENC(0), CONTROL), ==,
                    ACTIVE | EMPTY | INST_MODE(6) | CONTEXT | INHIBIT_SRC |
                    SYNC_MODE(3) | SYNC_MAX(15));
    /* Every non-zero InstMode is the delta mode; 0 turns tracing off */
    for (int mode = 1; mode < 8; mode++) {
        wr(qts, ENC(0), CONTROL, ACTIVE | INST_MODE(mode));
        g_assert_cmphex(rd(qts, ENC(0), CONTROL) & INST_MODE(7), ==,
                        INST_MODE(6));
    }
    wr(qts, ENC(0), CONTROL, ACTIVE);
    g_assert_cmphex(rd(qts, ENC(0), CONTROL) & INST_MODE(7), ==, 0);

    /* Features: modes 0-7, SrcID, SrcBits at most 12; IR mode 2 -> 3 */
    wr(qts, ENC(0), INST_FEATURES, 0xffffffff);
    g_assert_cmphex(rd(qts, ENC(0), INST_FEATURES), ==, 0xcfff00ff);
    wr(qts, ENC(0), INST_FEATURES, 0x8 | 2 << 6);
    g_assert_cmphex(rd(qts, ENC(0), INST_FEATURES), ==, 0x8 | 3 << 6);
    wr(qts, ENC(0), INST_FEATURES, 0x8 | 1 << 6);
    g_assert_cmphex(rd(qts, ENC(0), INST_FEATURES), ==, 0x8 | 1 << 6);
    wr(qts, ENC(0), INST_FEATURES, 0);
    g_assert_cmphex(rd(qts, ENC(0), INST_FEATURES), ==, 0);

    /* Filters: four of them, enable bits 0-3 */
    wr(qts, ENC(0), INST_FILTERS, 0xffffffff);
    g_assert_cmphex(rd(qts, ENC(0), INST_FILTERS), ==, 0xf);
    wr(qts, ENC(0), INST_FILTERS, 0);
    g_assert_cmphex(rd(qts, ENC(0), INST_FILTERS), ==, 0);
    /* Filter and comparator 4 do not exist: read 0 */
    wr(qts, ENC(0), FILTER0_CONTROL + 4 * 0x20, 0xffffffff);
    g_assert_cmphex(rd(qts, ENC(0), FILTER0_CONTROL + 4 * 0x20), ==, 0);
    wr(qts, ENC(0), COMP0_CONTROL + 4 * 0x20, 0xffffffff);
    g_assert_cmphex(rd(qts, ENC(0), COMP0_CONTROL + 4 * 0x20), ==, 0);
    /* Data filters: the four filters; reserved registers read 0 */
    wr(qts, ENC(0), DATA_FILTERS, 0xffffffff);
    g_assert_cmphex(rd(qts, ENC(0), DATA_FILTERS), ==, 0xf);
    wr(qts, ENC(0), DATA_FILTERS, 0);
    wr(qts, ENC(0), 0x040, 0xffffffff);
    g_assert_cmphex(rd(qts, ENC(0), 0x040), ==, 0);
    qtest_quit(qts);
}

/*
 * trTeDataControl (docs/rvtrace.rst): DataImplemented, differential
 * addresses after reset; DataAddrCompress 0 or 2; NoValue clears NoAddr;
 * data trace is E-trace's only.
 */
static void test_encoder_data_control(void)
{
    QTestState *qts = start_virt(1);

    reset_component(qts, ENC(0));
    g_assert_cmphex(rd(qts, ENC(0), DATA_CONTROL), ==, 0x80001);
    wr(qts, ENC(0), DATA_CONTROL, 0xffffffff);
    g_assert_cmphex(rd(qts, ENC(0), DATA_CONTROL), ==, 0x90003);
    for (uint32_t compress = 0; compress < 4; compress++) {
        wr(qts, ENC(0), DATA_CONTROL, 2 | 1u << 17 | compress << 18);
        g_assert_cmphex(rd(qts, ENC(0), DATA_CONTROL), ==,
                        3 | 1u << 17 | (compress ? 2u : 0) << 18);
    }
    /* N-trace has no data trace; back in E-trace it is off */
    wr(qts, ENC(0), CONTROL, ACTIVE | FORMAT(1) | INST_MODE(6));
    g_assert_cmphex(rd(qts, ENC(0), DATA_CONTROL), ==, 0);
    wr(qts, ENC(0), DATA_CONTROL, 0xffffffff);
    g_assert_cmphex(rd(qts, ENC(0), DATA_CONTROL), ==, 0);
    wr(qts, ENC(0), CONTROL, ACTIVE | INST_MODE(6));
    wr(qts, ENC(0), DATA_CONTROL, 2);
    g_assert_cmphex(rd(qts, ENC(0), DATA_CONTROL), ==, 3);
    /* inactive: reads 0 */
    wr(qts, ENC(0), CONTROL, 0);
    g_assert_cmphex(rd(qts, ENC(0), DATA_CONTROL), ==, 0);
    qtest_quit(qts);
}

static void test_encoder_discovery(void)
{
    QTestState *qts = start_virt(1);
    uint32_t d0, d1;

    reset_component(qts, ENC(0));
    d0 = rd(qts, ENC(0), DISCOVERY0);
    d1 = rd(qts, ENC(0), DISCOVERY1);
    /* rv64: iaddress_width_p 64, iaddress_lsb_p 1 (compressed) */
    g_assert_cmpuint(d0 & 0xff, ==, 64);
    g_assert_cmpuint((d0 >> 8) & 0xf, ==, 1);
    /* ecause wide enough for every cause QEMU raises (23 and up) */
    g_assert_cmpuint((d0 >> 12) & 0xff, >=, 5);
    /* privilege: U, S, M and the V bit */
    g_assert_cmpuint((d0 >> 20) & 0xf, >=, 2);
    /* arch 0: the 1.1.1 draft layout; sijump supported */
    g_assert_cmpuint((d1 >> 20) & 0xf, ==, 0);
    g_assert_cmpuint((d1 >> 16) & 1, ==, 1);
    qtest_quit(qts);
}

static void test_ramsink_warl(void)
{
    QTestState *qts = start_virt(1);

    g_assert_cmphex(rd(qts, SINK(0), CONTROL), ==, EMPTY);
    reset_component(qts, SINK(0));
    /* Activation: SMEM mode by default */
    g_assert_cmphex(rd(qts, SINK(0), CONTROL), ==, ACTIVE | EMPTY | MODE_SMEM);
    /* Mode and StopOnWrap are writable; MemFormat, AsyncFreq read 0 */
    wr(qts, SINK(0), CONTROL, 0xffffffff & ~ENABLE);
    g_assert_cmphex(rd(qts, SINK(0), CONTROL), ==,
                    ACTIVE | EMPTY | MODE_SMEM | STOP_ON_WRAP);

    /* Driver probing: Start min 0, Limit max all-ones, 64-bit */
    wr(qts, SINK(0), START_LOW, 0);
    wr(qts, SINK(0), START_HIGH, 0);
    g_assert_cmphex(rd(qts, SINK(0), START_LOW), ==, 0);
    wr(qts, SINK(0), LIMIT_LOW, 0xffffffff);
    wr(qts, SINK(0), LIMIT_HIGH, 0xffffffff);
    g_assert_cmphex(rd(qts, SINK(0), LIMIT_LOW), ==, 0xfffffffc);
    g_assert_cmphex(rd(qts, SINK(0), LIMIT_HIGH), ==, 0xffffffff);
    /* Low two bits read 0 */
    wr(qts, SINK(0), START_LOW, 0x80000003);
    g_assert_cmphex(rd(qts, SINK(0), START_LOW), ==, 0x80000000);
    /* WP: Wrap (bit 0) is cleared by any WPLow write */
    wr(qts, SINK(0), WP_LOW, 0x80000007);
    g_assert_cmphex(rd(qts, SINK(0), WP_LOW), ==, 0x80000004);

    /* SRAM mode: Start reads 0, Limit at most the 64 KiB buffer */
    wr(qts, SINK(0), CONTROL, ACTIVE);
    g_assert_cmphex(rd(qts, SINK(0), START_LOW), ==, 0);
    g_assert_cmphex(rd(qts, SINK(0), LIMIT_LOW), ==, 0xfffc);
    g_assert_cmphex(rd(qts, SINK(0), LIMIT_HIGH), ==, 0);
    wr(qts, SINK(0), RP_LOW, 0xfffc);
    g_assert_cmphex(rd(qts, SINK(0), RP_LOW), ==, 0xfffc);
    wr(qts, SINK(0), RP_LOW, 0x7ffffff0);
    g_assert_cmphex(rd(qts, SINK(0), RP_LOW), ==, 0xfffc);
    qtest_quit(qts);
}

/* Sink in SMEM mode over [start, limit], enabled; encoder active. */
static void setup_smem(QTestState *qts, uint64_t start, uint64_t limit,
                       uint32_t extra)
{
    reset_component(qts, SINK(0));
    wr(qts, SINK(0), START_LOW, start);
    wr(qts, SINK(0), START_HIGH, start >> 32);
    wr(qts, SINK(0), LIMIT_LOW, limit);
    wr(qts, SINK(0), LIMIT_HIGH, limit >> 32);
    wr(qts, SINK(0), WP_LOW, start);
    wr(qts, SINK(0), WP_HIGH, start >> 32);
    wr(qts, SINK(0), CONTROL, ACTIVE | MODE_SMEM | extra);
    wr(qts, SINK(0), CONTROL, ACTIVE | MODE_SMEM | ENABLE | extra);
    reset_component(qts, ENC(0));
}

static void trace_on_off(QTestState *qts)
{
    /* StallOrOverflow is write-1-to-clear: write it back as 0 */
    uint32_t ctl = rd(qts, ENC(0), CONTROL) & ~STALL_OVERFLOW;

    wr(qts, ENC(0), CONTROL, ctl | ENABLE);
    wr(qts, ENC(0), CONTROL, ctl | ENABLE | INST_TRACING);
    wr(qts, ENC(0), CONTROL, ctl | ENABLE);
    wr(qts, ENC(0), CONTROL, ctl);
    wait_empty(qts, ENC(0));
}

static void fill(QTestState *qts, uint64_t addr, size_t len)
{
    g_autofree uint8_t *pattern = g_malloc(len);

    memset(pattern, 0xa5, len);
    qtest_memwrite(qts, addr, pattern, len);
}

/* Bytes from addr that differ from the fill pattern. */
static size_t written(QTestState *qts, uint64_t addr, size_t len)
{
    g_autofree uint8_t *buf = g_malloc(len);
    size_t n = 0;

    qtest_memread(qts, addr, buf, len);
    for (size_t i = 0; i < len; i++) {
        n += buf[i] != 0xa5;
    }
    return n;
}

/*
 * Starting and stopping the encoder emits support packets (enable 1 and
 * 0) into the sink; WP counts the padded words; nothing goes elsewhere.
 */
/*
 * trTeFormat 1 (N-trace): Impl says protocol 1.0; InstMode 3 (BTM) and 6
 * (HTM), other non-zero values 6; only the implicit-return, repeat and
 * source features exist, and selecting N-trace clears the others.
 */
static void test_encoder_ntrace(void)
{
    QTestState *qts = start_virt(1);

    reset_component(qts, ENC(0));
    for (int format = 2; format < 8; format++) {
        wr(qts, ENC(0), CONTROL, ACTIVE | FORMAT(format));
        g_assert_cmphex(rd(qts, ENC(0), CONTROL) & FORMAT(7), ==, 0);
    }
    wr(qts, ENC(0), INST_FEATURES, 0x3f);
    wr(qts, ENC(0), CONTROL, ACTIVE | FORMAT(1) | INST_MODE(6));
    g_assert_cmphex(rd(qts, ENC(0), CONTROL) & FORMAT(7), ==, FORMAT(1));
    g_assert_cmphex(rd(qts, ENC(0), IMPL), ==, 0x10101);
    g_assert_cmphex(rd(qts, ENC(0), INST_FEATURES), ==, 0x8);
    for (int mode = 1; mode < 8; mode++) {
        wr(qts, ENC(0), CONTROL, ACTIVE | FORMAT(1) | INST_MODE(mode));
        g_assert_cmphex(rd(qts, ENC(0), CONTROL) & INST_MODE(7), ==,
                        INST_MODE(mode == 3 ? 3 : 6));
    }
    /* implicit return (3, 7:6), RepeatedHistory (8), SrcID, SrcBits */
    wr(qts, ENC(0), INST_FEATURES, 0xffffffff);
    g_assert_cmphex(rd(qts, ENC(0), INST_FEATURES), ==, 0xcfff01c8);
    /*
     * Back to E-trace: protocol 1.1, BTM is not an E-trace mode,
     * RepeatedHistory is N-trace's
     */
    wr(qts, ENC(0), CONTROL, ACTIVE | INST_MODE(3));
    g_assert_cmphex(rd(qts, ENC(0), IMPL), ==, 0x110101);
    g_assert_cmphex(rd(qts, ENC(0), CONTROL) & INST_MODE(7), ==,
                    INST_MODE(6));
    g_assert_cmphex(rd(qts, ENC(0), INST_FEATURES), ==, 0xcfff00c8);
    qtest_quit(qts);

    /* format=ntrace: N-trace is Format's default */
    qts = qtest_init("-machine virt,rvtrace=on -bios none "
                     "-global riscv-trace-encoder.format=ntrace");
    reset_component(qts, ENC(0));
    g_assert_cmphex(rd(qts, ENC(0), CONTROL) & (FORMAT(7) | INST_MODE(7)),
                    ==, FORMAT(1) | INST_MODE(6));
    /* no instruction retired: no sync, no correlation, no byte */
    fill(qts, BUF, 64);
    setup_smem(qts, BUF, BUF + 0x3c, 0);
    trace_on_off(qts);
    g_assert_cmphex(rd(qts, SINK(0), WP_LOW), ==, BUF);
    g_assert_cmpuint(written(qts, BUF, 64), ==, 0);
    qtest_quit(qts);
}

static void test_smem_support_packets(void)
{
    QTestState *qts = start_virt(1);
    uint32_t wp;

    fill(qts, BUF - 64, 256);
    setup_smem(qts, BUF, BUF + 0x7c, 0);
    trace_on_off(qts);
    wp = rd(qts, SINK(0), WP_LOW);
    g_assert_cmphex(wp & WRAP, ==, 0);
    g_assert_cmphex(wp & 3, ==, 0);
    /* Two packets of at least two bytes (header and payload) */
    g_assert_cmpuint(wp - BUF, >=, 4);
    g_assert_cmpuint(written(qts, BUF, wp - BUF), >, 2);
    g_assert_cmpuint(written(qts, BUF - 64, 64), ==, 0);
    g_assert_cmpuint(written(qts, wp, BUF + 192 - wp), ==, 0);
    /* The encoder lost nothing */
    g_assert_cmphex(rd(qts, ENC(0), CONTROL) & STALL_OVERFLOW, ==, 0);
    qtest_quit(qts);
}

/*
 * A one-word buffer with StopOnWrap: packets that do not fit are lost
 * (StallOrOverflow), the sink turns itself off, no byte beyond Limit + 3.
 */
static void test_smem_stop_on_wrap(void)
{
    QTestState *qts = start_virt(1);

    fill(qts, BUF - 16, 64);
    setup_smem(qts, BUF, BUF, STOP_ON_WRAP);
    for (int i = 0; i < 4; i++) {
        trace_on_off(qts);
    }
    g_assert_cmpuint(written(qts, BUF - 16, 16), ==, 0);
    g_assert_cmpuint(written(qts, BUF + 4, 44), ==, 0);
    g_assert_cmphex(rd(qts, ENC(0), CONTROL) & STALL_OVERFLOW, ==,
                    STALL_OVERFLOW);
    /* RW1C, and cleared when Enable goes 0 -> 1 */
    wr(qts, ENC(0), CONTROL, rd(qts, ENC(0), CONTROL) | STALL_OVERFLOW);
    g_assert_cmphex(rd(qts, ENC(0), CONTROL) & STALL_OVERFLOW, ==, 0);
    qtest_quit(qts);
}

/* Without StopOnWrap, a small buffer wraps and sets Wrap. */
static void test_smem_wrap(void)
{
    QTestState *qts = start_virt(1);

    fill(qts, BUF - 16, 64);
    setup_smem(qts, BUF, BUF + 4, 0);
    for (int i = 0; i < 4; i++) {
        trace_on_off(qts);
    }
    g_assert_cmphex(rd(qts, SINK(0), WP_LOW) & WRAP, ==, WRAP);
    g_assert_cmpuint(written(qts, BUF - 16, 16), ==, 0);
    g_assert_cmpuint(written(qts, BUF + 8, 40), ==, 0);
    g_assert_cmphex(rd(qts, ENC(0), CONTROL) & STALL_OVERFLOW, ==, 0);
    /* Wrap is cleared by writing WPLow (sink disabled first) */
    wr(qts, SINK(0), CONTROL, ACTIVE | MODE_SMEM);
    wr(qts, SINK(0), WP_LOW, BUF);
    g_assert_cmphex(rd(qts, SINK(0), WP_LOW), ==, BUF);
    qtest_quit(qts);
}

/* Buffers that are not RAM take nothing; the encoder reports the loss. */
static void test_smem_bad_buffer(void)
{
    static const struct {
        uint64_t start, limit;
    } bad[] = {
        { UART0, UART0 + 0xfc },                /* MMIO */
        { BUF + 0x100, BUF },                   /* Limit below Start */
        { 0x0ULL - 0x1000, 0x0ULL - 4 },        /* no memory at all */
        { DRAM - 0x100, DRAM + 0xfc },          /* straddles RAM's start */
    };
    QTestState *qts = start_virt(1);

    fill(qts, BUF - 0x100, 0x300);
    for (int i = 0; i < ARRAY_SIZE(bad); i++) {
        setup_smem(qts, bad[i].start, bad[i].limit, 0);
        trace_on_off(qts);
        g_assert_cmphex(rd(qts, ENC(0), CONTROL) & STALL_OVERFLOW, ==,
                        STALL_OVERFLOW);
        g_assert_cmpuint(written(qts, BUF - 0x100, 0x300), ==, 0);
    }
    qtest_quit(qts);
}

/* SRAM mode: the bytes are read back through RP and Data. */
static void test_sram(void)
{
    QTestState *qts = start_virt(1);
    uint32_t wp, words[8] = { 0 };

    reset_component(qts, SINK(0));
    wr(qts, SINK(0), CONTROL, ACTIVE);          /* SRAM */
    wr(qts, SINK(0), WP_LOW, 0);
    wr(qts, SINK(0), CONTROL, ACTIVE | ENABLE);
    reset_component(qts, ENC(0));
    trace_on_off(qts);
    wp = rd(qts, SINK(0), WP_LOW);
    g_assert_cmpuint(wp, >=, 4);
    g_assert_cmpuint(wp, <=, sizeof(words));
    wr(qts, SINK(0), RP_LOW, 0);
    for (int i = 0; i < wp / 4; i++) {
        words[i] = rd(qts, SINK(0), DATA);
    }
    g_assert_cmphex(rd(qts, SINK(0), RP_LOW), ==, wp);
    /* The first byte is a packet header: a non-zero length */
    g_assert_cmphex(words[0] & 0x1f, !=, 0);
    qtest_quit(qts);
}

/*
 * Mode does not change while the sink is enabled (docs/rvtrace.rst): a
 * guest that cleared it there used to make the sink write its SMEM
 * pointer's worth past the SRAM buffer, into the host's heap or beyond.
 */
static void test_mode_locked_while_enabled(void)
{
    static const struct {
        uint64_t start, limit;
    } buffers[] = {
        { BUF, BUF + 0xfc },        /* RAM: WP far beyond the SRAM */
        { 0x10000, 0x100fc },       /* not RAM: WP just past the SRAM */
    };
    QTestState *qts = start_virt(1);

    fill(qts, BUF - 0x100, 0x300);
    for (int i = 0; i < ARRAY_SIZE(buffers); i++) {
        uint64_t start = buffers[i].start;

        setup_smem(qts, start, buffers[i].limit, 0);
        wr(qts, SINK(0), WP_LOW, start + 4);    /* ignored: enabled */
        wr(qts, SINK(0), CONTROL, ACTIVE | ENABLE);
        g_assert_cmphex(rd(qts, SINK(0), CONTROL), ==,
                        ACTIVE | ENABLE | EMPTY | MODE_SMEM);
        g_assert_cmphex(rd(qts, SINK(0), START_LOW), ==, (uint32_t)start);
        trace_on_off(qts);
        trace_on_off(qts);
        /* only the RAM buffer takes packets, and only inside itself */
        if (i == 0) {
            g_assert_cmphex(rd(qts, SINK(0), WP_LOW), >, start);
        } else {
            g_assert_cmphex(rd(qts, SINK(0), WP_LOW), ==, start);
        }
        g_assert_cmpuint(written(qts, BUF - 0x100, 0x100), ==, 0);
        g_assert_cmpuint(written(qts, BUF + 0x100, 0x100), ==, 0);
    }
    /* The write that clears Enable keeps Mode; once disabled, it is free */
    wr(qts, SINK(0), CONTROL, ACTIVE);
    g_assert_cmphex(rd(qts, SINK(0), CONTROL), ==, ACTIVE | EMPTY | MODE_SMEM);
    wr(qts, SINK(0), CONTROL, ACTIVE);
    g_assert_cmphex(rd(qts, SINK(0), CONTROL), ==, ACTIVE | EMPTY);
    qtest_quit(qts);
}

/*
 * SrcID without SrcBits: the index field has no bits, so SrcID is not in
 * the packets (it used to leave the codec unstarted and crash QEMU).
 */
static void test_src_id_without_bits(void)
{
    QTestState *qts = start_virt(1);
    uint8_t first[2];

    fill(qts, BUF, 0x100);
    setup_smem(qts, BUF, BUF + 0xfc, 0);
    wr(qts, ENC(0), INST_FEATURES, 0x00010000);     /* SrcID 1 */
    g_assert_cmphex(rd(qts, ENC(0), INST_FEATURES), ==, 0x00010000);
    wr(qts, ENC(0), CONTROL, ACTIVE | ENABLE | INST_TRACING | INST_MODE(6));
    g_assert_cmphex(rd(qts, ENC(0), CONTROL) & INST_TRACING, ==,
                    INST_TRACING);
    wr(qts, ENC(0), CONTROL, ACTIVE | INST_MODE(6));
    wait_empty(qts, ENC(0));
    g_assert_cmphex(rd(qts, ENC(0), CONTROL) & STALL_OVERFLOW, ==, 0);
    /* a header, then the payload: a support packet (format 3), no index */
    qtest_memread(qts, BUF, first, sizeof(first));
    g_assert_cmphex(first[0] & 0x1f, !=, 0);
    g_assert_cmphex(first[1] & 3, ==, 3);
    qtest_quit(qts);
}

/* Any value anywhere in the encoder and sink blocks: never a crash. */
static void test_any_write(void)
{
    QTestState *qts = start_virt(1);
    static const uint32_t values[] = { 0, 0xffffffff, 0x55555555, 0x7 };

    for (int v = 0; v < ARRAY_SIZE(values); v++) {
        for (uint32_t off = 0; off < 0x1000; off += 4) {
            if (off == CONTROL) {
                continue;
            }
            wr(qts, ENC(0), CONTROL, ACTIVE);
            wr(qts, ENC(0), off, values[v]);
            rd(qts, ENC(0), off);
            wr(qts, SINK(0), CONTROL, ACTIVE | MODE_SMEM);
            wr(qts, SINK(0), off, values[v]);
            rd(qts, SINK(0), off);
        }
        wr(qts, ENC(0), CONTROL, values[v]);
        wr(qts, SINK(0), CONTROL, values[v]);
        wait_empty(qts, ENC(0));
    }
    qtest_quit(qts);
}

/* ---------------------------------------------------------------- fuzz */

#define PIB             0x3500000ULL
#define FUZZ_CODE       DRAM
#define FUZZ_GUARD      (DRAM + 0x10000)
#define FUZZ_GUARD_LEN  0x10000

/*
 * The hart's program while the registers are fuzzed: a loop of branches,
 * calls, returns and an ecall (its handler skips it), so that a trace
 * has all kinds of blocks.
 */
static const uint32_t fuzz_program[] = {
    0x00000e97, 0x038e8e93, 0x305e9073,     /* mtvec = handler */
    0x00128293, 0x0032f313, 0x00030463,     /* loop: t0++, branch */
    0x00138393, 0x014000ef, 0x0ff2f313,     /* call func */
    0xfe0314e3, 0x00000073, 0xfe1ff06f,     /* bnez loop; ecall; j */
    0x001e0e13, 0x00008067,                 /* func: t3++; ret */
    0x34102f73, 0x004f0f13, 0x341f1073,     /* handler: mepc += 4 */
    0x30200073,                             /* mret */
};

/* Addresses a hostile guest would give the RAM sink's pointers. */
static uint64_t fuzz_address(GRand *r)
{
    static const uint64_t interesting[] = {
        0, 4, 0xfffc, 0x10000, UART0, PIB, TRACE_BASE, DRAM - 4, DRAM,
        FUZZ_CODE + 0x20, FUZZ_GUARD, FUZZ_GUARD + 0x100,
        FUZZ_GUARD + FUZZ_GUARD_LEN - 4, FUZZ_GUARD + FUZZ_GUARD_LEN,
        DRAM + 128 * 1024 * 1024 - 4, DRAM + 128 * 1024 * 1024,
        0xfffffffffffffffcULL, 0x7ffffffffffffffcULL,
    };
    uint64_t a = interesting[g_rand_int_range(r, 0, ARRAY_SIZE(interesting))];

    switch (g_rand_int_range(r, 0, 4)) {
    case 0:
        return a;
    case 1:
        return a + g_rand_int_range(r, -64, 64);   /* unaligned too */
    case 2:
        return FUZZ_GUARD + g_rand_int_range(r, 0, FUZZ_GUARD_LEN);
    default:
        return (uint64_t)g_rand_int(r) << 32 | g_rand_int(r);
    }
}

static uint32_t fuzz_control(GRand *r)
{
    uint32_t v = g_rand_int(r);

    /* mostly Active, often Enable and InstTracing with a mode */
    if (g_rand_int_range(r, 0, 8)) {
        v |= ACTIVE;
    }
    if (g_rand_int_range(r, 0, 2)) {
        v |= ENABLE | INST_TRACING;
    }
    return g_rand_int_range(r, 0, 8) ? v & ~STALL_OVERFLOW : v;
}

/* One random register write (or read) to the encoder, sink or PIB sink. */
static void fuzz_one(QTestState *qts, GRand *r)
{
    static const uint32_t sink_regs[] = {
        START_LOW, START_HIGH, LIMIT_LOW, LIMIT_HIGH, WP_LOW, WP_HIGH,
        RP_LOW, 0x02C, DATA, 0x008, 0x030, 0x044,
    };
    unsigned what = g_rand_int_range(r, 0, 16);
    uint32_t off, val = g_rand_int(r);
    uint64_t a;

    switch (what) {
    case 0 ... 2:
        wr(qts, SINK(0), CONTROL, fuzz_control(r));
        break;
    case 3 ... 6:
        off = sink_regs[g_rand_int_range(r, 0, ARRAY_SIZE(sink_regs))];
        a = fuzz_address(r);
        wr(qts, SINK(0), off, off & 4 ? a >> 32 : (uint32_t)a);
        break;
    case 7 ... 8:
        wr(qts, ENC(0), CONTROL, fuzz_control(r));
        break;
    case 9:
        wr(qts, ENC(0), INST_FEATURES, val);
        break;
    case 10:
        /* filters and comparators: enables, privilege, addresses */
        off = g_rand_int_range(r, 0, 2) ? 0x400 : 0x600;
        wr(qts, ENC(0), off + g_rand_int_range(r, 0, 0x80) * 4,
           g_rand_int_range(r, 0, 2) ? val : (uint32_t)fuzz_address(r));
        break;
    case 11:
        wr(qts, ENC(0), g_rand_int_range(r, 0, 2) ? INST_FILTERS : DATA_FILTERS,
           val & 0xf);
        break;
    case 12:
        wr(qts, PIB, g_rand_int_range(r, 0, 2) ? CONTROL :
           g_rand_int_range(r, 0, 0x400) * 4, val);
        break;
    case 13:
        wr(qts, ENC(0), g_rand_int_range(r, 0, 2) ? DATA_CONTROL :
           g_rand_int_range(r, 0, 0x400) * 4, val);
        break;
    default:
        rd(qts, g_rand_int_range(r, 0, 2) ? SINK(0) : ENC(0),
           g_rand_int_range(r, 0, 0x400) * 4);
        break;
    }
}

/* A driver's set-up of a buffer in the guard region, tracing. */
/* dr: the data trace's own draws, which leave r's sequence as it was */
static void fuzz_valid_setup(QTestState *qts, GRand *r, GRand *dr)
{
    uint64_t start = FUZZ_GUARD + g_rand_int_range(r, 0, 0x100) * 0x80;
    uint64_t limit = start + g_rand_int_range(r, 0, 0x80) * 4;

    setup_smem(qts, start, limit,
               g_rand_int_range(r, 0, 4) ? 0 : STOP_ON_WRAP);
    wr(qts, ENC(0), INST_FEATURES, g_rand_int(r) & 0xff);
    /* data trace of the program's CSR accesses, in any layout */
    wr(qts, ENC(0), DATA_CONTROL, g_rand_int(dr) | 2);
    wr(qts, ENC(0), CONTROL, ACTIVE | ENABLE | INST_TRACING | INST_MODE(6) |
       SYNC_MODE(1) | SYNC_MAX(g_rand_int_range(r, 0, 16)));
}

/*
 * The SMEM buffer the sink has, enabled or not: Start and Limit only
 * change while it is disabled, so a buffer it was enabled with is seen
 * here after the write that enabled it, even if StopOnWrap has turned it
 * off again since.
 */
static bool fuzz_smem_range(QTestState *qts, uint64_t *lo, uint64_t *hi)
{
    uint32_t ctl = rd(qts, SINK(0), CONTROL);

    if ((ctl & (ACTIVE | MODE_SMEM)) != (ACTIVE | MODE_SMEM)) {
        return false;
    }
    *lo = rd(qts, SINK(0), START_LOW) |
          (uint64_t)rd(qts, SINK(0), START_HIGH) << 32;
    *hi = (rd(qts, SINK(0), LIMIT_LOW) |
           (uint64_t)rd(qts, SINK(0), LIMIT_HIGH) << 32) + 3;
    return true;
}

/*
 * Random register writes to every trace device while the hart runs and
 * traces, with pointers anywhere and Mode/Enable flipped at any time:
 * QEMU survives, and of the guard region the sink changed only bytes
 * inside a buffer it was enabled with.  RVPA_TRACE_FUZZ_SEED and
 * RVPA_TRACE_FUZZ_CASES (scripts/fuzz-devices.sh runs it long).
 */
static void test_fuzz_registers(void)
{
    const char *env_seed = g_getenv("RVPA_TRACE_FUZZ_SEED");
    const char *env_cases = g_getenv("RVPA_TRACE_FUZZ_CASES");
    guint32 seed = env_seed ? g_ascii_strtoull(env_seed, NULL, 0) : 1;
    unsigned n_cases = env_cases ? g_ascii_strtoull(env_cases, NULL, 0) : 200;
    g_autofree uint8_t *guard = g_malloc(FUZZ_GUARD_LEN);
    GRand *r = g_rand_new_with_seed(seed);
    GRand *dr = g_rand_new_with_seed(seed ^ 0xda7a);
    unsigned traced = 0;
    QTestState *qts;

    /* TCG runs the hart; libqtest's own -accel qtest comes after */
    qts = qtest_init("-accel tcg -machine virt,rvtrace=on,rvtrace-chardev=tr "
                     "-chardev null,id=tr -bios none -S");
    qtest_memwrite(qts, FUZZ_CODE, fuzz_program, sizeof(fuzz_program));
    qtest_qmp_assert_success(qts, "{ 'execute': 'cont' }");
    g_test_message("seed %u, %u cases", seed, n_cases);
    for (unsigned c = 0; c < n_cases; c++) {
        GArray *ranges = g_array_new(false, false, sizeof(uint64_t) * 2);
        uint64_t range[2];

        /* the sink stops writing before the guard is laid */
        wr(qts, SINK(0), CONTROL, 0);
        wr(qts, ENC(0), CONTROL, 0);
        wait_empty(qts, ENC(0));
        fill(qts, FUZZ_GUARD, FUZZ_GUARD_LEN);
        if (g_rand_int_range(r, 0, 2)) {
            fuzz_valid_setup(qts, r, dr);
        }
        if (fuzz_smem_range(qts, &range[0], &range[1])) {
            g_array_append_val(ranges, range);
        }
        for (int i = g_rand_int_range(r, 0, 40); i > 0; i--) {
            fuzz_one(qts, r);
            if (fuzz_smem_range(qts, &range[0], &range[1])) {
                g_array_append_val(ranges, range);
            }
        }
        g_usleep(g_rand_int_range(r, 0, 2000));
        wr(qts, ENC(0), CONTROL, ACTIVE);
        wait_empty(qts, ENC(0));
        wr(qts, SINK(0), CONTROL, 0);

        qtest_memread(qts, FUZZ_GUARD, guard, FUZZ_GUARD_LEN);
        for (uint64_t i = 0, seen = 0; i < FUZZ_GUARD_LEN; i++) {
            uint64_t addr = FUZZ_GUARD + i;
            bool inside = false;

            if (guard[i] == 0xa5) {
                continue;
            }
            traced += !seen++;
            for (unsigned k = 0; k < ranges->len && !inside; k++) {
                uint64_t *b = &g_array_index(ranges, uint64_t, 2 * k);

                inside = b[0] <= addr && addr <= b[1];
            }
            if (!inside) {
                g_test_message("case %u: 0x%" PRIx64 " written outside "
                               "every buffer the sink had", c, addr);
            }
            g_assert_true(inside);
        }
        g_array_free(ranges, true);
    }
    /* a fuzz that never lets the sink write checks nothing */
    g_test_message("%u cases wrote trace into the guard region", traced);
    g_assert_cmpuint(traced, >, n_cases / 10);
    g_rand_free(r);
    g_rand_free(dr);
    qtest_quit(qts);
}

/*
 * A data trace in E-trace, then a trace in N-trace, while the hart runs:
 * each trace is its own codec's.  (The E-trace codec's way of sending
 * the accesses stayed on into the N-trace one, which has no E-trace
 * codec: QEMU crashed on its first records.)
 */
static void test_data_then_ntrace(void)
{
    QTestState *qts;

    qts = qtest_init("-accel tcg -machine virt,rvtrace=on,rvtrace-chardev=tr "
                     "-chardev null,id=tr -bios none -S");
    qtest_memwrite(qts, FUZZ_CODE, fuzz_program, sizeof(fuzz_program));
    qtest_qmp_assert_success(qts, "{ 'execute': 'cont' }");
    for (int i = 0; i < 4; i++) {
        uint32_t format = FORMAT(i & 1);

        setup_smem(qts, FUZZ_GUARD, FUZZ_GUARD + FUZZ_GUARD_LEN - 4, 0);
        wr(qts, ENC(0), CONTROL, ACTIVE | format | INST_MODE(6));
        wr(qts, ENC(0), DATA_CONTROL, 2);
        wr(qts, ENC(0), CONTROL, ACTIVE | ENABLE | INST_TRACING | format |
           INST_MODE(6));
        g_usleep(20 * 1000);
        wr(qts, ENC(0), CONTROL, ACTIVE | format | INST_MODE(6));
        wait_empty(qts, ENC(0));
        g_assert_cmphex(rd(qts, ENC(0), CONTROL) & FORMAT(7), ==, format);
        /* it traced: the sink wrote */
        g_assert_cmphex(rd(qts, SINK(0), WP_LOW), !=,
                        (uint32_t)FUZZ_GUARD);
        wr(qts, SINK(0), CONTROL, 0);
    }
    qtest_quit(qts);
}

/*
 * inst-features: trTeInstFeatures at reset while tracing from reset,
 * legalised as the same write by a guest would be (SrcID and SrcBits
 * come from their own properties), in either format; without tracing
 * from reset the encoder is inactive and the register reads 0.
 */
static void test_reset_features(void)
{
    /* every E-trace optimisation, and SrcID bits the property ignores */
    const uint32_t all = 0xfe | 0xabc << 16;

    QTestState *qts;

    for (int ntrace = 0; ntrace < 2; ntrace++) {
        uint32_t reset;

        qts = qtest_initf("-machine virt,rvtrace=on,rvtrace-chardev=tr "
                          "-chardev null,id=tr -bios none -S "
                          "-global riscv-trace-encoder.format=%s "
                          "-global riscv-trace-encoder.inst-features=%u",
                          ntrace ? "ntrace" : "etrace", all);
        reset = rd(qts, ENC(0), INST_FEATURES);
        /* N-trace keeps implicit return and its mode of them */
        g_assert_cmphex(reset, ==, ntrace ? 0xc8 : 0xfe);
        /* a guest's write of the same modes reads the same */
        wr(qts, ENC(0), CONTROL, 0);
        wr(qts, ENC(0), CONTROL, ACTIVE | FORMAT(ntrace));
        wr(qts, ENC(0), INST_FEATURES, all & 0xffff);
        g_assert_cmphex(rd(qts, ENC(0), INST_FEATURES), ==, reset);
        qtest_quit(qts);
    }
    qts = qtest_initf("-machine virt,rvtrace=on -bios none -S "
                      "-global riscv-trace-encoder.inst-features=%u", all);
    g_assert_cmphex(rd(qts, ENC(0), CONTROL) & ACTIVE, ==, 0);
    g_assert_cmphex(rd(qts, ENC(0), INST_FEATURES), ==, 0);
    qtest_quit(qts);
}

/*
 * inst-mode, inst-sync-mode, inst-sync-max: trTeControl's InstMode,
 * InstSyncMode and InstSyncMax at reset while tracing from reset (a
 * tool tracing firmware it cannot change: N-trace BTM, no periodic
 * sync), InstMode legalised as a guest's write; by default the fields
 * of an activation (HTM or delta, sync by packets, 2^4).
 */
static void test_reset_control(void)
{
    const uint32_t fields = INST_MODE(7) | SYNC_MODE(3) | SYNC_MAX(15);
    static const struct {
        const char *format;
        const char *props;
        uint32_t want;
    } cases[] = {
        { "etrace", "", INST_MODE(6) | SYNC_MODE(1) | SYNC_MAX(4) },
        { "ntrace", "", INST_MODE(6) | SYNC_MODE(1) | SYNC_MAX(4) },
        { "ntrace", "inst-mode=3 inst-sync-mode=0 inst-sync-max=9",
          INST_MODE(3) | SYNC_MODE(0) | SYNC_MAX(9) },
        /* BTM is N-trace's only: E-trace takes delta, as a guest does */
        { "etrace", "inst-mode=3 inst-sync-mode=2 inst-sync-max=15",
          INST_MODE(6) | SYNC_MODE(2) | SYNC_MAX(15) },
    };

    for (int i = 0; i < ARRAY_SIZE(cases); i++) {
        g_autofree char *globals = NULL;
        g_auto(GStrv) props = g_strsplit(cases[i].props, " ", 0);
        QTestState *qts;
        uint32_t ctl;

        globals = g_strdup("");
        for (char **p = props; *p && **p; p++) {
            char *more = g_strdup_printf("%s -global riscv-trace-encoder.%s",
                                         globals, *p);

            g_free(globals);
            globals = more;
        }
        qts = qtest_initf("-machine virt,rvtrace=on,rvtrace-chardev=tr "
                          "-chardev null,id=tr -bios none -S "
                          "-global riscv-trace-encoder.format=%s%s",
                          cases[i].format, globals);
        ctl = rd(qts, ENC(0), CONTROL);
        g_assert_cmphex(ctl & (ACTIVE | ENABLE | INST_TRACING), ==,
                        ACTIVE | ENABLE | INST_TRACING);
        g_assert_cmphex(ctl & fields, ==, cases[i].want);
        qtest_quit(qts);
    }
}

/* Whether QEMU's log holds text (a guest error it reported). */
static bool log_has(const char *log, const char *text)
{
    g_autofree char *contents = NULL;

    g_assert_true(g_file_get_contents(log, &contents, NULL, NULL));
    return strstr(contents, text) != NULL;
}

/*
 * Every write a device ignores is reported with -d guest_errors: to a
 * read-only register, to an inactive component, to the RAM sink's
 * pointers while it is enabled.
 */
static void test_guest_errors(void)
{
    g_autofree char *log = NULL;
    int fd = g_file_open_tmp("riscv-trace-test-XXXXXX.log", &log, NULL);
    QTestState *qts;

    g_assert_cmpint(fd, >=, 0);
    close(fd);
    qts = qtest_initf("-machine virt,rvtrace=on,rvtrace-chardev=tr "
                      "-chardev null,id=tr -bios none "
                      "-d guest_errors -D %s", log);
    /* with a chardev the encoder traces from reset: make it inactive */
    wr(qts, ENC(0), CONTROL, 0);
    wr(qts, ENC(0), INST_FEATURES, 1);
    wr(qts, ENC(0), CONTROL, ACTIVE);
    wr(qts, ENC(0), IMPL, 0);
    wr(qts, PIB, IMPL, 0);
    wr(qts, SINK(0), CONTROL, ACTIVE);
    wr(qts, SINK(0), DATA, 0);
    wr(qts, SINK(0), CONTROL, ACTIVE | ENABLE);
    wr(qts, SINK(0), START_LOW, 0x1000);
    qtest_quit(qts);

    g_assert_true(log_has(log, "riscv-trace-encoder: hart 0: write to 0x8 "
                          "while not Active"));
    g_assert_true(log_has(log, "riscv-trace-encoder: hart 0: write to "
                          "read-only or unimplemented register 0x4"));
    g_assert_true(log_has(log, "riscv-trace-pibsink: write to read-only or "
                          "unimplemented register 0x4"));
    g_assert_true(log_has(log, "riscv-trace-ramsink: write to 0x10 while "
                          "not Active or while Enabled"));
    g_assert_true(log_has(log, "riscv-trace-ramsink: write to read-only or "
                          "unimplemented register 0x40"));
    unlink(log);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/riscv/trace/impl", test_impl);
    qtest_add_func("/riscv/trace/encoder/active", test_encoder_active);
    qtest_add_func("/riscv/trace/encoder/warl", test_encoder_warl);
    qtest_add_func("/riscv/trace/encoder/discovery", test_encoder_discovery);
    qtest_add_func("/riscv/trace/encoder/data-control",
                   test_encoder_data_control);
    qtest_add_func("/riscv/trace/encoder/ntrace", test_encoder_ntrace);
    qtest_add_func("/riscv/trace/ramsink/warl", test_ramsink_warl);
    qtest_add_func("/riscv/trace/smem/support-packets",
                   test_smem_support_packets);
    qtest_add_func("/riscv/trace/smem/stop-on-wrap", test_smem_stop_on_wrap);
    qtest_add_func("/riscv/trace/smem/wrap", test_smem_wrap);
    qtest_add_func("/riscv/trace/smem/bad-buffer", test_smem_bad_buffer);
    qtest_add_func("/riscv/trace/sram", test_sram);
    qtest_add_func("/riscv/trace/any-write", test_any_write);
    qtest_add_func("/riscv/trace/ramsink/mode-locked-while-enabled",
                   test_mode_locked_while_enabled);
    qtest_add_func("/riscv/trace/encoder/src-id-without-bits",
                   test_src_id_without_bits);
    qtest_add_func("/riscv/trace/fuzz-registers", test_fuzz_registers);
    qtest_add_func("/riscv/trace/encoder/reset-features",
                   test_reset_features);
    qtest_add_func("/riscv/trace/encoder/reset-control",
                   test_reset_control);
    qtest_add_func("/riscv/trace/encoder/data-then-ntrace",
                   test_data_then_ntrace);
    qtest_add_func("/riscv/trace/guest-errors", test_guest_errors);
    return g_test_run();
}

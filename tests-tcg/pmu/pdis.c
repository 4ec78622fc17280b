/*
 * Smpdis (docs/pdis.rst), M mode, RV64 and RV32: the registers' WARL
 * rules; the PDIS counter counting the SEL type, overflowing on exactly
 * the Nth instruction, which is the one sampled, and reloading INITVAL;
 * the skidless LCOFI; the record of loads, stores, AMOs and transfers with
 * the cache and TLB model; event and latency filters, ACC, collisions and
 * the PDIS events; the memory buffer (WRAP, SOF, BMI and LAMBI, TF on a
 * buffer outside RAM); and selection without bias.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "pdis_test.h"

#if RV_XLEN == 32
#define LOAD "lw"
#define STORE "sw"
#else
#define LOAD "ld"
#define STORE "sd"
#endif

static volatile unsigned long data_buf[64] __attribute__((aligned(64)));
/* a page for the model, and 32 KiB on (same L1 set, other TLB set) */
static struct {
    volatile unsigned long page[4096 / sizeof(long)];
    uint8_t pad[32768 - 4096];
    volatile unsigned long alias[4096 / sizeof(long)];
} model __attribute__((aligned(32768)));
static uint8_t amb[16384] __attribute__((aligned(16384)));

/* Instructions of 4 bytes each in the asm blocks (no compression). */
#define NORVC ".option push\n.option norvc\n"
#define RVC_BACK ".option pop\n"

static void stop(void)
{
    csr_write(mcountinhibit, ~0UL);
    csr_clear(mip, LCOFIP | LAMBIP);
}

/* Counters 4..7 count the four PDIS events in M mode. */
static void count_pdis_events(void)
{
    set_event(4, EV_PDIS_SAMPLES);
    set_event(5, EV_PDIS_COLLISIONS);
    set_event(6, EV_PDIS_FILTERED);
    set_event(7, EV_PDIS_DROPPED);
    for (unsigned i = 4; i <= 7; i++) {
        set_counter(i, 0);
    }
}

/*
 * Set PDIS up with its INITVAL, COUNT far from an overflow: the blocks
 * set COUNT for their nth instruction (pdis_counter(n, period)).
 */
static void start(uint64_t ctl, unsigned n, uint32_t period)
{
    stop();
    pdis_write(CSR_MPDISCTL, ctl);
    pdis_write(CSR_SPDISCOUNTER, pdis_counter(n, period) & ~0xffffffffULL);
}

/*
 * The block the counting tests run: csrw spdiscounter (the write is done
 * instead of its own count), then seven instructions of every type.
 * a[i] is the address of instruction i.
 */
static void run_block(uint64_t counter, unsigned long *a)
{
    csr_write(mcountinhibit, ~0xfaUL);      /* PDIS and counters 3..7 */
    asm volatile(NORVC
                 "csrw 0x5c9, %[cnt]\n"
                 "0: addi t0, zero, 1\n"
                 "1: " LOAD " t1, 0(%[buf])\n"
                 "2: " STORE " t0, 8(%[buf])\n"
                 "3: amoadd.w t1, t0, (%[buf])\n"
                 "4: beq t0, zero, 6f\n"
                 "5: jal t0, 6f\n"
                 "6: addi t0, zero, 2\n"
                 "7: csrw mcountinhibit, %[all]\n"
                 RVC_BACK
                 "lla %[a0], 0b\n"
                 : [a0] "=&r"(a[0])
                 : [cnt] "r"((unsigned long)counter), [buf] "r"(data_buf),
                   [all] "r"(~0UL)
                 : "t0", "t1", "memory");
    for (int i = 1; i < 8; i++) {
        a[i] = a[i - 1] + 4;
    }
}

static void test_registers(void)
{
    uint64_t avail;

    stop();
    rv_rule("mcountinhibit[1] inhibits the PDIS counter: it is writable");
    CHECK(csr_read(mcountinhibit) & 2);
    avail = csr_read(mcountinhibit) & ~7UL;

    rv_rule("mpdisctl: HPM of the counters there are, MEM, ACC, TS, PA, "
            "U, S, M and OF writable; EPT, custom and WARL bits 0; SEL "
            "keeps its value on a reserved encoding");
    pdis_write(CSR_MPDISCTL, ~0ULL);
    CHECK_EQ(pdis_read(CSR_MPDISCTL), avail | PDIS_MEM | PDIS_ACC | PDIS_TS |
             PDIS_PA | PDIS_U | PDIS_S | PDIS_M | PDIS_OF);
    pdis_write(CSR_MPDISCTL, PDIS_M | PDIS_SEL_CTRL);
    pdis_write(CSR_MPDISCTL, PDIS_M | 5);
    CHECK_EQ(pdis_read(CSR_MPDISCTL), PDIS_M | PDIS_SEL_CTRL);

    rv_rule("spdisctl: bit 62 (M) reads 0 and a write keeps mpdisctl.M");
    CHECK_EQ(pdis_read(CSR_SPDISCTL), PDIS_SEL_CTRL);
    pdis_write(CSR_SPDISCTL, PDIS_S | PDIS_SEL_LOAD);
    CHECK_EQ(pdis_read(CSR_MPDISCTL), PDIS_M | PDIS_S | PDIS_SEL_LOAD);

    rv_rule("scountovf[1] is mpdisctl.OF");
    CHECK_EQ(csr_read(CSR_SCOUNTOVF) & 2, 0);
    pdis_write(CSR_MPDISCTL, PDIS_OF);
    CHECK_EQ(csr_read(CSR_SCOUNTOVF) & 2, 2);
    pdis_write(CSR_MPDISCTL, 0);

    rv_rule("spdiscounter: COUNT and INITVAL hold any value");
    pdis_write(CSR_SPDISCOUNTER, 0x123456789abcdef0ULL);
    CHECK_EQ(pdis_read(CSR_SPDISCOUNTER), 0x123456789abcdef0ULL);

    rv_rule("spdisevmask and spdisevmatch: bits 55:0");
    pdis_write(CSR_SPDISEVMASK, ~0ULL);
    CHECK_EQ(pdis_read(CSR_SPDISEVMASK), (1ULL << 56) - 1);
    pdis_write(CSR_SPDISEVMATCH, ~0ULL);
    CHECK_EQ(pdis_read(CSR_SPDISEVMATCH), (1ULL << 56) - 1);
    pdis_write(CSR_SPDISEVMASK, 0);
    pdis_write(CSR_SPDISEVMATCH, 0);

    rv_rule("spdisfilter: THRESH and INV; LATSEL 0 (only TOTAL)");
    csr_write(0x5cc, ~0UL);
    CHECK_EQ(csr_read(0x5cc), 0x1fff);
    csr_write(0x5cc, 0);

    rv_rule("spdisambaddr: bits 5:0 (RV32 4:0) read 0 (docs/pdis.rst)");
    csr_write(0x5ce, ~0UL);
    CHECK_EQ(csr_read(0x5ce), ~0UL << (RV_XLEN == 64 ? 6 : 5));

    rv_rule("spdisambcs: SIZE is at most 20 (4 GiB); EMPTY reads 1; TRV "
            "0 while EN=0; WPRI bits 0");
    pdis_write(CSR_SPDISAMBCS, AMB_SIZE(31));
    CHECK_EQ(pdis_read(CSR_SPDISAMBCS), AMB_SIZE(20) | AMB_EMPTY);
    pdis_write(CSR_SPDISAMBCS, ~0ULL & ~AMB_EN);
    CHECK_EQ(pdis_read(CSR_SPDISAMBCS),
             AMB_TF | AMB_BMI | AMB_SIZE(20) | (0xfffffULL << 12) |
             AMB_BMITH(3) | AMB_BMIEN | AMB_SOF | AMB_WRAP | AMB_EMPTY);
    pdis_write(CSR_SPDISAMBCS, 0);
    csr_write(0x5ce, 0);

    rv_rule("the LAMBI bit (14) of mie, mip and mideleg is writable");
    csr_set(mie, LAMBIP);
    CHECK(csr_read(mie) & LAMBIP);
    csr_clear(mie, LAMBIP);
    csr_set(mideleg, LAMBIP);
    CHECK(csr_read(mideleg) & LAMBIP);
    csr_clear(mideleg, LAMBIP);
}

/* lcofi_record() without shpmspc and shpmsdata: this hart has no Sspesa */
static void lcofi_handler(unsigned irq)
{
    (void)irq;
    csr_write(mcountinhibit, ~0UL);
    lcofi_epc = csr_read(mepc);
    lcofi_taken++;
    csr_clear(mip, LCOFIP);
}

static void test_overflow(void)
{
    unsigned long a[8];
    uint64_t rec[REC_N];

    rv_irq_set_handler(IRQ_LCOF, lcofi_handler);
    for (unsigned n = 1; n <= 6; n++) {
        start(PDIS_M | PDIS_SEL_ALL, n, 1000);
        lcofi_taken = 0;
        csr_set(mie, LCOFIP);
        rv_irq_enable();
        run_block(pdis_counter(n, 1000), a);
        rv_irq_disable();
        csr_clear(mie, LCOFIP);
        pdis_read_data(rec);
        rv_printf("  SEL=0, overflow on instruction %u\n", n);
        rv_rule("the instruction that overflows the counter is sampled");
        CHECK_EQ(rec[REC_PC], a[n - 1]);
        rv_rule("a qualified sample sets OF and pends a skidless LCOFI "
                "(taken before the next instruction retires)");
        CHECK(pdis_read(CSR_MPDISCTL) & PDIS_OF);
        CHECK_EQ(lcofi_taken, 1);
        CHECK_EQ(lcofi_epc, a[n]);
    }

    rv_rule("an overflow reloads COUNT with INITVAL");
    start(PDIS_M | PDIS_SEL_ALL, 2, 10);
    run_block(pdis_counter(2, 10), a);
    /* 6 instructions after the overflow: addi ... addi, csrw */
    CHECK_EQ((uint32_t)pdis_read(CSR_SPDISCOUNTER), (uint32_t)-10 + 5);
    CHECK_EQ(pdis_read(CSR_SPDISCOUNTER) >> 32, (uint32_t)-10);
    rv_rule("without LCOFIE the LCOFI stays pending");
    CHECK(csr_read(mip) & LCOFIP);

    rv_rule("mcountinhibit[1]=1: the counter does not count");
    start(PDIS_M | PDIS_SEL_ALL, 2, 10);
    pdis_write(CSR_SPDISCOUNTER, 5);
    asm volatile("csrw mcountinhibit, %0\n nop\n nop\n"
                 "csrw mcountinhibit, %1\n" : : "r"(~0UL & ~0UL), "r"(~0UL));
    CHECK_EQ(pdis_read(CSR_SPDISCOUNTER), 5);
    rv_rule("M=0: M-mode instructions are not counted");
    start(PDIS_S | PDIS_U, 2, 10);
    pdis_write(CSR_SPDISCOUNTER, 5);
    asm volatile("csrw mcountinhibit, %0\n nop\n nop\n"
                 "csrw mcountinhibit, %1\n" : : "r"(~2UL), "r"(~0UL));
    CHECK_EQ(pdis_read(CSR_SPDISCOUNTER), 5);
    stop();
}

/* The record of the nth instruction of type sel in the block. */
static void sample_in_block(unsigned sel, unsigned n, uint64_t extra,
                            unsigned long *a, uint64_t *rec)
{
    start(PDIS_M | sel | extra, n, 1000);
    run_block(pdis_counter(n, 1000), a);
    pdis_read_data(rec);
}

static void test_types(void)
{
    unsigned long a[8], buf = (unsigned long)data_buf;
    uint64_t rec[REC_N];

    set_event(3, EV_DEC_LOAD);
    set_counter(3, 0);
    sample_in_block(PDIS_SEL_LOAD, 1, PDIS_PA | (1ULL << 3), a, rec);
    rv_rule("SEL=1: the first load; TYPE=1, pdisadr1 its address, "
            "pdisadr2 its physical address (PA=1)");
    CHECK_EQ(rec[REC_PC], a[1]);
    CHECK_EQ(HDR_TYPE(rec[REC_HDR]), 1);
    CHECK_EQ(rec[REC_ADR1], buf);
    CHECK_EQ(rec[REC_ADR2], buf);
    rv_rule("HPM3: counter 3 (INST.DEC.LOAD.SPEC, not delegated as PDIS "
            "is not) counts the sampled load");
    CHECK_EQ(rec[REC_HDR] & 0xfffffff8, 1 << 3);
    rv_rule("FMT and SFMT are 0");
    CHECK_EQ(rec[REC_HDR] & HDR_FMT_MASK, 0);

    sample_in_block(PDIS_SEL_STORE, 1, PDIS_PA | (1ULL << 3), a, rec);
    rv_rule("SEL=2: the first store; TYPE=2; PA=0 leaves pdisadr2 0");
    CHECK_EQ(rec[REC_PC], a[2]);
    CHECK_EQ(HDR_TYPE(rec[REC_HDR]), 2);
    CHECK_EQ(rec[REC_ADR1], buf + 8);
    rv_rule("HPM3: the store did not incur INST.DEC.LOAD.SPEC");
    CHECK_EQ(rec[REC_HDR] & 0xfffffff8, 0);
    sample_in_block(PDIS_SEL_STORE, 1, 0, a, rec);
    CHECK_EQ(rec[REC_ADR2], 0);

    sample_in_block(PDIS_SEL_LDST, 3, 0, a, rec);
    rv_rule("SEL=3: loads and stores; an AMO is TYPE=3, PARTIAL");
    CHECK_EQ(rec[REC_PC], a[3]);
    CHECK_EQ(HDR_TYPE(rec[REC_HDR]), 3);
    CHECK(rec[REC_HDR] & HDR_PARTIAL);
    CHECK_EQ(rec[REC_ADR1], buf);

    sample_in_block(PDIS_SEL_CTRL, 1, 0, a, rec);
    rv_rule("SEL=4: a branch not taken is NTBR, pdisadr1 where it went, "
            "predicted (forward)");
    CHECK_EQ(rec[REC_PC], a[4]);
    CHECK_EQ(HDR_TYPE(rec[REC_HDR]), 4);
    CHECK_EQ(rec[REC_HDR] & (HDR_NTBR | HDR_TKBR | HDR_MISPRED), HDR_NTBR);
    CHECK_EQ(rec[REC_ADR1], a[5]);
    sample_in_block(PDIS_SEL_CTRL, 2, 0, a, rec);
    rv_rule("SEL=4: jal t0 is a direct call (DIRCALL), pdisadr1 its "
            "target");
    CHECK_EQ(rec[REC_PC], a[5]);
    CHECK_EQ(rec[REC_HDR] & ~0xffffffffULL, HDR_DIRCALL);
    CHECK_EQ(rec[REC_ADR1], a[6]);
    stop();
}

static unsigned long load_pc;

/* A load of addr sampled (SEL=1, the first load); load_pc its address. */
static uint64_t sample_load(volatile unsigned long *addr, uint64_t *rec)
{
    unsigned long pc;

    start(PDIS_M | PDIS_SEL_LOAD, 1, 1000);
    csr_write(mcountinhibit, ~0xf2UL);
    asm volatile("csrw 0x5c9, %[cnt]\n"
                 "1: " LOAD " t1, 0(%[p])\n"
                 "csrw mcountinhibit, %[all]\n"
                 "lla %0, 1b\n"
                 : "=&r"(pc)
                 : [cnt] "r"((unsigned long)pdis_counter(1, 1000)),
                   [p] "r"(addr), [all] "r"(~0UL)
                 : "t1", "memory");
    pdis_read_data(rec);
    load_pc = pc;
    return rec[REC_HDR];
}

#define MISSES (HDR_L1MISS | HDR_LLMISS | HDR_L1TLBMISS | HDR_LLTLBMISS)

static void test_model(void)
{
    uint64_t rec[REC_N], hdr;

    rv_rule("model: a new page and line miss every level (DSRC 3), "
            "TOTAL 3+6+30+12+80");
    hdr = sample_load(&model.page[16], rec);
    CHECK_EQ(rec[REC_PC], load_pc);
    CHECK_EQ(hdr & MISSES, MISSES);
    CHECK_EQ(HDR_DSRC(hdr), 3);
    CHECK_EQ(rec[REC_LAT], 131);
    rv_rule("model: the same line again hits (DSRC 1), TOTAL 3");
    hdr = sample_load(&model.page[16], rec);
    CHECK_EQ(hdr & MISSES, 0);
    CHECK_EQ(HDR_DSRC(hdr), 1);
    CHECK_EQ(rec[REC_LAT], 3);
    rv_rule("model: a new line of the same page misses the caches only");
    hdr = sample_load(&model.page[16 + 64 / sizeof(long)], rec);
    CHECK_EQ(hdr & MISSES, HDR_L1MISS | HDR_LLMISS);
    CHECK_EQ(rec[REC_LAT], 3 + 12 + 80);
    rv_rule("model: a line evicted from L1 (32 KiB apart) hits LL (DSRC 2)");
    sample_load(&model.alias[16], rec);
    hdr = sample_load(&model.page[16], rec);
    CHECK_EQ(hdr & MISSES, HDR_L1MISS);
    CHECK_EQ(HDR_DSRC(hdr), 2);
    CHECK_EQ(rec[REC_LAT], 3 + 12);
    stop();
}

static uint64_t counter_of(unsigned i)
{
    return get_counter(i);
}

static void test_filters(void)
{
    unsigned long a[8];
    uint64_t rec[REC_N], marker[REC_N];

    count_pdis_events();
    /* a marker in the data registers: a filtered sample leaves them */
    csr_write(0x150, 0x60);
    csr_write(0x151, 0x5a5a);
    pdis_read_data(marker);

    rv_rule("event filter: a sample whose header does not match "
            "spdisevmatch under spdisevmask is discarded and counted");
    pdis_write(CSR_SPDISEVMASK, 7);
    pdis_write(CSR_SPDISEVMATCH, 1);            /* loads only */
    sample_in_block(PDIS_SEL_ALL, 1, 0, a, rec);
    CHECK_EQ(rec[REC_HDR], marker[REC_HDR]);
    CHECK_EQ(pdis_read(CSR_MPDISCTL) & PDIS_OF, 0);
    CHECK_EQ(counter_of(6), 1);
    CHECK_EQ(counter_of(4), 0);
    rv_rule("event filter: a matching sample qualifies");
    sample_in_block(PDIS_SEL_ALL, 2, 0, a, rec);
    CHECK_EQ(rec[REC_PC], a[1]);
    CHECK_EQ(counter_of(4), 1);

    rv_rule("ACC=1: after a discarded sample the next counted "
            "instruction is selected");
    sample_in_block(PDIS_SEL_ALL, 1, PDIS_ACC, a, rec);
    CHECK_EQ(rec[REC_PC], a[1]);
    CHECK_EQ(counter_of(6), 2);
    CHECK_EQ(counter_of(4), 2);
    pdis_write(CSR_SPDISEVMASK, 0);
    pdis_write(CSR_SPDISEVMATCH, 0);

    rv_rule("latency filter: TOTAL >= THRESH qualifies");
    csr_write(0x5cc, 100);
    sample_load(&data_buf[32], rec);            /* hits: TOTAL 3 */
    sample_load(&data_buf[32], rec);
    CHECK_EQ(counter_of(6), 4);
    sample_load((volatile unsigned long *)&amb[8192], rec);  /* misses */
    CHECK_EQ(rec[REC_ADR1], (unsigned long)&amb[8192]);
    rv_rule("latency filter: INV=1 qualifies TOTAL < THRESH");
    csr_write(0x5cc, 100 | (1 << 12));
    sample_load(&data_buf[32], rec);
    CHECK_EQ(rec[REC_ADR1], (unsigned long)&data_buf[32]);
    CHECK_EQ(counter_of(6), 4);
    csr_write(0x5cc, 0);
    stop();
}

static void test_collisions(void)
{
    uint64_t samples, collisions;

    count_pdis_events();
    rv_rule("collision: an overflow within the 8 counted instructions "
            "after a selection is counted, reloads, and selects nothing");
    start(PDIS_M | PDIS_SEL_ALL, 3, 3);
    csr_write(mcountinhibit, ~0xf2UL);
    asm volatile(NORVC "csrw 0x5c9, %0\n"
                 ".rept 30\n addi t0, t0, 1\n .endr\n"
                 "csrw mcountinhibit, %1\n" RVC_BACK
                 : : "r"((unsigned long)pdis_counter(3, 3)), "r"(~0UL)
                 : "t0");
    samples = counter_of(4);
    collisions = counter_of(5);
    CHECK_EQ(samples, 4);
    CHECK_EQ(collisions, 6);
    rv_rule("overflows = SAMPLES + COLLISIONS + FILTERED + DROPPED");
    CHECK_EQ(samples + collisions + counter_of(6) + counter_of(7), 10);
    stop();
}

/* Records of a 30-instruction block, every 10th, to the buffer. */
static unsigned long run_straight_block(void)
{
    unsigned long start_pc;

    csr_write(mcountinhibit, ~0xf2UL);
    asm volatile(NORVC "csrw 0x5c9, %1\n"
                 "1: .rept 30\n addi t0, t0, 1\n .endr\n"
                 "csrw mcountinhibit, %2\n" RVC_BACK
                 "lla %0, 1b\n"
                 : "=&r"(start_pc)
                 : "r"((unsigned long)pdis_counter(10, 10)), "r"(~0UL)
                 : "t0");
    return start_pc;
}

static volatile unsigned long lambi_taken;

static void lambi_handler(unsigned irq)
{
    (void)irq;
    lambi_taken++;
    csr_clear(mip, LAMBIP);
}

static void test_buffer(void)
{
    unsigned long base = (unsigned long)amb, pc;
    uint64_t rec[REC_N], cs;

    count_pdis_events();
    memset(amb, 0, sizeof(amb));
    rv_rule("MEM=1: records go to the buffer at spdisambaddr, which "
            "advances by one record each");
    start(PDIS_M | PDIS_SEL_ALL | PDIS_MEM | PDIS_TS, 10, 10);
    csr_write(0x5ce, base);
    pdis_write(CSR_SPDISAMBCS, AMB_EN | AMB_SIZE(0));
    rv_rule("TRV: the buffer's page translates; EMPTY: nothing held back");
    CHECK_EQ(pdis_read(CSR_SPDISAMBCS) & (AMB_TRV | AMB_EMPTY),
             AMB_TRV | AMB_EMPTY);
    uint64_t t0 = rv_mtime();
    pc = run_straight_block();
    uint64_t t1 = rv_mtime();
    CHECK_EQ(csr_read(0x5ce), base + 3 * PDIS_RECORD_SIZE);
    for (int i = 0; i < 3; i++) {
        pdis_unpack(amb + i * PDIS_RECORD_SIZE, rec);
        CHECK_EQ(rec[REC_PC], pc + 4 * (10 * i + 9));
        CHECK_EQ(HDR_TYPE(rec[REC_HDR]), 0);
        rv_rule("TS=1: pdistime is time when M-mode has PDIS");
        CHECK(rec[REC_TIME] >= (unsigned long)t0 &&
              rec[REC_TIME] <= (unsigned long)t1);
    }
    CHECK_EQ(counter_of(4), 3);
    CHECK(pdis_read(CSR_MPDISCTL) & PDIS_OF);

    rv_rule("the pointer wraps to the base and sets WRAP");
    csr_write(0x5ce, base + 4096 - PDIS_RECORD_SIZE);
    run_straight_block();
    CHECK_EQ(csr_read(0x5ce), base + 2 * PDIS_RECORD_SIZE);
    CHECK(pdis_read(CSR_SPDISAMBCS) & AMB_WRAP);
    pdis_unpack(amb + 4096 - PDIS_RECORD_SIZE, rec);
    CHECK(rec[REC_PC] != 0);

    rv_rule("SOF=1 after a wrap: records are dropped and counted, the "
            "pointer stays");
    pdis_write(CSR_SPDISAMBCS, AMB_EN | AMB_SOF | AMB_WRAP);
    csr_write(0x5ce, base);
    run_straight_block();
    CHECK_EQ(csr_read(0x5ce), base);
    CHECK_EQ(counter_of(7), 3);

    rv_rule("BMIEN: when the pointer's top two offset bits become BMITH, "
            "BMI is set and LAMBI is pending; the LAMBI is taken");
    pdis_write(CSR_SPDISAMBCS, AMB_EN | AMB_BMIEN | AMB_BMITH(2));
    csr_write(0x5ce, base + 2048 - 2 * PDIS_RECORD_SIZE);
    lambi_taken = 0;
    run_straight_block();
    CHECK(pdis_read(CSR_SPDISAMBCS) & AMB_BMI);
    CHECK(csr_read(mip) & LAMBIP);
    rv_irq_set_handler(IRQ_LAMBI, lambi_handler);
    csr_set(mie, LAMBIP);
    rv_irq_enable();
    asm volatile("nop");
    rv_irq_disable();
    csr_clear(mie, LAMBIP);
    CHECK_EQ(lambi_taken, 1);

    rv_rule("a buffer outside writable RAM (the boot ROM): TF, TFPTR "
            "the faulting page's offset, LAMBI; the record is dropped");
    pdis_write(CSR_SPDISAMBCS, AMB_EN | AMB_SIZE(1));
    csr_write(0x5ce, 0x3000);
    run_straight_block();
    cs = pdis_read(CSR_SPDISAMBCS);
    CHECK(cs & AMB_TF);
    CHECK_EQ((cs >> AMB_TFPTR_SHIFT) & 0xfffff, 1);
    CHECK(csr_read(mip) & LAMBIP);
    CHECK_EQ(csr_read(0x5ce), 0x3000);
    rv_rule("while TF=1 records are dropped");
    CHECK_EQ(counter_of(7), 6);

    rv_rule("a hostile buffer (devices, nothing, beyond RAM, the top of "
            "the address space) only ever gets TF: no device is written");
    static const unsigned long hostile[] = {
        0x0, 0x100000 /* the test device: a write powers off */,
        0x2000000 /* CLINT */, 0xc000000 /* PLIC */,
        0x10000000 /* UART */, 0x30000000 /* PCIe ECAM */,
        0x88000000 /* beyond 128 MiB of RAM */,
        ~0UL << 12,
    };
    for (unsigned i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
        pdis_write(CSR_SPDISAMBCS, AMB_EN | AMB_SIZE(0));
        csr_write(0x5ce, hostile[i]);
        run_straight_block();
        CHECK(pdis_read(CSR_SPDISAMBCS) & AMB_TF);
        CHECK_EQ(csr_read(0x5ce), hostile[i]);
    }
    stop();
    pdis_write(CSR_SPDISAMBCS, 0);
}

/* A 5-instruction loop sampled with a period coprime to it. */
static void test_no_bias(void)
{
    unsigned long base = (unsigned long)amb, loop;
    unsigned hits[5] = { 0 }, n, lo = ~0u, hi = 0;
    uint64_t rec[REC_N];

    rv_rule("no bias: every instruction of a loop is sampled as often "
            "(period 17, coprime to 5)");
    start(PDIS_M | PDIS_SEL_ALL | PDIS_MEM, 17, 17);
    csr_write(0x5ce, base);
    pdis_write(CSR_SPDISAMBCS, AMB_EN | AMB_SIZE(2));
    csr_write(mcountinhibit, ~2UL);
    asm volatile(NORVC "li t0, 850\n"
                 "csrw 0x5c9, %1\n"
                 "1: addi t0, t0, -1\n"
                 "addi t1, t1, 1\n"
                 "addi t2, t2, 1\n"
                 "nop\n"
                 "bnez t0, 1b\n"
                 "csrw mcountinhibit, %2\n" RVC_BACK
                 "lla %0, 1b\n"
                 : "=&r"(loop)
                 : "r"((unsigned long)pdis_counter(17, 17)), "r"(~0UL)
                 : "t0", "t1", "t2");
    n = (csr_read(0x5ce) - base) / PDIS_RECORD_SIZE;
    CHECK_EQ(n, 850 * 5 / 17);
    for (unsigned i = 0; i < n; i++) {
        pdis_unpack(amb + i * PDIS_RECORD_SIZE, rec);
        if (rec[REC_PC] >= loop && rec[REC_PC] < loop + 20) {
            hits[(rec[REC_PC] - loop) / 4]++;
        }
    }
    for (int i = 0; i < 5; i++) {
        lo = hits[i] < lo ? hits[i] : lo;
        hi = hits[i] > hi ? hits[i] : hi;
    }
    rv_printf("  samples per loop instruction: %u %u %u %u %u\n",
              hits[0], hits[1], hits[2], hits[3], hits[4]);
    CHECK_EQ(hits[0] + hits[1] + hits[2] + hits[3] + hits[4], n);
    CHECK_EQ(lo, hi);
    stop();
    pdis_write(CSR_SPDISAMBCS, 0);
}

int main(void)
{
    rv_rule("the ISA string has smpdis and sspdis");
    CHECK(rv_isa_has("smpdis"));
    CHECK(rv_isa_has("sspdis"));
    test_registers();
    test_overflow();
    test_types();
    test_model();
    test_filters();
    test_collisions();
    test_buffer();
    test_no_bias();
    return 0;
}

/*
 * CTR v0.1.4 draft, section 5.3 (Cycle Counting) and 3.3 (ctrdata CC,
 * CCV); implementation choice 10 (CC counts mcycle's cycles: with
 * -icount shift=0 one instruction is one cycle; CCV=0 after ctrcontrol
 * writes, CLR and FROZEN becoming 1; CC saturates at 0xffff).
 *
 * What is expected: a record is made when its transfer instruction
 * retires, so the CC of a record is the number of instructions retired
 * after the previous record's transfer, up to and including its own
 * transfer.  "A: j; N nops; B: j" gives B a CC of N + 1.
 *
 * Each block below turns M recording on with a csrw, runs its transfers
 * and turns recording off with a csrw, all in one asm statement, so that
 * no compiled code runs between the records it reads back.
 *
 * Run with -cpu rv64,ctr=on (or rv32) -icount shift=0.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_test.h"

#define CC(data)    (((data) >> 16) & 0xffffUL)
#define CCV(data)   (!!((data) & CTRDATA_CCV))

/* Draft 5.3: elapsed cycles of a CC value. */
static unsigned long cc_decode(unsigned long cc)
{
    unsigned long cce = cc >> 12, ccm = cc & 0xfff;

    return cce == 0 ? ccm : (4096 + ccm) << (cce - 1);
}

/*
 * The CC an exact count n must give: the largest representable value not
 * above n (the draft's undercount: low bits dropped), 0xffff at most.
 */
static unsigned long cc_expected(unsigned long n)
{
    for (unsigned long cce = 15; cce >= 1; cce--) {
        if (n >= 4096UL << (cce - 1)) {
            unsigned long ccm = (n >> (cce - 1)) - 4096;

            return cce << 12 | (ccm > 4095 ? 4095 : ccm);
        }
    }
    return n;
}

/* PCs of the transfers of one block, from la of its labels. */
struct pcs {
    unsigned long a, a_to, b, b_to, c, c_to;
};

static bool is_record(struct ctr_entry e, unsigned long src, unsigned long dst)
{
    return e.source == (src | CTRSOURCE_V) && e.target == dst;
}

/*
 * Two records: PRE, A "0: j 1f", BODY, B "2: j 3f".  on is the low half
 * of mctrcontrol (M plus the filters; RV32 has its high half set before).
 */
#define TWO_RECORDS(ctl_, p, pre, body, ...)                            \
    asm volatile(pre "\n"                                               \
                 "csrw 0x381, %[on]\n"                                  \
                 "0: j 1f\n"                                            \
                 "1:\n" body "\n"                                       \
                 "2: j 3f\n"                                            \
                 "3: csrw 0x381, zero\n"                                \
                 "la %[a], 0b\n la %[a_to], 1b\n"                       \
                 "la %[b], 2b\n la %[b_to], 3b\n"                       \
                 : [a] "=&r"(p.a), [a_to] "=&r"(p.a_to),                \
                   [b] "=&r"(p.b), [b_to] "=&r"(p.b_to)                 \
                 : [on] "r"((unsigned long)(ctl_)), ##__VA_ARGS__       \
                 : "t0", "memory")

#define NOPS(n) ".rept " #n "\n nop\n .endr\n"

/* Read A and B of a TWO_RECORDS block; true if they are where expected. */
static bool read_two(const struct pcs *p, struct ctr_entry *a,
                     struct ctr_entry *b)
{
    *a = ctr_read_entry(1);
    *b = ctr_read_entry(0);
    CHECK_EQ(csr_read(CSR_MCTRSTATUS) & CTRSTATUS_WRPTR, 2);
    return CHECK(is_record(*a, p->a, p->a_to)) &&
           CHECK(is_record(*b, p->b, p->b_to));
}

/* B's CC holds exactly n cycles (granularity of the draft's encoding). */
static void check_count(struct ctr_entry b, unsigned long n)
{
    unsigned long cc = CC(b.data), cce = cc >> 12;

    CHECK_EQ(CCV(b.data), 1);
    CHECK_EQ(cc, cc_expected(n));
    CHECK(cc_decode(cc) <= n);
    if (cce > 0 && cce < 15) {
        CHECK(n - cc_decode(cc) < (1UL << (cce - 1)));
    }
}

#define GAP(n)                                                          \
    do {                                                                \
        struct pcs p_;                                                  \
        struct ctr_entry a_, b_;                                        \
        ctr_reset();                                                    \
        TWO_RECORDS(CTR_M, p_, "", NOPS(n));                                \
        if (read_two(&p_, &a_, &b_)) {                                  \
            CHECK_EQ(CCV(a_.data), 0);                                  \
            check_count(b_, (n) + 1);                                   \
        }                                                               \
    } while (0)

static void test_gaps(void)
{
    rv_rule("draft 5.3: CC = cycles since the prior record (N nops: N+1)");
    GAP(0);
    GAP(1);
    GAP(7);
    GAP(100);
    GAP(1000);
    rv_rule("draft 5.3: CCE=0 holds up to 4095 cycles; 4096 is CCE=1 CCM=0");
    GAP(4094);
    GAP(4095);
}

/*
 * A, then a counted loop of k iterations of (unroll nops, addi, bnez),
 * then B: k * (unroll + 2) + 1 cycles.  Taken branches are inhibited.
 */
#define LOOP(iters, unroll)                                             \
    do {                                                                \
        struct pcs p_;                                                  \
        struct ctr_entry a_, b_;                                        \
        unsigned long n_ = (iters) * ((unroll) + 2UL) + 1;              \
        ctr_reset();                                                    \
        ctr_write_mctrcontrol(CTR_TKBRINH);                             \
        TWO_RECORDS(CTR_M | CTR_TKBRINH, p_, "mv t0, %[k]",             \
                    "4:" NOPS(unroll) "addi t0, t0, -1\n"               \
                    "bnez t0, 4b\n",                                    \
                    [k] "r"((unsigned long)(iters)));                   \
        if (read_two(&p_, &a_, &b_)) {                                  \
            check_count(b_, n_);                                        \
        }                                                               \
    } while (0)

static void test_exponent(void)
{
    rv_rule("draft 5.3: (4096 + CCM) << (CCE - 1), undercount within the "
            "granularity");
    LOOP(2100UL, 0);            /* 4201: CCE 1, exact */
    LOOP(4095UL, 0);            /* 8191: the largest CCE 1 value */
    LOOP(4096UL, 0);            /* 8193: CCE 2, 8192 */
    LOOP(5000UL, 0);            /* 10001: CCE 2, 10000 */
    LOOP(50001UL, 0);           /* 100003: CCE 5, 100000 */
    LOOP(333333UL, 1);          /* 1000000: CCE 8 */
    LOOP(1UL << 21, 30);        /* 2^26 + 1: CCE 15, CCM 0 */

    rv_rule("draft 5.3: CC saturates at 0xffff");
    LOOP(1UL << 22, 30);        /* 2^27 + 1 cycles: CCE would be 16 */
    LOOP(4194000UL, 30);        /* 134208001: above (4096+4095) << 14 */
}

/*
 * A; 10 nops; MID; 10 nops; B; 20 nops; C.  B follows MID, C follows B
 * by 21 cycles.
 */
#define THREE_RECORDS(mid, p)                                           \
    asm volatile("csrw 0x381, %[on]\n"                                  \
                 "0: j 1f\n"                                            \
                 "1:\n" NOPS(10) mid "\n" NOPS(10)                      \
                 "2: j 3f\n"                                            \
                 "3:\n" NOPS(20)                                        \
                 "4: j 5f\n"                                            \
                 "5: csrw 0x381, zero\n"                                \
                 "la %[b], 2b\n la %[b_to], 3b\n"                       \
                 "la %[c], 4b\n la %[c_to], 5b\n"                       \
                 : [b] "=&r"(p.b), [b_to] "=&r"(p.b_to),                \
                   [c] "=&r"(p.c), [c_to] "=&r"(p.c_to)                 \
                 : [on] "r"((unsigned long)CTR_M),                      \
                   [frz] "r"(CTRSTATUS_FROZEN),                         \
                   [clr] "r"((unsigned long)CTR_CLR)                    \
                 : "t1", "memory")

/* B's CCV is ccv_b; C is valid with 21 cycles. */
#define MIDDLE(mid, ccv_b)                                              \
    do {                                                                \
        struct pcs p_;                                                  \
        struct ctr_entry b_, c_;                                        \
        ctr_reset();                                                    \
        THREE_RECORDS(mid, p_);                                         \
        b_ = ctr_read_entry(1);                                         \
        c_ = ctr_read_entry(0);                                         \
        if (CHECK(is_record(b_, p_.b, p_.b_to)) &&                      \
            CHECK(is_record(c_, p_.c, p_.c_to))) {                      \
            CHECK_EQ(CCV(b_.data), ccv_b);                              \
            check_count(c_, 21);                                        \
        }                                                               \
    } while (0)

static void test_ccv(void)
{
    struct pcs p;
    struct ctr_entry b;

    rv_rule("draft 5.3: CCV=0 on the first record after a write to "
            "mctrcontrol");
    MIDDLE("csrw 0x381, %[on]", 0);             /* the same value */
    MIDDLE("csrr t1, 0x381\n csrw 0x381, t1", 0);
    MIDDLE("csrs 0x381, %[on]", 0);
#if RV_XLEN == 32
    MIDDLE("csrr t1, 0x382\n csrw 0x382, t1", 0);
#endif

    rv_rule("choice 10: CCV=0 on the first record after a write to "
            "sctrcontrol");
    MIDDLE("csrr t1, 0x181\n csrw 0x181, t1", 0);
#if RV_XLEN == 32
    MIDDLE("csrr t1, 0x182\n csrw 0x182, t1", 0);
#endif

    rv_rule("choice 10: CCV=0 on the first record after FROZEN was 1");
    MIDDLE("csrs 0x383, %[frz]\n csrc 0x383, %[frz]", 0);

    rv_rule("choice 10: CCV stays 1 across reads of ctrcontrol/ctrstatus");
    /* B counts the two reads too: 10 + 2 + 10 + 1. */
    ctr_reset();
    THREE_RECORDS("csrr t1, 0x381\n csrr t1, 0x383", p);
    b = ctr_read_entry(1);
    if (CHECK(is_record(b, p.b, p.b_to))) {
        check_count(b, 23);
    }

    rv_rule("choice 10: CCV=0 on the first record after CLR");
    ctr_reset();
    THREE_RECORDS("csrs 0x381, %[clr]", p);
    /* A was cleared: B and C are the only records. */
    CHECK_EQ(csr_read(CSR_MCTRSTATUS) & CTRSTATUS_WRPTR, 2);
    b = ctr_read_entry(1);
    if (CHECK(is_record(b, p.b, p.b_to))) {
        CHECK_EQ(CCV(b.data), 0);
    }
    b = ctr_read_entry(0);
    if (CHECK(is_record(b, p.c, p.c_to))) {
        check_count(b, 21);
    }
}

/* Record exceptions only. */
#define ONLY_EXC    (CTR_M | (CTR_INH_ALL & ~CTR_EXCINH))

/*
 * The record of an exception raised by the instruction at label 0 of
 * insns, after an ebreak's record (the first after the write of
 * mctrcontrol, which has CCV=0).
 */
#define SECOND_EXCEPTION(insns, e)                                      \
    do {                                                                \
        unsigned long pc_;                                              \
        ctr_reset();                                                    \
        ctr_write_mctrcontrol(ONLY_EXC);                                \
        rv_trap_expect();                                               \
        asm volatile("ebreak" ::: "memory");                            \
        rv_trap_expect();                                               \
        asm volatile(insns "\n la %[pc], 0b" : [pc] "=r"(pc_) :         \
                     : "t1", "memory");                                 \
        ctr_write_mctrcontrol(0);                                       \
        CHECK_EQ(rv_trap_cause(), 2UL);     /* illegal instruction */  \
        CHECK_EQ(csr_read(CSR_MCTRSTATUS) & CTRSTATUS_WRPTR, 2);        \
        e = ctr_read_entry(0);                                          \
        CHECK_EQ(e.source, pc_ | CTRSOURCE_V);                          \
        CHECK_EQ(e.data & CTRDATA_TYPE, (unsigned long)CTR_TYPE_EXC);   \
    } while (0)

static void test_traps(void)
{
    struct ctr_entry e;

    /*
     * Translated code counts a TB's instructions where it ends (and
     * before SYSTEM instructions): a TB a helper leaves in its middle
     * may not have counted what it ran, so the model does not vouch for
     * the next record's count.
     */
    rv_rule("choice 10: CCV=0 on the record of a trap a CSR access raises "
            "in the middle of a block");
    SECOND_EXCEPTION(NOPS(3) "0: csrr t1, 0x8c0\n" NOPS(5), e);
    CHECK_EQ(CCV(e.data), 0);

    rv_rule("draft 5.3: CCV=1 on the record of an illegal instruction that "
            "ends its block");
    SECOND_EXCEPTION(NOPS(3) "0: unimp\n" NOPS(5), e);
    CHECK_EQ(CCV(e.data), 1);
}

int main(void)
{
    test_gaps();
    test_ccv();
    test_exponent();
    test_traps();
    ctr_reset();
    return 0;
}

/*
 * PDIS across a migration (the cpu/pdis vmstate): a loop long enough to
 * be migrated in the middle (run-guest.sh --migrate-after) is sampled
 * into a memory buffer every PERIOD instructions; on the destination the
 * count of samples (PDIS.SAMPLES in counter 4), the buffer's pointer and
 * the last record are exactly those of a run that was not migrated.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "pdis_test.h"

#define ITERS       2000000000UL    /* two instructions each: a second or more */
#define PERIOD      1000003u
#define BUF_SIZE    65536

static uint8_t buf[BUF_SIZE] __attribute__((aligned(BUF_SIZE)));

int main(void)
{
    unsigned long n = ITERS, head, base = (unsigned long)buf;
    uint64_t samples = 2 * (uint64_t)ITERS / PERIOD, rec[REC_N];
    unsigned long last;

    set_event(4, EV_PDIS_SAMPLES);
    set_counter(4, 0);
    pdis_write(CSR_MPDISCTL, PDIS_M | PDIS_MEM | PDIS_OF | PDIS_SEL_ALL);
    pdis_write(CSR_SPDISCOUNTER, pdis_counter(PERIOD, PERIOD));
    csr_write(0x5ce, base);
    pdis_write(CSR_SPDISAMBCS, AMB_EN | AMB_SIZE(4));
    /* the counter counts from the csrw after the one that starts it */
    asm volatile(".option push\n.option norvc\n"
                 "csrw mcountinhibit, %2\n"
                 "csrw 0x5c9, %3\n"
                 "1: addi %0, %0, -1\n"
                 "bnez %0, 1b\n"
                 "csrw mcountinhibit, %4\n"
                 ".option pop\n"
                 "lla %1, 1b\n"
                 : "+r"(n), "=&r"(head)
                 : "r"(~0x12UL), "r"((unsigned long)pdis_counter(PERIOD,
                                                                  PERIOD)),
                   "r"(~0UL)
                 : "memory");
    rv_rule("a migrated VM samples every PERIOD-th instruction of the loop");
    CHECK_EQ(get_counter(4), samples);
    rv_rule("the buffer's pointer went on from where it was");
    CHECK_EQ(csr_read(0x5ce),
             base + (samples * PDIS_RECORD_SIZE) % BUF_SIZE);
    CHECK(pdis_read(CSR_SPDISAMBCS) & AMB_WRAP);
    last = (csr_read(0x5ce) - base + BUF_SIZE - PDIS_RECORD_SIZE) % BUF_SIZE;
    pdis_unpack(buf + last, rec);
    rv_rule("the last record is of the loop");
    CHECK(rec[REC_PC] == head || rec[REC_PC] == head + 4);
    return 0;
}

/*
 * Sscofpmf's local counter overflow interrupt pending bit (LCOFIP, bit
 * 13) in sip: with the interrupt delegated (mideleg[13]), S mode reads
 * mip.LCOFIP through sip and writes it (an overflow handler clears it
 * there); without the delegation sip.LCOFIP reads 0 and ignores writes.
 * QEMU 10.0.13 masked bit 13 out of sip both ways (patch 0020).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"

#define LCOFIP      (1UL << 13)

static unsigned long read_sip(unsigned long arg)
{
    (void)arg;
    return csr_read(sip);
}

static unsigned long write_sip_lcofip(unsigned long set)
{
    if (set) {
        csr_set(sip, LCOFIP);
    } else {
        csr_clear(sip, LCOFIP);
    }
    return 0;
}

int main(void)
{
    /* pending only: no interrupt is taken */
    csr_clear(mie, LCOFIP);
    csr_set(mideleg, LCOFIP);

    rv_rule("Sscofpmf: LCOFI is delegable (mideleg[13])");
    CHECK(csr_read(mideleg) & LCOFIP);

    csr_set(mip, LCOFIP);
    rv_rule("Sscofpmf: delegated, sip.LCOFIP reads mip.LCOFIP");
    CHECK(rv_run_in_mode(RV_MODE_S, read_sip, 0) & LCOFIP);

    rv_rule("Sscofpmf: delegated, S mode clears LCOFIP through sip");
    rv_run_in_mode(RV_MODE_S, write_sip_lcofip, 0);
    CHECK_EQ(csr_read(mip) & LCOFIP, 0);
    CHECK_EQ(rv_run_in_mode(RV_MODE_S, read_sip, 0) & LCOFIP, 0);

    rv_rule("Sscofpmf: delegated, S mode sets LCOFIP through sip");
    rv_run_in_mode(RV_MODE_S, write_sip_lcofip, 1);
    CHECK(csr_read(mip) & LCOFIP);
    csr_clear(mip, LCOFIP);

    csr_clear(mideleg, LCOFIP);
    csr_set(mip, LCOFIP);
    rv_rule("Sscofpmf: not delegated, sip.LCOFIP reads 0");
    CHECK_EQ(rv_run_in_mode(RV_MODE_S, read_sip, 0) & LCOFIP, 0);
    rv_rule("Sscofpmf: not delegated, writes to sip.LCOFIP are ignored");
    rv_run_in_mode(RV_MODE_S, write_sip_lcofip, 0);
    CHECK(csr_read(mip) & LCOFIP);
    csr_clear(mip, LCOFIP);
    return 0;
}

/*
 * Without sspesa=on (also in -cpu max, which leaves the drafts off):
 * shpmspc and shpmsdata do not exist and riscv,isa does not name
 * sspesa or ssplcofi.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "pmu_test.h"

int main(void)
{
    rv_rule("without sspesa=on, shpmspc and shpmsdata are illegal");
    CHECK_TRAP(rv_csr_read_num(CSR_SHPMSPC), CAUSE_ILLEGAL_INSN);
    CHECK_TRAP(rv_csr_write_num(CSR_SHPMSDATA, 1), CAUSE_ILLEGAL_INSN);
    rv_rule("without them, riscv,isa names neither sspesa nor ssplcofi");
    CHECK(!rv_isa_has("sspesa"));
    CHECK(!rv_isa_has("ssplcofi"));
    CHECK(rv_isa_has("sscofpmf"));
    return 0;
}

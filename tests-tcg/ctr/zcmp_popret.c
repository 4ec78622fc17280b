/*
 * cm.popret returns as the ret it stands for (Zcmp: "jalr x0, 0(ra)"):
 * to the saved ra with bit 0 cleared.  QEMU 10.0 jumped to an odd ra as
 * it was, and ran half-words from an odd address (patch 0038).  The CTR
 * draft's record of that return has the even target and MISP=0.
 * -cpu ...,zcmp=on,zcd=off,ctr=on; M mode, RV64 and RV32.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ctr_test.h"

/* Returns 42 through cm.popret {ra}, 16, its saved ra made odd. */
unsigned long odd_popret(void);
extern char odd_popret_insn[];
asm(".text\n.balign 4\n.globl odd_popret\n"
    "odd_popret:\n"
    "    .hword 0xb842\n"                       /* cm.push {ra}, -16 */
#if RV_XLEN == 64
    "    ld t0, 8(sp)\n ori t0, t0, 1\n sd t0, 8(sp)\n"
#else
    "    lw t0, 12(sp)\n ori t0, t0, 1\n sw t0, 12(sp)\n"
#endif
    "    li a0, 42\n"
    "odd_popret_insn:\n"
    "    .hword 0xbe42\n");                     /* cm.popret {ra}, 16 */

/* Returns only: every other type inhibited. */
#define ONLY_RET    (CTR_M | (CTR_INH_ALL & ~CTR_RETINH))

int main(void)
{
    unsigned long r, back;
    struct ctr_entry e;

    rv_rule("Zcmp: cm.popret to an odd saved ra returns to ra & ~1");
    ctr_reset();
    ctr_write_mctrcontrol(ONLY_RET);
    asm volatile("jal odd_popret\n"
                 "1: la %1, 1b\n"
                 : "=r"(r), "=r"(back) : : "ra", "t0", "memory");
    ctr_write_mctrcontrol(0);
    CHECK_EQ(r, 42UL);

    rv_rule("CTR draft: its return's record has the even target, MISP=0");
    e = ctr_read_entry(0);
    CHECK_EQ(e.source, (unsigned long)odd_popret_insn | CTRSOURCE_V);
    CHECK_EQ(e.target, back);
    CHECK_EQ(e.data & CTRDATA_TYPE, (unsigned long)CTR_TYPE_RET);
    return 0;
}

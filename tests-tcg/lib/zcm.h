/*
 * Code in Zcmp's and Zcmt's style for the guest tests of a hart that has
 * them (-cpu ...,zcmp=on,zcmt=on,zcd=off): a function that saves and
 * restores with cm.push and cm.popret, and calls and tail calls through
 * the jump table (cm.jalt, cm.jt).  The toolchain knows neither
 * extension, so the cm.* instructions are written as their half-words;
 * a guest that includes this is built without D (no c.fsdsp of its own).
 *
 * add3(a, b) = a + 2 * b, saving ra, s0 and s1: cm.push {ra, s0-s1}, -32
 * (RV64's frame; RV32 rounds the same list to 16 bytes), its cm.popret
 * at add3 + ZCM_ADD3_POPRET.  zcm_via_jalt(a) = add3(a, 3) + 1 through
 * table entry 32 (cm.jalt at zcm_via_jalt + ZCM_VIA_JALT_JALT), around
 * cm.push {ra}, -16 and cm.popret {ra}, 16; zcm_via_jt(a) tail-calls
 * add3(a, 2) through entry 0 (cm.jt at zcm_via_jt + ZCM_VIA_JT_JT), so
 * add3's cm.popret returns to zcm_via_jt's caller.  zcm_setup() points
 * JVT at the table.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RVTEST_ZCM_H
#define RVTEST_ZCM_H

#define CSR_JVT             0x017
#define ZCM_ADD3_POPRET     12
#define ZCM_VIA_JALT_JALT   4
#define ZCM_VIA_JT_JT       2

asm(".text\n"
    ".balign 4\n"
    ".globl add3\n"
    "add3:\n"
    "    .hword 0xb862\n"           /* cm.push {ra, s0-s1}, -32 (-16) */
    "    c.mv    s0, a0\n"
    "    add     s1, a1, a1\n"
    "    add     a0, s0, s1\n"
    "    .hword 0xbe62\n"           /* cm.popret {ra, s0-s1}, 32 (16) */
    ".globl zcm_via_jalt\n"
    "zcm_via_jalt:\n"
    "    .hword 0xb842\n"           /* cm.push {ra}, -16 */
    "    c.li    a1, 3\n"
    "    .hword 0xa082\n"           /* cm.jalt 32 */
    "    addi    a0, a0, 1\n"
    "    .hword 0xbe42\n"           /* cm.popret {ra}, 16 */
    ".globl zcm_via_jt\n"
    "zcm_via_jt:\n"
    "    c.li    a1, 2\n"
    "    .hword 0xa002\n");         /* cm.jt 0 */

unsigned long add3(unsigned long a, unsigned long b);
unsigned long zcm_via_jalt(unsigned long a);
unsigned long zcm_via_jt(unsigned long a);

/* The jump table: JVT.base is 64-byte aligned, mode 0 */
static unsigned long zcm_jvt[33] __attribute__((aligned(64)));

static inline void zcm_setup(void)
{
    zcm_jvt[0] = zcm_jvt[32] = (unsigned long)add3;
    asm volatile("csrw %0, %1" : : "i"(CSR_JVT), "r"(zcm_jvt) : "memory");
}

#endif /* RVTEST_ZCM_H */

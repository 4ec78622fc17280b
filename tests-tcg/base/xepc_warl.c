/*
 * mepc, sepc, vsepc and mnepc hold no bit 0 (privileged spec: "the low
 * bit of mepc (mepc[0]) is always zero"; the same for the others), so an
 * mret to a written odd address returns to the even one.  QEMU 10.0 kept
 * the bit, and the hart ran half-words from the odd address (patch
 * 0039).  -cpu ...,h=on,smrnmi=on; M mode, RV64 and RV32.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"

#define CSR_VSEPC   0x241
#define CSR_MNEPC   0x741
#define CSR_MNSTATUS 0x744
#define MNSTATUS_NMIE (1UL << 3)

#define ODD         ((unsigned long)0x80001235UL)

int main(void)
{
    unsigned long landed, expected;

    /* Smrnmi: with NMIE=0 an M-mode trap would not reach the library */
    csr_set(CSR_MNSTATUS, MNSTATUS_NMIE);
    rv_rule("mepc, sepc, vsepc, mnepc: bit 0 reads 0 after any write");
    csr_write(mepc, ODD);
    CHECK_EQ(csr_read(mepc), ODD - 1);
    csr_write(sepc, ODD);
    CHECK_EQ(csr_read(sepc), ODD - 1);
    csr_write(CSR_VSEPC, ODD);
    CHECK_EQ(csr_read(CSR_VSEPC), ODD - 1);
    csr_write(CSR_MNEPC, ODD);
    CHECK_EQ(csr_read(CSR_MNEPC), ODD - 1);
    csr_write(mepc, -1UL);
    CHECK_EQ(csr_read(mepc), -2UL);

    rv_rule("mret to a written odd mepc returns to the even address");
    asm volatile("la t0, 1f\n"
                 "mv %1, t0\n"
                 "ori t0, t0, 1\n"
                 "csrw mepc, t0\n"
                 "li t0, 3 << 11\n"
                 "csrs mstatus, t0\n"           /* MPP = M */
                 "mret\n"
                 ".balign 4\n"
                 "1: auipc %0, 0\n"
                 : "=r"(landed), "=r"(expected) : : "t0", "memory");
    CHECK_EQ(landed, expected);
    return 0;
}

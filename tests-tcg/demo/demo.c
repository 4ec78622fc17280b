/*
 * The project's demo guest: what the CPU offers, as the device tree QEMU
 * built for it says (riscv,isa of hart 0) and as its CSRs say.  Each
 * feature of the project extends it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"

#define CSR_MVENDORID 0xf11
#define CSR_MARCHID   0xf12
#define CSR_MIMPID    0xf13

/* The extensions this project is about, as riscv,isa spells them. */
static const struct {
    const char *name;
    const char *what;
} watched[] = {
    { "smctr", "Control Transfer Records 1.0 (upstream QEMU)" },
    { "ssctr", "Control Transfer Records 1.0, S-mode (upstream QEMU)" },
    { "smcsrind", "indirect CSR access (CTR entries)" },
    { "sscofpmf", "counter overflow and privilege filtering" },
};

/* Is name one of the '_'-separated extensions of the ISA string? */
static bool isa_has(const char *isa, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = isa; *p; p++) {
        if ((p == isa || p[-1] == '_') && memcmp(p, name, n) == 0 &&
            (p[n] == '_' || p[n] == '\0')) {
            return true;
        }
    }
    return false;
}

int main(void)
{
    unsigned len;
    const char *isa = rv_fdt_prop("/cpus/cpu@0", "riscv,isa", &len);

    rv_printf("rvpa demo: QEMU virt, hart %lu, RV%d\n",
              csr_read(CSR_MHARTID), RV_XLEN);
    rv_printf("  mvendorid 0x%lx marchid 0x%lx mimpid 0x%lx\n",
              csr_read(CSR_MVENDORID), csr_read(CSR_MARCHID),
              csr_read(CSR_MIMPID));
    CHECK(isa != NULL);
    if (!isa) {
        return 1;
    }
    rv_printf("  riscv,isa = %s\n", isa);
    for (unsigned i = 0; i < sizeof(watched) / sizeof(watched[0]); i++) {
        rv_printf("  %-9s %s  %s\n", watched[i].name,
                  isa_has(isa, watched[i].name) ? "yes" : "no ",
                  watched[i].what);
    }
    return 0;
}

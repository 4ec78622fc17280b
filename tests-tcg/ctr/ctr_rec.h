/*
 * Helpers of the CTR record tests (ctr_types.c, ctr_priv.c,
 * ctr_rasemu.c): hand-written scenarios whose expected records sit next to
 * the instructions that make them.
 *
 * A scenario is a top-level asm function `void name(unsigned long ctl)`
 * called from M mode with recording off: SCEN_BEGIN writes ctl (the low
 * half of mctrcontrol, enables included) and so starts recording; the
 * scenario ends with SCEN_RETURN, which clears M, S and U and returns.
 * t6 holds the return address throughout (scenarios must not touch it).
 *
 * EXPECT(name, src, tgt, type, from, to, rule) appends a record to the
 * table name_tab..name_tab_end (struct ctr_rec): src and tgt are labels,
 * MEPC_MARK stands for the mepc captured by an interrupt handler, from and
 * to are the modes the transfer leaves and enters (3 M, 1 S, 0 U).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CTR_REC_H
#define CTR_REC_H

#include "ctr_test.h"

#if RV_XLEN == 64
#define PTR     ".dword"
#define SREG    "sd"
#define LREG    "ld"
#else
#define PTR     ".word"
#define SREG    "sw"
#define LREG    "lw"
#endif

/* Stands for "the mepc the interrupt handler saw" in a table. */
#define MEPC_MARK 1UL

struct ctr_rec {
    unsigned long src, tgt, type, from, to;
    const char *rule;
};

#define SCEN_BEGIN(name)                                                \
    "   .pushsection .rodata.ctrtab." #name ", \"a\"\n"                 \
    "   .balign 16\n"                                                   \
    "   .globl " #name "_tab\n"                                         \
    #name "_tab:\n"                                                     \
    "   .popsection\n"                                                  \
    "   .text\n"                                                        \
    "   .balign 4\n"                                                    \
    "   .globl " #name "\n"                                             \
    #name ":\n"                                                         \
    "   mv t6, ra\n"                                                    \
    "   csrw 0x381, a0\n"

/* Recording off (M, S and U cleared), back to the C caller. */
#define SCEN_RETURN                                                     \
    "   csrci 0x381, 7\n"                                               \
    "   mv ra, t6\n"                                                    \
    "   ret\n"

#define SCEN_TAB_END(name)                                              \
    "   .pushsection .rodata.ctrtab." #name ", \"a\"\n"                 \
    "   .globl " #name "_tab_end\n"                                     \
    #name "_tab_end:\n"                                                 \
    "   .popsection\n"

#define EXPECT(name, src, tgt, type, from, to, rule)                    \
    "   .pushsection .rodata.ctrtab." #name ", \"a\"\n"                 \
    "   " PTR " " #src ", " #tgt ", " #type ", " #from ", " #to ", 9f\n" \
    "   .popsection\n"                                                  \
    "   .pushsection .rodata.ctrstr, \"a\"\n"                           \
    "9: .asciz \"" rule "\"\n"                                          \
    "   .popsection\n"

/* Within M mode (the transfer does not change the mode). */
#define EXPECT_M(name, src, tgt, type, rule)                            \
    EXPECT(name, src, tgt, type, 3, 3, rule)

#define SCEN_DECL(name)                                                 \
    void name(unsigned long ctl);                                       \
    extern const struct ctr_rec name##_tab[], name##_tab_end[]

#define SCEN_TAB(name) name##_tab, (unsigned)(name##_tab_end - name##_tab)

static inline unsigned long ctr_wrptr(void)
{
    return csr_read(CSR_MCTRSTATUS) & CTRSTATUS_WRPTR;
}

/*
 * Check that the array holds exactly exp[0..n-1] (exp[n-1] the newest,
 * logical entry 0), recorded from an empty array (WRPTR was 0).  Each
 * record is checked under its own rule unless rule is given.
 */
static inline bool ctr_check_records(const char *what,
                                     const struct ctr_rec *exp, unsigned n,
                                     const char *rule)
{
    unsigned failed = rv_checks_failed;

    rv_rule(rule ? rule : "draft 5: only qualified transfers are recorded");
    CHECK_EQ(ctr_wrptr(), n);
    for (unsigned i = 0; i < n; i++) {
        const struct ctr_rec *r = &exp[n - 1 - i];
        struct ctr_entry e = ctr_read_entry(i);

        if (!rule) {
            rv_rule(r->rule);
        }
        CHECK_EQ(e.source, r->src | CTRSOURCE_V);
        CHECK_EQ(e.target, r->tgt);
        CHECK_EQ(e.data & CTRDATA_TYPE, r->type);
    }
    rv_rule(rule ? rule : "draft 5: only qualified transfers are recorded");
    CHECK_EQ(ctr_read_entry(n).source & CTRSOURCE_V, 0);
    if (rv_checks_failed == failed) {
        return true;
    }
    rv_printf("  ... in %s; expected (newest first):\n", what);
    for (unsigned i = 0; i < n; i++) {
        const struct ctr_rec *r = &exp[n - 1 - i];

        rv_printf("    %2u: 0x%lx -> 0x%lx type %lu\n", i, r->src, r->tgt,
                  r->type);
    }
    rv_printf("  got (WRPTR %lu):\n", ctr_wrptr());
    for (unsigned i = 0; i <= n; i++) {
        struct ctr_entry e = ctr_read_entry(i);

        rv_printf("    %2u: 0x%lx -> 0x%lx data 0x%lx\n", i, e.source,
                  e.target, e.data);
    }
    return false;
}

/* Reset the array and set the whole control register but M, S, U. */
static inline void ctr_prepare(unsigned long long ctl)
{
    ctr_reset();
    ctr_write_mctrcontrol(ctl & ~(CTR_M | CTR_S | CTR_U));
}

#endif /* CTR_REC_H */

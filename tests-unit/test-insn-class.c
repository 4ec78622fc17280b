/*
 * Unit tests of the control-transfer classifier against E-trace v1.1.1
 * section 4.1.1.  Encodings were produced by GNU as (rv64gc / rv32gc).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <glib.h>
#include "insn_class.h"

typedef struct {
    const char *asm_text;
    uint32_t insn;
    RISCVIType itype;
} JumpCase;

/* One row per rule of 4.1.1, compressed forms included. */
static const JumpCase jump_cases[] = {
    /* Calls */
    { "jal x1, .-4",        0xffdff0ef, RISCV_ITYPE_INFERABLE_CALL },
    { "jal x5, .+16",       0x010002ef, RISCV_ITYPE_INFERABLE_CALL },
    { "c.jalr x1",          0x9082,     RISCV_ITYPE_UNINFERABLE_CALL },
    { "jalr x7, 8(x1)",     0x008083e7, RISCV_ITYPE_RETURN },
    /* Tail calls */
    { "jal x0, .+2048",     0x0010006f, RISCV_ITYPE_INFERABLE_TAIL_CALL },
    { "c.j .-2",            0xbffd,     RISCV_ITYPE_INFERABLE_TAIL_CALL },
    { "jalr x0, 0(x6)",     0x00030067, RISCV_ITYPE_UNINFERABLE_TAIL_CALL },
    { "c.jr x7",            0x8382,     RISCV_ITYPE_UNINFERABLE_TAIL_CALL },
    /* Returns */
    { "ret (c.jr x1)",      0x8082,     RISCV_ITYPE_RETURN },
    { "c.jr x5",            0x8282,     RISCV_ITYPE_RETURN },
    /* Co-routine swaps */
    { "jalr x1, 0(x5)",     0x000280e7, RISCV_ITYPE_COROUTINE_SWAP },
    { "jalr x5, 0(x1)",     0x000082e7, RISCV_ITYPE_COROUTINE_SWAP },
    { "c.jalr x5",          0x9282,     RISCV_ITYPE_COROUTINE_SWAP },
    /* Other */
    { "jal x7, .+16",       0x010003ef, RISCV_ITYPE_OTHER_INFERABLE_JUMP },
    { "jalr x7, 8(x6)",     0x008303e7, RISCV_ITYPE_OTHER_UNINFERABLE_JUMP },
};

static void test_jump_encodings(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(jump_cases); i++) {
        const JumpCase *t = &jump_cases[i];
        RISCVInsnClass c;

        g_test_message("%s", t->asm_text);
        g_assert_true(riscv_classify_insn(t->insn, 64, &c));
        g_assert_cmpint(c.flow, ==, RISCV_FLOW_JUMP);
        g_assert_cmpstr(riscv_itype_name(c.itype), ==,
                        riscv_itype_name(t->itype));
    }
}

/* The register rules of 4.1.1, for every rd/rs1 pair of jalr. */
static void test_jalr_register_rules(void)
{
    for (unsigned rd = 0; rd < 32; rd++) {
        for (unsigned rs = 0; rs < 32; rs++) {
            bool rd_link = rd == 1 || rd == 5, rs_link = rs == 1 || rs == 5;
            RISCVIType want;

            if ((rd == 1 && rs == 5) || (rd == 5 && rs == 1)) {
                want = RISCV_ITYPE_COROUTINE_SWAP;
            } else if ((rd == 1 && rs != 5) || (rd == 5 && rs != 1)) {
                want = RISCV_ITYPE_UNINFERABLE_CALL;
            } else if (rs_link && !rd_link) {
                want = RISCV_ITYPE_RETURN;
            } else if (rd == 0) {
                want = RISCV_ITYPE_UNINFERABLE_TAIL_CALL;
            } else {
                want = RISCV_ITYPE_OTHER_UNINFERABLE_JUMP;
            }
            g_assert_cmpint(riscv_jump_itype(false, rd, rs), ==, want);
        }
        g_assert_cmpint(riscv_jump_itype(true, rd, 0), ==,
                        rd == 1 || rd == 5 ? RISCV_ITYPE_INFERABLE_CALL :
                        rd == 0 ? RISCV_ITYPE_INFERABLE_TAIL_CALL :
                        RISCV_ITYPE_OTHER_INFERABLE_JUMP);
    }
}

static void test_offsets(void)
{
    RISCVInsnClass c;

    riscv_classify_insn(0x0010006f, 64, &c);            /* jal x0, .+2048 */
    g_assert_cmpint(c.offset, ==, 2048);
    riscv_classify_insn(0xffdff0ef, 64, &c);            /* jal x1, .-4 */
    g_assert_cmpint(c.offset, ==, -4);
    riscv_classify_insn(0xbffd, 64, &c);                /* c.j .-2 */
    g_assert_cmpint(c.offset, ==, -2);
    g_assert_cmpint(c.len, ==, 2);
    riscv_classify_insn(0xcd7d, 64, &c);                /* c.beqz .+254 */
    g_assert_cmpint(c.flow, ==, RISCV_FLOW_BRANCH);
    g_assert_cmpint(c.offset, ==, 254);
    riscv_classify_insn(0xf381, 64, &c);                /* c.bnez .-256 */
    g_assert_cmpint(c.offset, ==, -256);
    riscv_classify_insn(0x7eb50fe3, 64, &c);            /* beq .+4094 */
    g_assert_cmpint(c.flow, ==, RISCV_FLOW_BRANCH);
    g_assert_cmpint(c.offset, ==, 4094);
    g_assert_cmpint(c.len, ==, 4);
    riscv_classify_insn(0x80b55063, 64, &c);            /* bge .-4096 */
    g_assert_cmpint(c.offset, ==, -4096);
}

static void test_c_jal_is_rv32_only(void)
{
    RISCVInsnClass c;

    riscv_classify_insn(0x2081, 32, &c);                /* c.jal .+64 */
    g_assert_cmpint(c.flow, ==, RISCV_FLOW_JUMP);
    g_assert_cmpint(c.itype, ==, RISCV_ITYPE_INFERABLE_CALL);
    g_assert_cmpint(c.offset, ==, 64);
    riscv_classify_insn(0x2081, 64, &c);                /* c.addiw on RV64 */
    g_assert_cmpint(c.flow, ==, RISCV_FLOW_SEQUENTIAL);
}

static void test_traps_and_returns(void)
{
    static const struct {
        uint32_t insn;
        RISCVInsnFlow flow;
    } cases[] = {
        { 0x9002, RISCV_FLOW_TRAP },            /* c.ebreak */
        { 0x00100073, RISCV_FLOW_TRAP },        /* ebreak */
        { 0x00000073, RISCV_FLOW_TRAP },        /* ecall */
        { 0x30200073, RISCV_FLOW_TRAP_RETURN }, /* mret */
        { 0x10200073, RISCV_FLOW_TRAP_RETURN }, /* sret */
        { 0x852e, RISCV_FLOW_SEQUENTIAL },      /* c.mv a0, a1 */
        { 0x952e, RISCV_FLOW_SEQUENTIAL },      /* c.add a0, a1 */
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        RISCVInsnClass c;

        riscv_classify_insn(cases[i].insn, 64, &c);
        g_assert_cmpint(c.flow, ==, cases[i].flow);
        if (c.flow == RISCV_FLOW_TRAP_RETURN) {
            g_assert_cmpint(c.itype, ==, RISCV_ITYPE_TRAP_RETURN);
        }
    }
}

static void test_sijump_sources(void)
{
    RISCVInsnClass c;

    riscv_classify_insn(0x6505, 64, &c);                /* c.lui a0, 1 */
    g_assert_true(c.sets_constant);
    riscv_classify_insn(0x00001297, 64, &c);            /* auipc t0, 1 */
    g_assert_true(c.sets_constant);
    riscv_classify_insn(0x952e, 64, &c);                /* c.add */
    g_assert_false(c.sets_constant);
}

static void test_invalid(void)
{
    RISCVInsnClass c;

    g_assert_false(riscv_classify_insn(0x0000, 64, &c)); /* illegal */
    g_assert_false(riscv_classify_insn(0x00001067, 64, &c)); /* jalr f3=1 */
    g_assert_false(riscv_classify_insn(0x00002063, 64, &c)); /* branch f3=2 */
    g_assert_cmpint(c.flow, ==, RISCV_FLOW_SEQUENTIAL);
}

/*
 * Zcmp and Zcmt take c.fsdsp's encodings: read as theirs only for a hart
 * that has them (the decoders' --zcmp and --zcmt), else as c.fsdsp.
 */
static void test_zcm(void)
{
    static const unsigned both = RISCV_INSN_ISA_ZCMP | RISCV_INSN_ISA_ZCMT;
    static const struct {
        uint32_t insn;
        unsigned isa;
        RISCVInsnFlow flow;
        RISCVIType itype;
        bool loads, stores, valid;
        bool several;       /* a push or a pop: several words */
    } cases[] = {
        /* cm.push {ra}, -16; cm.pop {ra}, 16 */
        { 0xb842, both, RISCV_FLOW_SEQUENTIAL, 0, false, true, true, true },
        { 0xba42, both, RISCV_FLOW_SEQUENTIAL, 0, true, false, true, true },
        /* cm.popret {ra}, 16; cm.popretz {ra}, 16: returns */
        { 0xbe42, both, RISCV_FLOW_JUMP, RISCV_ITYPE_RETURN, true, false,
          true, true },
        { 0xbc42, RISCV_INSN_ISA_ZCMP, RISCV_FLOW_JUMP, RISCV_ITYPE_RETURN,
          true, false, true, true },
        /* cm.mvsa01 s0, s1 */
        { 0xac26, both, RISCV_FLOW_SEQUENTIAL, 0, false, false, true,
          false },
        /* cm.jt 5: a tail call; cm.jalt 40: a call, both through JVT */
        { 0xa016, both, RISCV_FLOW_JUMP, RISCV_ITYPE_UNINFERABLE_TAIL_CALL,
          false, false, true, false },
        { 0xa0a2, RISCV_INSN_ISA_ZCMT, RISCV_FLOW_JUMP,
          RISCV_ITYPE_UNINFERABLE_CALL, false, false, true, false },
        /* without the extension: c.fsdsp */
        { 0xbe42, RISCV_INSN_ISA_ZCMT, RISCV_FLOW_SEQUENTIAL, 0, false,
          false, false, false },
        { 0xa016, RISCV_INSN_ISA_ZCMP, RISCV_FLOW_SEQUENTIAL, 0, false,
          false, false, false },
        { 0xbe42, 0, RISCV_FLOW_SEQUENTIAL, 0, false, true, true, false },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        RISCVInsnClass c;
        bool valid = riscv_classify_insn_isa(cases[i].insn, 32, cases[i].isa,
                                             &c);

        g_assert_cmpint(valid, ==, cases[i].valid);
        g_assert_cmpint(c.flow, ==, cases[i].flow);
        g_assert_cmpint(c.loads, ==, cases[i].loads);
        g_assert_cmpint(c.stores, ==, cases[i].stores);
        g_assert_cmpint(c.several, ==, cases[i].several);
        g_assert_cmpuint(c.len, ==, 2);
        if (c.flow == RISCV_FLOW_JUMP) {
            g_assert_cmpint(c.itype, ==, cases[i].itype);
            g_assert_false(c.inferable);
            g_assert_cmpuint(c.rs1, ==, 0);     /* no sequential jump */
        }
    }
}

static void test_uninferable_set(void)
{
    for (int t = 0; t < 16; t++) {
        bool want = t == 6 || t == 8 || t == 10 || t == 12 || t == 13 ||
                    t == 14;
        g_assert_cmpint(riscv_itype_is_uninferable(t), ==, want);
    }
    g_assert_cmpstr(riscv_itype_name(7), ==, "reserved");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/insn-class/jump-encodings", test_jump_encodings);
    g_test_add_func("/insn-class/jalr-register-rules",
                    test_jalr_register_rules);
    g_test_add_func("/insn-class/offsets", test_offsets);
    g_test_add_func("/insn-class/c-jal-rv32-only", test_c_jal_is_rv32_only);
    g_test_add_func("/insn-class/traps-and-returns", test_traps_and_returns);
    g_test_add_func("/insn-class/sijump-sources", test_sijump_sources);
    g_test_add_func("/insn-class/invalid", test_invalid);
    g_test_add_func("/insn-class/uninferable-set", test_uninferable_set);
    g_test_add_func("/insn-class/zcm", test_zcm);
    return g_test_run();
}

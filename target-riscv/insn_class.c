/*
 * RISC-V control-transfer classification (E-trace itype codes)
 *
 * Reference: Efficient Trace for RISC-V v1.1.1 draft, section 4.1.1.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "insn_class.h"

/* x1 (ra) and x5 (t0) are the link registers of the calling convention. */
static bool is_link(unsigned reg)
{
    return reg == 1 || reg == 5;
}

RISCVIType riscv_jump_itype(bool inferable, unsigned rd, unsigned rs1)
{
    if (inferable) {
        /* jal: call, tail call or other, by its link register */
        if (is_link(rd)) {
            return RISCV_ITYPE_INFERABLE_CALL;
        }
        return rd == 0 ? RISCV_ITYPE_INFERABLE_TAIL_CALL
                       : RISCV_ITYPE_OTHER_INFERABLE_JUMP;
    }
    if (is_link(rd)) {
        /* jalr x1, x5 and jalr x5, x1 swap co-routines; else a call */
        return is_link(rs1) && rs1 != rd ? RISCV_ITYPE_COROUTINE_SWAP
                                         : RISCV_ITYPE_UNINFERABLE_CALL;
    }
    if (is_link(rs1)) {
        return RISCV_ITYPE_RETURN;
    }
    return rd == 0 ? RISCV_ITYPE_UNINFERABLE_TAIL_CALL
                   : RISCV_ITYPE_OTHER_UNINFERABLE_JUMP;
}

bool riscv_itype_is_uninferable(RISCVIType itype)
{
    switch (itype) {
    case RISCV_ITYPE_UNINFERABLE_JUMP_3BIT:
    case RISCV_ITYPE_UNINFERABLE_CALL:
    case RISCV_ITYPE_UNINFERABLE_TAIL_CALL:
    case RISCV_ITYPE_COROUTINE_SWAP:
    case RISCV_ITYPE_RETURN:
    case RISCV_ITYPE_OTHER_UNINFERABLE_JUMP:
        return true;
    default:
        return false;
    }
}

const char *riscv_itype_name(RISCVIType itype)
{
    static const char *const names[16] = {
        [RISCV_ITYPE_NONE] = "none",
        [RISCV_ITYPE_EXCEPTION] = "exception",
        [RISCV_ITYPE_INTERRUPT] = "interrupt",
        [RISCV_ITYPE_TRAP_RETURN] = "trap-return",
        [RISCV_ITYPE_NOT_TAKEN_BRANCH] = "not-taken-branch",
        [RISCV_ITYPE_TAKEN_BRANCH] = "taken-branch",
        [RISCV_ITYPE_UNINFERABLE_JUMP_3BIT] = "uninferable-jump",
        [RISCV_ITYPE_UNINFERABLE_CALL] = "uninferable-call",
        [RISCV_ITYPE_INFERABLE_CALL] = "inferable-call",
        [RISCV_ITYPE_UNINFERABLE_TAIL_CALL] = "uninferable-tail-call",
        [RISCV_ITYPE_INFERABLE_TAIL_CALL] = "inferable-tail-call",
        [RISCV_ITYPE_COROUTINE_SWAP] = "coroutine-swap",
        [RISCV_ITYPE_RETURN] = "return",
        [RISCV_ITYPE_OTHER_UNINFERABLE_JUMP] = "other-uninferable-jump",
        [RISCV_ITYPE_OTHER_INFERABLE_JUMP] = "other-inferable-jump",
    };

    return (unsigned)itype < 16 && names[itype] ? names[itype] : "reserved";
}

/* bits [hi:lo] of x, shifted down */
static uint32_t bits(uint32_t x, unsigned hi, unsigned lo)
{
    return (x >> lo) & ((1u << (hi - lo + 1)) - 1);
}

/* sign-extend the low n bits of x */
static long sext(uint32_t x, unsigned n)
{
    return (long)((int32_t)(x << (32 - n)) >> (32 - n));
}

static void set_jump(RISCVInsnClass *c, bool inferable, unsigned rd,
                     unsigned rs1, long offset)
{
    c->flow = RISCV_FLOW_JUMP;
    c->inferable = inferable;
    c->rd = rd;
    c->rs1 = rs1;
    c->offset = offset;
    c->itype = riscv_jump_itype(inferable, rd, rs1);
}

static void set_branch(RISCVInsnClass *c, long offset)
{
    c->flow = RISCV_FLOW_BRANCH;
    c->inferable = true;
    c->offset = offset;
}

static bool classify32(uint32_t insn, RISCVInsnClass *c)
{
    unsigned rd = bits(insn, 11, 7), rs1 = bits(insn, 19, 15);

    switch (bits(insn, 6, 0)) {
    case 0x6f: /* jal */
        set_jump(c, true, rd, 0,
                 sext(bits(insn, 31, 31) << 20 | bits(insn, 19, 12) << 12 |
                      bits(insn, 20, 20) << 11 | bits(insn, 30, 21) << 1, 21));
        return true;
    case 0x67: /* jalr */
        if (bits(insn, 14, 12) != 0) {
            return false;
        }
        set_jump(c, false, rd, rs1, 0);
        return true;
    case 0x63: /* beq, bne, blt, bge, bltu, bgeu */
        if (bits(insn, 14, 13) == 1) {
            return false;   /* funct3 2 and 3 are reserved */
        }
        set_branch(c, sext(bits(insn, 31, 31) << 12 | bits(insn, 7, 7) << 11 |
                           bits(insn, 30, 25) << 5 | bits(insn, 11, 8) << 1,
                           13));
        return true;
    case 0x37: /* lui */
    case 0x17: /* auipc */
        c->sets_constant = rd != 0;
        c->rd = rd;
        return true;
    case 0x03: /* loads */
    case 0x07: /* FP and vector loads */
        c->loads = true;
        return true;
    case 0x23: /* stores */
    case 0x27: /* FP and vector stores */
        c->stores = true;
        return true;
    case 0x2f: /* lr, sc, AMOs */
        c->loads = bits(insn, 31, 27) != 3;      /* not sc */
        c->stores = bits(insn, 31, 27) != 2;     /* not lr */
        return true;
    case 0x73:
        if (bits(insn, 14, 12) == 4 && bits(insn, 31, 29) == 3) {
            /* hlv, hlvx (funct7 even), hsv (odd) */
            c->stores = bits(insn, 25, 25);
            c->loads = !c->stores;
            return true;
        }
        switch (insn) {
        case 0x00000073: /* ecall */
        case 0x00100073: /* ebreak */
            c->flow = RISCV_FLOW_TRAP;
            return true;
        case 0x30200073: /* mret */
        case 0x10200073: /* sret */
        case 0x70200073: /* mnret */
            c->flow = RISCV_FLOW_TRAP_RETURN;
            c->itype = RISCV_ITYPE_TRAP_RETURN;
            return true;
        }
        return true;
    }
    return true;
}

static long cj_offset(uint32_t insn)
{
    return sext(bits(insn, 12, 12) << 11 | bits(insn, 8, 8) << 10 |
                bits(insn, 10, 9) << 8 | bits(insn, 6, 6) << 7 |
                bits(insn, 7, 7) << 6 | bits(insn, 2, 2) << 5 |
                bits(insn, 11, 11) << 4 | bits(insn, 5, 3) << 1, 12);
}

static long cb_offset(uint32_t insn)
{
    return sext(bits(insn, 12, 12) << 8 | bits(insn, 6, 5) << 6 |
                bits(insn, 2, 2) << 5 | bits(insn, 11, 10) << 3 |
                bits(insn, 4, 3) << 1, 9);
}

/*
 * Zcmp and Zcmt, in c.fsdsp's encodings: cm.jt and cm.jalt (index below
 * 32 and from 32 on), cm.push, cm.pop, cm.popretz, cm.popret, cm.mvsa01
 * and cm.mva01s.  The jumps' targets come from memory: no register.
 */
static bool classify_zcm(uint32_t insn, unsigned isa, RISCVInsnClass *c)
{
    if ((isa & RISCV_INSN_ISA_ZCMT) && bits(insn, 12, 10) == 0) {
        set_jump(c, false, bits(insn, 9, 2) >= 32 ? 1 : 0, 0, 0);
        return true;
    }
    if (!(isa & RISCV_INSN_ISA_ZCMP)) {
        return false;
    }
    switch (bits(insn, 12, 8)) {
    case 0x18: /* cm.push */
        c->stores = c->several = true;
        return true;
    case 0x1a: /* cm.pop */
        c->loads = c->several = true;
        return true;
    case 0x1c: /* cm.popretz */
    case 0x1e: /* cm.popret */
        c->loads = c->several = true;
        set_jump(c, false, 0, 0, 0);
        c->itype = RISCV_ITYPE_RETURN;
        return true;
    }
    /* cm.mvsa01 (01), cm.mva01s (11) */
    return bits(insn, 12, 10) == 3 && (bits(insn, 6, 5) & 1);
}

static bool classify16(uint32_t insn, unsigned xlen, unsigned isa,
                       RISCVInsnClass *c)
{
    unsigned funct3 = bits(insn, 15, 13);
    unsigned r1 = bits(insn, 11, 7), r2 = bits(insn, 6, 2);

    if (insn == 0) {
        return false;   /* the defined illegal instruction */
    }
    switch (bits(insn, 1, 0) << 3 | funct3) {
    case 0 << 3 | 1: /* c.fld */
    case 0 << 3 | 2: /* c.lw */
    case 0 << 3 | 3: /* c.ld, c.flw */
    case 2 << 3 | 1: /* c.fldsp */
    case 2 << 3 | 2: /* c.lwsp */
    case 2 << 3 | 3: /* c.ldsp, c.flwsp */
        c->loads = true;
        return true;
    case 2 << 3 | 5: /* c.fsdsp, or Zcmp and Zcmt */
        if (isa & (RISCV_INSN_ISA_ZCMP | RISCV_INSN_ISA_ZCMT)) {
            return classify_zcm(insn, isa, c);
        }
        c->stores = true;
        return true;
    case 0 << 3 | 5: /* c.fsd */
    case 0 << 3 | 6: /* c.sw */
    case 0 << 3 | 7: /* c.sd, c.fsw */
    case 2 << 3 | 6: /* c.swsp */
    case 2 << 3 | 7: /* c.sdsp, c.fswsp */
        c->stores = true;
        return true;
    case 0 << 3 | 4: /* Zcb: c.lbu, c.lh(u) (funct6 bit 11 clear), c.sb, c.sh */
        c->stores = bits(insn, 11, 11);
        c->loads = !c->stores;
        return true;
    case 1 << 3 | 1: /* RV32: c.jal = jal x1; RV64: c.addiw */
        if (xlen == 32) {
            set_jump(c, true, 1, 0, cj_offset(insn));
        }
        return true;
    case 1 << 3 | 5: /* c.j = jal x0 */
        set_jump(c, true, 0, 0, cj_offset(insn));
        return true;
    case 1 << 3 | 6: /* c.beqz */
    case 1 << 3 | 7: /* c.bnez */
        set_branch(c, cb_offset(insn));
        return true;
    case 1 << 3 | 3: /* c.lui (rd != x2), c.addi16sp (rd == x2) */
        c->sets_constant = r1 != 0 && r1 != 2;
        c->rd = r1;
        return true;
    case 2 << 3 | 4:
        if (r2 != 0) {
            return true;        /* c.mv, c.add */
        }
        if (!bits(insn, 12, 12)) {
            if (r1 == 0) {
                return false;   /* reserved */
            }
            set_jump(c, false, 0, r1, 0);   /* c.jr = jalr x0, rs1 */
        } else if (r1 == 0) {
            c->flow = RISCV_FLOW_TRAP;      /* c.ebreak */
        } else {
            set_jump(c, false, 1, r1, 0);   /* c.jalr = jalr x1, rs1 */
        }
        return true;
    }
    return true;
}

bool riscv_classify_insn_isa(uint32_t insn, unsigned xlen, unsigned isa,
                             RISCVInsnClass *out)
{
    memset(out, 0, sizeof(*out));
    out->flow = RISCV_FLOW_SEQUENTIAL;
    out->len = riscv_insn_len(insn & 0xffff);
    if (out->len == 2) {
        return classify16(insn & 0xffff, xlen, isa, out);
    }
    return classify32(insn, out);
}

/* Loads and stores of 16 bits: quadrants 0 and 2 (and Zcb's). */
static RISCVDataKind data_access16(uint32_t insn, unsigned xlen,
                                   unsigned *size)
{
    unsigned funct3 = bits(insn, 15, 13), quadrant = bits(insn, 1, 0);
    /* funct3 1/5: fld/fsd; 2/6: lw/sw; 3/7: ld/sd, RV32 flw/fsw */
    static const uint8_t size_of[4] = { 0, 3, 2, 3 };

    if (quadrant == 1 || (quadrant == 2 && (funct3 == 0 || funct3 == 4))) {
        return RISCV_DATA_NONE;
    }
    if (quadrant == 0 && funct3 == 4) {     /* Zcb */
        *size = bits(insn, 10, 10);
        return bits(insn, 11, 11) ? RISCV_DATA_STORE : RISCV_DATA_LOAD;
    }
    if (funct3 == 0) {
        return RISCV_DATA_NONE;             /* c.addi4spn */
    }
    *size = size_of[funct3 & 3];
    if ((funct3 & 3) == 3 && xlen == 32) {
        *size = 2;                          /* c.flw, c.fsw */
    }
    if (*size == 3 && xlen == 32) {
        return RISCV_DATA_NONE;             /* c.fld, c.fsd: wider than XLEN */
    }
    return funct3 & 4 ? RISCV_DATA_STORE : RISCV_DATA_LOAD;
}

/*
 * Zcmp's and Zcmt's encodings (c.fsdsp's): the words of cm.push (stores)
 * and of the pops (loads), the accesses of several words the classifier
 * finds, as many as registers in rlist (4: ra, 5: ra and s0, ... 14: ra
 * and s0-s9, 15: ra and s0-s11; below 4 reserved); none for the rest.
 */
static RISCVDataKind data_access_zcm(uint32_t insn, unsigned xlen,
                                     unsigned isa, unsigned *size,
                                     unsigned *count)
{
    unsigned rlist = bits(insn, 7, 4);
    RISCVInsnClass c;

    if (!riscv_classify_insn_isa(insn, xlen, isa, &c) || !c.several ||
        rlist < 4) {
        return RISCV_DATA_NONE;
    }
    *size = xlen == 64 ? 3 : 2;
    *count = rlist == 15 ? 13 : rlist - 3;
    return c.stores ? RISCV_DATA_STORE : RISCV_DATA_LOAD;
}

RISCVDataKind riscv_insn_data_accesses(uint32_t insn, unsigned xlen,
                                       unsigned isa, unsigned *size,
                                       unsigned *count)
{
    unsigned funct3 = bits(insn, 14, 12), funct5 = bits(insn, 31, 27);
    RISCVDataKind kind = RISCV_DATA_NONE;

    *size = 0;
    *count = 1;
    if ((insn & 0xe003) == 0xa002 &&
        (isa & (RISCV_INSN_ISA_ZCMP | RISCV_INSN_ISA_ZCMT))) {
        return data_access_zcm(insn & 0xffff, xlen, isa, size, count);
    }
    if (riscv_insn_len(insn & 0xffff) == 2) {
        return data_access16(insn & 0xffff, xlen, size);
    }
    switch (bits(insn, 6, 0)) {
    case 0x03: /* lb, lh, lw, ld, lbu, lhu, lwu */
        kind = funct3 == 7 ? RISCV_DATA_NONE : RISCV_DATA_LOAD;
        *size = funct3 & 3;
        break;
    case 0x23: /* sb, sh, sw, sd */
        kind = funct3 > 3 ? RISCV_DATA_NONE : RISCV_DATA_STORE;
        *size = funct3;
        break;
    case 0x07: /* flw, fld (not flh, nor vector loads) */
    case 0x27:
        if (funct3 == 2 || funct3 == 3) {
            kind = bits(insn, 5, 5) ? RISCV_DATA_STORE : RISCV_DATA_LOAD;
            *size = funct3;
        }
        break;
    case 0x2f: /* LR, SC and the AMOs of A, word and double word */
        if (funct3 != 2 && funct3 != 3) {
            return RISCV_DATA_NONE;         /* Zabha */
        }
        *size = funct3;
        if (funct5 == 2) {
            kind = RISCV_DATA_LOAD;
        } else if (funct5 == 3) {
            kind = RISCV_DATA_SC;
        } else if (funct5 == 0 || funct5 == 1 || (funct5 & 3) == 0) {
            kind = RISCV_DATA_AMO;          /* add, swap, xor ... maxu */
        }
        break;
    case 0x73: /* csrrw, csrrs, csrrc and their immediate forms */
        if (funct3 != 0 && funct3 != 4) {
            kind = RISCV_DATA_CSR;
            *size = xlen == 64 ? 3 : 2;
        }
        break;
    }
    if (kind != RISCV_DATA_NONE && *size == 3 && xlen == 32) {
        return RISCV_DATA_NONE;     /* wider than data_width_p */
    }
    return kind;
}

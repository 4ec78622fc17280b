/*
 * RISC-V control-transfer classification (E-trace itype codes)
 *
 * One classifier for everything that needs to know what kind of control
 * transfer an instruction is: the CTR engine (ctrdata.TYPE uses the same
 * codes), the trace-encoder ingress and the host trace decoder.  Plain C,
 * no QEMU dependency beyond qemu/osdep.h (a stub in host builds).
 *
 * Reference: Efficient Trace for RISC-V v1.1.1 draft, section 4.1.1 (jump
 * classification) and table 4.1 (itype codes).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_INSN_CLASS_H
#define RISCV_INSN_CLASS_H

/* E-trace itype, 4-bit encoding (table 4.1). */
typedef enum RISCVIType {
    RISCV_ITYPE_NONE = 0,
    RISCV_ITYPE_EXCEPTION = 1,
    RISCV_ITYPE_INTERRUPT = 2,
    RISCV_ITYPE_TRAP_RETURN = 3,
    RISCV_ITYPE_NOT_TAKEN_BRANCH = 4,
    RISCV_ITYPE_TAKEN_BRANCH = 5,
    RISCV_ITYPE_UNINFERABLE_JUMP_3BIT = 6, /* only with itype_width_p 3 */
    RISCV_ITYPE_UNINFERABLE_CALL = 8,
    RISCV_ITYPE_INFERABLE_CALL = 9,
    RISCV_ITYPE_UNINFERABLE_TAIL_CALL = 10,
    RISCV_ITYPE_INFERABLE_TAIL_CALL = 11,
    RISCV_ITYPE_COROUTINE_SWAP = 12,
    RISCV_ITYPE_RETURN = 13,
    RISCV_ITYPE_OTHER_UNINFERABLE_JUMP = 14,
    RISCV_ITYPE_OTHER_INFERABLE_JUMP = 15,
} RISCVIType;

/* What an instruction does to the flow of control. */
typedef enum RISCVInsnFlow {
    RISCV_FLOW_SEQUENTIAL,  /* falls through to the next instruction */
    RISCV_FLOW_BRANCH,      /* conditional: itype 4 or 5 when retired */
    RISCV_FLOW_JUMP,        /* jal/jalr and compressed forms: itype 8..15 */
    RISCV_FLOW_TRAP_RETURN, /* mret, sret, mnret: itype 3 */
    RISCV_FLOW_TRAP,        /* ecall, ebreak, c.ebreak: always trap */
} RISCVInsnFlow;

typedef struct RISCVInsnClass {
    RISCVInsnFlow flow;
    RISCVIType itype;       /* for RISCV_FLOW_JUMP and _TRAP_RETURN */
    unsigned len;           /* 2 or 4 bytes */
    unsigned rd, rs1;       /* jump link/target; lui/auipc/c.lui rd */
    bool inferable;         /* jump target in the opcode (jal, branches) */
    long offset;            /* pc-relative target of branches and jal */
    bool sets_constant;     /* lui, c.lui or auipc: sijump source */
    bool loads, stores;     /* explicit memory accesses (AMOs do both) */
    bool several;           /* ... of several words (Zcmp's push, pop) */
} RISCVInsnClass;

/*
 * itype of a jump from its link register rd, its target register rs1
 * (ignored when inferable) and whether its target is in the opcode.
 * Compressed forms are passed as their 32-bit equivalents (c.jalr rs1 is
 * jalr x1, rs1; c.jr rs1 is jalr x0, rs1; c.j is jal x0; c.jal is jal x1).
 */
RISCVIType riscv_jump_itype(bool inferable, unsigned rd, unsigned rs1);

/*
 * Extensions that give other encodings' bits a meaning of their own:
 * Zcmp and Zcmt take c.fsdsp's (a hart with either has no Zcd).  Only a
 * caller that knows the hart has them can read those.
 */
#define RISCV_INSN_ISA_ZCMP     (1u << 0)
#define RISCV_INSN_ISA_ZCMT     (1u << 1)

/*
 * Classify the instruction whose first 16 or 32 bits are insn (the upper
 * half is ignored for compressed instructions).  xlen is 32 or 64 (c.jal
 * exists only on RV32); isa has the RISCV_INSN_ISA_* bits of the hart
 * (0: RV32/64GC and the rest, c.fsdsp).  Returns false for encodings that
 * are not valid control transfers or sequential instructions; the caller
 * then treats the instruction as sequential.  Zcmp's cm.popret and
 * cm.popretz are returns, Zcmt's cm.jt an uninferable tail call and
 * cm.jalt an uninferable call; their targets come from memory (rs1 0).
 */
bool riscv_classify_insn_isa(uint32_t insn, unsigned xlen, unsigned isa,
                             RISCVInsnClass *out);

static inline bool riscv_classify_insn(uint32_t insn, unsigned xlen,
                                       RISCVInsnClass *out)
{
    return riscv_classify_insn_isa(insn, xlen, 0, out);
}

/* Length in bytes of the instruction starting with these 16 bits. */
static inline unsigned riscv_insn_len(uint16_t first_half)
{
    return (first_half & 3) == 3 ? 4 : 2;
}

/* True for itypes that end a block with an uninferable target. */
bool riscv_itype_is_uninferable(RISCVIType itype);

/*
 * A 32-bit instruction of the SYSTEM major opcode: CSR accesses, xRET,
 * ecall, ebreak, wfi, the MMU fences, hypervisor loads and stores, the
 * shadow-stack instructions of Zicfiss, wrs and CTR's sctrclr.
 */
static inline bool riscv_insn_is_system(uint32_t insn)
{
    return (insn & 0x7f) == 0x73;
}

/*
 * The data access an instruction reports to a data trace encoder (the
 * E-trace data trace interface, 4.4), as QEMU's hart reports them
 * (trace_data_translate.c.inc): loads and stores of the base ISA, F, D
 * and Zcb and their compressed forms, LR, SC (a store only when it
 * succeeds), the word and double-word AMOs of A, the CSR instructions,
 * and with Zcmp (isa, as riscv_classify_insn_isa()) the words cm.push
 * stores and cm.pop, cm.popret and cm.popretz load, one access each
 * (*count of them, in the order the instruction makes them); none wider
 * than XLEN.  size: log2 of the access bytes (a CSR: XLEN's).
 */
typedef enum RISCVDataKind {
    RISCV_DATA_NONE,
    RISCV_DATA_LOAD,
    RISCV_DATA_STORE,
    RISCV_DATA_SC,
    RISCV_DATA_AMO,
    RISCV_DATA_CSR,
} RISCVDataKind;

#define RISCV_DATA_ACCESSES_MAX 13  /* cm.push {ra, s0-s11} */

RISCVDataKind riscv_insn_data_accesses(uint32_t insn, unsigned xlen,
                                       unsigned isa, unsigned *size,
                                       unsigned *count);

/* The same without the extensions of isa: one access at most. */
static inline RISCVDataKind riscv_insn_data_access(uint32_t insn,
                                                   unsigned xlen,
                                                   unsigned *size)
{
    unsigned count;

    return riscv_insn_data_accesses(insn, xlen, 0, size, &count);
}

/* Name of an itype for logs and tools. */
const char *riscv_itype_name(RISCVIType itype);

#endif /* RISCV_INSN_CLASS_H */

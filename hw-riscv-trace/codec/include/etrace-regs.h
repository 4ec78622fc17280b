/*
 * RISC-V E-trace: register layouts the codec shares with the encoder
 * device
 *
 * The trace encoder's trTeInstFeatures register (RISC-V Trace Control
 * Interface 2.2) selects the codec's options: its fields are defined
 * here, once, as bit positions; the device declares its registers with
 * them (hw/registerfields.h) and the codec reads a features word with
 * them (etrace_options_from_features()).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_ETRACE_REGS_H
#define RISCV_ETRACE_REGS_H

/* trTeInstFeatures: bit positions (one bit each unless noted) */
#define ETRACE_FEAT_NO_ADDR_DIFF            0   /* full address */
#define ETRACE_FEAT_NO_TRAP_ADDR            1   /* implicit exception */
#define ETRACE_FEAT_SEQUENTIAL_JUMP         2
#define ETRACE_FEAT_IMPLICIT_RETURN         3
#define ETRACE_FEAT_BRANCH_PREDICTION       4
#define ETRACE_FEAT_JUMP_TARGET_CACHE       5
#define ETRACE_FEAT_IR_MODE                 6   /* 2 bits */
#define ETRACE_FEAT_IR_MODE_COUNTER         1   /* its values */
#define ETRACE_FEAT_IR_MODE_STACK           3   /* full compare */
#define ETRACE_FEAT_REPEATED_HISTORY        8   /* N-trace only */
#define ETRACE_FEAT_SRC_ID                  16  /* 12 bits */
#define ETRACE_FEAT_SRC_BITS                28  /* 4 bits */

#endif /* RISCV_ETRACE_REGS_H */

/*
 * E-trace data trace decoding: each data access on the instruction that
 * made it
 *
 * Data packets carry no instruction address: the decoder gives the n-th
 * access to the n-th instruction that reports one
 * (riscv_insn_data_accesses(); Zcmp's push and pop report one per word,
 * which go to their instruction together).  The two arrive in different orders: the
 * encoder sends a block's data packets after the block, so an
 * instruction packet may report instructions whose accesses follow it,
 * while a run of branches predicted or not yet reported leaves the
 * accesses ahead of their instructions.  The matcher holds back
 * whichever comes first, and hands each instruction on, in order, with
 * its access or without one.
 *
 * The choices that make the pairing exact:
 * - A store-conditional has an access only when it succeeded, which the
 *   trace does not say otherwise: it takes the next access if that is a
 *   store of its size at the address of the last load-reserved (any
 *   address when the packets carry none), and is shown as failed if not.
 * - An access whose type does not fit its instruction is a mismatch: the
 *   access is dropped and the instruction shown without one.
 * - At a gap, the end of the trace or an error, and at the first sync
 *   or trap after those (etrace_data_match_flush()), the accesses of
 *   every instruction before it have arrived (the encoder sends them
 *   before the packet of that event): instructions still waiting go on
 *   without one, and accesses left over are dropped.  Not at a resync
 *   while the decoder follows the trace: nothing is missing there, and
 *   an encoder may send one at a block's last instruction, before that
 *   block's accesses (this one does not while data trace is on).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_ETRACE_DEC_DATA_H
#define RISCV_ETRACE_DEC_DATA_H

#include "etrace-decoder.h"
#include "etrace-data.h"

/*
 * An instruction with its n accesses a (0: none; for an instruction that
 * reports some, a failed SC or missing accesses) and the instruction
 * bits it was matched on.
 */
typedef void ETraceDataInsnFn(void *opaque, const ETraceDecInsn *insn,
                              uint32_t bits, const ETraceDataAccess *a,
                              unsigned n);

typedef struct ETraceDataMatchStats {
    uint64_t matched;       /* accesses given to their instruction */
    uint64_t failed_sc;     /* SCs without an access */
    uint64_t missing;       /* instructions whose access never came */
    uint64_t mismatched;    /* accesses of the wrong type, dropped */
    uint64_t unmatched;     /* accesses left over at a flush, dropped */
} ETraceDataMatchStats;

typedef struct ETraceDataMatch ETraceDataMatch;

/*
 * xlen: the hart's; isa: its RISCV_INSN_ISA_* (ETraceDecoderConfig.isa);
 * out gets the instructions.
 */
ETraceDataMatch *etrace_data_match_new(unsigned xlen, unsigned isa,
                                       ETraceDataInsnFn *out, void *opaque);
void etrace_data_match_free(ETraceDataMatch *m);
/* The next retired instruction and its first 32 bits. */
void etrace_data_match_insn(ETraceDataMatch *m, const ETraceDecInsn *insn,
                            uint32_t bits);
/* The next data access of the stream; no_address: it has none. */
void etrace_data_match_access(ETraceDataMatch *m, const ETraceDataAccess *a,
                              bool no_address);
/* An event of the instruction trace: see above. */
void etrace_data_match_flush(ETraceDataMatch *m);
const ETraceDataMatchStats *etrace_data_match_stats(const ETraceDataMatch *m);

#endif /* RISCV_ETRACE_DEC_DATA_H */
